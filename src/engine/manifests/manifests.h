// Manifests: the Kubernetes objects one project should have, rendered from its resolved spec
// and the engine config. Pure functions of their input (no clock, no randomness), so a render
// repeated after a crash gives the same objects and the same spec hashes.
//
// Every object (and the Deployment's pod template) carries the labels steward.io/project=<id>,
// app.kubernetes.io/managed-by=steward, app.kubernetes.io/name=node-red and
// app.kubernetes.io/instance=<name> (over the config's and the spec's labels, which cannot
// override them), the spec's annotations, and the annotation steward.io/spec-hash =
// SpecHash(object), computed last. Names (see ObjectNames):
//   Secret "<name>-credentials", PVC "<id>-pvc", Deployment "<name>",
//   Service "<name>" ("srv-<name>" when the name starts with a digit, as Service names must
//   start with a letter), Ingress "<name>", custom-hostname Ingress "<name>-custom".
// Selectors (Deployment, Service) use only steward.io/project=<id>: a Deployment's selector is
// immutable, so it must not include labels the spec can change.
//
// The Deployment follows FlowFuse's driver (docs: flowfuse-driver.md §3.2) with fixes: the
// credentials come from the Secret by secretKeyRef (never a plain env value), the pod template
// carries steward.io/restart-epoch and steward.io/credential-id (a change of either rolls the
// pods), enableServiceLinks=false sits in the pod spec, and the strategy is Recreate when the
// PVC is ReadWriteOnce/ReadWriteOncePod (two pods could not mount it at once), else
// RollingUpdate with maxSurge 1, maxUnavailable 0. Quantities are rendered in Kubernetes'
// canonical form (cpu 10 → "100m", 100 → "1"; memory 256 → "256Mi", 896+128 → "1Gi") so that
// what the server returns compares equal. Ingresses get TLS (secret "<ingress>-tls") when a
// cert-manager issuer is configured or any of their annotations starts with cert-manager.io/.
//
// No owner references are set. The project itself has no Kubernetes object that could own
// anything (it lives in Steward's store), and no rendered object should be garbage-collected
// with another: the Secret and PVC outlive the Deployment on suspend, and the Service and
// Ingresses are deleted explicitly, Ingresses first, each waited for until truly gone
// (docs/design.md §3.4), which a cascade would only race with. Everything is findable by its labels
// instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/json.h"
#include "engine/model/agent.h"
#include "engine/model/project.h"

