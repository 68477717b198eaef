// ApiServer: routing, authentication, answers and metrics, ?wait= waiters, lifecycle.
#include "api/api_server.h"

#include <pthread.h>

#include <algorithm>

#include "api/api_internal.h"
#include "api/instance_handlers.h"
#include "api/record_handlers.h"
#include "api/ui_assets.h"
#include "common/log.h"

namespace steward::api {
namespace {

std::vector<std::string> Split(std::string_view path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    out.emplace_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// The probe listener's requests, routed as probes.
class ProbeHandler final : public net::Handler {
 public:
  explicit ProbeHandler(Server& server) : server_(server) {}
  void Handle(net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) override {
    server_.Dispatch(std::move(request), std::move(writer), /*probe=*/true);
  }

 private:
  Server& server_;
};

// The challenge every 401 carries.
net::Headers Challenge() {
  net::Headers h;
  h.Set("WWW-Authenticate", "Bearer realm=\"steward\"");
  return h;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i % std::max<size_t>(b.size(), 1)];
  return diff == 0 && !b.empty();
}

}  // namespace

StatusOr<std::unique_ptr<ApiServer>> ApiServer::Start(ApiOptions options, ApiDeps deps) {
  if (options.token.empty()) return InvalidArgument("api: a bearer token is required");
  if (deps.store == nullptr || deps.intents == nullptr) {
    return InvalidArgument("api: store and intents are required");
  }
  auto server = std::make_unique<Server>(std::move(options), std::move(deps));
  RETURN_IF_ERROR(server->Init());
  return std::unique_ptr<ApiServer>(std::move(server));
}

Server::Server(ApiOptions options, ApiDeps deps)
    : options_(std::move(options)), deps_(std::move(deps)) {
  auto add = [this](std::string pattern, std::map<std::string, Method> methods, bool open = false,
                    bool large_body = false) {
    Route r;
    r.segments = Split(pattern);
    r.pattern = std::move(pattern);
    r.methods = std::move(methods);
    r.open = open;
    r.large_body = large_body;
    routes_.push_back(std::move(r));
  };
  const std::vector<std::string> wait = {"wait"};
  auto S = [this](void (Server::*fn)(const CallPtr&)) -> HandlerFn {
    return [this, fn](const CallPtr& call) { (this->*fn)(call); };
  };
  // A handler of one of the server's parts, bound to the part's owner (records_, instances_),
  // which Init fills before any request can arrive.
  auto part = [](const auto& owner) {
    return [&owner](auto fn) -> HandlerFn {
      return [&owner, fn](const CallPtr& call) { ((*owner).*fn)(call); };
    };
  };
  auto R = part(records_);
  auto I = part(instances_);
  const std::vector<std::string> list = {"team",    "phase", "desiredState",
                                         "cluster", "limit", "continue"};
  add("/healthz", {{"GET", {S(&Server::HandleHealthz)}}, {"HEAD", {S(&Server::HandleHealthz)}}},
      true);
  add("/readyz", {{"GET", {S(&Server::HandleReadyz)}}, {"HEAD", {S(&Server::HandleReadyz)}}}, true);
  add("/metrics", {{"GET", {S(&Server::HandleMetrics)}}, {"HEAD", {S(&Server::HandleMetrics)}}},
      true);
  add("/v1/projects", {{"GET", {R(&RecordHandlers::HandleList), list}}});
  add("/v1/projects/{project}", {{"GET", {R(&RecordHandlers::HandleGet)}},
                                 {"PUT", {R(&RecordHandlers::HandlePut), wait}},
                                 {"DELETE", {R(&RecordHandlers::HandleDelete), wait}}});
  add("/v1/projects/{project}/start", {{"POST", {R(&RecordHandlers::HandleStart), wait}}});
  add("/v1/projects/{project}/suspend", {{"POST", {R(&RecordHandlers::HandleSuspend), wait}}});
  add("/v1/projects/{project}/restart", {{"POST", {R(&RecordHandlers::HandleRestart), wait}}});
  add("/v1/projects/{project}/rotate-credentials",
      {{"POST", {R(&RecordHandlers::HandleRotate), wait}}});
  add("/v1/projects/{project}/rename", {{"POST", {R(&RecordHandlers::HandleRename), wait}}});
  add("/v1/projects/{project}/move", {{"POST", {R(&RecordHandlers::HandleMove), wait}}});
  add("/v1/stack", {{"GET", {R(&RecordHandlers::HandleStackDefaults)}}});
  add("/v1/projects/{project}/history",
      {{"GET", {R(&RecordHandlers::HandleHistory), {"limit", "after"}}}});
  add("/v1/projects/{project}/instance", {{"GET", {I(&InstanceHandlers::HandleInstanceInfo)}}});
  add("/v1/projects/{project}/logs", {{"GET", {I(&InstanceHandlers::HandleInstanceLogs)}}});
  add("/v1/projects/{project}/flows/start", {{"POST", {I(&InstanceHandlers::HandleFlowsStart)}}});
  add("/v1/projects/{project}/flows/stop", {{"POST", {I(&InstanceHandlers::HandleFlowsStop)}}});
  add("/v1/projects/{project}/flows/restart",
      {{"POST", {I(&InstanceHandlers::HandleFlowsRestart), {"mode"}}}});
  add("/v1/projects/{project}/logout", {{"POST", {I(&InstanceHandlers::HandleLogout)}}});
  const std::map<std::string, Method> files = {{"GET", {I(&InstanceHandlers::HandleFiles)}},
                                               {"PUT", {I(&InstanceHandlers::HandleFiles)}},
                                               {"DELETE", {I(&InstanceHandlers::HandleFiles)}},
                                               {"POST", {I(&InstanceHandlers::HandleFiles)}}};
  add("/v1/projects/{project}/files", files, false, true);
  add("/v1/projects/{project}/files/{path...}", files, false, true);
  add("/v1/projects/{project}/resources", {{"GET", {I(&InstanceHandlers::HandleResources)}}});
  add("/v1/projects/{project}/resources/stream",
      {{"GET", {I(&InstanceHandlers::HandleResourcesStream)}}});
  add("/v1/projects/{project}/mcp/features", {{"POST", {I(&InstanceHandlers::HandleMcpFeatures)}}});
  add("/v1/projects/{project}/mcp/tools/call",
      {{"POST", {I(&InstanceHandlers::HandleMcpToolCall)}}});
  add("/v1/projects/{project}/mcp/resources/read",
      {{"POST", {I(&InstanceHandlers::HandleMcpResourceRead)}}});
  add("/v1/agents", {{"GET", {R(&RecordHandlers::HandleAgentList), list}}});
  add("/v1/agents/{agent}", {{"GET", {R(&RecordHandlers::HandleAgentGet)}},
                             {"PUT", {R(&RecordHandlers::HandleAgentPut), wait}},
                             {"DELETE", {R(&RecordHandlers::HandleAgentDelete), wait}}});
  add("/v1/agents/{agent}/start", {{"POST", {R(&RecordHandlers::HandleAgentStart), wait}}});
  add("/v1/agents/{agent}/stop", {{"POST", {R(&RecordHandlers::HandleAgentStop), wait}}});
  add("/v1/agents/{agent}/restart", {{"POST", {R(&RecordHandlers::HandleAgentRestart), wait}}});
  add("/v1/agents/{agent}/status", {{"GET", {I(&InstanceHandlers::HandleAgentStatus)}}});
  add("/v1/agents/{agent}/commands/{command}",
      {{"POST", {I(&InstanceHandlers::HandleAgentCommand)}}});
  add("/v1/agents/{agent}/history",
      {{"GET", {R(&RecordHandlers::HandleAgentHistory), {"limit", "after"}}}});
  add("/v1/credentials/check", {{"POST", {R(&RecordHandlers::HandleCredentialCheck)}}});
  add("/v1/watch",
      {{"GET", {S(&Server::HandleWatch), {"project", "team", "initial", "kind", "since"}}}});
}

Server::~Server() { Stop(); }

Status Server::Init() {
  if (deps_.metrics != nullptr) {
    requests_total_ = &deps_.metrics->Counter("steward_api_requests_total",
                                              "API requests answered, by method, route and code.",
                                              {"method", "route", "code"});
    request_duration_ = &deps_.metrics->Histogram(
        "steward_api_request_duration_seconds",
        "Time from a request's arrival to its answer (to the start of a watch stream).",
        DefaultLatencyBuckets(), {"route"});
    list_sources_ = &deps_.metrics->Counter(
        "steward_api_list_reads_total",
        "Project lists and watch snapshots, by source: view (in memory, caught up with the "
        "store's last commit) or store (the view lagged or was being reloaded).",
        {"source"});
  }
  pool_ = std::make_unique<TaskPool>(options_.workers);
  credential_pool_ =
      std::make_unique<TaskPool>(options_.credential_workers, options_.credential_queue);
  scheduler_ = std::make_unique<Scheduler>("api-timers");
  records_ = std::make_unique<RecordHandlers>(*this, options_, deps_, *credential_pool_, stopping_);
  instances_ =
      std::make_unique<InstanceHandlers>(*this, options_, deps_, *pool_, *scheduler_, stopping_);

  WatchHub::Options hub;
  hub.window_events = options_.watch_window_events;
  hub.window_bytes = options_.watch_window_bytes;
  hub.keepalive = options_.keepalive;
  if (deps_.metrics != nullptr) {
    hub.ended = &deps_.metrics->Counter(
        "steward_watch_streams_ended_total",
        "Watch streams the server ended because they fell behind: slow_consumer (the client did "
        "not read) or fanout_behind (the fan-out fell behind the store's changes).",
        {"reason"});
    for (const char* reason : {"slow_consumer", "fanout_behind"}) hub.ended->Add({reason}, 0);
  }
  hub_ = std::make_unique<WatchHub>(deps_.store->FeedId(), hub, *pool_, *scheduler_,
                                    [this](const Stream& s) { return Snapshot(s); });
  // Listen first, then read: a change committed between the two is seen by the listener, and
  // the read does not overwrite newer knowledge (versions only move forward).
  listener_handle_ =
      deps_.store->AddListener([this](const store::ProjectChange& change) { OnChange(change); });
  // The streams count in the store's positions (the same on every replica sharing it): a change
  // delivered before this read already set the hub's position.
  ASSIGN_OR_RETURN(const int64_t last, deps_.store->LastPosition());
  hub_->Start(static_cast<uint64_t>(last));
  // Every record, rendered, for lists and snapshots; changes delivered meanwhile win.
  const auto load_begin = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(view_.Load(*deps_.store));
  LOG_INFO("api: {} records loaded into the list view in {} ms", view_.size(),
           std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 load_begin)
               .count());

