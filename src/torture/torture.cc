#include "torture/torture.h"

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "api_client/api_client.h"
#include "common/file.h"
#include "torture/after_run_checks.h"
#include "torture/chaos.h"
#include "torture/child_process.h"
#include "torture/monitor.h"
#include "torture/oracle.h"
#include "torture/run_processes.h"
#include "torture/run_record.h"
#include "torture/steward_reads.h"

namespace steward::torture {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kTeam[] = "torture";
// A request with no answer (the server was killed) is sent again until this passes.
constexpr seconds kNoAnswerDeadline{180};
constexpr char kWaitQuery[] = "wait=30s";

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
    c.procs_ = &procs;
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
  std::string ClusterName(int cluster) const { return procs_->ClusterName(cluster); }

 private:
  const Processes* procs_ = nullptr;
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
    case OpKind::kMove:  // only over several clusters
      target += "/move";
      body =
          Json{{"cluster", apis.ClusterName(op.cluster)}, {"order", op.order}, {"storage", "drop"}};
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
      if (op.kind == OpKind::kMove) rec.Update([](TortureReport& r) { ++r.moves; });
      rec.AddAnswer(name, std::move(a));
      return;
    }
    int code = api->last_error().http_status;
    // A move's 503 names the cluster it leaves, which cannot give the project's supplied
    // credentials (killed): refused for now, as the chaos intends.
    if (code == 503 && op.kind == OpKind::kMove) {
      rec.Update([](TortureReport& r) { ++r.ops_refused; });
      return;
    }
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
  PlanOptions plan_options = options.plan;
  plan_options.clusters = options.clusters;
  auto plan = agent ? PlanAgent(options.seed, index, plan_options)
                    : PlanProject(options.seed, index, plan_options);
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
  // A move under way is not over: the cluster it left may still have objects of the project
  // (with startFirst they stay while the new cluster's project is Failed: the user's call).
  if (got->contains("move") && e.phase != "Failed") {
    return "a move from cluster " + GetString((*got)["move"], "from") + " is under way";
  }
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

// Every cluster's labelled objects; the verdict is kInconclusive when any could not be listed.
ScanResult ScanAll(const Oracles& oracles) {
  ScanResult all;
  for (const auto& oracle : oracles) {
    ScanResult one = oracle->ScanLabelled();
    if (one.verdict != Verdict::kHolds) return one;
    all.objects.insert(all.objects.end(), one.objects.begin(), one.objects.end());
  }
  return all;
}

void FinalChecks(Processes& procs, const Oracles& oracles, Monitor& monitor, Record& rec,
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
  auto scan = ScanAll(oracles);
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
    scan = ScanAll(oracles);
    projects = ListProjects(api);
  }
  if (scan.verdict != Verdict::kHolds || !projects) {
    rec.Violation("(scan)", "leftovers", "final scan", projects ? scan.error : "listing projects");
  } else {
    for (const auto& o : scan.objects) {
      auto project = projects->find(o.project_id);
      if (project == projects->end()) {
        rec.Violation("(none: " + o.project_id + ")", "leftovers", "no such project after quiesce",
                      o.kind + " " + o.name + (o.terminating ? " (terminating)" : "") +
                          (o.cluster == "default" ? "" : " on cluster " + o.cluster));
      } else if (project->second.cluster != o.cluster &&
                 !(project->second.moving_from == o.cluster && project->second.phase == "Failed")) {
        // A move leaves nothing behind (a startFirst move away from a cluster whose project
        // failed on the new one keeps the old one's objects: that move is not over).
        rec.Violation(project->second.name, "placement",
                      "placed on cluster " + project->second.cluster,
                      o.kind + " " + o.name + " on cluster " + o.cluster + " after quiesce");
      }
    }
    std::set<std::string> moving;  // only startFirst moves whose new cluster's project failed
    for (const auto& [id, l] : *projects) {
      if (!l.moving_from.empty()) moving.insert(id);
    }
    for (const auto& d : Oracle::Duplicates(scan.objects, moving)) {
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

std::string ReplayCommand(const TortureOptions& o) {
  std::string s = "steward torture --seed " + std::to_string(o.seed) + " --projects " +
                  std::to_string(o.projects) + " --ops " + std::to_string(o.plan.ops) +
                  " --clients " + std::to_string(o.clients) + " --max-gap-ms " +
                  std::to_string(o.plan.max_gap_ms) + " --agents " + std::to_string(o.agents) +
                  " --profile " + o.profile;
  if (o.kill_steward > 0) s += " --kill-steward " + std::to_string(o.kill_steward);
  if (o.restart_cluster > 0) s += " --restart-cluster " + std::to_string(o.restart_cluster);
  if (o.clusters > 1) s += " --clusters " + std::to_string(o.clusters);
  if (o.kill_cluster > 0) s += " --kill-cluster " + std::to_string(o.kill_cluster);
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
  if (options.clusters < 1 || options.clusters > 8) {
    return InvalidArgument("clusters must be between 1 and 8");
  }
  if (options.kill_cluster < 0 || options.restart_cluster < 0) {
    return InvalidArgument("kill-cluster and restart-cluster must not be negative");
  }
  if (options.kill_cluster > 0 && options.clusters < 2) {
    return InvalidArgument(
        "kill-cluster needs --clusters 2 or more (a cluster's unreachable grace is set per "
        "cluster under clusters:)");
  }
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
  for (int cluster = 0; cluster < procs.clusters(); ++cluster) {
    for (int attempt = 1;; ++attempt) {
      RETURN_IF_ERROR(procs.PickClusterPorts(cluster));
      Status st = procs.StartCluster(cluster);
      if (st.ok()) break;
      if (attempt == 3) return st;
    }
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
  Oracles oracles;
  for (int cluster = 0; cluster < procs.clusters(); ++cluster) {
    auto kube = procs.KubeClient(cluster);
    if (!kube.ok()) return kube.error();
    oracles.push_back(std::make_unique<Oracle>(
        *kube, Oracle::Options{kNamespace, "127.0.0.1", procs.ingress_port(cluster),
                               procs.ClusterName(cluster)}));
  }
  rec.Log(std::to_string(procs.clusters()) + " cluster(s) and steward ready; driving " +
          std::to_string(options.projects) + " projects and " + std::to_string(options.agents) +
          " agents x " + std::to_string(options.plan.ops) + " operations");

  Monitor monitor(procs, options, oracles, rec);
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
  ClusterKills cluster_kills_us(static_cast<size_t>(procs.clusters()));
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
    FinalChecks(procs, oracles, monitor, rec, expected);
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
                  "none in the audit log " + procs.audit_log(0));
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
      << report.cluster_restarts << " cluster restarts, ";
  if (options.clusters > 1) {
    out << options.clusters << " clusters, " << report.cluster_kills << " cluster kills ("
        << report.told_unreachable << " records told unreachable, the last "
        << report.max_told_after_grace_ms << " ms after the grace), " << report.moves << " moves, ";
  }
  out << report.ordered_creates_checked << " creates checked for their order ("
      << report.ordered_creates_excused << " excused across a cluster kill), "
      << report.running_claims_timed
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
