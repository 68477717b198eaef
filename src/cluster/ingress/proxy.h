// Proxy: the API server's `proxy` subresources of Services and Pods, answered by virtual pods.
//
//   /api/v1/namespaces/NS/services/ID/proxy[/PATH]   ID = NAME | NAME:PORT | SCHEME:NAME:PORT
//   /api/v1/namespaces/NS/pods/ID/proxy[/PATH]       SCHEME is "", "http" or "https"
//
// The REST handler parses the URL and calls ProxyToService/ProxyToPod with ID and the rest of
// the path after ".../proxy" verbatim ("" for ".../proxy", "/" for ".../proxy/", "/a/b").
// Behaviour and messages follow kube-apiserver:
//   - ID malformed → 400 BadRequest `invalid service request "ID"` / `invalid pod request`;
//   - Service or Pod absent → 404 NotFound Status (`services "x" not found`);
//   - Service port: a number selects the Service port with that `port` (none → 503
//     `no service port N found for service "x"`), a name (or "", the unnamed port) selects
//     the endpoint port of that name; no ready endpoint with it → 503
//     `no endpoints available for service "x"` (so a Service whose only port is named needs
//     the name in the ID, as on a real cluster);
//   - Pod port: a number, or (none given) the first declared container port, or 80; names
//     are not resolved (the API server dials "IP:name", which fails); a pod without
//     status.podIP → 400 `address not allowed`;
//   - a pod that does not answer (not Running/Ready, terminating, gone) → 503
//     `error trying to reach service: dial tcp IP:PORT: connect: connection refused`.
//     For a Service, an endpoint whose pod has stopped answering while its EndpointSlice
//     still lists it ready (the endpoints controller has not seen the deletion yet) is passed
//     over for the next ready one: a real container keeps serving for a moment after its pod
//     is marked for deletion, until it handles SIGTERM, and the endpoints controller drops it
//     in that moment, whereas a virtual pod stops at once. The 503 (naming the first
//     endpoint) comes only when no listed endpoint answers;
//   - GET/HEAD with nothing after "proxy" → 301 to the same path with a '/' appended;
//   - otherwise the pod's answer (status, headers, body) as is. The Authorization header is
//     not forwarded (the API server consumes it).
//
// Thread-safety: all methods may be called concurrently from any thread.
#pragma once

#include <string_view>

#include "cluster/ingress/endpoint_resolver.h"
#include "cluster/ingress/virtual_pods.h"
#include "cluster/storage/storage.h"
#include "net/http.h"

namespace steward::cluster::ingress {

class Proxy {
 public:
  // All three must outlive the proxy.
  Proxy(Storage& storage, EndpointResolver& resolver, VirtualPods& pods)
      : storage_(storage), resolver_(resolver), pods_(pods) {}

  net::HttpResponse ProxyToService(std::string_view ns, std::string_view id, std::string_view path,
                                   const net::HttpRequest& original) const;
  net::HttpResponse ProxyToPod(std::string_view ns, std::string_view id, std::string_view path,
                               const net::HttpRequest& original) const;
  // Dispatches on `resource` ("services" or "pods"; anything else: 404 NotFound path).
  net::HttpResponse Handle(std::string_view resource, std::string_view ns, std::string_view id,
                           std::string_view path, const net::HttpRequest& original) const;

 private:
  Storage& storage_;
  EndpointResolver& resolver_;
  VirtualPods& pods_;
};

}  // namespace steward::cluster::ingress
