#include "engine/model/shard.h"

namespace steward::engine {

uint64_t Fnv1a64(std::string_view data) {
  uint64_t h = 14695981039346656037ull;  // FNV offset basis
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;  // FNV prime
  }
  return h;
}

int ShardOf(std::string_view id, int shards) {
  if (shards <= 1) return 0;
  return static_cast<int>(Fnv1a64(id) % static_cast<uint64_t>(shards));
}

std::vector<std::string> AssignShards(int shards, const std::vector<std::string>& replicas) {
  std::vector<std::string> owners(shards > 0 ? shards : 0);
  for (int s = 0; s < shards; ++s) {
    uint64_t best = 0;
    const std::string* winner = nullptr;
    const std::string prefix = std::to_string(s) + "/";
    for (const std::string& name : replicas) {
      // A second mixing step: FNV-1a alone scores names that share a long prefix too alike.
      uint64_t score = Fnv1a64(prefix + name);
      score ^= score >> 33;
      score *= 0xff51afd7ed558ccdull;
      score ^= score >> 33;
      if (winner == nullptr || score > best || (score == best && name < *winner)) {
        best = score;
        winner = &name;
      }
    }
    if (winner != nullptr) owners[s] = *winner;
  }
  return owners;
}

std::string ShardSelector(const std::set<int>& shards) {
  std::string out = std::string(kShardLabel) + " in (";
  bool first = true;
  for (int s : shards) {
    if (!first) out += ",";
    first = false;
    out += std::to_string(s);
  }
  return out + ")";
}

}  // namespace steward::engine
