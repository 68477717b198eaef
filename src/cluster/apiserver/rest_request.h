// The request RestHandler is serving, and what its query parameters say. Private to the REST
// handler's own files (rest_handler.cc: routing, answers, authorization; rest_verbs.cc: the verbs
// and watch); nothing else includes it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/apiserver/negotiation.h"
#include "cluster/apiserver/rest_handler.h"
#include "common/clock.h"
#include "net/http.h"

namespace steward::cluster {

// Everything known about one request while it is being served.
struct RestHandler::Request {
  net::HttpRequest http;
  std::shared_ptr<net::ResponseWriter> writer;
  SteadyTime start;
  RequestRecord record;
  // Resource addressing, when the path names a resource.
  const ResourceType* type = nullptr;
  std::string ns;
  std::string name;
  std::string subresource;
  std::string rest;  // path after the subresource (proxy)
  bool watch = false;
  // Set by ServeResource: the API verb (get, list, watch, create, update, patch, delete,
  // deletecollection or proxy), the subresource served, the negotiated representation and the
  // list options (of a get, list or deletecollection).
  std::string verb;
  Subresource sub = Subresource::kNone;
  Output output = Output::kJson;
  ListOptions list_opts;
  bool responded = false;
  UserInfo user;  // who the bearer token is (Serve)
  // Headers added to the response, whatever it is: Warning (field validation), Vary.
  std::vector<std::pair<std::string, std::string>> extra_headers;
};

namespace rest {

// A whole decimal integer; nullopt for anything else.
std::optional<int64_t> ParseInt(std::string_view s);
// A boolean query value as the API server reads one ("true", "1", "True").
bool IsTrue(std::string_view v);
// A resourceVersion query value as a revision; nullopt when absent, "0" or not a number.
std::optional<uint64_t> QueryRevision(std::string_view rv);
// The revision a request must wait for before it is served (0: none), as the API server's watch
// cache does: a get, or a list not at an Exact revision (nor continued), at a resourceVersion
// newer than the current one; a watch only with sendInitialEvents (it lists first). A plain
// watch from a future resourceVersion does not wait: it streams the events after it, whenever
// they come.
uint64_t RevisionToAwait(const std::string& verb, const net::HttpRequest& http, uint64_t current);
// What a write's options say in the query: dryRun=All, fieldManager.
WriteOptions WriteOptionsOf(const net::HttpRequest& http);

}  // namespace rest
}  // namespace steward::cluster
