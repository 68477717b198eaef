#include "torture/torture.h"

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "api_client/api_client.h"
#include "cluster/profile/profile.h"
#include "common/file.h"
#include "common/mutex.h"
#include "common/time_util.h"
#include "engine/manifests/manifests.h"
#include "engine/model/shard.h"
#include "store/postgres_store.h"
#include "torture/child_process.h"
#include "torture/creation_order.h"
#include "torture/epochs.h"
#include "torture/oracle.h"
#include "torture/run_processes.h"
#include "torture/run_record.h"

namespace steward::torture {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// How long an object of a project Steward does not know may stay: `grace`, and for a
// supplied-credentials Secret (written just before its project is committed; a Steward killed
// in between leaves it) also the engine's grace for those.
std::chrono::seconds OrphanGrace(std::string_view kind, std::chrono::seconds grace) {
  if (kind != kSuppliedSecret) return grace;
  return grace + std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::milliseconds(engine::kSuppliedOrphanGraceMs));
}

constexpr char kTeam[] = "torture";
// A request with no answer (the server was killed) is sent again until this passes.
constexpr seconds kNoAnswerDeadline{180};
constexpr char kWaitQuery[] = "wait=30s";
// A claim checked later than this after the watch stream showed it is counted as late: a
// Running claimed before its pods were ready may have come true meanwhile (the hostile
// profile's pods are Ready 2.5 s after their creation at the soonest).
constexpr int64_t kLateCheckMs = 2000;

// The record's path by its name (or, with `agent` given, its id): agents under /v1/agents.
std::string RecordPath(const std::string& name_or_id, bool agent) {
  return (agent ? "/v1/agents/" : "/v1/projects/") + name_or_id;
}
std::string RecordPath(const std::string& name) { return RecordPath(name, IsAgentName(name)); }

// The spec a project is created and changed with. By project index, a third of the projects
// also have a custom hostname (a second Ingress) and a quarter a PVC (so a Recreate rollout).
Json SpecFor(const std::string& name, int index, const std::string& image) {
  Json spec = {{"team", kTeam}, {"stack", {{"image", image}}}};
  if (index % 3 == 0) spec["customHostname"] = name + ".custom.localhost";
  if (index % 4 == 1) spec["storage"] = {{"size", "1Gi"}};
  return spec;
}

// An agent's spec: its team and broker, and the platform's token (`token` empty: kept as it is).
Json AgentSpecFor(int index, const std::string& token) {
  Json spec = {{"team", kAgentTeam}, {"broker", AgentBroker(index)}};
  if (!token.empty()) spec["credentials"] = {{"token", token}};
  return spec;
}

// An instance operation: each call answered 2xx, or refused with 404 (no such project), 409 (no
// pod can answer) or 503 (the pod went while it was asked); anything else is a violation, and no
// answer at all is re-sent as a lifecycle operation is.
void ExecuteInstanceOp(api_client::ApiClient& api, const std::string& name, const PlannedOp& op,
                       Record& rec) {
  const std::string base = RecordPath(name);
  std::vector<std::pair<std::string, std::string>> calls;  // method, target
  std::vector<Json> bodies;
  if (op.kind == OpKind::kStatus) {
    calls = {{"GET", base + "/status"}};
    bodies = {nullptr};
  } else if (op.kind == OpKind::kCommand) {
    calls = {{"POST", base + "/commands/" + op.command}};
    bodies = {nullptr};
  } else if (op.kind == OpKind::kFiles) {
    calls = {{"POST", base + "/files"},
             {"GET", base + "/files/torture"},
             {"DELETE", base + "/files/torture"}};
    bodies = {Json{{"directory", "torture/" + std::to_string(op.gap.count())}}, nullptr, nullptr};
  } else {
    calls = {{"GET", base + "/resources"}};
    bodies = {nullptr};
  }
  const std::string op_name(OpName(op.kind));
  const auto deadline = Clock::now() + kNoAnswerDeadline;
  for (size_t i = 0; i < calls.size(); ++i) {
    const auto& [method, target] = calls[i];
    while (true) {
      rec.Update([](TortureReport& r) { ++r.ops_sent; });
      auto answer = api.Call(method, target, bodies[i].is_null() ? nullptr : &bodies[i]);
      if (answer.ok()) {
        rec.Update([](TortureReport& r) {
          ++r.ops_answered;
          ++r.instance_ops;
        });
        break;
      }
      const int code = api.last_error().http_status;
      if (code == 0) {
        rec.Update([](TortureReport& r) { ++r.ops_no_answer; });
        if (Clock::now() > deadline) {
          rec.Violation(name, "availability", op_name + " got no answer", "(an instance call)");
          return;
        }
        std::this_thread::sleep_for(milliseconds(300));
        continue;
      }
      if (code == 404 || code == 409 || code == 503) {
        rec.Update([](TortureReport& r) { ++r.ops_refused; });
        return;  // the rest of this operation needs what was refused
      }
      rec.Violation(name, "api",
                    op_name + ": " + method + " " + target + " answered " + std::to_string(code) +
                        " " + api.last_error().reason + ": " + api.last_error().message,
                    "(a valid instance call)");
      return;
    }
  }
}

// The token an agent's create or supply `op` puts: new for each (the gap makes it differ).
std::string AgentToken(const std::string& name, const PlannedOp& op) {
  return "ffbt_" + name.substr(name.size() - 5) + "_" + std::to_string(op.gap.count());
}

// One driver's API clients, one per replica: each operation goes to a random replica, and one
// that got no answer (its replica killed) is sent again to another. Not thread-safe.
class ReplicaClients {
 public:
  static StatusOr<ReplicaClients> For(const Processes& procs, uint64_t seed) {
    ReplicaClients c;
    for (int i = 0; i < procs.replicas(); ++i) {
      ASSIGN_OR_RETURN(auto client, procs.Api(i));
      c.clients_.push_back(std::move(client));
    }
    c.rng_.seed(seed);
    return c;
  }
  api_client::ApiClient& Pick() {
    at_ = static_cast<size_t>(rng_() % clients_.size());
    return *clients_[at_];
  }
  api_client::ApiClient& Other() {
    at_ = (at_ + 1) % clients_.size();
    return *clients_[at_];
  }

