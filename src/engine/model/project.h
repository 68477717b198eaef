// The project model: what the platform asks for (ProjectSpec), the cluster-wide configuration
// that fills in what a spec leaves out (EngineConfig, from Steward's config file), and the
// status the engine computes from observations (ProjectStatus).
//
// Spec and config are plain values, parsed from JSON/YAML by the functions below, which reject
// unknown fields and bad values with kInvalidArgument naming the field's dotted path
// ("spec.stack.memory: must be between 1 and 1048576 (got 0)"). Map entries are named
// `path["key"]` and array elements `path[i]`. A JSON null counts as an absent field (so a bare
// "labels:" line in YAML is fine), except where a value is required. Numbers must be JSON
// integers: 1.5, 2.0 and "2" are refused. Thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/status.h"

namespace steward::engine {

using StringMap = std::map<std::string, std::string>;

struct Stack {
  std::string image;  // container image; "" = the config's default stack image
  int cpu = 0;        // hundredths of a core (1..1000); 0 = default
  int memory_mb = 0;  // MB (1..1048576, as FlowFuse's driver: any positive number); 0 = default
  StringMap env;      // extra env vars (names: C identifiers, not FORGE_* or reserved)

  bool operator==(const Stack&) const = default;
};

// What a spec says of the instance's platform credentials: those the platform issued
// (FlowFuse's project.refreshAuthTokens(), broker credentials, the credentialSecret), kept in
// a Secret of their own and known here only by fingerprint; or none, and Steward generates the
// instance's client id and token itself. The values never reach the store, the history, the
// watch or any answer (see SuppliedCredentials).
struct CredentialsRef {
  std::string fingerprint;        // 16 hex digits of SHA-256 over the values
  std::vector<std::string> keys;  // the env names the Secret holds, sorted

  bool operator==(const CredentialsRef&) const = default;
};

struct StorageSpec {
  std::string size;           // Kubernetes quantity, e.g. "1Gi"
  std::string storage_class;  // "" = cluster default
  std::string access_mode;    // ReadWriteOnce | ReadWriteMany | ReadWriteOncePod

  bool operator==(const StorageSpec&) const = default;
};

// What the platform sends for a project (the body of PUT /projects/{name}, spec part). Every
// optional field left out falls back to EngineConfig. JSON names are camelCase:
// {"team", "stack": {"image","cpu","memory","env"}, "customHostname", "storage": {"size",
//  "storageClass","accessMode"}, "replicas", "labels", "annotations", "ingress": {"className",
//  "annotations"}, "nodeSelector", "tolerations", "probes": {"livenessProbe","readinessProbe",
//  "startupProbe"}, "podSecurityContext", "containerSecurityContext", "imagePullSecrets",
//  "privateCA"}.
// Rules beyond the comments below: stack.image, when present, is a plausible image reference
// (not empty, <= 255 chars, no whitespace, lowercase repository path, valid tag/digest);
// storage.size is a positive Kubernetes quantity; label keys are qualified names and label
// values (labels, nodeSelector) follow the Kubernetes label-value rule; keys of labels,
// annotations and ingress.annotations under steward.io/ or app.kubernetes.io/ are reserved;
// annotations (and ingress.annotations) total at most 256 KiB; className, storageClass,
// privateCA and imagePullSecrets entries are DNS-1123 subdomains, except that className: "" and
// privateCA: "" are accepted and mean "explicitly none" (cluster default class / no CA),
// overriding the config. tolerations, probes and the two security contexts are checked against
// the Kubernetes Go types (kube/schema: core.Toleration, core.Probe, core.PodSecurityContext,
// core.SecurityContext): unknown fields and wrong value types are refused
// ("spec.podSecurityContext.a: unknown field"), since a cluster would prune or refuse them. The
// operator's SpecPolicy is checked separately (CheckSpecPolicy). Set optionals (even empty) are
// kept through ToJson.
struct ProjectSpec {
  std::string team;  // required, 1..63 chars [A-Za-z0-9_-]
  Stack stack;
  std::string custom_hostname;  // "" = none; else a DNS name (RFC 1123 subdomain)
  // The instance's URL, kept as the platform has it (FlowFuse keeps project.url's scheme, host
  // and port across restarts and renames): "http(s)://host[:port]", optionally with a final
  // "/". "" = <name>.<domain> with the config's scheme and port.
  std::string url;
  std::optional<StorageSpec> storage;  // nullopt = config's storage default (maybe none)
  int replicas = 1;                    // 1..10; > 1 is HA
  StringMap labels;                    // added to every object (keys/values validated)
  StringMap annotations;               // added to every object
  std::optional<std::string> ingress_class;
  StringMap ingress_annotations;    // merged over the config's
  StringMap node_selector;          // replaces the config's when non-empty
  std::optional<Json> tolerations;  // array of Toleration objects
  std::optional<Json> liveness_probe, readiness_probe, startup_probe;  // Probe objects
  std::optional<Json> pod_security_context, container_security_context;
  std::optional<std::vector<std::string>> image_pull_secrets;
  std::optional<std::string> private_ca;      // ConfigMap name with chain.pem
  std::optional<CredentialsRef> credentials;  // nullopt: Steward-generated credentials
  std::string license_type;                   // "" or "ee": FORGE_LICENSE_TYPE

