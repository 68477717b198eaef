#include "cluster/apiserver/tables.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/time_util.h"

namespace steward::cluster {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

// 2026-01-01T00:00:00Z.
const SystemTime kNow = std::chrono::system_clock::from_time_t(1767225600);

std::string Ago(std::chrono::seconds d) { return FormatRfc3339(kNow - d); }

const ResourceType& Type(std::string_view group, std::string_view resource) {
  const ResourceType* rt = FindResource(group, "v1", resource);
  EXPECT_NE(rt, nullptr) << resource;
  return *rt;
}

Json Parse(std::string_view text) {
  auto j = ParseJson(text);
  EXPECT_TRUE(j.ok()) << j.error().ToString();
  return j.ok() ? *j : Json();
}

std::vector<std::string> ColumnNames(const Json& table) {
  std::vector<std::string> names;
  for (const auto& c : table["columnDefinitions"]) names.push_back(c["name"]);
  return names;
}

std::vector<int> Priorities(const Json& table) {
  std::vector<int> p;
  for (const auto& c : table["columnDefinitions"]) p.push_back(c["priority"]);
  return p;
}

Json Cells(std::string_view group, std::string_view resource, const Json& obj) {
  Json t = ToTable(Type(group, resource), {obj}, Json::object(), kNow, TableIncludeObject::kNone);
  EXPECT_EQ(t["rows"].size(), 1u);
  return t["rows"][0]["cells"];
}

Json RunningPod() {
  return Parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web-7d4b9c-x2x9z", "namespace": "p1", "resourceVersion": "42",
                 "creationTimestamp": ")" +
               Ago(minutes(3) + seconds(12)) + R"(",
                 "labels": {"app": "web"}},
    "spec": {"nodeName": "steward-node",
             "containers": [{"name": "web", "image": "nodered/node-red:4.0"},
                            {"name": "sidecar", "image": "busybox"}]},
    "status": {"phase": "Running", "podIP": "10.1.0.7", "podIPs": [{"ip": "10.1.0.7"}],
               "conditions": [{"type": "Ready", "status": "True"}],
               "containerStatuses": [
                 {"name": "web", "ready": true, "restartCount": 0,
                  "state": {"running": {"startedAt": ")" +
               Ago(minutes(3)) + R"("}}},
                 {"name": "sidecar", "ready": true, "restartCount": 2,
                  "lastState": {"terminated": {"exitCode": 1,
                                               "finishedAt": ")" +
               Ago(minutes(2)) + R"("}},
                  "state": {"running": {"startedAt": ")" +
               Ago(minutes(1)) + R"("}}}]}
  })");
}

TEST(ToTableTest, TableEnvelopeAndPodColumns) {
  Json list_meta = {{"resourceVersion", "99"}, {"continue", ""}};
  Json t =
      ToTable(Type("", "pods"), {RunningPod()}, list_meta, kNow, TableIncludeObject::kMetadata);
  EXPECT_EQ(t["kind"], "Table");
  EXPECT_EQ(t["apiVersion"], "meta.k8s.io/v1");
  EXPECT_EQ(t["metadata"], Json({{"resourceVersion", "99"}}));  // empty continue omitted
  EXPECT_THAT(ColumnNames(t),
              ::testing::ElementsAre("Name", "Ready", "Status", "Restarts", "Age", "IP", "Node",
                                     "Nominated Node", "Readiness Gates"));
  EXPECT_THAT(Priorities(t), ::testing::ElementsAre(0, 0, 0, 0, 0, 1, 1, 1, 1));
  const Json& name_col = t["columnDefinitions"][0];
  EXPECT_EQ(name_col["type"], "string");
  EXPECT_EQ(name_col["format"], "name");
  EXPECT_TRUE(name_col["description"].is_string());
  EXPECT_EQ(t["columnDefinitions"][1]["format"], "");
  EXPECT_EQ(t["rows"][0]["cells"], Json({"web-7d4b9c-x2x9z", "2/2", "Running", "2 (2m ago)",
                                         "3m12s", "10.1.0.7", "steward-node", "<none>", "<none>"}));
}