 private:
  std::vector<std::unique_ptr<api_client::ApiClient>> clients_;
  size_t at_ = 0;
  std::mt19937_64 rng_;
};

// Sends one planned operation and records the answer; re-sends while there is no answer.
void Execute(ReplicaClients& apis, const std::string& name, int index, const PlannedOp& op,
             Record& rec) {
  api_client::ApiClient* api = &apis.Pick();
  const bool agent = IsAgentName(name);
  std::string method = "POST", target = RecordPath(name);
  Json body = Json::object();
  switch (op.kind) {
    case OpKind::kCreate:
    case OpKind::kChangeStack:
      method = "PUT";
      body = Json{{"spec", agent ? AgentSpecFor(index, AgentToken(name, op))
                                 : SpecFor(name, index, op.image)}};
      if (op.kind == OpKind::kCreate) body["start"] = op.start;
      break;
    case OpKind::kStart:
      target += "/start";
      break;
    case OpKind::kSuspend:
      target += agent ? "/stop" : "/suspend";
      break;
    case OpKind::kRestart:
      target += "/restart";
      break;
    case OpKind::kRotate:
      target += "/rotate-credentials";
      break;
    case OpKind::kDelete:
      method = "DELETE";
      break;
    case OpKind::kSupply:
      // A stack change with new platform credentials (a rotation through a new Secret of theirs);
      // like change-stack, it creates the project when an overlapping delete got there first.
      method = "PUT";
      if (agent) {
        body = Json{{"spec", AgentSpecFor(index, AgentToken(name, op))}};
        break;
      }
      body = Json{{"spec", SpecFor(name, index, op.image)}};
      body["spec"]["credentials"] = {{"clientId", "ffp_" + name},
                                     {"clientSecret", "s-" + std::to_string(op.gap.count())},
                                     {"token", "ffpt_" + std::to_string(op.gap.count())}};
      break;
    case OpKind::kFiles:
    case OpKind::kResources:
    case OpKind::kStatus:
    case OpKind::kCommand:
      ExecuteInstanceOp(*api, name, op, rec);
      return;
  }
  if (op.wait) target += std::string("?") + kWaitQuery;
  const std::string op_name(OpName(op.kind));
  const auto deadline = Clock::now() + kNoAnswerDeadline;
  bool recreate_waited = false;
  bool unanswered = false;  // an earlier attempt got no answer: it may have been applied
  while (true) {
    if (op.kind == OpKind::kCreate || op.kind == OpKind::kChangeStack ||
        op.kind == OpKind::kRotate || op.kind == OpKind::kSupply) {
      rec.CountCredentialOp(name);
    }
    rec.Update([](TortureReport& r) { ++r.ops_sent; });
    auto answer = api->Call(method, target, method == "DELETE" ? nullptr : &body);
    if (answer.ok()) {
      rec.Update([](TortureReport& r) { ++r.ops_answered; });
      Answer a;
      a.op = op_name;
      a.id = GetString(*answer, "id");
      if (answer->value("deleted", false)) {
        a.generation = INT64_MAX;
        a.desired = "deleted";
      } else {
        a.created_at = GetString(*answer, "createdAt");
        a.generation = answer->value("generation", int64_t{0});
        a.desired = GetString(*answer, "desiredState");
        if (const Json* image = FindPath(*answer, "spec.stack.image");
            image && image->is_string()) {
          a.image = image->get<std::string>();
        }
      }
      rec.AddAnswer(name, std::move(a));
      return;
    }
    int code = api->last_error().http_status;
    // 503: the store (PostgreSQL restarting) or, for a supply, the cluster could not take it
    // (its Secret is written before the intent); the answer says to send it again, and what was
    // not acknowledged may or may not have been committed: as no answer.
    if (code == 503) code = 0;
    if (code == 0) {
      unanswered = true;
      rec.Update([](TortureReport& r) { ++r.ops_no_answer; });
      if (Clock::now() > deadline) {
        rec.Violation(
            name, "availability",
            op_name + " got no answer for " + std::to_string(kNoAnswerDeadline.count()) + " s",
            answer.error().ToString());
        return;
      }
      std::this_thread::sleep_for(milliseconds(300));
      api = &apis.Other();  // its replica may be down: any other serves the whole API
      continue;
    }
    if (code == 409 && op.kind == OpKind::kCreate && !recreate_waited) {
      // The previous incarnation is still being deleted: create again once it is purged.
      recreate_waited = true;
      const auto until = Clock::now() + seconds(120);
      while (Clock::now() < until) {
        auto got = api->Get(RecordPath(name));
        if (!got.ok() && api->last_error().http_status == 404) break;
        std::this_thread::sleep_for(milliseconds(500));
      }
      continue;
    }
    if (code == 404 && op.kind == OpKind::kDelete && unanswered) {
      // The unanswered attempt deleted it (and the project was purged since): a delete answer
      // for the incarnation this name had.
      if (auto id = rec.LastId(name)) {
        Answer a;
        a.op = op_name;
        a.id = *id;
        a.generation = INT64_MAX;
        a.desired = "deleted";
        rec.AddAnswer(name, std::move(a));
      }
      return;
    }
    if (code == 404 || code == 409) {
      rec.Update([](TortureReport& r) { ++r.ops_refused; });
      return;
    }
    rec.Violation(name, "api",
                  op_name + " answered " + std::to_string(code) + " " + api->last_error().reason +
                      ": " + api->last_error().message,
                  "(a valid request)");
    return;
  }
}

