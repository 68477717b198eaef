// Figures for Steward's engine (src/engine/reconciler) driving the embedded cluster in the same
// process, with a SQLite store in a temporary directory:
//
//   start    start → Running for one project at a time, against the lower bound the cluster's
//            profile allows, with the time split into the stages of the critical path;
//   requests Kubernetes API requests for one start + suspend cycle, by verb and resource;
//   burst    N projects started at once: time until all are Running, requests by verb.
//
// The profile is `realistic` with every delay fixed at its mean (fixed + jitter/2, no jitter)
// and no faults, so that the bound is one number. See docs/benchmarks.md ("Engine").
//
//   build/bench/engine_bench [--runs K] [--projects N] [--seed S] [--store-sync full|normal]
//                            [--only start|requests|burst]
//
// Nothing here passes or fails; each line says what it measures.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bench_util.h"
#include "cluster/embedded_cluster.h"
#include "cluster/profile/profile.h"
#include "cluster/storage/storage.h"
#include "common/json.h"
#include "common/log.h"
#include "common/mutex.h"
#include "engine/manifests/manifests.h"
#include "engine/readiness/readiness.h"
#include "engine/reconciler/engine.h"
#include "kube/client/client.h"
#include "kube/test_support/embedded.h"
#include "steward_bench_util.h"
#include "store/store.h"

namespace steward::bench {
namespace {

using std::chrono::milliseconds;
using TimePoint = BenchClock::time_point;

constexpr const char* kNamespace = "projects";

struct Flags {
  int runs = 10;
  int projects = 50;
  uint64_t seed = 1;
  bool sync_full = true;
  std::string only;
  bool Runs(const std::string& section) const { return only.empty() || only == section; }
};

double Ms(BenchClock::duration d) { return Seconds(d) * 1e3; }
double Ms(milliseconds d) { return static_cast<double>(d.count()); }

// `realistic`, each delay at its mean and without jitter; no faults (realistic has none).
cluster::Profile MeanRealisticProfile() {
  cluster::Profile p = *cluster::BuiltinProfile("realistic");
  p.name = "realistic-mean";
  for (cluster::DelaySpec* d :
       {&p.controller, &p.pod_scheduling, &p.pod_start, &p.pod_ready, &p.pod_termination,
        &p.endpoints, &p.load_balancer, &p.service_finalizer, &p.ingress_finalizer,
        &p.pvc_finalizer, &p.pvc_binding, &p.garbage_collection}) {
    d->fixed += d->jitter / 2;
    d->jitter = milliseconds(0);
  }
  p.faults = cluster::FaultSpec{};
  return p;
}

Json ProjectSpec() {
  return Json{{"team", "t1"},
              {"stack", {{"image", "flowfuse/node-red:4.0"}, {"cpu", 10}, {"memory", 256}}},
              {"replicas", 1}};
}

// ---------------------------------------------------------------------------------------------
// When each milestone of a project's objects first showed in the cluster's storage (an
// in-process watch, so no HTTP in the way). Keys: "<what>|<project id>|<milestone>", and
// "slice|<service name>|ready" for EndpointSlices (they carry the Service's name, not ours).

class Timeline {
 public:
  explicit Timeline(cluster::Storage& storage) {
    cluster::WatchRequest req;
    req.from_revision = storage.CurrentRevision();
    auto w = storage.Watch(req);
    if (!w.ok()) {
      std::fprintf(stderr, "timeline watch: %s\n", w.status().ToString().c_str());
      std::abort();
    }
    watcher_ = std::move(*w);
    thread_ = std::thread([this] { Loop(); });
  }
  ~Timeline() {
    stop_ = true;
    watcher_->Close();
    thread_.join();
  }
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  std::optional<TimePoint> At(const std::string& key) const {
    MutexLock lock(mu_);
    auto it = first_.find(key);
    if (it == first_.end()) return std::nullopt;
    return it->second;
  }

 private:
  void Loop() {
    while (!stop_) {
      if (!watcher_->Wait(milliseconds(100))) continue;
      for (const auto& ev : watcher_->Drain()) Note(ev, BenchClock::now());
    }
  }

  static std::string LabelOf(const Json& obj, const std::string& key) {
    const Json* labels = FindPath(obj, "metadata.labels");
    if (labels == nullptr || !labels->is_object() || !labels->contains(key)) return "";
    const Json& v = (*labels)[key];
    return v.is_string() ? v.get<std::string>() : "";
  }

