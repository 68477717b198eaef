// The field layout of the Kubernetes v1.32 API types Steward works with: for every message
// reachable from the kinds the embedded cluster serves (plus autoscaling/v1 Scale and meta/v1
// DeleteOptions), each field's protobuf number, JSON name, value type, and whether the Go field
// is a pointer. A leaf library (common only): the one source of truth for the schema, shared by
// the embedded cluster and the engine, which must not depend on each other.
//
// The table is generated (tools/gen_kube_types.py) from the protobuf descriptors compiled into
// kubectl v1.32, so it is complete for those messages: unlike the hand-written OpenAPI schemas
// it leaves no field out. Users: the cluster's protobuf request decoder (wire numbers to JSON)
// and server-side field validation (which JSON keys a Go struct would know), and the engine's
// spec validation (schema_check.h: which fields and value types a Go struct would accept).
//
// Everything is built once on first use and immutable afterwards: safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace steward::kube::schema {

enum class ValueKind {
  kString,
  kBytes,  // base64 in JSON
  kBool,
  kInt32,
  kInt64,
  kUint32,
  kDouble,
  kMessage,
  // Types with a custom JSON form (no JSON fields of their own):
  kTime,          // meta/v1 Time: RFC 3339, seconds
  kMicroTime,     // meta/v1 MicroTime: RFC 3339, microseconds
  kQuantity,      // resource.Quantity: a string ("100m")
  kIntOrString,   // a number or a string
  kRawExtension,  // any embedded JSON
  kFieldsV1,      // any JSON object
};

struct Message;

struct Field {
  int number = 0;
  // The JSON name. For an inline field (Go `json:",inline"`) the proto name; its message's
  // fields appear in the parent's JSON object.
  std::string name;
  ValueKind kind = ValueKind::kString;
  const Message* message = nullptr;  // kMessage only
  bool repeated = false;
  bool map = false;      // map<string, kind>: a JSON object with any keys
  bool pointer = false;  // a Go pointer: a zero value is meaningful (omitempty does not drop it)
  bool inlined = false;
};

struct Message {
  std::string name;  // "apps.Deployment", "core.PodSpec", "meta.ObjectMeta"
  std::vector<Field> fields;

  const Field* ByNumber(int number) const;
  // The field a JSON key names, looking through inline fields; nullptr when unknown.
  const Field* ByJsonName(std::string_view json_name) const;
};

// Lookup by table name ("core.Pod"); nullptr when absent.
const Message* FindMessage(std::string_view name);
// The message of a kind by apiVersion and kind ("apps/v1", "Deployment"); nullptr when absent.
const Message* MessageForKind(std::string_view api_version, std::string_view kind);
// Every message, in name order.
std::vector<const Message*> AllMessages();

}  // namespace steward::kube::schema
