// A WebSocket client for tests (Boost.Beast's websocket client, plain or TLS): connects and does
// the opening handshake, reads every message on its own I/O thread (or only once told to), sends
// and closes; the test waits for what it expects with deadlines. Everything it learns is kept:
// the handshake's HTTP answer (a refusal's status, fields and body), the messages in order, the
// pings seen, and how the connection ended (the close frame's code and reason, or the error).
//
// Thread-safety: every method may be called from any thread; the socket itself is only touched
// on the client's I/O thread. Links steward_net (which compiles Boost.Asio and Beast).
#pragma once

#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/mutex.h"

namespace steward::test_support {

template <bool kTls>
class BasicWsClient {
  using tcp = boost::asio::ip::tcp;
  using error_code = boost::system::error_code;
  using Next = std::conditional_t<kTls, boost::asio::ssl::stream<tcp::socket>, tcp::socket>;
  using Ws = boost::beast::websocket::stream<Next>;

 public:
  static constexpr std::chrono::seconds kWait{10};  // the longest any wait below lasts

  struct Options {
    uint16_t port = 0;
    std::string target = "/";
    // Added to (or replacing) the handshake request's fields.
    std::vector<std::pair<std::string, std::string>> headers;
    std::string ca_pem;  // kTls: the CA the server's certificate is checked against
    bool read = true;    // read messages at once (false: only after StartReading())
    size_t max_message_bytes = 64u << 20;
  };

  explicit BasicWsClient(Options options)
      : options_(std::move(options)), ssl_(boost::asio::ssl::context::tls_client) {
    if constexpr (kTls) {
      ssl_.add_certificate_authority(boost::asio::buffer(options_.ca_pem));
      ssl_.set_verify_mode(boost::asio::ssl::verify_peer);
      ws_.emplace(ioc_, ssl_);
    } else {
      ws_.emplace(ioc_);
    }
    boost::asio::post(ioc_, [this] { Connect(); });
    thread_ = std::thread([this] {
      ioc_.run();
      MutexLock lock(mu_);
      io_done_ = true;
      cv_.NotifyAll();
    });
    WaitFor([&]() REQUIRES(mu_) { return handshake_done_; });
  }

  // Drops the connection (no close frame) and lets the I/O thread finish what is pending.
  ~BasicWsClient() {
    boost::asio::post(ioc_, [this] {
      error_code ignored;
      boost::beast::get_lowest_layer(*ws_).close(ignored);
    });
    work_.reset();
    {
      MutexLock lock(mu_);
      if (!cv_.WaitFor(mu_, kWait, [&]() REQUIRES(mu_) { return io_done_; })) ioc_.stop();
    }
    thread_.join();
  }

  // The handshake's answer: 101 when upgraded; a refusal's status otherwise (0: no answer).
  bool upgraded() {
    MutexLock lock(mu_);
    return upgraded_;
  }
  int status() {
    MutexLock lock(mu_);
    return status_;
  }
  std::string header(const std::string& name) {
    MutexLock lock(mu_);
    auto it = response_.find(name);
    return it == response_.end() ? "" : std::string(it->value());
  }
  std::string body() {
    MutexLock lock(mu_);
    return response_.body();
  }
  std::string handshake_error() {
    MutexLock lock(mu_);
    return handshake_error_;
  }

  void StartReading() {
    boost::asio::post(ioc_, [this] { Read(); });
  }

  // Queues a text (or binary) message.
  void Send(std::string message, bool binary = false) {
    boost::asio::post(ioc_, [this, message = std::move(message), binary]() mutable {
      out_.emplace_back(std::move(message), binary);
      Pump();
    });
  }
  // Closes after what Send() queued.
  void Close(uint16_t code, std::string reason) {
    boost::asio::post(ioc_, [this, code, reason = std::move(reason)] {
      close_.emplace(code);
      close_->reason = boost::beast::websocket::reason_string(reason.data(), reason.size());
      Pump();
    });
  }

  std::vector<std::string> messages() {
    MutexLock lock(mu_);
    return messages_;
  }
  // Whether each of messages() came as a binary message (else text).
  std::vector<bool> binary_flags() {
    MutexLock lock(mu_);
    return binary_;
  }
  bool WaitForMessages(size_t n, std::chrono::milliseconds timeout = kWait) {
    return WaitFor([&]() REQUIRES(mu_) { return messages_.size() >= n || ended_; }, timeout) &&
           messages().size() >= n;
  }
  // True once the connection has ended (close frame, error or EOF) within the timeout.
  bool WaitEnded(std::chrono::milliseconds timeout = kWait) {
    return WaitFor([&]() REQUIRES(mu_) { return ended_; }, timeout);
  }
  bool ended() {
    MutexLock lock(mu_);
    return ended_;
  }
  // Set when a close frame ended the connection (the server's, or the answer to ours).
  std::optional<uint16_t> close_code() {
    MutexLock lock(mu_);
    return close_code_;
  }
  std::string close_reason() {
    MutexLock lock(mu_);
    return close_reason_;
  }
  // The error that ended the connection when no close frame did.
  std::string end_error() {
    MutexLock lock(mu_);
    return end_error_;
  }
  int pings() {
    MutexLock lock(mu_);
    return pings_;
  }

