#include "engine/reconciler/reconciler.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <optional>
#include <set>
#include <utility>

#include "common/json_access.h"
#include "common/log.h"
#include "common/time_util.h"
#include "engine/manifests/manifests.h"
#include "engine/readiness/readiness.h"

namespace steward::engine {
namespace {

using kube::ResourceType;
using store::CredentialState;
using store::DesiredState;
using store::ProjectRecord;
using Millis = std::chrono::milliseconds;

// How long a supplied-credentials Secret of a project the store does not know is left alone by
// orphan removal (the API writes it just before committing the project).
constexpr Millis kSuppliedSecretGrace{kSuppliedOrphanGraceMs};
// A start under way longer than this (an image that never pulls) gives its slot up.
constexpr std::chrono::minutes kStartSlotTtl{2};
// A start waiting for a slot is woken when it gets one; this recheck is only a safety net.
constexpr std::chrono::minutes kQueuedRecheck{1};

const ResourceType& kSecret = ResourceType::Secret();
const ResourceType& kPvc = ResourceType::PersistentVolumeClaim();
const ResourceType& kDeployment = ResourceType::Deployment();
const ResourceType& kService = ResourceType::Service();
const ResourceType& kIngress = ResourceType::Ingress();
const ResourceType& kPod = ResourceType::Pod();
const ResourceType& kReplicaSet = ResourceType::ReplicaSet();
const ResourceType& kSlice = ResourceType::EndpointSlice();

std::string NameOf(const Json& obj) { return GetString(obj["metadata"], "name"); }

bool Terminating(const Json& obj) {
  const Json* ts = FindPath(obj, "metadata.deletionTimestamp");
  return ts != nullptr && !ts->is_null();
}

// What a write of ours determines in an object: its SpecHash (status excluded) without the
// annotations other parties own (*.kubernetes.io/, kept on update), so a controller's status or
// revision bookkeeping does not count as a change of the object.
std::string OwnContentHash(const Json& obj) {
  Json copy = obj;
  auto meta = copy.find("metadata");
  if (meta != copy.end() && meta->is_object()) {
    auto annotations = meta->find("annotations");
    if (annotations != meta->end() && annotations->is_object()) {
      for (auto it = annotations->begin(); it != annotations->end();) {
        if (it.key().find("kubernetes.io/") != std::string::npos) {
          it = annotations->erase(it);
        } else {
          ++it;
        }
      }
    }
  }
  return SpecHash(copy);
}

// A live Deployment's spec.selector that differs from the rendered one but selects the rendered
// pod template (matchLabels only, each one a label of the template with the same value, at least
// one): `*out` becomes `desired` with the live selector, and true is returned. The spec-hash
// annotation stays the rendered one, so the next run compares the same way.
bool KeepLiveSelector(const Json& desired, const Json& live, Json* out) {
  const Json* live_selector = FindPath(live, "spec.selector");
  const Json* want_selector = FindPath(desired, "spec.selector");
  if (live_selector == nullptr || want_selector == nullptr || *live_selector == *want_selector) {
    return false;
  }
  if (!live_selector->is_object() || live_selector->size() != 1) return false;
  const Json* match = FindPath(*live_selector, "matchLabels");
  const Json* labels = FindPath(desired, "spec.template.metadata.labels");
  if (match == nullptr || !match->is_object() || match->empty() || labels == nullptr ||
      !labels->is_object()) {
    return false;
  }
  for (const auto& [k, v] : match->items()) {
    auto it = labels->find(k);
    if (it == labels->end() || *it != v) return false;
  }
  *out = desired;
  (*out)["spec"]["selector"] = *live_selector;
  return true;
}

int64_t WallMs(const Clock& clock) {
  return std::chrono::duration_cast<Millis>(clock.WallNow().time_since_epoch()).count();
}

}  // namespace

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

// The reason a request the server refused as wrong is Failed with: its Status reason when it is
// one (CamelCase), else the one its HTTP status implies, else "Rejected".
static std::string RefusalReason(const kube::ApiError& e) {
  const bool camel = !e.reason.empty() && std::all_of(e.reason.begin(), e.reason.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
  if (camel) return e.reason;
  const std::string_view implied = kube::ReasonForHttpStatus(e.http_status);
  return implied.empty() ? "Rejected" : std::string(implied);
}

// Maps a Kubernetes error to an outcome (docs/design.md §5; docs/lifecycle.md "Errors"). `verb` and
// `object` name the call ("create", "Secret a-1"); `auth_retry` is the delay before a call
// refused for Steward's credentials is tried again (Reconciler::AuthRetry).
//
//   429 TooManyRequests                      Throttled: requeue after Retry-After (1 s if none)
//   401 Unauthorized, no credentials to send KubeUnauthorized: requeue after auth_retry, loud
//   403 Forbidden                            KubeForbidden: requeue after auth_retry, loud
//   409 Conflict                             Conflict: per-key backoff (the view was stale)
//   404 on get, update                       NotFound: per-key backoff (gone since the cache
//                                            saw it; the next run reads it again)
//   retryable (5xx, timeouts), no answer     ApiUnavailable: per-key backoff
//   422 Invalid, 400 BadRequest              Failed Invalid, with the server's message
//   404 on create                            Failed NotFound (the namespace or API is missing)
//   refused by the client before sending     Failed RequestRefused
//   any other 4xx (413, 415, 405, 406, 410, an AlreadyExists on an update, ...)
//                                            Failed with the server's reason
//   anything else (an answer that is no API error: 1xx-3xx, a garbled 2xx body)
//                                            ApiUnavailable: per-key backoff (never success)
// Failed is not retried by the engine: the project runs again on a new intent or a cluster
// event for its objects.
static Reconciler::Outcome Classify(const kube::ApiError& e, std::string_view verb,
                                    const std::string& object, Millis auth_retry) {
  using O = Reconciler::Outcome;
  const std::string msg = std::string(verb) + " " + object + ": " + e.ToString();
  if (e.IsTooManyRequests()) {
    return O::Error("Throttled", e.ToStatus(), e.retry_after.value_or(Millis(1000)));
  }
  if (e.IsUnauthorized() || (e.IsTransport() && e.code == StatusCode::kUnauthenticated)) {
    return O::Refused(401, "KubeUnauthorized",
                      msg +
                          "; Kubernetes does not accept Steward's credentials (check its "
                          "kubeconfig or service-account token)",
                      e.ToStatus(), auth_retry);
  }
  if (e.IsForbidden()) {
    return O::Refused(403, "KubeForbidden",
                      msg +
                          "; Kubernetes refuses this request with Steward's credentials (check "
                          "Steward's Role and RoleBinding in the namespace, or an admission "
                          "policy)",
                      e.ToStatus(), auth_retry);
  }
  if (e.IsConflict()) return O::Error("Conflict", e.ToStatus());
  if (e.IsNotFound() && verb != "create") return O::Error("NotFound", e.ToStatus());
  if (e.IsRetryable() || e.IsTransport()) return O::Error("ApiUnavailable", e.ToStatus());
  if (e.local) return O::Failed("RequestRefused", msg);
  if (e.http_status >= 400 && e.http_status < 500) {
    // The request itself is wrong: sending it again cannot succeed.
    if (e.IsInvalid() || e.http_status == 400) return O::Failed("Invalid", msg);
    if (e.IsNotFound()) {
      return O::Failed("NotFound", msg + " (the namespace or the API this needs is missing)");
    }
    return O::Failed(RefusalReason(e), msg);
  }
  return O::Error("ApiUnavailable", e.ToStatus());
}

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

std::optional<Reconciler::Outcome> Reconciler::Run::Hook(std::string_view when,
                                                         std::string_view verb,
                                                         const ResourceType& type,
                                                         std::string_view name) {
  if (fence && when == "before" && r.check_fence_) {
    if (Status held = r.check_fence_(*fence); !held.ok()) return Outcome::LostShard(held);
  }
  if (!r.options_.write_hook) return std::nullopt;
  Status s = r.options_.write_hook(when, verb, type, name);
  if (s.ok()) return std::nullopt;
  return Outcome::Crashed(std::move(s));
}

Json Reconciler::Run::UpdateBody(const ResourceType& type, const Json& desired, const Json& live) {
  Json body = desired;
  Json& meta = body["metadata"];
  meta["resourceVersion"] = live["metadata"]["resourceVersion"];
  if (const Json* f = FindPath(live, "metadata.finalizers"); f != nullptr) {
    meta["finalizers"] = *f;
  }
  if (const Json* a = FindPath(live, "metadata.annotations"); a != nullptr && a->is_object()) {
    for (const auto& [k, v] : a->items()) {
      if (k.find("kubernetes.io/") != std::string::npos && !meta["annotations"].contains(k)) {
        meta["annotations"][k] = v;
      }
    }
  }
  if (type == kService) {
    for (const char* f : {"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"}) {
      if (const Json* v = FindPath(live, std::string("spec.") + f); v != nullptr) {
        body["spec"][f] = *v;
      }
    }
  }
  return body;
}

Reconciler::Run::Ensured Reconciler::Run::Ensure(const ResourceType& type, const Json& desired,
                                                 std::string_view hold_update) {
  const std::string name = NameOf(desired);
  const std::string what = type.kind + " " + name;
  View view = r.observer_.Get(type, name);
  if (auto known = r.KnownUnpersisted(rec, type.kind + "/" + name, view)) {
    return {Outcome::Failed("NotPersisted", *known), {}};
  }
  if (view.stale) {
    return {Outcome::Wait("ObservingWrite", what + ": waiting for the watch to show it"), {}};
  }
  if (!view.object) return Create(type, desired, view.terminating);
  return Converge(type, desired, view.object->Parse(), view.terminating, hold_update);
}

Reconciler::Run::Ensured Reconciler::Run::Create(const ResourceType& type, const Json& desired,
                                                 bool view_terminating) {
  const std::string name = NameOf(desired);
  const std::string what = type.kind + " " + name;
  if (auto crash = Hook("before", "create", type, name)) return {*crash, {}};
  auto created = r.client_->Create(
      type, ns, desired, {.field_manager = r.options_.field_manager, .field_validation = "Strict"});
  ++r.writes_;
  if (auto crash = Hook("after", "create", type, name)) return {*crash, {}};
  if (created.ok()) {
    created_object = true;
    r.observer_.ExpectExists(type, name, GetString((*created)["metadata"], "uid"));
    if (auto lost = NotPersisted(type, name, desired, *created)) return {*lost, {}};
    return {Outcome::Done(), std::move(*created)};
  }
  const kube::ApiError& e = created.error();
  if (!e.IsAlreadyExists()) return {Classified(e, "create", what), {}};
  // Not yet in the cache (or not ours, so never in it): read it once and decide.
  auto got = r.client_->Get(type, ns, name);
  if (!got.ok()) {
    if (got.error().IsNotFound()) {
      return {Outcome::Error("Conflict", Aborted(what + " vanished after AlreadyExists")), {}};
    }
    return {Classified(got.error(), "get", what), {}};
  }
  // An object created meanwhile by someone else, or ours and not cached yet: not created by us.
  return Converge(type, desired, std::move(*got), view_terminating, "");
}

Reconciler::Run::Ensured Reconciler::Run::Converge(const ResourceType& type, const Json& desired,
                                                   Json live, bool view_terminating,
                                                   std::string_view hold_update) {
  const std::string name = NameOf(desired);
  const std::string what = type.kind + " " + name;
  if (!Ours(live)) {
    return {
        Outcome::Failed("NameTaken", what + " exists in namespace " + ns + " but is not project " +
                                         rec.id + "'s (no steward.io/project=" + rec.id +
                                         " label); remove or rename it"),
        {}};
  }
  if (view_terminating || Terminating(live)) {
    return {Outcome::Wait("Terminating",
                          what + " is still terminating; waiting for it to be gone first"),
            {}};
  }
  // A Deployment's selector is immutable: one it was created with (FlowFuse's driver selects on
  // {app: <id>}) stays when it selects the pods Steward renders, instead of an update the
  // server must refuse.
  Json kept;
  const Json* want = &desired;
  if (type == kDeployment && KeepLiveSelector(desired, live, &kept)) want = &kept;
  const bool same_hash =
      AnnotationOf(live, kSpecHashAnnotation) == AnnotationOf(*want, kSpecHashAnnotation);
  if (same_hash && LiveMatchesDesired(*want, live)) {
    return {Outcome::Done(), std::move(live), /*seen=*/true};
  }
  if (type == kPvc) {
    // A claim's spec is immutable once bound; its data matters more than a label.
    return {Outcome::Done(), std::move(live), /*seen=*/true};
  }
  if (!hold_update.empty()) {
    return {Outcome::Wait("WaitingForDependency",
                          what + " differs from its rendering; " + std::string(hold_update)),
            std::move(live), /*seen=*/true, /*update_held=*/true};
  }
  const std::string old_rv = GetString(live["metadata"], "resourceVersion");
  if (auto crash = Hook("before", "update", type, name)) return {*crash, {}};
  auto updated =
      r.client_->Update(type, UpdateBody(type, *want, live),
                        {.field_manager = r.options_.field_manager, .field_validation = "Strict"});
  ++r.writes_;
  if (auto crash = Hook("after", "update", type, name)) return {*crash, {}};
  if (!updated.ok()) return {Classified(updated.error(), "update", what), {}};
  // Our hash on it but other content: changed behind our back. Else our intent moved on.
  (same_hash ? drift : rolling) = true;
  // An update that changed nothing keeps the resourceVersion: there is no event to wait for.
  if (GetString((*updated)["metadata"], "resourceVersion") != old_rv) {
    r.observer_.ExpectUpdated(type, name, old_rv);
  }
  if (auto lost = NotPersisted(type, name, *want, *updated)) return {*lost, {}};
  return {Outcome::Done(), std::move(*updated), /*seen=*/true};
}

std::optional<Reconciler::Outcome> Reconciler::Run::NotPersisted(const ResourceType& type,
                                                                 const std::string& name,
                                                                 const Json& desired,
                                                                 const Json& answer) {
  const std::string where = FirstMismatch(desired, answer);
  if (where.empty()) return std::nullopt;
  std::string message = type.kind + " " + name + ": the API server did not keep " + where +
                        " as written (it dropped or changed the field: one this cluster does "
                        "not know, or an admission webhook); change the spec or the cluster";
  r.RememberUnpersisted(rec, type.kind + "/" + name, OwnContentHash(answer), message);
  return Outcome::Failed("NotPersisted", std::move(message));
}

Reconciler::Outcome Reconciler::Run::EnsureGone(const ResourceType& type, const std::string& name,
                                                std::string propagation) {
  const std::string what = type.kind + " " + name;
  View view = r.observer_.Get(type, name);
  // A write the cache has not shown yet does not hold a delete up: the uid precondition is
  // all a delete needs, and the cached copy (or the create's answer) has it.
  std::string uid;
  if (view.object) {
    if (view.object->label(kProjectLabel) != rec.id) return Outcome::Done();  // not ours
    uid = view.object->uid();
  } else {
    uid = view.created_uid;
  }
  if (uid.empty()) return Outcome::Done();
  if (view.terminating) {
    return Outcome::Wait("Terminating", what + " is terminating; waiting for it to be gone");
  }
  kube::DeleteOptions options;
  options.precondition_uid = uid;
  options.propagation_policy = std::move(propagation);
  if (auto crash = Hook("before", "delete", type, name)) return *crash;
  auto deleted = r.client_->Delete(type, ns, name, options);
  ++r.writes_;
  if (auto crash = Hook("after", "delete", type, name)) return *crash;
  if (!deleted.ok()) {
    if (deleted.error().IsNotFound()) {
      r.observer_.ExpectGone(type, name, uid);
      return Outcome::Done();
    }
    return Classified(deleted.error(), "delete", what);
  }
  if (deleted->gone) {
    r.observer_.ExpectGone(type, name, uid);
    return Outcome::Done();
  }
  r.observer_.ExpectTerminating(type, name, uid);
  return Outcome::Wait("Terminating", what + " is terminating; waiting for it to be gone");
}

const store::Credential* Reconciler::Run::CredentialToHold(
    const std::vector<store::Credential>& creds, bool pending_only) {
  const store::Credential* best = nullptr;
  for (const auto& c : creds) {
    if (c.state == CredentialState::kPending &&
        (best == nullptr || best->state != CredentialState::kPending ||
         c.created_ms > best->created_ms ||
         (c.created_ms == best->created_ms && c.id > best->id))) {
      best = &c;
    }
  }
  if (best != nullptr || pending_only) return best;
  for (const auto& c : creds) {
    if (c.state == CredentialState::kActive &&
        (best == nullptr || c.activated_ms > best->activated_ms)) {
      best = &c;
    }
  }
  return best;
}

namespace {
// How much an outcome says against the run: a crash ends it, Failed needs a new intent, Error
// is retried, Wait waits.
int Severity(Reconciler::Outcome::Kind k) {
  using K = Reconciler::Outcome::Kind;
  return k == K::kCrashed ? 3 : k == K::kFailed ? 2 : k == K::kError ? 1 : 0;
}
}  // namespace

std::optional<Reconciler::Outcome> Reconciler::Run::Hold(const std::string& resource, Outcome o) {
  if (o.done()) return std::nullopt;
  if (o.kind == Outcome::Kind::kCrashed) return o;
  Note(resource, o);
  // Failed outranks Error, which outranks Wait; among equals the first (in dependency order)
  // stays, so the status names the earliest object that is not ready yet.
  if (!held_outcome || Severity(o.kind) > Severity(held_outcome->kind)) {
    held_outcome = std::move(o);
    held_resource = resource;
  }
  return std::nullopt;
}

Reconciler::Outcome Reconciler::Run::Settle(Outcome o) {
  if (o.kind == Outcome::Kind::kCrashed) return o;
  if (held_outcome && (o.done() || Severity(held_outcome->kind) > Severity(o.kind))) {
    outcome_resource = held_resource;
    return *held_outcome;
  }
  if (!o.done() && outcome_resource.empty() && !conditions.empty()) {
    outcome_resource = conditions.back().resource;
  }
  return o;
}

Reconciler::Outcome Reconciler::Run::Unseen(const std::string& resource, const std::string& what) {
  if (held_outcome) {
    outcome_resource = held_resource;
    return *held_outcome;
  }
  outcome_resource = resource;
  return Note(resource, Outcome::Wait("ObservingWrite",
                                      what + ": created; waiting for the watch to show it before "
                                             "creating what depends on it"));
}

Reconciler::Outcome Reconciler::Run::Provision(const Manifests& m,
                                               const std::vector<store::Credential>& creds) {
  Outcome o = Settle([&] {
    Outcome step = ProvisionStorage(m);
    if (!step.done()) return step;
    step = SuppliedCredentialsPresent();
    if (!step.done()) return step;
    // Sets no pod holds any more go at once, whatever the rollout's state.
    if (spec.credentials) {
      step = RemoveSuppliedSecrets(SuppliedSecretName(rec.id, spec.credentials->fingerprint));
      if (auto crash = Hold("Credentials", step)) return *crash;
    }
    step = ProvisionDeployment(m.deployment, m.names.deployment);
    if (!step.done()) return step;
    step = ProvisionService(m.service, m.names.service);
    if (!step.done()) return step;
    return ProvisionIngresses(m);
  }());
  if (!o.done()) return o;  // an object is not there yet, or not ready
  o = Probe();
  if (!o.done()) return o;
  return PromoteCredentials(creds, m.names.secret);
}

Reconciler::Outcome Reconciler::Run::ProvisionStorage(const Manifests& m) {
  // The Secret and the claim depend on nothing: both are made in the same run, and the
  // Deployment waits until both are seen.
  std::optional<Ensured> secret;  // none with supplied credentials
  if (m.secret) {
    secret = Ensure(kSecret, *m.secret);
    if (secret->outcome.kind == Outcome::Kind::kCrashed) return secret->outcome;
  }
  std::optional<Ensured> pvc;
  if (m.pvc) {
    pvc = Ensure(kPvc, *m.pvc);
    if (pvc->outcome.kind == Outcome::Kind::kCrashed) return pvc->outcome;
  }
  if (secret) {
    if (!secret->outcome.done()) return Note("Secret", secret->outcome);
    Condition("Secret", true, "Ready", "credentials Secret " + m.names.secret + " matches");
  }
  // The credentials Secret of the name the project had before a rename (the current name's,
  // with supplied credentials, goes once no pod reads it: PromoteCredentials).
  for (const auto& old : r.observer_.ByLabel(kSecret, kProjectLabel, rec.id)) {
    if (old->label(kCredentialsLabel) == kSuppliedValue || old->name() == m.names.secret) continue;
    if (auto crash = Hold("Secret", EnsureGone(kSecret, old->name()))) return *crash;
  }
  if (pvc) {
    if (!pvc->outcome.done()) return Note("PersistentVolumeClaim", pvc->outcome);
    // Binding is a readiness wait: the Deployment that mounts the claim may exist before it.
    if (Readiness rd = PvcReadiness(pvc->live); rd.ready()) {
      Condition("PersistentVolumeClaim", true, "Bound", m.names.pvc + " is Bound");
    } else if (auto crash =
                   Hold("PersistentVolumeClaim", FromReadiness(rd, "claim " + m.names.pvc))) {
      return *crash;
    }
  }
  if (secret && !secret->seen) return Unseen("Secret", "Secret " + m.names.secret);
  if (pvc && !pvc->seen) return Unseen("PersistentVolumeClaim", "claim " + m.names.pvc);
  return Outcome::Done();
}

Reconciler::Outcome Reconciler::Run::ProvisionAgent(const AgentManifests& m) {
  if (!spec.credentials) {
    return Note("Credentials", Outcome::Failed("NoCredentials", "agent " + rec.name +
                                                                    " has no token: put one in "
                                                                    "spec.credentials.token"));
  }
  Outcome o = Settle([&] {
    Outcome step = SuppliedCredentialsPresent();
    if (!step.done()) return step;
    if (auto crash = Hold("Credentials", RemoveSuppliedSecrets(m.secret))) return *crash;
    step = ProvisionDeployment(m.deployment, m.name);
    if (!step.done()) return step;
    return ProvisionService(m.service, m.name);
  }());
  if (!o.done()) return o;
  return PromoteCredentials({}, "");
}

Reconciler::Outcome Reconciler::Run::ProvisionDeployment(const Json& deployment,
                                                         const std::string& name) {
  auto dep = Ensure(kDeployment, deployment);
  if (!dep.outcome.done()) return Note("Deployment", dep.outcome);
  Readiness rd = DeploymentReadiness(dep.live);
  std::string pod_detail;
  if (rd.ready()) {
    std::vector<Json> replica_sets;
    for (const auto& rs : r.observer_.ByLabel(kReplicaSet, kProjectLabel, rec.id)) {
      replica_sets.push_back(rs->Parse());
    }
    rd = ReplicaSetsReadiness(dep.live, replica_sets);
  } else {
    std::vector<Json> pods;
    for (const auto& p : r.observer_.ByLabel(kPod, kProjectLabel, rec.id)) {
      pods.push_back(p->Parse());
    }
    pod_detail = PodFailureDetail(pods);
  }
  if (rd.ready()) {
    deployment_ready = true;
    Condition("Deployment", true, "Ready", rd.message);
  } else {
    Outcome o = FromReadiness(rd, "Deployment " + name);
    if (!pod_detail.empty()) o.message += " (pod: " + pod_detail + ")";
    if (auto crash = Hold("Deployment", std::move(o))) return *crash;
  }
  if (!dep.seen) return Unseen("Deployment", "Deployment " + name);
  return Outcome::Done();
}

Reconciler::Outcome Reconciler::Run::ProvisionService(const Json& service,
                                                      const std::string& name) {
  auto svc =
      Ensure(kService, service, deployment_ready ? "" : "updated once its Deployment is ready");
  if (svc.update_held) {
    // It exists: what depends on it may be created; its readiness is judged once updated.
    if (auto crash = Hold("Service", svc.outcome)) return *crash;
    return Outcome::Done();
  }
  if (!svc.outcome.done()) return Note("Service", svc.outcome);
  std::vector<Json> slices;
  for (const auto& s : r.observer_.ByLabel(kSlice, "kubernetes.io/service-name", name)) {
    slices.push_back(s->Parse());
  }
  if (Readiness rd = ServiceReadiness(svc.live, slices); rd.ready()) {
    service_ready = true;
    Condition("Service", true, "Ready", rd.message);
  } else if (auto crash = Hold("Service", FromReadiness(rd, "Service " + name))) {
    return *crash;
  }
  if (!svc.seen) return Unseen("Service", "Service " + name);
  return Outcome::Done();
}

Reconciler::Outcome Reconciler::Run::ProvisionIngresses(const Manifests& m) {
  // Both Ingresses route to the Service (seen by now) and to nothing else: neither waits for
  // the other.
  const bool require_address = r.options_.config.require_ingress_address;
  auto ingress = [&](const std::string& resource, const Json& desired,
                     const std::string& name) -> std::optional<Outcome> {
    auto ing = Ensure(kIngress, desired, service_ready ? "" : "updated once its Service is ready");
    if (!ing.outcome.done()) return Hold(resource, ing.outcome);
    Readiness rd = IngressReadiness(ing.live, require_address);
    if (rd.ready()) {
      Condition(resource, true, "Ready", rd.message);
      return std::nullopt;
    }
    return Hold(resource, FromReadiness(rd, "Ingress " + name));
  };
  if (auto crash = ingress("Ingress", m.ingress, m.names.ingress)) return *crash;
  if (m.custom_ingress) {
    if (auto crash = ingress("CustomIngress", *m.custom_ingress, m.names.custom_ingress)) {
      return *crash;
    }
  } else if (auto crash = Hold("CustomIngress", EnsureGone(kIngress, m.names.custom_ingress))) {
    return *crash;
  }
  return Outcome::Done();
}

Reconciler::Outcome Reconciler::Run::Probe() {
  if (!r.options_.config.http_probe) return Outcome::Done();
  const ResolvedSpec resolved = Resolve(r.options_.config, rec.name, spec);
  Status probe = r.options_.prober ? r.options_.prober(resolved.host, resolved.url)
                                   : FailedPrecondition("no HTTP prober configured");
  if (!probe.ok()) {
    return Note("Probe", Outcome::Wait("ProbeFailed", resolved.url + ": " + probe.message()));
  }
  Condition("Probe", true, "Ready", resolved.url + " answers");
  return Outcome::Done();
}

Reconciler::Outcome Reconciler::Run::SuppliedCredentialsPresent() {
  if (!spec.credentials) return Outcome::Done();
  const std::string name = SuppliedSecretName(rec.id, spec.credentials->fingerprint);
  View view = r.observer_.Get(kSecret, name);
  if (view.object && view.object->label(kProjectLabel) != rec.id) {
    return Note("Credentials", Outcome::Failed("CredentialsNotOurs",
                                               "Secret " + name + " belongs to another project"));
  }
  if (!view.object || view.terminating) {
    return Note("Credentials",
                Outcome::Wait("WaitingForCredentials",
                              "Secret " + name +
                                  " (the supplied credentials) is not there; put the "
                                  "credentials again if it was deleted"));
  }
  Condition("Credentials", true, "Ready", "supplied credentials Secret " + name + " is there");
  return Outcome::Done();
}

Reconciler::Outcome Reconciler::Run::RemoveSuppliedSecrets(const std::string& keep) {
  // A set some pod still holds stays too (a rollout stuck on a failing image keeps its older
  // pods, and a restart of one of their containers reads the Secret again).
  std::set<std::string> held = {keep};
  for (const auto& p : r.observer_.ByLabel(kPod, kProjectLabel, rec.id)) {
    const std::string id = AnnotationOf(p->Parse(), kCredentialAnnotation);
    if (id.starts_with(kSuppliedCredentialPrefix)) {
      held.insert(SuppliedSecretName(rec.id, id.substr(kSuppliedCredentialPrefix.size())));
    }
  }
  auto supplied_at = [](const kube::ObjectRef& s) -> int64_t {
    const std::string v = AnnotationOf(s->Parse(), kSuppliedAtAnnotation);
    int64_t ms = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), ms);
    return ec == std::errc() && ptr == v.data() + v.size() ? ms : 0;
  };
  int64_t current_at = -1;  // no current set: only the grace period lets a set go
  if (!keep.empty()) {
    View current = r.observer_.Get(kSecret, keep);
    if (!current.object) return Outcome::Done();  // not seen yet: judge nothing against it
    current_at = supplied_at(current.object);
  }
  const int64_t now = WallMs(r.clock_);
  for (const auto& secret : r.observer_.ByLabel(kSecret, kProjectLabel, rec.id)) {
    if (secret->label(kCredentialsLabel) != kSuppliedValue || held.contains(secret->name())) {
      continue;
    }
    const int64_t at = supplied_at(secret);
    if (!(at < current_at || now - at > kSuppliedGraceMs)) continue;  // maybe a newer intent's
    Outcome gone = EnsureGone(kSecret, secret->name());
    if (!gone.done()) return gone;
  }
  return Outcome::Done();
}