  net::HttpServer::Options http = options_.http;
  // The server hands a request over the limit to Handle (body_too_large) without reading its
  // body, and sends no "100 Continue" for it: ours is the limit, per route (BodyLimit: the
  // files routes take larger bodies).
  http.max_body_bytes = options_.max_body_bytes;
  auto started = net::HttpServer::Start(http, *this);
  if (!started.ok()) {
    Stop();
    return started.error();
  }
  http_ = std::move(*started);
  LOG_INFO("api: serving on {}:{}", http.host, http_->port());
  if (options_.probe_http) {
    probe_handler_ = std::make_unique<ProbeHandler>(*this);
    net::HttpServer::Options probe = *options_.probe_http;
    probe.max_body_bytes = std::min<size_t>(probe.max_body_bytes, 64 * 1024);
    auto probe_started = net::HttpServer::Start(probe, *probe_handler_);
    if (!probe_started.ok()) {
      Stop();
      return Status(probe_started.error().code(),
                    "probe listener: " + probe_started.error().message());
    }
    probe_http_ = std::move(*probe_started);
    LOG_INFO("api: /healthz, /readyz and /metrics on {}:{}", probe.host, probe_http_->port());
  }
  return Status::Ok();
}

uint16_t Server::port() const { return http_ ? http_->port() : 0; }
uint16_t Server::probe_port() const { return probe_http_ ? probe_http_->port() : 0; }

