#include "steward_bench_util.h"

#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "bench_util.h"
#include "common/mutex.h"

namespace steward::bench {
namespace {

// The value of label `name` in one exposition line ("resource" must not match "subresource").
std::string LabelValue(const std::string& line, const std::string& name) {
  for (const char* before : {"{", ","}) {
    const std::string needle = before + name + "=\"";
    size_t at = line.find(needle);
    if (at == std::string::npos) continue;
    at += needle.size();
    size_t end = line.find('"', at);
    return end == std::string::npos ? "" : line.substr(at, end - at);
  }
  return "";
}

}  // namespace

RequestCounts ParseRequests(const std::string& metrics) {
  RequestCounts out;
  size_t pos = 0;
  while (pos < metrics.size()) {
    size_t eol = metrics.find('\n', pos);
    if (eol == std::string::npos) eol = metrics.size();
    std::string line = metrics.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.rfind("apiserver_request_total{", 0) != 0) continue;
    RequestKey k;
    k.verb = LabelValue(line, "verb");
    std::transform(k.verb.begin(), k.verb.end(), k.verb.begin(), ::tolower);
    std::string group = LabelValue(line, "group");
    k.resource = LabelValue(line, "resource");
    if (k.resource.empty()) k.resource = "(non-resource)";
    if (!group.empty()) k.resource += "." + group;
    k.subresource = LabelValue(line, "subresource");
    k.code = LabelValue(line, "code");
    size_t space = line.rfind(' ');
    out[k] += std::atol(line.c_str() + space + 1);
  }
  return out;
}

RequestCounts Diff(const RequestCounts& after, const RequestCounts& before) {
  RequestCounts out;
  for (const auto& [k, n] : after) {
    auto it = before.find(k);
    long d = n - (it == before.end() ? 0 : it->second);
    if (d != 0) out[k] = d;
  }
  return out;
}

long CountAll(const RequestCounts& c) {
  long n = 0;
  for (const auto& [k, v] : c) n += v;
  return n;
}

long CountVerb(const RequestCounts& c, const std::string& verb) {
  long n = 0;
  for (const auto& [k, v] : c) {
    if (k.verb == verb) n += v;
  }
  return n;
}

long CountWrites(const RequestCounts& c) {
  long n = 0;
  for (const char* v : {"create", "update", "patch", "delete", "deletecollection"}) {
    n += CountVerb(c, v);
  }
  return n;
}

void PrintRequests(const RequestCounts& counts, const char* indent) {
  std::map<std::string, long> by;  // "verb resource" (codes summed)
  for (const auto& [k, n] : counts) {
    by[k.verb + " " + k.resource + (k.subresource.empty() ? "" : "/" + k.subresource)] += n;
  }
  if (by.empty()) std::printf("%s(none)\n", indent);
  for (const auto& [what, n] : by) std::printf("%s%-48s %8ld\n", indent, what.c_str(), n);
  for (const auto& [k, n] : counts) {
    if (k.code.empty() || k.code[0] != '2') {
      std::printf("%s  answered %s: %ld %s %s\n", indent, k.code.c_str(), n, k.verb.c_str(),
                  k.resource.c_str());
    }
  }
}

namespace {
bool IsInformerVerb(const std::string& verb) { return verb == "list" || verb == "watch"; }
}  // namespace

void PrintRequestTable(const RequestCounts& counts, const char* indent) {
  static const std::vector<std::string> kOrder = {"create", "update",           "patch",
                                                  "delete", "deletecollection", "get"};
  std::vector<std::string> verbs;
  std::set<std::string> resources;
  for (const auto& [k, n] : counts) {
    if (IsInformerVerb(k.verb)) continue;
    resources.insert(k.resource + (k.subresource.empty() ? "" : "/" + k.subresource));
    if (std::find(kOrder.begin(), kOrder.end(), k.verb) == kOrder.end() &&
        std::find(verbs.begin(), verbs.end(), k.verb) == verbs.end()) {
      verbs.push_back(k.verb);
    }
  }
  verbs.insert(verbs.begin(), kOrder.begin(), kOrder.end());
  std::printf("%s%-36s", indent, "resource");
  for (const auto& v : verbs) std::printf(" %7.7s", v.c_str());
  std::printf("\n");
  std::map<std::string, long> verb_totals;
  for (const auto& r : resources) {
    std::printf("%s%-36s", indent, r.c_str());
    for (const auto& verb : verbs) {
      long n = 0;
      for (const auto& [k, v] : counts) {
        if (k.verb == verb && k.resource + (k.subresource.empty() ? "" : "/" + k.subresource) == r)
          n += v;
      }
      verb_totals[verb] += n;
      if (n == 0) {
        std::printf(" %7s", ".");
      } else {
        std::printf(" %7ld", n);
      }
    }
    std::printf("\n");
  }
  std::printf("%s%-36s", indent, "total");
  for (const auto& verb : verbs) std::printf(" %7ld", verb_totals[verb]);
  std::printf("\n");
  for (const auto& [k, n] : counts) {
    if (k.code.empty() || k.code[0] != '2') {
      std::printf("%s  answered %s: %ld %s %s\n", indent, k.code.c_str(), n, k.verb.c_str(),
                  k.resource.c_str());
    }
  }
  std::string detail;
  for (const auto& [k, n] : counts) {
    if (!IsInformerVerb(k.verb)) continue;
    detail += (detail.empty() ? "" : ", ") + k.resource + " " + k.verb + " " + std::to_string(n);
  }
  std::printf(
      "%sinformer traffic (not in the table; a watch is counted when it opens): list %ld, "
      "watch %ld%s\n",
      indent, CountVerb(counts, "list"), CountVerb(counts, "watch"),
      detail.empty() ? "" : (" (" + detail + ")").c_str());
}

