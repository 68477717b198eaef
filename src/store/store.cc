#include "store/store.h"

#include <algorithm>
#include <string>

#include "store/store_impl.h"

namespace steward::store {
namespace {

// [a-z0-9]([-a-z0-9]*[a-z0-9])? of at most max_len characters.
bool IsDnsLabel(std::string_view s, size_t max_len) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (s.empty() || s.size() > max_len || !alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
}

}  // namespace

Status ValidateIdAndName(const ProjectRecord& r) {
  if (!IsDnsLabel(r.id, 40)) {
    return InvalidArgument("project id \"" + r.id +
                           "\": must be 1-40 characters of [a-z0-9-], starting and ending "
                           "with a letter or digit");
  }
  if (r.name.empty() || r.name.size() > 63 || r.name.front() == '-' ||
      !IsDnsLabel(r.name.substr(0, r.name.find_last_not_of('-') + 1), 63)) {
    return InvalidArgument("project name \"" + r.name +
                           "\": must be 1-63 characters of [a-z0-9-], starting with a letter "
                           "or digit");
  }
  return Status::Ok();
}

StatusOr<StoredLease> Store::GetLease(const std::string&) {
  return Unimplemented("this store keeps no replica Leases (replicas need PostgreSQL)");
}
StatusOr<StoredLease> Store::PutLease(const StoredLease&) {
  return Unimplemented("this store keeps no replica Leases (replicas need PostgreSQL)");
}
StatusOr<std::vector<StoredLease>> Store::ListLeases() {
  return Unimplemented("this store keeps no replica Leases (replicas need PostgreSQL)");
}

bool SameIntentAndStatus(const ProjectRecord& a, const ProjectRecord& b) {
  return a.name == b.name && a.team == b.team && a.cluster == b.cluster &&
         a.moving_from == b.moving_from && a.move_order == b.move_order &&
         a.spec_json == b.spec_json && a.desired == b.desired && a.generation == b.generation &&
         a.restart_epoch == b.restart_epoch && a.status_json == b.status_json &&
         a.phase == b.phase && a.observed_generation == b.observed_generation;
}

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

Status ValidateShardAndOwner(int shard, std::string_view owner) {
  if (shard < 0 || shard > kMaxShard) {
    return InvalidArgument("shard " + std::to_string(shard) + ": must be in [0, " +
                           std::to_string(kMaxShard) + "]");
  }
  if (owner.empty()) return InvalidArgument("shard " + std::to_string(shard) + ": owner is empty");
  return Status::Ok();
}

Status ValidateSlot(std::string_view key, std::string_view holder, int64_t ttl_ms) {
  constexpr size_t kMax = 512;
  if (key.empty() || key.size() > kMax) {
    return InvalidArgument("slot: the key must be 1-" + std::to_string(kMax) + " bytes");
  }
  if (holder.empty() || holder.size() > kMax) {
    return InvalidArgument("slot: the holder must be 1-" + std::to_string(kMax) + " bytes");
  }
  if (ttl_ms <= 0) return InvalidArgument("slot: the ttl must be positive");
  return Status::Ok();
}

Status FencedOut(const Fence& fence, const ShardOwner& now) {
  std::string held =
      now.owner.empty()
          ? (now.epoch == 0 ? "owned by nobody" : "released at epoch " + std::to_string(now.epoch))
          : "owned by " + now.owner + " at epoch " + std::to_string(now.epoch);
  return Status(StatusCode::kAborted, "shard " + std::to_string(fence.shard) + " is " + held +
                                          "; this write was fenced by " + fence.owner +
                                          " at epoch " + std::to_string(fence.epoch));
}

Status AcquireRaced(int shard, int64_t expected_epoch, const ShardOwner& now) {
  return Status(StatusCode::kAborted,
                "shard " + std::to_string(shard) + ": expected epoch " +
                    std::to_string(expected_epoch) + ", but it is at epoch " +
                    std::to_string(now.epoch) +
                    (now.owner.empty() ? " (released)" : " (owned by " + now.owner + ")"));
}

Status ProjectNotFound(std::string_view column, std::string_view value) {
  return NotFound("project " + std::string(column == "id" ? "" : "named ") + "\"" +
                  std::string(value) + "\" not found");
}

Status IdTaken(std::string_view id) {
  return AlreadyExists("project id \"" + std::string(id) + "\" is taken");
}

Status NameTaken(std::string_view name, std::string_view holder_id) {
  return AlreadyExists("project name \"" + std::string(name) + "\" is taken by project \"" +
                       std::string(holder_id) + "\"");
}

namespace {
constexpr std::string_view kReferencePrefix = "Reference/";
}  // namespace

std::string ReferenceClaim(std::string_view word) {
  return std::string(kReferencePrefix) + std::string(word);
}

Status HostnameInUse(std::string_view host) {
  if (host.substr(0, kReferencePrefix.size()) == kReferencePrefix) {
    return AlreadyExists("\"" + std::string(host.substr(kReferencePrefix.size())) +
                         "\" is already another record's id or name: ids and names share one "
                         "namespace (a {project} in the API's paths is either)");
  }
  if (host.find('/') != std::string_view::npos) {
    return AlreadyExists("object name " + std::string(host) +
                         " is already in use: another project's objects would have the same "
                         "name (choose another name)");
  }
  return AlreadyExists("hostname \"" + std::string(host) + "\" is already in use");
}

Status CredentialOfAnotherProject(std::string_view credential_id) {
  return AlreadyExists("credential id \"" + std::string(credential_id) +
                       "\" belongs to another project");
}

Status CheckMutated(const ProjectRecord& before, const ProjectRecord& after) {
  if (after.id != before.id) {
    return InvalidArgument("project \"" + before.id + "\": the id cannot change (to \"" + after.id +
                           "\")");
  }
  if (after.kind != before.kind) {
    return InvalidArgument("project \"" + before.id + "\": the kind cannot change (from " +
                           std::string(ToString(before.kind)) + ")");
  }
  return Status::Ok();
}

bool WritesNothing(const ProjectRecord& before, const ProjectRecord& after, const Mutation& extra) {
  return SameIntentAndStatus(after, before) && extra.credentials.empty() && extra.history.empty() &&
         !extra.hostnames;
}

StatusOr<Credential> PrepareCredential(Credential c, std::string_view project_id, int64_t now_ms) {
  if (c.id.empty() || c.token.empty()) {
    return InvalidArgument("credential \"" + c.id + "\": id and token are required");
  }
  if (c.project_id.empty()) c.project_id = std::string(project_id);
  if (c.project_id != project_id) {
    return InvalidArgument("credential \"" + c.id + "\": project_id \"" + c.project_id +
                           "\" is not the project being written (\"" + std::string(project_id) +
                           "\")");
  }
  if (c.created_ms == 0) c.created_ms = now_ms;
  return c;
}

StatusOr<HistoryEntry> PrepareHistory(HistoryEntry h, std::string_view project_id, int64_t now_ms) {
  if (h.kind.empty()) return InvalidArgument("history entry: kind is required");
  h.project_id = std::string(project_id);
  if (h.at_ms == 0) h.at_ms = now_ms;
  return h;
}

}  // namespace steward::store
