// MQTT schema agent specs: parsing, canonical form, the name FlowFuse gives them, their env.
#include "engine/model/agent.h"

#include <gtest/gtest.h>

namespace steward::engine {
namespace {

TEST(AgentSpecTest, ATokenGoesToTheInputAndOnlyItsFingerprintToTheSpec) {
  CredentialsInput input;
  auto spec = ParseAgentSpec(
      Json{{"team", "AbC12"}, {"broker", "XyZ9"}, {"credentials", {{"token", "ffbt_secret"}}}},
      "spec", &input);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(input.mode, CredentialsInput::Mode::kSupplied);
  EXPECT_EQ(input.values.env.at("FORGE_TEAM_TOKEN"), "ffbt_secret");
  ASSERT_TRUE(spec->credentials.has_value());
  EXPECT_EQ(spec->credentials->keys, std::vector<std::string>{"FORGE_TEAM_TOKEN"});
  const Json stored = ToJson(*spec);
  EXPECT_EQ(DumpJson(stored).find("ffbt_secret"), std::string::npos);
  // The stored form parses back equal (without an input: no values accepted).
  auto again = ParseAgentSpec(stored);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *spec);
  EXPECT_EQ(*AgentName(*spec), "mqtt-schema-agent-abc12-xyz9");
}

TEST(AgentSpecTest, BadSpecsNameTheField) {
  struct Case {
    Json spec;
    std::string message;
  };
  const Case cases[] = {
      {Json{{"broker", "b"}}, "spec.team: is required"},
      {Json{{"team", "t"}}, "spec.broker: is required"},
      {Json{{"team", "t"}, {"broker", "b"}, {"image", "x"}}, "spec.image: unknown field"},
      {Json{{"team", "t t"}, {"broker", "b"}},
       "spec.team: must consist of letters, digits, "
       "'_' and '-'"},
      {Json{{"team", "t"}, {"broker", "b"}, {"credentials", Json::object()}},
       "spec.credentials.token: is required: an agent runs with the token its platform issues"},
      {Json{{"team", "t"}, {"broker", "b"}, {"credentials", {{"token", "a b"}}}},
       "spec.credentials.token: must be printable ASCII without spaces (the value is not "
       "shown)"},
      {Json{{"team", "t"},
            {"broker", "b"},
            {"credentials", {{"fingerprint", "0123456789abcdef"}, {"keys", {"FORGE_CLIENT_ID"}}}}},
       "spec.credentials.keys[0]: must be one of the FORGE_* names of supplied credentials"},
  };
  for (const Case& c : cases) {
    CredentialsInput input;
    auto spec = ParseAgentSpec(c.spec, "spec", &input);
    ASSERT_FALSE(spec.ok()) << c.spec.dump();
    EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(spec.status().message(), c.message) << c.spec.dump();
  }
  // Stored JSON never holds a token.
  auto stored =
      ParseAgentSpec(Json{{"team", "t"}, {"broker", "b"}, {"credentials", {{"token", "x"}}}});
  EXPECT_EQ(stored.status().message(), "spec.credentials: holds a token, which is never stored");
}

TEST(AgentSpecTest, TheNameMustBeALabel) {
  AgentSpec spec{"Team_1", "b", std::nullopt};
  EXPECT_EQ(AgentName(spec).status().code(), StatusCode::kInvalidArgument);
  spec.team = std::string(50, 'a');
  EXPECT_FALSE(AgentName(spec).ok());  // over 63 characters in all
  spec.team = "t";
  spec.broker = std::string(kTeamBroker);
  EXPECT_EQ(*AgentName(spec), "mqtt-schema-agent-t-team-broker");
}

TEST(AgentSpecTest, TheEnvIsTheDriversAndTheTeamBrokerWaitsLonger) {
  EngineConfig config;
  config.forge_url = "https://forge.example.com";
  AgentSpec spec{"T1", "B2", std::nullopt};
  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(AgentEnv(config, spec), (Env{{"TZ", "Europe/London"},
                                         {"FORGE_URL", "https://forge.example.com"},
                                         {"FORGE_BROKER_ID", "B2"},
                                         {"FORGE_TEAM_ID", "T1"}}));
  spec.broker = std::string(kTeamBroker);
  EXPECT_EQ(AgentEnv(config, spec).back(),
            (std::pair<std::string, std::string>{"FORGE_TIMEOUT", "24"}));
}

}  // namespace
}  // namespace steward::engine
