// HttpClient: a small blocking HTTP/1.1 client (plain or TLS) over one keep-alive connection.
// Used by the engine's HTTP prober, instance operations (direct access), Steward's REST client
// (src/api_client), the torture run, the demo, benchmarks and tests; the Kubernetes client
// (src/kube) has its own pooled transport.
//
// Not thread-safe: use one client per thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "net/http.h"

namespace steward::net {

class HttpClient {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    uint16_t port = 0;
    bool tls = false;
    std::string ca_pem;  // trust anchor for TLS; empty with tls = system default paths
    bool insecure_skip_verify = false;
    std::string server_name;                   // SNI and name to verify; default `host`
    std::string bearer_token;                  // sent as "Authorization: Bearer ..." when non-empty
    std::chrono::milliseconds timeout{10000};  // per request
  };

  static std::unique_ptr<HttpClient> Create(const Options& options);
  virtual ~HttpClient() = default;

  // Sends one request and reads the whole response. Reconnects once if the kept-alive
  // connection was closed by the server. Fails with kUnavailable on connection errors and
  // kDeadlineExceeded on timeout.
  virtual StatusOr<HttpResponse> Request(const std::string& method, const std::string& target,
                                         const std::string& body = "",
                                         const Headers& headers = {}) = 0;

  // Sends a request and delivers the body as it arrives (for watches). `on_data` returns false
  // to stop reading; the call then returns with the status and headers received. The
  // connection is not reused after a stream. `timeout` bounds the whole call: when it passes
  // (even in the middle of the body) the call fails with kDeadlineExceeded; a connection error
  // in the middle of the body fails with kUnavailable.
  virtual StatusOr<HttpResponse> Stream(
      const std::string& method, const std::string& target,
      const std::function<bool(std::string_view)>& on_data, const Headers& headers = {},
      std::chrono::milliseconds timeout = std::chrono::milliseconds(30000)) = 0;
};

}  // namespace steward::net
