// The state of one reconciler run and the steps it takes, shared by the reconciler's source
// files (reconciler.cc: a run's phases; run_objects.cc: one object's create, update and delete;
// provision.cc, run_credentials.cc, teardown.cc: the steps toward running and stopped;
// classify.cc: Kubernetes errors to outcomes; write_status.cc; unknown_objects.cc). Internal to
// src/engine/reconciler: nothing outside it includes this header. A Run belongs to the worker
// thread that runs it (reconciler.h: one run per project at a time).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/json.h"
#include "common/json_access.h"
#include "engine/manifests/manifests.h"
#include "engine/readiness/readiness.h"
#include "engine/reconciler/reconciler.h"
#include "kube/client/client.h"
#include "store/store.h"

namespace steward::engine {
namespace reconciler_internal {

using kube::ResourceType;
using store::CredentialState;
using store::DesiredState;
using store::ProjectRecord;
using Millis = std::chrono::milliseconds;

inline const ResourceType& kSecret = ResourceType::Secret();
inline const ResourceType& kPvc = ResourceType::PersistentVolumeClaim();
inline const ResourceType& kDeployment = ResourceType::Deployment();
inline const ResourceType& kService = ResourceType::Service();
inline const ResourceType& kIngress = ResourceType::Ingress();
inline const ResourceType& kPod = ResourceType::Pod();
inline const ResourceType& kReplicaSet = ResourceType::ReplicaSet();
inline const ResourceType& kSlice = ResourceType::EndpointSlice();

std::string NameOf(const Json& obj);
// The object carries a deletionTimestamp: it is terminating, not gone.
bool Terminating(const Json& obj);
// What a write of ours determines in an object: its SpecHash (status excluded) without the
// annotations other parties own (*.kubernetes.io/, kept on update), so a controller's status or
// revision bookkeeping does not count as a change of the object.
std::string OwnContentHash(const Json& obj);
// A live Deployment's spec.selector that differs from the rendered one but selects the rendered
// pod template (matchLabels only, each one a label of the template with the same value, at least
// one): `*out` becomes `desired` with the live selector, and true is returned. The spec-hash
// annotation stays the rendered one, so the next run compares the same way.
bool KeepLiveSelector(const Json& desired, const Json& live, Json* out);
int64_t WallMs(const Clock& clock);
// A run whose caches have not synced yet (shards taken while the cluster did not answer) looks
// again this much later; it decides nothing meanwhile.
inline constexpr std::chrono::seconds kUnsyncedRecheck{1};

}  // namespace reconciler_internal

// The reconciler's files use these names unqualified, as they did when they were one file.
using namespace reconciler_internal;  // NOLINT(google-build-using-namespace): internal header

// The result of one step: done (go on), wait for the cluster, failed (needs a change of intent
// or cluster), or an error to retry (after retry_after when set, else with the per-key backoff).
struct Reconciler::Outcome {
  enum class Kind { kDone, kWait, kFailed, kError, kCrashed };
  Kind kind = Kind::kDone;
  std::string reason;
  std::string message;
  Status error;
  std::optional<Millis> retry_after;
  int auth_status = 0;  // 401 or 403: Kubernetes refused Steward's credentials (Refused)
  // Sharded mode: the run's shard is no longer this replica's (its fence does not hold). The run
  // ends where it is, quietly: no status, no requeue (the shard's new owner takes over).
  bool lost_shard = false;

  static Outcome Done() { return {}; }
  static Outcome Wait(std::string reason, std::string message) {
    return {Kind::kWait, std::move(reason), std::move(message), Status::Ok(), std::nullopt};
  }
  static Outcome Failed(std::string reason, std::string message) {
    return {Kind::kFailed, std::move(reason), std::move(message), Status::Ok(), std::nullopt};
  }
  static Outcome Error(std::string reason, Status status, std::optional<Millis> after = {}) {
    std::string message = status.message();
    return {Kind::kError, std::move(reason), std::move(message), std::move(status), after};
  }
  static Outcome Crashed(Status status) {
    return {Kind::kCrashed, "Crashed", status.message(), std::move(status), std::nullopt};
  }
  static Outcome LostShard(Status status) {
    Outcome o = Crashed(std::move(status));
    o.reason = "LostShard";
    o.lost_shard = true;
    return o;
  }
  // Kubernetes refused Steward's credentials (401 / 403): an error retried after `after`.
  static Outcome Refused(int http_status, std::string reason, std::string message, Status status,
                         Millis after) {
    message += "; retrying in " + std::to_string(after.count() / 1000) + " s";
    return {Kind::kError, std::move(reason), std::move(message), std::move(status),
            after,        http_status};
  }
  bool done() const { return kind == Kind::kDone; }
};

// Maps a Kubernetes error to an outcome (classify.cc has the table; docs/design.md §5,
// docs/lifecycle.md "Errors"). `verb` and `object` name the call ("create", "Secret a-1");
// `auth_retry` is the delay before a call refused for Steward's credentials is tried again
// (Reconciler::AuthRetry).
Reconciler::Outcome Classify(const kube::ApiError& e, std::string_view verb,
                             const std::string& object, Millis auth_retry);

// The state of one run for one project, and the steps it takes. Writes (Ensure, EnsureGone)
// change one object each; Provision and Teardown order them; Note records a step's condition.
struct Reconciler::Run {
  Reconciler& r;
  ProjectRecord rec;
  const std::string& ns;
  std::vector<ResourceCondition> conditions;
  ProjectSpec spec;
  // What this run found (for the phase while it waits): an object missing or changed behind
  // Steward's back (drift), or an object rolled to a newer rendering (rolling).
  bool drift = false;
  bool rolling = false;
  bool created_object = false;  // drift too when the intent is unchanged since the last status
  // The first not-done outcome of the steps that do not gate the next one — readiness waits
  // and removals — kept while the run goes on (Hold), and the resource it is about.
  std::optional<Outcome> held_outcome;
  std::string held_resource;
  // The resource the run's outcome is about (Settle), for the bound on waits.
  std::string outcome_resource;
  // Observed ready in this run: what an update of the Service (of the Ingresses) waits for.
  bool deployment_ready = false;
  bool service_ready = false;
  // Sharded mode: the ownership this run acts under; every write checks it (Hook, the store's
  // fenced writes). nullopt when unsharded.
  std::optional<store::Fence> fence;
  // The adoption fingerprint taken before the run observed anything (adoption.h): stored with a
  // Running verdict.
  std::optional<std::string> fingerprint;

