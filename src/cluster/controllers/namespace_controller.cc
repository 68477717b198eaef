#include "cluster/controllers/namespace_controller.h"

#include <map>

#include "cluster/controllers/util.h"

namespace steward::cluster::controllers {

namespace {

// Sets a namespace condition; lastTransitionTime moves only when the status changes.
void SetNsCondition(Json& status, std::string_view type, std::string_view value,
                    std::string_view reason, const std::string& message, const std::string& now) {
  Json& conds = status["conditions"];
  if (!conds.is_array()) conds = Json::array();
  for (auto& c : conds) {
    if (GetString(c, "type") != type) continue;
    if (GetString(c, "status") != value) c["lastTransitionTime"] = now;
    c["status"] = value;
    c["reason"] = reason;
    c["message"] = message;
    return;
  }
  conds.push_back(Json{{"type", type},
                       {"status", value},
                       {"lastTransitionTime", now},
                       {"reason", reason},
                       {"message", message}});
}

}  // namespace

NamespaceController::NamespaceController(ControllerContext& ctx)
    : ctx_(ctx), namespaces_(TypeOf("namespaces")) {}

void NamespaceController::Touch(const std::string& ns) {
  if (terminating_.count(ns) != 0) ctx_.queue.Add({Work::kNamespace, ns});
}

void NamespaceController::Observe(const Change& c) {
  if (c.gr == "namespaces") {
    if (c.type != WatchEventType::kDeleted && c.new_obj->deleting) {
      terminating_.insert(c.name);
      ctx_.queue.Add({Work::kNamespace, c.name});
    } else {
      terminating_.erase(c.name);
    }
    return;
  }
  if (!c.ns.empty()) Touch(c.ns);
}

bool NamespaceController::Sync(Work, const std::string& name) {
  const CachedObject* co = ctx_.cache.Find("namespaces", "", name);
  if (co == nullptr || !co->deleting) return true;
  const std::string uid = co->uid;
  const bool has_meta_finalizers = !co->finalizers.empty();
  Json ns_obj = co->Parse();
  bool ok = true;

  // Delete everything; count what is still there (and what holds it).
  std::map<std::string, int64_t> remaining;
  std::map<std::string, int64_t> finalizers;
  for (const auto& rt : AllResourceTypes()) {
    if (!rt.namespaced) continue;
    std::string gr = rt.GroupResource();
    auto list = ctx_.api.storage().List(gr, name);
    for (const auto& rec : list.items) {
      Json obj = rec.Parse();
      if (!IsDeleting(obj)) {
        DeleteOptions opts;
        opts.precondition_uid = StrAt(obj, "metadata.uid");
        opts.propagation_policy = "Background";
        auto res = ctx_.api.Delete(rt, name, rec.name, opts);
        if (!res.ok()) {
          if (res.error().code != 404 && res.error().code != 409) ok = false;
          if (res.error().code == 404) continue;
        } else if (StrAt(*res, "kind") == "Status") {
          continue;  // removed at once
        } else {
          obj = std::move(*res);
        }
      }
      ++remaining[gr];
      for (const auto& f : AtPath(obj, "metadata.finalizers")) {
        if (f.is_string()) ++finalizers[f.get<std::string>()];
      }
    }
  }

  std::string now = Rfc3339(ctx_.WallNow());
  Json status = At(ns_obj, "status").is_object() ? At(ns_obj, "status") : Json::object();
  status["phase"] = "Terminating";
  SetNsCondition(status, "NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered",
                 "All resources successfully discovered", now);
  SetNsCondition(status, "NamespaceDeletionGroupVersionParsingFailure", "False",
                 "ParsedGroupVersions", "All legacy kube types successfully parsed", now);
  SetNsCondition(status, "NamespaceDeletionContentFailure", "False", "ContentDeleted",
                 "All content successfully deleted, may be waiting on finalization", now);
  if (remaining.empty()) {
    SetNsCondition(status, "NamespaceContentRemaining", "False", "ContentRemoved",
                   "All content successfully removed", now);
  } else {
    std::string msg = "Some resources are remaining: ";
    bool first = true;
    for (const auto& [gr, n] : remaining) {
      if (!first) msg += ", ";
      first = false;
      msg += gr + " has " + std::to_string(n) + " resource instances";
    }
    SetNsCondition(status, "NamespaceContentRemaining", "True", "SomeResourcesRemain", msg, now);
  }
  if (finalizers.empty()) {
    SetNsCondition(status, "NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers",
                   "All content-preserving finalizers finished", now);
  } else {
    std::string msg = "Some content in the namespace has finalizers remaining: ";
    bool first = true;
    for (const auto& [f, n] : finalizers) {
      if (!first) msg += ", ";
      first = false;
      msg += f + " in " + std::to_string(n) + " resource instances";
    }
    SetNsCondition(status, "NamespaceFinalizersRemaining", "True", "SomeFinalizersRemain", msg,
                   now);
  }
  if (status != At(ns_obj, "status")) {
    auto res = ctx_.api.Modify(
        namespaces_, "", name,
        [&](Json& obj) {
          if (StrAt(obj, "metadata.uid") != uid || At(obj, "status") == status) return false;
          obj["status"] = status;
          return true;
        },
        Subresource::kStatus);
    if (!res.ok()) return res.error().code == 404;
  }
  if (!remaining.empty()) return ok;

  if (has_meta_finalizers) {
    // Someone else's finalizer still holds it: finalize ours (spec.finalizers) and wait.
    auto res = ctx_.api.Modify(namespaces_, "", name, [&](Json& obj) {
      if (StrAt(obj, "metadata.uid") != uid) return false;
      const Json& f = AtPath(obj, "spec.finalizers");
      if (!f.is_array() || f.empty()) return false;
      obj["spec"]["finalizers"] = Json::array();
      return true;
    });
    return res.ok() || res.error().code == 404;
  }
  auto res = ctx_.api.ForceRemove(namespaces_, "", name, uid);
  return res.ok() || res.error().code == 404 || res.error().code == 409;
}

}  // namespace steward::cluster::controllers
