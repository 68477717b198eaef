#include "cluster/apiserver/rest_handler.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <unordered_set>

#include "cluster/apiserver/discovery.h"
#include "cluster/apiserver/discovery_paths.h"
#include "cluster/apiserver/field_validation.h"
#include "cluster/apiserver/protobuf_decode.h"
#include "cluster/apiserver/rbac_escalation.h"
#include "cluster/apiserver/request_decoding.h"
#include "cluster/apiserver/rest_request.h"
#include "cluster/apiserver/selectors.h"
#include "cluster/apiserver/tables.h"
#include "common/ascii.h"
#include "common/log.h"
#include "common/yaml.h"

namespace steward::cluster {

using rest::IsTrue;
using rest::RevisionToAwait;
using rest::WriteOptionsOf;

namespace {

constexpr const char* kJsonType = "application/json";

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) parts.emplace_back(path.substr(i, j - i));
    i = j;
  }
  return parts;
}

// How long a read at a resourceVersion newer than the current one waits for it to arrive before
// answering 504 "Too large resource version" (the watch cache's blockTimeout), and how often the
// wait looks at the revision.
constexpr std::chrono::seconds kFreshnessWait{3};
constexpr std::chrono::milliseconds kFreshnessPoll{10};

// Calls `then` once the storage revision reaches `revision` or `deadline` passes, polling on
// `scheduler` (at once, on the calling thread, when it already has).
void AwaitRevision(Scheduler& scheduler, const Storage& storage, uint64_t revision,
                   std::chrono::steady_clock::time_point deadline, std::function<void()> then) {
  if (storage.CurrentRevision() >= revision || std::chrono::steady_clock::now() >= deadline) {
    then();
    return;
  }
  scheduler.Schedule(kFreshnessPoll,
                     [&scheduler, &storage, revision, deadline, then = std::move(then)]() mutable {
                       AwaitRevision(scheduler, storage, revision, deadline, std::move(then));
                     });
}

// /api/v1/namespaces/NS/{pods,services}/NAME/proxy[/...]
bool ProxyPath(std::string_view path) {
  constexpr std::string_view kPrefix = "/api/v1/namespaces/";
  if (!path.starts_with(kPrefix)) return false;
  path.remove_prefix(kPrefix.size());
  std::vector<std::string_view> parts;  // namespace, resource, name, subresource
  for (size_t pos = 0; parts.size() < 4;) {
    const size_t slash = path.find('/', pos);
    parts.push_back(path.substr(pos, slash == std::string_view::npos ? slash : slash - pos));
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return parts.size() == 4 && !parts[0].empty() && !parts[2].empty() &&
         (parts[1] == "pods" || parts[1] == "services") && parts[3] == "proxy";
}

// Health and version: open to anonymous clients.
bool OpenPath(std::string_view path) {
  return path == "/healthz" || path == "/livez" || path == "/readyz" || path == "/version" ||
         path == "/version/";
}

}  // namespace

RestHandler::RestHandler(ObjectApi& api, FaultInjector& faults, RequestLog& log, Options options)
    : api_(api),
      faults_(faults),
      log_(log),
      options_(std::move(options)),
      tokens_(options_.token, options_.token_signing_key),
      streams_(api, scheduler_, {options_.bookmark_interval, options_.dispatcher_threads}) {}

RestHandler::~RestHandler() { Stop(); }

void RestHandler::SetProxy(ProxyFn proxy) { proxy_ = std::move(proxy); }

void RestHandler::SetMetricsSource(std::function<std::string()> source) {
  metrics_source_ = std::move(source);
}

size_t RestHandler::ActiveWatches() const { return streams_.Active(); }

void RestHandler::Stop() {
  streams_.Stop();
  scheduler_.Stop();
}

