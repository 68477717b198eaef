// kubectl against `steward cluster`: the embedded cluster must satisfy a real client.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "process.h"

namespace steward::e2e {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kDeployment = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: node-red
        image: nodered/node-red:4.0
        ports:
        - {name: web, containerPort: 1880}
        - {name: management, containerPort: 2880}
)";

constexpr const char* kService = R"(apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - {name: web, port: 80, targetPort: web}
)";

constexpr const char* kIngress = R"(apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
spec:
  rules:
  - host: web.example.test
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port: {name: web}
)";

constexpr const char* kConfigMap = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: demo
data:
  colour: blue
)";

std::string Describe(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout: " + r.out + "\nstderr: " + r.err;
}

#define ASSERT_CLUSTER(c) \
  ASSERT_TRUE((c).ok()) << "steward cluster did not start: " << (c).process().output()

#define EXPECT_KUBECTL_OK(result)               \
  do {                                          \
    auto _r = (result);                         \
    EXPECT_EQ(_r.exit_code, 0) << Describe(_r); \
  } while (0)

TEST(KubectlE2E, VersionDiscoveryAndApiResources) {
  ClusterUnderTest c({"--profile", "instant"});
  ASSERT_CLUSTER(c);
  auto version = c.Kubectl({"version", "-o", "json"});
  EXPECT_EQ(version.exit_code, 0) << Describe(version);
  EXPECT_THAT(version.out, HasSubstr("\"serverVersion\""));
  auto resources = c.Kubectl({"api-resources"});
  ASSERT_EQ(resources.exit_code, 0) << Describe(resources);
  for (const char* r : {"deployments", "replicasets", "pods", "services", "endpointslices",
                        "ingresses", "ingressclasses", "secrets", "configmaps",
                        "persistentvolumeclaims", "events", "leases", "namespaces"}) {
    EXPECT_THAT(resources.out, HasSubstr(r));
  }
  auto ns = c.Kubectl({"get", "namespaces"});
  EXPECT_EQ(ns.exit_code, 0) << Describe(ns);
  EXPECT_THAT(ns.out, AllOf(HasSubstr("default"), HasSubstr("Active")));
}

TEST(KubectlE2E, RolloutStatusWaitsForThePodReadyDelay) {
  ClusterUnderTest c({"--profile", "instant", "--set", "pod_ready.fixed_ms=1500"});
  ASSERT_CLUSTER(c);
  auto start = std::chrono::steady_clock::now();
  auto apply = c.Kubectl({"apply", "-f", "-"}, kDeployment);
  ASSERT_EQ(apply.exit_code, 0) << Describe(apply);
  EXPECT_THAT(apply.out, HasSubstr("deployment.apps/web created"));
  // Not ready yet: the pods need the profile's readiness delay.
  auto early = c.Kubectl({"get", "deployment", "web", "-o", "jsonpath={.status.readyReplicas}"});
  EXPECT_EQ(early.exit_code, 0) << Describe(early);
  EXPECT_THAT(early.out, Not(HasSubstr("2")));
  auto rollout = c.Kubectl({"rollout", "status", "deployment/web", "--timeout=30s"});
  ASSERT_EQ(rollout.exit_code, 0) << Describe(rollout);
  EXPECT_THAT(rollout.out, HasSubstr("successfully rolled out"));
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, milliseconds(1500));
  auto ready = c.Kubectl({"get", "deployment", "web", "-o", "jsonpath={.status.readyReplicas}"});
  EXPECT_EQ(ready.out, "2") << Describe(ready);
  auto pods = c.Kubectl({"get", "pods", "-l", "app=web", "--no-headers"});
  EXPECT_EQ(pods.exit_code, 0) << Describe(pods);
  EXPECT_EQ(std::count(pods.out.begin(), pods.out.end(), '\n'), 2) << pods.out;
  EXPECT_THAT(pods.out, HasSubstr("Running"));
}

