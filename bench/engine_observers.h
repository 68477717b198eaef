// What engine_bench watches while it starts projects, each on its own thread or as a listener:
// Timeline (when each milestone of a project's objects first showed in the cluster's storage),
// PhaseLog (the store's commits as they happen) and UrlSampler (a project's URL sampled through
// the embedded cluster's ingress listener). Each class is thread-safe; each owns its thread or
// listener and ends it in its destructor. Benchmark code, not linked into Steward.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench_util.h"
#include "cluster/storage/storage.h"
#include "common/json.h"
#include "common/mutex.h"
#include "net/http.h"
#include "net/http_client.h"
#include "store/store.h"

namespace steward::bench {

// ---------------------------------------------------------------------------------------------
// When each milestone of a project's objects first showed in the cluster's storage (an
// in-process watch, so no HTTP in the way). Keys: "<what>|<project id>|<milestone>", and
// "slice|<service name>|ready" for EndpointSlices (they carry the Service's name, not ours).

class Timeline {
  using TimePoint = BenchClock::time_point;
  using milliseconds = std::chrono::milliseconds;

 public:
  explicit Timeline(cluster::Storage& storage) {
    cluster::WatchRequest req;
    req.from_revision = storage.CurrentRevision();
    auto w = storage.Watch(req);
    if (!w.ok()) {
      std::fprintf(stderr, "timeline watch: %s\n", w.status().ToString().c_str());
      std::abort();
    }
    watcher_ = std::move(*w);
    thread_ = std::thread([this] { Loop(); });
  }
  ~Timeline() {
    stop_ = true;
    watcher_->Close();
    thread_.join();
  }
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  std::optional<TimePoint> At(const std::string& key) const {
    MutexLock lock(mu_);
    auto it = first_.find(key);
    if (it == first_.end()) return std::nullopt;
    return it->second;
  }

 private:
  void Loop() {
    while (!stop_) {
      if (!watcher_->Wait(milliseconds(100))) continue;
      for (const auto& ev : watcher_->Drain()) Note(ev, BenchClock::now());
    }
  }

  static std::string LabelOf(const Json& obj, const std::string& key) {
    const Json* labels = FindPath(obj, "metadata.labels");
    if (labels == nullptr || !labels->is_object() || !labels->contains(key)) return "";
    const Json& v = (*labels)[key];
    return v.is_string() ? v.get<std::string>() : "";
  }

  void Mark(const std::string& what, const std::string& owner, const std::string& milestone,
            TimePoint at) {
    MutexLock lock(mu_);
    first_.emplace(what + "|" + owner + "|" + milestone, at);
  }

  void Note(const cluster::WatchEvent& ev, TimePoint at) {
    static const std::map<std::string, std::string> kWhat = {
        {"secrets", "secret"},
        {"deployments.apps", "deployment"},
        {"replicasets.apps", "rs"},
        {"pods", "pod"},
        {"services", "service"},
        {"endpointslices.discovery.k8s.io", "slice"},
        {"ingresses.networking.k8s.io", "ingress"}};
    auto kind = kWhat.find(ev.object.group_resource);
    if (kind == kWhat.end()) return;
    const std::string& what = kind->second;
    const Json obj = ev.object.Parse();
    if (what == "slice") {
      std::string svc = LabelOf(obj, "kubernetes.io/service-name");
      const Json* eps = FindPath(obj, "endpoints");
      if (svc.empty() || ev.type == cluster::WatchEventType::kDeleted || eps == nullptr ||
          !eps->is_array()) {
        return;
      }
      for (const Json& ep : *eps) {
        const Json* ready = FindPath(ep, "conditions.ready");
        if (ready == nullptr || !ready->is_boolean() || ready->get<bool>()) {
          Mark(what, svc, "ready", at);
          return;
        }
      }
      return;
    }
    const std::string id = LabelOf(obj, std::string(engine::kProjectLabel));
    if (id.empty()) return;
    if (ev.type == cluster::WatchEventType::kDeleted) {
      Mark(what, id, "deleted", at);
      return;
    }
    if (ev.type == cluster::WatchEventType::kAdded) Mark(what, id, "created", at);
    const Json* deleting = FindPath(obj, "metadata.deletionTimestamp");
    if (deleting != nullptr && !deleting->is_null()) Mark(what, id, "terminating", at);
    if (what == "deployment" && engine::DeploymentReadiness(obj).ready()) {
      Mark(what, id, "ready", at);
    } else if (what == "rs") {
      const Json& st = obj["status"];
      if (st.is_object() && st.value("readyReplicas", 0) >= 1 &&
          st.value("availableReplicas", 0) >= 1) {
        Mark(what, id, "ready", at);
      }
    } else if (what == "pod") {
      if (!GetString(obj["spec"], "nodeName").empty()) Mark(what, id, "scheduled", at);
      const Json& st = obj["status"];
      if (!st.is_object()) return;
      if (GetString(st, "phase") == "Running") Mark(what, id, "started", at);
      const Json* conds = FindPath(st, "conditions");
      if (conds == nullptr || !conds->is_array()) return;
      for (const Json& c : *conds) {
        if (GetString(c, "type") == "Ready" && GetString(c, "status") == "True") {
          Mark(what, id, "ready", at);
        }
      }
    } else if (what == "ingress") {
      const Json* lb = FindPath(obj, "status.loadBalancer.ingress");
      if (lb != nullptr && lb->is_array() && !lb->empty()) Mark(what, id, "address", at);
    }
  }

  std::unique_ptr<cluster::Watcher> watcher_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  mutable Mutex mu_;
  std::map<std::string, TimePoint> first_ GUARDED_BY(mu_);
};

// ---------------------------------------------------------------------------------------------
// The store's commits as they happen: when each (project, phase, generation) was first committed,
// and how many commits each project had.

class PhaseLog {
  using TimePoint = BenchClock::time_point;
  using milliseconds = std::chrono::milliseconds;

