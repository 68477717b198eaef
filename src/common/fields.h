// Reading the fields of JSON documents (request bodies, the project spec, the config file) with
// errors that name the field: one reader for every module that validates input.
//
// Every error is kInvalidArgument with the message "<path>: <what is wrong>" and the path as
// data (Status::field()), so that an answer's "field" never has to be read back out of message
// text. Paths: "spec.stack.memory", "spec.labels[\"a/b\"]", "spec.tolerations[2].key"; "" is
// the document itself.
//
// Two wordings exist, because two kinds of document are read and their tests and users know
// them: FieldStyle::kJson ("unknown field", "must be an object, got array") for API bodies and
// the spec; FieldStyle::kConfig ("unknown key", "must be a mapping (got array)") for the YAML
// config file. Stateless; a FieldReader is a view that must not outlive its JSON.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/json.h"
#include "common/status.h"

namespace steward {

// Path building: JoinPath("spec", "stack") = "spec.stack" (just "stack" for an empty parent),
// KeyPath("spec.labels", "a/b") = spec.labels["a/b"], IndexPath("x", 2) = "x[2]". A key that is
// not an identifier goes in quotes, cut at 80 characters (QuoteShort), so a hostile key cannot
// bloat a message.
std::string JoinPath(std::string_view path, std::string_view field);
std::string KeyPath(std::string_view path, std::string_view key);
std::string IndexPath(std::string_view path, size_t index);
// `s` in double quotes, cut at 80 characters ("..." marks the cut).
std::string QuoteShort(std::string_view s);
// True for [A-Za-z_][A-Za-z0-9_]*: keys that can follow a '.' in a path.
bool IsPathIdentifier(std::string_view key);
// The path of an object's member: JoinPath for an identifier, KeyPath for any other key.
std::string ChildPath(std::string_view path, std::string_view key);

// kInvalidArgument "<path>: <what>" ("<what>" alone for an empty path), field() = path.
Status InvalidField(std::string_view path, std::string_view what);

// "string", "integer", "number" (not an integer), "boolean", "object", "array", "null".
std::string_view JsonTypeName(const Json& j);

struct FieldStyle {
  std::string_view object;         // "an object" | "a mapping"
  std::string_view objects;        // "objects" | "mappings"
  std::string_view unknown;        // "unknown field" | "unknown key"
  std::string_view root;           // the path named when the document itself is wrong
  bool parenthesised = false;      // "must be a string (got integer)" vs ", got integer"
  bool float_shows_value = false;  // an integer expected, 2.5 given: "got 2.5" vs "got number"

  static const FieldStyle kJson;    // API bodies, the project spec, the engine config section
  static const FieldStyle kConfig;  // the serve config file's own keys

  // " (got X)" or ", got X" for the value `v` (its type; a float's value when so styled).
  std::string Got(const Json& v) const;
};

// Value readers: the value at `path`, or the error naming it.
StatusOr<std::string> ReadString(const Json& v, std::string_view path,
                                 const FieldStyle& style = FieldStyle::kJson);
StatusOr<bool> ReadBool(const Json& v, std::string_view path,
                        const FieldStyle& style = FieldStyle::kJson);
// A JSON integer in [lo, hi]; floats and numeric strings are refused.
StatusOr<int64_t> ReadInt(const Json& v, std::string_view path, int64_t lo, int64_t hi,
                          const FieldStyle& style = FieldStyle::kJson);
// An object whose values are all strings.
StatusOr<std::map<std::string, std::string>> ReadStringMap(
    const Json& v, std::string_view path, const FieldStyle& style = FieldStyle::kJson);

// The fields of one JSON object. A null (or absent: nullptr) object reads as an empty one, an
// optional section left empty. Each reader leaves *out unchanged when the field is absent or
// null.
class FieldReader {
 public:
  static StatusOr<FieldReader> Of(const Json* j, std::string path,
                                  const FieldStyle& style = FieldStyle::kJson);
  static StatusOr<FieldReader> Of(const Json& j, std::string path,
                                  const FieldStyle& style = FieldStyle::kJson) {
    return Of(&j, std::move(path), style);
  }

  // "<path>.<key>: unknown field" for the first key not in `known`.
  Status OnlyKnown(std::initializer_list<std::string_view> known) const;
  // The field's value, or nullptr when absent or null.
  const Json* Find(std::string_view name) const;
  std::string PathOf(std::string_view name) const { return JoinPath(path_, name); }
  const std::string& path() const { return path_; }
  const FieldStyle& style() const { return *style_; }

  Status String(std::string_view name, std::string* out) const;
  // Also refuses "" ("must not be empty").
  Status NonEmptyString(std::string_view name, std::string* out) const;
  // A string among `allowed`: "must be one of a, b (got \"c\")".
  Status OneOf(std::string_view name, std::initializer_list<std::string_view> allowed,
               std::string* out) const;
  Status Bool(std::string_view name, bool* out) const;
  Status Int(std::string_view name, int64_t lo, int64_t hi, int64_t* out) const;
  Status Int(std::string_view name, int64_t lo, int64_t hi, int* out) const;
  Status StringMap(std::string_view name, std::map<std::string, std::string>* out) const;
  Status Object(std::string_view name, std::optional<Json>* out) const;
  // As above without a copy: *out points into the document (nullptr when absent or null).
  Status Object(std::string_view name, const Json** out) const;
  // An array whose items are all objects.
  Status ObjectArray(std::string_view name, std::optional<Json>* out) const;
  // "<path>.<name>: is required" unless the field is present and not null.
  Status Required(std::string_view name) const;

 private:
  FieldReader(const Json* obj, std::string path, const FieldStyle* style)
      : obj_(obj), path_(std::move(path)), style_(style) {}
  const Json* obj_;  // nullptr for a null or absent section
  std::string path_;
  const FieldStyle* style_;
};

}  // namespace steward
