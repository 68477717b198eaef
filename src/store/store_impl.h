// What every Store implementation shares (SQLite, PostgreSQL): validation and the wording of
// the errors callers see, so that the stores answer alike. Not for the store's callers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "store/store.h"

namespace steward::store {

constexpr int kMaxShard = 65535;

// kInvalidArgument for an id or name the store refuses (ProjectRecord's comments).
Status ValidateIdAndName(const ProjectRecord& r);
// True when the fields a caller may change (everything but id, kind, times and version) agree.
bool SameIntentAndStatus(const ProjectRecord& a, const ProjectRecord& b);

// kInvalidArgument for a shard outside [0, kMaxShard] or an empty owner.
Status ValidateShardAndOwner(int shard, std::string_view owner);
// kInvalidArgument for a command slot's key, holder or ttl that TakeSlot refuses.
Status ValidateSlot(std::string_view key, std::string_view holder, int64_t ttl_ms);
// The kAborted of a fenced write: `fence` no longer holds; `now` is the shard as stored.
Status FencedOut(const Fence& fence, const ShardOwner& now);
// The kAborted of an AcquireShard whose expected epoch is not the stored one.
Status AcquireRaced(int shard, int64_t expected_epoch, const ShardOwner& now);

// The columns every store reads and writes, in the order its Read* functions expect.
inline constexpr const char* kProjectColumns =
    "id, name, team, spec_json, desired, generation, restart_epoch, status_json, phase, "
    "observed_generation, created_ms, updated_ms, version, kind, cluster, moving_from, move_order";
inline constexpr const char* kCredentialColumns =
    "id, project_id, token, state, created_ms, activated_ms, revoked_ms";
inline constexpr const char* kHistoryColumns =
    "seq, project_id, at_ms, kind, generation, summary, detail_json";

// The errors of a record look-up and of the uniqueness checks.
Status ProjectNotFound(std::string_view column, std::string_view value);  // column: id | name
Status IdTaken(std::string_view id);
Status NameTaken(std::string_view name, std::string_view holder_id);
// `host` wanted by a project while another one holds it (Mutation::hostnames' wording).
Status HostnameInUse(std::string_view host);
Status CredentialOfAnotherProject(std::string_view credential_id);

// What a MutateFn did to `before`: kInvalidArgument when it changed the id or the kind.
Status CheckMutated(const ProjectRecord& before, const ProjectRecord& after);
// True when a MutateFn changed nothing and added nothing (then nothing is written).
bool WritesNothing(const ProjectRecord& before, const ProjectRecord& after, const Mutation& extra);
// A Mutation's credential or history entry for `project_id`, checked, with the defaults the
// store fills in (project id, times at `now_ms`).
StatusOr<Credential> PrepareCredential(Credential c, std::string_view project_id, int64_t now_ms);
StatusOr<HistoryEntry> PrepareHistory(HistoryEntry h, std::string_view project_id, int64_t now_ms);

// Records from a row of the columns above. Row: anything with `std::string Text(int col)` and
// `int64_t Int(int col)` (a SQLite statement, a PostgreSQL result row).
template <typename Row>
ProjectRecord ReadProjectRow(const Row& s) {
  ProjectRecord r;
  r.id = s.Text(0);
  r.name = s.Text(1);
  r.team = s.Text(2);
  r.spec_json = s.Text(3);
  r.desired = ParseDesiredState(s.Text(4)).value_or(DesiredState::kSuspended);  // CHECKed
  r.generation = s.Int(5);
  r.restart_epoch = s.Int(6);
  r.status_json = s.Text(7);
  r.phase = s.Text(8);
  r.observed_generation = s.Int(9);
  r.created_ms = s.Int(10);
  r.updated_ms = s.Int(11);
  r.version = s.Int(12);
  r.kind = ParseRecordKind(s.Text(13)).value_or(RecordKind::kProject);  // CHECKed
  r.cluster = s.Text(14);
  r.moving_from = s.Text(15);
  r.move_order = s.Text(16);
  return r;
}

template <typename Row>
Credential ReadCredentialRow(const Row& s) {
  Credential c;
  c.id = s.Text(0);
  c.project_id = s.Text(1);
  c.token = s.Text(2);
  c.state = ParseCredentialState(s.Text(3)).value_or(CredentialState::kRevoked);  // CHECKed
  c.created_ms = s.Int(4);
  c.activated_ms = s.Int(5);
  c.revoked_ms = s.Int(6);
  return c;
}

template <typename Row>
HistoryEntry ReadHistoryRow(const Row& s) {
  HistoryEntry h;
  h.seq = s.Int(0);
  h.project_id = s.Text(1);
  h.at_ms = s.Int(2);
  h.kind = s.Text(3);
  h.generation = s.Int(4);
  h.summary = s.Text(5);
  h.detail_json = s.Text(6);
  return h;
}

}  // namespace steward::store
