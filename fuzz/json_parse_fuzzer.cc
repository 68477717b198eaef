// The JSON and YAML parsers every input goes through (common/json.h ParseJson, common/yaml.h
// ParseYaml / ParseYamlDocuments / ToYaml): the nesting limit (kMaxNestingDepth), duplicate keys
// (refused by default, the last winning when asked) and the re-serialisation of what they accept.
// Input: any bytes, parsed as JSON and as YAML.
#include <string>
#include <vector>

#include "common/json.h"
#include "common/yaml.h"
#include "fuzz_util.h"

namespace steward {
namespace {

const ParseOptions kLastWins{.duplicate_keys = DuplicateKeys::kLastWins};

// Nesting depth of a parsed value, without recursing (the property under test is that nothing
// deeper than the limit exists, so this must not trust that).
int Depth(const Json& root) {
  int deepest = 0;
  std::vector<std::pair<const Json*, int>> stack = {{&root, 0}};
  while (!stack.empty()) {
    auto [v, d] = stack.back();
    stack.pop_back();
    if (!v->is_structured()) continue;
    deepest = std::max(deepest, d + 1);
    for (const auto& child : *v) stack.emplace_back(&child, d + 1);
  }
  return deepest;
}

bool ValidUtf8(const Json& j) {
  try {
    (void)j.dump();  // the strict error handler throws on invalid UTF-8
    return true;
  } catch (const Json::type_error&) {
    return false;
  }
}

bool IsDepthError(const Status& s) {
  return s.message().find("nested deeper than the limit of " + std::to_string(kMaxNestingDepth) +
                          " levels") != std::string::npos;
}

void CheckRefusal(const Status& s, std::string_view prefix) {
  FUZZ_CHECK(!s.ok());
  FUZZ_CHECK_MSG(s.code() == StatusCode::kInvalidArgument, s.ToString());
  FUZZ_CHECK_MSG(s.message().starts_with(prefix), s.message());
}

// `doc` wrapped in `n` arrays, as text.
std::string Wrapped(const std::string& text, int n) {
  return std::string(n, '[') + text + std::string(n, ']');
}

void FuzzJson(std::string_view text) {
  auto strict = ParseJson(text);
  auto last_wins = ParseJson(text, kLastWins);
  if (!strict.ok()) CheckRefusal(strict.status(), "malformed JSON: ");
  if (!last_wins.ok()) {
    CheckRefusal(last_wins.status(), "malformed JSON: ");
    // Only duplicates separate the two: whatever last-wins refuses, strict refuses too.
    FUZZ_CHECK(!strict.ok());
    return;
  }
  const int depth = Depth(*last_wins);
  FUZZ_CHECK_MSG(depth <= kMaxNestingDepth, std::to_string(depth));
  if (strict.ok()) {
    FUZZ_CHECK(*strict == *last_wins);
  } else {
    FUZZ_CHECK_MSG(strict.status().message().find("duplicate key \"") != std::string::npos,
                   strict.status().message());
  }
  // What was accepted re-serialises and re-parses equal, with no duplicate left.
  const std::string dumped = DumpJson(*last_wins);
  auto again = ParseJson(dumped);
  FUZZ_CHECK_MSG(again.ok(), again.status().message() + "\n" + dumped);
  FUZZ_CHECK_MSG(*again == *last_wins, dumped);
  FUZZ_CHECK(DumpJson(*again) == dumped);
  Json copy = *last_wins;
  FUZZ_CHECK(copy == *last_wins);
  // Up to the limit is accepted; a level more is always refused, naming the limit.
  auto at = ParseJson(Wrapped(dumped, kMaxNestingDepth - depth));
  FUZZ_CHECK_MSG(at.ok(), at.status().message());
  auto over = ParseJson(Wrapped(dumped, kMaxNestingDepth - depth + 1));
  FUZZ_CHECK(!over.ok());
  FUZZ_CHECK_MSG(IsDepthError(over.status()), over.status().message());
}

void FuzzYaml(std::string_view text) {
  for (const ParseOptions& options : {ParseOptions{}, kLastWins}) {
    auto doc = ParseYaml(text, options);
    auto docs = ParseYamlDocuments(text, options);
    if (!doc.ok()) CheckRefusal(doc.status(), "malformed YAML");
    if (!docs.ok()) CheckRefusal(docs.status(), "malformed YAML");
    std::vector<Json> all;
    if (doc.ok()) all.push_back(*doc);
    if (docs.ok()) all.insert(all.end(), docs->begin(), docs->end());
    for (const Json& d : all) {
      FUZZ_CHECK(Depth(d) <= kMaxNestingDepth);
      const std::string dumped = DumpJson(d);
      auto again = ParseJson(dumped);
      FUZZ_CHECK_MSG(again.ok(), again.status().message() + "\n" + dumped);
      // ParseYaml refuses invalid UTF-8, so nothing is lost in the serialisation.
      FUZZ_CHECK_MSG(ValidUtf8(d), dumped);
      FUZZ_CHECK_MSG(*again == d, dumped);
      // ToYaml (kubeconfig output) runs on small results (aliases expand); its text is not
      // re-parsed: yaml-cpp's emitter writes some long or odd strings it cannot read back.
      if (dumped.size() <= 64 * 1024) (void)ToYaml(d);
    }
  }
}

}  // namespace
}  // namespace steward

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in = steward::fuzz::AsView(data, size);
  steward::FuzzJson(in);
  steward::FuzzYaml(in);
  return 0;
}
