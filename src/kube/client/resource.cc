#include "kube/client/resource.h"

#include "net/http.h"

namespace steward::kube {

std::string ResourceType::ApiVersion() const {
  return group.empty() ? version : group + "/" + version;
}

std::string ResourceType::Path(std::string_view ns, std::string_view name,
                               std::string_view subresource) const {
  std::string path = group.empty()
                         ? "/api/" + net::PercentEncode(version)
                         : "/apis/" + net::PercentEncode(group) + "/" + net::PercentEncode(version);
  if (namespaced && !ns.empty()) path += "/namespaces/" + net::PercentEncode(ns);
  path += "/" + net::PercentEncode(resource);
  if (name.empty()) return path;
  path += "/" + net::PercentEncode(name);
  if (!subresource.empty()) path += "/" + net::PercentEncode(subresource);
  return path;
}

std::string ResourceType::GroupResource() const {
  return group.empty() ? resource : resource + "." + group;
}

namespace {

ResourceType Core(std::string resource, std::string kind, bool namespaced = true) {
  return ResourceType{"", "v1", std::move(resource), std::move(kind), namespaced};
}

}  // namespace

const ResourceType& ResourceType::Namespace() {
  static const ResourceType t = Core("namespaces", "Namespace", false);
  return t;
}
const ResourceType& ResourceType::Secret() {
  static const ResourceType t = Core("secrets", "Secret");
  return t;
}
const ResourceType& ResourceType::ConfigMap() {
  static const ResourceType t = Core("configmaps", "ConfigMap");
  return t;
}
const ResourceType& ResourceType::PersistentVolumeClaim() {
  static const ResourceType t = Core("persistentvolumeclaims", "PersistentVolumeClaim");
  return t;
}
const ResourceType& ResourceType::Service() {
  static const ResourceType t = Core("services", "Service");
  return t;
}
const ResourceType& ResourceType::Pod() {
  static const ResourceType t = Core("pods", "Pod");
  return t;
}
const ResourceType& ResourceType::Event() {
  static const ResourceType t = Core("events", "Event");
  return t;
}
const ResourceType& ResourceType::Deployment() {
  static const ResourceType t{"apps", "v1", "deployments", "Deployment", true};
  return t;
}
const ResourceType& ResourceType::ReplicaSet() {
  static const ResourceType t{"apps", "v1", "replicasets", "ReplicaSet", true};
  return t;
}
const ResourceType& ResourceType::Ingress() {
  static const ResourceType t{"networking.k8s.io", "v1", "ingresses", "Ingress", true};
  return t;
}
const ResourceType& ResourceType::EndpointSlice() {
  static const ResourceType t{"discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", true};
  return t;
}

const ResourceType& ResourceType::Lease() {
  static const ResourceType t{"coordination.k8s.io", "v1", "leases", "Lease", true};
  return t;
}

}  // namespace steward::kube