void Server::Stop() {
  MutexLock stop_lock(stop_mu_);
  if (stopped_) return;
  stopped_ = true;
  stopping_ = true;
  // No more timers (a running one finishes first), then no more store deliveries.
  if (scheduler_) scheduler_->Stop();
  // Waits for a delivery under way.
  if (listener_handle_ >= 0) deps_.store->RemoveListener(listener_handle_);
  // Pending waits answer with the state they last saw.
  std::vector<std::shared_ptr<Waiter>> waiters;
  {
    MutexLock lock(wait_mu_);
    for (auto& [id, w] : waiters_) waiters.push_back(w);
  }
  for (auto& w : waiters) FinishWaiter(w, false);
  // The fan-out writes what the listener queued; the watch streams end cleanly.
  if (hub_) hub_->Stop();
  if (instances_) instances_->Stop();
  // Handlers in flight finish (they see stopping_): the credential writes first, whose answers
  // may post to the pool (a ?wait=).
  if (credential_pool_) credential_pool_->Join();
  if (pool_) pool_->Join();
  // Waiters registered by those last handlers.
  {
    MutexLock lock(wait_mu_);
    waiters.clear();
    for (auto& [id, w] : waiters_) waiters.push_back(w);
  }
  for (auto& w : waiters) FinishWaiter(w, false);
  if (probe_http_) probe_http_->Stop();
  if (http_) http_->Stop();
}

