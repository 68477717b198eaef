#include "instance/instance_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cluster/embedded_cluster.h"
#include "cluster/profile/profile.h"
#include "common/mutex.h"
#include "engine/manifests/manifests.h"
#include "engine/model/project.h"
#include "kube/client/client.h"
#include "kube/client/resource.h"
#include "kube/config/credential_providers.h"
#include "kube/test_support/embedded.h"
#include "kube/transport/transport.h"
#include "net/http_server.h"
#include "store/store.h"
#include "test_support/eventually.h"

namespace steward::instance {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

constexpr char kNs[] = "projects";

// One embedded cluster for the whole binary (starting it is the slow part); every test uses
// its own project or service names.
class InstanceOpsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster::EmbeddedCluster::Options o;
    o.profile = *cluster::BuiltinProfile("instant");
    auto c = cluster::EmbeddedCluster::Start(o);
    ASSERT_TRUE(c.ok()) << c.error().ToString();
    cluster_ = std::move(*c).release();
    client_ = new std::shared_ptr<kube::Client>(kube::test_support::ClientFor(*cluster_));
    Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kNs}}}};
    auto created = (*client_)->Create(kube::ResourceType::Namespace(), "", ns);
    ASSERT_TRUE(created.ok()) << created.error().ToString();
  }
  static void TearDownTestSuite() {
    delete client_;
    client_ = nullptr;
    delete cluster_;
    cluster_ = nullptr;
  }

  static kube::Client& client() { return **client_; }

  InstanceOps Ops(Access access = Access::kProxy) const {
    InstanceOptions o;
    o.ns = kNs;
    o.access = access;
    o.timeout = milliseconds(2000);
    return InstanceOps(*client_, o);
  }

  // Creates the project's Secret, Deployment (unless !with_deployment) and Service as Steward
  // renders them; returns the Service name.
  static std::string CreateProject(const std::string& id, const std::string& name, int replicas,
                                   bool with_deployment = true) {
    engine::EngineConfig config;
    config.namespace_name = kNs;
    engine::ProjectSpec spec;
    spec.team = "t1";
    spec.replicas = replicas;
    engine::RenderInput in;
    in.id = id;
    in.name = name;
    in.config = &config;
    in.resolved = engine::Resolve(config, name, spec);
    in.credential = {"client-" + id, "token-" + id};
    engine::Manifests m = engine::Render(in);
    EXPECT_TRUE(client().Create(kube::ResourceType::Secret(), kNs, m.secret.value()).ok());
    if (with_deployment) {
      auto d = client().Create(kube::ResourceType::Deployment(), kNs, m.deployment);
      EXPECT_TRUE(d.ok()) << d.error().ToString();
    }
    auto s = client().Create(kube::ResourceType::Service(), kNs, m.service);
    EXPECT_TRUE(s.ok()) << s.error().ToString();
    return m.names.service;
  }

  // An MQTT schema agent as FlowFuse's Kubernetes driver makes one: a Deployment (unless
  // !with_deployment) and a ClusterIP Service named mqtt-schema-agent-<team>-<broker>, container
  // "mqtt-schema-agent" on port 3500 ("web"); returns the Service name.
  static std::string CreateAgent(const std::string& team, const std::string& broker,
                                 bool with_deployment = true) {
    const std::string name = "mqtt-schema-agent-" + team + "-" + broker;
    Json env = Json::array({{{"name", "FORGE_TEAM_TOKEN"}, {"value", "token-" + team}},
                            {{"name", "FORGE_URL"}, {"value", "https://forge.example.com"}},
                            {{"name", "FORGE_BROKER_ID"}, {"value", broker}},
                            {{"name", "FORGE_TEAM_ID"}, {"value", team}}});
    Json container = {{"name", "mqtt-schema-agent"},
                      {"image", "flowfuse/mqtt-schema-agent"},
                      {"env", std::move(env)},
                      {"ports", {{{"name", "web"}, {"containerPort", 3500}, {"protocol", "TCP"}}}}};
    Json labels = {{"name", name}};
    if (with_deployment) {
      Json deployment = {
          {"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"spec",
           {{"replicas", 1},
            {"selector", {{"matchLabels", labels}}},
            {"template",
             {{"metadata", {{"labels", labels}}}, {"spec", {{"containers", {container}}}}}}}}};
      auto d = client().Create(kube::ResourceType::Deployment(), kNs, deployment);
      EXPECT_TRUE(d.ok()) << d.error().ToString();
    }
    Json service = {
        {"apiVersion", "v1"},
        {"kind", "Service"},
        {"metadata", {{"name", name}, {"labels", {{"team", team}, {"broker", broker}}}}},
        {"spec",
         {{"type", "ClusterIP"},
          {"selector", labels},
          {"ports", {{{"name", "web"}, {"port", 3500}, {"targetPort", 3500}}}}}}};
    auto created = client().Create(kube::ResourceType::Service(), kNs, service);
    EXPECT_TRUE(created.ok()) << created.error().ToString();
    return name;
  }

  // Ready pod endpoints of a Service, read straight from the EndpointSlices.
  static std::set<std::string> ReadyEndpointPods(const std::string& service) {
    kube::ListOptions lo;
    lo.label_selector = "kubernetes.io/service-name=" + service;
    auto slices = client().List(kube::ResourceType::EndpointSlice(), kNs, lo);
    std::set<std::string> pods;
    if (!slices.ok()) return pods;
    for (const Json& s : slices->items) {
      for (const Json& e : s.value("endpoints", Json::array())) {
        const Json* ready = FindPath(e, "conditions.ready");
        if (ready != nullptr && *ready == true) pods.insert(GetString(e["targetRef"], "name"));
      }
    }
    return pods;
  }

  static std::set<std::string> ProjectPods(const std::string& id) {
    return LivePods("steward.io/project=" + id);
  }
  // An agent's pods (the driver labels them name=<agent name>).
  static std::set<std::string> AgentPods(const std::string& name) {
    return LivePods("name=" + name);
  }
  // The names of the pods matching `selector` that are not terminating.
  static std::set<std::string> LivePods(const std::string& selector) {
    kube::ListOptions lo;
    lo.label_selector = selector;
    auto pods = client().List(kube::ResourceType::Pod(), kNs, lo);
    std::set<std::string> names;
    if (!pods.ok()) return names;
    for (const Json& p : pods->items) {
      if (FindPath(p, "metadata.deletionTimestamp") == nullptr) {
        names.insert(GetString(p["metadata"], "name"));
      }
    }
    return names;
  }

  static void WaitReady(const std::string& service, size_t pods) {
    ASSERT_TRUE(test_support::Eventually([&] { return ReadyEndpointPods(service).size() == pods; },
                                         std::chrono::seconds(10)))
        << "service " << service << " never had " << pods << " ready endpoints";
  }

  // A hand-made EndpointSlice (no controller manages it: it lacks the managed-by label).
  static void CreateSlice(const std::string& name, const std::string& service, Json endpoints) {
    Json slice = {
        {"apiVersion", "discovery.k8s.io/v1"},
        {"kind", "EndpointSlice"},
        {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/service-name", service}}}}},
        {"addressType", "IPv4"},
        {"endpoints", std::move(endpoints)}};
    auto created = client().Create(kube::ResourceType::EndpointSlice(), kNs, slice);
    ASSERT_TRUE(created.ok()) << created.error().ToString();
  }

  static Json Endpoint(const std::string& ip, const std::string& pod,
                       std::optional<bool> ready = true, const std::string& kind = "Pod") {
    Json e = {{"addresses", {ip}}};
    if (ready) e["conditions"] = {{"ready", *ready}};
    if (!pod.empty()) e["targetRef"] = {{"kind", kind}, {"name", pod}, {"namespace", kNs}};
    return e;
  }

  static cluster::EmbeddedCluster* cluster_;
  static std::shared_ptr<kube::Client>* client_;
};

cluster::EmbeddedCluster* InstanceOpsTest::cluster_ = nullptr;
std::shared_ptr<kube::Client>* InstanceOpsTest::client_ = nullptr;

// A stand-in launcher for kDirect: records every request and answers with `answer`, or never
// answers when `hang` is set.
class FakeLauncher : public net::Handler {
 public:
  struct Seen {
    std::string method, path, body, content_type;
  };

  explicit FakeLauncher(std::function<net::HttpResponse(const net::HttpRequest&)> answer,
                        bool hang = false)
      : answer_(std::move(answer)), hang_(hang) {
    auto s = net::HttpServer::Start({}, *this);
    EXPECT_TRUE(s.ok()) << s.error().ToString();
    if (s.ok()) server_ = std::move(*s);
  }
  ~FakeLauncher() override {
    if (server_) server_->Stop();
  }

  void Handle(net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) override {
    MutexLock lock(mu_);
    seen_.push_back({request.method, request.path, request.body,
                     std::string(request.headers.Get("Content-Type"))});
    if (hang_) {
      held_.push_back(std::move(writer));
      return;
    }
    writer->Send(answer_(request));
  }

  uint16_t port() const { return server_->port(); }
  std::vector<Seen> seen() const {
    MutexLock lock(mu_);
    return seen_;
  }

 private:
  std::function<net::HttpResponse(const net::HttpRequest&)> answer_;
  bool hang_;
  mutable Mutex mu_;
  std::vector<Seen> seen_ GUARDED_BY(mu_);
  std::vector<std::shared_ptr<net::ResponseWriter>> held_ GUARDED_BY(mu_);
  std::unique_ptr<net::HttpServer> server_;
};

net::HttpResponse Answer(int status, std::string body,
                         std::string content_type = "application/json") {
  net::HttpResponse r;
  r.status = status;
  r.headers.Set("Content-Type", std::move(content_type));
  r.body = std::move(body);
  return r;
}

// Direct-access options whose dial_override sends each pod IP to a port from `ports` and
// records the IPs dialled and the pod ports asked for.
struct Dialler {
  std::map<std::string, uint16_t> ports;  // set up before the dials, read-only afterwards
  Mutex mu;
  std::multiset<std::string> dialled GUARDED_BY(mu);
  std::vector<uint16_t> pod_ports GUARDED_BY(mu);  // in dial order

