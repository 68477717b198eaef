// Store: the durable home of every project's intent (spec, desired state, generation), its
// observed status, its credentials and an append-only history. The API commits intent here
// before it answers; the engine reads intent from here and writes status back.
//
// The interface knows nothing of the engine's types: a project's spec and status are JSON text
// the engine owns. Implementations: SQLite (OpenSqliteStore, the embedded default) and
// PostgreSQL (OpenPostgresStore in store/postgres_store.h, shared by replicas). Thread-safety:
// every method may be called from any thread; each call is one transaction. Listeners run after
// the commit, outside the store's lock, one change at a time in commit order (over the whole
// store, so also for any one project); see AddListener. Implementations do not deliver changes
// themselves: each owns a store::ChangeFeed (store/change_feed.h). SQLite takes a ticket from it
// under its own lock right after each COMMIT and hands the change to it after the unlock;
// PostgreSQL's feed thread hands it every change any process committed, in position order
// (postgres_store.h says how its delivery differs); the feed keeps the ordering promises below.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace steward::store {

enum class DesiredState { kRunning, kSuspended, kDeleted };
std::string_view ToString(DesiredState s);  // "running" | "suspended" | "deleted"
std::optional<DesiredState> ParseDesiredState(std::string_view s);

// What a record manages: a Node-RED project, or an MQTT schema agent of a team broker (FlowFuse's
// startBrokerAgent). Both have the same lifecycle (intent, generation, status, history); the
// engine renders them differently.
enum class RecordKind { kProject, kAgent };
std::string_view ToString(RecordKind k);  // "project" | "agent"
std::optional<RecordKind> ParseRecordKind(std::string_view s);

// ProjectRecord::move_order's values.
inline constexpr std::string_view kMoveStopFirst = "stopFirst";
inline constexpr std::string_view kMoveStartFirst = "startFirst";

struct ProjectRecord {
  std::string id;    // immutable; [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 40 characters
  std::string name;  // 1-63 of [a-z0-9-], not starting with -; unique among stored records
  RecordKind kind = RecordKind::kProject;  // set at create, never changed
  std::string team;
  // The cluster the record is placed on (a name from the configuration's `clusters:`; "default"
  // for the one cluster of a configuration without that section). Set at create; changed only by
  // a move. Kept as a column for list filters and per-cluster counts.
  std::string cluster = "default";
  // A move under way (POST /v1/projects/{p}/move): the cluster the record was placed on before,
  // whose engine removes what it still has of the project and then clears this; "" otherwise.
  // move_order: "stopFirst" (the new cluster starts once the old has nothing left) or
  // "startFirst" (the old cluster's objects go once the new one runs); "" without a move.
  std::string moving_from;
  std::string move_order;
  std::string spec_json;  // the engine's project spec (canonical JSON)
  DesiredState desired = DesiredState::kSuspended;
  // Bumped by every accepted intent (spec change, start, suspend, restart, rotate, delete).
  int64_t generation = 0;
  // Restart requests: the engine stamps this on the pod template; bumping it rolls the pods.
  int64_t restart_epoch = 0;
  std::string status_json;  // the engine's last status; "" until first written
  std::string phase;        // the status's phase, kept as a column for list filters
  int64_t observed_generation = 0;
  int64_t created_ms = 0;  // set by the store (wall clock, ms since the epoch)
  int64_t updated_ms = 0;  // set by the store on every write
  // Row version, bumped by the store on every write of this record. Read-only for callers.
  int64_t version = 0;
};

enum class CredentialState { kPending, kActive, kRevoked };
std::string_view ToString(CredentialState s);  // "pending" | "active" | "revoked"
std::optional<CredentialState> ParseCredentialState(std::string_view s);

// Instance credentials. A project has one active credential, and during a rotation one pending
// one; both are accepted by CheckCredential (new pods need theirs to start). Revoked ones are
// refused and kept for audit until the project is purged.
struct Credential {
  std::string id;          // client id; unique
  std::string project_id;  //
  std::string token;       // the secret the instance presents; unique
  CredentialState state = CredentialState::kPending;
  int64_t created_ms = 0;
  int64_t activated_ms = 0;  // 0 until active
  int64_t revoked_ms = 0;    // 0 until revoked
};

// One line of a project's history. `kind` is "operation" (an accepted intent: create, start,
// suspend, restart, rotate, update, delete), "phase" (a phase transition), "credential"
// (rotation steps) or "purged" (the tombstone left when the record is removed).
struct HistoryEntry {
  int64_t seq = 0;  // assigned by the store, increasing over the whole store
  std::string project_id;
  int64_t at_ms = 0;  // assigned by the store when 0
  std::string kind;
  int64_t generation = 0;
  std::string summary;      // short: "start", "Running", "rotate: pending c-123"
  std::string detail_json;  // optional JSON object with more
};