const Route* Server::Match(const std::vector<std::string>& segs,
                           std::vector<std::string>* params) const {
  for (const Route& r : routes_) {
    const bool rest = !r.segments.empty() && r.segments.back().ends_with("...}");
    if (rest ? segs.size() < r.segments.size() : r.segments.size() != segs.size()) continue;
    std::vector<std::string> p;
    bool ok = true;
    for (size_t i = 0; i < r.segments.size() && ok; ++i) {
      const std::string& want = r.segments[i];
      if (rest && i + 1 == r.segments.size()) {
        std::string joined;
        for (size_t j = i; j < segs.size(); ++j) joined += (j == i ? "" : "/") + segs[j];
        p.push_back(std::move(joined));
      } else if (want.size() > 2 && want.front() == '{' && want.back() == '}') {
        if (segs[i].empty()) ok = false;
        p.push_back(segs[i]);
      } else {
        ok = want == segs[i];
      }
    }
    if (ok) {
      *params = std::move(p);
      return &r;
    }
  }
  return nullptr;
}

bool Server::Authorized(const net::HttpRequest& request) const {
  std::string_view h = request.headers.Get("Authorization");
  constexpr std::string_view kScheme = "bearer ";
  if (h.size() <= kScheme.size() || AsciiLower(h.substr(0, kScheme.size())) != kScheme)
    return false;
  std::string_view token = h.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return ConstantTimeEquals(token, options_.token);
}

void Server::Handle(net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) {
  Dispatch(std::move(request), std::move(writer), /*probe=*/false);
}

const Route* Server::Resolve(const net::HttpRequest& request, bool probe,
                             std::optional<std::vector<std::string>>* segments,
                             std::vector<std::string>* params) const {
  // Routing works on the path as sent: "/v1/projects/a%2Fhistory" is not the history of "a".
  *segments = PathSegments(request.target);
  const Route* route = *segments ? Match(**segments, params) : nullptr;
  // With a probe listener, the open routes live there and only there.
  if (route != nullptr &&
      (probe ? !route->open : (route->open && options_.probe_http.has_value()))) {
    route = nullptr;
  }
  return route;
}

