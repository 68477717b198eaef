#include "torture/plan.h"

#include <cstdio>
#include <random>
#include <vector>

namespace steward::torture {

std::string_view OpName(OpKind kind) {
  switch (kind) {
    case OpKind::kCreate:
      return "create";
    case OpKind::kStart:
      return "start";
    case OpKind::kSuspend:
      return "suspend";
    case OpKind::kRestart:
      return "restart";
    case OpKind::kRotate:
      return "rotate";
    case OpKind::kChangeStack:
      return "change-stack";
    case OpKind::kDelete:
      return "delete";
    case OpKind::kSupply:
      return "supply-credentials";
    case OpKind::kFiles:
      return "files";
    case OpKind::kResources:
      return "resources";
    case OpKind::kMove:
      return "move";
    case OpKind::kStatus:
      return "status";
    case OpKind::kCommand:
      return "command";
  }
  return "?";
}

std::string ProjectName(int index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "t-%04d", index);
  return buf;
}

std::string AgentBroker(int index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "b%04d", index);
  return buf;
}

std::string AgentName(int index) {
  return "mqtt-schema-agent-" + std::string(kAgentTeam) + "-" + AgentBroker(index);
}

bool IsAgentName(std::string_view name) { return name.starts_with("mqtt-schema-agent-"); }

namespace {

struct Weight {
  OpKind kind;
  int weight;
};

// One sequence: a create whenever the plan has no project (first, and after each delete), else
// an operation drawn by weight; `salt` keeps projects' and agents' generators apart.
std::vector<PlannedOp> Plan(uint64_t seed, int index, uint32_t salt, const PlanOptions& options,
                            const std::vector<Weight>& weights, bool images) {
  // One generator per sequence, seeded from both, so a sequence does not depend on how many
  // projects or agents the run has. (Projects' salt 0 is left out: their seeds replay as before.)
  std::vector<uint32_t> words = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                                 static_cast<uint32_t>(index)};
  if (salt != 0) words.push_back(salt);
  std::seed_seq seq(words.begin(), words.end());
  std::mt19937_64 rng(seq);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto chance = [&](double p) { return unit(rng) < p; };
  auto image = [&]() -> std::string {
    if (chance(options.failing_image_rate)) return std::string(kFailingImage);
    return std::string(kGoodImages[rng() % std::size(kGoodImages)]);
  };
  static constexpr std::string_view kCommands[] = {"start", "restart", "stop"};

  std::vector<PlannedOp> plan;
  // Whether the project exists as the plan intends it (overlapping operations may reorder; a
  // restart of a suspended project is refused with 409, which is part of the workload).
  bool exists = false;
  for (int i = 0; i < options.ops; ++i) {
    PlannedOp op;
    if (!exists) {
      op.kind = OpKind::kCreate;
      op.start = chance(0.7);
      if (images) op.image = image();
      exists = true;
    } else {
      int total = 0;
      for (const auto& w : weights) total += w.weight;
      int pick = static_cast<int>(rng() % static_cast<uint64_t>(total));
      for (const auto& w : weights) {
        if (pick < w.weight) {
          op.kind = w.kind;
          break;
        }
        pick -= w.weight;
      }
      if (images && (op.kind == OpKind::kChangeStack || op.kind == OpKind::kSupply)) {
        op.image = image();
      }
      if (op.kind == OpKind::kCommand) op.command = kCommands[rng() % std::size(kCommands)];
      if (op.kind == OpKind::kMove) {
        op.cluster = static_cast<int>(rng() % static_cast<uint64_t>(options.clusters));
        op.order = chance(0.5) ? "startFirst" : "stopFirst";
      }
      if (op.kind == OpKind::kDelete) exists = false;
    }
    op.gap = std::chrono::milliseconds(
        options.max_gap_ms > 0 ? static_cast<int64_t>(rng() % (options.max_gap_ms + 1)) : 0);
    op.wait = chance(options.wait_rate);
    // A create is never overlapped: the next operation needs the project to exist.
    op.overlap = op.kind != OpKind::kCreate && !op.wait && chance(options.overlap_rate);
    plan.push_back(std::move(op));
  }
  return plan;
}

}  // namespace

std::vector<PlannedOp> PlanProject(uint64_t seed, int project_index, const PlanOptions& options) {
  std::vector<Weight> weights = {
      {OpKind::kStart, 15},  {OpKind::kSuspend, 15},     {OpKind::kRestart, 12},
      {OpKind::kRotate, 12}, {OpKind::kChangeStack, 15}, {OpKind::kDelete, 8},
      {OpKind::kSupply, 8},  {OpKind::kFiles, 6},        {OpKind::kResources, 6}};
  // With one cluster the weights (and so every seed's sequence) are as they were.
  if (options.clusters > 1) weights.push_back({OpKind::kMove, 8});
  return Plan(seed, project_index, 0, options, weights, true);
}

std::vector<PlannedOp> PlanAgent(uint64_t seed, int agent_index, const PlanOptions& options) {
  static const std::vector<Weight> kWeights = {
      {OpKind::kStart, 15}, {OpKind::kSuspend, 15}, {OpKind::kRestart, 12}, {OpKind::kSupply, 12},
      {OpKind::kDelete, 8}, {OpKind::kStatus, 12},  {OpKind::kCommand, 10}};
  return Plan(seed, agent_index, 0xa6e47u, options, kWeights, false);
}

}  // namespace steward::torture
