// Test fixture for the engine's lifecycle scenarios: an embedded cluster (in process), a SQLite
// store in a temp dir, and an Engine wired to both, plus an oracle that reads the cluster
// in process (no injected faults) to check what Steward says against what the cluster shows.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cluster/apiserver/object_api.h"
#include "cluster/embedded_cluster.h"
#include "cluster/model/resource_types.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/mutex.h"
#include "engine/manifests/manifests.h"
#include "engine/readiness/readiness.h"
#include "engine/reconciler/engine.h"
#include "kube/test_support/embedded.h"
#include "net/http_client.h"
#include "store/store.h"
#include "test_support/eventually.h"

namespace steward::engine::testing {

using std::chrono::milliseconds;
using std::chrono::seconds;

inline const cluster::ResourceType& Kind(std::string_view group_resource) {
  return *cluster::FindGroupResource(group_resource);
}

inline std::string Annotation(const Json& obj, std::string_view key) {
  const Json* a = FindPath(obj, "metadata.annotations");
  if (a == nullptr || !a->contains(std::string(key))) return "";
  return (*a)[std::string(key)].get<std::string>();
}

// A profile delay: `fixed` ms plus up to `jitter` ms.
inline cluster::DelaySpec Delay(int fixed, int jitter) {
  return cluster::DelaySpec{milliseconds(fixed), milliseconds(jitter)};
}

// A quick profile: the realistic one's shape, about ten times faster.
inline cluster::Profile QuickProfile() {
  cluster::Profile p = *cluster::BuiltinProfile("instant");
  p.name = "quick";
  auto d = Delay;
  p.controller = d(5, 15);
  p.pod_scheduling = d(10, 30);
  p.pod_start = d(20, 40);
  p.pod_ready = d(50, 100);
  p.pod_termination = d(100, 100);
  p.endpoints = d(10, 20);
  p.load_balancer = d(50, 100);
  p.service_finalizer = d(50, 150);
  p.ingress_finalizer = d(50, 150);
  p.pvc_finalizer = d(20, 30);
  p.pvc_binding = d(50, 50);
  p.garbage_collection = d(20, 30);
  p.progress_deadline_scale = 0.005;  // 600 s → 3 s
  return p;
}

// QuickProfile with the hostile profile's kinds of faults (rates a little lower, so that a
// five-project scenario still ends in seconds), and delays a few times longer than quick so that
// the scenario spans several history compactions.
inline cluster::Profile QuickHostileProfile() {
  cluster::Profile p = QuickProfile();
  p.name = "quick-hostile";
  auto d = Delay;
  p.controller = d(20, 60);
  p.pod_ready = d(200, 300);
  p.pod_termination = d(300, 300);
  p.load_balancer = d(100, 300);
  p.service_finalizer = d(300, 500);
  p.ingress_finalizer = d(300, 500);
  p.ingress_requires_service = true;
  cluster::FaultSpec& f = p.faults;
  f.latency["*"] = {milliseconds(0), milliseconds(50)};
  // Not on watches: a watch deferred by latency whose client leaves meanwhile deadlocks the
  // embedded API server (cluster_regression_test.cc); until that is fixed, watches start at once.
  f.latency["watch"] = {milliseconds(0), milliseconds(0)};
  f.error_rate_429 = 0.02;
  f.retry_after_seconds = 1;
  f.error_rate_500 = 0.02;
  f.error_rate_503 = 0.02;
  f.reset_rate = 0.01;
  f.watch_cut_after_events = 50;
  f.watch_cut_after = {milliseconds(2000), milliseconds(2000)};  // hostile: 20-60 s
  f.compaction_interval = milliseconds(2000);
  return p;
}

// One pod of a project as the oracle saw it (ObserveDetailed).
struct PodDetail {
  std::string name;
  bool terminating = false;
  bool ready = false;         // condition Ready=True
  std::string restart_epoch;  // annotation steward.io/restart-epoch ("" when absent)
  std::string credential_id;  // annotation steward.io/credential-id
  std::string image;
};

// What the oracle saw at one moment.
struct Snapshot {
  bool secret = false, pvc_bound = false, deployment_ready = false, endpoints_ready = false,
       ingress_address = false;
  bool deployment = false, service = false, ingress = false, custom_ingress = false;
  int pods = 0;
  std::string image;
  std::string deployment_waiting;  // "reason: message" when the Deployment is not ready
  std::string describe;
  std::vector<PodDetail> pod_details;  // filled by ObserveDetailed only
};

// A Transport that passes everything to `inner`: tests derive from it and override only what
// they change (usually Do).
class ForwardingTransport : public kube::Transport {
 public:
  explicit ForwardingTransport(std::shared_ptr<kube::Transport> inner) : inner_(std::move(inner)) {}
  StatusOr<kube::TransportResponse> Do(const kube::TransportRequest& request) override {
    return inner_->Do(request);
  }
  StatusOr<kube::TransportResponse> Stream(
      const kube::TransportRequest& request,
      const std::function<bool(std::string_view)>& on_data) override {
    return inner_->Stream(request, on_data);
  }
  kube::TransportStats stats() const override { return inner_->stats(); }
  const kube::RestConfig& config() const override { return inner_->config(); }
  std::optional<SteadyTime> failing_since() const override { return inner_->failing_since(); }