std::optional<ErrorAnswer> Server::AuthError(const net::HttpRequest& request, const Route* route,
                                             bool probe) const {
  const bool api_path = !probe && (request.path == "/v1" || request.path.starts_with("/v1/"));
  if (!((route == nullptr && api_path) || (route != nullptr && !route->open))) return std::nullopt;
  if (Authorized(request)) return std::nullopt;
  return MakeError(401, "Unauthorized",
                   request.headers.Has("Authorization")
                       ? "the bearer token is not valid"
                       : "an Authorization: Bearer <token> header is required");
}

std::optional<size_t> Server::BodyLimit(const net::HttpRequest& head) {
  std::optional<std::vector<std::string>> segments;
  std::vector<std::string> params;
  const Route* route = Resolve(head, /*probe=*/false, &segments, &params);
  return route != nullptr && route->large_body ? options_.max_file_bytes : options_.max_body_bytes;
}

std::optional<net::HttpResponse> Server::CheckHead(const net::HttpRequest& head) {
  // A request without the token is refused before its body is read (or "100 Continue" sent).
  std::optional<std::vector<std::string>> segments;
  std::vector<std::string> params;
  const Route* route = Resolve(head, /*probe=*/false, &segments, &params);
  auto refused = AuthError(head, route, /*probe=*/false);
  if (!refused) return std::nullopt;
  Call call;
  call.request.method = head.method;
  call.route = route ? route->pattern : "other";
  RecordMetrics(call, refused->status);
  net::HttpResponse r;
  r.status = refused->status;
  if (r.status == 401) r.headers = Challenge();
  r.headers.Set("Content-Type", "application/json");
  r.body = DumpJson(ErrorJson(*refused)) + "\n";
  return r;
}

void Server::Dispatch(net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer,
                      bool probe) {
  auto call = std::make_shared<Call>();
  call->request = std::move(request);
  call->writer = std::move(writer);
  const std::string& path = call->request.path;
  std::optional<std::vector<std::string>> segments;
  const Route* route = Resolve(call->request, probe, &segments, &call->params);
  call->route = route ? route->pattern : "other";
  if (stopping_) {
    ReplyError(call, MakeError(503, "Unavailable", "the server is stopping"));
    return;
  }
  if (auto refused = AuthError(call->request, route, probe)) {
    ReplyError(call, *refused, Challenge());
    return;
  }
  if (!segments) {
    ReplyError(
        call,
        MakeError(400, "BadPath",
                  "a path segment must not contain an escaped '/' (%2F): " +
                      std::string(call->request.target.substr(0, call->request.target.find('?')))));
    return;
  }
  if (route == nullptr && !probe && (path == "/ui" || path.starts_with("/ui/"))) {
    call->route = "/ui";
    HandleUi(call);
    return;
  }
  if (route == nullptr) {
    ReplyError(call, MakeError(404, "NotFound",
                               probe ? "this listener serves /healthz, /readyz and /metrics only"
                                     : "no such path: " + path));
    return;
  }
  auto it = route->methods.find(call->request.method);
  if (it == route->methods.end()) {
    std::string allow;
    for (const auto& [m, fn] : route->methods) allow += (allow.empty() ? "" : ", ") + m;
    net::Headers h;
    h.Set("Allow", allow);
    ReplyError(call,
               MakeError(405, "MethodNotAllowed",
                         call->request.method + " is not allowed on " + route->pattern +
                             " (allowed: " + allow + ")"),
               std::move(h));
    return;
  }
  const size_t limit = route->large_body ? options_.max_file_bytes : options_.max_body_bytes;
  if (call->request.body_too_large || call->request.body.size() > limit) {
    ReplyError(call, MakeError(413, "BodyTooLarge",
                               "the body is over " + std::to_string(limit) + " bytes" +
                                   (route->large_body ? " (the files limit, maxFileBytes)" : ""),
                               route->large_body ? "file" : ""));
    return;
  }
  if (auto bad = CheckQuery(call->request.query, it->second.params)) {
    ReplyError(call, *bad);
    return;
  }
  HandlerFn fn = it->second.fn;
  if (!pool_->Post([call, fn = std::move(fn)] { fn(call); })) {
    ReplyError(call, MakeError(503, "Unavailable", "the server is stopping"));
  }
}

