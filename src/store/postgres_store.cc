// The PostgreSQL store (postgres_store.h). Every write transaction starts by locking the one row
// of `feed` (SELECT ... FOR UPDATE): writers are serialised across every process, so reads
// inside a write see every earlier commit, history sequence numbers are in commit order, and the
// position bumped at the end of the transaction is gapless and in commit order. The change is
// stored in `changes` in the same transaction and NOTIFY wakes every process's feed thread.
#include "store/postgres_store.h"

#include <libpq-fe.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "common/file.h"
#include "common/log.h"
#include "common/mutex.h"
#include "store/change_feed.h"
#include "store/store_impl.h"

namespace steward::store {
namespace {

using Json = nlohmann::json;

constexpr const char* kChannel = "steward_changes";
// Advisory lock keys (pg_advisory_lock's bigint space): migrations at open; shard ownership
// changes, so that shard_history's seq order is commit order.
constexpr int64_t kMigrationLock = 0x5354574400000001;
constexpr int64_t kShardLock = 0x5354574400000002;
constexpr int kAttempts = 4;  // for serialization failures, deadlocks and dead pooled connections

// Schema migrations, in order: kMigrations[i] is version i + 1. Append only; never edit one that
// has been released. (PostgreSQL's versions count on their own; the tables are SQLite's schema 4
// plus `changes`.) Ids, names and hosts sort bytewise (COLLATE "C"), as in SQLite.
constexpr const char* kMigrations[] = {
    R"sql(
CREATE TABLE projects (
  id TEXT COLLATE "C" PRIMARY KEY,
  name TEXT COLLATE "C" NOT NULL UNIQUE,
  kind TEXT NOT NULL DEFAULT 'project' CHECK (kind IN ('project', 'agent')),
  team TEXT NOT NULL,
  spec_json TEXT NOT NULL,
  desired TEXT NOT NULL CHECK (desired IN ('running', 'suspended', 'deleted')),
  generation BIGINT NOT NULL,
  restart_epoch BIGINT NOT NULL,
  status_json TEXT NOT NULL,
  phase TEXT NOT NULL,
  observed_generation BIGINT NOT NULL,
  created_ms BIGINT NOT NULL,
  updated_ms BIGINT NOT NULL,
  version BIGINT NOT NULL
);
CREATE INDEX projects_team ON projects (team, id);
CREATE INDEX projects_phase ON projects (phase, id);
CREATE INDEX projects_desired ON projects (desired, id);
CREATE INDEX projects_kind ON projects (kind, id);
CREATE TABLE credentials (
  id TEXT COLLATE "C" PRIMARY KEY,
  project_id TEXT COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  token TEXT NOT NULL UNIQUE,
  state TEXT NOT NULL CHECK (state IN ('pending', 'active', 'revoked')),
  created_ms BIGINT NOT NULL,
  activated_ms BIGINT NOT NULL,
  revoked_ms BIGINT NOT NULL
);
CREATE INDEX credentials_project ON credentials (project_id);
CREATE TABLE history (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id TEXT COLLATE "C" NOT NULL,
  at_ms BIGINT NOT NULL,
  kind TEXT NOT NULL,
  generation BIGINT NOT NULL,
  summary TEXT NOT NULL,
  detail_json TEXT NOT NULL
);
CREATE INDEX history_project ON history (project_id, seq);
CREATE TABLE hostnames (
  host TEXT COLLATE "C" PRIMARY KEY,
  project_id TEXT COLLATE "C" NOT NULL
);
CREATE INDEX hostnames_project ON hostnames (project_id);
CREATE TABLE feed (
  one BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
  id TEXT NOT NULL,
  position BIGINT NOT NULL
);
INSERT INTO feed (id, position) VALUES (replace(gen_random_uuid()::text, '-', ''), 0);
CREATE TABLE changes (
  position BIGINT PRIMARY KEY,
  payload TEXT NOT NULL,
  committed_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE shard_owners (
  shard INTEGER PRIMARY KEY CHECK (shard BETWEEN 0 AND 65535),
  owner TEXT NOT NULL,
  epoch BIGINT NOT NULL,
  since_ms BIGINT NOT NULL
);
CREATE TABLE shard_history (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  shard INTEGER NOT NULL,
  owner TEXT NOT NULL,
  epoch BIGINT NOT NULL,
  at_ms BIGINT NOT NULL,
  acquired BOOLEAN NOT NULL
);
)sql",
    // 2: command slots (issue 17): one process at a time sends lifecycle commands to a pod.
    R"sql(
CREATE TABLE command_slots (
  key TEXT COLLATE "C" PRIMARY KEY,
  holder TEXT NOT NULL,
  expires_ms BIGINT NOT NULL
);
)sql",
    // 3: ids and names share the API's {project} (issue 34): each record claims both
    // (ReferenceClaim). Records without claims get them from ClaimHostnames; of an existing pair
    // that clashes, ids go first (the API resolved ids first), then the older record.
    R"sql(
INSERT INTO hostnames (host, project_id)
  SELECT 'Reference/' || id, id FROM projects
  WHERE id IN (SELECT project_id FROM hostnames) ORDER BY created_ms, id
  ON CONFLICT (host) DO NOTHING;
INSERT INTO hostnames (host, project_id)
  SELECT 'Reference/' || name, id FROM projects
  WHERE id IN (SELECT project_id FROM hostnames) ORDER BY created_ms, id
  ON CONFLICT (host) DO NOTHING;
)sql",
};
constexpr int64_t kLatestVersion = std::size(kMigrations);

// ---- URLs ------------------------------------------------------------------------------------

struct UrlParts {
  std::string user, host, port, dbname;
};

bool HasPrefix(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

StatusOr<UrlParts> ParseUrl(std::string_view url) {
  if (!HasPrefix(url, "postgres://") && !HasPrefix(url, "postgresql://")) {
    return InvalidArgument("database: a PostgreSQL URL starts with postgres:// or postgresql://");
  }
  // user:password@ in the authority: refused before libpq sees it, so no message echoes it.
  std::string_view rest = url.substr(url.find("://") + 3);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?"));
  size_t at = authority.rfind('@');
  if (at != std::string_view::npos && authority.substr(0, at).find(':') != std::string_view::npos) {
    return InvalidArgument(
        "database: the URL must not hold a password: put the password in databasePasswordFile "
        "or PGPASSWORD");
  }
  char* err = nullptr;
  std::string text(url);
  PQconninfoOption* opts = PQconninfoParse(text.c_str(), &err);
  if (opts == nullptr) {
    std::string m = err ? err : "out of memory";
    PQfreemem(err);
    while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
    return InvalidArgument("database: cannot parse the URL: " + m);
  }
  UrlParts parts;
  bool password = false;
  for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    std::string_view k = o->keyword;
    if (k == "password") password = true;
    if (k == "user") parts.user = o->val;
    if (k == "host") parts.host = o->val;
    if (k == "hostaddr" && parts.host.empty()) parts.host = o->val;
    if (k == "port") parts.port = o->val;
    if (k == "dbname") parts.dbname = o->val;
  }
  PQconninfoFree(opts);
  if (password) {
    return InvalidArgument(
        "database: the URL must not hold a password: put the password in databasePasswordFile "
        "or PGPASSWORD");
  }
  return parts;
}

