#include "cluster/model/resource_types.h"

namespace steward::cluster {

std::string ResourceType::ApiVersion() const {
  return group.empty() ? version : group + "/" + version;
}

std::string ResourceType::GroupResource() const {
  return group.empty() ? resource : resource + "." + group;
}

const std::vector<ResourceType>& AllResourceTypes() {
  static const std::vector<ResourceType> kTypes = [] {
    std::vector<ResourceType> t;
    auto add = [&](std::string group, std::string resource, std::string singular, std::string kind,
                   bool namespaced, std::vector<std::string> short_names,
                   std::vector<std::string> categories, bool status, bool scale, bool generation) {
      ResourceType r;
      r.group = std::move(group);
      r.version = "v1";
      r.resource = std::move(resource);
      r.singular = std::move(singular);
      r.kind = std::move(kind);
      r.namespaced = namespaced;
      r.short_names = std::move(short_names);
      r.categories = std::move(categories);
      r.has_status = status;
      r.has_scale = scale;
      r.has_generation = generation;
      t.push_back(std::move(r));
    };
    // Core group.
    add("", "namespaces", "namespace", "Namespace", false, {"ns"}, {}, true, false, false);
    add("", "pods", "pod", "Pod", true, {"po"}, {"all"}, true, false, false);
    add("", "services", "service", "Service", true, {"svc"}, {"all"}, true, false, false);
    add("", "endpoints", "endpoints", "Endpoints", true, {"ep"}, {}, false, false, false);
    add("", "secrets", "secret", "Secret", true, {}, {}, false, false, false);
    add("", "configmaps", "configmap", "ConfigMap", true, {"cm"}, {}, false, false, false);
    add("", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", true,
        {"pvc"}, {}, true, false, false);
    add("", "events", "event", "Event", true, {"ev"}, {}, false, false, false);
    add("", "serviceaccounts", "serviceaccount", "ServiceAccount", true, {"sa"}, {}, false, false,
        false);
    t.back().has_token = true;
    // apps/v1.
    add("apps", "deployments", "deployment", "Deployment", true, {"deploy"}, {"all"}, true, true,
        true);
    add("apps", "replicasets", "replicaset", "ReplicaSet", true, {"rs"}, {"all"}, true, true, true);
    // discovery.k8s.io/v1.
    add("discovery.k8s.io", "endpointslices", "endpointslice", "EndpointSlice", true, {}, {}, false,
        false, false);
    // networking.k8s.io/v1.
    add("networking.k8s.io", "ingresses", "ingress", "Ingress", true, {"ing"}, {}, true, false,
        true);
    add("networking.k8s.io", "ingressclasses", "ingressclass", "IngressClass", false, {}, {}, false,
        false, true);
    add("networking.k8s.io", "networkpolicies", "networkpolicy", "NetworkPolicy", true, {"netpol"},
        {}, false, false, true);
    // authorization.k8s.io/v1: answered, never stored.
    add("authorization.k8s.io", "selfsubjectaccessreviews", "selfsubjectaccessreview",
        "SelfSubjectAccessReview", false, {}, {}, false, false, false);
    t.back().create_only = true;
    add("authorization.k8s.io", "selfsubjectrulesreviews", "selfsubjectrulesreview",
        "SelfSubjectRulesReview", false, {}, {}, false, false, false);
    t.back().create_only = true;
    // authentication.k8s.io/v1: who the caller is, answered, never stored.
    add("authentication.k8s.io", "selfsubjectreviews", "selfsubjectreview", "SelfSubjectReview",
        false, {}, {}, false, false, false);
    t.back().create_only = true;
    // policy/v1.
    add("policy", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", true,
        {"pdb"}, {}, true, false, true);
    // rbac.authorization.k8s.io/v1.
    for (bool cluster : {false, true}) {
      const std::string prefix = cluster ? "cluster" : "";
      const std::string kind_prefix = cluster ? "Cluster" : "";
      add("rbac.authorization.k8s.io", prefix + "roles", prefix + "role", kind_prefix + "Role",
          !cluster, {}, {}, false, false, false);
      add("rbac.authorization.k8s.io", prefix + "rolebindings", prefix + "rolebinding",
          kind_prefix + "RoleBinding", !cluster, {}, {}, false, false, false);
    }
    // coordination.k8s.io/v1.
    add("coordination.k8s.io", "leases", "lease", "Lease", true, {}, {}, false, false, false);
    return t;
  }();
  return kTypes;
}

const ResourceType* FindResource(std::string_view group, std::string_view version,
                                 std::string_view resource) {
  for (const auto& r : AllResourceTypes()) {
    if (r.group == group && r.version == version && r.resource == resource) return &r;
  }
  return nullptr;
}

const ResourceType* FindKind(std::string_view api_version, std::string_view kind) {
  for (const auto& r : AllResourceTypes()) {
    if (r.kind == kind && r.ApiVersion() == api_version) return &r;
  }
  return nullptr;
}

const ResourceType* FindGroupResource(std::string_view group_resource) {
  for (const auto& r : AllResourceTypes()) {
    if (r.GroupResource() == group_resource) return &r;
  }
  return nullptr;
}

}  // namespace steward::cluster
