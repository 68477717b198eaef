#include "cluster/controllers/simple_controllers.h"

#include "cluster/controllers/util.h"

namespace steward::cluster::controllers {

// ---------------------------------------------------------------------------------------------
// IngressController

IngressController::IngressController(ControllerContext& ctx)
    : ctx_(ctx), ingresses_(TypeOf("ingresses.networking.k8s.io")) {}

Status IngressController::EnsureIngressClass(ObjectApi& api) {
  const ResourceType& rt = TypeOf("ingressclasses.networking.k8s.io");
  auto got = api.Get(rt, "", kIngressClassName);
  if (got.ok()) return Status::Ok();
  if (got.error().code != 404) return Internal("IngressClass lookup: " + got.error().message);
  Json obj = {{"apiVersion", "networking.k8s.io/v1"},
              {"kind", "IngressClass"},
              {"metadata",
               {{"name", std::string(kIngressClassName)},
                {"annotations", {{"ingressclass.kubernetes.io/is-default-class", "true"}}}}},
              {"spec", {{"controller", std::string(kIngressControllerName)}}}};
  auto res = api.Create(rt, "", std::move(obj));
  if (!res.ok() && res.error().reason != "AlreadyExists") {
    return Internal("IngressClass create: " + res.error().message);
  }
  return Status::Ok();
}

void IngressController::Observe(const Change& c) {
  if (c.gr != "ingresses.networking.k8s.io" || c.type == WatchEventType::kDeleted) return;
  if (c.new_obj->deleting) return;
  Json want = Json::array({Json{{"ip", ctx_.profile.Get()->load_balancer_ip}}});
  if (AtPath(c.object, "status.loadBalancer.ingress") == want) return;
  ctx_.queue.AddAfter({Work::kIngress, NsName(c.ns, c.name)}, ctx_.Delay(&Profile::load_balancer));
}

bool IngressController::Sync(Work, const std::string& key) {
  auto [ns, name] = SplitNsName(key);
  const CachedObject* co = ctx_.cache.Find("ingresses.networking.k8s.io", ns, name);
  if (co == nullptr || co->deleting) return true;
  Json want = Json::array({Json{{"ip", ctx_.profile.Get()->load_balancer_ip}}});
  auto res = ctx_.api.Modify(
      ingresses_, ns, name,
      [&](Json& obj) {
        if (IsDeleting(obj) || AtPath(obj, "status.loadBalancer.ingress") == want) return false;
        obj["status"]["loadBalancer"]["ingress"] = want;
        return true;
      },
      Subresource::kStatus);
  return res.ok() || res.error().code == 404;
}

// ---------------------------------------------------------------------------------------------
// CleanupFinalizers

CleanupFinalizers::CleanupFinalizers(ControllerContext& ctx) : ctx_(ctx) {}

void CleanupFinalizers::Observe(const Change& c) {
  auto watch_deleting = [&](std::string_view finalizer, Work work, DelaySpec Profile::*delay) {
    if (c.type == WatchEventType::kDeleted || !c.new_obj->deleting) return;
    if (!c.new_obj->HasFinalizer(finalizer)) return;
    ctx_.queue.AddAfter({work, NsName(c.ns, c.name)}, ctx_.Delay(delay));
  };
  if (c.gr == "services") {
    watch_deleting(kServiceFinalizer, Work::kServiceCleanup, &Profile::service_finalizer);
  } else if (c.gr == "ingresses.networking.k8s.io") {
    watch_deleting(kIngressFinalizer, Work::kIngressCleanup, &Profile::ingress_finalizer);
  } else if (c.gr == "persistentvolumeclaims") {
    watch_deleting(kPvcFinalizer, Work::kPvcCleanup, &Profile::pvc_finalizer);
  } else if (c.gr == "pods") {
    std::string key = NsName(c.ns, c.name);
    std::vector<std::string> released;
    if (auto it = pod_claims_.find(key); it != pod_claims_.end()) {
      for (const auto& claim : it->second.claims) {
        auto u = claim_users_.find(NsName(c.ns, claim));
        if (u != claim_users_.end()) {
          u->second.erase(c.name);
          if (u->second.empty()) claim_users_.erase(u);
        }
        released.push_back(claim);
      }
      pod_claims_.erase(it);
    }
    if (c.type != WatchEventType::kDeleted) {
      PodClaims pc;
      pc.terminal = IsPodTerminal(c.object);
      for (const auto& v : AtPath(c.object, "spec.volumes")) {
        std::string claim = StrAt(v, "persistentVolumeClaim.claimName");
        if (claim.empty()) continue;
        pc.claims.push_back(claim);
        claim_users_[NsName(c.ns, claim)].insert(c.name);
      }
      if (!pc.claims.empty()) pod_claims_[key] = std::move(pc);
    }
    // A pod that went away (or finished) may have been the last user of a deleting claim.
    for (const auto& claim : released) {
      const CachedObject* pvc = ctx_.cache.Find("persistentvolumeclaims", c.ns, claim);
      if (pvc != nullptr && pvc->deleting && pvc->HasFinalizer(kPvcFinalizer)) {
        ctx_.queue.AddAfter({Work::kPvcCleanup, NsName(c.ns, claim)},
                            ctx_.Delay(&Profile::pvc_finalizer));
      }
    }
  }
}

bool CleanupFinalizers::ClaimInUse(const std::string& ns, const std::string& claim) const {
  auto it = claim_users_.find(NsName(ns, claim));
  if (it == claim_users_.end()) return false;
  for (const auto& pod : it->second) {
    auto pc = pod_claims_.find(NsName(ns, pod));
    if (pc != pod_claims_.end() && !pc->second.terminal) return true;
  }
  return false;
}

bool CleanupFinalizers::Sync(Work kind, const std::string& key) {
  auto [ns, name] = SplitNsName(key);
  std::string gr;
  std::string_view finalizer;
  switch (kind) {
    case Work::kServiceCleanup:
      gr = "services";
      finalizer = kServiceFinalizer;
      break;
    case Work::kIngressCleanup:
      gr = "ingresses.networking.k8s.io";
      finalizer = kIngressFinalizer;
      break;
    default:
      gr = "persistentvolumeclaims";
      finalizer = kPvcFinalizer;
      break;
  }
  const CachedObject* co = ctx_.cache.Find(gr, ns, name);
  if (co == nullptr || !co->deleting || !co->HasFinalizer(finalizer)) return true;
  if (kind == Work::kPvcCleanup && ClaimInUse(ns, name)) return true;  // pods re-queue it
  const std::string uid = co->uid;
  auto res = ctx_.api.Modify(*co->rt, ns, name, [&](Json& obj) {
    if (StrAt(obj, "metadata.uid") != uid) return false;
    return RemoveFinalizer(obj, finalizer);
  });
  return res.ok() || res.error().code == 404;
}

// ---------------------------------------------------------------------------------------------
// PvcBinder

PvcBinder::PvcBinder(ControllerContext& ctx) : ctx_(ctx), pvcs_(TypeOf("persistentvolumeclaims")) {}

void PvcBinder::Observe(const Change& c) {
  if (c.gr != "persistentvolumeclaims" || c.type == WatchEventType::kDeleted) return;
  if (c.new_obj->deleting || StrAt(c.object, "status.phase") == "Bound") return;
  ctx_.queue.AddAfter({Work::kPvcBind, NsName(c.ns, c.name)}, ctx_.Delay(&Profile::pvc_binding));
}

bool PvcBinder::Sync(Work, const std::string& key) {
  auto [ns, name] = SplitNsName(key);
  const CachedObject* co = ctx_.cache.Find("persistentvolumeclaims", ns, name);
  if (co == nullptr || co->deleting) return true;
  const std::string uid = co->uid;
  const std::string volume = "pvc-" + uid;
  auto bound = ctx_.api.Modify(pvcs_, ns, name, [&](Json& obj) {
    if (StrAt(obj, "metadata.uid") != uid) return false;
    bool changed = false;
    if (StrAt(obj, "spec.volumeName").empty()) {
      obj["spec"]["volumeName"] = volume;
      changed = true;
    }
    Json& ann = obj["metadata"]["annotations"];
    if (!ann.is_object()) ann = Json::object();
    for (const char* a :
         {"pv.kubernetes.io/bind-completed", "pv.kubernetes.io/bound-by-controller"}) {
      if (GetString(ann, a) != "yes") {
        ann[a] = "yes";
        changed = true;
      }
    }
    return changed;
  });
  if (!bound.ok()) return bound.error().code == 404;
  auto res = ctx_.api.Modify(
      pvcs_, ns, name,
      [&](Json& obj) {
        if (StrAt(obj, "metadata.uid") != uid) return false;
        Json status = At(obj, "status").is_object() ? At(obj, "status") : Json::object();
        Json before = status;
        status["phase"] = "Bound";
        const Json& modes = AtPath(obj, "spec.accessModes");
        if (!modes.is_null()) status["accessModes"] = modes;
        const Json& storage = AtPath(obj, "spec.resources.requests.storage");
        if (!storage.is_null()) status["capacity"]["storage"] = storage;
        if (status == before) return false;
        obj["status"] = std::move(status);
        return true;
      },
      Subresource::kStatus);
  return res.ok() || res.error().code == 404;
}

}  // namespace steward::cluster::controllers