namespace {

// The method label takes its value from a fixed set: a label copied from the request would let
// any client, authenticated or not, add series to /metrics without bound.
std::string MethodLabel(std::string_view method) {
  for (std::string_view known : {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}) {
    if (method == known) return std::string(known);
  }
  return "other";
}

}  // namespace

void Server::RecordMetrics(const Call& call, int status) {
  if (requests_total_ == nullptr) return;
  // route is a pattern or "other"; status is a code this server chose.
  requests_total_->Add({MethodLabel(call.request.method), call.route, std::to_string(status)});
  std::chrono::duration<double> d = std::chrono::steady_clock::now() - call.start;
  request_duration_->Observe({call.route}, d.count());
}

void Server::ReplyText(const CallPtr& call, int status, std::string body, std::string content_type,
                       net::Headers headers) {
  if (call->answered.exchange(true)) return;
  RecordMetrics(*call, status);
  net::HttpResponse r;
  r.status = status;
  r.headers = std::move(headers);
  r.headers.Set("Content-Type", std::move(content_type));
  r.body = std::move(body);
  call->writer->Send(std::move(r));
}

void Server::Reply(const CallPtr& call, int status, const Json& body, net::Headers headers) {
  ReplyText(call, status, DumpJson(body) + "\n", "application/json", std::move(headers));
}

void Server::ReplyError(const CallPtr& call, const ErrorAnswer& e, net::Headers headers) {
  Reply(call, e.status, ErrorJson(e), std::move(headers));
}

// ---- health ----

namespace {

std::string LowerTrim(std::string_view s) { return AsciiLower(TrimHttpWhitespace(s)); }

// application/json, optionally with charset=utf-8 (quoted or not).
bool IsJsonContentType(std::string_view ct) {
  size_t semi = ct.find(';');
  if (LowerTrim(ct.substr(0, semi)) != "application/json") return false;
  while (semi != std::string_view::npos) {
    std::string_view rest = ct.substr(semi + 1);
    size_t next = rest.find(';');
    std::string param = LowerTrim(rest.substr(0, next));
    if (!param.empty() && param != "charset=utf-8" && param != "charset=\"utf-8\"") return false;
    semi = next == std::string_view::npos ? next : semi + 1 + next;
  }
  return true;
}

}  // namespace

std::optional<Json> Server::ReadJsonBody(const CallPtr& call, bool required) {
  const net::HttpRequest& req = call->request;
  if (req.body.empty()) {
    if (!required) return Json::object();
    ReplyError(call,
               MakeError(400, "MalformedJson", "the body is empty; a JSON object is expected"));
    return std::nullopt;
  }
  std::string_view ct = req.headers.Get("Content-Type");
  if (!IsJsonContentType(ct)) {
    ReplyError(call, MakeError(415, "UnsupportedMediaType",
                               "the body must be application/json (got Content-Type \"" +
                                   std::string(ct) + "\")"));
    return std::nullopt;
  }
  auto parsed = ParseJson(req.body);
  if (!parsed.ok()) {
    ReplyError(
        call, MakeError(400, "MalformedJson", "the body is not JSON: " + parsed.error().message()));
    return std::nullopt;
  }
  if (!parsed->is_object()) {
    ReplyError(call, BadArgument("", "the body must be a JSON object"));
    return std::nullopt;
  }
  return std::move(*parsed);
}

