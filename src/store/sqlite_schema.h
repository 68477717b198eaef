// The SQLite store's schema: its forward-only migrations (append only; never edit a released one)
// and the application id that tells a Steward database from any other SQLite file.
#pragma once

#include <cstdint>

namespace steward::store::sqlite {

// Written to the file header at creation: tells a Steward database from any other SQLite file.
constexpr int64_t kApplicationId = 0x53545744;  // "STWD"

// The newest schema version this binary knows, and the script of one version (1..latest).
int64_t LatestSqliteSchemaVersion();
const char* SqliteSchemaMigration(int64_t version);

}  // namespace steward::store::sqlite