PeakRssSampler::PeakRssSampler(std::chrono::milliseconds period) : period_(period) {
  peak_ = RssBytes();
  thread_ = std::thread([this] {
    while (!stop_) {
      const size_t now = RssBytes();
      size_t seen = peak_.load();
      while (now > seen && !peak_.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(period_);  // a sampling period, not synchronisation
    }
  });
}

PeakRssSampler::~PeakRssSampler() {
  stop_ = true;
  thread_.join();
}

void PeakRssSampler::Reset() { peak_ = RssBytes(); }

size_t PeakRssSampler::peak() const { return std::max(peak_.load(), RssBytes()); }

RunningCounter::RunningCounter(store::Store& store) : store_(store) {
  handle_ = store_.AddListener([this](const store::ProjectChange& c) {
    const auto now = BenchClock::now();
    MutexLock lock(mu_);
    ++commits_;
    if (!c.record) return;
    for (const auto& h : c.history) {
      if (h.kind == "phase" && h.summary == "Running" &&
          running_.try_emplace(c.project_id, now).second) {
        times_.push_back(now);
      }
    }
    cv_.NotifyAll();
  });
}

RunningCounter::~RunningCounter() { store_.RemoveListener(handle_); }

bool RunningCounter::WaitRunning(size_t n, std::chrono::milliseconds timeout) {
  MutexLock lock(mu_);
  return cv_.WaitFor(mu_, timeout, [&]() REQUIRES(mu_) { return running_.size() >= n; });
}

size_t RunningCounter::running() const {
  MutexLock lock(mu_);
  return running_.size();
}

long RunningCounter::commits() const {
  MutexLock lock(mu_);
  return commits_;
}

std::vector<BenchClock::time_point> RunningCounter::running_times() const {
  MutexLock lock(mu_);
  return times_;
}

std::optional<BenchClock::time_point> RunningCounter::RunningAt(const std::string& id) const {
  MutexLock lock(mu_);
  auto it = running_.find(id);
  if (it == running_.end()) return std::nullopt;
  return it->second;
}

double MiB(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

Json BenchProjectSpec() {
  return Json{{"team", "t1"},
              {"stack", {{"image", "flowfuse/node-red:4.0"}, {"cpu", 10}, {"memory", 256}}},
              {"replicas", 1}};
}

cluster::Profile MeanProfile(cluster::Profile p) {
  p.name += "-mean";
  for (cluster::DelaySpec* d :
       {&p.controller, &p.pod_scheduling, &p.pod_start, &p.pod_ready, &p.pod_termination,
        &p.endpoints, &p.load_balancer, &p.service_finalizer, &p.ingress_finalizer,
        &p.pvc_finalizer, &p.pvc_binding, &p.garbage_collection}) {
    d->fixed += d->jitter / 2;
    d->jitter = std::chrono::milliseconds(0);
  }
  p.faults = cluster::FaultSpec{};
  return p;
}

double FixedMs(const cluster::DelaySpec& d) { return static_cast<double>(d.fixed.count()); }

double StartPathMs(const cluster::Profile& p) {
  return 4 * FixedMs(p.controller) + FixedMs(p.pod_scheduling) + FixedMs(p.pod_start) +
         FixedMs(p.pod_ready) + FixedMs(p.endpoints) + FixedMs(p.load_balancer);
}

double CriticalPathMs(const cluster::Profile& p) {
  const double pod = FixedMs(p.pod_scheduling) + FixedMs(p.pod_start) + FixedMs(p.pod_ready);
  return std::max({4 * FixedMs(p.controller) + pod,
                   2 * FixedMs(p.controller) + pod + FixedMs(p.endpoints),
                   FixedMs(p.load_balancer)});
}

std::string MakeTempDir(const std::string& prefix) {
  std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    return "";
  }
  return tmpl;
}

void RemoveTree(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace steward::bench
