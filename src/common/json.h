// JSON helpers over nlohmann::json. Parsing never throws: it returns a StatusOr.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace steward {

using Json = nlohmann::json;

// Parses `text` as one JSON document. Fails with kInvalidArgument naming the byte offset.
StatusOr<Json> ParseJson(std::string_view text);

// Compact serialisation; invalid UTF-8 is replaced rather than thrown on.
std::string DumpJson(const Json& j);

// Returns the string at `obj[key]` or `fallback` when absent or not a string.
std::string GetString(const Json& obj, std::string_view key, std::string_view fallback = "");

// Follows a dotted path ("metadata.labels") through objects; nullptr when any step is absent.
const Json* FindPath(const Json& obj, std::string_view dotted_path);

}  // namespace steward
