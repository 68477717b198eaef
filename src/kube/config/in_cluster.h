// In-cluster configuration: the pod's service account, as client-go's rest.InClusterConfig reads
// it. The server is https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT (an IPv6 host is
// bracketed); the CA is <root>/ca.crt; the token is <root>/token, served by a
// TokenFileCredentialProvider so that rotated (bound, hourly-expiring) tokens are picked up; the
// namespace is $POD_NAMESPACE, else <root>/namespace, else "default" (client-go's order).
// Pure function of its inputs and the files it reads; thread-safe.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "kube/config/credential_providers.h"
#include "kube/config/rest_config.h"

namespace steward::kube {

inline constexpr char kServiceAccountRoot[] = "/var/run/secrets/kubernetes.io/serviceaccount";

struct InClusterSources {
  std::string root = kServiceAccountRoot;
  std::optional<std::string> host;           // KUBERNETES_SERVICE_HOST
  std::optional<std::string> port;           // KUBERNETES_SERVICE_PORT
  std::optional<std::string> pod_namespace;  // POD_NAMESPACE

  // The default root with the three variables read from the process environment.
  static InClusterSources FromEnvironment();
};

// Fails with kFailedPrecondition when not in a cluster (a variable unset or empty, the port not
// a number, the token or CA file unreadable), naming what is missing.
StatusOr<RestConfig> LoadInCluster(const InClusterSources& sources,
                                   const CredentialOptions& options = {});

}  // namespace steward::kube
