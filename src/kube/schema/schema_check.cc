#include "kube/schema/schema_check.h"

#include <cstdint>
#include <limits>

#include "common/fields.h"

namespace steward::kube::schema {
namespace {

std::optional<Mismatch> Wrong(std::string path, std::string_view expected, const Json& got) {
  return Mismatch{std::move(path),
                  "must be " + std::string(expected) + ", got " + std::string(JsonTypeName(got))};
}

std::optional<Mismatch> CheckInteger(const Json& v, std::string path, std::string_view type,
                                     int64_t lo, int64_t hi) {
  const std::string expected = "an integer (" + std::string(type) + ")";
  if (!v.is_number_integer()) return Wrong(std::move(path), expected, v);
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi)) {
    return Mismatch{std::move(path), "is out of range for " + std::string(type)};
  }
  if (!v.is_number_unsigned()) {
    int64_t n = v.get<int64_t>();
    if (n < lo || n > hi)
      return Mismatch{std::move(path), "is out of range for " + std::string(type)};
  }
  return std::nullopt;
}

std::optional<Mismatch> CheckMessage(const Message& m, const Json& v, const std::string& path);

// One value of a field's element kind (not repeated, not a map).
std::optional<Mismatch> CheckElement(const Field& f, const Json& v, std::string path) {
  if (v.is_null()) return std::nullopt;
  switch (f.kind) {
    case ValueKind::kString:
    case ValueKind::kBytes:
    case ValueKind::kTime:
    case ValueKind::kMicroTime:
      if (!v.is_string()) return Wrong(std::move(path), "a string", v);
      return std::nullopt;
    case ValueKind::kBool:
      if (!v.is_boolean()) return Wrong(std::move(path), "a boolean", v);
      return std::nullopt;
    case ValueKind::kInt32:
      return CheckInteger(v, std::move(path), "int32", std::numeric_limits<int32_t>::min(),
                          std::numeric_limits<int32_t>::max());
    case ValueKind::kInt64:
      return CheckInteger(v, std::move(path), "int64", std::numeric_limits<int64_t>::min(),
                          std::numeric_limits<int64_t>::max());
    case ValueKind::kUint32:
      return CheckInteger(v, std::move(path), "uint32", 0, std::numeric_limits<uint32_t>::max());
    case ValueKind::kDouble:
      if (!v.is_number()) return Wrong(std::move(path), "a number", v);
      return std::nullopt;
    case ValueKind::kQuantity:
      if (!v.is_string() && !v.is_number()) {
        return Wrong(std::move(path), "a quantity (a string such as \"100m\" or a number)", v);
      }
      return std::nullopt;
    case ValueKind::kIntOrString:
      if (!v.is_string() && !v.is_number_integer()) {
        return Wrong(std::move(path), "an integer or a string", v);
      }
      return std::nullopt;
    case ValueKind::kRawExtension:
      return std::nullopt;
    case ValueKind::kFieldsV1:
      if (!v.is_object()) return Wrong(std::move(path), "an object", v);
      return std::nullopt;
    case ValueKind::kMessage:
      return CheckMessage(*f.message, v, path);
  }
  return std::nullopt;
}

std::optional<Mismatch> CheckField(const Field& f, const Json& v, const std::string& path) {
  if (v.is_null()) return std::nullopt;
  if (f.repeated) {
    if (!v.is_array()) return Wrong(path, "an array", v);
    for (size_t i = 0; i < v.size(); ++i) {
      if (auto m = CheckElement(f, v[i], IndexPath(path, i))) return m;
    }
    return std::nullopt;
  }
  if (f.map) {
    if (!v.is_object()) return Wrong(path, "an object", v);
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (auto m = CheckElement(f, it.value(), KeyPath(path, it.key()))) return m;
    }
    return std::nullopt;
  }
  return CheckElement(f, v, path);
}

std::optional<Mismatch> CheckMessage(const Message& m, const Json& v, const std::string& path) {
  if (v.is_null()) return std::nullopt;
  if (!v.is_object()) return Wrong(path, "an object", v);
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string& key = it.key();
    std::string child = ChildPath(path, key);
    const Field* f = m.ByJsonName(key);
    if (f == nullptr) return Mismatch{std::move(child), "unknown field"};
    if (auto problem = CheckField(*f, it.value(), child)) return problem;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Mismatch> CheckValue(const Message& message, const Json& value, std::string path) {
  return CheckMessage(message, value, path);
}

std::optional<Mismatch> CheckArray(const Message& message, const Json& value, std::string path) {
  if (value.is_null()) return std::nullopt;
  if (!value.is_array()) return Wrong(std::move(path), "an array", value);
  for (size_t i = 0; i < value.size(); ++i) {
    if (auto m = CheckMessage(message, value[i], IndexPath(path, i))) return m;
  }
  return std::nullopt;
}

}  // namespace steward::kube::schema
