// What watch clients cost the commit path (issue 14 §1): commit → status-visible latency and
// reconcile throughput with 0, 100 and 1,000 SSE watchers on GET /v1/watch.
//
// Set-up, in this process: the embedded cluster with the `instant` profile (no ingress), a SQLite
// store (--store-sync, default normal: an fsync per commit would hide what the watchers cost),
// the engine (production defaults, 8 workers) and the API server (2 I/O threads, --api-workers,
// max_connections raised to the watcher count + 64; RLIMIT_NOFILE raised to its hard limit). One
// project, "probe", is created suspended and left to settle. Then, for each count W in
// --watchers (default 0,100,1000):
//
//   1. One probe watcher connects, `GET /v1/watch?project=probe&initial=false`, then W
//      background watchers, `GET /v1/watch?initial=false` (every project). All are raw sockets
//      read by epoll threads (chunked decoding, SSE parsing); they always keep up. The probe
//      stream is the first one the fan-out writes each change to, the background ones follow.
//   2. Latency: --samples status writes of the probe project, one at a time, after 20 warm-up
//      writes. Each is Store::MutateProject replacing the probe's status JSON (its message), as
//      the engine's status write does; t0 is taken just before the call. Per write:
//        commit   t(MutateProject returned) − t0: what the committing thread pays, listeners
//                 included (the engine's workers pay this for every status write)
//        visible  t(GET /v1/projects/probe, sent on a kept-alive connection right after the
//                 commit returned, answered with the new status) − t0: "commit →
//                 status-visible" for a reader of the API; THE FIGURE THE GOAL (p99 at 1,000
//                 watchers ≤ 1.2 × p99 at 0) IS COMPUTED ON
//        watch    t(the probe watcher has read the event carrying the new record version) − t0
//        all      t(every background watcher has read it too) − t0 (W > 0): the fan-out's end
//      Only after all of them does the next write start.
//   3. Throughput: --projects projects Put with start=true through engine::Intents at once;
//      figure = projects / (time from the first Put to the last project's Running commit)
//      ("projects reconciled per second": each start is about 15 reconciles, 7 commits), with
//      store commits per second in that window (every commit is fanned out to all W watchers).
//      Meanwhile a sampler thread writes the probe once per --burst-interval-ms (20) and
//      measures commit → visible as in 2 (issue 18 §5: its p99 with W watchers vs none, while the
//      projects start). The projects are then deleted and waited for until purged.
//   4. Order: every background stream must have read every change the store delivered in the
//      round (a store listener counts them), ids strictly increasing, the same ids in the same
//      order on every stream (a hash of the id sequence); printed as yes/NO with the counts.
//   5. The watchers disconnect.
//
// Printed: per W, p50/p99 of the four latencies, projects/s and commits/s, process CPU, watcher
// bytes read and SlowConsumer drops; then the p99 ratios of W = max to W = 0 against the goal of
// 1.2. Everything shares this machine's cores with the load generators and the cluster.
//
//   build/bench/watch_bench [--watchers 0,100,1000] [--samples N (300)] [--projects K (100)]
//                           [--store-sync normal|full] [--api-workers W (8)]
//                           [--burst-interval-ms I (20)]
//
// Nothing passes or fails.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "api/api_server.h"
#include "bench_util.h"
#include "cluster/embedded_cluster.h"
#include "cluster/model/resource_types.h"
#include "cluster/profile/profile.h"
#include "common/json.h"
#include "common/log.h"
#include "common/mutex.h"
#include "engine/reconciler/engine.h"
#include "kube/test_support/embedded.h"
#include "net/http_client.h"
#include "steward_bench_util.h"
#include "store/store.h"
#include "watch_clients.h"

namespace steward::bench {
namespace {

using std::chrono::milliseconds;

constexpr const char* kNamespace = "projects";
constexpr const char* kToken = "watch-bench-token-0123456789abcdef";
constexpr int kWarmup = 20;

// Raises the soft open-file limit to the hard one; returns the new soft limit.
rlim_t RaiseFileLimit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) std::perror("setrlimit");
    getrlimit(RLIMIT_NOFILE, &rl);
  }
  return rl.rlim_cur;
}

