#include "instance/instance_ops.h"

#include <algorithm>
#include <future>
#include <map>
#include <string_view>
#include <thread>
#include <utility>

#include "common/ascii.h"
#include "common/fields.h"
#include "kube/client/api_error.h"
#include "kube/client/resource.h"
#include "kube/transport/transport.h"
#include "net/http.h"
#include "net/http_client.h"

namespace steward::instance {
namespace {

constexpr size_t kExcerptBytes = 200;
constexpr std::string_view kServiceNameLabel = "kubernetes.io/service-name";

bool IsDnsLabel(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
}

std::string Excerpt(std::string_view body) {
  if (body.empty()) return "(empty body)";
  if (body.size() <= kExcerptBytes) return std::string(body);
  return std::string(body.substr(0, kExcerptBytes)) + "...";
}

using net::Is2xx;

// A connection refused and a timeout mean the same to a caller here: the pod was not reached.
StatusCode UnreachableCode(StatusCode code) {
  return code == StatusCode::kDeadlineExceeded ? StatusCode::kUnavailable : code;
}

// The API server answers for itself (pod gone, dial failed, refused) with a v1 Status; a
// launcher's answer never has that shape, which is how the two are told apart through the proxy.
bool IsApiServerStatus(const std::string& body) {
  auto parsed = ParseJson(body);
  return parsed.ok() && parsed->is_object() && GetString(*parsed, "kind") == "Status" &&
         GetString(*parsed, "apiVersion") == "v1";
}

Status CheckCommand(const Json& command) {
  if (!command.is_object() || !command.contains("cmd") || !command["cmd"].is_string() ||
      command["cmd"].get<std::string>().empty()) {
    return InvalidArgument("command.cmd: must be a non-empty string in a JSON object");
  }
  return Status::Ok();
}

PodAnswer AnswerOf(const std::string& pod, int status, const std::string& body,
                   const Status& failure) {
  PodAnswer answer;
  answer.pod = pod;
  if (!failure.ok()) {
    answer.error = failure.message();
  } else {
    answer.status = status;
    auto parsed = ParseJson(body);
    if (parsed.ok()) answer.body = std::move(parsed).value();
  }
  return answer;
}

// Where an entry sorts: the real launcher's log entries carry ts as a string, epoch milliseconds
// followed by a 4-digit counter ("17961697536810001": lib/logBuffer.js makes entries of one
// millisecond distinct that way); its resources samples, the stand-in's entries and older
// launchers' carry a number of milliseconds. Anything else sorts as 0.
struct TsKey {
  double ms = 0;
  int seq = 0;
  bool operator<(const TsKey& o) const { return ms < o.ms || (ms == o.ms && seq < o.seq); }
};

TsKey TsOf(const Json& entry) {
  auto it = entry.find("ts");
  if (it == entry.end()) return {};
  if (it->is_number()) return {it->get<double>(), 0};
  if (!it->is_string()) return {};
  const std::string& s = it->get_ref<const std::string&>();
  if (s.size() <= 4 || s.size() > 24 ||
      !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return {};
  }
  TsKey key;
  for (size_t i = 0; i + 4 < s.size(); ++i) key.ms = key.ms * 10 + (s[i] - '0');
  for (size_t i = s.size() - 4; i < s.size(); ++i) key.seq = key.seq * 10 + (s[i] - '0');
  return key;
}

// A command that changes whether Node-RED runs: the launcher must get these one at a time.
bool IsLifecycleCommand(const std::string& method, const std::string& path,
                        const std::string& body) {
  if (method != "POST" || path != "/flowforge/command") return false;
  auto parsed = ParseJson(body);
  if (!parsed.ok() || !parsed->is_object()) return false;
  const std::string cmd = GetString(*parsed, "cmd");
  return cmd == "start" || cmd == "stop" || cmd == "restart" || cmd == "shutdown";
}

}  // namespace

InstanceOps::Request InstanceOps::GetRequest(std::string path, uint16_t port) {
  Request r;
  r.method = "GET";
  r.path = std::move(path);
  r.port = port;
  return r;
}

uint16_t InstanceOps::PortOf(const Request& request) const {
  return request.port != 0 ? request.port : options_.management_port;
}

InstanceOps::InstanceOps(std::shared_ptr<kube::Client> client, InstanceOptions options)
    : client_(std::move(client)), options_(std::move(options)) {}

StatusOr<std::vector<InstanceOps::Pod>> InstanceOps::ReadyPods(const std::string& service) const {
  if (options_.ns.empty()) return InvalidArgument("namespace: must not be empty");
  if (!IsDnsLabel(service)) {
    return InvalidArgument("service: \"" + service + "\" is not a DNS-1123 label");
  }
  std::optional<std::vector<Json>> cached;
  if (options_.cached_endpoint_slices) cached = options_.cached_endpoint_slices(service);
  std::vector<Json> listed;
  if (!cached) {
    kube::ListOptions list_options;
    list_options.label_selector = std::string(kServiceNameLabel) + "=" + service;
    auto slices = client_->ListAll(kube::ResourceType::EndpointSlice(), options_.ns, list_options);
    if (!slices.ok()) {
      const kube::ApiError& e = slices.error();
      return Status(e.code, "listing endpointslices of service " + service + ": " + e.ToString());
    }
    listed = std::move(slices->items);
  }
  std::map<std::string, std::string> ip_by_pod;  // ordered by name, deduplicated
  for (const Json& slice : cached ? *cached : listed) {
    const Json* endpoints = FindPath(slice, "endpoints");
    if (endpoints == nullptr || !endpoints->is_array()) continue;
    for (const Json& ep : *endpoints) {
      const Json* ready = FindPath(ep, "conditions.ready");
      if (ready != nullptr && ready->is_boolean() && !ready->get<bool>()) continue;
      const Json* ref = FindPath(ep, "targetRef");
      if (ref == nullptr || GetString(*ref, "kind") != "Pod") continue;
      std::string pod = GetString(*ref, "name");
      const Json* addresses = FindPath(ep, "addresses");
      if (pod.empty() || addresses == nullptr || !addresses->is_array() || addresses->empty() ||
          !(*addresses)[0].is_string()) {
        continue;
      }
      ip_by_pod.try_emplace(std::move(pod), (*addresses)[0].get<std::string>());
    }
  }
  if (ip_by_pod.empty()) {
    return FailedPrecondition("no ready pod for service " + service + " in namespace " +
                              options_.ns);
  }
  std::vector<Pod> pods;
  pods.reserve(ip_by_pod.size());
  for (auto& [name, ip] : ip_by_pod) pods.push_back({name, ip});
  return pods;
}

InstanceOps::Reply InstanceOps::Call(const Pod& pod, const std::string& method,
                                     const std::string& path, const std::string& body) const {
  Request request;
  request.method = method;
  request.path = path;
  request.body = body;
  return Call(pod, request);
}

namespace {

Status StillBusy(const std::string& pod, std::chrono::milliseconds timeout) {
  return Unavailable("pod " + pod +
                     ": an earlier start, stop or restart to this pod was still unanswered after " +
                     std::to_string(timeout.count()) + " ms");
}

}  // namespace

std::string InstanceOps::SlotKey(const std::string& pod) const {
  return "pod:" + options_.ns + "/" + pod;
}

Status InstanceOps::AcquireCommandSlot(const std::string& pod,
                                       std::chrono::steady_clock::time_point deadline,
                                       std::chrono::milliseconds timeout) const {
  CommandSlots& s = *slots_;
  {
    MutexLock lock(s.mu);
    if (!s.cv.WaitUntil(s.mu, deadline, [&]() REQUIRES(s.mu) { return s.busy.count(pod) == 0; })) {
      return StillBusy(pod, timeout);
    }
    s.busy.insert(pod);
  }
  if (!options_.shared_slots) return Status::Ok();
  Status shared = AcquireSharedSlot(pod, deadline, timeout);
  if (!shared.ok()) {
    {
      MutexLock lock(s.mu);
      s.busy.erase(pod);
    }
    s.cv.NotifyAll();
  }
  return shared;
}

Status InstanceOps::AcquireSharedSlot(const std::string& pod,
                                      std::chrono::steady_clock::time_point deadline,
                                      std::chrono::milliseconds timeout) const {
  using std::chrono::milliseconds;
  const std::string key = SlotKey(pod);
  // Held for the command's timeout and a margin: freed by the ttl if this process dies.
  const milliseconds ttl = timeout + milliseconds(2000);
  milliseconds pause(10);
  for (;;) {
    StatusOr<bool> taken = options_.shared_slots->take(key, ttl);
    if (!taken.ok()) {
      return Unavailable("pod " + pod + ": the command slot shared by Steward's replicas " +
                         "could not be taken: " + taken.error().message());
    }
    if (*taken) return Status::Ok();
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return StillBusy(pod, timeout);
    // Another process's command is in flight; it ends with an answer or its timeout.
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, milliseconds(200));
  }
}

