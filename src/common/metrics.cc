#include "common/metrics.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace steward {
namespace {

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "steward: metrics: %s\n", what.c_str());
  std::abort();
}

bool IsMetricName(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool IsLabelName(std::string_view s) {
  if (s.empty() || s.starts_with("__")) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// Prometheus float formatting: shortest round-trip form, +Inf/-Inf/NaN spelled its way.
std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

std::string EscapeLabelValue(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// `{a="x",b="y"}` (with an extra label appended when given), or "" for no labels at all.
std::string LabelText(const std::vector<std::string>& names, const LabelValues& values,
                      std::string_view extra_name = {}, std::string_view extra_value = {}) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    out += out.empty() ? "{" : ",";
    out += names[i] + "=\"" + EscapeLabelValue(values[i]) + "\"";
  }
  if (!extra_name.empty()) {
    out += out.empty() ? "{" : ",";
    out += std::string(extra_name) + "=\"" + EscapeLabelValue(extra_value) + "\"";
  }
  if (!out.empty()) out += "}";
  return out;
}

// One line per series of a counter or gauge.
void AppendValues(std::string& out, const std::string& name, const std::vector<std::string>& names,
                  const std::map<LabelValues, double>& values) {
  for (const auto& [labels, v] : values) {
    out += name + LabelText(names, labels) + " " + FormatValue(v) + "\n";
  }
}

void CheckArity(size_t arity, const LabelValues& labels, const char* kind) {
  if (arity != kAnyArity && labels.size() != arity) {
    Die(fmt::format("{} observed with {} label values, family has {} labels", kind, labels.size(),
                    arity));
  }
}

}  // namespace

void CounterFamily::Add(const LabelValues& labels, double delta) {
  CheckArity(arity_, labels, "counter");
  if (!(delta >= 0)) Die("counter decremented");
  MutexLock lock(mu_);
  values_[labels] += delta;
}

double CounterFamily::Value(const LabelValues& labels) const {
  MutexLock lock(mu_);
  auto it = values_.find(labels);
  return it == values_.end() ? 0 : it->second;
}

void GaugeFamily::Set(const LabelValues& labels, double value) {
  CheckArity(arity_, labels, "gauge");
  MutexLock lock(mu_);
  values_[labels] = value;
}

void GaugeFamily::Replace(std::map<LabelValues, double> values) {
  for (const auto& [labels, v] : values) CheckArity(arity_, labels, "gauge");
  MutexLock lock(mu_);
  values_ = std::move(values);
}

double GaugeFamily::Value(const LabelValues& labels) const {
  MutexLock lock(mu_);
  auto it = values_.find(labels);
  return it == values_.end() ? 0 : it->second;
}

HistogramFamily::HistogramFamily(std::vector<double> bounds) : bounds_(std::move(bounds)) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (!std::isfinite(bounds_[i])) Die("histogram bound is not finite");
    if (i > 0 && !(bounds_[i] > bounds_[i - 1])) Die("histogram bounds must increase");
  }
}

void HistogramFamily::Observe(const LabelValues& labels, double value) {
  CheckArity(arity_, labels, "histogram");
  MutexLock lock(mu_);
  Series& s = series_[labels];
  if (s.buckets.empty()) s.buckets.assign(bounds_.size() + 1, 0);
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;  // le: value <= bound
  ++s.buckets[i];
  s.sum += value;
  ++s.count;
}