Reconciler::Outcome Reconciler::Run::PromoteCredentials(const std::vector<store::Credential>& creds,
                                                        const std::string& generated_secret) {
  if (spec.credentials) {
    // The platform's credentials: every pod must hold the current set before the older sets'
    // Secrets go (an old pod still reads its env from one only at start, but a restart of its
    // container would need it).
    const std::string want = std::string(kSuppliedCredentialPrefix) + spec.credentials->fingerprint;
    for (const auto& p : r.observer_.ByLabel(kPod, kProjectLabel, rec.id)) {
      if (AnnotationOf(p->Parse(), kCredentialAnnotation) != want) {
        return Note("Credentials",
                    Outcome::Wait("RotationInProgress",
                                  "pod " + p->name() + " still holds older credentials"));
      }
    }
    Outcome gc = RemoveSuppliedSecrets(SuppliedSecretName(rec.id, spec.credentials->fingerprint));
    if (!gc.done()) return Note("Credentials", gc);
    // Steward's own credentials: no pod holds them, so their Secret goes and then they stop
    // being valid (in that order: a Secret of the project never holds a revoked token).
    if (!generated_secret.empty()) {
      Outcome gone = EnsureGone(kSecret, generated_secret);
      if (!gone.done()) return Note("Credentials", gone);
    }
    const bool live = std::any_of(creds.begin(), creds.end(), [](const store::Credential& c) {
      return c.state != CredentialState::kRevoked;
    });
    if (live) {
      Status s = RevokeGeneratedCredentials();
      if (fence && s.code() == StatusCode::kAborted) return Outcome::LostShard(s);
      if (!s.ok()) return Outcome::Error("StoreError", s);
    }
    return Outcome::Done();
  }
  if (const store::Credential* pending = CredentialToHold(creds, true); pending != nullptr) {
    for (const auto& p : r.observer_.ByLabel(kPod, kProjectLabel, rec.id)) {
      Json pod = p->Parse();
      if (AnnotationOf(pod, kCredentialAnnotation) != pending->id) {
        return Note("Credentials",
                    Outcome::Wait("RotationInProgress",
                                  "pod " + p->name() + " still holds older credentials"));
      }
    }
    Status s = ActivateCredential(pending->id);
    if (fence && s.code() == StatusCode::kAborted) return Outcome::LostShard(s);
    if (!s.ok()) return Outcome::Error("StoreError", s);
  }
  // Back to Steward's credentials from supplied ones: the old sets go once no pod holds one.
  for (const auto& p : r.observer_.ByLabel(kPod, kProjectLabel, rec.id)) {
    if (AnnotationOf(p->Parse(), kCredentialAnnotation).starts_with(kSuppliedCredentialPrefix)) {
      return Note("Credentials",
                  Outcome::Wait("RotationInProgress",
                                "pod " + p->name() + " still holds supplied credentials"));
    }
  }
  Outcome gc = RemoveSuppliedSecrets("");
  if (!gc.done()) return Note("Credentials", gc);
  return Outcome::Done();
}

