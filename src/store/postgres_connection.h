// The PostgreSQL store's connections: one libpq connection with its error mapping (PgConn), the
// rows it returns, and a bounded pool of them. A PgConn is used by one thread at a time; the
// Pool is thread-safe. Errors are classified as postgres_store.h describes (a lost connection
// kUnavailable and marked broken, a unique violation kAlreadyExists, ...); no message holds a
// value of a row or a password.
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"

namespace steward::store::pg {

// A server message on one line (line breaks and runs of spaces folded).
std::string Flatten(std::string m);

// A statement parameter: text, or NULL.
struct Arg {
  Arg(std::string_view s) : v(std::string(s)) {}  // NOLINT: implicit
  Arg(const std::string& s) : v(s) {}             // NOLINT: implicit
  Arg(const char* s) : v(std::string(s)) {}       // NOLINT: implicit
  Arg(int64_t i) : v(std::to_string(i)) {}        // NOLINT: implicit
  Arg(int i) : v(std::to_string(i)) {}            // NOLINT: implicit
  Arg(std::nullopt_t) {}                          // NOLINT: implicit
  std::optional<std::string> v;
};

class PgResult {
 public:
  explicit PgResult(PGresult* r) : r_(r, &PQclear) {}
  int Rows() const { return PQntuples(r_.get()); }
  std::string Text(int row, int col) const {
    return std::string(PQgetvalue(r_.get(), row, col), PQgetlength(r_.get(), row, col));
  }
  int64_t Int(int row, int col) const {
    return std::strtoll(PQgetvalue(r_.get(), row, col), nullptr, 10);
  }
  bool Bool(int row, int col) const { return PQgetvalue(r_.get(), row, col)[0] == 't'; }
  int64_t Affected() const { return std::strtoll(PQcmdTuples(r_.get()), nullptr, 10); }

 private:
  std::unique_ptr<PGresult, void (*)(PGresult*)> r_;
};

// One row of a result, as store_impl.h's Read*Row functions want it.
struct PgRow {
  const PgResult& r;
  int row;
  std::string Text(int col) const { return r.Text(row, col); }
  int64_t Int(int col) const { return r.Int(row, col); }
};

// One libpq connection. Not thread-safe: used by one thread at a time (a pool lease, or the
// feed thread).
class PgConn {
 public:
  PgConn(PGconn* c, std::string where) : c_(c), where_(std::move(where)) {}
  ~PgConn() { PQfinish(c_); }
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  PGconn* raw() { return c_; }
  // The connection can no longer be used (lost, or the server ended the session).
  bool broken() const { return broken_ || PQstatus(c_) != CONNECTION_OK; }
  // The last failure was a serialization failure or a deadlock: run the transaction again.
  bool retryable() const { return sqlstate_ == "40001" || sqlstate_ == "40P01"; }

  StatusOr<PgResult> Exec(std::string_view what, const std::string& sql,
                          std::initializer_list<Arg> args = {}) {
    return Exec(what, sql, std::vector<Arg>(args));
  }
  StatusOr<PgResult> Exec(std::string_view what, const std::string& sql,
                          const std::vector<Arg>& args) {
    std::vector<const char*> values;
    values.reserve(args.size());
    for (const Arg& a : args) values.push_back(a.v ? a.v->c_str() : nullptr);
    PGresult* r = PQexecParams(c_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                               values.data(), nullptr, nullptr, 0);
    return Check(r, what);
  }
  // Several statements without parameters (migrations).
  StatusOr<PgResult> ExecScript(std::string_view what, const std::string& sql) {
    return Check(PQexec(c_, sql.c_str()), what);
  }

