#include "cluster/storage/sqlite_backend.h"

#include <sqlite3.h>

#include <string>
#include <utility>

#include "common/file.h"

namespace steward::cluster {
namespace {

// "STWC" in the SQLite header: tells a Steward cluster store from any other SQLite file (the
// project store, or someone else's database) before anything is read or written.
constexpr int kApplicationId = 0x53545743;
constexpr char kMagic[] = "steward-cluster-store";
constexpr int64_t kSchemaVersion = 1;

std::string_view Text(sqlite3_stmt* stmt, int col) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt, col));
  if (p == nullptr) return {};
  return {p, static_cast<size_t>(sqlite3_column_bytes(stmt, col))};
}

void BindText(sqlite3_stmt* stmt, int idx, std::string_view v) {
  sqlite3_bind_text(stmt, idx, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
}

// Finalizes a statement on every path out of a scope.
struct StmtGuard {
  sqlite3_stmt* stmt = nullptr;
  ~StmtGuard() { sqlite3_finalize(stmt); }
};

}  // namespace

StatusOr<std::unique_ptr<SqliteBackend>> SqliteBackend::Open(const std::string& path) {
  // The objects include Secrets, and SQLite gives its -wal/-shm the database's mode.
  if (Status st = PrepareSqliteFile(path); !st.ok()) {
    return InvalidArgument("cannot open cluster store " + st.message());
  }
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return InvalidArgument("cannot open cluster store " + path + ": " + msg);
  }
  std::unique_ptr<SqliteBackend> backend(new SqliteBackend(path, db));
  RETURN_IF_ERROR(backend->Init());
  return backend;
}

SqliteBackend::~SqliteBackend() {
  for (sqlite3_stmt* s : {begin_, commit_, rollback_, upsert_, delete_, set_revision_}) {
    sqlite3_finalize(s);
  }
  sqlite3_close(db_);
}

Status SqliteBackend::Error(std::string_view what) const {
  int code = sqlite3_errcode(db_) & 0xff;
  std::string msg =
      "cluster store " + path_ + ": " + std::string(what) + ": " + sqlite3_errmsg(db_);
  if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) {
    return InvalidArgument("not a Steward cluster store (or damaged): " + msg);
  }
  return Internal(std::move(msg));
}

Status SqliteBackend::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    sqlite3_free(err);
    return Error(sql);
  }
  return Status::Ok();
}

Status SqliteBackend::Prepare(const char* sql, sqlite3_stmt** stmt) {
  if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, nullptr) != SQLITE_OK) {
    return Error(sql);
  }
  return Status::Ok();
}

Status SqliteBackend::Step(sqlite3_stmt* stmt, std::string_view what) {
  int rc = sqlite3_step(stmt);
  Status st = rc == SQLITE_DONE || rc == SQLITE_ROW ? Status::Ok() : Error(what);
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  return st;
}

Status SqliteBackend::Init() {
  sqlite3_busy_timeout(db_, 5000);
  // Read-only probes first: a foreign file must be refused before it is modified in any way.
  int64_t app_id = 0;
  int64_t tables = 0;
  {
    StmtGuard g;
    if (sqlite3_prepare_v2(db_, "PRAGMA application_id", -1, &g.stmt, nullptr) != SQLITE_OK ||
        sqlite3_step(g.stmt) != SQLITE_ROW) {
      return Error("reading the header");
    }
    app_id = sqlite3_column_int64(g.stmt, 0);
  }
  {
    StmtGuard g;
    if (sqlite3_prepare_v2(db_, "SELECT count(*) FROM sqlite_master", -1, &g.stmt, nullptr) !=
            SQLITE_OK ||
        sqlite3_step(g.stmt) != SQLITE_ROW) {
      return Error("reading the schema");
    }
    tables = sqlite3_column_int64(g.stmt, 0);
  }
  bool fresh = app_id == 0 && tables == 0;
  if (!fresh && app_id != kApplicationId) {
    return InvalidArgument("cluster store " + path_ +
                           ": not a Steward cluster store (foreign SQLite database)");
  }

  RETURN_IF_ERROR(Exec("PRAGMA journal_mode=WAL"));
  RETURN_IF_ERROR(Exec("PRAGMA synchronous=NORMAL"));
  if (fresh) {
    std::string init =
        "BEGIN;"
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;"
        "CREATE TABLE objects (group_resource TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,"
        " revision INTEGER NOT NULL, json TEXT NOT NULL,"
        " PRIMARY KEY (group_resource, ns, name)) WITHOUT ROWID;"
        "INSERT INTO meta VALUES ('magic', '" +
        std::string(kMagic) + "'), ('schema_version', " + std::to_string(kSchemaVersion) +
        "), ('revision', 0);"
        "PRAGMA application_id=" +
        std::to_string(kApplicationId) + ";COMMIT;";
    RETURN_IF_ERROR(Exec(init.c_str()));
  }

  // Validate the meta rows: a file with our application_id but a wrong magic or a newer schema
  // is refused rather than guessed at.
  std::string magic;
  int64_t version = -1;
  int64_t revision = -1;
  {
    StmtGuard g;
    if (sqlite3_prepare_v2(db_, "SELECT key, value FROM meta", -1, &g.stmt, nullptr) != SQLITE_OK) {
      return InvalidArgument("cluster store " + path_ + ": not a Steward cluster store (" +
                             sqlite3_errmsg(db_) + ")");
    }
    int rc;
    while ((rc = sqlite3_step(g.stmt)) == SQLITE_ROW) {
      std::string_view key = Text(g.stmt, 0);
      if (key == "magic") magic = std::string(Text(g.stmt, 1));
      if (key == "schema_version" && sqlite3_column_type(g.stmt, 1) == SQLITE_INTEGER) {
        version = sqlite3_column_int64(g.stmt, 1);
      }
      if (key == "revision" && sqlite3_column_type(g.stmt, 1) == SQLITE_INTEGER) {
        revision = sqlite3_column_int64(g.stmt, 1);
      }
    }
    if (rc != SQLITE_DONE) return Error("reading meta");
  }
  if (magic != kMagic) {
    return InvalidArgument("cluster store " + path_ + ": not a Steward cluster store (bad magic)");
  }
  if (version != kSchemaVersion) {
    return InvalidArgument("cluster store " + path_ + ": unsupported schema version " +
                           std::to_string(version) + " (this build reads " +
                           std::to_string(kSchemaVersion) + ")");
  }
  if (revision < 0) {
    return InvalidArgument("cluster store " + path_ + ": damaged (no revision counter)");
  }
  revision_ = static_cast<uint64_t>(revision);

  RETURN_IF_ERROR(Prepare("BEGIN", &begin_));
  RETURN_IF_ERROR(Prepare("COMMIT", &commit_));
  RETURN_IF_ERROR(Prepare("ROLLBACK", &rollback_));
  RETURN_IF_ERROR(Prepare(
      "INSERT INTO objects (group_resource, ns, name, revision, json) VALUES (?, ?, ?, ?, ?) "
      "ON CONFLICT (group_resource, ns, name) DO UPDATE SET revision = excluded.revision, "
      "json = excluded.json",
      &upsert_));
  RETURN_IF_ERROR(
      Prepare("DELETE FROM objects WHERE group_resource = ? AND ns = ? AND name = ?", &delete_));
  RETURN_IF_ERROR(Prepare("UPDATE meta SET value = ? WHERE key = 'revision'", &set_revision_));
  return Status::Ok();
}