Status Reconciler::Run::ActivateCredential(const std::string& pending_id) {
  const int64_t now = WallMs(r.clock_);
  auto result = r.store_.MutateProject(
      rec.id,
      [&](ProjectRecord&, const std::vector<store::Credential>& creds,
          store::Mutation& m) -> Status {
        m.fence = fence;
        const store::Credential* newest = CredentialToHold(creds, true);
        if (newest == nullptr || newest->id != pending_id) return Status::Ok();  // superseded
        std::string revoked;
        for (const auto& c : creds) {
          store::Credential next = c;
          if (c.id == pending_id) {
            next.state = CredentialState::kActive;
            next.activated_ms = now;
          } else if (c.state != CredentialState::kRevoked) {
            next.state = CredentialState::kRevoked;
            next.revoked_ms = now;
            revoked += (revoked.empty() ? "" : ",") + c.id;
          } else {
            continue;
          }
          m.credentials.push_back(std::move(next));
        }
        store::HistoryEntry h;
        h.kind = "credential";
        h.generation = rec.generation;
        h.summary = "activated " + pending_id + (revoked.empty() ? "" : "; revoked " + revoked);
        m.history.push_back(std::move(h));
        return Status::Ok();
      });
  return result.status();
}

Status Reconciler::Run::RevokeGeneratedCredentials() {
  const int64_t now = WallMs(r.clock_);
  auto result = r.store_.MutateProject(
      rec.id,
      [&](ProjectRecord& current, const std::vector<store::Credential>& creds,
          store::Mutation& m) -> Status {
        m.fence = fence;
        if (current.generation != rec.generation) return Status::Ok();  // a newer intent decides
        std::string revoked;
        for (const auto& c : creds) {
          if (c.state == CredentialState::kRevoked) continue;
          store::Credential next = c;
          next.state = CredentialState::kRevoked;
          next.revoked_ms = now;
          revoked += (revoked.empty() ? "" : ",") + c.id;
          m.credentials.push_back(std::move(next));
        }
        if (revoked.empty()) return Status::Ok();
        store::HistoryEntry h;
        h.kind = "credential";
        h.generation = rec.generation;
        h.summary = "revoked " + revoked + ": every pod holds the supplied credentials";
        m.history.push_back(std::move(h));
        return Status::Ok();
      });
  return result.status();
}

