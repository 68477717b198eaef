#include "engine/model/project.h"
#include "engine/model/value_rules.h"

namespace steward::engine {

std::optional<UrlParts> SplitInstanceUrl(std::string_view url) {
  UrlParts parts;
  std::string_view rest;
  if (url.starts_with("http://")) {
    parts.scheme = "http";
    rest = url.substr(7);
  } else if (url.starts_with("https://")) {
    parts.scheme = "https";
    rest = url.substr(8);
  } else {
    return std::nullopt;
  }
  if (rest.ends_with('/')) rest.remove_suffix(1);
  if (rest.empty() || rest.find_first_of("/?#@[] ") != std::string_view::npos) return std::nullopt;
  const size_t colon = rest.find(':');
  parts.host = std::string(rest.substr(0, colon));
  if (colon != std::string_view::npos) {
    parts.port = std::string(rest.substr(colon + 1));
    if (parts.port.empty()) return std::nullopt;
  }
  return parts;
}

namespace {

// An Ingress host must be a DNS name, never an IP address (the IPv4 forms, which are also DNS
// names in form, are engine.policy's: CheckCustomHostnamePolicy).
Status RefuseIpv6(std::string_view host, std::string_view path) {
  if (host.starts_with('[') || host.find(':') != std::string_view::npos) {
    return InvalidField(path, "must be a DNS name, not an IP address (an IPv6 literal)");
  }
  return Status::Ok();
}

Status CheckCustomHostname(std::string_view host, std::string_view path) {
  if (host.empty()) return Status::Ok();
  RETURN_IF_ERROR(RefuseIpv6(host, path));
  for (char c : host) {
    if (c >= 'A' && c <= 'Z') return InvalidField(path, "must be lowercase");
  }
  if (!IsDns1123Subdomain(host)) {
    return InvalidField(
        path,
        "must be an RFC 1123 hostname (lowercase letters, digits, '-' and '.', "
        "labels of 1 to 63 characters starting and ending with a letter or digit, at "
        "most 253 characters)");
  }
  if (host.find('.') == std::string_view::npos) {
    return InvalidField(path, "must contain a dot (a fully qualified name such as nr.example.com)");
  }
  return Status::Ok();
}

// scheme://host[:port][/]: what FlowFuse keeps of project.url.
Status CheckInstanceUrl(std::string_view url, std::string_view path) {
  if (url.empty()) return Status::Ok();
  const std::optional<UrlParts> parts = SplitInstanceUrl(url);
  if (const size_t scheme = url.find("://"); !parts && scheme != std::string_view::npos) {
    RETURN_IF_ERROR(RefuseIpv6(url.substr(scheme + 3, 1), path));
  }
  if (!parts) {
    return InvalidField(path,
                        "must be http://host[:port] or https://host[:port] (no user, path, query "
                        "or fragment)");
  }
  RETURN_IF_ERROR(CheckCustomHostname(parts->host, path));
  if (!parts->port.empty()) {
    int port = 0;
    for (char c : parts->port)
      port = c >= '0' && c <= '9' && port < 100000 ? port * 10 + (c - '0') : 100000;
    if (port < 1 || port > 65535) return InvalidField(path, "port must be between 1 and 65535");
  }
  return Status::Ok();
}

Status ParseIngress(const Json& j, std::string path, ProjectSpec* spec) {
  ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(j, std::move(path)));
  RETURN_IF_ERROR(f.OnlyKnown({"className", "annotations"}));
  if (f.Find("className") != nullptr) {
    std::string cls;
    RETURN_IF_ERROR(f.String("className", &cls));
    RETURN_IF_ERROR(internal::CheckSubdomain(cls, f.PathOf("className"), /*allow_empty=*/true));
    spec->ingress_class = std::move(cls);
  }
  RETURN_IF_ERROR(f.StringMap("annotations", &spec->ingress_annotations));
  return internal::CheckAnnotations(spec->ingress_annotations, f.PathOf("annotations"));
}

}  // namespace