uint64_t HistogramFamily::Count(const LabelValues& labels) const {
  MutexLock lock(mu_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0 : it->second.count;
}

double HistogramFamily::Sum(const LabelValues& labels) const {
  MutexLock lock(mu_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0 : it->second.sum;
}

struct MetricsRegistry::Family {
  std::string name, help, type;
  std::vector<std::string> labels;
  std::unique_ptr<CounterFamily> counter;
  std::unique_ptr<GaugeFamily> gauge;
  std::unique_ptr<HistogramFamily> histogram;
};

MetricsRegistry::MetricsRegistry() = default;
MetricsRegistry::~MetricsRegistry() = default;

namespace {

void Validate(const std::string& name, const std::vector<std::string>& labels, bool histogram) {
  if (!IsMetricName(name)) Die("invalid metric name \"" + name + "\"");
  for (size_t i = 0; i < labels.size(); ++i) {
    if (!IsLabelName(labels[i])) Die("invalid label name \"" + labels[i] + "\" in " + name);
    if (histogram && labels[i] == "le") Die("histogram " + name + " may not have a label \"le\"");
    for (size_t j = 0; j < i; ++j) {
      if (labels[j] == labels[i]) Die("duplicate label \"" + labels[i] + "\" in " + name);
    }
  }
}

}  // namespace

CounterFamily& MetricsRegistry::Counter(std::string name, std::string help,
                                        std::vector<std::string> labels) {
  Validate(name, labels, false);
  auto f = std::make_unique<Family>();
  f->counter = std::make_unique<CounterFamily>();
  f->counter->arity_ = labels.size();
  CounterFamily& out = *f->counter;
  f->name = name;
  f->help = std::move(help);
  f->type = "counter";
  f->labels = std::move(labels);
  MutexLock lock(mu_);
  if (!families_.emplace(name, std::move(f)).second) Die("second family named " + name);
  return out;
}

GaugeFamily& MetricsRegistry::Gauge(std::string name, std::string help,
                                    std::vector<std::string> labels) {
  Validate(name, labels, false);
  auto f = std::make_unique<Family>();
  f->gauge = std::make_unique<GaugeFamily>();
  f->gauge->arity_ = labels.size();
  GaugeFamily& out = *f->gauge;
  f->name = name;
  f->help = std::move(help);
  f->type = "gauge";
  f->labels = std::move(labels);
  MutexLock lock(mu_);
  if (!families_.emplace(name, std::move(f)).second) Die("second family named " + name);
  return out;
}

HistogramFamily& MetricsRegistry::Histogram(std::string name, std::string help,
                                            std::vector<double> bounds,
                                            std::vector<std::string> labels) {
  Validate(name, labels, true);
  auto f = std::make_unique<Family>();
  f->histogram = std::make_unique<HistogramFamily>(std::move(bounds));
  f->histogram->arity_ = labels.size();
  HistogramFamily& out = *f->histogram;
  f->name = name;
  f->help = std::move(help);
  f->type = "histogram";
  f->labels = std::move(labels);
  MutexLock lock(mu_);
  if (!families_.emplace(name, std::move(f)).second) Die("second family named " + name);
  return out;
}

void MetricsRegistry::OnCollect(std::function<void()> fn) {
  MutexLock lock(mu_);
  collectors_.push_back(std::move(fn));
}

std::string MetricsRegistry::Text() const {
  std::vector<std::function<void()>> collectors;
  {
    MutexLock lock(mu_);
    collectors = collectors_;
  }
  // Outside the registry lock: a collector sets gauges (which lock only their family).
  for (const auto& fn : collectors) fn();

  std::string out;
  MutexLock lock(mu_);
  for (const auto& [name, f] : families_) {
    out += "# HELP " + name + " " + EscapeHelp(f->help) + "\n";
    out += "# TYPE " + name + " " + f->type + "\n";
    if (f->counter) {
      MutexLock fl(f->counter->mu_);
      AppendValues(out, name, f->labels, f->counter->values_);
      continue;
    }
    if (f->gauge) {
      MutexLock fl(f->gauge->mu_);
      AppendValues(out, name, f->labels, f->gauge->values_);
      continue;
    }
    const HistogramFamily& h = *f->histogram;
    MutexLock fl(h.mu_);
    for (const auto& [labels, s] : h.series_) {
      uint64_t cumulative = 0;
      for (size_t i = 0; i <= h.bounds_.size(); ++i) {
        cumulative += s.buckets[i];
        std::string le = i < h.bounds_.size() ? FormatValue(h.bounds_[i]) : "+Inf";
        out += name + "_bucket" + LabelText(f->labels, labels, "le", le) + " " +
               std::to_string(cumulative) + "\n";
      }
      out += name + "_sum" + LabelText(f->labels, labels) + " " + FormatValue(s.sum) + "\n";
      out += name + "_count" + LabelText(f->labels, labels) + " " + std::to_string(s.count) + "\n";
    }
  }
  return out;
}

std::vector<double> DefaultLatencyBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

}  // namespace steward
