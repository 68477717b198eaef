#include "net/http_client.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <exception>
#include <limits>
#include <set>

#include "common/ascii.h"

namespace steward::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

constexpr uint32_t kHeaderLimit = 1u << 20;
// "No limit". Not boost::none: Boost 1.74's parser compares Content-Length against the
// optional limit, and a disengaged optional compares below every length, so a response whose
// header arrives apart from its body failed with body_limit.
constexpr uint64_t kNoBodyLimit = std::numeric_limits<uint64_t>::max();
constexpr size_t kStreamBufferSize = 16 * 1024;

Status DeadlineExceeded(std::string message) {
  return Status(StatusCode::kDeadlineExceeded, std::move(message));
}

template <class Fields>
void CopyHeaders(const Fields& fields, Headers* headers) {
  for (const auto& field : fields) {
    headers->Add(std::string(field.name_string()), std::string(field.value()));
  }
}

class ClientImpl final : public HttpClient {
 public:
  explicit ClientImpl(const Options& options) : options_(options) {
    server_name_ = options_.server_name.empty() ? options_.host : options_.server_name;
    error_code ec;
    asio::ip::address address = asio::ip::make_address(options_.host, ec);
    host_header_ = (!ec && address.is_v6()) ? "[" + options_.host + "]" : options_.host;
    host_header_ += ":" + std::to_string(options_.port);
    if (options_.tls) init_ = InitTls();
  }

  ~ClientImpl() override { Close(); }

  StatusOr<HttpResponse> Request(const std::string& method, const std::string& target,
                                 const std::string& body, const Headers& headers) override {
    RETURN_IF_ERROR(init_);
    try {
      Clock::time_point deadline = Clock::now() + options_.timeout;
      http::request<http::string_body> request = BuildRequest(method, target, body, headers);
      std::optional<http::response_parser<http::string_body>> parser;
      RETURN_IF_ERROR(Exchange(request, deadline, method, target, parser,
                               [](auto& s, auto& buffer, auto& p, auto handler) {
                                 http::async_read(s, buffer, p, std::move(handler));
                               }));
      HttpResponse response;
      auto& message = parser->get();
      response.status = static_cast<int>(message.result_int());
      CopyHeaders(message, &response.headers);
      response.body = std::move(message.body());
      if (!message.keep_alive()) Close();
      return response;
    } catch (const std::exception& e) {
      Close();
      return InvalidArgument(std::string("HTTP request failed: ") + e.what());
    }
  }

  StatusOr<HttpResponse> Stream(const std::string& method, const std::string& target,
                                const std::function<bool(std::string_view)>& on_data,
                                const Headers& headers,
                                std::chrono::milliseconds timeout) override {
    RETURN_IF_ERROR(init_);
    try {
      Clock::time_point deadline = Clock::now() + timeout;
      http::request<http::string_body> request = BuildRequest(method, target, "", headers);
      std::optional<http::response_parser<http::buffer_body>> parser_storage;
      RETURN_IF_ERROR(Exchange(request, deadline, method, target, parser_storage,
                               [](auto& s, auto& buffer, auto& p, auto handler) {
                                 http::async_read_header(s, buffer, p, std::move(handler));
                               }));
      auto& parser = *parser_storage;
      HttpResponse response;
      response.status = static_cast<int>(parser.get().result_int());
      CopyHeaders(parser.get(), &response.headers);
      char buf[kStreamBufferSize];
      while (!parser.is_done()) {
        parser.get().body().data = buf;
        parser.get().body().size = sizeof buf;
        Expire(deadline);
        error_code ec = Run([&](auto handler) {
          WithStream(
              [&](auto& s) { http::async_read_some(s, buffer_, parser, std::move(handler)); });
        });
        if (ec == http::error::need_buffer) ec = {};
        size_t n = sizeof buf - parser.get().body().size;
        if (n > 0 && !on_data(std::string_view(buf, n))) break;
        if (ec) {
          Close();
          return ErrorStatus(ec, deadline, "streaming " + method + " " + target);
        }
      }
      Close();
      return response;
    } catch (const std::exception& e) {
      Close();
      return InvalidArgument(std::string("HTTP request failed: ") + e.what());
    }
  }

 private:
  // Writes `request` and reads the response with `read(stream, buffer, parser, handler)` (an
  // async_read or async_read_header) into a fresh `parser`, over the kept-alive connection or a
  // new one. A kept-alive connection the server had already closed (an error before any byte of
  // the response) is tried once more on a new connection. On failure the connection is closed
  // and the error names `method` and `target`.
  template <class Body, class Read>
  Status Exchange(http::request<http::string_body>& request, Clock::time_point deadline,
                  const std::string& method, const std::string& target,
                  std::optional<http::response_parser<Body>>& parser, Read read) {
    for (int attempt = 0;; ++attempt) {
      bool reused = connected_;
      if (!connected_) RETURN_IF_ERROR(Connect(deadline));
      auto& p = parser.emplace();
      p.body_limit(kNoBodyLimit);
      p.header_limit(kHeaderLimit);
      if (request.method() == http::verb::head) p.skip(true);
      error_code ec = WriteRequest(request, deadline);
      if (!ec) {
        Expire(deadline);
        ec = Run([&](auto handler) {
          WithStream([&](auto& s) { read(s, buffer_, p, std::move(handler)); });
        });
      }
      if (!ec) return Status::Ok();
      Close();
      if (reused && attempt == 0 && !p.got_some() && !TimedOut(ec, deadline)) continue;
      return ErrorStatus(ec, deadline, method + " " + target);
    }
  }