  bool operator==(const ProjectSpec&) const = default;
};

// The write-only values of spec.credentials in a request, as the env the launcher gets:
// FORGE_CLIENT_ID, FORGE_CLIENT_SECRET and FORGE_PROJECT_TOKEN (required), FORGE_BROKER_URL,
// FORGE_BROKER_USERNAME and FORGE_BROKER_PASSWORD (all three or none), FORGE_NR_SECRET.
// JSON: {"clientId", "clientSecret", "token", "broker": {"url", "username", "password"},
// "nodeRedSecret"}. Each value is 1..4096 printable ASCII characters (the broker URL an
// mqtt(s):// or ws(s):// URL); errors name the field and never quote a value.
struct SuppliedCredentials {
  StringMap env;

  CredentialsRef Ref() const;  // fingerprint and keys
};

// What spec.credentials in a request asks for.
struct CredentialsInput {
  enum class Mode {
    kKeep,         // absent: keep the project's current credentials (a new project: generated)
    kGenerated,    // {}: Steward generates them (the supplied ones are dropped)
    kSupplied,     // values: these, from now on
    kFingerprint,  // {"fingerprint", "keys"} as a GET shows it: must be the current ones
  };
  Mode mode = Mode::kKeep;
  SuppliedCredentials values;  // kSupplied
  CredentialsRef ref;          // kFingerprint (and kSupplied: values.Ref())
};

// Parses and validates a spec. `path` prefixes field names in errors ("spec"). With `input`
// (a request), spec.credentials may carry values, which go to `input` and not to the spec (the
// spec's credentials are then what the request asks for, except kKeep, left nullopt for the
// caller to fill in); without it (stored JSON) only the fingerprint form is accepted.
StatusOr<ProjectSpec> ParseProjectSpec(const Json& j, std::string_view path = "spec",
                                       CredentialsInput* input = nullptr);
// Canonical JSON (sorted keys, defaults omitted) — what the store keeps; parses back equal.
Json ToJson(const ProjectSpec& spec);

struct CustomHostnameConfig {
  std::string ingress_class;
  StringMap ingress_annotations;
  std::string cert_manager_issuer;  // "" = no TLS unless cert-manager.io/* annotations
  // Domains a project's custom hostname may use: the hostname equals one of them or ends with
  // "." + one of them. Empty: any domain (the reserved names of CheckCustomHostnamePolicy aside).
  std::vector<std::string> allowed_domains;

  bool operator==(const CustomHostnameConfig&) const = default;
};

struct StorageDefaults {
  bool enabled = false;  // give every project a PVC unless its spec says otherwise
  StorageSpec spec{"1Gi", "", "ReadWriteOnce"};