  void Mark(const std::string& what, const std::string& owner, const std::string& milestone,
            TimePoint at) {
    MutexLock lock(mu_);
    first_.emplace(what + "|" + owner + "|" + milestone, at);
  }

  void Note(const cluster::WatchEvent& ev, TimePoint at) {
    static const std::map<std::string, std::string> kWhat = {
        {"secrets", "secret"},
        {"deployments.apps", "deployment"},
        {"replicasets.apps", "rs"},
        {"pods", "pod"},
        {"services", "service"},
        {"endpointslices.discovery.k8s.io", "slice"},
        {"ingresses.networking.k8s.io", "ingress"}};
    auto kind = kWhat.find(ev.object.group_resource);
    if (kind == kWhat.end()) return;
    const std::string& what = kind->second;
    const Json obj = ev.object.Parse();
    if (what == "slice") {
      std::string svc = LabelOf(obj, "kubernetes.io/service-name");
      const Json* eps = FindPath(obj, "endpoints");
      if (svc.empty() || ev.type == cluster::WatchEventType::kDeleted || eps == nullptr ||
          !eps->is_array()) {
        return;
      }
      for (const Json& ep : *eps) {
        const Json* ready = FindPath(ep, "conditions.ready");
        if (ready == nullptr || !ready->is_boolean() || ready->get<bool>()) {
          Mark(what, svc, "ready", at);
          return;
        }
      }
      return;
    }
    const std::string id = LabelOf(obj, std::string(engine::kProjectLabel));
    if (id.empty()) return;
    if (ev.type == cluster::WatchEventType::kDeleted) {
      Mark(what, id, "deleted", at);
      return;
    }
    if (ev.type == cluster::WatchEventType::kAdded) Mark(what, id, "created", at);
    const Json* deleting = FindPath(obj, "metadata.deletionTimestamp");
    if (deleting != nullptr && !deleting->is_null()) Mark(what, id, "terminating", at);
    if (what == "deployment" && engine::DeploymentReadiness(obj).ready()) {
      Mark(what, id, "ready", at);
    } else if (what == "rs") {
      const Json& st = obj["status"];
      if (st.is_object() && st.value("readyReplicas", 0) >= 1 &&
          st.value("availableReplicas", 0) >= 1) {
        Mark(what, id, "ready", at);
      }
    } else if (what == "pod") {
      if (!GetString(obj["spec"], "nodeName").empty()) Mark(what, id, "scheduled", at);
      const Json& st = obj["status"];
      if (!st.is_object()) return;
      if (GetString(st, "phase") == "Running") Mark(what, id, "started", at);
      const Json* conds = FindPath(st, "conditions");
      if (conds == nullptr || !conds->is_array()) return;
      for (const Json& c : *conds) {
        if (GetString(c, "type") == "Ready" && GetString(c, "status") == "True") {
          Mark(what, id, "ready", at);
        }
      }
    } else if (what == "ingress") {
      const Json* lb = FindPath(obj, "status.loadBalancer.ingress");
      if (lb != nullptr && lb->is_array() && !lb->empty()) Mark(what, id, "address", at);
    }
  }

  std::unique_ptr<cluster::Watcher> watcher_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  mutable Mutex mu_;
  std::map<std::string, TimePoint> first_ GUARDED_BY(mu_);
};

// ---------------------------------------------------------------------------------------------
// The store's commits as they happen: when each (project, phase, generation) was first committed,
// and how many commits each project had.

class PhaseLog {
 public:
  explicit PhaseLog(store::Store& store) : store_(store) {
    handle_ = store_.AddListener([this](const store::ProjectChange& c) { OnChange(c); });
  }
  ~PhaseLog() { store_.RemoveListener(handle_); }
  PhaseLog(const PhaseLog&) = delete;
  PhaseLog& operator=(const PhaseLog&) = delete;

  // The time `name` first committed `phase` at `generation`; nullopt after `timeout`.
  std::optional<TimePoint> Wait(const std::string& name, const std::string& phase,
                                int64_t generation, milliseconds timeout) {
    MutexLock lock(mu_);
    const std::string key = Key(name, phase, generation);
    cv_.WaitFor(mu_, timeout, [&]() REQUIRES(mu_) { return phases_.count(key) != 0; });
    auto it = phases_.find(key);
    if (it == phases_.end()) return std::nullopt;
    return it->second;
  }
  int Commits(const std::string& name) const {
    MutexLock lock(mu_);
    auto it = commits_.find(name);
    return it == commits_.end() ? 0 : it->second;
  }

