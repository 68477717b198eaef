#include "kube/config/in_cluster.h"

#include <charconv>
#include <cstdlib>

#include "common/ascii.h"
#include "kube/config/file_util.h"

namespace steward::kube {

namespace {

using config_internal::ReadSmallFile;

std::optional<std::string> Env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

Status NotInCluster(const std::string& what) {
  return FailedPrecondition("in-cluster configuration: " + what);
}

bool ValidPort(const std::string& port) {
  int n = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
  return ec == std::errc() && ptr == port.data() + port.size() && n > 0 && n < 65536;
}

}  // namespace

InClusterSources InClusterSources::FromEnvironment() {
  InClusterSources s;
  s.host = Env("KUBERNETES_SERVICE_HOST");
  s.port = Env("KUBERNETES_SERVICE_PORT");
  s.pod_namespace = Env("POD_NAMESPACE");
  return s;
}

StatusOr<RestConfig> LoadInCluster(const InClusterSources& s, const CredentialOptions& options) {
  if (!s.host || s.host->empty() || !s.port || s.port->empty()) {
    return NotInCluster(
        "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set (not running in a "
        "Kubernetes pod?)");
  }
  if (!ValidPort(*s.port)) {
    return NotInCluster("KUBERNETES_SERVICE_PORT \"" + *s.port + "\" is not a port number");
  }
  RestConfig rc;
  bool ipv6 = s.host->find(':') != std::string::npos && s.host->front() != '[';
  rc.server = "https://" + (ipv6 ? "[" + *s.host + "]" : *s.host) + ":" + *s.port;

  auto ca = ReadSmallFile(s.root + "/ca.crt", 1u << 20);
  if (!ca.ok()) return NotInCluster("service account CA " + ca.error().message());
  if (ca->find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    return NotInCluster("service account CA " + s.root + "/ca.crt: no PEM certificate found");
  }
  rc.ca_pem = *std::move(ca);

  auto token = TokenFileCredentialProvider::Create(s.root + "/token", {}, options);
  if (!token.ok()) return NotInCluster("service account " + token.error().message());
  rc.credentials = *std::move(token);

  if (s.pod_namespace && !s.pod_namespace->empty()) {
    rc.namespace_name = *s.pod_namespace;
  } else if (auto ns = ReadSmallFile(s.root + "/namespace", 4096); ns.ok()) {
    std::string trimmed(TrimAsciiWhitespace(*ns));
    if (!trimmed.empty()) rc.namespace_name = trimmed;
  } else if (ns.error().code() != StatusCode::kNotFound) {
    return NotInCluster("service account namespace " + ns.error().message());
  }
  rc.source = "in-cluster service account " + s.root + " (server " + rc.server + ")";
  return rc;
}

}  // namespace steward::kube
