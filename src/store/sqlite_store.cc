// The SQLite store: one connection guarded by a mutex, WAL journal, schema migrations applied at
// open. Listener delivery is the ChangeFeed's: a ticket is taken under mu_ right after each
// COMMIT, and the change handed to the feed once mu_ is released.
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <utility>

#include "common/file.h"
#include "common/log.h"
#include "common/mutex.h"
#include "store/change_feed.h"
#include "store/store.h"
#include "store/store_impl.h"

namespace steward::store {
namespace {

// Written to the file header at creation: tells a Steward database from any other SQLite file.
constexpr int64_t kApplicationId = 0x53545744;  // "STWD"

// Schema migrations, in order: kMigrations[i] is version i + 1. Append only; never edit one
// that has been released.
constexpr const char* kMigrations[] = {
    R"sql(
CREATE TABLE projects (
  id TEXT PRIMARY KEY NOT NULL,
  name TEXT NOT NULL UNIQUE,
  team TEXT NOT NULL,
  spec_json TEXT NOT NULL,
  desired TEXT NOT NULL CHECK (desired IN ('running', 'suspended', 'deleted')),
  generation INTEGER NOT NULL,
  restart_epoch INTEGER NOT NULL,
  status_json TEXT NOT NULL,
  phase TEXT NOT NULL,
  observed_generation INTEGER NOT NULL,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  version INTEGER NOT NULL
);
CREATE INDEX projects_team ON projects (team, id);
CREATE INDEX projects_phase ON projects (phase, id);
CREATE INDEX projects_desired ON projects (desired, id);
CREATE TABLE credentials (
  id TEXT PRIMARY KEY NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  token TEXT NOT NULL UNIQUE,
  state TEXT NOT NULL CHECK (state IN ('pending', 'active', 'revoked')),
  created_ms INTEGER NOT NULL,
  activated_ms INTEGER NOT NULL,
  revoked_ms INTEGER NOT NULL
);
CREATE INDEX credentials_project ON credentials (project_id);
-- No foreign key: history outlives the project (the tombstone).
CREATE TABLE history (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  generation INTEGER NOT NULL,
  summary TEXT NOT NULL,
  detail_json TEXT NOT NULL
);
CREATE INDEX history_project ON history (project_id, seq);
)sql",
    // 2: hostnames are unique across projects (issue 13: one tenant must not take another's host).
    R"sql(
CREATE TABLE hostnames (
  host TEXT PRIMARY KEY NOT NULL,
  project_id TEXT NOT NULL
);
CREATE INDEX hostnames_project ON hostnames (project_id);
)sql",
    // 3: records of MQTT schema agents beside projects (issue 15); every existing one is a project.
    R"sql(
ALTER TABLE projects ADD COLUMN kind TEXT NOT NULL DEFAULT 'project'
  CHECK (kind IN ('project', 'agent'));
CREATE INDEX projects_kind ON projects (kind, id);
)sql",
    // 4: several replicas (issue 17): the change feed's identity and last position; the current
    // owner and epoch of each shard, and every acquisition and release.
    R"sql(
CREATE TABLE feed (
  id TEXT NOT NULL,
  position INTEGER NOT NULL
);
INSERT INTO feed (id, position) VALUES (lower(hex(randomblob(16))), 0);
CREATE TABLE shard_owners (
  shard INTEGER PRIMARY KEY CHECK (shard BETWEEN 0 AND 65535),
  owner TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  since_ms INTEGER NOT NULL
);
CREATE TABLE shard_history (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  shard INTEGER NOT NULL,
  owner TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  at_ms INTEGER NOT NULL,
  acquired INTEGER NOT NULL
);
)sql",
    // 5: command slots (issue 17): one process at a time sends lifecycle commands to a pod.
    R"sql(
CREATE TABLE command_slots (
  key TEXT PRIMARY KEY NOT NULL,
  holder TEXT NOT NULL,
  expires_ms INTEGER NOT NULL
);
)sql",
    // 6: ids and names share the API's {project} (issue 34): each record claims both
    // (ReferenceClaim). Records without claims get them from ClaimHostnames; of an existing pair
    // that clashes, ids go first (the API resolved ids first), then the older record.
    R"sql(
INSERT OR IGNORE INTO hostnames (host, project_id)
  SELECT 'Reference/' || id, id FROM projects
  WHERE id IN (SELECT project_id FROM hostnames) ORDER BY created_ms, id;
INSERT OR IGNORE INTO hostnames (host, project_id)
  SELECT 'Reference/' || name, id FROM projects
  WHERE id IN (SELECT project_id FROM hostnames) ORDER BY created_ms, id;
)sql",
};
constexpr int64_t kLatestVersion = std::size(kMigrations);