void InstanceOps::ReleaseCommandSlot(const std::string& pod) const {
  if (options_.shared_slots) options_.shared_slots->release(SlotKey(pod));
  CommandSlots& s = *slots_;
  {
    MutexLock lock(s.mu);
    s.busy.erase(pod);
  }
  s.cv.NotifyAll();
}

InstanceOps::Reply InstanceOps::Call(const Pod& pod, const Request& request) const {
  if (!IsLifecycleCommand(request.method, request.path, request.body)) {
    return options_.access == Access::kProxy ? CallProxy(pod, request) : CallDirect(pod, request);
  }
  const auto timeout = request.timeout.count() > 0 ? request.timeout : options_.timeout;
  Status slot = AcquireCommandSlot(pod.name, std::chrono::steady_clock::now() + timeout, timeout);
  if (!slot.ok()) {
    Reply reply;
    reply.failure = slot;
    return reply;
  }
  Reply reply =
      options_.access == Access::kProxy ? CallProxy(pod, request) : CallDirect(pod, request);
  ReleaseCommandSlot(pod.name);
  return reply;
}

namespace {

// Collects a streamed body up to `max` bytes; past it, stops the read and says so.
struct BoundedBody {
  size_t max = 0;
  std::string data;
  bool over = false;
  bool Add(std::string_view chunk) {
    if (data.size() + chunk.size() > max) {
      over = true;
      return false;
    }
    data.append(chunk);
    return true;
  }
};

Status OverLimit(const std::string& pod, const std::string& method, const std::string& path,
                 size_t max) {
  return OutOfRange("pod " + pod + ": the answer to " + method + " " + path + " is over " +
                    std::to_string(max) + " bytes (the limit)");
}

}  // namespace

