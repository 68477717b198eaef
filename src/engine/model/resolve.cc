#include "engine/model/project.h"

namespace steward::engine {
namespace {

// `over` wins on shared keys.
StringMap Merge(const StringMap& base, const StringMap& over) {
  StringMap out = base;
  for (const auto& [k, v] : over) out[k] = v;
  return out;
}

}  // namespace

ResolvedSpec Resolve(const EngineConfig& config, std::string_view name, const ProjectSpec& spec) {
  ResolvedSpec r;
  r.spec = spec;
  ProjectSpec& s = r.spec;

  if (s.stack.image.empty()) s.stack.image = config.default_stack.image;
  if (s.stack.cpu == 0) s.stack.cpu = config.default_stack.cpu;
  if (s.stack.memory_mb == 0) s.stack.memory_mb = config.default_stack.memory_mb;
  s.stack.env = Merge(config.default_stack.env, spec.stack.env);

  if (!s.storage && config.storage.enabled) s.storage = config.storage.spec;
  r.storage = s.storage;

  s.labels = Merge(config.labels, spec.labels);
  if (!s.ingress_class) s.ingress_class = config.ingress_class;
  s.ingress_annotations = Merge(config.ingress_annotations, spec.ingress_annotations);
  if (s.node_selector.empty()) s.node_selector = config.node_selector;
  if (!s.tolerations) s.tolerations = config.tolerations;
  if (!s.liveness_probe) s.liveness_probe = config.liveness_probe;
  if (!s.readiness_probe) s.readiness_probe = config.readiness_probe;
  if (!s.startup_probe) s.startup_probe = config.startup_probe;
  if (!s.pod_security_context) s.pod_security_context = config.pod_security_context;
  if (!s.container_security_context) {
    s.container_security_context = config.container_security_context;
  }
  if (!s.image_pull_secrets) s.image_pull_secrets = config.image_pull_secrets;
  if (!s.private_ca) s.private_ca = config.private_ca;

  if (const std::optional<UrlParts> kept = SplitInstanceUrl(spec.url)) {
    r.host = kept->host;
    r.url = kept->scheme + "://" + kept->host + (kept->port.empty() ? "" : ":" + kept->port) + "/";
    return r;
  }
  r.host = DnsLabelOf(name) + "." + config.domain;
  r.url = config.url_scheme + "://" + r.host;
  if (config.url_port != 0) r.url += ":" + std::to_string(config.url_port);
  r.url += "/";
  return r;
}

}  // namespace steward::engine