// Shard ownership, for several replicas sharing one store (docs/design.md §10). Records map to a
// fixed number of shards (the engine decides how); a shard has at most one owner at a time, and
// every acquisition bumps its epoch. The owner passes Fence{shard, owner, epoch} with each write it
// makes for a record of that shard (Mutation::fence, PurgeProject) and the store refuses the write
// in the same transaction when the shard has been acquired since (by anyone, also by a new
// process under the same owner name) or released. Leases decide who should own a shard; the
// epoch is what makes a replica that lost one unable to write over its successor.
struct Fence {
  int shard = 0;
  std::string owner;
  int64_t epoch = 0;
};
struct ShardOwner {
  int shard = 0;
  std::string owner;     // "" when released
  int64_t epoch = 0;     // of the last acquisition
  int64_t since_ms = 0;  // when it was last acquired or released (store's wall clock)
};
// A replica's Lease kept in the store (replicas.leases: store; replica/lease_backend.h): the
// Lease object's JSON text, and the version the store gives it at every write.
struct StoredLease {
  std::string name;
  std::string body;
  int64_t version = 0;
};
// One acquisition or release, in the order committed (seq increasing over the whole store).
struct ShardEvent {
  int64_t seq = 0;
  int shard = 0;
  std::string owner;  // who acquired or released
  int64_t epoch = 0;  // the epoch acquired, or the one released
  int64_t at_ms = 0;
  bool acquired = false;  // false: released
};

// The claim (see Mutation::hostnames) that makes `word` one record's: a project's id and its
// name both go where the API's paths say {project}, so no record's id may be another's name.
std::string ReferenceClaim(std::string_view word);

// What a MutateProject callback may add to its transaction besides the record itself.
struct Mutation {
  std::vector<Credential> credentials;  // inserted, or replaced when the id exists
  std::vector<HistoryEntry> history;    // appended
  // When set: the hostnames this project answers on, replacing the ones it held. A hostname is
  // held by one project at most: one held by another project fails the whole transaction with
  // kAlreadyExists `hostname "<h>" is already in use` (which never names the holder). Released
  // when the project is purged. The same claims hold the names of the project's objects
  // ("Kind/name") and the words its API paths accept (ReferenceClaim: its id and its name).
  std::optional<std::vector<std::string>> hostnames;
  // When set: the write is made by the owner of a shard (several replicas, docs/design.md §10) and
  // commits only while that ownership holds (see Fence); otherwise nothing is written and the
  // call fails with kAborted. Checked in the same transaction as the write.
  std::optional<Fence> fence;
};

struct ListFilter {
  std::optional<RecordKind> kind;  // unset: records of every kind
  std::optional<std::string> team;
  std::optional<std::string> phase;
  std::optional<DesiredState> desired;
  std::optional<std::string> cluster;
  std::optional<std::string> moving_from;  // records being moved away from this cluster
  std::string after_id;                    // paging: ids greater than this, in id order
  int limit = 0;                           // 0: no limit
};

// A change committed to one project: the record after the commit, or nullopt when purged (then
// `purged` holds the record as it was, so listeners can name what went).
struct ProjectChange {
  std::string project_id;
  std::optional<ProjectRecord> record;
  std::optional<ProjectRecord> purged;
  std::vector<HistoryEntry> history;  // appended by this commit
  // The change's place in the store's change feed: 1 for the first commit that changed a record,
  // then one more for each such commit, over the whole store — across the processes that share
  // it (every replica sees the same change at the same position) and across restarts. Never
  // reused (within one FeedId()); listeners get changes in position order, without gaps, from
  // the first change committed after they were added.
  int64_t position = 0;
};
using Listener = std::function<void(const ProjectChange&)>;

class Store {
 public:
  virtual ~Store() = default;

  virtual StatusOr<ProjectRecord> GetProject(std::string_view id) = 0;  // kNotFound
  virtual StatusOr<ProjectRecord> GetProjectByName(std::string_view name) = 0;
  virtual StatusOr<std::vector<ProjectRecord>> ListProjects(const ListFilter& filter) = 0;
  // Records per value of one column, without reading any record (values without records are
  // absent). CountRecords is what stores implement; the two below say what callers ask.
  struct CountQuery {
    enum class By { kPhase, kCluster } by = By::kPhase;
    std::optional<RecordKind> kind;  // unset: every kind
    bool skip_deleted = false;       // leave out records whose desired state is deleted
  };
  virtual StatusOr<std::map<std::string, int64_t>> CountRecords(const CountQuery& query) = 0;
  // Records of `kind` per phase ("" for those the engine has not written a status for): for
  // metrics.
  StatusOr<std::map<std::string, int64_t>> CountByPhase(RecordKind kind) {
    return CountRecords({CountQuery::By::kPhase, kind, false});
  }
  // Records of every kind whose desired state is not deleted, per cluster: what placement weighs
  // against capacity.
  StatusOr<std::map<std::string, int64_t>> CountByCluster() {
    return CountRecords({CountQuery::By::kCluster, std::nullopt, true});
  }

