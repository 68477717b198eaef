#include "cli/kube_flags.h"

#include "kube/config/in_cluster.h"
#include "kube/config/kubeconfig.h"

namespace steward::cli {

void AddKubeFlags(CLI::App& cmd, KubeFlags& flags) {
  auto* kubeconfig = cmd.add_option("--kubeconfig", flags.kubeconfig,
                                    "Kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)");
  auto* context =
      cmd.add_option("--context", flags.context, "Kubeconfig context (default: current-context)");
  cmd.add_flag("--in-cluster", flags.in_cluster,
               "Use the pod's service account (KUBERNETES_SERVICE_HOST/PORT, "
               "/var/run/secrets/kubernetes.io/serviceaccount)")
      ->excludes(kubeconfig)
      ->excludes(context);
  cmd.add_option("--namespace,-n", flags.namespace_name,
                 "Namespace of Steward's objects (default: the context's or the service "
                 "account's namespace)");
}

StatusOr<kube::RestConfig> LoadRestConfig(const KubeFlags& flags) {
  StatusOr<kube::RestConfig> config =
      flags.in_cluster ? kube::LoadInCluster(kube::InClusterSources::FromEnvironment())
                       : kube::LoadKubeconfig(kube::KubeconfigSourcesFromEnvironment(
                             flags.kubeconfig, flags.context));
  if (config.ok() && !flags.namespace_name.empty()) config->namespace_name = flags.namespace_name;
  return config;
}

}  // namespace steward::cli