TEST(ToTableTest, IncludeObjectModes) {
  const Json pod = RunningPod();
  const ResourceType& rt = Type("", "pods");
  Json meta = ToTable(rt, {pod}, Json::object(), kNow, TableIncludeObject::kMetadata);
  const Json& partial = meta["rows"][0]["object"];
  EXPECT_EQ(partial["kind"], "PartialObjectMetadata");
  EXPECT_EQ(partial["apiVersion"], "meta.k8s.io/v1");
  EXPECT_EQ(partial["metadata"], pod["metadata"]);
  EXPECT_FALSE(partial.contains("spec"));

  Json full = ToTable(rt, {pod}, Json::object(), kNow, TableIncludeObject::kObject);
  EXPECT_EQ(full["rows"][0]["object"], pod);

  Json none = ToTable(rt, {pod}, Json::object(), kNow, TableIncludeObject::kNone);
  EXPECT_FALSE(none["rows"][0].contains("object"));
}

TEST(ToTableTest, NoHeadersForLaterWatchEventsAndEmptyRows) {
  Json t = ToTable(Type("", "pods"), {}, Json::object(), kNow, TableIncludeObject::kMetadata,
                   /*no_headers=*/true);
  EXPECT_TRUE(t["columnDefinitions"].is_null());
  EXPECT_TRUE(t["rows"].is_array());
  EXPECT_TRUE(t["rows"].empty());
  EXPECT_EQ(t["metadata"], Json::object());
}

