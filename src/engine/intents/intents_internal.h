// The helpers Intents' source files share (intents.cc, move.cc; defined in intents_internal.cc):
// history lines, the phase an accepted intent shows, and the refusals every operation makes.
// Internal to src/engine/intents: nothing outside it includes this header.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/json.h"
#include "common/status.h"
#include "engine/model/project.h"
#include "store/store.h"

namespace steward::engine::intents_internal {

// An "operation" history line (an accepted intent); `detail_json`: its detail, serialised ("" =
// none), or `detail` serialised when not null.
store::HistoryEntry OperationText(std::string summary, int64_t generation, std::string detail_json);
store::HistoryEntry Operation(std::string summary, int64_t generation, Json detail = nullptr);
// The phase column readers see once a new generation is accepted, before the engine has written
// a status for it (issue 13: a reader must never be told Running for a generation not reached).
void MarkAccepted(store::ProjectRecord& r);
// "project" | "agent", as errors name a record.
std::string_view KindWord(store::RecordKind kind);
// kFailedPrecondition "<kind> <name> is being deleted" when its desired state is deleted.
Status RefuseIfDeleting(const store::ProjectRecord& r);
// The credentials reference of the stored spec (nullopt when generated or unreadable).
std::optional<CredentialsRef> StoredCredentials(const store::ProjectRecord& r);

}  // namespace steward::engine::intents_internal