  std::multiset<std::string> Dialled() {
    MutexLock lock(mu);
    return dialled;
  }
  std::vector<uint16_t> PodPorts() {
    MutexLock lock(mu);
    return pod_ports;
  }
};

InstanceOptions DirectOptions(Dialler& d, milliseconds timeout = milliseconds(2000)) {
  InstanceOptions o;
  o.ns = kNs;
  o.access = Access::kDirect;
  o.timeout = timeout;
  o.dial_override = [&d](const std::string& ip, uint16_t port) {
    MutexLock lock(d.mu);
    d.dialled.insert(ip);
    d.pod_ports.push_back(port);
    auto it = d.ports.find(ip);
    return std::pair<std::string, uint16_t>("127.0.0.1", it == d.ports.end() ? 1 : it->second);
  };
  return o;
}

// A port nothing listens on: a server's port after it stopped.
uint16_t ClosedPort() {
  FakeLauncher gone([](const net::HttpRequest&) { return Answer(200, "{}"); });
  return gone.port();
}

// ---------------------------------------------------------------------------------------------
// Through the API server's pod proxy, against the embedded cluster's virtual pods.

TEST_F(InstanceOpsTest, ProxyInfoAnswersTheLaunchersIdAndState) {
  std::string service = CreateProject("pinfo01", "info-one", 1);
  WaitReady(service, 1);
  auto info = Ops().Info(service);
  ASSERT_TRUE(info.ok()) << info.error().ToString();
  EXPECT_EQ((*info)["id"], "pinfo01");
  EXPECT_EQ((*info)["state"], "running");
  EXPECT_TRUE((*info)["lastStartTime"].is_number_integer());
  EXPECT_GT((*info)["lastStartTime"].get<int64_t>(), 0);
  EXPECT_TRUE((*info)["versions"].contains("node-red"));
}

TEST_F(InstanceOpsTest, ProxyLogsCarryThePodAndAreSortedByTs) {
  std::string service = CreateProject("plogs01", "logs-one", 1);
  WaitReady(service, 1);
  std::set<std::string> pods = ProjectPods("plogs01");
  ASSERT_EQ(pods.size(), 1u);
  // A restart adds entries after the start-up ones.
  auto restarted = Ops().Command(service, {{"cmd", "restart"}});
  ASSERT_TRUE(restarted.ok()) << restarted.error().ToString();
  auto logs = Ops().Logs(service);
  ASSERT_TRUE(logs.ok()) << logs.error().ToString();
  ASSERT_TRUE(logs->is_array());
  ASSERT_GE(logs->size(), 8u);
  std::string last;
  int starts = 0;
  bool saw_stop = false;
  for (const Json& e : *logs) {
    EXPECT_EQ(e["pod"], *pods.begin());
    ASSERT_TRUE(e["ts"].is_string());  // the launcher's "<epoch ms><4-digit counter>"
    EXPECT_GE(e["ts"].get<std::string>(), last);
    last = e["ts"].get<std::string>();
    EXPECT_TRUE(e.contains("level"));
    if (e["msg"] == "Starting Node-RED") ++starts;
    saw_stop |= e["msg"] == "Stopping Node-RED";
  }
  // The restart stopped Node-RED and started it again (as lib/launcher.js logs it).
  EXPECT_EQ(starts, 2);
  EXPECT_TRUE(saw_stop);
  // The launcher's first line names its version (Info's, less the stand-in's "+mcp").
  const std::string version = GetString((*Ops().Info(service))["versions"], "launcher");
  EXPECT_EQ(logs->front()["msg"], "Launcher version: " + version.substr(0, version.find('+')));
}

TEST_F(InstanceOpsTest, ProxyStopStartAndLogoutDriveTheLauncher) {
  std::string service = CreateProject("pcmd01", "cmd-one", 1);
  WaitReady(service, 1);
  std::string pod = *ProjectPods("pcmd01").begin();
  InstanceOps ops = Ops();

  auto stopped = ops.Command(service, {{"cmd", "stop"}});
  ASSERT_TRUE(stopped.ok()) << stopped.error().ToString();
  ASSERT_EQ(stopped->size(), 1u);
  EXPECT_EQ((*stopped)[0].pod, pod);
  EXPECT_EQ((*stopped)[0].status, 200);
  EXPECT_EQ((*stopped)[0].error, "");
  EXPECT_EQ((*ops.Info(service))["state"], "stopped");

  auto started = ops.Command(service, {{"cmd", "start"}});
  ASSERT_TRUE(started.ok());
  EXPECT_EQ((*started)[0].status, 200);
  // "starting" until the launcher's first health check of Node-RED.
  ASSERT_TRUE(test_support::Eventually([&] { return (*ops.Info(service))["state"] == "running"; }));

  auto again = ops.Command(service, {{"cmd", "start"}});
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ((*again)[0].status, 409);
  EXPECT_EQ((*again)[0].error, "");
  EXPECT_EQ((*again)[0].body, (Json{{"err", "Already running"}}));

  auto logout = ops.Command(service, {{"cmd", "logout"}, {"token", "user-token"}});
  ASSERT_TRUE(logout.ok());
  EXPECT_EQ((*logout)[0].status, 200);
  EXPECT_TRUE((*logout)[0].body.is_object());
  auto logs = ops.Logs(service);
  ASSERT_TRUE(logs.ok());
  EXPECT_EQ(logs->back()["msg"], "Node-RED logout requested");

  // The launcher's own 404 (unknown command) is an answer, not an unreachable pod; its body is
  // {} as lib/admin.js sends it.
  auto unknown = ops.Command(service, {{"cmd", "fly"}});
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ((*unknown)[0].status, 404);
  EXPECT_EQ((*unknown)[0].body, Json::object());
}

TEST_F(InstanceOpsTest, ProxyHaCommandReachesEveryPodAndLogsMergeThem) {
  std::string service = CreateProject("pha01", "ha-one", 2);
  WaitReady(service, 2);
  std::set<std::string> pods = ProjectPods("pha01");
  ASSERT_EQ(pods.size(), 2u);
  InstanceOps ops = Ops();

  auto stopped = ops.Command(service, {{"cmd", "stop"}});
  ASSERT_TRUE(stopped.ok()) << stopped.error().ToString();
  ASSERT_EQ(stopped->size(), 2u);
  EXPECT_EQ((*stopped)[0].pod, *pods.begin());
  EXPECT_EQ((*stopped)[1].pod, *pods.rbegin());
  for (const PodAnswer& a : *stopped) EXPECT_EQ(a.status, 200) << a.pod;

  // Both pods were stopped: a start succeeds on each, a second start conflicts on each.
  auto started = ops.Command(service, {{"cmd", "start"}});
  ASSERT_TRUE(started.ok());
  for (const PodAnswer& a : *started) EXPECT_EQ(a.status, 200) << a.pod;
  // Once each is running (a start while starting is answered {}), a start conflicts on each.
  ASSERT_TRUE(test_support::Eventually([&] {
    auto again = ops.Command(service, {{"cmd", "start"}});
    return again.ok() && std::all_of(again->begin(), again->end(),
                                     [](const PodAnswer& a) { return a.status == 409; });
  }));

  auto logs = ops.Logs(service);
  ASSERT_TRUE(logs.ok()) << logs.error().ToString();
  std::map<std::string, int> stops;
  std::string last;
  for (const Json& e : *logs) {
    ASSERT_TRUE(pods.count(GetString(e, "pod"))) << e.dump();
    EXPECT_GE(e["ts"].get<std::string>(), last);
    last = e["ts"].get<std::string>();
    if (e["msg"] == "Stopping Node-RED") ++stops[GetString(e, "pod")];
  }
  EXPECT_EQ(stops.size(), 2u);
  for (const auto& [pod, n] : stops) EXPECT_EQ(n, 1) << pod;
}

TEST_F(InstanceOpsTest, NoReadyPodIsFailedPrecondition) {
  // A Service without a Deployment: no endpoints at all.
  std::string lonely = CreateProject("pnone01", "none-one", 1, /*with_deployment=*/false);
  auto info = Ops().Info(lonely);
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(info.error().message(), HasSubstr("no ready pod for service " + lonely));
  auto logs = Ops().Logs(lonely);
  ASSERT_FALSE(logs.ok());
  EXPECT_EQ(logs.error().code(), StatusCode::kFailedPrecondition);
  auto command = Ops().Command(lonely, {{"cmd", "stop"}});
  ASSERT_FALSE(command.ok());
  EXPECT_EQ(command.error().code(), StatusCode::kFailedPrecondition);

  // A project scaled to zero: its endpoints go away.
  std::string service = CreateProject("pzero01", "zero-one", 1);
  WaitReady(service, 1);
  ASSERT_TRUE(Ops().Info(service).ok());
  auto patched = client().Patch(kube::ResourceType::Deployment(), kNs, "zero-one",
                                kube::PatchType::kMerge, R"({"spec":{"replicas":0}})");
  ASSERT_TRUE(patched.ok()) << patched.error().ToString();
  ASSERT_TRUE(test_support::Eventually([&] {
    auto r = Ops().Command(service, {{"cmd", "logout"}, {"token", "t"}});
    return !r.ok() && r.error().code() == StatusCode::kFailedPrecondition;
  }));
}

TEST_F(InstanceOpsTest, ProxyToAGonePodIsUnavailable) {
  // The slice names a pod that does not exist: the API server answers 404 for it.
  CreateSlice("ghost-slice", "ghost", Json::array({Endpoint("10.9.9.9", "ghost-pod")}));
  auto info = Ops().Info("ghost");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(info.error().message(), HasSubstr("pod ghost-pod: "));
  EXPECT_THAT(info.error().message(), HasSubstr("pods \"ghost-pod\" not found"));
  auto logs = Ops().Logs("ghost");
  ASSERT_FALSE(logs.ok());
  EXPECT_EQ(logs.error().code(), StatusCode::kUnavailable);
  auto command = Ops().Command("ghost", {{"cmd", "restart"}});
  ASSERT_TRUE(command.ok()) << command.error().ToString();
  ASSERT_EQ(command->size(), 1u);
  EXPECT_EQ((*command)[0].pod, "ghost-pod");
  EXPECT_EQ((*command)[0].status, 0);
  EXPECT_TRUE((*command)[0].body.is_null());
  EXPECT_THAT((*command)[0].error, HasSubstr("not found"));
}

