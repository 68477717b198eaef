// Internal to the model module: value rules shared by the spec, config and status parsers.
// Every error is kInvalidArgument "<path>: <what is wrong>" with the path as its field
// (InvalidField). Stateless.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/fields.h"
#include "common/json.h"
#include "common/status.h"
#include "engine/model/project.h"

namespace steward::engine::internal {

// Fields are read with common/fields.h (FieldReader, ReadInt, ..., InvalidField), in its JSON
// wording; what follows is the project model's own rules.

// An array of DNS-1123 subdomain names.
Status NameList(const FieldReader& f, std::string_view name,
                std::optional<std::vector<std::string>>* out);

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
// A FlowFuse team (or broker) hashid: 1..63 of [A-Za-z0-9_-].
Status CheckTeam(std::string_view team, std::string_view path);

// Shared sections. Fields absent from the JSON keep *out's current values.
Status ParseStack(const Json& j, std::string path, Stack* out);
// spec.credentials (spec_credentials.cc): `out` is the spec's reference; `input` (may be null:
// stored JSON, where values are refused) gets the mode and the values.
Status ParseCredentials(const Json& j, std::string path, CredentialsInput* input,
                        std::optional<CredentialsRef>* out);
// An agent's spec.credentials: {"token"} (FORGE_TEAM_TOKEN) in a request, or the fingerprint
// form; {} is refused (an agent runs only with the token its platform issues).
Status ParseAgentCredentials(const Json& j, std::string path, CredentialsInput* input,
                             std::optional<CredentialsRef>* out);
// `size_required`: the spec's storage needs a size; the config's has a default.
Status ParseStorage(const Json& j, std::string path, bool size_required, StorageSpec* out);
Status ParseProbes(const Json& j, std::string path, std::optional<Json>* liveness,
                   std::optional<Json>* readiness, std::optional<Json>* startup);

}  // namespace steward::engine::internal
