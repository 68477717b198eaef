#include "common/yaml.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <exception>

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
struct NodeBudget {
  size_t left;
  explicit NodeBudget(size_t text_size) : left(std::max<size_t>(10000, 4 * text_size)) {}
};

class ExcessiveAliasing : public std::exception {
 public:
  const char* what() const noexcept override { return "excessive aliasing"; }
};

// An alias may refer to the node that contains it ("a: &a [*a]"), a cycle the node budget alone
// would follow 10000 levels deep, overflowing the stack first. No real document nests this deep.
constexpr int kMaxDepth = 1000;

class TooDeep : public std::exception {
 public:
  const char* what() const noexcept override { return "too deep"; }
};

Json NodeToJson(const YAML::Node& node, NodeBudget& budget, int depth = 0) {
  if (budget.left == 0) throw ExcessiveAliasing();
  if (depth > kMaxDepth) throw TooDeep();
  --budget.left;
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      return ScalarToJson(node);
    case YAML::NodeType::Sequence: {
      Json arr = Json::array();
      for (const auto& item : node) arr.push_back(NodeToJson(item, budget, depth + 1));
      return arr;
    }
    case YAML::NodeType::Map: {
      Json obj = Json::object();
      for (const auto& kv : node) {
        obj[kv.first.as<std::string>()] = NodeToJson(kv.second, budget, depth + 1);
      }
      return obj;
    }
  }
  return nullptr;
}

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

}  // namespace

constexpr const char* kExcessiveAliasing =
    "malformed YAML: document contains excessive aliasing (expands to too many nodes)";
constexpr const char* kTooDeep =
    "malformed YAML: nested more than 1000 levels deep (or an alias refers to its own node)";

StatusOr<Json> ParseYaml(std::string_view text) {
  try {
    YAML::Node node = YAML::Load(std::string(text));
    NodeBudget budget(text.size());
    return NodeToJson(node, budget);
  } catch (const ExcessiveAliasing&) {
    return InvalidArgument(kExcessiveAliasing);
  } catch (const TooDeep&) {
    return InvalidArgument(kTooDeep);
  } catch (const YAML::Exception& e) {
    return InvalidArgument("malformed YAML at line " + std::to_string(e.mark.line + 1) + ": " +
                           e.msg);
  }
}

StatusOr<std::vector<Json>> ParseYamlDocuments(std::string_view text) {
  try {
    std::vector<Json> docs;
    NodeBudget budget(text.size());
    for (const auto& node : YAML::LoadAll(std::string(text))) {
      if (node.IsNull()) continue;
      docs.push_back(NodeToJson(node, budget));
    }
    return docs;
  } catch (const ExcessiveAliasing&) {
    return InvalidArgument(kExcessiveAliasing);
  } catch (const TooDeep&) {
    return InvalidArgument(kTooDeep);
  } catch (const YAML::Exception& e) {
    return InvalidArgument("malformed YAML at line " + std::to_string(e.mark.line + 1) + ": " +
                           e.msg);
  }
}

std::string ToYaml(const Json& value) {
  YAML::Emitter out;
  EmitJson(out, value);
  return std::string(out.c_str()) + "\n";
}

}  // namespace steward