Reconciler::Outcome Reconciler::Run::Teardown(const ObjectNames& names, bool remove) {
  return Settle([&]() -> Outcome {
    // Every delete goes out in this pass, the Ingresses' first; each wait is held.
    bool ingresses_gone = true;
    if (!names.ingress.empty()) {  // an agent has none
      for (const auto& [resource, name] : {std::pair{"Ingress", names.ingress},
                                           std::pair{"CustomIngress", names.custom_ingress}}) {
        Outcome gone = EnsureGone(kIngress, name);
        if (gone.done()) continue;
        ingresses_gone = false;
        if (auto crash = Hold(resource, std::move(gone))) return *crash;
      }
      if (ingresses_gone) Condition("Ingress", true, "Gone", "Ingresses gone");
    }
    Outcome svc = EnsureGone(kService, names.service);
    if (svc.done()) {
      Condition("Service", true, "Gone", "Service " + names.service + " gone");
    } else if (auto crash = Hold("Service", std::move(svc))) {
      return *crash;
    }
    // Foreground: the Deployment stays (terminating) until its ReplicaSets and pods are gone.
    Outcome dep = EnsureGone(kDeployment, names.deployment, "Foreground");
    if (dep.done()) {
      auto pods = r.observer_.ByLabel(kPod, kProjectLabel, rec.id);
      if (pods.empty()) {
        Condition("Deployment", true, "Gone",
                  "Deployment " + names.deployment + " and its pods gone");
      } else {
        Hold("Pods", Outcome::Wait("PodsTerminating", std::to_string(pods.size()) +
                                                          " pod(s) still exist (" +
                                                          pods.front()->name() + ")"));
      }
    } else if (auto crash = Hold("Deployment", std::move(dep))) {
      return *crash;
    }
    if (remove) {
      // A claim in use stays (terminating) until its pods are gone, as Kubernetes keeps it.
      if (!names.pvc.empty()) {  // an agent has neither a claim nor Steward's credentials
        if (auto crash = Hold("PersistentVolumeClaim", EnsureGone(kPvc, names.pvc))) return *crash;
        if (auto crash = Hold("Secret", EnsureGone(kSecret, names.secret))) return *crash;
      }
      // Every other Secret of the project: supplied credentials, one of a name it had before.
      for (const auto& other : r.observer_.ByLabel(kSecret, kProjectLabel, rec.id)) {
        if (other->name() == names.secret) continue;
        if (auto crash = Hold("Secret", EnsureGone(kSecret, other->name()))) return *crash;
      }
    }
    // cert-manager's certificates go with the Ingresses (it made them for those, and would make
    // them again while an Ingress asks for one), as FlowFuse's driver deletes them on suspend.
    if (!ingresses_gone) return Outcome::Done();
    bool tls_gone = true;
    for (const std::string& tls : {names.tls, names.custom_tls}) {
      if (tls.empty()) continue;
      Outcome o = RemoveTlsSecret(tls);
      tls_gone = tls_gone && o.done();
      if (auto crash = Hold("TLSSecrets", std::move(o))) return *crash;
    }
    if (tls_gone) Condition("TLSSecrets", true, "Gone", "no TLS Secret of the Ingresses is left");
    return Outcome::Done();
  }());
}

