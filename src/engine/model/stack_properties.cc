// The stack properties FlowFuse's platform asks its driver for: the schema its stack editor
// validates against (the driver's init() answer) and the default stack.
#include "engine/model/project.h"

namespace steward::engine {

Json StackPropertySchema(bool placement) {
  Json schema{
      {"cpu",
       {{"label", "CPU Cores (in 1/100th units)"},
        {"validate", "^([1-9][0-9]{0,2}|1000)$"},
        {"invalidMessage",
         "Invalid value - must be a number between 1 and 1000, where 100 represents 1 CPU core"},
        {"description",
         "Defines the CPU resources each Project should receive, in units of 1/100th of a CPU "
         "core. 100 equates to 1 CPU core"}}},
      {"memory",
       {{"label", "Memory (MB)"},
        {"validate",
         "^([1-9][0-9]{0,5}|10[0-3][0-9]{4}|104[0-7][0-9]{3}|1048[0-4][0-9]{2}|"
         "10485[0-6][0-9]|104857[0-6])$"},
        {"invalidMessage", "Invalid value - must be a number between 1 and 1048576"},
        {"description",
         "How much memory the container for each Project will be granted, recommended value "
         "256"}}},
      {"container",
       {{"label", "Container Location"},
        // A first check for the editor; Steward checks the reference itself on every put.
        {"validate", "^[a-zA-Z0-9][a-zA-Z0-9._:/@+-]*$"},
        {"invalidMessage", "Invalid value - must be a Docker image"},
        {"description", "Container image location, can include a tag"}}},
  };
  if (placement) {
    // Where a new instance of the stack goes among Steward's clusters (docs/flowfuse.md
    // "Several clusters"); an instance keeps its cluster when its stack changes.
    schema["placement"] = {
        {"label", "Placement (Steward)"},
        {"validate",
         "^(auto|cluster=[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?|"
         "(?!cluster=)[A-Za-z0-9][-A-Za-z0-9_./]*=[-A-Za-z0-9_.]+"
         "(,[A-Za-z0-9][-A-Za-z0-9_./]*=[-A-Za-z0-9_.]+)*)$"},
        {"invalidMessage",
         "Invalid value - must be auto, cluster=NAME, or labels as key=value,key=value"},
        {"description",
         "Which of Steward's clusters new instances of this stack run on: auto (Steward's "
         "placement policy), cluster=NAME, or labels the cluster must carry "
         "(region=eu,tier=prod)"}};
  }
  return schema;
}

Json DefaultStackProperties(const Stack& stack) {
  Json j = {{"cpu", stack.cpu}, {"memory", stack.memory_mb}, {"container", stack.image}};
  if (!stack.env.empty()) j["env"] = stack.env;
  return j;
}

}  // namespace steward::engine