std::string DescribeUrl(const UrlParts& p) {
  return "postgres://" + (p.user.empty() ? "" : p.user + "@") +
         (p.host.empty() ? "localhost" : p.host) + ":" + (p.port.empty() ? "5432" : p.port) + "/" +
         p.dbname;
}

StatusOr<std::string> ReadPasswordFile(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return FailedPrecondition("databasePasswordFile " + path + ": " + ErrnoText(errno));
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return FailedPrecondition("databasePasswordFile " + path +
                              ": readable by group or others (mode " + mode + "); chmod 600 it");
  }
  ASSIGN_OR_RETURN(std::string password, ReadSmallFile(path, 4096));
  while (!password.empty() && (password.back() == '\n' || password.back() == '\r')) {
    password.pop_back();
  }
  if (password.empty()) return FailedPrecondition("databasePasswordFile " + path + ": is empty");
  return password;
}

// ---- Connections ------------------------------------------------------------------------------

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

std::string Flatten(std::string m) {
  for (char& c : m) {
    if (c == '\n' || c == '\t') c = ' ';
  }
  while (!m.empty() && m.back() == ' ') m.pop_back();
  std::string out;
  for (char c : m) {
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out += c;
  }
  return out;
}

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

void IgnoreNotice(void*, const char*) {}

// What every connection is opened with.
struct ConnectParams {
  std::string url;
  std::optional<std::string> password;
  std::string where;  // Describe(): what every message names
  int connect_timeout_s = 5;
  int64_t statement_timeout_ms = 5000;
};

StatusOr<std::unique_ptr<PgConn>> Connect(const ConnectParams& p) {
  std::string timeout = std::to_string(p.connect_timeout_s);
  std::vector<const char*> keys = {"dbname", "application_name", "connect_timeout"};
  std::vector<const char*> values = {p.url.c_str(), "steward", timeout.c_str()};
  if (p.password) {
    keys.push_back("password");
    values.push_back(p.password->c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* c = PQconnectdbParams(keys.data(), values.data(), /*expand_dbname=*/1);
  if (c == nullptr) return Unavailable(p.where + ": cannot connect: out of memory");
  auto conn = std::make_unique<PgConn>(c, p.where);
  if (PQstatus(c) != CONNECTION_OK) {
    std::string m = Flatten(PQerrorMessage(c));
    if (PQconnectionNeedsPassword(c)) {
      return FailedPrecondition(p.where +
                                ": the server asks for a password and none was given: put it in "
                                "databasePasswordFile or PGPASSWORD");
    }
    return Unavailable(p.where + ": cannot connect: " + m);
  }
  PQsetNoticeProcessor(c, &IgnoreNotice, nullptr);
  auto set =
      conn->Exec("set statement_timeout", "SELECT set_config('statement_timeout', $1, false)",
                 {std::to_string(p.statement_timeout_ms)});
  if (!set.ok()) return set.error();
  return conn;
}

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

// ---- Changes as stored in `changes` -----------------------------------------------------------

Json RecordToJson(const ProjectRecord& r) {
  return Json{{"id", r.id},
              {"name", r.name},
              {"kind", ToString(r.kind)},
              {"team", r.team},
              {"spec_json", r.spec_json},
              {"desired", ToString(r.desired)},
              {"generation", r.generation},
              {"restart_epoch", r.restart_epoch},
              {"status_json", r.status_json},
              {"phase", r.phase},
              {"observed_generation", r.observed_generation},
              {"created_ms", r.created_ms},
              {"updated_ms", r.updated_ms},
              {"version", r.version}};
}

ProjectRecord RecordFromJson(const Json& j) {
  ProjectRecord r;
  r.id = j.value("id", "");
  r.name = j.value("name", "");
  r.kind = ParseRecordKind(j.value("kind", "")).value_or(RecordKind::kProject);
  r.team = j.value("team", "");
  r.spec_json = j.value("spec_json", "");
  r.desired = ParseDesiredState(j.value("desired", "")).value_or(DesiredState::kSuspended);
  r.generation = j.value("generation", int64_t{0});
  r.restart_epoch = j.value("restart_epoch", int64_t{0});
  r.status_json = j.value("status_json", "");
  r.phase = j.value("phase", "");
  r.observed_generation = j.value("observed_generation", int64_t{0});
  r.created_ms = j.value("created_ms", int64_t{0});
  r.updated_ms = j.value("updated_ms", int64_t{0});
  r.version = j.value("version", int64_t{0});
  return r;
}

std::string ChangeToPayload(const ProjectChange& c) {
  Json history = Json::array();
  for (const HistoryEntry& h : c.history) {
    history.push_back({{"seq", h.seq},
                       {"at_ms", h.at_ms},
                       {"kind", h.kind},
                       {"generation", h.generation},
                       {"summary", h.summary},
                       {"detail_json", h.detail_json}});
  }
  Json j{{"project_id", c.project_id}, {"history", std::move(history)}};
  if (c.record) j["record"] = RecordToJson(*c.record);
  if (c.purged) j["purged"] = RecordToJson(*c.purged);
  return j.dump();
}

StatusOr<ProjectChange> ChangeFromPayload(const std::string& payload, int64_t position) {
  Json j = Json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    return Internal("change at position " + std::to_string(position) + " is not JSON");
  }
  ProjectChange c;
  c.position = position;
  c.project_id = j.value("project_id", "");
  if (j.contains("record")) c.record = RecordFromJson(j["record"]);
  if (j.contains("purged")) c.purged = RecordFromJson(j["purged"]);
  for (const Json& h : j.value("history", Json::array())) {
    HistoryEntry e;
    e.seq = h.value("seq", int64_t{0});
    e.project_id = c.project_id;
    e.at_ms = h.value("at_ms", int64_t{0});
    e.kind = h.value("kind", "");
    e.generation = h.value("generation", int64_t{0});
    e.summary = h.value("summary", "");
    e.detail_json = h.value("detail_json", "");
    c.history.push_back(std::move(e));
  }
  return c;
}

// The feed thread of the store whose listeners the current thread runs (a write from there
// must not wait for its own delivery).
thread_local const void* tls_feed_thread_of = nullptr;

// ---- The store ---------------------------------------------------------------------------------

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
  StatusOr<std::map<std::string, int64_t>> CountByPhase(RecordKind kind) override;
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
  StatusOr<ProjectRecord> LoadProject(PgConn& c, std::string_view column, std::string_view value);
  StatusOr<std::vector<Credential>> LoadCredentials(PgConn& c, std::string_view project_id);
  Status CheckNameFree(PgConn& c, const ProjectRecord& record);
  StatusOr<ShardOwner> LoadShard(PgConn& c, int shard, bool for_update);
  Status CheckFenceOn(PgConn& c, const Fence& fence, bool for_update);
  Status AppendShardEvent(PgConn& c, const ShardOwner& now, bool acquired);
  Status InsertProject(PgConn& c, const ProjectRecord& r);
  Status UpdateProject(PgConn& c, const ProjectRecord& r);
  Status WriteHostnames(PgConn& c, const std::string& project_id,
                        const std::vector<std::string>& hosts);
  StatusOr<std::vector<HistoryEntry>> WriteExtra(PgConn& c, const std::string& project_id,
                                                 const Mutation& extra, int64_t now);
  Status CreateOn(PgConn& c, ProjectRecord record, const Mutation& extra, ProjectChange& change);
  StatusOr<ProjectRecord> MutateOn(PgConn& c, const ProjectRecord& before, const MutateFn& fn,
                                   ProjectChange& change);

  // The feed thread (see the header) and what committing callers wait on.
  void FeedLoop();
  StatusOr<std::unique_ptr<PgConn>> ConnectListener();
  Status CatchUp(PgConn& c);
  Status Resync(PgConn& c);
  void DeliverChange(ProjectChange change) EXCLUDES(delivered_mu_);
  void Poke();
  void WaitForWork(PgConn* listen, std::chrono::milliseconds timeout);
  void AwaitDelivery(int64_t position) EXCLUDES(delivered_mu_);

  const PostgresOptions options_;
  Clock& clock_;
  const ConnectParams params_;
  Pool pool_;
  std::string feed_id_;  // set by Init, then constant
  int64_t prune_every_ = 1000;

  ChangeFeed feed_;  // delivered to by the feed thread only
  Mutex delivered_mu_;
  CondVar delivered_cv_;
  int64_t delivered_ GUARDED_BY(delivered_mu_) = 0;   // the last position delivered
  int64_t nested_max_ GUARDED_BY(delivered_mu_) = 0;  // the last committed by a listener
  bool stopping_ GUARDED_BY(delivered_mu_) = false;
  std::atomic<bool> stop_{false};
  int wake_fd_ = -1;  // eventfd: a local commit or Stop wakes the feed thread
  std::thread feed_thread_;
};

