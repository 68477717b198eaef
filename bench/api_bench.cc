// Steward's REST API under load (issue 6 part 4): requests per second for status reads and the
// latency percentiles with many concurrent keep-alive clients.
//
// Set-up: the whole app in this process (app::App::Start: embedded cluster with the instant
// profile, SQLite store and API token in a temporary data dir, engine, API server on a free
// loopback port), then --projects projects PUT through the API with start=true and waited for
// until Running. Four request kinds, each run for --seconds:
//
//   get              GET /v1/projects/{name}, a random project per request
//   list             GET /v1/projects?limit=100
//   put              PUT /v1/projects/{new name} (start=false): a create, committed
//   put-credentials  the same with supplied credentials (spec.credentials): their Secret is
//                    written to the embedded cluster before the commit, on the API's credential
//                    threads (docs/architecture.md "The API's one Kubernetes write")
//
// with two load generators: wrk (one URL: project p-0 for `get`; the reads only) with --clients
// connections, when installed; and an in-process generator of --clients threads, each with its own
// keep-alive net::HttpClient, recording every request's latency. Every request carries the
// bearer token. Client and server share this machine's cores, so the server's CPU per request
// (process CPU minus the client threads' own) is printed too.
//
//   build/bench/api_bench [--projects N] [--clients C] [--seconds S]
//                         [--only get|list|put|put-credentials]
//                         [--no-wrk 1] [--wrk-threads T] [--api-workers W]
//                         [--credential-workers C]
//
// Nothing passes or fails.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <latch>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "app/app.h"
#include "bench_util.h"
#include "common/log.h"
#include "net/http_client.h"
#include "steward_bench_util.h"
#include "store/store.h"

namespace steward::bench {
namespace {

using std::chrono::milliseconds;

uint16_t PortOf(const std::string& url) {
  return static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
}

struct LoadResult {
  long requests = 0, errors = 0;
  double seconds = 0, rps = 0, p50_ms = 0, p99_ms = 0, p999_ms = 0, max_ms = 0;
  double server_cpu_us = 0, client_cpu_us = 0;  // per request
  std::string first_error;
};

struct BenchRequest {
  std::string method = "GET", target, body;
};

// `clients` threads, each with one keep-alive connection, send `make(rng, client, i)` (its i-th
// request) for `seconds` after all have connected; a 2xx answer counts, anything else is an
// error.
template <typename Make>
LoadResult RunInProcess(const app::App& app, int clients, double seconds, Make make) {
  net::HttpClient::Options o;
  o.port = PortOf(app.api_url());
  o.bearer_token = app.api_token();
  o.timeout = std::chrono::seconds(30);
  std::vector<std::vector<double>> lat(clients);
  std::vector<long> errors(clients, 0);
  std::vector<double> thread_cpu(clients, 0);
  std::vector<std::string> first_error(clients);
  std::latch ready(clients + 1);
  std::atomic<bool> go{false}, stop{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      auto client = net::HttpClient::Create(o);
      std::mt19937_64 rng(static_cast<uint64_t>(c) + 1);
      (void)client->Request("GET", "/healthz");  // connect before the clock starts
      net::Headers headers;
      headers.Set("Content-Type", "application/json");
      lat[c].reserve(1 << 14);
      ready.count_down();
      while (!go) std::this_thread::yield();
      const double cpu0 = ThreadCpuSeconds();
      for (long i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        const BenchRequest q = make(rng, c, i);
        const auto s = BenchClock::now();
        auto r = client->Request(q.method, q.target, q.body, headers);
        const double ms = Seconds(BenchClock::now() - s) * 1e3;
        if (!r.ok() || r->status / 100 != 2) {
          if (errors[c]++ == 0) {
            first_error[c] = r.ok() ? std::to_string(r->status) + " " + r->body.substr(0, 200)
                                    : r.error().ToString();
          }
          continue;
        }
        lat[c].push_back(ms);
      }
      thread_cpu[c] = ThreadCpuSeconds() - cpu0;
    });
  }
  ready.arrive_and_wait();
  const double cpu0 = ProcessCpuSeconds();
  const auto t0 = BenchClock::now();
  go = true;
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));  // the measuring window
  stop = true;
  for (auto& t : threads) t.join();
  const double cpu = ProcessCpuSeconds() - cpu0;

  LoadResult r;
  std::vector<double> all;
  double client_cpu = 0;
  for (int c = 0; c < clients; ++c) {
    all.insert(all.end(), lat[c].begin(), lat[c].end());
    r.errors += errors[c];
    client_cpu += thread_cpu[c];
    if (r.first_error.empty()) r.first_error = first_error[c];
  }
  r.requests = static_cast<long>(all.size());
  // Requests finishing after `stop` count too (each thread ends its last request).
  r.seconds = Seconds(BenchClock::now() - t0);
  r.rps = static_cast<double>(r.requests) / r.seconds;
  r.p50_ms = Percentile(all, 50);
  r.p99_ms = Percentile(all, 99);
  r.p999_ms = Percentile(all, 99.9);
  r.max_ms = all.empty() ? 0 : all.back();
  if (r.requests > 0) {
    r.server_cpu_us = (cpu - client_cpu) * 1e6 / static_cast<double>(r.requests);
    r.client_cpu_us = client_cpu * 1e6 / static_cast<double>(r.requests);
  }
  return r;
}