 private:
  template <class Pred>
  bool WaitFor(Pred pred, std::chrono::milliseconds timeout = kWait) {
    MutexLock lock(mu_);
    return cv_.WaitFor(mu_, timeout, pred);
  }

  void Connect() {
    tcp::endpoint ep(boost::asio::ip::make_address("127.0.0.1"), options_.port);
    boost::beast::get_lowest_layer(*ws_).async_connect(ep, [this](error_code ec) {
      if (ec) return HandshakeDone(ec);
      if constexpr (kTls) {
        ws_->next_layer().async_handshake(boost::asio::ssl::stream_base::client,
                                          [this](error_code hec) {
                                            if (hec) return HandshakeDone(hec);
                                            Upgrade();
                                          });
      } else {
        Upgrade();
      }
    });
  }

  void Upgrade() {
    namespace websocket = boost::beast::websocket;
    ws_->read_message_max(options_.max_message_bytes);
    auto headers = options_.headers;
    ws_->set_option(websocket::stream_base::decorator([headers](websocket::request_type& req) {
      for (const auto& [name, value] : headers) req.set(name, value);
    }));
    ws_->control_callback([this](websocket::frame_type kind, boost::beast::string_view) {
      if (kind != websocket::frame_type::ping) return;
      MutexLock lock(mu_);
      ++pings_;
    });
    ws_->async_handshake(handshake_response_, "127.0.0.1:" + std::to_string(options_.port),
                         options_.target, [this](error_code ec) { HandshakeDone(ec); });
  }

  void HandshakeDone(error_code ec) {
    {
      MutexLock lock(mu_);
      handshake_done_ = true;
      response_ = handshake_response_;
      status_ = static_cast<int>(response_.result_int());
      upgraded_ = !ec && status_ == 101;
      if (ec) handshake_error_ = ec.message();
    }
    cv_.NotifyAll();
    if (!ec && options_.read) Read();
  }

  void Read() {
    if (reading_) return;
    reading_ = true;
    ws_->async_read(buffer_, [this](error_code ec, size_t) {
      reading_ = false;
      if (ec) return End(ec);
      {
        MutexLock lock(mu_);
        messages_.push_back(boost::beast::buffers_to_string(buffer_.data()));
        binary_.push_back(ws_->got_binary());
      }
      buffer_.consume(buffer_.size());
      cv_.NotifyAll();
      Read();
    });
  }

  void Pump() {
    if (writing_ || !ws_->is_open()) return;
    if (!out_.empty()) {
      writing_ = true;
      inflight_ = std::move(out_.front());
      out_.pop_front();
      ws_->binary(inflight_.second);
      ws_->async_write(boost::asio::buffer(inflight_.first), [this](error_code ec, size_t) {
        writing_ = false;
        if (!ec) Pump();
      });
      return;
    }
    if (close_) {
      writing_ = true;
      auto reason = *close_;
      close_.reset();
      ws_->async_close(reason, [this](error_code ec) {
        writing_ = false;
        End(ec ? ec : boost::beast::websocket::error::closed);
      });
    }
  }

  void End(error_code ec) {
    {
      MutexLock lock(mu_);
      if (ended_) return;
      ended_ = true;
      const auto& reason = ws_->reason();
      if (ec == boost::beast::websocket::error::closed || reason.code != 0) {
        close_code_ = reason.code;
        close_reason_ = std::string(reason.reason);
      } else {
        end_error_ = ec.message();
      }
    }
    cv_.NotifyAll();
  }

  const Options options_;
  boost::asio::io_context ioc_;
  // Keeps the I/O thread running while the client exists.
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_{
      ioc_.get_executor()};
  boost::asio::ssl::context ssl_;
  std::optional<Ws> ws_;  // on the I/O thread only, as are the fields below up to mu_
  boost::beast::websocket::response_type handshake_response_;
  boost::beast::flat_buffer buffer_;
  std::deque<std::pair<std::string, bool>> out_;
  std::pair<std::string, bool> inflight_;
  std::optional<boost::beast::websocket::close_reason> close_;
  bool reading_ = false;
  bool writing_ = false;

  Mutex mu_;
  CondVar cv_;  // anything below changed
  bool handshake_done_ GUARDED_BY(mu_) = false;
  bool upgraded_ GUARDED_BY(mu_) = false;
  int status_ GUARDED_BY(mu_) = 0;
  boost::beast::websocket::response_type response_ GUARDED_BY(mu_);
  std::string handshake_error_ GUARDED_BY(mu_);
  std::vector<std::string> messages_ GUARDED_BY(mu_);
  std::vector<bool> binary_ GUARDED_BY(mu_);
  bool ended_ GUARDED_BY(mu_) = false;
  std::optional<uint16_t> close_code_ GUARDED_BY(mu_);
  std::string close_reason_ GUARDED_BY(mu_);
  std::string end_error_ GUARDED_BY(mu_);
  int pings_ GUARDED_BY(mu_) = 0;
  bool io_done_ GUARDED_BY(mu_) = false;  // the I/O thread has run out of work
  std::thread thread_;
};

using WsClient = BasicWsClient<false>;
using WssClient = BasicWsClient<true>;

}  // namespace steward::test_support
