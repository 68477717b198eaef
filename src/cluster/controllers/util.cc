#include "cluster/controllers/util.h"

#include <cstdlib>

#include "common/json_access.h"
#include "common/time_util.h"

namespace steward::cluster::controllers {

std::string NsName(std::string_view ns, std::string_view name) {
  std::string out;
  out.reserve(ns.size() + name.size() + 1);
  out.append(ns).push_back('/');
  out.append(name);
  return out;
}

std::pair<std::string, std::string> SplitNsName(std::string_view key) {
  size_t slash = key.find('/');
  if (slash == std::string_view::npos) return {"", std::string(key)};
  return {std::string(key.substr(0, slash)), std::string(key.substr(slash + 1))};
}

const Json& At(const Json& obj, std::string_view key) { return MemberOrNull(obj, key); }

const Json& AtPath(const Json& obj, std::string_view dotted) { return PathOrNull(obj, dotted); }

int64_t IntAt(const Json& obj, std::string_view dotted, int64_t fallback) {
  return NumberAtPath(obj, dotted, fallback);
}

std::string StrAt(const Json& obj, std::string_view dotted) { return StringAtPath(obj, dotted); }

void SetOmitEmpty(Json& obj, const std::string& key, int64_t v) {
  if (v == 0) {
    obj.erase(key);
  } else {
    obj[key] = v;
  }
}

bool IsDeleting(const Json& obj) {
  const Json& ts = AtPath(obj, "metadata.deletionTimestamp");
  return ts.is_string() && !ts.get<std::string>().empty();
}

bool HasFinalizer(const Json& obj, std::string_view finalizer) {
  const Json& f = AtPath(obj, "metadata.finalizers");
  if (!f.is_array()) return false;
  for (const auto& e : f) {
    if (e.is_string() && e.get<std::string>() == finalizer) return true;
  }
  return false;
}

bool RemoveFinalizer(Json& obj, std::string_view finalizer) {
  if (!obj.is_object() || !obj.contains("metadata")) return false;
  Json& meta = obj["metadata"];
  if (!meta.is_object() || !meta.contains("finalizers") || !meta["finalizers"].is_array()) {
    return false;
  }
  Json kept = Json::array();
  bool removed = false;
  for (const auto& e : meta["finalizers"]) {
    if (e.is_string() && e.get<std::string>() == finalizer) {
      removed = true;
    } else {
      kept.push_back(e);
    }
  }
  if (!removed) return false;
  if (kept.empty()) {
    meta.erase("finalizers");
  } else {
    meta["finalizers"] = std::move(kept);
  }
  return true;
}

Json ControllerRefTo(const Json& owner, const ResourceType& owner_type) {
  return Json{{"apiVersion", owner_type.ApiVersion()},
              {"kind", owner_type.kind},
              {"name", StrAt(owner, "metadata.name")},
              {"uid", StrAt(owner, "metadata.uid")},
              {"controller", true},
              {"blockOwnerDeletion", true}};
}

const Json* ControllerRefOf(const Json& obj) {
  const Json& refs = AtPath(obj, "metadata.ownerReferences");
  if (!refs.is_array()) return nullptr;
  for (const auto& r : refs) {
    const Json& c = At(r, "controller");
    if (c.is_boolean() && c.get<bool>()) return &r;
  }
  return nullptr;
}

const Json* FindCondition(const Json& status, std::string_view type) {
  const Json& conds = At(status, "conditions");
  if (!conds.is_array()) return nullptr;
  for (const auto& c : conds) {
    if (GetString(c, "type") == type) return &c;
  }
  return nullptr;
}

const ResourceType* ResolveKind(std::string_view api_version, std::string_view kind) {
  size_t slash = api_version.find('/');
  std::string_view group = slash == std::string_view::npos ? "" : api_version.substr(0, slash);
  for (const auto& rt : AllResourceTypes()) {
    if (rt.kind == kind && rt.group == group) return &rt;
  }
  return nullptr;
}

const ResourceType& TypeOf(std::string_view group_resource) {
  const ResourceType* rt = FindGroupResource(group_resource);
  if (rt == nullptr) std::abort();
  return *rt;
}

std::string Rfc3339(SystemTime t) { return FormatRfc3339(t); }

std::optional<SystemTime> TimeAt(const Json& obj, std::string_view dotted) {
  const Json& v = AtPath(obj, dotted);
  if (!v.is_string()) return std::nullopt;
  return ParseRfc3339(v.get<std::string>());
}

int64_t ScaledValue(const Json& int_or_percent, int64_t total, bool round_up) {
  if (int_or_percent.is_number_integer()) return int_or_percent.get<int64_t>();
  if (!int_or_percent.is_string()) return 0;
  std::string s = int_or_percent.get<std::string>();
  if (s.empty() || s.back() != '%') {
    // A numeric string is accepted by intstr as an int.
    char* end = nullptr;
    long long v = std::strtoll(s.c_str(), &end, 10);
    return (end != nullptr && *end == '\0' && !s.empty()) ? v : 0;
  }
  s.pop_back();
  char* end = nullptr;
  long long pct = std::strtoll(s.c_str(), &end, 10);
  if (end == nullptr || *end != '\0' || s.empty()) return 0;
  int64_t num = pct * total;
  if (round_up) return (num + 99) / 100;
  return num / 100;
}

uint32_t Fnv32a(std::string_view data, uint32_t h) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

std::string SafeEncodeString(std::string_view s) {
  static constexpr std::string_view kAlphanums = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) out.push_back(kAlphanums[c % kAlphanums.size()]);
  return out;
}

