// The PostgreSQL store's class, shared by its source files (postgres_store.cc: open, migrate and
// the records; postgres_shards.cc: shard ownership and command slots; the feed thread is its
// PostgresFeed, postgres_feed.h). Internal to src/store: the rest of Steward sees postgres_store.h
// only. Its contract (threads, errors, delivery) is postgres_store.h's.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/log.h"
#include "common/mutex.h"
#include "store/change_feed.h"
#include "store/postgres_connection.h"
#include "store/postgres_feed.h"
#include "store/postgres_store.h"
#include "store/store.h"

namespace steward::store::pg {

constexpr const char* kChannel = "steward_changes";
// Advisory lock keys (pg_advisory_lock's bigint space): migrations at open; shard ownership
// changes, so that shard_history's seq order is commit order.
constexpr int64_t kMigrationLock = 0x5354574400000001;
constexpr int64_t kShardLock = 0x5354574400000002;
constexpr int kAttempts = 4;  // for serialization failures, deadlocks and dead pooled connections

// The feed thread of the store whose listeners the current thread runs (a write from there
// must not wait for its own delivery).
inline thread_local const void* tls_feed_thread_of = nullptr;

// Record rows on a connection (postgres_store.cc), inside the caller's transaction: a project by
// `column` ("id" or "name"; kNotFound), its credentials; kAlreadyExists when the record's name
// is another's name or id; the record's row inserted or updated; its hostnames claimed (a
// taken one: kAlreadyExists naming the holder); a Mutation's credentials and history written,
// returning the history entries as stored.
StatusOr<ProjectRecord> LoadProject(PgConn& c, std::string_view column, std::string_view value);
StatusOr<std::vector<Credential>> LoadCredentials(PgConn& c, std::string_view project_id);
Status CheckNameFree(PgConn& c, const ProjectRecord& record);
Status InsertProject(PgConn& c, const ProjectRecord& r);
Status UpdateProject(PgConn& c, const ProjectRecord& r);
Status WriteHostnames(PgConn& c, const std::string& project_id,
                      const std::vector<std::string>& hosts);
StatusOr<std::vector<HistoryEntry>> WriteExtra(PgConn& c, const std::string& project_id,
                                               const Mutation& extra, int64_t now);

// Shard rows on a connection (postgres_shards.cc): the owner of `shard` (an unowned one at epoch
// 0), FOR UPDATE when asked; Ok while `fence` holds, kAborted naming the current owner
// otherwise; one row of shard_history.
StatusOr<ShardOwner> LoadShard(PgConn& c, int shard, bool for_update);
Status CheckFenceOn(PgConn& c, const Fence& fence, bool for_update);
Status AppendShardEvent(PgConn& c, const ShardOwner& now, bool acquired);

class PostgresStore final : public Store {
 public:
  PostgresStore(PostgresOptions options, ConnectParams params)
      : options_(std::move(options)),
        clock_(options_.clock ? *options_.clock : RealClock::Get()),
        params_(std::move(params)),
        pool_(params_, options_.pool_size, options_.connect_timeout + options_.statement_timeout) {}
  ~PostgresStore() override;

  // Migrates on `first` (which then joins the pool) and starts the feed thread.
  Status Init(std::unique_ptr<PgConn> first);

  StatusOr<ProjectRecord> GetProject(std::string_view id) override {
    return Read<ProjectRecord>("read project", [&](PgConn& c) { return LoadProject(c, "id", id); });
  }
  StatusOr<ProjectRecord> GetProjectByName(std::string_view name) override {
    return Read<ProjectRecord>("read project",
                               [&](PgConn& c) { return LoadProject(c, "name", name); });
  }
  StatusOr<std::vector<ProjectRecord>> ListProjects(const ListFilter& filter) override;
  StatusOr<std::map<std::string, int64_t>> CountRecords(const CountQuery& query) override;
  StatusOr<ProjectRecord> CreateProject(const ProjectRecord& record,
                                        const Mutation& extra) override;
  StatusOr<ProjectRecord> MutateProject(std::string_view id, const MutateFn& fn) override;
  StatusOr<UpsertResult> UpsertProjectByName(std::string_view name, const CreateFn& create,
                                             const MutateFn& update) override;
  Status PurgeProject(std::string_view id, const HistoryEntry& tombstone,
                      const std::optional<Fence>& fence = std::nullopt) override;
  StatusOr<ShardOwner> AcquireShard(int shard, std::string_view owner,
                                    int64_t expected_epoch) override;
  Status ReleaseShard(const Fence& fence) override;
  Status CheckFence(const Fence& fence) override;
  StatusOr<std::vector<ShardOwner>> ListShardOwners() override;
  StatusOr<std::vector<ShardEvent>> ListShardHistory(int64_t after_seq, int limit) override;
  StatusOr<StoredLease> GetLease(const std::string& name) override;
  StatusOr<StoredLease> PutLease(const StoredLease& lease) override;
  StatusOr<std::vector<StoredLease>> ListLeases() override;
  StatusOr<bool> TakeSlot(std::string_view key, std::string_view holder,
                          std::chrono::milliseconds ttl) override;
  Status ReleaseSlot(std::string_view key, std::string_view holder) override;
  StatusOr<std::vector<ProjectRecord>> ListProjectsWithoutHostnames() override;
  StatusOr<std::map<std::string, std::string>> ClaimHostnames(
      const std::vector<std::pair<std::string, std::vector<std::string>>>& by_project) override;
  StatusOr<std::vector<Credential>> ListCredentials(std::string_view project_id) override {
    return Read<std::vector<Credential>>("read credentials",
                                         [&](PgConn& c) { return LoadCredentials(c, project_id); });
  }
  StatusOr<Credential> FindCredentialByToken(std::string_view token) override;
  StatusOr<std::vector<HistoryEntry>> ListHistory(std::string_view project_id, int64_t after_seq,
                                                  int limit) override;
  int AddListener(Listener listener) override { return feed_.AddListener(std::move(listener)); }
  void RemoveListener(int handle) override { feed_.RemoveListener(handle); }
  std::string FeedId() const override { return feed_id_; }
  StatusOr<int64_t> LastPosition() override {
    return Read<int64_t>("read the feed position", [&](PgConn& c) -> StatusOr<int64_t> {
      ASSIGN_OR_RETURN(PgResult r, c.Exec("read the feed position", "SELECT position FROM feed"));
      return r.Int(0, 0);
    });
  }
  std::string Describe() const override { return params_.where; }