// Drives project `index`, or agent `index` when `agent`, through its whole plan.
void Drive(const Processes& procs, const TortureOptions& options, int index, bool agent,
           Record& rec) {
  const std::string name = agent ? AgentName(index) : ProjectName(index);
  auto plan = agent ? PlanAgent(options.seed, index, options.plan)
                    : PlanProject(options.seed, index, options.plan);
  const uint64_t seed = options.seed * 1000003 + static_cast<uint64_t>(index) * 2 + (agent ? 1 : 0);
  auto apis = ReplicaClients::For(procs, seed);
  if (!apis.ok()) {
    rec.Violation(name, "setup", "API client", apis.error().ToString());
    return;
  }
  std::vector<std::thread> overlapping;
  for (size_t i = 0; i < plan.size(); ++i) {
    const PlannedOp& op = plan[i];
    // The gap is the workload's pacing (think time), not synchronisation.
    std::this_thread::sleep_for(op.gap);
    if (op.overlap) {
      overlapping.emplace_back([&procs, &rec, name, index, op, seed, i] {
        auto own = ReplicaClients::For(procs, seed ^ (i + 1) * 0x9e3779b97f4a7c15ULL);
        if (own.ok()) Execute(*own, name, index, op, rec);
      });
      continue;
    }
    Execute(*apis, name, index, op, rec);
  }
  for (auto& t : overlapping) t.join();
}

