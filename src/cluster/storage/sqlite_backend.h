// SqliteBackend: the durable half of Storage (internal to the storage module).
//
// One SQLite file in WAL mode (synchronous=NORMAL) with two tables: `objects` (group_resource,
// ns, name, revision, json) and `meta` (magic, schema version, current revision). The file is
// stamped with a SQLite application_id so that a foreign database (or any other file) is refused
// at Open() with an error naming the path.
//
// Thread-safety: none. Storage calls it only under its exclusive lock.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace steward::cluster {

class SqliteBackend {
 public:
  struct Row {
    std::string group_resource;
    std::string ns;
    std::string name;
    uint64_t revision = 0;
    std::string json;
  };

  // Opens or creates the store at `path`. Fails with kInvalidArgument when the file is not a
  // Steward cluster store (or is damaged), kInternal on other SQLite errors; messages name `path`.
  static StatusOr<std::unique_ptr<SqliteBackend>> Open(const std::string& path);
  ~SqliteBackend();
  SqliteBackend(const SqliteBackend&) = delete;
  SqliteBackend& operator=(const SqliteBackend&) = delete;

  // The revision counter as last committed.
  uint64_t revision() const { return revision_; }
  // Calls `sink` for every stored object (in key order); stops at the first error.
  Status Load(const std::function<Status(Row&&)>& sink);

  // Writes (or deletes) one object and the new revision counter in one transaction.
  Status Put(std::string_view group_resource, std::string_view ns, std::string_view name,
             uint64_t revision, std::string_view json);
  Status Delete(std::string_view group_resource, std::string_view ns, std::string_view name,
                uint64_t revision);

 private:
  SqliteBackend(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  Status Init();
  Status Exec(const char* sql);
  Status Prepare(const char* sql, sqlite3_stmt** stmt);
  Status Error(std::string_view what) const;
  Status Step(sqlite3_stmt* stmt, std::string_view what);
  Status Commit(uint64_t revision);

  std::string path_;
  sqlite3* db_ = nullptr;
  uint64_t revision_ = 0;
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
  sqlite3_stmt* rollback_ = nullptr;
  sqlite3_stmt* upsert_ = nullptr;
  sqlite3_stmt* delete_ = nullptr;
  sqlite3_stmt* set_revision_ = nullptr;
};

}  // namespace steward::cluster