InstanceOps::Reply InstanceOps::CallProxy(const Pod& pod, const Request& req) const {
  const auto start = std::chrono::steady_clock::now();
  const auto timeout = req.timeout.count() > 0 ? req.timeout : options_.timeout;
  for (int attempt = 1;; ++attempt) {
    Reply reply = CallProxyOnce(pod, req);
    if (req.method != "GET" || !reply.api_server_5xx || attempt == 3 ||
        std::chrono::steady_clock::now() - start > timeout / 2) {
      return reply;
    }
    // A short pause before the next attempt (not synchronisation: the API server's blip).
    std::this_thread::sleep_for(std::chrono::milliseconds(50 * attempt));
  }
}

InstanceOps::Reply InstanceOps::CallProxyOnce(const Pod& pod, const Request& req) const {
  kube::TransportRequest request;
  request.method = req.method;
  request.target = "/api/v1/namespaces/" + net::PercentEncode(options_.ns) + "/pods/" +
                   net::PercentEncode(pod.name) + ":" + std::to_string(PortOf(req)) + "/proxy" +
                   req.path;
  request.body = req.body;
  if (!req.body.empty()) request.content_type = req.content_type;
  request.timeout = req.timeout.count() > 0 ? req.timeout : options_.timeout;
  // A 5xx through the proxy is the pod's (or the dial's) answer, not a flaky API server:
  // repeating it would only spend the caller's timeout, and a command must not run twice.
  request.retry = kube::RetryClass::kWrite;

  Reply reply;
  BoundedBody bounded{req.max_bytes};
  StatusOr<kube::TransportResponse> response =
      req.max_bytes == 0 ? client_->transport().Do(request)
                         : client_->transport().Stream(
                               request, [&](std::string_view d) { return bounded.Add(d); });
  if (!response.ok()) {
    const Status& s = response.error();
    reply.failure = Status(UnreachableCode(s.code()), "pod " + pod.name + ": " + s.message());
    return reply;
  }
  if (req.max_bytes != 0 && Is2xx(response->status)) {
    if (bounded.over) {
      reply.failure = OverLimit(pod.name, req.method, req.path, req.max_bytes);
      return reply;
    }
    response->body = std::move(bounded.data);
  }
  if (!Is2xx(response->status) && IsApiServerStatus(response->body)) {
    kube::ApiError e =
        kube::ApiErrorFromResponse(response->status, response->body, response->headers);
    if (response->status == 404 || response->status == 429 || response->status >= 500) {
      reply.failure = Unavailable("pod " + pod.name + ": " + e.message);
      reply.api_server_5xx = response->status >= 500;
    } else {
      // The request was checked before it was sent: the API server refusing to pass it on
      // (its body limit: 413; Steward's own credentials: 401/403) is a limit met on the way,
      // not the caller's fault, and is answered as a bad gateway naming it.
      reply.failure =
          OutOfRange("pod " + pod.name + ": the cluster's API server did not pass " + req.method +
                     " " + req.path + " (" + std::to_string(req.body.size()) +
                     " body bytes) on to the pod: " + e.ToString());
    }
    return reply;
  }
  if (req.max_bytes != 0 && response->body.size() > req.max_bytes) {
    reply.failure = OverLimit(pod.name, req.method, req.path, req.max_bytes);
    return reply;
  }
  reply.status = response->status;
  reply.content_type = std::string(response->headers.Get("Content-Type"));
  reply.body = std::move(response->body);
  return reply;
}

