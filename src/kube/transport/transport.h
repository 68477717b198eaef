// Transport: HTTPS to one Kubernetes API server. A pool of HTTP/1.1 keep-alive connections,
// per-request timeouts and cancellation, client-side flow control (QPS + burst token bucket),
// credentials from the RestConfig's provider (re-fetched after a 401), and retries that never
// repeat a write that may have applied:
//
//   | outcome                                   | reads (GET/HEAD) | writes (everything else) |
//   |-------------------------------------------|------------------|--------------------------|
//   | 429 (honours Retry-After)                 | retried          | retried (not applied)    |
//   | 5xx                                       | retried          | returned to the caller   |
//   | connection failed before the request left | retried          | retried                  |
//   | reset / timeout after the request left    | retried          | returned to the caller   |
//   | 401 once, credentials then refreshed      | retried once     | retried once             |
//
// Retries back off exponentially with jitter (options below), bounded by `max_retries` and the
// request's own deadline. Thread-safe: one Transport serves the whole process.
//
// Details of the table:
//  - "5xx" is 500, 502, 503, 504 and other 5xx except 501 and 505 (which no retry can fix).
//  - A Retry-After (seconds) on a retried 429/5xx replaces the backoff delay. When the wait
//    would end past the request's deadline the response is returned at once instead.
//  - "Before the request left" means: resolving, connecting, the proxy's CONNECT, the TLS
//    handshake, or a write that failed with no byte written. This is Go net/http's rule
//    (nothingWrittenError): a write is repeated on a new connection only when nothing of it
//    was written. Certificate and TLS protocol errors and a proxy's 4xx answer to CONNECT fail
//    at once (kUnavailable): no retry can fix them.
//  - Kept-alive connections are checked before reuse: one the server closed while it was idle
//    (readable: end of stream or TLS close_notify) is discarded and the request goes out on
//    another connection; that is not an attempt. If the server closes it in the instant between
//    that check and the request, the failure counts as "after the request left" (Go also does
//    not repeat a non-idempotent request on errServerClosedIdle): reads are retried, writes are
//    returned to the caller.
//  - A 401 is retried once after CredentialProvider::Invalidate(), not counted in max_retries.
//  - RetryClass::kNever: one attempt, whatever happens.
//  - The client-side rate limiter is consulted before every attempt; when its wait would pass
//    the deadline the call fails at once with kDeadlineExceeded.
//  - Each attempt takes the current Credentials from the provider; a change of client
//    certificate makes new connections use it (pooled ones made with the old one are dropped).
//  - Proxy: RestConfig::proxy_url for every host, else HTTPS_PROXY/https_proxy (HTTP_PROXY for
//    an http:// server) unless NO_PROXY/no_proxy matches or the host is localhost/loopback (Go's
//    ProxyFromEnvironment); an HTTP CONNECT tunnel, with Basic proxy credentials from the URL's
//    user info. Only http:// proxies.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "kube/config/rest_config.h"
#include "net/http.h"

namespace steward::kube {

// Cancels requests from another thread. A request holding a cancelled token fails with
// kCancelled as soon as possible (before sending, while waiting for the rate limiter or a
// retry delay, or by closing its connection mid-flight). Thread-safe.
class CancelToken {
 public:
  void Cancel();
  bool cancelled() const { return cancelled_.load(); }
  // Registers `fn` to run once on Cancel() (at once, on the calling thread, if already
  // cancelled; the id is then -1). Returns an id for Unsubscribe. `fn` runs under the token's
  // lock: it must not block nor call this token. After Unsubscribe(id) returns, `fn` is not
  // running and will not run.
  int Subscribe(std::function<void()> fn);
  void Unsubscribe(int id);

