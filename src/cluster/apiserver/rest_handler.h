// RestHandler: the Kubernetes REST front end of the embedded cluster. Maps HTTP requests to
// ObjectApi calls and streams watches, with bearer-token authentication, content negotiation
// (JSON, server-side Tables, PartialObjectMetadata), discovery and OpenAPI documents, fault
// injection, an audit log and request metrics.
//
// Paths served:
//   /api, /api/v1, /apis, /apis/G, /apis/G/V        discovery (plain and aggregated)
//   /api/v1/..., /apis/G/V/...                       resources, subresources status and scale,
//                                                    the legacy /watch/ prefix
//   /api/v1/namespaces/NS/{services,pods}/NAME/proxy/PATH   handed to the proxy callback
//   /version, /healthz, /livez, /readyz, /metrics, /openapi/v2, /openapi/v3[/...]
//
// Threading: Handle() runs on the HTTP server's I/O threads and answers quickly; watch streams
// are pumped by the dispatcher threads of its WatchStreams (watch_streams.h). Stop() ends every
// open watch (idempotent, blocking); call it before the HTTP server stops.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/apiserver/faults.h"
#include "cluster/apiserver/object_api.h"
#include "cluster/apiserver/rbac.h"
#include "cluster/apiserver/request_log.h"
#include "cluster/apiserver/watch_streams.h"
#include "common/mutex.h"
#include "common/scheduler.h"
#include "net/http_server.h"

namespace steward::cluster {

class RestHandler final : public net::Handler {
 public:
  struct Options {
    // The admin's token ("Authorization: Bearer <token>", user "admin" in system:masters),
    // required on every request but health and version. ServiceAccount tokens (TokenRequest)
    // are accepted too, and their requests are authorized by RBAC (rbac.h). Empty disables
    // authentication and authorization.
    std::string token;
    // The key ServiceAccount tokens are signed with (TokenAuthority); empty: a random one, so
    // tokens die with the handler.
    std::string token_signing_key;
    // Interval between BOOKMARK events on watches that allow them.
    std::chrono::milliseconds bookmark_interval{std::chrono::seconds(10)};
    int dispatcher_threads = 2;
    // Request bodies: kube-apiserver's limit for what it decodes (3 MiB, answered 413), and
    // for the bodies of services/pods .../proxy requests, which a real API server streams to
    // the pod with no limit of its own. This one holds a proxied body in memory: 64 MiB lets
    // through every upload Steward's file API takes (32 MiB at most) and bounds what one
    // authenticated request can make it hold.
    size_t max_body_bytes = 3 * 1024 * 1024;
    size_t max_proxy_body_bytes = 64 * 1024 * 1024;
  };

  // Proxy subresources: kind is "services" or "pods"; `name_port` as in the URL ("web",
  // "svc:web", "http:svc:80"); `path` is the rest of the URL after /proxy (with a leading '/').
  using ProxyFn = std::function<void(const std::string& kind, const std::string& ns,
                                     const std::string& name_port, const std::string& path,
                                     const net::HttpRequest& request,
                                     std::shared_ptr<net::ResponseWriter> writer)>;

  // `api`, `faults`, `log` must outlive the handler.
  RestHandler(ObjectApi& api, FaultInjector& faults, RequestLog& log, Options options);
  ~RestHandler() override;

  void Handle(net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) override;
  // Refuses a request without a valid token (401) from its head: before its body is read or
  // "100 Continue" sent, as kube-apiserver's authentication filter does.
  std::optional<net::HttpResponse> CheckHead(const net::HttpRequest& head) override;
  // Options::max_proxy_body_bytes for a proxy subresource, max_body_bytes for the rest.
  std::optional<size_t> BodyLimit(const net::HttpRequest& head) override;
  void SetProxy(ProxyFn proxy);
  // Extra lines appended to /metrics (set before serving).
  void SetMetricsSource(std::function<std::string()> source);
  void Stop();

  // Open watch streams; for tests and metrics.
  size_t ActiveWatches() const;

 private:
  struct Request;

  // Routing: open endpoints and authentication, then discovery, OpenAPI or a resource.
  void Serve(Request& req);
  // Starts the request's timing and log record.
  void Begin(Request& req);
  // Fills the resource addressing of `req` from a resource path; false when answered (404).
  bool ParseResourcePath(Request& req, const std::vector<std::string>& parts);

  // A resource request: its verb and addressing checked, faults injected (latency and a
  // future resourceVersion wait off the I/O thread), then served by ServeVerb.
  void ServeResource(Request& req);
  // Sets req.verb from the method and path; false when answered (405, 404).
  bool ResolveVerb(Request& req);
  void ServeProxy(Request& req);  // services/pods .../proxy/...: handed to the proxy callback
  // Sets req.sub and checks the namespace and name against the type; false when answered (404).
  bool ResolveSubresource(Request& req);
  // The shared prelude of every verb (fault, Accept, dryRun, list options), then its method.
  void ServeVerb(Request& req, const FaultInjector::Decision& decision);
  // Answers the request with the decided failure, if any; true when it did.
  bool InjectFault(Request& req, const FaultInjector::Decision& decision);

  // One method per verb.
  void ServeGet(Request& req);
  void ServeList(Request& req);
  void ServeWatch(Request& req);
  void ServeCreate(Request& req);
  void ServeUpdate(Request& req);
  void ServePatch(Request& req);
  void ServeDelete(Request& req);
  void ServeDeleteCollection(Request& req);
  // Authorization of a request, the self reviews, TokenRequest.
  // Authorizes `req` (resource or non-resource); false when answered (403).
  bool Authorized(Request& req, const AccessAttributes& attributes);
  bool AuthorizeResource(Request& req);
  // The write options of a create, update or patch: the query's, and the RBAC registry's
  // escalation check for the caller (rbac_escalation.h).
  WriteOptions WriteOptionsFor(const Request& req);
  // POST of a review kind (selfsubjectaccessreviews, selfsubjectrulesreviews,
  // selfsubjectreviews): answered for the caller, never stored.
  void ServeReview(Request& req);
  void ServeTokenRequest(Request& req);

  // Decoding and field validation of bodies, patches and options: request_decoding.h.
  void SendResult(Request& req, const ApiResult<Json>& result, int ok_code);
  // `body` by value: callers hand over large bodies (lists) with std::move.
  void Respond(Request& req, int code, std::string body,
               const std::string& content_type = "application/json");
  void RespondJson(Request& req, int code, const Json& body);
  void RespondError(Request& req, const StatusError& error);
  static net::HttpResponse ErrorResponse(const Request& req, const StatusError& error);
  // Takes the answer's time and the latency just before the answer is sent (RequestRecord).
  void Stamp(Request& req);
  // Records the request in the log (its latency taken now unless Stamp() took it).
  void Finish(Request& req, int code);
  // Runs `fn`, turning an escaped exception into an error response.
  void Guarded(Request& req, const std::function<void()>& fn);

  ObjectApi& api_;
  FaultInjector& faults_;
  RequestLog& log_;
  Options options_;
  TokenAuthority tokens_;
  ProxyFn proxy_;
  std::function<std::string()> metrics_source_;
  // Fault latency, revision waits and the watch streams' timers; outlives streams_.
  Scheduler scheduler_{"rest-timers"};
  WatchStreams streams_;
};

}  // namespace steward::cluster