// Prepared statements kept per connection, reset rather than finalized after use: a statement
// prepared once serves every later one of the same SQL (preparing was a third of the store's
// time in a no-op reconcile, which reads a project and its credentials). One user at a time per
// entry: a Statement of the same SQL made while another is alive prepares one of its own.
// Used only under the store's mutex, like the connection itself.
class StatementCache {
 public:
  struct Entry {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };
  StatementCache() = default;
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;
  ~StatementCache() { Clear(); }
  // Finalizes every statement (before the connection is closed).
  void Clear() {
    for (auto& [sql, e] : entries_) sqlite3_finalize(e.stmt);
    entries_.clear();
  }
  // The entry for `sql`, prepared on first use; null when it is in use (or fails to prepare:
  // the caller prepares its own and reports the error).
  Entry* Take(sqlite3* db, const std::string& sql) {
    auto [it, inserted] = entries_.try_emplace(sql);
    Entry& e = it->second;
    if (e.in_use) return nullptr;
    if (e.stmt == nullptr &&
        sqlite3_prepare_v3(db, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                           &e.stmt, nullptr) != SQLITE_OK) {
      sqlite3_finalize(e.stmt);
      entries_.erase(it);
      return nullptr;
    }
    e.in_use = true;
    return &e;
  }

 private:
  std::map<std::string, Entry, std::less<>> entries_;
};

// A prepared statement, from `cache` when one is given. Errors are sticky: after a failed
// prepare, bind or step, Step() returns false and rc() holds the (extended) SQLite code. One
// that stopped on a row is active until destroyed, and COMMIT fails while one is: scope
// statements that may stop early.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql, StatementCache* cache = nullptr) {
    if (cache != nullptr) entry_ = cache->Take(db, sql);
    if (entry_ != nullptr) {
      stmt_ = entry_->stmt;
    } else {
      rc_ = sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &stmt_, nullptr);
    }
  }
  ~Statement() {
    if (entry_ == nullptr) {
      sqlite3_finalize(stmt_);
      return;
    }
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    entry_->in_use = false;
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& Bind(int64_t v) {
    if (rc_ == SQLITE_OK) rc_ = sqlite3_bind_int64(stmt_, ++arg_, v);
    return *this;
  }
  Statement& Bind(std::string_view v) {
    if (rc_ == SQLITE_OK) {
      rc_ = sqlite3_bind_text64(stmt_, ++arg_, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    }
    return *this;
  }
  // True when a row is ready; false when done or failed (see rc()).
  bool Step() {
    if (rc_ != SQLITE_OK) return false;
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) rc_ = rc;
    sqlite3_reset(stmt_);  // no longer active: COMMIT refuses while a statement is
    return false;
  }
  int rc() const { return rc_; }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  std::string Text(int col) const {
    auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p ? std::string(p, sqlite3_column_bytes(stmt_, col)) : std::string();
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  StatementCache::Entry* entry_ = nullptr;
  int rc_ = SQLITE_OK;
  int arg_ = 0;
};

// The connection plus the file path that every error message names.
struct Db {
  sqlite3* handle = nullptr;
  std::string path;
  std::unique_ptr<StatementCache> cache = std::make_unique<StatementCache>();

  // A statement of `sql`, prepared once per connection.
  Statement Prepare(const std::string& sql) const { return Statement(handle, sql, cache.get()); }

  Status Fail(int rc, std::string_view what) const {
    std::string m = path + ": " + std::string(what) + ": " + sqlite3_errmsg(handle);
    switch (rc & 0xff) {
      case SQLITE_BUSY:
      case SQLITE_LOCKED:
      case SQLITE_IOERR:
        return Unavailable(std::move(m));
      case SQLITE_FULL:
        return {StatusCode::kResourceExhausted, std::move(m)};
      case SQLITE_CONSTRAINT:
        if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY) {
          return AlreadyExists(std::move(m));
        }
        return Internal(std::move(m));
      case SQLITE_NOTADB:
      case SQLITE_CORRUPT:
      case SQLITE_CANTOPEN:
      case SQLITE_PERM:
      case SQLITE_READONLY:
        return FailedPrecondition(std::move(m));
      default:
        return Internal(std::move(m));
    }
  }
  Status Check(const Statement& s, std::string_view what) const {
    return s.rc() == SQLITE_OK ? Status::Ok() : Fail(s.rc(), what);
  }
  Status Exec(const std::string& sql, std::string_view what) const {
    int rc = sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, nullptr);
    return rc == SQLITE_OK ? Status::Ok() : Fail(rc, what);
  }
  StatusOr<int64_t> QueryInt(const std::string& sql, std::string_view what) const {
    Statement s = Prepare(sql);
    int64_t v = s.Step() ? s.Int(0) : 0;
    RETURN_IF_ERROR(Check(s, what));
    return v;
  }
};

