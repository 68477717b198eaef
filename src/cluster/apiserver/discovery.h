// Discovery and OpenAPI documents: what real clients (kubectl, client-go, client-node) read to
// learn which resources the server has and how to talk to them.
//
// All functions are pure and thread-safe; documents are built from AllResourceTypes().
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/json.h"

namespace steward::cluster {

// GET /version.
Json VersionDocument();
// GET /api: APIVersions. `server_address` ("host:port", the address the client reached) fills
// serverAddressByClientCIDRs for 0.0.0.0/0, as a real server does; empty leaves the list empty.
Json ApiVersionsDocument(std::string_view server_address = "");
// GET /apis: APIGroupList.
Json ApiGroupListDocument();
// GET /api/v1 or /apis/GROUP/VERSION: APIResourceList (with subresources such as
// "deployments/status", "deployments/scale"); nullopt for a group/version not served.
std::optional<Json> ApiResourceListDocument(std::string_view group, std::string_view version);
// Aggregated discovery (apidiscovery.k8s.io/v2 APIGroupDiscoveryList) for /api (core = true)
// or /apis (core = false), served when the client's Accept asks for it.
Json AggregatedDiscoveryDocument(bool core);
// GET /openapi/v3: {"paths": {"api/v1": {"serverRelativeURL": ...}, ...}}.
Json OpenApiV3Root();
// GET /openapi/v3/<path> for "api/v1", "apis/apps/v1", ...; nullopt when not served.
std::optional<Json> OpenApiV3Document(std::string_view path);
// GET /openapi/v2 (JSON): the Swagger 2.0 document.
Json OpenApiV2Document();

}  // namespace steward::cluster