  bool operator==(const StorageDefaults&) const = default;
};

// The Kubernetes Pod Security Standards level engine.policy holds a spec to (key `level`).
enum class PodSecurityLevel { kBaseline, kRestricted };

// What the operator lets a project's spec ask for (config section engine.policy). The defaults
// hold a spec to the Pod Security Standards' baseline level and refuse running as root;
// FlowFuse's own settings (pod runAsUser / runAsGroup / fsGroup 1000,
// allowPrivilegeEscalation: false; on OpenShift empty contexts) pass. The baseline and root
// checks apply to what a spec sets, not to the operator's own config defaults; the restricted
// level applies to what the pod runs with (a context the spec leaves out is the config's, which
// ParseEngineConfig checks at that level). docs/security.md has the control-by-control table.
struct SpecPolicy {
  // false holds the spec to the baseline level (engine/model/pod_security.h), at pod and
  // container level: no privileged: true, allowPrivilegeEscalation: true (restricted in the
  // standards; refused here too), capabilities.add beyond AUDIT_WRITE CHOWN DAC_OVERRIDE FOWNER
  // FSETID KILL MKNOD NET_BIND_SERVICE SETFCAP SETGID SETPCAP SETUID SYS_CHROOT (as written: no
  // CAP_ prefix), procMount other than Default, windowsOptions.hostProcess: true,
  // seLinuxOptions with a type beyond container_t container_init_t container_kvm_t
  // container_engine_t or with a user or role, seccompProfile / appArmorProfile of a type other
  // than RuntimeDefault or Localhost, sysctls beyond the safe set, probes with a host, and
  // AppArmor / seccomp annotations naming another profile than runtime/default or localhost/*.
  // true turns every Pod Security check off (the standards' privileged level).
  bool allow_privileged = false;  // allowPrivileged
  // false refuses runAsUser: 0 and runAsNonRoot: false at pod or container level. A spec that
  // sets neither runs as its image's user (FlowFuse's node-red image: uid 1000).
  bool allow_run_as_root = false;  // allowRunAsRoot
  // "baseline" (the default) or "restricted": the baseline plus, on what the pod runs with,
  // allowPrivilegeEscalation: false, runAsNonRoot: true (pod or container), a RuntimeDefault or
  // Localhost seccompProfile (pod or container), capabilities.drop with ALL and capabilities.add
  // with NET_BIND_SERVICE only. restricted needs allowPrivileged and allowRunAsRoot false.
  PodSecurityLevel level = PodSecurityLevel::kBaseline;  // level
  // nullopt: any annotation key (beyond the reserved prefixes). Else every key of
  // spec.annotations and spec.ingress.annotations must start with one of these ([] refuses all).
  std::optional<std::vector<std::string>> annotation_prefixes;  // allowedAnnotationPrefixes

  bool operator==(const SpecPolicy&) const = default;
};

// Cluster-wide options: Steward's config file, section "engine" (YAML or JSON; same names in
// camelCase: namespace, domain, urlScheme, urlPort, forgeUrl, ingressClass, ...).
struct EngineConfig {
  std::string namespace_name = "steward";            // the one namespace for every project object
  std::string domain = "localhost";                  // project URL host = <name>.<domain>
  std::string url_scheme = "http";                   // http | https
  int url_port = 0;                                  // 0 = scheme default; else appended to URLs
  std::string forge_url = "http://forge.localhost";  // FORGE_URL for instances
  std::string ingress_class;                         // "" = cluster default IngressClass
  StringMap ingress_annotations;
  std::string cert_manager_issuer;  // TLS via cert-manager when set
  CustomHostnameConfig custom_hostname;
  std::string service_type = "ClusterIP";  // ClusterIP | NodePort
  Stack default_stack{"flowfuse/node-red", 10, 256, {}};
  StorageDefaults storage;
  StringMap labels;  // on every object
  StringMap node_selector;
  Json tolerations = Json::array();
  std::optional<Json> liveness_probe, readiness_probe, startup_probe;
  Json pod_security_context = Json{{"runAsUser", 1000}, {"runAsGroup", 1000}, {"fsGroup", 1000}};
  Json container_security_context = Json{{"allowPrivilegeEscalation", false}};
  std::vector<std::string> image_pull_secrets;
  std::string private_ca;       // ConfigMap name; "" = none
  std::string service_account;  // "" = namespace default
  std::string scheduler_name;   // pod spec.schedulerName; "" = the cluster's default scheduler
  bool log_passthrough =
      false;  // FORGE_LOG_PASSTHROUGH=true: the launcher copies NR's log to stdout
  std::string time_zone = "Europe/London";
  int progress_deadline_seconds = 600;
  // The image of MQTT schema agents (FlowFuse's driver option mqttSchemaContainer).
  std::string mqtt_schema_container = "flowfuse/mqtt-schema-agent";

