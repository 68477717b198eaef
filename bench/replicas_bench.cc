// Several replicas on PostgreSQL (issue 17): N projects started at once through R replicas'
// APIs, every replica's RSS once they all run, and — with R > 1 — a failover: the replica that
// owns the most shards is SIGKILLed, and the benchmark measures the time from the kill until
//   - another replica first acquires one of its shards, and until all of them are acquired
//     (the store's shard history);
//   - the survivors have reconciled every project of those shards (their
//     steward_reconciles_total grown by that many and their work queues empty: re-adopted);
//   - a suspend of `--sample` of its projects, sent through a survivor right after the kill, is
//     Suspended (what a user of a dead replica's project waits for).
//
// Everything runs as real processes: `steward cluster` (profile --profile), R `steward serve`
// (--database on a PostgreSQL 15 server this program starts, replicas: with production Lease
// timings unless --lease-seconds), and this program driving the REST API and reading the store.
//
//   build/bench/replicas_bench [--replicas R] [--projects N] [--profile P] [--lease-seconds L]
//                              [--sample S] [--steward PATH]
//
// Bounds printed beside the figures: takeover ≤ lease duration + 2 s (issue 17). Nothing passes
// or fails.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "api_client/api_client.h"
#include "bench_util.h"
#include "common/file.h"
#include "common/log.h"
#include "engine/model/shard.h"
#include "local_postgres/local_postgres.h"
#include "net/http_client.h"
#include "steward_bench_util.h"
#include "store/postgres_store.h"
#include "torture/child_process.h"

namespace steward::bench {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
constexpr int kShards = 64;

// Sum of a metric's samples in Prometheus text ("name{...} v" and "name v").
double MetricSum(const std::string& text, const std::string& name) {
  double sum = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name, 0) != 0) continue;
    const char next = line.size() > name.size() ? line[name.size()] : '\0';
    if (next != ' ' && next != '{') continue;
    sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

struct Replica {
  std::string name;
  uint16_t port = 0;
  std::unique_ptr<torture::ChildProcess> proc = std::make_unique<torture::ChildProcess>();
};

class Bench {
 public:
  struct Options {
    int replicas = 3;
    long projects = 1000;
    std::string profile = "realistic";
    int lease_seconds = 15;
    int sample = 20;
    std::string steward;
  };
  explicit Bench(Options o) : o_(std::move(o)) {}
  ~Bench() {
    for (auto& r : replicas_) r.proc->Stop(SIGTERM, seconds(20));
    cluster_.Stop(SIGTERM, seconds(20));
    store_.reset();
    if (!dir_.empty()) RemoveTree(dir_);
  }

  Status SetUp();
  Status Burst();
  void Memory();
  Status Failover();

 private:
  Status StartReplica(Replica& r);
  std::string Metrics(const Replica& r);
  StatusOr<std::unique_ptr<api_client::ApiClient>> Api(const Replica& r) const {
    api_client::ApiClientOptions ao;
    ao.server = "http://127.0.0.1:" + std::to_string(r.port);
    ao.token = token_;
    ao.timeout = seconds(60);
    return api_client::ApiClient::Create(ao);
  }

  const Options o_;
  std::string dir_, token_, url_;
  std::unique_ptr<LocalPostgres> pg_;
  std::unique_ptr<store::Store> store_;  // this program's own connection (reads, the feed)
  torture::ChildProcess cluster_;
  std::vector<Replica> replicas_;
};