 private:
  StatusOr<PgResult> Check(PGresult* raw_result, std::string_view what) {
    PgResult r(raw_result);
    ExecStatusType st = raw_result ? PQresultStatus(raw_result) : PGRES_FATAL_ERROR;
    sqlstate_.clear();
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return r;
    const char* code = raw_result ? PQresultErrorField(raw_result, PG_DIAG_SQLSTATE) : nullptr;
    sqlstate_ = code ? code : "";
    // The primary message only: DETAIL may quote the values of a row (a token).
    const char* primary =
        raw_result ? PQresultErrorField(raw_result, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
    std::string m =
        where_ + ": " + std::string(what) + ": " + Flatten(primary ? primary : PQerrorMessage(c_));
    const bool connection_error = sqlstate_.empty() || sqlstate_.rfind("08", 0) == 0 ||
                                  sqlstate_ == "57P01" || sqlstate_ == "57P02" ||
                                  sqlstate_ == "57P03" || PQstatus(c_) != CONNECTION_OK;
    if (connection_error) {
      broken_ = true;
      return Unavailable(m + " (connection lost)");
    }
    if (sqlstate_ == "23505") return AlreadyExists(m);
    if (sqlstate_ == "57014") return Unavailable(m + " (statement_timeout)");
    if (retryable() || sqlstate_.rfind("53", 0) == 0 || sqlstate_ == "55P03") {
      return Unavailable(m);
    }
    if (sqlstate_ == "25P02") return Internal(m);  // in failed transaction: a bug of ours
    return Internal(m + " (SQLSTATE " + sqlstate_ + ")");
  }

  PGconn* c_;
  const std::string where_;
  bool broken_ = false;
  std::string sqlstate_;
};

// What every connection is opened with.
struct ConnectParams {
  std::string url;
  std::optional<std::string> password;
  std::string where;  // Describe(): what every message names
  int connect_timeout_s = 5;
  int64_t statement_timeout_ms = 5000;
};

// Opens a connection and sets its statement_timeout; kFailedPrecondition when the server wants a
// password and none was given, kUnavailable when it cannot be reached.
StatusOr<std::unique_ptr<PgConn>> Connect(const ConnectParams& p);

// A bounded pool of connections. Thread-safe.
class Pool {
 public:
  Pool(ConnectParams params, int size, std::chrono::milliseconds max_wait)
      : params_(std::move(params)), size_(size), max_wait_(max_wait) {}

  class Lease {
   public:
    Lease(Pool* pool, std::unique_ptr<PgConn> c) : pool_(pool), c_(std::move(c)) {}
    Lease(Lease&& o) noexcept : pool_(o.pool_), c_(std::move(o.c_)) {}
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (c_) pool_->Release(std::move(c_));
    }
    PgConn& operator*() { return *c_; }
    PgConn* operator->() { return c_.get(); }

   private:
    Pool* pool_;
    std::unique_ptr<PgConn> c_;
  };

  // An idle connection, or a new one while fewer than `size` are open; waits (bounded) when
  // all are in use.
  StatusOr<Lease> Acquire() EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      if (!cv_.WaitFor(mu_, max_wait_,
                       [&]() REQUIRES(mu_) { return !idle_.empty() || open_ < size_; })) {
        return Unavailable(params_.where + ": all " + std::to_string(size_) +
                           " connections stayed busy for " + std::to_string(max_wait_.count()) +
                           " ms");
      }
      if (!idle_.empty()) {
        std::unique_ptr<PgConn> c = std::move(idle_.back());
        idle_.pop_back();
        return Lease(this, std::move(c));
      }
      ++open_;
    }
    auto c = Connect(params_);
    if (!c.ok()) {
      MutexLock lock(mu_);
      --open_;
      cv_.NotifyOne();
      return c.error();
    }
    return Lease(this, std::move(*c));
  }

  // Hands in a first connection (opened by the caller).
  void Adopt(std::unique_ptr<PgConn> c) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    ++open_;
    idle_.push_back(std::move(c));
  }

 private:
  void Release(std::unique_ptr<PgConn> c) EXCLUDES(mu_) {
    std::vector<std::unique_ptr<PgConn>> dead;
    {
      MutexLock lock(mu_);
      if (c->broken()) {
        // One dead connection: the server probably restarted, and the idle ones are dead too.
        dead.push_back(std::move(c));
        for (auto& i : idle_) dead.push_back(std::move(i));
        idle_.clear();
        open_ -= static_cast<int>(dead.size());
      } else {
        idle_.push_back(std::move(c));
      }
      cv_.NotifyAll();
    }
  }

  const ConnectParams params_;
  const int size_;
  const std::chrono::milliseconds max_wait_;
  Mutex mu_;
  CondVar cv_;
  int open_ GUARDED_BY(mu_) = 0;
  std::vector<std::unique_ptr<PgConn>> idle_ GUARDED_BY(mu_);
};

}  // namespace steward::store::pg
