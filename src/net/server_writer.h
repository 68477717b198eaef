// The handler's side of what HttpServer's sessions hand out: Writer, the ResponseWriter of one
// HTTP/1.1 request (a whole response, or a stream in chunks), and WebSocketImpl, an accepted
// WebSocket; and SessionBase, the interface of the connection they talk to. They frame what the
// handler gives them (status line, fields, Content-Length or chunks, Connection) and hand the
// bytes to the session, which writes them on its strand. Internal to net/ (http_server.cc).
//
// Threading: every public method may be called from any thread; each object's state is under its
// own mutex, and nothing is written to a socket here. Ownership: a Writer and a WebSocketImpl
// share their session until the response is complete or the connection closes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "net/http.h"
#include "net/http_server.h"
#include "net/websocket.h"

namespace steward::net::server {

// How the session writes bytes a writer hands it: part of a response, its end (the connection
// then kept alive or closed), or an abort (closed at once, anything unsent dropped).
enum class WriteKind { kPart, kEndKeepAlive, kEndClose, kAbort };

// What framing a response needs, fixed when the request is read.
struct RequestInfo {
  bool head = false;
  bool http10 = false;
  bool keep_alive = true;
  // The request is an acceptable WebSocket handshake (AcceptWebSocket may upgrade it)...
  bool websocket = false;
  // ... or, when it asked for one, why not.
  std::optional<WebSocketRefusal> websocket_refusal;
};

class WebSocketImpl;

// The session interface the writer and the WebSocket see.
class SessionBase {
 public:
  virtual ~SessionBase() = default;
  // Thread-safe: turns the connection into `socket`'s (the request was an acceptable handshake);
  // the 101 answer goes out on the strand.
  virtual void StartWebSocket(std::shared_ptr<WebSocketImpl> socket, WebSocketOptions options) = 0;
  // Thread-safe: queues one text or binary message of the WebSocket (counted in queued_bytes at
  // once).
  virtual void WsSend(std::string message, bool binary) = 0;
  // Thread-safe: closes the WebSocket with a close frame after what is queued (`drop_queued`: the
  // messages not yet being written are dropped first).
  virtual void WsClose(uint16_t code, std::string reason, bool drop_queued) = 0;
  // Thread-safe: hands `bytes` to the connection's strand, in call order per calling thread.
  virtual void Enqueue(std::string bytes, WriteKind kind) = 0;
  // Thread-safe: closes the connection (server shutdown).
  virtual void PostClose() = 0;
  // Thread-safe: runs `callbacks` on the connection's strand.
  virtual void PostCallbacks(std::vector<std::function<void()>> callbacks) = 0;
  size_t queued_bytes() const { return queued_bytes_.load(std::memory_order_relaxed); }

 protected:
  std::atomic<size_t> queued_bytes_{0};
};

// A whole response with a plain-text body and "Connection: close" (the server's own refusals).
std::string SimpleResponse(int status, std::string_view text);

// The handler's side of an accepted WebSocket: checks and bookkeeping under its lock, every
// socket operation posted to the connection's strand.
class WebSocketImpl final : public WebSocket {
 public:
  WebSocketImpl(std::shared_ptr<SessionBase> session, size_t max_queued_bytes)
      : session_(std::move(session)), max_queued_bytes_(max_queued_bytes) {}
  // Released without Close(): the socket goes away as its owner did.
  ~WebSocketImpl() override;

  bool Send(std::string text) override { return Queue(std::move(text), false); }
  bool SendBinary(std::string bytes) override { return Queue(std::move(bytes), true); }
  void Close(uint16_t code, std::string reason) override;
  bool closed() const override;
  size_t pending_bytes() const override;
  void OnClose(std::function<void(const WebSocketClose&)> callback) override;

  // Called by the session (on its strand) once the connection has closed.
  void MarkClosed(const WebSocketClose& how);
  // Called by the session when the peer's close frame arrived: nothing more can be sent.
  void MarkClosing();

 private:
  bool Queue(std::string message, bool binary);

  mutable Mutex mu_;
  // Null once the connection has closed. The destructor reads it (and closing_) without the
  // lock: no other thread holds the socket by then.
  std::shared_ptr<SessionBase> session_ GUARDED_BY(mu_);
  const size_t max_queued_bytes_;
  bool closing_ GUARDED_BY(mu_) = false;  // Close() called, queue overflowed or peer closing
  bool ended_ GUARDED_BY(mu_) = false;    // the connection has closed: how_ is final
  WebSocketClose how_ GUARDED_BY(mu_);
  std::vector<std::function<void(const WebSocketClose&)>> callbacks_ GUARDED_BY(mu_);
};

// The ResponseWriter of one request (http_server.h says what each method promises).
class Writer final : public ResponseWriter {
 public:
  Writer(std::shared_ptr<SessionBase> session, RequestInfo info)
      : session_(std::move(session)), info_(std::move(info)) {}
  // A writer dropped unanswered sends 500; one dropped mid-stream aborts the connection.
  ~Writer() override;

  void Send(HttpResponse response) override;
  void BeginStream(int status, Headers headers) override;
  bool Write(std::string data) override;
  void End() override;
  void Abort() override;
  bool closed() const override { return closed_.load(std::memory_order_acquire); }
  size_t pending_bytes() const override;
  void OnClose(std::function<void()> callback) override;
  std::shared_ptr<WebSocket> AcceptWebSocket(WebSocketOptions options) override;

  // Called by the session when the connection closes.
  void MarkClosed();

 private:
  enum class State { kIdle, kStreaming, kDone };

  // Releases the connection and runs the close callbacks outside the lock. When the handler
  // finished the writer, the callbacks run later on the strand: running them inside its
  // Send()/End() call would deadlock a handler that holds its own lock around that call.
  // `lock` holds mu_ on entry and is released here.
  void Detach(ReleasableMutexLock& lock, bool defer_callbacks) RELEASE(mu_);
  // The connection and the close callbacks, taken out as the writer detaches.
  std::pair<std::shared_ptr<SessionBase>, std::vector<std::function<void()>>> TakeLocked()
      REQUIRES(mu_);
  void ReleaseHeld(ReleasableMutexLock& lock) RELEASE(mu_) NO_THREAD_SAFETY_ANALYSIS {
    lock.Release();
  }

  mutable Mutex mu_;
  // Null once the response is complete or closed. The destructor reads it (and state_) without
  // the lock: no other thread holds the writer by then.
  std::shared_ptr<SessionBase> session_ GUARDED_BY(mu_);
  const RequestInfo info_;
  State state_ GUARDED_BY(mu_) = State::kIdle;
  bool close_after_stream_ GUARDED_BY(mu_) = false;
  std::atomic<bool> closed_{false};  // set under mu_; read without it by closed()
  std::vector<std::function<void()>> callbacks_ GUARDED_BY(mu_);
};

}  // namespace steward::net::server