PostgresStore::~PostgresStore() {
  {
    MutexLock lock(delivered_mu_);
    stopping_ = true;
  }
  delivered_cv_.NotifyAll();
  stop_ = true;
  Poke();
  if (feed_thread_.joinable()) feed_thread_.join();
  if (wake_fd_ >= 0) close(wake_fd_);
}

Status PostgresStore::Init(std::unique_ptr<PgConn> first) {
  prune_every_ = std::clamp<int64_t>(options_.retain_changes / 10, 1, 1000);
  RETURN_IF_ERROR(Migrate(*first));
  ASSIGN_OR_RETURN(PgResult feed, first->Exec("read the feed", "SELECT id, position FROM feed"));
  if (feed.Rows() != 1) return FailedPrecondition(params_.where + ": the feed table is empty");
  feed_id_ = feed.Text(0, 0);
  {
    MutexLock lock(delivered_mu_);
    delivered_ = feed.Int(0, 1);
  }
  pool_.Adopt(std::move(first));
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return Internal("eventfd: " + ErrnoText(errno));
  feed_thread_ = std::thread([this] { FeedLoop(); });
  return Status::Ok();
}

Status PostgresStore::Migrate(PgConn& c) {
  // A session lock: replicas starting together wait here, and find the work done. Waiting for
  // another replica's migration (and a migration itself) may take longer than statement_timeout.
  const std::string usual = std::to_string(params_.statement_timeout_ms);
  const std::string longer = std::to_string(std::max<int64_t>(params_.statement_timeout_ms, 60000));
  RETURN_IF_ERROR(
      c.Exec("set statement_timeout", "SELECT set_config('statement_timeout', $1, false)", {longer})
          .status());
  RETURN_IF_ERROR(
      c.Exec("take the migration lock", "SELECT pg_advisory_lock($1)", {kMigrationLock}).status());
  Status s = MigrateLocked(c);
  if (!c.broken()) {
    if (s.ok()) {
      s = c.Exec("set statement_timeout", "SELECT set_config('statement_timeout', $1, false)",
                 {usual})
              .status();
    }
    auto unlocked =
        c.Exec("release the migration lock", "SELECT pg_advisory_unlock($1)", {kMigrationLock});
    if (s.ok() && !unlocked.ok()) return unlocked.error();
  }
  return s;
}

Status PostgresStore::MigrateLocked(PgConn& c) {
  ASSIGN_OR_RETURN(PgResult found,
                   c.Exec("read the schema",
                          "SELECT to_regclass('schema_migrations') IS NOT NULL, (SELECT count(*) "
                          "FROM pg_tables WHERE schemaname = current_schema())"));
  if (!found.Bool(0, 0) && found.Int(0, 1) > 0) {
    return FailedPrecondition(params_.where + ": not a Steward database (" +
                              std::to_string(found.Int(0, 1)) +
                              " tables of another application and no schema_migrations)");
  }
  RETURN_IF_ERROR(c.ExecScript("create schema_migrations",
                               "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER "
                               "PRIMARY KEY, applied_ms BIGINT NOT NULL)")
                      .status());
  ASSIGN_OR_RETURN(PgResult v, c.Exec("read schema version",
                                      "SELECT coalesce(max(version), 0) FROM schema_migrations"));
  const int64_t applied = v.Int(0, 0);
  if (applied > kLatestVersion) {
    return FailedPrecondition(params_.where + ": schema version " + std::to_string(applied) +
                              " is newer than this Steward (knows up to " +
                              std::to_string(kLatestVersion) + ")");
  }
  for (int64_t version = applied + 1; version <= kLatestVersion; ++version) {
    std::string what = "apply schema migration " + std::to_string(version);
    RETURN_IF_ERROR(c.ExecScript(what, "BEGIN").status());
    auto applied_ok = [&]() -> Status {
      RETURN_IF_ERROR(c.ExecScript(what, kMigrations[version - 1]).status());
      RETURN_IF_ERROR(c.Exec(what,
                             "INSERT INTO schema_migrations (version, applied_ms) VALUES ($1, $2)",
                             {version, NowMs()})
                          .status());
      return c.ExecScript(what, "COMMIT").status();
    }();
    if (!applied_ok.ok()) {
      if (!c.broken()) (void)c.ExecScript("roll back", "ROLLBACK");
      return applied_ok;
    }
    LOG_INFO("store {}: applied schema migration {}", params_.where, version);
  }
  return Status::Ok();
}

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
  if (change.position > 0) AwaitDelivery(change.position);
  return result;
}