TEST(KubectlE2E, EndpointsIngressAddressAndTrafficThroughTheIngressListener) {
  ClusterUnderTest c({"--profile", "instant", "--set", "load_balancer.fixed_ms=300"});
  ASSERT_CLUSTER(c);
  std::string all = std::string(kDeployment) + "---\n" + kService + "---\n" + kIngress;
  auto apply = c.Kubectl({"apply", "-f", "-"}, all);
  ASSERT_EQ(apply.exit_code, 0) << Describe(apply);
  EXPECT_KUBECTL_OK(c.Kubectl({"rollout", "status", "deployment/web", "--timeout=30s"}));
  auto wait = c.Kubectl({"wait", "--for=jsonpath={.status.loadBalancer.ingress[0].ip}=127.0.0.1",
                         "ingress/web", "--timeout=20s"});
  EXPECT_EQ(wait.exit_code, 0) << Describe(wait);
  EXPECT_TRUE(c.KubectlUntil(
      {"get", "endpointslices", "-l", "kubernetes.io/service-name=web", "-o",
       "jsonpath={.items[*].endpoints[*].conditions.ready}"},
      [](const RunResult& r) { return r.out == "true true"; }, seconds(10)));
  auto endpoints =
      c.Kubectl({"get", "endpoints", "web", "-o", "jsonpath={.subsets[0].addresses[*].ip}"});
  EXPECT_EQ(std::count(endpoints.out.begin(), endpoints.out.end(), '.'), 6) << endpoints.out;

  auto pods = c.Kubectl({"get", "pods", "-l", "app=web", "-o", "name"});
  ASSERT_EQ(pods.exit_code, 0) << Describe(pods);
  auto answer = HttpGet(c.ingress_port(), "web.example.test", "/");
  EXPECT_EQ(answer.status, 200) << answer.body;
  bool from_a_pod = false;
  size_t pos = 0;
  while ((pos = pods.out.find("pod/", pos)) != std::string::npos) {
    std::string name = pods.out.substr(pos + 4, pods.out.find('\n', pos) - pos - 4);
    if (answer.body.find(name) != std::string::npos) from_a_pod = true;
    pos += 4;
  }
  EXPECT_TRUE(from_a_pod) << "ingress answer: " << answer.body << "\npods: " << pods.out;
  EXPECT_EQ(HttpGet(c.ingress_port(), "nobody.example.test", "/").status, 404);

  auto proxied = c.Kubectl({"get", "--raw", "/api/v1/namespaces/default/services/web:web/proxy/"});
  EXPECT_EQ(proxied.exit_code, 0) << Describe(proxied);
  EXPECT_THAT(proxied.out, HasSubstr("web-"));
}

TEST(KubectlE2E, DeleteWaitsForTheFinalizerAndRecreateIsRefusedMeanwhile) {
  ClusterUnderTest c({"--profile", "instant", "--set", "service_finalizer.fixed_ms=2000"});
  ASSERT_CLUSTER(c);
  EXPECT_KUBECTL_OK(c.Kubectl({"create", "-f", "-"}, kService));
  auto start = std::chrono::steady_clock::now();
  BackgroundProcess deleter(c.KubectlArgv({"delete", "service", "web", "--wait=true"}));
  ASSERT_TRUE(c.KubectlUntil(
      {"get", "service", "web", "-o", "jsonpath={.metadata.deletionTimestamp}"},
      [](const RunResult& r) { return r.exit_code == 0 && !r.out.empty(); }, seconds(10)));
  auto again = c.Kubectl({"create", "-f", "-"}, kService);
  EXPECT_NE(again.exit_code, 0);
  EXPECT_THAT(again.err, HasSubstr("object is being deleted"));
  EXPECT_EQ(deleter.Stop(0, seconds(20)), 0);
  EXPECT_THAT(deleter.output(), HasSubstr("service \"web\" deleted"));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(1900));
  auto gone = c.Kubectl({"get", "service", "web"});
  EXPECT_NE(gone.exit_code, 0);
  EXPECT_THAT(gone.err, HasSubstr("NotFound"));
  EXPECT_KUBECTL_OK(c.Kubectl({"create", "-f", "-"}, kService));
}

TEST(KubectlE2E, UpdateWithAStaleResourceVersionIsRefusedWithConflict) {
  ClusterUnderTest c({"--profile", "instant"});
  ASSERT_CLUSTER(c);
  EXPECT_KUBECTL_OK(c.Kubectl({"create", "-f", "-"}, kConfigMap));
  auto stale = c.Kubectl({"get", "configmap", "demo", "-o", "json"});
  ASSERT_EQ(stale.exit_code, 0);
  EXPECT_KUBECTL_OK(c.Kubectl(
      {"patch", "configmap", "demo", "--type=merge", "-p", R"({"data":{"colour":"red"}})"}));
  auto replace = c.Kubectl({"replace", "-f", "-"}, stale.out);
  EXPECT_NE(replace.exit_code, 0);
  EXPECT_THAT(replace.err, HasSubstr("the object has been modified"));
  auto colour = c.Kubectl({"get", "configmap", "demo", "-o", "jsonpath={.data.colour}"});
  EXPECT_EQ(colour.out, "red");
}