  Status InitTls() {
    ssl_ctx_.emplace(ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(ssl_ctx_->native_handle(), TLS1_2_VERSION);
    error_code ec;
    if (options_.insecure_skip_verify) {
      ssl_ctx_->set_verify_mode(ssl::verify_none, ec);
      return Status::Ok();
    }
    ssl_ctx_->set_verify_mode(ssl::verify_peer, ec);
    if (!options_.ca_pem.empty()) {
      ssl_ctx_->add_certificate_authority(asio::buffer(options_.ca_pem), ec);
      if (ec) return InvalidArgument("unusable CA certificate: " + ec.message());
    } else {
      ssl_ctx_->set_default_verify_paths(ec);
      if (ec) return Unavailable("cannot load the system CA certificates: " + ec.message());
    }
    return Status::Ok();
  }

  http::request<http::string_body> BuildRequest(const std::string& method,
                                                const std::string& target, const std::string& body,
                                                const Headers& headers) {
    http::request<http::string_body> request;
    request.method_string(method);
    request.target(target);
    request.version(11);
    request.set(http::field::host, host_header_);
    request.set(http::field::user_agent, "steward");
    if (!options_.bearer_token.empty()) {
      request.set(http::field::authorization, "Bearer " + options_.bearer_token);
    }
    std::set<std::string> replaced;
    for (const auto& [name, value] : headers.fields()) {
      if (replaced.insert(AsciiLower(name)).second) request.erase(name);
      request.insert(name, value);
    }
    request.body() = body;
    request.prepare_payload();
    return request;
  }

  // Runs one asynchronous operation to completion on this thread.
  template <class Start>
  error_code Run(Start&& start) {
    error_code result = asio::error::would_block;
    start([&result](error_code ec, auto&&...) { result = ec; });
    ioc_.restart();
    ioc_.run();
    return result;
  }

  template <class F>
  void WithStream(F&& f) {
    if (tls_) {
      f(*tls_);
    } else {
      f(*tcp_);
    }
  }

  beast::tcp_stream& Lowest() { return tls_ ? tls_->next_layer() : *tcp_; }

  void Expire(Clock::time_point deadline) { Lowest().expires_at(deadline); }

  Status Connect(Clock::time_point deadline) {
    Close();
    tcp::resolver resolver(ioc_);
    tcp::resolver::results_type endpoints;
    error_code ec = asio::error::would_block;
    resolver.async_resolve(options_.host, std::to_string(options_.port),
                           [&](error_code rec, tcp::resolver::results_type results) {
                             ec = rec;
                             endpoints = std::move(results);
                           });
    ioc_.restart();
    ioc_.run();
    if (ec) return Unavailable("cannot resolve " + options_.host + ": " + ec.message());
    if (ssl_ctx_) {
      tls_.emplace(ioc_, *ssl_ctx_);
      Status st = ConfigureTls(tls_->native_handle());
      if (!st.ok()) {
        Close();
        return st;
      }
    } else {
      tcp_.emplace(ioc_);
    }
    Expire(deadline);
    ec = Run([&](auto handler) { Lowest().async_connect(endpoints, std::move(handler)); });
    if (ec) {
      Close();
      return ErrorStatus(ec, deadline, "connecting to " + host_header_);
    }
    error_code ignored;
    Lowest().socket().set_option(tcp::no_delay(true), ignored);
    if (tls_) {
      Expire(deadline);
      ec = Run([&](auto handler) {
        tls_->async_handshake(ssl::stream_base::client, std::move(handler));
      });
      if (ec) {
        Close();
        return ErrorStatus(ec, deadline, "TLS handshake with " + host_header_);
      }
    }
    connected_ = true;
    return Status::Ok();
  }

  Status ConfigureTls(SSL* ssl) {
    error_code ec;
    asio::ip::make_address(server_name_, ec);
    bool is_ip = !ec;
    // SNI carries host names only (RFC 6066).
    if (!is_ip && SSL_set_tlsext_host_name(ssl, server_name_.data()) != 1) {
      return InvalidArgument("bad server name: " + server_name_);
    }
    if (options_.insecure_skip_verify) return Status::Ok();
    int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), server_name_.c_str())
                   : SSL_set1_host(ssl, server_name_.c_str());
    if (ok != 1) return InvalidArgument("bad server name: " + server_name_);
    SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    return Status::Ok();
  }

  error_code WriteRequest(http::request<http::string_body>& request, Clock::time_point deadline) {
    Expire(deadline);
    return Run([&](auto handler) {
      WithStream([&](auto& s) { http::async_write(s, request, std::move(handler)); });
    });
  }

  static bool TimedOut(error_code ec, Clock::time_point deadline) {
    return ec == beast::error::timeout || Clock::now() >= deadline;
  }

  static Status ErrorStatus(error_code ec, Clock::time_point deadline, const std::string& what) {
    if (TimedOut(ec, deadline)) return DeadlineExceeded(what + ": timed out");
    return Unavailable(what + ": " + ec.message());
  }

  void Close() {
    if (tls_ || tcp_) {
      error_code ignored;
      Lowest().socket().close(ignored);
    }
    tls_.reset();
    tcp_.reset();
    buffer_.clear();
    connected_ = false;
  }

  const Options options_;
  std::string server_name_;
  std::string host_header_;
  Status init_;
  asio::io_context ioc_{1};
  std::optional<ssl::context> ssl_ctx_;
  std::optional<beast::tcp_stream> tcp_;
  std::optional<ssl::stream<beast::tcp_stream>> tls_;
  beast::flat_buffer buffer_;
  bool connected_ = false;
};

}  // namespace

std::unique_ptr<HttpClient> HttpClient::Create(const Options& options) {
  return std::make_unique<ClientImpl>(options);
}

}  // namespace steward::net
