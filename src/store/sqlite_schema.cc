#include "store/sqlite_schema.h"

#include <iterator>

namespace steward::store::sqlite {
namespace {

// Schema migrations, in order: kMigrations[i] is version i + 1. Append only; never edit one
// that has been released.
const char* const kMigrations[] = {
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
    // 7: several clusters (issue 37): the cluster each record is placed on; every existing one is
    // on the one cluster of a configuration without `clusters:`.
    R"sql(
ALTER TABLE projects ADD COLUMN cluster TEXT NOT NULL DEFAULT 'default';
CREATE INDEX projects_cluster ON projects (cluster, id);
)sql",
    // 8: moves between clusters (issue 37): the cluster a record is being moved away from, and
    // in which order.
    R"sql(
ALTER TABLE projects ADD COLUMN moving_from TEXT NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN move_order TEXT NOT NULL DEFAULT '';
CREATE INDEX projects_moving_from ON projects (moving_from, id) WHERE moving_from != '';
)sql",
};

}  // namespace

int64_t LatestSqliteSchemaVersion() { return static_cast<int64_t>(std::size(kMigrations)); }

const char* SqliteSchemaMigration(int64_t version) { return kMigrations[version - 1]; }

}  // namespace steward::store::sqlite
