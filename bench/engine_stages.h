// engine_bench's report of a start, stage by stage (StageTable), and the summaries it prints
// (Summarise, Distribution). Not thread-safe: one table per section, filled and printed by the
// benchmark's main thread. Benchmark code, not linked into Steward.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench_util.h"
#include "cluster/profile/profile.h"
#include "engine/manifests/manifests.h"

namespace steward::bench {

struct Summary {
  double min = 0, median = 0, max = 0;
};
Summary Summarise(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  s.median = Percentile(v, 50);
  return s;
}

// A start, stage by stage, in its three branches (the Deployment's rollout; the Service and the
// Ingress with its address; the EndpointSlice) and where they join (the Running commit): the
// time between two milestones of a project (seen in the cluster's storage, the Put call, the
// first answer of its URL, the Running commit) against the profile's delay for that stage.
// A stage's start may be the later of several milestones ("a,b"). Then the milestones
// themselves, as times after the Put, beside both models of Bench::Schedule: that shows what
// overlapped.
class StageTable {
  using TimePoint = BenchClock::time_point;

 public:
  // `at` finds a milestone in the run's Timeline ("<what>|<id or service>|<milestone>");
  // `schedule(overlapped)` is the models' milestones at the profile's means (Bench::Schedule).
  using AtFn = std::function<std::optional<TimePoint>(const std::string& key)>;
  using ScheduleFn = std::function<std::map<std::string, double>(bool overlapped)>;
  StageTable(const cluster::Profile& p, double rtt, AtFn at, ScheduleFn schedule, bool with_url)
      : at_fn_(std::move(at)), schedule_(std::move(schedule)), with_url_(with_url) {
    const double c = Ms(p.controller.fixed);
    stages_ = {
        {"Deployment's rollout", "Put -> Secret created (intent commit, wake-up, run, create)",
         "put", "secret:created", rtt, "RTT"},
        {"", "Secret -> Deployment created", "secret:created", "deployment:created", rtt, "RTT"},
        {"", "Deployment -> ReplicaSet created", "deployment:created", "rs:created", c,
         "controller"},
        {"", "ReplicaSet -> pod created", "rs:created", "pod:created", c, "controller"},
        {"", "pod created -> scheduled", "pod:created", "pod:scheduled", Ms(p.pod_scheduling.fixed),
         "pod_scheduling"},
        {"", "scheduled -> started", "pod:scheduled", "pod:started", Ms(p.pod_start.fixed),
         "pod_start"},
        {"", "started -> Ready", "pod:started", "pod:ready", Ms(p.pod_ready.fixed), "pod_ready"},
        {"", "pod Ready -> ReplicaSet status", "pod:ready", "rs:ready", c, "controller"},
        {"", "ReplicaSet -> Deployment status ready", "rs:ready", "deployment:ready", c,
         "controller"},
        {"Service, Ingress, address", "Deployment created -> Service created (watch, run, create)",
         "deployment:created", "service:created", rtt, "RTT"},
        {"", "Service created -> Ingress created (watch, run, create)", "service:created",
         "ingress:created", rtt, "RTT"},
        {"", "Ingress created -> address written", "ingress:created", "ingress:address",
         Ms(p.load_balancer.fixed), "load_balancer"},
        {"EndpointSlice", "later of pod Ready, Service created -> slice ready",
         "pod:ready,service:created", "slice:ready", Ms(p.endpoints.fixed), "endpoints"},
        {"Running (the join)",
         "last of Deployment ready, slice ready, address -> Running committed",
         "deployment:ready,slice:ready,ingress:address", "running", 0, "-"},
    };
    if (with_url_) {
      stages_.push_back({"URL through the ingress listener",
                         "later of slice ready, Ingress created -> URL answers",
                         "slice:ready,"
                         "ingress:created",
                         "url", 0, "(10 ms samples)"});
      stages_.push_back(
          {"", "URL answers -> Running committed (the claim lag)", "url", "running", 0, "-"});
    }
    ms_.resize(stages_.size());
    milestones_ = {{"secret:created", "Secret created"},
                   {"deployment:created", "Deployment created"},
                   {"service:created", "Service created"},
                   {"ingress:created", "Ingress created"},
                   {"rs:created", "ReplicaSet created"},
                   {"pod:created", "pod created"},
                   {"pod:scheduled", "pod scheduled"},
                   {"pod:started", "pod started"},
                   {"ingress:address", "Ingress address written"},
                   {"pod:ready", "pod Ready"},
                   {"rs:ready", "ReplicaSet status ready"},
                   {"deployment:ready", "Deployment status ready"},
                   {"slice:ready", "EndpointSlice ready"}};
    if (with_url_) milestones_.push_back({"url", "URL first answered"});
    milestones_.push_back({"running", "Running committed"});
    at_.resize(milestones_.size());
  }