StatusOr<ProjectSpec> ParseProjectSpec(const Json& j, std::string_view path,
                                       CredentialsInput* input) {
  if (!j.is_object()) {
    return InvalidField(path, "must be an object, got " + std::string(JsonTypeName(j)));
  }
  ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(j, std::string(path)));
  RETURN_IF_ERROR(f.OnlyKnown({"team", "stack", "customHostname", "storage", "replicas", "labels",
                               "annotations", "ingress", "nodeSelector", "tolerations", "probes",
                               "podSecurityContext", "containerSecurityContext", "imagePullSecrets",
                               "privateCA", "credentials", "licenseType", "url"}));
  ProjectSpec spec;
  if (f.Find("team") == nullptr) return InvalidField(f.PathOf("team"), "is required");
  RETURN_IF_ERROR(f.String("team", &spec.team));
  RETURN_IF_ERROR(internal::CheckTeam(spec.team, f.PathOf("team")));

  if (const Json* stack = f.Find("stack")) {
    RETURN_IF_ERROR(internal::ParseStack(*stack, f.PathOf("stack"), &spec.stack));
  }
  RETURN_IF_ERROR(f.String("url", &spec.url));
  RETURN_IF_ERROR(CheckInstanceUrl(spec.url, f.PathOf("url")));
  RETURN_IF_ERROR(f.String("customHostname", &spec.custom_hostname));
  RETURN_IF_ERROR(CheckCustomHostname(spec.custom_hostname, f.PathOf("customHostname")));
  if (const Json* storage = f.Find("storage")) {
    StorageSpec s{"", "", ""};
    RETURN_IF_ERROR(internal::ParseStorage(*storage, f.PathOf("storage"), true, &s));
    spec.storage = std::move(s);
  }
  RETURN_IF_ERROR(f.Int("replicas", 1, 10, &spec.replicas));

  RETURN_IF_ERROR(f.StringMap("labels", &spec.labels));
  RETURN_IF_ERROR(internal::CheckLabels(spec.labels, f.PathOf("labels"), true));
  RETURN_IF_ERROR(f.StringMap("annotations", &spec.annotations));
  RETURN_IF_ERROR(internal::CheckAnnotations(spec.annotations, f.PathOf("annotations")));
  if (const Json* ingress = f.Find("ingress")) {
    RETURN_IF_ERROR(ParseIngress(*ingress, f.PathOf("ingress"), &spec));
  }
  RETURN_IF_ERROR(f.StringMap("nodeSelector", &spec.node_selector));
  RETURN_IF_ERROR(internal::CheckLabels(spec.node_selector, f.PathOf("nodeSelector"), false));

  RETURN_IF_ERROR(f.ObjectArray("tolerations", &spec.tolerations));
  if (spec.tolerations) {
    RETURN_IF_ERROR(
        internal::CheckKubeArray(*spec.tolerations, "core.Toleration", f.PathOf("tolerations")));
  }
  if (const Json* probes = f.Find("probes")) {
    RETURN_IF_ERROR(internal::ParseProbes(*probes, f.PathOf("probes"), &spec.liveness_probe,
                                          &spec.readiness_probe, &spec.startup_probe));
  }
  RETURN_IF_ERROR(f.Object("podSecurityContext", &spec.pod_security_context));
  if (spec.pod_security_context) {
    RETURN_IF_ERROR(internal::CheckKubeObject(*spec.pod_security_context, "core.PodSecurityContext",
                                              f.PathOf("podSecurityContext")));
  }
  RETURN_IF_ERROR(f.Object("containerSecurityContext", &spec.container_security_context));
  if (spec.container_security_context) {
    RETURN_IF_ERROR(internal::CheckKubeObject(*spec.container_security_context,
                                              "core.SecurityContext",
                                              f.PathOf("containerSecurityContext")));
  }
  RETURN_IF_ERROR(internal::NameList(f, "imagePullSecrets", &spec.image_pull_secrets));
  if (f.Find("privateCA") != nullptr) {
    std::string ca;
    RETURN_IF_ERROR(f.String("privateCA", &ca));
    RETURN_IF_ERROR(internal::CheckSubdomain(ca, f.PathOf("privateCA"), /*allow_empty=*/true));
    spec.private_ca = std::move(ca);
  }
  if (input != nullptr) *input = CredentialsInput{};
  if (const Json* credentials = f.Find("credentials")) {
    RETURN_IF_ERROR(internal::ParseCredentials(*credentials, f.PathOf("credentials"), input,
                                               &spec.credentials));
  }
  RETURN_IF_ERROR(f.String("licenseType", &spec.license_type));
  if (!spec.license_type.empty() && spec.license_type != "ee") {
    return InvalidField(
        f.PathOf("licenseType"),
        "must be \"ee\" (a licensed platform) or \"\" (got " + QuoteShort(spec.license_type) + ")");
  }
  return spec;
}