void RestHandler::Respond(Request& req, int code, std::string body,
                          const std::string& content_type) {
  if (req.responded) return;
  req.responded = true;
  net::HttpResponse resp;
  resp.status = code;
  resp.headers.Add("Content-Type", content_type);
  resp.headers.Add("Cache-Control", "no-cache, private");
  for (const auto& [name, value] : req.extra_headers) resp.headers.Add(name, value);
  resp.body = std::move(body);
  Stamp(req);
  req.writer->Send(std::move(resp));
  Finish(req, code);
}

void RestHandler::RespondJson(Request& req, int code, const Json& body) {
  Respond(req, code, DumpJson(body));
}

net::HttpResponse RestHandler::ErrorResponse(const Request& req, const StatusError& error) {
  net::HttpResponse resp;
  resp.status = error.code;
  resp.headers.Add("Content-Type", kJsonType);
  resp.headers.Add("Cache-Control", "no-cache, private");
  if (error.retry_after_seconds > 0) {
    resp.headers.Add("Retry-After", std::to_string(error.retry_after_seconds));
  }
  for (const auto& [name, value] : req.extra_headers) resp.headers.Add(name, value);
  resp.body = DumpJson(error.ToStatus());
  return resp;
}

void RestHandler::RespondError(Request& req, const StatusError& error) {
  if (req.responded) return;
  req.responded = true;
  net::HttpResponse resp = ErrorResponse(req, error);
  Stamp(req);
  req.writer->Send(std::move(resp));
  Finish(req, error.code);
}

void RestHandler::Stamp(Request& req) {
  req.record.answered = api_.clock().WallNow();
  req.record.latency =
      std::chrono::duration_cast<std::chrono::microseconds>(api_.clock().Now() - req.start);
}

void RestHandler::Finish(Request& req, int code) {
  req.record.code = code;
  if (req.record.answered == SystemTime{}) {
    req.record.latency =
        std::chrono::duration_cast<std::chrono::microseconds>(api_.clock().Now() - req.start);
  }
  log_.Record(req.record);
}

void RestHandler::Begin(Request& req) {
  req.start = api_.clock().Now();
  req.record.started = api_.clock().WallNow();
  req.record.uri = req.http.target;
  req.record.user_agent = std::string(req.http.headers.Get("User-Agent"));
  req.record.user = "admin";
}

void RestHandler::Handle(net::HttpRequest http, std::shared_ptr<net::ResponseWriter> writer) {
  auto req = std::make_shared<Request>();
  req->http = std::move(http);
  req->writer = std::move(writer);
  Begin(*req);
  Request& r = *req;
  Guarded(r, [this, &r] { Serve(r); });
}

std::optional<net::HttpResponse> RestHandler::CheckHead(const net::HttpRequest& head) {
  // As kube-apiserver's authentication filter, which runs before a handler reads the body: an
  // unauthenticated request is refused from its head, before "100 Continue" or a body byte.
  if (OpenPath(head.path) || head.body_too_large) return std::nullopt;
  if (tokens_.Authenticate(head.headers.Get("Authorization"), api_.storage(),
                           api_.clock().WallNow())) {
    return std::nullopt;  // Serve authenticates again, with the body read
  }
  Request req;
  req.http.method = head.method;
  req.http.target = head.target;
  req.http.headers = head.headers;
  Begin(req);
  req.record.user = "system:anonymous";
  req.record.verb = AsciiLower(head.method);
  net::HttpResponse resp = ErrorResponse(req, UnauthorizedError());
  Stamp(req);
  Finish(req, resp.status);
  return resp;
}

std::optional<size_t> RestHandler::BodyLimit(const net::HttpRequest& head) {
  return ProxyPath(head.path) ? options_.max_proxy_body_bytes : options_.max_body_bytes;
}

