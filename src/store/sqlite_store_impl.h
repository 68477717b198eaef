// The SQLite store's class, shared by its source files (sqlite_store.cc: open, migrate and the
// records; sqlite_shards.cc: shard ownership and command slots). Internal to src/store: the rest
// of Steward sees OpenSqliteStore (store.h) only, whose contract this keeps.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "store/change_feed.h"
#include "store/sqlite_connection.h"
#include "store/store.h"

namespace steward::store::sqlite {

// Shard rows in `db` (sqlite_shards.cc; the caller holds the store's lock): the owner of `shard`
// (an unowned one at epoch 0); Ok while `fence` holds, kAborted naming the current owner
// otherwise; one row of shard_history.
StatusOr<ShardOwner> LoadShard(const Db& db, int shard);
Status CheckFenceIn(const Db& db, const Fence& fence);
Status AppendShardEvent(const Db& db, const ShardOwner& now, bool acquired);

class SqliteStore final : public Store {
 public:
  SqliteStore(sqlite3* handle, SqliteOptions options)
      : db_{handle, options.path},
        options_(std::move(options)),
        clock_(options_.clock ? *options_.clock : RealClock::Get()) {}
  ~SqliteStore() override {
    db_.cache->Clear();
    sqlite3_close_v2(db_.handle);
  }

  Status Init() EXCLUDES(mu_);

  StatusOr<ProjectRecord> GetProject(std::string_view id) override {
    MutexLock lock(mu_);
    return LoadProject("id", id);
  }
  StatusOr<ProjectRecord> GetProjectByName(std::string_view name) override {
    MutexLock lock(mu_);
    return LoadProject("name", name);
  }
  StatusOr<std::vector<ProjectRecord>> ListProjects(const ListFilter& filter) override;
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
  Status CheckFence(const Fence& fence) override {
    MutexLock lock(mu_);
    return CheckFenceIn(db_, fence);
  }
  StatusOr<std::vector<ShardOwner>> ListShardOwners() override;
  StatusOr<std::vector<ShardEvent>> ListShardHistory(int64_t after_seq, int limit) override;
  StatusOr<bool> TakeSlot(std::string_view key, std::string_view holder,
                          std::chrono::milliseconds ttl) override;
  Status ReleaseSlot(std::string_view key, std::string_view holder) override;
  StatusOr<std::map<std::string, int64_t>> CountRecords(const CountQuery& query) override;
  StatusOr<std::vector<ProjectRecord>> ListProjectsWithoutHostnames() override;
  StatusOr<std::map<std::string, std::string>> ClaimHostnames(
      const std::vector<std::pair<std::string, std::vector<std::string>>>& by_project) override;
  StatusOr<std::vector<Credential>> ListCredentials(std::string_view project_id) override {
    MutexLock lock(mu_);
    return LoadCredentials(project_id);
  }
  StatusOr<Credential> FindCredentialByToken(std::string_view token) override;
  StatusOr<std::vector<HistoryEntry>> ListHistory(std::string_view project_id, int64_t after_seq,
                                                  int limit) override;
  int AddListener(Listener listener) override { return feed_.AddListener(std::move(listener)); }
  void RemoveListener(int handle) override { feed_.RemoveListener(handle); }
  std::string Describe() const override { return "sqlite:" + options_.path; }
  std::string FeedId() const override { return feed_id_; }
  StatusOr<int64_t> LastPosition() override {
    MutexLock lock(mu_);
    return db_.QueryInt("SELECT position FROM feed", "read the feed position");
  }

 private:
  int64_t NowMs() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               clock_.WallNow().time_since_epoch())
        .count();
  }
  Status Migrate() REQUIRES(mu_);
  StatusOr<ProjectRecord> LoadProject(std::string_view column, std::string_view value)
      REQUIRES(mu_);
  StatusOr<std::vector<Credential>> LoadCredentials(std::string_view project_id) REQUIRES(mu_);
  Status CheckNameFree(const ProjectRecord& record) REQUIRES(mu_);
  Status WriteProject(const ProjectRecord& record) REQUIRES(mu_);
  StatusOr<std::vector<HistoryEntry>> WriteExtra(const std::string& project_id,
                                                 const Mutation& extra, int64_t now) REQUIRES(mu_);
  // The bodies of CreateProject and MutateProject, inside the caller's transaction. Each fills
  // `change` with what it wrote; MutateLocked leaves `change.record` empty when it wrote nothing
  // (and returns the record as it was).
  Status CreateLocked(ProjectRecord record, const Mutation& extra, ProjectChange& change)
      REQUIRES(mu_);
  StatusOr<ProjectRecord> MutateLocked(const ProjectRecord& before, const MutateFn& fn,
                                       ProjectChange& change) REQUIRES(mu_);
  // One write transaction: `body(change)` runs under mu_ inside it and fills `change` with
  // what it wrote; when it wrote something (change.record set) the transaction commits and the
  // change is delivered after the unlock; otherwise it rolls back. Returns what `body` returned.
  template <typename T, typename Body>
  StatusOr<T> WriteOne(const Body& body) EXCLUDES(mu_);
  // The next position, inside the caller's write transaction.
  StatusOr<int64_t> BumpPosition() REQUIRES(mu_) {
    return db_.QueryInt("UPDATE feed SET position = position + 1 RETURNING position",
                        "advance the feed position");
  }
  Mutex mu_;  // guards the connection; feed_.TakeTicket() runs under it, after COMMIT
  Db db_ GUARDED_BY(mu_);
  const SqliteOptions options_;
  Clock& clock_;
  std::string feed_id_;  // set by Init, then constant

  // Every commit that changed a project takes a ticket under mu_ and is delivered (Deliver)
  // after mu_ is released, before the committing call returns.
  ChangeFeed feed_;
};

template <typename T, typename Body>
StatusOr<T> SqliteStore::WriteOne(const Body& body) {
  ProjectChange change;
  uint64_t ticket = 0;
  T result;
  {
    MutexLock lock(mu_);
    Transaction tx(db_);
    RETURN_IF_ERROR(tx.Begin());
    ASSIGN_OR_RETURN(result, body(change));
    if (!change.record) return result;  // nothing to write: the transaction rolls back
    ASSIGN_OR_RETURN(change.position, BumpPosition());
    RETURN_IF_ERROR(tx.Commit());
    ticket = feed_.TakeTicket();
  }
  feed_.Deliver(ticket, std::move(change));
  return result;
}

}  // namespace steward::store::sqlite