Status Bench::SetUp() {
  dir_ = MakeTempDir("steward-replicas-bench");
  if (dir_.empty()) return Internal("no temp dir");
  ASSIGN_OR_RETURN(pg_, LocalPostgres::Launch());
  RETURN_IF_ERROR(pg_->CreateDatabase("steward"));
  url_ = pg_->Url("steward");
  token_ = "bench-token-0123456789abcdef0123456789";
  RETURN_IF_ERROR(WritePrivateFile(dir_ + "/token", token_ + "\n"));
  ASSIGN_OR_RETURN(uint16_t api_port, torture::PickFreePort());
  ASSIGN_OR_RETURN(uint16_t ingress_port, torture::PickFreePort());
  RETURN_IF_ERROR(
      cluster_.Start({o_.steward, "cluster", "--listen", "127.0.0.1:" + std::to_string(api_port),
                      "--ingress-listen", "127.0.0.1:" + std::to_string(ingress_port), "--profile",
                      o_.profile, "--data-dir", dir_ + "/cluster", "--kubeconfig-out",
                      dir_ + "/kubeconfig", "--log-level", "warn"},
                     dir_ + "/cluster.log"));
  for (int i = 0; i < o_.replicas; ++i) {
    Replica r;
    r.name = "r" + std::to_string(i);
    ASSIGN_OR_RETURN(r.port, torture::PickFreePort());
    replicas_.push_back(std::move(r));
  }
  // The kubeconfig appears once the cluster serves.
  const auto deadline = BenchClock::now() + seconds(60);
  while (!std::ifstream(dir_ + "/kubeconfig").good()) {
    if (BenchClock::now() > deadline) return Unavailable("steward cluster did not start");
    std::this_thread::sleep_for(milliseconds(50));
  }
  for (Replica& r : replicas_) RETURN_IF_ERROR(StartReplica(r));
  store::PostgresOptions po;
  po.url = url_;
  ASSIGN_OR_RETURN(store_, store::OpenPostgresStore(po));
  if (o_.replicas > 1) {  // every shard owned, by every replica
    const auto settle = BenchClock::now() + seconds(4 * o_.lease_seconds);
    for (;;) {
      auto owners = store_->ListShardOwners();
      std::set<std::string> names;
      size_t owned = 0;
      if (owners.ok()) {
        for (const auto& s : *owners) {
          if (s.owner.empty()) continue;
          ++owned;
          names.insert(s.owner);
        }
      }
      if (owned == kShards && names.size() == replicas_.size()) break;
      if (BenchClock::now() > settle) return Unavailable("the shards did not settle");
      std::this_thread::sleep_for(milliseconds(100));
    }
  }
  return Status::Ok();
}

Status Bench::StartReplica(Replica& r) {
  const std::string config = dir_ + "/" + r.name + ".yaml";
  {
    std::ofstream f(config);
    f << "logLevel: warn\n";
    if (o_.replicas > 1) {
      const int lease = o_.lease_seconds;
      f << "replicas:\n  name: " << r.name << "\n  leaseDuration: " << lease
        << "s\n  renewDeadline: " << lease * 2000 / 3 << "ms\n  retryPeriod: " << lease * 2000 / 15
        << "ms\n";
    }
  }
  RETURN_IF_ERROR(r.proc->Start(
      {o_.steward, "serve", "--config", config, "--listen", "127.0.0.1:" + std::to_string(r.port),
       "--data-dir", dir_ + "/" + r.name, "--kubeconfig", dir_ + "/kubeconfig", "--namespace",
       "default", "--domain", "localhost", "--database", url_, "--api-token-file", dir_ + "/token"},
      dir_ + "/" + r.name + ".log"));
  net::HttpClient::Options http;
  http.port = r.port;
  http.timeout = seconds(5);
  const auto deadline = BenchClock::now() + seconds(120);
  while (BenchClock::now() < deadline) {
    if (!r.proc->Running()) return Unavailable(r.name + " exited; see " + dir_ + "/" + r.name);
    auto client = net::HttpClient::Create(http);
    auto got = client->Request("GET", "/readyz");
    if (got.ok() && got->status == 200) return Status::Ok();
    std::this_thread::sleep_for(milliseconds(100));
  }
  return Unavailable(r.name + " did not become ready");
}

std::string Bench::Metrics(const Replica& r) {
  net::HttpClient::Options http;
  http.port = r.port;
  http.timeout = seconds(5);
  auto client = net::HttpClient::Create(http);
  auto got = client->Request("GET", "/metrics");
  return got.ok() && got->status == 200 ? got->body : "";
}

