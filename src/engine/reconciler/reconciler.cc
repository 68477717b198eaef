#include "engine/reconciler/reconciler.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "common/json_access.h"
#include "common/log.h"
#include "engine/reconciler/run.h"

namespace steward::engine {
namespace {

// A start under way longer than this (an image that never pulls) gives its slot up.
constexpr std::chrono::minutes kStartSlotTtl{2};
// A start waiting for a slot is woken when it gets one; this recheck is only a safety net.
constexpr std::chrono::minutes kQueuedRecheck{1};

// The phase a project is in while something is not ready (see docs/lifecycle.md): before it
// first ran, Provisioning; after, Degraded when this run found drift, Updating when it rolled an
// object to a newer rendering (new intent or config), else the previous phase's story.
Phase WaitingPhase(const std::optional<ProjectStatus>& prev, int64_t generation, bool drift,
                   bool rolling, bool created) {
  if (!prev) return Phase::kProvisioning;
  const Phase p = prev->phase;
  const bool had_run = p == Phase::kRunning || p == Phase::kUpdating || p == Phase::kDegraded;
  if (!had_run) return Phase::kProvisioning;
  if (drift || (created && prev->observed_generation == generation)) return Phase::kDegraded;
  if (rolling) return Phase::kUpdating;
  if (p == Phase::kDegraded && prev->observed_generation == generation) return Phase::kDegraded;
  if (p == Phase::kUpdating || prev->observed_generation < generation) return Phase::kUpdating;
  return Phase::kDegraded;
}

// The phase of a run toward Running that ended with `o`.
Phase PhaseOf(const Reconciler::Outcome& o, const std::optional<ProjectStatus>& prev,
              int64_t generation, bool drift, bool rolling, bool created) {
  switch (o.kind) {
    case Reconciler::Outcome::Kind::kDone:
      return Phase::kRunning;
    case Reconciler::Outcome::Kind::kFailed:
      return Phase::kFailed;
    default:
      return WaitingPhase(prev, generation, drift, rolling, created);
  }
}

}  // namespace

Reconciler::Reconciler(const EngineOptions& options, std::shared_ptr<kube::Client> client,
                       store::Store& store, Observer& observer, const Clock& clock,
                       FenceCheck check_fence, Wake wake, Unreachable unreachable)
    : options_(options),
      client_(std::move(client)),
      store_(store),
      observer_(observer),
      clock_(clock),
      check_fence_(std::move(check_fence)),
      wake_(std::move(wake)),
      unreachable_(std::move(unreachable)),
      starts_(static_cast<size_t>(std::max(0, options.config.max_starting)), kStartSlotTtl, clock),
      fingerprints_(options.config, observer) {}

bool Reconciler::AdmitStart(const ProjectRecord& rec) {
  if (starts_.cap() == 0) return true;
  // A start is a run that would create the Deployment; every later step of it is admitted.
  const View deployment = observer_.Get(kDeployment, NamesFor(rec.id, rec.name).deployment);
  if (deployment.object || !deployment.created_uid.empty()) return true;
  StartGate::Admission a = starts_.Admit(rec.id, rec.team);
  WakeAll(a.wake);
  return a.admitted;
}

void Reconciler::WakeAll(const std::vector<std::string>& ids) const {
  if (!wake_) return;
  for (const auto& id : ids) wake_(id);
}

std::optional<std::string> Reconciler::KnownUnpersisted(const ProjectRecord& rec,
                                                        const std::string& object,
                                                        const View& view) {
  MutexLock lock(memo_mu_);
  auto it = unpersisted_.find(rec.id);
  if (it == unpersisted_.end() || it->second.generation != rec.generation ||
      it->second.object != object) {
    return std::nullopt;
  }
  const bool unchanged =
      view.stale || (view.object && OwnContentHash(view.object->Parse()) == it->second.content);
  if (!unchanged) return std::nullopt;
  return it->second.message;
}

void Reconciler::RememberUnpersisted(const ProjectRecord& rec, std::string object,
                                     std::string content, std::string message) {
  MutexLock lock(memo_mu_);
  unpersisted_[rec.id] =
      Unpersisted{rec.generation, std::move(object), std::move(content), std::move(message)};
}

bool Reconciler::WaitedTooLong(const ProjectRecord& rec, const std::optional<std::string>& key) {
  MutexLock lock(memo_mu_);
  if (!key) {
    waiting_.erase(rec.id);
    return false;
  }
  auto [it, inserted] = waiting_.try_emplace(rec.id);
  Waiting& w = it->second;
  if (inserted || w.generation != rec.generation || w.key != *key) {
    w = Waiting{rec.generation, *key, clock_.Now()};
    return false;
  }
  return clock_.Now() - w.since > std::chrono::seconds(options_.config.step_timeout_seconds);
}

bool Reconciler::BoundWait(const ProjectRecord& rec, Run& run, Outcome* outcome) {
  if (outcome->kind != Outcome::Kind::kFailed || outcome->reason != "NotPersisted") {
    MutexLock lock(memo_mu_);
    unpersisted_.erase(rec.id);
  }
  if (outcome->kind != Outcome::Kind::kWait) {
    WaitedTooLong(rec, std::nullopt);
    return false;
  }
  const std::string resource = !run.outcome_resource.empty() ? run.outcome_resource
                               : run.conditions.empty()      ? ""
                                                             : run.conditions.back().resource;
  if (!WaitedTooLong(rec, resource + "\n" + outcome->reason + "\n" + outcome->message)) {
    return false;
  }
  *outcome = Outcome::Failed(outcome->reason,
                             outcome->message + " (no progress for more than " +
                                 std::to_string(options_.config.step_timeout_seconds) +
                                 " s: engine.stepTimeoutSeconds; still watching the cluster)");
  return true;
}

void Reconciler::Forget(const std::string& project_id) {
  MutexLock lock(memo_mu_);
  unpersisted_.erase(project_id);
  waiting_.erase(project_id);
  auth_refusals_.erase(project_id);
}

std::chrono::milliseconds Reconciler::AuthRetry(const std::string& project_id) {
  int refusals = 0;
  {
    MutexLock lock(memo_mu_);
    auto it = auth_refusals_.find(project_id);
    if (it != auth_refusals_.end()) refusals = it->second;
  }
  std::chrono::milliseconds delay = kAuthRetryInitial;
  for (int i = 0; i < refusals && delay < kAuthRetryMax; ++i) delay *= 2;
  return std::min<std::chrono::milliseconds>(delay, kAuthRetryMax);
}

void Reconciler::NoteRefusedWrite(int http_status) {
  // Bounded: an HTTP error status, or 0 for no answer (a transport failure).
  if (http_status < 400 || http_status > 599) http_status = 0;
  MutexLock lock(refused_mu_);
  ++refused_writes_[http_status];
}

std::map<int, uint64_t> Reconciler::refused_writes() const {
  MutexLock lock(refused_mu_);
  return refused_writes_;
}

void Reconciler::NoteAuth(const std::string& project_id, const Outcome& outcome) {
  if (outcome.auth_status == 0) {
    MutexLock lock(memo_mu_);
    auth_refusals_.erase(project_id);
    return;
  }
  {
    MutexLock lock(memo_mu_);
    ++auth_refusals_[project_id];
  }
  ++(outcome.auth_status == 401 ? unauthorized_ : forbidden_);
  LOG_ERROR("project {}: {}: {}", project_id, outcome.reason, outcome.message);
}

void Reconciler::SettleStart(const ProjectRecord& rec, const Decision& d) {
  if (starts_.cap() == 0) return;
  const bool over = d.finished || rec.desired != DesiredState::kRunning ||
                    d.status.phase == Phase::kRunning || d.status.phase == Phase::kFailed ||
                    d.outcome.kind == Outcome::Kind::kFailed;
  if (over) WakeAll(starts_.End(rec.id));
}

Reconciler::Counts Reconciler::counts() const {
  Counts c;
  c.runs = runs_.load();
  c.writes = writes_.load();
  c.unchanged_runs = unchanged_runs_.load();
  c.unauthorized = unauthorized_.load();
  c.forbidden = forbidden_.load();
  c.lost_shard_runs = lost_shard_runs_.load();
  c.unsynced_runs = unsynced_runs_.load();
  return c;
}

WorkResult Reconciler::Reconcile(const std::string& project_id,
                                 const std::optional<store::Fence>& fence) {
  ++runs_;
  auto loaded = Load(project_id, fence);
  if (!loaded.ok()) return std::move(loaded).error();
  if (auto ended = EndIfUnreachable(loaded->rec, fence)) return *ended;
  // An empty cache is not an absence: nothing is decided (least of all Suspended or gone)
  // before every cache holds its first list.
  if (!observer_.Synced()) {
    ++unsynced_runs_;
    return WorkResult::RequeueAfter(kUnsyncedRecheck);
  }
  std::optional<std::string> fingerprint = FingerprintOf(*loaded);
  if (Unchanged(*loaded, fingerprint)) return EndUnchanged(loaded->rec);
  Run run(*this, std::move(loaded->rec));
  run.fence = fence;
  run.fingerprint = std::move(fingerprint);
  Decision d = Decide(run, *loaded);
  NoteAuth(run.rec.id, d.outcome);
  if (d.finished || d.outcome.kind == Outcome::Kind::kCrashed) {
    SettleStart(run.rec, d);
    if (d.finished) return *d.finished;
    if (d.outcome.lost_shard) return LostShard(project_id, d.outcome.error);
    return WorkResult::Terminal(d.outcome.error);
  }
  // The cluster stopped answering while this run asked it: what it saw is not the truth now.
  if (auto ended = EndIfUnreachable(run.rec, fence)) {
    SettleStart(run.rec, d);
    return *ended;
  }
  Status written = WriteStatus(run, d);
  // A start's slot is given up once the phase that ends it is committed: woken before, the next
  // start could commit its first phase ahead of this one's Running (maxStarting 1 showed two
  // starts under way in the store's order, 2 runs in 40 under load).
  SettleStart(run.rec, d);
  if (fence && written.code() == StatusCode::kAborted) return LostShard(project_id, written);
  if (!written.ok()) return WorkResult::Error(written);
  if (d.queued) return WorkResult::RequeueAfter(kQueuedRecheck);
  return ToWorkResult(d.outcome, d.bounded);
}

std::optional<std::string> Reconciler::FingerprintOf(const Loaded& in) const {
  const bool toward_running =
      !in.agent && in.rec.desired == DesiredState::kRunning && in.spec.ok() && in.policy.ok();
  if (!toward_running) return std::nullopt;
  return fingerprints_.Of(in.rec, *in.spec, in.creds);
}

bool Reconciler::Unchanged(const Loaded& in, const std::optional<std::string>& fingerprint) const {
  return fingerprint && in.prev && in.prev->phase == Phase::kRunning &&
         in.prev->observed_generation == in.rec.generation && in.prev->fingerprint == *fingerprint;
}

WorkResult Reconciler::EndUnchanged(const ProjectRecord& rec) {
  ++unchanged_runs_;
  // What a full run ending Running would settle: its start is over, nothing waits or is
  // refused.
  if (starts_.cap() != 0) WakeAll(starts_.End(rec.id));
  Forget(rec.id);
  return WorkResult::Ok();
}

WorkResult Reconciler::LostShard(const std::string& project_id, const Status& why) {
  ++lost_shard_runs_;
  LOG_INFO("project {}: run ended, its shard is no longer ours: {}", project_id, why.message());
  return WorkResult::Ok();
}

Expected<Reconciler::Loaded, WorkResult> Reconciler::Load(
    const std::string& project_id, const std::optional<store::Fence>& fence) {
  auto got = store_.GetProject(project_id);
  if (!got.ok()) {
    if (got.error().code() == StatusCode::kNotFound) return ReconcileUnknown(project_id, fence);
    return WorkResult::Error(got.error());
  }
  ProjectRecord& rec = *got;
  // Placed on another cluster: that cluster's engine runs it. Moved away from this one: what
  // this cluster still has of it goes (Depart), and nothing else is done here.
  if (rec.cluster != options_.cluster) {
    return rec.moving_from == options_.cluster ? Depart(rec, fence) : WorkResult::Ok();
  }
  ForgetOrphans(project_id);  // stored now: what was reported before the commit is its own
  std::optional<ProjectStatus> prev = ParseStoredStatus(rec.status_json);
  auto spec_json = ParseJson(rec.spec_json);
  if (rec.kind == store::RecordKind::kAgent) {
    StatusOr<AgentSpec> agent =
        spec_json.ok() ? ParseAgentSpec(*spec_json) : StatusOr<AgentSpec>(spec_json.error());
    return Loaded{std::move(rec),
                  std::move(prev),
                  StatusOr<ProjectSpec>(InvalidArgument("an agent's spec is not a project's")),
                  Status::Ok(),
                  {},
                  std::move(agent)};
  }
  auto spec =
      spec_json.ok() ? ParseProjectSpec(*spec_json) : StatusOr<ProjectSpec>(spec_json.error());
  Status policy = spec.ok() ? CheckSpecPolicy(options_.config, *spec) : Status::Ok();
  std::vector<store::Credential> creds;
  // Read to run with, or, suspended with supplied credentials, to revoke Steward's own.
  const bool suspended_supplied =
      rec.desired == DesiredState::kSuspended && spec.ok() && spec->credentials;
  if ((rec.desired == DesiredState::kRunning && spec.ok() && policy.ok()) || suspended_supplied) {
    auto listed = store_.ListCredentials(rec.id);
    if (!listed.ok()) return WorkResult::Error(listed.error());
    creds = std::move(*listed);
  }
  return Loaded{std::move(rec), std::move(prev), std::move(spec), std::move(policy),
                std::move(creds)};
}

Reconciler::Decision Reconciler::Decide(Run& run, const Loaded& in) {
  const ProjectRecord& rec = run.rec;
  if (in.agent) return DecideAgent(run, in);
  if (rec.desired != DesiredState::kRunning) {
    if (in.spec.ok()) run.spec = *in.spec;
    return DecideStopped(run, NamesFor(rec.id, rec.name), in.creds);
  }
  Decision d;
  d.status.observed_generation = rec.generation;
  if (!in.spec.ok()) {
    d.outcome = Outcome::Failed("InvalidSpec", in.spec.error().message());
    d.status.phase = Phase::kFailed;
  } else if (!in.policy.ok()) {
    // Stored before the operator tightened engine.policy: not rendered until the spec changes.
    d.outcome = Outcome::Failed("PolicyViolation", in.policy.message());
    d.status.phase = Phase::kFailed;
  } else {
    d = DecideRunning(run, in);
  }
  return d;
}

Reconciler::Decision Reconciler::DecideRunning(Run& run, const Loaded& in) {
  const ProjectRecord& rec = run.rec;
  Decision d;
  d.status.observed_generation = rec.generation;
  run.spec = *in.spec;
  // Supplied credentials need none of Steward's (none are generated for them).
  const store::Credential* hold = Run::CredentialToHold(in.creds, false);
  if (hold == nullptr && !run.spec.credentials) {
    d.outcome = Outcome::Failed("NoCredentials",
                                "project " + rec.name + " has no active or pending credentials");
  } else if (!rec.moving_from.empty() && rec.move_order != store::kMoveStartFirst) {
    // Stop first: nothing is created here before the cluster it left has nothing of it (woken by
    // the move's end in the store).
    d.outcome = Outcome::Wait("MoveUnderWay",
                              "waiting for cluster " + rec.moving_from +
                                  " to remove the project's objects (a move, stopFirst); it starts "
                                  "here then");
    d.status.phase = Phase::kPending;
    d.queued = true;
    return d;
  } else if (!AdmitStart(rec)) {
    // Nothing created yet, nothing rendered: the project waits for a slot (woken when it gets
    // one; the recheck is a safety net), not bounded by the step timeout.
    d.outcome = Outcome::Wait("Queued", "waiting for one of the " +
                                            std::to_string(options_.config.max_starting) +
                                            " starts under way (engine.maxStarting)");
    d.status.phase = Phase::kPending;
    d.queued = true;
    return d;
  } else {
    RenderInput render;
    render.id = rec.id;
    render.name = rec.name;
    render.config = &options_.config;
    render.resolved = Resolve(options_.config, rec.name, run.spec);
    render.restart_epoch = rec.restart_epoch;
    if (hold != nullptr) render.credential = {hold->id, hold->token};
    d.status.url = render.resolved.url;
    const Manifests m = Render(render);
    d.outcome = run.Provision(m, in.creds);
  }
  d.bounded = BoundWait(rec, run, &d.outcome);
  d.status.phase =
      PhaseOf(d.outcome, in.prev, rec.generation, run.drift, run.rolling, run.created_object);
  return d;
}

Reconciler::Decision Reconciler::DecideAgent(Run& run, const Loaded& in) {
  const ProjectRecord& rec = run.rec;
  const StatusOr<AgentSpec>& agent = *in.agent;
  // The supplied-Secret steps read only the credentials reference of run.spec.
  if (agent.ok()) run.spec.credentials = agent->credentials;
  if (rec.desired != DesiredState::kRunning) {
    ObjectNames names;  // a Deployment and a Service of the agent's name, nothing else
    names.deployment = names.service = rec.name;
    return DecideStopped(run, names, in.creds);
  }
  Decision d;
  d.status.observed_generation = rec.generation;
  if (!agent.ok()) {
    d.outcome = Outcome::Failed("InvalidSpec", agent.error().message());
  } else {
    d.outcome = run.ProvisionAgent(
        RenderAgent(rec.id, rec.name, &options_.config, *agent, rec.restart_epoch));
  }
  d.bounded = BoundWait(rec, run, &d.outcome);
  d.status.phase =
      PhaseOf(d.outcome, in.prev, rec.generation, run.drift, run.rolling, run.created_object);
  return d;
}

Reconciler::Decision Reconciler::DecideStopped(Run& run, const ObjectNames& names,
                                               const std::vector<store::Credential>& creds) {
  const ProjectRecord& rec = run.rec;
  const bool deleting = rec.desired == DesiredState::kDeleted;
  Decision d;
  d.status.observed_generation = rec.generation;
  d.outcome = run.Teardown(names, deleting);
  if (d.outcome.done() && !deleting) {
    // Suspended: no pod holds any set of supplied credentials, so only the current one stays,
    // and none of Steward's own when the platform supplies them.
    Outcome gc = run.spec.credentials ? run.PromoteCredentials(creds, names.secret)
                                      : run.RemoveSuppliedSecrets("");
    if (!gc.done()) d.outcome = run.Note("Credentials", gc);
  }
  if (d.outcome.done() && deleting) d.outcome = run.Remove();
  if (d.outcome.done() && !rec.moving_from.empty()) {
    // Neither Suspended nor purged while the cluster it left may still have some of it.
    d.outcome = Outcome::Wait("MoveUnderWay", "waiting for cluster " + rec.moving_from +
                                                  " to remove the project's objects (a move)");
    d.queued = true;
  }
  d.bounded = d.queued ? false : BoundWait(rec, run, &d.outcome);
  if (d.outcome.done()) {
    d.status.phase = deleting ? Phase::kDeleting : Phase::kSuspended;
  } else {
    d.status.phase = deleting ? Phase::kDeleting : Phase::kSuspending;
  }
  if (d.outcome.kind == Outcome::Kind::kFailed) d.status.phase = Phase::kFailed;
  if (d.outcome.done() && deleting) d.finished = Purge(rec, run.fence);
  return d;
}

WorkResult Reconciler::Purge(const ProjectRecord& rec, const std::optional<store::Fence>& fence) {
  Forget(rec.id);
  store::HistoryEntry tombstone;
  tombstone.kind = "purged";
  tombstone.generation = rec.generation;
  tombstone.summary = "deleted: every object gone, record removed";
  Status s = store_.PurgeProject(rec.id, tombstone, fence);
  if (fence && s.code() == StatusCode::kAborted) return LostShard(rec.id, s);
  if (!s.ok() && s.code() != StatusCode::kNotFound) return WorkResult::Error(s);
  return WorkResult::Ok();
}

WorkResult Reconciler::ToWorkResult(const Outcome& outcome, bool bounded) const {
  if (bounded) return WorkResult::RequeueAfter(options_.recheck);  // still watching
  switch (outcome.kind) {
    case Outcome::Kind::kDone:
      return WorkResult::Ok();
    case Outcome::Kind::kWait:
      return WorkResult::RequeueAfter(options_.recheck);
    case Outcome::Kind::kFailed:
      return WorkResult::Terminal(FailedPrecondition(outcome.reason + ": " + outcome.message));
    case Outcome::Kind::kError:
      if (outcome.retry_after) return WorkResult::RequeueAfter(*outcome.retry_after);
      return WorkResult::Error(outcome.error.ok() ? Internal(outcome.message) : outcome.error);
    case Outcome::Kind::kCrashed:
      return WorkResult::Terminal(outcome.error);
  }
  return WorkResult::Error(Internal("unreachable"));
}

}  // namespace steward::engine
