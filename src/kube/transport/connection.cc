#include "kube/transport/connection.h"

#include <openssl/ssl.h>
#include <poll.h>

#include <boost/asio/connect.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace steward::kube {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// Records an operation's result, whatever the completion signature.
struct Connection::Completion {
  bool* done;
  Outcome* out;
  void operator()(error_code ec) const {
    out->ec = ec;
    *done = true;
  }
  void operator()(error_code ec, std::size_t n) const {
    out->ec = ec;
    out->bytes = n;
    *done = true;
  }
  template <class T>
  void operator()(error_code ec, const T& /*endpoint*/) const {
    out->ec = ec;
    *done = true;
  }
};

Connection::Connection(const Clock& clock, std::shared_ptr<ssl::context> tls, uint64_t generation)
    : clock_(clock), tls_context_(std::move(tls)), generation_(generation) {}

Connection::~Connection() {
  Unbind();
  Close();
}

bool Connection::Cancelled() const { return cancel_ && cancel_->cancelled(); }

beast::tcp_stream& Connection::Lowest() { return tls_ ? tls_->next_layer() : *tcp_; }

template <class Start>
Connection::Outcome Connection::Run(Start&& start, SteadyTime deadline) {
  Outcome out;
  bool done = false;
  start(Completion{&done, &out});
  ioc_.restart();
  if (!Cancelled()) {
    auto remaining = deadline - clock_.Now();
    if (remaining > SteadyTime::duration::zero()) ioc_.run_for(remaining);
  }
  if (!done) {
    out.result = Cancelled() ? Result::kCancelled : Result::kTimedOut;
    // Abort the operation and let it complete before the state it refers to goes away.
    resolver_.cancel();
    Close();
    ioc_.restart();
    ioc_.run();
    return out;
  }
  if (out.ec) {
    out.result = Result::kFailed;
    Close();
  }
  return out;
}

Connection::Outcome Connection::Resolve(const std::string& host, uint16_t port, SteadyTime deadline,
                                        std::vector<tcp::endpoint>* endpoints) {
  error_code ec;
  asio::ip::address address = asio::ip::make_address(host, ec);
  if (!ec) {
    endpoints->emplace_back(address, port);
    return Outcome{};
  }
  Outcome out = Run(
      [&](Completion done) {
        resolver_.async_resolve(host, std::to_string(port),
                                [&, done](error_code rec, tcp::resolver::results_type results) {
                                  for (const auto& entry : results) {
                                    endpoints->push_back(entry.endpoint());
                                  }
                                  done(rec);
                                });
      },
      deadline);
  if (!out.ok()) out.message = "resolving " + host + ": " + out.ec.message();
  return out;
}

Connection::Outcome Connection::Connect(const ServerUrl& server,
                                        const std::optional<ProxyUrl>& proxy,
                                        const TlsContexts* tls, SteadyTime deadline) {
  const std::string& host = proxy ? proxy->host : server.host;
  const uint16_t port = proxy ? proxy->port : server.port;
  const std::string where = proxy ? "proxy " + proxy->Authority() : server.Authority();
  std::vector<tcp::endpoint> endpoints;
  Outcome out = Resolve(host, port, deadline, &endpoints);
  if (!out.ok()) return out;
  if (tls_context_) {
    tls_.emplace(ioc_, *tls_context_);
  } else {
    tcp_.emplace(ioc_);
  }
  out = Run([&](Completion done) { Lowest().async_connect(endpoints, done); }, deadline);
  if (!out.ok()) {
    out.message = "connecting to " + where + ": " + out.ec.message();
    return out;
  }
  error_code ignored;
  Lowest().socket().set_option(tcp::no_delay(true), ignored);
  open_ = true;
  if (proxy) {
    out = Tunnel(server, *proxy, deadline);
    if (!out.ok()) return out;
  }
  if (tls_) {
    out = Handshake(*tls, deadline);
    if (!out.ok()) return out;
  }
  return out;
}

