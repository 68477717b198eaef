// JSON helpers over nlohmann::json. Parsing never throws: it returns a StatusOr.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace steward {

using Json = nlohmann::json;

// The deepest nesting Steward accepts in any JSON or YAML document it parses (ParseJson,
// ParseYaml): the number of arrays and objects open at once, so "[[1]]" is 2 deep. A document
// exactly this deep is accepted, one level more is refused, naming the limit. Kubernetes allows
// 10000 (Go's encoding/json, go-yaml's flow and indent levels), which Steward cannot: yaml-cpp
// 0.7 (Debian bookworm) stops at 498 levels itself, and one limit must hold for JSON and YAML
// alike. 256 leaves yaml-cpp headroom, keeps every recursive operation on a parsed document
// (dump, copy, operator==, the validators, the embedded cluster's field validation and patches)
// far inside an 8 MiB thread stack even under AddressSanitizer, and is still ten times deeper
// than any Kubernetes object or Steward request nests. See docs/api.md, "Input limits".
inline constexpr int kMaxNestingDepth = 256;

// What a parser does with a key that appears twice in one object (mapping).
enum class DuplicateKeys {
  kRefuse,    // the document is refused, naming the key's path: the default
  kLastWins,  // the last value wins, as Go's encoding/json and the Kubernetes API server do
};

struct ParseOptions {
  DuplicateKeys duplicate_keys = DuplicateKeys::kRefuse;
};

// Parses `text` as one JSON document. Fails with kInvalidArgument ("malformed JSON: ...") on a
// syntax error (naming the byte offset), on nesting deeper than kMaxNestingDepth (naming the
// limit) and, unless `options` say kLastWins, on a duplicate key, naming its path
// (`duplicate key "spec.team"`; array elements as `containers[0]`). Never recurses, so no input
// can exhaust the stack.
StatusOr<Json> ParseJson(std::string_view text, const ParseOptions& options = {});

// `message` (a parser's error) without nlohmann's "; last read: '...'", which quotes the text
// read so far: part of a string that broke half-way, perhaps a credential. ParseJson's errors
// name where the value goes and the line and column instead.
std::string WithoutTextRead(std::string_view message);

// Compact serialisation; invalid UTF-8 is replaced rather than thrown on.
std::string DumpJson(const Json& j);

// Returns the string at `obj[key]` or `fallback` when absent or not a string.
std::string GetString(const Json& obj, std::string_view key, std::string_view fallback = "");

// Follows a dotted path ("metadata.labels") through objects; nullptr when any step is absent.
const Json* FindPath(const Json& obj, std::string_view dotted_path);

}  // namespace steward