struct Round {
  int watchers = 0;
  std::vector<double> commit_ms, visible_ms, watch_ms, all_ms;
  // Commit → visible of probe writes made one at a time while the projects start (§5).
  std::vector<double> burst_visible_ms;
  // Every background stream read every change (`changes`, counted by a store listener) in
  // order: fewest/most events read, ids that went backwards, all streams alike.
  uint64_t changes = 0;
  Watchers::Order order;
  bool order_complete = false;
  double projects_per_s = 0, commits_per_s = 0, reconcile_s = 0;
  double cpu_s = 0, wall_s = 0, reader_cpu_s = 0;
  uint64_t watcher_bytes = 0;
  int slow_drops = 0;
  std::string load_before, load_after;
  bool ok = false;
};

// Counts purges of the given projects. Thread-safe.
class PurgeCounter {
 public:
  explicit PurgeCounter(store::Store& store) : store_(store) {
    handle_ = store_.AddListener([this](const store::ProjectChange& c) {
      if (c.record) return;
      MutexLock lock(mu_);
      ++purged_;
      cv_.NotifyAll();
    });
  }
  ~PurgeCounter() { store_.RemoveListener(handle_); }
  bool Wait(size_t n, milliseconds timeout) {
    MutexLock lock(mu_);
    return cv_.WaitFor(mu_, timeout, [&]() REQUIRES(mu_) { return purged_ >= n; });
  }

 private:
  store::Store& store_;
  int handle_ = 0;
  Mutex mu_;
  CondVar cv_;  // purged_ grew
  size_t purged_ GUARDED_BY(mu_) = 0;
};

// Whether GET /v1/projects/probe on `client` shows the probe's status write number `n`.
bool ProbeShows(net::HttpClient& client, int n) {
  auto r = client.Request("GET", "/v1/projects/probe");
  if (!r.ok() || r->status != 200) return false;
  auto j = ParseJson(r->body);
  return j.ok() && j->is_object() &&
         GetString((*j)["status"], "message") == "watch_bench sample " + std::to_string(n);
}

// Counts every change the store delivers (what an all-projects watch stream sends one event
// for). Thread-safe.
class ChangeCounter {
 public:
  explicit ChangeCounter(store::Store& store) : store_(store) {
    handle_ = store_.AddListener([this](const store::ProjectChange&) { ++changes_; });
  }
  ~ChangeCounter() { store_.RemoveListener(handle_); }
  uint64_t changes() const { return changes_.load(); }

 private:
  store::Store& store_;
  int handle_ = 0;
  std::atomic<uint64_t> changes_{0};
};

class Bench {
 public:
  void set_burst_interval(milliseconds interval) { burst_interval_ = interval; }
  ~Bench() {
    if (api_) api_->Stop();
    api_.reset();
    engine_.reset();
    store_.reset();
    cluster_.reset();
    if (!dir_.empty()) RemoveTree(dir_);
  }