Connection::Outcome Connection::Tunnel(const ServerUrl& server, const ProxyUrl& proxy,
                                       SteadyTime deadline) {
  const std::string target = server.Authority();
  http::request<http::empty_body> request(http::verb::connect, target, 11);
  request.set(http::field::host, target);
  if (!proxy.authorization.empty()) {
    request.set(http::field::proxy_authorization, proxy.authorization);
  }
  Outcome out = Run([&](Completion done) { http::async_write(Lowest(), request, done); }, deadline);
  if (!out.ok()) {
    out.message =
        "sending CONNECT " + target + " to proxy " + proxy.Authority() + ": " + out.ec.message();
    return out;
  }
  http::response_parser<http::empty_body> parser;
  parser.skip(true);  // a 2xx answer to CONNECT has no body: the tunnel starts after the header
  beast::flat_buffer buffer;
  out = Run([&](Completion done) { http::async_read_header(Lowest(), buffer, parser, done); },
            deadline);
  if (!out.ok()) {
    out.message = "reading the answer of proxy " + proxy.Authority() + " to CONNECT " + target +
                  ": " + out.ec.message();
    return out;
  }
  int status = static_cast<int>(parser.get().result_int());
  if (status / 100 != 2 || buffer.size() != 0) {
    out.result = Result::kFailed;
    // 407 and 403 are configuration problems; 502/503/504 may be transient.
    out.permanent = status / 100 == 4;
    out.message = "proxy " + proxy.Authority() + " refused CONNECT " + target + ": " +
                  std::to_string(status) + " " + std::string(parser.get().reason());
    Close();
  }
  return out;
}

Connection::Outcome Connection::Handshake(const TlsContexts& tls, SteadyTime deadline) {
  Outcome out;
  Status configured = tls.Configure(tls_->native_handle());
  if (!configured.ok()) {
    out.result = Result::kFailed;
    out.permanent = true;
    out.message = configured.message();
    Close();
    return out;
  }
  out = Run([&](Completion done) { tls_->async_handshake(ssl::stream_base::client, done); },
            deadline);
  if (out.result == Result::kFailed) {
    out.permanent = tls.IsPermanent(tls_->native_handle(), out.ec);
    out.message = "TLS handshake with " + tls.server_name() + ": " +
                  tls.DescribeFailure(tls_->native_handle(), out.ec);
  } else if (!out.ok()) {
    out.message = "TLS handshake with " + tls.server_name();
  }
  return out;
}

Connection::Outcome Connection::Write(Request& request, SteadyTime deadline) {
  return Run(
      [&](Completion done) {
        if (tls_) {
          http::async_write(*tls_, request, done);
        } else {
          http::async_write(*tcp_, request, done);
        }
      },
      deadline);
}

Connection::Outcome Connection::ReadHeader(Parser& parser, SteadyTime deadline) {
  return Run(
      [&](Completion done) {
        if (tls_) {
          http::async_read_header(*tls_, buffer_, parser, done);
        } else {
          http::async_read_header(*tcp_, buffer_, parser, done);
        }
      },
      deadline);
}

Connection::Outcome Connection::ReadSome(Parser& parser, SteadyTime deadline) {
  auto start = [&](Completion done) {
    auto handler = [done](error_code ec, std::size_t n) {
      done(ec == http::error::need_buffer ? error_code() : ec, n);
    };
    if (tls_) {
      http::async_read_some(*tls_, buffer_, parser, handler);
    } else {
      http::async_read_some(*tcp_, buffer_, parser, handler);
    }
  };
  return Run(start, deadline);
}

void Connection::Bind(const std::shared_ptr<CancelToken>& cancel) {
  Unbind();
  if (!cancel) return;
  cancel_ = cancel;
  asio::io_context* ioc = &ioc_;
  subscription_ = cancel_->Subscribe([ioc] { ioc->stop(); });
}

void Connection::Unbind() {
  if (!cancel_) return;
  cancel_->Unsubscribe(subscription_);
  // Unsubscribe waits for a running callback: after it, a cancellation is visible here.
  if (cancel_->cancelled()) Close();
  cancel_.reset();
  subscription_ = -1;
}

bool Connection::LooksStale() {
  if (!open_ || buffer_.size() != 0) return true;
  if (tls_) {
    // Bytes the TLS engine has already taken off the socket (a close_notify that came with the
    // last response) are not visible to poll().
    SSL* ssl = tls_->native_handle();
    if (SSL_pending(ssl) > 0 || BIO_pending(SSL_get_rbio(ssl)) > 0) return true;
  }
  pollfd fd{};
  fd.fd = Lowest().socket().native_handle();
  fd.events = POLLIN;
  // Readable while idle means end of stream, a TLS close_notify or an unsolicited response:
  // in every case the server is done with this connection.
  return ::poll(&fd, 1, 0) != 0;
}

bool Connection::Reusable() const { return open_ && buffer_.size() == 0 && !Cancelled(); }

void Connection::Close() {
  open_ = false;
  if (tls_ || tcp_) {
    error_code ignored;
    Lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    Lowest().socket().close(ignored);
  }
}

}  // namespace steward::kube
