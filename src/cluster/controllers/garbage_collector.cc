#include "cluster/controllers/garbage_collector.h"

#include "cluster/controllers/util.h"

namespace steward::cluster::controllers {

GarbageCollector::GarbageCollector(ControllerContext& ctx) : ctx_(ctx) {}

void GarbageCollector::EnqueueAttempt(const std::string& key) {
  ctx_.queue.AddAfter({Work::kGcAttempt, key}, ctx_.Delay(&Profile::garbage_collection));
}

void GarbageCollector::EnqueueOwner(const std::string& key) {
  ctx_.queue.AddAfter({Work::kGcOwner, key}, ctx_.Delay(&Profile::garbage_collection));
}

const CachedObject* GarbageCollector::FindOwner(const CachedObject& dependent,
                                                const OwnerRef& ref) const {
  const ResourceType* rt = ResolveKind(ref.api_version, ref.kind);
  if (rt == nullptr) return nullptr;
  return ctx_.cache.Find(rt->GroupResource(), rt->namespaced ? dependent.record.ns : "", ref.name);
}

GarbageCollector::OwnerState GarbageCollector::StateOf(const CachedObject& dependent,
                                                       const OwnerRef& ref) const {
  if (ResolveKind(ref.api_version, ref.kind) == nullptr) return OwnerState::kUnknown;
  const CachedObject* owner = FindOwner(dependent, ref);
  if (owner == nullptr || owner->uid != ref.uid) return OwnerState::kDangling;
  if (owner->deleting && owner->HasFinalizer(kForegroundFinalizer)) return OwnerState::kWaiting;
  return OwnerState::kSolid;
}

void GarbageCollector::Observe(const Change& c) {
  if (c.type == WatchEventType::kDeleted) {
    if (c.old_obj == nullptr) return;
    for (const auto& dep : ctx_.cache.Dependents(c.old_obj->uid)) EnqueueAttempt(dep);
    for (const auto& ref : c.old_obj->owners) {
      const CachedObject* owner = FindOwner(*c.old_obj, ref);
      if (owner != nullptr && owner->uid == ref.uid && owner->deleting &&
          owner->HasFinalizer(kForegroundFinalizer)) {
        EnqueueOwner(owner->Key());
      }
    }
    return;
  }
  const CachedObject& cur = *c.new_obj;
  for (const auto& ref : cur.owners) {
    switch (StateOf(cur, ref)) {
      case OwnerState::kDangling:
        EnqueueAttempt(cur.Key());
        break;
      case OwnerState::kWaiting:
        EnqueueOwner(FindOwner(cur, ref)->Key());
        break;
      default:
        break;
    }
  }
  if (c.old_obj != nullptr) {
    // A reference dropped from a dependent may unblock an owner's foreground deletion.
    for (const auto& ref : c.old_obj->owners) {
      if (cur.RefTo(ref.uid) != nullptr && cur.RefTo(ref.uid)->block == ref.block) continue;
      const CachedObject* owner = FindOwner(cur, ref);
      if (owner != nullptr && owner->uid == ref.uid && owner->deleting &&
          owner->HasFinalizer(kForegroundFinalizer)) {
        EnqueueOwner(owner->Key());
      }
    }
  }
  if (cur.deleting &&
      (cur.HasFinalizer(kOrphanFinalizer) || cur.HasFinalizer(kForegroundFinalizer))) {
    EnqueueOwner(cur.Key());
  }
}

bool GarbageCollector::Sync(Work kind, const std::string& key) {
  return kind == Work::kGcOwner ? ProcessOwner(key) : AttemptToDelete(key);
}

bool GarbageCollector::RemoveOwnerRefs(const CachedObject& obj, const std::set<std::string>& uids) {
  auto res = ctx_.api.Modify(*obj.rt, obj.record.ns, obj.record.name, [&](Json& o) {
    Json& refs = o["metadata"]["ownerReferences"];
    if (!refs.is_array()) return false;
    Json kept = Json::array();
    for (const auto& r : refs) {
      if (uids.count(GetString(r, "uid")) == 0) kept.push_back(r);
    }
    if (kept.size() == refs.size()) return false;
    if (kept.empty()) {
      o["metadata"].erase("ownerReferences");
    } else {
      refs = std::move(kept);
    }
    return true;
  });
  return res.ok() || res.error().code == 404;
}

bool GarbageCollector::AttemptToDelete(const std::string& key) {
  const CachedObject* co = ctx_.cache.FindKey(key);
  if (co == nullptr || co->deleting || co->owners.empty()) return true;
  std::set<std::string> solid, dangling, waiting;
  for (const auto& ref : co->owners) {
    switch (StateOf(*co, ref)) {
      case OwnerState::kDangling:
        dangling.insert(ref.uid);
        break;
      case OwnerState::kWaiting:
        waiting.insert(ref.uid);
        break;
      default:
        solid.insert(ref.uid);
        break;
    }
  }
  if (!solid.empty()) {
    if (dangling.empty() && waiting.empty()) return true;
    std::set<std::string> drop = dangling;
    drop.insert(waiting.begin(), waiting.end());
    return RemoveOwnerRefs(*co, drop);
  }
  DeleteOptions opts;
  opts.precondition_uid = co->uid;
  if (!waiting.empty() && !ctx_.cache.Dependents(co->uid).empty()) {
    opts.propagation_policy = "Foreground";
  } else if (co->HasFinalizer(kOrphanFinalizer)) {
    opts.propagation_policy = "Orphan";
  } else if (co->HasFinalizer(kForegroundFinalizer)) {
    opts.propagation_policy = "Foreground";
  } else {
    opts.propagation_policy = "Background";
  }
  auto res = ctx_.api.Delete(*co->rt, co->record.ns, co->record.name, opts);
  return res.ok() || res.error().code == 404 || res.error().code == 409;
}

bool GarbageCollector::ProcessOwner(const std::string& key) {
  const CachedObject* co = ctx_.cache.FindKey(key);
  if (co == nullptr || !co->deleting) return true;
  const std::string uid = co->uid;
  const ResourceType& rt = *co->rt;
  const std::string ns = co->record.ns;
  const std::string name = co->record.name;
  std::vector<std::string> deps(ctx_.cache.Dependents(uid).begin(),
                                ctx_.cache.Dependents(uid).end());
  auto remove_finalizer = [&](std::string_view finalizer) {
    auto res = ctx_.api.Modify(rt, ns, name, [&](Json& o) {
      if (StrAt(o, "metadata.uid") != uid) return false;
      return RemoveFinalizer(o, finalizer);
    });
    return res.ok() || res.error().code == 404;
  };
  if (co->HasFinalizer(kOrphanFinalizer)) {
    for (const auto& dep : deps) {
      const CachedObject* d = ctx_.cache.FindKey(dep);
      if (d != nullptr && !RemoveOwnerRefs(*d, {uid})) return false;
    }
    return remove_finalizer(kOrphanFinalizer);
  }
  if (!co->HasFinalizer(kForegroundFinalizer)) return true;
  size_t blocking = 0;
  for (const auto& dep : deps) {
    const CachedObject* d = ctx_.cache.FindKey(dep);
    if (d == nullptr) continue;
    const OwnerRef* ref = d->RefTo(uid);
    if (ref == nullptr || !ref->block) continue;
    ++blocking;
    if (!d->deleting && !AttemptToDelete(dep)) return false;
  }
  if (blocking == 0) return remove_finalizer(kForegroundFinalizer);
  return true;
}

}  // namespace steward::cluster::controllers