  void Add(const std::string& id, const std::string& name, TimePoint put, TimePoint running,
           std::optional<TimePoint> url = std::nullopt) {
    ++samples_;
    const std::string svc = engine::NamesFor(id, name).service;
    auto one = [&](const std::string& m) -> std::optional<TimePoint> {
      if (m == "put") return put;
      if (m == "running") return running;
      if (m == "url") return url;
      const size_t colon = m.find(':');
      const std::string what = m.substr(0, colon);
      return at_fn_(what + "|" + (what == "slice" ? svc : id) + "|" + m.substr(colon + 1));
    };
    // The latest of a comma-separated list; nullopt if any is missing.
    auto at = [&](const std::string& list) -> std::optional<TimePoint> {
      std::optional<TimePoint> latest;
      size_t begin = 0;
      while (begin <= list.size()) {
        size_t end = list.find(',', begin);
        if (end == std::string::npos) end = list.size();
        auto t = one(list.substr(begin, end - begin));
        if (!t) return std::nullopt;
        if (!latest || *t > *latest) latest = t;
        begin = end + 1;
      }
      return latest;
    };
    for (size_t s = 0; s < stages_.size(); ++s) {
      auto from = at(stages_[s].from), to = at(stages_[s].to);
      if (from && to) ms_[s].push_back(Ms(*to - *from));
    }
    for (size_t m = 0; m < milestones_.size(); ++m) {
      if (auto t = one(milestones_[m].first)) at_[m].push_back(Ms(*t - put));
    }
    // Which readiness condition came last (the branch Running waited for).
    const char* last = nullptr;
    std::optional<TimePoint> latest;
    for (const char* m : {"deployment:ready", "slice:ready", "ingress:address"}) {
      auto t = one(m);
      if (t && (!latest || *t > *latest)) {
        latest = t;
        last = m;
      }
    }
    if (last != nullptr) ++last_[last];
    auto ready = one("deployment:ready");
    for (const char* m : {"service:created", "ingress:created", "ingress:address"}) {
      auto t = one(m);
      if (ready && t) before_ready_[m].push_back(Ms(*ready - *t));
    }
  }

