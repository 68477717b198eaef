// Intents: the operations the platform asks for (put a spec, start, suspend, restart, rotate
// credentials, delete) as store transactions. Each validates, commits the new desired state
// with a new generation and a history line, and only then enqueues the project for the engine
// (docs/design.md §2, invariant 2: intent is durable before anyone is told it was accepted). None
// of them talks to Kubernetes. Also the credential check the platform calls when an instance
// presents a token.
//
// Thread-safe (the store serialises; an operation is one store transaction).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/json.h"
#include "common/status.h"
#include "engine/intents/credential_vault.h"
#include "engine/intents/placement.h"
#include "engine/model/project.h"
#include "store/store.h"

namespace steward::engine {

struct CredentialCheck {
  bool valid = false;  // active or pending (new pods need theirs during a rotation)
  std::string project_id;
  std::string project_name;
  std::string state;  // "active" | "pending" | "revoked" | "" (unknown token)
};

class Intents {
 public:
  using Enqueue = std::function<void(const store::ProjectRecord& record)>;
  // `enqueue` is called with the committed record after each commit that changed something
  // (may be empty in tests).
  // `config` (domain, custom-hostname policy, engine.policy enforced on every Put) must outlive
  // this; nullptr: the defaults.
  // `vault` (may be null: supplied credentials are then refused) takes the values of
  // spec.credentials before the intent naming them is committed; it must outlive this.
  // `placement` (may be null: one cluster, "default", checked against `config`, its credentials
  // in `vault`) places new records on one of several clusters and gives each cluster's config
  // and vault; it must outlive this.
  Intents(store::Store& store, Enqueue enqueue, const EngineConfig* config = nullptr,
          CredentialVault* vault = nullptr, Placement* placement = nullptr);

  // Creates the project (desired: suspended unless `start`) or replaces its spec. Idempotent: the
  // same spec again changes nothing and keeps the generation. `id` empty: generated on create,
  // ignored on update (the name finds the project). kInvalidArgument naming the field for a bad
  // name or spec (also a custom hostname the operator's policy refuses); kAlreadyExists when
  // one of the project's hostnames (<name>.<domain>, its custom hostname) is another project's;
  // kFailedPrecondition while the project is being deleted; kAlreadyExists when `id` is given
  // and the name is another project's. spec.cluster and spec.placement place a new record
  // (placement.h; the cluster is stored in the record, not in its spec); on an existing one
  // spec.cluster must be its cluster (kFailedPrecondition otherwise: a move is its own intent). The
  // look-up and the write are one store transaction (Store::UpsertProjectByName), so a
  // create-or-update never answers kNotFound and two concurrent Puts of a new name create it once.
  struct PutResult {
    store::ProjectRecord record;
    bool created = false;
    bool changed = false;
  };
  StatusOr<PutResult> Put(std::string_view name, const Json& spec_json, std::string_view id = "",
                          bool start = false);

  // Creates or replaces an MQTT schema agent (engine/model/agent.h) named `name`, which must be
  // AgentName(spec). The first put must carry the token (spec.credentials.token), written to its
  // Secret before the intent is committed, as Put does with supplied project credentials; later
  // puts without credentials keep it. Claims Deployment/<name> and Service/<name>. Otherwise as
  // Put: idempotent, one transaction, kInvalidArgument naming the field, kAlreadyExists when the
  // name is a project's (records of both kinds share one name space: their objects would).
  // `id` as for Put: empty generates one on create; given, it is the new agent's id, and
  // kAlreadyExists when the name is an agent of another id (`steward migrate` gives the id it
  // labelled the driver's objects with before the put).
  // Parameters in Put's order.
  StatusOr<PutResult> PutAgent(std::string_view name, const Json& spec_json,
                               std::string_view id = "", bool start = false);

  // Each returns the record after the commit; its generation is the one to wait for.
  // `kind`: the record must be of this kind (a project's name is unknown to the agents' routes
  // and the other way round: kNotFound). Start on a
  // running project, suspend on a suspended one: no change, same generation. kNotFound for an
  // unknown project; kFailedPrecondition for a project being deleted.
  StatusOr<store::ProjectRecord> Start(std::string_view id_or_name,
                                       store::RecordKind kind = store::RecordKind::kProject);
  StatusOr<store::ProjectRecord> Suspend(std::string_view id_or_name,
                                         store::RecordKind kind = store::RecordKind::kProject);
  // Rolls the pods (new restart epoch). kFailedPrecondition when the project is not to run.
  StatusOr<store::ProjectRecord> Restart(std::string_view id_or_name,
                                         store::RecordKind kind = store::RecordKind::kProject);
  // New pending credentials; the engine activates them once pods holding them are ready, and
  // then revokes every older one. A second rotate while one is pending adds a newer pending
  // credential; the older stays valid until then (pods of the unfinished rollout may hold it).
  StatusOr<store::ProjectRecord> Rotate(std::string_view id_or_name,
                                        store::RecordKind kind = store::RecordKind::kProject);
  StatusOr<store::ProjectRecord> Delete(std::string_view id_or_name,
                                        store::RecordKind kind = store::RecordKind::kProject);
  // Gives the project another name, keeping its id, PVC, credentials and history (FlowFuse:
  // stop, rename, start). Only while it is suspended and Suspended (nothing named after the old
  // name runs): kFailedPrecondition otherwise. kInvalidArgument for a bad name, kAlreadyExists
  // when the name, or a hostname or object name it would claim, is another project's. The
  // same name again changes nothing. A new generation; the next start renders the new names.
  StatusOr<store::ProjectRecord> Rename(std::string_view id_or_name, std::string_view new_name);