Status PostgresStore::AppendChange(PgConn& c, ProjectChange& change) {
  // One round trip: the next position, the change stored at it, and the notification (sent by
  // the server at COMMIT). The payload does not hold the position (its row does).
  ASSIGN_OR_RETURN(PgResult p, c.Exec("record the change",
                                      "WITH p AS (UPDATE feed SET position = position + 1 "
                                      "RETURNING position), c AS (INSERT INTO changes (position, "
                                      "payload) SELECT position, $2 FROM p RETURNING position) "
                                      "SELECT position, pg_notify($1, position::text) FROM c",
                                      {kChannel, ChangeToPayload(change)}));
  change.position = p.Int(0, 0);
  if (change.position % prune_every_ == 0) {
    RETURN_IF_ERROR(c.Exec("prune changes",
                           "DELETE FROM changes WHERE position <= $1 AND committed_at < "
                           "now() - $2::bigint * interval '1 millisecond'",
                           {change.position - options_.retain_changes,
                            static_cast<int64_t>(options_.retain_for.count())})
                        .status());
  }
  return Status::Ok();
}

StatusOr<ProjectRecord> PostgresStore::LoadProject(PgConn& c, std::string_view column,
                                                   std::string_view value) {
  ASSIGN_OR_RETURN(PgResult r, c.Exec("read project",
                                      std::string("SELECT ") + kProjectColumns +
                                          " FROM projects WHERE " + std::string(column) + " = $1",
                                      {value}));
  if (r.Rows() > 0) return ReadProjectRow(PgRow{r, 0});
  return ProjectNotFound(column, value);
}

StatusOr<std::vector<Credential>> PostgresStore::LoadCredentials(PgConn& c,
                                                                 std::string_view project_id) {
  ASSIGN_OR_RETURN(PgResult r, c.Exec("read credentials",
                                      std::string("SELECT ") + kCredentialColumns +
                                          " FROM credentials WHERE project_id = $1 ORDER BY "
                                          "created_ms, id",
                                      {project_id}));
  std::vector<Credential> out;
  for (int i = 0; i < r.Rows(); ++i) out.push_back(ReadCredentialRow(PgRow{r, i}));
  return out;
}

Status PostgresStore::CheckNameFree(PgConn& c, const ProjectRecord& record) {
  ASSIGN_OR_RETURN(PgResult r, c.Exec("check project name",
                                      "SELECT id FROM projects WHERE name = $1 AND id <> $2",
                                      {record.name, record.id}));
  if (r.Rows() > 0) return NameTaken(record.name, r.Text(0, 0));
  return Status::Ok();
}

Status PostgresStore::InsertProject(PgConn& c, const ProjectRecord& r) {
  return c
      .Exec("write project \"" + r.id + "\"",
            std::string("INSERT INTO projects (") + kProjectColumns +
                ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
            {r.id, r.name, r.team, r.spec_json, ToString(r.desired), r.generation, r.restart_epoch,
             r.status_json, r.phase, r.observed_generation, r.created_ms, r.updated_ms, r.version,
             ToString(r.kind)})
      .status();
}

Status PostgresStore::UpdateProject(PgConn& c, const ProjectRecord& r) {
  return c
      .Exec("write project \"" + r.id + "\"",
            "UPDATE projects SET name = $2, team = $3, spec_json = $4, desired = $5, "
            "generation = $6, restart_epoch = $7, status_json = $8, phase = $9, "
            "observed_generation = $10, updated_ms = $11, version = $12 WHERE id = $1",
            {r.id, r.name, r.team, r.spec_json, ToString(r.desired), r.generation, r.restart_epoch,
             r.status_json, r.phase, r.observed_generation, r.updated_ms, r.version})
      .status();
}

// Writers hold the feed lock, so nobody claims a host between the check and the insert.
Status PostgresStore::WriteHostnames(PgConn& c, const std::string& project_id,
                                     const std::vector<std::string>& hosts) {
  for (const std::string& host : hosts) {
    ASSIGN_OR_RETURN(
        PgResult held,
        c.Exec("check hostname", "SELECT project_id FROM hostnames WHERE host = $1", {host}));
    if (held.Rows() > 0 && held.Text(0, 0) != project_id) return HostnameInUse(host);
  }
  RETURN_IF_ERROR(
      c.Exec("release hostnames", "DELETE FROM hostnames WHERE project_id = $1", {project_id})
          .status());
  for (const std::string& host : hosts) {
    RETURN_IF_ERROR(c.Exec("claim hostname",
                           "INSERT INTO hostnames (host, project_id) VALUES ($1, $2) "
                           "ON CONFLICT (host) DO NOTHING",
                           {host, project_id})
                        .status());
  }
  return Status::Ok();
}

StatusOr<std::vector<HistoryEntry>> PostgresStore::WriteExtra(PgConn& c,
                                                              const std::string& project_id,
                                                              const Mutation& extra, int64_t now) {
  for (const Credential& given : extra.credentials) {
    ASSIGN_OR_RETURN(Credential cr, PrepareCredential(given, project_id, now));
    // Replace only a credential of the same project (0 rows otherwise); a clash on the token
    // fails the UNIQUE constraint.
    ASSIGN_OR_RETURN(
        PgResult r,
        c.Exec("write credential \"" + cr.id + "\"",
               std::string("INSERT INTO credentials (") + kCredentialColumns +
                   ") VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO UPDATE SET "
                   "token = excluded.token, state = excluded.state, "
                   "created_ms = excluded.created_ms, activated_ms = excluded.activated_ms, "
                   "revoked_ms = excluded.revoked_ms "
                   "WHERE credentials.project_id = excluded.project_id",
               {cr.id, cr.project_id, cr.token, ToString(cr.state), cr.created_ms, cr.activated_ms,
                cr.revoked_ms}));
    if (r.Affected() == 0) return CredentialOfAnotherProject(cr.id);
  }
  if (extra.hostnames) RETURN_IF_ERROR(WriteHostnames(c, project_id, *extra.hostnames));
  std::vector<HistoryEntry> appended;
  for (const HistoryEntry& given : extra.history) {
    ASSIGN_OR_RETURN(HistoryEntry h, PrepareHistory(given, project_id, now));
    ASSIGN_OR_RETURN(
        PgResult r,
        c.Exec("append history",
               "INSERT INTO history (project_id, at_ms, kind, generation, summary, "
               "detail_json) VALUES ($1, $2, $3, $4, $5, $6) RETURNING seq",
               {h.project_id, h.at_ms, h.kind, h.generation, h.summary, h.detail_json}));
    h.seq = r.Int(0, 0);
    appended.push_back(std::move(h));
  }
  return appended;
}

