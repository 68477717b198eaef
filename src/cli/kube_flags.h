// The flags that say which Kubernetes cluster a command talks to, shared by every command that
// uses the Kubernetes client (`steward check`, later `steward serve`): --kubeconfig, --context,
// --in-cluster, --namespace. Precedence as kubectl: --kubeconfig, then $KUBECONFIG, then
// ~/.kube/config; --in-cluster uses the pod's service account instead.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "common/status.h"
#include "kube/config/rest_config.h"

namespace steward::cli {

struct KubeFlags {
  std::string kubeconfig;
  std::string context;
  bool in_cluster = false;
  std::string namespace_name;  // "" = the context's (or the service account's) namespace
};

void AddKubeFlags(CLI::App& cmd, KubeFlags& flags);

// Loads the configuration the flags select; errors name the file, context and field.
StatusOr<kube::RestConfig> LoadRestConfig(const KubeFlags& flags);

}  // namespace steward::cli