int64_t WallMs() {
  return std::chrono::duration_cast<milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Steward's projects and agents: id → name (every page of both); nullopt when Steward did not
// answer.
std::optional<std::map<std::string, std::string>> ListProjects(api_client::ApiClient& api) {
  std::map<std::string, std::string> out;
  for (const char* collection : {"/v1/projects", "/v1/agents"}) {
    std::string token;
    do {
      auto page = api.Get(std::string(collection) + "?limit=1000" +
                          (token.empty() ? std::string() : "&continue=" + token));
      if (!page.ok()) return std::nullopt;
      for (const Json& p : page->value("items", Json::array())) {
        out[GetString(p, "id")] = GetString(p, "name");
      }
      std::string next = GetString(*page, "continue");
      if (!next.empty() && next == token) return std::nullopt;  // a token that does not advance
      token = std::move(next);
    } while (!token.empty());
  }
  return out;
}

// A project's (or an agent's) whole history (every page, also after a purge); nullopt when
// Steward did not answer or the pages do not advance.
std::optional<std::vector<Json>> ReadHistory(api_client::ApiClient& api, const std::string& id,
                                             bool agent) {
  std::vector<Json> out;
  int64_t after = 0;
  while (true) {
    auto page =
        api.Get(RecordPath(id, agent) + "/history?limit=1000&after=" + std::to_string(after));
    if (!page.ok()) return std::nullopt;
    const Json items = page->value("items", Json::array());
    for (const Json& h : items) out.push_back(h);
    if (items.size() < 1000) return out;
    const int64_t last = items.back().value("seq", int64_t{0});
    if (last <= after) return std::nullopt;
    after = last;
  }
}

// Watches Steward's claims and checks each against the cluster while the run goes on; scans for
// orphans, duplicates and credentials.
class Monitor {
 public:
  Monitor(const Processes& procs, const TortureOptions& options, Oracle& oracle, Record& rec)
      : procs_(procs), options_(options), oracle_(oracle), rec_(rec) {}

  void Start() {
    threads_.emplace_back([this] { WatchLoop(); });
    // Enough checkers that a claim is checked while it is current: one per 4 projects (4..128).
    const int checkers = std::clamp(options_.projects / 4, 4, 128);
    for (int i = 0; i < checkers; ++i) threads_.emplace_back([this] { CheckLoop(); });
    threads_.emplace_back([this] { ScanLoop(); });
  }

  // Waits until every queued claim has been checked (bounded), then stops every thread;
  // `unblock` ends the watch stream the watching thread may be blocked in (stops Steward).
  void Stop(const std::function<void()>& unblock) {
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

  // Every Running claim the watch stream showed (for the checks after the run).
  std::vector<Claim> RunningClaims() {
    MutexLock lock(mu_);
    return running_claims_;
  }

  // Checks one claim; on failure decides violation or superseded by asking Steward again.
  void CheckClaim(const Claim& claim, bool allow_superseded) {
    CheckResult result;
    int64_t read_end_ms = 0;
    const auto deadline = Clock::now() + seconds(90);
    while (true) {
      result =
          claim.phase == "Running" ? oracle_.CheckRunning(claim) : oracle_.CheckSuspended(claim);
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
          const int64_t ms =
              std::chrono::duration_cast<milliseconds>(at->time_since_epoch()).count();
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

 private:
  bool stopping() {
    MutexLock lock(mu_);
    return stop_;
  }

  void WatchLoop() {
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
            const std::string key =
                std::to_string(event.data.value("generation", int64_t{0})) + "/" +
                GetString(event.data.value("status", Json::object()), "phase") + "/" +
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

  void CheckLoop() {
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

  void ScanLoop() {
    std::map<std::string, Clock::time_point> orphan_since;  // uid → first seen orphaned
    std::set<std::string> reported;
    std::mt19937_64 rng(options_.seed ^ 0x5ca11ab1e);
    while (true) {
      {
        MutexLock lock(mu_);
        if (cv_.WaitFor(mu_, seconds(2), [&]() REQUIRES(mu_) { return stop_; })) return;
      }
      // The cluster first, then Steward: an object created after the list cannot belong to a
      // project Steward had not accepted yet.
      auto scan = oracle_.ScanLabelled();
      if (scan.verdict != Verdict::kHolds) continue;
      auto api = procs_.Api();
      if (!api.ok()) continue;
      auto projects = ListProjects(**api);
      if (!projects) continue;
      rec_.Update([](TortureReport& r) { ++r.scans; });
      const auto now = Clock::now();
      std::set<std::string> seen;
      for (const auto& o : scan.objects) {
        if (projects->count(o.project_id)) continue;
        seen.insert(o.uid);
        auto [it, fresh] = orphan_since.emplace(o.uid, now);
        const auto grace = OrphanGrace(o.kind, options_.orphan_grace);
        if (!fresh && now - it->second > grace && reported.insert(o.uid).second) {
          rec_.Violation("(none: " + o.project_id + ")", "orphan",
                         "no project with id " + o.project_id,
                         o.kind + " " + o.name + (o.terminating ? " (terminating)" : "") +
                             " for more than " + std::to_string(grace.count()) + " s");
        }
      }
      std::erase_if(orphan_since, [&](const auto& kv) { return !seen.count(kv.first); });
      for (const auto& d : Oracle::Duplicates(scan.objects)) {
        if (reported.insert(d).second) rec_.Violation("(scan)", "duplicate", "one of each", d);
      }
      CheckCredentials(scan.objects, *projects, rng);
    }
  }

  // A sample of the Secrets: their token must be accepted by Steward's credential check.
  void CheckCredentials(const std::vector<LabelledObject>& objects,
                        const std::map<std::string, std::string>& projects, std::mt19937_64& rng) {
    std::vector<const LabelledObject*> secrets;
    for (const auto& o : objects) {
      if (o.kind == "Secret" && !o.terminating && projects.count(o.project_id))
        secrets.push_back(&o);
    }
    std::shuffle(secrets.begin(), secrets.end(), rng);
    if (secrets.size() > 40) secrets.resize(40);
    auto api = procs_.Api();
    if (!api.ok()) return;
    for (const LabelledObject* s : secrets) {
      const std::string& name = projects.at(s->project_id);
      auto token = oracle_.SecretToken(name, s->project_id);
      if (!token || token->empty()) continue;
      rec_.SeeToken(name, *token);
      auto check = (*api)->Post("/v1/credentials/check", Json{{"token", *token}});
      if (!check.ok()) continue;  // Steward restarting
      rec_.Update([](TortureReport& r) { ++r.credential_checks; });
      if (check->value("valid", false) && GetString(*check, "projectId") == s->project_id) continue;
      // Rotated or deleted in between: the Secret no longer holds that token.
      auto again = oracle_.SecretToken(name, s->project_id);
      if (!again || *again != *token) continue;
      rec_.Violation(name, "credentials", "credential check: " + DumpJson(*check),
                     "Secret " + s->name + " holds that token");
    }
  }

  const Processes& procs_;
  const TortureOptions& options_;
  Oracle& oracle_;
  Record& rec_;
  Mutex mu_;
  CondVar cv_, idle_cv_;
  struct Queued {
    Claim claim;
    Clock::time_point seen;  // when the watch stream showed it
  };
  std::deque<Queued> queue_ GUARDED_BY(mu_);
  std::vector<Claim> running_claims_ GUARDED_BY(mu_);  // every Running claim seen, in order
  int busy_ GUARDED_BY(mu_) = 0;
  bool stop_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;  // started by Start(), joined by Stop(): one thread
};

// A SIGKILL of one replica, for the handover check: when, and when it was back in time.
struct Kill {
  int replica = 0;
  int64_t at_ms = 0;    // wall clock
  int64_t back_ms = 0;  // ready again before its Lease could lapse (Death::back_ms); else 0
};

// Kills replicas, the cluster and the database at random moments until the configured counts
// are reached. With several replicas, every other kill keeps its replica down past the lease
// duration, so that the others must take its share over; the rest restart it at once (it then
// takes its own share back).
// `cluster_kills_us` gets, for each kill of the cluster, when its process was gone (wall µs).
std::vector<Kill> Chaos(Processes& procs, const TortureOptions& options, Record& rec,
                        std::atomic<bool>& failed, std::vector<int64_t>* cluster_kills_us) {
  std::mt19937_64 rng(options.seed * 7919 + 17);
  auto uniform_ms = [&](int lo, int hi) {
    return milliseconds(lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1)));
  };
  std::vector<Kill> kills_done;
  int kills = 0, restarts = 0, db_restarts = 0;
  auto left = [&] {
    return std::vector<int>{options.kill_steward - kills, options.restart_cluster - restarts,
                            options.restart_database - db_restarts};
  };
  while (kills < options.kill_steward || restarts < options.restart_cluster ||
         db_restarts < options.restart_database) {
    std::this_thread::sleep_for(uniform_ms(2000, 8000));
    // Which: at random among those with some left.
    std::vector<int> remaining = left(), choices;
    for (int i = 0; i < 3; ++i) {
      if (remaining[static_cast<size_t>(i)] > 0) choices.push_back(i);
    }
    const int what = choices[rng() % choices.size()];
    if (what == 0) {
      ++kills;
      int replica = static_cast<int>(rng() % static_cast<uint64_t>(procs.replicas()));
      const bool long_down = procs.replicas() > 1 && kills % 2 == 0;
      // Every other kill (of those with several replicas) is of a busy project's owner.
      std::string why;
      if (procs.replicas() > 1 && (kills / 2) % 2 == 0) {
        if (auto owner = procs.OwnerOfABusyProject(rng)) {
          replica = owner->first;
          why = ", the owner of " + owner->second + " in the middle of a step";
        }
      }
      rec.Log("SIGKILL " + procs.ReplicaName(replica) + " (" + std::to_string(kills) + "/" +
              std::to_string(options.kill_steward) + ")" + why +
              (long_down ? ", down past its lease" : ""));
      Kill k{replica, WallMs()};
      procs.KillSteward(replica);
      std::this_thread::sleep_for(long_down ? options.lease_duration + options.retry_period +
                                                  uniform_ms(2000, 4000)
                                            : uniform_ms(0, 1000));
      if (Status st = procs.StartSteward(replica); !st.ok()) {
        rec.Violation("(steward)", "restart", "steward serve after SIGKILL", st.ToString());
        failed = true;
        kills_done.push_back(k);
        return kills_done;
      }
      const int64_t ready = WallMs();
      if (ready - k.at_ms < milliseconds(options.lease_duration).count()) k.back_ms = ready;
      kills_done.push_back(k);
      rec.Update([](TortureReport& r) { ++r.steward_kills; });
    } else if (what == 1) {
      ++restarts;
      rec.Log("SIGKILL cluster (" + std::to_string(restarts) + "/" +
              std::to_string(options.restart_cluster) + ")");
      procs.KillCluster();
      cluster_kills_us->push_back(WallMs() * 1000 + 999);  // gone by the end of this ms
      std::this_thread::sleep_for(uniform_ms(500, 2000));
      if (Status st = procs.StartCluster(); !st.ok()) {
        rec.Violation("(cluster)", "restart", "steward cluster after SIGKILL", st.ToString());
        failed = true;
        return kills_done;
      }
      rec.Update([](TortureReport& r) { ++r.cluster_restarts; });
    } else {
      ++db_restarts;
      rec.Log("restart PostgreSQL (" + std::to_string(db_restarts) + "/" +
              std::to_string(options.restart_database) + ")");
      if (Status st = procs.RestartDatabase(uniform_ms(500, 2000)); !st.ok()) {
        rec.Violation("(database)", "restart", "PostgreSQL restart", st.ToString());
        failed = true;
        return kills_done;
      }
      rec.Update([](TortureReport& r) { ++r.database_restarts; });
    }
  }
  return kills_done;
}

// What a project should end as, from the last answer it got (by incarnation, then generation).
struct Expectation {
  Answer last;
  std::string phase;  // Running | Failed | Suspended | "" (deleted: no project)
};

std::map<std::string, Expectation> Expectations(
    const std::map<std::string, std::vector<Answer>>& all) {
  std::map<std::string, Expectation> out;
  for (const auto& [name, answers] : all) {
    if (answers.empty()) continue;
    const Answer* last = &answers.front();
    for (const auto& a : answers) {
      if (After(a, *last)) last = &a;
    }
    Expectation e{*last, ""};
    if (last->desired == "running") e.phase = last->image == kFailingImage ? "Failed" : "Running";
    if (last->desired == "suspended") e.phase = "Suspended";
    out[name] = e;
  }
  return out;
}

// "" when the project is as expected, else what Steward shows.
std::string Mismatch(api_client::ApiClient& api, const std::string& name, const Expectation& e) {
  auto got = api.Get(RecordPath(name));
  if (e.phase.empty()) {
    if (!got.ok() && api.last_error().http_status == 404) return "";
    return got.ok() ? "still exists: desired " + GetString(*got, "desiredState") + ", phase " +
                          GetString((*got)["status"], "phase")
                    : got.error().ToString();
  }
  if (!got.ok()) return got.error().ToString();
  const Json& status = (*got)["status"];
  const std::string phase = GetString(status, "phase");
  const int64_t observed = status.value("observedGeneration", int64_t{0});
  const int64_t generation = got->value("generation", int64_t{0});
  if (GetString(*got, "id") == e.last.id && phase == e.phase && observed >= generation &&
      generation >= e.last.generation) {
    return "";
  }
  return "id " + GetString(*got, "id") + ", generation " + std::to_string(generation) + ", phase " +
         phase + " (" + GetString(status, "reason") + ") at observedGeneration " +
         std::to_string(observed);
}

// Runs fn(client, i) for every i < n on 16 threads, each with its own API client.
void ForEachParallel(const Processes& procs, size_t n,
                     const std::function<void(api_client::ApiClient&, size_t)>& fn) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&] {
      auto api = procs.Api();
      if (!api.ok()) return;
      for (size_t i = next++; i < n; i = next++) fn(**api, i);
    });
  }
  for (auto& t : threads) t.join();
}