 private:
  static std::string Key(const std::string& name, const std::string& phase, int64_t gen) {
    return name + "|" + phase + "|" + std::to_string(gen);
  }
  void OnChange(const store::ProjectChange& c) {
    const TimePoint now = BenchClock::now();
    if (!c.record) return;
    MutexLock lock(mu_);
    ++commits_[c.record->name];
    for (const auto& h : c.history) {
      if (h.kind == "phase") phases_.emplace(Key(c.record->name, h.summary, h.generation), now);
    }
    cv_.NotifyAll();
  }

  store::Store& store_;
  int handle_ = 0;
  mutable Mutex mu_;
  CondVar cv_;
  std::map<std::string, TimePoint> phases_ GUARDED_BY(mu_);
  std::map<std::string, int> commits_ GUARDED_BY(mu_);
};

// apiserver_request_total parsing and counting: steward_bench_util.h.

bool IsInformerVerb(const std::string& verb) { return verb == "list" || verb == "watch"; }

// Prints requests other than list/watch as a resource × verb table, then list and watch.
void PrintRequestTable(const RequestCounts& counts, const char* indent) {
  static const std::vector<std::string> kOrder = {"create", "update",           "patch",
                                                  "delete", "deletecollection", "get"};
  std::vector<std::string> verbs;
  std::set<std::string> resources;
  for (const auto& [k, n] : counts) {
    if (IsInformerVerb(k.verb)) continue;
    resources.insert(k.resource + (k.subresource.empty() ? "" : "/" + k.subresource));
    if (std::find(kOrder.begin(), kOrder.end(), k.verb) == kOrder.end() &&
        std::find(verbs.begin(), verbs.end(), k.verb) == verbs.end()) {
      verbs.push_back(k.verb);
    }
  }
  verbs.insert(verbs.begin(), kOrder.begin(), kOrder.end());
  std::printf("%s%-36s", indent, "resource");
  for (const auto& v : verbs) std::printf(" %7.7s", v.c_str());
  std::printf("\n");
  std::map<std::string, long> verb_totals;
  for (const auto& r : resources) {
    std::printf("%s%-36s", indent, r.c_str());
    for (const auto& verb : verbs) {
      long n = 0;
      for (const auto& [k, v] : counts) {
        if (k.verb == verb && k.resource + (k.subresource.empty() ? "" : "/" + k.subresource) == r)
          n += v;
      }
      verb_totals[verb] += n;
      if (n == 0) {
        std::printf(" %7s", ".");
      } else {
        std::printf(" %7ld", n);
      }
    }
    std::printf("\n");
  }
  std::printf("%s%-36s", indent, "total");
  for (const auto& verb : verbs) std::printf(" %7ld", verb_totals[verb]);
  std::printf("\n");
  for (const auto& [k, n] : counts) {
    if (k.code.empty() || k.code[0] != '2') {
      std::printf("%s  answered %s: %ld %s %s\n", indent, k.code.c_str(), n, k.verb.c_str(),
                  k.resource.c_str());
    }
  }
  std::string detail;
  for (const auto& [k, n] : counts) {
    if (!IsInformerVerb(k.verb)) continue;
    detail += (detail.empty() ? "" : ", ") + k.resource + " " + k.verb + " " + std::to_string(n);
  }
  std::printf(
      "%sinformer traffic (not in the table; a watch is counted when it opens): list %ld, "
      "watch %ld%s\n",
      indent, CountVerb(counts, "list"), CountVerb(counts, "watch"),
      detail.empty() ? "" : (" (" + detail + ")").c_str());
}

// ---------------------------------------------------------------------------------------------

struct Bench {
  Flags flags;
  cluster::Profile profile;
  std::string dir;
  std::unique_ptr<cluster::EmbeddedCluster> cluster;
  std::shared_ptr<kube::Client> client;
  std::unique_ptr<store::Store> store;
  std::unique_ptr<engine::Engine> engine;
  std::unique_ptr<Timeline> timeline;
  std::unique_ptr<PhaseLog> phases;
  double rtt_ms = 0;
  double create_rtt_ms = 0;

