#include "cluster/controllers/controller_cache.h"

#include "cluster/controllers/util.h"

namespace steward::cluster::controllers {

namespace {
// Only controllers that adopt (ReplicaSets adopt pods, Deployments adopt ReplicaSets) ask.
bool TracksUncontrolled(std::string_view gr) { return gr == "pods" || gr == "replicasets.apps"; }
}  // namespace

std::string CachedObject::Key() const {
  return ControllerCache::Key(record.group_resource, record.ns, record.name);
}

bool CachedObject::HasFinalizer(std::string_view f) const {
  for (const auto& x : finalizers) {
    if (x == f) return true;
  }
  return false;
}

const OwnerRef* CachedObject::Controller() const {
  for (const auto& o : owners) {
    if (o.controller) return &o;
  }
  return nullptr;
}

const OwnerRef* CachedObject::RefTo(std::string_view owner_uid) const {
  for (const auto& o : owners) {
    if (o.uid == owner_uid) return &o;
  }
  return nullptr;
}

CachedObject MakeCachedObject(const ResourceType& rt, const ObjectRecord& record, const Json& obj) {
  CachedObject c;
  c.rt = &rt;
  c.record = record;
  const Json& meta = At(obj, "metadata");
  c.uid = GetString(meta, "uid");
  c.deleting = IsDeleting(obj);
  const Json& refs = At(meta, "ownerReferences");
  if (refs.is_array()) {
    for (const auto& r : refs) {
      OwnerRef o;
      o.api_version = GetString(r, "apiVersion");
      o.kind = GetString(r, "kind");
      o.name = GetString(r, "name");
      o.uid = GetString(r, "uid");
      const Json& ctl = At(r, "controller");
      o.controller = ctl.is_boolean() && ctl.get<bool>();
      const Json& block = At(r, "blockOwnerDeletion");
      o.block = block.is_boolean() && block.get<bool>();
      c.owners.push_back(std::move(o));
    }
  }
  const Json& fins = At(meta, "finalizers");
  if (fins.is_array()) {
    for (const auto& f : fins) {
      if (f.is_string()) c.finalizers.push_back(f.get<std::string>());
    }
  }
  return c;
}

std::string ControllerCache::Key(std::string_view gr, std::string_view ns, std::string_view name) {
  std::string k;
  k.reserve(gr.size() + ns.size() + name.size() + 2);
  k.append(gr).push_back('|');
  k.append(ns).push_back('|');
  k.append(name);
  return k;
}

void ControllerCache::SplitKey(std::string_view key, std::string* gr, std::string* ns,
                               std::string* name) {
  size_t a = key.find('|');
  size_t b = key.find('|', a + 1);
  *gr = std::string(key.substr(0, a));
  *ns = std::string(key.substr(a + 1, b - a - 1));
  *name = std::string(key.substr(b + 1));
}

std::unique_ptr<CachedObject> ControllerCache::Put(CachedObject obj) {
  std::string key = obj.Key();
  auto& slot = objects_[key];
  std::unique_ptr<CachedObject> old = std::move(slot);
  if (old) Unindex(*old, key);
  slot = std::make_unique<CachedObject>(std::move(obj));
  Index(*slot, key);
  return old;
}

std::unique_ptr<CachedObject> ControllerCache::Remove(std::string_view gr, std::string_view ns,
                                                      std::string_view name) {
  std::string key = Key(gr, ns, name);
  auto it = objects_.find(key);
  if (it == objects_.end()) return nullptr;
  std::unique_ptr<CachedObject> old = std::move(it->second);
  objects_.erase(it);
  Unindex(*old, key);
  return old;
}

const CachedObject* ControllerCache::Find(std::string_view gr, std::string_view ns,
                                          std::string_view name) const {
  return FindKey(Key(gr, ns, name));
}

const CachedObject* ControllerCache::FindKey(const std::string& key) const {
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : it->second.get();
}

const std::set<std::string>& ControllerCache::Dependents(const std::string& owner_uid) const {
  static const std::set<std::string> kEmpty;
  auto it = dependents_.find(owner_uid);
  return it == dependents_.end() ? kEmpty : it->second;
}

const std::set<std::string>& ControllerCache::Uncontrolled(std::string_view gr,
                                                           std::string_view ns) const {
  static const std::set<std::string> kEmpty;
  auto it = uncontrolled_.find(NsName(gr, ns));
  return it == uncontrolled_.end() ? kEmpty : it->second;
}

void ControllerCache::Index(const CachedObject& obj, const std::string& key) {
  for (const auto& o : obj.owners) {
    if (!o.uid.empty()) dependents_[o.uid].insert(key);
  }
  if (obj.Controller() == nullptr && TracksUncontrolled(obj.record.group_resource)) {
    uncontrolled_[NsName(obj.record.group_resource, obj.record.ns)].insert(obj.record.name);
  }
}

void ControllerCache::Unindex(const CachedObject& obj, const std::string& key) {
  for (const auto& o : obj.owners) {
    auto it = dependents_.find(o.uid);
    if (it == dependents_.end()) continue;
    it->second.erase(key);
    if (it->second.empty()) dependents_.erase(it);
  }
  if (obj.Controller() == nullptr && TracksUncontrolled(obj.record.group_resource)) {
    auto it = uncontrolled_.find(NsName(obj.record.group_resource, obj.record.ns));
    if (it != uncontrolled_.end()) {
      it->second.erase(obj.record.name);
      if (it->second.empty()) uncontrolled_.erase(it);
    }
  }
}

}  // namespace steward::cluster::controllers
