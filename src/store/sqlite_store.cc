// The SQLite store: one connection guarded by a mutex, WAL journal, schema migrations applied at
// open. Listener delivery is the ChangeFeed's: a ticket is taken under mu_ right after each
// COMMIT, and the change handed to the feed once mu_ is released.
#include <algorithm>
#include <filesystem>

#include "common/file.h"
#include "common/log.h"
#include "store/sqlite_schema.h"
#include "store/sqlite_store_impl.h"

namespace steward::store {
namespace sqlite {

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
  for (int64_t version = 1; version <= LatestSqliteSchemaVersion(); ++version) {
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
    if (applied > LatestSqliteSchemaVersion()) {
      return FailedPrecondition(options_.path + ": schema version " + std::to_string(applied) +
                                " is newer than this Steward (knows up to " +
                                std::to_string(LatestSqliteSchemaVersion()) + ")");
    }
    if (applied >= version) continue;  // rolls back the no-op transaction
    std::string what = "apply schema migration " + std::to_string(version);
    RETURN_IF_ERROR(db_.Exec(SqliteSchemaMigration(version), what));
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
                            ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                            "ON CONFLICT (id) DO UPDATE SET name = excluded.name, "
                            "team = excluded.team, cluster = excluded.cluster, "
                            "moving_from = excluded.moving_from, move_order = excluded.move_order, "
                            "spec_json = excluded.spec_json, "
                            "desired = excluded.desired, generation = excluded.generation, "
                            "restart_epoch = excluded.restart_epoch, "
                            "status_json = excluded.status_json, phase = excluded.phase, "
                            "observed_generation = excluded.observed_generation, "
                            "updated_ms = excluded.updated_ms, version = excluded.version");
  s.Bind(r.id).Bind(r.name).Bind(r.team).Bind(r.spec_json).Bind(ToString(r.desired));
  s.Bind(r.generation).Bind(r.restart_epoch).Bind(r.status_json).Bind(r.phase);
  s.Bind(r.observed_generation).Bind(r.created_ms).Bind(r.updated_ms).Bind(r.version);
  s.Bind(ToString(r.kind));  // the upsert never changes it
  s.Bind(r.cluster).Bind(r.moving_from).Bind(r.move_order);
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
  if (filter.cluster) sql += " AND cluster = ?";
  if (filter.moving_from) sql += " AND moving_from = ?";
  sql += " ORDER BY id LIMIT ?";
  MutexLock lock(mu_);
  Statement s = db_.Prepare(sql);
  s.Bind(filter.after_id);
  if (filter.kind) s.Bind(ToString(*filter.kind));
  if (filter.team) s.Bind(*filter.team);
  if (filter.phase) s.Bind(*filter.phase);
  if (filter.desired) s.Bind(ToString(*filter.desired));
  if (filter.cluster) s.Bind(*filter.cluster);
  if (filter.moving_from) s.Bind(*filter.moving_from);
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
  if (extra.fence) RETURN_IF_ERROR(CheckFenceIn(db_, *extra.fence));
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

StatusOr<std::map<std::string, int64_t>> SqliteStore::CountRecords(const CountQuery& query) {
  const char* column = query.by == CountQuery::By::kPhase ? "phase" : "cluster";
  std::string sql = std::string("SELECT ") + column + ", COUNT(*) FROM projects WHERE 1 = 1";
  if (query.kind) sql += " AND kind = ?";
  if (query.skip_deleted) sql += " AND desired != 'deleted'";
  sql += std::string(" GROUP BY ") + column;
  MutexLock lock(mu_);
  Statement s = db_.Prepare(sql);
  if (query.kind) s.Bind(ToString(*query.kind));
  std::map<std::string, int64_t> out;
  while (s.Step()) out[s.Text(0)] = s.Int(1);
  RETURN_IF_ERROR(db_.Check(s, std::string("count records by ") + column));
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
    if (fence) RETURN_IF_ERROR(CheckFenceIn(db_, *fence));
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

}  // namespace sqlite

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
  auto store = std::make_unique<sqlite::SqliteStore>(handle, options);
  if (rc != SQLITE_OK) {
    if (handle == nullptr) return Unavailable(options.path + ": out of memory opening SQLite");
    return sqlite::Db{handle, options.path}.Fail(rc, "open");
  }
  RETURN_IF_ERROR(store->Init());
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace steward::store