  // Inserts a new project with its first credentials and history, atomically. `record.version`,
  // created/updated times are set by the store. kAlreadyExists when the id or name is taken.
  virtual StatusOr<ProjectRecord> CreateProject(const ProjectRecord& record,
                                                const Mutation& extra) = 0;

  // Read-modify-write of one project in one transaction: `fn` sees the current record and the
  // project's credentials (all states), may change the record (not its id or version) and add
  // to `extra`. If `fn` fails nothing is written and its status is returned. If it changes
  // nothing and adds nothing, nothing is written (no version bump, no listener call).
  // kNotFound when the project does not exist; kAlreadyExists when a rename collides;
  // kInvalidArgument when `fn` changed the id or the kind. Changes `fn` makes to version,
  // created_ms and updated_ms are ignored. `fn` runs inside the transaction, under the store's
  // lock: it must be quick and must not call the store.
  using MutateFn = std::function<Status(
      ProjectRecord& record, const std::vector<Credential>& credentials, Mutation& extra)>;
  virtual StatusOr<ProjectRecord> MutateProject(std::string_view id, const MutateFn& fn) = 0;

  // Create-or-update by name, in one transaction, so that no other write (a create of the same
  // name, a purge) can land between the look-up and the write. When a project named `name`
  // exists this is MutateProject on it with `update` (nothing written when `update` changes and
  // adds nothing). Otherwise `create` fills in the new record — its id, team, spec, desired
  // state, generation — and its first credentials, history and hostnames; the store sets the
  // name, version and times and inserts it as CreateProject does (kAlreadyExists when the id or
  // a hostname is taken; kInvalidArgument for an invalid id or name). Either function failing
  // writes nothing and returns its status. Both run under the store's lock, as MutateFn does.
  struct UpsertResult {
    ProjectRecord record;  // after the commit (or as it was, when nothing was written)
    bool created = false;
  };
  using CreateFn = std::function<Status(ProjectRecord& record, Mutation& extra)>;
  virtual StatusOr<UpsertResult> UpsertProjectByName(std::string_view name, const CreateFn& create,
                                                     const MutateFn& update) = 0;

  // Removes the project and its credentials; its history stays, ending with `tombstone`
  // (kind "purged"). kNotFound when absent. Listeners get the removed record in `purged`.
  // With a fence, only while it holds (kAborted otherwise, nothing removed), as Mutation::fence.
  virtual Status PurgeProject(std::string_view id, const HistoryEntry& tombstone,
                              const std::optional<Fence>& fence = std::nullopt) = 0;

  // Shard ownership (see Fence). AcquireShard makes `owner` the owner of `shard` at epoch
  // expected_epoch + 1, provided the shard's epoch is still `expected_epoch` (0 for a shard never
  // owned): a compare-and-set, so that two replicas that both decide to take a shard cannot both
  // succeed (the loser gets kAborted and re-reads). Whoever held it before — nobody, a released
  // owner, a dead one, or a past process of the same owner — is fenced out from then on.
  // ReleaseShard gives it up (owner "", same epoch) while `fence` holds; kAborted otherwise.
  // CheckFence: Ok while `fence` holds, kAborted naming the current owner and epoch otherwise.
  // A shard is a number in [0, 65535]; kInvalidArgument outside that or for an empty owner.
  virtual StatusOr<ShardOwner> AcquireShard(int shard, std::string_view owner,
                                            int64_t expected_epoch) = 0;
  virtual Status ReleaseShard(const Fence& fence) = 0;
  virtual Status CheckFence(const Fence& fence) = 0;
  // Every shard ever acquired, by shard number.
  virtual StatusOr<std::vector<ShardOwner>> ListShardOwners() = 0;
  // Acquisitions and releases with seq > after_seq, oldest first; limit 0: all.
  virtual StatusOr<std::vector<ShardEvent>> ListShardHistory(int64_t after_seq, int limit) = 0;

  // Replica Leases in the store, so that no cluster is the replicas' liveness. PutLease with
  // version 0 creates (kAlreadyExists when the name is taken); with the stored version, replaces
  // (kAborted when another write came first, kNotFound when there is none); either returns the
  // Lease with its new version. GetLease: kNotFound when absent. Names are 1-253 bytes, bodies
  // at most 64 KiB (kInvalidArgument). Only a store that several processes share has them: the
  // base answers kUnimplemented (SQLite: one process).
  virtual StatusOr<StoredLease> GetLease(const std::string& name);
  virtual StatusOr<StoredLease> PutLease(const StoredLease& lease);
  virtual StatusOr<std::vector<StoredLease>> ListLeases();