Reconciler::Outcome Reconciler::Run::RemoveTlsSecret(const std::string& name) {
  const std::string what = "Secret " + name;
  Json live;
  if (std::optional<kube::ObjectRef> cached = r.observer_.TlsSecret(name)) {
    if (!*cached || (*cached)->terminating()) return Outcome::Done();  // none (left) to delete
    live = (*cached)->Parse();
  } else {  // no cache of TLS Secrets: ask the server
    auto got = r.client_->Get(kSecret, ns, name);
    if (!got.ok()) {
      if (got.error().IsNotFound()) return Outcome::Done();
      return Classified(got.error(), "get", what);
    }
    live = std::move(*got);
  }
  const std::string owner = LabelOf(live, kProjectLabel);
  if (GetString(live, "type") != "kubernetes.io/tls" || (!owner.empty() && owner != rec.id)) {
    return Outcome::Done();  // not a certificate of ours: leave it
  }
  kube::DeleteOptions options;
  options.precondition_uid = GetString(MemberOrNull(live, "metadata"), "uid");
  if (auto crash = Hook("before", "delete", kSecret, name)) return *crash;
  auto deleted = r.client_->Delete(kSecret, ns, name, options);
  ++r.writes_;
  if (auto crash = Hook("after", "delete", kSecret, name)) return *crash;
  // 404: gone already; 409: the uid is another's now (cert-manager made it again): a later run
  // judges the new one.
  if (!deleted.ok() && !deleted.error().IsNotFound()) {
    return Classified(deleted.error(), "delete", what);
  }
  return Outcome::Done();
}

Reconciler::Outcome Reconciler::Run::Remove() {
  // The API writes a supplied-credentials Secret just before it commits the intent naming it,
  // so the cache may not show it yet: before the record goes, ask the server itself (one list
  // per delete) and delete what it still has.
  kube::ListOptions list;
  list.label_selector = std::string(kProjectLabel) + "=" + rec.id + "," +
                        std::string(kManagedByLabel) + "=" + std::string(kManagedByValue);
  auto left = r.client_->List(kSecret, ns, list);
  if (!left.ok()) return Note("Secret", Classified(left.error(), "list", "Secrets"));
  for (const Json& s : left->items) {
    const Json& meta = MemberOrNull(s, "metadata");
    kube::DeleteOptions options;
    options.precondition_uid = GetString(meta, "uid");
    const std::string name = GetString(meta, "name");
    if (auto crash = Hook("before", "delete", kSecret, name)) return *crash;
    auto deleted = r.client_->Delete(kSecret, ns, name, options);
    ++r.writes_;
    if (auto crash = Hook("after", "delete", kSecret, name)) return *crash;
    if (!deleted.ok() && !deleted.error().IsNotFound()) {
      return Note("Secret", Classified(deleted.error(), "delete", "Secret " + name));
    }
  }
  return Outcome::Done();
}

Reconciler::Reconciler(const EngineOptions& options, std::shared_ptr<kube::Client> client,
                       store::Store& store, Observer& observer, const Clock& clock,
                       FenceCheck check_fence, Wake wake)
    : options_(options),
      client_(std::move(client)),
      store_(store),
      observer_(observer),
      clock_(clock),
      check_fence_(std::move(check_fence)),
      wake_(std::move(wake)),
      starts_(static_cast<size_t>(std::max(0, options.config.max_starting)), kStartSlotTtl, clock),
      fingerprints_(options.config, observer) {}

bool Reconciler::AdmitStart(const ProjectRecord& rec) {
  if (starts_.cap() == 0) return true;
  // A start is a run that would create the Deployment; every later step of it is admitted.
  const View deployment = observer_.Get(kDeployment, NamesFor(rec.id, rec.name).deployment);
  if (deployment.object || !deployment.created_uid.empty()) return true;
  StartGate::Admission a = starts_.Admit(rec.id, rec.team);
  WakeAll(a.wake);
  return a.admitted;
}