// Rolls back unless committed.
class Transaction {
 public:
  explicit Transaction(const Db& db) : db_(db) {}
  ~Transaction() {
    if (open_) sqlite3_exec(db_.handle, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Status Begin() {
    // IMMEDIATE: take the write lock now, so a busy database fails here (after the busy
    // timeout) and never half-way through.
    RETURN_IF_ERROR(db_.Exec("BEGIN IMMEDIATE", "begin transaction"));
    open_ = true;
    return Status::Ok();
  }
  Status Commit() {
    RETURN_IF_ERROR(db_.Exec("COMMIT", "commit"));
    open_ = false;
    return Status::Ok();
  }

 private:
  const Db& db_;
  bool open_ = false;
};

ProjectRecord ReadProject(const Statement& s) { return ReadProjectRow(s); }
Credential ReadCredential(const Statement& s) { return ReadCredentialRow(s); }
HistoryEntry ReadHistory(const Statement& s) { return ReadHistoryRow(s); }

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
    return CheckFenceLocked(fence);
  }
  StatusOr<std::vector<ShardOwner>> ListShardOwners() override;
  StatusOr<std::vector<ShardEvent>> ListShardHistory(int64_t after_seq, int limit) override;
  StatusOr<bool> TakeSlot(std::string_view key, std::string_view holder,
                          std::chrono::milliseconds ttl) override;
  Status ReleaseSlot(std::string_view key, std::string_view holder) override;
  StatusOr<std::map<std::string, int64_t>> CountByPhase(RecordKind kind) override;
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
  StatusOr<ShardOwner> LoadShard(int shard) REQUIRES(mu_);
  Status CheckFenceLocked(const Fence& fence) REQUIRES(mu_);
  Status AppendShardEvent(const ShardOwner& now, bool acquired) REQUIRES(mu_);
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

Status SqliteStore::Init() {
  MutexLock lock(mu_);
  sqlite3_extended_result_codes(db_.handle, 1);
  sqlite3_busy_timeout(db_.handle, options_.busy_timeout_ms);
  // The first read of the file: a file that is not SQLite fails here (SQLITE_NOTADB).
  ASSIGN_OR_RETURN(int64_t app_id, db_.QueryInt("PRAGMA application_id", "read the file header"));
  ASSIGN_OR_RETURN(int64_t tables,
                   db_.QueryInt("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND "
                                "name NOT LIKE 'sqlite_%'",
                                "read the schema"));
  if (app_id != kApplicationId && (app_id != 0 || tables > 0)) {
    return FailedPrecondition(options_.path + ": not a Steward database (application_id " +
                              std::to_string(app_id) + ", " + std::to_string(tables) +
                              " tables of another application)");
  }
  std::string mode;
  {
    Statement wal = db_.Prepare("PRAGMA journal_mode = WAL");
    if (wal.Step()) mode = wal.Text(0);
    RETURN_IF_ERROR(db_.Check(wal, "set journal_mode=WAL"));
  }
  if (mode != "wal" && options_.path != ":memory:") {
    return FailedPrecondition(options_.path + ": cannot use WAL mode (journal mode is \"" + mode +
                              "\")");
  }
  RETURN_IF_ERROR(db_.Exec(
      options_.synchronous_full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL",
      "set synchronous"));
  RETURN_IF_ERROR(db_.Exec("PRAGMA foreign_keys = ON", "enable foreign keys"));
  RETURN_IF_ERROR(Migrate());
  Statement id = db_.Prepare("SELECT id FROM feed");
  if (id.Step()) feed_id_ = id.Text(0);
  RETURN_IF_ERROR(db_.Check(id, "read the feed id"));
  if (feed_id_.empty()) return FailedPrecondition(options_.path + ": the feed table is empty");
  return Status::Ok();
}

Status SqliteStore::Migrate() {
  for (int64_t version = 1; version <= kLatestVersion; ++version) {
    // One transaction per migration, re-reading the applied version inside it: another process
    // may be migrating the same file.
    Transaction tx(db_);
    RETURN_IF_ERROR(tx.Begin());
    RETURN_IF_ERROR(
        db_.Exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                 "applied_ms INTEGER NOT NULL)",
                 "create schema_migrations"));
    ASSIGN_OR_RETURN(int64_t applied,
                     db_.QueryInt("SELECT coalesce(max(version), 0) FROM schema_migrations",
                                  "read schema version"));
    if (applied > kLatestVersion) {
      return FailedPrecondition(options_.path + ": schema version " + std::to_string(applied) +
                                " is newer than this Steward (knows up to " +
                                std::to_string(kLatestVersion) + ")");
    }
    if (applied >= version) continue;  // rolls back the no-op transaction
    std::string what = "apply schema migration " + std::to_string(version);
    RETURN_IF_ERROR(db_.Exec(kMigrations[version - 1], what));
    if (version == 1) {
      RETURN_IF_ERROR(db_.Exec("PRAGMA application_id = " + std::to_string(kApplicationId), what));
    }
    Statement s = db_.Prepare("INSERT INTO schema_migrations (version, applied_ms) VALUES (?, ?)");
    s.Bind(version).Bind(NowMs()).Step();
    RETURN_IF_ERROR(db_.Check(s, what));
    RETURN_IF_ERROR(tx.Commit());
    LOG_INFO("store {}: applied schema migration {}", options_.path, version);
  }
  return Status::Ok();
}

