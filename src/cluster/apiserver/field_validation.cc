#include "cluster/apiserver/field_validation.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <utility>

#include "kube/schema/kube_types.h"

namespace steward::cluster {

namespace {

using kube::schema::Field;
using kube::schema::Message;
using kube::schema::ValueKind;

// What a JSON value is expected to be, for the walkers below.
struct Shape {
  enum class Kind {
    kMessage,   // an object with the message's fields (at the top also apiVersion and kind)
    kList,      // an array of `field`'s elements
    kMap,       // an object with any keys; values of `field`'s element type
    kLeaf,      // a scalar or a type with a custom JSON form: not looked into
    kFree,      // untyped (a patch document): any keys, duplicates still detected
    kPatchOps,  // a JSON patch: an array of operations
    kPatchOp,   // one JSON patch operation
  };
  Kind kind = Kind::kLeaf;
  const Message* message = nullptr;
  const Field* field = nullptr;
  bool top = false;
};
using SK = Shape::Kind;

Shape Leaf() { return {}; }
Shape Of(SK kind) { return {kind, nullptr, nullptr, false}; }
Shape MessageShape(const Message* m, bool top = false) { return {SK::kMessage, m, nullptr, top}; }

Shape ElementShape(const Field& f) {
  return f.kind == ValueKind::kMessage ? MessageShape(f.message) : Leaf();
}

Shape FieldShape(const Field& f) {
  if (f.repeated) return {SK::kList, nullptr, &f, false};
  if (f.map) return {SK::kMap, nullptr, &f, false};
  return ElementShape(f);
}

bool IsObjectShape(const Shape& s) {
  return s.kind == SK::kMessage || s.kind == SK::kMap || s.kind == SK::kFree ||
         s.kind == SK::kPatchOp;
}

bool IsArrayShape(const Shape& s) {
  return s.kind == SK::kList || s.kind == SK::kFree || s.kind == SK::kPatchOps;
}

Shape ChildOfArray(const Shape& s) {
  switch (s.kind) {
    case SK::kList:
      return ElementShape(*s.field);
    case SK::kFree:
      return s;
    case SK::kPatchOps:
      return Of(SK::kPatchOp);
    default:
      return Leaf();
  }
}

// The shape of the value under `key` in an object of shape `s`; `*known` is false for a key the
// Go type does not have.
Shape ChildOfObject(const Shape& s, std::string_view key, bool* known) {
  *known = true;
  switch (s.kind) {
    case SK::kMessage: {
      if (s.top && (key == "apiVersion" || key == "kind")) return Leaf();
      const Field* f = s.message->ByJsonName(key);
      if (f == nullptr) {
        *known = false;
        return Leaf();
      }
      return FieldShape(*f);
    }
    case SK::kMap:
      return ElementShape(*s.field);
    case SK::kFree:
      return s;
    case SK::kPatchOp:
      if (key == "value") return Of(SK::kFree);
      if (key == "op" || key == "path" || key == "from") return Leaf();
      *known = false;
      return Leaf();
    default:
      return Leaf();
  }
}

std::string KeyPath(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string IndexPath(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

const Message* RootMessage(const ResourceType& rt, Subresource sub) {
  if (sub == Subresource::kScale) return kube::schema::FindMessage("autoscaling.Scale");
  return kube::schema::MessageForKind(rt.ApiVersion(), rt.kind);
}

// Records problems once each, worded as the API server words them.
class Collector {
 public:
  Collector(std::string prefix, FieldProblems* out) : prefix_(std::move(prefix)), out_(out) {}

  void Unknown(const std::string& path) {
    if (!seen_.insert("u" + path).second) return;
    out_->unknown.push_back(path);
    out_->messages.push_back(prefix_ + "unknown field " + GoQuote(path));
  }
  void Skip(const std::string& path) { seen_.insert("u" + path); }
  void Duplicate(const std::string& path) {
    if (!seen_.insert("d" + path).second) return;
    out_->duplicate.push_back(path);
    out_->messages.push_back(prefix_ + "duplicate field " + GoQuote(path));
  }

 private:
  std::string prefix_;
  FieldProblems* out_;
  std::set<std::string> seen_;
};

// A SAX handler for nlohmann::json that walks the raw text with the expected shapes, so that
// duplicate keys (which a parsed Json cannot show) and document order are seen.
class StrictScanner {
 public:
  StrictScanner(Shape root, Collector* collector) : root_(root), collector_(collector) {}

  bool null() { return Value(); }
  bool boolean(bool) { return Value(); }
  bool number_integer(Json::number_integer_t) { return Value(); }
  bool number_unsigned(Json::number_unsigned_t) { return Value(); }
  bool number_float(Json::number_float_t, const std::string&) { return Value(); }
  bool string(std::string&) { return Value(); }
  bool binary(Json::binary_t&) { return Value(); }

  bool start_object(std::size_t) {
    auto [shape, path] = Next();
    frames_.push_back(Frame{IsObjectShape(shape) ? shape : Leaf(), std::move(path)});
    return true;
  }
  bool key(std::string& key) {
    Frame& f = frames_.back();
    bool known = true;
    Shape child = ChildOfObject(f.shape, key, &known);
    std::string path = KeyPath(f.path, key);
    if (f.shape.kind != SK::kLeaf) {
      bool first = f.keys.insert(key).second;
      if (!known) {
        collector_->Unknown(path);
      } else if (!first) {
        collector_->Duplicate(path);
      }
    }
    f.pending = child;
    f.pending_path = std::move(path);
    return true;
  }
  bool end_object() {
    frames_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    auto [shape, path] = Next();
    Frame f{IsArrayShape(shape) ? shape : Leaf(), std::move(path)};
    f.is_array = true;
    frames_.push_back(std::move(f));
    return true;
  }
  bool end_array() {
    frames_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }

 private:
  struct Frame {
    Shape shape;
    std::string path;
    bool is_array = false;
    size_t index = 0;
    std::set<std::string> keys;
    Shape pending;
    std::string pending_path;
  };

  // The shape and path of the value that starts now.
  std::pair<Shape, std::string> Next() {
    if (frames_.empty()) return {root_, ""};
    Frame& f = frames_.back();
    if (f.is_array) return {ChildOfArray(f.shape), IndexPath(f.path, f.index++)};
    return {f.pending, f.pending_path};
  }
  bool Value() {
    Next();
    return true;
  }

  Shape root_;
  Collector* collector_;
  std::vector<Frame> frames_;
};

// Scans `raw` (when it is JSON); false when it is not.
bool Scan(std::string_view raw, const Shape& root, Collector* collector) {
  StrictScanner scanner(root, collector);
  try {
    return Json::sax_parse(raw, &scanner);
  } catch (const std::exception&) {
    return false;
  }
}

struct WalkOptions {
  bool skip_nulls = false;  // merge-patch semantics: a null deletes, it adds nothing
  bool directives = false;  // strategic merge patch: "$..." keys are directives
};

// Reports the unknown fields of a parsed value, depth first in key order.
void WalkUnknown(const Json& v, const Shape& s, const std::string& path, const WalkOptions& opts,
                 Collector* collector) {
  if (v.is_object() && IsObjectShape(s)) {
    for (const auto& [key, child] : v.items()) {
      if (opts.directives && !key.empty() && key[0] == '$') continue;
      if (opts.skip_nulls && child.is_null()) continue;
      bool known = true;
      Shape child_shape = ChildOfObject(s, key, &known);
      std::string child_path = KeyPath(path, key);
      if (!known) {
        collector->Unknown(child_path);
      } else {
        WalkUnknown(child, child_shape, child_path, opts, collector);
      }
    }
  } else if (v.is_array() && IsArrayShape(s)) {
    Shape element = ChildOfArray(s);
    for (size_t i = 0; i < v.size(); ++i) {
      WalkUnknown(v[i], element, IndexPath(path, i), opts, collector);
    }
  }
}

// Removes unknown keys; true if anything was removed.
bool Prune(Json& v, const Shape& s, bool directives) {
  bool changed = false;
  if (v.is_object() && IsObjectShape(s)) {
    std::vector<std::string> unknown;
    for (auto& [key, child] : v.items()) {
      if (directives && !key.empty() && key[0] == '$') continue;
      bool known = true;
      Shape child_shape = ChildOfObject(s, key, &known);
      if (!known) {
        unknown.push_back(key);
      } else {
        changed = Prune(child, child_shape, directives) || changed;
      }
    }
    for (const auto& key : unknown) v.erase(key);
    changed = changed || !unknown.empty();
  } else if (v.is_array() && IsArrayShape(s)) {
    Shape element = ChildOfArray(s);
    for (auto& child : v) changed = Prune(child, element, directives) || changed;
  }
  return changed;
}

// Where a JSON pointer leads through the shapes.
struct Resolved {
  Shape shape;
  std::string path;  // dotted, as the server words paths
  bool known = true;
};

Resolved ResolvePointer(const Shape& root, std::string_view pointer) {
  Resolved r{root, "", true};
  if (pointer.empty()) return r;
  if (pointer[0] != '/') return {Leaf(), "", true};
  size_t i = 1;
  while (i <= pointer.size()) {
    size_t j = pointer.find('/', i);
    if (j == std::string_view::npos) j = pointer.size();
    std::string segment;
    for (size_t k = i; k < j; ++k) {
      if (pointer[k] == '~' && k + 1 < j && (pointer[k + 1] == '0' || pointer[k + 1] == '1')) {
        segment += pointer[k + 1] == '0' ? '~' : '/';
        ++k;
      } else {
        segment += pointer[k];
      }
    }
    if (r.shape.kind == SK::kList) {
      int64_t index = 0;
      auto [ptr, ec] = std::from_chars(segment.data(), segment.data() + segment.size(), index);
      if (segment == "-" || ec != std::errc() || ptr != segment.data() + segment.size()) {
        r.path += "[" + segment + "]";
      } else {
        r.path = IndexPath(r.path, static_cast<size_t>(index));
      }
      r.shape = ChildOfArray(r.shape);
    } else if (r.shape.kind == SK::kMessage || r.shape.kind == SK::kMap) {
      bool known = true;
      Shape next = ChildOfObject(r.shape, segment, &known);
      r.path = KeyPath(r.path, segment);
      if (!known) {
        r.known = false;
        r.shape = Leaf();
        return r;
      }
      r.shape = next;
    } else {
      // Below a leaf nothing is known or checked.
      r.shape = Leaf();
      return r;
    }
    i = j + 1;
  }
  return r;
}

bool AddsValue(const Json& op) {
  std::string name = GetString(op, "op");
  return name == "add" || name == "replace";
}

std::string FormatGoFloat(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto sci = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string s(buf, sci.ptr);
  size_t e = s.find('e');
  int exponent = std::atoi(s.c_str() + e + 1);
  if (exponent < -4 || exponent >= 21) {
    // Go writes at least two exponent digits: 1e+06, 1.5e-07.
    std::string mantissa = s.substr(0, e);
    char sign = exponent < 0 ? '-' : '+';
    int magnitude = std::abs(exponent);
    return mantissa + "e" + sign + (magnitude < 10 ? "0" : "") + std::to_string(magnitude);
  }
  auto fixed = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::fixed);
  return std::string(buf, fixed.ptr);
}

void GoFormat(const Json& v, std::string& out) {
  switch (v.type()) {
    case Json::value_t::null:
      out += "<nil>";
      break;
    case Json::value_t::boolean:
      out += v.get<bool>() ? "true" : "false";
      break;
    case Json::value_t::number_integer:
      out += std::to_string(v.get<int64_t>());
      break;
    case Json::value_t::number_unsigned:
      out += std::to_string(v.get<uint64_t>());
      break;
    case Json::value_t::number_float:
      out += FormatGoFloat(v.get<double>());
      break;
    case Json::value_t::string:
      out += v.get_ref<const std::string&>();
      break;
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& e : v) {
        if (!first) out += ' ';
        first = false;
        GoFormat(e, out);
      }
      out += ']';
      break;
    }
    case Json::value_t::object: {
      out += "map[";
      bool first = true;
      for (const auto& [key, e] : v.items()) {
        if (!first) out += ' ';
        first = false;
        out += key;
        out += ':';
        GoFormat(e, out);
      }
      out += ']';
      break;
    }
    default:
      break;
  }
}

}  // namespace