TEST(PodCellsTest, WaitingReasonsAndPendingPods) {
  Json creating =
      Parse(R"({"metadata": {"name": "p", "creationTimestamp": ")" + Ago(seconds(5)) +
            R"("}, "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "i"}]},
    "status": {"phase": "Pending", "containerStatuses": [{"name": "c", "ready": false,
      "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}}]}})");
  Json cells = Cells("", "pods", creating);
  EXPECT_EQ(cells[1], "0/1");
  EXPECT_EQ(cells[2], "ContainerCreating");
  EXPECT_EQ(cells[3], "0");
  EXPECT_EQ(cells[4], "5s");
  EXPECT_EQ(cells[5], "<none>");  // no IP yet

  Json pull = creating;
  pull["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] = "ErrImagePull";
  EXPECT_EQ(Cells("", "pods", pull)[2], "ErrImagePull");

  Json unscheduled = Parse(R"({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]},
    "status": {"phase": "Pending"}})");
  Json u = Cells("", "pods", unscheduled);
  EXPECT_EQ(u[2], "Pending");
  EXPECT_EQ(u[4], "<unknown>");  // no creationTimestamp
  EXPECT_EQ(u[6], "<none>");     // no node
}

TEST(PodCellsTest, TerminatingRunningButNotReadyAndCompleted) {
  Json pod = RunningPod();
  pod["metadata"]["deletionTimestamp"] = Ago(seconds(1));
  EXPECT_EQ(Cells("", "pods", pod)[2], "Terminating");

  Json not_ready = RunningPod();
  not_ready["status"]["containerStatuses"][0]["ready"] = false;
  Json c = Cells("", "pods", not_ready);
  EXPECT_EQ(c[1], "1/2");
  EXPECT_EQ(c[2], "Running");

  Json done = Parse(R"({"metadata": {"name": "job"}, "spec": {"containers": [{"name": "c"}]},
    "status": {"phase": "Succeeded", "containerStatuses": [{"name": "c", "ready": false,
      "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}})");
  Json t = ToTable(Type("", "pods"), {done}, Json::object(), kNow, TableIncludeObject::kNone);
  EXPECT_EQ(t["rows"][0]["cells"][2], "Completed");
  EXPECT_EQ(t["rows"][0]["conditions"][0]["type"], "Completed");
  EXPECT_EQ(t["rows"][0]["conditions"][0]["reason"], "Succeeded");
  // A terminal pod being deleted keeps its phase.
  done["metadata"]["deletionTimestamp"] = Ago(seconds(1));
  EXPECT_EQ(Cells("", "pods", done)[2], "Completed");
}

TEST(PodCellsTest, InitContainersAndReadinessGates) {
  Json pod = Parse(R"({"metadata": {"name": "p"},
    "spec": {"initContainers": [{"name": "a"}, {"name": "b"}], "containers": [{"name": "c"}],
             "readinessGates": [{"conditionType": "example.com/lb"}]},
    "status": {"phase": "Pending",
      "conditions": [{"type": "example.com/lb", "status": "False"}],
      "initContainerStatuses": [
        {"name": "a", "restartCount": 0, "state": {"terminated": {"exitCode": 0}}},
        {"name": "b", "restartCount": 0, "state": {"running": {}}}],
      "containerStatuses": [{"name": "c", "restartCount": 0,
        "state": {"waiting": {"reason": "PodInitializing"}}}]}})");
  Json c = Cells("", "pods", pod);
  EXPECT_EQ(c[2], "Init:1/2");
  EXPECT_EQ(c[8], "0/1");

  pod["status"]["initContainerStatuses"][1]["state"] =
      Json::parse(R"({"waiting": {"reason": "ImagePullBackOff"}})");
  EXPECT_EQ(Cells("", "pods", pod)[2], "Init:ImagePullBackOff");

  pod["status"]["initContainerStatuses"][1]["state"] =
      Json::parse(R"({"terminated": {"exitCode": 3}})");
  EXPECT_EQ(Cells("", "pods", pod)[2], "Init:ExitCode:3");
}

Json Deployment() {
  return Parse(R"({"apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "p1", "creationTimestamp": ")" +
               Ago(hours(5) + minutes(30)) + R"("},
    "spec": {"replicas": 3,
             "selector": {"matchLabels": {"steward.io/project": "p1", "app": "web"},
                          "matchExpressions": [{"key": "tier", "operator": "In",
                                                "values": ["front", "back"]},
                                               {"key": "legacy", "operator": "DoesNotExist"}]},
             "template": {"spec": {"containers": [{"name": "web", "image": "node-red:4"},
                                                  {"name": "proxy", "image": "envoy:1"}]}}},
    "status": {"replicas": 3, "updatedReplicas": 2, "readyReplicas": 1, "availableReplicas": 1}})");
}

TEST(DeploymentCellsTest, ColumnsAndCells) {
  Json t = ToTable(Type("apps", "deployments"), {Deployment()}, Json::object(), kNow,
                   TableIncludeObject::kNone);
  EXPECT_THAT(ColumnNames(t), ::testing::ElementsAre("Name", "Ready", "Up-to-date", "Available",
                                                     "Age", "Containers", "Images", "Selector"));
  EXPECT_THAT(Priorities(t), ::testing::ElementsAre(0, 0, 0, 0, 0, 1, 1, 1));
  EXPECT_EQ(t["rows"][0]["cells"],
            Json({"web", "1/3", 2, 1, "5h30m", "web,proxy", "node-red:4,envoy:1",
                  "app=web,!legacy,steward.io/project=p1,tier in (back,front)"}));
}

TEST(DeploymentCellsTest, EmptyStatusAndDefaultReplicas) {
  Json d = Parse(R"({"metadata": {"name": "d"}, "spec": {"selector": {}, "template": {}}})");
  EXPECT_EQ(Cells("apps", "deployments", d), Json({"d", "0/1", 0, 0, "<unknown>", "", "", ""}));
}

TEST(ReplicaSetCellsTest, ColumnsAndCells) {
  Json rs = Deployment();
  rs["kind"] = "ReplicaSet";
  rs["spec"]["selector"] = Json::parse(R"({"matchLabels": {"pod-template-hash": "7d4b9c"}})");
  Json t =
      ToTable(Type("apps", "replicasets"), {rs}, Json::object(), kNow, TableIncludeObject::kNone);
  EXPECT_THAT(ColumnNames(t), ::testing::ElementsAre("Name", "Desired", "Current", "Ready", "Age",
                                                     "Containers", "Images", "Selector"));
  EXPECT_EQ(t["rows"][0]["cells"], Json({"web", 3, 3, 1, "5h30m", "web,proxy", "node-red:4,envoy:1",
                                         "pod-template-hash=7d4b9c"}));
  rs["spec"].erase("selector");
  EXPECT_EQ(Cells("apps", "replicasets", rs)[7], "<none>");
}

TEST(ServiceCellsTest, ClusterIpAndLoadBalancer) {
  Json svc =
      Parse(R"({"metadata": {"name": "web", "creationTimestamp": ")" + Ago(hours(49)) + R"("},
    "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
             "ports": [{"port": 80, "protocol": "TCP", "targetPort": 1880},
                       {"port": 53, "protocol": "UDP"}],
             "selector": {"app": "web", "steward.io/project": "p1"}}})");
  Json t = ToTable(Type("", "services"), {svc}, Json::object(), kNow, TableIncludeObject::kNone);
  EXPECT_THAT(ColumnNames(t), ::testing::ElementsAre("Name", "Type", "Cluster-IP", "External-IP",
                                                     "Port(s)", "Age", "Selector"));
  EXPECT_EQ(t["rows"][0]["cells"],
            Json({"web", "ClusterIP", "10.96.0.10", "<none>", "80/TCP,53/UDP", "2d1h",
                  "app=web,steward.io/project=p1"}));

  Json lb = svc;
  lb["spec"]["type"] = "LoadBalancer";
  lb["spec"]["ports"] = Json::parse(R"([{"port": 443, "nodePort": 30443, "protocol": "TCP"}])");
  lb["spec"].erase("selector");
  Json pending = Cells("", "services", lb);
  EXPECT_EQ(pending[3], "<pending>");
  EXPECT_EQ(pending[4], "443:30443/TCP");
  EXPECT_EQ(pending[6], "<none>");
  lb["status"] = Json::parse(
      R"({"loadBalancer": {"ingress": [{"ip": "192.0.2.9"}, {"hostname": "lb.example.com"}]}})");
  EXPECT_EQ(Cells("", "services", lb)[3], "192.0.2.9,lb.example.com");

  Json headless = svc;
  headless["spec"]["clusterIPs"] = Json::array({"None"});
  headless["spec"].erase("ports");
  Json h = Cells("", "services", headless);
  EXPECT_EQ(h[2], "None");
  EXPECT_EQ(h[4], "<none>");
}