bool Server::ViewCaughtUp() {
  if (view_.needs_reload() && !view_reloading_.exchange(true)) {
    const bool posted = pool_->Post([this] {
      if (Status s = view_.Load(*deps_.store); !s.ok()) {
        LOG_WARN("api: reloading the project view failed (lists read the store): {}", s.ToString());
      }
      view_reloading_ = false;
    });
    if (!posted) view_reloading_ = false;
  }
  auto last = deps_.store->LastPosition();
  const bool caught_up =
      last.ok() && view_.WaitFor(*last, std::chrono::steady_clock::now() + kViewCatchUp);
  if (list_sources_ != nullptr) list_sources_->Add({caught_up ? "view" : "store"});
  return caught_up;
}

ProjectView::ItemPtr Server::Rendered(const store::ProjectRecord& r) {
  return ProjectView::MakeItem(r, std::make_shared<const std::string>(DumpJson(ProjectJson(r))));
}

std::optional<std::vector<ProjectView::ItemPtr>> Server::ViewList(const store::ListFilter& filter) {
  if (!ViewCaughtUp()) return std::nullopt;
  return view_.List(filter);
}

void Server::HandleHealthz(const CallPtr& call) {
  ReplyText(call, 200, "ok\n", "text/plain; charset=utf-8");
}

void Server::HandleReadyz(const CallPtr& call) {
  Status s = deps_.ready ? deps_.ready() : Status::Ok();
  if (s.ok()) {
    ReplyText(call, 200, "ok\n", "text/plain; charset=utf-8");
  } else {
    ReplyText(call, 503, "not ready: " + s.message() + "\n", "text/plain; charset=utf-8");
  }
}

void Server::HandleMetrics(const CallPtr& call) {
  if (deps_.metrics == nullptr) {
    ReplyError(call, MakeError(404, "NotFound", "metrics are not enabled"));
    return;
  }
  ReplyText(call, 200, deps_.metrics->Text(), "text/plain; version=0.0.4; charset=utf-8");
}

// ---- the dashboard ----

void Server::HandleUi(const CallPtr& call) {
  const net::HttpRequest& request = call->request;
  net::Headers h;
  h.Set("Content-Security-Policy", std::string(kUiContentSecurityPolicy));
  h.Set("X-Content-Type-Options", "nosniff");
  h.Set("Referrer-Policy", "no-referrer");
  h.Set("X-Frame-Options", "DENY");
  // "/ui" and "/ui/" are the page; "/ui/<file>" one of its files (one segment, no directories).
  std::string_view name = std::string_view(request.path).substr(3);
  if (!name.empty()) name.remove_prefix(1);
  std::optional<UiAsset> asset;
  if (name.find('/') == std::string_view::npos) asset = FindUiAsset(name);
  if (!asset) {
    ReplyError(call, MakeError(404, "NotFound", "no such path: " + request.path), std::move(h));
    return;
  }
  if (request.method != "GET" && request.method != "HEAD") {
    h.Set("Allow", "GET, HEAD");
    ReplyError(
        call,
        MakeError(405, "MethodNotAllowed",
                  request.method + " is not allowed on " + request.path + " (allowed: GET, HEAD)"),
        std::move(h));
    return;
  }
  // Revalidated on every use (a new binary serves new files at once), cheaply with the tag.
  h.Set("Cache-Control", "no-cache");
  h.Set("ETag", std::string(asset->etag));
  if (request.headers.Get("If-None-Match") == asset->etag) {
    ReplyText(call, 304, "", std::string(asset->content_type), std::move(h));
    return;
  }
  ReplyText(call, 200, std::string(asset->body), std::string(asset->content_type), std::move(h));
}

// ---- ?wait= ----