  // Readiness and behaviour.
  bool require_ingress_address = true;  // wait for Ingress status.loadBalancer
  bool http_probe = false;              // probe the project URL before Running
  std::string http_probe_address;       // host:port to send the probe to ("" = URL's host)
  int http_probe_timeout_ms = 2000;
  bool remove_orphans = false;  // delete labelled objects that belong to no project
  int workers = 8;
  // Starts under way at once (engine/reconciler/start_gate.h): a start beyond it waits, in team
  // order, until one under way is Running, Failed or stopped. 0 (the default): no limit.
  int max_starting = 0;
  SpecPolicy policy;  // what a spec may ask for
  // How long one step may wait for the cluster (an object to become ready or gone, a write to
  // be observed) before the project is reported Failed with the step's reason (docs/lifecycle.md
  // "Bounded waits"); the engine keeps watching and recovers when the cluster moves.
  int step_timeout_seconds = 900;
  // Sharded mode (several replicas, engine/model/shard.h): the number of shards, from the
  // `replicas:` section (not the engine section's). 0 = one replica, unsharded: nothing is
  // rendered differently. > 0: every rendered object (and the Deployment's pod template) carries
  // steward.io/shard=<ShardOf(id, shards)>, so turning sharding on rolls every instance's pods
  // once.
  int shards = 0;