TEST(EndpointsCellsTest, AddressesPortsAndMore) {
  Json ep = Parse(R"({"metadata": {"name": "web"}, "subsets": [
    {"addresses": [{"ip": "10.1.0.7"}, {"ip": "10.1.0.8"}], "ports": [{"port": 1880}]}]})");
  EXPECT_EQ(Cells("", "endpoints", ep)[1], "10.1.0.7:1880,10.1.0.8:1880");

  ep["subsets"][0]["ports"].push_back({{"port", 9000}});
  EXPECT_EQ(Cells("", "endpoints", ep)[1], "10.1.0.7:1880,10.1.0.8:1880,10.1.0.7:9000 + 1 more...");

  Json empty = Parse(R"({"metadata": {"name": "web"}})");
  EXPECT_EQ(Cells("", "endpoints", empty), Json({"web", "<none>", "<unknown>"}));
  Json v6 = Parse(R"({"metadata": {"name": "v6"}, "subsets": [
    {"addresses": [{"ip": "fd00::1"}], "ports": [{"port": 80}]}]})");
  EXPECT_EQ(Cells("", "endpoints", v6)[1], "[fd00::1]:80");
}

TEST(EndpointSliceCellsTest, PortsAndEndpoints) {
  Json es = Parse(R"({"metadata": {"name": "web-abc12"}, "addressType": "IPv4",
    "ports": [{"name": "http", "port": 1880, "protocol": "TCP"}],
    "endpoints": [{"addresses": ["10.1.0.7"], "conditions": {"ready": true}},
                  {"addresses": ["10.1.0.8"]}, {"addresses": ["10.1.0.9"]},
                  {"addresses": ["10.1.0.10"]}]})");
  Json t = ToTable(Type("discovery.k8s.io", "endpointslices"), {es}, Json::object(), kNow,
                   TableIncludeObject::kNone);
  EXPECT_THAT(ColumnNames(t),
              ::testing::ElementsAre("Name", "AddressType", "Ports", "Endpoints", "Age"));
  EXPECT_EQ(t["rows"][0]["cells"], Json({"web-abc12", "IPv4", "1880",
                                         "10.1.0.7,10.1.0.8,10.1.0.9 + 1 more...", "<unknown>"}));
  Json bare = Parse(R"({"metadata": {"name": "e"}, "addressType": "IPv4",
                        "ports": [{"name": "x"}, {}]})");
  Json c = Cells("discovery.k8s.io", "endpointslices", bare);
  EXPECT_EQ(c[2], "x,*");
  EXPECT_EQ(c[3], "<unset>");
}

