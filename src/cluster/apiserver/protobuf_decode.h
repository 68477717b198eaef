// Decoding of Kubernetes protobuf request bodies (Content-Type
// application/vnd.kubernetes.protobuf), which client-go's typed clients send — kubectl's
// `create configmap|secret|namespace|deployment|service|ingress ...` among them — into the JSON
// form the rest of the cluster works with. Responses stay JSON.
//
// Wire format: the 4-byte magic "k8s\0", then a runtime.Unknown message {typeMeta{apiVersion,
// kind}, raw, contentEncoding, contentType} whose `raw` is the object's gogo-protobuf message
// (k8s.io/api generated.proto). Field numbers and types come from kube/schema/kube_types.h.
//
// The JSON is what encoding/json would produce from the decoded Go object: value fields (not
// pointers) that hold their zero value are omitted (omitempty), pointer fields are kept even
// when zero (`replicas: 0`, `emptyDir: {}`), nested value structs are kept even when empty
// (`resources: {}`, `status: {}`), an unset Time is omitted, bytes are base64, Quantity is its
// string, IntOrString a number or a string, Time/MicroTime RFC 3339. Unknown field numbers are
// skipped, as protobuf decoders do.
//
// All functions are pure and thread-safe.
#pragma once

#include <string_view>

#include "common/json.h"
#include "common/status.h"
#include "kube/schema/kube_types.h"

namespace steward::cluster {

inline constexpr std::string_view kProtobufMediaType = "application/vnd.kubernetes.protobuf";

// Decodes a whole request body (magic + runtime.Unknown envelope); the result carries the
// envelope's apiVersion and kind. Fails with kInvalidArgument on a malformed body, a non-empty
// contentEncoding, or a kind kube_types.h does not know.
StatusOr<Json> DecodeKubernetesProtobuf(std::string_view body);

// Decodes the bytes of one message (no envelope) of the given type into JSON.
StatusOr<Json> DecodeProtobufMessage(const kube::schema::Message& message, std::string_view bytes);

}  // namespace steward::cluster