void Server::AnswerOrWait(const CallPtr& call, const store::ProjectRecord& rec,
                          int immediate_status, int done_status,
                          std::optional<std::chrono::milliseconds> wait, bool until_purged) {
  if (!wait) {
    // The store's listener rendered this version into the view when the commit was delivered
    // (before the intent's call returned): the same text, not parsed and rendered again.
    if (auto item = view_.Find(rec.id); item != nullptr && item->version == rec.version) {
      ReplyText(call, immediate_status, *item->json + "\n", "application/json");
      return;
    }
    Reply(call, immediate_status, ProjectJson(rec));
    return;
  }
  auto w = std::make_shared<Waiter>();
  w->call = call;
  w->project_id = rec.id;
  w->generation = rec.generation;
  w->until_purged = until_purged;
  w->done_status = done_status;
  w->last = rec;
  w->last_version = rec.version;
  {
    MutexLock lock(wait_mu_);
    waiters_.emplace(rec.id, w);
  }
  // Registered before this read: a commit after the read reaches the waiter through the
  // listener; one before it is in the read.
  auto now = deps_.store->GetProject(rec.id);
  bool done = false;
  {
    MutexLock lock(wait_mu_);
    if (now.ok()) {
      if (now->version > w->last_version) {
        w->last = *now;
        w->last_version = now->version;
      }
      done = !until_purged && IsDone(*w->last, w->generation);
    } else if (now.error().code() == StatusCode::kNotFound) {
      done = until_purged;
    }
  }
  if (done || stopping_) {
    FinishWaiter(w, done);
    return;
  }
  auto task = scheduler_->Schedule(*wait, [this, w] { FinishWaiter(w, false); });
  {
    MutexLock lock(wait_mu_);
    if (!w->finished) w->timer = task;
  }
  // A client that leaves stops its wait at once (no entry lingers until the deadline). The
  // callback runs on an I/O thread and must not block: the clean-up runs on the pool.
  std::weak_ptr<Waiter> weak = w;
  call->writer->OnClose([this, weak] {
    if (auto waiter = weak.lock()) pool_->Post([this, waiter] { FinishWaiter(waiter, false); });
  });
}

void Server::FinishWaiter(const std::shared_ptr<Waiter>& w, bool done) {
  {
    MutexLock lock(wait_mu_);
    if (w->finished) return;
    w->finished = true;
    auto range = waiters_.equal_range(w->project_id);
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second == w) {
        waiters_.erase(it);
        break;
      }
    }
    if (w->timer != 0) scheduler_->Cancel(w->timer);
  }
  SendWaiterAnswer(w, done);
}

void Server::SendWaiterAnswer(const std::shared_ptr<Waiter>& w, bool done) {
  if (done && w->until_purged) {
    Reply(w->call, 200,
          Json{{"id", w->project_id}, {"name", w->last ? w->last->name : ""}, {"deleted", true}});
    return;
  }
  Reply(w->call, done ? w->done_status : 202, ProjectJson(*w->last));
}

// ---- store listener ----

void Server::OnChange(const store::ProjectChange& change) {
  // Waiters: decided on the delivered record, never by calling the store.
  std::vector<std::pair<std::shared_ptr<Waiter>, bool>> finished;
  {
    MutexLock lock(wait_mu_);
    auto range = waiters_.equal_range(change.project_id);
    for (auto it = range.first; it != range.second; ++it) {
      Waiter& w = *it->second;
      if (!change.record) {
        finished.emplace_back(it->second, w.until_purged);
        continue;
      }
      if (change.record->version <= w.last_version) continue;
      w.last = change.record;
      w.last_version = change.record->version;
      if (!w.until_purged && IsDone(*w.last, w.generation)) finished.emplace_back(it->second, true);
    }
  }
  for (auto& [w, done] : finished) FinishWaiter(w, done);

  // Rendered once, for the view (lists, snapshots) and the watch event.
  std::shared_ptr<const std::string> json;
  if (change.record)
    json = std::make_shared<const std::string>(DumpJson(ProjectJson(*change.record)));
  view_.Apply(change, json);

  hub_->Publish(change, json);
}

}  // namespace steward::api