TEST(KubectlE2E, GetWatchSeesAddedModifiedAndDeleted) {
  ClusterUnderTest c({"--profile", "instant"});
  ASSERT_CLUSTER(c);
  BackgroundProcess watch(c.KubectlArgv({"get", "configmaps", "-w", "--output-watch-events"}));
  EXPECT_KUBECTL_OK(c.Kubectl({"create", "-f", "-"}, kConfigMap));
  auto added = watch.WaitForLine("ADDED", seconds(15));
  ASSERT_TRUE(added) << watch.output();
  EXPECT_THAT(*added, HasSubstr("demo"));
  EXPECT_KUBECTL_OK(c.Kubectl({"label", "configmap", "demo", "tier=backend"}));
  auto modified = watch.WaitForLine("MODIFIED", seconds(15));
  ASSERT_TRUE(modified) << watch.output();
  EXPECT_KUBECTL_OK(c.Kubectl({"delete", "configmap", "demo"}));
  auto deleted = watch.WaitForLine("DELETED", seconds(15));
  ASSERT_TRUE(deleted) << watch.output();
  EXPECT_THAT(watch.output(), HasSubstr("NAME"));
}

TEST(KubectlE2E, StateSurvivesARestartAndOldRevisionsAreExpired) {
  TempDir data;
  std::string first_rv;
  {
    ClusterUnderTest c({"--profile", "instant"}, data.path());
    ASSERT_CLUSTER(c);
    EXPECT_KUBECTL_OK(c.Kubectl({"create", "-f", "-"}, kConfigMap));
    auto rv = c.Kubectl({"get", "configmap", "demo", "-o", "jsonpath={.metadata.resourceVersion}"});
    first_rv = rv.out;
    ASSERT_FALSE(first_rv.empty());
    EXPECT_EQ(c.Stop(), 0);
  }
  ClusterUnderTest c({"--profile", "instant"}, data.path());
  ASSERT_CLUSTER(c);
  auto colour = c.Kubectl({"get", "configmap", "demo", "-o", "jsonpath={.data.colour}"});
  EXPECT_EQ(colour.out, "blue") << Describe(colour);
  auto rv = c.Kubectl({"get", "configmap", "demo", "-o", "jsonpath={.metadata.resourceVersion}"});
  EXPECT_EQ(rv.out, first_rv);
  // The watch history did not survive: a watch from an old revision is expired (410).
  auto watch = c.Kubectl(
      {"get", "--raw", "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1"});
  EXPECT_THAT(watch.out + watch.err, AllOf(HasSubstr("Expired"), HasSubstr("410")));
  // New writes continue the revision counter.
  EXPECT_KUBECTL_OK(c.Kubectl({"label", "configmap", "demo", "restarted=yes"}));
  auto rv2 = c.Kubectl({"get", "configmap", "demo", "-o", "jsonpath={.metadata.resourceVersion}"});
  EXPECT_GT(std::stoull(rv2.out), std::stoull(first_rv));
}

TEST(KubectlE2E, LabelPatchScaleAndDescribe) {
  ClusterUnderTest c({"--profile", "instant"});
  ASSERT_CLUSTER(c);
  EXPECT_KUBECTL_OK(c.Kubectl({"apply", "-f", "-"}, kDeployment));
  EXPECT_KUBECTL_OK(c.Kubectl({"label", "deployment", "web", "tier=frontend"}));
  auto label = c.Kubectl({"get", "deployment", "web", "-o", "jsonpath={.metadata.labels.tier}"});
  EXPECT_EQ(label.out, "frontend");
  EXPECT_KUBECTL_OK(c.Kubectl({"patch", "deployment", "web", "-p", R"({"spec":{"replicas":3}})"}));
  EXPECT_KUBECTL_OK(c.Kubectl({"patch", "deployment", "web", "--type=json", "-p",
                               R"([{"op":"add","path":"/spec/minReadySeconds","value":0}])"}));
  EXPECT_KUBECTL_OK(c.Kubectl({"scale", "deployment", "web", "--replicas=1"}));
  auto replicas = c.Kubectl({"get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"});
  EXPECT_EQ(replicas.out, "1");
  EXPECT_KUBECTL_OK(c.Kubectl({"rollout", "status", "deployment/web", "--timeout=30s"}));
  auto describe = c.Kubectl({"describe", "deployment", "web"});
  EXPECT_EQ(describe.exit_code, 0) << Describe(describe);
  EXPECT_THAT(describe.out, AllOf(HasSubstr("Replicas:"), HasSubstr("NewReplicaSet:")));
  auto wide = c.Kubectl({"get", "deployment", "web", "-o", "wide"});
  EXPECT_THAT(wide.out, AllOf(HasSubstr("READY"), HasSubstr("nodered/node-red:4.0")));
}