 private:
  int64_t NowMs() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               clock_.WallNow().time_since_epoch())
        .count();
  }
  Status Migrate(PgConn& c);
  Status MigrateLocked(PgConn& c);

  // A read on a pooled connection; run again once on a fresh connection when the pooled one
  // turned out dead (reads are idempotent).
  template <typename T, typename Fn>
  StatusOr<T> Read(std::string_view what, const Fn& fn);
  // One transaction: `body(conn)` returns true to commit, false to roll back. With `lock_feed`
  // it starts by locking the feed row (every write that changes records or hostnames; see the
  // .cc top), in the same round trip as BEGIN.
  template <typename Body>
  Status Transact(std::string_view what, const Body& body, bool lock_feed = false);
  // A write of one record: locks the feed row, runs `body(conn, change)`, and when it filled in
  // change.record or change.purged appends the change and commits; then waits for delivery.
  template <typename T, typename Body>
  StatusOr<T> WriteOne(std::string_view what, const Body& body);

  Status AppendChange(PgConn& c, ProjectChange& change);
  Status CreateOn(PgConn& c, ProjectRecord record, const Mutation& extra, ProjectChange& change);
  StatusOr<ProjectRecord> MutateOn(PgConn& c, const ProjectRecord& before, const MutateFn& fn,
                                   ProjectChange& change);

  const PostgresOptions options_;
  Clock& clock_;
  const ConnectParams params_;
  Pool pool_;
  std::string feed_id_;  // set by Init, then constant
  int64_t prune_every_ = 1000;

  PostgresFeed feed_{params_, options_};  // after params_ and options_, which it borrows
};

template <typename T, typename Fn>
StatusOr<T> PostgresStore::Read(std::string_view, const Fn& fn) {
  for (int attempt = 0;; ++attempt) {
    ASSIGN_OR_RETURN(Pool::Lease lease, pool_.Acquire());
    StatusOr<T> r = fn(*lease);
    if (!r.ok() && lease->broken() && attempt == 0) {
      LOG_WARN("store: {}; retrying on a new connection", r.error().message());
      continue;
    }
    return r;
  }
}

template <typename Body>
Status PostgresStore::Transact(std::string_view what, const Body& body, bool lock_feed) {
  for (int attempt = 1;; ++attempt) {
    ASSIGN_OR_RETURN(Pool::Lease lease, pool_.Acquire());
    PgConn& c = *lease;
    // READ COMMITTED whatever the database's default: after the feed lock every statement sees
    // every earlier commit (a SERIALIZABLE snapshot taken before the lock would not).
    auto begun =
        c.ExecScript(lock_feed ? "begin transaction and lock the feed" : "begin transaction",
                     lock_feed ? "BEGIN ISOLATION LEVEL READ COMMITTED; SELECT position "
                                 "FROM feed FOR UPDATE"
                               : "BEGIN ISOLATION LEVEL READ COMMITTED");
    if (!begun.ok()) {
      // Nothing was written: a pooled connection the server closed is safe to replace.
      if (c.broken() && attempt < kAttempts) continue;
      const bool retryable = c.retryable();
      if (!c.broken()) (void)c.Exec("roll back", "ROLLBACK");  // the lock timed out, say
      if (retryable && attempt < kAttempts) continue;
      return begun.error();
    }
    StatusOr<bool> commit = body(c);
    if (!commit.ok() || !*commit) {
      const bool retryable = c.retryable();  // of the failed statement, before the ROLLBACK
      if (!c.broken()) (void)c.Exec("roll back", "ROLLBACK");
      if (commit.ok()) return Status::Ok();
      if (retryable) {
        if (attempt < kAttempts) continue;
        return Unavailable(commit.error().message() + " (after " + std::to_string(attempt) +
                           " attempts)");
      }
      return commit.error();
    }
    if (options_.before_commit) options_.before_commit();
    auto done = c.Exec(what, "COMMIT");
    if (done.ok()) return Status::Ok();
    if (c.broken()) {
      return Unavailable(params_.where + ": " + std::string(what) +
                         ": the outcome of the commit is unknown (" + done.error().message() + ")");
    }
    if (c.retryable() && attempt < kAttempts) continue;
    return done.error();
  }
}

template <typename T, typename Body>
StatusOr<T> PostgresStore::WriteOne(std::string_view what, const Body& body) {
  ProjectChange change;
  T result{};
  auto tx = [&](PgConn& c) -> StatusOr<bool> {
    change = ProjectChange{};
    ASSIGN_OR_RETURN(result, body(c, change));
    if (!change.record && !change.purged) return false;  // nothing to write
    RETURN_IF_ERROR(AppendChange(c, change));
    return true;
  };
  const Status done = Transact(what, tx, /*lock_feed=*/true);
  if (!done.ok()) return done;
  if (change.position > 0) feed_.AwaitDelivery(change.position);
  return result;
}

}  // namespace steward::store::pg
