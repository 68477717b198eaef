// Record: what one torture run's threads share — the log lines and violations they print, the
// answers Steward gave (per name, for the checks after the run), credential operations and
// tokens seen, the clusters kept down, and the report. Answer: one 2xx answer as the driver
// recorded it.
//
// Thread-safe: one mutex (contention is negligible next to the HTTP round trips every caller
// makes); it also serialises the lines written to the output stream. Internal to torture/.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "torture/torture.h"

namespace steward::torture {

// A 2xx answer, as the driver recorded it.
struct Answer {
  std::string op;
  std::string id;
  std::string created_at;  // RFC 3339 with milliseconds: orders incarnations of a name
  int64_t generation = 0;  // INT64_MAX for a purge answer ({"deleted": true})
  std::string desired;     // running | suspended | deleted
  std::string image;
};

// Whether `a` is of a later incarnation of the name than `b`, or a later generation of it.
inline bool After(const Answer& a, const Answer& b) {
  if (a.created_at != b.created_at) return a.created_at > b.created_at;
  return a.generation > b.generation;
}

class Record {
  using Clock = std::chrono::steady_clock;

 public:
  Record(std::ostream& out, uint64_t seed, std::string replay)
      : out_(out), seed_(seed), replay_(std::move(replay)), start_(Clock::now()) {}

  double Elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  void Violation(const std::string& project, const std::string& check, const std::string& said,
                 const std::string& showed) {
    char t[32];
    std::snprintf(t, sizeof t, "%.3f", Elapsed());
    std::string line = "VIOLATION t+" + std::string(t) + "s project " + project + " [" + check +
                       "] Steward said: " + said + " | cluster showed: " + showed + " | seed " +
                       std::to_string(seed_);
    MutexLock lock(mu_);
    out_ << line << "\n" << std::flush;
    report_.violations.push_back(line);
  }

  void Log(const std::string& line) {
    char t[32];
    std::snprintf(t, sizeof t, "%.3f", Elapsed());
    MutexLock lock(mu_);
    out_ << "[t+" << t << "s] " << line << "\n" << std::flush;
  }

  void AddAnswer(const std::string& name, Answer a) {
    MutexLock lock(mu_);
    if (a.generation == INT64_MAX && a.created_at.empty()) {
      // A purge answer carries no createdAt: take it from the incarnation's other answers.
      for (const auto& other : answers_[name]) {
        if (other.id == a.id && !other.created_at.empty()) a.created_at = other.created_at;
      }
    }
    answers_[name].push_back(std::move(a));
  }
  // The id of the latest incarnation this name was answered for.
  std::optional<std::string> LastId(const std::string& name) {
    MutexLock lock(mu_);
    const Answer* last = nullptr;
    for (const auto& a : answers_[name]) {
      if (!a.created_at.empty() && (last == nullptr || After(a, *last))) last = &a;
    }
    if (last == nullptr) return std::nullopt;
    return last->id;
  }
  std::map<std::string, std::vector<Answer>> Answers() {
    MutexLock lock(mu_);
    return answers_;
  }
  // Requests that may give a project a new credential (create, rotate), retries included.
  void CountCredentialOp(const std::string& name) {
    MutexLock lock(mu_);
    ++credential_ops_[name];
  }
  int CredentialOps(const std::string& name) {
    MutexLock lock(mu_);
    return credential_ops_[name];
  }
  // A token seen in a project's Secret.
  void SeeToken(const std::string& name, const std::string& token) {
    MutexLock lock(mu_);
    tokens_[name].insert(token);
  }
  std::map<std::string, std::set<std::string>> Tokens() {
    MutexLock lock(mu_);
    return tokens_;
  }
  // A cluster the chaos thread killed and keeps down past its unreachable grace: from
  // `down_ms` (wall) until ClusterUp's `up_ms` (when its restart began).
  void ClusterDown(const std::string& cluster, int64_t down_ms) {
    MutexLock lock(mu_);
    down_.push_back({cluster, down_ms, INT64_MAX});
  }
  void ClusterUp(const std::string& cluster, int64_t up_ms) {
    MutexLock lock(mu_);
    for (DownWindow& w : down_) {
      if (w.cluster == cluster && w.up_ms == INT64_MAX) w.up_ms = up_ms;
    }
  }
  // When the cluster went down, if it was down at `at_ms`.
  std::optional<int64_t> DownAt(const std::string& cluster, int64_t at_ms) {
    MutexLock lock(mu_);
    for (const DownWindow& w : down_) {
      if (w.cluster == cluster && w.down_ms <= at_ms && at_ms < w.up_ms) return w.down_ms;
    }
    return std::nullopt;
  }

  template <typename F>
  void Update(F f) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    f(report_);
  }
  TortureReport Report() {
    MutexLock lock(mu_);
    report_.seconds = Elapsed();
    return report_;
  }
  const std::string& replay() const { return replay_; }

 private:
  std::ostream& out_;
  const uint64_t seed_;
  const std::string replay_;
  const Clock::time_point start_;
  Mutex mu_;  // also serialises the lines written to out_
  TortureReport report_ GUARDED_BY(mu_);
  std::map<std::string, std::vector<Answer>> answers_ GUARDED_BY(mu_);
  std::map<std::string, int> credential_ops_ GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> tokens_ GUARDED_BY(mu_);
  struct DownWindow {
    std::string cluster;
    int64_t down_ms, up_ms;
  };
  std::vector<DownWindow> down_ GUARDED_BY(mu_);
};

}  // namespace steward::torture