void Reconciler::WakeAll(const std::vector<std::string>& ids) const {
  if (!wake_) return;
  for (const auto& id : ids) wake_(id);
}

std::optional<std::string> Reconciler::KnownUnpersisted(const ProjectRecord& rec,
                                                        const std::string& object,
                                                        const View& view) {
  MutexLock lock(memo_mu_);
  auto it = unpersisted_.find(rec.id);
  if (it == unpersisted_.end() || it->second.generation != rec.generation ||
      it->second.object != object) {
    return std::nullopt;
  }
  const bool unchanged =
      view.stale || (view.object && OwnContentHash(view.object->Parse()) == it->second.content);
  if (!unchanged) return std::nullopt;
  return it->second.message;
}

void Reconciler::RememberUnpersisted(const ProjectRecord& rec, std::string object,
                                     std::string content, std::string message) {
  MutexLock lock(memo_mu_);
  unpersisted_[rec.id] =
      Unpersisted{rec.generation, std::move(object), std::move(content), std::move(message)};
}

bool Reconciler::WaitedTooLong(const ProjectRecord& rec, const std::optional<std::string>& key) {
  MutexLock lock(memo_mu_);
  if (!key) {
    waiting_.erase(rec.id);
    return false;
  }
  auto [it, inserted] = waiting_.try_emplace(rec.id);
  Waiting& w = it->second;
  if (inserted || w.generation != rec.generation || w.key != *key) {
    w = Waiting{rec.generation, *key, clock_.Now()};
    return false;
  }
  return clock_.Now() - w.since > std::chrono::seconds(options_.config.step_timeout_seconds);
}

bool Reconciler::BoundWait(const ProjectRecord& rec, Run& run, Outcome* outcome) {
  if (outcome->kind != Outcome::Kind::kFailed || outcome->reason != "NotPersisted") {
    MutexLock lock(memo_mu_);
    unpersisted_.erase(rec.id);
  }
  if (outcome->kind != Outcome::Kind::kWait) {
    WaitedTooLong(rec, std::nullopt);
    return false;
  }
  const std::string resource = !run.outcome_resource.empty() ? run.outcome_resource
                               : run.conditions.empty()      ? ""
                                                             : run.conditions.back().resource;
  if (!WaitedTooLong(rec, resource + "\n" + outcome->reason + "\n" + outcome->message)) {
    return false;
  }
  *outcome = Outcome::Failed(outcome->reason,
                             outcome->message + " (no progress for more than " +
                                 std::to_string(options_.config.step_timeout_seconds) +
                                 " s: engine.stepTimeoutSeconds; still watching the cluster)");
  return true;
}

void Reconciler::Forget(const std::string& project_id) {
  MutexLock lock(memo_mu_);
  unpersisted_.erase(project_id);
  waiting_.erase(project_id);
  auth_refusals_.erase(project_id);
}

std::chrono::milliseconds Reconciler::AuthRetry(const std::string& project_id) {
  int refusals = 0;
  {
    MutexLock lock(memo_mu_);
    auto it = auth_refusals_.find(project_id);
    if (it != auth_refusals_.end()) refusals = it->second;
  }
  std::chrono::milliseconds delay = kAuthRetryInitial;
  for (int i = 0; i < refusals && delay < kAuthRetryMax; ++i) delay *= 2;
  return std::min<std::chrono::milliseconds>(delay, kAuthRetryMax);
}

void Reconciler::NoteAuth(const std::string& project_id, const Outcome& outcome) {
  if (outcome.auth_status == 0) {
    MutexLock lock(memo_mu_);
    auth_refusals_.erase(project_id);
    return;
  }
  {
    MutexLock lock(memo_mu_);
    ++auth_refusals_[project_id];
  }
  ++(outcome.auth_status == 401 ? unauthorized_ : forbidden_);
  LOG_ERROR("project {}: {}: {}", project_id, outcome.reason, outcome.message);
}

std::vector<Orphan> Reconciler::orphans() const {
  MutexLock lock(orphans_mu_);
  return orphans_;
}

namespace {

// The phase a project is in while something is not ready (see docs/lifecycle.md): before it
// first ran, Provisioning; after, Degraded when this run found drift, Updating when it rolled an
// object to a newer rendering (new intent or config), else the previous phase's story.
Phase WaitingPhase(const std::optional<ProjectStatus>& prev, int64_t generation, bool drift,
                   bool rolling, bool created) {
  if (!prev) return Phase::kProvisioning;
  const Phase p = prev->phase;
  const bool had_run = p == Phase::kRunning || p == Phase::kUpdating || p == Phase::kDegraded;
  if (!had_run) return Phase::kProvisioning;
  if (drift || (created && prev->observed_generation == generation)) return Phase::kDegraded;
  if (rolling) return Phase::kUpdating;
  if (p == Phase::kDegraded && prev->observed_generation == generation) return Phase::kDegraded;
  if (p == Phase::kUpdating || prev->observed_generation < generation) return Phase::kUpdating;
  return Phase::kDegraded;
}

// The phase of a run toward Running that ended with `o`.
Phase PhaseOf(const Reconciler::Outcome& o, const std::optional<ProjectStatus>& prev,
              int64_t generation, bool drift, bool rolling, bool created) {
  switch (o.kind) {
    case Reconciler::Outcome::Kind::kDone:
      return Phase::kRunning;
    case Reconciler::Outcome::Kind::kFailed:
      return Phase::kFailed;
    default:
      return WaitingPhase(prev, generation, drift, rolling, created);
  }
}

bool SameStatus(const ProjectStatus& a, const ProjectStatus& b) {
  Json ja = ToStoredJson(a), jb = ToStoredJson(b);
  ja.erase("since");
  jb.erase("since");
  return ja == jb;
}

}  // namespace

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
  bool queued = false;  // a start waiting for a slot (StartGate): woken, not rechecked soon
};

void Reconciler::SettleStart(const ProjectRecord& rec, const Decision& d) {
  if (starts_.cap() == 0) return;
  const bool over = d.finished || rec.desired != DesiredState::kRunning ||
                    d.status.phase == Phase::kRunning || d.status.phase == Phase::kFailed ||
                    d.outcome.kind == Outcome::Kind::kFailed;
  if (over) WakeAll(starts_.End(rec.id));
}

WorkResult Reconciler::Reconcile(const std::string& project_id,
                                 const std::optional<store::Fence>& fence) {
  ++runs_;
  auto loaded = Load(project_id, fence);
  if (!loaded.ok()) return std::move(loaded).error();
  std::optional<std::string> fingerprint = FingerprintOf(*loaded);
  if (Unchanged(*loaded, fingerprint)) return EndUnchanged(loaded->rec);
  Run run(*this, std::move(loaded->rec));
  run.fence = fence;
  run.fingerprint = std::move(fingerprint);
  Decision d = Decide(run, *loaded);
  SettleStart(run.rec, d);
  NoteAuth(run.rec.id, d.outcome);
  if (d.finished) return *d.finished;
  if (d.outcome.kind == Outcome::Kind::kCrashed) {
    if (d.outcome.lost_shard) return LostShard(project_id, d.outcome.error);
    return WorkResult::Terminal(d.outcome.error);
  }
  Status written = WriteStatus(run, d);
  if (fence && written.code() == StatusCode::kAborted) return LostShard(project_id, written);
  if (!written.ok()) return WorkResult::Error(written);
  if (d.queued) return WorkResult::RequeueAfter(kQueuedRecheck);
  return ToWorkResult(d.outcome, d.bounded);
}

std::optional<std::string> Reconciler::FingerprintOf(const Loaded& in) const {
  const bool toward_running =
      !in.agent && in.rec.desired == DesiredState::kRunning && in.spec.ok() && in.policy.ok();
  if (!toward_running) return std::nullopt;
  return fingerprints_.Of(in.rec, *in.spec, in.creds);
}

bool Reconciler::Unchanged(const Loaded& in, const std::optional<std::string>& fingerprint) const {
  return fingerprint && in.prev && in.prev->phase == Phase::kRunning &&
         in.prev->observed_generation == in.rec.generation && in.prev->fingerprint == *fingerprint;
}

WorkResult Reconciler::EndUnchanged(const ProjectRecord& rec) {
  ++unchanged_runs_;
  // What a full run ending Running would settle: its start is over, nothing waits or is
  // refused.
  if (starts_.cap() != 0) WakeAll(starts_.End(rec.id));
  Forget(rec.id);
  return WorkResult::Ok();
}