TEST_F(InstanceOpsTest, ProxyToATerminatingPodIsUnavailable) {
  // A pod held by a finalizer stays terminating with its IP: the API server cannot dial it and
  // answers 503 for the proxy request.
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "held-pod"}, {"finalizers", {"example.com/hold"}}}},
              {"spec", {{"containers", {{{"name", "node-red"}, {"image", "flowfuse/node-red"}}}}}}};
  auto created = client().Create(kube::ResourceType::Pod(), kNs, pod);
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  std::string ip;
  ASSERT_TRUE(test_support::Eventually([&] {
    auto p = client().Get(kube::ResourceType::Pod(), kNs, "held-pod");
    if (!p.ok()) return false;
    ip = GetString((*p)["status"], "podIP");
    // A pod serves once Ready, which comes after Running (cluster/ingress/virtual_pods.h).
    bool ready = false;
    for (const Json& c : (*p)["status"].value("conditions", Json::array())) {
      ready = ready || (GetString(c, "type") == "Ready" && GetString(c, "status") == "True");
    }
    return GetString((*p)["status"], "phase") == "Running" && !ip.empty() && ready;
  }));
  CreateSlice("held-slice", "held", Json::array({Endpoint(ip, "held-pod")}));
  ASSERT_TRUE(Ops().Info("held").ok());  // serving while it runs
  auto deleted = client().Delete(kube::ResourceType::Pod(), kNs, "held-pod");
  ASSERT_TRUE(deleted.ok()) << deleted.error().ToString();
  ASSERT_FALSE(deleted->gone);

  auto info = Ops().Info("held");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().code(), StatusCode::kUnavailable) << info.error().ToString();
  EXPECT_THAT(info.error().message(), HasSubstr("pod held-pod: error trying to reach service"));
  auto command = Ops().Command("held", {{"cmd", "stop"}});
  ASSERT_TRUE(command.ok());
  EXPECT_EQ((*command)[0].status, 0);
  EXPECT_THAT((*command)[0].error, HasSubstr("connection refused"));

  auto released = client().Patch(kube::ResourceType::Pod(), kNs, "held-pod",
                                 kube::PatchType::kMerge, R"({"metadata":{"finalizers":null}})");
  EXPECT_TRUE(released.ok()) << released.error().ToString();
}

// ---------------------------------------------------------------------------------------------
// Direct access to pod IPs (dial_override points them at local fake launchers).

TEST_F(InstanceOpsTest, DirectCommandGoesToEveryReadyPodOfEverySliceOnce) {
  FakeLauncher a([](const net::HttpRequest&) { return Answer(200, R"({"ok":"a"})"); });
  FakeLauncher b([](const net::HttpRequest&) { return Answer(200, R"({"ok":"b"})"); });
  // b-pod comes first in the slice, a-pod twice (two slices); c-pod is not ready, one endpoint
  // has no targetRef and one points at a Node: none of those three counts.
  CreateSlice(
      "rules-1", "rules",
      Json::array({Endpoint("10.0.0.2", "b-pod", true), Endpoint("10.0.0.1", "a-pod", std::nullopt),
                   Endpoint("10.0.0.3", "c-pod", false), Endpoint("10.0.0.4", ""),
                   Endpoint("10.0.0.6", "node-1", true, "Node")}));
  CreateSlice("rules-2", "rules", Json::array({Endpoint("10.0.0.1", "a-pod", true)}));
  Dialler d;
  d.ports = {{"10.0.0.1", a.port()}, {"10.0.0.2", b.port()}};
  InstanceOps ops(std::shared_ptr<kube::Client>(*client_), DirectOptions(d));

  Json command = {{"cmd", "logout"}, {"token", "tok-1"}};
  auto answers = ops.Command("rules", command);
  ASSERT_TRUE(answers.ok()) << answers.error().ToString();
  ASSERT_EQ(answers->size(), 2u);
  EXPECT_EQ((*answers)[0].pod, "a-pod");
  EXPECT_EQ((*answers)[0].status, 200);
  EXPECT_EQ((*answers)[0].body, Json({{"ok", "a"}}));
  EXPECT_EQ((*answers)[1].pod, "b-pod");
  EXPECT_EQ((*answers)[1].body, Json({{"ok", "b"}}));
  EXPECT_EQ(d.Dialled(), (std::multiset<std::string>{"10.0.0.1", "10.0.0.2"}));
  for (FakeLauncher* f : {&a, &b}) {
    auto seen = f->seen();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].method, "POST");
    EXPECT_EQ(seen[0].path, "/flowforge/command");
    EXPECT_EQ(seen[0].content_type, "application/json");
    EXPECT_EQ(*ParseJson(seen[0].body), command);
  }

  // Info asks one pod only: the first by name.
  auto info = ops.Info("rules");
  ASSERT_TRUE(info.ok()) << info.error().ToString();
  EXPECT_EQ(*info, Json({{"ok", "a"}}));
  ASSERT_EQ(a.seen().size(), 2u);
  EXPECT_EQ(a.seen()[1].method, "GET");
  EXPECT_EQ(a.seen()[1].path, "/flowforge/info");
  EXPECT_EQ(b.seen().size(), 1u);
}

TEST_F(InstanceOpsTest, CachedSlicesPickThePodsWithoutAListAndAnUnsyncedCacheFallsBackToOne) {
  FakeLauncher a([](const net::HttpRequest&) { return Answer(200, R"({"ok":"a"})"); });
  FakeLauncher z([](const net::HttpRequest&) { return Answer(200, R"({"ok":"z"})"); });
  // The cluster's slice names z-pod; the cache (a watch that is ahead, or behind) names a-pod
  // and a pod that is not ready.
  CreateSlice("cached-1", "cached", Json::array({Endpoint("10.0.1.26", "z-pod", true)}));
  Json cached_slice = {
      {"metadata", {{"name", "cached-x"}, {"labels", {{"kubernetes.io/service-name", "cached"}}}}},
      {"endpoints",
       Json::array({Endpoint("10.0.1.1", "a-pod", true), Endpoint("10.0.1.2", "b-pod", false)})}};
  Dialler d;
  d.ports = {{"10.0.1.1", a.port()}, {"10.0.1.26", z.port()}};
  InstanceOptions o = DirectOptions(d);
  bool synced = true;
  std::vector<std::string> asked;
  o.cached_endpoint_slices = [&](const std::string& service) -> std::optional<std::vector<Json>> {
    asked.push_back(service);
    if (!synced) return std::nullopt;
    return std::vector<Json>{cached_slice};
  };
  InstanceOps ops(std::shared_ptr<kube::Client>(*client_), o);
  cluster::RequestLog& log = cluster_->request_log();

  const uint64_t lists = log.Count("list");
  auto info = ops.Info("cached");
  ASSERT_TRUE(info.ok()) << info.error().ToString();
  EXPECT_EQ(*info, Json({{"ok", "a"}}));
  EXPECT_EQ(log.Count("list"), lists) << "the cache answered: no list request";
  EXPECT_EQ(asked, std::vector<std::string>{"cached"});
  EXPECT_TRUE(z.seen().empty());

  synced = false;  // not synced (or stopped): the slices are listed, as without a cache
  info = ops.Info("cached");
  ASSERT_TRUE(info.ok()) << info.error().ToString();
  EXPECT_EQ(*info, Json({{"ok", "z"}}));
  EXPECT_EQ(log.Count("list"), lists + 1);
  EXPECT_EQ(asked.size(), 2u);
}

TEST_F(InstanceOpsTest, DirectLogsMergeByTsStablyAcrossPods) {
  FakeLauncher a([](const net::HttpRequest&) {
    return Answer(200, R"([{"ts":1,"msg":"a1"},{"ts":3,"msg":"a3"},{"ts":5,"msg":"a5"}])");
  });
  FakeLauncher b([](const net::HttpRequest&) {
    return Answer(
        200,
        R"([{"ts":2,"msg":"b2"},{"ts":3,"msg":"b3"},{"ts":4,"msg":"b4","pod":"x"},{"msg":"b-none"}])");
  });
  CreateSlice("merge-1", "merge",
              Json::array({Endpoint("10.0.1.2", "merge-b"), Endpoint("10.0.1.1", "merge-a")}));
  Dialler d;
  d.ports = {{"10.0.1.1", a.port()}, {"10.0.1.2", b.port()}};
  InstanceOps ops(*client_, DirectOptions(d));
  auto logs = ops.Logs("merge");
  ASSERT_TRUE(logs.ok()) << logs.error().ToString();
  std::vector<std::string> order;
  for (const Json& e : *logs) order.push_back(GetString(e, "msg") + "@" + GetString(e, "pod"));
  EXPECT_EQ(order,
            (std::vector<std::string>{"b-none@merge-b", "a1@merge-a", "b2@merge-b", "a3@merge-a",
                                      "b3@merge-b", "b4@merge-b", "a5@merge-a"}));
  EXPECT_EQ(a.seen().at(0).path, "/flowforge/logs");
  EXPECT_EQ(a.seen().at(0).method, "GET");
}

TEST_F(InstanceOpsTest, DirectLauncherErrorIsAbortedForInfoAndLogsButAnAnswerForCommand) {
  FakeLauncher a(
      [](const net::HttpRequest&) { return Answer(500, "boom: launcher crashed", "text/plain"); });
  CreateSlice("err-1", "err", Json::array({Endpoint("10.0.2.1", "err-a")}));
  Dialler d;
  d.ports = {{"10.0.2.1", a.port()}};
  InstanceOps ops(*client_, DirectOptions(d));

  auto info = ops.Info("err");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().code(), StatusCode::kAborted);
  EXPECT_EQ(info.error().message(),
            "pod err-a: GET /flowforge/info answered HTTP 500: boom: launcher crashed");
  auto logs = ops.Logs("err");
  ASSERT_FALSE(logs.ok());
  EXPECT_EQ(logs.error().code(), StatusCode::kAborted);
  EXPECT_THAT(logs.error().message(),
              HasSubstr("pod err-a: GET /flowforge/logs answered HTTP 500"));

  auto command = ops.Command("err", {{"cmd", "restart"}});
  ASSERT_TRUE(command.ok()) << command.error().ToString();
  ASSERT_EQ(command->size(), 1u);
  EXPECT_EQ((*command)[0].pod, "err-a");
  EXPECT_EQ((*command)[0].status, 500);
  EXPECT_TRUE((*command)[0].body.is_null());
  EXPECT_EQ((*command)[0].error, "");
}

