// Steward's configuration file (app::ParseServeConfig: YAML or JSON, including the engine
// section, engine::ParseEngineConfig) and its duration values (app::ParseDuration).
// Input: the configuration file's text.
#include <string>

#include "app/app.h"
#include "common/yaml.h"
#include "fuzz_util.h"

namespace steward::app {
namespace {

void FuzzOne(std::string_view text) {
  auto config = ParseServeConfig(text);
  if (!config.ok()) {
    FUZZ_CHECK_MSG(config.status().code() == StatusCode::kInvalidArgument,
                   config.status().ToString());
    FUZZ_CHECK(!config.status().message().empty());
    return;
  }
  const ServeConfig& c = *config;
  FUZZ_CHECK(c.api_workers >= 1 && c.api_workers <= 256);
  FUZZ_CHECK(!c.data_dir.empty() && !c.listen.empty());
  FUZZ_CHECK(c.tls_cert_file.empty() == c.tls_key_file.empty());
  FUZZ_CHECK(c.instance_timeout >= std::chrono::milliseconds(1) &&
             c.instance_timeout <= std::chrono::minutes(10));
  FUZZ_CHECK(c.api_max_connections >= 1 && c.api_max_connections <= 1000000);
  FUZZ_CHECK(c.api_read_header_timeout >= std::chrono::milliseconds(1) &&
             c.api_read_header_timeout <= std::chrono::hours(1));
  FUZZ_CHECK(c.api_read_timeout >= std::chrono::milliseconds(1) &&
             c.api_read_timeout <= std::chrono::hours(1));
  FUZZ_CHECK(c.engine.workers >= 1 && c.engine.workers <= 256);
  FUZZ_CHECK(c.engine.url_port >= 0 && c.engine.url_port <= 65535);
  // The engine section alone, as JSON, parses to the same configuration.
  if (auto doc = ParseYaml(text); doc.ok() && doc->is_object() && doc->contains("engine")) {
    auto engine = engine::ParseEngineConfig((*doc)["engine"], "engine");
    FUZZ_CHECK(engine.ok() && *engine == c.engine);
  }
}

void FuzzDuration(std::string_view text) {
  auto d = ParseDuration(Json(std::string(text)), "d");
  if (!d.ok()) {
    FUZZ_CHECK(d.status().message().starts_with("d: "));
    return;
  }
  FUZZ_CHECK(d->count() >= 0);
}

}  // namespace
}  // namespace steward::app

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = steward::fuzz::AsView(data, size);
  steward::app::FuzzOne(text);
  if (size <= 32) steward::app::FuzzDuration(text);
  return 0;
}
