// Figures for Steward's Kubernetes client (src/kube): decode throughput of lists and watch
// streams, requests/s through the client over keep-alive, and an informer over N Deployments
// (time to sync, memory per cached object against the objects' JSON size). The API server is the
// embedded cluster in the same process. See docs/benchmarks.md for goals and recorded figures.
//
//   build/bench/kube_bench [--objects N] [--seconds S] [--threads T]
//                          [--only decode|requests|informer]
//
// Nothing here passes or fails; each line says what it measures.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "cluster/embedded_cluster.h"
#include "cluster/model/resource_types.h"
#include "common/json.h"
#include "common/log.h"
#include "kube/client/client.h"
#include "kube/client/watch.h"
#include "kube/informer/informer.h"
#include "kube/test_support/embedded.h"
#include "kube/transport/transport.h"

namespace steward::bench {
namespace {

struct Flags {
  int objects = 10000;
  double seconds = 3;
  int threads = 2;
  std::string only;
  bool Runs(const std::string& section) const { return only.empty() || only == section; }
};

std::shared_ptr<kube::Client> ClientFor(cluster::EmbeddedCluster& c) {
  kube::TransportOptions options;
  options.qps = 0;  // measure the client, not its limiter
  return kube::test_support::ClientFor(c, options);
}

std::string DeploymentWithStatus(int i) {
  Json d = Json::parse(DeploymentJson("project-" + std::to_string(i)));
  d["metadata"]["namespace"] = "default";
  d["metadata"]["uid"] = "0c7a4b36-6f0e-4a51-9e2b-" + std::to_string(100000000000 + i);
  d["metadata"]["resourceVersion"] = std::to_string(1000 + i);
  d["metadata"]["generation"] = 1;
  d["metadata"]["creationTimestamp"] = "2026-11-29T12:00:00Z";
  d["status"] = {{"observedGeneration", 1},
                 {"replicas", 1},
                 {"updatedReplicas", 1},
                 {"readyReplicas", 1},
                 {"availableReplicas", 1}};
  return DumpJson(d);
}

void BenchDecode(const Flags& f) {
  // A list body as the server sends it.
  std::string list = R"({"kind":"DeploymentList","apiVersion":"apps/v1","metadata":)"
                     R"({"resourceVersion":"99999"},"items":[)";
  std::string stream;
  for (int i = 0; i < f.objects; ++i) {
    std::string obj = DeploymentWithStatus(i);
    if (i > 0) list += ',';
    list += obj;
    stream += R"({"type":"MODIFIED","object":)" + obj + "}\n";
  }
  list += "]}";
  double mib = static_cast<double>(list.size()) / (1 << 20);

  auto start = BenchClock::now();
  auto parsed = ParseJson(list);
  double parse_s = Seconds(BenchClock::now() - start);
  if (!parsed.ok()) {
    std::fprintf(stderr, "list parse: %s\n", parsed.error().ToString().c_str());
    return;
  }
  start = BenchClock::now();
  size_t cached_bytes = 0;
  for (const Json& item : (*parsed)["items"]) {
    auto obj = kube::CachedObject::FromJson(item);
    if (obj.ok()) cached_bytes += (*obj)->json().size();
  }
  double cache_s = Seconds(BenchClock::now() - start);
  std::printf(
      "decode list of %d Deployments (%.1f MiB): parse %.0f MiB/s (%.0f ms), to cache objects "
      "%.0f ms (%.1f MiB compact), together %.0f MiB/s\n",
      f.objects, mib, mib / parse_s, parse_s * 1e3, cache_s * 1e3,
      static_cast<double>(cached_bytes) / (1 << 20), mib / (parse_s + cache_s));

  kube::NdjsonFramer framer;
  size_t events = 0;
  start = BenchClock::now();
  constexpr size_t kChunk = 16 * 1024;  // what a TLS record read typically hands over
  for (size_t at = 0; at < stream.size(); at += kChunk) {
    Status s = framer.Feed(std::string_view(stream).substr(at, kChunk), [&](std::string_view l) {
      auto ev = kube::DecodeWatchEvent(l);
      if (!ev.ok()) return ev.error();
      ++events;
      return Status::Ok();
    });
    if (!s.ok()) {
      std::fprintf(stderr, "watch decode: %s\n", s.ToString().c_str());
      return;
    }
  }
  double watch_s = Seconds(BenchClock::now() - start);
  double watch_mib = static_cast<double>(stream.size()) / (1 << 20);
  std::printf(
      "decode watch stream: %zu events (%.1f MiB) framed + decoded in 16 KiB chunks: %.0f MiB/s, "
      "%.0f events/s\n",
      events, watch_mib, watch_mib / watch_s, static_cast<double>(events) / watch_s);
}

void BenchRequests(cluster::EmbeddedCluster& c, const Flags& f) {
  auto client = ClientFor(c);
  Json d = Json::parse(DeploymentJson("get-target"));
  auto created = client->Create(kube::ResourceType::Deployment(), "default", d);
  if (!created.ok() && !created.error().IsAlreadyExists()) {
    std::fprintf(stderr, "create: %s\n", created.error().ToString().c_str());
    return;
  }
  for (int threads : {1, f.threads}) {
    std::atomic<long> done{0}, errors{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> workers;
    auto opened_before = client->transport().stats().connections_opened;
    auto start = BenchClock::now();
    double cpu_start = ProcessCpuSeconds();
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&] {
        while (!stop.load()) {
          auto r = client->Get(kube::ResourceType::Deployment(), "default", "get-target");
          (r.ok() ? done : errors).fetch_add(1);
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(f.seconds));  // measuring window
    stop = true;
    for (auto& w : workers) w.join();
    double wall = Seconds(BenchClock::now() - start);
    double cpu = ProcessCpuSeconds() - cpu_start;
    std::printf(
        "GET Deployment through kube::Client, TLS keep-alive, %d thread(s): %.0f requests/s "
        "(%ld errors, %lu connections opened; client+server %.0f us CPU/request)\n",
        threads, static_cast<double>(done.load()) / wall, errors.load(),
        static_cast<unsigned long>(client->transport().stats().connections_opened - opened_before),
        cpu / static_cast<double>(std::max(1L, done.load())) * 1e6);
  }
}

void BenchInformer(cluster::EmbeddedCluster& c, const Flags& f) {
  const cluster::ResourceType* deployments = cluster::FindKind("apps/v1", "Deployment");
  auto ns = c.api().Create(*cluster::FindKind("v1", "Namespace"), "",
                           Json{{"metadata", {{"name", "informer"}}}});
  if (!ns.ok()) {
    std::fprintf(stderr, "create namespace failed\n");
    return;
  }
  for (int i = 0; i < f.objects; ++i) {
    auto r = c.api().Create(*deployments, "informer",
                            Json::parse(DeploymentJson("project-" + std::to_string(i))));
    if (!r.ok()) {
      std::fprintf(stderr, "create: failed at %d\n", i);
      return;
    }
  }
  auto client = ClientFor(c);
  TrimHeap();
  size_t heap_before = HeapInUseBytes();
  kube::InformerOptions options;
  options.name = "deployments";
  auto start = BenchClock::now();
  {
    kube::Informer informer(
        kube::MakeListerWatcher(client, kube::ResourceType::Deployment(), "informer", ""), options);
    std::atomic<long> adds{0};
    informer.AddHandlers({.on_add = [&](const kube::ObjectRef&) { adds.fetch_add(1); }});
    informer.Start();
    if (!informer.WaitForSync(std::chrono::seconds(60))) {
      std::fprintf(stderr, "informer did not sync within 60 s\n");
      return;
    }
    double sync_s = Seconds(BenchClock::now() - start);
    TrimHeap();
    size_t heap_after = HeapInUseBytes();
    size_t json_bytes = 0;
    for (const auto& obj : informer.List()) json_bytes += obj->json().size();
    double growth = static_cast<double>(heap_after) - static_cast<double>(heap_before);
    auto stats = informer.stats();
    std::printf(
        "informer over %zu Deployments (page size %ld) over TLS: synced in %.0f ms (%ld adds "
        "dispatched, %lu list requests); heap growth %.2f MiB = %.2fx the cached JSON "
        "(%.2f MiB), %.0f bytes per object\n",
        informer.size(), static_cast<long>(options.page_size), sync_s * 1e3, adds.load(),
        static_cast<unsigned long>(stats.lists), growth / (1 << 20),
        growth / static_cast<double>(std::max<size_t>(1, json_bytes)),
        static_cast<double>(json_bytes) / (1 << 20),
        growth / static_cast<double>(std::max<size_t>(1, informer.size())));
    informer.Stop();
  }
}

int Main(int argc, char** argv) {
  Flags f;
  CLI::App cli("Figures for Steward's Kubernetes client.", "kube_bench");
  AddFlag(cli, "--objects", &f.objects, "objects listed, watched and cached")
      ->check(CLI::Range(1, 10000000));
  AddFlag(cli, "--seconds", &f.seconds, "how long the request load runs")
      ->check(CLI::Range(0.1, 86400.0));
  AddFlag(cli, "--threads", &f.threads, "client threads")->check(CLI::Range(1, 1024));
  AddFlag(cli, "--only", &f.only, "run one section (default: all)")
      ->check(CLI::IsMember({"decode", "requests", "informer"}));
  if (auto exit_code = ParseFlags(cli, argc, argv)) return *exit_code;
  spdlog::set_level(spdlog::level::warn);
  std::printf("kube_bench: %ld cores (load average %s before the run), %d objects\n",
              sysconf(_SC_NPROCESSORS_ONLN), LoadAverage().c_str(), f.objects);
  if (f.Runs("decode")) BenchDecode(f);
  if (f.Runs("requests") || f.Runs("informer")) {
    cluster::EmbeddedCluster::Options o;
    o.controllers = false;  // the bare API server: nothing else writes while we measure
    o.ingress = false;
    auto c = cluster::EmbeddedCluster::Start(o);
    if (!c.ok()) {
      std::fprintf(stderr, "cluster: %s\n", c.error().ToString().c_str());
      return 1;
    }
    if (f.Runs("requests")) BenchRequests(**c, f);
    if (f.Runs("informer")) BenchInformer(**c, f);
  }
  return 0;
}

}  // namespace
}  // namespace steward::bench

int main(int argc, char** argv) { return steward::bench::Main(argc, argv); }
