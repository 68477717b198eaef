// Figures for Steward's engine (src/engine/reconciler) driving the embedded cluster in the same
// process, with a SQLite store in a temporary directory:
//
//   start    start → Running for one project at a time, against two lower bounds the cluster's
//            profile allows: the additive bound (every wait one after another, the order the
//            engine used to follow) and the critical-path bound (only the waits that depend on
//            each other add up); the time split into the stages of both branches; and the claim
//            lag: the Running commit against the first answer of the project's URL through the
//            cluster's ingress listener, sampled every 10 ms from another thread;
//   requests Kubernetes API requests for one start + suspend cycle, by verb and resource, and
//            suspend → Suspended against its additive and its parallel bound;
//   burst    N projects started at once: time until all are Running, requests by verb.
//
// The profile is `realistic` with every delay fixed at its mean (fixed + jitter/2, no jitter)
// and no faults, so that each bound is one number. See docs/benchmarks.md ("Engine").
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
#include "engine_observers.h"
#include "engine_stages.h"
#include "kube/client/client.h"
#include "kube/test_support/embedded.h"
#include "net/http.h"
#include "net/http_client.h"
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
    profile = MeanProfile(*cluster::BuiltinProfile("realistic"));
    cluster::EmbeddedCluster::Options co;
    co.profile = profile;
    co.seed = flags.seed;
    co.ingress = true;  // the claim lag samples each project's URL through its listener
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
    std::printf("cluster: API %s, ingress listener %s\n", cluster->api_url().c_str(),
                cluster->ingress_url().c_str());

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

  // When each milestone of one start would happen (ms after the Put) if every simulated delay
  // took exactly its profile mean and every create one RTT, keyed as the StageTable's
  // milestones. `overlapped` false: the order the engine followed when this bench was written
  // (each create once the object before is *ready*: Service after the Deployment is available,
  // Ingress after the slice has a ready endpoint). true: the dependency order on *existence*
  // (Secret → Deployment → Service → Ingress, each create once the one before is seen), every
  // readiness condition waited for at once. The delays chain as src/cluster/controllers
  // schedules them (docs/benchmarks.md, "The lower bounds"):
  //   - the deployment and replicaset controllers enqueue an object with the `controller` delay
  //     when they see it change (DeploymentController::Observe, ReplicaSetController::Observe),
  //     so Deployment → ReplicaSet → pod is 2 controller; the pod's Ready event enqueues the
  //     ReplicaSet (status), whose change enqueues the Deployment (status): 2 controller more;
  //   - the kubelet times each pod stage from its observation of the stage before
  //     (Kubelet::Track / DelayFor): pod_scheduling, then pod_start, then pod_ready;
  //   - the endpoints controller enqueues the Service with the `endpoints` delay on the
  //     Service's creation and on every event of a pod it selects (EndpointsController::
  //     ObserveService / ObservePod), and a sync writes the pods as the cache has them then; the
  //     queue keeps the earliest due time (ControllerQueue::AddAfter), and no event of the pod
  //     comes in the `endpoints` before Ready. So the slice has a ready endpoint `endpoints`
  //     after the later of the Service's creation and the pod's Ready;
  //   - the ingress controller writes the address `load_balancer` after it sees the Ingress
  //     (IngressController::Observe), whatever the Service or its endpoints.
  std::map<std::string, double> Schedule(bool overlapped) const {
    const cluster::Profile& p = profile;
    const double rtt = rtt_ms, c = Ms(p.controller.fixed);
    std::map<std::string, double> t;
    t["put"] = 0;
    t["secret:created"] = rtt;
    t["deployment:created"] = t["secret:created"] + rtt;
    t["rs:created"] = t["deployment:created"] + c;
    t["pod:created"] = t["rs:created"] + c;
    t["pod:scheduled"] = t["pod:created"] + Ms(p.pod_scheduling.fixed);
    t["pod:started"] = t["pod:scheduled"] + Ms(p.pod_start.fixed);
    t["pod:ready"] = t["pod:started"] + Ms(p.pod_ready.fixed);
    t["rs:ready"] = t["pod:ready"] + c;
    t["deployment:ready"] = t["rs:ready"] + c;
    t["service:created"] = (overlapped ? t["deployment:created"] : t["deployment:ready"]) + rtt;
    t["slice:ready"] = std::max(t["service:created"], t["pod:ready"]) + Ms(p.endpoints.fixed);
    t["ingress:created"] = (overlapped ? t["service:created"] : t["slice:ready"]) + rtt;
    t["ingress:address"] = t["ingress:created"] + Ms(p.load_balancer.fixed);
    t["url"] = std::max(t["slice:ready"], t["ingress:created"]);
    t["running"] = std::max({t["deployment:ready"], t["slice:ready"], t["ingress:address"]});
    return t;
  }

  // Every wait one after another: 4 RTT + 4 controller + pod_scheduling + pod_start + pod_ready
  // + endpoints + load_balancer.
  double BoundMs() const { return Schedule(/*overlapped=*/false).at("running"); }
  // The longest chain of waits that depend on each other: max(Deployment ready, slice ready,
  // Ingress address) with the creates in dependency order on existence.
  double CriticalBoundMs() const { return Schedule(/*overlapped=*/true).at("running"); }

  // Suspend: the Ingress, the Service and the Deployment (Foreground propagation) deleted, each
  // after the one before is gone: 3 RTT + ingress_finalizer + service_finalizer +
  // pod_termination + 4 garbage_collection.
  double SuspendBoundMs() const {
    return 3 * rtt_ms + Ms(profile.ingress_finalizer.fixed) + Ms(profile.service_finalizer.fixed) +
           SuspendDeploymentChainMs();
  }
  // Deployment deleted (Foreground) → gone: the garbage collector sees the Deployment's
  // foregroundDeletion finalizer and deletes the ReplicaSet (Foreground), sees the ReplicaSet's
  // and deletes the pod (GarbageCollector::EnqueueOwner → ProcessOwner → AttemptToDelete, each
  // after garbage_collection); the kubelet kills the pod at once and removes it pod_termination
  // later (Kubelet::Terminate); the pod's deletion enqueues the ReplicaSet's finalizer removal,
  // the ReplicaSet's the Deployment's (garbage_collection each).
  double SuspendDeploymentChainMs() const {
    return 4 * Ms(profile.garbage_collection.fixed) + Ms(profile.pod_termination.fixed);
  }
  // The three deletes issued in one pass, in order (Ingress first, so that traffic stops
  // first), none waiting for the one before to be gone: the k-th is acknowledged after k RTT,
  // then its own wait runs. max(RTT + ingress_finalizer, 2 RTT + service_finalizer, 3 RTT +
  // pod_termination + 4 garbage_collection).
  double SuspendParallelBoundMs() const {
    return std::max({rtt_ms + Ms(profile.ingress_finalizer.fixed),
                     2 * rtt_ms + Ms(profile.service_finalizer.fixed),
                     3 * rtt_ms + SuspendDeploymentChainMs()});
  }

  // Puts a new project that is to run; its id, or "" on failure.
  std::string PutStarted(const std::string& name) {
    auto put = engine->intents().Put(name, BenchProjectSpec(), "", /*start=*/true);
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
    const double done = Ms(suspended - t0);
    const double bound = SuspendBoundMs(), parallel = SuspendParallelBoundMs();
    std::printf(
        "  suspend additive bound = 3 RTT (delete Ingress, Service, Deployment, each after the "
        "one before is gone) + ingress_finalizer + service_finalizer + pod_termination + 4 "
        "garbage_collection (Deployment → ReplicaSet → pod deleted; pod gone → ReplicaSet → "
        "Deployment finalizer removed) = %.1f ms; measured/bound %.3f\n",
        bound, done / bound);
    std::printf(
        "  suspend parallel bound = max(RTT + ingress_finalizer = %.1f, 2 RTT + "
        "service_finalizer = %.1f, 3 RTT + pod_termination + 4 garbage_collection = %.1f) "
        "(the three deletes sent in one pass, Ingress first, none waiting for the one before to "
        "be gone) = %.1f ms; measured/bound %.3f (goal ≤ 1.05)\n",
        rtt_ms + Ms(profile.ingress_finalizer.fixed),
        2 * rtt_ms + Ms(profile.service_finalizer.fixed), 3 * rtt_ms + SuspendDeploymentChainMs(),
        parallel, done / parallel);
  }

  StageTable Stages(bool with_url) const {
    return StageTable(
        profile, rtt_ms, [this](const std::string& key) { return timeline->At(key); },
        [this](bool overlapped) { return Schedule(overlapped); }, with_url);
  }

  void RunStart();
  void RunRequests();
  void RunBurst();
};

