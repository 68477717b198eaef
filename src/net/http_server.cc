#include "net/http_server.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/status.hpp>
#include <exception>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "common/ascii.h"
#include "common/log.h"
#include "common/mutex.h"
#include "net/request_framer.h"

namespace steward::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

// A writer that queues more than this (a peer that stopped reading) loses its connection.
constexpr size_t kMaxQueuedBytes = 64u << 20;
constexpr size_t kPeekSize = 4096;
// Bodies larger than this are written from their own buffer instead of being copied.
constexpr size_t kCopyBodyLimit = 16u << 10;
// How long a closing connection drains what the peer still sends, so that the peer reads the
// final response instead of a reset.
constexpr auto kLingerTime = std::chrono::seconds(2);

enum class WriteKind { kPart, kEndKeepAlive, kEndClose, kAbort };

// What framing a response needs, fixed when the request is read.
struct RequestInfo {
  bool head = false;
  bool http10 = false;
  bool keep_alive = true;
};

bool BodylessStatus(int status) {
  return (status >= 100 && status < 200) || status == 204 || status == 304;
}

bool ContainsToken(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (AsciiEqualsIgnoreCase(item, token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

bool WantsClose(const Headers& headers) {
  for (const auto& [name, value] : headers.fields()) {
    if (AsciiEqualsIgnoreCase(name, "connection") && ContainsToken(value, "close")) return true;
  }
  return false;
}

void AppendStatusLine(std::string& out, int status) {
  out += "HTTP/1.1 ";
  out += std::to_string(status);
  out += ' ';
  auto code = http::int_to_status(static_cast<unsigned>(status));
  out += code == http::status::unknown ? std::string_view("Unknown") : http::obsolete_reason(code);
  out += "\r\n";
}

// Appends the handler's fields, leaving out the framing fields the server owns.
void AppendHeaders(std::string& out, const Headers& headers) {
  for (const auto& [name, value] : headers.fields()) {
    if (AsciiEqualsIgnoreCase(name, "content-length") ||
        AsciiEqualsIgnoreCase(name, "transfer-encoding") ||
        AsciiEqualsIgnoreCase(name, "connection")) {
      continue;
    }
    out += name;
    out += ": ";
    // A CR or LF would let a value inject fields.
    for (char c : value) out += (c == '\r' || c == '\n') ? ' ' : c;
    out += "\r\n";
  }
}

void AppendConnection(std::string& out, const RequestInfo& info, bool close) {
  if (close) {
    out += "Connection: close\r\n";
  } else if (info.http10) {
    out += "Connection: keep-alive\r\n";
  }
}

std::string SimpleResponse(int status, std::string_view text) {
  std::string out;
  AppendStatusLine(out, status);
  out += "Content-Type: text/plain; charset=utf-8\r\nContent-Length: ";
  out += std::to_string(text.size());
  out += "\r\nConnection: close\r\n\r\n";
  out += text;
  return out;
}

// The session interface the writer sees.
class SessionBase {
 public:
  virtual ~SessionBase() = default;
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

class Writer final : public ResponseWriter {
 public:
  Writer(std::shared_ptr<SessionBase> session, RequestInfo info)
      : session_(std::move(session)), info_(info) {}

  ~Writer() override {
    if (session_ == nullptr) return;
    // The handler dropped the request without completing it.
    if (state_ == State::kIdle) {
      session_->Enqueue(SimpleResponse(500, "the handler did not answer\n"), WriteKind::kEndClose);
    } else {
      session_->Enqueue({}, WriteKind::kAbort);
    }
  }

  void Send(HttpResponse response) override {
    ReleasableMutexLock lock(mu_);
    if (state_ != State::kIdle || session_ == nullptr) return;
    state_ = State::kDone;
    bool close = !info_.keep_alive || WantsClose(response.headers);
    bool bodyless = BodylessStatus(response.status);
    std::string head;
    head.reserve(160 + response.body.size());
    AppendStatusLine(head, response.status);
    AppendHeaders(head, response.headers);
    if (!bodyless) {
      head += "Content-Length: ";
      head += std::to_string(response.body.size());
      head += "\r\n";
    }
    AppendConnection(head, info_, close);
    head += "\r\n";
    WriteKind end = close ? WriteKind::kEndClose : WriteKind::kEndKeepAlive;
    if (info_.head || bodyless || response.body.empty()) {
      session_->Enqueue(std::move(head), end);
    } else if (response.body.size() <= kCopyBodyLimit) {
      head += response.body;
      session_->Enqueue(std::move(head), end);
    } else {
      session_->Enqueue(std::move(head), WriteKind::kPart);
      session_->Enqueue(std::move(response.body), end);
    }
    Detach(lock, /*defer_callbacks=*/true);
  }

  void BeginStream(int status, Headers headers) override {
    MutexLock lock(mu_);
    if (state_ != State::kIdle || session_ == nullptr) return;
    state_ = State::kStreaming;
    close_after_stream_ = !info_.keep_alive || info_.http10 || WantsClose(headers);
    std::string head;
    AppendStatusLine(head, status);
    AppendHeaders(head, headers);
    // HTTP/1.0 has no chunked coding: the body ends with the connection.
    if (!info_.http10) head += "Transfer-Encoding: chunked\r\n";
    AppendConnection(head, info_, close_after_stream_);
    head += "\r\n";
    session_->Enqueue(std::move(head), WriteKind::kPart);
  }

  bool Write(std::string data) override {
    ReleasableMutexLock lock(mu_);
    if (state_ != State::kStreaming || session_ == nullptr) return false;
    if (data.empty() || info_.head) return true;  // an empty chunk would end the body
    if (session_->queued_bytes() > kMaxQueuedBytes) {
      LOG_WARN("closing a stream whose peer does not read ({} bytes queued)",
               session_->queued_bytes());
      state_ = State::kDone;
      session_->Enqueue({}, WriteKind::kAbort);
      Detach(lock, /*defer_callbacks=*/true);
      return false;
    }
    if (info_.http10) {
      session_->Enqueue(std::move(data), WriteKind::kPart);
      return true;
    }
    char size_line[24];
    int n = std::snprintf(size_line, sizeof size_line, "%zx\r\n", data.size());
    std::string chunk;
    chunk.reserve(static_cast<size_t>(n) + data.size() + 2);
    chunk.append(size_line, static_cast<size_t>(n));
    chunk += data;
    chunk += "\r\n";
    session_->Enqueue(std::move(chunk), WriteKind::kPart);
    return true;
  }

  void End() override {
    ReleasableMutexLock lock(mu_);
    if (state_ != State::kStreaming || session_ == nullptr) return;
    state_ = State::kDone;
    std::string tail = (info_.http10 || info_.head) ? std::string() : std::string("0\r\n\r\n");
    session_->Enqueue(std::move(tail),
                      close_after_stream_ ? WriteKind::kEndClose : WriteKind::kEndKeepAlive);
    Detach(lock, /*defer_callbacks=*/true);
  }

  void Abort() override {
    ReleasableMutexLock lock(mu_);
    if (state_ == State::kDone || session_ == nullptr) return;
    state_ = State::kDone;
    session_->Enqueue({}, WriteKind::kAbort);
    Detach(lock, /*defer_callbacks=*/true);
  }

  bool closed() const override { return closed_.load(std::memory_order_acquire); }

  size_t pending_bytes() const override {
    MutexLock lock(mu_);
    return session_ == nullptr ? 0 : session_->queued_bytes();
  }

  void OnClose(std::function<void()> callback) override {
    ReleasableMutexLock lock(mu_);
    if (!closed_.load(std::memory_order_relaxed)) {
      callbacks_.push_back(std::move(callback));
      return;
    }
    lock.Release();
    callback();
  }

  // Called by the session when the connection closes.
  void MarkClosed() {
    ReleasableMutexLock lock(mu_);
    if (session_ == nullptr) return;
    state_ = State::kDone;
    Detach(lock, /*defer_callbacks=*/false);
  }

 private:
  enum class State { kIdle, kStreaming, kDone };

  // Releases the connection and runs the close callbacks outside the lock. When the handler
  // finished the writer, the callbacks run later on the strand: running them inside its
  // Send()/End() call would deadlock a handler that holds its own lock around that call.
  // `lock` holds mu_ on entry and is released here.
  void Detach(ReleasableMutexLock& lock, bool defer_callbacks) RELEASE(mu_) {
    auto [session, callbacks] = TakeLocked();
    // Not `lock.Release()`: the analysis cannot tell that `lock` is the holder of mu_.
    ReleaseHeld(lock);
    if (callbacks.empty()) return;
    if (defer_callbacks && session != nullptr) {
      session->PostCallbacks(std::move(callbacks));
    } else {
      for (auto& cb : callbacks) cb();
    }
  }

  // The connection and the close callbacks, taken out as the writer detaches.
  std::pair<std::shared_ptr<SessionBase>, std::vector<std::function<void()>>> TakeLocked()
      REQUIRES(mu_) {
    std::shared_ptr<SessionBase> session = std::move(session_);
    closed_.store(true, std::memory_order_release);
    std::vector<std::function<void()>> callbacks = std::move(callbacks_);
    callbacks_.clear();
    return {std::move(session), std::move(callbacks)};
  }
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

// Hooks of the server a session uses while it is open.
class SessionOwner {
 public:
  virtual ~SessionOwner() = default;
  virtual void Unregister(SessionBase* session) = 0;
  virtual bool stopping() const = 0;
};

struct SessionConfig {
  Handler* handler;
  RequestFramer::Limits limits;
  Clock::duration idle_timeout;
  Clock::duration read_header_timeout;
  Clock::duration read_timeout;
};

template <bool kTls>
class Session final : public SessionBase, public std::enable_shared_from_this<Session<kTls>> {
  using Stream = std::conditional_t<kTls, ssl::stream<tcp::socket>, tcp::socket>;

 public:
  Session(SessionOwner* owner, const SessionConfig& config, tcp::socket socket,
          ssl::context* ssl_ctx)
      : owner_(owner),
        config_(config),
        stream_(MakeStream(std::move(socket), ssl_ctx)),
        executor_(stream_.get_executor()),
        timer_(executor_),
        framer_(config.limits) {}

  // Runs the connection; the owner has registered it.
  void Start() {
    asio::dispatch(executor_, [self = this->shared_from_this()] { self->DoStart(); });
  }

  void Enqueue(std::string bytes, WriteKind kind) override {
    queued_bytes_.fetch_add(bytes.size(), std::memory_order_relaxed);
    asio::post(executor_, [self = this->shared_from_this(), bytes = std::move(bytes),
                           kind]() mutable { self->OnEnqueue(std::move(bytes), kind); });
  }

  void PostClose() override {
    asio::post(executor_, [self = this->shared_from_this()] { self->CloseNow(false); });
  }

  void PostCallbacks(std::vector<std::function<void()>> callbacks) override {
    asio::post(executor_, [self = this->shared_from_this(), callbacks = std::move(callbacks)] {
      for (auto& cb : callbacks) cb();
    });
  }

 private:
  enum class Phase { kStarting, kReadingRequest, kHandling, kLingering, kClosed };

  static Stream MakeStream(tcp::socket socket, ssl::context* ssl_ctx) {
    if constexpr (kTls) {
      return Stream(std::move(socket), *ssl_ctx);
    } else {
      (void)ssl_ctx;
      return socket;
    }
  }

  tcp::socket& Socket() {
    if constexpr (kTls) {
      return stream_.next_layer();
    } else {
      return stream_;
    }
  }

  void DoStart() {
    if (closed_) return;
    error_code ec;
    tcp::endpoint peer = Socket().remote_endpoint(ec);
    if (!ec) {
      remote_ = peer.address().is_v6() ? "[" + peer.address().to_string() + "]"
                                       : peer.address().to_string();
      remote_ += ":" + std::to_string(peer.port());
    }
    framer_.SetPeer(remote_, kTls);
    // The first request's head is due read_header_timeout after the connection's start (the
    // TLS handshake included), as with Go's ReadHeaderTimeout.
    request_start_ = Clock::now();
    deadline_ = *request_start_ +
                std::min({config_.idle_timeout, config_.read_header_timeout, config_.read_timeout});
    ArmTimer(deadline_);
    if constexpr (kTls) {
      phase_ = Phase::kStarting;
      reading_ = true;
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](error_code hec) {
                                self->reading_ = false;
                                if (self->closed_) return;
                                if (hec) {
                                  self->CloseNow(false);
                                } else {
                                  self->StartReadRequest();
                                }
                              });
    } else {
      StartReadRequest();
    }
  }

  // Deadlines are checked lazily: the timer only moves when a deadline comes earlier than it.
  void SetDeadline(Clock::time_point deadline) {
    deadline_ = deadline;
    if (deadline < timer_.expiry()) ArmTimer(deadline);
  }

  void ArmTimer(Clock::time_point when) {
    uint64_t generation = ++timer_generation_;
    timer_.expires_at(when);
    timer_.async_wait([self = this->shared_from_this(), generation](error_code ec) {
      self->OnTimer(ec, generation);
    });
  }

  void OnTimer(error_code ec, uint64_t generation) {
    if (ec == asio::error::operation_aborted || closed_ || generation != timer_generation_) return;
    Clock::time_point now = Clock::now();
    if (now >= deadline_) {
      if (phase_ != Phase::kReadingRequest || !request_bytes_) {
        CloseNow(false);
        return;
      }
      // A request that did not arrive in time (a slow or stalled client).
      Fail(408, "request timeout");
    }
    ArmTimer(deadline_ == Clock::time_point::max() ? now + config_.idle_timeout : deadline_);
  }

  void StartReadRequest() {
    phase_ = Phase::kReadingRequest;
    if (buffer_.size() == 0 && buffer_.capacity() > 64 * 1024) buffer_.shrink_to_fit();
    framer_.Begin();
    framer_active_ = true;
    request_bytes_ = false;
    Advance();
  }

  // Parses what has been read; reads more when the request is incomplete. The session reads
  // itself (instead of http::async_read) so that nothing Beast throws escapes into io_context
  // and so that the head can be checked before the body is read.
  void Advance() {
    try {
      AdvanceUnguarded();
    } catch (const std::exception& e) {
      LOG_ERROR("HTTP connection {}: {}", remote_, e.what());
      CloseNow(true);
    } catch (...) {
      LOG_ERROR("HTTP connection {}: unknown exception", remote_);
      CloseNow(true);
    }
  }

  void AdvanceUnguarded() {
    while (!closed_) {
      auto data = buffer_.data();
      std::string_view bytes(static_cast<const char*>(data.data()), data.size());
      if (!request_bytes_ && !bytes.empty()) {
        request_bytes_ = true;
        if (!request_start_) request_start_ = Clock::now();
        SetDeadline(*request_start_ + std::min(config_.read_header_timeout, config_.read_timeout));
      }
      buffer_.consume(framer_.Feed(bytes));
      switch (framer_.state()) {
        case RequestFramer::State::kNeedMore:
          if (!reading_) StartPeek();
          return;
        case RequestFramer::State::kHead:
          if (!OnHead()) return;
          break;
        case RequestFramer::State::kComplete:
          Dispatch();
          return;
        case RequestFramer::State::kBodyTooLarge:
          Dispatch();
          return;
        case RequestFramer::State::kError:
          Fail(framer_.error_status(), framer_.error_message());
          return;
      }
    }
  }

  // The head is in and acceptable; false when the request was answered from it.
  bool OnHead() {
    SetDeadline(*request_start_ + config_.read_timeout);
    std::optional<HttpResponse> refusal;
    try {
      refusal = config_.handler->CheckHead(framer_.head());
    } catch (const std::exception& e) {
      LOG_ERROR("HTTP handler threw in CheckHead: {}", e.what());
      CloseNow(true);
      return false;
    }
    if (refusal) {
      const auto& f = framer_.framing();
      RequestInfo info;
      info.head = f.head_method;
      info.http10 = f.http10;
      // An unread body is still on the wire: the connection cannot be reused.
      info.keep_alive = f.keep_alive && !framer_.body_follows() && !owner_->stopping();
      EndRead();
      auto writer = std::make_shared<Writer>(this->shared_from_this(), info);
      writer_ = writer;
      writer->Send(std::move(*refusal));
      return false;
    }
    if (framer_.expects_continue()) {
      Enqueue(std::string("HTTP/1.1 100 Continue\r\n\r\n"), WriteKind::kPart);
    }
    return true;
  }

  // The request is read (or refused): no further byte is parsed until the response is done.
  void EndRead() {
    framer_active_ = false;
    request_bytes_ = false;
    request_start_.reset();
    phase_ = Phase::kHandling;
    deadline_ = Clock::time_point::max();
  }

  // Refuses the request in progress and closes the connection after the answer.
  void Fail(int status, const std::string& message) {
    EndRead();
    Enqueue(SimpleResponse(status, message + "\n"), WriteKind::kEndClose);
  }

  void Dispatch() {
    HttpRequest request = framer_.TakeRequest();
    const auto& f = framer_.framing();
    RequestInfo info;
    info.head = f.head_method;
    info.http10 = f.http10;
    info.keep_alive = f.keep_alive && !owner_->stopping();
    EndRead();
    auto writer = std::make_shared<Writer>(this->shared_from_this(), info);
    writer_ = writer;
    try {
      config_.handler->Handle(std::move(request), std::move(writer));
    } catch (const std::exception& e) {
      LOG_ERROR("HTTP handler threw: {}", e.what());
      CloseNow(true);
      return;
    } catch (...) {
      LOG_ERROR("HTTP handler threw");
      CloseNow(true);
      return;
    }
    // Keep a read pending while the response is produced, to notice a peer that goes away.
    if (!closed_ && !reading_ && buffer_.size() == 0 && phase_ == Phase::kHandling) StartPeek();
  }

  void StartPeek() {
    reading_ = true;
    stream_.async_read_some(
        buffer_.prepare(kPeekSize),
        [self = this->shared_from_this()](error_code ec, size_t n) { self->OnPeek(ec, n); });
  }

  void OnPeek(error_code ec, size_t n) {
    reading_ = false;
    if (closed_) return;
    if (ec) {
      CloseNow(false);
      return;
    }
    buffer_.commit(n);
    switch (phase_) {
      case Phase::kReadingRequest:
        if (framer_active_) {
          Advance();
        } else {
          StartReadRequest();
        }
        break;
      case Phase::kLingering:
        buffer_.consume(buffer_.size());
        StartPeek();
        break;
      default:
        // A pipelined request: it is parsed once the current response is complete.
        break;
    }
  }

  void OnEnqueue(std::string bytes, WriteKind kind) {
    if (closed_) {
      queued_bytes_.fetch_sub(bytes.size(), std::memory_order_relaxed);
      return;
    }
    if (kind == WriteKind::kAbort) {
      CloseNow(true);
      return;
    }
    if (!bytes.empty()) {
      queue_.push_back(std::move(bytes));
    }
    if (kind != WriteKind::kPart) end_kind_ = kind;
    if (writing_) return;
    if (!queue_.empty()) {
      StartWrite();
    } else if (end_kind_) {
      ResponseDone();
    }
  }

  void StartWrite() {
    inflight_.swap(queue_);
    // TLS writes one record per buffer: small pieces are joined first.
    if (kTls && inflight_.size() > 1) {
      size_t total = 0;
      for (const auto& s : inflight_) total += s.size();
      if (total <= 64 * 1024) {
        for (size_t i = 1; i < inflight_.size(); ++i) inflight_[0] += inflight_[i];
        inflight_.resize(1);
      }
    }
    buffers_.clear();
    for (const auto& s : inflight_) buffers_.emplace_back(s.data(), s.size());
    writing_ = true;
    if (phase_ != Phase::kReadingRequest) SetDeadline(Clock::now() + config_.idle_timeout);
    asio::async_write(
        stream_, buffers_,
        [self = this->shared_from_this()](error_code ec, size_t n) { self->OnWrite(ec, n); });
  }

  void OnWrite(error_code ec, size_t n) {
    writing_ = false;
    size_t total = 0;
    for (const auto& s : inflight_) total += s.size();
    (void)n;
    queued_bytes_.fetch_sub(total, std::memory_order_relaxed);
    inflight_.clear();
    if (closed_) return;
    if (ec) {
      CloseNow(false);
      return;
    }
    if (phase_ == Phase::kHandling) deadline_ = Clock::time_point::max();
    if (!queue_.empty()) {
      StartWrite();
    } else if (end_kind_) {
      ResponseDone();
    }
  }

  void ResponseDone() {
    WriteKind kind = *end_kind_;
    end_kind_.reset();
    writer_.reset();
    request_start_.reset();
    if (kind == WriteKind::kEndClose || owner_->stopping()) {
      GracefulClose();
      return;
    }
    phase_ = Phase::kReadingRequest;
    SetDeadline(Clock::now() + config_.idle_timeout);
    // With a peek pending, its completion starts the next read.
    if (!reading_) StartReadRequest();
  }

  void GracefulClose() {
    phase_ = Phase::kLingering;
    error_code ignored;
    Socket().shutdown(tcp::socket::shutdown_send, ignored);
    buffer_.consume(buffer_.size());
    SetDeadline(Clock::now() + kLingerTime);
    if (!reading_) StartPeek();
  }

  void CloseNow(bool reset) {
    if (closed_) return;
    closed_ = true;
    phase_ = Phase::kClosed;
    ++timer_generation_;
    timer_.cancel();
    error_code ignored;
    // A zero linger turns the close into a reset.
    if (reset) Socket().set_option(tcp::socket::linger(true, 0), ignored);
    Socket().close(ignored);
    queue_.clear();
    if (auto writer = writer_.lock()) {
      writer_.reset();
      writer->MarkClosed();
    }
    owner_->Unregister(this);
  }

  SessionOwner* const owner_;
  const SessionConfig config_;
  Stream stream_;
  asio::any_io_executor executor_;  // the connection's strand
  asio::steady_timer timer_;
  uint64_t timer_generation_ = 0;
  Clock::time_point deadline_ = Clock::time_point::max();
  std::string remote_;
  beast::flat_buffer buffer_;
  RequestFramer framer_;
  bool framer_active_ = false;  // the framer holds the request being read
  bool request_bytes_ = false;  // a byte of that request has arrived
  // When the request being read started (its first byte; the first: the connection's start).
  std::optional<Clock::time_point> request_start_;
  std::weak_ptr<Writer> writer_;  // the writer of the response in progress
  std::vector<std::string> queue_;
  std::vector<std::string> inflight_;
  std::vector<asio::const_buffer> buffers_;
  std::optional<WriteKind> end_kind_;  // the response ends once the queue is written
  Phase phase_ = Phase::kStarting;
  bool reading_ = false;
  bool writing_ = false;
  bool closed_ = false;
};

int SelectAlpn(SSL*, const unsigned char** out, unsigned char* out_len, const unsigned char* in,
               unsigned int in_len, void*) {
  static const unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, out_len, kHttp11, sizeof kHttp11, in, in_len) ==
      OPENSSL_NPN_NEGOTIATED) {
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
  }
  return SSL_TLSEXT_ERR_NOACK;
}

class ServerImpl final : public HttpServer, public SessionOwner {
 public:
  ServerImpl(const Options& options, Handler& handler)
      : options_(options),
        ioc_(std::max(1, options.threads)),
        acceptor_(asio::make_strand(ioc_)),
        accept_retry_(acceptor_.get_executor()) {
    config_.handler = &handler;
    config_.limits.max_body_bytes = options.max_body_bytes;
    config_.idle_timeout = options.idle_timeout;
    config_.read_header_timeout = options.read_header_timeout;
    config_.read_timeout = options.read_timeout;
  }

  ~ServerImpl() override { Stop(); }

  Status Init() {
    if (options_.tls) RETURN_IF_ERROR(InitTls(*options_.tls));
    error_code ec;
    tcp::endpoint endpoint;
    asio::ip::address address = asio::ip::make_address(options_.host, ec);
    if (!ec) {
      endpoint = tcp::endpoint(address, options_.port);
    } else {
      tcp::resolver resolver(ioc_);
      auto results = resolver.resolve(options_.host, std::to_string(options_.port), ec);
      if (ec || results.empty()) {
        return Unavailable("cannot resolve " + options_.host + ": " + ec.message());
      }
      endpoint = results.begin()->endpoint();
    }
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return Unavailable("cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
                         ": " + ec.message());
    }
    port_ = acceptor_.local_endpoint().port();
    work_.emplace(ioc_.get_executor());
    asio::post(acceptor_.get_executor(), [this] { DoAccept(); });
    for (int i = 0; i < std::max(1, options_.threads); ++i) {
      threads_.emplace_back([this] { Run(); });
    }
    return Status::Ok();
  }

  uint16_t port() const override { return port_; }

  size_t connection_count() const override {
    MutexLock lock(mu_);
    return sessions_.size();
  }

  void Stop() override {
    std::vector<std::shared_ptr<SessionBase>> open;
    {
      MutexLock lock(mu_);
      if (stopped_) return;
      stopped_ = true;
      stopping_.store(true);
      for (auto it = sessions_.begin(); it != sessions_.end();) {
        if (auto session = it->second.lock()) {
          open.push_back(std::move(session));
          ++it;
        } else {
          it = sessions_.erase(it);
        }
      }
    }
    if (!threads_.empty()) {
      asio::post(acceptor_.get_executor(), [this] {
        error_code ignored;
        acceptor_.close(ignored);
        accept_retry_.cancel();
      });
    }
    for (auto& session : open) session->PostClose();
    open.clear();
    {
      MutexLock lock(mu_);
      drained_.Wait(mu_, [&]() REQUIRES(mu_) { return sessions_.empty(); });
    }
    // With every connection closed and the acceptor shut, the threads run out of work once the
    // posted callbacks have run.
    work_.reset();
    for (auto& t : threads_) t.join();
    ioc_.stop();
    threads_.clear();
  }

  void Unregister(SessionBase* session) override {
    MutexLock lock(mu_);
    sessions_.erase(session);
    if (sessions_.empty()) drained_.NotifyAll();
  }

  bool stopping() const override { return stopping_.load(std::memory_order_relaxed); }

 private:
  Status InitTls(const TlsConfig& tls) {
    ssl_ctx_.emplace(ssl::context::tls_server);
    SSL_CTX* ctx = ssl_ctx_->native_handle();
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    ssl_ctx_->set_options(ssl::context::default_workarounds | ssl::context::single_dh_use);
    error_code ec;
    ssl_ctx_->use_certificate_chain(asio::buffer(tls.cert_chain_pem), ec);
    if (ec) return InvalidArgument("unusable TLS certificate chain: " + ec.message());
    ssl_ctx_->use_private_key(asio::buffer(tls.private_key_pem), ssl::context::pem, ec);
    if (ec) return InvalidArgument("unusable TLS private key: " + ec.message());
    if (SSL_CTX_check_private_key(ctx) != 1) {
      return InvalidArgument("the TLS private key does not match the certificate");
    }
    SSL_CTX_set_alpn_select_cb(ctx, SelectAlpn, nullptr);
    return Status::Ok();
  }

  // An I/O thread. Sessions catch what they raise; this is the last line of defence, so that
  // one exception cannot end the process or stop the thread.
  void Run() {
    while (true) {
      try {
        ioc_.run();
        return;
      } catch (const std::exception& e) {
        LOG_ERROR("HTTP server: uncaught exception on an I/O thread: {}", e.what());
      } catch (...) {
        LOG_ERROR("HTTP server: uncaught exception on an I/O thread");
      }
    }
  }

  // Runs on the acceptor's strand.
  void DoAccept() {
    acceptor_.async_accept(asio::make_strand(ioc_), [this](error_code ec, tcp::socket socket) {
      OnAccept(ec, std::move(socket));
    });
  }

  void OnAccept(error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor_.is_open() || stopping()) return;
      // Out of descriptors or similar: retry a little later instead of spinning.
      LOG_WARN("accept failed: {}", ec.message());
      accept_retry_.expires_after(std::chrono::milliseconds(50));
      accept_retry_.async_wait([this](error_code wec) {
        if (!wec && acceptor_.is_open()) DoAccept();
      });
      return;
    }
    // Whatever happens to this connection, the listener goes on accepting.
    try {
      error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      if (AtCapacity()) {
        Refuse(std::move(socket));
      } else if (ssl_ctx_) {
        StartSession<true>(std::move(socket));
      } else {
        StartSession<false>(std::move(socket));
      }
    } catch (const std::exception& e) {
      LOG_ERROR("dropping a new connection: {}", e.what());
    } catch (...) {
      LOG_ERROR("dropping a new connection");
    }
    DoAccept();
  }

  bool AtCapacity() const {
    MutexLock lock(mu_);
    return sessions_.size() >= options_.max_connections;
  }

  // Over the connection cap: a short answer without blocking, then close. Over TLS the client
  // sees a failed handshake instead; either way it learns quickly.
  void Refuse(tcp::socket socket) {
    static const std::string kBusy = [] {
      std::string out;
      AppendStatusLine(out, 503);
      out +=
          "Content-Type: text/plain; charset=utf-8\r\nContent-Length: 21\r\nRetry-After: "
          "1\r\nConnection: close\r\n\r\ntoo many connections\n";
      return out;
    }();
    if (refused_++ % 1000 == 0) {
      LOG_WARN("HTTP server on port {}: at {} connections; refusing new ones ({} so far)", port_,
               options_.max_connections, refused_);
    }
    error_code ignored;
    socket.non_blocking(true, ignored);
    if (!ssl_ctx_) {
      // Read what the request already sent, so that closing does not turn into a reset that
      // destroys the answer before the client reads it.
      char sink[4096];
      for (int i = 0; i < 16; ++i) {
        error_code ec;
        if (socket.read_some(asio::buffer(sink), ec) == 0 || ec) break;
      }
      socket.write_some(asio::buffer(kBusy), ignored);
    }
    socket.shutdown(tcp::socket::shutdown_send, ignored);
    socket.close(ignored);
  }

  template <bool kTls>
  void StartSession(tcp::socket socket) {
    auto session = std::make_shared<Session<kTls>>(this, config_, std::move(socket),
                                                   ssl_ctx_ ? &*ssl_ctx_ : nullptr);
    {
      MutexLock lock(mu_);
      if (stopping_.load()) return;  // the socket closes with the session
      sessions_.emplace(session.get(), session);
    }
    session->Start();
  }

  const Options options_;
  SessionConfig config_{};
  std::optional<ssl::context> ssl_ctx_;  // outlives the io_context and every session
  asio::io_context ioc_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  tcp::acceptor acceptor_;
  asio::steady_timer accept_retry_;
  uint16_t port_ = 0;
  uint64_t refused_ = 0;  // on the acceptor's strand

  mutable Mutex mu_;
  CondVar drained_;
  bool stopped_ GUARDED_BY(mu_) = false;
  std::atomic<bool> stopping_{false};  // set under mu_; read without it by stopping()
  std::unordered_map<SessionBase*, std::weak_ptr<SessionBase>> sessions_ GUARDED_BY(mu_);
  // Not guarded: filled by Init(), joined and cleared by the one Stop() that gets past stopped_.
  std::vector<std::thread> threads_;
};

}  // namespace

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const Options& options, Handler& handler) {
  try {
    auto server = std::make_unique<ServerImpl>(options, handler);
    RETURN_IF_ERROR(server->Init());
    return std::unique_ptr<HttpServer>(std::move(server));
  } catch (const std::exception& e) {
    return Unavailable(std::string("starting the HTTP server: ") + e.what());
  }
}

}  // namespace steward::net