InstanceOps::Reply InstanceOps::CallDirect(const Pod& pod, const Request& req) const {
  net::HttpClient::Options client_options;
  if (options_.dial_override) {
    std::tie(client_options.host, client_options.port) =
        options_.dial_override(pod.ip, PortOf(req));
  } else {
    client_options.host = pod.ip;
    client_options.port = PortOf(req);
  }
  client_options.timeout = req.timeout.count() > 0 ? req.timeout : options_.timeout;
  auto client = net::HttpClient::Create(client_options);
  net::Headers headers;
  if (!req.body.empty()) headers.Set("Content-Type", req.content_type);
  headers.Set("Accept", "application/json");

  Reply reply;
  BoundedBody bounded{req.max_bytes};
  // A bounded read streams the body (HttpClient::Stream sends no body: bounded requests are
  // GETs, the only launcher answers that can be large).
  StatusOr<net::HttpResponse> response =
      req.max_bytes == 0 || !req.body.empty()
          ? client->Request(req.method, req.path, req.body, headers)
          : client->Stream(
                req.method, req.path, [&](std::string_view d) { return bounded.Add(d); }, headers,
                client_options.timeout);
  if (!response.ok()) {
    const Status& s = response.error();
    reply.failure = Status(UnreachableCode(s.code()),
                           "pod " + pod.name + " (" + client_options.host + ":" +
                               std::to_string(client_options.port) + "): " + s.message());
    return reply;
  }
  if (req.max_bytes != 0 && req.body.empty()) {
    if (bounded.over) {
      reply.failure = OverLimit(pod.name, req.method, req.path, req.max_bytes);
      return reply;
    }
    response->body = std::move(bounded.data);
  } else if (req.max_bytes != 0 && response->body.size() > req.max_bytes) {
    reply.failure = OverLimit(pod.name, req.method, req.path, req.max_bytes);
    return reply;
  }
  reply.status = response->status;
  reply.content_type = std::string(response->headers.Get("Content-Type"));
  reply.body = std::move(response->body);
  return reply;
}

InstanceOps::Reply InstanceOps::CallFirst(const std::vector<Pod>& pods, const Request& request,
                                          size_t* index) const {
  // The first pod (by name) that can be reached answers: an HA project stays answerable while
  // one of its pods is going away (the endpoints may lag the pod's deletion).
  size_t i = 0;
  Reply reply = Call(pods[0], request);
  while (reply.failure.code() == StatusCode::kUnavailable && i + 1 < pods.size()) {
    reply = Call(pods[++i], request);
  }
  *index = i;
  return reply;
}

std::vector<InstanceOps::Reply> InstanceOps::CallAll(const std::vector<Pod>& pods,
                                                     const std::string& method,
                                                     const std::string& path,
                                                     const std::string& body) const {
  std::vector<Reply> replies;
  replies.reserve(pods.size());
  if (pods.size() == 1) {
    replies.push_back(Call(pods[0], method, path, body));
    return replies;
  }
  // At most one thread per ready pod (a project has at most 10 replicas), each bounded by the
  // per-request timeout.
  std::vector<std::future<Reply>> futures;
  futures.reserve(pods.size());
  for (const Pod& pod : pods) {
    futures.push_back(std::async(std::launch::async, [this, &pod, &method, &path, &body] {
      return Call(pod, method, path, body);
    }));
  }
  for (auto& f : futures) replies.push_back(f.get());
  return replies;
}

