// ControllerCache: the controllers' informer cache, fed by one storage watch over every type.
//
// Keeps, for every object except Events, its stored record (shared with storage, so cheap)
// plus the metadata the controllers index on: uid, owner references, finalizers, deletion.
// Indexes: dependents by owner uid, and objects without a controller reference ("uncontrolled";
// Kubernetes calls them orphans, a word Steward keeps for labelled objects of no stored project)
// per group-resource and namespace.
//
// Not thread-safe: owned and used by the controller manager's worker thread only.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cluster/model/resource_types.h"
#include "cluster/storage/storage.h"
#include "common/json.h"

namespace steward::cluster::controllers {

struct OwnerRef {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool block = false;
};

struct CachedObject {
  const ResourceType* rt = nullptr;
  ObjectRecord record;
  std::string uid;
  std::vector<OwnerRef> owners;
  std::vector<std::string> finalizers;
  bool deleting = false;

  std::string Key() const;  // ControllerCache::Key(gr, ns, name)
  bool HasFinalizer(std::string_view f) const;
  const OwnerRef* Controller() const;
  const OwnerRef* RefTo(std::string_view owner_uid) const;
  Json Parse() const { return record.Parse(); }
};

// Builds the cached form of a parsed object.
CachedObject MakeCachedObject(const ResourceType& rt, const ObjectRecord& record, const Json& obj);

class ControllerCache {
 public:
  // "gr|ns|name".
  static std::string Key(std::string_view gr, std::string_view ns, std::string_view name);
  static void SplitKey(std::string_view key, std::string* gr, std::string* ns, std::string* name);

  // Inserts or replaces; returns the previous entry (if any).
  std::unique_ptr<CachedObject> Put(CachedObject obj);
  // Removes; returns the removed entry (if any).
  std::unique_ptr<CachedObject> Remove(std::string_view gr, std::string_view ns,
                                       std::string_view name);

  const CachedObject* Find(std::string_view gr, std::string_view ns, std::string_view name) const;
  const CachedObject* FindKey(const std::string& key) const;
  // Keys of the objects whose ownerReferences name `owner_uid` (empty set when none).
  const std::set<std::string>& Dependents(const std::string& owner_uid) const;
  // Names of objects of `gr` in `ns` without a controller reference (tracked for pods and
  // replicasets.apps only).
  const std::set<std::string>& Uncontrolled(std::string_view gr, std::string_view ns) const;
  size_t size() const { return objects_.size(); }

 private:
  void Index(const CachedObject& obj, const std::string& key);
  void Unindex(const CachedObject& obj, const std::string& key);

  std::unordered_map<std::string, std::unique_ptr<CachedObject>> objects_;
  std::unordered_map<std::string, std::set<std::string>> dependents_;
  std::unordered_map<std::string, std::set<std::string>> uncontrolled_;  // "gr|ns" -> names
};

}  // namespace steward::cluster::controllers