Status SqliteBackend::Load(const std::function<Status(Row&&)>& sink) {
  StmtGuard g;
  if (sqlite3_prepare_v2(db_,
                         "SELECT group_resource, ns, name, revision, json FROM objects "
                         "ORDER BY group_resource, ns, name",
                         -1, &g.stmt, nullptr) != SQLITE_OK) {
    return Error("loading objects");
  }
  int rc;
  while ((rc = sqlite3_step(g.stmt)) == SQLITE_ROW) {
    Row row;
    row.group_resource = std::string(Text(g.stmt, 0));
    row.ns = std::string(Text(g.stmt, 1));
    row.name = std::string(Text(g.stmt, 2));
    int64_t rev = sqlite3_column_int64(g.stmt, 3);
    row.json = std::string(Text(g.stmt, 4));
    if (rev <= 0 || static_cast<uint64_t>(rev) > revision_) {
      return InvalidArgument("cluster store " + path_ + ": damaged (object " + row.group_resource +
                             " " + row.ns + "/" + row.name + " has revision " +
                             std::to_string(rev) + " beyond the counter " +
                             std::to_string(revision_) + ")");
    }
    row.revision = static_cast<uint64_t>(rev);
    RETURN_IF_ERROR(sink(std::move(row)));
  }
  if (rc != SQLITE_DONE) return Error("loading objects");
  return Status::Ok();
}

Status SqliteBackend::Commit(uint64_t revision) {
  sqlite3_bind_int64(set_revision_, 1, static_cast<int64_t>(revision));
  Status st = Step(set_revision_, "writing the revision");
  if (st.ok()) st = Step(commit_, "commit");
  if (!st.ok()) {
    (void)Step(rollback_, "rollback");
    return st;
  }
  revision_ = revision;
  return Status::Ok();
}

Status SqliteBackend::Put(std::string_view group_resource, std::string_view ns,
                          std::string_view name, uint64_t revision, std::string_view json) {
  RETURN_IF_ERROR(Step(begin_, "begin"));
  BindText(upsert_, 1, group_resource);
  BindText(upsert_, 2, ns);
  BindText(upsert_, 3, name);
  sqlite3_bind_int64(upsert_, 4, static_cast<int64_t>(revision));
  BindText(upsert_, 5, json);
  Status st = Step(upsert_, "writing an object");
  if (!st.ok()) {
    (void)Step(rollback_, "rollback");
    return st;
  }
  return Commit(revision);
}

Status SqliteBackend::Delete(std::string_view group_resource, std::string_view ns,
                             std::string_view name, uint64_t revision) {
  RETURN_IF_ERROR(Step(begin_, "begin"));
  BindText(delete_, 1, group_resource);
  BindText(delete_, 2, ns);
  BindText(delete_, 3, name);
  Status st = Step(delete_, "deleting an object");
  if (!st.ok()) {
    (void)Step(rollback_, "rollback");
    return st;
  }
  return Commit(revision);
}

}  // namespace steward::cluster