Status Bench::Burst() {
  RunningCounter running(*store_);
  std::atomic<long> next{0}, refused{0};
  std::vector<double> put_ms;
  Mutex put_mu;
  const auto t0 = BenchClock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < 32; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::unique_ptr<api_client::ApiClient>> clients;
      for (const Replica& r : replicas_) {
        auto c = Api(r);
        if (c.ok()) clients.push_back(std::move(*c));
      }
      std::mt19937_64 rng(static_cast<uint64_t>(t) + 1);
      for (long i = next++; i < o_.projects; i = next++) {
        api_client::ApiClient& api = *clients[rng() % clients.size()];
        Json body = {{"spec", BenchProjectSpec()}, {"start", true}};
        const auto p0 = BenchClock::now();
        auto put = api.Put("/v1/projects/b-" + std::to_string(i), body);
        const double ms = Seconds(BenchClock::now() - p0) * 1e3;
        if (!put.ok()) ++refused;
        MutexLock lock(put_mu);
        put_ms.push_back(ms);
      }
    });
  }
  for (auto& t : threads) t.join();
  const double puts_s = Seconds(BenchClock::now() - t0);
  if (!running.WaitRunning(static_cast<size_t>(o_.projects), milliseconds(600000))) {
    return Status(StatusCode::kDeadlineExceeded,
                  "only " + std::to_string(running.running()) + " Running after 600 s");
  }
  std::vector<double> at;
  for (const auto& t : running.running_times()) at.push_back(Seconds(t - t0));
  std::sort(at.begin(), at.end());
  MutexLock lock(put_mu);
  std::printf(
      "burst: %ld projects PUT at once (start: true) through %d replica(s) at random, 32 "
      "clients: PUTs done after %.1f s (p50 %.0f ms, p99 %.0f ms, %ld refused); Running: first "
      "%.2f s, median %.2f s, p90 %.2f s, all %.2f s\n",
      o_.projects, o_.replicas, puts_s, Percentile(put_ms, 50), Percentile(put_ms, 99),
      refused.load(), at.front(), at[at.size() / 2], at[at.size() * 9 / 10], at.back());
  return Status::Ok();
}

void Bench::Memory() {
  std::this_thread::sleep_for(seconds(3));  // settle: the last status writes and requeues
  size_t total = 0;
  std::printf("memory once all run (VmRSS):");
  for (const Replica& r : replicas_) {
    const size_t rss = RssBytesOf(r.proc->pid());
    total += rss;
    std::printf(" %s %.0f MiB;", r.name.c_str(), MiB(rss));
  }
  std::printf(" all replicas %.0f MiB; the cluster process %.0f MiB\n", MiB(total),
              MiB(RssBytesOf(cluster_.pid())));
}

Status Bench::Failover() {
  ASSIGN_OR_RETURN(auto owners, store_->ListShardOwners());
  std::map<std::string, std::set<int>> by_owner;
  for (const auto& s : owners) by_owner[s.owner].insert(s.shard);
  auto victim_it = std::max_element(replicas_.begin(), replicas_.end(), [&](auto& a, auto& b) {
    return by_owner[a.name].size() < by_owner[b.name].size();
  });
  Replica& victim = *victim_it;
  const std::set<int> shards = by_owner[victim.name];
  ASSIGN_OR_RETURN(auto records, store_->ListProjects({}));
  std::vector<std::string> theirs;
  for (const auto& rec : records) {
    if (shards.contains(engine::ShardOf(rec.id, kShards))) theirs.push_back(rec.name);
  }
  std::vector<const Replica*> survivors;
  double reconciles_before = 0;
  for (const Replica& r : replicas_) {
    if (&r == &victim) continue;
    survivors.push_back(&r);
    reconciles_before += MetricSum(Metrics(r), "steward_reconciles_total");
  }
  ASSIGN_OR_RETURN(auto history_before, store_->ListShardHistory(0, 0));
  const int64_t seq0 = history_before.empty() ? 0 : history_before.back().seq;
  // The sample's suspends are acknowledged by a survivor; Suspended is seen through the feed.
  std::set<std::string> sample(theirs.begin(),
                               theirs.begin() + std::min<size_t>(theirs.size(), o_.sample));
  std::map<std::string, double> suspended_at;
  Mutex mu;
  const auto t_kill = BenchClock::now();
  const int handle = store_->AddListener([&](const store::ProjectChange& c) {
    if (!c.record || c.record->phase != "Suspended" || !sample.contains(c.record->name)) return;
    MutexLock lock(mu);
    suspended_at.emplace(c.record->name, Seconds(BenchClock::now() - t_kill));
  });
  victim.proc->Stop(SIGKILL);
  ASSIGN_OR_RETURN(auto api, Api(*survivors.front()));
  for (const std::string& name : sample) (void)api->Post("/v1/projects/" + name + "/suspend");
  double first = -1, all = -1, adopted = -1;
  std::set<int> acquired;
  const auto deadline = t_kill + seconds(10 * o_.lease_seconds);
  while (BenchClock::now() < deadline) {
    const double now = Seconds(BenchClock::now() - t_kill);
    auto history = store_->ListShardHistory(seq0, 0);
    if (history.ok()) {
      for (const auto& e : *history) {
        if (e.acquired && shards.contains(e.shard) && e.owner != victim.name) {
          acquired.insert(e.shard);
        }
      }
    }
    if (first < 0 && !acquired.empty()) first = now;
    if (all < 0 && acquired.size() == shards.size()) all = now;
    if (all >= 0 && adopted < 0) {
      double reconciles = 0, depth = 0;
      for (const Replica* r : survivors) {
        const std::string m = Metrics(*r);
        reconciles += MetricSum(m, "steward_reconciles_total");
        depth += MetricSum(m, "steward_workqueue_depth");
      }
      if (reconciles - reconciles_before >= static_cast<double>(theirs.size()) && depth == 0) {
        adopted = now;
      }
    }
    bool sample_done = false;
    {
      MutexLock lock(mu);
      sample_done = suspended_at.size() == sample.size();
    }
    if (adopted >= 0 && sample_done) break;
    std::this_thread::sleep_for(milliseconds(50));
  }
  store_->RemoveListener(handle);
  std::vector<double> waits;
  {
    MutexLock lock(mu);
    for (const auto& [name, s] : suspended_at) waits.push_back(s);
  }
  std::sort(waits.begin(), waits.end());
  const int bound_ms = o_.lease_seconds * 1000 + 2000;
  std::printf(
      "failover: SIGKILL of %s (%zu of %d shards, %zu projects); from the kill:\n"
      "  first of its shards acquired by another replica   %.2f s   (bound: lease + 2 s = %.1f s)\n"
      "  all of its shards acquired                         %.2f s   (bound %.1f s)\n"
      "  every project of them reconciled by the survivors  %.2f s\n"
      "  a suspend of %zu of them (sent right after the kill) Suspended: median %.2f s, last "
      "%.2f s\n",
      victim.name.c_str(), shards.size(), kShards, theirs.size(), first, bound_ms / 1e3, all,
      bound_ms / 1e3, adopted, sample.size(), waits.empty() ? -1.0 : waits[waits.size() / 2],
      waits.empty() ? -1.0 : waits.back());
  return Status::Ok();
}

