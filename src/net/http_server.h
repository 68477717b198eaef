// HttpServer: an HTTP/1.1 server (plain or TLS) on Boost.Beast, with keep-alive, chunked
// streaming responses and a bounded request body.
//
// Threading: `threads` I/O threads run every connection. Handler::Handle is called on an I/O
// thread and must not block for long; it answers through the ResponseWriter it is given, at
// once or later, from any thread. A connection handles one request at a time (no pipelining);
// the next request is read only after the previous response has been fully written.
//
// Lifecycle: Start() binds and starts serving; Stop() (idempotent, also run by the destructor)
// stops accepting, closes every connection (writers see closed() == true and their OnClose
// callbacks run) and joins the I/O threads. The Handler must outlive the server.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "net/http.h"

namespace steward::net {

// The reply channel of one request. Thread-safe. Exactly one of Send() or BeginStream()
// (followed by Write()* and End()) or Abort() must be called; later calls are ignored. A writer
// released without an answer sends 500 and closes the connection; an unfinished stream is aborted.
class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;
  // Sends a complete response (Content-Length is set by the server).
  virtual void Send(HttpResponse response) = 0;
  // Starts a chunked response; the headers must not carry Content-Length.
  virtual void BeginStream(int status, Headers headers) = 0;
  // Queues one chunk. Returns false when the connection is gone (the stream should stop).
  virtual bool Write(std::string data) = 0;
  // Ends a chunked response (writes the last chunk); the connection may then be reused.
  virtual void End() = 0;
  // Closes the connection at once without (completing) a response: a connection reset.
  virtual void Abort() = 0;
  // True once the peer has gone away or the server is stopping. Also true once this writer is
  // finished (after Send(), End() or Abort()): it can no longer write.
  virtual bool closed() const = 0;
  // Runs `callback` once when the connection closes or this writer is finished, whichever comes
  // first; at once (on the calling thread) if already so. Otherwise it runs on an I/O thread,
  // never inside a call to this writer's methods, and must not block.
  virtual void OnClose(std::function<void()> callback) = 0;
};

class Handler {
 public:
  virtual ~Handler() = default;
  virtual void Handle(HttpRequest request, std::shared_ptr<ResponseWriter> writer) = 0;
};

struct TlsConfig {
  std::string cert_chain_pem;  // serving certificate (then intermediates)
  std::string private_key_pem;
};

class HttpServer {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    uint16_t port = 0;  // 0 picks a free port
    std::optional<TlsConfig> tls;
    size_t max_body_bytes = 3 * 1024 * 1024;  // the Kubernetes API server's limit
    int threads = 2;
    // Idle keep-alive connections are closed after this long.
    std::chrono::seconds idle_timeout{120};
  };

  // Binds and starts serving. Fails with kUnavailable (address in use, bad host) or
  // kInvalidArgument (unusable certificate or key).
  static StatusOr<std::unique_ptr<HttpServer>> Start(const Options& options, Handler& handler);

  virtual ~HttpServer() = default;
  virtual uint16_t port() const = 0;
  // Open connections (for tests and metrics).
  virtual size_t connection_count() const = 0;
  // Must not be called from a Handler or an OnClose callback (it joins the I/O threads).
  virtual void Stop() = 0;
};

}  // namespace steward::net
