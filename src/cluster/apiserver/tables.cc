#include "cluster/apiserver/tables.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/apiserver/table_cells.h"
#include "common/ascii.h"
#include "common/json_access.h"
#include "common/time_util.h"

namespace steward::cluster {

namespace {

using namespace tablecells;  // NOLINT: the cells helpers, written as the printers read

// Column descriptions, from the API field docs the real printers quote (shortened).
constexpr const char* kNameDoc =
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
constexpr const char* kAgeDoc =
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
constexpr const char* kContainersDoc = "Names of each container in the template.";
constexpr const char* kImagesDoc = "Images referenced by each container in the template.";

struct Column {
  const char* name;
  const char* type;
  const char* format;
  const char* description;
  int priority;
};

struct Printer {
  std::vector<Column> columns;
  // Every column's cell, always including priority > 0 ones: a real server prints tables with
  // Wide = true and kubectl hides the priority columns unless asked for -o wide.
  std::function<Json(const Json& obj, SystemTime now)> cells;
};

// ---- other kinds -------------------------------------------------------------------------

Json DeploymentCells(const Json& d, SystemTime now) {
  auto [names, images] = ContainerCells(PathOrNull(d, "spec.template.spec.containers"));
  auto selector = SelectorString(PathOrNull(d, "spec.selector"));
  const int64_t desired = Int(d, "spec.replicas", 1);
  return Json::array(
      {Name(d), std::to_string(Int(d, "status.readyReplicas")) + "/" + std::to_string(desired),
       Int(d, "status.updatedReplicas"), Int(d, "status.availableReplicas"), Age(d, now), names,
       images, selector ? *selector : "<invalid>"});
}

Json ReplicaSetCells(const Json& rs, SystemTime now) {
  auto [names, images] = ContainerCells(PathOrNull(rs, "spec.template.spec.containers"));
  return Json::array({Name(rs), Int(rs, "spec.replicas", 1), Int(rs, "status.replicas"),
                      Int(rs, "status.readyReplicas"), Age(rs, now), names, images,
                      FormatLabelSelector(PathOrNull(rs, "spec.selector"))});
}

std::string ServiceExternalIp(const Json& svc) {
  std::vector<std::string> external;
  for (const auto& ip : Array(svc, "spec.externalIPs")) {
    if (ip.is_string()) external.push_back(ip.get<std::string>());
  }
  const std::string type = Str(svc, "spec.type");
  if (type == "ClusterIP" || type == "NodePort") {
    return external.empty() ? "<none>" : JoinStrings(external, ",");
  }
  if (type == "LoadBalancer") {
    const std::string lb = LoadBalancerString(PathOrNull(svc, "status.loadBalancer"));
    if (!external.empty()) {
      std::vector<std::string> all;
      if (!lb.empty()) {
        size_t start = 0;
        while (true) {
          size_t comma = lb.find(',', start);
          all.push_back(lb.substr(start, comma == std::string::npos ? comma : comma - start));
          if (comma == std::string::npos) break;
          start = comma + 1;
        }
      }
      all.insert(all.end(), external.begin(), external.end());
      return JoinStrings(all, ",");
    }
    return lb.empty() ? "<pending>" : lb;
  }
  if (type == "ExternalName") return Str(svc, "spec.externalName");
  return "<unknown>";
}

Json ServiceCells(const Json& svc, SystemTime now) {
  std::string cluster_ip = "<none>";
  const Json& ips = Array(svc, "spec.clusterIPs");
  if (!ips.empty() && ips[0].is_string()) {
    cluster_ip = ips[0].get<std::string>();
  } else if (!Str(svc, "spec.clusterIP").empty()) {
    cluster_ip = Str(svc, "spec.clusterIP");  // objects written before clusterIPs existed
  }
  std::vector<std::string> ports;
  for (const auto& p : Array(svc, "spec.ports")) {
    std::string protocol = Str(p, "protocol");
    if (protocol.empty()) protocol = "TCP";
    const int64_t node_port = Int(p, "nodePort");
    ports.push_back(node_port > 0 ? std::to_string(Int(p, "port")) + ":" +
                                        std::to_string(node_port) + "/" + protocol
                                  : std::to_string(Int(p, "port")) + "/" + protocol);
  }
  std::string port_str = JoinStrings(ports, ",");
  if (port_str.empty()) port_str = "<none>";
  return Json::array({Name(svc), Str(svc, "spec.type"), cluster_ip, ServiceExternalIp(svc),
                      port_str, Age(svc, now), FormatLabels(PathOrNull(svc, "spec.selector"))});
}

Json EndpointsCells(const Json& ep, SystemTime now) {
  const Json& subsets = Array(ep, "subsets");
  std::string text;
  if (subsets.empty()) {
    text = "<none>";
  } else {
    std::vector<std::string> list;
    const size_t max = 3;
    bool more = false;
    size_t count = 0;
    for (const auto& ss : subsets) {
      const Json& addresses = Array(ss, "addresses");
      const Json& ports = Array(ss, "ports");
      if (ports.empty()) {  // headless services may have no ports
        count += addresses.size();
        for (const auto& a : addresses) {
          if (list.size() == max) {
            more = true;
            break;
          }
          list.push_back(Str(a, "ip"));
        }
        continue;
      }
      for (const auto& port : ports) {
        count += addresses.size();
        for (const auto& a : addresses) {
          if (list.size() == max) {
            more = true;
            break;
          }
          list.push_back(JoinHostPort(Str(a, "ip"), Int(port, "port")));
        }
      }
    }
    text = JoinStrings(list, ",");
    if (more) text += " + " + std::to_string(count - max) + " more...";
  }
  return Json::array({Name(ep), text, Age(ep, now)});
}

Json EndpointSliceCells(const Json& es, SystemTime now) {
  const size_t max = 3;
  std::vector<std::string> ports;
  bool more_ports = false;
  size_t port_count = 0;
  for (const auto& p : Array(es, "ports")) {
    if (ports.size() < max) {
      std::string num = "*";
      if (PathOrNull(p, "port").is_number()) {
        num = std::to_string(Int(p, "port"));
      } else if (PathOrNull(p, "name").is_string()) {
        num = Str(p, "name");
      }
      ports.push_back(num);
    } else if (ports.size() == max) {
      more_ports = true;
    }
    ++port_count;
  }
  std::vector<std::string> addrs;
  bool more_addrs = false;
  size_t addr_count = 0;
  for (const auto& e : Array(es, "endpoints")) {
    for (const auto& a : Array(e, "addresses")) {
      if (addrs.size() < max) {
        addrs.push_back(a.is_string() ? a.get<std::string>() : "");
      } else if (addrs.size() == max) {
        more_addrs = true;
      }
      ++addr_count;
    }
  }
  return Json::array({Name(es), Str(es, "addressType"),
                      ListWithMore(ports, more_ports, port_count, max),
                      ListWithMore(addrs, more_addrs, addr_count, max), Age(es, now)});
}

Json IngressCells(const Json& ing, SystemTime now) {
  std::string class_name = "<none>";
  if (PathOrNull(ing, "spec.ingressClassName").is_string()) {
    class_name = Str(ing, "spec.ingressClassName");
  }
  // formatHosts: at most 3 hosts, "*" when no rule names one.
  std::vector<std::string> hosts;
  const size_t max = 3;
  bool more = false;
  const Json& rules = Array(ing, "spec.rules");
  for (const auto& rule : rules) {
    if (hosts.size() == max) more = true;
    if (!more && !Str(rule, "host").empty()) hosts.push_back(Str(rule, "host"));
  }
  std::string host_str;
  if (hosts.empty()) {
    host_str = "*";
  } else {
    host_str = JoinStrings(hosts, ",");
    if (more) host_str += " + " + std::to_string(rules.size() - max) + " more...";
  }
  const std::string ports = Array(ing, "spec.tls").empty() ? "80" : "80, 443";
  return Json::array({Name(ing), class_name, host_str,
                      LoadBalancerString(PathOrNull(ing, "status.loadBalancer")), ports,
                      Age(ing, now)});
}

Json IngressClassCells(const Json& ic, SystemTime now) {
  std::string parameters = "<none>";
  const Json& p = PathOrNull(ic, "spec.parameters");
  if (p.is_object()) {
    parameters = Str(p, "kind");
    if (PathOrNull(p, "apiGroup").is_string()) parameters += "." + Str(p, "apiGroup");
    parameters += "/" + Str(p, "name");
  }
  return Json::array({Name(ic), Str(ic, "spec.controller"), parameters, Age(ic, now)});
}

Json NamespaceCells(const Json& ns, SystemTime now) {
  return Json::array({Name(ns), Str(ns, "status.phase"), Age(ns, now)});
}

Json SecretCells(const Json& s, SystemTime now) {
  return Json::array(
      {Name(s), Str(s, "type"), static_cast<int64_t>(MapSize(s, "data")), Age(s, now)});
}

Json ConfigMapCells(const Json& cm, SystemTime now) {
  return Json::array({Name(cm),
                      static_cast<int64_t>(MapSize(cm, "data") + MapSize(cm, "binaryData")),
                      Age(cm, now)});
}

Json PvcCells(const Json& pvc, SystemTime now) {
  const std::string phase = Terminating(pvc) ? "Terminating" : Str(pvc, "status.phase");
  const std::string volume = Str(pvc, "spec.volumeName");
  std::string capacity, access_modes;
  if (!volume.empty()) {
    access_modes = AccessModes(PathOrNull(pvc, "status.accessModes"));
    const Json& storage = PathOrNull(pvc, "status.capacity.storage");
    capacity = storage.is_string() ? storage.get<std::string>() : "0";
  }
  // helper.GetPersistentVolumeClaimClass: the beta annotation wins over the field.
  std::string storage_class;
  const Json& annotations = PathOrNull(pvc, "metadata.annotations");
  if (annotations.is_object() && annotations.contains("volume.beta.kubernetes.io/storage-class")) {
    storage_class = GetString(annotations, "volume.beta.kubernetes.io/storage-class");
  } else {
    storage_class = Str(pvc, "spec.storageClassName");
  }
  std::string vac = "<unset>";
  if (PathOrNull(pvc, "spec.volumeAttributesClassName").is_string()) {
    vac = Str(pvc, "spec.volumeAttributesClassName");
  }
  std::string mode = "<unset>";
  if (PathOrNull(pvc, "spec.volumeMode").is_string()) mode = Str(pvc, "spec.volumeMode");
  return Json::array(
      {Name(pvc), phase, volume, capacity, access_modes, storage_class, vac, Age(pvc, now), mode});
}

Json EventCells(const Json& ev, SystemTime now) {
  std::string first = Since(Time(ev, "firstTimestamp"), now);
  if (!Time(ev, "firstTimestamp")) first = Since(Time(ev, "eventTime"), now);
  std::string last = Since(Time(ev, "lastTimestamp"), now);
  if (!Time(ev, "lastTimestamp")) last = first;
  int64_t count = Int(ev, "count");
  if (PathOrNull(ev, "series").is_object()) {
    last = Since(Time(ev, "series.lastObservedTime"), now);
    count = Int(ev, "series.count");
  } else if (count == 0) {
    count = 1;  // singleton events from the events.k8s.io API carry no count
  }
  const std::string kind = AsciiLower(Str(ev, "involvedObject.kind"));
  const std::string obj_name = Str(ev, "involvedObject.name");
  const std::string target = obj_name.empty() ? kind : kind + "/" + obj_name;
  std::string component = Str(ev, "source.component");
  if (component.empty()) component = Str(ev, "reportingComponent");
  std::string instance = Str(ev, "source.host");
  if (instance.empty()) instance = Str(ev, "reportingInstance");
  const std::string source = instance.empty() ? component : component + ", " + instance;
  return Json::array(
      {last, Str(ev, "type"), Str(ev, "reason"), target, Str(ev, "involvedObject.fieldPath"),
       source, std::string(TrimAsciiWhitespace(Str(ev, "message"))), first, count, Name(ev)});
}

Json LeaseCells(const Json& lease, SystemTime now) {
  return Json::array({Name(lease), Str(lease, "spec.holderIdentity"), Age(lease, now)});
}

Json ServiceAccountCells(const Json& sa, SystemTime now) {
  return Json::array({Name(sa), static_cast<int64_t>(Array(sa, "secrets").size()), Age(sa, now)});
}

// RoleBinding and ClusterRoleBinding: the role, then (wide) users, groups and
// ServiceAccounts ("ns/name") among the subjects.
Json BindingCells(const Json& b, SystemTime now) {
  std::vector<std::string> users, groups, sas;
  for (const Json& s : Array(b, "subjects")) {
    const std::string kind = Str(s, "kind");
    if (kind == "User") users.push_back(Str(s, "name"));
    if (kind == "Group") groups.push_back(Str(s, "name"));
    if (kind == "ServiceAccount") sas.push_back(Str(s, "namespace") + "/" + Str(s, "name"));
  }
  return Json::array({Name(b), Str(b, "roleRef.kind") + "/" + Str(b, "roleRef.name"), Age(b, now),
                      JoinStrings(users, ", "), JoinStrings(groups, ", "), JoinStrings(sas, ", ")});
}

Json PdbCells(const Json& pdb, SystemTime now) {
  auto int_or_string = [&](std::string_view path) -> std::string {
    const Json* v = FindPath(pdb, path);
    if (v == nullptr || v->is_null()) return "N/A";
    return v->is_string() ? v->get<std::string>() : DumpJson(*v);
  };
  return Json::array({Name(pdb), int_or_string("spec.minAvailable"),
                      int_or_string("spec.maxUnavailable"), Int(pdb, "status.disruptionsAllowed"),
                      Age(pdb, now)});
}

Json NetworkPolicyCells(const Json& np, SystemTime now) {
  const Json* selector = FindPath(np, "spec.podSelector");
  return Json::array(
      {Name(np), selector ? FormatLabelSelector(*selector) : "<none>", Age(np, now)});
}

// The columns of each kind's printer, as the real server's printers declare them.
constexpr Column kPodColumns[] = {
    {"Name", "string", "name", kNameDoc, 0},
    {"Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic.", 0},
    {"Status", "string", "", "The aggregate status of the containers in this pod.", 0},
    {"Restarts", "string", "",
     "The number of times the containers in this pod have been restarted and when the last "
     "container in this pod has restarted.",
     0},
    {"Age", "string", "", kAgeDoc, 0},
    {"IP", "string", "",
     "podIP address allocated to the pod. Routable at least within the cluster. Empty if "
     "not yet allocated.",
     1},
    {"Node", "string", "",
     "NodeName indicates in which node this pod is scheduled. If empty, this pod is a "
     "candidate for scheduling by the scheduler defined in schedulerName.",
     1},
    {"Nominated Node", "string", "",
     "nominatedNodeName is set only when this pod preempts other pods on the node, but it "
     "cannot be scheduled right away as preemption victims receive their graceful "
     "termination periods.",
     1},
    {"Readiness Gates", "string", "",
     "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready "
     "when all its containers are ready AND all conditions specified in the readiness gates "
     "have status equal to \"True\"",
     1}};

constexpr Column kDeploymentColumns[] = {
    {"Name", "string", "name", kNameDoc, 0},
    {"Ready", "string", "", "Number of the pod with ready state", 0},
    {"Up-to-date", "string", "",
     "Total number of non-terminated pods targeted by this deployment that have the desired "
     "template spec.",
     0},
    {"Available", "string", "",
     "Total number of available pods (ready for at least minReadySeconds) targeted by this "
     "deployment.",
     0},
    {"Age", "string", "", kAgeDoc, 0},
    {"Containers", "string", "", kContainersDoc, 1},
    {"Images", "string", "", kImagesDoc, 1},
    {"Selector", "string", "", "Label selector for pods.", 1}};

constexpr Column kReplicaSetColumns[] = {
    {"Name", "string", "name", kNameDoc, 0},
    {"Desired", "integer", "",
     "Replicas is the number of desired replicas. This is a pointer to distinguish between "
     "explicit zero and unspecified. Defaults to 1.",
     0},
    {"Current", "integer", "", "Replicas is the most recently observed number of replicas.", 0},
    {"Ready", "integer", "", "The number of ready replicas for this replica set.", 0},
    {"Age", "string", "", kAgeDoc, 0},
    {"Containers", "string", "", kContainersDoc, 1},
    {"Images", "string", "", kImagesDoc, 1},
    {"Selector", "string", "",
     "Selector is a label query over pods that should match the replica count.", 1}};

constexpr Column kServiceColumns[] = {
    {"Name", "string", "name", kNameDoc, 0},
    {"Type", "string", "",
     "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are "
     "ExternalName, ClusterIP, NodePort, and LoadBalancer.",
     0},
    {"Cluster-IP", "string", "",
     "clusterIP is the IP address of the service and is usually assigned randomly.", 0},
    {"External-IP", "string", "",
     "externalIPs is a list of IP addresses for which nodes in the cluster will also accept "
     "traffic for this service.",
     0},
    {"Port(s)", "string", "", "The list of ports that are exposed by this service.", 0},
    {"Age", "string", "", kAgeDoc, 0},
    {"Selector", "string", "",
     "Route service traffic to pods with label keys and values matching this selector.", 1}};

constexpr Column kEndpointsColumns[] = {
    {"Name", "string", "name", kNameDoc, 0},
    {"Endpoints", "string", "", "The set of all endpoints is the union of all subsets.", 0},
    {"Age", "string", "", kAgeDoc, 0}};

constexpr Column kEndpointSliceColumns[] = {
    {"Name", "string", "name", kNameDoc, 0},
    {"AddressType", "string", "",
     "addressType specifies the type of address carried by this EndpointSlice.", 0},
    {"Ports", "string", "",
     "ports specifies the list of network ports exposed by each endpoint in this slice.", 0},
    {"Endpoints", "string", "", "endpoints is a list of unique endpoints in this slice.", 0},
    {"Age", "string", "", kAgeDoc, 0}};

constexpr Column kIngressColumns[] = {
    {"Name", "string", "name", kNameDoc, 0},
    {"Class", "string", "",
     "The name of the IngressClass resource that should be used for additional "
     "configuration",
     0},
    {"Hosts", "string", "",
     "Hosts that incoming requests are matched against before the ingress rule", 0},
    {"Address", "string", "", "Address is a list containing ingress points for the load-balancer",
     0},
    {"Ports", "string", "", "Ports of TLS configurations that open", 0},
    {"Age", "string", "", kAgeDoc, 0}};

constexpr Column kIngressClassColumns[] = {
    {"Name", "string", "name", kNameDoc, 0},
    {"Controller", "string", "", "Controller that is responsible for handling this class", 0},
    {"Parameters", "string", "", "A reference to a resource with additional parameters", 0},
    {"Age", "string", "", kAgeDoc, 0}};

constexpr Column kNamespaceColumns[] = {{"Name", "string", "name", kNameDoc, 0},
                                        {"Status", "string", "", "The status of the namespace", 0},
                                        {"Age", "string", "", kAgeDoc, 0}};

constexpr Column kSecretColumns[] = {
    {"Name", "string", "name", kNameDoc, 0},
    {"Type", "string", "", "Used to facilitate programmatic handling of secret data.", 0},
    {"Data", "string", "",
     "Data contains the secret data. Each key must consist of alphanumeric characters, '-', "
     "'_' or '.'.",
     0},
    {"Age", "string", "", kAgeDoc, 0}};

constexpr Column kConfigMapColumns[] = {
    {"Name", "string", "name", kNameDoc, 0},
    {"Data", "string", "",
     "Data contains the configuration data. Each key must consist of alphanumeric "
     "characters, '-', '_' or '.'.",
     0},
    {"Age", "string", "", kAgeDoc, 0}};

constexpr Column kPvcColumns[] = {
    {"Name", "string", "name", kNameDoc, 0},
    {"Status", "string", "", "phase represents the current phase of PersistentVolumeClaim.", 0},
    {"Volume", "string", "",
     "volumeName is the binding reference to the PersistentVolume backing this claim.", 0},
    {"Capacity", "string", "", "capacity represents the actual resources of the underlying volume.",
     0},
    {"Access Modes", "string", "",
     "accessModes contains the actual access modes the volume backing the PVC has.", 0},
    {"StorageClass", "string", "", "StorageClass of the pvc", 0},
    {"VolumeAttributesClass", "string", "", "VolumeAttributesClass of the pvc", 0},
    {"Age", "string", "", kAgeDoc, 0},
    {"VolumeMode", "string", "",
     "volumeMode defines what type of volume is required by the claim. Value of Filesystem "
     "is implied when not included in claim spec.",
     1}};

constexpr Column kEventColumns[] = {
    {"Last Seen", "string", "",
     "The time at which the most recent occurrence of this event was recorded.", 0},
    {"Type", "string", "",
     "Type of this event (Normal, Warning), new types could be added in the future", 0},
    {"Reason", "string", "",
     "This should be a short, machine understandable string that gives the reason for the "
     "transition into the object's current status.",
     0},
    {"Object", "string", "", "The object that this event is about.", 0},
    {"Subobject", "string", "",
     "If referring to a piece of an object instead of an entire object, this string should "
     "contain a valid JSON/Go field access statement, such as "
     "desiredState.manifest.containers[2].",
     1},
    {"Source", "string", "",
     "The component reporting this event. Should be a short machine understandable string.", 1},
    {"Message", "string", "", "A human-readable description of the status of this operation.", 0},
    {"First Seen", "string", "",
     "The time at which the event was first recorded. (Time of server receipt is in "
     "TypeMeta.)",
     1},
    {"Count", "string", "", "The number of times this event has occurred.", 1},
    {"Name", "string", "name", kNameDoc, 1}};

constexpr Column kLeaseColumns[] = {
    {"Name", "string", "name", kNameDoc, 0},
    {"Holder", "string", "",
     "holderIdentity contains the identity of the holder of a current lease. If "
     "Coordinated Leader Election is used, the holder identity must be equal to the elected "
     "LeaseCandidate.metadata.name field.",
     0},
    {"Age", "string", "", kAgeDoc, 0}};

constexpr Column kServiceAccountColumns[] = {
    {"Name", "string", "name", kNameDoc, 0},
    {"Secrets", "string", "",
     "Secrets is a list of the secrets in the same namespace that pods running using this "
     "ServiceAccount are allowed to use.",
     0},
    {"Age", "string", "", kAgeDoc, 0}};

constexpr Column kBindingColumns[] = {
    {"Name", "string", "name", kNameDoc, 0},
    {"Role", "string", "",
     "RoleRef can reference a Role in the current namespace or a "
     "ClusterRole in the global namespace.",
     0},
    {"Age", "string", "", kAgeDoc, 0},
    {"Users", "string", "", "Users in the binding", 1},
    {"Groups", "string", "", "Groups in the binding", 1},
    {"ServiceAccounts", "string", "", "ServiceAccounts in the binding", 1}};

constexpr Column kPdbColumns[] = {
    {"Name", "string", "name", kNameDoc, 0},
    {"Min Available", "string", "",
     "The minimum number of pods that must be available simultaneously. This can be either an "
     "integer or a string specifying a percentage, e.g. \"28%\".",
     0},
    {"Max Unavailable", "string", "",
     "The maximum number of pods that may be unavailable simultaneously. This can be either an "
     "integer or a string specifying a percentage, e.g. \"28%\".",
     0},
    {"Allowed Disruptions", "integer", "", "Number of pod disruptions that are currently allowed.",
     0},
    {"Age", "string", "", kAgeDoc, 0}};

constexpr Column kNetworkPolicyColumns[] = {
    {"Name", "string", "name", kNameDoc, 0},
    {"Pod-Selector", "string", "", "Selects the pods to which this NetworkPolicy object applies.",
     0},
    {"Age", "string", "", kAgeDoc, 0}};

// A column table as the Printer holds it.
template <size_t N>
std::vector<Column> ColumnsOf(const Column (&columns)[N]) {
  return std::vector<Column>(columns, columns + N);
}

const Printer* FindPrinter(const ResourceType& rt) {
  static const std::map<std::string, Printer, std::less<>> kPrinters = {
      {"pods", {ColumnsOf(kPodColumns), PodCells}},
      {"deployments.apps", {ColumnsOf(kDeploymentColumns), DeploymentCells}},
      {"replicasets.apps", {ColumnsOf(kReplicaSetColumns), ReplicaSetCells}},
      {"services", {ColumnsOf(kServiceColumns), ServiceCells}},
      {"endpoints", {ColumnsOf(kEndpointsColumns), EndpointsCells}},
      {"endpointslices.discovery.k8s.io", {ColumnsOf(kEndpointSliceColumns), EndpointSliceCells}},
      {"ingresses.networking.k8s.io", {ColumnsOf(kIngressColumns), IngressCells}},
      {"ingressclasses.networking.k8s.io", {ColumnsOf(kIngressClassColumns), IngressClassCells}},
      {"namespaces", {ColumnsOf(kNamespaceColumns), NamespaceCells}},
      {"secrets", {ColumnsOf(kSecretColumns), SecretCells}},
      {"configmaps", {ColumnsOf(kConfigMapColumns), ConfigMapCells}},
      {"persistentvolumeclaims", {ColumnsOf(kPvcColumns), PvcCells}},
      {"events", {ColumnsOf(kEventColumns), EventCells}},
      {"leases.coordination.k8s.io", {ColumnsOf(kLeaseColumns), LeaseCells}},
      {"serviceaccounts", {ColumnsOf(kServiceAccountColumns), ServiceAccountCells}},
      {"rolebindings.rbac.authorization.k8s.io", {ColumnsOf(kBindingColumns), BindingCells}},
      {"clusterrolebindings.rbac.authorization.k8s.io", {ColumnsOf(kBindingColumns), BindingCells}},
      {"poddisruptionbudgets.policy", {ColumnsOf(kPdbColumns), PdbCells}},
      {"networkpolicies.networking.k8s.io", {ColumnsOf(kNetworkPolicyColumns), NetworkPolicyCells}},
  };
  auto it = kPrinters.find(rt.GroupResource());
  return it == kPrinters.end() ? nullptr : &it->second;
}

// The default table of a real server for types without a printer (Name, Created At).
const Printer& DefaultPrinter() {
  static const Printer kDefault{
      {{"Name", "string", "name", kNameDoc, 0}, {"Created At", "date", "", kAgeDoc, 0}},
      [](const Json& obj, SystemTime) {
        return Json::array({Name(obj), PathOrNull(obj, "metadata.creationTimestamp")});
      }};
  return kDefault;
}

Json RowObject(const ResourceType& rt, const Json& obj, TableIncludeObject include) {
  if (include == TableIncludeObject::kObject) {
    Json full = obj;
    if (!full.contains("apiVersion")) full["apiVersion"] = rt.ApiVersion();
    if (!full.contains("kind")) full["kind"] = rt.kind;
    return full;
  }
  Json partial = {{"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"}};
  const Json& meta = PathOrNull(obj, "metadata");
  partial["metadata"] = meta.is_object() ? meta : Json::object();
  return partial;
}

}  // namespace

Json ToTable(const ResourceType& rt, const std::vector<Json>& objects, const Json& list_metadata,
             SystemTime now, TableIncludeObject include, bool no_headers) {
  const Printer* printer = FindPrinter(rt);
  if (printer == nullptr) printer = &DefaultPrinter();

  Json table = {{"kind", "Table"}, {"apiVersion", "meta.k8s.io/v1"}};
  Json meta = Json::object();
  if (list_metadata.is_object()) {
    for (const char* key : {"resourceVersion", "continue", "remainingItemCount"}) {
      auto it = list_metadata.find(key);
      if (it == list_metadata.end() || it->is_null()) continue;
      if (it->is_string() && it->get<std::string>().empty()) continue;
      meta[key] = *it;
    }
  }
  table["metadata"] = std::move(meta);

  if (no_headers) {
    table["columnDefinitions"] =
        nullptr;  // as a real server encodes the watch events after the first
  } else {
    Json columns = Json::array();
    for (const Column& c : printer->columns) {
      columns.push_back({{"name", c.name},
                         {"type", c.type},
                         {"format", c.format},
                         {"description", c.description},
                         {"priority", c.priority}});
    }
    table["columnDefinitions"] = std::move(columns);
  }

  Json rows = Json::array();
  for (const Json& obj : objects) {
    Json row = {{"cells", printer->cells(obj, now)}};
    if (rt.resource == "pods" && rt.group.empty()) {
      const std::string phase = Str(obj, "status.phase");
      if (phase == "Succeeded" || phase == "Failed") {
        row["conditions"] =
            Json::array({{{"type", "Completed"},
                          {"status", "True"},
                          {"reason", phase},
                          {"message", phase == "Succeeded" ? "The pod has completed successfully."
                                                           : "The pod failed."}}});
      }
    }
    if (include != TableIncludeObject::kNone) row["object"] = RowObject(rt, obj, include);
    rows.push_back(std::move(row));
  }
  table["rows"] = std::move(rows);
  return table;
}

}  // namespace steward::cluster
