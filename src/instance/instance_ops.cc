#include "instance/instance_ops.h"

#include <algorithm>
#include <future>
#include <map>
#include <string_view>
#include <utility>

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

bool Is2xx(int status) { return status >= 200 && status < 300; }

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

double TsOf(const Json& entry) {
  auto it = entry.find("ts");
  if (it == entry.end() || !it->is_number()) return 0;
  return it->get<double>();
}

}  // namespace

InstanceOps::InstanceOps(std::shared_ptr<kube::Client> client, InstanceOptions options)
    : client_(std::move(client)), options_(std::move(options)) {}

StatusOr<std::vector<InstanceOps::Pod>> InstanceOps::ReadyPods(const std::string& service) const {
  if (options_.ns.empty()) return InvalidArgument("namespace: must not be empty");
  if (!IsDnsLabel(service)) {
    return InvalidArgument("service: \"" + service + "\" is not a DNS-1123 label");
  }
  kube::ListOptions list_options;
  list_options.label_selector = std::string(kServiceNameLabel) + "=" + service;
  auto slices = client_->ListAll(kube::ResourceType::EndpointSlice(), options_.ns, list_options);
  if (!slices.ok()) {
    const kube::ApiError& e = slices.error();
    return Status(e.code, "listing endpointslices of service " + service + ": " + e.ToString());
  }
  std::map<std::string, std::string> ip_by_pod;  // ordered by name, deduplicated
  for (const Json& slice : slices->items) {
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
  return options_.access == Access::kProxy ? CallProxy(pod, method, path, body)
                                           : CallDirect(pod, method, path, body);
}

InstanceOps::Reply InstanceOps::CallProxy(const Pod& pod, const std::string& method,
                                          const std::string& path, const std::string& body) const {
  kube::TransportRequest request;
  request.method = method;
  request.target = "/api/v1/namespaces/" + net::PercentEncode(options_.ns) + "/pods/" +
                   net::PercentEncode(pod.name) + ":" + std::to_string(options_.management_port) +
                   "/proxy" + path;
  request.body = body;
  if (!body.empty()) request.content_type = "application/json";
  request.timeout = options_.timeout;
  // A 5xx through the proxy is the pod's (or the dial's) answer, not a flaky API server:
  // repeating it would only spend the caller's timeout, and a command must not run twice.
  request.retry = kube::RetryClass::kWrite;

  Reply reply;
  auto response = client_->transport().Do(request);
  if (!response.ok()) {
    const Status& s = response.error();
    reply.failure = Status(UnreachableCode(s.code()), "pod " + pod.name + ": " + s.message());
    return reply;
  }
  if (!Is2xx(response->status) && IsApiServerStatus(response->body)) {
    kube::ApiError e =
        kube::ApiErrorFromResponse(response->status, response->body, response->headers);
    if (response->status == 404 || response->status >= 500) {
      reply.failure = Unavailable("pod " + pod.name + ": " + e.message);
    } else {
      reply.failure = Status(e.code, "pod " + pod.name + ": " + e.ToString());
    }
    return reply;
  }
  reply.status = response->status;
  reply.body = std::move(response->body);
  return reply;
}

InstanceOps::Reply InstanceOps::CallDirect(const Pod& pod, const std::string& method,
                                           const std::string& path, const std::string& body) const {
  net::HttpClient::Options client_options;
  if (options_.dial_override) {
    std::tie(client_options.host, client_options.port) = options_.dial_override(pod.ip);
  } else {
    client_options.host = pod.ip;
    client_options.port = options_.management_port;
  }
  client_options.timeout = options_.timeout;
  auto client = net::HttpClient::Create(client_options);
  net::Headers headers;
  if (!body.empty()) headers.Set("Content-Type", "application/json");
  headers.Set("Accept", "application/json");

  Reply reply;
  auto response = client->Request(method, path, body, headers);
  if (!response.ok()) {
    const Status& s = response.error();
    reply.failure = Status(UnreachableCode(s.code()),
                           "pod " + pod.name + " (" + client_options.host + ":" +
                               std::to_string(client_options.port) + "): " + s.message());
    return reply;
  }
  reply.status = response->status;
  reply.body = std::move(response->body);
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

StatusOr<Json> InstanceOps::Info(const std::string& service) const {
  ASSIGN_OR_RETURN(std::vector<Pod> pods, ReadyPods(service));
  // The first pod (by name) that can be reached answers: an HA project stays answerable while
  // one of its pods is going away (the endpoints may lag the pod's deletion).
  size_t i = 0;
  Reply reply = Call(pods[0], "GET", "/flowforge/info", "");
  while (reply.failure.code() == StatusCode::kUnavailable && i + 1 < pods.size()) {
    reply = Call(pods[++i], "GET", "/flowforge/info", "");
  }
  const Pod& pod = pods[i];
  if (!reply.failure.ok()) return reply.failure;
  if (!Is2xx(reply.status)) {
    return Aborted("pod " + pod.name + ": GET /flowforge/info answered HTTP " +
                   std::to_string(reply.status) + ": " + Excerpt(reply.body));
  }
  auto parsed = ParseJson(reply.body);
  if (!parsed.ok() || !parsed->is_object()) {
    return Aborted("pod " + pod.name + ": GET /flowforge/info answered HTTP " +
                   std::to_string(reply.status) +
                   " with a body that is not a JSON object: " + Excerpt(reply.body));
  }
  return std::move(parsed).value();
}

StatusOr<Json> InstanceOps::Logs(const std::string& service) const {
  ASSIGN_OR_RETURN(std::vector<Pod> pods, ReadyPods(service));
  std::vector<Reply> replies = CallAll(pods, "GET", "/flowforge/logs", "");
  std::vector<Json> entries;
  for (size_t i = 0; i < pods.size(); ++i) {
    const Pod& pod = pods[i];
    Reply& reply = replies[i];
    if (!reply.failure.ok()) return reply.failure;
    if (!Is2xx(reply.status)) {
      return Aborted("pod " + pod.name + ": GET /flowforge/logs answered HTTP " +
                     std::to_string(reply.status) + ": " + Excerpt(reply.body));
    }
    auto parsed = ParseJson(reply.body);
    bool shaped =
        parsed.ok() && parsed->is_array() &&
        std::all_of(parsed->begin(), parsed->end(), [](const Json& e) { return e.is_object(); });
    if (!shaped) {
      return Aborted("pod " + pod.name + ": GET /flowforge/logs answered HTTP " +
                     std::to_string(reply.status) +
                     " with a body that is not a JSON array of objects: " + Excerpt(reply.body));
    }
    for (Json& entry : *parsed) {
      entry["pod"] = pod.name;
      entries.push_back(std::move(entry));
    }
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Json& a, const Json& b) { return TsOf(a) < TsOf(b); });
  Json merged = Json::array();
  for (Json& entry : entries) merged.push_back(std::move(entry));
  return merged;
}

StatusOr<std::vector<PodAnswer>> InstanceOps::Command(const std::string& service,
                                                      const Json& command) const {
  if (!command.is_object() || !command.contains("cmd") || !command["cmd"].is_string() ||
      command["cmd"].get<std::string>().empty()) {
    return InvalidArgument("command.cmd: must be a non-empty string in a JSON object");
  }
  ASSIGN_OR_RETURN(std::vector<Pod> pods, ReadyPods(service));
  std::vector<Reply> replies = CallAll(pods, "POST", "/flowforge/command", DumpJson(command));
  std::vector<PodAnswer> answers;
  answers.reserve(pods.size());
  for (size_t i = 0; i < pods.size(); ++i) {
    PodAnswer answer;
    answer.pod = pods[i].name;
    Reply& reply = replies[i];
    if (!reply.failure.ok()) {
      answer.error = reply.failure.message();
    } else {
      answer.status = reply.status;
      auto parsed = ParseJson(reply.body);
      if (parsed.ok()) answer.body = std::move(parsed).value();
    }
    answers.push_back(std::move(answer));
  }
  return answers;
}

}  // namespace steward::instance