Json ToJson(const ProjectSpec& spec) {
  Json j = Json::object();
  j["team"] = spec.team;

  Json stack = Json::object();
  if (!spec.stack.image.empty()) stack["image"] = spec.stack.image;
  if (spec.stack.cpu != 0) stack["cpu"] = spec.stack.cpu;
  if (spec.stack.memory_mb != 0) stack["memory"] = spec.stack.memory_mb;
  if (!spec.stack.env.empty()) stack["env"] = spec.stack.env;
  if (!stack.empty()) j["stack"] = std::move(stack);

  if (!spec.custom_hostname.empty()) j["customHostname"] = spec.custom_hostname;
  if (!spec.url.empty()) j["url"] = spec.url;
  if (spec.storage) {
    Json s = Json{{"size", spec.storage->size}};
    if (!spec.storage->storage_class.empty()) s["storageClass"] = spec.storage->storage_class;
    if (!spec.storage->access_mode.empty() && spec.storage->access_mode != "ReadWriteOnce") {
      s["accessMode"] = spec.storage->access_mode;
    }
    j["storage"] = std::move(s);
  }
  if (spec.replicas != 1) j["replicas"] = spec.replicas;
  if (!spec.labels.empty()) j["labels"] = spec.labels;
  if (!spec.annotations.empty()) j["annotations"] = spec.annotations;

  Json ingress = Json::object();
  if (spec.ingress_class) ingress["className"] = *spec.ingress_class;
  if (!spec.ingress_annotations.empty()) ingress["annotations"] = spec.ingress_annotations;
  if (!ingress.empty()) j["ingress"] = std::move(ingress);

  if (!spec.node_selector.empty()) j["nodeSelector"] = spec.node_selector;
  if (spec.tolerations) j["tolerations"] = *spec.tolerations;

  Json probes = Json::object();
  if (spec.liveness_probe) probes["livenessProbe"] = *spec.liveness_probe;
  if (spec.readiness_probe) probes["readinessProbe"] = *spec.readiness_probe;
  if (spec.startup_probe) probes["startupProbe"] = *spec.startup_probe;
  if (!probes.empty()) j["probes"] = std::move(probes);

  if (spec.pod_security_context) j["podSecurityContext"] = *spec.pod_security_context;
  if (spec.container_security_context) {
    j["containerSecurityContext"] = *spec.container_security_context;
  }
  if (spec.image_pull_secrets) j["imagePullSecrets"] = *spec.image_pull_secrets;
  if (spec.private_ca) j["privateCA"] = *spec.private_ca;
  if (spec.credentials) {
    j["credentials"] = {{"fingerprint", spec.credentials->fingerprint},
                        {"keys", spec.credentials->keys}};
  }
  if (!spec.license_type.empty()) j["licenseType"] = spec.license_type;
  return j;
}

namespace internal {

Status CheckTeam(std::string_view team, std::string_view path) {
  if (team.empty() || team.size() > 63) {
    return InvalidField(path,
                        "must be 1 to 63 characters (got " + std::to_string(team.size()) + ")");
  }
  for (char c : team) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    if (!ok) return InvalidField(path, "must consist of letters, digits, '_' and '-'");
  }
  return Status::Ok();
}

}  // namespace internal
}  // namespace steward::engine