TEST(IngressCellsTest, ClassHostsAddressPorts) {
  Json ing =
      Parse(R"({"metadata": {"name": "web", "creationTimestamp": ")" + Ago(seconds(90)) + R"("},
    "spec": {"rules": [{"host": "p1.example.com"}, {"host": "custom.example.org"}]},
    "status": {"loadBalancer": {}}})");
  Json t = ToTable(Type("networking.k8s.io", "ingresses"), {ing}, Json::object(), kNow,
                   TableIncludeObject::kNone);
  EXPECT_THAT(ColumnNames(t),
              ::testing::ElementsAre("Name", "Class", "Hosts", "Address", "Ports", "Age"));
  EXPECT_EQ(t["rows"][0]["cells"],
            Json({"web", "<none>", "p1.example.com,custom.example.org", "", "80", "90s"}));

  ing["spec"]["ingressClassName"] = "nginx";
  ing["spec"]["tls"] = Json::parse(R"([{"hosts": ["p1.example.com"], "secretName": "tls"}])");
  ing["status"]["loadBalancer"]["ingress"] = Json::parse(R"([{"ip": "127.0.0.1"}])");
  Json c = Cells("networking.k8s.io", "ingresses", ing);
  EXPECT_EQ(c[1], "nginx");
  EXPECT_EQ(c[3], "127.0.0.1");
  EXPECT_EQ(c[4], "80, 443");

  Json no_hosts = Parse(R"({"metadata": {"name": "x"}, "spec": {"defaultBackend": {}}})");
  EXPECT_EQ(Cells("networking.k8s.io", "ingresses", no_hosts)[2], "*");
}

TEST(IngressClassCellsTest, ControllerAndParameters) {
  Json ic = Parse(R"({"metadata": {"name": "steward"}, "spec": {"controller": "steward.io/ingress",
    "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "p"}}})");
  Json t = ToTable(Type("networking.k8s.io", "ingressclasses"), {ic}, Json::object(), kNow,
                   TableIncludeObject::kNone);
  EXPECT_THAT(ColumnNames(t), ::testing::ElementsAre("Name", "Controller", "Parameters", "Age"));
  EXPECT_EQ(t["rows"][0]["cells"], Json({"steward", "steward.io/ingress",
                                         "IngressParameters.k8s.example.com/p", "<unknown>"}));
  ic["spec"].erase("parameters");
  EXPECT_EQ(Cells("networking.k8s.io", "ingressclasses", ic)[2], "<none>");
}

