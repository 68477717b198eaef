// What every Store implementation shares (SQLite, PostgreSQL): validation and the wording of
// the errors callers see, so that the stores answer alike. Not for the store's callers.
#pragma once

#include <cstdint>
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
// The kAborted of a fenced write: `fence` no longer holds; `now` is the shard as stored.
Status FencedOut(const Fence& fence, const ShardOwner& now);
// The kAborted of an AcquireShard whose expected epoch is not the stored one.
Status AcquireRaced(int shard, int64_t expected_epoch, const ShardOwner& now);

}  // namespace steward::store