  bool operator==(const EngineConfig&) const = default;
};

// Parses the engine section of the config file; every field optional (null = the whole section
// absent = all defaults); unknown fields and bad values are kInvalidArgument naming the dotted
// path under `path`. Value rules match ParseProjectSpec's for the shared shapes (defaultStack as
// spec.stack, storage as spec.storage, labels, probes, ...); in addition namespace is a DNS-1123
// label, domain a DNS-1123 subdomain, urlScheme http|https, urlPort 0..65535, forgeUrl an
// http(s) URL, serviceType ClusterIP|NodePort, ingressClass / certManagerIssuer / privateCA /
// serviceAccount / schedulerName "" or a DNS-1123 subdomain, httpProbeAddress "" or host:port,
// workers 1..256, maxStarting 0..100000, progressDeadlineSeconds 1..86400,
// httpProbeTimeoutMs 1..60000, stepTimeoutSeconds 1..86400, policy {allowPrivileged,
// allowRunAsRoot, level (baseline|restricted), allowedAnnotationPrefixes}; with level:
// restricted, allowPrivileged and allowRunAsRoot must be false and podSecurityContext and
// containerSecurityContext must pass that level (CheckSpecPolicy). nodeSelector keys are not
// reserved (they select node labels, not labels Steward sets).
StatusOr<EngineConfig> ParseEngineConfig(const Json& j, std::string_view path = "engine");

// kInvalidArgument "<path>.<field>: <why> (refused by engine.policy.<key>)" for the first thing
// in `spec` config.policy (SpecPolicy) refuses; `path` as ParseProjectSpec's.
Status CheckSpecPolicy(const EngineConfig& config, const ProjectSpec& spec,
                       std::string_view path = "spec");

// The spec with the config's defaults applied: every field the manifests need is set.
// Resolve: stack image/cpu/memory from config.default_stack when ""/0, env = default env
// merged with the spec's (spec wins); labels = config labels merged with the spec's (spec
// wins); ingress_class = the spec's if set, else the config's (always set afterwards, "" =
// cluster default); ingress_annotations = config's merged with the spec's (spec wins);
// node_selector = the spec's when non-empty, else the config's; tolerations, probes, security
// contexts, image_pull_secrets and private_ca = the spec's if set, else the config's (so they are
// set afterwards, except probes the config leaves unset); storage = the spec's, else the
// config's default when config.storage.enabled, else none (spec.storage is set to the same);
// custom_hostname, replicas and annotations as given. Consumers read only `spec` + the fields
// below.
struct ResolvedSpec {
  ProjectSpec spec;                    // stack, replicas, ... all filled
  std::optional<StorageSpec> storage;  // the PVC to have, if any
  std::string host;                    // <name>.<domain>
  std::string url;                     // scheme://host[:port]/
};
ResolvedSpec Resolve(const EngineConfig& config, std::string_view name, const ProjectSpec& spec);

// What FlowFuse's platform asks of a driver about stacks (GET /v1/stack): the property schema
// of its stack editor, as FlowFuse's Kubernetes driver answers init() — cpu in hundredths of a
// core 1..1000, memory in MB, container an image — with the ranges Steward accepts; and the
// default stack (getDefaultStackProperties): {cpu, memory, container[, env]} from the config.
// `placement` (a Steward with several clusters): also "placement" — FlowFuse's stack editor
// requires a value for every property it is given, so only then, and "auto" says "let Steward
// place it".
Json StackPropertySchema(bool placement = false);
Json DefaultStackProperties(const Stack& stack);

// spec.url taken apart: scheme "http" | "https", host, port ("" = the scheme's). nullopt when
// it is not scheme://host[:port][/].
struct UrlParts {
  std::string scheme, host, port;
};
std::optional<UrlParts> SplitInstanceUrl(std::string_view url);

// Name rules shared by the API and the engine.
bool IsDns1123Label(std::string_view s);      // [a-z0-9]([-a-z0-9]*[a-z0-9])?, <= 63
bool IsDns1123Subdomain(std::string_view s);  // labels joined by '.', <= 253
// A project name is what FlowFuse calls an instance's safe name: 1 to 63 of [a-z0-9-],
// starting with a letter or digit (the platform allows a trailing '-', which no DNS label
// does; DnsLabelOf maps such a name onto one). Every object name derives from it (NamesFor in
// engine/manifests, docs/flowfuse.md "Names"); two projects whose derived names would clash are
// refused when the second is stored (their object names are claimed like hostnames).
Status ValidateProjectName(std::string_view name);
// A project id: a DNS-1123 label of at most 40 characters (ProjectRecord::id).
Status ValidateProjectId(std::string_view id);
// `base` + `suffix` when that is at most `max` characters and `base` does not end in '-';
// otherwise `base` cut short (trailing '-' dropped) + "-" + the first 8 hex digits of
// SHA-256(base) + `suffix`, which is at most `max`. Deterministic; `max` >= suffix + 9.
std::string FitName(std::string_view base, std::string_view suffix, size_t max);
// The name itself when it is a DNS-1123 label, else FitName(name, "", 63): the form used in
// hostnames, label values and object names.
std::string DnsLabelOf(std::string_view name);

// Phases, in the order a start passes through them. Suspending/Deleting are the teardown.
enum class Phase {
  kPending,       // accepted, nothing observed yet
  kProvisioning,  // creating or waiting for an object
  kRunning,       // every object ready at observedGeneration (docs/design.md §4)
  kUpdating,      // running at an older generation, rolling to the new one
  kDegraded,      // was running; something is not ready or drifted; being restored
  kSuspending,
  kSuspended,  // Deployment, Service, Ingresses and pods observed gone
  kDeleting,
  kFailed,  // cannot progress without a change of intent or cluster (reason says why)
  // The cluster has not answered for longer than its grace (reason ClusterUnreachable): what
  // runs there is not known; ProjectStatus::last_phase says what was last observed. Never a
  // phase the engine reaches by observing; it leaves it at the first run after the cluster
  // answers again.
  kUnknown,
};
std::string_view ToString(Phase p);  // "Pending", "Provisioning", ...
std::optional<Phase> ParsePhase(std::string_view s);

// A per-resource condition: "Secret", "PersistentVolumeClaim", "Deployment", "Service",
// "Ingress", "CustomIngress", "Probe", "Pods".
struct ResourceCondition {
  std::string resource;
  bool ready = false;   // for teardown: true once gone
  std::string reason;   // CamelCase: Created, Waiting, Ready, Terminating, Gone, ...
  std::string message;  // for a human