TEST_F(InstanceOpsTest, DirectBodiesOfTheWrongShapeAreAborted) {
  FakeLauncher a([](const net::HttpRequest& r) {
    if (r.path == "/flowforge/logs") return Answer(200, R"({"entries":[]})");
    return Answer(200, std::string(300, 'x'), "text/html");
  });
  CreateSlice("shape-1", "shape", Json::array({Endpoint("10.0.3.1", "shape-a")}));
  Dialler d;
  d.ports = {{"10.0.3.1", a.port()}};
  InstanceOps ops(*client_, DirectOptions(d));

  auto info = ops.Info("shape");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().code(), StatusCode::kAborted);
  // The excerpt is bounded.
  EXPECT_EQ(info.error().message(),
            "pod shape-a: GET /flowforge/info answered HTTP 200 with a body that is not a JSON "
            "object: " +
                std::string(200, 'x') + "...");
  auto logs = ops.Logs("shape");
  ASSERT_FALSE(logs.ok());
  EXPECT_EQ(logs.error().code(), StatusCode::kAborted);
  EXPECT_THAT(logs.error().message(),
              HasSubstr("pod shape-a: GET /flowforge/logs answered HTTP 200 with a body that is "
                        "not a JSON array of objects: {\"entries\":[]}"));
  auto command = ops.Command("shape", {{"cmd", "stop"}});
  ASSERT_TRUE(command.ok());
  EXPECT_EQ((*command)[0].status, 200);
  EXPECT_TRUE((*command)[0].body.is_null());
}

TEST_F(InstanceOpsTest, DirectUnreachablePodIsUnavailableOrAnAnswerWithError) {
  FakeLauncher b([](const net::HttpRequest&) { return Answer(200, "{}"); });
  CreateSlice("down-1", "down",
              Json::array({Endpoint("10.0.4.1", "down-a"), Endpoint("10.0.4.2", "down-b")}));
  Dialler d;
  uint16_t closed = ClosedPort();
  d.ports = {{"10.0.4.1", closed}, {"10.0.4.2", b.port()}};
  InstanceOps ops(*client_, DirectOptions(d));

  // Info moves on to the next pod when one cannot be reached; with none reachable it fails.
  auto info = ops.Info("down");
  ASSERT_TRUE(info.ok()) << info.error().ToString();
  EXPECT_EQ(*info, Json::object());
  ASSERT_EQ(b.seen().size(), 1u);
  EXPECT_EQ(b.seen()[0].path, "/flowforge/info");
  CreateSlice("gone-1", "gone", Json::array({Endpoint("10.0.4.1", "gone-a")}));
  auto gone = ops.Info("gone");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(gone.error().message(),
              HasSubstr("pod gone-a (127.0.0.1:" + std::to_string(closed) + "): "));
  auto logs = ops.Logs("down");
  ASSERT_FALSE(logs.ok());
  EXPECT_EQ(logs.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(logs.error().message(), HasSubstr("pod down-a "));

  auto command = ops.Command("down", {{"cmd", "stop"}});
  ASSERT_TRUE(command.ok()) << command.error().ToString();
  ASSERT_EQ(command->size(), 2u);
  EXPECT_EQ((*command)[0].pod, "down-a");
  EXPECT_EQ((*command)[0].status, 0);
  EXPECT_THAT((*command)[0].error, HasSubstr("pod down-a (127.0.0.1:"));
  EXPECT_EQ((*command)[1].pod, "down-b");
  EXPECT_EQ((*command)[1].status, 200);
  EXPECT_EQ((*command)[1].error, "");
}

TEST_F(InstanceOpsTest, DirectLogsFailWhenOnePodFailsNamingIt) {
  FakeLauncher a([](const net::HttpRequest&) { return Answer(200, R"([{"ts":1}])"); });
  FakeLauncher b([](const net::HttpRequest&) { return Answer(503, R"({"error":"busy"})"); });
  CreateSlice("half-1", "half",
              Json::array({Endpoint("10.0.5.1", "half-a"), Endpoint("10.0.5.2", "half-b")}));
  Dialler d;
  d.ports = {{"10.0.5.1", a.port()}, {"10.0.5.2", b.port()}};
  InstanceOps ops(*client_, DirectOptions(d));
  auto logs = ops.Logs("half");
  ASSERT_FALSE(logs.ok());
  EXPECT_EQ(logs.error().code(), StatusCode::kAborted);
  EXPECT_EQ(logs.error().message(),
            R"(pod half-b: GET /flowforge/logs answered HTTP 503: {"error":"busy"})");
  EXPECT_EQ(a.seen().size(), 1u);
  EXPECT_EQ(b.seen().size(), 1u);
}

TEST_F(InstanceOpsTest, DirectTimeoutIsUnavailable) {
  FakeLauncher silent([](const net::HttpRequest&) { return Answer(200, "{}"); }, /*hang=*/true);
  CreateSlice("slow-1", "slow", Json::array({Endpoint("10.0.6.1", "slow-a")}));
  Dialler d;
  d.ports = {{"10.0.6.1", silent.port()}};
  InstanceOps ops(*client_, DirectOptions(d, milliseconds(200)));
  auto info = ops.Info("slow");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(info.error().message(), HasSubstr("pod slow-a "));
  EXPECT_THAT(info.error().message(), HasSubstr("timed out"));
  EXPECT_EQ(silent.seen().size(), 1u);
}

// ---------------------------------------------------------------------------------------------
// Bad input and list failures.

TEST_F(InstanceOpsTest, BadInputIsInvalidArgumentBeforeAnyRequest) {
  InstanceOps ops = Ops();
  for (const std::string& bad :
       std::vector<std::string>{"", "Bad_Name", "a,b=c", "-x", std::string(64, 'a')}) {
    auto info = ops.Info(bad);
    ASSERT_FALSE(info.ok()) << bad;
    EXPECT_EQ(info.error().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(info.error().message(), "service: \"" + bad + "\" is not a DNS-1123 label");
  }
  for (const Json& bad : {Json{{"token", "x"}}, Json{{"cmd", 1}}, Json{{"cmd", ""}},
                          Json::array({"start"}), Json("start")}) {
    auto r = ops.Command("anything", bad);
    ASSERT_FALSE(r.ok()) << bad.dump();
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument) << bad.dump();
    EXPECT_THAT(r.error().message(), HasSubstr("command.cmd"));
  }
  InstanceOptions no_ns;
  InstanceOps unscoped(*client_, no_ns);
  auto info = unscoped.Info("svc");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(info.error().message(), HasSubstr("namespace"));
}

TEST_F(InstanceOpsTest, ListFailureKeepsTheApiErrorCode) {
  kube::RestConfig config = kube::test_support::RestConfigFor(*cluster_);
  kube::Credentials wrong;
  wrong.bearer_token = "not-the-token";
  config.credentials = kube::MakeStaticCredentialProvider(wrong, "wrong token");
  auto transport = kube::Transport::Create(config);
  ASSERT_TRUE(transport.ok());
  InstanceOptions o;
  o.ns = kNs;
  InstanceOps ops(std::make_shared<kube::Client>(*transport), o);
  auto info = ops.Info("anything");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().code(), StatusCode::kUnauthenticated) << info.error().ToString();
  EXPECT_THAT(info.error().message(), HasSubstr("listing endpointslices of service anything"));
}

// Answers the first `failures` pod-proxy requests with the API server's own 503 Status (as a
// flaky API server would), counting every proxy request; everything else passes through.
class FlakyProxyTransport : public kube::Transport {
 public:
  FlakyProxyTransport(std::shared_ptr<kube::Transport> inner, int failures)
      : inner_(std::move(inner)), failures_(failures) {}
  int proxied() const {
    MutexLock lock(mu_);
    return proxied_;
  }
  StatusOr<kube::TransportResponse> Do(const kube::TransportRequest& request) override {
    if (auto r = Fail(request)) return *r;
    return inner_->Do(request);
  }
  StatusOr<kube::TransportResponse> Stream(
      const kube::TransportRequest& request,
      const std::function<bool(std::string_view)>& on_data) override {
    if (auto r = Fail(request)) return *r;
    return inner_->Stream(request, on_data);
  }
  kube::TransportStats stats() const override { return inner_->stats(); }
  const kube::RestConfig& config() const override { return inner_->config(); }

 private:
  std::optional<kube::TransportResponse> Fail(const kube::TransportRequest& request) {
    if (request.target.find("/proxy/") == std::string::npos) return std::nullopt;
    MutexLock lock(mu_);
    ++proxied_;
    if (failures_ == 0) return std::nullopt;
    --failures_;
    kube::TransportResponse r;
    r.status = 503;
    r.body = DumpJson(Json{{"kind", "Status"},
                           {"apiVersion", "v1"},
                           {"status", "Failure"},
                           {"message", "the server is currently unable to handle the request"},
                           {"reason", "ServiceUnavailable"},
                           {"code", 503}});
    return r;
  }
  std::shared_ptr<kube::Transport> inner_;
  mutable Mutex mu_;
  int failures_ GUARDED_BY(mu_);
  int proxied_ GUARDED_BY(mu_) = 0;
};

