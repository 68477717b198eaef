// HttpServer: an HTTP/1.1 server (plain or TLS) on Boost.Beast, with keep-alive, chunked
// streaming responses and a bounded request body.
//
// Threading: `threads` I/O threads run every connection. Handler::Handle is called on an I/O
// thread and must not block for long; it answers through the ResponseWriter it is given, at
// once or later, from any thread. A connection handles one request at a time (no pipelining);
// the next request is read only after the previous response has been fully written.
//
// Framing (RFC 9112, see net/request_framer.h): an ambiguous length (odd Transfer-Encoding, with
// Content-Length, differing Content-Lengths), obs-fold, no Host (HTTP/1.1), two Host or two
// Authorization fields: 400 or 501, connection closed; "Expect: 100-continue" is answered with
// "100 Continue" before the body is read (or the refusal at once: 417 for another expectation,
// the handler's answer with body_too_large when the Content-Length is over the limit, a
// Handler::CheckHead refusal); a head over 1 MiB, or a field (trailers too) over 64 KiB: 431.
//
// Limits: at most Options::max_connections connections are open, and at most
// max_connections_per_client from one client (its IP address; an IPv4-mapped IPv6 address counts
// as the IPv4 one); one beyond either gets a short 503 and is closed at once. A request's head must
// arrive within read_header_timeout and the whole request within read_timeout, both from its first
// byte (the first request: from the connection's start, so a new connection that sends nothing is
// closed after the smallest of the three timeouts); otherwise the client gets 408 and the
// connection is closed. Waiting for the next request on a kept-alive connection is bounded by
// idle_timeout.
//
// WebSocket (net/websocket.h): a handler may turn a request that asks for an upgrade into a
// WebSocket with ResponseWriter::AcceptWebSocket, once the request has passed CheckHead like any
// other and the handler has answered nothing else. While such a request is being handled, the
// server does not read ahead on its connection (a peer that leaves then is noticed once the
// answer is written). An accepted socket counts as one open connection (max_connections) and
// keeps its own timeouts (WebSocketOptions) instead of the HTTP ones.
//
// Lifecycle: Start() binds and starts serving; Stop() (idempotent, also run by the destructor)
// stops accepting, closes every connection (writers see closed() == true and their OnClose
// callbacks run; a WebSocket gets a close frame 1001 "the server is stopping" after what it has
// queued, and at most a second for its closing handshake) and joins the I/O threads. The
// Handler must outlive the server.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "net/http.h"
#include "net/websocket.h"

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
  // Bytes queued on this writer's connection and not yet written to its socket: it grows while
  // the peer does not read (once the kernel's buffers are full). 0 once the writer is finished.
  // For a stream's producer to notice a client that does not keep up.
  virtual size_t pending_bytes() const = 0;
  // Runs `callback` once when the connection closes or this writer is finished, whichever comes
  // first; at once (on the calling thread) if already so. Otherwise it runs on an I/O thread,
  // never inside a call to this writer's methods, and must not block.
  virtual void OnClose(std::function<void()> callback) = 0;
  // Answers the request by upgrading its connection to a WebSocket (instead of Send() or
  // BeginStream()). The request must pass CheckWebSocketHandshake (net/websocket.h) and nothing
  // may follow it on the connection before the answer; otherwise that refusal (400 or 426) is sent
  // as by Send() and nullptr returned. Also nullptr, sending nothing, when this writer is finished
  // or its connection gone. On success the writer is finished (closed() is true, its OnClose
  // callbacks run) and the connection belongs to the returned socket: the server writes the 101
  // answer (Beast's websocket accept), then what the socket's Send() queued.
  virtual std::shared_ptr<WebSocket> AcceptWebSocket(WebSocketOptions options = {}) = 0;
};

class Handler {
 public:
  virtual ~Handler() = default;
  virtual void Handle(HttpRequest request, std::shared_ptr<ResponseWriter> writer) = 0;
  // Called once a request's head has been read, before its body is (and before "100 Continue"
  // is sent): returning a response refuses the request from its head alone (say 401 for a
  // missing token): it is sent instead of calling Handle, and the connection is closed when a
  // body follows (it is never read). `head` has an empty body. Not called for a request whose
  // Content-Length is over the body limit (Handle gets it with body_too_large). Runs on an I/O
  // thread and must not block. The default accepts every head.
  virtual std::optional<HttpResponse> CheckHead(const HttpRequest& head) {
    (void)head;
    return std::nullopt;
  }
  // The most body bytes this request may carry, decided from its head (`head` as for CheckHead)
  // before CheckHead and before a body byte is read; nullopt: Options::max_body_bytes. A larger
  // body is not read: Handle gets the request with body_too_large set. A route that takes
  // uploads allows more here than the rest of the handler. Runs on an I/O thread and must not
  // block.
  virtual std::optional<size_t> BodyLimit(const HttpRequest& head) {
    (void)head;
    return std::nullopt;
  }
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
    // A request's body limit unless Handler::BodyLimit says otherwise.
    size_t max_body_bytes = 3 * 1024 * 1024;  // the Kubernetes API server's limit
    int threads = 2;
    // Idle keep-alive connections are closed after this long.
    std::chrono::seconds idle_timeout{120};
    // Open connections at most (lingering closes included). 512 stays well below the usual
    // soft open-file limit of 1024, leaving descriptors for the store, the cluster client and
    // the other listeners of the process when a flood reaches the cap; raise both together.
    size_t max_connections = 512;
    // Open connections of one client (IP address) at most: one client's sockets, idle or not,
    // cannot take the whole of max_connections from everyone else. The cap in force is the
    // smaller of this and max_connections. Raise it for a known client that needs many (a
    // benchmark's watchers, a proxy in front of Steward that all traffic comes through).
    size_t max_connections_per_client = 256;
    // A request's head must be complete this long after its first byte (Go's ReadHeaderTimeout).
    std::chrono::milliseconds read_header_timeout{std::chrono::seconds(10)};
    // The whole request (head and body) must be read this long after its first byte.
    std::chrono::milliseconds read_timeout{std::chrono::seconds(60)};
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
