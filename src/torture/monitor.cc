#include "torture/monitor.h"

#include <algorithm>
#include <set>

#include "common/time_util.h"
#include "engine/manifests/manifests.h"
#include "torture/steward_reads.h"

namespace steward::torture {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::chrono::seconds OrphanGrace(std::string_view kind, std::chrono::seconds grace) {
  if (kind != kSuppliedSecret) return grace;
  return grace + std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::milliseconds(engine::kSuppliedOrphanGraceMs));
}

const Oracle* OracleOf(const Oracles& oracles, const std::string& cluster) {
  for (const auto& o : oracles) {
    if (o->cluster() == cluster) return o.get();
  }
  return nullptr;
}

void Monitor::Start() {
  threads_.emplace_back([this] { WatchLoop(); });
  // Enough checkers that a claim is checked while it is current: one per 4 projects (4..128).
  const int checkers = std::clamp(options_.projects / 4, 4, 128);
  for (int i = 0; i < checkers; ++i) threads_.emplace_back([this] { CheckLoop(); });
  threads_.emplace_back([this] { ScanLoop(); });
}

void Monitor::Stop(const std::function<void()>& unblock) {
  {
    MutexLock lock(mu_);
    idle_cv_.WaitFor(mu_, seconds(120),
                     [&]() REQUIRES(mu_) { return queue_.empty() && busy_ == 0; });
    stop_ = true;
    queue_.clear();  // what is left after the wait is not checked (nor reported)
  }
  cv_.NotifyAll();
  unblock();
  for (auto& t : threads_) t.join();
}

std::vector<Claim> Monitor::RunningClaims() {
  MutexLock lock(mu_);
  return running_claims_;
}

void Monitor::CheckClaim(const Claim& claim, bool allow_superseded) {
  const Oracle* oracle = OracleOf(oracles_, claim.cluster);
  if (oracle == nullptr) {
    rec_.Violation(claim.name, "placement",
                   claim.Describe() + " on cluster \"" + claim.cluster + "\"",
                   "(the run has no cluster of that name)");
    return;
  }
  CheckResult result;
  int64_t read_end_ms = 0;
  const auto deadline = Clock::now() + seconds(90);
  while (true) {
    result = claim.phase == "Running" ? oracle->CheckRunning(claim) : oracle->CheckSuspended(claim);
    read_end_ms = WallMs();
    if (result.verdict != Verdict::kInconclusive || Clock::now() > deadline || stopping()) break;
    std::this_thread::sleep_for(milliseconds(500));
  }
  rec_.Update([](TortureReport& r) { ++r.claims_checked; });
  if (result.verdict == Verdict::kHolds) {
    rec_.Update([&](TortureReport& r) {
      ++r.claims_held;
      if (claim.agent) ++r.agent_claims_held;
    });
    return;
  }
  if (result.verdict == Verdict::kInconclusive) {
    rec_.Update([](TortureReport& r) { ++r.claims_inconclusive; });
    return;
  }
  if (allow_superseded) {
    // Excused only when Steward had accepted a newer intent (a higher generation: any
    // operation, a deletion) before the cluster read ended, by the history's own times:
    // Steward may then already have been changing what the claim was about.
    std::optional<int64_t> newer_at;
    bool asked = false;
    auto api = procs_.Api();
    const auto until = Clock::now() + seconds(60);
    while (api.ok() && Clock::now() < until && !asked) {
      auto history = ReadHistory(**api, claim.id, claim.agent);
      if (!history) {
        std::this_thread::sleep_for(milliseconds(500));
        continue;
      }
      asked = true;
      for (const Json& h : *history) {
        if (GetString(h, "kind") != "operation") continue;
        if (h.value("generation", int64_t{0}) <= claim.generation) continue;
        auto at = ParseRfc3339(GetString(h, "at"));
        if (!at) continue;
        const int64_t ms = std::chrono::duration_cast<milliseconds>(at->time_since_epoch()).count();
        if (!newer_at || ms < *newer_at) newer_at = ms;
      }
    }
    if (!asked) {
      rec_.Update([](TortureReport& r) { ++r.claims_inconclusive; });
      return;
    }
    if (newer_at && *newer_at <= read_end_ms) {
      rec_.Update([](TortureReport& r) { ++r.claims_superseded; });
      return;
    }
  }
  rec_.Violation(claim.name, claim.phase, claim.Describe(), result.showed);
}