void FinalChecks(Processes& procs, Oracle& oracle, Monitor& monitor, Record& rec,
                 const std::map<std::string, Expectation>& expected) {
  auto api_or = procs.Api();
  if (!api_or.ok()) return;
  api_client::ApiClient& api = **api_or;
  std::vector<std::string> names;
  for (const auto& [name, e] : expected) {
    if (!e.phase.empty()) names.push_back(name);
  }
  ForEachParallel(procs, names.size(), [&](api_client::ApiClient& own, size_t i) {
    auto got = own.Get(RecordPath(names[i]));
    if (!got.ok()) return;  // reported by the quiesce check
    if (auto claim = Claim::FromProject(*got)) monitor.CheckClaim(*claim, false);
  });
  // Nothing left over: every labelled object belongs to a project that exists. (A project that
  // exists but should not is the quiesce check's violation.)
  // Supplied-credentials Secrets of no project are given their grace (OrphanGrace) to go.
  auto scan = oracle.ScanLabelled();
  auto projects = ListProjects(api);
  const auto until = std::chrono::steady_clock::now() + OrphanGrace(kSuppliedSecret, seconds(10));
  auto only_supplied_left = [&] {
    if (scan.verdict != Verdict::kHolds || !projects) return false;
    bool any = false;
    for (const auto& o : scan.objects) {
      if (projects->count(o.project_id)) continue;
      if (o.kind != kSuppliedSecret) return false;
      any = true;
    }
    return any;
  };
  while (only_supplied_left() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(seconds(2));  // the engine removes them at its own pace
    scan = oracle.ScanLabelled();
    projects = ListProjects(api);
  }
  if (scan.verdict != Verdict::kHolds || !projects) {
    rec.Violation("(scan)", "leftovers", "final scan", projects ? scan.error : "listing projects");
  } else {
    std::set<std::string> ids;
    for (const auto& [id, name] : *projects) ids.insert(id);
    for (const auto& o : scan.objects) {
      if (!ids.count(o.project_id)) {
        rec.Violation("(none: " + o.project_id + ")", "leftovers", "no such project after quiesce",
                      o.kind + " " + o.name + (o.terminating ? " (terminating)" : ""));
      }
    }
    for (const auto& d : Oracle::Duplicates(scan.objects)) {
      rec.Violation("(scan)", "duplicate", "one of each", d);
    }
  }
  // Every answered operation is in the project's history (durable before the answer).
  struct Incarnation {
    std::string name, id;
    std::set<int64_t> generations;  // answered
  };
  std::map<std::string, Incarnation> incarnations;  // by id
  for (const auto& [name, list] : rec.Answers()) {
    for (const auto& a : list) {
      if (a.generation == INT64_MAX || a.id.empty()) continue;
      auto& inc = incarnations[a.id];
      inc.name = name;
      inc.id = a.id;
      inc.generations.insert(a.generation);
    }
  }
  std::vector<const Incarnation*> all;
  for (const auto& [id, inc] : incarnations) all.push_back(&inc);
  ForEachParallel(procs, all.size(), [&](api_client::ApiClient& own, size_t i) {
    const Incarnation& inc = *all[i];
    auto history = ReadHistory(own, inc.id, IsAgentName(inc.name));
    if (!history) {
      rec.Violation(inc.name, "durability", "history of " + inc.id,
                    "Steward did not answer: " + own.last_error().message);
      return;
    }
    std::set<int64_t> recorded;
    for (const Json& h : *history) {
      if (GetString(h, "kind") == "operation") recorded.insert(h.value("generation", int64_t{0}));
    }
    for (int64_t g : inc.generations) {
      if (!recorded.count(g)) {
        rec.Violation(inc.name, "durability",
                      "answered 2xx at generation " + std::to_string(g) + " (id " + inc.id + ")",
                      "no operation with that generation in the history");
      }
    }
  });
  // No credential changed without a request that may change it.
  auto tokens = rec.Tokens();
  for (const auto& [name, seen] : tokens) {
    const int allowed = rec.CredentialOps(name);
    if (static_cast<int>(seen.size()) > allowed) {
      rec.Violation(name, "credentials", std::to_string(allowed) + " create/rotate requests",
                    std::to_string(seen.size()) + " distinct tokens in the Secret");
    }
  }
}

