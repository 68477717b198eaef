// Content negotiation of the embedded API server: which representation a request's Accept header
// asks for (JSON, a server-side Table, PartialObjectMetadata, aggregated discovery), as
// kube-apiserver negotiates it. Pure functions; any thread.
#pragma once

#include <string_view>

#include "cluster/apiserver/tables.h"
#include "common/json.h"

namespace steward::cluster {

// kNone: nothing the Accept header lists can be served (406).
enum class Output { kJson, kTable, kPartialMetadata, kAggregatedDiscovery, kNone };

// For a resource request: JSON (no Accept, or a JSON type without "as"), a Table
// (as=Table;g=meta.k8s.io) or PartialObjectMetadata(List).
Output NegotiateResource(std::string_view accept);
// For a discovery document: JSON or the aggregated APIGroupDiscoveryList (v2).
Output NegotiateDiscovery(std::string_view accept);
// Whether plain JSON is acceptable: no Accept header, or a JSON-like range in it.
bool AcceptsJson(std::string_view accept);
// An object as PartialObjectMetadata: its kind and metadata only.
Json PartialMetadata(const Json& obj);
// ?includeObject= of a Table request (None, Object; Metadata otherwise, the default).
TableIncludeObject IncludeObjectParam(std::string_view v);

}  // namespace steward::cluster
