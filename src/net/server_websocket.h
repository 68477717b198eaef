// WebSocketChannel: the WebSocket of one HttpServer connection, once its handler accepted the
// upgrade (Session's phase kWebSocket) — the accept (the 101 answer), the read loop handing each
// message to the handler, the messages queued to write, and the closing handshake, whoever
// starts it. Internal to net/ (server_session.h); a template on the session's stream (TCP or
// TLS).
//
// Threading: everything runs on the session's strand. Ownership: the session owns the channel
// and the stream the channel reads and writes, declared before it so that it outlives it; each
// completion handler holds the session (Hooks::hold), so neither goes while an operation of the
// channel is pending. The channel counts its queued messages in the session's queued_bytes.
#pragma once

#include <algorithm>
#include <atomic>
#include <boost/asio/buffer.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <chrono>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/log.h"
#include "net/http_server.h"
#include "net/server_writer.h"

namespace steward::net::server {

template <typename Stream>
class WebSocketChannel {
  using Clock = std::chrono::steady_clock;
  using error_code = boost::system::error_code;

 public:
  // What the channel needs of its session; each is called on the strand.
  struct Hooks {
    std::function<std::shared_ptr<void>()> hold;  // keeps the session while a handler is pending
    std::function<bool()> closed;                 // the connection has been closed
    // The session's deadline: read, moved (only ever earlier, or to "none": Beast's own
    // timers take over once the handshake is done).
    std::function<Clock::time_point()> deadline;
    std::function<void(Clock::time_point)> set_deadline;
    std::function<void()> clear_deadline;
    // Closes the connection; the session then calls Closed().
    std::function<void()> close_connection;
  };

  // `stream` is the session's; `handshake` what the checks read of the upgrade request.
  WebSocketChannel(Stream& stream, std::atomic<size_t>& queued_bytes, Hooks hooks,
                   std::shared_ptr<WebSocketImpl> socket, WebSocketOptions options,
                   std::string target, std::string host, std::string key)
      : queued_bytes_(queued_bytes),
        hooks_(std::move(hooks)),
        socket_(socket),
        on_message_(std::move(options.on_message)),
        handshake_timeout_(options.handshake_timeout),
        ws_(stream) {
    boost::beast::websocket::stream_base::timeout timeouts;
    timeouts.handshake_timeout = options.handshake_timeout;
    timeouts.idle_timeout = options.idle_timeout;
    timeouts.keep_alive_pings = true;
    ws_.set_option(timeouts);
    ws_.read_message_max(options.max_message_bytes);
    // Only what the checks read, normalized: Beast's accept then agrees with them.
    namespace http = boost::beast::http;
    request_.method(http::verb::get);
    request_.target(target);
    request_.version(11);
    request_.set(http::field::host, host);
    request_.set(http::field::connection, "Upgrade");
    request_.set(http::field::upgrade, "websocket");
    request_.set(http::field::sec_websocket_version, "13");
    request_.set(http::field::sec_websocket_key, key);
  }

  // Writes the 101 answer, then reads messages and writes what is queued.
  void Accept() {
    hooks_.set_deadline(Clock::now() + handshake_timeout_);
    ws_.async_accept(request_, [this, hold = hooks_.hold()](error_code ec) { OnAccept(ec); });
  }

  // Queues one message (already counted in queued_bytes); dropped once a close is decided.
  void Send(std::string message, bool binary) {
    if (hooks_.closed() || close_) {
      queued_bytes_.fetch_sub(message.size(), std::memory_order_relaxed);
      return;
    }
    queue_.push_back({std::move(message), binary});
    Pump();
  }

  // Decides the close (the first decision wins): a close frame after what is queued (or after
  // the message being written, with `drop_queued`), due within the handshake timeout (or
  // `limit`, when shorter).
  void Close(uint16_t code, std::string reason, bool drop_queued, std::chrono::milliseconds limit) {
    if (hooks_.closed()) return;
    if (close_) {
      // Decided already; a stop still shortens the wait.
      hooks_.set_deadline(
          std::min(hooks_.deadline(), Clock::now() + std::min(limit, handshake_timeout_)));
      return;
    }
    if (drop_queued) DropQueue();
    close_.emplace(code);
    close_->reason = boost::beast::websocket::reason_string(reason.data(), reason.size());
    if (auto socket = socket_.lock()) socket->MarkClosing();
    hooks_.set_deadline(Clock::now() + std::min(limit, handshake_timeout_));
    Pump();
  }

  // Ends the connection, reporting `how` to the handler (unless an outcome is known already).
  void End(WebSocketClose how) {
    if (!outcome_) outcome_ = std::move(how);
    hooks_.close_connection();
  }

  // The connection is closed (the session's CloseNow): drops what is queued and what the
  // message handler holds (it may hold the socket) and tells the handler how it ended.
  void Closed() {
    DropQueue();
    on_message_ = nullptr;
    if (auto socket = socket_.lock()) {
      socket->MarkClosed(
          outcome_.value_or(WebSocketClose{kWsAbnormal, "the connection closed", !close_sent_}));
    }
    socket_.reset();
  }

