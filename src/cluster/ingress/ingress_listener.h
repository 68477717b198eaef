// The embedded cluster's ingress controller data plane: routes plain-HTTP requests by Host and
// path through the cluster's Ingress objects to virtual pods.
//
// IngressRouter holds the routing table, an index of every Ingress by host fed by a storage
// watch, and answers requests without any network (the listener and tests call Route()).
// Matching follows the networking.k8s.io/v1 rules as ingress-nginx applies them:
//   - the Host header (port stripped, case-insensitive) selects the rules of the Ingresses
//     naming that exact host; failing those, the wildcard "*.example.com" rules (one DNS label
//     only: "a.example.com", not "example.com" nor "a.b.example.com"); failing those, the
//     rules without a host;
//   - among those rules' paths the longest match wins, Exact before Prefix on a tie, then the
//     oldest Ingress. Prefix matches element-wise ("/foo" matches "/foo", "/foo/bar", not
//     "/foobar"; a trailing "/" in the rule is ignored); Exact compares the whole path;
//     ImplementationSpecific is treated as Prefix;
//   - no path matched: the spec.defaultBackend of an Ingress of the selected host rules, and
//     for hosts no rule names, that of an Ingress without rules (oldest first);
//   - the backend Service port (number or name) goes through the EndpointResolver; like
//     nginx's proxy_next_upstream, a pod that refuses the connection is skipped for the next
//     endpoint (up to 3 tries).
// Answers: 404 "default backend - 404" when nothing matches; 503 when the backend has no
// ready endpoint (or no such Service/port, as ingress-nginx does); 502 when every chosen pod
// refused; the pod's answer otherwise. Routed answers carry "X-Steward-Ingress: ns/name".
//
// WebSocket: a request asking for an upgrade whose backend pod is a process pod (the process
// runtime) is tunnelled to the process (ingress/websocket_tunnel.h) by the listener; virtual
// pods do not speak WebSocket and answer such a request as any other.
//
// Every existing Ingress is routed, whatever its ingressClassName and whether or not its
// status.loadBalancer has been written (the simulated load-balancer controller only decides
// when that status appears; traffic does not wait for it). Ingresses being deleted
// (deletionTimestamp set) are not routed: the controller drops them at once.
// Backends of kind `resource` are not supported and answer 503.
//
// Thread-safety: all methods may be called concurrently from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cluster/ingress/endpoint_resolver.h"
#include "cluster/ingress/virtual_pods.h"
#include "cluster/ingress/watch_feed.h"
#include "cluster/storage/storage.h"
#include "common/mutex.h"
#include "common/status.h"
#include "net/http.h"
#include "net/http_server.h"

namespace steward::cluster::ingress {

// Where a request goes, as decided by the Ingress rules alone.
struct IngressMatch {
  std::string ingress_namespace;
  std::string ingress_name;
  std::string service;  // empty for an unsupported (resource) backend
  ServicePortRef port;
};

class IngressRouter {
 public:
  // `storage` (ingresses are watched, pods read), `resolver` and `pods` must outlive the
  // router.
  static StatusOr<std::unique_ptr<IngressRouter>> Create(Storage& storage,
                                                         EndpointResolver& resolver,
                                                         VirtualPods& pods);
  ~IngressRouter();
  IngressRouter(const IngressRouter&) = delete;
  IngressRouter& operator=(const IngressRouter&) = delete;

  // The rule matching `host` (a Host header value; a port is stripped) and `path`.
  std::optional<IngressMatch> Match(std::string_view host, std::string_view path) const;
  // The complete answer to `request`.
  net::HttpResponse Route(const net::HttpRequest& request) const;
  // Where a WebSocket request goes when its backend is a process pod: the process's loopback
  // port and the pod ("ns/name"); nullopt otherwise (Route answers it then).
  std::optional<std::pair<uint16_t, std::string>> ProcessTarget(
      const net::HttpRequest& request) const;

  void Stop();

 private:
  enum class PathType { kPrefix, kExact };
  struct Backend {
    std::string service;  // empty: unsupported backend
    ServicePortRef port;
  };
  struct PathRule {
    std::string path;  // trailing '/' removed for Prefix (except "/")
    PathType type = PathType::kPrefix;
    Backend backend;
  };
  struct HostRule {
    std::string host;  // lower case; "" = every host; "*.example.com" = wildcard
    std::vector<PathRule> paths;
  };
  struct IngressEntry {
    std::string ns;
    std::string name;
    std::string order;  // creationTimestamp + key: oldest first
    std::vector<HostRule> rules;
    std::optional<Backend> default_backend;
  };
  using Bucket = std::vector<const IngressEntry*>;  // sorted by `order`

  IngressRouter(Storage& storage, EndpointResolver& resolver, VirtualPods& pods);
  void Apply(const WatchEvent& event);
  void Unindex(const IngressEntry& entry) REQUIRES(mu_);
  void Index(const IngressEntry& entry) REQUIRES(mu_);
  static void AddToBucket(Bucket& bucket, const IngressEntry* entry);
  static void RemoveFromBucket(std::unordered_map<std::string, Bucket>& map, const std::string& key,
                               const IngressEntry* entry);

  Storage& storage_;
  EndpointResolver& resolver_;
  VirtualPods& pods_;
  std::unique_ptr<WatchFeed> feed_;

  mutable SharedMutex mu_;
  std::map<std::string, std::unique_ptr<IngressEntry>> ingresses_ GUARDED_BY(mu_);  // "ns/name"
  std::unordered_map<std::string, Bucket> exact_ GUARDED_BY(mu_);                   // by host
  std::unordered_map<std::string, Bucket> wildcard_ GUARDED_BY(mu_);  // suffix after "*."
  Bucket any_host_ GUARDED_BY(mu_);   // Ingresses with a rule without host
  Bucket catch_all_ GUARDED_BY(mu_);  // Ingresses without rules, with a defaultBackend
};

// IngressListener: an HTTP server whose every request goes through an IngressRouter.
// Lifecycle: Stop() (idempotent, run by the destructor) stops the server.
class IngressListener : private net::Handler {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    uint16_t port = 0;  // 0 picks a free port
    int threads = 2;
  };
  // `router` must outlive the listener.
  static StatusOr<std::unique_ptr<IngressListener>> Start(IngressRouter& router,
                                                          const Options& options);
  ~IngressListener() override;

  uint16_t port() const;
  void Stop();

 private:
  explicit IngressListener(IngressRouter& router) : router_(router) {}
  void Handle(net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) override;

  IngressRouter& router_;
  std::unique_ptr<net::HttpServer> server_;
};

}  // namespace steward::cluster::ingress