TEST(SimpleKindsTest, NamespaceSecretConfigMapLease) {
  Json ns = Parse(R"({"metadata": {"name": "p1", "creationTimestamp": ")" + Ago(hours(24 * 3)) +
                  R"("}, "status": {"phase": "Active"}})");
  Json nt = ToTable(Type("", "namespaces"), {ns}, Json::object(), kNow, TableIncludeObject::kNone);
  EXPECT_THAT(ColumnNames(nt), ::testing::ElementsAre("Name", "Status", "Age"));
  EXPECT_EQ(nt["rows"][0]["cells"], Json({"p1", "Active", "3d"}));

  Json secret = Parse(R"({"metadata": {"name": "creds"}, "type": "Opaque",
                          "data": {"a": "eA==", "b": "eQ=="}})");
  Json st = ToTable(Type("", "secrets"), {secret}, Json::object(), kNow, TableIncludeObject::kNone);
  EXPECT_THAT(ColumnNames(st), ::testing::ElementsAre("Name", "Type", "Data", "Age"));
  EXPECT_EQ(st["rows"][0]["cells"], Json({"creds", "Opaque", 2, "<unknown>"}));

  Json cm = Parse(R"({"metadata": {"name": "settings"}, "data": {"a": "1"},
                      "binaryData": {"b": "AA=="}})");
  Json ct = ToTable(Type("", "configmaps"), {cm}, Json::object(), kNow, TableIncludeObject::kNone);
  EXPECT_THAT(ColumnNames(ct), ::testing::ElementsAre("Name", "Data", "Age"));
  EXPECT_EQ(ct["rows"][0]["cells"], Json({"settings", 2, "<unknown>"}));

  Json lease = Parse(R"({"metadata": {"name": "steward-leader"},
                         "spec": {"holderIdentity": "steward-0"}})");
  Json lt = ToTable(Type("coordination.k8s.io", "leases"), {lease}, Json::object(), kNow,
                    TableIncludeObject::kNone);
  EXPECT_THAT(ColumnNames(lt), ::testing::ElementsAre("Name", "Holder", "Age"));
  EXPECT_EQ(lt["rows"][0]["cells"], Json({"steward-leader", "steward-0", "<unknown>"}));
  lease["spec"].erase("holderIdentity");
  EXPECT_EQ(Cells("coordination.k8s.io", "leases", lease)[1], "");
}

TEST(PvcCellsTest, PendingBoundAndTerminating) {
  Json pvc =
      Parse(R"({"metadata": {"name": "data", "creationTimestamp": ")" + Ago(seconds(10)) + R"("},
    "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
             "resources": {"requests": {"storage": "1Gi"}}, "volumeMode": "Filesystem"},
    "status": {"phase": "Pending"}})");
  Json t = ToTable(Type("", "persistentvolumeclaims"), {pvc}, Json::object(), kNow,
                   TableIncludeObject::kNone);
  EXPECT_THAT(ColumnNames(t),
              ::testing::ElementsAre("Name", "Status", "Volume", "Capacity", "Access Modes",
                                     "StorageClass", "VolumeAttributesClass", "Age", "VolumeMode"));
  EXPECT_EQ(t["rows"][0]["cells"],
            Json({"data", "Pending", "", "", "", "standard", "<unset>", "10s", "Filesystem"}));

  pvc["spec"]["volumeName"] = "pvc-1234";
  pvc["status"] = Json::parse(R"({"phase": "Bound", "capacity": {"storage": "1Gi"},
                                  "accessModes": ["ReadWriteMany", "ReadWriteOnce"]})");
  EXPECT_EQ(Cells("", "persistentvolumeclaims", pvc),
            Json({"data", "Bound", "pvc-1234", "1Gi", "RWO,RWX", "standard", "<unset>", "10s",
                  "Filesystem"}));

  pvc["metadata"]["deletionTimestamp"] = Ago(seconds(1));
  pvc["metadata"]["annotations"] = {{"volume.beta.kubernetes.io/storage-class", "legacy"}};
  Json c = Cells("", "persistentvolumeclaims", pvc);
  EXPECT_EQ(c[1], "Terminating");
  EXPECT_EQ(c[5], "legacy");
}