TEST_F(InstanceOpsTest, ProxyReadsOutlastTwoApiServerBlipsAndCommandsAreSentOnce) {
  std::string service = CreateProject("pflaky1", "flaky-one", 1);
  WaitReady(service, 1);
  auto ops_with = [&](int failures) {
    auto inner = kube::Transport::Create(kube::test_support::RestConfigFor(*cluster_));
    EXPECT_TRUE(inner.ok());
    auto flaky = std::make_shared<FlakyProxyTransport>(*inner, failures);
    InstanceOptions o;
    o.ns = kNs;
    o.timeout = milliseconds(5000);
    return std::make_pair(flaky, InstanceOps(std::make_shared<kube::Client>(flaky), o));
  };
  // A read is sent again after the API server's own 503, twice at most.
  auto [two, ops_two] = ops_with(2);
  auto info = ops_two.Info(service);
  ASSERT_TRUE(info.ok()) << info.error().ToString();
  EXPECT_EQ((*info)["state"], "running");
  EXPECT_EQ(two->proxied(), 3);
  auto [three, ops_three] = ops_with(3);
  auto failed = ops_three.Info(service);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code(), StatusCode::kUnavailable) << failed.error().ToString();
  EXPECT_EQ(three->proxied(), 3);
  // A command is never sent twice: the 503 is the answer.
  auto [one, ops_one] = ops_with(1);
  auto answers = ops_one.Command(service, Json{{"cmd", "stop"}});
  ASSERT_TRUE(answers.ok()) << answers.error().ToString();
  ASSERT_EQ(answers->size(), 1u);
  EXPECT_EQ((*answers)[0].status, 0);
  EXPECT_THAT((*answers)[0].error, HasSubstr("unable to handle"));
  EXPECT_EQ(one->proxied(), 1);
  // The launcher was not stopped by it.
  EXPECT_EQ((*Ops().Info(service))["state"], "running");
}

// ---------------------------------------------------------------------------------------------
// Files, resources, one-pod commands and the one-at-a-time restart.

TEST(FilePathProblemTest, RefusesTraversalAndOddPaths) {
  for (std::string ok :
       {"", "a", "a/b.txt", "dir/sub/file name.json", "...", "a..b", "%41", "%2525252541"}) {
    EXPECT_EQ(FilePathProblem(ok), "") << ok;
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"..", "'..'"},
      {"a/../b", "'..'"},
      {"./a", "'.'"},
      {"/etc/passwd", "relative"},
      {"a//b", "empty segments"},
      {"a/", "empty segments"},
      {"a\\..\\b", "backslash"},
      {std::string("a\0b", 3), "control"},
      {"a\nb", "control"},
      {"%2e%2e", "'..'"},
      {"a/%2E%2e/b", "'..'"},
      {"%252e%252e", "'..'"},
      {"%2e", "'.'"},
      {"a%2fb", "encoded"},
      {"a%5cb", "encoded"},
      {"a%00b", "encoded"},
      {"a%0Ab", "encoded control"},
      {"%25250a", "encoded control"},
      // ".." encoded nine times: refused for its depth, whatever the launcher decodes.
      {"%25252525252525252e%25252525252525252e", "more than 7 times"},
      {"x%2525252525252525", "more than 7 times"},
      {std::string(256, 'x'), "255"},
      {std::string(5000, 'x'), "4096"},
  };
  for (const auto& [path, why] : bad) {
    EXPECT_THAT(FilePathProblem(path), HasSubstr(why)) << path;
  }
}

TEST_F(InstanceOpsTest, DirectFilesEncodeThePathAndPassTheAnswerThrough) {
  FakeLauncher a([](const net::HttpRequest& r) {
    if (r.method == "GET") return Answer(200, R"({"meta":{},"files":[],"count":0})");
    return Answer(201, "", "text/plain");
  });
  CreateSlice("files-1", "files", Json::array({Endpoint("10.0.5.1", "files-a")}));
  Dialler d;
  d.ports = {{"10.0.5.1", a.port()}};
  InstanceOps ops(*client_, DirectOptions(d));

  FileRequest list;
  list.method = "GET";
  list.path = "my dir/a%b";
  auto listed = ops.Files("files", list, 1024);
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  EXPECT_EQ(listed->pod, "files-a");
  EXPECT_EQ(listed->status, 200);
  EXPECT_EQ(listed->body, R"({"meta":{},"files":[],"count":0})");

  FileRequest mkdir;
  mkdir.method = "POST";
  mkdir.path = "";
  mkdir.body = R"({"path":"new"})";
  mkdir.content_type = "application/json";
  auto made = ops.Files("files", mkdir, 1024);
  ASSERT_TRUE(made.ok()) << made.error().ToString();
  EXPECT_EQ(made->status, 201);

  auto seen = a.seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].method, "GET");
  // The server decodes the target once: what arrives is the path as given.
  EXPECT_EQ(seen[0].path, "/flowforge/files/_/my dir/a%b");
  EXPECT_EQ(seen[1].method, "POST");
  EXPECT_EQ(seen[1].path, "/flowforge/files/_/");
  EXPECT_EQ(seen[1].content_type, "application/json");
  EXPECT_EQ(seen[1].body, R"({"path":"new"})");
}

TEST_F(InstanceOpsTest, FilesRefuseBadPathsAndOversizedAnswersBeforeOrWhileReading) {
  const std::string big(64 * 1024, 'x');
  FakeLauncher a([&](const net::HttpRequest&) {
    return Answer(200, R"({"files":[],"pad":")" + big + R"("})");
  });
  CreateSlice("fbig-1", "fbig", Json::array({Endpoint("10.0.6.1", "fbig-a")}));
  Dialler d;
  d.ports = {{"10.0.6.1", a.port()}};
  InstanceOps ops(*client_, DirectOptions(d));

  for (std::string path : {"../etc", "a/%2e%2e/b", "/abs", "a\\b"}) {
    FileRequest r;
    r.method = "GET";
    r.path = path;
    auto answer = ops.Files("fbig", r, 1 << 20);
    ASSERT_FALSE(answer.ok()) << path;
    EXPECT_EQ(answer.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(answer.error().field(), "path");
  }
  EXPECT_TRUE(a.seen().empty());
  EXPECT_TRUE(d.Dialled().empty());

  FileRequest r;
  r.method = "GET";
  r.path = "dir";
  auto over = ops.Files("fbig", r, 4096);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code(), StatusCode::kOutOfRange);
  EXPECT_THAT(over.error().message(), HasSubstr("over 4096 bytes"));
  auto under = ops.Files("fbig", r, 1 << 20);
  ASSERT_TRUE(under.ok()) << under.error().ToString();
  EXPECT_GT(under->body.size(), big.size());
}

TEST_F(InstanceOpsTest, ProxyFilesAndResourcesReachTheLauncherStandIn) {
  std::string service = CreateProject("pfile01", "files-one", 1);
  WaitReady(service, 1);
  InstanceOps ops = Ops();
  FileRequest mkdir;
  mkdir.method = "POST";
  mkdir.path = "";
  mkdir.body = R"({"path":"docs/sub"})";
  mkdir.content_type = "application/json";
  auto made = ops.Files(service, mkdir, 1 << 20);
  ASSERT_TRUE(made.ok()) << made.error().ToString();
  EXPECT_EQ(made->status, 201);
  FileRequest list;
  list.method = "GET";
  list.path = "docs";
  auto listed = ops.Files(service, list, 1 << 20);
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  ASSERT_EQ(listed->status, 200) << listed->body;
  Json body = *ParseJson(listed->body);
  ASSERT_EQ(body["files"].size(), 1u) << listed->body;
  EXPECT_EQ(body["files"][0]["name"], "sub");
  EXPECT_EQ(body["files"][0]["type"], "directory");
  list.path = "missing";
  auto missing = ops.Files(service, list, 1 << 20);
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);

  auto resources = ops.Resources(service);
  ASSERT_TRUE(resources.ok()) << resources.error().ToString();
  EXPECT_EQ((*resources)["pods"], Json::array({*ProjectPods("pfile01").begin()}));
  EXPECT_EQ((*resources)["count"], (*resources)["resources"].size());
}

// Regression (hardening round 2, item 11): the embedded API server held pods/proxy bodies to its
// 3 MiB object limit, so uploads between 3 MiB and maxFileBytes failed, and its 413 came back as
// the caller's InvalidArgument (400). An upload of 10 MiB now reaches the pod; a body over the
// proxy's own limit is refused by the API server, which is a bad gateway (502, OutOfRange)
// naming that limit, not the caller's fault.
TEST_F(InstanceOpsTest, ProxyUploadsPassTheObjectLimitAndAnApiServerRefusalIsNotTheCallers) {
  std::string service = CreateProject("pfile02", "files-big", 1);
  WaitReady(service, 1);
  InstanceOps ops = Ops();
  auto multipart = [](const std::string& content) {
    return "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n"
           "Content-Type: application/octet-stream\r\n\r\n" +
           content + "\r\n--XyZ--\r\n";
  };
  const std::string content(10 * 1024 * 1024, 'b');
  FileRequest upload{"POST", "big.bin", multipart(content), "multipart/form-data; boundary=XyZ"};
  auto uploaded = ops.Files(service, upload, 1 << 20);
  ASSERT_TRUE(uploaded.ok()) << uploaded.error().ToString();
  EXPECT_EQ(uploaded->status, 201) << uploaded->body;
  FileRequest list{"GET", "", "", ""};
  auto listed = ops.Files(service, list, 1 << 20);
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  EXPECT_THAT(listed->body, HasSubstr(R"("name":"big.bin")"));
  EXPECT_THAT(listed->body, HasSubstr(R"("size":10485760)"));

  FileRequest over{"POST", "over.bin", multipart(std::string(64 * 1024 * 1024, 'o')),
                   "multipart/form-data; boundary=XyZ"};
  auto refused = ops.Files(service, over, 1 << 20);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), StatusCode::kOutOfRange) << refused.error().ToString();
  EXPECT_THAT(refused.error().message(), HasSubstr("limit is 67108864"));
  EXPECT_THAT(refused.error().message(), HasSubstr("did not pass POST"));
}