void RestHandler::Serve(Request& req) {
  const auto& http = req.http;
  const std::string& path = http.path;
  if (http.body_too_large) {
    req.record.verb = AsciiLower(http.method);
    const size_t limit = *BodyLimit(http);
    RespondError(req, TooLargeError("Request entity too large: limit is " + std::to_string(limit)));
    return;
  }
  // Health and version are open to anonymous clients, as on a default API server.
  if (path == "/healthz" || path == "/livez" || path == "/readyz") {
    req.record.verb = "get";
    Respond(req, 200, "ok", "text/plain; charset=utf-8");
    return;
  }
  if (path == "/version" || path == "/version/") {
    req.record.verb = "get";
    RespondJson(req, 200, VersionDocument());
    return;
  }
  {
    auto user = tokens_.Authenticate(http.headers.Get("Authorization"), api_.storage(),
                                     api_.clock().WallNow());
    if (!user) {
      req.record.user = "system:anonymous";
      req.record.verb = AsciiLower(http.method);
      RespondError(req, UnauthorizedError());
      return;
    }
    req.user = std::move(*user);
    req.record.user = req.user.name;
  }
  if (path.rfind("/api/", 0) != 0 && path.rfind("/apis/", 0) != 0) {
    // A non-resource path (discovery roots, OpenAPI, metrics): authorized by path.
    AccessAttributes a;
    a.resource_request = false;
    a.verb = AsciiLower(http.method);
    a.path = path;
    if (!Authorized(req, a)) return;
  }
  if (path == "/metrics") {
    req.record.verb = "get";
    std::string extra = metrics_source_ ? metrics_source_() : "";
    Respond(req, 200, log_.MetricsText(extra), "text/plain; version=0.0.4; charset=utf-8");
    return;
  }
  auto parts = SplitPath(path);
  // The non-resource documents (discovery_paths.h).
  auto answer = [&](const ApiResult<PathDocument>& doc) {
    req.record.verb = "get";
    if (doc.ok()) {
      Respond(req, 200, doc->body, doc->content_type);
    } else {
      RespondError(req, doc.error());
    }
  };
  if (parts.empty()) {
    answer(ServedPathsDocument());
    return;
  }
  if (parts[0] == "openapi") {
    answer(OpenApiPathDocument(http, parts));
    return;
  }
  if (parts[0] != "api" && parts[0] != "apis") {
    req.record.verb = AsciiLower(http.method);
    RespondError(req, NotFoundPathError(path));
    return;
  }
  bool core = parts[0] == "api";
  size_t gv_end = core ? 2 : 3;
  if (parts.size() <= gv_end) {
    // The discovery documents depend on Accept (aggregated or not): caches must key on it.
    req.extra_headers.emplace_back("Vary", "Accept");
    answer(DiscoveryPathDocument(http, parts));
    return;
  }
  if (!ParseResourcePath(req, parts)) return;
  ServeResource(req);
}

bool RestHandler::ParseResourcePath(Request& req, const std::vector<std::string>& parts) {
  const auto& http = req.http;
  const std::string& path = http.path;
  bool core = parts[0] == "api";
  size_t gv_end = core ? 2 : 3;
  std::string group = core ? "" : parts[1];
  std::string version = core ? parts[1] : parts[2];
  size_t i = gv_end;
  if (parts[i] == "watch") {
    req.watch = true;
    ++i;
  }
  if (i < parts.size() && parts[i] == "namespaces" && i + 1 < parts.size()) {
    if (i + 2 < parts.size() && parts[i + 2] != "status" && parts[i + 2] != "finalize") {
      req.ns = parts[i + 1];
      i += 2;
    }
  }
  if (i >= parts.size()) {
    RespondError(req, NotFoundPathError(path));
    return false;
  }
  req.type = FindResource(group, version, parts[i]);
  if (i + 1 < parts.size()) req.name = parts[i + 1];
  if (i + 2 < parts.size()) req.subresource = parts[i + 2];
  for (size_t j = i + 3; j < parts.size(); ++j) req.rest += "/" + parts[j];
  if (req.subresource == "proxy" && !path.empty() && path.back() == '/') req.rest += "/";
  req.record.group = group;
  req.record.resource = parts[i];
  req.record.subresource = req.subresource;
  req.record.ns = req.ns;
  req.record.name = req.name;
  if (req.type == nullptr) {
    req.record.verb = AsciiLower(http.method);
    RespondError(req, NotFoundPathError(path));
    return false;
  }
  return true;
}

