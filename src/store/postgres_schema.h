// What the PostgreSQL store keeps in the database: its schema migrations (forward only, append
// only) and the payload of a change in the `changes` table. Pure data and functions; any thread.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "store/store.h"

namespace steward::store::pg {

// The newest schema version this binary knows, and the script of one version (1..latest).
int64_t LatestSchemaVersion();
const char* SchemaMigration(int64_t version);

// A change as stored in `changes` (JSON; its position is its row's, not in the payload).
std::string ChangeToPayload(const ProjectChange& c);
// kInternal when the payload is not a JSON object.
StatusOr<ProjectChange> ChangeFromPayload(const std::string& payload, int64_t position);

}  // namespace steward::store::pg
