// The REST API's request parsing and validation: what PUT /v1/projects/{name} does with its path
// segment and body before anything reaches the store (ValidateProjectName, the body's top-level
// fields, engine::ParseProjectSpec and the canonical spec the store keeps), the error mapping to
// an answer (FromStatus, the field from Status::field()), plus ?wait= (ParseDuration) and
// ?continue= (DecodeContinue); the body as an MQTT schema agent's PUT reads it; and a watch
// stream's Last-Event-ID (ParseEventId, JudgeResume).
//
// Input: line 1 the project name, line 2 the ?wait= value, line 3 the ?continue= token (also
// taken as a Last-Event-ID, as is line 1), the rest the request body.
#include <chrono>
#include <string>

#include "api/api_internal.h"
#include "common/duration.h"
#include "engine/manifests/manifests.h"
#include "engine/model/agent.h"
#include "engine/model/project.h"
#include "fuzz_util.h"

namespace steward::api {
namespace {

using fuzz::AsView;
using fuzz::TakeLine;

// An error answer must be well formed: a 4xx/5xx status, and the status's field, which the
// message starts with ("spec.stack.cpu: ...").
void CheckError(const Status& status, const char* where) {
  FUZZ_CHECK(!status.ok());
  ErrorAnswer e = FromStatus(status);
  FUZZ_CHECK(e.status >= 400 && e.status < 600);
  if (status.code() == StatusCode::kInvalidArgument) {
    FUZZ_CHECK(e.status == 400);
    FUZZ_CHECK_MSG(e.field == status.field(), std::string(where) + ": " + status.message());
    FUZZ_CHECK_MSG(e.field.empty() || status.message().starts_with(e.field + ": "),
                   std::string(where) + ": " + status.message());
  }
  std::string body = DumpJson(ErrorJson(e));
  FUZZ_CHECK(!body.empty());
}

void FuzzWait(std::string_view v) {
  auto d = ParseDuration(v);
  if (!d) return;
  FUZZ_CHECK_MSG(d->count() >= 0 && d->count() <= 1'000'000'000'000, std::string(v));
  // Its millisecond form parses back to the same duration.
  auto again = ParseDuration(std::to_string(d->count()) + "ms");
  FUZZ_CHECK_MSG(again && *again == *d, std::string(v));
}

// A watch Last-Event-ID: parsed strictly (so a parsed id is in its one canonical form), and
// judged against a few windows without trouble.
void FuzzEventId(std::string_view text) {
  auto id = ParseEventId(text);
  const ResumeVerdict v = JudgeResume(text, "b0ot", 5, 9);
  if (!id) {
    FUZZ_CHECK(v == ResumeVerdict::kMalformed);
    return;
  }
  FUZZ_CHECK_MSG(EventId(id->feed, id->position) == text, std::string(text));
  FUZZ_CHECK(id->position <= uint64_t{9223372036854775807u});
  const bool inside = id->feed == "b0ot" && id->position >= 4 && id->position <= 9;
  FUZZ_CHECK_MSG((v == ResumeVerdict::kResume) == inside, std::string(text));
  FUZZ_CHECK(JudgeResume(text, id->feed, id->position + 1, id->position) == ResumeVerdict::kResume);
}

void FuzzContinue(std::string_view token) {
  auto id = DecodeContinue(token);
  if (!id) return;
  FUZZ_CHECK_MSG(engine::ValidateProjectId(*id).ok(), *id);
  auto again = DecodeContinue(EncodeContinue(*id));
  FUZZ_CHECK_MSG(again && *again == *id, *id);
}

// The same body as PUT /v1/agents/{name} reads it (engine/model/agent.h): errors name a field
// under spec; a parsed spec's stored form holds no token, parses back equal and re-serialises
// byte for byte; the agent's name is a DNS label of FlowFuse's form, or an error.
void FuzzAgentSpec(const Json& spec_json) {
  engine::CredentialsInput input;
  auto spec = engine::ParseAgentSpec(spec_json, "spec", &input);
  if (!spec.ok()) {
    CheckError(spec.status(), "agent spec");
    FUZZ_CHECK_MSG(spec.status().field().starts_with("spec"), spec.status().message());
    return;
  }
  const std::string canonical = DumpJson(engine::ToJson(*spec));
  if (input.mode == engine::CredentialsInput::Mode::kSupplied) {
    const std::string& token = input.values.env.at("FORGE_TEAM_TOKEN");
    FUZZ_CHECK_MSG(token.size() < 16 || canonical.find(token) == std::string::npos, canonical);
  }
  auto reparsed_json = ParseJson(canonical);
  FUZZ_CHECK_MSG(reparsed_json.ok(), canonical);
  auto reparsed = engine::ParseAgentSpec(*reparsed_json, "spec");
  FUZZ_CHECK_MSG(reparsed.ok(), canonical + " -> " + reparsed.status().message());
  FUZZ_CHECK_MSG(*reparsed == *spec, canonical);
  FUZZ_CHECK_MSG(DumpJson(engine::ToJson(*reparsed)) == canonical, canonical);
  auto name = engine::AgentName(*spec);
  if (!name.ok()) {
    CheckError(name.status(), "agent name");
    return;
  }
  FUZZ_CHECK_MSG(engine::IsDns1123Label(*name) && name->starts_with("mqtt-schema-agent-"), *name);
}

void FuzzBody(std::string_view name, std::string_view text) {
  Status name_ok = engine::ValidateProjectName(name);
  if (!name_ok.ok()) CheckError(name_ok, "name");

  auto parsed = ParseJson(text);
  if (!parsed.ok()) {
    CheckError(parsed.status(), "body");
    return;
  }
  const Json& body = *parsed;
  if (!body.is_object()) return;
  for (const auto& [key, value] : body.items()) {
    if (key != "spec" && key != "id" && key != "start") return;  // unknown field: 400
  }
  auto id = body.find("id");
  if (id != body.end() && id->is_string()) {
    Status s = engine::ValidateProjectId(id->get<std::string>());
    if (!s.ok()) CheckError(s, "id");
  }
  auto spec_json = body.find("spec");
  if (spec_json == body.end() || !spec_json->is_object()) return;
  FuzzAgentSpec(*spec_json);

  auto spec = engine::ParseProjectSpec(*spec_json, "spec");
  if (!spec.ok()) {
    CheckError(spec.status(), "spec");
    // Every spec error names a field under spec (docs/api.md: "field" in the answer).
    FUZZ_CHECK_MSG(spec.status().field().starts_with("spec"), spec.status().message());
    return;
  }
  // What the store keeps: canonical JSON that parses back to the same spec and re-serialises
  // byte for byte (the API compares it to decide whether a PUT changed anything).
  const std::string canonical = DumpJson(engine::ToJson(*spec));
  auto reparsed_json = ParseJson(canonical);
  FUZZ_CHECK_MSG(reparsed_json.ok(), canonical);
  auto reparsed = engine::ParseProjectSpec(*reparsed_json, "spec");
  FUZZ_CHECK_MSG(reparsed.ok(), canonical + " -> " + reparsed.status().message());
  FUZZ_CHECK_MSG(*reparsed == *spec, canonical);
  FUZZ_CHECK_MSG(DumpJson(engine::ToJson(*reparsed)) == canonical, canonical);

  if (name_ok.ok()) {
    engine::ResolvedSpec r = engine::Resolve(engine::EngineConfig{}, name, *spec);
    FUZZ_CHECK(!r.spec.stack.image.empty());
    FUZZ_CHECK(r.spec.stack.cpu > 0 && r.spec.stack.memory_mb > 0);
    // The host: a kept URL's, else the name as a DNS label (a trailing '-' hashed into one)
    // under the domain; a valid hostname either way.
    if (auto kept = engine::SplitInstanceUrl(spec->url)) {
      FUZZ_CHECK_MSG(r.host == kept->host, r.host);
    } else {
      FUZZ_CHECK_MSG(r.host == engine::DnsLabelOf(name) + ".localhost", r.host);
    }
    FUZZ_CHECK_MSG(engine::IsDns1123Subdomain(r.host), r.host);
    // Every object name fits Kubernetes' limits, whatever name the platform sends.
    const engine::ObjectNames n = engine::NamesFor("p", name);
    FUZZ_CHECK_MSG(engine::IsDns1123Label(n.service) && n.service.size() <= 63, n.service);
    FUZZ_CHECK_MSG(engine::IsDns1123Label(n.deployment), n.deployment);
  }
}

}  // namespace
}  // namespace steward::api

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in = steward::fuzz::AsView(data, size);
  std::string_view name = steward::fuzz::TakeLine(in);
  std::string_view wait = steward::fuzz::TakeLine(in);
  std::string_view token = steward::fuzz::TakeLine(in);
  steward::api::FuzzWait(wait);
  steward::api::FuzzContinue(token);
  steward::api::FuzzContinue(name);
  steward::api::FuzzEventId(token);
  steward::api::FuzzEventId(name);
  steward::api::FuzzBody(name, in);
  return 0;
}
