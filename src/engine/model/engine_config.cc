#include "engine/model/pod_security.h"
#include "engine/model/project.h"
#include "engine/model/value_rules.h"

namespace steward::engine {

namespace {

// A string field that must be "" or a DNS-1123 subdomain.
Status OptionalName(const FieldReader& f, std::string_view name, std::string* out) {
  RETURN_IF_ERROR(f.String(name, out));
  return internal::CheckSubdomain(*out, f.PathOf(name), /*allow_empty=*/true);
}

Status CheckTimeZone(std::string_view tz, std::string_view path) {
  bool ok = !tz.empty() && tz.size() <= 64 && tz.front() != '/' &&
            tz.find("..") == std::string_view::npos;
  for (char c : tz) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '/' || c == '_' || c == '+' || c == '-');
  }
  if (!ok) return InvalidField(path, "must be an IANA time zone name such as Europe/London or UTC");
  return Status::Ok();
}

Status ParseCustomHostname(const Json& j, std::string path, CustomHostnameConfig* out) {
  ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(j, std::move(path)));
  RETURN_IF_ERROR(
      f.OnlyKnown({"allowedDomains", "ingressClass", "ingressAnnotations", "certManagerIssuer"}));
  std::optional<std::vector<std::string>> domains;
  RETURN_IF_ERROR(internal::NameList(f, "allowedDomains", &domains));
  if (domains) out->allowed_domains = std::move(*domains);
  RETURN_IF_ERROR(OptionalName(f, "ingressClass", &out->ingress_class));
  RETURN_IF_ERROR(f.StringMap("ingressAnnotations", &out->ingress_annotations));
  RETURN_IF_ERROR(
      internal::CheckAnnotations(out->ingress_annotations, f.PathOf("ingressAnnotations")));
  return OptionalName(f, "certManagerIssuer", &out->cert_manager_issuer);
}

Status ParseStorageDefaults(const Json& j, std::string path, StorageDefaults* out) {
  ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(j, std::move(path)));
  RETURN_IF_ERROR(f.OnlyKnown({"enabled", "size", "storageClass", "accessMode"}));
  RETURN_IF_ERROR(f.Bool("enabled", &out->enabled));
  // The StorageSpec fields share the spec's rules; "enabled" is checked above, so hand the rest
  // over without it.
  Json rest = Json::object();
  for (std::string_view k : {"size", "storageClass", "accessMode"}) {
    if (const Json* v = f.Find(k)) rest[std::string(k)] = *v;
  }
  return internal::ParseStorage(rest, f.path(), /*size_required=*/false, &out->spec);
}

Status ParsePolicy(const Json& j, std::string path, SpecPolicy* out) {
  ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(j, std::move(path)));
  RETURN_IF_ERROR(
      f.OnlyKnown({"allowPrivileged", "allowRunAsRoot", "level", "allowedAnnotationPrefixes"}));
  RETURN_IF_ERROR(f.Bool("allowPrivileged", &out->allow_privileged));
  RETURN_IF_ERROR(f.Bool("allowRunAsRoot", &out->allow_run_as_root));
  std::string level = "baseline";
  RETURN_IF_ERROR(f.OneOf("level", {"baseline", "restricted"}, &level));
  out->level = level == "restricted" ? PodSecurityLevel::kRestricted : PodSecurityLevel::kBaseline;
  if (out->level == PodSecurityLevel::kRestricted) {
    for (std::string_view key : {"allowPrivileged", "allowRunAsRoot"}) {
      const bool allowed =
          key == "allowPrivileged" ? out->allow_privileged : out->allow_run_as_root;
      if (allowed) {
        return InvalidField(f.PathOf("level"), "restricted needs " + std::string(key) +
                                                   ": false (true allows what the restricted "
                                                   "level refuses)");
      }
    }
  }
  if (const Json* v = f.Find("allowedAnnotationPrefixes")) {
    const std::string p = f.PathOf("allowedAnnotationPrefixes");
    if (!v->is_array()) {
      return InvalidField(p, "must be an array of strings, got " + std::string(JsonTypeName(*v)));
    }
    std::vector<std::string> prefixes;
    for (size_t i = 0; i < v->size(); ++i) {
      ASSIGN_OR_RETURN(std::string prefix, ReadString((*v)[i], IndexPath(p, i)));
      if (prefix.empty()) return InvalidField(IndexPath(p, i), "must not be empty");
      prefixes.push_back(std::move(prefix));
    }
    out->annotation_prefixes = std::move(prefixes);
  }
  return Status::Ok();
}