  bool Setup(bool sync_full, int api_workers, size_t max_connections) {
    auto profile = cluster::BuiltinProfile("instant");
    if (!profile.ok()) return false;
    cluster::EmbeddedCluster::Options co;
    co.profile = *profile;
    co.ingress = false;
    auto c = cluster::EmbeddedCluster::Start(co);
    if (!c.ok()) {
      std::fprintf(stderr, "cluster: %s\n", c.error().ToString().c_str());
      return false;
    }
    cluster_ = std::move(*c);
    Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kNamespace}}}};
    if (!cluster_->api().Create(*cluster::FindKind("v1", "Namespace"), "", ns).ok()) {
      std::fprintf(stderr, "namespace create failed\n");
      return false;
    }
    auto client = kube::test_support::ClientFor(*cluster_);
    dir_ = MakeTempDir("steward-watch-bench");
    if (dir_.empty()) return false;
    store::SqliteOptions so;
    so.path = dir_ + "/steward.db";
    so.synchronous_full = sync_full;
    auto s = store::OpenSqliteStore(so);
    if (!s.ok()) {
      std::fprintf(stderr, "store: %s\n", s.error().ToString().c_str());
      return false;
    }
    store_ = std::move(*s);
    engine::EngineOptions eo;
    eo.config.namespace_name = kNamespace;
    eo.config.domain = "localhost";
    config_ = eo.config;
    auto e = engine::Engine::Create(eo, client, *store_);
    if (!e.ok()) {
      std::fprintf(stderr, "engine: %s\n", e.error().ToString().c_str());
      return false;
    }
    engine_ = std::move(*e);
    if (Status st = engine_->Start(); !st.ok()) {
      std::fprintf(stderr, "engine start: %s\n", st.ToString().c_str());
      return false;
    }
    api::ApiOptions ao;
    ao.token = kToken;
    ao.workers = api_workers;
    ao.http.max_connections = ao.http.max_connections_per_client = max_connections;
    api::ApiDeps deps;
    deps.store = store_.get();
    deps.intents = &engine_->intents();
    deps.config = &config_;
    auto a = api::ApiServer::Start(ao, deps);
    if (!a.ok()) {
      std::fprintf(stderr, "api: %s\n", a.error().ToString().c_str());
      return false;
    }
    api_ = std::move(*a);

    // The probe: suspended, settled (the engine writes its status once, then leaves it).
    auto put = engine_->intents().Put("probe", BenchProjectSpec());
    if (!put.ok()) {
      std::fprintf(stderr, "probe: %s\n", put.error().ToString().c_str());
      return false;
    }
    probe_id_ = put->record.id;
    const auto deadline = BenchClock::now() + std::chrono::seconds(30);
    for (;;) {
      auto r = store_->GetProject(probe_id_);
      if (r.ok() && r->phase == "Suspended") break;
      if (BenchClock::now() > deadline) {
        std::fprintf(stderr, "probe never Suspended\n");
        return false;
      }
      std::this_thread::sleep_for(milliseconds(20));  // polling a condition with a deadline
    }
    return true;
  }

  // One status write of the probe (a new message); the new record version, or 0 on failure.
  int64_t WriteProbeStatus(int n) {
    auto r = store_->MutateProject(
        probe_id_,
        [n](store::ProjectRecord& rec, const std::vector<store::Credential>&, store::Mutation&) {
          auto j = ParseJson(rec.status_json);
          Json status = j.ok() ? *j : Json::object();
          status["message"] = "watch_bench sample " + std::to_string(n);
          rec.status_json = DumpJson(status);
          return Status::Ok();
        });
    if (!r.ok()) {
      std::fprintf(stderr, "probe write: %s\n", r.error().ToString().c_str());
      return 0;
    }
    return r->version;
  }

  Round Run(int watchers, int samples, int projects, int round_index) {
    Round out;
    out.watchers = watchers;
    out.load_before = LoadAverage();
    const auto wall0 = BenchClock::now();
    const double cpu0 = ProcessCpuSeconds();
    ChangeCounter counted(*store_);  // the engine is quiet: no change is under way
    Watchers background, probe;
    if (!probe.Open(1, api_->port(), "/v1/watch?project=probe&initial=false", kToken) ||
        !probe.WaitStarted(milliseconds(60000))) {
      std::fprintf(stderr, "the probe watcher did not start\n");
      return out;
    }
    if (watchers > 0 &&
        (!background.Open(watchers, api_->port(), "/v1/watch?initial=false", kToken) ||
         !background.WaitStarted(milliseconds(60000)))) {
      std::fprintf(stderr, "the watchers did not start\n");
      return out;
    }
    net::HttpClient::Options o;
    o.port = api_->port();
    o.bearer_token = kToken;
    o.timeout = milliseconds(30000);
    auto reader = net::HttpClient::Create(o);
    // The answer to GET /v1/projects/probe shows sample `n`.
    auto shows = [&](int n) { return ProbeShows(*reader, n); };
    // Warm-up: also waits until every stream is registered (its head is sent just before).
    int sample = round_index * 100000;
    for (int i = 0, good = 0; good < kWarmup; ++i) {
      if (i > kWarmup + 50) {
        std::fprintf(stderr, "warm-up: the watchers do not all see the probe's changes\n");
        return out;
      }
      int64_t v = WriteProbeStatus(++sample);
      if (v == 0) return out;
      bool all = shows(sample) && probe.WaitReached(v, milliseconds(5000)).has_value() &&
                 (watchers == 0 || background.WaitReached(v, milliseconds(5000)).has_value());
      good = all ? good + 1 : 0;
    }
    for (int i = 0; i < samples; ++i) {
      const auto t0 = BenchClock::now();
      int64_t v = WriteProbeStatus(++sample);
      const auto t1 = BenchClock::now();
      if (v == 0) return out;
      int reads = 1;
      while (!shows(sample)) {
        if (++reads > 1000) {
          std::fprintf(stderr, "sample %d: GET never showed it\n", i);
          return out;
        }
      }
      const auto t2 = BenchClock::now();
      auto seen = probe.WaitReached(v, milliseconds(30000));
      if (!seen) {
        std::fprintf(stderr, "sample %d: the probe watcher never saw version %lld\n", i,
                     static_cast<long long>(v));
        return out;
      }
      out.commit_ms.push_back(Ms(t1 - t0));
      out.visible_ms.push_back(Ms(t2 - t0));
      out.watch_ms.push_back(Ms(*seen - t0));
      if (watchers > 0) {
        auto all = background.WaitReached(v, milliseconds(30000));
        if (!all) {
          std::fprintf(stderr, "sample %d: not every watcher saw version %lld\n", i,
                       static_cast<long long>(v));
          return out;
        }
        out.all_ms.push_back(Ms(*all - t0));
      }
    }

    // Throughput: `projects` starts at once, while a sampler writes the probe one write at a
    // time and measures commit → visible as above.
    {
      RunningCounter running(*store_);
      std::vector<std::string> ids;
      std::atomic<bool> burst_over{false};
      std::atomic<bool> sampler_failed{false};
      std::thread sampler([&, next = sample] {
        auto client = net::HttpClient::Create(o);
        int n = next;
        auto tick = BenchClock::now();
        while (!burst_over.load()) {
          // One write per interval (pacing a load generator, not waiting for a condition), so
          // the probe adds a few commits per second to the burst's, not thousands.
          tick += burst_interval_;
          std::this_thread::sleep_until(tick);
          const auto t0 = BenchClock::now();
          if (WriteProbeStatus(++n) == 0) break;
          for (int reads = 0; !ProbeShows(*client, n); ++reads) {
            if (reads > 1000) {
              sampler_failed = true;
              return;
            }
          }
          out.burst_visible_ms.push_back(Ms(BenchClock::now() - t0));
        }
      });
      struct Join {
        std::thread& t;
        std::atomic<bool>& over;
        ~Join() {
          over = true;
          if (t.joinable()) t.join();
        }
      } join{sampler, burst_over};
      const auto t0 = BenchClock::now();
      for (int i = 0; i < projects; ++i) {
        auto put = engine_->intents().Put(
            "r" + std::to_string(round_index) + "-" + std::to_string(i), BenchProjectSpec(), "",
            /*start=*/true);
        if (!put.ok()) {
          std::fprintf(stderr, "put: %s\n", put.error().ToString().c_str());
          return out;
        }
        ids.push_back(put->record.id);
      }
      if (!running.WaitRunning(static_cast<size_t>(projects), milliseconds(300000))) {
        std::fprintf(stderr, "only %zu of %d Running\n", running.running(), projects);
        return out;
      }
      burst_over = true;
      sampler.join();
      if (sampler_failed) {
        std::fprintf(stderr, "burst sampler: GET never showed a probe write\n");
        return out;
      }
      auto times = running.running_times();
      const double s = times.empty() ? 0 : Seconds(times.back() - t0);
      out.reconcile_s = s;
      out.projects_per_s = s > 0 ? projects / s : 0;
      out.commits_per_s = s > 0 ? static_cast<double>(running.commits()) / s : 0;
      PurgeCounter purged(*store_);
      for (const std::string& id : ids) {
        if (auto d = engine_->intents().Delete(id); !d.ok()) {
          std::fprintf(stderr, "delete: %s\n", d.error().ToString().c_str());
          return out;
        }
      }
      if (!purged.Wait(ids.size(), milliseconds(300000))) {
        std::fprintf(stderr, "the projects were not all purged\n");
        return out;
      }
    }
    out.cpu_s = ProcessCpuSeconds() - cpu0;
    out.wall_s = Seconds(BenchClock::now() - wall0);
    if (watchers > 0) {
      out.changes = counted.changes();
      out.order_complete = background.WaitEvents(out.changes, milliseconds(60000));
      out.order = background.order();
    }
    background.Close();
    probe.Close();
    out.reader_cpu_s = background.reader_cpu_s() + probe.reader_cpu_s();
    out.watcher_bytes = background.bytes() + probe.bytes();
    out.slow_drops = background.slow_consumer_errors() + probe.slow_consumer_errors();
    out.load_after = LoadAverage();
    out.ok = true;
    return out;
  }

 private:
  std::string dir_;
  std::unique_ptr<cluster::EmbeddedCluster> cluster_;
  std::unique_ptr<store::Store> store_;
  engine::EngineConfig config_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<api::ApiServer> api_;
  std::string probe_id_;
  milliseconds burst_interval_{20};
};