void RestHandler::ServeResource(Request& req) {
  if (!ResolveVerb(req)) return;
  if (req.verb == "proxy") {
    // pods/proxy and services/proxy are authorized as any subresource (the verb from the
    // HTTP method): a token without them reaches no pod.
    if (!AuthorizeResource(req)) return;
    ServeProxy(req);
    return;
  }
  if (!ResolveSubresource(req)) return;
  if (!AuthorizeResource(req)) return;
  // Fault injection: latency first, then failures.
  auto decision = faults_.Decide(req.verb);
  uint64_t await_revision = RevisionToAwait(req.verb, req.http, api_.storage().CurrentRevision());
  auto reqp = std::make_shared<Request>(std::move(req));
  auto run = [this, reqp, decision] { ServeVerb(*reqp, decision); };
  // A read at a future resourceVersion first waits (off the I/O thread) for it to arrive.
  auto start = [this, reqp, await_revision, run = std::move(run)]() mutable {
    if (await_revision == 0) {
      Guarded(*reqp, run);
      return;
    }
    AwaitRevision(scheduler_, api_.storage(), await_revision,
                  std::chrono::steady_clock::now() + kFreshnessWait,
                  [this, reqp, run]() mutable { Guarded(*reqp, run); });
  };
  if (decision.latency.count() > 0) {
    scheduler_.Schedule(decision.latency, std::move(start));
  } else {
    start();
  }
}

bool RestHandler::ResolveVerb(Request& req) {
  const auto& http = req.http;
  const std::string& method = http.method;
  std::string verb;
  if (method == "GET") {
    verb = req.name.empty() ? ((req.watch || IsTrue(http.Query("watch"))) ? "watch" : "list")
                            : (req.watch ? "watch" : "get");
  } else if (method == "POST") {
    verb = "create";
  } else if (method == "PUT") {
    verb = "update";
  } else if (method == "PATCH") {
    verb = "patch";
  } else if (method == "DELETE") {
    verb = req.name.empty() ? "deletecollection" : "delete";
  } else {
    req.record.verb = AsciiLower(method);
    RespondError(req, MethodNotAllowedError("the server does not allow this method on the "
                                            "requested resource"));
    return false;
  }
  if (req.subresource == "proxy") verb = "proxy";
  req.verb = verb;
  req.record.verb = verb;
  if ((verb == "update" || verb == "patch") && req.name.empty()) {
    RespondError(req, MethodNotAllowedError("the server does not allow this method on the "
                                            "requested resource"));
    return false;
  }
  if (!req.rest.empty() && req.subresource != "proxy") {
    RespondError(req, NotFoundPathError(http.path));
    return false;
  }
  return true;
}

void RestHandler::ServeProxy(Request& req) {
  const ResourceType& rt = *req.type;
  if ((rt.kind != "Service" && rt.kind != "Pod") || !proxy_) {
    RespondError(req, NotFoundPathError(req.http.path));
    return;
  }
  req.responded = true;
  Finish(req, 200);
  proxy_(rt.resource, req.ns, req.name, req.rest, req.http, req.writer);
}