StatusOr<ProjectRecord> SqliteStore::LoadProject(std::string_view column, std::string_view value) {
  Statement s = db_.Prepare(std::string("SELECT ") + kProjectColumns + " FROM projects WHERE " +
                            std::string(column) + " = ?");
  s.Bind(value);
  if (s.Step()) return ReadProject(s);
  RETURN_IF_ERROR(db_.Check(s, "read project"));
  return ProjectNotFound(column, value);
}

StatusOr<std::vector<Credential>> SqliteStore::LoadCredentials(std::string_view project_id) {
  Statement s = db_.Prepare(std::string("SELECT ") + kCredentialColumns +
                            " FROM credentials WHERE project_id = ? ORDER BY created_ms, id");
  s.Bind(project_id);
  std::vector<Credential> out;
  while (s.Step()) out.push_back(ReadCredential(s));
  RETURN_IF_ERROR(db_.Check(s, "read credentials"));
  return out;
}

Status SqliteStore::CheckNameFree(const ProjectRecord& record) {
  Statement s = db_.Prepare("SELECT id FROM projects WHERE name = ? AND id != ?");
  s.Bind(record.name).Bind(record.id);
  if (s.Step()) return NameTaken(record.name, s.Text(0));
  return db_.Check(s, "check project name");
}

Status SqliteStore::WriteProject(const ProjectRecord& r) {
  Statement s = db_.Prepare(std::string("INSERT INTO projects (") + kProjectColumns +
                            ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                            "ON CONFLICT (id) DO UPDATE SET name = excluded.name, "
                            "team = excluded.team, spec_json = excluded.spec_json, "
                            "desired = excluded.desired, generation = excluded.generation, "
                            "restart_epoch = excluded.restart_epoch, "
                            "status_json = excluded.status_json, phase = excluded.phase, "
                            "observed_generation = excluded.observed_generation, "
                            "updated_ms = excluded.updated_ms, version = excluded.version");
  s.Bind(r.id).Bind(r.name).Bind(r.team).Bind(r.spec_json).Bind(ToString(r.desired));
  s.Bind(r.generation).Bind(r.restart_epoch).Bind(r.status_json).Bind(r.phase);
  s.Bind(r.observed_generation).Bind(r.created_ms).Bind(r.updated_ms).Bind(r.version);
  s.Bind(ToString(r.kind));  // the upsert never changes it
  s.Step();
  return db_.Check(s, "write project \"" + r.id + "\"");
}

StatusOr<std::vector<HistoryEntry>> SqliteStore::WriteExtra(const std::string& project_id,
                                                            const Mutation& extra, int64_t now) {
  for (const Credential& given : extra.credentials) {
    ASSIGN_OR_RETURN(Credential c, PrepareCredential(given, project_id, now));
    // Replace only a credential of the same project; a clash with another project's id leaves
    // the row alone (0 changes), a clash on the token fails the UNIQUE constraint.
    Statement s = db_.Prepare(std::string("INSERT INTO credentials (") + kCredentialColumns +
                              ") VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                              "token = excluded.token, state = excluded.state, "
                              "created_ms = excluded.created_ms, "
                              "activated_ms = excluded.activated_ms, "
                              "revoked_ms = excluded.revoked_ms "
                              "WHERE credentials.project_id = excluded.project_id");
    s.Bind(c.id).Bind(c.project_id).Bind(c.token).Bind(ToString(c.state));
    s.Bind(c.created_ms).Bind(c.activated_ms).Bind(c.revoked_ms).Step();
    RETURN_IF_ERROR(db_.Check(s, "write credential \"" + c.id + "\""));
    if (sqlite3_changes(db_.handle) == 0) return CredentialOfAnotherProject(c.id);
  }
  if (extra.hostnames) {
    for (const std::string& host : *extra.hostnames) {
      Statement held = db_.Prepare("SELECT project_id FROM hostnames WHERE host = ?");
      held.Bind(host);
      if (held.Step() && held.Text(0) != project_id) return HostnameInUse(host);
      RETURN_IF_ERROR(db_.Check(held, "check hostname"));
    }
    Statement clear = db_.Prepare("DELETE FROM hostnames WHERE project_id = ?");
    clear.Bind(project_id).Step();
    RETURN_IF_ERROR(db_.Check(clear, "release hostnames"));
    for (const std::string& host : *extra.hostnames) {
      Statement claim = db_.Prepare(
          "INSERT INTO hostnames (host, project_id) VALUES (?, ?) "
          "ON CONFLICT (host) DO NOTHING");
      claim.Bind(host).Bind(project_id).Step();
      RETURN_IF_ERROR(db_.Check(claim, "claim hostname"));
    }
  }
  std::vector<HistoryEntry> appended;
  for (const HistoryEntry& given : extra.history) {
    ASSIGN_OR_RETURN(HistoryEntry h, PrepareHistory(given, project_id, now));
    Statement s = db_.Prepare(
        "INSERT INTO history (project_id, at_ms, kind, generation, summary, detail_json) "
        "VALUES (?, ?, ?, ?, ?, ?)");
    s.Bind(h.project_id).Bind(h.at_ms).Bind(h.kind).Bind(h.generation).Bind(h.summary);
    s.Bind(h.detail_json).Step();
    RETURN_IF_ERROR(db_.Check(s, "append history"));
    h.seq = sqlite3_last_insert_rowid(db_.handle);
    appended.push_back(std::move(h));
  }
  return appended;
}

