// Figures for the embedded cluster's API server: GETs/s over keep-alive, creates/s, listing
// 10,000 Deployments, watch fan-out to 50 watchers, and memory per byte of stored JSON.
//
//   build/bench/cluster_bench [--objects N] [--seconds S] [--watchers W] [--threads T]
//
// Client and server share this machine's cores, so the figures are lower bounds for the server.
// Each figure is printed with what it measures; nothing here passes or fails.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster/embedded_cluster.h"
#include "common/json.h"
#include "common/log.h"
#include "net/http_client.h"

namespace steward {
namespace {

using BenchClock = std::chrono::steady_clock;

struct Flags {
  int objects = 10000;
  double seconds = 5;
  int watchers = 50;
  int threads = 2;
  int watch_events = 2000;
};

long RssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

double Seconds(BenchClock::duration d) { return std::chrono::duration<double>(d).count(); }

std::unique_ptr<net::HttpClient> Client(cluster::EmbeddedCluster& c) {
  net::HttpClient::Options o;
  o.port = c.api_port();
  o.tls = true;
  o.ca_pem = c.ca_pem();
  o.bearer_token = c.token();
  o.timeout = std::chrono::seconds(60);
  return net::HttpClient::Create(o);
}

std::string DeploymentJson(int i) {
  // A Deployment the size of a Steward project's (about 1.3 KB of JSON).
  std::string name = "project-" + std::to_string(i);
  std::string t = R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"NAME",
    "labels":{"steward.io/project":"NAME","app.kubernetes.io/managed-by":"steward"},
    "annotations":{"steward.io/spec-hash":"0123456789abcdef0123456789abcdef"}},
    "spec":{"replicas":1,"selector":{"matchLabels":{"steward.io/project":"NAME"}},
    "template":{"metadata":{"labels":{"steward.io/project":"NAME"}},"spec":{"containers":[{
    "name":"node-red","image":"nodered/node-red:4.0",
    "ports":[{"name":"web","containerPort":1880},{"name":"management","containerPort":2880}],
    "env":[{"name":"FORGE_PROJECT_ID","value":"NAME"},{"name":"FORGE_CLIENT_ID","valueFrom":
    {"secretKeyRef":{"name":"NAME-credentials","key":"clientId"}}}],
    "resources":{"requests":{"cpu":"100m","memory":"256Mi"},
    "limits":{"cpu":"100m","memory":"384Mi"}}}]}}}})";
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t at = t.find("NAME", pos);
    out += t.substr(pos, at == std::string::npos ? std::string::npos : at - pos);
    if (at == std::string::npos) break;
    out += name;
    pos = at + 4;
  }
  return out;
}

