#include "cluster/ingress/proxy.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include "cluster/apiserver/status_error.h"
#include "cluster/model/resource_types.h"
#include "common/ascii.h"

namespace steward::cluster::ingress {

namespace {

// How many listed endpoints a Service proxy request tries before it answers 503.
constexpr int kMaxStaleEndpoints = 3;

struct SchemeNamePort {
  std::string scheme;
  std::string name;
  std::string port;
};

// apimachinery's SplitSchemeNamePort.
std::optional<SchemeNamePort> SplitSchemeNamePort(std::string_view id) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t colon = id.find(':', start);
    parts.push_back(id.substr(start, colon == std::string_view::npos ? colon : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  SchemeNamePort out;
  switch (parts.size()) {
    case 1:
      out.name = parts[0];
      break;
    case 2:
      out.name = parts[0];
      out.port = parts[1];
      break;
    case 3:
      out.scheme = parts[0];
      out.name = parts[1];
      out.port = parts[2];
      break;
    default:
      return std::nullopt;
  }
  if (out.name.empty()) return std::nullopt;
  if (!out.scheme.empty() && out.scheme != "http" && out.scheme != "https") return std::nullopt;
  return out;
}

net::HttpResponse StatusResponse(const StatusError& error) {
  net::HttpResponse r;
  r.status = error.code;
  r.headers.Set("Content-Type", "application/json");
  r.body = DumpJson(error.ToStatus());
  return r;
}

const ResourceType& Services() {
  static const ResourceType* rt = FindResource("", "v1", "services");
  return *rt;
}

const ResourceType& Pods() {
  static const ResourceType* rt = FindResource("", "v1", "pods");
  return *rt;
}

std::string QueryString(const net::HttpRequest& r) {
  size_t q = r.target.find('?');
  return q == std::string::npos ? std::string() : r.target.substr(q);
}

// The 301 kube-apiserver sends for ".../proxy" without a trailing slash (issue #4958).
std::optional<net::HttpResponse> RedirectForEmptyPath(std::string_view path,
                                                      const net::HttpRequest& original) {
  if (!path.empty() || (original.method != "GET" && original.method != "HEAD")) {
    return std::nullopt;
  }
  if (!original.path.empty() && original.path.back() == '/') return std::nullopt;
  net::HttpResponse r;
  r.status = 301;
  r.headers.Set("Location", original.path + "/" + QueryString(original));
  return r;
}

// `path` (percent-decoded) as a request target again: each segment percent-encoded, so that what
// the client escaped (CR, LF, space, '?', '#') stays data on the wire to a process pod and can
// neither split the request line nor start a query.
std::string EncodedPath(std::string_view path) {
  std::string out;
  size_t start = 0;
  while (true) {
    const size_t slash = path.find('/', start);
    out += net::PercentEncode(path.substr(start, slash - start));
    if (slash == std::string_view::npos) break;
    out += '/';
    start = slash + 1;
  }
  return out;
}

// The request as the pod receives it.
net::HttpRequest Upstream(std::string_view path, const net::HttpRequest& original) {
  net::HttpRequest up;
  up.method = original.method;
  up.path =
      path.empty() ? "/" : (path.front() == '/' ? std::string(path) : "/" + std::string(path));
  up.query = original.query;
  up.target = EncodedPath(up.path) + QueryString(original);
  for (const auto& [k, v] : original.headers.fields()) {
    if (!AsciiEqualsIgnoreCase(k, "Authorization")) up.headers.Add(k, v);
  }
  up.body = original.body;
  up.remote_address = original.remote_address;
  up.tls = false;
  return up;
}

StatusError Unreachable(std::string_view address, int port) {
  return ServiceUnavailableError("error trying to reach service: dial tcp " + std::string(address) +
                                 ":" + std::to_string(port) + ": connect: connection refused");
}

}  // namespace

net::HttpResponse Proxy::ProxyToService(std::string_view ns, std::string_view id,
                                        std::string_view path,
                                        const net::HttpRequest& original) const {
  auto parts = SplitSchemeNamePort(id);
  if (!parts) {
    return StatusResponse(BadRequestError("invalid service request \"" + std::string(id) + "\""));
  }
  auto ep = resolver_.Resolve(ns, parts->name, ServicePortRef::Parse(parts->port));
  if (!ep.ok()) {
    if (ep.error().kind == ResolveError::Kind::kNoService) {
      return StatusResponse(NotFoundError(Services(), parts->name));
    }
    return StatusResponse(ServiceUnavailableError(ep.error().message));
  }
  if (auto redirect = RedirectForEmptyPath(path, original)) return *redirect;
  const net::HttpRequest upstream = Upstream(path, original);
  const ResolvedEndpoint first = *ep;
  std::vector<std::string> tried;  // "ns/name" of the endpoints whose pod did not answer
  for (int attempt = 0; attempt < kMaxStaleEndpoints; ++attempt) {
    std::string key = ep->pod_namespace + "/" + ep->pod_name;
    if (std::find(tried.begin(), tried.end(), key) != tried.end()) break;  // all listed tried
    tried.push_back(std::move(key));
    if (auto pod = storage_.Get("pods", ep->pod_namespace, ep->pod_name)) {
      auto answer = pods_.Serve(*pod, ep->port, upstream, ep->pod_uid);
      if (answer.ok()) return std::move(answer).value();
    }
    ep = resolver_.Resolve(ns, parts->name, ServicePortRef::Parse(parts->port), tried);
    if (!ep.ok()) break;
  }
  return StatusResponse(Unreachable(first.address, first.port));
}

net::HttpResponse Proxy::ProxyToPod(std::string_view ns, std::string_view id, std::string_view path,
                                    const net::HttpRequest& original) const {
  auto parts = SplitSchemeNamePort(id);
  if (!parts) {
    return StatusResponse(BadRequestError("invalid pod request \"" + std::string(id) + "\""));
  }
  auto record = storage_.Get("pods", ns, parts->name);
  if (!record) return StatusResponse(NotFoundError(Pods(), parts->name));
  Json pod = record->Parse();

  std::string port_text = parts->port;
  if (port_text.empty()) {
    const Json* containers = FindPath(pod, "spec.containers");
    if (containers != nullptr && containers->is_array()) {
      for (const Json& c : *containers) {
        auto ports = c.find("ports");
        if (ports != c.end() && ports->is_array() && !ports->empty()) {
          const Json& first = (*ports)[0];
          if (first.contains("containerPort") && first["containerPort"].is_number_integer()) {
            port_text = std::to_string(first["containerPort"].get<int>());
          }
          break;
        }
      }
    }
  }
  const std::string ip = GetString(pod.value("status", Json::object()), "podIP");
  if (ip.empty()) return StatusResponse(BadRequestError("address not allowed"));

  int port = 80;  // no port at all: the URL has none, so HTTP's default
  if (!port_text.empty()) {
    auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port <= 0 ||
        port > 65535) {
      return StatusResponse(
          ServiceUnavailableError("error trying to reach service: dial tcp: "
                                  "lookup tcp/" +
                                  port_text + ": unknown port"));
    }
  }
  if (auto redirect = RedirectForEmptyPath(path, original)) return *redirect;
  auto answer = pods_.Serve(pod, port, Upstream(path, original));
  if (!answer.ok()) return StatusResponse(Unreachable(ip, port));
  return std::move(answer).value();
}

net::HttpResponse Proxy::Handle(std::string_view resource, std::string_view ns, std::string_view id,
                                std::string_view path, const net::HttpRequest& original) const {
  if (resource == "services") return ProxyToService(ns, id, path, original);
  if (resource == "pods") return ProxyToPod(ns, id, path, original);
  return StatusResponse(NotFoundPathError(original.path));
}

}  // namespace steward::cluster::ingress
