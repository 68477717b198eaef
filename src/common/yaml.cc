#include "common/yaml.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace steward {

namespace {

Json ScalarToJson(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // quoted
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  int64_t i = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
  if (ec == std::errc() && ptr == s.data() + s.size()) return i;
  bool looks_float = s.find_first_not_of("0123456789+-.eE") == std::string::npos &&
                     s.find_first_of("0123456789") != std::string::npos;
  if (looks_float) {
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (end == s.c_str() + s.size() && std::isfinite(d)) return d;
  }
  return s;
}

// Aliases let a few bytes of YAML expand into an exponential number of nodes ("billion laughs").
// Conversion stops when it has produced more nodes than a document of this size could hold
// without aliases (with generous slack), as go-yaml refuses "excessive aliasing".
// The same for bytes: one long scalar behind many aliases expands as much as many nodes do.
size_t NodeBudget(size_t text_size) { return std::max<size_t>(10000, 4 * text_size); }
size_t ByteBudget(size_t text_size) { return std::max<size_t>(1 << 20, 16 * text_size); }

class ExcessiveAliasing : public std::exception {
 public:
  const char* what() const noexcept override { return "excessive aliasing"; }
};

// An alias may refer to the node that contains it ("a: &a [*a]"), a cycle the node budget alone
// would follow 10000 levels deep, overflowing the stack first; kMaxNestingDepth stops it.
// yaml-cpp refuses deeper text with DeepRecursion ("bad file"): reported as the same limit.
class TooDeep : public std::exception {
 public:
  const char* what() const noexcept override { return "too deep"; }
};

// yaml-cpp 0.7's LoadAll never ends on some malformed streams (a document that starts with ','
// yields an empty document forever, each one allocated: found by json_parse_fuzzer). Every
// document but the first needs a 3-byte marker, so a stream has at most size / 3 + 2 of them;
// a parse without a tree (no allocation per document) checks that before LoadAll runs.
class StreamDoesNotAdvance : public std::exception {
 public:
  const char* what() const noexcept override { return "stream does not advance"; }
};

class DiscardEvents : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

void CheckStreamAdvances(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DiscardEvents events;
  const size_t most = text.size() / 3 + 2;
  for (size_t n = 0; parser.HandleNextDocument(events);) {
    if (++n > most) throw StreamDoesNotAdvance();
  }
}

// YAML streams are Unicode; Steward reads them as UTF-8 only, as its JSON parser does. yaml-cpp
// would keep invalid bytes in strings, which no JSON serialisation can carry (DumpJson replaces
// them, so two different keys could become one). NUL is refused too: YAML does not allow it, and
// yaml-cpp takes NUL bytes at the start for UTF-16 or UTF-32 text and decodes garbage.
std::optional<size_t> InvalidUtf8At(std::string_view s, bool allow_nul = false) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || (c == 0 && !allow_nul) || i + n > s.size()) return i;
    uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1f) : n == 3 ? (c & 0x0f) : (c & 0x07);
    for (size_t k = 1; k < n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (cc & 0x3f);
    }
    const bool overlong =
        (n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += n;
  }
  return std::nullopt;
}