  ~Bench() {
    engine.reset();  // workers drained before the listener and the watch go
    phases.reset();
    timeline.reset();
    store.reset();
    cluster.reset();
    if (!dir.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  }

  bool Setup() {
    profile = MeanRealisticProfile();
    cluster::EmbeddedCluster::Options co;
    co.profile = profile;
    co.seed = flags.seed;
    co.ingress = false;  // nothing here sends traffic to the projects
    auto c = cluster::EmbeddedCluster::Start(co);
    if (!c.ok()) {
      std::fprintf(stderr, "cluster: %s\n", c.error().ToString().c_str());
      return false;
    }
    cluster = std::move(*c);
    Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kNamespace}}}};
    if (!cluster->api().Create(*cluster::FindKind("v1", "Namespace"), "", ns).ok()) {
      std::fprintf(stderr, "namespace create failed\n");
      return false;
    }
    client = kube::test_support::ClientFor(*cluster);

    char tmpl[] = "/tmp/steward-engine-bench-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      std::perror("mkdtemp");
      return false;
    }
    dir = tmpl;
    store::SqliteOptions so;
    so.path = dir + "/steward.db";
    so.synchronous_full = flags.sync_full;
    auto s = store::OpenSqliteStore(so);
    if (!s.ok()) {
      std::fprintf(stderr, "store: %s\n", s.error().ToString().c_str());
      return false;
    }
    store = std::move(*s);
    phases = std::make_unique<PhaseLog>(*store);
    timeline = std::make_unique<Timeline>(cluster->api().storage());

    // Production defaults (8 workers, 10 s recheck, 100 ms base backoff) but our namespace.
    engine::EngineOptions eo;
    eo.config.namespace_name = kNamespace;
    eo.config.domain = "localhost";
    eo.queue.jitter_seed = flags.seed;
    auto e = engine::Engine::Create(eo, client, *store);
    if (!e.ok()) {
      std::fprintf(stderr, "engine: %s\n", e.error().ToString().c_str());
      return false;
    }
    engine = std::move(*e);
    const RequestCounts before = ParseRequests(cluster->request_log().MetricsText());
    Status started = engine->Start();
    if (!started.ok()) {
      std::fprintf(stderr, "engine start: %s\n", started.ToString().c_str());
      return false;
    }
    const RequestCounts start = Diff(ParseRequests(cluster->request_log().MetricsText()), before);
    std::printf(
        "engine start (informers list, then watch): %ld list, %ld watch, %ld other requests\n",
        CountVerb(start, "list"), CountVerb(start, "watch"),
        CountAll(start) - CountVerb(start, "list") - CountVerb(start, "watch"));
    return true;
  }

  // Median of small GETs (the namespace, about 300 bytes) through the engine's own client.
  void MeasureRtt() {
    constexpr int kWarmup = 20, kSamples = 200;
    std::vector<double> samples;
    const uint64_t gets_before = cluster->request_log().Count("get");
    for (int i = 0; i < kWarmup + kSamples; ++i) {
      auto start = BenchClock::now();
      auto r = client->Get(kube::ResourceType::Namespace(), "", kNamespace);
      double ms = Ms(BenchClock::now() - start);
      if (!r.ok()) {
        std::fprintf(stderr, "GET namespace: %s\n", r.error().ToString().c_str());
        continue;
      }
      if (i >= kWarmup) samples.push_back(ms);
    }
    rtt_ms = Percentile(samples, 50);
    double p90 = Percentile(samples, 90);
    std::printf(
        "RTT: median of %d GETs of a Namespace through kube::Client (TLS keep-alive): %.3f ms "
        "(p90 %.3f ms; the server counted %lu GETs)\n",
        kSamples, rtt_ms, p90,
        static_cast<unsigned long>(cluster->request_log().Count("get") - gets_before));

    // Creates cost more than GETs (decode, validation, storage, watch fan-out), so the create
    // round trip is printed too: each step of the critical path sends a create.
    constexpr const char* kScratch = "rtt-scratch";
    Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kScratch}}}};
    (void)cluster->api().Create(*cluster::FindKind("v1", "Namespace"), "", ns);
    samples.clear();
    for (int i = 0; i < kWarmup + 100; ++i) {
      Json secret = {{"apiVersion", "v1"},
                     {"kind", "Secret"},
                     {"metadata", {{"name", "rtt-" + std::to_string(i)}}},
                     {"stringData", {{"token", std::string(64, 'a')}}}};
      auto start = BenchClock::now();
      auto r = client->Create(kube::ResourceType::Secret(), kScratch, secret);
      double ms = Ms(BenchClock::now() - start);
      if (!r.ok()) {
        std::fprintf(stderr, "create Secret: %s\n", r.error().ToString().c_str());
        continue;
      }
      if (i >= kWarmup) samples.push_back(ms);
    }
    create_rtt_ms = Percentile(samples, 50);
    std::printf("create RTT: median of 100 Secret creates through kube::Client: %.3f ms\n",
                create_rtt_ms);
  }

  double BoundMs() const {
    return 4 * rtt_ms + 4 * Ms(profile.controller.fixed) + Ms(profile.pod_scheduling.fixed) +
           Ms(profile.pod_start.fixed) + Ms(profile.pod_ready.fixed) + Ms(profile.endpoints.fixed) +
           Ms(profile.load_balancer.fixed);
  }

  // Puts a new project that is to run; its id, or "" on failure.
  std::string PutStarted(const std::string& name) {
    auto put = engine->intents().Put(name, ProjectSpec(), "", /*start=*/true);
    if (!put.ok()) {
      std::fprintf(stderr, "put %s: %s\n", name.c_str(), put.error().ToString().c_str());
      return "";
    }
    return put->record.id;
  }

  // Waits until the engine has run nothing for `quiet` (at most `limit`): the informers'
  // follow-up events (slices, pods going away) have been handled.
  void WaitQuiet(milliseconds quiet, milliseconds limit) {
    auto deadline = BenchClock::now() + limit;
    uint64_t last = engine->stats().reconciles;
    while (BenchClock::now() < deadline) {
      std::this_thread::sleep_for(quiet);  // a measuring window, not synchronisation
      uint64_t now = engine->stats().reconciles;
      if (now == last) return;
      last = now;
    }
  }

  // When each object of project `id` started terminating and was gone, after the Suspend call.
  void PrintSuspendPath(const std::string& id, TimePoint suspended, TimePoint t0) {
    std::printf("  suspend path (ms after the Suspend call):");
    for (const char* what : {"ingress", "service", "deployment", "rs", "pod"}) {
      for (const char* m : {"terminating", "deleted"}) {
        auto at = timeline->At(std::string(what) + "|" + id + "|" + m);
        if (at) std::printf(" %s %s %.0f;", what, m, Ms(*at - t0));
      }
    }
    std::printf(" Suspended committed %.0f\n", Ms(suspended - t0));
    const double bound =
        3 * rtt_ms + Ms(profile.ingress_finalizer.fixed) + Ms(profile.service_finalizer.fixed) +
        4 * Ms(profile.garbage_collection.fixed) + Ms(profile.pod_termination.fixed);
    std::printf(
        "  suspend bound = 3 RTT (delete Ingress, Service, Deployment, each after the one before "
        "is gone) + ingress_finalizer + service_finalizer + pod_termination + 4 "
        "garbage_collection (Deployment → ReplicaSet → pod deleted; pod gone → ReplicaSet → "
        "Deployment finalizer removed) = %.1f ms; measured/bound %.3f\n",
        bound, Ms(suspended - t0) / bound);
  }

  void RunStart();
  void RunRequests();
  void RunBurst();
};