TEST(KubectlE2E, ApplyOfAChangedImageRollsOutANewReplicaSet) {
  ClusterUnderTest c({"--profile", "instant"});
  ASSERT_CLUSTER(c);
  EXPECT_KUBECTL_OK(c.Kubectl({"apply", "-f", "-"}, kDeployment));
  EXPECT_KUBECTL_OK(c.Kubectl({"rollout", "status", "deployment/web", "--timeout=30s"}));
  std::string changed = kDeployment;
  changed.replace(changed.find("node-red:4.0"), 12, "node-red:4.1");
  auto apply = c.Kubectl({"apply", "-f", "-"}, changed);
  EXPECT_EQ(apply.exit_code, 0) << Describe(apply);
  EXPECT_THAT(apply.out, HasSubstr("configured"));
  EXPECT_KUBECTL_OK(c.Kubectl({"rollout", "status", "deployment/web", "--timeout=30s"}));
  auto images = c.Kubectl(
      {"get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].spec.containers[0].image}"});
  EXPECT_EQ(images.out, "nodered/node-red:4.1 nodered/node-red:4.1") << Describe(images);
  auto rs = c.Kubectl({"get", "replicasets", "-l", "app=web", "--no-headers"});
  EXPECT_EQ(std::count(rs.out.begin(), rs.out.end(), '\n'), 2) << rs.out;
  auto generation =
      c.Kubectl({"get", "deployment", "web", "-o", "jsonpath={.metadata.generation}"});
  EXPECT_EQ(generation.out, "2");
}

TEST(KubectlE2E, RequestsWithoutTheTokenAreRefused) {
  ClusterUnderTest c({"--profile", "instant"});
  ASSERT_CLUSTER(c);
  auto denied = c.Kubectl({"--token", "wrong", "get", "pods"});
  EXPECT_NE(denied.exit_code, 0);
  EXPECT_THAT(denied.err, HasSubstr("provide credentials"));
}

// The admin token comes from a file (or $STEWARD_CLUSTER_TOKEN), never from the command line
// where every user of the machine can read it (issue 34, item 18).
TEST(KubectlE2E, TheAdminTokenComesFromAFileNotTheCommandLine) {
  TempDir secrets;
  const std::string token = "file-token-0123456789abcdef";
  const std::string file = secrets.path() + "/token";
  {
    std::ofstream out(file);
    out << token << "\n";
  }
  ClusterUnderTest c({"--profile", "instant", "--token-file", file});
  ASSERT_CLUSTER(c);
  EXPECT_EQ(c.Kubectl({"--token", token, "get", "pods"}).exit_code, 0);
  auto denied = c.Kubectl({"--token", "wrong", "get", "pods"});
  EXPECT_NE(denied.exit_code, 0);
  EXPECT_THAT(denied.err, HasSubstr("Unauthorized"));
  std::ifstream kubeconfig(c.kubeconfig());
  std::string text((std::istreambuf_iterator<char>(kubeconfig)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr(token));  // the kubeconfig written carries it

  // The flag that took it on the command line is gone; an empty file is refused by name.
  RunResult old = e2e::Run({StewardBinary(), "cluster", "--token", token});
  EXPECT_NE(old.exit_code, 0);
  EXPECT_THAT(old.err, HasSubstr("--token"));
  { std::ofstream(secrets.path() + "/empty"); }
  RunResult empty =
      e2e::Run({StewardBinary(), "cluster", "--token-file", secrets.path() + "/empty"});
  EXPECT_NE(empty.exit_code, 0);
  EXPECT_THAT(empty.err, HasSubstr("--token-file: " + secrets.path() + "/empty is empty"));
}

// Steward takes the whole hard limit of open files at start, so that clients holding many
// idle connections to its listeners cannot exhaust a low soft limit (issue 34, item 15).
TEST(KubectlE2E, StewardRaisesItsSoftOpenFileLimitToTheHardOne) {
  rlimit mine{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &mine), 0);
  if (mine.rlim_max <= 256) GTEST_SKIP() << "the hard limit is too low to tell";
  const rlimit low{256, mine.rlim_max};
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  ClusterUnderTest c({"--profile", "instant"});  // inherits the soft limit of 256
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &mine), 0);
  ASSERT_CLUSTER(c);
  std::ifstream limits("/proc/" + std::to_string(c.process().pid()) + "/limits");
  std::string line;
  std::string open_files;
  while (std::getline(limits, line)) {
    if (line.rfind("Max open files", 0) == 0) open_files = line;
  }
  std::istringstream fields(open_files.substr(std::string("Max open files").size()));
  std::string soft, hard;
  fields >> soft >> hard;
  EXPECT_EQ(soft, hard) << open_files;
  EXPECT_NE(soft, "256") << open_files;
}

