#include "common/json.h"

#include <utility>
#include <vector>

#include "common/json_access.h"

namespace steward {

namespace {

// nlohmann's SAX parser keeps its own explicit stack (it never recurses); this DOM builder on top
// of it counts depth and sees a key twice while it builds, which nlohmann's builder cannot, so a
// refused document costs no second pass and nothing recursive ever runs on it.
class DomBuilder {
 public:
  DomBuilder(Json& root, const ParseOptions& options) : root_(root), options_(options) {}

  const std::string& error() const { return error_; }

  bool null() { return Insert(nullptr) != nullptr; }
  bool boolean(bool v) { return Insert(v) != nullptr; }
  bool number_integer(Json::number_integer_t v) { return Insert(v) != nullptr; }
  bool number_unsigned(Json::number_unsigned_t v) { return Insert(v) != nullptr; }
  bool number_float(Json::number_float_t v, const std::string&) { return Insert(v) != nullptr; }
  bool string(std::string& v) { return Insert(std::move(v)) != nullptr; }
  bool binary(Json::binary_t& v) { return Insert(Json::binary(std::move(v))) != nullptr; }

  bool start_object(std::size_t) { return Open(Json::object()); }
  bool key(std::string& key) {
    Frame& f = stack_.back();
    if (options_.duplicate_keys == DuplicateKeys::kRefuse && f.container->contains(key)) {
      error_ = "duplicate key \"" + PathTo(key) + "\"";
      return false;
    }
    f.key = std::move(key);
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) { return Open(Json::array()); }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    const std::string where = CurrentPath();
    error_ = (where.empty() ? "" : "at " + where + ": ") + WithoutTextRead(e.what());
    return false;
  }

 private:
  struct Frame {
    Json* container;
    std::string key;  // objects: the key whose value comes next
  };

  // Pointers into parents stay valid: only the innermost open container ever grows.
  Json* Insert(Json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Frame& f = stack_.back();
    if (f.container->is_array()) {
      f.container->push_back(std::move(v));
      return &f.container->back();
    }
    Json& slot = (*f.container)[f.key];
    slot = std::move(v);
    return &slot;
  }

  bool Open(Json empty) {
    if (stack_.size() >= static_cast<size_t>(kMaxNestingDepth)) {
      error_ = "nested deeper than the limit of " + std::to_string(kMaxNestingDepth) + " levels";
      return false;
    }
    Json* c = Insert(std::move(empty));
    stack_.push_back(Frame{c, {}});
    return true;
  }

  // Where the value being read goes: "spec.credentials.token", "items[3]"; "" at the top.
  std::string CurrentPath() const {
    if (stack_.empty()) return "";
    const Frame& f = stack_.back();
    if (!f.container->is_array()) return PathTo(f.key);
    std::string outer = PathTo("");
    if (!outer.empty()) outer.pop_back();  // PathTo's '.' before the (empty) key
    return outer + "[" + std::to_string(f.container->size()) + "]";
  }

  // "spec.env[0].name": the open containers' keys and indices, then `key`.
  std::string PathTo(const std::string& key) const {
    std::string path;
    for (size_t i = 0; i + 1 < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      if (f.container->is_array()) {
        path += "[" + std::to_string(f.container->size() - 1) + "]";
      } else {
        if (!path.empty()) path += '.';
        path += f.key;
      }
    }
    if (!path.empty()) path += '.';
    return path + key;
  }

  Json& root_;
  const ParseOptions& options_;
  std::vector<Frame> stack_;
  std::string error_;
};

}  // namespace

std::string WithoutTextRead(std::string_view message) {
  // nlohmann ends a syntax error with "; last read: '<the token so far>'": the text of a string
  // that broke half-way, which may be a credential. The position before it says where.
  const size_t cut = message.find("; last read: ");
  return std::string(message.substr(0, cut));
}

StatusOr<Json> ParseJson(std::string_view text, const ParseOptions& options) {
  Json root;
  DomBuilder builder(root, options);
  try {
    if (Json::sax_parse(text.begin(), text.end(), &builder)) return root;
  } catch (const std::exception& e) {
    return InvalidArgument("malformed JSON: " + WithoutTextRead(e.what()));
  }
  return InvalidArgument("malformed JSON: " +
                         (builder.error().empty() ? std::string("parse failed") : builder.error()));
}

std::string DumpJson(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

namespace {

const Json& StaticNull() {
  static const Json kNull;
  return kNull;
}

}  // namespace

const Json* Member(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

const Json& MemberOrNull(const Json& obj, std::string_view key) {
  const Json* m = Member(obj, key);
  return m == nullptr ? StaticNull() : *m;
}

const Json& ArrayMemberOrEmpty(const Json& obj, std::string_view key) {
  static const Json kEmpty = Json::array();
  const Json* m = Member(obj, key);
  return m != nullptr && m->is_array() ? *m : kEmpty;
}

std::string GetString(const Json& obj, std::string_view key, std::string_view fallback) {
  const Json* m = Member(obj, key);
  if (m == nullptr || !m->is_string()) return std::string(fallback);
  return m->get<std::string>();
}

int64_t GetInt(const Json& obj, std::string_view key, int64_t fallback) {
  const Json* m = Member(obj, key);
  if (m == nullptr || !m->is_number_integer()) return fallback;
  return m->get<int64_t>();
}

const Json* FindPath(const Json& obj, std::string_view dotted_path) {
  const Json* cur = &obj;
  while (!dotted_path.empty()) {
    size_t dot = dotted_path.find('.');
    std::string_view part = dotted_path.substr(0, dot);
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(part);
    if (it == cur->end()) return nullptr;
    cur = &*it;
    if (dot == std::string_view::npos) break;
    dotted_path.remove_prefix(dot + 1);
  }
  return cur;
}

const Json& PathOrNull(const Json& obj, std::string_view dotted_path) {
  const Json* found = FindPath(obj, dotted_path);
  return found == nullptr ? StaticNull() : *found;
}

std::string StringAtPath(const Json& obj, std::string_view dotted_path) {
  const Json& v = PathOrNull(obj, dotted_path);
  return v.is_string() ? v.get<std::string>() : std::string();
}

int64_t NumberAtPath(const Json& obj, std::string_view dotted_path, int64_t fallback) {
  const Json& v = PathOrNull(obj, dotted_path);
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number()) return static_cast<int64_t>(v.get<double>());
  return fallback;
}

namespace {

std::string MetadataString(const Json& obj, std::string_view map, std::string_view key) {
  const Json& m = MemberOrNull(MemberOrNull(obj, "metadata"), map);
  return GetString(m, key);
}

}  // namespace

std::string LabelOf(const Json& obj, std::string_view key) {
  return MetadataString(obj, "labels", key);
}

std::string AnnotationOf(const Json& obj, std::string_view key) {
  return MetadataString(obj, "annotations", key);
}

bool IsGoZeroValue(const Json& j) {
  if (j.is_null()) return true;
  if (j.is_string()) return j.get_ref<const std::string&>().empty();
  if (j.is_boolean()) return !j.get<bool>();
  if (j.is_number()) return j == 0;
  if (j.is_object() || j.is_array()) return j.empty();
  return false;
}

}  // namespace steward