struct Summary {
  double min = 0, median = 0, max = 0;
};
Summary Summarise(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  s.median = Percentile(v, 50);
  return s;
}

// The critical path of a start, stage by stage: the time between two milestones of a project
// (seen in the cluster's storage, or the Put call and the Running commit) against what the
// profile allows for that stage.
class StageTable {
 public:
  explicit StageTable(const Bench& b) : b_(b) {
    const cluster::Profile& p = b.profile;
    const double c = Ms(p.controller.fixed), rtt = b.rtt_ms;
    stages_ = {
        {"Put -> Secret created (intent commit, wake-up, run, create)", "put", "secret:created",
         rtt, "RTT"},
        {"Secret -> Deployment created", "secret:created", "deployment:created", rtt, "RTT"},
        {"Deployment -> ReplicaSet created", "deployment:created", "rs:created", c, "controller"},
        {"ReplicaSet -> pod created", "rs:created", "pod:created", c, "controller"},
        {"pod created -> scheduled", "pod:created", "pod:scheduled", Ms(p.pod_scheduling.fixed),
         "pod_scheduling"},
        {"scheduled -> started", "pod:scheduled", "pod:started", Ms(p.pod_start.fixed),
         "pod_start"},
        {"started -> Ready", "pod:started", "pod:ready", Ms(p.pod_ready.fixed), "pod_ready"},
        {"pod Ready -> ReplicaSet status", "pod:ready", "rs:ready", c, "controller"},
        {"ReplicaSet -> Deployment status ready", "rs:ready", "deployment:ready", c, "controller"},
        {"Deployment ready -> Service created (watch, run, create)", "deployment:ready",
         "service:created", rtt, "RTT"},
        {"Service -> EndpointSlice ready", "service:created", "slice:ready", Ms(p.endpoints.fixed),
         "endpoints"},
        {"slice ready -> Ingress created (watch, run, create)", "slice:ready", "ingress:created",
         rtt, "RTT"},
        {"Ingress -> address written", "ingress:created", "ingress:address",
         Ms(p.load_balancer.fixed), "load_balancer"},
        {"address -> Running committed (watch, run, commit)", "ingress:address", "running", 0, "-"},
    };
    ms_.resize(stages_.size());
  }