// Every record of the run (each incarnation from its first answer's createdAt on), for mapping
// the audit log's object names to records.
ObjectOwners OwnersOf(const std::map<std::string, std::vector<Answer>>& all) {
  ObjectOwners owners;
  for (const auto& [name, answers] : all) {
    std::map<std::string, int64_t> created;  // id → its creation (ms), from the answers
    for (const Answer& a : answers) {
      auto at = ParseRfc3339(a.created_at);
      if (a.id.empty() || !at) continue;
      const int64_t ms = std::chrono::duration_cast<milliseconds>(at->time_since_epoch()).count();
      auto [it, fresh] = created.emplace(a.id, ms);
      if (!fresh) it->second = std::min(it->second, ms);
    }
    for (const auto& [id, ms] : created) {
      if (IsAgentName(name)) {
        owners.AddAgent(id, name, ms);
      } else {
        owners.AddProject(id, name, ms);
      }
    }
  }
  return owners;
}

std::string ReadAuditLog(const Processes& procs) {
  std::ifstream in(procs.audit_log());
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The least time from a pod's creation to Ready in the run's cluster profile (the fixed parts
// of its stages; the kubelet only adds to them), 0 when it cannot be told: a profile that does
// not load here, or one with process pods (their readiness is their own probe's).
int64_t MinimumReadyMs(const TortureOptions& options, Record& rec) {
  auto profile = cluster::LoadProfile(options.profile);
  if (!profile.ok()) {
    rec.Log("order: profile " + options.profile + ": " + profile.error().message() +
            "; Running claims not timed against their Deployments' creates");
    return 0;
  }
  for (const std::string& set : options.profile_sets) {
    const size_t eq = set.find('=');
    if (eq == std::string::npos ||
        !cluster::SetProfileField(*profile, set.substr(0, eq), set.substr(eq + 1)).ok()) {
      return 0;  // the cluster refused it too: the run did not start
    }
  }
  if (!profile->process_images.empty()) return 0;
  return (profile->pod_scheduling.fixed + profile->pod_start.fixed + profile->pod_ready.fixed)
      .count();
}

// After every run, from the cluster's audit log: each Service and Ingress was created only once
// the object it depends on existed, and no Running was committed sooner after its Deployment's
// create than a pod of it could be ready (creation_order.h).
void CheckOrder(const Processes& procs, const TortureOptions& options,
                const std::vector<Claim>& running, const std::vector<int64_t>& cluster_kills_us,
                Record& rec) {
  const std::vector<AuditWrite> writes = ParseAuditWrites(ReadAuditLog(procs));
  const OrderReport order = CheckCreationOrder(writes, OwnersOf(rec.Answers()), cluster_kills_us);
  for (const std::string& v : order.violations) {
    rec.Violation("(order)", "creation order", "each object only once its dependency exists", v);
  }
  std::vector<RunningClaim> claims;
  for (const Claim& c : running) {
    const std::string deployment = c.agent ? c.name : engine::NamesFor(c.id, c.name).deployment;
    claims.push_back({c.id, kNamespace, deployment, c.since_ms, c.Describe()});
  }
  const int64_t min_ready_ms = MinimumReadyMs(options, rec);
  const ReadinessReport timed = CheckRunningAfterCreate(claims, writes, min_ready_ms);
  for (const std::string& v : timed.violations) {
    rec.Violation("(order)", "Running before ready", "Running only once every object is ready", v);
  }
  rec.Update([&](TortureReport& r) {
    r.ordered_creates_checked = order.checked;
    r.ordered_creates_excused = order.excused;
    r.running_claims_timed = timed.checked;
  });
  rec.Log("order: " + std::to_string(writes.size()) + " writes in the audit log; " +
          std::to_string(order.checked) +
          " Service and Ingress creates checked against their "
          "dependencies (" +
          std::to_string(order.excused) + " excused across a cluster kill); " +
          std::to_string(timed.checked) +
          " Running claims timed against their Deployment's "
          "create (a pod is Ready " +
          std::to_string(min_ready_ms) +
          " ms after its creation at "
          "the soonest)");
}

// After a replicated run: from the store's shard history and the cluster's audit log, every
// shard a killed replica held was taken over within lease duration + 1.5 retry periods + 2 s, and
// no record was written by a replica outside its own tenure of the record's shard (epochs.h).
void CheckReplicas(const Processes& procs, const TortureOptions& options,
                   const std::vector<Kill>& kills, Record& rec) {
  store::PostgresOptions po;
  po.url = procs.database_url();
  auto store = store::OpenPostgresStore(po);
  if (!store.ok()) {
    rec.Violation("(replicas)", "shard history", "the store", store.error().ToString());
    return;
  }
  auto history = (*store)->ListShardHistory(0, 0);
  if (!history.ok()) {
    rec.Violation("(replicas)", "shard history", "the store", history.error().ToString());
    return;
  }
  std::vector<Death> deaths;
  for (const Kill& k : kills) deaths.push_back({procs.ReplicaName(k.replica), k.at_ms, k.back_ms});
  // The Lease protocol's own worst case (renewal seen a listing late, expiry a listing late, a
  // shard acquired since the last read waiting a view: lease + 1.5 retry periods), plus 2 s for
  // the reads and acquisitions on a loaded machine (docs/torture.md).
  const int64_t bound_ms = (milliseconds(options.lease_duration) +
                            milliseconds(options.retry_period) * 3 / 2 + milliseconds(2000))
                               .count();
  HandoverReport handovers = CheckHandovers(deaths, *history, bound_ms);
  for (const std::string& v : handovers.violations) {
    rec.Violation("(replicas)", "handover", "within " + std::to_string(bound_ms) + " ms", v);
  }
  const ObjectOwners owners = OwnersOf(rec.Answers());
  const int shards = options.shards;
  EpochReport epochs =
      CheckWriteEpochs(ParseAuditWrites(ReadAuditLog(procs)), *history, owners,
                       [shards](const std::string& id) { return engine::ShardOf(id, shards); });
  for (const std::string& v : epochs.violations) {
    rec.Violation("(replicas)", "fencing", "one replica per shard epoch", v);
  }
  rec.Update([&](TortureReport& r) {
    r.handovers_checked = handovers.shards;
    r.max_handover_ms = handovers.max_ms;
    r.fenced_writes_checked = epochs.attributed;
  });
  rec.Log("replicas: " + std::to_string(history->size()) + " shard events; " +
          std::to_string(handovers.shards) + " shards of killed replicas taken over (median " +
          std::to_string(handovers.median_ms) + " ms, max " + std::to_string(handovers.max_ms) +
          " ms, bound " + std::to_string(bound_ms) + " ms); " + std::to_string(epochs.attributed) +
          " of " + std::to_string(epochs.writes) + " replica writes checked against the epochs (" +
          std::to_string(epochs.exempt) + " supplied-credential Secrets exempt)");
}

std::string ReplayCommand(const TortureOptions& o) {
  std::string s = "steward torture --seed " + std::to_string(o.seed) + " --projects " +
                  std::to_string(o.projects) + " --ops " + std::to_string(o.plan.ops) +
                  " --clients " + std::to_string(o.clients) + " --max-gap-ms " +
                  std::to_string(o.plan.max_gap_ms) + " --agents " + std::to_string(o.agents) +
                  " --profile " + o.profile;
  if (o.kill_steward > 0) s += " --kill-steward " + std::to_string(o.kill_steward);
  if (o.restart_cluster > 0) s += " --restart-cluster " + std::to_string(o.restart_cluster);
  if (o.database != "sqlite") s += " --database " + o.database;
  if (o.replicas > 1) s += " --replicas " + std::to_string(o.replicas);
  if (o.restart_database > 0) s += " --restart-database " + std::to_string(o.restart_database);
  for (const auto& set : o.profile_sets) s += " --set " + set;
  return s;
}

Status ValidateOptions(const TortureOptions& options) {
  if (options.projects < 1 || options.plan.ops < 1) {
    return InvalidArgument("projects and ops must be at least 1");
  }
  if (options.agents < 0) return InvalidArgument("agents must not be negative");
  if (options.clients < 1) return InvalidArgument("clients must be at least 1");
  if (options.database != "sqlite" && options.database != "postgres") {
    return InvalidArgument("database must be sqlite or postgres (got \"" + options.database +
                           "\")");
  }
  if (options.replicas < 1) return InvalidArgument("replicas must be at least 1");
  if (options.replicas > 1 && options.database != "postgres") {
    return InvalidArgument("several replicas need --database postgres (SQLite is one process's)");
  }
  if (options.restart_database > 0 && options.database != "postgres") {
    return InvalidArgument("restart-database needs --database postgres");
  }
  if (access(options.steward_binary.c_str(), X_OK) != 0) {
    return InvalidArgument("steward binary " + options.steward_binary + " is not executable");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<TortureReport> RunTorture(const TortureOptions& options, std::ostream& out) {
  RETURN_IF_ERROR(ValidateOptions(options));
  std::string dir = options.work_dir;
  if (dir.empty()) {
    std::string templ = (fs::temp_directory_path() / "steward-torture-XXXXXX").string();
    if (mkdtemp(templ.data()) == nullptr) return Internal("mkdtemp failed");
    dir = templ;
  }
  // Private: it holds the data dirs, the kubeconfig (the cluster's token) and the logs.
  if (Status st = CreatePrivateDir(dir); !st.ok()) return Internal("creating " + st.message());

  Record rec(out, options.seed, ReplayCommand(options));
  rec.Log("torture: " + rec.replay() + " (work dir " + dir + ")");
  Processes procs(options, dir);
  // A port picked free can be taken by another process before the child binds it: the first
  // start may try other ports (restarts keep theirs: clients know them).
  for (int attempt = 1;; ++attempt) {
    RETURN_IF_ERROR(procs.PickClusterPorts());
    Status st = procs.StartCluster();
    if (st.ok()) break;
    if (attempt == 3) return st;
  }
  RETURN_IF_ERROR(procs.StartDatabase());
  RETURN_IF_ERROR(procs.WriteSharedToken());
  for (int replica = 0; replica < options.replicas; ++replica) {
    for (int attempt = 1;; ++attempt) {
      RETURN_IF_ERROR(procs.PickApiPort(replica));
      Status st = procs.StartSteward(replica);
      if (st.ok()) break;
      if (attempt == 3) return st;
    }
  }
  auto kube = procs.KubeClient();
  if (!kube.ok()) return kube.error();
  Oracle oracle(*kube, {kNamespace, "127.0.0.1", procs.ingress_port()});
  rec.Log("cluster and steward ready; driving " + std::to_string(options.projects) +
          " projects and " + std::to_string(options.agents) + " agents x " +
          std::to_string(options.plan.ops) + " operations");

  Monitor monitor(procs, options, oracle, rec);
  monitor.Start();
  // The agents after the projects, on the same driver threads.
  std::atomic<int> next{0};
  std::vector<std::thread> drivers;
  const int records = options.projects + options.agents;
  for (int c = 0; c < std::min(options.clients, records); ++c) {
    drivers.emplace_back([&] {
      for (int i = next++; i < records; i = next++) {
        const bool agent = i >= options.projects;
        Drive(procs, options, agent ? i - options.projects : i, agent, rec);
      }
    });
  }
  // On this thread: the children's parent-death signal fires when the thread that forked them
  // exits, so every (re)start happens on the thread that lives for the whole run.
  std::atomic<bool> chaos_failed{false};
  std::vector<int64_t> cluster_kills_us;
  const std::vector<Kill> kills = Chaos(procs, options, rec, chaos_failed, &cluster_kills_us);
  for (auto& t : drivers) t.join();
  rec.Log("every operation sent");

  // Quiesce: every project reaches its last requested state.
  const auto expected = Expectations(rec.Answers());
  if (!chaos_failed) {
    auto api = procs.Api();
    if (!api.ok()) return api.error();
    // Every project is asked until it matches; only those not yet matching are asked again.
    std::map<std::string, std::string> pending;
    for (const auto& [name, e] : expected) pending[name] = "not asked yet";
    const auto deadline = Clock::now() + options.quiesce_timeout;
    while (!pending.empty()) {
      for (auto it = pending.begin(); it != pending.end() && Clock::now() < deadline;) {
        std::string m = Mismatch(**api, it->first, expected.at(it->first));
        if (m.empty()) {
          it = pending.erase(it);
        } else {
          it->second = std::move(m);
          ++it;
        }
      }
      if (pending.empty() || Clock::now() >= deadline) break;
      std::this_thread::sleep_for(seconds(1));
    }
    for (const auto& [name, m] : pending) {
      const auto& e = expected.at(name);
      rec.Violation(name, "quiesce",
                    "last answered: " + e.last.op + " (desired " + e.last.desired + ", image " +
                        e.last.image + ") → expected " + (e.phase.empty() ? "gone" : e.phase),
                    "after " + std::to_string(options.quiesce_timeout.count()) + " s: " + m);
    }
    rec.Log("quiesced (" + std::to_string(expected.size()) + " projects, " +
            std::to_string(pending.size()) + " not in their last requested state)");
    FinalChecks(procs, oracle, monitor, rec, expected);
  }
  monitor.Stop([&] { procs.StopStewards(); });
  const std::vector<Claim> running = monitor.RunningClaims();
  procs.StopAll();  // the audit log is complete once the cluster is gone
  CheckOrder(procs, options, running, cluster_kills_us, rec);
  if (options.replicas > 1) CheckReplicas(procs, options, kills, rec);

  // An oracle that checked nothing proves nothing.
  TortureReport counts = rec.Report();
  if (!chaos_failed && (counts.claims_held == 0 || counts.scans == 0)) {
    rec.Violation("(oracle)", "coverage", "claims held and scans must be > 0",
                  std::to_string(counts.claims_held) + " claims held, " +
                      std::to_string(counts.scans) + " scans");
  }
  if (!chaos_failed && counts.claims_held > 0 && counts.ordered_creates_checked == 0) {
    rec.Violation("(oracle)", "coverage", "creates checked for their order must be > 0",
                  "none in the audit log " + procs.audit_log());
  }
  TortureReport report = rec.Report();
  report.work_dir = dir;
  out << "torture: " << report.ops_sent << " requests (" << report.ops_answered << " 2xx, "
      << report.ops_refused << " refused 404/409, " << report.ops_no_answer << " no answer), "
      << report.claims_checked << " claims checked (" << report.claims_held << " held, "
      << report.agent_claims_held << " agent claims held, " << report.claims_superseded
      << " superseded, " << report.claims_inconclusive << " inconclusive), " << report.scans
      << " scans, " << report.credential_checks << " credential checks, " << report.instance_ops
      << " instance calls, " << report.steward_kills << " steward kills, "
      << report.cluster_restarts << " cluster restarts, " << report.ordered_creates_checked
      << " creates checked for their order (" << report.ordered_creates_excused
      << " excused across a cluster kill), " << report.running_claims_timed
      << " Running claims timed against their Deployment's create, claims checked at most "
      << report.max_check_lag_ms << " ms after they were seen (" << report.late_checks
      << " later than " << kLateCheckMs << " ms), ";
  if (options.replicas > 1) {
    out << options.replicas << " replicas, " << report.database_restarts << " database restarts, "
        << report.handovers_checked << " handovers (max " << report.max_handover_ms << " ms), "
        << report.fenced_writes_checked << " fenced writes checked, ";
  }
  out << static_cast<int>(report.seconds) << " s\n";
  out << "violations: " << report.violations.size() << "\n";
  if (!report.violations.empty()) out << "replay: " << rec.replay() << "\n";
  return report;
}

}  // namespace steward::torture