constexpr milliseconds kSamplePeriod(10);

void Bench::RunStart() {
  const cluster::Profile& p = profile;
  const double c = Ms(p.controller.fixed);
  std::printf(
      "\n== start → Running, one project at a time (%d runs)\n"
      "profile: realistic at its means, no jitter, no faults: controller %.0f, pod_scheduling "
      "%.0f, pod_start %.0f, pod_ready %.0f, endpoints %.0f, load_balancer %.0f ms\n",
      flags.runs, c, Ms(p.pod_scheduling.fixed), Ms(p.pod_start.fixed), Ms(p.pod_ready.fixed),
      Ms(p.endpoints.fixed), Ms(p.load_balancer.fixed));
  const double bound = BoundMs(), critical = CriticalBoundMs();
  std::printf(
      "additive bound = 4 RTT (create Secret, Deployment, Service, Ingress) + 4 controller "
      "(Deployment → ReplicaSet → pod; pod Ready → ReplicaSet status → Deployment status) + "
      "pod_scheduling + pod_start + pod_ready + endpoints + load_balancer = %.1f ms (with the "
      "create RTT instead: %.1f ms)\n",
      bound, bound + 4 * (create_rtt_ms - rtt_ms));
  const auto o = Schedule(/*overlapped=*/true);
  std::printf(
      "critical-path bound = max(Deployment ready: 2 RTT + 4 controller + pod_scheduling + "
      "pod_start + pod_ready = %.1f; EndpointSlice ready: max(3 RTT, 2 RTT + 2 controller + "
      "pod_scheduling + pod_start + pod_ready) + endpoints = %.1f; Ingress address: 4 RTT + "
      "load_balancer = %.1f) = %.1f ms (Secret → Deployment → Service → Ingress each created "
      "once the one before exists; the endpoints delay runs from the later of the Service's "
      "creation and the pod's Ready)\n",
      o.at("deployment:ready"), o.at("slice:ready"), o.at("ingress:address"), critical);

  StageTable table = Stages(/*with_url=*/true);
  std::vector<double> totals, lags, lags_upper;
  std::vector<double> runs_per_start, commits_per_start;
  int negative = 0, refused_after = 0, unresolved = 0, unanswered = 0;
  size_t samples = 0;
  for (int i = 0; i < flags.runs; ++i) {
    const std::string name = "start-" + std::to_string(i);
    const uint64_t reconciles_before = engine->stats().reconciles;
    // <name>.<domain> (EngineConfig::domain is "localhost" here); sampled from before the Put.
    UrlSampler sampler(cluster->ingress_port(), name + ".localhost", kSamplePeriod);
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
    auto first = sampler.WaitFirstAnswer(milliseconds(10000));
    auto refused = sampler.LastRefusedBeforeAnswer();
    sampler.Stop();
    samples += sampler.Count();
    // A request sent after the Running commit that the pod did not answer: Running was claimed
    // while the URL did not answer.
    if (sampler.RefusedSentAfter(*running) > 0) ++refused_after;
    if (!first) {
      ++unanswered;
      table.Add(id, name, t0, *running);
      continue;
    }
    // First answer = the send time of the first request the pod answered: the URL answered by
    // then or within that request's round trip (about 0.3 ms), and not yet when the request
    // before was sent, kSamplePeriod earlier.
    const double lag = Ms(*running - first->sent);
    lags.push_back(lag);
    if (refused) lags_upper.push_back(Ms(*running - refused->sent));
    if (lag < 0) {
      ++negative;
      // Running between the last refused request and the first answered one: the samples
      // cannot tell which came first.
      if (refused && *running >= refused->sent) ++unresolved;
    }
    table.Add(id, name, t0, *running, first->sent);
  }
  Summary t = Summarise(totals);
  std::printf(
      "start → Running over %zu runs: min %.0f, median %.0f, max %.0f ms\n"
      "  additive bound %.0f ms: median/bound %.3f, median − bound %+.0f ms\n"
      "  critical-path bound %.0f ms: median/bound %.3f, median − bound %+.0f ms (goal ≤ 1.05)\n",
      totals.size(), t.min, t.median, t.max, bound, t.median / bound, t.median - bound, critical,
      t.median / critical, t.median - critical);
  std::printf(
      "claim lag = Running committed − the URL's first answer through the ingress listener (GET "
      "/ with Host <name>.localhost every %lld ms from its own thread, %zu samples; an answer "
      "counts when the pod sent it, X-Steward-Pod): %s over %zu runs (goal: p99 ≤ 50 ms)\n",
      static_cast<long long>(kSamplePeriod.count()), samples, Distribution(lags).c_str(),
      lags.size());
  std::printf(
      "  the URL began answering between the last refused request's send and the first answered "
      "one's, so the lag above errs low by up to the period; counted from the last refused "
      "request instead (an upper bound): %s\n",
      Distribution(lags_upper).c_str());
  std::printf(
      "  *** NEGATIVE lag (Running committed before the URL's first answer): %d of %zu runs, of "
      "which %d within the sampling resolution (committed between the last refused request's "
      "send and the first answered one's); runs where a request sent after the Running commit "
      "got no answer from the pod (definitely Running before the URL answered): %d; no answer "
      "within 10 s of Running: %d ***\n",
      negative, totals.size(), unresolved, refused_after, unanswered);
  Summary rs = Summarise(runs_per_start), cs = Summarise(commits_per_start);
  std::printf(
      "per start: %.0f reconciles (min %.0f, max %.0f), %.0f store commits of the project "
      "(min %.0f, max %.0f)\n",
      rs.median, rs.min, rs.max, cs.median, cs.min, cs.max);
  std::printf("start by stage (ms; cluster storage watched in process):\n");
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
  StageTable table = Stages(/*with_url=*/false);
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
      "%.0f ms after the last Put returned (additive bound %.0f ms, critical-path bound %.0f "
      "ms); each project's Put → Running: min %.0f, median %.0f, max %.0f ms (median/additive "
      "bound %.3f, median/critical-path bound %.3f)\n",
      n, put_ms, all, all - put_ms, BoundMs(), CriticalBoundMs(), s.min, s.median, s.max,
      s.median / BoundMs(), s.median / CriticalBoundMs());
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
