#include "cluster/controllers/deployment_controller.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <numeric>

#include "cluster/apiserver/selectors.h"
#include "cluster/controllers/deployment_util.h"
#include "cluster/controllers/util.h"

namespace steward::cluster::controllers {

using namespace deploymentutil;  // NOLINT: the controller's own rules (deployment_util.h)

namespace {

constexpr std::string_view kAvailable = "Available";
constexpr std::string_view kProgressing = "Progressing";
constexpr std::string_view kNewRsAvailableReason = "NewReplicaSetAvailable";
constexpr std::string_view kTimedOutReason = "ProgressDeadlineExceeded";
constexpr std::string_view kPausedReason = "DeploymentPaused";
const EventSource kSource{"deployment-controller", ""};

int64_t StatusInt(const Json& obj, std::string_view field) {
  return IntAt(At(obj, "status"), field, 0);
}
std::string Name(const Json& obj) { return StrAt(obj, "metadata.name"); }
std::string Annotation(const Json& obj, std::string_view key) {
  const Json& a = AtPath(obj, "metadata.annotations");
  return GetString(a, key);
}

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

}  // namespace

struct DeploymentController::State {
  std::string ns;
  std::string name;
  Json d;
  std::vector<Json> rss;  // every ReplicaSet the deployment controls
  int new_idx = -1;
  bool failed = false;  // an API call failed: retry with backoff

