#include "kube/transport/tls.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <exception>

namespace steward::kube {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;

bool IsIpAddress(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

std::string OpenSslError() {
  unsigned long e = ERR_get_error();  // NOLINT(google-runtime-int): OpenSSL's type
  ERR_clear_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

}  // namespace

TlsContexts::TlsContexts(const RestConfig& config, std::string server_name)
    : insecure_(config.insecure_skip_tls_verify),
      server_name_(std::move(server_name)),
      server_name_is_ip_(IsIpAddress(server_name_)) {}

StatusOr<std::unique_ptr<TlsContexts>> TlsContexts::Create(const RestConfig& config,
                                                           std::string server_name) {
  std::unique_ptr<TlsContexts> out(new TlsContexts(config, std::move(server_name)));
  if (!config.ca_pem.empty() && !config.insecure_skip_tls_verify) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(
        BIO_new_mem_buf(config.ca_pem.data(), static_cast<int>(config.ca_pem.size())), BIO_free);
    ERR_clear_error();
    while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
      // OpenSSL fills a certificate's extension cache (key identifiers, flags) lazily, on its
      // first verification. Fill it now, before the anchor is shared by concurrent handshakes.
      X509_check_purpose(cert, -1, 0);
      out->anchors_.emplace_back(cert);
    }
    ERR_clear_error();  // the loop ends with a "no start line" error
    if (out->anchors_.empty()) {
      return InvalidArgument("the CA data of " + config.source +
                             " holds no PEM certificate (RestConfig.ca_pem)");
    }
  }
  // Build the anonymous context now so that a broken setup fails at Create.
  ASSIGN_OR_RETURN(auto context, out->Build(Credentials{}, ""));
  {
    MutexLock lock(out->mu_);  // not shared yet (uncontended); taken for the analysis
    out->current_.context = std::move(context);
  }
  return out;
}

StatusOr<std::shared_ptr<ssl::context>> TlsContexts::Build(const Credentials& credentials,
                                                           const std::string& provider) const {
  std::shared_ptr<ssl::context> ctx;
  try {
    ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  } catch (const std::exception& e) {
    return Internal(std::string("cannot create a TLS context: ") + e.what());
  }
  SSL_CTX* native = ctx->native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  boost::system::error_code ec;
  if (insecure_) {
    ctx->set_verify_mode(ssl::verify_none, ec);
  } else {
    ctx->set_verify_mode(ssl::verify_peer, ec);
    if (anchors_.empty()) {
      ctx->set_default_verify_paths(ec);
      if (ec) return Unavailable("cannot load the system CA certificates: " + ec.message());
    } else {
      X509_STORE* store = SSL_CTX_get_cert_store(native);
      for (const auto& cert : anchors_) {
        if (X509_STORE_add_cert(store, cert.get()) != 1) {
          return InvalidArgument("unusable CA certificate: " + OpenSslError());
        }
      }
    }
  }
  if (credentials.client_cert_pem.empty() != credentials.client_key_pem.empty()) {
    return Status(StatusCode::kUnauthenticated,
                  "client certificate without key (or key without certificate) from " + provider);
  }
  if (!credentials.client_cert_pem.empty()) {
    ctx->use_certificate_chain(asio::buffer(credentials.client_cert_pem), ec);
    if (ec) {
      return Status(StatusCode::kUnauthenticated,
                    "unusable client certificate from " + provider + ": " + ec.message());
    }
    ctx->use_private_key(asio::buffer(credentials.client_key_pem), ssl::context::pem, ec);
    if (ec) {
      return Status(StatusCode::kUnauthenticated,
                    "unusable client key from " + provider + ": " + ec.message());
    }
    if (SSL_CTX_check_private_key(native) != 1) {
      ERR_clear_error();
      return Status(StatusCode::kUnauthenticated,
                    "the client key from " + provider + " does not match its certificate");
    }
  }
  return ctx;
}

StatusOr<TlsContexts::Current> TlsContexts::For(const Credentials& credentials,
                                                const std::string& provider) {
  MutexLock lock(mu_);
  if (credentials.client_cert_pem == cert_pem_ && credentials.client_key_pem == key_pem_) {
    return current_;
  }
  ASSIGN_OR_RETURN(auto ctx, Build(credentials, provider));
  cert_pem_ = credentials.client_cert_pem;
  key_pem_ = credentials.client_key_pem;
  current_.context = std::move(ctx);
  ++current_.generation;
  return current_;
}

Status TlsContexts::Configure(SSL* ssl) const {
  // SNI carries host names only (RFC 6066 §3).
  if (!server_name_is_ip_ && SSL_set_tlsext_host_name(ssl, server_name_.c_str()) != 1) {
    ERR_clear_error();
    return InvalidArgument("bad TLS server name \"" + server_name_ + "\"");
  }
  if (insecure_) return Status::Ok();
  int ok = server_name_is_ip_
               ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), server_name_.c_str())
               : SSL_set1_host(ssl, server_name_.c_str());
  if (ok != 1) {
    ERR_clear_error();
    return InvalidArgument("bad TLS server name \"" + server_name_ + "\"");
  }
  SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  return Status::Ok();
}

std::string TlsContexts::DescribeFailure(SSL* ssl, const boost::system::error_code& ec) const {
  long verify = SSL_get_verify_result(ssl);  // NOLINT(google-runtime-int): OpenSSL's type
  if (!insecure_ && verify != X509_V_OK) {
    return std::string("certificate verify failed: ") + X509_verify_cert_error_string(verify) +
           " (verifying the server as \"" + server_name_ + "\")";
  }
  return ec.message();
}

bool TlsContexts::IsPermanent(SSL* ssl, const boost::system::error_code& ec) const {
  if (!insecure_ && SSL_get_verify_result(ssl) != X509_V_OK) return true;
  // Protocol errors (no shared version or cipher, not TLS at all) are configuration problems;
  // a closed or reset connection during the handshake is not.
  return ec.category() == asio::error::get_ssl_category() && ec != ssl::error::stream_truncated;
}

}  // namespace steward::kube
