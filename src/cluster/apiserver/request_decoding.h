// What a request to a resource carries, decoded and checked as kube-apiserver does: its body
// (JSON, YAML or protobuf, per Content-Type; the last of duplicate keys wins), the list and
// delete options of its query and body, and server-side field validation (?fieldValidation=,
// field_validation.h) of a create/update body or a patch. RestHandler's verbs (rest_verbs.cc)
// call these and answer the errors they return.
//
// Pure functions of the request (and, for a patch, of the object it applies to); thread-safe.
// Each returns the error to answer the request with, or nullopt when it may go on.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/apiserver/object_api.h"
#include "cluster/apiserver/patch.h"
#include "cluster/apiserver/status_error.h"
#include "common/json.h"
#include "net/http.h"

namespace steward::cluster {

// Response headers a check adds: ("Warning", <one problem>) per problem of a Warn validation.
using HeaderList = std::vector<std::pair<std::string, std::string>>;

// The body as JSON: 400 when it does not parse, 415 for a media type not served.
std::optional<StatusError> DecodeBody(const net::HttpRequest& http, Json* out);
// labelSelector, fieldSelector, continue, resourceVersion(Match) and limit (400 when not a
// whole number >= 0).
std::optional<StatusError> ParseListOptions(const net::HttpRequest& http, ListOptions* out);
// DeleteOptions from the body (when there is one) and the query (dryRun, propagationPolicy,
// gracePeriodSeconds).
std::optional<StatusError> ParseDeleteOptions(const net::HttpRequest& http, DeleteOptions* out);
// Field validation of a create or update body (`options_kind`: "CreateOptions" or
// "UpdateOptions", named in the error for a bad ?fieldValidation=): Strict refuses unknown or
// duplicate fields, Warn adds a Warning per problem to `headers`; unknown fields are then
// dropped from `body`. Protobuf bodies are not checked (they cannot carry unknown fields).
std::optional<StatusError> ValidateBody(const net::HttpRequest& http, const ResourceType& type,
                                        Subresource sub, std::string_view options_kind, Json* body,
                                        HeaderList* headers);
// DecodeBody, then ValidateBody.
std::optional<StatusError> DecodeValidBody(const net::HttpRequest& http, const ResourceType& type,
                                           Subresource sub, std::string_view options_kind,
                                           Json* body, HeaderList* headers);
// The same for a patch of `patch_type`, judged against the object it applies to (`current`:
// read only when the validation needs it; a patch that cannot be applied is left for the
// write to refuse). Unknown fields are dropped from `patch`.
std::optional<StatusError> ValidatePatch(const net::HttpRequest& http, const ResourceType& type,
                                         Subresource sub, PatchType patch_type,
                                         const std::function<ApiResult<Json>()>& current,
                                         std::string* patch, HeaderList* headers);

}  // namespace steward::cluster