  bool HasNew() const { return new_idx >= 0; }
  std::vector<size_t> Old() const {
    std::vector<size_t> out;
    for (size_t i = 0; i < rss.size(); ++i) {
      if (static_cast<int>(i) != new_idx) out.push_back(i);
    }
    return out;
  }
  std::vector<size_t> All() const {
    std::vector<size_t> out(rss.size());
    std::iota(out.begin(), out.end(), 0);
    return out;
  }
  int64_t SumSpec(const std::vector<size_t>& idx) const {
    int64_t n = 0;
    for (size_t i : idx) n += Replicas(rss[i]);
    return n;
  }
  int64_t SumStatus(const std::vector<size_t>& idx, std::string_view field) const {
    int64_t n = 0;
    for (size_t i : idx) n += StatusInt(rss[i], field);
    return n;
  }
  void SortByCreation(std::vector<size_t>& idx) const {
    std::sort(idx.begin(), idx.end(),
              [&](size_t a, size_t b) { return CreatedBefore(rss[a], rss[b]); });
  }
};

DeploymentController::DeploymentController(ControllerContext& ctx)
    : ctx_(ctx),
      deployments_(TypeOf("deployments.apps")),
      replicasets_(TypeOf("replicasets.apps")),
      pods_(TypeOf("pods")) {}

void DeploymentController::Observe(const Change& c) {
  const std::string& gr = c.gr;
  auto enqueue = [&](const std::string& ns, const std::string& name) {
    ctx_.queue.AddAfter({Work::kDeployment, NsName(ns, name)}, ctx_.Delay(&Profile::controller));
  };
  if (gr == "deployments.apps") {
    if (c.type != WatchEventType::kDeleted) enqueue(c.ns, c.name);
  } else if (gr == "replicasets.apps") {
    for (const CachedObject* o : {c.old_obj, c.new_obj}) {
      if (o == nullptr) continue;
      const OwnerRef* ctl = o->Controller();
      if (ctl != nullptr && ctl->kind == "Deployment") enqueue(c.ns, ctl->name);
    }
  } else if (gr == "pods" && c.type == WatchEventType::kDeleted && c.old_obj != nullptr) {
    // A Recreate rollout waits for the old pods to be gone.
    const OwnerRef* rs_ref = c.old_obj->Controller();
    if (rs_ref == nullptr || rs_ref->kind != "ReplicaSet") return;
    const CachedObject* rs = ctx_.cache.Find("replicasets.apps", c.ns, rs_ref->name);
    if (rs == nullptr) return;
    const OwnerRef* d_ref = rs->Controller();
    if (d_ref != nullptr && d_ref->kind == "Deployment") enqueue(c.ns, d_ref->name);
  }
}

bool DeploymentController::Sync(Work, const std::string& key) {
  State st;
  std::tie(st.ns, st.name) = SplitNsName(key);
  const CachedObject* co = ctx_.cache.Find("deployments.apps", st.ns, st.name);
  if (co == nullptr) return true;
  st.d = co->Parse();
  const std::string uid = co->uid;

  // The ReplicaSets it controls, and orphans its selector matches (adoption).
  for (const auto& dep_key : ctx_.cache.Dependents(uid)) {
    const CachedObject* rs = ctx_.cache.FindKey(dep_key);
    if (rs == nullptr || rs->record.group_resource != "replicasets.apps") continue;
    const OwnerRef* ctl = rs->Controller();
    if (ctl == nullptr || ctl->uid != uid) continue;
    st.rss.push_back(rs->Parse());
  }
  if (!co->deleting) {
    auto selector = LabelSelector::FromJson(AtPath(st.d, "spec.selector"));
    if (selector.ok() && !selector->Empty()) {
      std::vector<std::string> orphans(ctx_.cache.Uncontrolled("replicasets.apps", st.ns).begin(),
                                       ctx_.cache.Uncontrolled("replicasets.apps", st.ns).end());
      for (const auto& rs_name : orphans) {
        const CachedObject* rs = ctx_.cache.Find("replicasets.apps", st.ns, rs_name);
        if (rs == nullptr || rs->deleting || !rs->record.labels ||
            !selector->Matches(*rs->record.labels)) {
          continue;
        }
        Json ref = ControllerRefTo(st.d, deployments_);
        auto res = ctx_.api.Modify(replicasets_, st.ns, rs_name, [&](Json& obj) {
          if (ControllerRefOf(obj) != nullptr) return false;
          obj["metadata"]["ownerReferences"].push_back(ref);
          return true;
        });
        if (res.ok() && ControllerRefOf(*res) != nullptr &&
            GetString(*ControllerRefOf(*res), "uid") == uid) {
          st.rss.push_back(std::move(*res));
        }
      }
    }
  }
  std::sort(st.rss.begin(), st.rss.end(), CreatedBefore);

  bool ok = SyncDeployment(st);
  return ok && !st.failed;
}

bool DeploymentController::SyncDeployment(State& st) {
  if (IsDeleting(st.d)) {
    // syncStatusOnly.
    if (!GetAllReplicaSetsAndSyncRevision(st, false)) return false;
    return SyncDeploymentStatus(st);
  }
  if (!CheckPausedConditions(st)) return false;
  if (AtPath(st.d, "spec.paused") == Json(true)) return SyncScale(st);
  if (IsScalingEvent(st)) return SyncScale(st);
  if (IsRollingUpdate(st.d)) return RolloutRolling(st);
  return RolloutRecreate(st);
}

bool DeploymentController::GetAllReplicaSetsAndSyncRevision(State& st, bool create) {
  // FindNewReplicaSet: the oldest one whose template equals the deployment's.
  st.new_idx = -1;
  const Json& tmpl = AtPath(st.d, "spec.template");
  for (size_t i = 0; i < st.rss.size(); ++i) {
    if (EqualIgnoreHash(AtPath(st.rss[i], "spec.template"), tmpl)) {
      st.new_idx = static_cast<int>(i);
      break;
    }
  }
  int64_t max_old_revision = 0;
  for (size_t i : st.Old()) max_old_revision = std::max(max_old_revision, Revision(st.rss[i]));
  int64_t new_revision = max_old_revision + 1;

  if (!st.HasNew()) {
    if (!create) return true;
    return CreateNewReplicaSet(st, new_revision);
  }

  // Bring the existing new ReplicaSet's annotations and minReadySeconds up to date.
  Json& rs = st.rss[st.new_idx];
  const Json d_annotations = AtPath(st.d, "metadata.annotations");
  int64_t min_ready = IntAt(st.d, "spec.minReadySeconds", 0);
  auto apply = [&](Json& obj) {
    bool changed = false;
    Json& ann = obj["metadata"]["annotations"];
    if (!ann.is_object()) ann = Json::object();
    if (d_annotations.is_object()) {
      for (const auto& [k, v] : d_annotations.items()) {
        if (k == "kubectl.kubernetes.io/last-applied-configuration" || k == kRevisionAnnotation ||
            k == kRevisionHistoryAnnotation || k == kDesiredReplicasAnnotation ||
            k == kMaxReplicasAnnotation || k == "deprecated.deployment.rollback.to") {
          continue;
        }
        if (!ann.contains(k) || ann[k] != v) {
          ann[k] = v;
          changed = true;
        }
      }
    }
    std::string old_rev = GetString(ann, kRevisionAnnotation);
    int64_t old_rev_int = old_rev.empty() ? 0 : std::strtoll(old_rev.c_str(), nullptr, 10);
    if (old_rev_int < new_revision) {
      ann[std::string(kRevisionAnnotation)] = std::to_string(new_revision);
      changed = true;
      if (!old_rev.empty()) {
        std::string hist = GetString(ann, kRevisionHistoryAnnotation);
        ann[std::string(kRevisionHistoryAnnotation)] =
            hist.empty() ? old_rev : hist + "," + old_rev;
      }
    }
    if (IntAt(obj, "spec.minReadySeconds", 0) != min_ready) {
      SetOmitEmpty(obj["spec"], "minReadySeconds", min_ready);
      changed = true;
    }
    if (ann.empty()) obj["metadata"].erase("annotations");
    return changed;
  };
  Json probe = rs;
  if (apply(probe)) {
    auto res = ctx_.api.Modify(replicasets_, st.ns, Name(rs), apply);
    if (!res.ok()) {
      st.failed = true;
      return false;
    }
    rs = std::move(*res);
  }

  bool status_changed = false;
  Json status = At(st.d, "status").is_object() ? At(st.d, "status") : Json::object();
  if (!SetRevisionAnnotation(st, Annotation(rs, kRevisionAnnotation))) return false;
  if (HasProgressDeadline(st.d) && FindCondition(status, kProgressing) == nullptr) {
    SetCondition(
        status, NewCondition(kProgressing, "True", "FoundNewReplicaSet",
                             "Found new replica set " + Quoted(Name(rs)), Rfc3339(ctx_.WallNow())));
    status_changed = true;
  }
  if (status_changed && !WriteStatus(st, std::move(status))) return false;
  return true;
}

bool DeploymentController::CreateNewReplicaSet(State& st, int64_t new_revision) {
  const Json& d = st.d;
  Json tmpl = AtPath(d, "spec.template");
  int64_t collision = IntAt(d, "status.collisionCount", 0);
  std::string hash = ComputePodTemplateHash(tmpl, collision);
  tmpl["metadata"]["labels"][std::string(kPodTemplateHashLabel)] = hash;
  Json selector = AtPath(d, "spec.selector");
  selector["matchLabels"][std::string(kPodTemplateHashLabel)] = hash;
  std::string rs_name = Name(d) + "-" + hash;

  Json rs = {{"apiVersion", "apps/v1"},
             {"kind", "ReplicaSet"},
             {"metadata",
              {{"name", rs_name},
               {"namespace", st.ns},
               {"labels", tmpl["metadata"]["labels"]},
               {"ownerReferences", Json::array({ControllerRefTo(d, deployments_)})}}},
             {"spec", {{"replicas", 0}, {"selector", selector}, {"template", tmpl}}}};
  SetOmitEmpty(rs["spec"], "minReadySeconds", IntAt(d, "spec.minReadySeconds", 0));

  // NewRSNewReplicas, with the new ReplicaSet counted at 0.
  int64_t desired = Replicas(d);
  int64_t new_replicas = desired;
  if (IsRollingUpdate(d)) {
    int64_t current = st.SumSpec(st.All());
    int64_t max_total = desired + MaxSurge(d);
    new_replicas = current >= max_total ? 0 : std::min(max_total - current, desired);
  }
  rs["spec"]["replicas"] = new_replicas;

  // SetNewReplicaSetAnnotations(exists=false).
  Json ann = Json::object();
  const Json& d_annotations = AtPath(d, "metadata.annotations");
  if (d_annotations.is_object()) {
    for (const auto& [k, v] : d_annotations.items()) {
      if (k == "kubectl.kubernetes.io/last-applied-configuration" || k == kRevisionAnnotation ||
          k == kRevisionHistoryAnnotation || k == kDesiredReplicasAnnotation ||
          k == kMaxReplicasAnnotation || k == "deprecated.deployment.rollback.to") {
        continue;
      }
      ann[k] = v;
    }
  }
  ann[std::string(kRevisionAnnotation)] = std::to_string(new_revision);
  ann[std::string(kDesiredReplicasAnnotation)] = std::to_string(desired);
  ann[std::string(kMaxReplicasAnnotation)] = std::to_string(desired + MaxSurge(d));
  rs["metadata"]["annotations"] = std::move(ann);

  bool already_exists = false;
  auto created = ctx_.api.Create(replicasets_, st.ns, rs);
  Json result;
  if (created.ok()) {
    result = std::move(*created);
  } else if (created.error().reason == "AlreadyExists") {
    auto existing = ctx_.api.Get(replicasets_, st.ns, rs_name);
    if (!existing.ok()) {
      st.failed = true;
      return false;
    }
    const Json* ctl = ControllerRefOf(*existing);
    if (ctl != nullptr && GetString(*ctl, "uid") == StrAt(d, "metadata.uid") &&
        EqualIgnoreHash(AtPath(*existing, "spec.template"), AtPath(d, "spec.template"))) {
      already_exists = true;
      result = std::move(*existing);
    } else {
      // A hash collision: bump collisionCount so that the next sync picks another name.
      Json status = At(d, "status").is_object() ? At(d, "status") : Json::object();
      status["collisionCount"] = collision + 1;
      WriteStatus(st, std::move(status));
      st.failed = true;
      return false;
    }
  } else {
    if (HasProgressDeadline(d)) {
      Json status = At(d, "status").is_object() ? At(d, "status") : Json::object();
      SetCondition(status, NewCondition(kProgressing, "False", "ReplicaSetCreateError",
                                        "Failed to create new replica set " + Quoted(rs_name) +
                                            ": " + created.error().message,
                                        Rfc3339(ctx_.WallNow())));
      WriteStatus(st, std::move(status));
    }
    st.failed = true;
    return false;
  }

  st.rss.push_back(std::move(result));
  st.new_idx = static_cast<int>(st.rss.size() - 1);
  if (!already_exists && new_replicas > 0) {
    ctx_.events.Record(
        deployments_, st.d, "Normal", "ScalingReplicaSet",
        "Scaled up replica set " + rs_name + " from 0 to " + std::to_string(new_replicas), kSource);
  }
  if (!SetRevisionAnnotation(st, std::to_string(new_revision))) return false;
  if (!already_exists && HasProgressDeadline(st.d)) {
    Json status = At(st.d, "status").is_object() ? At(st.d, "status") : Json::object();
    SetCondition(status, NewCondition(kProgressing, "True", "NewReplicaSetCreated",
                                      "Created new replica set " + Quoted(rs_name),
                                      Rfc3339(ctx_.WallNow())));
    if (!WriteStatus(st, std::move(status))) return false;
  }
  return true;
}

bool DeploymentController::SetRevisionAnnotation(State& st, const std::string& revision) {
  if (revision.empty() || Annotation(st.d, kRevisionAnnotation) == revision) return true;
  // deploymentutil.SetDeploymentRevision: the deployment shows its new ReplicaSet's revision.
  auto res = ctx_.api.Modify(deployments_, st.ns, st.name, [&](Json& obj) {
    Json& ann = obj["metadata"]["annotations"];
    if (!ann.is_object()) ann = Json::object();
    if (GetString(ann, kRevisionAnnotation) == revision) return false;
    ann[std::string(kRevisionAnnotation)] = revision;
    return true;
  });
  if (!res.ok()) {
    st.failed = res.error().code != 404;
    return false;
  }
  st.d = std::move(*res);
  return true;
}

bool DeploymentController::WriteStatus(State& st, Json status) {
  auto res = ctx_.api.Modify(
      deployments_, st.ns, st.name,
      [&](Json& obj) {
        if (At(obj, "status") == status) return false;
        obj["status"] = status;
        return true;
      },
      Subresource::kStatus);
  if (!res.ok()) {
    st.failed = res.error().code != 404;
    return false;
  }
  st.d = std::move(*res);
  return true;
}

bool DeploymentController::ScaleReplicaSet(State& st, size_t idx, int64_t new_scale) {
  Json& rs = st.rss[idx];
  int64_t old_scale = Replicas(rs);
  int64_t desired = Replicas(st.d);
  std::string desired_s = std::to_string(desired);
  std::string max_s = std::to_string(desired + MaxSurge(st.d));
  bool size_changed = old_scale != new_scale;
  bool annotations_changed = Annotation(rs, kDesiredReplicasAnnotation) != desired_s ||
                             Annotation(rs, kMaxReplicasAnnotation) != max_s;
  if (!size_changed && !annotations_changed) return false;
  auto res = ctx_.api.Modify(replicasets_, st.ns, Name(rs), [&](Json& obj) {
    bool changed = false;
    if (IntAt(obj, "spec.replicas", 1) != new_scale || !AtPath(obj, "spec.replicas").is_number()) {
      obj["spec"]["replicas"] = new_scale;
      changed = true;
    }
    Json& ann = obj["metadata"]["annotations"];
    if (!ann.is_object()) ann = Json::object();
    if (GetString(ann, kDesiredReplicasAnnotation) != desired_s) {
      ann[std::string(kDesiredReplicasAnnotation)] = desired_s;
      changed = true;
    }
    if (GetString(ann, kMaxReplicasAnnotation) != max_s) {
      ann[std::string(kMaxReplicasAnnotation)] = max_s;
      changed = true;
    }
    return changed;
  });
  if (!res.ok()) {
    st.failed = true;
    return false;
  }
  rs = std::move(*res);
  if (size_changed) {
    ctx_.events.Record(deployments_, st.d, "Normal", "ScalingReplicaSet",
                       std::string("Scaled ") + (old_scale < new_scale ? "up" : "down") +
                           " replica set " + Name(rs) + " from " + std::to_string(old_scale) +
                           " to " + std::to_string(new_scale),
                       kSource);
  }
  return size_changed;
}

bool DeploymentController::RolloutRolling(State& st) {
  if (!GetAllReplicaSetsAndSyncRevision(st, true)) return false;
  if (ReconcileNewReplicaSet(st)) return SyncRolloutStatus(st);
  if (st.failed) return false;
  if (ReconcileOldReplicaSets(st)) return SyncRolloutStatus(st);
  if (st.failed) return false;
  if (DeploymentComplete(st.d, At(st.d, "status"))) CleanupDeployment(st);
  return SyncRolloutStatus(st);
}

bool DeploymentController::ReconcileNewReplicaSet(State& st) {
  if (!st.HasNew()) return false;
  const Json& rs = st.rss[st.new_idx];
  int64_t desired = Replicas(st.d);
  int64_t current = Replicas(rs);
  if (current == desired) return false;
  if (current > desired) return ScaleReplicaSet(st, st.new_idx, desired);
  // NewRSNewReplicas (RollingUpdate).
  int64_t all = st.SumSpec(st.All());
  int64_t max_total = desired + MaxSurge(st.d);
  if (all >= max_total) return false;
  int64_t scale_up = std::min(max_total - all, desired - current);
  return ScaleReplicaSet(st, st.new_idx, current + scale_up);
}

bool DeploymentController::ReconcileOldReplicaSets(State& st) {
  std::vector<size_t> old = st.Old();
  if (st.SumSpec(old) == 0) return false;
  int64_t all_pods = st.SumSpec(st.All());
  int64_t min_available = Replicas(st.d) - MaxUnavailable(st.d);
  int64_t new_unavailable = 0;
  if (st.HasNew()) {
    const Json& n = st.rss[st.new_idx];
    new_unavailable = Replicas(n) - StatusInt(n, "availableReplicas");
  }
  int64_t max_scaled_down = all_pods - min_available - new_unavailable;
  if (max_scaled_down <= 0) return false;
  int64_t cleaned = CleanupUnhealthyReplicas(st, max_scaled_down);
  if (st.failed) return false;
  int64_t scaled = ScaleDownOldReplicaSetsForRollingUpdate(st);
  return cleaned + scaled > 0;
}

int64_t DeploymentController::CleanupUnhealthyReplicas(State& st, int64_t max_cleanup) {
  std::vector<size_t> old = st.Old();
  st.SortByCreation(old);
  int64_t total = 0;
  for (size_t i : old) {
    if (total >= max_cleanup) break;
    int64_t replicas = Replicas(st.rss[i]);
    int64_t available = StatusInt(st.rss[i], "availableReplicas");
    if (replicas == 0 || replicas == available) continue;
    int64_t down = std::min(max_cleanup - total, replicas - available);
    ScaleReplicaSet(st, i, replicas - down);
    if (st.failed) return total;
    total += down;
  }
  return total;
}

int64_t DeploymentController::ScaleDownOldReplicaSetsForRollingUpdate(State& st) {
  int64_t min_available = Replicas(st.d) - MaxUnavailable(st.d);
  int64_t available = st.SumStatus(st.All(), "availableReplicas");
  if (available <= min_available) return 0;
  std::vector<size_t> old = st.Old();
  st.SortByCreation(old);
  int64_t total_to_scale = available - min_available;
  int64_t total = 0;
  for (size_t i : old) {
    if (total >= total_to_scale) break;
    int64_t replicas = Replicas(st.rss[i]);
    if (replicas == 0) continue;
    int64_t down = std::min(replicas, total_to_scale - total);
    ScaleReplicaSet(st, i, replicas - down);
    if (st.failed) return total;
    total += down;
  }
  return total;
}

bool DeploymentController::RolloutRecreate(State& st) {
  if (!GetAllReplicaSetsAndSyncRevision(st, false)) return false;
  bool scaled_down = false;
  for (size_t i : st.Old()) {
    if (Replicas(st.rss[i]) > 0 && ScaleReplicaSet(st, i, 0)) scaled_down = true;
    if (st.failed) return false;
  }
  if (scaled_down) return SyncRolloutStatus(st);
  if (OldPodsRunning(st)) return SyncRolloutStatus(st);
  if (!st.HasNew() && !GetAllReplicaSetsAndSyncRevision(st, true)) return false;
  if (st.HasNew()) ScaleReplicaSet(st, st.new_idx, Replicas(st.d));
  if (st.failed) return false;
  if (DeploymentComplete(st.d, At(st.d, "status"))) CleanupDeployment(st);
  return SyncRolloutStatus(st);
}

bool DeploymentController::OldPodsRunning(const State& st) const {
  std::vector<size_t> old = st.Old();
  if (st.SumStatus(old, "replicas") > 0) return true;
  for (size_t i : old) {
    for (const auto& key : ctx_.cache.Dependents(StrAt(st.rss[i], "metadata.uid"))) {
      const CachedObject* pod = ctx_.cache.FindKey(key);
      if (pod == nullptr || pod->record.group_resource != "pods") continue;
      if (!IsPodTerminal(pod->Parse())) return true;
    }
  }
  return false;
}

bool DeploymentController::SyncScale(State& st) {
  if (!GetAllReplicaSetsAndSyncRevision(st, false)) return false;
  Scale(st);
  if (st.failed) return false;
  if (AtPath(st.d, "spec.paused") == Json(true)) CleanupDeployment(st);
  return SyncDeploymentStatus(st);
}

void DeploymentController::Scale(State& st) {
  int64_t desired = Replicas(st.d);
  // FindActiveOrLatest.
  std::vector<size_t> active;
  for (size_t i : st.All()) {
    if (Replicas(st.rss[i]) > 0) active.push_back(i);
  }
  if (!st.rss.empty()) {
    int pick = -1;
    if (active.size() == 1) {
      pick = static_cast<int>(active[0]);
    } else if (active.empty()) {
      if (st.HasNew()) {
        pick = st.new_idx;
      } else {
        std::vector<size_t> old = st.Old();
        st.SortByCreation(old);
        pick = static_cast<int>(old.back());  // the newest
      }
    }
    if (pick >= 0) {
      if (Replicas(st.rss[pick]) != desired) ScaleReplicaSet(st, pick, desired);
      return;
    }
  }
  // IsSaturated: the new ReplicaSet is fully scaled and available; scale the old ones to 0.
  if (st.HasNew()) {
    const Json& n = st.rss[st.new_idx];
    if (Replicas(n) == desired &&
        Annotation(n, kDesiredReplicasAnnotation) == std::to_string(desired) &&
        StatusInt(n, "availableReplicas") == desired) {
      for (size_t i : st.Old()) {
        if (Replicas(st.rss[i]) != 0) ScaleReplicaSet(st, i, 0);
        if (st.failed) return;
      }
      return;
    }
  }
  if (!IsRollingUpdate(st.d)) return;
  // Proportional scaling between the active ReplicaSets.
  int64_t all_replicas = st.SumSpec(active);
  int64_t allowed = desired > 0 ? desired + MaxSurge(st.d) : 0;
  int64_t to_add = allowed - all_replicas;
  std::sort(active.begin(), active.end(), [&](size_t a, size_t b) {
    int64_t ra = Replicas(st.rss[a]), rb = Replicas(st.rss[b]);
    if (ra != rb) return ra > rb;
    // Scaling up: newer first; scaling down: older first.
    return to_add > 0 ? CreatedBefore(st.rss[b], st.rss[a]) : CreatedBefore(st.rss[a], st.rss[b]);
  });
  std::map<size_t, int64_t> size;
  int64_t added = 0;
  for (size_t i : active) {
    int64_t replicas = Replicas(st.rss[i]);
    int64_t proportion = 0;
    if (to_add != 0 && replicas != 0 && to_add != added) {
      int64_t fraction;
      if (desired == 0) {
        fraction = -replicas;
      } else {
        int64_t deployment_replicas = desired + MaxSurge(st.d);
        std::string ann = Annotation(st.rss[i], kMaxReplicasAnnotation);
        int64_t annotated =
            ann.empty() ? StatusInt(st.d, "replicas") : std::strtoll(ann.c_str(), nullptr, 10);
        double scaled = annotated == 0 ? 0.0
                                       : static_cast<double>(replicas * deployment_replicas) /
                                             static_cast<double>(annotated);
        fraction = static_cast<int64_t>(std::llround(scaled)) - replicas;
      }
      int64_t allowed_left = to_add - added;
      proportion = to_add > 0 ? std::min(fraction, allowed_left) : std::max(fraction, allowed_left);
    }
    size[i] = replicas + proportion;
    added += proportion;
  }
  if (to_add != 0 && !active.empty()) {
    int64_t& first = size[active[0]];
    first += to_add - added;
    if (first < 0) first = 0;
  }
  for (size_t i : active) {
    ScaleReplicaSet(st, i, size[i]);
    if (st.failed) return;
  }
}

bool DeploymentController::IsScalingEvent(State& st) {
  if (!GetAllReplicaSetsAndSyncRevision(st, false)) return false;
  std::string desired = std::to_string(Replicas(st.d));
  for (size_t i : st.All()) {
    if (Replicas(st.rss[i]) == 0) continue;
    std::string ann = Annotation(st.rss[i], kDesiredReplicasAnnotation);
    if (!ann.empty() && ann != desired) return true;
  }
  return false;
}

bool DeploymentController::CheckPausedConditions(State& st) {
  if (!HasProgressDeadline(st.d)) return true;
  Json status = At(st.d, "status").is_object() ? At(st.d, "status") : Json::object();
  const Json* cond = FindCondition(status, kProgressing);
  if (cond != nullptr && GetString(*cond, "reason") == kTimedOutReason) return true;
  bool paused_cond = cond != nullptr && GetString(*cond, "reason") == kPausedReason;
  bool paused = AtPath(st.d, "spec.paused") == Json(true);
  std::string now = Rfc3339(ctx_.WallNow());
  if (paused && !paused_cond) {
    SetCondition(status,
                 NewCondition(kProgressing, "Unknown", kPausedReason, "Deployment is paused", now));
  } else if (!paused && paused_cond) {
    SetCondition(status, NewCondition(kProgressing, "Unknown", "DeploymentResumed",
                                      "Deployment is resumed", now));
  } else {
    return true;
  }
  return WriteStatus(st, std::move(status));
}

void DeploymentController::CleanupDeployment(State& st) {
  const Json& limit_v = AtPath(st.d, "spec.revisionHistoryLimit");
  if (!limit_v.is_number_integer()) return;
  int64_t limit = limit_v.get<int64_t>();
  std::vector<size_t> cleanable;
  for (size_t i : st.Old()) {
    const Json& rs = st.rss[i];
    if (StatusInt(rs, "replicas") == 0 && Replicas(rs) == 0 && !IsDeleting(rs)) {
      cleanable.push_back(i);
    }
  }
  int64_t diff = static_cast<int64_t>(cleanable.size()) - limit;
  if (diff <= 0) return;
  std::sort(cleanable.begin(), cleanable.end(), [&](size_t a, size_t b) {
    int64_t ra = Revision(st.rss[a]), rb = Revision(st.rss[b]);
    if (ra != rb) return ra < rb;
    return CreatedBefore(st.rss[a], st.rss[b]);
  });
  for (int64_t k = 0; k < diff; ++k) {
    const Json& rs = st.rss[cleanable[k]];
    if (StatusInt(rs, "replicas") != 0 || Replicas(rs) != 0 ||
        IntAt(rs, "metadata.generation") > StatusInt(rs, "observedGeneration") || IsDeleting(rs)) {
      continue;
    }
    DeleteOptions opts;
    opts.precondition_uid = StrAt(rs, "metadata.uid");
    auto res = ctx_.api.Delete(replicasets_, st.ns, Name(rs), opts);
    if (!res.ok() && res.error().code != 404) st.failed = true;
  }
}

Json DeploymentController::CalculateStatus(const State& st) const {
  std::vector<size_t> all = st.All();
  int64_t available = st.SumStatus(all, "availableReplicas");
  int64_t total = st.SumSpec(all);
  int64_t unavailable = std::max<int64_t>(0, total - available);
  Json status = Json::object();
  SetOmitEmpty(status, "observedGeneration", IntAt(st.d, "metadata.generation"));
  SetOmitEmpty(status, "replicas", st.SumStatus(all, "replicas"));
  SetOmitEmpty(status, "updatedReplicas",
               st.HasNew() ? StatusInt(st.rss[st.new_idx], "replicas") : 0);
  SetOmitEmpty(status, "readyReplicas", st.SumStatus(all, "readyReplicas"));
  SetOmitEmpty(status, "availableReplicas", available);
  SetOmitEmpty(status, "unavailableReplicas", unavailable);
  const Json& old = At(st.d, "status");
  if (At(old, "collisionCount").is_number()) status["collisionCount"] = old["collisionCount"];
  if (At(old, "conditions").is_array() && !old["conditions"].empty()) {
    status["conditions"] = old["conditions"];
  }
  std::string now = Rfc3339(ctx_.WallNow());
  if (available >= Replicas(st.d) - MaxUnavailable(st.d)) {
    SetCondition(status, NewCondition(kAvailable, "True", "MinimumReplicasAvailable",
                                      "Deployment has minimum availability.", now));
  } else {
    SetCondition(status, NewCondition(kAvailable, "False", "MinimumReplicasUnavailable",
                                      "Deployment does not have minimum availability.", now));
  }
  return status;
}

bool DeploymentController::SyncDeploymentStatus(State& st) {
  Json status = CalculateStatus(st);
  if (status == At(st.d, "status")) return true;
  return WriteStatus(st, std::move(status)) || !st.failed;
}

std::chrono::milliseconds DeploymentController::ProgressDeadline(const Json& d) const {
  double scale = ctx_.profile.Get()->progress_deadline_scale;
  double seconds = static_cast<double>(IntAt(d, "spec.progressDeadlineSeconds", 600)) * scale;
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0));
}

