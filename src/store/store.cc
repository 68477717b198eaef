#include "store/store.h"

namespace steward::store {

std::string_view ToString(DesiredState s) {
  switch (s) {
    case DesiredState::kRunning:
      return "running";
    case DesiredState::kSuspended:
      return "suspended";
    case DesiredState::kDeleted:
      return "deleted";
  }
  return "unknown";
}

std::optional<DesiredState> ParseDesiredState(std::string_view s) {
  for (auto d : {DesiredState::kRunning, DesiredState::kSuspended, DesiredState::kDeleted}) {
    if (s == ToString(d)) return d;
  }
  return std::nullopt;
}

std::string_view ToString(RecordKind k) { return k == RecordKind::kAgent ? "agent" : "project"; }

std::optional<RecordKind> ParseRecordKind(std::string_view s) {
  for (auto k : {RecordKind::kProject, RecordKind::kAgent}) {
    if (s == ToString(k)) return k;
  }
  return std::nullopt;
}

std::string_view ToString(CredentialState s) {
  switch (s) {
    case CredentialState::kPending:
      return "pending";
    case CredentialState::kActive:
      return "active";
    case CredentialState::kRevoked:
      return "revoked";
  }
  return "unknown";
}

std::optional<CredentialState> ParseCredentialState(std::string_view s) {
  for (auto c : {CredentialState::kPending, CredentialState::kActive, CredentialState::kRevoked}) {
    if (s == ToString(c)) return c;
  }
  return std::nullopt;
}

}  // namespace steward::store