  void Add(const std::string& id, const std::string& name, TimePoint put, TimePoint running) {
    ++samples_;
    const std::string svc = engine::NamesFor(id, name).service;
    auto at = [&](const std::string& m) -> std::optional<TimePoint> {
      if (m == "put") return put;
      if (m == "running") return running;
      const size_t colon = m.find(':');
      const std::string what = m.substr(0, colon);
      return b_.timeline->At(what + "|" + (what == "slice" ? svc : id) + "|" + m.substr(colon + 1));
    };
    for (size_t s = 0; s < stages_.size(); ++s) {
      auto from = at(stages_[s].from), to = at(stages_[s].to);
      if (from && to) ms_[s].push_back(Ms(*to - *from));
    }
  }

  void Print() const {
    std::printf("  %-58s %-16s %8s %8s %8s %8s\n", "stage", "profile", "expect", "median", "min",
                "max");
    double sum_median = 0, sum_expect = 0;
    for (size_t s = 0; s < stages_.size(); ++s) {
      Summary ss = Summarise(ms_[s]);
      sum_median += ss.median;
      sum_expect += stages_[s].expect;
      std::printf("  %-58s %-16s %8.1f %8.1f %8.1f %8.1f%s\n", stages_[s].what,
                  stages_[s].expect_what, stages_[s].expect, ss.median, ss.min, ss.max,
                  ms_[s].size() == samples_ ? "" : "  (milestone missing in some runs)");
    }
    std::printf("  %-58s %-16s %8.1f %8.1f\n", "sum", "", sum_expect, sum_median);
  }

 private:
  struct Stage {
    const char* what;
    const char* from;
    const char* to;
    double expect;
    const char* expect_what;
  };
  const Bench& b_;
  std::vector<Stage> stages_;
  std::vector<std::vector<double>> ms_;
  size_t samples_ = 0;
};

