#include "cluster/apiserver/discovery_paths.h"

#include <algorithm>

#include "cluster/apiserver/discovery.h"
#include "cluster/apiserver/negotiation.h"
#include "cluster/model/resource_types.h"

namespace steward::cluster {
namespace {

PathDocument JsonDocument(const Json& body) { return PathDocument{DumpJson(body)}; }

}  // namespace

ApiResult<PathDocument> ServedPathsDocument() {
  Json paths = Json::array({"/api", "/api/v1", "/apis", "/healthz", "/livez", "/metrics",
                            "/openapi/v2", "/openapi/v3", "/readyz", "/version"});
  for (const auto& rt : AllResourceTypes()) {
    if (!rt.group.empty()) {
      paths.push_back("/apis/" + rt.group);
      paths.push_back("/apis/" + rt.group + "/" + rt.version);
    }
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return JsonDocument(Json{{"paths", paths}});
}

ApiResult<PathDocument> OpenApiPathDocument(const net::HttpRequest& http,
                                            const std::vector<std::string>& parts) {
  if (parts.size() == 2 && parts[1] == "v2") {
    if (!AcceptsJson(http.headers.Get("Accept"))) {
      return NotAcceptableError("only the following media types are accepted: application/json");
    }
    return JsonDocument(OpenApiV2Document());
  }
  if (parts.size() == 2 && parts[1] == "v3") return JsonDocument(OpenApiV3Root());
  if (parts.size() > 2 && parts[1] == "v3") {
    std::string rest;
    for (size_t i = 2; i < parts.size(); ++i) rest += (i > 2 ? "/" : "") + parts[i];
    auto doc = OpenApiV3Document(rest);
    if (!doc) return NotFoundPathError(http.path);
    return JsonDocument(*doc);
  }
  return NotFoundPathError(http.path);
}

ApiResult<PathDocument> DiscoveryPathDocument(const net::HttpRequest& http,
                                              const std::vector<std::string>& parts) {
  const bool core = parts[0] == "api";
  const size_t gv_end = core ? 2 : 3;
  if (parts.size() == gv_end) {
    std::string group = core ? "" : parts[1];
    std::string version = core ? parts[1] : parts[2];
    auto doc = ApiResourceListDocument(group, version);
    if (!doc) return NotFoundPathError(http.path);
    return JsonDocument(*doc);
  }
  if (http.method != "GET") {
    return MethodNotAllowedError("the server does not allow this method on the requested resource");
  }
  Output out = NegotiateDiscovery(http.headers.Get("Accept"));
  if (out == Output::kNone) {
    return NotAcceptableError("only the following media types are accepted: application/json");
  }
  if (parts.size() == 1) {
    if (out == Output::kAggregatedDiscovery) {
      return PathDocument{DumpJson(AggregatedDiscoveryDocument(core)),
                          "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"};
    }
    return JsonDocument(core ? ApiVersionsDocument(http.headers.Get("Host"))
                             : ApiGroupListDocument());
  }
  // /apis/GROUP: the APIGroup entry of the group list.
  if (!core && parts.size() == 2) {
    for (const auto& g : ApiGroupListDocument()["groups"]) {
      if (g["name"] == parts[1]) {
        Json group = g;
        group["kind"] = "APIGroup";
        group["apiVersion"] = "v1";
        return JsonDocument(group);
      }
    }
  }
  return NotFoundPathError(http.path);
}

}  // namespace steward::cluster
