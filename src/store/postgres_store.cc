// The PostgreSQL store (postgres_store.h). Every write transaction starts by locking the one row
// of `feed` (SELECT ... FOR UPDATE): writers are serialised across every process, so reads
// inside a write see every earlier commit, history sequence numbers are in commit order, and the
// position bumped at the end of the transaction is gapless and in commit order. The change is
// stored in `changes` in the same transaction and NOTIFY wakes every process's feed thread.
#include "store/postgres_store.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>

#include "common/file.h"
#include "store/postgres_schema.h"
#include "store/postgres_store_impl.h"
#include "store/postgres_url.h"
#include "store/store_impl.h"

namespace steward::store {
namespace pg {

PostgresStore::~PostgresStore() { feed_.Stop(); }

Status PostgresStore::Init(std::unique_ptr<PgConn> first) {
  prune_every_ = std::clamp<int64_t>(options_.retain_changes / 10, 1, 1000);
  RETURN_IF_ERROR(Migrate(*first));
  ASSIGN_OR_RETURN(PgResult feed, first->Exec("read the feed", "SELECT id, position FROM feed"));
  if (feed.Rows() != 1) return FailedPrecondition(params_.where + ": the feed table is empty");
  feed_id_ = feed.Text(0, 0);
  pool_.Adopt(std::move(first));
  return feed_.Start(feed.Int(0, 1));
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
  if (applied > LatestSchemaVersion()) {
    return FailedPrecondition(params_.where + ": schema version " + std::to_string(applied) +
                              " is newer than this Steward (knows up to " +
                              std::to_string(LatestSchemaVersion()) + ")");
  }
  for (int64_t version = applied + 1; version <= LatestSchemaVersion(); ++version) {
    std::string what = "apply schema migration " + std::to_string(version);
    RETURN_IF_ERROR(c.ExecScript(what, "BEGIN").status());
    auto applied_ok = [&]() -> Status {
      RETURN_IF_ERROR(c.ExecScript(what, SchemaMigration(version)).status());
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

StatusOr<ProjectRecord> LoadProject(PgConn& c, std::string_view column, std::string_view value) {
  ASSIGN_OR_RETURN(PgResult r, c.Exec("read project",
                                      std::string("SELECT ") + kProjectColumns +
                                          " FROM projects WHERE " + std::string(column) + " = $1",
                                      {value}));
  if (r.Rows() > 0) return ReadProjectRow(PgRow{r, 0});
  return ProjectNotFound(column, value);
}

StatusOr<std::vector<Credential>> LoadCredentials(PgConn& c, std::string_view project_id) {
  ASSIGN_OR_RETURN(PgResult r, c.Exec("read credentials",
                                      std::string("SELECT ") + kCredentialColumns +
                                          " FROM credentials WHERE project_id = $1 ORDER BY "
                                          "created_ms, id",
                                      {project_id}));
  std::vector<Credential> out;
  for (int i = 0; i < r.Rows(); ++i) out.push_back(ReadCredentialRow(PgRow{r, i}));
  return out;
}

Status CheckNameFree(PgConn& c, const ProjectRecord& record) {
  ASSIGN_OR_RETURN(PgResult r, c.Exec("check project name",
                                      "SELECT id FROM projects WHERE name = $1 AND id <> $2",
                                      {record.name, record.id}));
  if (r.Rows() > 0) return NameTaken(record.name, r.Text(0, 0));
  return Status::Ok();
}

Status InsertProject(PgConn& c, const ProjectRecord& r) {
  return c
      .Exec("write project \"" + r.id + "\"",
            std::string("INSERT INTO projects (") + kProjectColumns +
                ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, "
                "$17)",
            {r.id, r.name, r.team, r.spec_json, ToString(r.desired), r.generation, r.restart_epoch,
             r.status_json, r.phase, r.observed_generation, r.created_ms, r.updated_ms, r.version,
             ToString(r.kind), r.cluster, r.moving_from, r.move_order})
      .status();
}

Status UpdateProject(PgConn& c, const ProjectRecord& r) {
  return c
      .Exec("write project \"" + r.id + "\"",
            "UPDATE projects SET name = $2, team = $3, spec_json = $4, desired = $5, "
            "generation = $6, restart_epoch = $7, status_json = $8, phase = $9, "
            "observed_generation = $10, updated_ms = $11, version = $12, cluster = $13, "
            "moving_from = $14, move_order = $15 "
            "WHERE id = $1",
            {r.id, r.name, r.team, r.spec_json, ToString(r.desired), r.generation, r.restart_epoch,
             r.status_json, r.phase, r.observed_generation, r.updated_ms, r.version, r.cluster,
             r.moving_from, r.move_order})
      .status();
}

// Writers hold the feed lock, so nobody claims a host between the check and the insert.
Status WriteHostnames(PgConn& c, const std::string& project_id,
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

StatusOr<std::vector<HistoryEntry>> WriteExtra(PgConn& c, const std::string& project_id,
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
  if (filter.cluster) add("cluster", *filter.cluster);
  if (filter.moving_from) add("moving_from", *filter.moving_from);
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

StatusOr<std::map<std::string, int64_t>> PostgresStore::CountRecords(const CountQuery& query) {
  const char* column = query.by == CountQuery::By::kPhase ? "phase" : "cluster";
  std::string sql = std::string("SELECT ") + column + ", count(*) FROM projects WHERE true";
  std::vector<Arg> args;
  if (query.kind) {
    args.emplace_back(ToString(*query.kind));
    sql += " AND kind = $1";
  }
  if (query.skip_deleted) sql += " AND desired <> 'deleted'";
  sql += std::string(" GROUP BY ") + column;
  const std::string what = std::string("count records by ") + column;
  return Read<std::map<std::string, int64_t>>(
      what, [&](PgConn& c) -> StatusOr<std::map<std::string, int64_t>> {
        ASSIGN_OR_RETURN(PgResult r, c.Exec(what, sql, args));
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

}  // namespace pg

Status ValidatePostgresUrl(std::string_view url) { return pg::ParseUrl(url).status(); }

StatusOr<std::unique_ptr<Store>> OpenPostgresStore(const PostgresOptions& options) {
  ASSIGN_OR_RETURN(pg::UrlParts parts, pg::ParseUrl(options.url));
  if (options.pool_size < 1) return InvalidArgument("postgres store: pool_size must be at least 1");
  if (options.retain_changes < 1) {
    return InvalidArgument("postgres store: retain_changes must be at least 1");
  }
  pg::ConnectParams params;
  params.url = options.url;
  params.where = pg::DescribeUrl(parts);
  if (!options.password_file.empty()) {
    ASSIGN_OR_RETURN(params.password, pg::ReadPasswordFile(options.password_file));
  }
  params.connect_timeout_s =
      static_cast<int>(std::max<int64_t>(1, (options.connect_timeout.count() + 999) / 1000));
  params.statement_timeout_ms = options.statement_timeout.count();
  ASSIGN_OR_RETURN(std::unique_ptr<pg::PgConn> first, pg::Connect(params));
  auto store = std::make_unique<pg::PostgresStore>(options, params);
  RETURN_IF_ERROR(store->Init(std::move(first)));
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace steward::store