TEST_F(InstanceOpsTest, DirectResourcesMergeEveryPodByTs) {
  FakeLauncher a([](const net::HttpRequest&) {
    return Answer(
        200, R"({"meta":{"m":"a"},"resources":[{"ts":1,"cpu":1},{"ts":4,"cpu":4}],"count":2})");
  });
  FakeLauncher b([](const net::HttpRequest&) { return Answer(200, R"([{"ts":2},{"ts":3}])"); });
  FakeLauncher c([](const net::HttpRequest&) {
    return Answer(200, R"({"meta":{},"resources":[{"ts":0.5}],"count":1})");
  });
  CreateSlice("res-1", "res",
              Json::array({Endpoint("10.0.7.1", "res-a"), Endpoint("10.0.7.2", "res-b"),
                           Endpoint("10.0.7.3", "res-c")}));
  Dialler d;
  d.ports = {{"10.0.7.1", a.port()}, {"10.0.7.2", b.port()}, {"10.0.7.3", c.port()}};
  InstanceOps ops(*client_, DirectOptions(d));
  auto merged = ops.Resources("res");
  ASSERT_TRUE(merged.ok()) << merged.error().ToString();
  std::vector<std::string> order;
  for (const Json& s : (*merged)["resources"]) {
    order.push_back(GetString(s, "pod") + "@" + DumpJson(s["ts"]));
  }
  // Three replicas, all merged (the driver merges only the first two).
  EXPECT_EQ(order,
            (std::vector<std::string>{"res-c@0.5", "res-a@1", "res-b@2", "res-b@3", "res-a@4"}));
  EXPECT_EQ((*merged)["count"], 5);
  EXPECT_EQ((*merged)["meta"], Json({{"m", "a"}}));
  EXPECT_EQ((*merged)["pods"], Json::array({"res-a", "res-b", "res-c"}));
  for (FakeLauncher* f : {&a, &b, &c}) EXPECT_EQ(f->seen().at(0).path, "/flowforge/resources");
}

TEST_F(InstanceOpsTest, DirectCommandOneAsksTheFirstReachablePodOnly) {
  FakeLauncher b([](const net::HttpRequest&) { return Answer(200, R"([{"spec":"x"}])"); });
  CreateSlice("one-1", "one",
              Json::array({Endpoint("10.0.8.1", "one-a"), Endpoint("10.0.8.2", "one-b"),
                           Endpoint("10.0.8.3", "one-c")}));
  Dialler d;
  FakeLauncher c([](const net::HttpRequest&) { return Answer(200, "{}"); });
  d.ports = {{"10.0.8.1", ClosedPort()}, {"10.0.8.2", b.port()}, {"10.0.8.3", c.port()}};
  InstanceOps ops(*client_, DirectOptions(d));
  Json cmd = {{"cmd", "mcp:get-features"}, {"data", {{"endpoints", {"/mcp"}}}}};
  auto answer = ops.CommandOne("one", cmd);
  ASSERT_TRUE(answer.ok()) << answer.error().ToString();
  EXPECT_EQ(answer->pod, "one-b");  // one-a refused the connection
  EXPECT_EQ(answer->body, Json::array({{{"spec", "x"}}}));
  ASSERT_EQ(b.seen().size(), 1u);
  EXPECT_EQ(*ParseJson(b.seen()[0].body), cmd);
  EXPECT_TRUE(c.seen().empty());
  auto bad = ops.CommandOne("one", Json{{"data", 1}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), StatusCode::kInvalidArgument);
}

// Two launchers that write every request to one shared, ordered record; after a restart each
// says "starting" to the next `starting_answers` info requests, then "running".
struct RestartRecord {
  Mutex mu;
  std::vector<std::string> events GUARDED_BY(mu);
  std::vector<std::string> Events() {
    MutexLock lock(mu);
    return events;
  }
};

class RestartingLauncher {
 public:
  RestartingLauncher(RestartRecord& record, std::string name, int starting_answers,
                     int restart_status = 200)
      : fake_([this, &record, name, starting_answers, restart_status](const net::HttpRequest& r) {
          MutexLock lock(record.mu);
          if (r.path == "/flowforge/command") {
            record.events.push_back(name + ":restart");
            left_ = starting_answers;
            return restart_status == 200 ? Answer(200, "{}")
                                         : Answer(restart_status, R"({"error":"boom"})");
          }
          std::string state = left_ > 0 ? "starting" : "running";
          if (left_ > 0) --left_;
          record.events.push_back(name + ":" + state);
          return Answer(200, R"({"state":")" + state + R"("})");
        }) {}
  uint16_t port() const { return fake_.port(); }
  size_t requests() const { return fake_.seen().size(); }

 private:
  int left_ = 0;  // guarded by the record's mutex
  FakeLauncher fake_;
};

TEST_F(InstanceOpsTest, DirectRestartEachWaitsForEveryPodBeforeTheNext) {
  RestartRecord record;
  RestartingLauncher a(record, "a", 2), b(record, "b", 1);
  CreateSlice("seq-1", "seq",
              Json::array({Endpoint("10.0.9.2", "seq-b"), Endpoint("10.0.9.1", "seq-a")}));
  Dialler d;
  d.ports = {{"10.0.9.1", a.port()}, {"10.0.9.2", b.port()}};
  InstanceOptions o = DirectOptions(d);
  o.restart_poll = milliseconds(5);
  InstanceOps ops(*client_, o);
  auto steps = ops.RestartEach("seq", milliseconds(5000));
  ASSERT_TRUE(steps.ok()) << steps.error().ToString();
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ((*steps)[0].pod, "seq-a");
  EXPECT_EQ((*steps)[0].outcome, "restarted");
  EXPECT_EQ((*steps)[0].status, 200);
  EXPECT_EQ((*steps)[1].pod, "seq-b");
  EXPECT_EQ((*steps)[1].outcome, "restarted");
  EXPECT_EQ(record.Events(),
            (std::vector<std::string>{"a:restart", "a:starting", "a:starting", "a:running",
                                      "b:restart", "b:starting", "b:running"}));
}

TEST_F(InstanceOpsTest, DirectRestartEachStopsAtTheFirstFailure) {
  RestartRecord record;
  RestartingLauncher a(record, "a", 0, 500), b(record, "b", 0);
  CreateSlice("seqf-1", "seqf",
              Json::array({Endpoint("10.0.10.1", "seqf-a"), Endpoint("10.0.10.2", "seqf-b")}));
  Dialler d;
  d.ports = {{"10.0.10.1", a.port()}, {"10.0.10.2", b.port()}};
  InstanceOps ops(*client_, DirectOptions(d));
  auto steps = ops.RestartEach("seqf", milliseconds(5000));
  ASSERT_TRUE(steps.ok()) << steps.error().ToString();
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ((*steps)[0].outcome, "failed");
  EXPECT_EQ((*steps)[0].status, 500);
  EXPECT_THAT((*steps)[0].error, HasSubstr("HTTP 500: boom"));
  EXPECT_EQ((*steps)[1].outcome, "skipped");
  EXPECT_EQ(b.requests(), 0u);

  // A pod that never says running again fails at its deadline; the next is not touched.
  RestartRecord record2;
  RestartingLauncher slow(record2, "s", 1 << 30), next(record2, "n", 0);
  CreateSlice("seqt-1", "seqt",
              Json::array({Endpoint("10.0.11.1", "seqt-a"), Endpoint("10.0.11.2", "seqt-b")}));
  Dialler d2;
  d2.ports = {{"10.0.11.1", slow.port()}, {"10.0.11.2", next.port()}};
  InstanceOptions o = DirectOptions(d2);
  o.restart_poll = milliseconds(20);
  InstanceOps ops2(*client_, o);
  auto timed = ops2.RestartEach("seqt", milliseconds(300));
  ASSERT_TRUE(timed.ok());
  EXPECT_EQ((*timed)[0].outcome, "failed");
  EXPECT_THAT((*timed)[0].error, HasSubstr("not running again in time"));
  EXPECT_THAT((*timed)[0].error, HasSubstr("state is \"starting\""));
  EXPECT_GE((*timed)[0].elapsed_ms, 300);
  EXPECT_EQ((*timed)[1].outcome, "skipped");
  EXPECT_EQ(next.requests(), 0u);
}

// Checked against the real launcher (docs/flowfuse.md): 2.29.1's log entries carry ts as a
// string, epoch milliseconds and a 4-digit counter; a merge must order them by that value.
TEST_F(InstanceOpsTest, DirectLogsOrderTheRealLaunchersStringTimestamps) {
  FakeLauncher a([](const net::HttpRequest&) {
    return Answer(
        200, R"([{"ts":"17000000000030000","msg":"a3"},{"ts":"17000000000030002","msg":"a3b"}])");
  });
  FakeLauncher b([](const net::HttpRequest&) {
    return Answer(200,
                  R"([{"ts":"17000000000010000","msg":"b1"},)"
                  R"({"ts":"17000000000030001","msg":"b3a"},{"ts":1700000000002,"msg":"b2"}])");
  });
  CreateSlice("strts-1", "strts",
              Json::array({Endpoint("10.0.30.1", "strts-a"), Endpoint("10.0.30.2", "strts-b")}));
  Dialler d;
  d.ports = {{"10.0.30.1", a.port()}, {"10.0.30.2", b.port()}};
  InstanceOps ops(*client_, DirectOptions(d));
  auto logs = ops.Logs("strts");
  ASSERT_TRUE(logs.ok()) << logs.error().ToString();
  std::vector<std::string> order;
  for (const Json& e : *logs) order.push_back(GetString(e, "msg"));
  EXPECT_EQ(order, (std::vector<std::string>{"b1", "b2", "a3", "b3a", "a3b"}));
  // The entries are passed on as the launcher wrote them (its ts is a cursor for the platform).
  EXPECT_EQ((*logs)[0]["ts"], "17000000000010000");
}