int Main(int argc, char** argv) {
  std::vector<int> counts = {0, 100, 1000};
  int samples = 300;
  int projects = 100;
  std::string sync = "normal";
  int api_workers = 8;
  CLI::App cli(
      "Watch streams and the commit path: commit -> status-visible latency and reconcile "
      "throughput with W SSE watchers.",
      "watch_bench");
  AddFlag(cli, "--watchers", &counts, "watcher counts, one round each (comma-separated)")
      ->delimiter(',')
      ->check(CLI::Range(0, 100000));
  AddFlag(cli, "--samples", &samples, "status writes measured per round")
      ->check(CLI::Range(10, 1000000));
  AddFlag(cli, "--projects", &projects, "projects started at once for the throughput figure")
      ->check(CLI::Range(1, 100000));
  AddFlag(cli, "--store-sync", &sync, "SQLite synchronous mode")
      ->check(CLI::IsMember({"normal", "full"}));
  AddFlag(cli, "--api-workers", &api_workers, "the API server's workers")
      ->check(CLI::Range(1, 1024));
  int interval_ms = 20;
  AddFlag(cli, "--burst-interval-ms", &interval_ms,
          "one probe write per this many ms while the projects start")
      ->check(CLI::Range(1, 10000));
  if (auto exit_code = ParseFlags(cli, argc, argv)) return *exit_code;
  if (counts.empty()) {
    std::fprintf(stderr, "watch_bench: --watchers needs at least one count\n");
    return 2;
  }
  const int most = *std::max_element(counts.begin(), counts.end());
  const rlim_t files = RaiseFileLimit();
  std::printf("watch_bench: %ld cores, load average %s before the run\ncommand: %s\n",
              sysconf(_SC_NPROCESSORS_ONLN), LoadAverage().c_str(),
              CommandLine(argc, argv).c_str());
  std::printf("open-file limit %llu; API max_connections %d; store synchronous=%s\n",
              static_cast<unsigned long long>(files), most + 64, sync.c_str());
  if (files < static_cast<rlim_t>(2 * most + 256)) {
    std::fprintf(stderr, "the open-file limit is too low for %d watchers\n", most);
    return 1;
  }
  spdlog::set_level(spdlog::level::warn);
  const auto begin = BenchClock::now();
  Bench bench;
  bench.set_burst_interval(milliseconds(interval_ms));
  if (!bench.Setup(sync == "full", api_workers, static_cast<size_t>(most + 64))) return 1;

  std::vector<Round> rounds;
  for (size_t i = 0; i < counts.size(); ++i) {
    Round r = bench.Run(counts[i], samples, projects, static_cast<int>(i));
    if (!r.ok) {
      std::fprintf(stderr, "round with %d watchers failed\n", counts[i]);
      return 1;
    }
    auto pct = [](std::vector<double> v, double p) {
      if (v.empty()) return std::string("-");
      char b[32];
      std::snprintf(b, sizeof b, "%.3f", Percentile(v, p));
      return std::string(b);
    };
    std::printf(
        "%4d watchers: commit p50 %s p99 %s ms; visible (GET) p50 %s p99 %s ms; watch p50 %s "
        "p99 %s ms; all watchers p50 %s p99 %s ms; %d starts in %.2f s = %.1f projects/s (%.0f "
        "commits/s); CPU %.1f s (the watchers' readers %.1f s) in %.1f s; watchers read %.1f "
        "MiB, %d SlowConsumer; load %s → %s\n",
        r.watchers, pct(r.commit_ms, 50).c_str(), pct(r.commit_ms, 99).c_str(),
        pct(r.visible_ms, 50).c_str(), pct(r.visible_ms, 99).c_str(), pct(r.watch_ms, 50).c_str(),
        pct(r.watch_ms, 99).c_str(), pct(r.all_ms, 50).c_str(), pct(r.all_ms, 99).c_str(), projects,
        r.reconcile_s, r.projects_per_s, r.commits_per_s, r.cpu_s, r.reader_cpu_s, r.wall_s,
        MiB(static_cast<size_t>(r.watcher_bytes)), r.slow_drops, r.load_before.c_str(),
        r.load_after.c_str());
    std::printf("      while the %d start: visible (GET) p50 %s p99 %s ms over %zu probe writes",
                projects, pct(r.burst_visible_ms, 50).c_str(), pct(r.burst_visible_ms, 99).c_str(),
                r.burst_visible_ms.size());
    if (r.watchers > 0) {
      const bool every = r.order_complete && r.order.identical && r.order.out_of_order == 0 &&
                         r.order.fewest == r.changes && r.order.most == r.changes;
      std::printf(
          "; every watcher read every change in order: %s (%llu changes committed; each "
          "watcher read %llu to %llu events, %llu ids out of order, all alike: %s)",
          every ? "yes" : "NO", static_cast<unsigned long long>(r.changes),
          static_cast<unsigned long long>(r.order.fewest),
          static_cast<unsigned long long>(r.order.most),
          static_cast<unsigned long long>(r.order.out_of_order), r.order.identical ? "yes" : "no");
    }
    std::printf("\n");
    std::fflush(stdout);
    rounds.push_back(std::move(r));
  }

  auto p = [](std::vector<double> v, double q) { return v.empty() ? 0.0 : Percentile(v, q); };
  std::printf("\nsummary (%d samples per count, %d starts; latencies in ms):\n", samples, projects);
  std::printf("  %8s %8s %8s %8s %8s %8s %8s %8s %8s %10s %9s %6s\n", "watchers", "commit50",
              "commit99", "visib50", "visib99", "watch50", "watch99", "all50", "all99",
              "projects/s", "commits/s", "load");
  for (const Round& r : rounds) {
    std::printf("  %8d %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %10.1f %9.0f %6s\n",
                r.watchers, p(r.commit_ms, 50), p(r.commit_ms, 99), p(r.visible_ms, 50),
                p(r.visible_ms, 99), p(r.watch_ms, 50), p(r.watch_ms, 99), p(r.all_ms, 50),
                p(r.all_ms, 99), r.projects_per_s, r.commits_per_s, r.load_after.c_str());
  }
  const Round* none = nullptr;
  const Round* max = nullptr;
  for (const Round& r : rounds) {
    if (r.watchers == 0) none = &r;
    if (max == nullptr || r.watchers > max->watchers) max = &r;
  }
  if (none != nullptr && max != nullptr && max != none) {
    const double visible = p(max->visible_ms, 99) / p(none->visible_ms, 99);
    std::printf("goal: p99 visible(%d) / p99 visible(0) = %.3f / %.3f ms = %.2f (bound 1.2: %s)\n",
                max->watchers, p(max->visible_ms, 99), p(none->visible_ms, 99), visible,
                visible <= 1.2 ? "met" : "missed");
    const double burst = p(max->burst_visible_ms, 99) / p(none->burst_visible_ms, 99);
    std::printf(
        "goal (issue 18 §5): while %d projects start, p99 visible(%d) / p99 visible(0) = %.3f / "
        "%.3f ms = %.2f (bound 1.2: %s)\n",
        projects, max->watchers, p(max->burst_visible_ms, 99), p(none->burst_visible_ms, 99), burst,
        burst <= 1.2 ? "met" : "missed");
    std::printf(
        "also: p99 commit ratio %.2f, p99 watch ratio %.2f, throughput ratio %.2f (%d vs 0 "
        "watchers)\n",
        p(max->commit_ms, 99) / p(none->commit_ms, 99),
        p(max->watch_ms, 99) / p(none->watch_ms, 99),
        none->projects_per_s > 0 ? max->projects_per_s / none->projects_per_s : 0.0, max->watchers);
  }
  std::printf("watch_bench took %.1f s (load average %s at the end)\n",
              Seconds(BenchClock::now() - begin), LoadAverage().c_str());
  return 0;
}

}  // namespace
}  // namespace steward::bench

int main(int argc, char** argv) { return steward::bench::Main(argc, argv); }