StatusOr<std::vector<ProjectRecord>> SqliteStore::ListProjects(const ListFilter& filter) {
  if (filter.limit < 0) return InvalidArgument("limit: must not be negative");
  std::string sql = std::string("SELECT ") + kProjectColumns + " FROM projects WHERE id > ?";
  if (filter.kind) sql += " AND kind = ?";
  if (filter.team) sql += " AND team = ?";
  if (filter.phase) sql += " AND phase = ?";
  if (filter.desired) sql += " AND desired = ?";
  sql += " ORDER BY id LIMIT ?";
  MutexLock lock(mu_);
  Statement s = db_.Prepare(sql);
  s.Bind(filter.after_id);
  if (filter.kind) s.Bind(ToString(*filter.kind));
  if (filter.team) s.Bind(*filter.team);
  if (filter.phase) s.Bind(*filter.phase);
  if (filter.desired) s.Bind(ToString(*filter.desired));
  s.Bind(filter.limit == 0 ? int64_t{-1} : int64_t{filter.limit});
  std::vector<ProjectRecord> out;
  while (s.Step()) out.push_back(ReadProject(s));
  RETURN_IF_ERROR(db_.Check(s, "list projects"));
  return out;
}

Status SqliteStore::CreateLocked(ProjectRecord record, const Mutation& extra,
                                 ProjectChange& change) {
  RETURN_IF_ERROR(ValidateIdAndName(record));
  Statement taken = db_.Prepare("SELECT 1 FROM projects WHERE id = ?");
  taken.Bind(record.id);
  if (taken.Step()) return IdTaken(record.id);
  RETURN_IF_ERROR(db_.Check(taken, "check project id"));
  RETURN_IF_ERROR(CheckNameFree(record));
  record.created_ms = record.updated_ms = NowMs();
  record.version = 1;
  RETURN_IF_ERROR(WriteProject(record));
  ASSIGN_OR_RETURN(change.history, WriteExtra(record.id, extra, record.created_ms));
  change.project_id = record.id;
  change.record = std::move(record);
  return Status::Ok();
}

StatusOr<ProjectRecord> SqliteStore::MutateLocked(const ProjectRecord& before, const MutateFn& fn,
                                                  ProjectChange& change) {
  ASSIGN_OR_RETURN(std::vector<Credential> credentials, LoadCredentials(before.id));
  ProjectRecord after = before;
  Mutation extra;
  RETURN_IF_ERROR(fn(after, credentials, extra));
  RETURN_IF_ERROR(CheckMutated(before, after));
  if (WritesNothing(before, after, extra)) return before;
  if (extra.fence) RETURN_IF_ERROR(CheckFenceLocked(*extra.fence));
  if (after.name != before.name) {
    RETURN_IF_ERROR(ValidateIdAndName(after));
    RETURN_IF_ERROR(CheckNameFree(after));
  }
  after.created_ms = before.created_ms;
  after.updated_ms = NowMs();
  after.version = before.version + 1;
  RETURN_IF_ERROR(WriteProject(after));
  ASSIGN_OR_RETURN(change.history, WriteExtra(after.id, extra, after.updated_ms));
  change.project_id = after.id;
  change.record = after;
  return after;
}

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

