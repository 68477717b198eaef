#include "engine/manifests/manifests.h"

#include <cstdio>
#include <set>
#include <utility>

#include "common/base64.h"
#include "common/json_access.h"
#include "common/sha256.h"
#include "engine/model/shard.h"

namespace steward::engine {
namespace {

constexpr std::string_view kNameLabel = "app.kubernetes.io/name";
constexpr std::string_view kInstanceLabel = "app.kubernetes.io/instance";
constexpr std::string_view kCertManagerPrefix = "cert-manager.io/";
constexpr std::string_view kClusterIssuerAnnotation = "cert-manager.io/cluster-issuer";
constexpr std::string_view kStorageVolume = "persistence";
constexpr std::string_view kStorageMountPath = "/data/storage";
constexpr std::string_view kCaVolume = "cacert";
constexpr std::string_view kCaMountPath = "/usr/local/ssl-certs";
constexpr std::string_view kCaBundlePath = "/usr/local/ssl-certs/chain.pem";
constexpr std::string_view kClientIdKey = "FORGE_CLIENT_ID";
constexpr std::string_view kTokenKey = "FORGE_PROJECT_TOKEN";

const EngineConfig& ConfigOf(const RenderInput& in) {
  static const EngineConfig kDefault;
  return in.config != nullptr ? *in.config : kDefault;
}

Json ToJsonMap(const StringMap& m) {
  Json j = Json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}

// User labels first, so Steward's own labels (which selectors and informers rely on) win.
StringMap LabelsFor(const RenderInput& in) {
  const EngineConfig& config = ConfigOf(in);
  StringMap labels = config.labels;
  for (const auto& [k, v] : in.resolved.spec.labels) labels[k] = v;
  labels[std::string(kProjectLabel)] = in.id;
  labels[std::string(kManagedByLabel)] = std::string(kManagedByValue);
  labels[std::string(kNameLabel)] = "node-red";
  labels[std::string(kInstanceLabel)] = DnsLabelOf(in.name);
  if (config.shards > 0) {
    labels[std::string(kShardLabel)] = std::to_string(ShardOf(in.id, config.shards));
  }
  return labels;
}

// The labels FlowFuse's driver puts on an instance's Deployment and pods, which the platform's
// own tooling selects on (its Helm chart's NetworkPolicy: nodered=true).
StringMap WorkloadLabels(const RenderInput& in, const ObjectNames& names) {
  StringMap labels = LabelsFor(in);
  labels["nodered"] = "true";
  labels["app"] = in.id;
  labels["name"] = names.deployment;
  return labels;
}

// The labels FlowFuse's driver puts on an instance's PVC.
StringMap VolumeLabels(const RenderInput& in) {
  StringMap labels = LabelsFor(in);
  labels["ff-project-id"] = in.id;
  labels["ff-project-name"] = DnsLabelOf(in.name);
  return labels;
}

Json Metadata(const RenderInput& in, const std::string& name, const StringMap& annotations,
              const StringMap& labels) {
  Json meta = {
      {"name", name}, {"namespace", ConfigOf(in).namespace_name}, {"labels", ToJsonMap(labels)}};
  if (!annotations.empty()) meta["annotations"] = ToJsonMap(annotations);
  return meta;
}

Json Metadata(const RenderInput& in, const std::string& name, const StringMap& annotations) {
  return Metadata(in, name, annotations, LabelsFor(in));
}

Json NewObject(std::string_view api_version, std::string_view kind, Json metadata) {
  return Json{{"apiVersion", api_version}, {"kind", kind}, {"metadata", std::move(metadata)}};
}

Json Selector(const RenderInput& in) { return Json{{std::string(kProjectLabel), in.id}}; }

// Kubernetes returns quantities in canonical form ("1000m" comes back as "1", "1024Mi" as
// "1Gi"); rendering them canonically keeps LiveMatchesDesired from seeing drift that is not.
std::string CpuQuantity(int64_t millis) {
  if (millis % 1000 == 0) return std::to_string(millis / 1000);
  return std::to_string(millis) + "m";
}

std::string MemoryQuantity(int64_t mebibytes) {
  static constexpr std::string_view kSuffixes[] = {"Mi", "Gi", "Ti", "Pi"};
  size_t i = 0;
  while (mebibytes != 0 && mebibytes % 1024 == 0 && i + 1 < std::size(kSuffixes)) {
    mebibytes /= 1024;
    ++i;
  }
  return std::to_string(mebibytes) + std::string(kSuffixes[i]);
}

std::string HostOf(const RenderInput& in) {
  if (!in.resolved.host.empty()) return in.resolved.host;
  return DnsLabelOf(in.name) + "." + ConfigOf(in).domain;
}

// FlowFuse passes the instance URL without a trailing slash (protocol//host[:port]).
std::string BaseUrlOf(const RenderInput& in) {
  std::string url = in.resolved.url;
  if (url.empty()) {
    const EngineConfig& config = ConfigOf(in);
    url = config.url_scheme + "://" + HostOf(in);
    if (config.url_port != 0) url += ":" + std::to_string(config.url_port);
  }
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

bool NeedsRecreate(const std::optional<StorageSpec>& storage) {
  return storage &&
         (storage->access_mode == "ReadWriteOnce" || storage->access_mode == "ReadWriteOncePod");
}

Json PlainEnv(std::string_view name, std::string_view value) {
  return Json{{"name", name}, {"value", value}};
}

Json SecretEnv(std::string_view name, const std::string& secret, std::string_view key) {
  return Json{{"name", name}, {"valueFrom", {{"secretKeyRef", {{"name", secret}, {"key", key}}}}}};
}

Json RenderSecret(const RenderInput& in, const ObjectNames& names) {
  Json secret = NewObject("v1", "Secret", Metadata(in, names.secret, in.resolved.spec.annotations));
  secret["type"] = "Opaque";
  secret["data"] = {{std::string(kClientIdKey), Base64Encode(in.credential.id)},
                    {std::string(kTokenKey), Base64Encode(in.credential.token)}};
  return secret;
}

Json RenderPvc(const RenderInput& in, const ObjectNames& names, const StorageSpec& storage) {
  Json pvc = NewObject("v1", "PersistentVolumeClaim",
                       Metadata(in, names.pvc, in.resolved.spec.annotations, VolumeLabels(in)));
  Json spec = {{"accessModes", Json::array({storage.access_mode})},
               {"resources", {{"requests", {{"storage", storage.size}}}}}};
  if (!storage.storage_class.empty()) spec["storageClassName"] = storage.storage_class;
  pvc["spec"] = std::move(spec);
  return pvc;
}

Json RenderContainer(const RenderInput& in, const ObjectNames& names,
                     const std::string& private_ca) {
  const EngineConfig& config = ConfigOf(in);
  const ProjectSpec& spec = in.resolved.spec;
  const std::string image =
      spec.stack.image.empty() ? config.default_stack.image : spec.stack.image;
  const int64_t cpu = spec.stack.cpu != 0 ? spec.stack.cpu : config.default_stack.cpu;
  const int64_t memory =
      spec.stack.memory_mb != 0 ? spec.stack.memory_mb : config.default_stack.memory_mb;

  Json env = Json::array();
  env.push_back(PlainEnv("TZ", config.time_zone));
  env.push_back(PlainEnv("FORGE_URL", config.forge_url));
  env.push_back(PlainEnv("BASE_URL", BaseUrlOf(in)));
  env.push_back(PlainEnv("FORGE_TEAM_ID", spec.team));
  env.push_back(PlainEnv("FORGE_PROJECT_ID", in.id));
  // Credentials come from a Secret so that they never appear in the Deployment (which many
  // more people and tools can read): the platform's own when it supplied them (a Secret per
  // set, so a change rolls the pods), else Steward's.
  if (spec.credentials) {
    const std::string secret = SuppliedSecretName(in.id, spec.credentials->fingerprint);
    for (const std::string& key : spec.credentials->keys) {
      env.push_back(SecretEnv(key, secret, key));
    }
  } else {
    env.push_back(SecretEnv(kClientIdKey, names.secret, kClientIdKey));
    env.push_back(SecretEnv(kTokenKey, names.secret, kTokenKey));
  }
  env.push_back(PlainEnv("FORGE_NR_NO_TCP_IN", "true"));
  env.push_back(PlainEnv("FORGE_NR_NO_UDP_IN", "true"));
  if (spec.license_type == "ee") env.push_back(PlainEnv("FORGE_LICENSE_TYPE", "ee"));
  env.push_back(PlainEnv("FORGE_MEMORY_LIMIT", std::to_string(memory)));
  env.push_back(PlainEnv("FORGE_CPU_LIMIT", std::to_string(cpu)));
  if (config.log_passthrough) env.push_back(PlainEnv("FORGE_LOG_PASSTHROUGH", "true"));
  if (!private_ca.empty()) env.push_back(PlainEnv("NODE_EXTRA_CA_CERTS", kCaBundlePath));
  std::set<std::string> taken;
  for (const auto& e : env) taken.insert(e["name"].get<std::string>());
  // The model refuses reserved names; skipping them here as well means a stack variable can
  // never shadow a credential with a plain value.
  for (const auto& [k, v] : spec.stack.env) {
    if (!taken.contains(k)) env.push_back(PlainEnv(k, v));
  }

  Json container = {
      {"name", "node-red"},
      {"image", image},
      {"imagePullPolicy", "Always"},
      {"ports",
       Json::array(
           {{{"name", "web"}, {"containerPort", kWebPort}, {"protocol", "TCP"}},
            {{"name", "management"}, {"containerPort", kManagementPort}, {"protocol", "TCP"}}})},
      {"env", std::move(env)},
      {"resources",
       {{"requests", {{"cpu", CpuQuantity(cpu * 10)}, {"memory", MemoryQuantity(memory)}}},
        {"limits", {{"cpu", CpuQuantity(cpu * 10)}, {"memory", MemoryQuantity(memory + 128)}}}}},
  };
  const Json& security = spec.container_security_context ? *spec.container_security_context
                                                         : config.container_security_context;
  if (!security.is_null()) container["securityContext"] = security;
  auto probe = [&](const char* field, const std::optional<Json>& own,
                   const std::optional<Json>& fallback) {
    const std::optional<Json>& p = own ? own : fallback;
    if (p && !p->is_null()) container[field] = *p;
  };
  probe("livenessProbe", spec.liveness_probe, config.liveness_probe);
  probe("readinessProbe", spec.readiness_probe, config.readiness_probe);
  probe("startupProbe", spec.startup_probe, config.startup_probe);

  Json mounts = Json::array();
  if (in.resolved.storage) {
    mounts.push_back({{"name", kStorageVolume}, {"mountPath", kStorageMountPath}});
  }
  if (!private_ca.empty()) {
    mounts.push_back({{"name", kCaVolume}, {"mountPath", kCaMountPath}, {"readOnly", true}});
  }
  if (!mounts.empty()) container["volumeMounts"] = std::move(mounts);
  return container;
}

Json RenderDeployment(const RenderInput& in, const ObjectNames& names) {
  const EngineConfig& config = ConfigOf(in);
  const ProjectSpec& spec = in.resolved.spec;
  const std::string private_ca = spec.private_ca.value_or(config.private_ca);

  Json pod_spec = {{"enableServiceLinks", false}};
  const Json& pod_security =
      spec.pod_security_context ? *spec.pod_security_context : config.pod_security_context;
  if (!pod_security.is_null()) pod_spec["securityContext"] = pod_security;
  if (!config.service_account.empty()) pod_spec["serviceAccountName"] = config.service_account;
  if (!config.scheduler_name.empty()) pod_spec["schedulerName"] = config.scheduler_name;
  const StringMap& node_selector =
      spec.node_selector.empty() ? config.node_selector : spec.node_selector;
  if (!node_selector.empty()) pod_spec["nodeSelector"] = ToJsonMap(node_selector);
  const Json& tolerations = spec.tolerations ? *spec.tolerations : config.tolerations;
  if (tolerations.is_array() && !tolerations.empty()) pod_spec["tolerations"] = tolerations;
  const std::vector<std::string>& pull_secrets =
      spec.image_pull_secrets ? *spec.image_pull_secrets : config.image_pull_secrets;
  if (!pull_secrets.empty()) {
    Json refs = Json::array();
    for (const auto& s : pull_secrets) refs.push_back({{"name", s}});
    pod_spec["imagePullSecrets"] = std::move(refs);
  }
  Json volumes = Json::array();
  if (in.resolved.storage) {
    volumes.push_back(
        {{"name", kStorageVolume}, {"persistentVolumeClaim", {{"claimName", names.pvc}}}});
  }
  if (!private_ca.empty()) {
    volumes.push_back({{"name", kCaVolume}, {"configMap", {{"name", private_ca}}}});
  }
  if (!volumes.empty()) pod_spec["volumes"] = std::move(volumes);
  pod_spec["containers"] = Json::array({RenderContainer(in, names, private_ca)});

  // Pods carry the project's annotations too (scrape configs and the like are read from pods);
  // the two that roll the pods are Steward's and win.
  StringMap pod_annotations = spec.annotations;
  pod_annotations[std::string(kRestartAnnotation)] = std::to_string(in.restart_epoch);
  pod_annotations[std::string(kCredentialAnnotation)] =
      spec.credentials ? std::string(kSuppliedCredentialPrefix) + spec.credentials->fingerprint
                       : in.credential.id;

  Json strategy = NeedsRecreate(in.resolved.storage)
                      ? Json{{"type", "Recreate"}}
                      : Json{{"type", "RollingUpdate"},
                             {"rollingUpdate", {{"maxSurge", 1}, {"maxUnavailable", 0}}}};

  Json deployment =
      NewObject("apps/v1", "Deployment",
                Metadata(in, names.deployment, spec.annotations, WorkloadLabels(in, names)));
  deployment["spec"] = {
      {"replicas", spec.replicas},
      {"selector", {{"matchLabels", Selector(in)}}},
      {"revisionHistoryLimit", 3},
      {"progressDeadlineSeconds", config.progress_deadline_seconds},
      {"strategy", std::move(strategy)},
      {"template",
       {{"metadata",
         {{"labels", ToJsonMap(WorkloadLabels(in, names))},
          {"annotations", ToJsonMap(pod_annotations)}}},
        {"spec", std::move(pod_spec)}}},
  };
  return deployment;
}

Json RenderService(const RenderInput& in, const ObjectNames& names) {
  Json service =
      NewObject("v1", "Service", Metadata(in, names.service, in.resolved.spec.annotations));
  service["spec"] = {
      {"type", ConfigOf(in).service_type},
      {"selector", Selector(in)},
      {"ports",
       Json::array(
           {{{"name", "web"}, {"port", kWebPort}, {"targetPort", "web"}, {"protocol", "TCP"}},
            {{"name", "management"},
             {"port", kManagementPort},
             {"targetPort", "management"},
             {"protocol", "TCP"}}})},
  };
  return service;
}

// The placeholders FlowFuse's driver fills in Ingress annotation values.
struct AnnotationValues {
  std::string service_name, instance_url, instance_host, instance_protocol;
};

AnnotationValues ValuesFor(const RenderInput& in, const ObjectNames& names,
                           const std::string& host) {
  const std::string base = BaseUrlOf(in);  // scheme://host[:port]
  const size_t scheme_end = base.find("://");
  const std::string scheme = base.substr(0, scheme_end);
  std::string authority = base.substr(scheme_end + 3);
  // The custom-hostname Ingress: its own host, the instance URL's scheme and port.
  const size_t colon = authority.rfind(':');
  const std::string port = colon == std::string::npos ? "" : authority.substr(colon);
  authority = host + port;
  return {names.service, scheme + "://" + authority + "/", authority, scheme + ":"};
}

// {{ name }} (spaces allowed inside the braces) → the value, every occurrence; anything else is
// kept as written.
std::string ExpandAnnotation(const std::string& value, const AnnotationValues& v) {
  const std::pair<std::string_view, const std::string*> kNames[] = {
      {"serviceName", &v.service_name},
      {"instanceURL", &v.instance_url},
      {"instanceHost", &v.instance_host},
      {"instanceProtocol", &v.instance_protocol}};
  std::string out;
  size_t i = 0;
  while (i < value.size()) {
    const size_t open = value.find("{{", i);
    if (open == std::string::npos) break;
    const size_t close = value.find("}}", open + 2);
    if (close == std::string::npos) break;
    std::string_view inner(value.data() + open + 2, close - open - 2);
    while (!inner.empty() && inner.front() == ' ') inner.remove_prefix(1);
    while (!inner.empty() && inner.back() == ' ') inner.remove_suffix(1);
    const std::string* replacement = nullptr;
    for (const auto& [name, text] : kNames) {
      if (inner == name) replacement = text;
    }
    out.append(value, i, open - i);
    if (replacement != nullptr) {
      out += *replacement;
    } else {
      out.append(value, open, close + 2 - open);
    }
    i = close + 2;
  }
  out.append(value, i, std::string::npos);
  return out;
}

Json RenderIngress(const RenderInput& in, const std::string& name, const ObjectNames& names,
                   const std::string& host, const std::string& ingress_class,
                   const std::vector<const StringMap*>& annotation_layers,
                   const std::string& issuer, const std::string& tls_secret) {
  StringMap annotations = in.resolved.spec.annotations;
  for (const StringMap* layer : annotation_layers) {
    for (const auto& [k, v] : *layer) annotations[k] = v;
  }
  if (!issuer.empty()) {
    // As FlowFuse's driver: with an issuer configured, Steward alone says how cert-manager
    // issues the certificate; cert-manager.io/* keys from elsewhere are dropped.
    std::erase_if(annotations,
                  [](const auto& kv) { return kv.first.starts_with(kCertManagerPrefix); });
    annotations[std::string(kClusterIssuerAnnotation)] = issuer;
  }
  bool tls = !issuer.empty();
  for (const auto& [k, v] : annotations) {
    if (k.starts_with(kCertManagerPrefix)) tls = true;
  }
  const AnnotationValues values = ValuesFor(in, names, host);
  for (auto& [k, v] : annotations) v = ExpandAnnotation(v, values);

  Json ingress = NewObject("networking.k8s.io/v1", "Ingress", Metadata(in, name, annotations));
  Json path = {
      {"path", "/"},
      {"pathType", "Prefix"},
      {"backend", {{"service", {{"name", names.service}, {"port", {{"number", kWebPort}}}}}}}};
  Json spec = {{"rules", Json::array({{{"host", host},
                                       {"http", {{"paths", Json::array({std::move(path)})}}}}})}};
  if (!ingress_class.empty()) spec["ingressClassName"] = ingress_class;
  if (tls) {
    spec["tls"] = Json::array({{{"hosts", Json::array({host})}, {"secretName", tls_secret}}});
  }
  ingress["spec"] = std::move(spec);
  return ingress;
}

void Seal(Json& object) {
  object["metadata"]["annotations"][std::string(kSpecHashAnnotation)] = SpecHash(object);
}

// Appends to `where` the path (".key", "[i]") of the first place `live` differs.
bool Matches(const Json& desired, const Json& live, std::string* where) {
  if (desired.is_object()) {
    if (!live.is_object()) return live.is_null() && desired.empty();
    for (const auto& [key, value] : desired.items()) {
      auto it = live.find(key);
      if (it == live.end()) {
        if (!IsGoZeroValue(value)) {
          *where += "." + key;
          return false;
        }
      } else if (!Matches(value, *it, where)) {
        *where = "." + key + *where;
        return false;
      }
    }
    return true;
  }
  if (desired.is_array()) {
    if (!live.is_array()) return live.is_null() && desired.empty();
    if (desired.size() != live.size()) return false;
    for (size_t i = 0; i < desired.size(); ++i) {
      if (!Matches(desired[i], live[i], where)) {
        *where = "[" + std::to_string(i) + "]" + *where;
        return false;
      }
    }
    return true;
  }
  return desired == live;
}

}  // namespace

std::string SuppliedSecretName(std::string_view id, std::string_view fingerprint) {
  return std::string(id) + "-credentials-" + std::string(fingerprint);
}

Json RenderSuppliedSecret(std::string_view id, std::string_view name, const EngineConfig* config,
                          const SuppliedCredentials& values, int64_t supplied_at_ms,
                          std::string_view store_id) {
  RenderInput in;
  in.id = std::string(id);
  in.name = std::string(name);
  in.config = config;
  StringMap labels = LabelsFor(in);
  labels[std::string(kCredentialsLabel)] = std::string(kSuppliedValue);
  StringMap annotations = {{std::string(kSuppliedAtAnnotation), std::to_string(supplied_at_ms)}};
  if (!store_id.empty()) annotations[std::string(kStoreAnnotation)] = std::string(store_id);
  Json secret = NewObject(
      "v1", "Secret",
      Metadata(in, SuppliedSecretName(id, values.Ref().fingerprint), annotations, labels));
  secret["type"] = "Opaque";
  secret["immutable"] = true;
  Json data = Json::object();
  for (const auto& [k, v] : values.env) data[k] = Base64Encode(v);
  secret["data"] = std::move(data);
  Seal(secret);
  return secret;
}

ObjectNames NamesFor(std::string_view id, std::string_view name) {
  ObjectNames names;
  const std::string n = DnsLabelOf(name);
  names.secret = n + "-credentials";
  names.pvc = std::string(id) + "-pvc";
  names.deployment = n;
  // A Service name is an RFC 1035 label: it starts with a letter.
  names.service = (n[0] >= '0' && n[0] <= '9') ? FitName("srv-" + n, "", 63) : n;
  names.ingress = n;
  names.custom_ingress = n + "-custom";
  names.tls = n;
  names.custom_tls = n + "-custom";
  return names;
}

Manifests Render(const RenderInput& in) {
  const EngineConfig& config = ConfigOf(in);
  const ProjectSpec& spec = in.resolved.spec;
  Manifests m;
  m.names = NamesFor(in.id, in.name);

  if (!spec.credentials) m.secret = RenderSecret(in, m.names);
  if (in.resolved.storage) m.pvc = RenderPvc(in, m.names, *in.resolved.storage);
  m.deployment = RenderDeployment(in, m.names);
  m.service = RenderService(in, m.names);
  m.ingress = RenderIngress(in, m.names.ingress, m.names, HostOf(in),
                            spec.ingress_class.value_or(config.ingress_class),
                            {&config.ingress_annotations, &spec.ingress_annotations},
                            config.cert_manager_issuer, m.names.tls);
  if (!spec.custom_hostname.empty()) {
    const CustomHostnameConfig& custom = config.custom_hostname;
    m.custom_ingress = RenderIngress(in, m.names.custom_ingress, m.names, spec.custom_hostname,
                                     custom.ingress_class, {&custom.ingress_annotations},
                                     custom.cert_manager_issuer, m.names.custom_tls);
  }

  if (m.secret) Seal(*m.secret);
  if (m.pvc) Seal(*m.pvc);
  Seal(m.deployment);
  Seal(m.service);
  Seal(m.ingress);
  if (m.custom_ingress) Seal(*m.custom_ingress);
  return m;
}

AgentManifests RenderAgent(std::string_view id, std::string_view name, const EngineConfig* config,
                           const AgentSpec& spec, int64_t restart_epoch) {
  RenderInput in;
  in.id = std::string(id);
  in.name = std::string(name);
  in.config = config;
  const EngineConfig& c = ConfigOf(in);
  AgentManifests m;
  m.name = std::string(name);
  StringMap labels = LabelsFor(in);
  labels[std::string(kNameLabel)] = "mqtt-schema-agent";
  labels["team"] = spec.team;
  labels["broker"] = spec.broker;
  labels["mqttSchemaAgent"] = "true";
  StringMap pod_labels = labels;
  pod_labels["name"] = m.name;  // the driver's selector label

  Json env = Json::array();
  for (const auto& [k, v] : AgentEnv(c, spec)) env.push_back(PlainEnv(k, v));
  if (spec.credentials) {
    m.secret = SuppliedSecretName(id, spec.credentials->fingerprint);
    env.push_back(SecretEnv("FORGE_TEAM_TOKEN", m.secret, "FORGE_TEAM_TOKEN"));
  }
  const Json limits = {{"cpu", "100m"}, {"memory", "128Mi"}};
  Json container = {
      {"name", "mqtt-schema-agent"},
      {"image", c.mqtt_schema_container},
      {"imagePullPolicy", "Always"},
      {"env", std::move(env)},
      {"ports",
       Json::array({{{"name", "web"}, {"containerPort", kAgentPort}, {"protocol", "TCP"}}})},
      {"resources", {{"requests", limits}, {"limits", limits}}},
  };
  if (!c.container_security_context.is_null()) {
    container["securityContext"] = c.container_security_context;
  }
  Json pod_spec = {{"enableServiceLinks", false}, {"containers", Json::array({container})}};
  if (!c.scheduler_name.empty()) pod_spec["schedulerName"] = c.scheduler_name;
  if (!c.node_selector.empty()) pod_spec["nodeSelector"] = ToJsonMap(c.node_selector);
  if (!c.image_pull_secrets.empty()) {
    Json refs = Json::array();
    for (const auto& s : c.image_pull_secrets) refs.push_back({{"name", s}});
    pod_spec["imagePullSecrets"] = std::move(refs);
  }
  const StringMap pod_annotations = {
      {std::string(kRestartAnnotation), std::to_string(restart_epoch)},
      {std::string(kCredentialAnnotation),
       spec.credentials ? std::string(kSuppliedCredentialPrefix) + spec.credentials->fingerprint
                        : std::string()}};

  m.deployment = NewObject("apps/v1", "Deployment", Metadata(in, m.name, {}, labels));
  m.deployment["spec"] = {
      {"replicas", 1},
      {"selector", {{"matchLabels", Selector(in)}}},
      {"revisionHistoryLimit", 3},
      {"progressDeadlineSeconds", c.progress_deadline_seconds},
      {"strategy",
       {{"type", "RollingUpdate"}, {"rollingUpdate", {{"maxSurge", 1}, {"maxUnavailable", 0}}}}},
      {"template",
       {{"metadata",
         {{"labels", ToJsonMap(pod_labels)}, {"annotations", ToJsonMap(pod_annotations)}}},
        {"spec", std::move(pod_spec)}}},
  };
  m.service = NewObject("v1", "Service", Metadata(in, m.name, {}, labels));
  m.service["spec"] = {
      {"type", "ClusterIP"},
      {"selector", Selector(in)},
      {"ports",
       Json::array(
           {{{"name", "web"}, {"port", kAgentPort}, {"targetPort", "web"}, {"protocol", "TCP"}}})},
  };
  Seal(m.deployment);
  Seal(m.service);
  return m;
}

std::string SpecHash(const Json& object) {
  if (!object.is_object()) return Sha256Hex(DumpJson(object));
  Json copy = object;
  copy.erase("status");
  const Json& meta = MemberOrNull(object, "metadata");
  Json reduced = Json::object();
  const Json& name = MemberOrNull(meta, "name");
  if (!name.is_null()) reduced["name"] = name;
  const Json& labels = MemberOrNull(meta, "labels");
  if (labels.is_object() && !labels.empty()) reduced["labels"] = labels;
  Json annotations = MemberOrNull(meta, "annotations");
  if (annotations.is_object()) {
    annotations.erase(std::string(kSpecHashAnnotation));
    if (!annotations.empty()) reduced["annotations"] = std::move(annotations);
  }
  copy["metadata"] = std::move(reduced);
  // nlohmann's default object keeps keys sorted, so the dump is canonical.
  return Sha256Hex(DumpJson(copy));
}

std::string FirstMismatch(const Json& desired, const Json& live) {
  if (!desired.is_object() || !live.is_object()) return "(the object)";
  for (const auto& [key, value] : desired.items()) {
    if (key == "status") continue;
    const Json& live_value = MemberOrNull(live, key);
    std::string where;
    if (key == "metadata") {
      for (const char* field : {"labels", "annotations"}) {
        if (!Matches(MemberOrNull(value, field), MemberOrNull(live_value, field), &where)) {
          return "metadata." + std::string(field) + where;
        }
      }
    } else if (key == "data" && GetString(desired, "kind") == "Secret") {
      // Extra keys in a credentials Secret are not harmless defaults: compare exactly.
      const Json empty = Json::object();
      const Json& d = value.is_null() ? empty : value;
      const Json& l = live_value.is_null() ? empty : live_value;
      if (d != l) return "data";
    } else if (!Matches(value, live_value, &where)) {
      return key + where;
    }
  }
  return "";
}

bool LiveMatchesDesired(const Json& desired, const Json& live) {
  return FirstMismatch(desired, live).empty();
}

}  // namespace steward::engine