void Monitor::CheckNotRunningWhileDown(const Claim& claim) {
  if (claim.phase != "Running") return;
  const std::optional<int64_t> down = rec_.DownAt(claim.cluster, claim.since_ms);
  if (!down) return;
  const int64_t told_by =
      *down + std::chrono::duration_cast<milliseconds>(options_.unreachable_grace).count() +
      kTellUnreachableMs;
  if (claim.since_ms <= told_by) return;
  rec_.Violation(
      claim.name, "cluster down", claim.Describe(),
      "cluster " + claim.cluster + " down since " + FormatRfc3339(SystemTime(milliseconds(*down))) +
          " (SIGKILLed), Running claimed " + std::to_string(claim.since_ms - *down) + " ms after");
}

bool Monitor::stopping() {
  MutexLock lock(mu_);
  return stop_;
}

void Monitor::WatchLoop() {
  std::map<std::string, std::string> last;  // id → "generation/phase" last queued
  // A reconnect resumes after the last event received: the changes missed meanwhile, no
  // snapshot. After a restart of Steward (an empty window) it gets `reset` and the snapshot.
  std::string last_event_id;
  while (!stopping()) {
    auto api = procs_.Api();
    if (!api.ok()) return;
    auto st = (*api)->Watch(
        "initial=true&kind=all",
        [&](const api_client::WatchEvent& event) {
          if (stopping()) return false;
          if (event.event != "project" && event.event != "agent") return true;
          // Every event moves `last`, so Running@G → Updating → Running@G is checked again.
          const std::string id = GetString(event.data, "id");
          const std::string key = std::to_string(event.data.value("generation", int64_t{0})) + "/" +
                                  GetString(event.data.value("status", Json::object()), "phase") +
                                  "/" +
                                  std::to_string(event.data.value("status", Json::object())
                                                     .value("observedGeneration", int64_t{0}));
          if (last[id] == key) return true;
          last[id] = key;
          if (std::string stale = StaleClaim(event.data); !stale.empty()) {
            rec_.Violation(GetString(event.data, "name"), "stale phase", stale,
                           "(not asked: no generation may be claimed before it is reached)");
            return true;
          }
          auto claim = Claim::FromProject(event.data);
          if (!claim) return true;
          CheckNotRunningWhileDown(*claim);
          {
            MutexLock lock(mu_);
            if (claim->phase == "Running") running_claims_.push_back(*claim);
            queue_.push_back({*claim, Clock::now()});
          }
          cv_.NotifyOne();
          return true;
        },
        seconds(60), last_event_id);
    (void)st;  // the stream ends when Steward is killed or at the timeout: reconnect
    last_event_id = (*api)->last_event_id();
    if (!stopping()) std::this_thread::sleep_for(milliseconds(200));
  }
}