 private:
  std::atomic<bool> cancelled_{false};  // set under mu_, read without it by cancelled()
  Mutex mu_;
  int next_id_ GUARDED_BY(mu_) = 0;
  std::map<int, std::function<void()>> callbacks_ GUARDED_BY(mu_);
};

// Which retries are allowed for a request (see the table above).
enum class RetryClass {
  kRead,   // safe to repeat: retried on 429, 5xx and any connection error or timeout
  kWrite,  // retried only when known not to have applied: 429, connect failures, 401 refresh
  kNever,  // never retried
};

struct TransportRequest {
  std::string method;  // "GET", "POST", "PUT", "PATCH", "DELETE"
  // Path and query, starting with '/', relative to the server URL (its path prefix, if any, is
  // prepended by the transport): "/apis/apps/v1/namespaces/a/deployments?limit=500".
  std::string target;
  std::string body;
  std::string content_type;  // for requests with a body
  std::string accept = "application/json";
  Millis timeout{0};                    // whole call including retries; 0 = options' default
  std::shared_ptr<CancelToken> cancel;  // optional
  std::optional<RetryClass> retry;      // default: kRead for GET/HEAD, kWrite otherwise
};

struct TransportResponse {
  int status = 0;
  net::Headers headers;
  std::string body;  // for Stream(): only set when the status is not 2xx
  int attempts = 1;  // how many times the request was sent
};

struct TransportOptions {
  // Client-side flow control (token bucket). client-go's 5/10 is a known bottleneck; the
  // default here is generous. qps <= 0 disables the limiter.
  double qps = 200;
  int burst = 400;
  int max_retries = 5;  // attempts = 1 + retries
  Millis backoff_initial{100};
  Millis backoff_max{5000};
  Millis default_timeout{30000};
  Millis connect_timeout{5000};      // per connection: TCP connect, proxy CONNECT, TLS handshake
  size_t max_idle_connections = 32;  // kept-alive connections held in the pool
  std::string user_agent = "steward/0.1";
  // A larger response body fails the call with kFailedPrecondition (Stream() bodies with a
  // 2xx status are not limited).
  uint64_t max_response_bytes = 512ull << 20;
  // Deadlines and the rate limiter read this clock; waits and I/O run in real time.
  Clock* clock = nullptr;  // null = RealClock
};

struct TransportStats {
  uint64_t requests = 0;  // calls to Do/Stream
  uint64_t attempts = 0;  // requests sent on the wire
  uint64_t retries = 0;
  uint64_t throttled_429 = 0;
  uint64_t connections_opened = 0;
  uint64_t rate_limited_waits = 0;  // attempts that waited for the client-side limiter
  uint64_t stale_connections = 0;   // idle connections found closed by the server, discarded
  std::map<std::string, uint64_t> by_method;  // attempts by HTTP method
};

class Transport {
 public:
  // Fails with kInvalidArgument when the config is unusable (bad server URL, unreadable CA PEM,
  // bad client certificate), naming the problem.
  static StatusOr<std::shared_ptr<Transport>> Create(const RestConfig& config,
                                                     TransportOptions options = {});
  virtual ~Transport() = default;

  // Sends the request and reads the whole response. Every HTTP status (2xx, 4xx, 5xx) is a
  // response; a Status is returned only when no final response was obtained: kUnavailable
  // (connection failures, including TLS verification), kDeadlineExceeded, kCancelled,
  // kUnauthenticated (the credential provider failed, or its client certificate is unusable),
  // kFailedPrecondition (the body is larger than max_response_bytes). The message names the
  // method, the URL and the last cause.
  virtual StatusOr<TransportResponse> Do(const TransportRequest& request) = 0;

  // For watches: sends the request (with the same retries as Do until response headers arrive)
  // and, when the status is 2xx, passes the body to `on_data` as it arrives, in chunks of any
  // size. `on_data` returns false to stop; the call then returns OK with the response. A
  // connection error or the request's timeout in the middle of the body fails with
  // kUnavailable / kDeadlineExceeded. The connection is not reused afterwards.
  virtual StatusOr<TransportResponse> Stream(
      const TransportRequest& request, const std::function<bool(std::string_view)>& on_data) = 0;

  virtual TransportStats stats() const = 0;
  // The configuration's namespace and source, for callers that need them.
  virtual const RestConfig& config() const = 0;
  // Since when every attempt has failed (no answer: connection refused or cut, TLS, timeout; or
  // a 5xx server error), as the transport clock's Now(); nullopt while the last attempt got an
  // answer (any other status, 4xx included: the server is there; a stream is answered by its
  // head and by each piece of its body, as they come). What "the cluster cannot be
  // reached" is measured on (engine::EngineOptions::unreachable_grace). Cheap; any thread.
  virtual std::optional<SteadyTime> failing_since() const { return std::nullopt; }
  // While set, an attempt that failed (no answer, or a 5xx) is not retried, and a request
  // between two tries gives up at the end of its wait: the engine sets it while it declares the
  // cluster unreachable, so that runs in flight end at once instead of spending their whole
  // backoff on a cluster known to be gone (the informers' relists go on probing it, one attempt
  // each). A 429 is still retried (the server is there). Any thread.
  virtual void SetFailFast(bool) {}
};

}  // namespace steward::kube
