#include "net/http_server.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/log.h"
#include "common/mutex.h"
#include "net/connection_admission.h"
#include "net/server_session.h"

namespace steward::net {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using server::Session;
using server::SessionBase;
using server::SessionConfig;
using server::SessionOwner;

// TLS: only HTTP/1.1 is offered in ALPN.
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
    config_.limits.body_limit = [h = &handler](const HttpRequest& head) -> std::optional<size_t> {
      try {
        return h->BodyLimit(head);
      } catch (const std::exception& e) {
        LOG_ERROR("HTTP handler threw in BodyLimit: {}", e.what());
      } catch (...) {
        LOG_ERROR("HTTP handler threw in BodyLimit");
      }
      return std::nullopt;  // the server's limit
    };
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
        if (auto session = it->second.session.lock()) {
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
    auto it = sessions_.find(session);
    if (it == sessions_.end()) return;
    admission_.Release(it->second.client);
    sessions_.erase(it);
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
      std::string client = ConnectionAdmission::ClientOf(socket);
      if (!admission_.Admit(client, port_)) {
        RefuseConnection(std::move(socket), ssl_ctx_.has_value());
      } else if (ssl_ctx_) {
        StartSession<true>(std::move(socket), std::move(client));
      } else {
        StartSession<false>(std::move(socket), std::move(client));
      }
    } catch (const std::exception& e) {
      LOG_ERROR("dropping a new connection: {}", e.what());
    } catch (...) {
      LOG_ERROR("dropping a new connection");
    }
    DoAccept();
  }

  template <bool kTls>
  void StartSession(tcp::socket socket, std::string client) {
    std::shared_ptr<Session<kTls>> session;
    try {
      session = std::make_shared<Session<kTls>>(this, config_, std::move(socket),
                                                ssl_ctx_ ? &*ssl_ctx_ : nullptr);
    } catch (...) {
      admission_.Release(client);  // never registered: Unregister will not see it
      throw;
    }
    {
      MutexLock lock(mu_);
      if (stopping_.load()) {  // the socket closes with the session
        admission_.Release(client);
        return;
      }
      sessions_.emplace(session.get(), Open{session, std::move(client)});
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
  ConnectionAdmission admission_{options_.max_connections, options_.max_connections_per_client};

  mutable Mutex mu_;
  CondVar drained_;
  bool stopped_ GUARDED_BY(mu_) = false;
  std::atomic<bool> stopping_{false};  // set under mu_; read without it by stopping()
  struct Open {
    std::weak_ptr<SessionBase> session;
    std::string client;  // ClientOf its socket
  };
  std::unordered_map<SessionBase*, Open> sessions_ GUARDED_BY(mu_);
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