class InvalidUtf8 : public std::exception {
 public:
  explicit InvalidUtf8(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

void CheckUtf8(std::string_view text) {
  if (auto at = InvalidUtf8At(text)) {
    throw InvalidUtf8("invalid UTF-8 or NUL at byte " + std::to_string(*at));
  }
}

// yaml-cpp writes the escape "\N" (U+0085) of a double-quoted scalar as a single byte.
void CheckScalarUtf8(const std::string& s, const YAML::Mark& mark) {
  if (InvalidUtf8At(s, /*allow_nul=*/true)) {
    throw InvalidUtf8("a scalar at line " + std::to_string(mark.line + 1) +
                      " is not valid UTF-8 once its escapes are decoded");
  }
}

class DuplicateKey : public std::exception {
 public:
  explicit DuplicateKey(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// Recursion is bounded by kMaxNestingDepth (yaml-cpp's own parser stops at 498 levels).
class Converter {
 public:
  Converter(size_t text_size, const ParseOptions& options)
      : budget_(NodeBudget(text_size)), bytes_(ByteBudget(text_size)), options_(options) {}

  Json Convert(const YAML::Node& node) {
    if (budget_ == 0) throw ExcessiveAliasing();
    --budget_;
    switch (node.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        return nullptr;
      case YAML::NodeType::Scalar:
        Spend(node.Scalar().size());
        CheckScalarUtf8(node.Scalar(), node.Mark());
        return ScalarToJson(node);
      case YAML::NodeType::Sequence: {
        if (path_.size() >= static_cast<size_t>(kMaxNestingDepth)) throw TooDeep();
        Json arr = Json::array();
        path_.emplace_back();
        for (const auto& item : node) {
          path_.back() = "[" + std::to_string(arr.size()) + "]";
          arr.push_back(Convert(item));
        }
        path_.pop_back();
        return arr;
      }
      case YAML::NodeType::Map: {
        if (path_.size() >= static_cast<size_t>(kMaxNestingDepth)) throw TooDeep();
        Json obj = Json::object();
        path_.emplace_back();
        for (const auto& kv : node) {
          std::string key = kv.first.as<std::string>();
          Spend(key.size());
          CheckScalarUtf8(key, kv.first.Mark());
          path_.back() = key;
          if (options_.duplicate_keys == DuplicateKeys::kRefuse && obj.contains(key)) {
            throw DuplicateKey("duplicate key \"" + Path() + "\" at line " +
                               std::to_string(kv.first.Mark().line + 1));
          }
          obj[std::move(key)] = Convert(kv.second);
        }
        path_.pop_back();
        return obj;
      }
    }
    return nullptr;
  }

 private:
  // "spec.env[0].name"
  std::string Path() const {
    std::string out;
    for (const auto& part : path_) {
      if (!out.empty() && part[0] != '[') out += '.';
      out += part;
    }
    return out;
  }

  void Spend(size_t bytes) {
    if (bytes > bytes_) throw ExcessiveAliasing();
    bytes_ -= bytes;
  }

  size_t budget_;
  size_t bytes_;
  const ParseOptions& options_;
  std::vector<std::string> path_;  // one entry per open sequence (index) or mapping (key)
};

void EmitJson(YAML::Emitter& out, const Json& v) {
  if (v.is_object()) {
    out << YAML::BeginMap;
    for (auto it = v.begin(); it != v.end(); ++it) {
      out << YAML::Key << it.key() << YAML::Value;
      EmitJson(out, it.value());
    }
    out << YAML::EndMap;
  } else if (v.is_array()) {
    out << YAML::BeginSeq;
    for (const auto& item : v) EmitJson(out, item);
    out << YAML::EndSeq;
  } else if (v.is_string()) {
    out << YAML::DoubleQuoted << v.get<std::string>();
  } else if (v.is_null()) {
    out << YAML::Null;
  } else {
    out << DumpJson(v);
  }
}

constexpr const char* kExcessiveAliasing =
    "malformed YAML: document contains excessive aliasing (expands to too many nodes)";

std::string TooDeepMessage() {
  return "malformed YAML: nested deeper than the limit of " + std::to_string(kMaxNestingDepth) +
         " levels (or an alias refers to its own node)";
}

// Runs `fn` (which loads and converts), mapping every library and conversion exception.
template <typename Fn>
auto Guard(Fn fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const ExcessiveAliasing&) {
    return InvalidArgument(kExcessiveAliasing);
  } catch (const TooDeep&) {
    return InvalidArgument(TooDeepMessage());
  } catch (const YAML::DeepRecursion&) {
    return InvalidArgument(TooDeepMessage());
  } catch (const StreamDoesNotAdvance&) {
    return InvalidArgument(
        "malformed YAML: the document stream cannot be read (it does not advance)");
  } catch (const InvalidUtf8& e) {
    return InvalidArgument(std::string("malformed YAML: ") + e.what());
  } catch (const DuplicateKey& e) {
    return InvalidArgument(std::string("malformed YAML: ") + e.what());
  } catch (const YAML::Exception& e) {
    return InvalidArgument("malformed YAML at line " + std::to_string(e.mark.line + 1) + ": " +
                           e.msg);
  }
}

}  // namespace

StatusOr<Json> ParseYaml(std::string_view text, const ParseOptions& options) {
  return Guard([&]() -> StatusOr<Json> {
    CheckUtf8(text);
    YAML::Node node = YAML::Load(std::string(text));
    return Converter(text.size(), options).Convert(node);
  });
}

StatusOr<std::vector<Json>> ParseYamlDocuments(std::string_view text, const ParseOptions& options) {
  return Guard([&]() -> StatusOr<std::vector<Json>> {
    CheckUtf8(text);
    std::string owned(text);
    CheckStreamAdvances(owned);
    std::vector<Json> docs;
    Converter converter(text.size(), options);
    for (const auto& node : YAML::LoadAll(owned)) {
      if (node.IsNull()) continue;
      docs.push_back(converter.Convert(node));
    }
    return docs;
  });
}

std::string ToYaml(const Json& value) {
  YAML::Emitter out;
  EmitJson(out, value);
  return std::string(out.c_str()) + "\n";
}

}  // namespace steward
