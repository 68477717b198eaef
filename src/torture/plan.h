// The workload of a torture run: for each project a seeded random sequence of operations, fired
// through Steward's REST API with random gaps, some overlapping the next one on the same project.
// PlanProject is a pure function of (seed, project index, options): the same seed replays the
// same sequence.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace steward::torture {

// kSupply puts new platform-issued credentials (spec.credentials); kFiles and kResources are
// instance operations (a directory made, listed and removed through the launcher's files API;
// the merged resources), answered 2xx when a pod is ready and 409/503 when none can answer.
enum class OpKind {
  kCreate,
  kStart,
  kSuspend,
  kRestart,
  kRotate,
  kChangeStack,
  kDelete,
  kSupply,
  kFiles,
  kResources
};
std::string_view OpName(OpKind kind);

struct PlannedOp {
  OpKind kind = OpKind::kCreate;
  std::chrono::milliseconds gap{0};  // pause before the request is sent
  bool wait = false;                 // sent with ?wait= (answered when done)
  bool overlap = false;              // sent from another thread, not awaited before the next op
  bool start = false;                // create only: "start": true
  std::string image;                 // create and change-stack: the stack image
};

struct PlanOptions {
  int ops = 20;                     // operations per project (the first is always a create)
  int max_gap_ms = 1500;            // gaps are uniform in [0, max_gap_ms]
  double wait_rate = 0.5;           // share of operations sent with ?wait=
  double overlap_rate = 0.15;       // share sent concurrently with the next one
  double failing_image_rate = 0.1;  // share of images the hostile profile fails to pull
};

// Images a cluster pulls, and one every built-in profile fails (`*:fail`).
inline constexpr std::string_view kGoodImages[] = {"nodered/node-red:3.1", "nodered/node-red:4.0",
                                                   "nodered/node-red:4.1"};
inline constexpr std::string_view kFailingImage = "nodered/node-red:fail";

// The project name for index `i` ("t-0007").
std::string ProjectName(int index);

std::vector<PlannedOp> PlanProject(uint64_t seed, int project_index, const PlanOptions& options);

}  // namespace steward::torture
