#include "app/permissions.h"

namespace steward::app {

std::vector<Permission> RequiredPermissions(bool replicas) {
  const std::vector<std::string> kOwned = {"get", "list", "watch", "create", "update", "delete"};
  std::vector<Permission> out = {
      {"", "secrets", kOwned, "a project's credentials and supplied-credential Secrets"},
      {"", "persistentvolumeclaims", kOwned, "a project's storage"},
      {"", "services", kOwned, "a project's Service"},
      {"apps", "deployments", kOwned, "a project's Deployment"},
      {"networking.k8s.io", "ingresses", kOwned, "a project's Ingresses"},
      {"apps", "replicasets", {"list", "watch"}, "observing rollouts"},
      {"",
       "pods",
       {"get", "list", "watch", "delete"},
       "observing pods; taking over driver-k8s's MQTT schema agents"},
      {"discovery.k8s.io", "endpointslices", {"list", "watch"}, "knowing when a URL answers"},
  };
  if (replicas) {
    out.push_back({"coordination.k8s.io",
                   "leases",
                   {"get", "list", "create", "update"},
                   "each replica's shard Lease"});
  }
  return out;
}

}  // namespace steward::app