int Main(int argc, char** argv) {
  Bench::Options o;
  CLI::App cli("Several replicas on PostgreSQL: a burst, memory, a failover.", "replicas_bench");
  AddFlag(cli, "--replicas", &o.replicas, "steward serve replicas")->check(CLI::Range(1, 16));
  AddFlag(cli, "--projects", &o.projects, "projects started at once")
      ->check(CLI::Range(1L, 100000L));
  AddFlag(cli, "--profile", &o.profile, "the cluster's profile");
  AddFlag(cli, "--lease-seconds", &o.lease_seconds,
          "replicas.leaseDuration (renewDeadline 2/3 of it, retryPeriod 2/15: client-go's ratios)")
      ->check(CLI::Range(1, 600));
  AddFlag(cli, "--sample", &o.sample, "projects of the killed replica suspended after the kill")
      ->check(CLI::Range(0, 100000));
  AddFlag(cli, "--steward", &o.steward, "the steward binary (default: build/steward beside this)");
  if (auto exit_code = ParseFlags(cli, argc, argv)) return *exit_code;
  if (o.steward.empty()) {
    char self[4096] = {};
    const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    const std::string path = n > 0 ? std::string(self, static_cast<size_t>(n)) : "";
    o.steward = path.substr(0, path.rfind("/bench/")) + "/steward";
  }
  spdlog::set_level(spdlog::level::warn);
  std::printf("replicas_bench: %ld cores, load average %s before the run\ncommand: %s\n",
              sysconf(_SC_NPROCESSORS_ONLN), LoadAverage().c_str(),
              CommandLine(argc, argv).c_str());
  const auto begin = BenchClock::now();
  Bench bench(o);
  Status st = bench.SetUp();
  if (st.ok()) st = bench.Burst();
  if (!st.ok()) {
    std::fprintf(stderr, "replicas_bench: %s\n", st.ToString().c_str());
    return 1;
  }
  bench.Memory();
  if (o.replicas > 1) {
    if (Status failed = bench.Failover(); !failed.ok()) {
      std::fprintf(stderr, "replicas_bench: failover: %s\n", failed.ToString().c_str());
      return 1;
    }
  }
  std::printf("replicas_bench took %.1f s; load average %s at the end\n",
              Seconds(BenchClock::now() - begin), LoadAverage().c_str());
  return 0;
}

}  // namespace
}  // namespace steward::bench

int main(int argc, char** argv) { return steward::bench::Main(argc, argv); }
