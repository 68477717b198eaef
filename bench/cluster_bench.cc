// Figures for the embedded cluster's API server: GETs/s over keep-alive, creates/s, listing
// 10,000 Deployments (JSON and Table), watch fan-out to 50 watchers (latency and throughput),
// and memory per byte of stored JSON. See docs/benchmarks.md for the goals and the figures.
//
//   build/bench/cluster_bench [--objects N] [--seconds S] [--threads T] [--watchers W]
//                             [--watch-events E] [--latency-events L] [--connections C]
//                             [--api-threads A] [--no-wrk]
//                             [--only get|get-plain|get-tls|get-inprocess|create|list|watch]
//
// The client and the server share this machine's cores. Every throughput figure is printed
// with the CPU time the server itself used, so the server's share can be told from the
// client's: with the in-process client by subtracting the client threads' CPU time from the
// process's, with wrk (a separate process, when installed) directly.
// Each figure is printed with what it measures; nothing here passes or fails.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "cluster/apiserver/tables.h"
#include "cluster/embedded_cluster.h"
#include "common/log.h"
#include "net/http_client.h"

namespace steward::bench {
namespace {

struct Flags {
  int objects = 10000;
  double seconds = 5;
  int threads = 2;
  int watchers = 50;
  int watch_events = 2000;
  int latency_events = 500;
  int connections = 16;
  int api_threads = 2;
  std::string only;  // "" = everything
  bool wrk = true;

  // `section` runs when --only names it or its prefix before '-' ("get" runs "get-tls").
  bool Runs(const std::string& section) const {
    return only.empty() || only == section || section.rfind(only + "-", 0) == 0;
  }
};

std::unique_ptr<net::HttpClient> Client(cluster::EmbeddedCluster& c, bool tls = true) {
  net::HttpClient::Options o;
  o.port = c.api_port();
  o.tls = tls;
  o.ca_pem = c.ca_pem();
  o.bearer_token = c.token();
  o.timeout = std::chrono::seconds(60);
  return net::HttpClient::Create(o);
}

bool Post(net::HttpClient& client, const std::string& path, const std::string& body) {
  auto r = client.Request("POST", path, body, net::Headers{});
  return r.ok() && r->status == 201;
}

// CPU accounting of one measured interval: the process's CPU time, minus what the in-process
// client threads used, is the server's.
struct Interval {
  BenchClock::time_point start = BenchClock::now();
  double process_cpu_start = ProcessCpuSeconds();
  std::atomic<double> client_cpu{0};

  // Starts the interval again (client CPU added so far is dropped).
  void Restart() {
    start = BenchClock::now();
    process_cpu_start = ProcessCpuSeconds();
    client_cpu = 0;
  }