// The real launcher's files routes (2.29.1) die (unhandled rejection) on these: each is refused
// before anything is sent.
TEST_F(InstanceOpsTest, DirectFilesRefuseWhatKillsTheRealLauncher) {
  FakeLauncher a([](const net::HttpRequest& r) {
    if (r.method == "GET") {
      return Answer(200, R"({"meta":{},"files":[{"name":"d","type":"directory"},)"
                         R"({"name":"f.txt","type":"file","size":1}],"count":2})");
    }
    return Answer(201, "", "text/plain");
  });
  CreateSlice("fkill-1", "fkill", Json::array({Endpoint("10.0.31.1", "fkill-a")}));
  Dialler d;
  d.ports = {{"10.0.31.1", a.port()}};
  InstanceOps ops(*client_, DirectOptions(d));
  const std::string multipart = "multipart/form-data; boundary=XyZ";
  auto part = [](const std::string& name) {
    return "--XyZ\r\nContent-Disposition: form-data; name=\"" + name +
           "\"; filename=\"f\"\r\n\r\nhello\r\n--XyZ--\r\n";
  };
  struct Case {
    std::string method, path, body, content_type, field;
  };
  const std::vector<Case> refused = {
      {"PUT", "a", "x", "text/plain", "body"},                    // the text parser's string
      {"PUT", "a", "{}", "application/json", "body"},             // no "path"
      {"PUT", "a", R"({"path":5})", "application/json", "body"},  // not a string
      {"POST", "a", R"({"path":"b"})", "", "content_type"},       // no type at all
      {"POST", "a", "{}", "application/json", "body"},            // mkdir without "path"
      {"POST", "a", part("other"), multipart, "body"},            // no part named "file"
      {"POST", "", part("file"), multipart, "path"},              // onto the storage root
      {"POST", "d", part("file"), multipart, "path"},             // onto a directory
  };
  for (const Case& c : refused) {
    FileRequest r{c.method, c.path, c.body, c.content_type};
    auto answer = ops.Files("fkill", r, 1 << 20);
    ASSERT_FALSE(answer.ok()) << c.method << " " << c.path << " " << c.body;
    EXPECT_EQ(answer.error().code(), StatusCode::kInvalidArgument) << c.body;
    EXPECT_EQ(answer.error().field(), c.field) << c.method << " " << c.path << " " << c.body;
  }
  // Only the upload onto "d" asked anything: the listing of its parent.
  auto seen = a.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].path, "/flowforge/files/_/");

  // An upload onto a file goes to the pod that listed, after the listing.
  FileRequest upload{"POST", "f.txt", part("file"), multipart};
  auto uploaded = ops.Files("fkill", upload, 1 << 20);
  ASSERT_TRUE(uploaded.ok()) << uploaded.error().ToString();
  EXPECT_EQ(uploaded->status, 201);
  // A JSON body with a charset goes out as exactly application/json (else the launcher: 406).
  FileRequest mkdir{"POST", "", R"({"path":"n"})", "application/json; charset=utf-8"};
  auto made = ops.Files("fkill", mkdir, 1 << 20);
  ASSERT_TRUE(made.ok()) << made.error().ToString();
  seen = a.seen();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[1].method, "GET");
  EXPECT_EQ(seen[2].method, "POST");
  EXPECT_EQ(seen[2].path, "/flowforge/files/_/f.txt");
  EXPECT_EQ(seen[2].content_type, multipart);
  EXPECT_EQ(seen[3].content_type, "application/json");
}

// A launcher that holds its answer to "restart" until Release() (the real one answers after a
// 2 s pause and a fresh start) and answers everything else at once.
class GatedLauncher : public net::Handler {
 public:
  GatedLauncher() {
    auto s = net::HttpServer::Start({}, *this);
    EXPECT_TRUE(s.ok()) << s.error().ToString();
    if (s.ok()) server_ = std::move(*s);
  }
  ~GatedLauncher() override {
    Release();
    if (server_) server_->Stop();
  }
  void Handle(net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) override {
    auto body = ParseJson(request.body);
    const std::string cmd = body.ok() && body->is_object() ? GetString(*body, "cmd") : "";
    MutexLock lock(mu_);
    commands_.push_back(request.path == "/flowforge/command" ? cmd : request.path);
    if (cmd == "restart") {
      held_.push_back(std::move(writer));
      return;
    }
    writer->Send(request.path == "/flowforge/info" ? Answer(200, R"({"state":"running"})")
                                                   : Answer(200, "{}"));
  }
  void Release() {
    std::vector<std::shared_ptr<net::ResponseWriter>> held;
    {
      MutexLock lock(mu_);
      held.swap(held_);
    }
    for (auto& w : held) w->Send(Answer(200, "{}"));
  }
  std::vector<std::string> commands() const {
    MutexLock lock(mu_);
    return commands_;
  }
  uint16_t port() const { return server_->port(); }

 private:
  mutable Mutex mu_;
  std::vector<std::string> commands_ GUARDED_BY(mu_);
  std::vector<std::shared_ptr<net::ResponseWriter>> held_ GUARDED_BY(mu_);
  std::unique_ptr<net::HttpServer> server_;
};

// Checked against the real launcher: a start or restart sent while a restart is unanswered
// starts a second Node-RED on the same port (it crashes; the launcher ends in safe mode or
// stopped). Steward sends a pod's start/stop/restart one at a time.
TEST_F(InstanceOpsTest, DirectLifecycleCommandsToOnePodWaitForTheOneInFlight) {
  GatedLauncher gated;
  CreateSlice("gate-1", "gate", Json::array({Endpoint("10.0.32.1", "gate-a")}));
  Dialler d;
  d.ports = {{"10.0.32.1", gated.port()}};
  InstanceOptions o = DirectOptions(d, milliseconds(300));
  o.restart_poll = milliseconds(5);
  InstanceOps ops(*client_, o);
  StatusOr<std::vector<RestartStep>> steps = InvalidArgument("not run");
  std::thread restarting([&] { steps = ops.RestartEach("gate", milliseconds(20000)); });
  ASSERT_TRUE(test_support::Eventually([&] { return gated.commands().size() == 1; },
                                       std::chrono::seconds(10)));
  // A start meanwhile is not sent: it waits its timeout for the slot, then the pod counts as
  // unreachable. A logout is not held.
  auto start = ops.Command("gate", {{"cmd", "start"}});
  ASSERT_TRUE(start.ok()) << start.error().ToString();
  ASSERT_EQ(start->size(), 1u);
  EXPECT_EQ((*start)[0].status, 0);
  EXPECT_THAT((*start)[0].error, HasSubstr("still unanswered"));
  auto logout = ops.Command("gate", {{"cmd", "logout"}, {"token", "t"}});
  ASSERT_TRUE(logout.ok());
  EXPECT_EQ((*logout)[0].status, 200);
  EXPECT_EQ(gated.commands(), (std::vector<std::string>{"restart", "logout"}));
  gated.Release();
  restarting.join();
  ASSERT_TRUE(steps.ok()) << steps.error().ToString();
  EXPECT_EQ((*steps)[0].outcome, "restarted") << (*steps)[0].error;
  // Once the restart is answered the slot is free again.
  auto stop = ops.Command("gate", {{"cmd", "stop"}});
  ASSERT_TRUE(stop.ok());
  EXPECT_EQ((*stop)[0].status, 200) << (*stop)[0].error;
  auto commands = gated.commands();
  ASSERT_GE(commands.size(), 4u);
  EXPECT_EQ(commands.back(), "stop");
}

// Two replicas (two InstanceOps, each with its own in-process slots) on one store: a start from
// the second waits for the first's restart to be answered, as one process's would.
TEST_F(InstanceOpsTest, LifecycleCommandsFromTwoReplicasToOnePodWaitForTheOneInFlight) {
  auto store = store::OpenSqliteStore({.path = ":memory:"});
  ASSERT_TRUE(store.ok()) << store.error().ToString();
  std::shared_ptr<store::Store> shared = std::move(*store);
  GatedLauncher gated;
  CreateSlice("gate2-1", "gate2", Json::array({Endpoint("10.0.33.1", "gate-b")}));
  Dialler d;
  d.ports = {{"10.0.33.1", gated.port()}};
  auto replica = [&](const std::string& holder) {
    InstanceOptions o = DirectOptions(d, milliseconds(300));
    o.restart_poll = milliseconds(5);
    o.shared_slots = InstanceOptions::SharedSlots{
        [shared, holder](const std::string& key, milliseconds ttl) {
          return shared->TakeSlot(key, holder, ttl);
        },
        [shared, holder](const std::string& key) { (void)shared->ReleaseSlot(key, holder); }};
    return InstanceOps(*client_, o);
  };
  InstanceOps a = replica("replica-a");
  InstanceOps b = replica("replica-b");
  StatusOr<std::vector<RestartStep>> steps = InvalidArgument("not run");
  std::thread restarting([&] { steps = a.RestartEach("gate2", milliseconds(20000)); });
  ASSERT_TRUE(test_support::Eventually([&] { return gated.commands().size() == 1; },
                                       std::chrono::seconds(10)));
  auto start = b.Command("gate2", {{"cmd", "start"}});
  ASSERT_TRUE(start.ok()) << start.error().ToString();
  ASSERT_EQ(start->size(), 1u);
  EXPECT_EQ((*start)[0].status, 0);
  EXPECT_THAT((*start)[0].error, HasSubstr("still unanswered after 300 ms"));
  EXPECT_EQ(gated.commands(), (std::vector<std::string>{"restart"}));
  gated.Release();
  restarting.join();
  ASSERT_TRUE(steps.ok()) << steps.error().ToString();
  EXPECT_EQ((*steps)[0].outcome, "restarted") << (*steps)[0].error;
  // Released by the first replica: the second's command goes through.
  auto stop = b.Command("gate2", {{"cmd", "stop"}});
  ASSERT_TRUE(stop.ok());
  EXPECT_EQ((*stop)[0].status, 200) << (*stop)[0].error;
  EXPECT_EQ(gated.commands().back(), "stop");
  // A store that cannot be asked fails the command before anything is sent.
  InstanceOptions broken = DirectOptions(d, milliseconds(300));
  broken.shared_slots =
      InstanceOptions::SharedSlots{[](const std::string&, milliseconds) -> StatusOr<bool> {
                                     return Unavailable("database down");
                                   },
                                   [](const std::string&) {}};
  const size_t sent = gated.commands().size();
  auto refused = InstanceOps(*client_, broken).Command("gate2", {{"cmd", "restart"}});
  ASSERT_TRUE(refused.ok());
  EXPECT_THAT((*refused)[0].error, HasSubstr("could not be taken: database down"));
  EXPECT_EQ(gated.commands().size(), sent);
}

TEST_F(InstanceOpsTest, ProxyRestartEachRestartsEveryReplicaOfAnHaProject) {
  std::string service = CreateProject("pseq01", "seq-two", 2);
  WaitReady(service, 2);
  InstanceOptions o;
  o.ns = kNs;
  o.access = Access::kProxy;
  o.restart_poll = milliseconds(10);
  InstanceOps ops(*client_, o);
  auto steps = ops.RestartEach(service, milliseconds(10000));
  ASSERT_TRUE(steps.ok()) << steps.error().ToString();
  ASSERT_EQ(steps->size(), 2u);
  for (const RestartStep& s : *steps) {
    EXPECT_EQ(s.outcome, "restarted") << s.pod << ": " << s.error;
    // The stand-in stays "starting" for a while after a restart: each step waited for it.
    EXPECT_GE(s.elapsed_ms, 250) << s.pod;
  }
  EXPECT_EQ((*ops.Info(service))["state"], "running");
}

