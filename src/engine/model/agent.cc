#include "engine/model/agent.h"

#include <utility>
#include <vector>

#include "common/ascii.h"
#include "common/fields.h"
#include "engine/model/value_rules.h"

namespace steward::engine {

StatusOr<AgentSpec> ParseAgentSpec(const Json& j, std::string_view path, CredentialsInput* input) {
  ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(j, std::string(path)));
  RETURN_IF_ERROR(f.OnlyKnown({"team", "broker", "credentials"}));
  AgentSpec spec;
  for (const char* key : {"team", "broker"}) {
    if (f.Find(key) == nullptr) return InvalidField(f.PathOf(key), "is required");
  }
  RETURN_IF_ERROR(f.String("team", &spec.team));
  RETURN_IF_ERROR(internal::CheckTeam(spec.team, f.PathOf("team")));
  RETURN_IF_ERROR(f.String("broker", &spec.broker));
  RETURN_IF_ERROR(internal::CheckTeam(spec.broker, f.PathOf("broker")));
  if (input != nullptr) input->mode = CredentialsInput::Mode::kKeep;
  if (const Json* credentials = f.Find("credentials"); credentials != nullptr) {
    RETURN_IF_ERROR(internal::ParseAgentCredentials(*credentials, f.PathOf("credentials"), input,
                                                    &spec.credentials));
  }
  return spec;
}

Json ToJson(const AgentSpec& spec) {
  Json j = {{"team", spec.team}, {"broker", spec.broker}};
  if (spec.credentials) {
    j["credentials"] = {{"fingerprint", spec.credentials->fingerprint},
                        {"keys", spec.credentials->keys}};
  }
  return j;
}

StatusOr<std::string> AgentName(const AgentSpec& spec) {
  std::string name = "mqtt-schema-agent-" + AsciiLower(spec.team) + "-" + AsciiLower(spec.broker);
  if (!IsDns1123Label(name)) {
    return InvalidField("spec", "the agent's name " + name +
                                    " (mqtt-schema-agent-<team>-<broker>, as FlowFuse names it) "
                                    "must be a DNS-1123 label: at most 63 of [a-z0-9-]");
  }
  return name;
}

std::vector<std::pair<std::string, std::string>> AgentEnv(const EngineConfig& config,
                                                          const AgentSpec& spec) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"TZ", config.time_zone},
      {"FORGE_URL", config.forge_url},
      {"FORGE_BROKER_ID", spec.broker},
      {"FORGE_TEAM_ID", spec.team},
  };
  if (spec.broker == kTeamBroker) env.emplace_back("FORGE_TIMEOUT", "24");  // as a string
  return env;
}

}  // namespace steward::engine
