// CachedObject: the compact form of an object in the informer's cache.
#include <algorithm>

#include "kube/informer/informer.h"

namespace steward::kube {

std::string ObjectKey(std::string_view ns, std::string_view name) {
  if (ns.empty()) return std::string(name);
  std::string key;
  key.reserve(ns.size() + 1 + name.size());
  key.append(ns).append("/").append(name);
  return key;
}

namespace {

// The string at metadata.<field>: absent → "", present and not a string → error.
StatusOr<std::string> MetadataString(const Json& metadata, const char* field) {
  auto it = metadata.find(field);
  if (it == metadata.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    return InvalidArgument(std::string("cached object: metadata.") + field + " is not a string");
  }
  return it->get<std::string>();
}

}  // namespace

StatusOr<std::shared_ptr<const CachedObject>> CachedObject::FromJson(const Json& object) {
  if (!object.is_object()) return InvalidArgument("cached object: not a JSON object");
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) {
    return InvalidArgument("cached object: metadata is missing or not an object");
  }
  auto built = std::make_shared<CachedObject>();
  ASSIGN_OR_RETURN(built->name_, MetadataString(*meta, "name"));
  if (built->name_.empty()) return InvalidArgument("cached object: metadata.name is missing");
  ASSIGN_OR_RETURN(built->ns_, MetadataString(*meta, "namespace"));
  ASSIGN_OR_RETURN(built->uid_, MetadataString(*meta, "uid"));
  ASSIGN_OR_RETURN(built->resource_version_, MetadataString(*meta, "resourceVersion"));
  if (built->resource_version_.empty()) {
    return InvalidArgument("cached object " + built->key() +
                           ": metadata.resourceVersion is missing");
  }
  auto labels = meta->find("labels");
  if (labels != meta->end() && !labels->is_null()) {
    if (!labels->is_object()) {
      return InvalidArgument("cached object " + built->key() +
                             ": metadata.labels is not an object");
    }
    for (const auto& [k, v] : labels->items()) {
      if (!v.is_string()) {
        return InvalidArgument("cached object " + built->key() + ": label " + k +
                               " is not a string");
      }
      built->labels_.emplace_back(k, v.get<std::string>());
    }
    std::sort(built->labels_.begin(), built->labels_.end());
    built->labels_.shrink_to_fit();
  }
  auto deletion = meta->find("deletionTimestamp");
  built->terminating_ = deletion != meta->end() && !deletion->is_null();
  built->json_ = DumpJson(object);
  built->json_.shrink_to_fit();
  return std::shared_ptr<const CachedObject>(std::move(built));
}

StatusOr<std::shared_ptr<const CachedObject>> CachedObject::FromScanned(ScannedItem item) {
  if (!item.metadata_object) {
    return InvalidArgument("cached object: metadata is missing or not an object");
  }
  auto built = std::make_shared<CachedObject>();
  built->name_ = std::move(item.name);
  built->ns_ = std::move(item.ns);
  if (!item.error.empty())
    return InvalidArgument("cached object " + built->key() + ": " + item.error);
  if (built->name_.empty()) return InvalidArgument("cached object: metadata.name is missing");
  built->uid_ = std::move(item.uid);
  built->resource_version_ = std::move(item.resource_version);
  if (built->resource_version_.empty()) {
    return InvalidArgument("cached object " + built->key() +
                           ": metadata.resourceVersion is missing");
  }
  built->labels_ = std::move(item.labels);
  std::sort(built->labels_.begin(), built->labels_.end());
  built->labels_.shrink_to_fit();
  built->terminating_ = item.terminating;
  built->json_ = std::move(item.json);
  built->json_.shrink_to_fit();
  return std::shared_ptr<const CachedObject>(std::move(built));
}

namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

const std::string* FindLabel(const Labels& labels, std::string_view key) {
  auto it = std::lower_bound(labels.begin(), labels.end(), key,
                             [](const auto& label, std::string_view k) { return label.first < k; });
  if (it == labels.end() || it->first != key) return nullptr;
  return &it->second;
}

}  // namespace

std::string_view CachedObject::label(std::string_view key) const {
  const std::string* value = FindLabel(labels_, key);
  return value ? std::string_view(*value) : std::string_view();
}

bool CachedObject::has_label(std::string_view key) const {
  return FindLabel(labels_, key) != nullptr;
}

Json CachedObject::Parse() const {
  auto parsed = ParseJson(json_);
  // json_ was produced by DumpJson or scanned by the same parser, so it parses; keep the failure
  // visible regardless.
  if (!parsed.ok()) return Json::object({{"error", parsed.status().ToString()}});
  return std::move(parsed).value();
}

}  // namespace steward::kube
