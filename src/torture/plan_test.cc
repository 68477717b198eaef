#include "torture/plan.h"

#include <gtest/gtest.h>

#include <set>

namespace steward::torture {
namespace {

std::string Render(const std::vector<PlannedOp>& plan) {
  std::string s;
  for (const auto& op : plan) {
    s += std::string(OpName(op.kind)) + "/" + std::to_string(op.gap.count()) + "/" +
         (op.wait ? "w" : "") + (op.overlap ? "o" : "") + (op.start ? "s" : "") + op.image +
         op.command + " ";
  }
  return s;
}

TEST(PlanTest, TheSameSeedReplaysTheSameSequenceAndOtherSeedsDiffer) {
  PlanOptions o;
  EXPECT_EQ(Render(PlanProject(7, 3, o)), Render(PlanProject(7, 3, o)));
  EXPECT_NE(Render(PlanProject(7, 3, o)), Render(PlanProject(8, 3, o)));
  EXPECT_NE(Render(PlanProject(7, 3, o)), Render(PlanProject(7, 4, o)));
}

TEST(PlanTest, SequencesStartWithACreateAndRecreateAfterEachDelete) {
  PlanOptions o;
  o.ops = 200;
  std::set<OpKind> kinds;
  int overlaps = 0, waits = 0, failing = 0;
  for (int project = 0; project < 20; ++project) {
    auto plan = PlanProject(1, project, o);
    ASSERT_EQ(plan.size(), 200u);
    EXPECT_EQ(plan.front().kind, OpKind::kCreate);
    for (size_t i = 0; i < plan.size(); ++i) {
      const auto& op = plan[i];
      kinds.insert(op.kind);
      if (i > 0 && plan[i - 1].kind == OpKind::kDelete) {
        EXPECT_EQ(op.kind, OpKind::kCreate) << "op " << i << " of project " << project;
      }
      EXPECT_LE(op.gap.count(), o.max_gap_ms);
      EXPECT_FALSE(op.overlap && op.wait);
      EXPECT_FALSE(op.overlap && op.kind == OpKind::kCreate);
      if (op.kind == OpKind::kCreate || op.kind == OpKind::kChangeStack ||
          op.kind == OpKind::kSupply) {
        EXPECT_FALSE(op.image.empty());
        if (op.image == kFailingImage) ++failing;
      } else {
        EXPECT_TRUE(op.image.empty());
      }
      overlaps += op.overlap;
      waits += op.wait;
    }
  }
  EXPECT_EQ(kinds.size(), 10u);  // every kind of a project's operations occurs
  // 4000 operations: the configured shares, loosely.
  EXPECT_GT(waits, 1600);
  EXPECT_LT(waits, 2400);
  EXPECT_GT(overlaps, 100);
  EXPECT_GT(failing, 20);
}

TEST(PlanTest, AgentSequencesHaveTheirOwnOperationsAndSeeds) {
  PlanOptions o;
  o.ops = 200;
  std::set<OpKind> kinds;
  std::set<std::string> commands;
  for (int agent = 0; agent < 10; ++agent) {
    auto plan = PlanAgent(1, agent, o);
    ASSERT_EQ(plan.size(), 200u);
    EXPECT_EQ(plan.front().kind, OpKind::kCreate);
    for (size_t i = 0; i < plan.size(); ++i) {
      const auto& op = plan[i];
      kinds.insert(op.kind);
      if (i > 0 && plan[i - 1].kind == OpKind::kDelete) {
        EXPECT_EQ(op.kind, OpKind::kCreate);
      }
      EXPECT_TRUE(op.image.empty()) << "an agent's image is the engine's";
      if (op.kind == OpKind::kCommand) {
        commands.insert(op.command);
      } else {
        EXPECT_TRUE(op.command.empty());
      }
    }
  }
  // Create, start, suspend, restart, supply, delete, status, command; nothing of a project's own.
  EXPECT_EQ(kinds, (std::set<OpKind>{OpKind::kCreate, OpKind::kStart, OpKind::kSuspend,
                                     OpKind::kRestart, OpKind::kSupply, OpKind::kDelete,
                                     OpKind::kStatus, OpKind::kCommand}));
  EXPECT_EQ(commands, (std::set<std::string>{"start", "restart", "stop"}));
  EXPECT_EQ(Render(PlanAgent(7, 3, o)), Render(PlanAgent(7, 3, o)));
  EXPECT_NE(Render(PlanAgent(7, 3, o)), Render(PlanAgent(7, 4, o)));
}

// Over several clusters projects are moved too, to each cluster and in both orders; over one,
// never (and the weights are as before, so every seed replays as it did).
TEST(PlanTest, ProjectsAreMovedOnlyOverSeveralClusters) {
  PlanOptions one;
  one.ops = 200;
  PlanOptions two = one;
  two.clusters = 2;
  std::set<int> clusters;
  std::set<std::string> orders;
  for (int i = 0; i < 5; ++i) {
    for (const PlannedOp& op : PlanProject(11, i, one)) EXPECT_NE(op.kind, OpKind::kMove);
    for (const PlannedOp& op : PlanProject(11, i, two)) {
      if (op.kind != OpKind::kMove) continue;
      clusters.insert(op.cluster);
      orders.insert(op.order);
    }
    EXPECT_EQ(Render(PlanAgent(11, i, two)), Render(PlanAgent(11, i, one)));  // never moved
  }
  EXPECT_EQ(clusters, (std::set<int>{0, 1}));
  EXPECT_EQ(orders, (std::set<std::string>{"startFirst", "stopFirst"}));
}

TEST(PlanTest, AgentNamesAreTheDriversAndNeverAProjectsName) {
  EXPECT_EQ(AgentName(7), "mqtt-schema-agent-torture-b0007");
  EXPECT_EQ(AgentBroker(7), "b0007");
  EXPECT_TRUE(IsAgentName(AgentName(123)));
  EXPECT_FALSE(IsAgentName(ProjectName(123)));
}

TEST(PlanTest, ProjectNamesAreValidAndOrdered) {
  EXPECT_EQ(ProjectName(7), "t-0007");
  EXPECT_EQ(ProjectName(12345), "t-12345");
  EXPECT_LT(ProjectName(9), ProjectName(10));
}

}  // namespace
}  // namespace steward::torture