 private:
  void OnAccept(error_code ec) {
    if (hooks_.closed()) return;
    if (ec) {
      End({kWsAbnormal, "the WebSocket handshake failed: " + ec.message(), false});
      return;
    }
    open_ = true;
    // Beast's idle timer takes over, unless a close is already decided.
    if (!close_) hooks_.clear_deadline();
    StartRead();
    Pump();
  }

  void StartRead() {
    reading_ = true;
    ws_.async_read(buffer_, [this, hold = hooks_.hold()](error_code ec, size_t) { OnRead(ec); });
  }

  void OnRead(error_code ec) {
    namespace websocket = boost::beast::websocket;
    reading_ = false;
    if (hooks_.closed()) return;
    if (!ec) {
      std::string message = boost::beast::buffers_to_string(buffer_.data());
      buffer_.consume(buffer_.size());
      const bool binary = !ws_.got_text();
      try {
        if (on_message_) on_message_(std::move(message), binary);
      } catch (const std::exception& e) {
        LOG_ERROR("WebSocket message handler threw: {}", e.what());
        End({kWsAbnormal, "the message handler failed", false});
        return;
      }
      if (!hooks_.closed()) StartRead();
      return;
    }
    if (ec == websocket::error::closed) {
      if (close_sent_) {
        // Our close op is finishing the handshake; it ends the connection.
        if (writing_) return;
        End({close_->code, std::string(close_->reason), false});
        return;
      }
      // The peer closed first; Beast has answered its close frame and shut the connection.
      const websocket::close_reason& r = ws_.reason();
      End({static_cast<uint16_t>(r.code), std::string(r.reason), true});
      return;
    }
    if (ec == websocket::error::message_too_big) {
      // Beast has sent 1009 and shut the connection.
      End({kWsTooBig, "message too big", false});
      return;
    }
    const bool timeout = ec == boost::beast::error::timeout;
    End({kWsAbnormal, timeout ? std::string("idle timeout") : ec.message(),
         !close_sent_ && !timeout});
  }

  void DropQueue() {
    size_t dropped = 0;
    for (const auto& m : queue_) dropped += m.data.size();
    queued_bytes_.fetch_sub(dropped, std::memory_order_relaxed);
    queue_.clear();
  }

  // Starts the next write: a queued message, else the close frame once one is decided.
  void Pump() {
    if (hooks_.closed() || !open_ || writing_) return;
    if (!ws_.is_open()) {
      // The peer's close is being answered (or the connection failed): the read reports it.
      DropQueue();
      if (!reading_) End({kWsAbnormal, "the connection closed", true});
      return;
    }
    if (!queue_.empty()) {
      inflight_ = std::move(queue_.front().data);
      ws_.binary(queue_.front().binary);
      queue_.pop_front();
      writing_ = true;
      ws_.async_write(boost::asio::buffer(inflight_),
                      [this, hold = hooks_.hold()](error_code ec, size_t) { OnWrite(ec); });
      return;
    }
    if (close_ && !close_sent_) {
      close_sent_ = true;
      writing_ = true;
      ws_.async_close(*close_, [this, hold = hooks_.hold()](error_code ec) { OnClosed(ec); });
    }
  }

  void OnWrite(error_code ec) {
    writing_ = false;
    queued_bytes_.fetch_sub(inflight_.size(), std::memory_order_relaxed);
    inflight_.clear();
    if (hooks_.closed()) return;
    if (ec) {
      // The pending read reports how the connection ended (a close the peer started, a reset);
      // should it not, the deadline ends it.
      if (reading_) {
        hooks_.set_deadline(Clock::now() + handshake_timeout_);
        return;
      }
      End({kWsAbnormal, "write failed: " + ec.message(), !close_sent_});
      return;
    }
    Pump();
  }

  void OnClosed(error_code ec) {
    writing_ = false;
    if (hooks_.closed()) return;
    if (ec && ec != boost::beast::websocket::error::closed) {
      End({kWsAbnormal, "the closing handshake failed: " + ec.message(), false});
      return;
    }
    End({close_->code, std::string(close_->reason), false});
  }

  struct Message {
    std::string data;
    bool binary = false;
  };
  std::atomic<size_t>& queued_bytes_;  // the session's
  const Hooks hooks_;
  std::weak_ptr<WebSocketImpl> socket_;  // the handler's side; it holds the session
  std::function<void(std::string, bool)> on_message_;
  const std::chrono::milliseconds handshake_timeout_;
  boost::beast::http::request<boost::beast::http::empty_body> request_;  // for the accept
  boost::beast::websocket::stream<Stream&> ws_;
  boost::beast::flat_buffer buffer_;  // the message being read
  std::deque<Message> queue_;         // messages not yet written
  std::string inflight_;              // the message being written
  bool open_ = false;                 // the 101 answer is written
  bool reading_ = false;              // a read is pending
  bool writing_ = false;              // a message or the close frame is being written
  std::optional<boost::beast::websocket::close_reason> close_;  // decided; sent after the queue
  bool close_sent_ = false;
  std::optional<WebSocketClose> outcome_;  // what the handler is told when the connection ends
};

}  // namespace steward::net::server