Status PostgresStore::CreateOn(PgConn& c, ProjectRecord record, const Mutation& extra,
                               ProjectChange& change) {
  RETURN_IF_ERROR(ValidateIdAndName(record));
  ASSIGN_OR_RETURN(PgResult taken,
                   c.Exec("check project id", "SELECT 1 FROM projects WHERE id = $1", {record.id}));
  if (taken.Rows() > 0) return IdTaken(record.id);
  RETURN_IF_ERROR(CheckNameFree(c, record));
  record.created_ms = record.updated_ms = NowMs();
  record.version = 1;
  RETURN_IF_ERROR(InsertProject(c, record));
  ASSIGN_OR_RETURN(change.history, WriteExtra(c, record.id, extra, record.created_ms));
  change.project_id = record.id;
  change.record = std::move(record);
  return Status::Ok();
}

StatusOr<ProjectRecord> PostgresStore::MutateOn(PgConn& c, const ProjectRecord& before,
                                                const MutateFn& fn, ProjectChange& change) {
  ASSIGN_OR_RETURN(std::vector<Credential> credentials, LoadCredentials(c, before.id));
  ProjectRecord after = before;
  Mutation extra;
  RETURN_IF_ERROR(fn(after, credentials, extra));
  RETURN_IF_ERROR(CheckMutated(before, after));
  if (WritesNothing(before, after, extra)) return before;
  if (extra.fence) RETURN_IF_ERROR(CheckFenceOn(c, *extra.fence, /*for_update=*/true));
  if (after.name != before.name) {
    RETURN_IF_ERROR(ValidateIdAndName(after));
    RETURN_IF_ERROR(CheckNameFree(c, after));
  }
  after.created_ms = before.created_ms;
  after.updated_ms = NowMs();
  after.version = before.version + 1;
  RETURN_IF_ERROR(UpdateProject(c, after));
  ASSIGN_OR_RETURN(change.history, WriteExtra(c, after.id, extra, after.updated_ms));
  change.project_id = after.id;
  change.record = after;
  return after;
}

StatusOr<ProjectRecord> PostgresStore::CreateProject(const ProjectRecord& record,
                                                     const Mutation& extra) {
  return WriteOne<ProjectRecord>("create project",
                                 [&](PgConn& c, ProjectChange& change) -> StatusOr<ProjectRecord> {
                                   RETURN_IF_ERROR(CreateOn(c, record, extra, change));
                                   return *change.record;
                                 });
}

StatusOr<ProjectRecord> PostgresStore::MutateProject(std::string_view id, const MutateFn& fn) {
  return WriteOne<ProjectRecord>("write project",
                                 [&](PgConn& c, ProjectChange& change) -> StatusOr<ProjectRecord> {
                                   ASSIGN_OR_RETURN(ProjectRecord before, LoadProject(c, "id", id));
                                   return MutateOn(c, before, fn, change);
                                 });
}

StatusOr<Store::UpsertResult> PostgresStore::UpsertProjectByName(std::string_view name,
                                                                 const CreateFn& create,
                                                                 const MutateFn& update) {
  return WriteOne<UpsertResult>(
      "put project", [&](PgConn& c, ProjectChange& change) -> StatusOr<UpsertResult> {
        UpsertResult result;
        auto existing = LoadProject(c, "name", name);
        if (existing.ok()) {
          ASSIGN_OR_RETURN(result.record, MutateOn(c, *existing, update, change));
          return result;
        }
        if (existing.error().code() != StatusCode::kNotFound) return existing.error();
        ProjectRecord record;
        Mutation extra;
        RETURN_IF_ERROR(create(record, extra));
        record.name = std::string(name);
        RETURN_IF_ERROR(CreateOn(c, std::move(record), extra, change));
        result.record = *change.record;
        result.created = true;
        return result;
      });
}

Status PostgresStore::PurgeProject(std::string_view id, const HistoryEntry& tombstone,
                                   const std::optional<Fence>& fence) {
  return WriteOne<bool>("purge project",
                        [&](PgConn& c, ProjectChange& change) -> StatusOr<bool> {
                          if (fence) RETURN_IF_ERROR(CheckFenceOn(c, *fence, true));
                          ASSIGN_OR_RETURN(ProjectRecord gone, LoadProject(c, "id", id));
                          for (const char* sql : {"DELETE FROM credentials WHERE project_id = $1",
                                                  "DELETE FROM hostnames WHERE project_id = $1",
                                                  "DELETE FROM projects WHERE id = $1"}) {
                            RETURN_IF_ERROR(c.Exec("purge project", sql, {id}).status());
                          }
                          Mutation extra;
                          extra.history.push_back(tombstone);
                          extra.history.back().kind = "purged";
                          change.project_id = std::string(id);
                          ASSIGN_OR_RETURN(change.history,
                                           WriteExtra(c, change.project_id, extra, NowMs()));
                          change.purged = std::move(gone);
                          return true;
                        })
      .status();
}

StatusOr<std::vector<ProjectRecord>> PostgresStore::ListProjects(const ListFilter& filter) {
  if (filter.limit < 0) return InvalidArgument("limit: must not be negative");
  std::string sql = std::string("SELECT ") + kProjectColumns + " FROM projects WHERE id > $1";
  std::vector<Arg> args = {filter.after_id};
  auto add = [&](const char* column, std::string_view value) {
    args.emplace_back(value);
    sql += std::string(" AND ") + column + " = $" + std::to_string(args.size());
  };
  if (filter.kind) add("kind", ToString(*filter.kind));
  if (filter.team) add("team", *filter.team);
  if (filter.phase) add("phase", *filter.phase);
  if (filter.desired) add("desired", ToString(*filter.desired));
  sql += " ORDER BY id";
  if (filter.limit > 0) sql += " LIMIT " + std::to_string(filter.limit);
  return Read<std::vector<ProjectRecord>>(
      "list projects", [&](PgConn& c) -> StatusOr<std::vector<ProjectRecord>> {
        ASSIGN_OR_RETURN(PgResult r, c.Exec("list projects", sql, args));
        std::vector<ProjectRecord> out;
        for (int i = 0; i < r.Rows(); ++i) out.push_back(ReadProjectRow(PgRow{r, i}));
        return out;
      });
}