// With policy.level: restricted, the security contexts a pod gets when its spec sets none must
// pass that level themselves (every spec leaving them out runs with them, and so do agents).
Status CheckDefaultsAtLevel(const EngineConfig& c, const FieldReader& f) {
  if (c.policy.level != PodSecurityLevel::kRestricted) return Status::Ok();
  const internal::PodContexts defaults{
      c.pod_security_context.is_null() ? nullptr : &c.pod_security_context,
      f.PathOf("podSecurityContext"),
      true,
      c.container_security_context.is_null() ? nullptr : &c.container_security_context,
      f.PathOf("containerSecurityContext"),
      true};
  RETURN_IF_ERROR(internal::CheckBaselineContexts(defaults, "level: restricted"));
  return internal::CheckRestrictedContexts(defaults, "level: restricted");
}

}  // namespace

StatusOr<EngineConfig> ParseEngineConfig(const Json& j, std::string_view path) {
  ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(j, std::string(path)));
  RETURN_IF_ERROR(f.OnlyKnown({"namespace",
                               "domain",
                               "urlScheme",
                               "urlPort",
                               "forgeUrl",
                               "ingressClass",
                               "ingressAnnotations",
                               "certManagerIssuer",
                               "customHostname",
                               "serviceType",
                               "defaultStack",
                               "storage",
                               "labels",
                               "nodeSelector",
                               "tolerations",
                               "probes",
                               "podSecurityContext",
                               "containerSecurityContext",
                               "imagePullSecrets",
                               "privateCA",
                               "serviceAccount",
                               "schedulerName",
                               "logPassthrough",
                               "timeZone",
                               "progressDeadlineSeconds",
                               "mqttSchemaContainer",
                               "requireIngressAddress",
                               "httpProbe",
                               "httpProbeAddress",
                               "httpProbeTimeoutMs",
                               "removeOrphans",
                               "workers",
                               "maxStarting",
                               "stepTimeoutSeconds",
                               "policy"}));
  EngineConfig c;
  RETURN_IF_ERROR(f.String("namespace", &c.namespace_name));
  if (!IsDns1123Label(c.namespace_name)) {
    return InvalidField(f.PathOf("namespace"),
                        "must be a DNS-1123 label (1 to 63 lowercase letters, digits and '-', "
                        "starting and ending with a letter or digit)");
  }
  RETURN_IF_ERROR(f.String("domain", &c.domain));
  RETURN_IF_ERROR(internal::CheckSubdomain(c.domain, f.PathOf("domain"), /*allow_empty=*/false));
  RETURN_IF_ERROR(f.OneOf("urlScheme", {"http", "https"}, &c.url_scheme));
  RETURN_IF_ERROR(f.Int("urlPort", 0, 65535, &c.url_port));
  RETURN_IF_ERROR(f.String("forgeUrl", &c.forge_url));
  RETURN_IF_ERROR(internal::CheckHttpUrl(c.forge_url, f.PathOf("forgeUrl")));

  RETURN_IF_ERROR(OptionalName(f, "ingressClass", &c.ingress_class));
  RETURN_IF_ERROR(f.StringMap("ingressAnnotations", &c.ingress_annotations));
  RETURN_IF_ERROR(
      internal::CheckAnnotations(c.ingress_annotations, f.PathOf("ingressAnnotations")));
  RETURN_IF_ERROR(OptionalName(f, "certManagerIssuer", &c.cert_manager_issuer));
  if (const Json* ch = f.Find("customHostname")) {
    RETURN_IF_ERROR(ParseCustomHostname(*ch, f.PathOf("customHostname"), &c.custom_hostname));
  }
  RETURN_IF_ERROR(f.OneOf("serviceType", {"ClusterIP", "NodePort"}, &c.service_type));

  if (const Json* stack = f.Find("defaultStack")) {
    RETURN_IF_ERROR(internal::ParseStack(*stack, f.PathOf("defaultStack"), &c.default_stack));
  }
  if (const Json* storage = f.Find("storage")) {
    RETURN_IF_ERROR(ParseStorageDefaults(*storage, f.PathOf("storage"), &c.storage));
  }
  RETURN_IF_ERROR(f.StringMap("labels", &c.labels));
  RETURN_IF_ERROR(internal::CheckLabels(c.labels, f.PathOf("labels"), true));
  RETURN_IF_ERROR(f.StringMap("nodeSelector", &c.node_selector));
  RETURN_IF_ERROR(internal::CheckLabels(c.node_selector, f.PathOf("nodeSelector"), false));

  std::optional<Json> tolerations;
  RETURN_IF_ERROR(f.ObjectArray("tolerations", &tolerations));
  if (tolerations) {
    RETURN_IF_ERROR(
        internal::CheckKubeArray(*tolerations, "core.Toleration", f.PathOf("tolerations")));
    c.tolerations = std::move(*tolerations);
  }
  if (const Json* probes = f.Find("probes")) {
    RETURN_IF_ERROR(internal::ParseProbes(*probes, f.PathOf("probes"), &c.liveness_probe,
                                          &c.readiness_probe, &c.startup_probe));
  }
  std::optional<Json> pod_sc, container_sc;
  RETURN_IF_ERROR(f.Object("podSecurityContext", &pod_sc));
  if (pod_sc) {
    RETURN_IF_ERROR(internal::CheckKubeObject(*pod_sc, "core.PodSecurityContext",
                                              f.PathOf("podSecurityContext")));
    c.pod_security_context = std::move(*pod_sc);
  }
  RETURN_IF_ERROR(f.Object("containerSecurityContext", &container_sc));
  if (container_sc) {
    RETURN_IF_ERROR(internal::CheckKubeObject(*container_sc, "core.SecurityContext",
                                              f.PathOf("containerSecurityContext")));
    c.container_security_context = std::move(*container_sc);
  }
  std::optional<std::vector<std::string>> pull_secrets;
  RETURN_IF_ERROR(internal::NameList(f, "imagePullSecrets", &pull_secrets));
  if (pull_secrets) c.image_pull_secrets = std::move(*pull_secrets);
  RETURN_IF_ERROR(OptionalName(f, "privateCA", &c.private_ca));
  RETURN_IF_ERROR(OptionalName(f, "serviceAccount", &c.service_account));
  RETURN_IF_ERROR(OptionalName(f, "schedulerName", &c.scheduler_name));
  RETURN_IF_ERROR(f.Bool("logPassthrough", &c.log_passthrough));
  RETURN_IF_ERROR(f.String("timeZone", &c.time_zone));
  RETURN_IF_ERROR(CheckTimeZone(c.time_zone, f.PathOf("timeZone")));
  RETURN_IF_ERROR(f.Int("progressDeadlineSeconds", 1, 86400, &c.progress_deadline_seconds));
  RETURN_IF_ERROR(f.String("mqttSchemaContainer", &c.mqtt_schema_container));
  RETURN_IF_ERROR(internal::CheckImage(c.mqtt_schema_container, f.PathOf("mqttSchemaContainer")));

  RETURN_IF_ERROR(f.Bool("requireIngressAddress", &c.require_ingress_address));
  RETURN_IF_ERROR(f.Bool("httpProbe", &c.http_probe));
  RETURN_IF_ERROR(f.String("httpProbeAddress", &c.http_probe_address));
  if (!c.http_probe_address.empty()) {
    RETURN_IF_ERROR(internal::CheckHostPort(c.http_probe_address, f.PathOf("httpProbeAddress")));
  }
  RETURN_IF_ERROR(f.Int("httpProbeTimeoutMs", 1, 60000, &c.http_probe_timeout_ms));
  RETURN_IF_ERROR(f.Bool("removeOrphans", &c.remove_orphans));
  RETURN_IF_ERROR(f.Int("workers", 1, 256, &c.workers));
  RETURN_IF_ERROR(f.Int("maxStarting", 0, 100000, &c.max_starting));
  RETURN_IF_ERROR(f.Int("stepTimeoutSeconds", 1, 86400, &c.step_timeout_seconds));
  if (const Json* policy = f.Find("policy")) {
    RETURN_IF_ERROR(ParsePolicy(*policy, f.PathOf("policy"), &c.policy));
  }
  RETURN_IF_ERROR(CheckDefaultsAtLevel(c, f));
  return c;
}

}  // namespace steward::engine
