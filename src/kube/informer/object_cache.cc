#include "kube/informer/object_cache.h"

#include <utility>

namespace steward::kube::internal {

ObjectCache::ObjectCache(std::vector<std::string> label_indexes) {
  for (auto& key : label_indexes) labels_[std::move(key)];
}

ObjectRef ObjectCache::Get(std::string_view key) const {
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : it->second;
}

ObjectRef ObjectCache::Upsert(ObjectRef object) {
  auto [it, inserted] = objects_.try_emplace(object->key(), object);
  ObjectRef previous;
  if (!inserted) {
    previous = std::exchange(it->second, object);
    Unindex(it->first, *previous);  // `previous` still holds the viewed label values
  }
  Index(it->first, *object);
  return previous;
}

ObjectRef ObjectCache::Remove(std::string_view key) {
  auto it = objects_.find(key);
  if (it == objects_.end()) return nullptr;
  ObjectRef removed = std::move(it->second);
  Unindex(it->first, *removed);
  objects_.erase(it);
  return removed;
}

std::vector<ObjectCache::Change> ObjectCache::Replace(
    std::map<std::string, ObjectRef, std::less<>> objects) {
  std::vector<Change> changes;
  auto old_it = objects_.begin();
  auto new_it = objects.begin();
  // Merge the two sorted maps.
  while (old_it != objects_.end() || new_it != objects.end()) {
    if (new_it == objects.end() || (old_it != objects_.end() && old_it->first < new_it->first)) {
      changes.push_back({Change::Kind::kDelete, old_it->second, nullptr});
      ++old_it;
    } else if (old_it == objects_.end() || new_it->first < old_it->first) {
      changes.push_back({Change::Kind::kAdd, nullptr, new_it->second});
      ++new_it;
    } else {
      if (old_it->second->resource_version() != new_it->second->resource_version()) {
        changes.push_back({Change::Kind::kUpdate, old_it->second, new_it->second});
      }
      ++old_it;
      ++new_it;
    }
  }
  for (auto& [label, index] : labels_) index.clear();  // before the viewed objects go
  objects_ = std::move(objects);
  for (const auto& [key, object] : objects_) Index(key, *object);
  return changes;
}

std::vector<ObjectRef> ObjectCache::All() const {
  std::vector<ObjectRef> out;
  out.reserve(objects_.size());
  for (const auto& [key, object] : objects_) out.push_back(object);
  return out;
}

std::vector<ObjectRef> ObjectCache::ByNamespace(std::string_view ns) const {
  std::vector<ObjectRef> out;
  if (ns.empty()) {  // cluster-scoped objects: keys without a namespace part
    for (const auto& [key, object] : objects_) {
      if (object->ns().empty()) out.push_back(object);
    }
    return out;
  }
  std::string prefix = std::string(ns) + "/";
  for (auto it = objects_.lower_bound(prefix);
       it != objects_.end() && std::string_view(it->first).starts_with(prefix); ++it) {
    out.push_back(it->second);
  }
  return out;
}

std::vector<ObjectRef> ObjectCache::ByLabel(std::string_view key, std::string_view value) const {
  std::vector<ObjectRef> out;
  auto index = labels_.find(key);
  if (index == labels_.end()) {  // not an indexed key: scan
    for (const auto& [k, object] : objects_) {
      if (object->has_label(key) && object->label(key) == value) out.push_back(object);
    }
    return out;
  }
  for (auto it = index->second.lower_bound({value, std::string_view()});
       it != index->second.end() && it->first == value; ++it) {
    auto found = objects_.find(it->second);
    if (found != objects_.end()) out.push_back(found->second);
  }
  return out;
}

void ObjectCache::Index(std::string_view key, const CachedObject& object) {
  for (auto& [label, index] : labels_) {
    if (object.has_label(label)) index.emplace(object.label(label), key);
  }
}

void ObjectCache::Unindex(std::string_view key, const CachedObject& object) {
  for (auto& [label, index] : labels_) {
    if (object.has_label(label)) index.erase({object.label(label), key});
  }
}

}  // namespace steward::kube::internal