bool DeploymentController::SyncRolloutStatus(State& st) {
  Json status = CalculateStatus(st);
  const Json& d = st.d;
  if (!HasProgressDeadline(d)) RemoveCondition(status, kProgressing);
  const Json* current = FindCondition(At(d, "status"), kProgressing);
  bool complete_before = IntAt(status, "replicas") == IntAt(status, "updatedReplicas") &&
                         current != nullptr &&
                         GetString(*current, "reason") == kNewRsAvailableReason;
  std::string now = Rfc3339(ctx_.WallNow());
  if (HasProgressDeadline(d) && !complete_before) {
    std::string subject = st.HasNew() ? "ReplicaSet " + Quoted(Name(st.rss[st.new_idx]))
                                      : "Deployment " + Quoted(Name(d));
    if (DeploymentComplete(d, status)) {
      SetCondition(status, NewCondition(kProgressing, "True", kNewRsAvailableReason,
                                        subject + " has successfully progressed.", now));
    } else if (DeploymentProgressing(d, status)) {
      Json cond = NewCondition(kProgressing, "True", "ReplicaSetUpdated",
                               subject + " is progressing.", now);
      if (current != nullptr) {
        if (GetString(*current, "status") == "True") {
          cond["lastTransitionTime"] = At(*current, "lastTransitionTime");
        }
        RemoveCondition(status, kProgressing);
      }
      SetCondition(status, std::move(cond));
    } else {
      // DeploymentTimedOut.
      const Json* cond = FindCondition(status, kProgressing);
      bool timed_out = false;
      if (cond != nullptr && GetString(*cond, "reason") != kNewRsAvailableReason) {
        if (GetString(*cond, "reason") == kTimedOutReason) {
          timed_out = true;
        } else if (auto from = TimeAt(*cond, "lastUpdateTime")) {
          timed_out = *from + ProgressDeadline(d) < ctx_.WallNow();
        }
      }
      if (timed_out) {
        SetCondition(status, NewCondition(kProgressing, "False", kTimedOutReason,
                                          subject + " has timed out progressing.", now));
      }
    }
  }
  if (status == At(d, "status")) {
    RequeueStuckDeployment(st, status);
    return true;
  }
  return WriteStatus(st, std::move(status)) || !st.failed;
}

void DeploymentController::RequeueStuckDeployment(const State& st, const Json& new_status) {
  const Json* current = FindCondition(At(st.d, "status"), kProgressing);
  if (!HasProgressDeadline(st.d) || current == nullptr) return;
  if (DeploymentComplete(st.d, new_status) || GetString(*current, "reason") == kTimedOutReason) {
    return;
  }
  auto from = TimeAt(*current, "lastUpdateTime");
  if (!from) return;
  auto after = std::chrono::duration_cast<std::chrono::milliseconds>(
      *from + ProgressDeadline(st.d) - ctx_.WallNow());
  // Timestamps have second precision; a little slack makes sure the deadline has passed.
  after = std::max(after, std::chrono::milliseconds(0)) + std::chrono::milliseconds(20);
  ctx_.queue.AddAfter({Work::kDeployment, NsName(st.ns, st.name)}, after);
}

}  // namespace steward::cluster::controllers
