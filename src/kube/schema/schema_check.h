// Checks a JSON value against a Kubernetes Go type (kube_types.h) the way the API server's
// decoding would: a key the struct does not have is an unknown field (what a strict server
// refuses and a lenient one silently drops), and a value of the wrong JSON type is what
// encoding/json refuses ("cannot unmarshal string into ... of type int32"). Used by the engine
// to refuse a spec before it is stored, rather than let the cluster prune it.
//
// Rules per value kind: string/bytes/Time/MicroTime: a JSON string; bool: a boolean;
// int32/int64/uint32: a JSON integer in range (1.5 and "2" are refused, 2.0 too: the engine's
// parser keeps integers and floats apart); double: any number; Quantity: a string or a number;
// IntOrString: an integer or a string; RawExtension: anything; FieldsV1: an object; a message:
// an object whose keys are its JSON fields (inline fields seen through); a repeated field: an
// array; a map: an object with any keys. null is accepted anywhere (it decodes to the zero value).
//
// Paths are the caller's prefix, then `.field`, `[index]` and, for map keys, `["key"]`; a
// non-identifier unknown key is written `["key"]` too; quoted keys are cut at 80 characters.
// Pure and thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/json.h"
#include "kube/schema/kube_types.h"

namespace steward::kube::schema {

struct Mismatch {
  std::string path;  // "spec.podSecurityContext.a"
  std::string what;  // "unknown field", "must be an integer (int64), got string"
};

// The first mismatch of `value` against `message`, in document (key) order; nullopt when it
// fits. `path` names `value` itself.
std::optional<Mismatch> CheckValue(const Message& message, const Json& value, std::string path);
// As above for an array whose elements are `message`s (a repeated field such as tolerations).
std::optional<Mismatch> CheckArray(const Message& message, const Json& value, std::string path);

}  // namespace steward::kube::schema
