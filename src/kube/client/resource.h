// ResourceType: group/version/resource (+ kind, scope) of a Kubernetes API resource, and the
// request paths built from it. The kinds Steward manages have named constants (immutable
// statics, safe to use from any thread); a ResourceType is a plain value.
#pragma once

#include <string>
#include <string_view>

namespace steward::kube {

struct ResourceType {
  std::string group;     // "" for the core group, "apps", "networking.k8s.io"
  std::string version;   // "v1"
  std::string resource;  // plural: "deployments"
  std::string kind;      // "Deployment"
  bool namespaced = true;

  // "v1" or "apps/v1".
  std::string ApiVersion() const;
  // "/api/v1/namespaces/<ns>/<resource>[/<name>[/<subresource>]]" or the /apis/... form; an
  // empty `ns` gives the all-namespaces collection path. Segments are percent-encoded.
  std::string Path(std::string_view ns, std::string_view name = "",
                   std::string_view subresource = "") const;
  // "deployments.apps" (as Kubernetes names the resource in messages).
  std::string GroupResource() const;

  bool operator==(const ResourceType&) const = default;

  static const ResourceType& Namespace();
  static const ResourceType& Secret();
  static const ResourceType& ConfigMap();
  static const ResourceType& PersistentVolumeClaim();
  static const ResourceType& Service();
  static const ResourceType& Pod();
  static const ResourceType& Event();
  static const ResourceType& Deployment();
  static const ResourceType& ReplicaSet();
  static const ResourceType& Ingress();
  static const ResourceType& EndpointSlice();
  static const ResourceType& Lease();  // coordination.k8s.io/v1 (replicas' membership)
};

}  // namespace steward::kube