WorkResult Reconciler::LostShard(const std::string& project_id, const Status& why) {
  ++lost_shard_runs_;
  LOG_INFO("project {}: run ended, its shard is no longer ours: {}", project_id, why.message());
  return WorkResult::Ok();
}

Expected<Reconciler::Loaded, WorkResult> Reconciler::Load(
    const std::string& project_id, const std::optional<store::Fence>& fence) {
  auto got = store_.GetProject(project_id);
  if (!got.ok()) {
    if (got.error().code() == StatusCode::kNotFound) return ReconcileUnknown(project_id, fence);
    return WorkResult::Error(got.error());
  }
  ProjectRecord& rec = *got;
  ForgetOrphans(project_id);  // stored now: what was reported before the commit is its own
  std::optional<ProjectStatus> prev = ParseStoredStatus(rec.status_json);
  auto spec_json = ParseJson(rec.spec_json);
  if (rec.kind == store::RecordKind::kAgent) {
    StatusOr<AgentSpec> agent =
        spec_json.ok() ? ParseAgentSpec(*spec_json) : StatusOr<AgentSpec>(spec_json.error());
    return Loaded{std::move(rec),
                  std::move(prev),
                  StatusOr<ProjectSpec>(InvalidArgument("an agent's spec is not a project's")),
                  Status::Ok(),
                  {},
                  std::move(agent)};
  }
  auto spec =
      spec_json.ok() ? ParseProjectSpec(*spec_json) : StatusOr<ProjectSpec>(spec_json.error());
  Status policy = spec.ok() ? CheckSpecPolicy(options_.config, *spec) : Status::Ok();
  std::vector<store::Credential> creds;
  // Read to run with, or, suspended with supplied credentials, to revoke Steward's own.
  const bool suspended_supplied =
      rec.desired == DesiredState::kSuspended && spec.ok() && spec->credentials;
  if ((rec.desired == DesiredState::kRunning && spec.ok() && policy.ok()) || suspended_supplied) {
    auto listed = store_.ListCredentials(rec.id);
    if (!listed.ok()) return WorkResult::Error(listed.error());
    creds = std::move(*listed);
  }
  return Loaded{std::move(rec), std::move(prev), std::move(spec), std::move(policy),
                std::move(creds)};
}

Reconciler::Decision Reconciler::Decide(Run& run, const Loaded& in) {
  const ProjectRecord& rec = run.rec;
  if (in.agent) return DecideAgent(run, in);
  if (rec.desired != DesiredState::kRunning) {
    if (in.spec.ok()) run.spec = *in.spec;
    return DecideStopped(run, NamesFor(rec.id, rec.name), in.creds);
  }
  Decision d;
  d.status.observed_generation = rec.generation;
  if (!in.spec.ok()) {
    d.outcome = Outcome::Failed("InvalidSpec", in.spec.error().message());
    d.status.phase = Phase::kFailed;
  } else if (!in.policy.ok()) {
    // Stored before the operator tightened engine.policy: not rendered until the spec changes.
    d.outcome = Outcome::Failed("PolicyViolation", in.policy.message());
    d.status.phase = Phase::kFailed;
  } else {
    d = DecideRunning(run, in);
  }
  return d;
}

Reconciler::Decision Reconciler::DecideRunning(Run& run, const Loaded& in) {
  const ProjectRecord& rec = run.rec;
  Decision d;
  d.status.observed_generation = rec.generation;
  run.spec = *in.spec;
  // Supplied credentials need none of Steward's (none are generated for them).
  const store::Credential* hold = Run::CredentialToHold(in.creds, false);
  if (hold == nullptr && !run.spec.credentials) {
    d.outcome = Outcome::Failed("NoCredentials",
                                "project " + rec.name + " has no active or pending credentials");
  } else if (!AdmitStart(rec)) {
    // Nothing created yet, nothing rendered: the project waits for a slot (woken when it gets
    // one; the recheck is a safety net), not bounded by the step timeout.
    d.outcome = Outcome::Wait("Queued", "waiting for one of the " +
                                            std::to_string(options_.config.max_starting) +
                                            " starts under way (engine.maxStarting)");
    d.status.phase = Phase::kPending;
    d.queued = true;
    return d;
  } else {
    RenderInput render;
    render.id = rec.id;
    render.name = rec.name;
    render.config = &options_.config;
    render.resolved = Resolve(options_.config, rec.name, run.spec);
    render.restart_epoch = rec.restart_epoch;
    if (hold != nullptr) render.credential = {hold->id, hold->token};
    d.status.url = render.resolved.url;
    const Manifests m = Render(render);
    d.outcome = run.Provision(m, in.creds);
  }
  d.bounded = BoundWait(rec, run, &d.outcome);
  d.status.phase =
      PhaseOf(d.outcome, in.prev, rec.generation, run.drift, run.rolling, run.created_object);
  return d;
}

Reconciler::Decision Reconciler::DecideAgent(Run& run, const Loaded& in) {
  const ProjectRecord& rec = run.rec;
  const StatusOr<AgentSpec>& agent = *in.agent;
  // The supplied-Secret steps read only the credentials reference of run.spec.
  if (agent.ok()) run.spec.credentials = agent->credentials;
  if (rec.desired != DesiredState::kRunning) {
    ObjectNames names;  // a Deployment and a Service of the agent's name, nothing else
    names.deployment = names.service = rec.name;
    return DecideStopped(run, names, in.creds);
  }
  Decision d;
  d.status.observed_generation = rec.generation;
  if (!agent.ok()) {
    d.outcome = Outcome::Failed("InvalidSpec", agent.error().message());
  } else {
    d.outcome = run.ProvisionAgent(
        RenderAgent(rec.id, rec.name, &options_.config, *agent, rec.restart_epoch));
  }
  d.bounded = BoundWait(rec, run, &d.outcome);
  d.status.phase =
      PhaseOf(d.outcome, in.prev, rec.generation, run.drift, run.rolling, run.created_object);
  return d;
}

Reconciler::Decision Reconciler::DecideStopped(Run& run, const ObjectNames& names,
                                               const std::vector<store::Credential>& creds) {
  const ProjectRecord& rec = run.rec;
  const bool deleting = rec.desired == DesiredState::kDeleted;
  Decision d;
  d.status.observed_generation = rec.generation;
  d.outcome = run.Teardown(names, deleting);
  if (d.outcome.done() && !deleting) {
    // Suspended: no pod holds any set of supplied credentials, so only the current one stays,
    // and none of Steward's own when the platform supplies them.
    Outcome gc = run.spec.credentials ? run.PromoteCredentials(creds, names.secret)
                                      : run.RemoveSuppliedSecrets("");
    if (!gc.done()) d.outcome = run.Note("Credentials", gc);
  }
  if (d.outcome.done() && deleting) d.outcome = run.Remove();
  d.bounded = BoundWait(rec, run, &d.outcome);
  if (d.outcome.done()) {
    d.status.phase = deleting ? Phase::kDeleting : Phase::kSuspended;
  } else {
    d.status.phase = deleting ? Phase::kDeleting : Phase::kSuspending;
  }
  if (d.outcome.kind == Outcome::Kind::kFailed) d.status.phase = Phase::kFailed;
  if (d.outcome.done() && deleting) d.finished = Purge(rec, run.fence);
  return d;
}

WorkResult Reconciler::Purge(const ProjectRecord& rec, const std::optional<store::Fence>& fence) {
  Forget(rec.id);
  store::HistoryEntry tombstone;
  tombstone.kind = "purged";
  tombstone.generation = rec.generation;
  tombstone.summary = "deleted: every object gone, record removed";
  Status s = store_.PurgeProject(rec.id, tombstone, fence);
  if (fence && s.code() == StatusCode::kAborted) return LostShard(rec.id, s);
  if (!s.ok() && s.code() != StatusCode::kNotFound) return WorkResult::Error(s);
  return WorkResult::Ok();
}

