// Null-safe readers of JSON members, beside GetString and FindPath (common/json.h): none throws,
// whatever the value read from is (an object, an array, a scalar, null). Pure and thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/json.h"

namespace steward {

// The member `key` of `obj`; nullptr when `obj` is not an object or has no such member. A member
// whose value is null is returned (as a pointer to that null).
const Json* Member(const Json& obj, std::string_view key);

// The member `key` of `obj`, or a reference to a static null when Member would give nullptr.
const Json& MemberOrNull(const Json& obj, std::string_view key);

// The member `key` of `obj` when it is an array, else a reference to a static empty array: for
// iterating a list field that may be absent or malformed.
const Json& ArrayMemberOrEmpty(const Json& obj, std::string_view key);

// Returns the integer at `obj[key]` or `fallback` when `obj` is not an object, or the member is
// absent or not an integer (2.0 is not an integer). An unsigned value over INT64_MAX wraps.
int64_t GetInt(const Json& obj, std::string_view key, int64_t fallback = 0);

// FindPath, or a reference to a static null when it would give nullptr.
const Json& PathOrNull(const Json& obj, std::string_view dotted_path);

// The string at a dotted path, or "" when a step is absent or the value is not a string.
std::string StringAtPath(const Json& obj, std::string_view dotted_path);

// The number at a dotted path as an integer (a float truncated toward zero, as Go's int64()
// of a float64), or `fallback` when a step is absent or the value is not a number.
int64_t NumberAtPath(const Json& obj, std::string_view dotted_path, int64_t fallback = 0);

// A Kubernetes object's metadata.labels[key] / metadata.annotations[key] as a string; "" when
// absent or not a string. The key is taken whole (label keys hold dots and slashes).
std::string LabelOf(const Json& obj, std::string_view key);
std::string AnnotationOf(const Json& obj, std::string_view key);

// Go's zero value, which `omitempty` leaves out of what a server returns: null, "", false, 0,
// {} and [].
bool IsGoZeroValue(const Json& j);

}  // namespace steward
