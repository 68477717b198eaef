// EndpointResolver: picks the pod that serves a request sent to a Service port, as kube-proxy
// (for the ingress) or the API server's service proxy would.
//
// The resolver keeps an index of Services and EndpointSlices (those labelled
// kubernetes.io/service-name), fed by storage watches, so a lookup costs a few hash-map probes
// and no JSON parsing. Resolution follows the API server's service proxy
// (pkg/registry/core/service/storage ResourceLocation):
//   - a port given by number selects the Service port with that `port`, whose name is then
//     used; none → kNoPort "no service port N found for service \"x\"";
//   - a port given by name (possibly "", the unnamed port of a single-port Service) selects
//     the EndpointSlice ports of that name; a name no Service port has → kNoPort;
//   - candidates are the slice endpoints with conditions.ready not false and a Pod targetRef,
//     chosen round-robin per Service; none → kNoEndpoints "no endpoints available for
//     service \"x\"".
//
// Thread-safety: all methods may be called concurrently from any thread.
// Lifecycle: Stop() (idempotent, run by the destructor) ends the watches.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cluster/ingress/watch_feed.h"
#include "cluster/storage/storage.h"
#include "common/mutex.h"
#include "common/status.h"

namespace steward::cluster::ingress {

// A Service port as a caller names it.
struct ServicePortRef {
  std::optional<int> number;  // when set, `name` is ignored
  std::string name;           // "" names the unnamed port

  // "80" → number 80; "web" → name; "" → the unnamed port.
  static ServicePortRef Parse(std::string_view text);
};

struct ResolvedEndpoint {
  std::string pod_namespace;
  std::string pod_name;
  std::string pod_uid;  // from the targetRef; may be empty
  std::string address;  // the endpoint's first address
  int port = 0;         // the target (container) port
};

struct ResolveError {
  enum class Kind { kNoService, kNoPort, kNoEndpoints };
  Kind kind;
  // The Kubernetes API server's message for the case (see the class comment);
  // for kNoService: services "x" not found.
  std::string message;
};

class EndpointResolver {
 public:
  // `storage` must outlive the resolver.
  static StatusOr<std::unique_ptr<EndpointResolver>> Create(Storage& storage);
  ~EndpointResolver();
  EndpointResolver(const EndpointResolver&) = delete;
  EndpointResolver& operator=(const EndpointResolver&) = delete;

  // `skip` lists pods ("ns/name") already tried for this request (a retry, as nginx's
  // proxy_next_upstream): they are passed over unless nothing else is left.
  Expected<ResolvedEndpoint, ResolveError> Resolve(std::string_view ns, std::string_view service,
                                                   const ServicePortRef& port,
                                                   const std::vector<std::string>& skip = {}) const;

  // True when the Service exists (as far as the index has seen).
  bool HasService(std::string_view ns, std::string_view service) const;

  void Stop();

 private:
  struct NamedPort {
    std::string name;
    int port = 0;
  };
  struct ServiceEntry {
    std::vector<NamedPort> ports;  // spec.ports: name and service port
  };
  struct Endpoint {
    std::string pod_namespace;
    std::string pod_name;
    std::string pod_uid;
    std::string address;
  };
  struct SliceEntry {
    std::string service_key;       // "ns/name" from the service-name label; "" if unlabelled
    std::vector<NamedPort> ports;  // ports[]: name and target port
    std::vector<Endpoint> ready;   // ready endpoints with a Pod targetRef
  };
  struct ServiceSlices {
    std::vector<std::string> slice_keys;
    mutable std::atomic<uint64_t> next{0};  // round-robin cursor
  };

  EndpointResolver() = default;
  void Apply(const WatchEvent& event);
  void ApplyService(const WatchEvent& event);
  void ApplySlice(const WatchEvent& event);
  void UnlinkSlice(const std::string& slice_key, const std::string& service_key) REQUIRES(mu_);

  std::unique_ptr<WatchFeed> feed_;

  mutable SharedMutex mu_;
  std::unordered_map<std::string, ServiceEntry> services_ GUARDED_BY(mu_);  // by "ns/name"
  std::unordered_map<std::string, SliceEntry> slices_ GUARDED_BY(mu_);      // by "ns/name"
  // By "ns/svc". Each ServiceSlices' `next` cursor is atomic: moved under a shared lock.
  std::unordered_map<std::string, std::unique_ptr<ServiceSlices>> by_service_ GUARDED_BY(mu_);
};

}  // namespace steward::cluster::ingress