void Bench::RunStart() {
  const double c = Ms(profile.controller.fixed);
  std::printf(
      "\n== start → Running, one project at a time (%d runs)\n"
      "profile: realistic at its means, no jitter, no faults: controller %.0f, pod_scheduling "
      "%.0f, pod_start %.0f, pod_ready %.0f, endpoints %.0f, load_balancer %.0f ms\n",
      flags.runs, c, Ms(profile.pod_scheduling.fixed), Ms(profile.pod_start.fixed),
      Ms(profile.pod_ready.fixed), Ms(profile.endpoints.fixed), Ms(profile.load_balancer.fixed));
  const double bound = BoundMs();
  std::printf(
      "bound = 4 RTT (create Secret, Deployment, Service, Ingress) + 4 controller (Deployment → "
      "ReplicaSet → pod; pod Ready → ReplicaSet status → Deployment status) + pod_scheduling + "
      "pod_start + pod_ready + endpoints + load_balancer = %.1f ms (with the create RTT "
      "instead: %.1f ms)\n",
      bound, bound + 4 * (create_rtt_ms - rtt_ms));

  StageTable table(*this);
  std::vector<double> totals;
  std::vector<double> runs_per_start, commits_per_start;
  for (int i = 0; i < flags.runs; ++i) {
    const std::string name = "start-" + std::to_string(i);
    const uint64_t reconciles_before = engine->stats().reconciles;
    const TimePoint t0 = BenchClock::now();
    const std::string id = PutStarted(name);
    if (id.empty()) return;
    auto running = phases->Wait(name, "Running", 1, milliseconds(60000));
    if (!running) {
      std::fprintf(stderr, "%s: not Running within 60 s\n", name.c_str());
      return;
    }
    totals.push_back(Ms(*running - t0));
    runs_per_start.push_back(static_cast<double>(engine->stats().reconciles - reconciles_before));
    commits_per_start.push_back(static_cast<double>(phases->Commits(name)));
    table.Add(id, name, t0, *running);
  }
  Summary t = Summarise(totals);
  std::printf(
      "start → Running over %zu runs: min %.0f, median %.0f, max %.0f ms; bound %.0f ms; "
      "median/bound %.3f; median − bound %+.0f ms\n",
      totals.size(), t.min, t.median, t.max, bound, t.median / bound, t.median - bound);
  Summary rs = Summarise(runs_per_start), cs = Summarise(commits_per_start);
  std::printf(
      "per start: %.0f reconciles (min %.0f, max %.0f), %.0f store commits of the project "
      "(min %.0f, max %.0f)\n",
      rs.median, rs.min, rs.max, cs.median, cs.min, cs.max);
  std::printf("critical path by stage (ms; cluster storage watched in process):\n");
  table.Print();
}

void Bench::RunRequests() {
  std::printf("\n== Kubernetes API requests per start + suspend cycle (one project)\n");
  const std::string name = "cycle";
  std::string id;
  for (int cycle = 1; cycle <= 2; ++cycle) {
    WaitQuiet(milliseconds(300), milliseconds(5000));
    const RequestCounts before = ParseRequests(cluster->request_log().MetricsText());
    const engine::EngineStats stats_before = engine->stats();
    const int commits_before = phases->Commits(name);
    const int64_t start_gen = 2 * cycle - 1;
    const TimePoint t0 = BenchClock::now();
    if (cycle == 1) {
      id = PutStarted(name);
      if (id.empty()) return;
    } else if (auto r = engine->intents().Start(name); !r.ok()) {
      std::fprintf(stderr, "start: %s\n", r.error().ToString().c_str());
      return;
    }
    auto running = phases->Wait(name, "Running", start_gen, milliseconds(60000));
    if (!running) {
      std::fprintf(stderr, "%s: not Running within 60 s\n", name.c_str());
      return;
    }
    const TimePoint t1 = BenchClock::now();
    if (auto r = engine->intents().Suspend(name); !r.ok()) {
      std::fprintf(stderr, "suspend: %s\n", r.error().ToString().c_str());
      return;
    }
    auto suspended = phases->Wait(name, "Suspended", start_gen + 1, milliseconds(60000));
    if (!suspended) {
      std::fprintf(stderr, "%s: not Suspended within 60 s\n", name.c_str());
      return;
    }
    WaitQuiet(milliseconds(300), milliseconds(5000));
    const RequestCounts diff = Diff(ParseRequests(cluster->request_log().MetricsText()), before);
    const engine::EngineStats stats_after = engine->stats();
    std::printf(
        "cycle %d (%s): start → Running %.0f ms, suspend → Suspended %.0f ms; engine: %lu "
        "reconciles, %lu writes; %d store commits\n",
        cycle, cycle == 1 ? "new project" : "same project again, Secret kept", Ms(*running - t0),
        Ms(*suspended - t1),
        static_cast<unsigned long>(stats_after.reconciles - stats_before.reconciles),
        static_cast<unsigned long>(stats_after.writes - stats_before.writes),
        phases->Commits(name) - commits_before);
    if (cycle == 1) PrintSuspendPath(id, *suspended, t1);
    PrintRequestTable(diff, "  ");
  }
  std::printf(
      "  ideal for a new project: create = Secret, Deployment, Service, Ingress (4); delete = "
      "Ingress, Service, Deployment (3); no get, update or patch\n");
}

