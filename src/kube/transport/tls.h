// TlsContexts: the OpenSSL client contexts of one transport. TLS 1.2 or later; the server's
// certificate is verified against RestConfig::ca_pem (else the system's default trust store)
// and its name against tls_server_name or the URL host (DNS names with SSL_set1_host and no
// partial wildcards; IP addresses against IP subjectAltNames only); SNI is sent for DNS names,
// never for IP addresses. insecure_skip_tls_verify turns all verification off.
//
// Client certificates come from the credential provider and may change (exec plugins): For()
// builds a new context when they do, with a new generation number, so that the pool can drop
// connections made with the old one. Thread-safe.
#pragma once

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "kube/config/rest_config.h"

namespace steward::kube {

class TlsContexts {
 public:
  struct Current {
    std::shared_ptr<boost::asio::ssl::context> context;
    uint64_t generation = 0;
  };

  // `server_name` is the name to verify (tls_server_name, else the URL host). Fails with
  // kInvalidArgument when ca_pem holds no usable certificate.
  static StatusOr<std::unique_ptr<TlsContexts>> Create(const RestConfig& config,
                                                       std::string server_name);

  // The context presenting `credentials`' client certificate (none when empty). Fails with
  // kUnauthenticated when the certificate or key is unusable, naming `provider`.
  StatusOr<Current> For(const Credentials& credentials, const std::string& provider);

  // Per connection: SNI and the name to verify. Fails with kInvalidArgument on a bad name.
  Status Configure(SSL* ssl) const;

  // Why a handshake failed, with OpenSSL's verification result when there is one.
  std::string DescribeFailure(SSL* ssl, const boost::system::error_code& ec) const;
  // True when the failure is a certificate or protocol problem, which retrying cannot fix.
  bool IsPermanent(SSL* ssl, const boost::system::error_code& ec) const;

  const std::string& server_name() const { return server_name_; }

 private:
  struct X509Free {
    void operator()(X509* x) const { X509_free(x); }
  };
  TlsContexts(const RestConfig& config, std::string server_name);
  StatusOr<std::shared_ptr<boost::asio::ssl::context>> Build(const Credentials& credentials,
                                                             const std::string& provider) const;

  const bool insecure_;
  const std::string server_name_;
  const bool server_name_is_ip_;
  // Empty = system default paths. Filled by Create(), read-only afterwards.
  std::vector<std::unique_ptr<X509, X509Free>> anchors_;

  Mutex mu_;
  std::string cert_pem_ GUARDED_BY(mu_);  // of the current context
  std::string key_pem_ GUARDED_BY(mu_);
  Current current_ GUARDED_BY(mu_);
};

}  // namespace steward::kube
