#include "cluster/apiserver/object_meta.h"

#include <algorithm>

#include "common/json_access.h"

namespace steward::cluster::objectmeta {

std::string ResourceVersionOf(const Json& obj) {
  return GetString(MemberOrNull(obj, "metadata"), "resourceVersion");
}

bool HasDeletionTimestamp(const Json& obj) {
  const Json& ts = MemberOrNull(MemberOrNull(obj, "metadata"), "deletionTimestamp");
  return ts.is_string() && !ts.get<std::string>().empty();
}

std::vector<std::string> Finalizers(const Json& obj) {
  std::vector<std::string> out;
  const Json& f = MemberOrNull(MemberOrNull(obj, "metadata"), "finalizers");
  if (f.is_array()) {
    for (const auto& v : f) {
      if (v.is_string()) out.push_back(v.get<std::string>());
    }
  }
  return out;
}

void SetFinalizers(Json& obj, const std::vector<std::string>& finalizers) {
  if (finalizers.empty()) {
    obj["metadata"].erase("finalizers");
  } else {
    obj["metadata"]["finalizers"] = finalizers;
  }
}

void AddFinalizer(std::vector<std::string>& f, const std::string& name) {
  if (std::find(f.begin(), f.end(), name) == f.end()) f.push_back(name);
}

void RemoveFinalizer(std::vector<std::string>& f, const std::string& name) {
  f.erase(std::remove(f.begin(), f.end(), name), f.end());
}

int64_t GenerationOf(const Json& obj) {
  const Json& g = MemberOrNull(MemberOrNull(obj, "metadata"), "generation");
  return g.is_number_integer() ? g.get<int64_t>() : 0;
}

bool IsRemovable(const ResourceType& rt, const Json& obj) {
  if (!HasDeletionTimestamp(obj) || !Finalizers(obj).empty()) return false;
  const Json& grace = MemberOrNull(MemberOrNull(obj, "metadata"), "deletionGracePeriodSeconds");
  if (grace.is_number_integer() && grace.get<int64_t>() != 0) return false;
  const Json& spec_finalizers = MemberOrNull(MemberOrNull(obj, "spec"), "finalizers");
  return rt.kind != "Namespace" || !spec_finalizers.is_array() || spec_finalizers.empty();
}

}  // namespace steward::cluster::objectmeta
