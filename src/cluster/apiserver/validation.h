// Validation and defaulting of objects, with the messages the Kubernetes API server uses.
//
// Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cluster/apiserver/status_error.h"
#include "cluster/model/resource_types.h"
#include "common/json.h"

namespace steward::cluster {

// Name checks; each returns an empty string when valid, else the explanation.
std::string CheckDns1123Subdomain(std::string_view value);
std::string CheckDns1123Label(std::string_view value);
std::string CheckDns1035Label(std::string_view value);
std::string CheckLabelValue(std::string_view value);
std::string CheckQualifiedName(std::string_view value);
// A name that can be one segment of a URL path (not "." or "..", no '/' or '%'): the rule for
// RBAC objects, whose names may hold ':' ("system:controller:x").
std::string CheckPathSegmentName(std::string_view value);

// Validates a complete object of type `rt` (after defaulting). `old_object` is non-null on
// update, for immutability rules. Returns one cause per problem; empty when valid.
std::vector<StatusCause> ValidateObject(const ResourceType& rt, const Json& object,
                                        const Json* old_object);

// Fills in the defaults a real API server applies (Deployment strategy, container
// imagePullPolicy, Service type and targetPort, Secret type, ...). Idempotent.
void ApplyDefaults(const ResourceType& rt, Json& object);

// Go's %q-like rendering of a JSON value for "Invalid value: ..." messages.
std::string RenderValue(const Json& value);

}  // namespace steward::cluster