  bool operator==(const ResourceCondition&) const = default;
};

struct ProjectStatus {
  Phase phase = Phase::kPending;
  std::string reason;               // CamelCase, e.g. WaitingForEndpoints, ProgressDeadlineExceeded
  std::string message;              // what it waits for or why it failed, for a human
  int64_t observed_generation = 0;  // the generation this status describes
  std::string url;
  std::vector<ResourceCondition> conditions;
  int64_t since_ms = 0;  // when the phase was entered
  // Phase kUnknown only: the phase last observed before the cluster stopped answering, and since
  // when it held ("lastPhase", "lastPhaseSince"; absent otherwise).
  std::string last_phase;
  int64_t last_phase_since_ms = 0;
  // The engine's own bookkeeping, stored but never shown: the adoption fingerprint a Running
  // verdict was made on (engine/reconciler/adoption.h); "" when none.
  std::string fingerprint;

  bool operator==(const ProjectStatus&) const = default;
};
// {"phase","reason","message","observedGeneration","url","conditions":[{"resource","ready",
// "reason","message"}],"since"} with every field present (since in ms since the epoch): what
// users see. The fingerprint is left out.
Json ToJson(const ProjectStatus& status);
// What the store keeps (the status_json column): ToJson plus "fingerprint" when it is set.
Json ToStoredJson(const ProjectStatus& status);
// Inverse of ToStoredJson (and of ToJson). phase is required and must be known; other fields
// may be absent (zero values); unknown fields are ignored so an older Steward can read a newer
// one's status; wrong types are kInvalidArgument naming the field under "status".
StatusOr<ProjectStatus> ParseProjectStatus(const Json& j);
// The status the store holds for a project (its status_json column): nullopt when none was
// written, or when it cannot be read — which counts as none (the engine's next write replaces
// it).
std::optional<ProjectStatus> ParseStoredStatus(std::string_view status_json);

// What the project's owner asked for (the store's desired state, in the engine's terms).
enum class Intent { kRun, kSuspend, kDelete };

// The hostnames a project answers on (lower case):
// <name>.<domain>, and its custom hostname if any. Unique across projects: the store refuses a
// second project claiming one of them.
std::vector<std::string> ProjectHostnames(const EngineConfig& config, std::string_view name,
                                          const ProjectSpec& spec);
// The operator's policy for the hostnames of project `name`: spec.customHostname and the host of
// spec.url. Neither may be an IP address in any form (IsInetAtonAddress, an IPv6 literal) or a
// name whose last label is numeric (browsers read it as an address), the platform domain itself,
// or the forge URL's host or a name under it (where a page could set the platform's cookies;
// names under the domain are exempt when the operator put the domain under the forge host). A
// custom hostname is never of the form <label>.<domain> (a generated project host, so some other
// project's name) and within customHostname.allowedDomains when that is set. The URL's host may
// be of that form only as the project's own (<DnsLabelOf(name)>.<domain>) or one of
// `held_hosts`, the hosts the project holds already: its stored spec.url's and its former names'
// generated hosts (FlowFuse keeps an instance's URL across renames, so a renamed project's next
// spec carries <old name>.<domain>); outside the domain it is within allowedDomains when that is
// set. kInvalidArgument "spec.customHostname: ..." or "spec.url: ..." otherwise.
Status CheckCustomHostnamePolicy(const EngineConfig& config, std::string_view name,
                                 const ProjectSpec& spec,
                                 const std::vector<std::string>& held_hosts = {});
// True when `host` is an IPv4 address in a form inet_aton(3) takes: 1 to 4 dot-separated parts,
// each decimal, octal (leading 0) or hex (0x), the last filling the bytes left (127.0.0.1,
// 0x7f.0.0.1, 0177.1, 127.1, 2130706433).
bool IsInetAtonAddress(std::string_view host);

// The status a reader is shown (API answers, the watch stream, the store's phase column) for a
// project whose intent is `intent` at `generation`, given the engine's last written status
// (nullopt: none yet). A status written for an older generation never passes for the current
// one: Running, Updating or Degraded become Updating; Failed, Provisioning or Suspend* with
// intent kRun become Provisioning (Pending stays Pending); anything but Suspended becomes
// Suspending for kSuspend; everything becomes Deleting for kDelete — each with reason "Accepted"
// and a message naming both generations. A Suspended status stays as it is for kSuspend (nothing
// runs until the engine acts). observedGeneration, url and conditions are kept: they are what was
// observed. No status at all: Pending / Accepted.
ProjectStatus PresentStatus(const std::optional<ProjectStatus>& stored, Intent intent,
                            int64_t generation);

}  // namespace steward::engine
