#include "engine/intents/intents_internal.h"

#include <utility>

#include "engine/intents/intents.h"

namespace steward::engine::intents_internal {

// A history line; `detail_json`: its detail, serialised ("" = none).
store::HistoryEntry OperationText(std::string summary, int64_t generation,
                                  std::string detail_json) {
  store::HistoryEntry e;
  e.kind = "operation";
  e.summary = std::move(summary);
  e.generation = generation;
  e.detail_json = std::move(detail_json);
  return e;
}
store::HistoryEntry Operation(std::string summary, int64_t generation, Json detail) {
  return OperationText(std::move(summary), generation, detail.is_null() ? "" : DumpJson(detail));
}

void MarkAccepted(store::ProjectRecord& r) {
  const std::optional<ProjectStatus> stored = ParseStoredStatus(r.status_json);
  if (!stored) {
    r.phase = "";  // as the API shows it: Pending
    return;
  }
  r.phase = std::string(ToString(PresentStatus(stored, IntentOf(r.desired), r.generation).phase));
}

std::optional<CredentialsRef> StoredCredentials(const store::ProjectRecord& r) {
  auto j = ParseJson(r.spec_json);
  if (!j.ok()) return std::nullopt;
  auto spec = ParseProjectSpec(*j);
  return spec.ok() ? spec->credentials : std::nullopt;
}

std::string_view KindWord(store::RecordKind kind) {
  return kind == store::RecordKind::kAgent ? "agent" : "project";
}

Status RefuseIfDeleting(const store::ProjectRecord& r) {
  if (r.desired == store::DesiredState::kDeleted) {
    return FailedPrecondition(std::string(KindWord(r.kind)) + " " + r.name + " is being deleted");
  }
  return Status::Ok();
}

}  // namespace steward::engine::intents_internal
