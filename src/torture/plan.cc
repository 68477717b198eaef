#include "torture/plan.h"

#include <cstdio>
#include <random>

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
  }
  return "?";
}

std::string ProjectName(int index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "t-%04d", index);
  return buf;
}

std::vector<PlannedOp> PlanProject(uint64_t seed, int project_index, const PlanOptions& options) {
  // One generator per project, seeded from both, so a project's sequence does not depend on how
  // many projects the run has.
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(project_index)};
  std::mt19937_64 rng(seq);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto chance = [&](double p) { return unit(rng) < p; };
  auto image = [&]() -> std::string {
    if (chance(options.failing_image_rate)) return std::string(kFailingImage);
    return std::string(kGoodImages[rng() % std::size(kGoodImages)]);
  };

  std::vector<PlannedOp> plan;
  // Whether the project exists as the plan intends it (overlapping operations may reorder; a
  // restart of a suspended project is refused with 409, which is part of the workload).
  bool exists = false;
  for (int i = 0; i < options.ops; ++i) {
    PlannedOp op;
    if (!exists) {
      op.kind = OpKind::kCreate;
      op.start = chance(0.7);
      op.image = image();
      exists = true;
    } else {
      // Weights: start 15, suspend 15, restart 12, rotate 12, change-stack 15, delete 8,
      // supply-credentials 8, files 6, resources 6.
      static constexpr struct {
        OpKind kind;
        int weight;
      } kWeights[] = {{OpKind::kStart, 15},  {OpKind::kSuspend, 15},     {OpKind::kRestart, 12},
                      {OpKind::kRotate, 12}, {OpKind::kChangeStack, 15}, {OpKind::kDelete, 8},
                      {OpKind::kSupply, 8},  {OpKind::kFiles, 6},        {OpKind::kResources, 6}};
      int total = 0;
      for (const auto& w : kWeights) total += w.weight;
      int pick = static_cast<int>(rng() % static_cast<uint64_t>(total));
      for (const auto& w : kWeights) {
        if (pick < w.weight) {
          op.kind = w.kind;
          break;
        }
        pick -= w.weight;
      }
      if (op.kind == OpKind::kChangeStack || op.kind == OpKind::kSupply) op.image = image();
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

}  // namespace steward::torture