StatusOr<ProjectRecord> SqliteStore::CreateProject(const ProjectRecord& record,
                                                   const Mutation& extra) {
  return WriteOne<ProjectRecord>([&](ProjectChange& change)
                                     REQUIRES(mu_) -> StatusOr<ProjectRecord> {
                                       RETURN_IF_ERROR(CreateLocked(record, extra, change));
                                       return *change.record;
                                     });
}

StatusOr<ProjectRecord> SqliteStore::MutateProject(std::string_view id, const MutateFn& fn) {
  return WriteOne<ProjectRecord>(
      [&](ProjectChange& change) REQUIRES(mu_) -> StatusOr<ProjectRecord> {
        ASSIGN_OR_RETURN(ProjectRecord before, LoadProject("id", id));
        return MutateLocked(before, fn, change);
      });
}

StatusOr<Store::UpsertResult> SqliteStore::UpsertProjectByName(std::string_view name,
                                                               const CreateFn& create,
                                                               const MutateFn& update) {
  return WriteOne<UpsertResult>([&](ProjectChange& change) REQUIRES(mu_) -> StatusOr<UpsertResult> {
    UpsertResult result;
    auto existing = LoadProject("name", name);
    if (existing.ok()) {
      ASSIGN_OR_RETURN(result.record, MutateLocked(*existing, update, change));
      return result;
    }
    if (existing.error().code() != StatusCode::kNotFound) return existing.error();
    ProjectRecord record;
    Mutation extra;
    RETURN_IF_ERROR(create(record, extra));
    record.name = std::string(name);
    RETURN_IF_ERROR(CreateLocked(std::move(record), extra, change));
    result.record = *change.record;
    result.created = true;
    return result;
  });
}

StatusOr<std::vector<ProjectRecord>> SqliteStore::ListProjectsWithoutHostnames() {
  MutexLock lock(mu_);
  Statement s = db_.Prepare(std::string("SELECT ") + kProjectColumns +
                            " FROM projects WHERE NOT EXISTS (SELECT 1 FROM hostnames WHERE "
                            "hostnames.project_id = projects.id) ORDER BY created_ms, id");
  std::vector<ProjectRecord> out;
  while (s.Step()) out.push_back(ReadProject(s));
  RETURN_IF_ERROR(db_.Check(s, "list projects without hostnames"));
  return out;
}

StatusOr<std::map<std::string, std::string>> SqliteStore::ClaimHostnames(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& by_project) {
  std::map<std::string, std::string> skipped;
  MutexLock lock(mu_);
  Transaction tx(db_);
  RETURN_IF_ERROR(tx.Begin());
  for (const auto& [id, hosts] : by_project) {
    Statement exists = db_.Prepare("SELECT 1 FROM projects WHERE id = ?");
    exists.Bind(id);
    const bool found = exists.Step();
    RETURN_IF_ERROR(db_.Check(exists, "check project id"));
    if (!found) continue;
    for (const std::string& host : hosts) {
      Statement held = db_.Prepare("SELECT project_id FROM hostnames WHERE host = ?");
      held.Bind(host);
      if (held.Step()) {
        if (held.Text(0) != id) skipped[host] = held.Text(0);
        continue;
      }
      RETURN_IF_ERROR(db_.Check(held, "check hostname"));
      Statement claim = db_.Prepare("INSERT INTO hostnames (host, project_id) VALUES (?, ?)");
      claim.Bind(host).Bind(id).Step();
      RETURN_IF_ERROR(db_.Check(claim, "claim hostname"));
    }
  }
  RETURN_IF_ERROR(tx.Commit());
  return skipped;
}

StatusOr<std::map<std::string, int64_t>> SqliteStore::CountByPhase(RecordKind kind) {
  MutexLock lock(mu_);
  Statement s = db_.Prepare("SELECT phase, COUNT(*) FROM projects WHERE kind = ? GROUP BY phase");
  s.Bind(ToString(kind));
  std::map<std::string, int64_t> out;
  while (s.Step()) out[s.Text(0)] = s.Int(1);
  RETURN_IF_ERROR(db_.Check(s, "count records by phase"));
  return out;
}

Status SqliteStore::PurgeProject(std::string_view id, const HistoryEntry& tombstone,
                                 const std::optional<Fence>& fence) {
  ProjectChange change;
  uint64_t ticket = 0;
  {
    MutexLock lock(mu_);
    Transaction tx(db_);
    RETURN_IF_ERROR(tx.Begin());
    if (fence) RETURN_IF_ERROR(CheckFenceLocked(*fence));
    ASSIGN_OR_RETURN(change.purged, LoadProject("id", id));
    for (const char* sql :
         {"DELETE FROM credentials WHERE project_id = ?",
          "DELETE FROM hostnames WHERE project_id = ?", "DELETE FROM projects WHERE id = ?"}) {
      Statement s = db_.Prepare(sql);
      s.Bind(id).Step();
      RETURN_IF_ERROR(db_.Check(s, "purge project"));
    }
    Mutation extra;
    extra.history.push_back(tombstone);
    extra.history.back().kind = "purged";
    change.project_id = std::string(id);
    ASSIGN_OR_RETURN(change.history, WriteExtra(change.project_id, extra, NowMs()));
    ASSIGN_OR_RETURN(change.position, BumpPosition());
    RETURN_IF_ERROR(tx.Commit());
    ticket = feed_.TakeTicket();
  }
  feed_.Deliver(ticket, std::move(change));
  return Status::Ok();
}

