#include "engine/model/shard.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace steward::engine {
namespace {

TEST(ShardTest, ShardOfIsStableAcrossBuilds) {
  // FNV-1a 64 reference values: a change here moves every stored record to another shard.
  EXPECT_EQ(Fnv1a64(""), 14695981039346656037ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(ShardOf("a", 64), static_cast<int>(0xaf63dc4c8601ec8cull % 64));
  EXPECT_EQ(ShardOf("p-1", 64), ShardOf("p-1", 64));
  EXPECT_EQ(ShardOf("anything", 1), 0);
}

TEST(ShardTest, ShardOfSpreadsIdsEvenly) {
  std::vector<int> counts(64);
  for (int i = 0; i < 64000; ++i) ++counts[ShardOf("project-" + std::to_string(i), 64)];
  for (int c : counts) {
    EXPECT_GT(c, 800);  // 1000 expected per shard
    EXPECT_LT(c, 1200);
  }
}

int Moved(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  int moved = 0;
  for (size_t i = 0; i < a.size(); ++i) moved += a[i] != b[i] ? 1 : 0;
  return moved;
}

TEST(ShardTest, RendezvousMovesOnlyTheAddedReplicasShards) {
  const auto three = AssignShards(64, {"steward-0", "steward-1", "steward-2"});
  const auto four = AssignShards(64, {"steward-0", "steward-1", "steward-2", "steward-3"});
  int to_new = 0;
  for (int s = 0; s < 64; ++s) {
    if (three[s] != four[s]) {
      EXPECT_EQ(four[s], "steward-3") << "shard " << s << " moved between old replicas";
      ++to_new;
    }
  }
  EXPECT_EQ(Moved(three, four), to_new);
  EXPECT_GT(to_new, 6);  // about 16 of 64
  EXPECT_LT(to_new, 28);
  // The order of the names does not matter.
  EXPECT_EQ(three, AssignShards(64, {"steward-2", "steward-0", "steward-1"}));
}

TEST(ShardTest, RendezvousMovesOnlyTheLostReplicasShards) {
  const auto three = AssignShards(64, {"steward-0", "steward-1", "steward-2"});
  const auto two = AssignShards(64, {"steward-0", "steward-2"});
  std::map<std::string, int> held;
  for (int s = 0; s < 64; ++s) {
    ++held[three[s]];
    if (three[s] != "steward-1") {
      EXPECT_EQ(two[s], three[s]) << "shard " << s << " moved but its owner is still there";
    } else {
      EXPECT_NE(two[s], "steward-1");
    }
  }
  EXPECT_EQ(Moved(three, two), held["steward-1"]);
  for (const auto& [name, n] : held) {
    EXPECT_GT(n, 10) << name;  // about 21 each
    EXPECT_LT(n, 34) << name;
  }
}

TEST(ShardTest, NoReplicasAssignsNobodyAndSelectorListsShards) {
  EXPECT_EQ(AssignShards(3, {}), (std::vector<std::string>{"", "", ""}));
  EXPECT_EQ(ShardSelector({3, 0, 17}), "steward.io/shard in (0,3,17)");
}

}  // namespace
}  // namespace steward::engine