TEST(EventCellsTest, ColumnsAndCells) {
  Json ev = Parse(R"({"metadata": {"name": "web.17a", "namespace": "p1"},
    "involvedObject": {"kind": "Deployment", "name": "web", "namespace": "p1"},
    "reason": "ScalingReplicaSet", "message": "Scaled up replica set web-7d4b9c to 1\n",
    "type": "Normal", "count": 3, "source": {"component": "deployment-controller"},
    "firstTimestamp": ")" +
                  Ago(minutes(5)) + R"(", "lastTimestamp": ")" + Ago(seconds(30)) + R"("})");
  Json t = ToTable(Type("", "events"), {ev}, Json::object(), kNow, TableIncludeObject::kNone);
  EXPECT_THAT(ColumnNames(t),
              ::testing::ElementsAre("Last Seen", "Type", "Reason", "Object", "Subobject", "Source",
                                     "Message", "First Seen", "Count", "Name"));
  EXPECT_THAT(Priorities(t), ::testing::ElementsAre(0, 0, 0, 0, 1, 1, 0, 1, 1, 1));
  EXPECT_EQ(
      t["rows"][0]["cells"],
      Json({"30s", "Normal", "ScalingReplicaSet", "deployment/web", "", "deployment-controller",
            "Scaled up replica set web-7d4b9c to 1", "5m", 3, "web.17a"}));

  // events.k8s.io-style event: eventTime, no count, reporting fields.
  Json modern = Parse(R"({"metadata": {"name": "e2"}, "involvedObject": {"kind": "Pod"},
    "eventTime": ")" + FormatRfc3339Micro(kNow - seconds(7)) +
                      R"(",
    "reportingComponent": "kubelet", "reportingInstance": "node-1", "type": "Warning"})");
  Json c = Cells("", "events", modern);
  EXPECT_EQ(c[0], "7s");
  EXPECT_EQ(c[3], "pod");
  EXPECT_EQ(c[5], "kubelet, node-1");
  EXPECT_EQ(c[7], "7s");
  EXPECT_EQ(c[8], 1);
}

TEST(ToTableTest, RowsFollowInputOrder) {
  Json a = Parse(R"({"metadata": {"name": "a"}})");
  Json b = Parse(R"({"metadata": {"name": "b"}})");
  Json t = ToTable(Type("", "configmaps"), {b, a}, Json::object(), kNow, TableIncludeObject::kNone);
  ASSERT_EQ(t["rows"].size(), 2u);
  EXPECT_EQ(t["rows"][0]["cells"][0], "b");
  EXPECT_EQ(t["rows"][1]["cells"][0], "a");
}

}  // namespace
}  // namespace steward::cluster

namespace steward::cluster {
namespace {

TEST(PolicyCellsTest, BindingsPdbsNetworkPoliciesAndServiceAccountsAsKubectlPrintsThem) {
  Json rb = ParseJson(R"({"metadata": {"name": "steward"},
      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "steward"},
      "subjects": [{"kind": "ServiceAccount", "name": "steward", "namespace": "steward"},
                   {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"},
                   {"kind": "Group", "name": "ops", "apiGroup": "rbac.authorization.k8s.io"}]})")
                .value();
  Json t = ToTable(*FindGroupResource("rolebindings.rbac.authorization.k8s.io"), {rb},
                   Json::object(), std::chrono::system_clock::now(), TableIncludeObject::kNone);
  EXPECT_EQ(t["rows"][0]["cells"],
            Json({"steward", "Role/steward", "<unknown>", "alice", "ops", "steward/steward"}));
  Json pdb = ParseJson(R"({"metadata": {"name": "p"}, "spec": {"minAvailable": 1},
                           "status": {"disruptionsAllowed": 2}})")
                 .value();
  t = ToTable(*FindGroupResource("poddisruptionbudgets.policy"), {pdb}, Json::object(),
              std::chrono::system_clock::now(), TableIncludeObject::kNone);
  EXPECT_EQ(t["rows"][0]["cells"], Json({"p", "1", "N/A", 2, "<unknown>"}));
  Json np = ParseJson(R"({"metadata": {"name": "n"},
      "spec": {"podSelector": {"matchLabels": {"app": "steward"}}}})")
                .value();
  t = ToTable(*FindGroupResource("networkpolicies.networking.k8s.io"), {np}, Json::object(),
              std::chrono::system_clock::now(), TableIncludeObject::kNone);
  EXPECT_EQ(t["rows"][0]["cells"], Json({"n", "app=steward", "<unknown>"}));
  Json sa = ParseJson(R"({"metadata": {"name": "s"}, "secrets": [{"name": "a"}]})").value();
  t = ToTable(*FindGroupResource("serviceaccounts"), {sa}, Json::object(),
              std::chrono::system_clock::now(), TableIncludeObject::kNone);
  EXPECT_EQ(t["rows"][0]["cells"], Json({"s", 1, "<unknown>"}));
}

}  // namespace
}  // namespace steward::cluster
