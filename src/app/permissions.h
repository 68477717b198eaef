// The Kubernetes permissions Steward uses in its namespace: every (API group, resource, verb) the
// engine, its informers and (with replicas.enabled) the shard Leases ask for — no more. The
// deploy Role (deploy/base/role.yaml, plus the Lease rule of deploy/overlays/replicas-postgres)
// grants exactly these (a test compares them), and `steward check` asks the API server
// (SelfSubjectAccessReview) for each, naming any it lacks. Pure data; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace steward::app {

struct Permission {
  std::string group;     // "" for the core group
  std::string resource;  // "secrets"
  std::vector<std::string> verbs;
  std::string why;  // what Steward does with it, for `steward check`'s failures
};

// `replicas`: several replicas share the projects (replicas.enabled), which adds the Leases.
std::vector<Permission> RequiredPermissions(bool replicas);

}  // namespace steward::app