  void Print() const {
    std::printf("  %-70s %-16s %7s %8s %8s %8s\n", "stage", "profile", "expect", "median", "min",
                "max");
    for (size_t s = 0; s < stages_.size(); ++s) {
      if (*stages_[s].branch != '\0') std::printf("  [%s]\n", stages_[s].branch);
      if (ms_[s].empty()) {
        std::printf("    %-68s %-16s %7.1f %8s\n", stages_[s].what, stages_[s].expect_what,
                    stages_[s].expect, "(no sample)");
        continue;
      }
      Summary ss = Summarise(ms_[s]);
      std::printf("    %-68s %-16s %7.1f %8.1f %8.1f %8.1f%s\n", stages_[s].what,
                  stages_[s].expect_what, stages_[s].expect, ss.median, ss.min, ss.max,
                  ms_[s].size() == samples_ ? "" : "  (milestone missing in some runs)");
    }
    const auto in_order = schedule_(false), overlapped = schedule_(true);
    std::printf(
        "  milestones, ms after the Put (models at the profile's means: \"in order\" = each "
        "create after the object before is ready; \"overlapped\" = each create after the object "
        "before exists, readiness waited for at once):\n");
    std::printf("    %-30s %9s %10s %8s %8s %8s\n", "milestone", "in order", "overlapped", "median",
                "min", "max");
    for (size_t m = 0; m < milestones_.size(); ++m) {
      const std::string& key = milestones_[m].first;
      if (at_[m].empty()) {
        std::printf("    %-30s %9.1f %10.1f %8s\n", milestones_[m].second.c_str(), in_order.at(key),
                    overlapped.at(key), "(none)");
        continue;
      }
      Summary ss = Summarise(at_[m]);
      std::printf("    %-30s %9.1f %10.1f %8.1f %8.1f %8.1f\n", milestones_[m].second.c_str(),
                  in_order.at(key), overlapped.at(key), ss.median, ss.min, ss.max);
    }
    auto count = [&](const char* m) {
      auto it = last_.find(m);
      return it == last_.end() ? 0 : it->second;
    };
    std::printf(
        "  the last readiness condition (what Running waited for), runs: Deployment ready %d, "
        "slice ready %d, Ingress address %d (overlapped model: %s)\n",
        count("deployment:ready"), count("slice:ready"), count("ingress:address"),
        overlapped.at("slice:ready") >= overlapped.at("deployment:ready") &&
                overlapped.at("slice:ready") >= overlapped.at("ingress:address")
            ? "slice ready"
        : overlapped.at("deployment:ready") >= overlapped.at("ingress:address")
            ? "Deployment ready"
            : "Ingress address");
    auto median_before = [&](const char* m) {
      auto it = before_ready_.find(m);
      return it == before_ready_.end() ? 0.0 : Summarise(it->second).median;
    };
    auto model_before = [&](const std::map<std::string, double>& t, const char* m) {
      return t.at("deployment:ready") - t.at(m);
    };
    std::printf(
        "  overlap with the rollout (Deployment ready minus the milestone, median; positive = "
        "before the Deployment was ready): Service created %+.0f ms, Ingress created %+.0f ms, "
        "address written %+.0f ms (overlapped model %+.0f / %+.0f / %+.0f; in order %+.0f / "
        "%+.0f / %+.0f)\n",
        median_before("service:created"), median_before("ingress:created"),
        median_before("ingress:address"), model_before(overlapped, "service:created"),
        model_before(overlapped, "ingress:created"), model_before(overlapped, "ingress:address"),
        model_before(in_order, "service:created"), model_before(in_order, "ingress:created"),
        model_before(in_order, "ingress:address"));
  }

 private:
  struct Stage {
    const char* branch;  // a heading printed before the stage; "" for none
    const char* what;
    const char* from;
    const char* to;
    double expect;
    const char* expect_what;
  };
  const AtFn at_fn_;
  const ScheduleFn schedule_;
  const bool with_url_;
  std::vector<Stage> stages_;
  std::vector<std::vector<double>> ms_;
  std::vector<std::pair<std::string, std::string>> milestones_;  // key, label
  std::vector<std::vector<double>> at_;
  std::map<std::string, int> last_;
  std::map<std::string, std::vector<double>> before_ready_;
  size_t samples_ = 0;
};

// Prints min / median / p99 / max of `v` (ms), or "no sample".
std::string Distribution(std::vector<double> v) {
  if (v.empty()) return "no sample";
  Summary s = Summarise(v);
  const double p99 = Percentile(v, 99);
  char buf[160];
  std::snprintf(buf, sizeof buf, "min %+.1f, median %+.1f, p99 %+.1f, max %+.1f ms", s.min,
                s.median, p99, s.max);
  return buf;
}

}  // namespace steward::bench