 public:
  explicit PhaseLog(store::Store& store) : store_(store) {
    handle_ = store_.AddListener([this](const store::ProjectChange& c) { OnChange(c); });
  }
  ~PhaseLog() { store_.RemoveListener(handle_); }
  PhaseLog(const PhaseLog&) = delete;
  PhaseLog& operator=(const PhaseLog&) = delete;

  // The time `name` first committed `phase` at `generation`; nullopt after `timeout`.
  std::optional<TimePoint> Wait(const std::string& name, const std::string& phase,
                                int64_t generation, milliseconds timeout) {
    MutexLock lock(mu_);
    const std::string key = Key(name, phase, generation);
    cv_.WaitFor(mu_, timeout, [&]() REQUIRES(mu_) { return phases_.count(key) != 0; });
    auto it = phases_.find(key);
    if (it == phases_.end()) return std::nullopt;
    return it->second;
  }
  int Commits(const std::string& name) const {
    MutexLock lock(mu_);
    auto it = commits_.find(name);
    return it == commits_.end() ? 0 : it->second;
  }

 private:
  static std::string Key(const std::string& name, const std::string& phase, int64_t gen) {
    return name + "|" + phase + "|" + std::to_string(gen);
  }
  void OnChange(const store::ProjectChange& c) {
    const TimePoint now = BenchClock::now();
    if (!c.record) return;
    MutexLock lock(mu_);
    ++commits_[c.record->name];
    for (const auto& h : c.history) {
      if (h.kind == "phase") phases_.emplace(Key(c.record->name, h.summary, h.generation), now);
    }
    cv_.NotifyAll();
  }

  store::Store& store_;
  int handle_ = 0;
  mutable Mutex mu_;
  CondVar cv_;
  std::map<std::string, TimePoint> phases_ GUARDED_BY(mu_);
  std::map<std::string, int> commits_ GUARDED_BY(mu_);
};

// ---------------------------------------------------------------------------------------------
// A project's URL sampled through the embedded cluster's ingress listener, from its own thread:
// a plain HTTP GET of "/" with Host = the project's host every `period` (one keep-alive
// connection; the next request is due `period` after the one before was sent, not after its
// answer). An answer counts as the project answering when its pod sent it: the virtual pods
// stamp every answer with X-Steward-Pod, which the ingress's own pages (404 "default backend",
// 503 without a ready endpoint, 502) do not carry.

class UrlSampler {
  using TimePoint = BenchClock::time_point;
  using milliseconds = std::chrono::milliseconds;

 public:
  struct Sample {
    TimePoint sent, received;
    bool answered = false;
  };

  UrlSampler(uint16_t port, std::string host, milliseconds period)
      : host_(std::move(host)), period_(period) {
    net::HttpClient::Options o;
    o.port = port;
    o.timeout = std::chrono::seconds(2);
    client_ = net::HttpClient::Create(o);
    thread_ = std::thread([this] { Loop(); });
  }
  ~UrlSampler() { Stop(); }
  UrlSampler(const UrlSampler&) = delete;
  UrlSampler& operator=(const UrlSampler&) = delete;

  void Stop() {
    {
      MutexLock lock(mu_);
      stop_ = true;
      cv_.NotifyAll();
    }
    if (thread_.joinable()) thread_.join();
  }

  // The first sample the pod answered; nullopt if none within `timeout`.
  std::optional<Sample> WaitFirstAnswer(milliseconds timeout) {
    MutexLock lock(mu_);
    cv_.WaitFor(mu_, timeout, [&]() REQUIRES(mu_) { return first_answer_ >= 0; });
    if (first_answer_ < 0) return std::nullopt;
    return samples_[static_cast<size_t>(first_answer_)];
  }
  // The last sample before the first answer (none: the first sample was answered).
  std::optional<Sample> LastRefusedBeforeAnswer() const {
    MutexLock lock(mu_);
    if (first_answer_ <= 0) return std::nullopt;
    return samples_[static_cast<size_t>(first_answer_ - 1)];
  }
  // Samples sent at or after `t` that the pod did not answer.
  int RefusedSentAfter(TimePoint t) const {
    MutexLock lock(mu_);
    int n = 0;
    for (const Sample& s : samples_) n += (!s.answered && s.sent >= t) ? 1 : 0;
    return n;
  }
  size_t Count() const {
    MutexLock lock(mu_);
    return samples_.size();
  }

 private:
  void Loop() {
    net::Headers headers;
    headers.Set("Host", host_);
    TimePoint next = BenchClock::now();
    while (true) {
      {
        MutexLock lock(mu_);
        // The period is the sampling interval asked for, not synchronisation.
        cv_.WaitUntil(mu_, next, [&]() REQUIRES(mu_) { return stop_; });
        if (stop_) return;
      }
      Sample s;
      s.sent = BenchClock::now();
      auto r = client_->Request("GET", "/", "", headers);
      s.received = BenchClock::now();
      s.answered = r.ok() && !r->headers.Get("X-Steward-Pod").empty();
      {
        MutexLock lock(mu_);
        samples_.push_back(s);
        if (s.answered && first_answer_ < 0) {
          first_answer_ = static_cast<long>(samples_.size()) - 1;
          cv_.NotifyAll();
        }
      }
      next = std::max(next + period_, s.received);
    }
  }

  const std::string host_;
  const milliseconds period_;
  std::unique_ptr<net::HttpClient> client_;
  std::thread thread_;
  mutable Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::vector<Sample> samples_ GUARDED_BY(mu_);
  long first_answer_ GUARDED_BY(mu_) = -1;
};

}  // namespace steward::bench
