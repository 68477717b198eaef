// Writing a run's observed status back to the store (Reconciler::WriteStatus).
#include "engine/reconciler/run.h"

namespace steward::engine {

namespace {

bool SameStatus(const ProjectStatus& a, const ProjectStatus& b) {
  Json ja = ToStoredJson(a), jb = ToStoredJson(b);
  ja.erase("since");
  jb.erase("since");
  return ja == jb;
}

}  // namespace

Status Reconciler::WriteStatus(Run& run, Decision& d) {
  const ProjectRecord& rec = run.rec;
  const Outcome& outcome = d.outcome;
  ProjectStatus& status = d.status;
  status.reason = outcome.done() ? std::string(ToString(status.phase)) : outcome.reason;
  status.message = outcome.done()
                       ? (status.phase == Phase::kRunning ? "every object is ready at generation " +
                                                                std::to_string(rec.generation)
                          : rec.kind == store::RecordKind::kAgent
                              ? "Deployment, Service and pod are gone"
                              : "Deployment, Service, Ingresses and pods are gone")
                       : outcome.message;
  status.conditions = std::move(run.conditions);
  // The fingerprint goes with a Running verdict only: any other phase is judged again.
  if (outcome.done() && status.phase == Phase::kRunning && run.fingerprint) {
    status.fingerprint = *run.fingerprint;
  }

  // Write the status only if the intent is still the one this run worked on (a newer one has
  // re-queued the project) and something changed.
  const int64_t now = WallMs(clock_);
  bool wrote = false;
  std::string from;  // the phase before this status
  auto written = store_.MutateProject(
      rec.id, [&](ProjectRecord& r, const auto&, store::Mutation& m) -> Status {
        if (r.generation != rec.generation) return Status::Ok();
        m.fence = run.fence;
        const std::optional<ProjectStatus> cur = ParseStoredStatus(r.status_json);
        if (cur && SameStatus(*cur, status)) return Status::Ok();
        wrote = true;
        from = cur ? std::string(ToString(cur->phase)) : "";
        status.since_ms = cur && cur->phase == status.phase ? cur->since_ms : now;
        r.status_json = DumpJson(ToStoredJson(status));
        r.phase = std::string(ToString(status.phase));
        r.observed_generation = status.observed_generation;
        if (!cur || cur->phase != status.phase) {
          store::HistoryEntry h;
          h.kind = "phase";
          h.generation = rec.generation;
          h.summary = r.phase;
          h.detail_json = DumpJson(Json{{"reason", status.reason}, {"message", status.message}});
          m.history.push_back(std::move(h));
        }
        return Status::Ok();
      });
  if (!written.ok() && written.error().code() != StatusCode::kNotFound) return written.error();
  if (written.ok() && wrote) ReportStatus(rec, status, std::move(from), now);
  return Status::Ok();
}

std::optional<WorkResult> Reconciler::EndIfUnreachable(const ProjectRecord& rec,
                                                       const std::optional<store::Fence>& fence) {
  const int64_t since_ms = unreachable_ ? unreachable_() : 0;
  if (since_ms == 0) return std::nullopt;
  const int64_t now = WallMs(clock_);
  bool wrote = false;
  std::string from;
  ProjectStatus status;
  auto written = store_.MutateProject(
      rec.id, [&](ProjectRecord& r, const auto&, store::Mutation& m) -> Status {
        m.fence = fence;
        const std::optional<ProjectStatus> cur = ParseStoredStatus(r.status_json);
        if (cur && cur->phase == Phase::kUnknown) return Status::Ok();  // said already
        // What was observed stays (generation, URL); what it rested on does not.
        status = cur.value_or(ProjectStatus{});
        status.last_phase = cur ? std::string(ToString(cur->phase)) : "Pending";
        status.last_phase_since_ms = cur ? cur->since_ms : 0;
        status.phase = Phase::kUnknown;
        status.reason = "ClusterUnreachable";
        status.message = "cluster " + options_.cluster + " has not answered for " +
                         std::to_string(std::max<int64_t>(0, now - since_ms) / 1000) +
                         " s; last observed: " + status.last_phase + " at generation " +
                         std::to_string(status.observed_generation);
        status.since_ms = since_ms;
        status.conditions.clear();
        status.fingerprint.clear();
        wrote = true;
        from = cur ? std::string(ToString(cur->phase)) : "";
        r.status_json = DumpJson(ToStoredJson(status));
        r.phase = std::string(ToString(status.phase));
        store::HistoryEntry h;
        h.kind = "phase";
        h.generation = r.generation;
        h.summary = r.phase;
        h.detail_json = DumpJson(Json{{"reason", status.reason}, {"message", status.message}});
        m.history.push_back(std::move(h));
        return Status::Ok();
      });
  if (fence && !written.ok() && written.error().code() == StatusCode::kAborted) {
    return LostShard(rec.id, written.error());
  }
  if (!written.ok() && written.error().code() != StatusCode::kNotFound) {
    return WorkResult::Error(written.error());
  }
  if (written.ok() && wrote) ReportStatus(rec, status, std::move(from), now);
  // Nothing to retry: the engine enqueues every project of the cluster when it answers again.
  return WorkResult::Ok();
}

void Reconciler::ReportStatus(const ProjectRecord& rec, const ProjectStatus& status,
                              std::string from, int64_t at_ms) {
  if (!options_.on_status) return;
  StatusWritten w;
  w.id = rec.id;
  w.agent = rec.kind == store::RecordKind::kAgent;
  w.from = std::move(from);
  w.to = std::string(ToString(status.phase));
  w.reason = status.reason;
  w.generation = status.observed_generation;
  w.at_ms = at_ms;
  const bool done = status.phase == Phase::kRunning || status.phase == Phase::kSuspended ||
                    status.phase == Phase::kFailed;
  if (auto intent = intent_times_.At(rec.id, status.observed_generation, done)) {
    w.operation = intent->operation;
    w.accepted_ms = intent->accepted_ms;
    w.completes = done && !intent->completed;
  }
  options_.on_status(w);
}

}  // namespace steward::engine