  Run(Reconciler& owner, ProjectRecord record)
      : r(owner), rec(std::move(record)), ns(owner.observer_.ns()) {}

  struct Ensured {
    Outcome outcome;
    Json live;
    // The object is observed to exist: the informer's cache has it, or it was read back. False
    // right after this run created it: what depends on it waits for the watch to show it.
    bool seen = false;
    // The object exists but differs from its rendering, and the update waits (Ensure's
    // `hold_update`): `outcome` is that wait, `live` the object as it is.
    bool update_held = false;
  };

  // ---- one object ----

  // Around every Kubernetes write: before it, the fence must hold (sharded mode), else the run
  // ends as LostShard; then the crash-test seam (EngineOptions::write_hook): an error means
  // "the process died here".
  std::optional<Outcome> Hook(std::string_view when, std::string_view verb,
                              const ResourceType& type, std::string_view name);
  void Condition(std::string resource, bool ready, std::string reason, std::string message) {
    conditions.push_back({std::move(resource), ready, std::move(reason), std::move(message)});
  }
  bool Ours(const Json& obj) const {
    return LabelOf(obj, kProjectLabel) == rec.id &&
           LabelOf(obj, kManagedByLabel) == kManagedByValue;
  }
  // Classify, with this project's retry delay for refused credentials.
  Outcome Classified(const kube::ApiError& e, std::string_view verb, const std::string& object) {
    if (verb == "create" || verb == "update" || verb == "delete" || verb == "patch") {
      r.NoteRefusedWrite(e.http_status);
    }
    return Classify(e, verb, object, r.AuthRetry(rec.id));
  }
  // Builds the body of a PUT: the desired object with the live resourceVersion and the fields
  // other parties own (finalizers, a Service's cluster IPs, system annotations).
  static Json UpdateBody(const ResourceType& type, const Json& desired, const Json& live);
  // Makes `desired` exist as rendered: create when absent, adopt when ours and equal, update
  // with a resourceVersion precondition when it differs, wait while terminating. A non-empty
  // `hold_update` says why an update must wait (what the object routes traffic to is not ready
  // yet: traffic must never move to it before it is); a create never waits for that, since
  // nothing routes through an object that does not exist yet.
  Ensured Ensure(const ResourceType& type, const Json& desired, std::string_view hold_update = "");
  // Ensure's create: created, or (AlreadyExists) read once and converged as found.
  Ensured Create(const ResourceType& type, const Json& desired, bool view_terminating);
  // Ensure on an object that exists (`live`): refuse one not ours, wait while terminating, adopt
  // when equal, else update it.
  Ensured Converge(const ResourceType& type, const Json& desired, Json live, bool view_terminating,
                   std::string_view hold_update);
  // The answer of our own write must hold what we wrote: a server that drops a field (one it
  // does not know, when it ignores fieldValidation) or an admission webhook that changes one
  // would otherwise have the engine rewrite the object, and wait to observe it, for ever.
  std::optional<Outcome> NotPersisted(const ResourceType& type, const std::string& name,
                                      const Json& desired, const Json& answer);
  // Makes the object named `name` gone: delete with a uid precondition, then wait until the
  // cache no longer has it (terminating counts as present).
  Outcome EnsureGone(const ResourceType& type, const std::string& name,
                     std::string propagation = "");

  // ---- run ----