  // Command slots: short holds on a name that every process sharing the store respects (several
  // replicas send a pod's lifecycle commands one at a time: instance/instance_ops.h). TakeSlot
  // gives `holder` the slot `key` until `ttl` from now (the store's clock, as since_ms) and
  // answers true when nobody holds it, the hold has run out, or `holder` holds it already (the
  // hold is then extended); false, changing nothing, while another holder's hold runs.
  // ReleaseSlot ends `holder`'s hold; it does nothing when `holder` holds none (another may have
  // taken the slot after the hold ran out). Expired holds are dropped by the next TakeSlot.
  // kInvalidArgument for an empty key or holder, a key or holder over 512 bytes, or ttl <= 0.
  virtual StatusOr<bool> TakeSlot(std::string_view key, std::string_view holder,
                                  std::chrono::milliseconds ttl) = 0;
  virtual Status ReleaseSlot(std::string_view key, std::string_view holder) = 0;

  // Hostnames of projects that hold none (stored before hostnames were claimed, schema 1), so
  // that they can be claimed once: ClaimHostnames. Neither bumps a version or calls a listener
  // (hostnames are not part of the record). The list is oldest project first (created_ms, then
  // id). ClaimHostnames adds the given hostnames to their projects in one transaction, in the
  // order given (an earlier entry wins a hostname two want), skipping each one another project
  // holds, and returns those skipped as "host" → the holder's id; a project id that does not
  // exist is skipped silently.
  virtual StatusOr<std::vector<ProjectRecord>> ListProjectsWithoutHostnames() = 0;
  virtual StatusOr<std::map<std::string, std::string>> ClaimHostnames(
      const std::vector<std::pair<std::string, std::vector<std::string>>>& by_project) = 0;

  virtual StatusOr<std::vector<Credential>> ListCredentials(std::string_view project_id) = 0;
  // The credential with this token (any state); kNotFound when none.
  virtual StatusOr<Credential> FindCredentialByToken(std::string_view token) = 0;

  // History of one project (also after a purge), seq ascending, entries with seq > after_seq.
  virtual StatusOr<std::vector<HistoryEntry>> ListHistory(std::string_view project_id,
                                                          int64_t after_seq, int limit) = 0;

  // Calls `listener` after every commit that changed something. Returns a handle id.
  // Delivery (implemented by ChangeFeed, shared by every implementation): changes reach
  // listeners one at a time, in commit order. A committing call returns
  // only after its change was delivered; it is delivered on the committing thread, except a
  // change committed from inside a listener, which is delivered after that listener returns
  // (by whichever thread delivers next). A listener may call the store, also to write; it must
  // not wait for another thread's write (that write waits for the listener's turn to end).
  // Once RemoveListener returns, the listener is not called again and no call of it is under way
  // (it waits for one on another thread to return; from inside that listener it returns at once).
  virtual int AddListener(Listener listener) = 0;
  virtual void RemoveListener(int handle) = 0;

  // The identity of the change feed the positions count in (1-32 characters of [0-9a-z], as a
  // watch event id needs): random, fixed when the database was
  // created, so that positions of two databases are never confused (a client resuming a watch
  // from a position of another database is told so). Stable for the store's lifetime.
  virtual std::string FeedId() const = 0;
  // The position of the last change committed to the store (by any process), 0 when none.
  virtual StatusOr<int64_t> LastPosition() = 0;

  // Human-readable, never with a password: "sqlite:/path/steward.db",
  // "postgres://steward@db.example:5432/steward".
  virtual std::string Describe() const = 0;
};

struct SqliteOptions {
  std::string path;  // file path; ":memory:" for tests
  // FULL: a committed intent survives power loss, not only a crash of Steward.
  bool synchronous_full = true;
  int busy_timeout_ms = 5000;  // waiting for another process's write lock; then kUnavailable
  Clock* clock = nullptr;      // wall clock for the *_ms stamps; nullptr: RealClock::Get()
};
// Opens (creating when absent) a SQLite store in WAL mode and applies pending schema
// migrations. Fails (kFailedPrecondition) with a message naming the file when its directory
// does not exist, it cannot be opened, is not a Steward database, or has a schema newer than
// this binary knows. The directory is never created. The file is created with mode 0600 (SQLite
// gives -wal/-shm the file's mode); an existing file or -wal/-shm/-journal open to group or others
// loses those bits, with a warning in the log.
StatusOr<std::unique_ptr<Store>> OpenSqliteStore(const SqliteOptions& options);

}  // namespace steward::store