TEST(KubectlE2E, InvalidObjectsAreRefusedWithFieldErrors) {
  ClusterUnderTest c({"--profile", "instant"});
  ASSERT_CLUSTER(c);
  std::string bad = kConfigMap;
  bad.replace(bad.find("name: demo"), 10, "name: Not_Valid");
  auto created = c.Kubectl({"create", "-f", "-"}, bad);
  EXPECT_NE(created.exit_code, 0);
  EXPECT_THAT(created.err, AllOf(HasSubstr("is invalid"), HasSubstr("metadata.name")));
  auto none = c.Kubectl({"get", "configmaps", "-o", "name"});
  EXPECT_EQ(none.out, "");
}

TEST(KubectlE2E, StrictFieldValidationRefusesUnknownFieldsAndWarnDropsThem) {
  ClusterUnderTest c({"--profile", "instant"});
  ASSERT_CLUSTER(c);
  std::string fixed = kDeployment;
  fixed.replace(fixed.find("        ports:"), 0, "        imagePullPolicy: Always\n");
  std::string typo = fixed;
  typo.replace(typo.find("imagePullPolicy"), 15, "imagePullPolcy");
  // kubectl sends fieldValidation=Strict: a 400, and nothing is created.
  auto refused = c.Kubectl({"apply", "-f", "-"}, typo);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err,
              AllOf(HasSubstr("strict decoding error"),
                    HasSubstr("unknown field \"spec.template.spec.containers[0].imagePullPolcy\"")))
      << Describe(refused);
  auto none = c.Kubectl({"get", "deployments", "-o", "name"});
  EXPECT_EQ(none.exit_code, 0) << Describe(none);
  EXPECT_EQ(none.out, "");
  auto applied = c.Kubectl({"apply", "-f", "-"}, fixed);
  ASSERT_EQ(applied.exit_code, 0) << Describe(applied);
  EXPECT_THAT(applied.out, HasSubstr("deployment.apps/web created"));
  auto policy = c.Kubectl({"get", "deployment", "web", "-o",
                           "jsonpath={.spec.template.spec.containers[0].imagePullPolicy}"});
  EXPECT_EQ(policy.out, "Always") << Describe(policy);
  // The typo in an apply over the existing object: the patch is refused (422).
  auto patch = c.Kubectl({"apply", "-f", "-"}, typo);
  EXPECT_NE(patch.exit_code, 0);
  EXPECT_THAT(patch.err,
              HasSubstr("unknown field \"spec.template.spec.containers[0].imagePullPolcy\""))
      << Describe(patch);
  // --validate=warn: the server warns and drops the field.
  auto warned = c.Kubectl({"apply", "--validate=warn", "-f", "-"}, typo);
  EXPECT_EQ(warned.exit_code, 0) << Describe(warned);
  EXPECT_THAT(
      warned.err,
      HasSubstr("Warning: unknown field \"spec.template.spec.containers[0].imagePullPolcy\""));
  auto stored =
      c.Kubectl({"get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[0]}"});
  EXPECT_THAT(stored.out, Not(HasSubstr("imagePullPolcy"))) << Describe(stored);
  // What the cluster writes itself passes strict validation: a server-side dry-run create of
  // each object as read back (field validation comes first, so success and AlreadyExists both
  // mean it passed).
  EXPECT_KUBECTL_OK(c.Kubectl({"apply", "-f", "-"}, kService));
  EXPECT_KUBECTL_OK(c.Kubectl({"rollout", "status", "deployment/web", "--timeout=30s"}));
  auto names =
      c.Kubectl({"get", "deployments,replicasets,pods,services,endpoints,endpointslices,events",
                 "-o", "name"});
  ASSERT_EQ(names.exit_code, 0) << Describe(names);
  std::vector<std::string> objects = {"namespace/default"};
  for (size_t pos = 0, next; pos < names.out.size(); pos = next + 1) {
    next = names.out.find('\n', pos);
    if (next == std::string::npos) next = names.out.size();
    if (next > pos) objects.push_back(names.out.substr(pos, next - pos));
  }
  EXPECT_GE(objects.size(), 9u) << names.out;
  for (const auto& object : objects) {
    auto json = c.Kubectl({"get", object, "-o", "json"});
    ASSERT_EQ(json.exit_code, 0) << Describe(json);
    auto again = c.Kubectl({"create", "--dry-run=server", "-f", "-"}, json.out);
    EXPECT_THAT(again.err,
                AllOf(Not(HasSubstr("strict decoding")), Not(HasSubstr("unknown field"))))
        << object << ": " << Describe(again);
    EXPECT_TRUE(again.exit_code == 0 || again.err.find("already exists") != std::string::npos)
        << object << ": " << Describe(again);
  }
}