 protected:
  kube::Transport& inner() { return *inner_; }

 private:
  std::shared_ptr<kube::Transport> inner_;
};

// A Transport that can hold back the body of watch streams whose target contains a fragment
// ("/secrets"), so that one informer falls behind the cluster on cue. Requests and other
// streams pass straight through. A held stream still ends when its request is cancelled.
class GatedTransport final : public kube::Transport {
 public:
  explicit GatedTransport(std::shared_ptr<kube::Transport> inner) : inner_(std::move(inner)) {}

  void Hold(std::string target_fragment) {
    MutexLock lock(mu_);
    held_ = std::move(target_fragment);
  }
  void Release() {
    MutexLock lock(mu_);
    held_.clear();
    cv_.NotifyAll();
  }

  StatusOr<kube::TransportResponse> Do(const kube::TransportRequest& request) override {
    return inner_->Do(request);
  }
  StatusOr<kube::TransportResponse> Stream(
      const kube::TransportRequest& request,
      const std::function<bool(std::string_view)>& on_data) override {
    return inner_->Stream(request, [&](std::string_view data) {
      ReleasableMutexLock lock(mu_);
      while (!held_.empty() && request.target.find(held_) != std::string::npos) {
        if (request.cancel && request.cancel->cancelled()) return false;
        cv_.WaitFor(mu_, std::chrono::milliseconds(10));
      }
      lock.Release();
      return on_data(data);
    });
  }
  kube::TransportStats stats() const override { return inner_->stats(); }
  const kube::RestConfig& config() const override { return inner_->config(); }

 private:
  std::shared_ptr<kube::Transport> inner_;
  Mutex mu_;
  CondVar cv_;
  std::string held_ GUARDED_BY(mu_);
};

// A store listener removed when it goes out of scope (on a failed ASSERT too): listeners of a
// test usually hold its locals.
class ScopedListener {
 public:
  ScopedListener(store::Store& store, std::function<void(const store::ProjectChange&)> listener)
      : store_(store), handle_(store.AddListener(std::move(listener))) {}
  ~ScopedListener() { store_.RemoveListener(handle_); }
  ScopedListener(const ScopedListener&) = delete;
  ScopedListener& operator=(const ScopedListener&) = delete;

 private:
  store::Store& store_;
  const int handle_;
};

// Real time moved on by a test-set offset: the engine's grace periods pass without waiting.
class OffsetClock final : public Clock {
 public:
  SteadyTime Now() const override { return real_.Now() + offset_.load(); }
  SystemTime WallNow() const override {
    return real_.WallNow() + std::chrono::duration_cast<SystemTime::duration>(offset_.load());
  }
  void Advance(std::chrono::nanoseconds d) { offset_ = offset_.load() + d; }

