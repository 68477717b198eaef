#include "engine/reconciler/start_gate.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace steward::engine {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using Ids = std::vector<std::string>;

TEST(StartGateTest, NoCapAdmitsEveryStartAndTracksNothing) {
  FakeClock clock;
  StartGate gate(0, minutes(2), clock);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(gate.Admit("p" + std::to_string(i), "t1").admitted);
  EXPECT_EQ(gate.under_way(), 0u);
  EXPECT_TRUE(gate.End("p0").empty());
}

TEST(StartGateTest, StartsBeyondTheCapWaitAndTakeFreedSlotsInTeamTurns) {
  FakeClock clock;
  StartGate gate(2, minutes(2), clock);
  EXPECT_TRUE(gate.Admit("a1", "a").admitted);
  EXPECT_TRUE(gate.Admit("a2", "a").admitted);
  EXPECT_TRUE(gate.Admit("a2", "a").admitted) << "its next step: its own slot";
  for (const char* id : {"a3", "a4", "a5"}) EXPECT_FALSE(gate.Admit(id, "a").admitted) << id;
  auto b = gate.Admit("b1", "b");
  EXPECT_FALSE(b.admitted);
  EXPECT_EQ(b.under_way, 2u);
  EXPECT_EQ(b.waiting, 4u);
  EXPECT_FALSE(gate.Admit("a3", "a").admitted) << "asking again does not jump the line";
  // Each freed slot goes to the next waiting start, the teams taking turns: a3, then b1, then
  // a4 although b1 asked after it.
  EXPECT_EQ(gate.End("a1"), Ids{"a3"});
  EXPECT_EQ(gate.End("a2"), Ids{"b1"});
  EXPECT_TRUE(gate.Admit("a3", "a").admitted);
  EXPECT_TRUE(gate.Admit("b1", "b").admitted);
  EXPECT_FALSE(gate.Admit("c1", "c").admitted) << "no slot taken by a newcomer while others wait";
  EXPECT_EQ(gate.End("a3"), Ids{"a4"});
  EXPECT_EQ(gate.End("b1"), Ids{"c1"});
  // A waiting start that ends (suspended before its turn) leaves the line.
  EXPECT_TRUE(gate.End("a5").empty());
  EXPECT_EQ(gate.waiting(), 0u);
  EXPECT_EQ(gate.End("a4"), Ids{});
  EXPECT_EQ(gate.End("c1"), Ids{});
  EXPECT_EQ(gate.under_way(), 0u);
  EXPECT_TRUE(gate.Admit("d1", "d").admitted);
}

TEST(StartGateTest, AStuckStartGivesItsSlotUpAfterTheTtl) {
  FakeClock clock;
  StartGate gate(1, minutes(2), clock);
  EXPECT_TRUE(gate.Admit("stuck", "a").admitted);
  EXPECT_FALSE(gate.Admit("next", "b").admitted);
  clock.Advance(seconds(119));
  EXPECT_FALSE(gate.Admit("next", "b").admitted);
  clock.Advance(seconds(1));
  auto a = gate.Admit("other", "c");
  EXPECT_FALSE(a.admitted) << "the freed slot went to the one waiting";
  EXPECT_EQ(a.wake, Ids{"next"});
  EXPECT_TRUE(gate.Admit("next", "b").admitted);
}

}  // namespace
}  // namespace steward::engine