Status Reconciler::WriteStatus(Run& run, Decision& d) {
  const ProjectRecord& rec = run.rec;
  const Outcome& outcome = d.outcome;
  ProjectStatus& status = d.status;
  status.reason = outcome.done() ? std::string(ToString(status.phase)) : outcome.reason;
  status.message = outcome.done()
                       ? (status.phase == Phase::kRunning ? "every object is ready at generation " +
                                                                std::to_string(rec.generation)
                          : rec.kind == store::RecordKind::kAgent
                              ? "Deployment, Service and pod are gone"
                              : "Deployment, Service, Ingresses and pods are gone")
                       : outcome.message;
  status.conditions = std::move(run.conditions);
  // The fingerprint goes with a Running verdict only: any other phase is judged again.
  if (outcome.done() && status.phase == Phase::kRunning && run.fingerprint) {
    status.fingerprint = *run.fingerprint;
  }

  // Write the status only if the intent is still the one this run worked on (a newer one has
  // re-queued the project) and something changed.
  const int64_t now = WallMs(clock_);
  auto written = store_.MutateProject(
      rec.id, [&](ProjectRecord& r, const auto&, store::Mutation& m) -> Status {
        if (r.generation != rec.generation) return Status::Ok();
        m.fence = run.fence;
        const std::optional<ProjectStatus> cur = ParseStoredStatus(r.status_json);
        if (cur && SameStatus(*cur, status)) return Status::Ok();
        status.since_ms = cur && cur->phase == status.phase ? cur->since_ms : now;
        r.status_json = DumpJson(ToStoredJson(status));
        r.phase = std::string(ToString(status.phase));
        r.observed_generation = status.observed_generation;
        if (!cur || cur->phase != status.phase) {
          store::HistoryEntry h;
          h.kind = "phase";
          h.generation = rec.generation;
          h.summary = r.phase;
          h.detail_json = DumpJson(Json{{"reason", status.reason}, {"message", status.message}});
          m.history.push_back(std::move(h));
        }
        return Status::Ok();
      });
  if (!written.ok() && written.error().code() != StatusCode::kNotFound) return written.error();
  return Status::Ok();
}

WorkResult Reconciler::ToWorkResult(const Outcome& outcome, bool bounded) const {
  if (bounded) return WorkResult::RequeueAfter(options_.recheck);  // still watching
  switch (outcome.kind) {
    case Outcome::Kind::kDone:
      return WorkResult::Ok();
    case Outcome::Kind::kWait:
      return WorkResult::RequeueAfter(options_.recheck);
    case Outcome::Kind::kFailed:
      return WorkResult::Terminal(FailedPrecondition(outcome.reason + ": " + outcome.message));
    case Outcome::Kind::kError:
      if (outcome.retry_after) return WorkResult::RequeueAfter(*outcome.retry_after);
      return WorkResult::Error(outcome.error.ok() ? Internal(outcome.message) : outcome.error);
    case Outcome::Kind::kCrashed:
      return WorkResult::Terminal(outcome.error);
  }
  return WorkResult::Error(Internal("unreachable"));
}

void Reconciler::ForgetOrphans(const std::string& project_id) {
  MutexLock lock(orphans_mu_);
  std::erase_if(orphans_, [&](const Orphan& orphan) REQUIRES(orphans_mu_) {
    if (orphan.project_id != project_id) return false;
    reported_orphans_.erase(orphan.kind + "/" + orphan.name);
    return true;
  });
}

WorkResult Reconciler::ReconcileUnknown(const std::string& project_id,
                                        const std::optional<store::Fence>& fence) {
  WakeAll(starts_.End(project_id));  // purged, or never stored: no start of it is under way
  // Objects labelled for a project the store does not know: report; remove when configured.
  struct Found {
    const ResourceType* type;
    kube::ObjectRef obj;
    bool debris = false;  // a supplied-credentials Secret this store's Steward wrote
  };
  std::vector<Found> found;
  for (const ResourceType* t : {&kIngress, &kService, &kDeployment, &kPvc, &kSecret}) {
    for (auto& o : observer_.ByLabel(*t, kProjectLabel, project_id)) {
      // Through the expectations: an object a purge has just deleted may linger in the cache.
      View view = observer_.Get(*t, o->name());
      if (view.object && view.object->uid() == o->uid()) found.push_back({t, o});
    }
  }
  // The API writes a project's supplied-credentials Secret just before it commits the project:
  // one younger than kSuppliedSecretGrace is not an orphan yet (neither reported nor removed).
  // Such a Secret is looked at again when its grace ends: nothing else may touch the id then (a
  // Steward killed between the Secret and the commit leaves it for the next process to remove).
  // One this store's Steward wrote is then removed whatever engine.removeOrphans says: its
  // intent was never committed (or its project is gone), so nobody uses it.
  const SystemTime now = clock_.WallNow();
  const std::string store_id = store_.FeedId();
  for (Found& f : found) {
    if (f.type != &kSecret) continue;
    const Json obj = f.obj->Parse();
    f.debris = LabelOf(obj, kCredentialsLabel) == kSuppliedValue &&
               AnnotationOf(obj, kStoreAnnotation) == store_id;
  }
  std::optional<Millis> young_until;  // the soonest a skipped Secret's grace ends
  std::erase_if(found, [&](const Found& f) {
    if (f.type != &kSecret) return false;
    const Json obj = f.obj->Parse();
    if (LabelOf(obj, kCredentialsLabel) != kSuppliedValue) return false;
    auto created = ParseRfc3339(GetString(MemberOrNull(obj, "metadata"), "creationTimestamp"));
    if (!created) return true;
    const auto age = now - *created;
    if (age >= kSuppliedSecretGrace) return false;
    const Millis left = std::chrono::ceil<Millis>(kSuppliedSecretGrace - age) + Millis(1);
    if (f.debris || options_.config.remove_orphans) {
      young_until = young_until ? std::min(*young_until, left) : left;
    }
    return true;
  });
  const WorkResult done = young_until ? WorkResult::RequeueAfter(*young_until) : WorkResult::Ok();
  {
    MutexLock lock(orphans_mu_);
    // Forget reported orphans of this project that are gone.
    std::erase_if(orphans_, [&](const Orphan& orphan) REQUIRES(orphans_mu_) {
      if (orphan.project_id != project_id) return false;
      bool still = std::any_of(found.begin(), found.end(), [&](const Found& f) {
        return f.type->kind == orphan.kind && f.obj->name() == orphan.name;
      });
      if (!still) reported_orphans_.erase(orphan.kind + "/" + orphan.name);
      return !still;
    });
    for (const auto& f : found) {
      std::string key = f.type->kind + "/" + f.obj->name();
      if (reported_orphans_.insert(key).second) {
        orphans_.push_back({f.type->kind, f.obj->name(), project_id});
        const bool migrating = !AnnotationOf(f.obj->Parse(), kMigratingAnnotation).empty();
        LOG_WARN("orphan: {} {} carries steward.io/project={} but no such project exists{}",
                 f.type->kind, f.obj->name(), project_id,
                 migrating  ? "; kept: steward migrate is handing it over (steward.io/migrating)"
                 : f.debris ? "; removing it (supplied credentials this store's Steward wrote "
                              "for an intent that was never committed)"
                 : options_.config.remove_orphans ? "; removing it"
                                                  : "");
      }
    }
  }
  // Objects `steward migrate` relabelled for a project it is about to store are never removed
  // (reported as orphans until the project exists).
  std::erase_if(found, [&](const Found& f) {
    return !AnnotationOf(f.obj->Parse(), kMigratingAnnotation).empty() ||
           !(f.debris || options_.config.remove_orphans);
  });
  if (found.empty()) return done;
  // Stored meanwhile (the run began before the project was committed): not orphans.
  if (auto stored = store_.GetProject(project_id); stored.ok()) {
    return WorkResult::RequeueAfter(Millis(0));
  } else if (stored.error().code() != StatusCode::kNotFound) {
    return WorkResult::Error(stored.error());
  }
  ProjectRecord ghost;
  ghost.id = project_id;
  Run run(*this, ghost);
  run.fence = fence;
  Outcome o = Outcome::Done();
  for (const auto& f : found) {
    o = run.EnsureGone(*f.type, f.obj->name(), f.type == &kDeployment ? "Foreground" : "");
    if (!o.done()) break;
  }
  NoteAuth(project_id, o);
  if (o.kind == Outcome::Kind::kError && o.retry_after) {
    return WorkResult::RequeueAfter(*o.retry_after);
  }
  if (o.kind == Outcome::Kind::kError) return WorkResult::Error(o.error);
  if (o.kind == Outcome::Kind::kCrashed) {
    return o.lost_shard ? LostShard(project_id, o.error) : WorkResult::Terminal(o.error);
  }
  if (!o.done()) return WorkResult::RequeueAfter(options_.recheck);
  return done;
}

}  // namespace steward::engine