std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\v':
        out += "\\v";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

std::string FieldProblems::StrictError() const {
  std::string out = "strict decoding error: ";
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i > 0) out += ", ";
    out += messages[i];
  }
  return out;
}

ApiResult<FieldValidation> ParseFieldValidation(std::string_view value,
                                                std::string_view options_kind) {
  if (value.empty() || value == "Warn") return FieldValidation::kWarn;
  if (value == "Strict") return FieldValidation::kStrict;
  if (value == "Ignore") return FieldValidation::kIgnore;
  std::string detail = "Unsupported value: " + GoQuote(value) +
                       ": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"";
  StatusError e;
  e.code = 422;
  e.reason = "Invalid";
  e.group = "meta.k8s.io";
  e.kind = std::string(options_kind);
  e.message =
      std::string(options_kind) + ".meta.k8s.io \"\" is invalid: fieldValidation: " + detail;
  e.causes.push_back({"FieldValueNotSupported", detail, "fieldValidation"});
  return e;
}

FieldProblems CheckFields(const ResourceType& rt, std::string_view raw_body, const Json& parsed,
                          Subresource sub) {
  FieldProblems problems;
  const Message* root = RootMessage(rt, sub);
  if (root == nullptr) return problems;
  Collector collector("", &problems);
  Shape top = MessageShape(root, true);
  if (!Scan(raw_body, top, &collector)) {
    problems = FieldProblems();
    Collector sorted("", &problems);
    WalkUnknown(parsed, top, "", {}, &sorted);
  }
  return problems;
}