// ---------------------------------------------------------------------------------------------
// MQTT schema agents: status and commands on the agent's port.

TEST_F(InstanceOpsTest, ProxyAgentStatusAndCommandsDriveTheAgentStandIn) {
  std::string service = CreateAgent("t1", "b1");
  WaitReady(service, 1);
  std::set<std::string> pods = AgentPods(service);
  ASSERT_EQ(pods.size(), 1u);
  InstanceOps ops = Ops();

  auto status = ops.AgentStatus(service);
  ASSERT_TRUE(status.ok()) << status.error().ToString();
  EXPECT_EQ(*status, Json({{"connected", true}, {"error", nullptr}}));

  auto stopped = ops.AgentCommand(service, "stop");
  ASSERT_TRUE(stopped.ok()) << stopped.error().ToString();
  EXPECT_EQ(stopped->pod, *pods.begin());
  EXPECT_EQ(stopped->status, 200);
  EXPECT_EQ(stopped->body, Json::object());
  EXPECT_EQ(stopped->error, "");
  EXPECT_EQ((*ops.AgentStatus(service))["connected"], false);

  auto started = ops.AgentCommand(service, "start");
  ASSERT_TRUE(started.ok()) << started.error().ToString();
  EXPECT_EQ(started->status, 200);
  EXPECT_EQ((*ops.AgentStatus(service))["connected"], true);

  // A restart is the agent's start: it reconnects, from stopped too.
  ASSERT_TRUE(ops.AgentCommand(service, "stop").ok());
  auto restarted = ops.AgentCommand(service, "restart");
  ASSERT_TRUE(restarted.ok()) << restarted.error().ToString();
  EXPECT_EQ(restarted->status, 200);
  EXPECT_EQ((*ops.AgentStatus(service))["connected"], true);

  // The port is the agent's: the same call on the launcher's port reaches no agent (the pod's
  // undeclared 2880 is the launcher stand-in, which has no such route).
  InstanceOptions o;
  o.ns = kNs;
  o.agent_port = 2880;
  auto wrong_port = InstanceOps(*client_, o).AgentStatus(service);
  ASSERT_FALSE(wrong_port.ok());
  EXPECT_EQ(wrong_port.error().code(), StatusCode::kAborted);
  EXPECT_THAT(wrong_port.error().message(),
              HasSubstr("pod " + *pods.begin() + ": GET /api/v1/status answered HTTP 404"));
}

TEST_F(InstanceOpsTest, AgentUnknownCommandIsInvalidArgumentBeforeAnyRequest) {
  FakeLauncher agent([](const net::HttpRequest&) { return Answer(200, "{}"); });
  CreateSlice("agent-bad-1", "agent-bad", Json::array({Endpoint("10.0.21.1", "agent-bad-a")}));
  Dialler d;
  d.ports = {{"10.0.21.1", agent.port()}};
  InstanceOps ops(*client_, DirectOptions(d));
  for (std::string_view bad : {"", "START", "pause", "logout", "start "}) {
    auto r = ops.AgentCommand("agent-bad", bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(r.error().field(), "command") << bad;
    EXPECT_THAT(r.error().message(), HasSubstr("is not one of start, restart, stop")) << bad;
  }
  EXPECT_TRUE(agent.seen().empty());
  EXPECT_TRUE(d.Dialled().empty());
  auto bad_service = ops.AgentCommand("Bad_Name", "start");
  ASSERT_FALSE(bad_service.ok());
  EXPECT_EQ(bad_service.error().code(), StatusCode::kInvalidArgument);
}

TEST_F(InstanceOpsTest, AgentWithNoReadyPodIsFailedPrecondition) {
  // The agent's Service without its Deployment: no endpoints.
  std::string lonely = CreateAgent("t2", "b2", /*with_deployment=*/false);
  auto status = Ops().AgentStatus(lonely);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.error().message(), HasSubstr("no ready pod for service " + lonely));
  auto command = Ops().AgentCommand(lonely, "start");
  ASSERT_FALSE(command.ok());
  EXPECT_EQ(command.error().code(), StatusCode::kFailedPrecondition);
  // Not ready endpoints do not count either.
  CreateSlice("agent-unready-1", "agent-unready",
              Json::array({Endpoint("10.0.22.1", "agent-unready-a", false)}));
  auto unready = Ops(Access::kDirect).AgentStatus("agent-unready");
  ASSERT_FALSE(unready.ok());
  EXPECT_EQ(unready.error().code(), StatusCode::kFailedPrecondition);
}

TEST_F(InstanceOpsTest, DirectAgentCallsUseTheAgentPortAndItsRoutes) {
  FakeLauncher agent([](const net::HttpRequest& r) {
    if (r.method == "GET" && r.path == "/api/v1/status") {
      return Answer(200, R"({"connected":false,"error":"NOTAUTHORIZED"})");
    }
    return Answer(200, "{}");
  });
  // The first pod by name refuses connections: the next one answers.
  CreateSlice("agent-direct-1", "agent-direct",
              Json::array({Endpoint("10.0.20.2", "agent-direct-b"),
                           Endpoint("10.0.20.1", "agent-direct-a")}));
  Dialler d;
  d.ports = {{"10.0.20.1", ClosedPort()}, {"10.0.20.2", agent.port()}};
  InstanceOps ops(*client_, DirectOptions(d));

  auto status = ops.AgentStatus("agent-direct");
  ASSERT_TRUE(status.ok()) << status.error().ToString();
  EXPECT_EQ(*status, Json({{"connected", false}, {"error", "NOTAUTHORIZED"}}));
  for (std::string_view command : {"start", "restart", "stop"}) {
    auto answer = ops.AgentCommand("agent-direct", command);
    ASSERT_TRUE(answer.ok()) << command << ": " << answer.error().ToString();
    EXPECT_EQ(answer->pod, "agent-direct-b") << command;
    EXPECT_EQ(answer->status, 200) << command;
    EXPECT_EQ(answer->body, Json::object()) << command;
  }
  std::vector<FakeLauncher::Seen> seen = agent.seen();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].method + " " + seen[0].path, "GET /api/v1/status");
  EXPECT_EQ(seen[1].method + " " + seen[1].path, "POST /api/v1/commands/start");
  EXPECT_EQ(seen[2].method + " " + seen[2].path, "POST /api/v1/commands/start");
  EXPECT_EQ(seen[3].method + " " + seen[3].path, "POST /api/v1/commands/stop");
  for (const auto& s : seen) {
    EXPECT_EQ(s.body, "") << s.path;
    EXPECT_EQ(s.content_type, "") << s.path;
  }
  // Every call asked for the agent's port (each tried a then b), the launcher's calls still the
  // launcher's.
  EXPECT_EQ(d.PodPorts(), std::vector<uint16_t>(8, 3500));
  ASSERT_TRUE(ops.Info("agent-direct").ok());
  EXPECT_EQ(d.PodPorts().back(), 2880);

  Dialler d2;
  d2.ports = {{"10.0.20.1", agent.port()}};
  InstanceOptions o = DirectOptions(d2);
  o.agent_port = 3600;
  ASSERT_TRUE(InstanceOps(*client_, o).AgentCommand("agent-direct", "stop").ok());
  EXPECT_EQ(d2.PodPorts(), std::vector<uint16_t>{3600});
}

TEST_F(InstanceOpsTest, DirectAgentErrorsAreAsInfoAndAnswersForCommands) {
  FakeLauncher failing([](const net::HttpRequest& r) {
    if (r.path == "/api/v1/status") return Answer(500, "boom", "text/plain");
    return Answer(400, R"({"error":"","message":""})");
  });
  FakeLauncher html([](const net::HttpRequest&) {
    return Answer(200, "<!DOCTYPE html>", "text/html; charset=utf-8");
  });
  FakeLauncher array([](const net::HttpRequest&) { return Answer(200, "[]"); });
  CreateSlice("agent-err-1", "agent-err", Json::array({Endpoint("10.0.23.1", "agent-err-a")}));
  CreateSlice("agent-html-1", "agent-html", Json::array({Endpoint("10.0.23.2", "agent-html-a")}));
  CreateSlice("agent-arr-1", "agent-arr", Json::array({Endpoint("10.0.23.3", "agent-arr-a")}));
  CreateSlice("agent-down-1", "agent-down", Json::array({Endpoint("10.0.23.4", "agent-down-a")}));
  Dialler d;
  d.ports = {{"10.0.23.1", failing.port()},
             {"10.0.23.2", html.port()},
             {"10.0.23.3", array.port()},
             {"10.0.23.4", ClosedPort()}};
  InstanceOps ops(*client_, DirectOptions(d));

  auto failed = ops.AgentStatus("agent-err");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code(), StatusCode::kAborted);
  EXPECT_EQ(failed.error().message(),
            "pod agent-err-a: GET /api/v1/status answered HTTP 500: boom");
  for (const char* service : {"agent-html", "agent-arr"}) {
    auto shaped = ops.AgentStatus(service);
    ASSERT_FALSE(shaped.ok()) << service;
    EXPECT_EQ(shaped.error().code(), StatusCode::kAborted) << service;
    EXPECT_THAT(shaped.error().message(),
                HasSubstr(": GET /api/v1/status answered HTTP 200 with a body that is not a JSON "
                          "object: "))
        << service;
  }
  // The agent's refusal of a command is its answer.
  auto refused = ops.AgentCommand("agent-err", "start");
  ASSERT_TRUE(refused.ok()) << refused.error().ToString();
  EXPECT_EQ(refused->pod, "agent-err-a");
  EXPECT_EQ(refused->status, 400);
  EXPECT_EQ(refused->body, Json({{"error", ""}, {"message", ""}}));
  EXPECT_EQ(refused->error, "");

  auto down = ops.AgentStatus("agent-down");
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(down.error().message(), HasSubstr("pod agent-down-a (127.0.0.1:"));
  auto unsent = ops.AgentCommand("agent-down", "stop");
  ASSERT_FALSE(unsent.ok());
  EXPECT_EQ(unsent.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(unsent.error().message(), HasSubstr("pod agent-down-a "));
}

}  // namespace
}  // namespace steward::instance
