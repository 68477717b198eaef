// Server-side field validation (`?fieldValidation=Strict|Warn|Ignore`), as the Kubernetes API
// server does it when it decodes a request body into its Go types:
//
//   - unknown fields: a JSON key the Go struct does not have ("spec.foo",
//     "spec.template.spec.containers[0].imagePullPolcy"); map-valued fields (labels, data,
//     nodeSelector, resources.limits, ...) accept any key; RawExtension/FieldsV1 values are not
//     looked into. Known fields come from kube/schema/kube_types.h (complete for the served kinds),
//     so a field real Kubernetes accepts is never reported.
//   - duplicate fields: a key given twice in one JSON object, maps included (needs the raw
//     text). A key both unknown and duplicated is reported once, as unknown.
//
// Messages and their order follow the API server (sigs.k8s.io/json strict decoding):
// create/update bodies report in document order; patches report the duplicates of the patch
// document first, then the unknown fields of the patched object (see CheckPatchFields).
//
// Strict fails the request (StrictDecodingError / StrictPatchError); Warn lets it through with
// one `Warning: 299 - "..."` header per problem; both Warn and Ignore drop the unknown fields
// before the object is stored, as decoding into Go structs does. An absent parameter means
// Warn (the default of v1.27+ servers). See docs/kubectl-compatibility.md.
//
// All functions are pure and thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cluster/apiserver/object_api.h"
#include "cluster/apiserver/patch.h"
#include "cluster/apiserver/status_error.h"
#include "cluster/model/resource_types.h"
#include "common/json.h"

namespace steward::cluster {

enum class FieldValidation { kIgnore, kWarn, kStrict };

// The directive of a `fieldValidation` query value ("" means Warn). Any other value is the 422 a
// real server answers: `CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported
// value: "x": supported values: "", "Ignore", "Strict", "Warn"`. `options_kind` names the
// options type of the verb: "CreateOptions", "UpdateOptions" or "PatchOptions".
ApiResult<FieldValidation> ParseFieldValidation(std::string_view value,
                                                std::string_view options_kind);

struct FieldProblems {
  std::vector<std::string> unknown;    // paths: "spec.foo", "metadata.labelz", "[0].foo"
  std::vector<std::string> duplicate;  // paths: "spec.paused"
  // Every problem worded as the API server does, in its order: `unknown field "spec.foo"`,
  // `duplicate field "spec.paused"`, `json patch unknown field "[0].foo"`.
  std::vector<std::string> messages;

  bool empty() const { return messages.empty(); }
  // `strict decoding error: unknown field "spec.foo", duplicate field "spec.paused"`.
  std::string StrictError() const;
};

// Unknown and duplicate fields of a create/update body of `rt` (or of autoscaling/v1 Scale when
// `sub` is kScale). `raw_body` is the request text: when it is JSON, problems are found in
// document order and duplicates are detected; otherwise (YAML) only unknown fields of `parsed`
// are reported, in sorted-key order.
FieldProblems CheckFields(const ResourceType& rt, std::string_view raw_body, const Json& parsed,
                          Subresource sub = Subresource::kNone);

// Problems of a PATCH. Duplicates come from the raw patch (for a JSON patch also unknown keys
// of an operation: `json patch unknown field "[0].foo"`). Unknown fields come from `patched`,
// the object the patch produces, when given (exact paths, as the server reports them: in key
// order for merge and JSON patches, sorted for strategic merge patches); without it, from the
// patch document itself (merge/strategic: its keys with non-null values, "$" directives
// excepted; JSON patch: the paths and values of add/replace operations). Unknown fields that
// `current` (the object before the patch) already has are not the patch's doing and are not
// reported. Apply patches are not checked.
FieldProblems CheckPatchFields(const ResourceType& rt, PatchType type, std::string_view raw_patch,
                               const Json& parsed, const Json* patched = nullptr,
                               const Json* current = nullptr, Subresource sub = Subresource::kNone);

// Removes the fields CheckFields reports unknown; returns true if anything was removed.
bool DropUnknownFields(const ResourceType& rt, Json& object, Subresource sub = Subresource::kNone);
// The same for a patch document: merge/strategic patch keys, JSON patch operations whose path
// names an unknown field (dropped) and the values of add/replace operations.
bool DropUnknownPatchFields(const ResourceType& rt, PatchType type, Json& patch,
                            Subresource sub = Subresource::kNone);

// The 400 of a create/update under Strict: `Deployment in version "v1" cannot be handled as a
// Deployment: strict decoding error: unknown field "spec.foo"` (kind and version of the body).
StatusError StrictDecodingError(const ResourceType& rt, const Json& body,
                                const FieldProblems& problems,
                                Subresource sub = Subresource::kNone);
// The 422 of a patch under Strict: ` "" is invalid: patch: Invalid value: "<value>": strict
// decoding error: ...` with a FieldValueInvalid cause on field "patch". `value` is the patched
// object's JSON for merge and JSON patches, GoMapString(patch) for strategic merge patches.
StatusError StrictPatchError(const FieldProblems& problems, const std::string& value);
// A JSON value printed as Go's fmt "%+v" prints its decoded form: map[a:1 b:[x y]].
std::string GoMapString(const Json& value);
// The values of the Warning headers for Warn: `299 - "unknown field \"spec.foo\""`.
std::vector<std::string> WarningHeaders(const FieldProblems& problems);

// Go's %q of a string (strconv.Quote) for the ASCII range: `"a\"b\n"`, other control bytes as
// \xNN; bytes over 0x7f pass through (valid UTF-8 assumed). For messages a real API server words.
std::string GoQuote(std::string_view s);

}  // namespace steward::cluster
