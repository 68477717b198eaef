// The SQLite store's connection: prepared statements (cached per connection), the handle with its
// error mapping (Db), and transactions. Not thread-safe: the store uses them under its mutex only.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "store/store.h"
#include "store/store_impl.h"

namespace steward::store::sqlite {

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

inline ProjectRecord ReadProject(const Statement& s) { return ReadProjectRow(s); }
inline Credential ReadCredential(const Statement& s) { return ReadCredentialRow(s); }
inline HistoryEntry ReadHistory(const Statement& s) { return ReadHistoryRow(s); }

}  // namespace steward::store::sqlite