int Main(int argc, char** argv) {
  long n = 100;
  int clients = 200;
  double seconds = 10;
  std::string only;
  int no_wrk = 0;
  int wrk_threads = 2;
  int api_workers = 8;
  int credential_workers = 2;
  CLI::App cli("Steward's API under load: GET, LIST and PUT of projects, requests/s and latency.",
               "api_bench");
  AddFlag(cli, "--projects", &n, "projects to create")->check(CLI::Range(1L, 1000000L));
  AddFlag(cli, "--clients", &clients, "connections (wrk) and threads (in process)")
      ->check(CLI::Range(1, 100000));
  AddFlag(cli, "--seconds", &seconds, "how long each request kind runs")
      ->check(CLI::Range(0.5, 86400.0));
  AddFlag(cli, "--only", &only, "run one request kind (default: all four)")
      ->check(CLI::IsMember({"get", "list", "put", "put-credentials"}));
  AddFlag(cli, "--no-wrk", &no_wrk, "1: skip wrk even when installed")->check(CLI::Range(0, 1));
  AddFlag(cli, "--wrk-threads", &wrk_threads, "wrk threads")->check(CLI::Range(1, 1024));
  CLI::Option* api_workers_flag =
      AddFlag(cli, "--api-workers", &api_workers, "the API server's workers (8, the default)")
          ->check(CLI::Range(1, 256));
  CLI::Option* credential_workers_flag =
      AddFlag(cli, "--credential-workers", &credential_workers,
              "the API's threads for PUTs with supplied credentials (2, the default)")
          ->check(CLI::Range(1, 256));
  if (auto exit_code = ParseFlags(cli, argc, argv)) return *exit_code;
  const bool use_wrk = no_wrk == 0 && WrkAvailable();
  std::printf("api_bench: %ld cores, load average %s before the run\ncommand: %s\n",
              sysconf(_SC_NPROCESSORS_ONLN), LoadAverage().c_str(),
              CommandLine(argc, argv).c_str());
  const auto begin = BenchClock::now();

  const std::string dir = MakeTempDir("steward-api-bench");
  if (dir.empty()) return 1;
  app::ServeConfig config;
  config.listen = "127.0.0.1:0";
  config.data_dir = dir + "/data";
  config.cluster = app::ClusterSource::kEmbedded;
  config.embedded_profile = "instant";
  config.log_level = "warn";
  if (api_workers_flag->count() != 0) config.api_workers = api_workers;
  if (credential_workers_flag->count() != 0) config.api_credential_workers = credential_workers;
  auto started = app::App::Start(config);
  if (!started.ok()) {
    std::fprintf(stderr, "app: %s\n", started.error().ToString().c_str());
    return 1;
  }
  std::unique_ptr<app::App> app = std::move(*started);
  spdlog::set_level(spdlog::level::warn);

  {
    net::HttpClient::Options o;
    o.port = PortOf(app->api_url());
    o.bearer_token = app->api_token();
    auto client = net::HttpClient::Create(o);
    net::Headers headers;
    headers.Set("Content-Type", "application/json");
    const std::string body = DumpJson(Json{{"spec", BenchProjectSpec()}, {"start", true}});
    RunningCounter counter(app->store());
    const auto t0 = BenchClock::now();
    for (long i = 0; i < n; ++i) {
      auto r = client->Request("PUT", "/v1/projects/p-" + std::to_string(i), body, headers);
      if (!r.ok() || r->status != 201) {
        std::fprintf(stderr, "PUT p-%ld: %s\n", i,
                     r.ok() ? (std::to_string(r->status) + " " + r->body).c_str()
                            : r.error().ToString().c_str());
        return 1;
      }
    }
    if (!counter.WaitRunning(static_cast<size_t>(n), milliseconds(120000))) {
      std::fprintf(stderr, "only %zu of %ld Running\n", counter.running(), n);
      return 1;
    }
    std::printf("set-up: %ld projects PUT (start=true) and Running in %.1f s; API %s\n", n,
                Seconds(BenchClock::now() - t0), app->api_url().c_str());
    auto one = client->Request("GET", "/v1/projects/p-0");
    auto list = client->Request("GET", "/v1/projects?limit=100");
    if (!one.ok() || one->status != 200 || !list.ok() || list->status != 200) {
      std::fprintf(stderr, "GET check failed\n");
      return 1;
    }
    std::printf("response sizes: one project %zu bytes, a page of 100 %zu bytes\n",
                one->body.size(), list->body.size());
  }

  struct Kind {
    std::string name, what, fixed_target;  // fixed_target: for wrk ("" = not a read)
    std::function<BenchRequest(std::mt19937_64&, int, long)> make;
  };
  // A create of a new name per request; `credentials`: with supplied ones.
  auto put = [](bool credentials) {
    Json spec = BenchProjectSpec();
    if (credentials) {
      spec["credentials"] = {{"clientId", "ffp_bench"},
                             {"clientSecret", "bench-secret"},
                             {"token", "ffpt_bench"},
                             {"broker",
                              {{"url", "mqtts://broker:8883"},
                               {"username", "bench"},
                               {"password", "bench-password"}}}};
    }
    const std::string body = DumpJson(Json{{"spec", spec}, {"start", false}});
    const std::string prefix = credentials ? "/v1/projects/c-" : "/v1/projects/n-";
    return [body, prefix](std::mt19937_64&, int client, long i) {
      return BenchRequest{"PUT", prefix + std::to_string(client) + "-" + std::to_string(i), body};
    };
  };
  std::vector<Kind> kinds = {
      {"get", "GET /v1/projects/{random of " + std::to_string(n) + "}", "/v1/projects/p-0",
       [n](std::mt19937_64& rng, int, long) {
         return BenchRequest{
             "GET", "/v1/projects/p-" + std::to_string(rng() % static_cast<uint64_t>(n)), ""};
       }},
      {"list", "GET /v1/projects?limit=100", "/v1/projects?limit=100",
       [](std::mt19937_64&, int, long) {
         return BenchRequest{"GET", "/v1/projects?limit=100", ""};
       }},
      {"put", "PUT /v1/projects/{new} (start=false)", "", put(false)},
      {"put-credentials", "PUT /v1/projects/{new} with supplied credentials", "", put(true)},
  };
  struct Row {
    std::string what, rps, p50, p99, p999, errors, cpu;
  };
  std::vector<Row> rows;
  for (const Kind& k : kinds) {
    if (!only.empty() && only != k.name) continue;
    const std::string& what = k.what;
    if (use_wrk && !k.fixed_target.empty()) {
      const double cpu0 = ProcessCpuSeconds();
      auto w = RunWrk(app->api_url() + k.fixed_target, wrk_threads, clients, seconds,
                      {"Authorization: Bearer " + app->api_token()});
      const double cpu = ProcessCpuSeconds() - cpu0;
      if (w) {
        std::printf(
            "%s, wrk -t%d -c%d -d%.0fs (%s): %.0f requests/s, p50 %.2f ms, p99 %.2f ms, %ld "
            "errors of %ld; server CPU %.0f µs/request (load average %s)\n",
            k.name.c_str(), wrk_threads, clients, seconds, k.fixed_target.c_str(),
            w->requests_per_second, w->latency_p50_ms, w->latency_p99_ms, w->errors, w->requests,
            w->requests > 0 ? cpu * 1e6 / static_cast<double>(w->requests) : 0.0,
            LoadAverage().c_str());
        char b[7][64];
        std::snprintf(b[0], 64, "%.0f", w->requests_per_second);
        std::snprintf(b[1], 64, "%.2f", w->latency_p50_ms);
        std::snprintf(b[2], 64, "%.2f", w->latency_p99_ms);
        std::snprintf(b[3], 64, "-");
        std::snprintf(b[4], 64, "%ld", w->errors);
        std::snprintf(b[5], 64, "%.0f",
                      w->requests > 0 ? cpu * 1e6 / static_cast<double>(w->requests) : 0.0);
        rows.push_back({"GET " + k.fixed_target + " [wrk]", b[0], b[1], b[2], b[3], b[4], b[5]});
      } else {
        std::printf("%s: wrk failed to run\n", k.name.c_str());
      }
    }
    LoadResult r = RunInProcess(*app, clients, seconds, k.make);
    std::printf(
        "%s, in-process, %d threads × 1 keep-alive connection, %.1f s: %ld requests, %.0f/s, "
        "p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.1f ms, %ld errors%s%s; CPU per "
        "request: server %.0f µs, client %.0f µs (load average %s)\n",
        k.name.c_str(), clients, r.seconds, r.requests, r.rps, r.p50_ms, r.p99_ms, r.p999_ms,
        r.max_ms, r.errors, r.first_error.empty() ? "" : " (first: ",
        r.first_error.empty() ? "" : (r.first_error + ")").c_str(), r.server_cpu_us,
        r.client_cpu_us, LoadAverage().c_str());
    char b[7][64];
    std::snprintf(b[0], 64, "%.0f", r.rps);
    std::snprintf(b[1], 64, "%.2f", r.p50_ms);
    std::snprintf(b[2], 64, "%.2f", r.p99_ms);
    std::snprintf(b[3], 64, "%.2f", r.p999_ms);
    std::snprintf(b[4], 64, "%ld", r.errors);
    std::snprintf(b[5], 64, "%.0f", r.server_cpu_us);
    rows.push_back({what + " [in-process]", b[0], b[1], b[2], b[3], b[4], b[5]});
    std::fflush(stdout);
  }

  std::printf("\nsummary (%d concurrent clients, %ld projects, load average %s at the end):\n",
              clients, n, LoadAverage().c_str());
  std::printf("  %-52s %9s %8s %8s %8s %7s %12s\n", "requests", "req/s", "p50 ms", "p99 ms",
              "p99.9 ms", "errors", "server µs/req");
  for (const Row& r : rows) {
    std::printf("  %-52s %9s %8s %8s %8s %7s %12s\n", r.what.c_str(), r.rps.c_str(), r.p50.c_str(),
                r.p99.c_str(), r.p999.c_str(), r.errors.c_str(), r.cpu.c_str());
  }
  std::printf("api_bench took %.1f s\n", Seconds(BenchClock::now() - begin));
  app->Stop();
  app.reset();
  RemoveTree(dir);
  return 0;
}

}  // namespace
}  // namespace steward::bench

int main(int argc, char** argv) { return steward::bench::Main(argc, argv); }