StatusOr<InstanceOps::Answered> InstanceOps::CallFirstReady(const std::string& service,
                                                            const Request& request) const {
  ASSIGN_OR_RETURN(std::vector<Pod> pods, ReadyPods(service));
  size_t i = 0;
  Reply reply = CallFirst(pods, request, &i);
  if (!reply.failure.ok()) return reply.failure;
  return Answered{pods[i].name, std::move(reply)};
}

StatusOr<Json> InstanceOps::GetObjectFromFirst(const std::string& service,
                                               const Request& request) const {
  ASSIGN_OR_RETURN(Answered answered, CallFirstReady(service, request));
  const Reply& reply = answered.reply;
  const std::string what = "pod " + answered.pod + ": " + request.method + " " + request.path +
                           " answered HTTP " + std::to_string(reply.status);
  if (!Is2xx(reply.status)) return Aborted(what + ": " + Excerpt(reply.body));
  auto parsed = ParseJson(reply.body);
  if (!parsed.ok() || !parsed->is_object()) {
    return Aborted(what + " with a body that is not a JSON object: " + Excerpt(reply.body));
  }
  return std::move(parsed).value();
}

StatusOr<PodAnswer> InstanceOps::AnswerFromFirst(const std::string& service,
                                                 const Request& request) const {
  ASSIGN_OR_RETURN(Answered answered, CallFirstReady(service, request));
  const Reply& reply = answered.reply;
  return AnswerOf(answered.pod, reply.status, reply.body, reply.failure);
}

StatusOr<Json> InstanceOps::Info(const std::string& service) const {
  return GetObjectFromFirst(service, GetRequest("/flowforge/info"));
}

StatusOr<Json> InstanceOps::MergedFromEvery(
    const std::vector<Pod>& pods, const std::string& path, std::string_view shape,
    const std::function<const Json*(size_t index, const Json& answer)>& entries) const {
  std::vector<Reply> replies = CallAll(pods, "GET", path, "");
  std::vector<Json> merged;
  for (size_t i = 0; i < pods.size(); ++i) {
    const Pod& pod = pods[i];
    const Reply& reply = replies[i];
    if (!reply.failure.ok()) return reply.failure;
    const std::string what =
        "pod " + pod.name + ": GET " + path + " answered HTTP " + std::to_string(reply.status);
    if (!Is2xx(reply.status)) return Aborted(what + ": " + Excerpt(reply.body));
    auto parsed = ParseJson(reply.body);
    const Json* list = parsed.ok() ? entries(i, *parsed) : nullptr;
    const bool shaped =
        list != nullptr && list->is_array() &&
        std::all_of(list->begin(), list->end(), [](const Json& e) { return e.is_object(); });
    if (!shaped) {
      return Aborted(what + " with a body that is not " + std::string(shape) + ": " +
                     Excerpt(reply.body));
    }
    for (const Json& entry : *list) {
      merged.push_back(entry);
      merged.back()["pod"] = pod.name;
    }
  }
  std::stable_sort(merged.begin(), merged.end(),
                   [](const Json& a, const Json& b) { return TsOf(a) < TsOf(b); });
  Json out = Json::array();
  for (Json& entry : merged) out.push_back(std::move(entry));
  return out;
}

StatusOr<Json> InstanceOps::Logs(const std::string& service) const {
  ASSIGN_OR_RETURN(std::vector<Pod> pods, ReadyPods(service));
  return MergedFromEvery(pods, "/flowforge/logs", "a JSON array of objects",
                         [](size_t, const Json& answer) { return &answer; });
}

StatusOr<std::vector<PodAnswer>> InstanceOps::Command(const std::string& service,
                                                      const Json& command) const {
  RETURN_IF_ERROR(CheckCommand(command));
  ASSIGN_OR_RETURN(std::vector<Pod> pods, ReadyPods(service));
  std::vector<Reply> replies = CallAll(pods, "POST", "/flowforge/command", DumpJson(command));
  std::vector<PodAnswer> answers;
  answers.reserve(pods.size());
  for (size_t i = 0; i < pods.size(); ++i) {
    answers.push_back(
        AnswerOf(pods[i].name, replies[i].status, replies[i].body, replies[i].failure));
  }
  return answers;
}

StatusOr<PodAnswer> InstanceOps::CommandOne(const std::string& service, const Json& command) const {
  RETURN_IF_ERROR(CheckCommand(command));
  Request request;
  request.method = "POST";
  request.path = "/flowforge/command";
  request.body = DumpJson(command);
  return AnswerFromFirst(service, request);
}

