// Internal to the model module: field readers and value rules shared by the spec, config and
// status parsers. Every error is kInvalidArgument "<path>: <what is wrong>". Stateless.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "engine/model/project.h"

namespace steward::engine::internal {

// Path building: Join("spec", "stack") = "spec.stack" (just "stack" for an empty parent),
// KeyPath("spec.labels", "a/b") = spec.labels["a/b"], IndexPath("x", 2) = "x[2]".
std::string Join(std::string_view path, std::string_view field);
std::string KeyPath(std::string_view path, std::string_view key);
std::string IndexPath(std::string_view path, size_t index);
Status Invalid(std::string_view path, std::string_view what);
// "string", "integer", "number" (non-integer), "boolean", "object", "array", "null".
std::string_view TypeName(const Json& j);

// A JSON integer in [lo, hi]; floats and numeric strings are refused.
StatusOr<int64_t> AsInt(const Json& v, std::string_view path, int64_t lo, int64_t hi);
StatusOr<std::string> AsString(const Json& v, std::string_view path);
StatusOr<bool> AsBool(const Json& v, std::string_view path);
// An object whose values are all strings.
StatusOr<StringMap> AsStringMap(const Json& v, std::string_view path);

// Reads the fields of one JSON object. `j` must outlive the reader. A null `j` reads as an
// empty object (an optional section left empty).
class Fields {
 public:
  static StatusOr<Fields> Of(const Json& j, std::string path);

  // kInvalidArgument "<path>.<name>: unknown field" for the first key not in `known`.
  Status OnlyKnown(std::initializer_list<std::string_view> known) const;
  // The field's value, or nullptr when absent or null.
  const Json* Find(std::string_view name) const;
  std::string PathOf(std::string_view name) const { return Join(path_, name); }
  const std::string& path() const { return path_; }

  // Each leaves *out unchanged when the field is absent.
  Status String(std::string_view name, std::string* out) const;
  Status Bool(std::string_view name, bool* out) const;
  Status Int(std::string_view name, int64_t lo, int64_t hi, int* out) const;
  Status Map(std::string_view name, StringMap* out) const;
  Status Object(std::string_view name, std::optional<Json>* out) const;
  Status ObjectArray(std::string_view name, std::optional<Json>* out) const;
  // An array of DNS-1123 subdomain names.
  Status NameList(std::string_view name, std::optional<std::vector<std::string>>* out) const;

 private:
  Fields(const Json* obj, std::string path) : obj_(obj), path_(std::move(path)) {}
  const Json* obj_;  // nullptr for a null section
  std::string path_;
};

// Value rules.
Status CheckSubdomain(std::string_view s, std::string_view path, bool allow_empty);
Status CheckImage(std::string_view ref, std::string_view path);
Status CheckQuantity(std::string_view q, std::string_view path);
// A Kubernetes object the spec or config passes through to a manifest, checked against the Go
// type `type` of kube/schema ("core.PodSecurityContext"): unknown fields and wrong value types
// are refused (a cluster would prune or refuse them). CheckKubeArray: an array of them.
Status CheckKubeObject(const Json& v, std::string_view type, std::string_view path);
Status CheckKubeArray(const Json& v, std::string_view type, std::string_view path);
Status CheckEnv(const StringMap& env, std::string_view path);
// Label keys (qualified names) and values; reserved prefixes refused when `refuse_reserved`.
Status CheckLabels(const StringMap& labels, std::string_view path, bool refuse_reserved);
// Annotation keys (qualified names, reserved prefixes refused), total size <= 256 KiB.
Status CheckAnnotations(const StringMap& annotations, std::string_view path);
Status CheckHttpUrl(std::string_view url, std::string_view path);
Status CheckHostPort(std::string_view address, std::string_view path);

// Shared sections. Fields absent from the JSON keep *out's current values.
Status ParseStack(const Json& j, std::string path, Stack* out);
// `size_required`: the spec's storage needs a size; the config's has a default.
Status ParseStorage(const Json& j, std::string path, bool size_required, StorageSpec* out);
Status ParseProbes(const Json& j, std::string path, std::optional<Json>* liveness,
                   std::optional<Json>* readiness, std::optional<Json>* startup);

}  // namespace steward::engine::internal
