// Session: one connection of HttpServer, on its strand — it reads requests through the
// RequestFramer, hands them to the Handler with a Writer (server_writer.h), writes what writers
// queue in order, and, once a handler accepts an upgrade, hands the connection to its WebSocket
// (server_websocket.h); with its deadlines (head, whole request, idle, lingering close).
// SessionOwner is the server side it reports to.
// Internal to net/ (http_server.cc); a template on whether the connection is TLS.
//
// Threading: everything touching the socket runs on the session's strand; the SessionBase
// methods (server_writer.h) may be called from any thread and post to it.
#pragma once

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
#include <exception>
#include <type_traits>
#include <vector>

#include "common/ascii.h"
#include "common/log.h"
#include "net/http_server.h"
#include "net/request_framer.h"
#include "net/server_websocket.h"
#include "net/server_writer.h"

namespace steward::net::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

constexpr size_t kPeekSize = 4096;
// How long a closing connection drains what the peer still sends, so that the peer reads the
// final response instead of a reset.
constexpr auto kLingerTime = std::chrono::seconds(2);
// When the server stops, an open WebSocket has at most this long to finish its closing handshake.
constexpr auto kWsStopGrace = std::chrono::seconds(1);

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
    asio::post(executor_, [self = this->shared_from_this()] {
      if (self->phase_ == Phase::kWebSocket) {
        self->ws_->Close(kWsGoingAway, "the server is stopping", false, kWsStopGrace);
      } else {
        self->CloseNow(false);
      }
    });
  }

  void StartWebSocket(std::shared_ptr<WebSocketImpl> socket, WebSocketOptions options) override {
    asio::post(executor_, [self = this->shared_from_this(), socket = std::move(socket),
                           options = std::move(options)]() mutable {
      self->OnStartWebSocket(std::move(socket), std::move(options));
    });
  }

  void WsSend(std::string message, bool binary) override {
    queued_bytes_.fetch_add(message.size(), std::memory_order_relaxed);
    asio::post(executor_,
               [self = this->shared_from_this(), message = std::move(message), binary]() mutable {
                 if (self->ws_) {
                   self->ws_->Send(std::move(message), binary);
                 } else {  // the connection went before the upgrade
                   self->queued_bytes_.fetch_sub(message.size(), std::memory_order_relaxed);
                 }
               });
  }

  void WsClose(uint16_t code, std::string reason, bool drop_queued) override {
    asio::post(executor_, [self = this->shared_from_this(), code, reason = std::move(reason),
                           drop_queued]() mutable {
      if (self->ws_) {
        self->ws_->Close(code, std::move(reason), drop_queued, std::chrono::milliseconds::max());
      }
    });
  }

  void PostCallbacks(std::vector<std::function<void()>> callbacks) override {
    asio::post(executor_, [self = this->shared_from_this(), callbacks = std::move(callbacks)] {
      for (auto& cb : callbacks) cb();
    });
  }

 private:
  enum class Phase { kStarting, kReadingRequest, kHandling, kWebSocket, kLingering, kClosed };

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
      if (phase_ == Phase::kWebSocket) {
        ws_->End({kWsAbnormal, "the WebSocket handshake did not complete in time", false});
        return;
      }
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
    if (IsWebSocketUpgrade(request)) NoteHandshake(request, &info);
    const bool websocket = info.websocket;
    EndRead();
    auto writer = std::make_shared<Writer>(this->shared_from_this(), std::move(info));
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
    // Keep a read pending while the response is produced, to notice a peer that goes away. Not
    // for a handshake the handler may accept: the WebSocket then does the reading.
    if (!closed_ && !reading_ && buffer_.size() == 0 && phase_ == Phase::kHandling && !websocket) {
      StartPeek();
    }
  }

  // A request that asks for a WebSocket: whether AcceptWebSocket may upgrade it, and what the
  // upgrade needs of it.
  void NoteHandshake(const HttpRequest& request, RequestInfo* info) {
    std::optional<WebSocketRefusal> refusal = CheckWebSocketHandshake(request);
    // RFC 6455 §4.1: the client waits for the answer before it sends anything more.
    if (!refusal && buffer_.size() > 0) {
      refusal = WebSocketRefusal{400, "data arrived before the WebSocket handshake's answer", {}};
    }
    if (refusal) {
      info->websocket_refusal = std::move(refusal);
      return;
    }
    info->websocket = true;
    ws_target_ = request.target;
    ws_host_ = std::string(TrimHttpWhitespace(request.headers.Get("host")));
    ws_key_ = std::string(TrimHttpWhitespace(request.headers.Get("sec-websocket-key")));
  }

  // The handler accepted the upgrade: the WebSocket takes the connection over.
  void OnStartWebSocket(std::shared_ptr<WebSocketImpl> socket, WebSocketOptions options) {
    if (closed_ || writing_ || !queue_.empty()) {
      // The connection went (or, which the handshake checks exclude, is still answering).
      socket->MarkClosed({kWsAbnormal, "the connection closed before the upgrade", true});
      CloseNow(false);
      return;
    }
    phase_ = Phase::kWebSocket;
    writer_.reset();
    typename WebSocketChannel<Stream>::Hooks hooks;
    hooks.hold = [this] { return std::shared_ptr<void>(this->shared_from_this()); };
    hooks.closed = [this] { return closed_; };
    hooks.deadline = [this] { return deadline_; };
    hooks.set_deadline = [this](Clock::time_point t) { SetDeadline(t); };
    hooks.clear_deadline = [this] { deadline_ = Clock::time_point::max(); };
    hooks.close_connection = [this] { CloseNow(false); };
    ws_.emplace(stream_, queued_bytes_, std::move(hooks), std::move(socket), std::move(options),
                std::move(ws_target_), std::move(ws_host_), std::move(ws_key_));
    ws_->Accept();
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
    const Phase phase_before = phase_;
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
    if (phase_before == Phase::kWebSocket) ws_->Closed();
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
  std::string ws_target_, ws_host_, ws_key_;  // of a WebSocket handshake, kept for the accept
  // The WebSocket, once a handler accepted the upgrade (phase kWebSocket). It reads and writes
  // stream_, which outlives it (declared before it).
  std::optional<WebSocketChannel<Stream>> ws_;
};

}  // namespace steward::net::server