void Monitor::CheckLoop() {
  while (true) {
    Claim claim;
    {
      MutexLock lock(mu_);
      cv_.Wait(mu_, [&]() REQUIRES(mu_) { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      claim = std::move(queue_.front().claim);
      const int64_t lag_ms =
          std::chrono::duration_cast<milliseconds>(Clock::now() - queue_.front().seen).count();
      queue_.pop_front();
      ++busy_;
      rec_.Update([&](TortureReport& r) {
        r.max_check_lag_ms = std::max(r.max_check_lag_ms, lag_ms);
        if (lag_ms > kLateCheckMs) ++r.late_checks;
      });
    }
    CheckClaim(claim, true);
    {
      MutexLock lock(mu_);
      --busy_;
    }
    idle_cv_.NotifyAll();
  }
}

void Monitor::ScanLoop() {
  std::map<std::string, Clock::time_point> orphan_since;  // uid → first seen orphaned
  std::set<std::string> reported;
  std::mt19937_64 rng(options_.seed ^ 0x5ca11ab1e);
  while (true) {
    {
      MutexLock lock(mu_);
      if (cv_.WaitFor(mu_, seconds(2), [&]() REQUIRES(mu_) { return stop_; })) return;
    }
    // With several clusters, Steward before the clusters too: an object on the cluster a move
    // left is allowed while either listing says the move is under way (it may end mid-scan).
    std::optional<std::map<std::string, Listed>> before;
    if (oracles_.size() > 1) {
      if (auto api = procs_.Api(); api.ok()) before = ListProjects(**api);
    }
    // The clusters first, then Steward: an object created after the list cannot belong to a
    // project Steward had not accepted yet. A cluster that cannot be listed (down) is left out.
    std::vector<LabelledObject> objects;
    for (const auto& oracle : oracles_) {
      auto scan = oracle->ScanLabelled();
      if (scan.verdict != Verdict::kHolds) continue;
      objects.insert(objects.end(), scan.objects.begin(), scan.objects.end());
    }
    auto api = procs_.Api();
    if (!api.ok()) continue;
    auto projects = ListProjects(**api);
    if (!projects) continue;
    rec_.Update([](TortureReport& r) { ++r.scans; });
    const auto now = Clock::now();
    std::set<std::string> seen;
    for (const auto& o : objects) {
      const std::string key = o.cluster + "/" + o.uid;
      auto project = projects->find(o.project_id);
      if (project != projects->end()) {
        // Never moved behind the user's back: its objects only where it is placed, or on the
        // cluster a move under way left.
        auto there = [&](const Listed& l) {
          return l.cluster == o.cluster || l.moving_from == o.cluster;
        };
        auto was = before ? before->find(o.project_id) : projects->end();
        const bool allowed =
            there(project->second) || (before && was != before->end() && there(was->second));
        if (!allowed && reported.insert(key).second) {
          rec_.Violation(project->second.name, "placement",
                         "placed on cluster " + project->second.cluster,
                         o.kind + " " + o.name + " on cluster " + o.cluster);
        }
        continue;
      }
      seen.insert(key);
      auto [it, fresh] = orphan_since.emplace(key, now);
      const auto grace = OrphanGrace(o.kind, options_.orphan_grace);
      if (!fresh && now - it->second > grace && reported.insert(key).second) {
        rec_.Violation("(none: " + o.project_id + ")", "orphan",
                       "no project with id " + o.project_id,
                       o.kind + " " + o.name + (o.terminating ? " (terminating)" : "") +
                           (o.cluster == "default" ? "" : " on cluster " + o.cluster) +
                           " for more than " + std::to_string(grace.count()) + " s");
      }
    }
    std::erase_if(orphan_since, [&](const auto& kv) { return !seen.count(kv.first); });
    std::set<std::string> moving;
    for (const auto* listing : {&*projects, before ? &*before : nullptr}) {
      if (listing == nullptr) continue;
      for (const auto& [id, l] : *listing) {
        if (!l.moving_from.empty()) moving.insert(id);
      }
    }
    for (const auto& d : Oracle::Duplicates(objects, moving)) {
      if (reported.insert(d).second) rec_.Violation("(scan)", "duplicate", "one of each", d);
    }
    CheckCredentials(objects, *projects, rng);
  }
}

void Monitor::CheckCredentials(const std::vector<LabelledObject>& objects,
                               const std::map<std::string, Listed>& projects,
                               std::mt19937_64& rng) {
  std::vector<const LabelledObject*> secrets;
  for (const auto& o : objects) {
    if (o.kind == "Secret" && !o.terminating && projects.count(o.project_id)) secrets.push_back(&o);
  }
  std::shuffle(secrets.begin(), secrets.end(), rng);
  if (secrets.size() > 40) secrets.resize(40);
  auto api = procs_.Api();
  if (!api.ok()) return;
  for (const LabelledObject* s : secrets) {
    const std::string& name = projects.at(s->project_id).name;
    const Oracle* oracle = OracleOf(oracles_, s->cluster);
    if (oracle == nullptr) continue;
    auto token = oracle->SecretToken(name, s->project_id);
    if (!token || token->empty()) continue;
    rec_.SeeToken(name, *token);
    auto check = (*api)->Post("/v1/credentials/check", Json{{"token", *token}});
    if (!check.ok()) continue;  // Steward restarting
    rec_.Update([](TortureReport& r) { ++r.credential_checks; });
    if (check->value("valid", false) && GetString(*check, "projectId") == s->project_id) continue;
    // Rotated or deleted in between: the Secret no longer holds that token.
    auto again = oracle->SecretToken(name, s->project_id);
    if (!again || *again != *token) continue;
    rec_.Violation(name, "credentials", "credential check: " + DumpJson(*check),
                   "Secret " + s->name + " holds that token");
  }
}

}  // namespace steward::torture
