#include "cluster/controllers/replicaset_controller.h"

#include <algorithm>

#include "cluster/apiserver/selectors.h"
#include "cluster/controllers/util.h"

namespace steward::cluster::controllers {

namespace {

const EventSource kSource{"replicaset-controller", ""};
// The real controller creates and deletes in bursts of at most 500 per sync.
constexpr int64_t kBurstReplicas = 500;

int PhaseRank(const Json& pod) {
  std::string phase = StrAt(pod, "status.phase");
  if (phase == "Pending" || phase.empty()) return 0;
  if (phase == "Unknown") return 1;
  return 2;  // Running
}

int64_t MaxRestarts(const Json& pod) {
  int64_t n = 0;
  const Json& cs = AtPath(pod, "status.containerStatuses");
  if (cs.is_array()) {
    for (const auto& c : cs) n = std::max(n, IntAt(c, "restartCount"));
  }
  return n;
}

// afterOrZero: a zero time sorts first.
bool AfterOrZero(const std::optional<SystemTime>& a, const std::optional<SystemTime>& b) {
  if (!a || !b) return !a;
  return *a > *b;
}

// controller.ActivePods ordering: true when `a` should be deleted before `b`.
bool DeleteBefore(const Json& a, const Json& b) {
  bool assigned_a = !StrAt(a, "spec.nodeName").empty();
  bool assigned_b = !StrAt(b, "spec.nodeName").empty();
  if (assigned_a != assigned_b) return !assigned_a;
  int pa = PhaseRank(a), pb = PhaseRank(b);
  if (pa != pb) return pa < pb;
  bool ra = IsPodReady(a), rb = IsPodReady(b);
  if (ra != rb) return !ra;
  if (ra && rb) {
    auto ta = TimeAt(*FindCondition(At(a, "status"), "Ready"), "lastTransitionTime");
    auto tb = TimeAt(*FindCondition(At(b, "status"), "Ready"), "lastTransitionTime");
    if (ta != tb) return AfterOrZero(ta, tb);
  }
  int64_t xa = MaxRestarts(a), xb = MaxRestarts(b);
  if (xa != xb) return xa > xb;
  auto ca = TimeAt(a, "metadata.creationTimestamp");
  auto cb = TimeAt(b, "metadata.creationTimestamp");
  if (ca != cb) return AfterOrZero(ca, cb);
  return StrAt(a, "metadata.name") > StrAt(b, "metadata.name");
}

}  // namespace

ReplicaSetController::ReplicaSetController(ControllerContext& ctx)
    : ctx_(ctx), replicasets_(TypeOf("replicasets.apps")), pods_(TypeOf("pods")) {}

void ReplicaSetController::Observe(const Change& c) {
  const std::string& gr = c.gr;
  auto enqueue = [&](const std::string& name) {
    ctx_.queue.AddAfter({Work::kReplicaSet, NsName(c.ns, name)}, ctx_.Delay(&Profile::controller));
  };
  if (gr == "replicasets.apps") {
    if (c.type != WatchEventType::kDeleted) enqueue(c.name);
  } else if (gr == "pods") {
    for (const CachedObject* o : {c.old_obj, c.new_obj}) {
      if (o == nullptr) continue;
      const OwnerRef* ctl = o->Controller();
      if (ctl != nullptr && ctl->kind == "ReplicaSet") enqueue(ctl->name);
    }
  }
}

bool ReplicaSetController::Sync(Work, const std::string& key) {
  auto [ns, name] = SplitNsName(key);
  const CachedObject* co = ctx_.cache.Find("replicasets.apps", ns, name);
  if (co == nullptr) return true;
  Json rs = co->Parse();
  const std::string uid = co->uid;
  const bool deleting = co->deleting;
  auto selector = LabelSelector::FromJson(AtPath(rs, "spec.selector"));
  if (!selector.ok()) return true;  // invalid: nothing sensible to do, as the real controller

  std::vector<Json> pods;
  // Copies: the writes below do not touch the cache, but keep the loops independent of it.
  std::vector<std::string> owned(ctx_.cache.Dependents(uid).begin(),
                                 ctx_.cache.Dependents(uid).end());
  for (const auto& dep_key : owned) {
    const CachedObject* pod = ctx_.cache.FindKey(dep_key);
    if (pod == nullptr || pod->record.group_resource != "pods") continue;
    const OwnerRef* ctl = pod->Controller();
    if (ctl == nullptr || ctl->uid != uid) continue;
    bool matches = pod->record.labels && selector->Matches(*pod->record.labels);
    if (!matches) {
      if (!deleting && !pod->deleting) {
        // Release: the pod's labels no longer match.
        (void)ctx_.api.Modify(pods_, ns, pod->record.name, [&](Json& obj) {
          Json& refs = obj["metadata"]["ownerReferences"];
          if (!refs.is_array()) return false;
          Json kept = Json::array();
          for (auto& r : refs) {
            if (GetString(r, "uid") != uid) kept.push_back(r);
          }
          if (kept.size() == refs.size()) return false;
          if (kept.empty()) {
            obj["metadata"].erase("ownerReferences");
          } else {
            refs = std::move(kept);
          }
          return true;
        });
      }
      continue;
    }
    pods.push_back(pod->Parse());
  }
  if (!deleting && !selector->Empty()) {
    std::vector<std::string> orphans(ctx_.cache.Uncontrolled("pods", ns).begin(),
                                     ctx_.cache.Uncontrolled("pods", ns).end());
    Json ref = ControllerRefTo(rs, replicasets_);
    for (const auto& pod_name : orphans) {
      const CachedObject* pod = ctx_.cache.Find("pods", ns, pod_name);
      if (pod == nullptr || pod->deleting || !pod->record.labels ||
          !selector->Matches(*pod->record.labels)) {
        continue;
      }
      auto res = ctx_.api.Modify(pods_, ns, pod_name, [&](Json& obj) {
        if (ControllerRefOf(obj) != nullptr) return false;
        obj["metadata"]["ownerReferences"].push_back(ref);
        return true;
      });
      if (res.ok() && ControllerRefOf(*res) != nullptr &&
          GetString(*ControllerRefOf(*res), "uid") == uid) {
        pods.push_back(std::move(*res));
      }
    }
  }

  std::vector<Json> active;
  for (auto& p : pods) {
    if (!IsPodTerminal(p) && !IsDeleting(p)) active.push_back(std::move(p));
  }

  bool ok = true;
  if (!deleting) ok = ManageReplicas(rs, active);

  // calculateStatus, from the pods seen before this sync's creations and deletions.
  SystemTime now = ctx_.WallNow();
  int64_t min_ready = IntAt(rs, "spec.minReadySeconds", 0);
  const Json& tmpl_labels = AtPath(rs, "spec.template.metadata.labels");
  int64_t fully = 0, ready = 0, available = 0;
  for (const auto& p : active) {
    bool full = true;
    if (tmpl_labels.is_object()) {
      const Json& labels = AtPath(p, "metadata.labels");
      for (const auto& [k, v] : tmpl_labels.items()) {
        if (At(labels, k) != v) {
          full = false;
          break;
        }
      }
    }
    if (full) ++fully;
    if (IsPodReady(p)) {
      ++ready;
      if (IsPodAvailable(p, min_ready, now)) ++available;
    }
  }
  Json status = At(rs, "status").is_object() ? At(rs, "status") : Json::object();
  status["replicas"] = static_cast<int64_t>(active.size());
  SetOmitEmpty(status, "fullyLabeledReplicas", fully);
  SetOmitEmpty(status, "readyReplicas", ready);
  SetOmitEmpty(status, "availableReplicas", available);
  SetOmitEmpty(status, "observedGeneration", IntAt(rs, "metadata.generation"));
  if (status != At(rs, "status")) {
    auto res = ctx_.api.Modify(
        replicasets_, ns, name,
        [&](Json& obj) {
          if (At(obj, "status") == status) return false;
          obj["status"] = status;
          return true;
        },
        Subresource::kStatus);
    if (!res.ok() && res.error().code != 404) ok = false;
  }
  int64_t spec_replicas = IntAt(rs, "spec.replicas", 1);
  if (ok && min_ready > 0 && ready == spec_replicas && available != spec_replicas) {
    ctx_.queue.AddAfter({Work::kReplicaSet, key}, std::chrono::seconds(min_ready));
  }
  return ok;
}

bool ReplicaSetController::ManageReplicas(const Json& rs, const std::vector<Json>& active) {
  const std::string ns = StrAt(rs, "metadata.namespace");
  const std::string rs_name = StrAt(rs, "metadata.name");
  int64_t diff = static_cast<int64_t>(active.size()) - IntAt(rs, "spec.replicas", 1);
  if (diff < 0) {
    int64_t n = std::min(-diff, kBurstReplicas);
    const Json& tmpl = AtPath(rs, "spec.template");
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata",
                 {{"generateName", rs_name + "-"},
                  {"namespace", ns},
                  {"ownerReferences", Json::array({ControllerRefTo(rs, replicasets_)})}}},
                {"spec", AtPath(tmpl, "spec")}};
    for (const char* field : {"labels", "annotations", "finalizers"}) {
      const Json& v = AtPath(tmpl, std::string("metadata.") + field);
      if (!v.is_null()) pod["metadata"][field] = v;
    }
    for (int64_t i = 0; i < n; ++i) {
      auto res = ctx_.api.Create(pods_, ns, pod);
      if (!res.ok() && res.error().reason == "AlreadyExists") {
        res = ctx_.api.Create(pods_, ns, pod);  // a generated-name collision: try another
      }
      if (!res.ok()) {
        ctx_.events.Record(replicasets_, rs, "Warning", "FailedCreate",
                           "Error creating: " + res.error().message, kSource);
        return false;
      }
      ctx_.events.Record(replicasets_, rs, "Normal", "SuccessfulCreate",
                         "Created pod: " + StrAt(*res, "metadata.name"), kSource);
    }
  } else if (diff > 0) {
    int64_t n = std::min(diff, kBurstReplicas);
    std::vector<const Json*> ranked;
    for (const auto& p : active) ranked.push_back(&p);
    std::sort(ranked.begin(), ranked.end(),
              [](const Json* a, const Json* b) { return DeleteBefore(*a, *b); });
    for (int64_t i = 0; i < n; ++i) {
      const Json& p = *ranked[i];
      DeleteOptions opts;
      opts.precondition_uid = StrAt(p, "metadata.uid");
      auto res = ctx_.api.Delete(pods_, ns, StrAt(p, "metadata.name"), opts);
      if (!res.ok() && res.error().code != 404) {
        ctx_.events.Record(replicasets_, rs, "Warning", "FailedDelete",
                           "Error deleting: " + res.error().message, kSource);
        return false;
      }
      if (res.ok()) {
        ctx_.events.Record(replicasets_, rs, "Normal", "SuccessfulDelete",
                           "Deleted pod: " + StrAt(p, "metadata.name"), kSource);
      }
    }
  }
  return true;
}

}  // namespace steward::cluster::controllers
