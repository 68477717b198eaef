// OpenAPI schema definitions of the kinds the embedded cluster serves, in the shape the real
// API server publishes them (definition names like "io.k8s.api.apps.v1.Deployment",
// x-kubernetes-group-version-kind on kinds, x-kubernetes-patch-strategy / patch-merge-key /
// list-type on lists), for kubectl apply (client-side strategic merge patch), kubectl explain
// and OpenAPI-driven clients.
//
// The definitions cover the fields Steward's manifests and common hand-written manifests use;
// they are not a copy of Kubernetes' generated spec. A field missing here is still accepted by
// the server; kubectl apply then falls back to its compiled-in types
// (docs/kubectl-compatibility.md).
//
// All functions are pure and thread-safe; results are built once and cached.
#pragma once

#include <string>
#include <vector>

#include "cluster/model/resource_types.h"
#include "common/json.h"

namespace steward::cluster {

enum class OpenApiFlavor {
  kV2,  // Swagger 2.0: references "#/definitions/<name>"
  kV3,  // OpenAPI 3.0: references "#/components/schemas/<name>"
};

// Every definition, keyed by name.
const Json& OpenApiDefinitions(OpenApiFlavor flavor);

// The definition name of a type's kind ("io.k8s.api.core.v1.Pod") and of its list.
std::string OpenApiKindName(const ResourceType& rt);
std::string OpenApiListName(const ResourceType& rt);
// The definition name of autoscaling/v1 Scale (the scale subresource's kind).
std::string OpenApiScaleName();
// The definition name of authentication/v1 TokenRequest (serviceaccounts/token).
std::string OpenApiTokenRequestName();

// The definitions `roots` refer to, directly or not, plus the roots themselves, in name order.
// Unknown names are ignored.
std::vector<std::string> OpenApiClosure(const std::vector<std::string>& roots);

}  // namespace steward::cluster