 private:
  RealClock real_;
  std::atomic<std::chrono::nanoseconds> offset_{std::chrono::nanoseconds(0)};
};

class EngineFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/steward-engine-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    engine_.reset();
    store_.reset();
    cluster_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void StartCluster(cluster::Profile profile = QuickProfile()) {
    cluster::EmbeddedCluster::Options o;
    o.profile = std::move(profile);
    auto c = cluster::EmbeddedCluster::Start(o);
    ASSERT_TRUE(c.ok()) << c.error().ToString();
    cluster_ = std::move(*c);
    Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kNs}}}};
    auto created = cluster_->api().Create(Kind("namespaces"), "", ns);
    ASSERT_TRUE(created.ok());
    client_ = kube::test_support::ClientFor(*cluster_);
  }

  // Replaces client_ by one whose watch streams can be held (call after StartCluster, before
  // StartEngine).
  std::shared_ptr<GatedTransport> GateClient() {
    auto transport = kube::Transport::Create(kube::test_support::RestConfigFor(*cluster_));
    EXPECT_TRUE(transport.ok());
    auto gated = std::make_shared<GatedTransport>(*transport);
    client_ = std::make_shared<kube::Client>(gated);
    return gated;
  }

  void OpenStore() {
    store::SqliteOptions so;
    so.path = dir_ + "/steward.db";
    so.synchronous_full = false;
    auto s = store::OpenSqliteStore(so);
    ASSERT_TRUE(s.ok()) << s.error().ToString();
    store_ = std::move(*s);
  }

  EngineOptions DefaultOptions() {
    EngineOptions o;
    o.config.namespace_name = kNs;
    o.config.domain = "localhost";
    o.config.workers = 4;
    o.recheck = milliseconds(2000);
    o.queue.base_delay = milliseconds(20);
    o.queue.max_delay = seconds(2);
    return o;
  }

  void StartEngine(std::optional<EngineOptions> options = std::nullopt) {
    if (!store_) OpenStore();
    auto e = Engine::Create(options ? *options : DefaultOptions(), client_, *store_);
    ASSERT_TRUE(e.ok()) << e.error().ToString();
    engine_ = std::move(*e);
    Status s = engine_->Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  static Json Spec(std::string image = "flowfuse/node-red:4.0", int replicas = 1) {
    return Json{{"team", "t1"},
                {"stack", {{"image", image}, {"cpu", 10}, {"memory", 256}}},
                {"replicas", replicas}};
  }

  store::ProjectRecord Record(const std::string& id) {
    auto r = store_->GetProject(id);
    EXPECT_TRUE(r.ok()) << r.error().ToString();
    return r.ok() ? *r : store::ProjectRecord{};
  }

  std::vector<store::Credential> Creds(const std::string& id) {
    auto c = store_->ListCredentials(id);
    EXPECT_TRUE(c.ok());
    return c.ok() ? std::move(*c) : std::vector<store::Credential>{};
  }

  // Waits until the project's phase is `phase` at (at least) `generation`.
  bool WaitPhase(const std::string& id, std::string_view phase, int64_t generation,
                 milliseconds timeout = seconds(30)) {
    return test_support::Eventually(
        [&] {
          auto r = store_->GetProject(id);
          return r.ok() && r->phase == phase && r->observed_generation >= generation &&
                 r->generation == generation;
        },
        timeout);
  }
  bool WaitPurged(const std::string& id, milliseconds timeout = seconds(30)) {
    return test_support::Eventually(
        [&] {
          auto r = store_->GetProject(id);
          return !r.ok() && r.error().code() == StatusCode::kNotFound;
        },
        timeout);
  }

  std::optional<Json> Get(std::string_view group_resource, const std::string& name) {
    auto r = cluster_->api().Get(Kind(group_resource), kNs, name);
    if (!r.ok()) return std::nullopt;
    return *r;
  }
  std::vector<Json> ListLabelled(std::string_view group_resource, const std::string& selector) {
    cluster::ListOptions lo;
    lo.label_selector = selector;
    auto r = cluster_->api().List(Kind(group_resource), kNs, lo);
    std::vector<Json> out;
    if (r.ok()) {
      for (auto& i : (*r)["items"]) out.push_back(i);
    }
    return out;
  }

  // The cluster as it is now, judged by the readiness rules (docs/design.md §4).
  Snapshot Observe(const std::string& id, const std::string& name) {
    Snapshot s;
    ObjectNames n = NamesFor(id, name);
    s.secret = Get("secrets", n.secret).has_value();
    if (auto pvc = Get("persistentvolumeclaims", n.pvc)) s.pvc_bound = PvcReadiness(*pvc).ready();
    if (auto dep = Get("deployments.apps", n.deployment)) {
      s.deployment = true;
      Readiness r = DeploymentReadiness(*dep);
      s.deployment_ready = r.ready();
      if (!r.ready()) s.deployment_waiting = r.reason + ": " + r.message;
      s.image = GetString((*dep)["spec"]["template"]["spec"]["containers"][0], "image");
    }
    if (auto svc = Get("services", n.service)) {
      s.service = true;
      s.endpoints_ready =
          ServiceReadiness(*svc, ListLabelled("endpointslices.discovery.k8s.io",
                                              "kubernetes.io/service-name=" + n.service))
              .ready();
    }
    if (auto ing = Get("ingresses.networking.k8s.io", n.ingress)) {
      s.ingress = true;
      s.ingress_address = IngressReadiness(*ing, true).ready();
    }
    s.custom_ingress = Get("ingresses.networking.k8s.io", n.custom_ingress).has_value();
    s.pods = static_cast<int>(ListLabelled("pods", "steward.io/project=" + id).size());
    s.describe =
        "secret=" + std::to_string(s.secret) + " deployment=" + std::to_string(s.deployment) +
        "/ready=" + std::to_string(s.deployment_ready) +
        (s.deployment_waiting.empty() ? "" : " (" + s.deployment_waiting + ")") +
        " service=" + std::to_string(s.service) +
        "/endpoints=" + std::to_string(s.endpoints_ready) +
        " ingress=" + std::to_string(s.ingress) + "/address=" + std::to_string(s.ingress_address) +
        " pods=" + std::to_string(s.pods);
    return s;
  }

  // Observe() plus every pod of the project (pod_details; describe gains "terminating=N").
  Snapshot ObserveDetailed(const std::string& id, const std::string& name) {
    Snapshot s = Observe(id, name);
    int terminating = 0;
    for (const auto& pod : ListLabelled("pods", std::string(kProjectLabel) + "=" + id)) {
      PodDetail d;
      d.name = GetString(pod["metadata"], "name");
      const Json* ts = FindPath(pod, "metadata.deletionTimestamp");
      d.terminating = ts != nullptr && !ts->is_null();
      terminating += d.terminating;
      d.restart_epoch = Annotation(pod, kRestartAnnotation);
      d.credential_id = Annotation(pod, kCredentialAnnotation);
      if (const Json* cs = FindPath(pod, "spec.containers"); cs != nullptr && !cs->empty()) {
        d.image = GetString((*cs)[0], "image");
      }
      if (const Json* conds = FindPath(pod, "status.conditions"); conds != nullptr) {
        for (const auto& c : *conds) {
          if (GetString(c, "type") == "Ready") d.ready = GetString(c, "status") == "True";
        }
      }
      s.pod_details.push_back(std::move(d));
    }
    s.describe += " terminating=" + std::to_string(terminating);
    return s;
  }

  // As RecordSnapshotsAtPhases, with ObserveDetailed.
  void RecordDetailedSnapshotsAtPhases() {
    store_->AddListener([this](const store::ProjectChange& c) {
      if (!c.record) return;
      for (const auto& h : c.history) {
        if (h.kind != "phase") continue;
        Snapshot s = ObserveDetailed(c.record->id, c.record->name);
        MutexLock lock(snap_mu_);
        snapshots_.push_back({c.record->id, h.summary, h.generation, s});
      }
    });
  }

  // Every object carrying the project's label, as "kind/name" (empty: nothing left).
  std::vector<std::string> Leftovers(const std::string& id) {
    std::vector<std::string> out;
    for (const char* kind :
         {"secrets", "persistentvolumeclaims", "deployments.apps", "replicasets.apps", "services",
          "ingresses.networking.k8s.io", "pods"}) {
      for (const auto& o : ListLabelled(kind, std::string(kProjectLabel) + "=" + id)) {
        out.push_back(std::string(kind) + "/" + GetString(o["metadata"], "name"));
      }
    }
    return out;
  }

  // The project's stored status (parsed); a default one when absent or unparsable.
  ProjectStatus StatusOf(const std::string& id) {
    auto r = store_->GetProject(id);
    if (!r.ok()) return {};
    return ParseStoredStatus(r->status_json).value_or(ProjectStatus{});
  }

  // Records the cluster as the oracle sees it at the moment each phase is first committed for a
  // project (the store calls listeners right after the commit, before anyone else can act).
  void RecordSnapshotsAtPhases() {
    store_->AddListener([this](const store::ProjectChange& c) {
      if (!c.record) return;
      for (const auto& h : c.history) {
        if (h.kind != "phase") continue;
        Snapshot s = Observe(c.record->id, c.record->name);
        MutexLock lock(snap_mu_);
        snapshots_.push_back({c.record->id, h.summary, h.generation, s});
      }
    });
  }
  struct PhaseSnapshot {
    std::string id, phase;
    int64_t generation;
    Snapshot at;
  };
  std::vector<PhaseSnapshot> Snapshots() {
    MutexLock lock(snap_mu_);
    return snapshots_;
  }
  // The listener runs just after the commit, so a poller of the store can see a phase before
  // its snapshot is recorded: wait for it.
  bool WaitSnapshot(const std::string& id, std::string_view phase, int64_t generation = 0) {
    return test_support::Eventually([&] {
      for (const auto& s : Snapshots()) {
        if (s.id == id && s.phase == phase && s.generation >= generation) return true;
      }
      return false;
    });
  }

  // GET http://<host>/ through the cluster's ingress listener.
  int IngressStatus(const std::string& host, std::string* body = nullptr) {
    net::HttpClient::Options o;
    o.port = cluster_->ingress_port();
    o.timeout = seconds(5);
    auto client = net::HttpClient::Create(o);
    net::Headers headers;
    headers.Set("Host", host);
    auto r = client->Request("GET", "/", "", headers);
    if (!r.ok()) return -1;
    if (body != nullptr) *body = r->body;
    return r->status;
  }

  // No run under way, ready or due.
  bool Quiet() {
    const EngineStats s = engine_->stats();
    return s.queue_depth == 0 && s.queue_waiting == 0 && s.queue_processing == 0;
  }

  uint64_t ClusterWrites() {
    auto& log = cluster_->request_log();
    return log.Count("create") + log.Count("update") + log.Count("patch") + log.Count("delete");
  }

  static constexpr const char* kNs = "projects";
  // For EngineOptions::clock. Declared before engine_ and read by no one after TearDown stopped
  // the engine, so a test may hand it to the engine and return early.
  OffsetClock offset_clock_;
  std::string dir_;
  std::unique_ptr<cluster::EmbeddedCluster> cluster_;
  std::shared_ptr<kube::Client> client_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Engine> engine_;
  Mutex snap_mu_;
  std::vector<PhaseSnapshot> snapshots_ GUARDED_BY(snap_mu_);
};

}  // namespace steward::engine::testing