void BenchGets(cluster::EmbeddedCluster& c, const Flags& f) {
  auto setup = Client(c);
  auto created = setup->Request("POST", "/api/v1/namespaces/default/configmaps",
                                R"({"metadata":{"name":"bench"},"data":{"k":"v"}})",
                                net::Headers{});
  if (!created.ok() || created->status != 201) {
    std::printf("get: setup failed\n");
    return;
  }
  std::atomic<bool> stop{false};
  std::atomic<long> count{0};
  std::atomic<long> errors{0};
  std::vector<std::thread> threads;
  auto start = BenchClock::now();
  for (int t = 0; t < f.threads; ++t) {
    threads.emplace_back([&] {
      auto client = Client(c);
      long local = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        auto r = client->Request("GET", "/api/v1/namespaces/default/configmaps/bench");
        if (r.ok() && r->status == 200) {
          ++local;
        } else {
          errors.fetch_add(1);
        }
      }
      count.fetch_add(local);
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(f.seconds));
  stop = true;
  for (auto& t : threads) t.join();
  double secs = Seconds(BenchClock::now() - start);
  std::printf("GET over TLS keep-alive, %d client threads: %.0f requests/s (%ld requests, %ld "
              "errors, %.1f s)\n",
              f.threads, static_cast<double>(count.load()) / secs, count.load(), errors.load(),
              secs);
}

void BenchCreatesAndList(cluster::EmbeddedCluster& c, const Flags& f) {
  long rss_before = RssKb();
  auto [objects_before, bytes_before] = c.storage().Size();
  std::atomic<int> next{0};
  std::atomic<long> errors{0};
  std::vector<std::thread> threads;
  auto start = BenchClock::now();
  for (int t = 0; t < f.threads; ++t) {
    threads.emplace_back([&] {
      auto client = Client(c);
      while (true) {
        int i = next.fetch_add(1);
        if (i >= f.objects) break;
        auto r = client->Request("POST", "/apis/apps/v1/namespaces/default/deployments",
                                 DeploymentJson(i), net::Headers{});
        if (!r.ok() || r->status != 201) errors.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  double secs = Seconds(BenchClock::now() - start);
  std::printf("create Deployment over TLS, %d client threads: %.0f creates/s (%d objects, %ld "
              "errors, %.2f s)\n",
              f.threads, f.objects / secs, f.objects, errors.load(), secs);

  auto [objects_after, bytes_after] = c.storage().Size();
  long rss_after = RssKb();
  double json_mb = static_cast<double>(bytes_after - bytes_before) / (1024.0 * 1024.0);
  double rss_mb = static_cast<double>(rss_after - rss_before) / 1024.0;
  std::printf("memory: %zu objects, %.1f MiB of JSON stored; process RSS grew %.1f MiB "
              "(%.2fx the JSON size; includes the watch history and allocator slack)\n",
              objects_after - objects_before, json_mb, rss_mb, rss_mb / json_mb);

  auto client = Client(c);
  for (int round = 0; round < 3; ++round) {
    auto t0 = BenchClock::now();
    auto r = client->Request("GET", "/apis/apps/v1/namespaces/default/deployments");
    double ms = Seconds(BenchClock::now() - t0) * 1000;
    if (!r.ok() || r->status != 200) {
      std::printf("list: failed: %s\n", r.ok() ? (std::to_string(r->status) + " " + r->body.substr(0, 300)).c_str() : r.status().ToString().c_str());
      return;
    }
    std::printf("list %d Deployments (JSON, one request, %.1f MiB body): %.1f ms\n", f.objects,
                static_cast<double>(r->body.size()) / (1024.0 * 1024.0), ms);
  }
  net::Headers table;
  table.Add("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json");
  auto t0 = BenchClock::now();
  auto r = client->Request("GET", "/apis/apps/v1/namespaces/default/deployments", "", table);
  std::printf("list %d Deployments as a server-side Table (kubectl get): %.1f ms\n", f.objects,
              Seconds(BenchClock::now() - t0) * 1000);
  (void)r;
}

void BenchWatchFanOut(cluster::EmbeddedCluster& c, const Flags& f) {
  std::atomic<int> ready{0};
  std::atomic<long> delivered{0};
  std::vector<BenchClock::time_point> done(static_cast<size_t>(f.watchers));
  std::vector<std::thread> threads;
  std::string rv = std::to_string(c.storage().CurrentRevision());
  for (int w = 0; w < f.watchers; ++w) {
    threads.emplace_back([&, w] {
      auto client = Client(c);
      int seen = 0;
      bool first = true;
      auto r = client->Stream(
          "GET", "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" + rv,
          [&](std::string_view data) {
            if (first) {
              first = false;
            }
            for (char ch : data) {
              if (ch == '\n') ++seen;
            }
            if (seen >= f.watch_events) {
              done[static_cast<size_t>(w)] = BenchClock::now();
              return false;
            }
            return true;
          },
          net::Headers{}, std::chrono::seconds(120));
      delivered.fetch_add(seen);
      (void)r;
    });
  }
  // The watches were opened at `rv`: events written from now on reach all of them.
  (void)ready;
  auto client = Client(c);
  auto start = BenchClock::now();
  for (int i = 0; i < f.watch_events; ++i) {
    (void)client->Request("POST", "/api/v1/namespaces/default/configmaps",
                    R"({"metadata":{"name":"fan-)" + std::to_string(i) +
                        R"("},"data":{"k":"v"}})",
                    net::Headers{});
  }
  auto writes_done = BenchClock::now();
  for (auto& t : threads) t.join();
  BenchClock::time_point last = start;
  for (auto t : done) last = std::max(last, t);
  double secs = Seconds(last - start);
  std::printf("watch fan-out: %d watchers x %d events = %ld events delivered in %.2f s "
              "(%.0f events/s; writes took %.2f s)\n",
              f.watchers, f.watch_events, delivered.load(), secs,
              static_cast<double>(delivered.load()) / secs, Seconds(writes_done - start));
}

int Main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--objects") f.objects = std::atoi(argv[i + 1]);
    if (k == "--seconds") f.seconds = std::atof(argv[i + 1]);
    if (k == "--watchers") f.watchers = std::atoi(argv[i + 1]);
    if (k == "--threads") f.threads = std::atoi(argv[i + 1]);
    if (k == "--watch-events") f.watch_events = std::atoi(argv[i + 1]);
  }
  spdlog::set_level(spdlog::level::warn);
  cluster::EmbeddedCluster::Options o;
  o.controllers = false;  // the bare API server: no ReplicaSets or Pods for these Deployments
  o.ingress = false;
  auto c = cluster::EmbeddedCluster::Start(o);
  if (!c.ok()) {
    std::fprintf(stderr, "cluster: %s\n", c.status().ToString().c_str());
    return 1;
  }
  std::printf("embedded cluster API server at %s, %ld cores\n", (*c)->api_url().c_str(),
              sysconf(_SC_NPROCESSORS_ONLN));
  BenchGets(**c, f);
  BenchCreatesAndList(**c, f);
  BenchWatchFanOut(**c, f);
  (*c)->Stop();
  return 0;
}

}  // namespace
}  // namespace steward

int main(int argc, char** argv) { return steward::Main(argc, argv); }
