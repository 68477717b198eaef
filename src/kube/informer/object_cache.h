// ObjectCache: the informer's store — objects by key (ObjectKey order) plus label indexes
// (label key → ordered (value, object key) pairs). Internal to kube/informer.
//
// Memory: an index entry is one set node of two string_views, pointing into the cached object
// (its label value) and into the map's key; both live exactly as long as the entry.
//
// Not thread-safe: the informer guards it with its cache lock (one writer, many readers).
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kube/informer/informer.h"

namespace steward::kube::internal {

class ObjectCache {
 public:
  explicit ObjectCache(std::vector<std::string> label_indexes);

  ObjectRef Get(std::string_view key) const;
  // Inserts or replaces the object under its key; returns the previous one (null when new).
  ObjectRef Upsert(ObjectRef object);
  // Returns the removed object (null when absent).
  ObjectRef Remove(std::string_view key);

  // A relist's difference with the cache, in key order.
  struct Change {
    enum class Kind { kAdd, kUpdate, kDelete };
    Kind kind;
    ObjectRef old_object;  // kUpdate, kDelete
    ObjectRef new_object;  // kAdd, kUpdate
  };
  // Replaces the whole content with `objects` (keyed by ObjectKey). An object whose
  // resourceVersion did not change is no change.
  std::vector<Change> Replace(std::map<std::string, ObjectRef, std::less<>> objects);

  std::vector<ObjectRef> All() const;
  std::vector<ObjectRef> ByNamespace(std::string_view ns) const;
  std::vector<ObjectRef> ByLabel(std::string_view key, std::string_view value) const;
  size_t size() const { return objects_.size(); }

 private:
  // (label value, object key), both viewing memory owned by the cache entry.
  using LabelIndex = std::set<std::pair<std::string_view, std::string_view>>;
  void Index(std::string_view key, const CachedObject& object);
  void Unindex(std::string_view key, const CachedObject& object);

  std::map<std::string, ObjectRef, std::less<>> objects_;
  std::map<std::string, LabelIndex, std::less<>> labels_;
};

}  // namespace steward::kube::internal
