// Shards: how records are shared among several replicas (docs/design.md §10, docs/operations.md
// "Several replicas"). A record belongs to one of a fixed number of virtual shards (ShardOf, from
// its id alone, so every replica computes the same); a shard belongs to one live replica
// (AssignShards, rendezvous hashing over the replicas' names, so adding or losing a replica moves
// only the shards it wins or held). Pure functions; any thread.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace steward::engine {

// On every object Steward renders in sharded mode (EngineConfig::shards > 0): the shard of the
// record it belongs to, in decimal. Informers select on it.
inline constexpr std::string_view kShardLabel = "steward.io/shard";
inline constexpr int kMaxShards = 4096;

// 64-bit FNV-1a of `data`: stable across builds, platforms and releases (it decides where
// records live; changing it would move every record).
uint64_t Fnv1a64(std::string_view data);

// The shard of record `id` among `shards` (>= 1): FNV-1a of the id mod shards.
int ShardOf(std::string_view id, int shards);

// Rendezvous (highest-random-weight) assignment: for each shard 0..shards-1, the name in
// `replicas` with the highest score Fnv1a64("<shard>/<name>") (ties: the smaller name). An
// empty `replicas` assigns "" to every shard. Duplicates are harmless.
std::vector<std::string> AssignShards(int shards, const std::vector<std::string>& replicas);

// "steward.io/shard in (0,5,17)" for a non-empty set (label selector syntax).
std::string ShardSelector(const std::set<int>& shards);

}  // namespace steward::engine
