// Test support for the kube modules: a RestConfig and a Client for an EmbeddedCluster (its URL, CA
// and token), so the kube tests and benchmarks reach it exactly as Steward reaches a real cluster.
// Header-only; only tests and benchmarks include it (the kube libraries never depend on the
// embedded cluster).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cluster/embedded_cluster.h"
#include "kube/client/client.h"
#include "kube/config/credential_providers.h"

namespace steward::kube::test_support {

inline RestConfig RestConfigFor(const cluster::EmbeddedCluster& cluster) {
  RestConfig config;
  config.server = cluster.api_url();
  config.ca_pem = cluster.ca_pem();
  Credentials credentials;
  credentials.bearer_token = cluster.token();
  config.credentials = MakeStaticCredentialProvider(credentials, "embedded cluster token");
  config.source = "embedded cluster " + cluster.api_url();
  return config;
}

// Aborts the test binary with the reason if the transport cannot be built (a test set-up bug).
inline std::shared_ptr<Client> ClientFor(const cluster::EmbeddedCluster& cluster,
                                         TransportOptions options = {}) {
  auto transport = Transport::Create(RestConfigFor(cluster), options);
  if (!transport.ok()) {
    std::fprintf(stderr, "transport for the embedded cluster: %s\n",
                 transport.error().ToString().c_str());
    std::abort();
  }
  return std::make_shared<Client>(*transport);
}

}  // namespace steward::kube::test_support