  // The credential the instance should hold: the newest pending one, else the active one.
  static const store::Credential* CredentialToHold(const std::vector<store::Credential>& creds,
                                                   bool pending_only);
  // Creates in dependency order — the credentials Secret and the PVC, then the Deployment, then
  // the Service, then the Ingress(es) — each once what it depends on is observed to exist
  // (Ensured::seen). Readiness gates no create: PVC Bound, Deployment available, Service
  // endpoints and Ingress address are waited for at once (held), and only when every object is
  // ready come the probe and the credentials' promotion. Each Provision* below returns a
  // not-done outcome only when what comes after it must not be created yet.
  Outcome Provision(const Manifests& m, const std::vector<store::Credential>& creds);
  Outcome ProvisionStorage(const Manifests& m);  // the Secret and the PVC when there is one
  Outcome ProvisionDeployment(const Json& deployment, const std::string& name);
  Outcome ProvisionService(const Json& service, const std::string& name);
  // An MQTT schema agent: its token's Secret there, Deployment, Service, older tokens gone.
  Outcome ProvisionAgent(const AgentManifests& m);
  Outcome ProvisionIngresses(const Manifests& m);  // the main one; the custom one or its absence
  Outcome Probe();
  // Every object is ready at this generation. Pending credentials become active once every
  // pod (terminating ones too) is one started with them. With supplied credentials, once every
  // pod holds the current set, Steward's generated credentials are revoked and their Secret
  // `generated_secret` ("" for an agent, which has none) deleted: nothing reads them any more.
  Outcome PromoteCredentials(const std::vector<store::Credential>& creds,
                             const std::string& generated_secret);
  Status ActivateCredential(const std::string& pending_id);
  // Revokes every credential of the project not yet revoked, unless a newer intent came since
  // this run read the record (it may have switched back to generated credentials).
  Status RevokeGeneratedCredentials();

  // ---- teardown ----

  // Deletes the Ingresses, the Service and the Deployment (in that order, so traffic stops
  // first) without waiting for one to be gone before the next; done once each of them and every
  // pod is observed gone; then the TLS Secrets of the Ingresses (cert-manager would make them
  // again while an Ingress asks for them). With `remove` (a delete) the PVC and every Secret of
  // the project are deleted in the same pass.
  Outcome Teardown(const ObjectNames& names, bool remove);
  // Once everything is gone from the caches: the Secrets the server still has (one list).
  Outcome Remove();
  // The TLS Secret cert-manager made for one of the project's Ingresses: deleted when it is a
  // kubernetes.io/tls Secret that no other project labels as its own (one read, one delete).
  Outcome RemoveTlsSecret(const std::string& name);
  // The Secret of the supplied credentials the spec names exists (the API wrote it before the
  // intent); the first step, as the pods cannot start without it.
  Outcome SuppliedCredentialsPresent();
  // Deletes the project's supplied-credentials Secrets other than `keep` ("" keeps none).
  Outcome RemoveSuppliedSecrets(const std::string& keep);

  // Records a not-done outcome as the condition of `resource` and passes it on.
  Outcome Note(const std::string& resource, Outcome o) {
    Condition(resource, false, o.reason, o.message);
    return o;
  }
  // A step nothing later depends on (a readiness wait, a removal): a not-done outcome is noted
  // and held while the run goes on; the run's outcome is then the first held one of the most
  // severe kind (Failed before Error before Wait). A crash (or a lost shard) ends the run at
  // once: returned, to be passed on.
  std::optional<Outcome> Hold(const std::string& resource, Outcome o);
  // The run's outcome from where its steps ended (`o`: Done, or the step that stopped them) and
  // what was held: the held outcome when it is more severe, or `o` is Done.
  Outcome Settle(Outcome o);
  // What depends on `what`, created by this run, waits for the watch to show it: the held
  // outcome when there is one (the object's own readiness wait), else ObservingWrite.
  Outcome Unseen(const std::string& resource, const std::string& what);
  static Outcome FromReadiness(const Readiness& rd, const std::string& what) {
    if (rd.failed()) return Outcome::Failed(rd.reason, what + ": " + rd.message);
    return Outcome::Wait(rd.reason, what + ": " + rd.message);
  }
};

// What a run starts from: the stored intent, its last status and, for a project to run, its
// credentials. The cluster is observed step by step (the Observer's caches) as the run goes.
struct Reconciler::Loaded {
  ProjectRecord rec;  // moved into the Run
  std::optional<ProjectStatus> prev;
  StatusOr<ProjectSpec> spec;  // the stored spec, parsed
  Status policy;               // the spec against engine.policy (OK when it does not parse)
  std::vector<store::Credential> creds;      // read only when the project is to run as specified
  std::optional<StatusOr<AgentSpec>> agent;  // an agent's record: its spec (`spec` is unused)
};

// What a run decided and did: the step's outcome and the status it observed (phase, url; the
// reason, message and conditions are added when it is written). `finished`: the run is over
// without a status to write (the record was purged, or the store failed).
struct Reconciler::Decision {
  Outcome outcome;
  ProjectStatus status;
  bool bounded = false;  // a wait past config.step_timeout_seconds, reported as Failed
  std::optional<WorkResult> finished;
  // Waiting for something that wakes the run when it comes, not bounded by the step timeout:
  // a start waiting for a slot (StartGate), or for the cluster a move left to have nothing left.
  bool queued = false;
};

}  // namespace steward::engine