namespace steward::engine {

inline constexpr std::string_view kProjectLabel = "steward.io/project";
inline constexpr std::string_view kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr std::string_view kManagedByValue = "steward";
inline constexpr std::string_view kSpecHashAnnotation = "steward.io/spec-hash";
// Pod-template annotations whose change rolls the pods.
inline constexpr std::string_view kRestartAnnotation = "steward.io/restart-epoch";
inline constexpr std::string_view kCredentialAnnotation = "steward.io/credential-id";
// On objects `steward migrate` has relabelled for a project it has not yet handed to Steward's
// API (value: where they came from, "driver-k8s"): orphan removal (engine.removeOrphans) never
// deletes an object carrying it, as the project it belongs to is about to be stored.
inline constexpr std::string_view kMigratingAnnotation = "steward.io/migrating";
inline constexpr int kWebPort = 1880;
inline constexpr int kManagementPort = 2880;

// The Secret that holds a project's supplied credentials with this fingerprint:
// "<id>-credentials-<fingerprint>" (by id, as the PVC, so a rename keeps it). Labelled as every
// object, plus steward.io/credentials=supplied; immutable (a new set is a new Secret).
std::string SuppliedSecretName(std::string_view id, std::string_view fingerprint);
inline constexpr std::string_view kCredentialsLabel = "steward.io/credentials";
// When the API last took the set (wall-clock ms): written at create, refreshed when the same set
// is put again. The engine deletes an older set only when it was taken before the current one
// (or long ago: kSuppliedGraceMs), so that a run on an older intent never deletes the Secret of
// a newer one that is about to be committed.
inline constexpr std::string_view kSuppliedAtAnnotation = "steward.io/supplied-at";
inline constexpr int64_t kSuppliedGraceMs = 10 * 60 * 1000;
inline constexpr std::string_view kSuppliedValue = "supplied";
// The API writes a project's supplied-credentials Secret just before it commits the project: a
// Secret of a project the store does not know is an orphan only once it is this old; the engine
// looks at it again then. One this store's Steward wrote (kStoreAnnotation) is then removed
// whatever engine.removeOrphans says: it was written for an intent that was never committed (a
// Steward killed in between) and holds credentials nobody uses. Any other is reported, and
// removed when configured.
inline constexpr int64_t kSuppliedOrphanGraceMs = 120 * 1000;
// On a supplied-credentials Secret: the FeedId of the store whose intent it was written for.
inline constexpr std::string_view kStoreAnnotation = "steward.io/store";
// The pod-template credential annotation of pods started with supplied credentials is this
// prefix + the fingerprint.
inline constexpr std::string_view kSuppliedCredentialPrefix = "supplied-";

struct ObjectNames {
  std::string secret, pvc, deployment, service, ingress, custom_ingress;
  // The TLS Secrets cert-manager makes for the Ingresses (named as FlowFuse's driver names
  // them, so that a migrated instance keeps its certificate); deleted with the Ingresses.
  std::string tls, custom_tls;
};
ObjectNames NamesFor(std::string_view id, std::string_view name);

// The credential the instance should hold (the pending one during a rotation).
struct CredentialRef {
  std::string id;
  std::string token;
};

struct RenderInput {
  std::string id;
  std::string name;
  const EngineConfig* config = nullptr;  // not owned; null renders with EngineConfig{}
  // Normally Resolve()'s output. Fields it would fill that are still unset (empty image, cpu or
  // memory 0, nullopt options, empty host/url) fall back to the config here as well.
  ResolvedSpec resolved;
  int64_t restart_epoch = 0;
  CredentialRef credential;
};

struct Manifests {
  ObjectNames names;
  // Steward's generated credentials (data: FORGE_CLIENT_ID, FORGE_PROJECT_TOKEN, base64), named
  // names.secret; absent when the spec has supplied ones (spec.credentials), which the pod reads
  // from their own Secret (SuppliedSecretName) instead.
  std::optional<Json> secret;
  std::optional<Json> pvc;             // when the spec has storage
  Json deployment;                     // env from the Secret via secretKeyRef, never plain values
  Json service;                        // ports web 1880, management 2880
  Json ingress;                        // host <name>.<domain>
  std::optional<Json> custom_ingress;  // when the spec has a custom hostname
};

// Renders every object, namespace set, spec-hash annotation set.
Manifests Render(const RenderInput& in);

// The Secret of supplied credentials (the values as data, base64), for project `id` named
// `name`, in the config's namespace; spec-hash annotation set; kStoreAnnotation = `store_id`
// (the FeedId of the store the intent naming it goes to) unless empty.
Json RenderSuppliedSecret(std::string_view id, std::string_view name, const EngineConfig* config,
                          const SuppliedCredentials& values, int64_t supplied_at_ms,
                          std::string_view store_id);

// An MQTT schema agent's objects (engine/model/agent.h), as FlowFuse's driver renders them:
// a Deployment of one pod (container "mqtt-schema-agent", image config.mqtt_schema_container,
// imagePullPolicy Always, 100m/128Mi requested and limited, port "web" 3500; env AgentEnv and
// FORGE_TEAM_TOKEN from the supplied Secret by secretKeyRef; the config's nodeSelector,
// schedulerName, imagePullSecrets and container security context) and a ClusterIP Service on
// port "web" 3500. Both carry the driver's labels (name, team, broker, mqttSchemaAgent=true)
// beside Steward's (the project label holds the agent's record id) and the config's labels;
// both are named `name` (AgentName) and sealed with the spec-hash annotation.
struct AgentManifests {
  std::string name;
  std::string secret;  // the supplied Secret the pod reads (SuppliedSecretName); "" when none
  Json deployment;
  Json service;
};
inline constexpr int kAgentPort = 3500;
AgentManifests RenderAgent(std::string_view id, std::string_view name, const EngineConfig* config,
                           const AgentSpec& spec, int64_t restart_epoch);

// Hash of what Steward controls in an object (labels, annotations other than the hash itself,
// and spec / data / the fields Steward sets); hex, stable across runs and platforms.
std::string SpecHash(const Json& object);

// True when every field Steward sets in `desired` has the same value in `live` (objects compared
// key by key recursively, arrays element by element with equal length, scalars equal). Fields
// the server adds (defaults, status, metadata it owns) are ignored: of metadata only labels and
// annotations are compared, and status never. A desired zero value ("", false, 0, {}, [], null)
// also matches an absent field, as servers omit those. A Secret's `data` must be equal exactly
// (no extra keys). Used with the hash to find drift made behind Steward's back.
bool LiveMatchesDesired(const Json& desired, const Json& live);
// Where LiveMatchesDesired finds the first difference, as a path
// ("spec.template.spec.securityContext.a", "spec.tolerations[0]"); "" when it matches.
std::string FirstMismatch(const Json& desired, const Json& live);

}  // namespace steward::engine