bool RestHandler::ResolveSubresource(Request& req) {
  const auto& http = req.http;
  const ResourceType& rt = *req.type;
  const std::string& verb = req.verb;
  if (rt.create_only && (verb != "create" || !req.subresource.empty())) {
    RespondError(req, MethodNotAllowedError("the server does not allow this method on the "
                                            "requested resource"));
    return false;
  }
  if (req.subresource == "status" && rt.has_status) {
    req.sub = Subresource::kStatus;
  } else if (req.subresource == "scale" && rt.has_scale) {
    req.sub = Subresource::kScale;
  } else if (req.subresource == "token" && rt.has_token) {
    if (verb != "create") {
      RespondError(req, MethodNotAllowedError("the server does not allow this method on the "
                                              "requested resource"));
      return false;
    }
  } else if (!req.subresource.empty()) {
    RespondError(req, NotFoundPathError(http.path));
    return false;
  }
  if (rt.namespaced && req.ns.empty() && !req.name.empty()) {
    RespondError(req, NotFoundPathError(http.path));
    return false;
  }
  if (!rt.namespaced && !req.ns.empty()) {
    RespondError(req, NotFoundPathError(http.path));
    return false;
  }
  if (rt.namespaced && req.ns.empty() && verb != "list" && verb != "watch") {
    RespondError(req, NotFoundPathError(http.path));
    return false;
  }
  return true;
}

// ---- authorization, reviews and tokens --------------------------------------------------

WriteOptions RestHandler::WriteOptionsFor(const Request& r) {
  WriteOptions opts = WriteOptionsOf(r.http);
  opts.admit = EscalationCheck(api_.storage(), r.user, *r.type, r.ns, r.name);
  return opts;
}

bool RestHandler::Authorized(Request& r, const AccessAttributes& a) {
  const AccessDecision d = Authorize(api_.storage(), r.user, a);
  if (d.allowed) return true;
  RespondError(r, ForbiddenAccessError(r.user, a, d.reason));
  return false;
}

bool RestHandler::AuthorizeResource(Request& r) {
  AccessAttributes a;
  a.verb = r.verb;
  if (a.verb == "proxy") {  // services/proxy: the verb of the HTTP method, as RequestInfo
    const std::string& m = r.http.method;
    a.verb = m == "GET" || m == "HEAD" ? "get"
             : m == "POST"             ? "create"
             : m == "PUT"              ? "update"
             : m == "PATCH"            ? "patch"
             : m == "DELETE"           ? "delete"
                                       : AsciiLower(m);
  }
  a.group = r.type->group;
  a.resource = r.type->resource;
  a.subresource = r.subresource;
  a.ns = r.ns;
  a.name = r.name;
  return Authorized(r, a);
}

void RestHandler::ServeReview(Request& r) {
  Json body;
  if (auto e = DecodeValidBody(r.http, *r.type, r.sub, "CreateOptions", &body, &r.extra_headers)) {
    return RespondError(r, *e);
  }
  const std::string& resource = r.type->resource;
  if (resource == "selfsubjectaccessreviews") {
    SendResult(r, ReviewSelfSubjectAccess(api_.storage(), r.user, std::move(body)), 201);
  } else if (resource == "selfsubjectrulesreviews") {
    SendResult(r, ReviewSelfSubjectRules(api_.storage(), r.user, body), 201);
  } else {
    SendResult(r, ReviewSelfSubject(r.user, api_.clock().WallNow()), 201);
  }
}

void RestHandler::ServeTokenRequest(Request& r) {
  Json body;
  if (auto e = DecodeBody(r.http, &body)) return RespondError(r, *e);
  SendResult(r,
             RequestServiceAccountToken(tokens_, api_.storage(), r.ns, r.name, std::move(body),
                                        api_.clock().WallNow()),
             201);
}

void RestHandler::Guarded(Request& req, const std::function<void()>& fn) {
  // Bad input must never take the server down: a body whose fields have the wrong JSON types
  // can make defaulting code throw; answer it as the API server would (400), anything else 500.
  try {
    fn();
  } catch (const Json::type_error& e) {
    if (req.writer) {
      RespondError(req, BadRequestError(std::string("the object's fields have the wrong types: ") +
                                        e.what()));
    }
  } catch (const std::exception& e) {
    if (req.writer) RespondError(req, InternalError(e.what()));
  }
}

}  // namespace steward::cluster
