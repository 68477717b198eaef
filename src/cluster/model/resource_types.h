// The resource types the embedded cluster serves, and how to find them by path or by kind.
//
// The table is static and immutable: safe to read from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace steward::cluster {

struct ResourceType {
  std::string group;     // "" for the core group
  std::string version;   // "v1"
  std::string resource;  // plural, as in the URL: "deployments"
  std::string singular;  // "deployment"
  std::string kind;      // "Deployment"
  bool namespaced = true;
  std::vector<std::string> short_names;  // "deploy"
  std::vector<std::string> categories;   // "all"
  bool has_status = false;               // serves the status subresource
  bool has_scale = false;                // serves the scale subresource
  // True when a write to anything but metadata and status bumps metadata.generation.
  // (Kubernetes bumps generation on spec changes for types with a spec.)
  bool has_generation = false;
  // A review kind (SelfSubjectAccessReview): only `create` is served and nothing is stored; the
  // answer is computed from the request.
  bool create_only = false;
  // Serves the `token` subresource (ServiceAccount: TokenRequest, `kubectl create token`).
  bool has_token = false;

  // "apps/v1", or "v1" for the core group.
  std::string ApiVersion() const;
  // "deployments.apps", or "pods" for the core group; the key used by storage.
  std::string GroupResource() const;
  std::string ListKind() const { return kind + "List"; }
};

// All served types, in discovery order.
const std::vector<ResourceType>& AllResourceTypes();

// Lookup by group + version + plural resource (as in a URL); nullptr if not served.
const ResourceType* FindResource(std::string_view group, std::string_view version,
                                 std::string_view resource);
// Lookup by apiVersion ("apps/v1") + kind ("Deployment"); nullptr if not served.
const ResourceType* FindKind(std::string_view api_version, std::string_view kind);
// Lookup by group-resource ("deployments.apps", "pods"); nullptr if not served.
const ResourceType* FindGroupResource(std::string_view group_resource);

}  // namespace steward::cluster
