#include "common/fields.h"

#include <limits>
#include <utility>

namespace steward {

const FieldStyle FieldStyle::kJson{"an object", "objects", "unknown field", "", false, true};
const FieldStyle FieldStyle::kConfig{"a mapping", "mappings", "unknown key", "config", true, false};

std::string FieldStyle::Got(const Json& v) const {
  std::string what =
      float_shows_value && v.is_number_float() ? v.dump() : std::string(JsonTypeName(v));
  return parenthesised ? " (got " + what + ")" : ", got " + what;
}

std::string QuoteShort(std::string_view s) {
  constexpr size_t kMax = 80;
  std::string out = "\"";
  out += s.substr(0, kMax);
  if (s.size() > kMax) out += "...";
  out += "\"";
  return out;
}

bool IsPathIdentifier(std::string_view key) {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (key.empty() || !alpha(key[0])) return false;
  for (char c : key) {
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

std::string JoinPath(std::string_view path, std::string_view field) {
  if (path.empty()) return std::string(field);
  std::string out(path);
  out += '.';
  out += field;
  return out;
}

std::string KeyPath(std::string_view path, std::string_view key) {
  return std::string(path) + "[" + QuoteShort(key) + "]";
}

std::string ChildPath(std::string_view path, std::string_view key) {
  return IsPathIdentifier(key) ? JoinPath(path, key) : KeyPath(path, key);
}

std::string IndexPath(std::string_view path, size_t index) {
  return std::string(path) + "[" + std::to_string(index) + "]";
}

Status InvalidField(std::string_view path, std::string_view what) {
  std::string m(path);
  if (!m.empty()) m += ": ";
  m += what;
  return InvalidArgument(std::move(m)).WithField(std::string(path));
}

std::string_view JsonTypeName(const Json& j) {
  switch (j.type()) {
    case Json::value_t::string:
      return "string";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    case Json::value_t::object:
      return "object";
    case Json::value_t::array:
      return "array";
    case Json::value_t::null:
      return "null";
    default:
      return "binary";
  }
}

StatusOr<std::string> ReadString(const Json& v, std::string_view path, const FieldStyle& style) {
  if (!v.is_string()) return InvalidField(path, "must be a string" + style.Got(v));
  return v.get<std::string>();
}

StatusOr<bool> ReadBool(const Json& v, std::string_view path, const FieldStyle& style) {
  if (!v.is_boolean()) return InvalidField(path, "must be a boolean" + style.Got(v));
  return v.get<bool>();
}

StatusOr<int64_t> ReadInt(const Json& v, std::string_view path, int64_t lo, int64_t hi,
                          const FieldStyle& style) {
  auto out_of_range = [&](const std::string& got) {
    return InvalidField(path, "must be between " + std::to_string(lo) + " and " +
                                  std::to_string(hi) + " (got " + got + ")");
  };
  if (!v.is_number_integer()) return InvalidField(path, "must be an integer" + style.Got(v));
  // Unsigned values above int64 would wrap: compare them as they are.
  if (v.is_number_unsigned() &&
      v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return out_of_range(v.dump());
  }
  const int64_t n = v.get<int64_t>();
  if (n < lo || n > hi) return out_of_range(std::to_string(n));
  return n;
}

StatusOr<std::map<std::string, std::string>> ReadStringMap(const Json& v, std::string_view path,
                                                           const FieldStyle& style) {
  if (!v.is_object())
    return InvalidField(path, "must be " + std::string(style.object) + style.Got(v));
  std::map<std::string, std::string> out;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!it.value().is_string()) {
      return InvalidField(KeyPath(path, it.key()), "must be a string" + style.Got(it.value()));
    }
    out.emplace(it.key(), it.value().get<std::string>());
  }
  return out;
}

StatusOr<FieldReader> FieldReader::Of(const Json* j, std::string path, const FieldStyle& style) {
  if (j == nullptr || j->is_null()) return FieldReader(nullptr, std::move(path), &style);
  if (!j->is_object()) {
    return InvalidField(path.empty() ? style.root : path,
                        "must be " + std::string(style.object) + style.Got(*j));
  }
  return FieldReader(j, std::move(path), &style);
}

Status FieldReader::OnlyKnown(std::initializer_list<std::string_view> known) const {
  if (obj_ == nullptr) return Status::Ok();
  for (auto it = obj_->begin(); it != obj_->end(); ++it) {
    bool found = false;
    for (std::string_view k : known) found = found || k == it.key();
    if (found) continue;
    // A key that is not an identifier ("x: y", "a.b", 10 KB of text) is quoted and cut short,
    // so the path stays one field and the message stays small.
    return InvalidField(ChildPath(path_, it.key()), style_->unknown);
  }
  return Status::Ok();
}

const Json* FieldReader::Find(std::string_view name) const {
  if (obj_ == nullptr) return nullptr;
  auto it = obj_->find(name);
  if (it == obj_->end() || it->is_null()) return nullptr;
  return &*it;
}

Status FieldReader::Required(std::string_view name) const {
  return Find(name) == nullptr ? InvalidField(PathOf(name), "is required") : Status::Ok();
}

Status FieldReader::String(std::string_view name, std::string* out) const {
  const Json* v = Find(name);
  if (v == nullptr) return Status::Ok();
  ASSIGN_OR_RETURN(*out, ReadString(*v, PathOf(name), *style_));
  return Status::Ok();
}

Status FieldReader::NonEmptyString(std::string_view name, std::string* out) const {
  RETURN_IF_ERROR(String(name, out));
  if (out->empty()) return InvalidField(PathOf(name), "must not be empty");
  return Status::Ok();
}

Status FieldReader::OneOf(std::string_view name, std::initializer_list<std::string_view> allowed,
                          std::string* out) const {
  RETURN_IF_ERROR(String(name, out));
  std::string list;
  for (std::string_view a : allowed) {
    if (*out == a) return Status::Ok();
    list += list.empty() ? "" : ", ";
    list += a;
  }
  return InvalidField(PathOf(name), "must be one of " + list + " (got " + QuoteShort(*out) + ")");
}

Status FieldReader::Bool(std::string_view name, bool* out) const {
  const Json* v = Find(name);
  if (v == nullptr) return Status::Ok();
  ASSIGN_OR_RETURN(*out, ReadBool(*v, PathOf(name), *style_));
  return Status::Ok();
}

Status FieldReader::Int(std::string_view name, int64_t lo, int64_t hi, int64_t* out) const {
  const Json* v = Find(name);
  if (v == nullptr) return Status::Ok();
  ASSIGN_OR_RETURN(*out, ReadInt(*v, PathOf(name), lo, hi, *style_));
  return Status::Ok();
}

Status FieldReader::Int(std::string_view name, int64_t lo, int64_t hi, int* out) const {
  int64_t n = *out;
  RETURN_IF_ERROR(Int(name, lo, hi, &n));
  *out = static_cast<int>(n);
  return Status::Ok();
}

Status FieldReader::StringMap(std::string_view name,
                              std::map<std::string, std::string>* out) const {
  const Json* v = Find(name);
  if (v == nullptr) return Status::Ok();
  ASSIGN_OR_RETURN(*out, ReadStringMap(*v, PathOf(name), *style_));
  return Status::Ok();
}

Status FieldReader::Object(std::string_view name, const Json** out) const {
  const Json* v = Find(name);
  if (v != nullptr && !v->is_object()) {
    return InvalidField(PathOf(name), "must be " + std::string(style_->object) + style_->Got(*v));
  }
  *out = v;
  return Status::Ok();
}

Status FieldReader::Object(std::string_view name, std::optional<Json>* out) const {
  const Json* v = nullptr;
  RETURN_IF_ERROR(Object(name, &v));
  if (v != nullptr) *out = *v;
  return Status::Ok();
}

Status FieldReader::ObjectArray(std::string_view name, std::optional<Json>* out) const {
  const Json* v = Find(name);
  if (v == nullptr) return Status::Ok();
  const std::string path = PathOf(name);
  if (!v->is_array()) {
    return InvalidField(path,
                        "must be an array of " + std::string(style_->objects) + style_->Got(*v));
  }
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_object()) {
      return InvalidField(IndexPath(path, i),
                          "must be " + std::string(style_->object) + style_->Got((*v)[i]));
    }
  }
  *out = *v;
  return Status::Ok();
}

}  // namespace steward