void Bench::RunBurst() {
  const int n = flags.projects;
  std::printf("\n== %d projects started at once\n", n);
  WaitQuiet(milliseconds(300), milliseconds(5000));
  const RequestCounts before = ParseRequests(cluster->request_log().MetricsText());
  const engine::EngineStats stats_before = engine->stats();
  const double cpu_before = ProcessCpuSeconds();
  std::vector<TimePoint> put_at(n);
  std::vector<std::string> ids(n);
  const TimePoint t0 = BenchClock::now();
  for (int i = 0; i < n; ++i) {
    put_at[i] = BenchClock::now();
    ids[i] = PutStarted("burst-" + std::to_string(i));
    if (ids[i].empty()) return;
  }
  const double put_ms = Ms(BenchClock::now() - t0);
  std::vector<double> each;
  StageTable table(*this);
  TimePoint last = t0;
  for (int i = 0; i < n; ++i) {
    const std::string name = "burst-" + std::to_string(i);
    auto running = phases->Wait(name, "Running", 1, milliseconds(120000));
    if (!running) {
      std::fprintf(stderr, "%s: not Running within 120 s\n", name.c_str());
      return;
    }
    each.push_back(Ms(*running - put_at[i]));
    last = std::max(last, *running);
    table.Add(ids[i], name, put_at[i], *running);
  }
  const double cpu = ProcessCpuSeconds() - cpu_before;
  WaitQuiet(milliseconds(300), milliseconds(5000));
  const RequestCounts diff = Diff(ParseRequests(cluster->request_log().MetricsText()), before);
  const engine::EngineStats stats_after = engine->stats();
  Summary s = Summarise(each);
  const double all = Ms(last - t0);
  std::printf(
      "%d Puts (one after another) took %.0f ms; all Running %.0f ms after the first Put, "
      "%.0f ms after the last Put returned (bound %.0f ms); each project's Put → Running: min "
      "%.0f, median %.0f, max %.0f ms (median/bound %.3f)\n",
      n, put_ms, all, all - put_ms, BoundMs(), s.min, s.median, s.max, s.median / BoundMs());
  std::printf(
      "engine: %lu reconciles (%.1f per project), %lu writes; process CPU (engine + cluster + "
      "store) %.2f s = %.0f ms per project\n",
      static_cast<unsigned long>(stats_after.reconciles - stats_before.reconciles),
      static_cast<double>(stats_after.reconciles - stats_before.reconciles) / n,
      static_cast<unsigned long>(stats_after.writes - stats_before.writes), cpu, cpu * 1e3 / n);
  std::printf("critical path by stage over the %d projects (ms):\n", n);
  table.Print();
  std::printf("requests (all %d projects):\n", n);
  PrintRequestTable(diff, "  ");
}

int Main(int argc, char** argv) {
  Flags f;
  std::string store_sync = "full";
  CLI::App cli("Figures for Steward's engine driving the embedded cluster.", "engine_bench");
  AddFlag(cli, "--runs", &f.runs, "start runs, one project at a time")
      ->check(CLI::Range(1, 100000));
  AddFlag(cli, "--projects", &f.projects, "projects started at once (burst)")
      ->check(CLI::Range(1, 1000000));
  AddFlag(cli, "--seed", &f.seed, "seed of the cluster's and the queue's randomness");
  AddFlag(cli, "--store-sync", &store_sync, "SQLite synchronous mode")
      ->check(CLI::IsMember({"full", "normal"}));
  AddFlag(cli, "--only", &f.only, "run one section (default: all)")
      ->check(CLI::IsMember({"start", "requests", "burst"}));
  if (auto exit_code = ParseFlags(cli, argc, argv)) return *exit_code;
  f.sync_full = store_sync == "full";
  spdlog::set_level(spdlog::level::warn);
  std::printf(
      "engine_bench: %ld cores (load average %s before the run), seed %lu, SQLite store "
      "synchronous=%s\n",
      sysconf(_SC_NPROCESSORS_ONLN), LoadAverage().c_str(), static_cast<unsigned long>(f.seed),
      f.sync_full ? "FULL" : "NORMAL");
  const TimePoint begin = BenchClock::now();
  Bench b;
  b.flags = f;
  if (!b.Setup()) return 1;
  b.MeasureRtt();
  if (f.Runs("start")) b.RunStart();
  if (f.Runs("requests")) b.RunRequests();
  if (f.Runs("burst")) b.RunBurst();
  std::printf("\nengine_bench took %.1f s (load average %s at the end)\n",
              Seconds(BenchClock::now() - begin), LoadAverage().c_str());
  return 0;
}

}  // namespace
}  // namespace steward::bench

int main(int argc, char** argv) { return steward::bench::Main(argc, argv); }