  void AddClientCpu(double seconds) {
    double old = client_cpu.load();
    while (!client_cpu.compare_exchange_weak(old, old + seconds)) {
    }
  }
  // Prints "server X µs CPU/op (Y cores), client Z µs CPU/op".
  std::string CpuReport(double operations) const {
    double wall = Seconds(BenchClock::now() - start);
    double process = ProcessCpuSeconds() - process_cpu_start;
    double server = process - client_cpu.load();
    char buf[256];
    std::snprintf(buf, sizeof buf, "server %.0f us CPU/op (%.2f cores busy)%s",
                  server / operations * 1e6, server / wall,
                  client_cpu.load() > 0 ? "" : " [client is another process]");
    std::string out = buf;
    if (client_cpu.load() > 0) {
      std::snprintf(buf, sizeof buf, ", in-process client %.0f us CPU/op",
                    client_cpu.load() / operations * 1e6);
      out += buf;
    }
    return out;
  }
};

constexpr const char* kDeployments = "/apis/apps/v1/namespaces/default/deployments";

void BenchGetInProcess(cluster::EmbeddedCluster& c, const Flags& f, const std::string& path) {
  std::atomic<bool> stop{false};
  std::atomic<long> count{0};
  std::atomic<long> errors{0};
  std::vector<std::thread> threads;
  Interval interval;
  for (int t = 0; t < f.threads; ++t) {
    threads.emplace_back([&] {
      double cpu0 = ThreadCpuSeconds();
      auto client = Client(c);
      long local = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        auto r = client->Request("GET", path);
        if (r.ok() && r->status == 200) {
          ++local;
        } else {
          errors.fetch_add(1);
        }
      }
      client.reset();
      count.fetch_add(local);
      interval.AddClientCpu(ThreadCpuSeconds() - cpu0);
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(f.seconds));
  stop = true;
  for (auto& t : threads) t.join();
  double secs = Seconds(BenchClock::now() - interval.start);
  double n = static_cast<double>(count.load());
  std::printf(
      "GET Deployment, TLS keep-alive, in-process client (%d threads = %d connections): "
      "%.0f requests/s (%ld errors); %s\n",
      f.threads, f.threads, n / secs, errors.load(), interval.CpuReport(n).c_str());
}

void BenchGetWrk(cluster::EmbeddedCluster& c, const Flags& f, const std::string& path,
                 const char* label) {
  Interval interval;
  auto result = RunWrk(c.api_url() + path, 1, f.connections, f.seconds,
                       {"Authorization: Bearer " + c.token(), "Accept: application/json"});
  if (!result) {
    std::printf("GET Deployment, %s, wrk: wrk failed\n", label);
    return;
  }
  std::printf(
      "GET Deployment, %s keep-alive, wrk (1 thread, %d connections): %.0f requests/s "
      "(%ld errors), latency p50 %.2f ms p99 %.2f ms; %s\n",
      label, f.connections, result->requests_per_second, result->errors, result->latency_p50_ms,
      result->latency_p99_ms, interval.CpuReport(static_cast<double>(result->requests)).c_str());
}

// Creates the object GETs read; returns its path.
std::string GetTarget(cluster::EmbeddedCluster& c) {
  auto client = Client(c);
  if (!Post(*client, kDeployments, DeploymentJson("get-target"))) return "";
  return std::string(kDeployments) + "/get-target";
}

void BenchCreatesAndMemory(cluster::EmbeddedCluster& c, const Flags& f) {
  TrimHeap();
  size_t rss_before = RssBytes();
  size_t heap_before = HeapInUseBytes();
  auto [objects_before, bytes_before] = c.storage().Size();
  std::atomic<int> next{0};
  std::atomic<long> errors{0};
  std::vector<std::thread> threads;
  Interval interval;
  for (int t = 0; t < f.threads; ++t) {
    threads.emplace_back([&] {
      double cpu0 = ThreadCpuSeconds();
      auto client = Client(c);
      while (true) {
        int i = next.fetch_add(1);
        if (i >= f.objects) break;
        if (!Post(*client, kDeployments, DeploymentJson("project-" + std::to_string(i)))) {
          errors.fetch_add(1);
        }
      }
      client.reset();
      interval.AddClientCpu(ThreadCpuSeconds() - cpu0);
    });
  }
  for (auto& t : threads) t.join();
  double secs = Seconds(BenchClock::now() - interval.start);
  std::printf(
      "create Deployment, TLS, in-process client (%d threads): %.0f creates/s (%d "
      "objects, %ld errors, %.2f s); %s\n",
      f.threads, f.objects / secs, f.objects, errors.load(), secs,
      interval.CpuReport(f.objects).c_str());

  // Let the server notice the closed connections and free their buffers.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  TrimHeap();
  auto [objects_after, bytes_after] = c.storage().Size();
  size_t rss_after = RssBytes();
  size_t heap_after = HeapInUseBytes();
  double json = static_cast<double>(bytes_after - bytes_before);
  double objects = static_cast<double>(objects_after - objects_before);
  double heap = static_cast<double>(heap_after) - static_cast<double>(heap_before);
  double rss = static_cast<double>(rss_after) - static_cast<double>(rss_before);
  constexpr double kMiB = 1024.0 * 1024.0;
  std::printf(
      "memory: %.0f objects, %.2f MiB of JSON stored (storage().Size()); live heap grew "
      "%.2f MiB (%.2fx the JSON; %.0f bytes/object beyond the JSON); RSS grew %.2f MiB "
      "(%.2fx) after malloc_trim\n",
      objects, json / kMiB, heap / kMiB, heap / json, (heap - json) / objects, rss / kMiB,
      rss / json);
  // The watch history holds one event per write (sharing the stored JSON): drop it to see its
  // share.
  c.storage().Compact();
  TrimHeap();
  double heap_no_history = static_cast<double>(HeapInUseBytes()) - static_cast<double>(heap_before);
  std::printf(
      "memory: of that, the watch history (%.0f events) held %.2f MiB (%.0f bytes/event); "
      "objects alone %.2fx the JSON\n",
      objects, (heap - heap_no_history) / kMiB, (heap - heap_no_history) / objects,
      heap_no_history / json);
}

void BenchList(cluster::EmbeddedCluster& c) {
  auto client = Client(c);
  // The Deployments in "default": the benchmark's, plus the GET target when that ran.
  const int count = static_cast<int>(c.storage().List("deployments.apps", "default").items.size());
  auto timed = [&](const std::string& target, const net::Headers& headers, size_t* bytes,
                   int* status) {
    auto t0 = BenchClock::now();
    auto r = client->Request("GET", target, "", headers);
    double ms = Seconds(BenchClock::now() - t0) * 1000;
    *status = r.ok() ? r->status : 0;
    *bytes = r.ok() ? r->body.size() : 0;
    if (!r.ok()) std::printf("list: %s\n", r.status().ToString().c_str());
    return ms;
  };
  auto report = [&](const char* what, const std::string& target, const net::Headers& headers) {
    std::vector<double> times;
    size_t bytes = 0;
    int status = 0;
    Interval interval;
    double cpu0 = ThreadCpuSeconds();
    for (int round = 0; round < 5; ++round) {
      times.push_back(timed(target, headers, &bytes, &status));
      if (status != 200) {
        std::printf("list %s: failed with %d\n", what, status);
        return;
      }
    }
    interval.AddClientCpu(ThreadCpuSeconds() - cpu0);
    double median = Percentile(times, 50);  // sorts `times`
    std::printf(
        "list %d Deployments %s: median %.1f ms, best %.1f ms (5 rounds; %.1f MiB body); "
        "%s\n",
        count, what, median, times.front(), static_cast<double>(bytes) / (1024.0 * 1024.0),
        interval.CpuReport(5).c_str());
  };
  report("as JSON", kDeployments, {});
  net::Headers table;
  table.Add("Accept",
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
            "g=meta.k8s.io,application/json");
  report("as a Table (kubectl get's Accept, rows with metadata)", kDeployments, table);

  // kubectl get pages by 500 (--chunk-size); time the whole walk.
  Interval walk;
  double walk_cpu0 = ThreadCpuSeconds();
  auto t0 = BenchClock::now();
  int pages = 0;
  std::string cont;
  while (true) {
    std::string target = std::string(kDeployments) + "?limit=500";
    if (!cont.empty()) target += "&continue=" + cont;
    auto r = client->Request("GET", target, "", table);
    if (!r.ok() || r->status != 200) {
      std::printf("list pages: failed\n");
      return;
    }
    ++pages;
    auto parsed = ParseJson(r->body);
    cont = parsed.ok() ? GetString((*parsed)["metadata"], "continue") : "";
    if (cont.empty()) break;
  }
  walk.AddClientCpu(ThreadCpuSeconds() - walk_cpu0);
  std::printf(
      "list %d Deployments as a Table in pages of 500 (what kubectl get does): %.1f ms "
      "for %d pages (client-side JSON parsing of each page included); %s\n",
      count, Seconds(BenchClock::now() - t0) * 1000, pages, walk.CpuReport(pages).c_str());

  // Where the Table's time goes, in process (no HTTP): the steps the REST handler takes.
  {
    const cluster::ResourceType* rt = cluster::FindResource("apps", "v1", "deployments");
    auto t_start = BenchClock::now();
    auto records = c.storage().List(rt->GroupResource(), "default");
    auto t_listed = BenchClock::now();
    std::vector<Json> objects;
    objects.reserve(records.items.size());
    for (const auto& rec : records.items) objects.push_back(rec.Parse());
    auto t_parsed = BenchClock::now();
    Json built = cluster::ToTable(*rt, objects, Json::object(), std::chrono::system_clock::now(),
                                  cluster::TableIncludeObject::kMetadata);
    auto t_table = BenchClock::now();
    std::string body = DumpJson(built);
    auto t_dumped = BenchClock::now();
    built = nullptr;
    objects.clear();
    auto t_freed = BenchClock::now();
    auto ms = [](auto a, auto b) { return Seconds(b - a) * 1000; };
    std::printf(
        "list as a Table, in-process steps: storage list %.1f ms, parse %zu objects %.1f "
        "ms, build table %.1f ms, serialise %.1f ms, free %.1f ms\n",
        ms(t_start, t_listed), records.items.size(), ms(t_listed, t_parsed), ms(t_parsed, t_table),
        ms(t_table, t_dumped), ms(t_dumped, t_freed));
  }

  size_t bytes = 0;
  int status = 0;
  double ms = timed(std::string(kDeployments) + "?labelSelector=steward.io%2Fproject%3Dproject-42",
                    {}, &bytes, &status);
  std::printf("list by label selector (1 of %d Deployments): %.2f ms\n", count, ms);
}

// W watch streams on one namespace's Deployments, each in its own thread with its own TLS
// connection, recording when each named event arrives.
class WatchFleet {
 public:
  // Events are named PREFIX-<i> for i < expected; a "PREFIX-end" object ends every stream.
  // The watcher threads' CPU time is added to `interval` as the client's.
  WatchFleet(cluster::EmbeddedCluster& c, const std::string& ns, int watchers,
             const std::string& prefix, int expected, Interval& interval)
      : prefix_(prefix), received_(static_cast<size_t>(watchers)) {
    std::string rv = std::to_string(c.storage().CurrentRevision());
    for (auto& r : received_) r.assign(static_cast<size_t>(expected), -1);
    for (int w = 0; w < watchers; ++w) {
      threads_.emplace_back([this, &c, &interval, ns, rv, w] {
        double cpu0 = ThreadCpuSeconds();
        auto client = Client(c);
        std::string pending;
        auto& mine = received_[static_cast<size_t>(w)];
        auto r = client->Stream(
            "GET", "/apis/apps/v1/namespaces/" + ns + "/deployments?watch=1&resourceVersion=" + rv,
            [&](std::string_view data) {
              double now = Seconds(BenchClock::now().time_since_epoch());
              pending.append(data);
              size_t start = 0;
              bool more = true;
              for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos;
                   start = nl + 1) {
                std::string_view line(pending.data() + start, nl - start);
                size_t meta = line.find("\"metadata\":");
                size_t at = line.find("\"name\":\"", meta == std::string::npos ? 0 : meta);
                if (at == std::string_view::npos) continue;
                std::string_view name = line.substr(at + 8);
                name = name.substr(0, name.find('"'));
                if (name.substr(0, prefix_.size() + 1) != prefix_ + "-") {
                  if (name.rfind("sync-", 0) == 0) {
                    cpu0 = ThreadCpuSeconds();  // measure from the sync on
                    synced_.fetch_add(1);
                  }
                  continue;
                }
                name.remove_prefix(prefix_.size() + 1);
                if (name == "end") {
                  more = false;
                  break;
                }
                size_t i = static_cast<size_t>(std::atol(std::string(name).c_str()));
                if (i < mine.size() && mine[i] < 0) mine[i] = now;
              }
              pending.erase(0, start);
              return more;
            },
            net::Headers{}, std::chrono::seconds(300));
        if (!r.ok()) std::printf("watch: %s\n", r.status().ToString().c_str());
        client.reset();
        interval.AddClientCpu(ThreadCpuSeconds() - cpu0);
      });
    }
  }

  // Every stream has seen one "sync-*" event (so all are connected).
  int synced() const { return synced_.load(); }
  void Join() {
    for (auto& t : threads_) t.join();
  }
  // Arrival time (steady clock seconds) of event i at watcher w; -1 when it never arrived.
  double At(size_t w, size_t i) const { return received_[w][i]; }
  size_t watchers() const { return received_.size(); }

 private:
  std::string prefix_;
  std::vector<std::vector<double>> received_;
  std::atomic<int> synced_{0};
  std::vector<std::thread> threads_;
};

// Writes sync objects until every watcher of the fleet has seen one (so later events are not
// measured against a stream that was still connecting).
bool SyncFleet(net::HttpClient& writer, const std::string& ns, const WatchFleet& fleet,
               const std::string& tag) {
  static int counter = 0;
  auto deadline = BenchClock::now() + std::chrono::seconds(30);
  std::string path = "/apis/apps/v1/namespaces/" + ns + "/deployments";
  if (!Post(writer, path, DeploymentJson("sync-" + tag + "-" + std::to_string(counter++)))) {
    return false;
  }
  while (fleet.synced() < static_cast<int>(fleet.watchers())) {
    if (BenchClock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

void BenchWatch(cluster::EmbeddedCluster& c, const Flags& f) {
  const std::string ns = "bench-watch";
  const std::string path = "/apis/apps/v1/namespaces/" + ns + "/deployments";
  auto writer = Client(c);
  (void)writer->Request("POST", "/api/v1/namespaces", R"({"metadata":{"name":"bench-watch"}})",
                        net::Headers{});

  // Latency: paced writes, one every 4 ms; for each, when did every watcher have it?
  {
    Interval interval;
    WatchFleet fleet(c, ns, f.watchers, "lat", f.latency_events, interval);
    if (!SyncFleet(*writer, ns, fleet, "lat")) std::printf("watch latency: sync failed\n");
    std::vector<double> written(static_cast<size_t>(f.latency_events));
    auto next = BenchClock::now();
    for (int i = 0; i < f.latency_events; ++i) {
      std::this_thread::sleep_until(next);
      next += std::chrono::milliseconds(4);
      written[static_cast<size_t>(i)] = Seconds(BenchClock::now().time_since_epoch());
      Post(*writer, path, DeploymentJson("lat-" + std::to_string(i)));
    }
    Post(*writer, path, DeploymentJson("lat-end"));
    fleet.Join();
    std::vector<double> all, each;
    long missing = 0;
    for (size_t i = 0; i < written.size(); ++i) {
      double last = 0;
      for (size_t w = 0; w < fleet.watchers(); ++w) {
        double at = fleet.At(w, i);
        if (at < 0) {
          ++missing;
          continue;
        }
        each.push_back((at - written[i]) * 1000);
        last = std::max(last, at - written[i]);
      }
      all.push_back(last * 1000);
    }
    std::vector<double> all_sorted = all;
    std::printf(
        "watch latency, %d watchers, %d Deployment writes 4 ms apart (TLS): write to "
        "delivery at ALL watchers p50 %.2f ms, p99 %.2f ms, max %.2f ms; per delivery "
        "p50 %.2f ms, p99 %.2f ms (%ld missing)\n",
        f.watchers, f.latency_events, Percentile(all, 50), Percentile(all, 99),
        Percentile(all_sorted, 100), Percentile(each, 50), Percentile(each, 99), missing);
  }

  // Throughput: writes as fast as --threads writers can make them.
  {
    Interval interval;
    WatchFleet fleet(c, ns, f.watchers, "tput", f.watch_events, interval);
    if (!SyncFleet(*writer, ns, fleet, "tput")) std::printf("watch throughput: sync failed\n");
    interval.Restart();
    double start = Seconds(BenchClock::now().time_since_epoch());
    std::atomic<int> next{0};
    std::vector<std::thread> writers;
    for (int t = 0; t < f.threads; ++t) {
      writers.emplace_back([&] {
        double cpu0 = ThreadCpuSeconds();
        auto client = Client(c);
        for (int i; (i = next.fetch_add(1)) < f.watch_events;) {
          Post(*client, path, DeploymentJson("tput-" + std::to_string(i)));
        }
        client.reset();
        interval.AddClientCpu(ThreadCpuSeconds() - cpu0);
      });
    }
    for (auto& t : writers) t.join();
    double writes_done = Seconds(BenchClock::now().time_since_epoch());
    Post(*writer, path, DeploymentJson("tput-end"));
    fleet.Join();
    double last = start;
    long delivered = 0;
    for (size_t w = 0; w < fleet.watchers(); ++w) {
      for (int i = 0; i < f.watch_events; ++i) {
        double at = fleet.At(w, static_cast<size_t>(i));
        if (at >= 0) {
          ++delivered;
          last = std::max(last, at);
        }
      }
    }
    double secs = last - start;
    std::printf(
        "watch fan-out throughput: %d watchers x %d Deployment writes (%d writer "
        "threads) = %ld events (1.4 KB each) delivered in %.2f s: %.0f events/s (writes "
        "took %.2f s, last delivery %.0f ms after the last write); %s\n",
        f.watchers, f.watch_events, f.threads, delivered, secs,
        static_cast<double>(delivered) / secs, writes_done - start, (last - writes_done) * 1000,
        interval.CpuReport(static_cast<double>(delivered)).c_str());
  }
}

StatusOr<std::unique_ptr<cluster::EmbeddedCluster>> StartCluster(const Flags& f, bool tls) {
  cluster::EmbeddedCluster::Options o;
  o.controllers = false;  // the bare API server: no ReplicaSets or Pods for these Deployments
  o.ingress = false;
  o.tls = tls;
  o.api_threads = f.api_threads;
  return cluster::EmbeddedCluster::Start(o);
}

int Main(int argc, char** argv) {
  Flags f;
  CLI::App cli("Figures for the embedded cluster's API server.", "cluster_bench");
  AddFlag(cli, "--objects", &f.objects, "objects to create")->check(CLI::Range(1, 10000000));
  AddFlag(cli, "--seconds", &f.seconds, "how long each load runs")->check(CLI::Range(0.1, 86400.0));
  AddFlag(cli, "--threads", &f.threads, "in-process client threads (and wrk threads)")
      ->check(CLI::Range(1, 1024));
  AddFlag(cli, "--watchers", &f.watchers, "concurrent watches")->check(CLI::Range(1, 100000));
  AddFlag(cli, "--watch-events", &f.watch_events, "events written while they watch")
      ->check(CLI::Range(1, 10000000));
  AddFlag(cli, "--latency-events", &f.latency_events, "events timed for the watch latency")
      ->check(CLI::Range(1, 10000000));
  AddFlag(cli, "--connections", &f.connections, "wrk connections")->check(CLI::Range(1, 100000));
  AddFlag(cli, "--api-threads", &f.api_threads, "the API server's I/O threads")
      ->check(CLI::Range(1, 1024));
  AddFlag(cli, "--only", &f.only, "one section, or a prefix before '-' (get runs get-tls)")
      ->check(CLI::IsMember(
          {"get", "get-plain", "get-tls", "get-inprocess", "create", "list", "watch"}));
  cli.add_flag_function(
      "--no-wrk", [&f](int64_t) { f.wrk = false; }, "skip wrk even when installed");
  if (auto exit_code = ParseFlags(cli, argc, argv)) return *exit_code;
  spdlog::set_level(spdlog::level::warn);
  bool wrk = f.wrk && WrkAvailable();
  std::printf(
      "cluster_bench: %ld cores (load average %s before the run), API server with %d "
      "I/O threads; wrk %s\n",
      sysconf(_SC_NPROCESSORS_ONLN), LoadAverage().c_str(), f.api_threads,
      wrk ? "found" : (f.wrk ? "not installed (skipping its figures)" : "off"));

  if (f.Runs("get-plain") && wrk) {
    // Plain HTTP: the server's cost without TLS.
    auto plain = StartCluster(f, false);
    if (!plain.ok()) {
      std::fprintf(stderr, "cluster: %s\n", plain.status().ToString().c_str());
      return 1;
    }
    auto client = Client(**plain, false);
    if (Post(*client, kDeployments, DeploymentJson("get-target"))) {
      BenchGetWrk(**plain, f, std::string(kDeployments) + "/get-target", "plain HTTP");
    }
    client.reset();
    (*plain)->Stop();
  }

  auto c = StartCluster(f, true);
  if (!c.ok()) {
    std::fprintf(stderr, "cluster: %s\n", c.status().ToString().c_str());
    return 1;
  }
  if (f.Runs("get-tls") || f.Runs("get-inprocess")) {
    std::string path = GetTarget(**c);
    if (path.empty()) {
      std::printf("get: setup failed\n");
    } else {
      if (wrk && f.Runs("get-tls")) BenchGetWrk(**c, f, path, "TLS");
      if (f.Runs("get-inprocess")) BenchGetInProcess(**c, f, path);
    }
  }
  if (f.Runs("create") || f.Runs("list")) BenchCreatesAndMemory(**c, f);
  if (f.Runs("list")) BenchList(**c);
  if (f.Runs("watch")) BenchWatch(**c, f);
  (*c)->Stop();
  return 0;
}

}  // namespace
}  // namespace steward::bench

int main(int argc, char** argv) { return steward::bench::Main(argc, argv); }