TEST(KubectlE2E, TypedCreateCommandsSendProtobufAndTheObjectsReadBack) {
  ClusterUnderTest c({"--profile", "instant"});
  ASSERT_CLUSTER(c);
  // These kubectl commands build typed objects and POST them as
  // application/vnd.kubernetes.protobuf.
  EXPECT_KUBECTL_OK(c.Kubectl({"create", "namespace", "team-a"}));
  EXPECT_KUBECTL_OK(c.Kubectl({"create", "configmap", "settings", "-n", "team-a",
                               "--from-literal=colour=blue", "--from-literal=size=L"}));
  EXPECT_KUBECTL_OK(
      c.Kubectl({"create", "secret", "generic", "creds", "--from-literal=user=admin"}));
  EXPECT_KUBECTL_OK(c.Kubectl(
      {"create", "deployment", "web", "--image=nginx:1.27", "--replicas=2", "--port=8080"}));
  EXPECT_KUBECTL_OK(c.Kubectl({"create", "service", "clusterip", "web", "--tcp=80:8080"}));
  EXPECT_KUBECTL_OK(c.Kubectl({"create", "ingress", "web", "--rule=web.example.test/*=web:80"}));

  auto phase = c.Kubectl({"get", "namespace", "team-a", "-o", "jsonpath={.status.phase}"});
  EXPECT_EQ(phase.out, "Active") << Describe(phase);
  auto data = c.Kubectl({"get", "configmap", "settings", "-n", "team-a", "-o",
                         "jsonpath={.data.colour} {.data.size}"});
  EXPECT_EQ(data.out, "blue L") << Describe(data);
  auto secret = c.Kubectl({"get", "secret", "creds", "-o", "jsonpath={.type} {.data.user}"});
  EXPECT_EQ(secret.out, "Opaque YWRtaW4=") << Describe(secret);
  auto deployment = c.Kubectl({"get", "deployment", "web", "-o",
                               "jsonpath={.spec.replicas} {.spec.selector.matchLabels.app} "
                               "{.spec.template.spec.containers[0].image} "
                               "{.spec.template.spec.containers[0].ports[0].containerPort}"});
  EXPECT_EQ(deployment.out, "2 web nginx:1.27 8080") << Describe(deployment);
  EXPECT_KUBECTL_OK(c.Kubectl({"rollout", "status", "deployment/web", "--timeout=30s"}));
  auto service = c.Kubectl({"get", "service", "web", "-o",
                            "jsonpath={.spec.type} {.spec.ports[0].port} "
                            "{.spec.ports[0].targetPort} {.spec.selector.app}"});
  EXPECT_EQ(service.out, "ClusterIP 80 8080 web") << Describe(service);
  auto ip = c.Kubectl({"get", "service", "web", "-o", "jsonpath={.spec.clusterIP}"});
  EXPECT_FALSE(ip.out.empty()) << Describe(ip);
  auto ingress = c.Kubectl({"get", "ingress", "web", "-o",
                            "jsonpath={.spec.rules[0].host} "
                            "{.spec.rules[0].http.paths[0].backend.service.port.number}"});
  EXPECT_EQ(ingress.out, "web.example.test 80") << Describe(ingress);
}
}  // namespace
}  // namespace steward::e2e