StatusOr<ShardOwner> SqliteStore::LoadShard(int shard) {
  Statement s = db_.Prepare("SELECT owner, epoch, since_ms FROM shard_owners WHERE shard = ?");
  s.Bind(int64_t{shard});
  ShardOwner o;
  o.shard = shard;
  if (s.Step()) {
    o.owner = s.Text(0);
    o.epoch = s.Int(1);
    o.since_ms = s.Int(2);
  }
  RETURN_IF_ERROR(db_.Check(s, "read shard owner"));
  return o;
}

Status SqliteStore::CheckFenceLocked(const Fence& fence) {
  ASSIGN_OR_RETURN(ShardOwner now, LoadShard(fence.shard));
  if (now.owner == fence.owner && now.epoch == fence.epoch && !fence.owner.empty()) {
    return Status::Ok();
  }
  return FencedOut(fence, now);
}

Status SqliteStore::AppendShardEvent(const ShardOwner& now, bool acquired) {
  Statement s = db_.Prepare(
      "INSERT INTO shard_history (shard, owner, epoch, at_ms, acquired) "
      "VALUES (?, ?, ?, ?, ?)");
  s.Bind(int64_t{now.shard}).Bind(now.owner).Bind(now.epoch).Bind(now.since_ms);
  s.Bind(int64_t{acquired ? 1 : 0}).Step();
  return db_.Check(s, "append shard history");
}

StatusOr<ShardOwner> SqliteStore::AcquireShard(int shard, std::string_view owner,
                                               int64_t expected_epoch) {
  RETURN_IF_ERROR(ValidateShardAndOwner(shard, owner));
  MutexLock lock(mu_);
  Transaction tx(db_);
  RETURN_IF_ERROR(tx.Begin());
  ASSIGN_OR_RETURN(ShardOwner now, LoadShard(shard));
  if (now.epoch != expected_epoch) return AcquireRaced(shard, expected_epoch, now);
  now.owner = std::string(owner);
  now.epoch = expected_epoch + 1;
  now.since_ms = NowMs();
  Statement s = db_.Prepare(
      "INSERT INTO shard_owners (shard, owner, epoch, since_ms) VALUES (?, ?, ?, ?) "
      "ON CONFLICT (shard) DO UPDATE SET owner = excluded.owner, epoch = excluded.epoch, "
      "since_ms = excluded.since_ms");
  s.Bind(int64_t{shard}).Bind(now.owner).Bind(now.epoch).Bind(now.since_ms).Step();
  RETURN_IF_ERROR(db_.Check(s, "acquire shard"));
  RETURN_IF_ERROR(AppendShardEvent(now, true));
  RETURN_IF_ERROR(tx.Commit());
  return now;
}

Status SqliteStore::ReleaseShard(const Fence& fence) {
  RETURN_IF_ERROR(ValidateShardAndOwner(fence.shard, fence.owner));
  MutexLock lock(mu_);
  Transaction tx(db_);
  RETURN_IF_ERROR(tx.Begin());
  RETURN_IF_ERROR(CheckFenceLocked(fence));
  ShardOwner released{fence.shard, fence.owner, fence.epoch, NowMs()};
  Statement s = db_.Prepare("UPDATE shard_owners SET owner = '', since_ms = ? WHERE shard = ?");
  s.Bind(released.since_ms).Bind(int64_t{fence.shard}).Step();
  RETURN_IF_ERROR(db_.Check(s, "release shard"));
  RETURN_IF_ERROR(AppendShardEvent(released, false));
  return tx.Commit();
}

StatusOr<std::vector<ShardOwner>> SqliteStore::ListShardOwners() {
  MutexLock lock(mu_);
  Statement s =
      db_.Prepare("SELECT shard, owner, epoch, since_ms FROM shard_owners ORDER BY shard");
  std::vector<ShardOwner> out;
  while (s.Step()) {
    out.push_back({static_cast<int>(s.Int(0)), s.Text(1), s.Int(2), s.Int(3)});
  }
  RETURN_IF_ERROR(db_.Check(s, "list shard owners"));
  return out;
}

