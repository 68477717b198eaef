#include "store/postgres_schema.h"

#include <iterator>
#include <nlohmann/json.hpp>

namespace steward::store::pg {
namespace {

using Json = nlohmann::json;

// Schema migrations, in order: kMigrations[i] is version i + 1. Append only; never edit one that
// has been released. (PostgreSQL's versions count on their own; the tables are SQLite's schema 4
// plus `changes`.) Ids, names and hosts sort bytewise (COLLATE "C"), as in SQLite.
const char* const kMigrations[] = {
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
    // 4: several clusters (issue 37): the cluster each record is placed on; every existing one is
    // on the one cluster of a configuration without `clusters:`.
    R"sql(
ALTER TABLE projects ADD COLUMN cluster TEXT COLLATE "C" NOT NULL DEFAULT 'default';
CREATE INDEX projects_cluster ON projects (cluster, id);
)sql",
    // 5: replica Leases in the store (replicas.leases: store), so that no cluster is the
    // replicas' liveness when there are several.
    R"sql(
CREATE TABLE replica_leases (
  name TEXT COLLATE "C" PRIMARY KEY,
  body TEXT NOT NULL,
  version BIGINT NOT NULL
);
)sql",
    // 6: moves between clusters (issue 37): the cluster a record is being moved away from, and
    // in which order.
    R"sql(
ALTER TABLE projects ADD COLUMN moving_from TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN move_order TEXT NOT NULL DEFAULT '';
CREATE INDEX projects_moving_from ON projects (moving_from, id) WHERE moving_from <> '';
)sql",
};

Json RecordToJson(const ProjectRecord& r) {
  return Json{{"id", r.id},
              {"name", r.name},
              {"kind", ToString(r.kind)},
              {"team", r.team},
              {"cluster", r.cluster},
              {"moving_from", r.moving_from},
              {"move_order", r.move_order},
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
  r.cluster = j.value("cluster", "default");
  r.moving_from = j.value("moving_from", "");
  r.move_order = j.value("move_order", "");
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

}  // namespace

int64_t LatestSchemaVersion() { return static_cast<int64_t>(std::size(kMigrations)); }

const char* SchemaMigration(int64_t version) { return kMigrations[version - 1]; }

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

}  // namespace steward::store::pg