namespace {
Json WithoutHash(const Json& tmpl) {
  Json copy = tmpl;
  if (copy.is_object() && copy.contains("metadata") && copy["metadata"].is_object()) {
    Json& meta = copy["metadata"];
    if (meta.contains("labels") && meta["labels"].is_object()) {
      meta["labels"].erase(std::string(kPodTemplateHashLabel));
      if (meta["labels"].empty()) meta.erase("labels");
    }
    if (meta.empty()) copy.erase("metadata");
  }
  return copy;
}
}  // namespace

std::string ComputePodTemplateHash(const Json& pod_template, int64_t collision_count) {
  uint32_t h = Fnv32a(DumpJson(WithoutHash(pod_template)));
  if (collision_count > 0) {
    // As controller.ComputeHash: the collision count is hashed as 4 little-endian bytes.
    uint32_t c = static_cast<uint32_t>(collision_count);
    char bytes[4] = {static_cast<char>(c & 0xff), static_cast<char>((c >> 8) & 0xff),
                     static_cast<char>((c >> 16) & 0xff), static_cast<char>((c >> 24) & 0xff)};
    h = Fnv32a(std::string_view(bytes, 4), h);
  }
  return SafeEncodeString(std::to_string(h));
}

bool EqualIgnoreHash(const Json& a, const Json& b) { return WithoutHash(a) == WithoutHash(b); }

bool IsPodReady(const Json& pod) {
  const Json* c = FindCondition(At(pod, "status"), "Ready");
  return c != nullptr && GetString(*c, "status") == "True";
}

bool IsPodTerminal(const Json& pod) {
  std::string phase = StrAt(pod, "status.phase");
  return phase == "Succeeded" || phase == "Failed";
}

bool IsPodAvailable(const Json& pod, int64_t min_ready_seconds, SystemTime now) {
  if (!IsPodReady(pod)) return false;
  if (min_ready_seconds <= 0) return true;
  const Json* c = FindCondition(At(pod, "status"), "Ready");
  auto since = TimeAt(*c, "lastTransitionTime");
  if (!since) return false;
  return *since + std::chrono::seconds(min_ready_seconds) < now;
}

}  // namespace steward::cluster::controllers