StatusOr<std::vector<ShardEvent>> SqliteStore::ListShardHistory(int64_t after_seq, int limit) {
  if (limit < 0) return InvalidArgument("limit: must not be negative");
  MutexLock lock(mu_);
  Statement s = db_.Prepare(
      "SELECT seq, shard, owner, epoch, at_ms, acquired FROM shard_history "
      "WHERE seq > ? ORDER BY seq LIMIT ?");
  s.Bind(after_seq).Bind(limit == 0 ? int64_t{-1} : int64_t{limit});
  std::vector<ShardEvent> out;
  while (s.Step()) {
    out.push_back(
        {s.Int(0), static_cast<int>(s.Int(1)), s.Text(2), s.Int(3), s.Int(4), s.Int(5) != 0});
  }
  RETURN_IF_ERROR(db_.Check(s, "list shard history"));
  return out;
}

StatusOr<bool> SqliteStore::TakeSlot(std::string_view key, std::string_view holder,
                                     std::chrono::milliseconds ttl) {
  RETURN_IF_ERROR(ValidateSlot(key, holder, ttl.count()));
  MutexLock lock(mu_);
  Transaction tx(db_);
  RETURN_IF_ERROR(tx.Begin());
  const int64_t now = NowMs();
  Statement expired = db_.Prepare("DELETE FROM command_slots WHERE expires_ms <= ?");
  expired.Bind(now).Step();
  RETURN_IF_ERROR(db_.Check(expired, "drop expired command slots"));
  Statement s = db_.Prepare(
      "INSERT INTO command_slots (key, holder, expires_ms) VALUES (?, ?, ?) "
      "ON CONFLICT (key) DO UPDATE SET expires_ms = excluded.expires_ms "
      "WHERE command_slots.holder = excluded.holder");
  s.Bind(key).Bind(holder).Bind(now + ttl.count()).Step();
  RETURN_IF_ERROR(db_.Check(s, "take command slot"));
  const bool taken = sqlite3_changes(db_.handle) > 0;
  RETURN_IF_ERROR(tx.Commit());
  return taken;
}

Status SqliteStore::ReleaseSlot(std::string_view key, std::string_view holder) {
  RETURN_IF_ERROR(ValidateSlot(key, holder, 1));
  MutexLock lock(mu_);
  Statement s = db_.Prepare("DELETE FROM command_slots WHERE key = ? AND holder = ?");
  s.Bind(key).Bind(holder).Step();
  return db_.Check(s, "release command slot");
}

StatusOr<Credential> SqliteStore::FindCredentialByToken(std::string_view token) {
  MutexLock lock(mu_);
  Statement s = db_.Prepare(std::string("SELECT ") + kCredentialColumns +
                            " FROM credentials WHERE token = ?");
  s.Bind(token);
  if (s.Step()) return ReadCredential(s);
  RETURN_IF_ERROR(db_.Check(s, "find credential"));
  return NotFound("no credential has this token");  // never echo a secret
}

StatusOr<std::vector<HistoryEntry>> SqliteStore::ListHistory(std::string_view project_id,
                                                             int64_t after_seq, int limit) {
  if (limit < 0) return InvalidArgument("limit: must not be negative");
  MutexLock lock(mu_);
  Statement s = db_.Prepare(std::string("SELECT ") + kHistoryColumns +
                            " FROM history WHERE project_id = ? AND seq > ? ORDER BY seq LIMIT ?");
  s.Bind(project_id).Bind(after_seq).Bind(limit == 0 ? int64_t{-1} : int64_t{limit});
  std::vector<HistoryEntry> out;
  while (s.Step()) out.push_back(ReadHistory(s));
  RETURN_IF_ERROR(db_.Check(s, "list history"));
  return out;
}

}  // namespace

StatusOr<std::unique_ptr<Store>> OpenSqliteStore(const SqliteOptions& options) {
  if (options.path.empty()) return InvalidArgument("sqlite store: path is required");
  if (options.path != ":memory:") {
    std::filesystem::path dir = std::filesystem::path(options.path).parent_path();
    if (dir.empty()) dir = ".";
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      return FailedPrecondition(options.path + ": directory " + dir.string() + " does not exist");
    }
  }
  // The database holds instance credentials, and SQLite gives its -wal/-shm the database's mode.
  RETURN_IF_ERROR(PrepareSqliteFile(options.path));
  sqlite3* handle = nullptr;
  int rc =
      sqlite3_open_v2(options.path.c_str(), &handle,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  // The store owns the handle from here on, also when opening failed.
  auto store = std::make_unique<SqliteStore>(handle, options);
  if (rc != SQLITE_OK) {
    if (handle == nullptr) return Unavailable(options.path + ": out of memory opening SQLite");
    return Db{handle, options.path}.Fail(rc, "open");
  }
  RETURN_IF_ERROR(store->Init());
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace steward::store
