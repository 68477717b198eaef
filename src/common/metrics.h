// Metrics: counters, gauges and histograms with labels, exposed in the Prometheus text format
// (version 0.0.4). A small in-process registry; no Prometheus client library is packaged in
// Debian bookworm, and the exposition format is a few lines of text.
//
// Thread-safety: every method of every class here may be called from any thread.
// Families are created once (at start-up) and live as long as the registry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/mutex.h"

namespace steward {

// Label values in the family's label order.
using LabelValues = std::vector<std::string>;

// A family made by the registry knows its label count: values of another length abort (a
// programming error). A family constructed directly accepts any length.
inline constexpr size_t kAnyArity = static_cast<size_t>(-1);

class CounterFamily {
 public:
  void Add(const LabelValues& labels, double delta = 1);
  double Value(const LabelValues& labels) const;  // 0 when never added

 private:
  friend class MetricsRegistry;
  size_t arity_ = kAnyArity;  // set once by the registry before the family is shared
  mutable Mutex mu_;
  std::map<LabelValues, double> values_ GUARDED_BY(mu_);
};

class GaugeFamily {
 public:
  void Set(const LabelValues& labels, double value);
  // Replaces every series at once (for gauges recomputed per scrape, e.g. projects by phase).
  void Replace(std::map<LabelValues, double> values);
  double Value(const LabelValues& labels) const;

 private:
  friend class MetricsRegistry;
  size_t arity_ = kAnyArity;  // set once by the registry before the family is shared
  mutable Mutex mu_;
  std::map<LabelValues, double> values_ GUARDED_BY(mu_);
};

class HistogramFamily {
 public:
  explicit HistogramFamily(std::vector<double> bounds);  // upper bounds, increasing; +Inf added
  void Observe(const LabelValues& labels, double value);
  uint64_t Count(const LabelValues& labels) const;
  double Sum(const LabelValues& labels) const;

 private:
  friend class MetricsRegistry;
  struct Series {
    std::vector<uint64_t> buckets;  // per bound (not cumulative), then +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  const std::vector<double> bounds_;
  size_t arity_ = kAnyArity;  // set once by the registry before the family is shared
  mutable Mutex mu_;
  std::map<LabelValues, Series> series_ GUARDED_BY(mu_);
};

class MetricsRegistry {
 public:
  MetricsRegistry();
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // Names must match [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]*; a second
  // family of the same name is a programming error (aborts).
  CounterFamily& Counter(std::string name, std::string help, std::vector<std::string> labels = {});
  GaugeFamily& Gauge(std::string name, std::string help, std::vector<std::string> labels = {});
  HistogramFamily& Histogram(std::string name, std::string help, std::vector<double> bounds,
                             std::vector<std::string> labels = {});
  // Called at the start of every Text(), before any family is read (refresh gauges here).
  void OnCollect(std::function<void()> fn);

  // The exposition: "# HELP", "# TYPE" and one line per series, families in name order,
  // series in label order; label values escaped (\\, \", \n); histograms as _bucket{le=...}
  // (cumulative), _sum, _count.
  std::string Text() const;

 private:
  struct Family;
  mutable Mutex mu_;
  std::vector<std::function<void()>> collectors_ GUARDED_BY(mu_);
  std::map<std::string, std::unique_ptr<Family>> families_ GUARDED_BY(mu_);
};

// Default latency buckets in seconds: 5 ms .. 60 s.
std::vector<double> DefaultLatencyBuckets();

}  // namespace steward