StatusOr<Json> InstanceOps::Resources(const std::string& service) const {
  ASSIGN_OR_RETURN(std::vector<Pod> pods, ReadyPods(service));
  Json meta = Json::object();
  ASSIGN_OR_RETURN(
      Json merged,
      MergedFromEvery(pods, "/flowforge/resources", "{\"resources\": [objects]}",
                      [&meta](size_t index, const Json& answer) -> const Json* {
                        if (answer.is_array()) return &answer;  // launchers before {meta, ...}
                        if (!answer.is_object()) return nullptr;
                        if (index == 0 && answer.contains("meta") && answer["meta"].is_object()) {
                          meta = answer["meta"];
                        }
                        return FindPath(answer, "resources");
                      }));
  const size_t count = merged.size();
  Json names = Json::array();
  for (const Pod& pod : pods) names.push_back(pod.name);
  return Json{{"meta", std::move(meta)},
              {"resources", std::move(merged)},
              {"count", count},
              {"pods", std::move(names)}};
}

Status InstanceOps::WaitRunning(const Pod& pod,
                                std::chrono::steady_clock::time_point deadline) const {
  std::string last = "no answer yet";
  while (true) {
    Reply reply = Call(pod, "GET", "/flowforge/info", "");
    if (!reply.failure.ok()) {
      last = reply.failure.message();
    } else if (!Is2xx(reply.status)) {
      last = "GET /flowforge/info answered HTTP " + std::to_string(reply.status);
    } else {
      auto parsed = ParseJson(reply.body);
      std::string state = parsed.ok() && parsed->is_object() ? GetString(*parsed, "state") : "";
      if (state == "running") return Status::Ok();
      last = "state is \"" + state + "\"";
    }
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      return Status(StatusCode::kDeadlineExceeded,
                    "pod " + pod.name + ": not running again in time after restart (" + last + ")");
    }
    // Waiting on another process: asking again is the only way to see it change.
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(options_.restart_poll, deadline - now));
  }
}

StatusOr<std::vector<RestartStep>> InstanceOps::RestartEach(
    const std::string& service, std::chrono::milliseconds per_pod) const {
  ASSIGN_OR_RETURN(std::vector<Pod> pods, ReadyPods(service));
  std::vector<RestartStep> steps;
  bool failed = false;
  for (const Pod& pod : pods) {
    RestartStep step;
    step.pod = pod.name;
    if (failed) {
      step.outcome = "skipped";
      steps.push_back(std::move(step));
      continue;
    }
    const auto started = std::chrono::steady_clock::now();
    Request restart;
    restart.method = "POST";
    restart.path = "/flowforge/command";
    restart.body = R"({"cmd":"restart"})";
    restart.timeout = std::max(options_.timeout, per_pod);
    Reply reply = Call(pod, restart);
    PodAnswer answer = AnswerOf(pod.name, reply.status, reply.body, reply.failure);
    step.status = answer.status;
    step.body = std::move(answer.body);
    if (!reply.failure.ok()) {
      step.error = reply.failure.message();
    } else if (!Is2xx(reply.status)) {
      std::string why = step.body.is_object() ? GetString(step.body, "error") : "";
      if (why.empty() && step.body.is_object()) why = GetString(step.body, "err");
      step.error = "pod " + pod.name + ": restart answered HTTP " + std::to_string(reply.status) +
                   (why.empty() ? "" : ": " + why);
    } else if (Status s = WaitRunning(pod, started + per_pod); !s.ok()) {
      step.error = s.message();
    }
    step.elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - started)
                          .count();
    failed = !step.error.empty();
    step.outcome = failed ? "failed" : "restarted";
    steps.push_back(std::move(step));
  }
  return steps;
}

StatusOr<Json> InstanceOps::AgentStatus(const std::string& service) const {
  return GetObjectFromFirst(service, GetRequest("/api/v1/status", options_.agent_port));
}

StatusOr<PodAnswer> InstanceOps::AgentCommand(const std::string& service,
                                              std::string_view command) const {
  Request request;
  request.method = "POST";
  request.port = options_.agent_port;
  // The driver's sendBrokerAgentCommand: a restart is a start (the agent reconnects).
  if (command == "start" || command == "restart") {
    request.path = "/api/v1/commands/start";
  } else if (command == "stop") {
    request.path = "/api/v1/commands/stop";
  } else {
    return InvalidField("command", QuoteShort(command) + " is not one of start, restart, stop");
  }
  return AnswerFromFirst(service, request);
}

}  // namespace steward::instance