StatusOr<std::map<std::string, int64_t>> PostgresStore::CountByPhase(RecordKind kind) {
  return Read<std::map<std::string, int64_t>>(
      "count records by phase", [&](PgConn& c) -> StatusOr<std::map<std::string, int64_t>> {
        ASSIGN_OR_RETURN(PgResult r, c.Exec("count records by phase",
                                            "SELECT phase, count(*) FROM projects WHERE kind = $1 "
                                            "GROUP BY phase",
                                            {ToString(kind)}));
        std::map<std::string, int64_t> out;
        for (int i = 0; i < r.Rows(); ++i) out[r.Text(i, 0)] = r.Int(i, 1);
        return out;
      });
}

StatusOr<std::vector<ProjectRecord>> PostgresStore::ListProjectsWithoutHostnames() {
  return Read<std::vector<ProjectRecord>>(
      "list projects without hostnames", [&](PgConn& c) -> StatusOr<std::vector<ProjectRecord>> {
        ASSIGN_OR_RETURN(PgResult r,
                         c.Exec("list projects without hostnames",
                                std::string("SELECT ") + kProjectColumns +
                                    " FROM projects WHERE NOT EXISTS (SELECT 1 FROM hostnames "
                                    "WHERE hostnames.project_id = projects.id) ORDER BY "
                                    "created_ms, id"));
        std::vector<ProjectRecord> out;
        for (int i = 0; i < r.Rows(); ++i) out.push_back(ReadProjectRow(PgRow{r, i}));
        return out;
      });
}

StatusOr<std::map<std::string, std::string>> PostgresStore::ClaimHostnames(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& by_project) {
  std::map<std::string, std::string> skipped;
  auto body = [&](PgConn& c) -> StatusOr<bool> {
    skipped.clear();
    for (const auto& [id, hosts] : by_project) {
      ASSIGN_OR_RETURN(PgResult exists,
                       c.Exec("check project id", "SELECT 1 FROM projects WHERE id = $1", {id}));
      if (exists.Rows() == 0) continue;
      for (const std::string& host : hosts) {
        ASSIGN_OR_RETURN(
            PgResult held,
            c.Exec("check hostname", "SELECT project_id FROM hostnames WHERE host = $1", {host}));
        if (held.Rows() > 0) {
          if (held.Text(0, 0) != id) skipped[host] = held.Text(0, 0);
          continue;
        }
        RETURN_IF_ERROR(c.Exec("claim hostname",
                               "INSERT INTO hostnames (host, project_id) VALUES ($1, $2)",
                               {host, id})
                            .status());
      }
    }
    return true;
  };
  const Status done = Transact("claim hostnames", body, /*lock_feed=*/true);
  if (!done.ok()) return done;
  return skipped;
}

StatusOr<ShardOwner> PostgresStore::LoadShard(PgConn& c, int shard, bool for_update) {
  ASSIGN_OR_RETURN(PgResult r, c.Exec("read shard owner",
                                      std::string("SELECT owner, epoch, since_ms FROM "
                                                  "shard_owners WHERE shard = $1") +
                                          (for_update ? " FOR UPDATE" : ""),
                                      {shard}));
  ShardOwner o;
  o.shard = shard;
  if (r.Rows() > 0) {
    o.owner = r.Text(0, 0);
    o.epoch = r.Int(0, 1);
    o.since_ms = r.Int(0, 2);
  }
  return o;
}

Status PostgresStore::CheckFenceOn(PgConn& c, const Fence& fence, bool for_update) {
  ASSIGN_OR_RETURN(ShardOwner now, LoadShard(c, fence.shard, for_update));
  if (now.owner == fence.owner && now.epoch == fence.epoch && !fence.owner.empty()) {
    return Status::Ok();
  }
  return FencedOut(fence, now);
}

Status PostgresStore::CheckFence(const Fence& fence) {
  return Read<bool>("check fence",
                    [&](PgConn& c) -> StatusOr<bool> {
                      RETURN_IF_ERROR(CheckFenceOn(c, fence, false));
                      return true;
                    })
      .status();
}

Status PostgresStore::AppendShardEvent(PgConn& c, const ShardOwner& now, bool acquired) {
  return c
      .Exec("append shard history",
            "INSERT INTO shard_history (shard, owner, epoch, at_ms, acquired) "
            "VALUES ($1, $2, $3, $4, $5)",
            {now.shard, now.owner, now.epoch, now.since_ms, acquired ? "true" : "false"})
      .status();
}

StatusOr<ShardOwner> PostgresStore::AcquireShard(int shard, std::string_view owner,
                                                 int64_t expected_epoch) {
  RETURN_IF_ERROR(ValidateShardAndOwner(shard, owner));
  ShardOwner now;
  auto body = [&](PgConn& c) -> StatusOr<bool> {
    RETURN_IF_ERROR(
        c.Exec("lock shard ownership", "SELECT pg_advisory_xact_lock($1)", {kShardLock}).status());
    ASSIGN_OR_RETURN(now, LoadShard(c, shard, /*for_update=*/true));
    if (now.epoch != expected_epoch) return AcquireRaced(shard, expected_epoch, now);
    now.owner = std::string(owner);
    now.epoch = expected_epoch + 1;
    now.since_ms = NowMs();
    RETURN_IF_ERROR(c.Exec("acquire shard",
                           "INSERT INTO shard_owners (shard, owner, epoch, since_ms) VALUES ($1, "
                           "$2, $3, $4) ON CONFLICT (shard) DO UPDATE SET owner = excluded.owner, "
                           "epoch = excluded.epoch, since_ms = excluded.since_ms",
                           {shard, now.owner, now.epoch, now.since_ms})
                        .status());
    RETURN_IF_ERROR(AppendShardEvent(c, now, true));
    return true;
  };
  const Status done = Transact("acquire shard", body);
  if (!done.ok()) return done;
  return now;
}

