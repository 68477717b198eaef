// RestConfig: everything the transport needs to reach one API server, whichever way it was found
// (a kubeconfig file, or the in-cluster service account). Produced by LoadKubeconfig /
// LoadInCluster (kubeconfig.h, in_cluster.h); consumed by kube::Transport.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace steward::kube {

// What a request presents to the server. Either field group may be empty.
struct Credentials {
  std::string bearer_token;     // sent as "Authorization: Bearer <token>"
  std::string client_cert_pem;  // TLS client certificate (PEM), with its key
  std::string client_key_pem;
  std::optional<SystemTime> expiry;  // when known (exec plugins); the provider refreshes before it
};

// A source of credentials. Thread-safe: the transport calls Get() for every request from many
// threads, so implementations cache and must be cheap on the hot path.
class CredentialProvider {
 public:
  virtual ~CredentialProvider() = default;
  // The credentials to use now. Fails (kUnauthenticated) when they cannot be obtained, with a
  // message that says where they were looked for (file, command).
  virtual StatusOr<Credentials> Get() = 0;
  // The server answered 401 with the credentials from Get(): drop any cached value so that the
  // next Get() re-reads the token file or re-runs the exec plugin.
  virtual void Invalidate() = 0;
  // For logs and errors: "token file /var/run/...", "exec plugin aws-iam-authenticator", ...
  virtual std::string Describe() const = 0;
};

struct RestConfig {
  // Scheme, host, port and an optional path prefix: "https://10.0.0.1:6443", "https://h/prefix".
  std::string server;
  // Trust anchors (PEM) for the server's certificate; empty = the system's default trust store.
  std::string ca_pem;
  bool insecure_skip_tls_verify = false;
  // Name to verify the server certificate against (and SNI); empty = the host of `server`.
  std::string tls_server_name;
  // cluster.proxy-url from the kubeconfig; empty = HTTPS_PROXY/NO_PROXY from the environment.
  std::string proxy_url;
  // Null = anonymous requests.
  std::shared_ptr<CredentialProvider> credentials;
  // The namespace to use when the caller names none (context namespace, in-cluster namespace
  // file, else "default").
  std::string namespace_name = "default";
  // Where this configuration came from, for logs and errors:
  // "kubeconfig /root/.kube/config, context kind-dev" or "in-cluster service account".
  std::string source;
};

}  // namespace steward::kube