FieldProblems CheckPatchFields(const ResourceType& rt, PatchType type, std::string_view raw_patch,
                               const Json& parsed, const Json* patched, const Json* current,
                               Subresource sub) {
  FieldProblems problems;
  const Message* root = RootMessage(rt, sub);
  if (root == nullptr || type == PatchType::kApply) return problems;
  Shape top = MessageShape(root, true);
  bool json_patch = type == PatchType::kJsonPatch;
  {
    Collector collector(json_patch ? "json patch " : "", &problems);
    Scan(raw_patch, Of(json_patch ? SK::kPatchOps : SK::kFree), &collector);
  }
  FieldProblems unknown;
  Collector collector("", &unknown);
  if (patched != nullptr) {
    if (current != nullptr) {
      // Marking the current object's unknown fields as seen keeps them out of the report.
      FieldProblems before;
      Collector old("", &before);
      WalkUnknown(*current, top, "", {}, &old);
      for (const auto& path : before.unknown) collector.Skip(path);
    }
    WalkUnknown(*patched, top, "", {}, &collector);
    if (type == PatchType::kStrategicMerge) {
      // The server collects these from a map and sorts them.
      std::vector<std::pair<std::string, std::string>> pairs;
      for (size_t i = 0; i < unknown.unknown.size(); ++i) {
        pairs.emplace_back(unknown.messages[i], unknown.unknown[i]);
      }
      std::sort(pairs.begin(), pairs.end());
      for (size_t i = 0; i < pairs.size(); ++i) {
        unknown.messages[i] = pairs[i].first;
        unknown.unknown[i] = pairs[i].second;
      }
    }
  } else if (json_patch) {
    if (parsed.is_array()) {
      for (const auto& op : parsed) {
        if (!op.is_object()) continue;
        std::string name = GetString(op, "op");
        if (name != "add" && name != "replace" && name != "move" && name != "copy") continue;
        Resolved r = ResolvePointer(top, GetString(op, "path"));
        if (!r.known) {
          collector.Unknown(r.path);
        } else if (AddsValue(op) && op.contains("value")) {
          WalkUnknown(op["value"], r.shape, r.path, {}, &collector);
        }
      }
    }
  } else {
    WalkOptions opts;
    opts.skip_nulls = true;
    opts.directives = type == PatchType::kStrategicMerge;
    WalkUnknown(parsed, top, "", opts, &collector);
  }
  for (auto& p : unknown.unknown) problems.unknown.push_back(std::move(p));
  for (auto& m : unknown.messages) problems.messages.push_back(std::move(m));
  return problems;
}