Status PostgresStore::ReleaseShard(const Fence& fence) {
  RETURN_IF_ERROR(ValidateShardAndOwner(fence.shard, fence.owner));
  return Transact("release shard", [&](PgConn& c) -> StatusOr<bool> {
    RETURN_IF_ERROR(
        c.Exec("lock shard ownership", "SELECT pg_advisory_xact_lock($1)", {kShardLock}).status());
    RETURN_IF_ERROR(CheckFenceOn(c, fence, /*for_update=*/true));
    ShardOwner released{fence.shard, fence.owner, fence.epoch, NowMs()};
    RETURN_IF_ERROR(c.Exec("release shard",
                           "UPDATE shard_owners SET owner = '', since_ms = $1 WHERE shard = $2",
                           {released.since_ms, fence.shard})
                        .status());
    RETURN_IF_ERROR(AppendShardEvent(c, released, false));
    return true;
  });
}

StatusOr<std::vector<ShardOwner>> PostgresStore::ListShardOwners() {
  return Read<std::vector<ShardOwner>>(
      "list shard owners", [&](PgConn& c) -> StatusOr<std::vector<ShardOwner>> {
        ASSIGN_OR_RETURN(PgResult r, c.Exec("list shard owners",
                                            "SELECT shard, owner, epoch, since_ms FROM "
                                            "shard_owners ORDER BY shard"));
        std::vector<ShardOwner> out;
        for (int i = 0; i < r.Rows(); ++i) {
          out.push_back({static_cast<int>(r.Int(i, 0)), r.Text(i, 1), r.Int(i, 2), r.Int(i, 3)});
        }
        return out;
      });
}

StatusOr<std::vector<ShardEvent>> PostgresStore::ListShardHistory(int64_t after_seq, int limit) {
  if (limit < 0) return InvalidArgument("limit: must not be negative");
  return Read<std::vector<ShardEvent>>(
      "list shard history", [&](PgConn& c) -> StatusOr<std::vector<ShardEvent>> {
        ASSIGN_OR_RETURN(PgResult r,
                         c.Exec("list shard history",
                                "SELECT seq, shard, owner, epoch, at_ms, acquired FROM "
                                "shard_history WHERE seq > $1 ORDER BY seq LIMIT $2",
                                {after_seq, limit == 0 ? Arg(std::nullopt) : Arg(limit)}));
        std::vector<ShardEvent> out;
        for (int i = 0; i < r.Rows(); ++i) {
          out.push_back({r.Int(i, 0), static_cast<int>(r.Int(i, 1)), r.Text(i, 2), r.Int(i, 3),
                         r.Int(i, 4), r.Bool(i, 5)});
        }
        return out;
      });
}

StatusOr<bool> PostgresStore::TakeSlot(std::string_view key, std::string_view holder,
                                       std::chrono::milliseconds ttl) {
  RETURN_IF_ERROR(ValidateSlot(key, holder, ttl.count()));
  bool taken = false;
  const Status done = Transact("take command slot", [&](PgConn& c) -> StatusOr<bool> {
    const int64_t now = NowMs();
    RETURN_IF_ERROR(c.Exec("drop expired command slots",
                           "DELETE FROM command_slots WHERE expires_ms <= $1", {now})
                        .status());
    // Two processes inserting one key: the second waits for the first's commit, then finds the
    // conflict and takes the slot only when it holds it already.
    ASSIGN_OR_RETURN(PgResult r,
                     c.Exec("take command slot",
                            "INSERT INTO command_slots (key, holder, expires_ms) VALUES ($1, $2, "
                            "$3) ON CONFLICT (key) DO UPDATE SET expires_ms = excluded.expires_ms "
                            "WHERE command_slots.holder = excluded.holder RETURNING key",
                            {std::string(key), std::string(holder), now + ttl.count()}));
    taken = r.Rows() > 0;
    return true;
  });
  if (!done.ok()) return done;
  return taken;
}

Status PostgresStore::ReleaseSlot(std::string_view key, std::string_view holder) {
  RETURN_IF_ERROR(ValidateSlot(key, holder, 1));
  return Read<bool>("release command slot",
                    [&](PgConn& c) -> StatusOr<bool> {
                      RETURN_IF_ERROR(c.Exec("release command slot",
                                             "DELETE FROM command_slots WHERE key = $1 AND "
                                             "holder = $2",
                                             {std::string(key), std::string(holder)})
                                          .status());
                      return true;
                    })
      .status();
}

StatusOr<Credential> PostgresStore::FindCredentialByToken(std::string_view token) {
  return Read<Credential>("find credential", [&](PgConn& c) -> StatusOr<Credential> {
    ASSIGN_OR_RETURN(PgResult r, c.Exec("find credential",
                                        std::string("SELECT ") + kCredentialColumns +
                                            " FROM credentials WHERE token = $1",
                                        {token}));
    if (r.Rows() > 0) return ReadCredentialRow(PgRow{r, 0});
    return NotFound("no credential has this token");  // never echo a secret
  });
}

StatusOr<std::vector<HistoryEntry>> PostgresStore::ListHistory(std::string_view project_id,
                                                               int64_t after_seq, int limit) {
  if (limit < 0) return InvalidArgument("limit: must not be negative");
  return Read<std::vector<HistoryEntry>>(
      "list history", [&](PgConn& c) -> StatusOr<std::vector<HistoryEntry>> {
        ASSIGN_OR_RETURN(
            PgResult r,
            c.Exec("list history",
                   std::string("SELECT ") + kHistoryColumns +
                       " FROM history WHERE project_id = $1 AND seq > $2 ORDER BY "
                       "seq LIMIT $3",
                   {project_id, after_seq, limit == 0 ? Arg(std::nullopt) : Arg(limit)}));
        std::vector<HistoryEntry> out;
        for (int i = 0; i < r.Rows(); ++i) out.push_back(ReadHistoryRow(PgRow{r, i}));
        return out;
      });
}

// ---- The feed thread ---------------------------------------------------------------------------

void PostgresStore::Poke() {
  uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!write(wake_fd_, &one, sizeof one);
}

// A write from a listener (on the feed thread) does not wait: its change is delivered after the
// listener returns. It is recorded in nested_max_ before that, so a caller waiting for the change
// being delivered also waits for the changes its listeners made (as SQLite's committing thread
// delivers them before it returns).
void PostgresStore::AwaitDelivery(int64_t position) {
  if (tls_feed_thread_of == this) {
    MutexLock lock(delivered_mu_);
    nested_max_ = std::max(nested_max_, position);
    return;
  }
  Poke();
  MutexLock lock(delivered_mu_);
  if (!delivered_cv_.WaitFor(delivered_mu_, options_.delivery_wait, [&]() REQUIRES(delivered_mu_) {
        return (delivered_ >= position && delivered_ >= nested_max_) || stopping_;
      })) {
    LOG_WARN("store {}: change {} is committed but was not delivered within {} ms", params_.where,
             position, options_.delivery_wait.count());
  }
}

