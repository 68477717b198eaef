#include "cluster/controllers/container_env.h"

#include <algorithm>
#include <array>
#include <optional>

#include "common/json_access.h"

namespace steward::cluster::controllers {

namespace {

// Resolves "metadata.labels['app']"-style downward API paths.
std::string FieldRefValue(const Json& pod, std::string_view path) {
  const Json& meta = MemberOrNull(pod, "metadata");
  auto bracket = [&](std::string_view prefix, const Json& map) -> std::optional<std::string> {
    if (path.substr(0, prefix.size()) != prefix) return std::nullopt;
    std::string_view rest = path.substr(prefix.size());
    if (rest.size() < 4 || rest.front() != '[' || rest.back() != ']') return std::string();
    rest = rest.substr(1, rest.size() - 2);
    if (!rest.empty() && (rest.front() == '\'' || rest.front() == '"')) rest = rest.substr(1);
    if (!rest.empty() && (rest.back() == '\'' || rest.back() == '"')) rest.remove_suffix(1);
    return GetString(map, rest);
  };
  if (auto v = bracket("metadata.labels", MemberOrNull(meta, "labels"))) return *v;
  if (auto v = bracket("metadata.annotations", MemberOrNull(meta, "annotations"))) return *v;
  const Json* v = FindPath(pod, path);
  if (v == nullptr) return "";
  if (v->is_string()) return v->get<std::string>();
  if (v->is_null()) return "";
  return v->dump();
}

// Expands $(VAR) references to variables defined earlier; $$ escapes a '$' (the kubelet's
// expansion rules; unknown references are kept as written).
std::string ExpandVars(std::string_view value,
                       const std::vector<std::pair<std::string, std::string>>& defined) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '$' || i + 1 >= value.size()) {
      out.push_back(value[i]);
      continue;
    }
    if (value[i + 1] == '$') {
      out.push_back('$');
      ++i;
      continue;
    }
    if (value[i + 1] == '(') {
      size_t close = value.find(')', i + 2);
      if (close != std::string_view::npos) {
        std::string_view name = value.substr(i + 2, close - i - 2);
        auto it = std::find_if(defined.rbegin(), defined.rend(),
                               [&](const auto& kv) { return kv.first == name; });
        if (it != defined.rend()) {
          out += it->second;
        } else {
          out.append(value.substr(i, close - i + 1));
        }
        i = close;
        continue;
      }
    }
    out.push_back(value[i]);
  }
  return out;
}

void SetEnv(std::vector<std::pair<std::string, std::string>>& env, std::string name,
            std::string value) {
  for (auto& kv : env) {
    if (kv.first == name) {
      kv.second = std::move(value);
      return;
    }
  }
  env.emplace_back(std::move(name), std::move(value));
}

// Lenient: padding and whitespace are skipped.
std::string Base64Decode(std::string_view in) {
  static const auto kTable = [] {
    std::array<int, 256> t{};
    t.fill(-1);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(alphabet[i])] = i;
    return t;
  }();
  std::string out;
  out.reserve(in.size() * 3 / 4);
  int bits = 0;
  int value = 0;
  for (char c : in) {
    int d = kTable[static_cast<unsigned char>(c)];
    if (d < 0) continue;  // padding and whitespace
    value = (value << 6) | d;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((value >> bits) & 0xff));
    }
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ResolveContainerEnv(Storage& storage,
                                                                     const Json& pod,
                                                                     const Json& container) {
  std::vector<std::pair<std::string, std::string>> env;
  const std::string ns = GetString(MemberOrNull(pod, "metadata"), "namespace");
  auto lookup_map = [&](std::string_view resource, const std::string& name) -> std::optional<Json> {
    auto rec = storage.Get(resource, ns, name);
    if (!rec) return std::nullopt;
    return rec->Parse();
  };
  // Secret values are base64 in `data`; stringData is accepted too in case a writer kept it.
  auto map_values = [](std::string_view resource, const Json& obj) {
    std::vector<std::pair<std::string, std::string>> out;
    bool secret = resource == "secrets";
    for (const char* field : {"data", "stringData"}) {
      const Json& m = MemberOrNull(obj, field);
      if (!m.is_object()) continue;
      bool decode = secret && std::string_view(field) == "data";
      for (auto it = m.begin(); it != m.end(); ++it) {
        if (!it->is_string()) continue;
        std::string v = it->get<std::string>();
        out.emplace_back(it.key(), decode ? Base64Decode(v) : v);
      }
    }
    return out;
  };

  // envFrom first: explicit env entries override it (kubelet order).
  for (const Json& from : ArrayMemberOrEmpty(container, "envFrom")) {
    std::string prefix = GetString(from, "prefix");
    std::string_view resource;
    const Json* ref = nullptr;
    if (MemberOrNull(from, "secretRef").is_object()) {
      resource = "secrets";
      ref = &MemberOrNull(from, "secretRef");
    } else if (MemberOrNull(from, "configMapRef").is_object()) {
      resource = "configmaps";
      ref = &MemberOrNull(from, "configMapRef");
    } else {
      continue;
    }
    auto obj = lookup_map(resource, GetString(*ref, "name"));
    if (!obj) continue;
    for (auto& [k, v] : map_values(resource, *obj)) SetEnv(env, prefix + k, std::move(v));
  }

  for (const Json& e : ArrayMemberOrEmpty(container, "env")) {
    std::string name = GetString(e, "name");
    if (name.empty()) continue;
    const Json& value_from = MemberOrNull(e, "valueFrom");
    if (!value_from.is_object()) {
      SetEnv(env, name, ExpandVars(GetString(e, "value"), env));
      continue;
    }
    std::optional<std::string> value;
    auto from_map = [&](std::string_view resource, const Json& ref) {
      auto obj = lookup_map(resource, GetString(ref, "name"));
      if (!obj) return;
      std::string key = GetString(ref, "key");
      for (auto& [k, v] : map_values(resource, *obj)) {
        if (k == key) value = std::move(v);
      }
    };
    if (MemberOrNull(value_from, "secretKeyRef").is_object()) {
      from_map("secrets", MemberOrNull(value_from, "secretKeyRef"));
    } else if (MemberOrNull(value_from, "configMapKeyRef").is_object()) {
      from_map("configmaps", MemberOrNull(value_from, "configMapKeyRef"));
    } else if (MemberOrNull(value_from, "fieldRef").is_object()) {
      value = FieldRefValue(pod, GetString(MemberOrNull(value_from, "fieldRef"), "fieldPath"));
    }
    // A missing non-optional reference would keep a real container from starting
    // (CreateContainerConfigError); the virtual process just goes without the variable.
    if (value) SetEnv(env, name, std::move(*value));
  }
  return env;
}

}  // namespace steward::cluster::controllers
