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

// kSupply puts new platform-issued credentials (spec.credentials; for an agent, a new token);
// kFiles and kResources are instance operations (a directory made, listed and removed through the
// launcher's files API; the merged resources), answered 2xx when a pod is ready and 409/503 when
// none can answer; kStatus and kCommand are an MQTT schema agent's (its status, a start/restart/
// stop command on its own API), answered the same way. kMove (runs over several clusters only)
// moves the project to a random cluster in a random order, dropping its storage.
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
  kResources,
  kStatus,
  kCommand,
  kMove
};
std::string_view OpName(OpKind kind);

struct PlannedOp {
  OpKind kind = OpKind::kCreate;
  std::chrono::milliseconds gap{0};  // pause before the request is sent
  bool wait = false;                 // sent with ?wait= (answered when done)
  bool overlap = false;              // sent from another thread, not awaited before the next op
  bool start = false;                // create only: "start": true
  std::string image;                 // create and change-stack: the stack image
  std::string command;               // kCommand: start | restart | stop
  int cluster = 0;                   // kMove: the cluster's index (Processes::ClusterName)
  std::string order;                 // kMove: stopFirst | startFirst
};

struct PlanOptions {
  int ops = 20;                     // operations per project (the first is always a create)
  int max_gap_ms = 1500;            // gaps are uniform in [0, max_gap_ms]
  double wait_rate = 0.5;           // share of operations sent with ?wait=
  double overlap_rate = 0.15;       // share sent concurrently with the next one
  double failing_image_rate = 0.1;  // share of images the hostile profile fails to pull
  int clusters = 1;                 // more than one: projects are moved between them too
};

// Images a cluster pulls, and one every built-in profile fails (`*:fail`).
inline constexpr std::string_view kGoodImages[] = {"nodered/node-red:3.1", "nodered/node-red:4.0",
                                                   "nodered/node-red:4.1"};
inline constexpr std::string_view kFailingImage = "nodered/node-red:fail";

// The project name for index `i` ("t-0007").
std::string ProjectName(int index);

std::vector<PlannedOp> PlanProject(uint64_t seed, int project_index, const PlanOptions& options);

// The MQTT schema agents of a run belong to team kAgentTeam, one per broker "b<index>": the agent
// for index `i` is "mqtt-schema-agent-torture-b0007" (AgentName), its broker "b0007".
inline constexpr std::string_view kAgentTeam = "torture";
std::string AgentBroker(int index);
std::string AgentName(int index);
bool IsAgentName(std::string_view name);

// An agent's sequence: a create (PUT with a token; started or not) after every delete, then
// start, suspend (stop), restart, supply (a new token), delete, status and command (no stack:
// an agent's image is the engine's). Independent of PlanProject's sequence for the same index.
std::vector<PlannedOp> PlanAgent(uint64_t seed, int agent_index, const PlanOptions& options);

}  // namespace steward::torture