void PostgresStore::DeliverChange(ProjectChange change) {
  const int64_t position = change.position;
  feed_.Deliver(feed_.TakeTicket(), std::move(change));
  {
    MutexLock lock(delivered_mu_);
    delivered_ = std::max(delivered_, position);
  }
  delivered_cv_.NotifyAll();
}

StatusOr<std::unique_ptr<PgConn>> PostgresStore::ConnectListener() {
  ASSIGN_OR_RETURN(std::unique_ptr<PgConn> c, Connect(params_));
  RETURN_IF_ERROR(c->Exec("listen", std::string("LISTEN ") + kChannel).status());
  return c;
}

// Delivers every change after the last one delivered, in position order.
Status PostgresStore::CatchUp(PgConn& c) {
  while (!stop_) {
    int64_t after = 0;
    {
      MutexLock lock(delivered_mu_);
      after = delivered_;
    }
    ASSIGN_OR_RETURN(PgResult r, c.Exec("read changes",
                                        "SELECT position, payload FROM changes WHERE position > "
                                        "$1 ORDER BY position LIMIT 500",
                                        {after}));
    if (r.Rows() == 0) return Status::Ok();
    // Positions are taken under the feed lock and committed with it, so a visible position
    // means every earlier one is visible too, unless it was pruned.
    if (r.Int(0, 0) != after + 1) {
      LOG_ERROR(
          "store {}: changes {} to {} were pruned before this process read them; "
          "re-delivering every record as it is now",
          params_.where, after + 1, r.Int(0, 0) - 1);
      RETURN_IF_ERROR(Resync(c));
      continue;
    }
    for (int i = 0; i < r.Rows() && !stop_; ++i) {
      ASSIGN_OR_RETURN(ProjectChange change, ChangeFromPayload(r.Text(i, 1), r.Int(i, 0)));
      DeliverChange(std::move(change));
    }
  }
  return Status::Ok();
}

// After a gap: every record as of one snapshot, at that snapshot's position (see the header).
Status PostgresStore::Resync(PgConn& c) {
  RETURN_IF_ERROR(
      c.Exec("resynchronise", "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").status());
  auto pos = c.Exec("resynchronise", "SELECT position FROM feed");
  auto all = c.Exec("resynchronise",
                    std::string("SELECT ") + kProjectColumns + " FROM projects ORDER BY id");
  auto done = c.Exec("resynchronise", "COMMIT");
  if (!pos.ok()) return pos.error();
  if (!all.ok()) return all.error();
  if (!done.ok()) return done.error();
  const int64_t at = pos->Int(0, 0);
  for (int i = 0; i < all->Rows() && !stop_; ++i) {
    ProjectChange change;
    change.record = ReadProjectRow(PgRow{*all, i});
    change.project_id = change.record->id;
    change.position = at;
    DeliverChange(std::move(change));
  }
  MutexLock lock(delivered_mu_);
  delivered_ = std::max(delivered_, at);
  return Status::Ok();
}

// True when notifications were queued (they are dropped: the next read finds their changes).
bool DrainNotifications(PgConn& listen) {
  bool any = false;
  while (PGnotify* n = PQnotifies(listen.raw())) {
    PQfreemem(n);
    any = true;
  }
  return any;
}

// Until a notification arrives on `listen`, a local commit pokes, or `timeout` passes.
void PostgresStore::WaitForWork(PgConn* listen, std::chrono::milliseconds timeout) {
  pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {-1, POLLIN, 0}};
  if (listen) fds[1].fd = PQsocket(listen->raw());
  int n = poll(fds, fds[1].fd >= 0 ? 2 : 1, static_cast<int>(timeout.count()));
  if (n > 0 && (fds[0].revents & POLLIN)) {
    uint64_t count = 0;
    (void)!read(wake_fd_, &count, sizeof count);
  }
}

void PostgresStore::FeedLoop() {
  tls_feed_thread_of = this;
  std::unique_ptr<PgConn> listen;
  std::chrono::milliseconds backoff{50};
  bool warned = false;
  while (!stop_) {
    if (!listen) {
      auto c = ConnectListener();
      if (!c.ok()) {
        if (!warned) LOG_WARN("store change feed: {}; retrying", c.error().message());
        warned = true;
        WaitForWork(nullptr, backoff);
        backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
        continue;
      }
      if (warned) LOG_INFO("store {}: change feed reconnected", params_.where);
      warned = false;
      listen = std::move(*c);
    }
    // LISTEN is in place before the read: a commit after the read is notified.
    Status s = CatchUp(*listen);
    if (!s.ok()) {
      // Backed off, so that a failure that persists (not a cut connection) does not spin.
      LOG_WARN("store change feed: {}", s.message());
      listen.reset();
      WaitForWork(nullptr, backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
      continue;
    }
    backoff = std::chrono::milliseconds(50);
    // A notification that arrived during the read is queued in libpq already, and the socket
    // will not wake poll for it: read again at once.
    if (DrainNotifications(*listen)) continue;
    WaitForWork(listen.get(), options_.poll_interval);
    if (PQconsumeInput(listen->raw()) == 0) {
      LOG_WARN("store change feed: {}: {}", params_.where, Flatten(PQerrorMessage(listen->raw())));
      listen.reset();
      continue;
    }
    DrainNotifications(*listen);
  }
}

}  // namespace

Status ValidatePostgresUrl(std::string_view url) { return ParseUrl(url).status(); }

StatusOr<std::unique_ptr<Store>> OpenPostgresStore(const PostgresOptions& options) {
  ASSIGN_OR_RETURN(UrlParts parts, ParseUrl(options.url));
  if (options.pool_size < 1) return InvalidArgument("postgres store: pool_size must be at least 1");
  if (options.retain_changes < 1) {
    return InvalidArgument("postgres store: retain_changes must be at least 1");
  }
  ConnectParams params;
  params.url = options.url;
  params.where = DescribeUrl(parts);
  if (!options.password_file.empty()) {
    ASSIGN_OR_RETURN(params.password, ReadPasswordFile(options.password_file));
  }
  params.connect_timeout_s =
      static_cast<int>(std::max<int64_t>(1, (options.connect_timeout.count() + 999) / 1000));
  params.statement_timeout_ms = options.statement_timeout.count();
  ASSIGN_OR_RETURN(std::unique_ptr<PgConn> first, Connect(params));
  auto store = std::make_unique<PostgresStore>(options, params);
  RETURN_IF_ERROR(store->Init(std::move(first)));
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace steward::store