bool DropUnknownFields(const ResourceType& rt, Json& object, Subresource sub) {
  const Message* root = RootMessage(rt, sub);
  if (root == nullptr) return false;
  return Prune(object, MessageShape(root, true), false);
}

bool DropUnknownPatchFields(const ResourceType& rt, PatchType type, Json& patch, Subresource sub) {
  const Message* root = RootMessage(rt, sub);
  if (root == nullptr || type == PatchType::kApply) return false;
  Shape top = MessageShape(root, true);
  if (type != PatchType::kJsonPatch) {
    return Prune(patch, top, type == PatchType::kStrategicMerge);
  }
  if (!patch.is_array()) return false;
  bool changed = false;
  Json kept = Json::array();
  for (auto& op : patch) {
    if (op.is_object()) {
      std::string name = GetString(op, "op");
      if (name == "add" || name == "replace" || name == "move" || name == "copy") {
        Resolved r = ResolvePointer(top, GetString(op, "path"));
        if (!r.known) {
          changed = true;
          continue;
        }
        if (AddsValue(op) && op.contains("value")) {
          changed = Prune(op["value"], r.shape, false) || changed;
        }
      }
    }
    kept.push_back(std::move(op));
  }
  patch = std::move(kept);
  return changed;
}

StatusError StrictDecodingError(const ResourceType& rt, const Json& body,
                                const FieldProblems& problems, Subresource sub) {
  std::string object_kind = sub == Subresource::kScale ? "Scale" : rt.kind;
  std::string kind = object_kind;
  std::string version = sub == Subresource::kScale ? "v1" : rt.version;
  if (body.is_object()) {
    std::string k = GetString(body, "kind");
    if (!k.empty()) kind = k;
    std::string api_version = GetString(body, "apiVersion");
    if (!api_version.empty()) version = api_version.substr(api_version.rfind('/') + 1);
  }
  StatusError e;
  e.code = 400;
  e.reason = "BadRequest";
  e.message = kind + " in version \"" + version + "\" cannot be handled as a " + object_kind +
              ": " + problems.StrictError();
  return e;
}

StatusError StrictPatchError(const FieldProblems& problems, const std::string& value) {
  std::string detail = "Invalid value: " + GoQuote(value) + ": " + problems.StrictError();
  StatusError e;
  e.code = 422;
  e.reason = "Invalid";
  e.message = " \"\" is invalid: patch: " + detail;
  e.causes.push_back({"FieldValueInvalid", detail, "patch"});
  return e;
}

std::string GoMapString(const Json& value) {
  std::string out;
  GoFormat(value, out);
  return out;
}

std::vector<std::string> WarningHeaders(const FieldProblems& problems) {
  std::vector<std::string> out;
  for (const auto& m : problems.messages) out.push_back("299 - " + GoQuote(m));
  return out;
}

}  // namespace steward::cluster
