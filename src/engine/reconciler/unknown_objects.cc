// Objects labelled as Steward's for a project the store does not know: reported as orphans, or
// removed (engine.removeOrphans), with a grace for supplied-credentials Secrets the API has
// written before their commit (Reconciler::ReconcileUnknown).
#include <algorithm>

#include "common/log.h"
#include "common/time_util.h"
#include "engine/reconciler/run.h"

namespace steward::engine {
namespace {
// How long a supplied-credentials Secret of a project the store does not know is left alone by
// orphan removal (the API writes it just before committing the project).
constexpr Millis kSuppliedSecretGrace{kSuppliedOrphanGraceMs};
}  // namespace

std::vector<Orphan> Reconciler::orphans() const {
  MutexLock lock(orphans_mu_);
  return orphans_;
}

void Reconciler::ForgetOrphans(const std::string& project_id) {
  MutexLock lock(orphans_mu_);
  std::erase_if(orphans_, [&](const Orphan& orphan) REQUIRES(orphans_mu_) {
    if (orphan.project_id != project_id) return false;
    reported_orphans_.erase(orphan.kind + "/" + orphan.name);
    return true;
  });
}

WorkResult Reconciler::ReconcileUnknown(const std::string& project_id,
                                        const std::optional<store::Fence>& fence) {
  WakeAll(starts_.End(project_id));  // purged, or never stored: no start of it is under way
  // Objects labelled for a project the store does not know: report; remove when configured.
  struct Found {
    const ResourceType* type;
    kube::ObjectRef obj;
    bool debris = false;  // a supplied-credentials Secret this store's Steward wrote
  };
  std::vector<Found> found;
  for (const ResourceType* t : {&kIngress, &kService, &kDeployment, &kPvc, &kSecret}) {
    for (auto& o : observer_.ByLabel(*t, kProjectLabel, project_id)) {
      // Through the expectations: an object a purge has just deleted may linger in the cache.
      View view = observer_.Get(*t, o->name());
      if (view.object && view.object->uid() == o->uid()) found.push_back({t, o});
    }
  }
  // The API writes a project's supplied-credentials Secret just before it commits the project:
  // one younger than kSuppliedSecretGrace is not an orphan yet (neither reported nor removed).
  // Such a Secret is looked at again when its grace ends: nothing else may touch the id then (a
  // Steward killed between the Secret and the commit leaves it for the next process to remove).
  // One this store's Steward wrote is then removed whatever engine.removeOrphans says: its
  // intent was never committed (or its project is gone), so nobody uses it.
  const SystemTime now = clock_.WallNow();
  const std::string store_id = store_.FeedId();
  for (Found& f : found) {
    if (f.type != &kSecret) continue;
    const Json obj = f.obj->Parse();
    f.debris = LabelOf(obj, kCredentialsLabel) == kSuppliedValue &&
               AnnotationOf(obj, kStoreAnnotation) == store_id;
  }
  std::optional<SystemTime> grace_ends;  // the soonest a skipped Secret's grace ends
  std::erase_if(found, [&](const Found& f) {
    if (f.type != &kSecret) return false;
    const Json obj = f.obj->Parse();
    if (LabelOf(obj, kCredentialsLabel) != kSuppliedValue) return false;
    auto created = ParseRfc3339(GetString(MemberOrNull(obj, "metadata"), "creationTimestamp"));
    if (!created) return true;
    if (now - *created >= kSuppliedSecretGrace) return false;
    if (f.debris || options_.config.remove_orphans) {
      const SystemTime ends = *created + kSuppliedSecretGrace;
      grace_ends = grace_ends ? std::min(*grace_ends, ends) : ends;
    }
    return true;
  });
  // Every way out that leaves the id waiting keeps that appointment (whatever else it waits
  // for: a Service terminating, a retry), measured when the run ends, not when it began.
  auto requeue = [&](std::optional<Millis> other) {
    std::optional<Millis> wait = other;
    if (grace_ends) {
      const Millis left =
          std::max(std::chrono::ceil<Millis>(*grace_ends - clock_.WallNow()), Millis(0)) +
          Millis(1);
      wait = wait ? std::min(*wait, left) : left;
    }
    return wait ? WorkResult::RequeueAfter(*wait) : WorkResult::Ok();
  };
  {
    MutexLock lock(orphans_mu_);
    // Forget reported orphans of this project that are gone.
    std::erase_if(orphans_, [&](const Orphan& orphan) REQUIRES(orphans_mu_) {
      if (orphan.project_id != project_id) return false;
      bool still = std::any_of(found.begin(), found.end(), [&](const Found& f) {
        return f.type->kind == orphan.kind && f.obj->name() == orphan.name;
      });
      if (!still) reported_orphans_.erase(orphan.kind + "/" + orphan.name);
      return !still;
    });
    for (const auto& f : found) {
      std::string key = f.type->kind + "/" + f.obj->name();
      if (reported_orphans_.insert(key).second) {
        orphans_.push_back({f.type->kind, f.obj->name(), project_id});
        const bool migrating = !AnnotationOf(f.obj->Parse(), kMigratingAnnotation).empty();
        LOG_WARN("orphan: {} {} carries steward.io/project={} but no such project exists{}",
                 f.type->kind, f.obj->name(), project_id,
                 migrating  ? "; kept: steward migrate is handing it over (steward.io/migrating)"
                 : f.debris ? "; removing it (supplied credentials this store's Steward wrote "
                              "for an intent that was never committed)"
                 : options_.config.remove_orphans ? "; removing it"
                                                  : "");
      }
    }
  }
  // Objects `steward migrate` relabelled for a project it is about to store are never removed
  // (reported as orphans until the project exists).
  std::erase_if(found, [&](const Found& f) {
    return !AnnotationOf(f.obj->Parse(), kMigratingAnnotation).empty() ||
           !(f.debris || options_.config.remove_orphans);
  });
  if (found.empty()) return requeue(std::nullopt);
  // Stored meanwhile (the run began before the project was committed): not orphans.
  if (auto stored = store_.GetProject(project_id); stored.ok()) {
    return WorkResult::RequeueAfter(Millis(0));
  } else if (stored.error().code() != StatusCode::kNotFound) {
    return WorkResult::Error(stored.error());
  }
  ProjectRecord ghost;
  ghost.id = project_id;
  Run run(*this, ghost);
  run.fence = fence;
  // One object still terminating (a finalizer someone else owns) holds none of the others up:
  // nothing of a project that does not exist needs its objects gone in order.
  Outcome o = Outcome::Done();
  for (const auto& f : found) {
    Outcome step =
        run.EnsureGone(*f.type, f.obj->name(), f.type == &kDeployment ? "Foreground" : "");
    if (step.done()) continue;
    const bool waits = step.kind == Outcome::Kind::kWait;
    if (!waits || o.done()) o = std::move(step);
    if (!waits) break;
  }
  NoteAuth(project_id, o);
  if (o.kind == Outcome::Kind::kError && o.retry_after) return requeue(*o.retry_after);
  if (o.kind == Outcome::Kind::kError) return WorkResult::Error(o.error);
  if (o.kind == Outcome::Kind::kCrashed) {
    return o.lost_shard ? LostShard(project_id, o.error) : WorkResult::Terminal(o.error);
  }
  if (!o.done()) return requeue(options_.recheck);
  return requeue(std::nullopt);
}

}  // namespace steward::engine
