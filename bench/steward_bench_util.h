// Helpers shared by the benchmarks that run Steward's engine or the whole app against the
// embedded cluster (restart_bench, scale_bench, api_bench): the cluster's request counters by
// verb and resource, a peak-RSS sampler, the benchmark project spec, profiles at their means,
// and a temporary directory.
//
// For bench/ only. RequestCounts functions are pure; PeakRssSampler is thread-safe; the rest
// is for the main thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "bench_util.h"
#include "cluster/profile/profile.h"
#include "common/json.h"
#include "common/mutex.h"
#include "store/store.h"

namespace steward::bench {

// ---- apiserver_request_total, parsed from the embedded cluster's metrics text ----------------

struct RequestKey {
  std::string verb, resource, subresource, code;  // resource is "name.group" ("pods", ...)
  auto operator<=>(const RequestKey&) const = default;
};
using RequestCounts = std::map<RequestKey, long>;

// Parses RequestLog::MetricsText().
RequestCounts ParseRequests(const std::string& metrics);
// after − before, entries that differ only.
RequestCounts Diff(const RequestCounts& after, const RequestCounts& before);
long CountAll(const RequestCounts& c);
long CountVerb(const RequestCounts& c, const std::string& verb);
// create + update + patch + delete + deletecollection.
long CountWrites(const RequestCounts& c);
// Prints one line per (verb, resource[/subresource]) with its count, then non-2xx answers.
void PrintRequests(const RequestCounts& counts, const char* indent);
// Prints requests other than list/watch as a resource × verb table (non-2xx answers below it),
// then the informers' list and watch counts on one line.
void PrintRequestTable(const RequestCounts& counts, const char* indent);

// ---- memory ---------------------------------------------------------------------------------

// Samples RssBytes() every `period` on its own thread and keeps the largest value seen since
// construction or the last Reset(). Thread-safe.
class PeakRssSampler {
 public:
  explicit PeakRssSampler(std::chrono::milliseconds period = std::chrono::milliseconds(5));
  ~PeakRssSampler();
  PeakRssSampler(const PeakRssSampler&) = delete;
  PeakRssSampler& operator=(const PeakRssSampler&) = delete;

  void Reset();
  size_t peak() const;

 private:
  std::chrono::milliseconds period_;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> peak_{0};
  std::thread thread_;
};

double MiB(size_t bytes);

// ---- the store ------------------------------------------------------------------------------

// Listens to a store: which projects committed phase Running (any generation) and when the
// k-th did, and how many commits there were. Thread-safe.
class RunningCounter {
 public:
  explicit RunningCounter(store::Store& store);
  ~RunningCounter();
  RunningCounter(const RunningCounter&) = delete;
  RunningCounter& operator=(const RunningCounter&) = delete;

  // Waits until at least `n` projects are Running; false after `timeout`.
  bool WaitRunning(size_t n, std::chrono::milliseconds timeout);
  size_t running() const;
  long commits() const;
  // When each project first committed Running, in order.
  std::vector<BenchClock::time_point> running_times() const;
  // When project `id` first committed Running; nullopt when it has not.
  std::optional<BenchClock::time_point> RunningAt(const std::string& id) const;

 private:
  store::Store& store_;
  int handle_ = 0;
  mutable Mutex mu_;
  CondVar cv_;
  std::unordered_map<std::string, BenchClock::time_point> running_ GUARDED_BY(mu_);
  std::vector<BenchClock::time_point> times_ GUARDED_BY(mu_);
  long commits_ GUARDED_BY(mu_) = 0;
};

// ---- set-up ---------------------------------------------------------------------------------

// The project spec every engine benchmark uses (engine_bench's): one replica of
// flowfuse/node-red:4.0, 10 % CPU, 256 MB.
Json BenchProjectSpec();

// `base` with every delay at its mean (fixed + jitter/2, jitter 0) and no faults, so that a
// bound computed from it is one number. The name gets "-mean" appended.
cluster::Profile MeanProfile(cluster::Profile base);

// A delay's fixed part, in ms (call on a MeanProfile for the mean).
double FixedMs(const cluster::DelaySpec& d);

// The profile's critical path of one start (docs/benchmarks.md, "The lower bound"), without the
// engine's round trips: 4 controller + pod_scheduling + pod_start + pod_ready + endpoints +
// load_balancer, using fixed delays (call on a MeanProfile for the mean). In ms.
double StartPathMs(const cluster::Profile& p);
// The critical path of one start with the creates overlapped (each created once the one it
// depends on exists, every readiness wait at once; issue 33), without round trips:
// max(Deployment available: 4 controller + pod_scheduling + pod_start + pod_ready; endpoints:
// 2 controller + pod_scheduling + pod_start + pod_ready + endpoints; Ingress address:
// load_balancer). In ms.
double CriticalPathMs(const cluster::Profile& p);

// A fresh directory under /tmp ("" on failure, printed). RemoveTree deletes it.
std::string MakeTempDir(const std::string& prefix);
void RemoveTree(const std::string& dir);

}  // namespace steward::bench
