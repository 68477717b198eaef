// A project moved away from this cluster (store::ProjectRecord::moving_from): this cluster's
// engine removes everything of it here, then ends the move in the store (run.h).
#include "common/log.h"
#include "engine/reconciler/run.h"

namespace steward::engine {

WorkResult Reconciler::Depart(const ProjectRecord& rec, const std::optional<store::Fence>& fence) {
  // A start under way here when the project left is over (its slot goes to the next one).
  if (starts_.cap() != 0) WakeAll(starts_.End(rec.id));
  // Nothing is asked of a cluster that does not answer: every record moving away from it is run
  // again when it does (Engine's health watch).
  if (unreachable_ && unreachable_() != 0) return WorkResult::Ok();
  if (!observer_.Synced()) {
    ++unsynced_runs_;
    return WorkResult::RequeueAfter(kUnsyncedRecheck);
  }
  // Start first: this cluster's objects stay until the new cluster runs the project at the
  // record's generation (woken by that status write; the recheck is a safety net).
  if (rec.move_order == store::kMoveStartFirst && rec.desired == DesiredState::kRunning) {
    const std::optional<ProjectStatus> placed = ParseStoredStatus(rec.status_json);
    if (!placed || placed->phase != Phase::kRunning ||
        placed->observed_generation != rec.generation) {
      return WorkResult::RequeueAfter(options_.recheck);
    }
  }
  Run run(*this, rec);
  run.fence = fence;
  Outcome gone = run.Teardown(NamesFor(rec.id, rec.name), /*remove=*/true);
  if (gone.done()) gone = run.Remove();
  if (gone.kind == Outcome::Kind::kCrashed) {
    if (gone.lost_shard) return LostShard(rec.id, gone.error);
    return WorkResult::Terminal(gone.error);
  }
  if (!gone.done()) {
    // A refusal is no reason to leave objects behind: it is tried again, and said.
    if (gone.kind == Outcome::Kind::kFailed) {
      LOG_WARN("project {}: removing it from cluster {} (moved to {}): {}: {}", rec.id,
               options_.cluster, rec.cluster, gone.reason, gone.message);
      return WorkResult::RequeueAfter(options_.recheck);
    }
    return ToWorkResult(gone, false);
  }
  // Nothing of it is left here: the move ends (unless the record moved again meanwhile).
  auto ended = store_.MutateProject(
      rec.id, [&](ProjectRecord& r, const auto&, store::Mutation& m) -> Status {
        if (r.moving_from != options_.cluster) return Status::Ok();
        store::HistoryEntry h;
        h.kind = "move";
        h.generation = r.generation;
        h.summary = "moved: nothing left on cluster " + r.moving_from;
        h.detail_json = DumpJson(Json{{"from", r.moving_from}, {"to", r.cluster}});
        m.history.push_back(std::move(h));
        m.fence = fence;
        r.moving_from.clear();
        r.move_order.clear();
        return Status::Ok();
      });
  Forget(rec.id);
  if (!ended.ok()) {
    if (fence && ended.error().code() == StatusCode::kAborted) {
      return LostShard(rec.id, ended.error());
    }
    if (ended.error().code() == StatusCode::kNotFound) return WorkResult::Ok();
    return WorkResult::Error(ended.error());
  }
  LOG_INFO("project {}: nothing of it is left on cluster {}; its move to {} is over", rec.id,
           options_.cluster, rec.cluster);
  return WorkResult::Ok();
}

}  // namespace steward::engine
