// MQTT schema agents: the second kind of workload Steward manages (store::RecordKind::kAgent).
// FlowFuse runs one per team broker (its driver's startBrokerAgent): a Deployment and a Service
// named mqtt-schema-agent-<team>-<broker> whose pod reports the topics and payload schemas it
// sees on the broker to the platform, with the token the platform issued (FORGE_TEAM_TOKEN).
// Steward gives agents the lifecycle of projects: intent, ordered create, verified readiness,
// teardown waiting for absence, adoption, drift repair, history.
//
// Spec (JSON): {"team": "<team hashid>", "broker": "<broker hashid>" | "team-broker",
//               "credentials": {"token": "..."} (write-only) | {"fingerprint", "keys"}}.
// Stateless functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "engine/model/project.h"

namespace steward::engine {

// The broker id of a team's own broker (FlowFuse's TeamBrokerAgent).
inline constexpr std::string_view kTeamBroker = "team-broker";

struct AgentSpec {
  std::string team;    // the team's hashid as the platform spells it: 1..63 of [A-Za-z0-9_-]
  std::string broker;  // the broker's hashid (same rule), or kTeamBroker
  // The supplied token (FORGE_TEAM_TOKEN). Required in a request that creates an agent.
  std::optional<CredentialsRef> credentials;

  bool operator==(const AgentSpec&) const = default;
};

// Parses and validates an agent spec (unknown fields refused). With `input` (a request) the
// token goes to `input`; without it (stored JSON) only the fingerprint form is accepted. An
// absent credentials section leaves spec.credentials nullopt and input->mode kKeep.
StatusOr<AgentSpec> ParseAgentSpec(const Json& j, std::string_view path = "spec",
                                   CredentialsInput* input = nullptr);
// Canonical JSON (sorted keys): what the store keeps; parses back equal.
Json ToJson(const AgentSpec& spec);

// "mqtt-schema-agent-<team lowercased>-<broker lowercased>", the name FlowFuse's driver gives
// the agent's Deployment, Service and pod label `name` (and so the agent's record name).
// kInvalidArgument (field "spec") when that is not a DNS-1123 label.
StatusOr<std::string> AgentName(const AgentSpec& spec);

// The environment an agent's container gets besides FORGE_TEAM_TOKEN (from its Secret): TZ,
// FORGE_URL, FORGE_BROKER_ID, FORGE_TEAM_ID and, for the team broker, FORGE_TIMEOUT=24, as
// FlowFuse's driver sets them. Ordered as the driver pushes them.
std::vector<std::pair<std::string, std::string>> AgentEnv(const EngineConfig& config,
                                                          const AgentSpec& spec);

}  // namespace steward::engine
