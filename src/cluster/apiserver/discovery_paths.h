// The embedded API server's non-resource documents by path: GET / (the served paths),
// /openapi/v2 and /openapi/v3[/...] (OpenAPI), /api, /apis, /apis/GROUP and the group/version
// resource lists (discovery, plain or aggregated as the Accept header asks). RestHandler routes
// here after authentication and authorization, and answers what these return.
//
// Pure functions of the request; thread-safe. The documents come from discovery.h.
#pragma once

#include <string>
#include <vector>

#include "cluster/apiserver/status_error.h"
#include "net/http.h"

namespace steward::cluster {

// A document to answer with (200): its serialized body and media type.
struct PathDocument {
  std::string body;
  std::string content_type = "application/json";
};

// GET /: {"paths": [...]}, sorted.
ApiResult<PathDocument> ServedPathsDocument();
// /openapi/...: `parts` is the path split at '/' (parts[0] == "openapi"). 404 for a path not
// served, 406 for /openapi/v2 when the Accept header allows no JSON.
ApiResult<PathDocument> OpenApiPathDocument(const net::HttpRequest& http,
                                            const std::vector<std::string>& parts);
// /api[/v1] and /apis[/GROUP[/VERSION]]: `parts` as above (parts[0] is "api" or "apis", at most
// the group/version). The answers depend on Accept: the caller sends `Vary: Accept`.
ApiResult<PathDocument> DiscoveryPathDocument(const net::HttpRequest& http,
                                              const std::vector<std::string>& parts);

}  // namespace steward::cluster