  // A move to another cluster (POST /v1/projects/{p}/move; docs/operations.md "Moves").
  struct MoveRequest {
    std::string cluster;  // required: a configured cluster
    // "stopFirst" (the default for a new move): the new cluster starts the project once the old
    // one has nothing of it left; "startFirst": the old one's objects go once the new one runs
    // (no downtime; both exist briefly). "" = the default, or the order of the move under way.
    std::string order;
    // "drop": the project's volume (its claim on the old cluster) is deleted with the rest —
    // required of a project with storage, since volumes do not cross clusters. "" otherwise.
    std::string storage;
  };
  // Places the project on `request.cluster` with a new generation and a "move" history line
  // {from, to, order, storage}; the record keeps `moving_from` (the old cluster) until that
  // cluster's engine has removed everything of it there. The URL is kept: a project without
  // spec.url gets its current URL as spec.url when the new cluster would give another one.
  // Supplied credentials are copied to the new cluster's Secret (read from the old one's) before
  // the commit. The same cluster again changes nothing (or only the order of the move under
  // way). kInvalidArgument naming the field (an unknown cluster, order or storage value);
  // kFailedPrecondition for an agent (kNotFound: this is for projects), a project being deleted,
  // one with storage without storage "drop", a move elsewhere while another is under way, a full
  // cluster (capacity), a spec the new cluster's policy refuses; kUnavailable when the old
  // cluster cannot give its supplied credentials; kAborted when the record changed meanwhile.
  StatusOr<store::ProjectRecord> Move(std::string_view id_or_name, const MoveRequest& request);

  StatusOr<store::ProjectRecord> Find(std::string_view id_or_name,
                                      store::RecordKind kind = store::RecordKind::kProject);

  // Claims the hostnames of projects that hold none (stored by a Steward from before hostnames
  // were claimed), in one transaction. A hostname another project already holds stays that
  // project's and is logged loudly naming both: the operator has to change one of them. Returns
  // the number of projects that were given hostnames. Run once at engine start.
  StatusOr<int> ClaimUnclaimedHostnames();
  StatusOr<CredentialCheck> CheckCredential(std::string_view token);

 private:
  // Where a put of `name` goes: the existing record's cluster, else the one placement picks.
  StatusOr<ClusterTarget> TargetOf(std::string_view name, const PlacementRequest& request,
                                   std::string_view team);
  const EngineConfig& ConfigOf(std::string_view cluster) const;
  StatusOr<store::ProjectRecord> SetDesired(std::string_view id_or_name, store::RecordKind kind,
                                            store::DesiredState d, std::string_view operation);
  void Notify(const store::ProjectRecord& record) const;
  // A move to the cluster the record is on: only the order of a move under way may change.
  StatusOr<store::ProjectRecord> ReorderMove(const store::ProjectRecord& found,
                                             const std::string& order);

  store::Store& store_;
  Enqueue enqueue_;
  const EngineConfig& config_;
  CredentialVault* vault_;
  Placement* placement_;
};

// What a project holds exclusively, claimed in the store with its intent (Mutation::hostnames):
// its hostnames, and "<Kind>/<name>" for each object it would have (Secret, PVC, Deployment,
// Service, Ingress, custom Ingress, the TLS Secrets cert-manager makes for them), and its id and
// name as store::ReferenceClaim (the API's paths take either: one project's id must not be
// another's name). A second project whose names would clash with these is refused when it is
// stored, not left to fight over the objects or the paths. Sorted, no duplicates.
std::vector<std::string> ProjectClaims(const EngineConfig& config, std::string_view id,
                                       std::string_view name, const ProjectSpec& spec);

// The engine's name for a stored desired state.
inline Intent IntentOf(store::DesiredState desired) {
  switch (desired) {
    case store::DesiredState::kRunning:
      return Intent::kRun;
    case store::DesiredState::kSuspended:
      return Intent::kSuspend;
    case store::DesiredState::kDeleted:
      return Intent::kDelete;
  }
  return Intent::kSuspend;
}

// 32 random bytes from the OS CSPRNG, hex encoded; and credential ids "c-<16 hex>".
std::string NewToken();
std::string NewCredentialId();

}  // namespace steward::engine
