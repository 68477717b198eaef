#include "kube/client/list_scan.h"

#include <cstdint>
#include <cstring>
#include <exception>
#include <iterator>
#include <optional>
#include <unordered_set>

#include "common/json.h"

namespace steward::kube {

namespace {

// An input iterator whose copies share one position, so the scanner can tell how far nlohmann's
// lexer has read when a SAX callback runs. The parser calls start_object right after reading a
// '{' and end_object right after reading a '}' (the lexer reads one character ahead only after
// a number, and that character is the next token's), so the shared position is then just past
// the brace.
class SharedCursor {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  SharedCursor() = default;
  // A moving cursor over *at, or (at == nullptr) a fixed position, for the end.
  SharedCursor(const char** at, const char* fixed) : at_(at), fixed_(fixed) {}

  reference operator*() const { return *pos(); }
  SharedCursor& operator++() {
    ++*at_;
    return *this;
  }
  SharedCursor operator++(int) {
    SharedCursor before(nullptr, *at_);
    ++*at_;
    return before;
  }
  friend bool operator==(const SharedCursor& a, const SharedCursor& b) {
    return a.pos() == b.pos();
  }
  friend bool operator!=(const SharedCursor& a, const SharedCursor& b) { return !(a == b); }

 private:
  const char* pos() const { return at_ != nullptr ? *at_ : fixed_; }
  const char** at_ = nullptr;
  const char* fixed_ = nullptr;
};

// What an open container is, for the fields the scan keeps.
enum class Ctx : uint8_t { kRoot, kRootMeta, kItems, kItem, kItemMeta, kLabels, kOther };
enum class Kind : uint8_t { kNull, kString, kScalar, kObject, kArray };

// Objects with more keys than this check duplicates with a hash set instead of a linear scan.
constexpr size_t kLinearKeys = 32;

// The nlohmann SAX handler. One instance scans one document.
class Scanner {
 public:
  Scanner(const char* const* cursor, bool single, std::string_view api_version,
          std::string_view kind)
      : cursor_(cursor), single_(single) {
    api_version_member_ = "\"apiVersion\":" + DumpJson(Json(std::string(api_version))) + ",";
    kind_member_ = "\"kind\":" + DumpJson(Json(std::string(kind))) + ",";
  }

  // Why the scan stopped: "malformed JSON: ..." (syntax, duplicate key, depth) or what in the
  // document's shape is wrong.
  const std::string& error() const { return error_; }
  ScannedList& list() { return list_; }
  std::optional<ScannedItem>& single_item() { return single_item_; }

  bool null() { return Scalar(Kind::kNull, nullptr); }
  bool boolean(bool) { return Scalar(Kind::kScalar, nullptr); }
  bool number_integer(Json::number_integer_t) { return Scalar(Kind::kScalar, nullptr); }
  bool number_unsigned(Json::number_unsigned_t) { return Scalar(Kind::kScalar, nullptr); }
  bool number_float(Json::number_float_t, const std::string&) {
    return Scalar(Kind::kScalar, nullptr);
  }
  bool string(std::string& v) { return Scalar(Kind::kString, &v); }
  bool binary(Json::binary_t&) { return Scalar(Kind::kScalar, nullptr); }
  bool start_object(std::size_t) { return Open(Kind::kObject); }
  bool start_array(std::size_t) { return Open(Kind::kArray); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(std::string& k) {
    Level& level = levels_[depth_ - 1];
    if (!Remember(level, k)) return Malformed("duplicate key \"" + PathTo(k) + "\"");
    level.key.assign(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    return Malformed(WithoutTextRead(e.what()));  // never the text: a Secret's data
  }

 private:
  struct Level {
    Ctx ctx = Ctx::kOther;
    bool object = false;
    size_t index = 0;  // arrays: the index of the next element
    std::string key;   // objects: the key whose value comes next
    std::string seen;  // objects: keys so far, each as 4 bytes of length + the bytes
    size_t keys = 0;   // objects: how many keys `seen` holds
    std::unordered_set<std::string> many;  // objects with more than kLinearKeys keys
  };

  bool Fail(std::string message) {
    error_ = std::move(message);
    return false;
  }
  bool Malformed(const std::string& message) { return Fail("malformed JSON: " + message); }

  void ItemError(std::string message) {
    if (item_.error.empty()) item_.error = std::move(message);
  }

  // False when `k` was seen before in this object.
  static bool Remember(Level& level, const std::string& k) {
    if (level.keys >= kLinearKeys) return level.many.insert(k).second;
    for (size_t i = 0; i < level.seen.size();) {
      uint32_t n;
      std::memcpy(&n, level.seen.data() + i, sizeof n);
      i += sizeof n;
      if (n == k.size() && std::memcmp(level.seen.data() + i, k.data(), n) == 0) return false;
      i += n;
    }
    auto n = static_cast<uint32_t>(k.size());
    level.seen.append(reinterpret_cast<const char*>(&n), sizeof n).append(k);
    if (++level.keys == kLinearKeys) {
      for (size_t i = 0; i < level.seen.size();) {
        std::memcpy(&n, level.seen.data() + i, sizeof n);
        i += sizeof n;
        level.many.emplace(level.seen.data() + i, n);
        i += n;
      }
    }
    return true;
  }

  // "items[3].metadata.labels.app", as ParseJson names a duplicate key.
  std::string PathTo(const std::string& k) const {
    std::string path;
    for (size_t i = 0; i + 1 < depth_; ++i) {
      const Level& l = levels_[i];
      if (l.object) {
        if (!path.empty()) path += '.';
        path += l.key;
      } else {
        path += "[" + std::to_string(l.index) + "]";
      }
    }
    if (!path.empty()) path += '.';
    return path + k;
  }

  bool Scalar(Kind kind, std::string* text) {
    Ctx unused;
    if (!OnValue(kind, text, &unused)) return false;
    Advance();
    return true;
  }

  bool Open(Kind kind) {
    if (depth_ >= static_cast<size_t>(kMaxNestingDepth)) {
      return Malformed("nested deeper than the limit of " + std::to_string(kMaxNestingDepth) +
                       " levels");
    }
    Ctx ctx = Ctx::kOther;
    if (!OnValue(kind, nullptr, &ctx)) return false;
    if (levels_.size() <= depth_) levels_.emplace_back();
    Level& level = levels_[depth_++];
    level.ctx = ctx;
    level.object = kind == Kind::kObject;
    level.index = 0;
    level.key.clear();
    level.seen.clear();
    level.keys = 0;
    level.many.clear();
    return true;
  }

  bool Close() {
    Ctx ctx = levels_[--depth_].ctx;
    if (ctx == Ctx::kItem && !EndItem()) return false;
    Advance();
    return true;
  }

  // After a value: the next element of the enclosing array.
  void Advance() {
    if (depth_ > 0 && !levels_[depth_ - 1].object) ++levels_[depth_ - 1].index;
  }

  // A value (scalar or container) arrives in the innermost open container; `child` is what a
  // container opened here is.
  bool OnValue(Kind kind, std::string* text, Ctx* child) {
    *child = Ctx::kOther;
    if (depth_ == 0) {
      if (kind != Kind::kObject) return Fail("not a JSON object");
      *child = single_ ? Ctx::kItem : Ctx::kRoot;
      if (single_) BeginItem();
      return true;
    }
    const Level& parent = levels_[depth_ - 1];
    const std::string& key = parent.key;
    switch (parent.ctx) {
      case Ctx::kRoot:
        if (key == "items") {
          if (kind == Kind::kArray) {
            *child = Ctx::kItems;
          } else if (kind != Kind::kNull) {
            return Fail("\"items\" is not a list");
          }
        } else if (key == "metadata" && kind == Kind::kObject) {
          *child = Ctx::kRootMeta;
        }
        return true;
      case Ctx::kRootMeta:
        if (kind == Kind::kString && key == "resourceVersion") list_.resource_version = *text;
        if (kind == Kind::kString && key == "continue") list_.continue_token = *text;
        return true;
      case Ctx::kItems:
        if (kind != Kind::kObject) return Fail("an item is not an object");
        *child = Ctx::kItem;
        BeginItem();
        return true;
      case Ctx::kItem:
        if (key == "apiVersion") has_api_version_ = true;
        if (key == "kind") has_kind_ = true;
        if (key == "metadata" && kind == Kind::kObject) {
          *child = Ctx::kItemMeta;
          item_.metadata_object = true;
        }
        return true;
      case Ctx::kItemMeta:
        OnMetadataField(key, kind, text, child);
        return true;
      case Ctx::kLabels:
        if (kind == Kind::kString) {
          item_.labels.emplace_back(key, *text);
        } else {
          ItemError("label " + key + " is not a string");
        }
        return true;
      case Ctx::kOther:
        return true;
    }
    return true;
  }

  void OnMetadataField(const std::string& key, Kind kind, const std::string* text, Ctx* child) {
    std::string* field = nullptr;
    if (key == "name") field = &item_.name;
    if (key == "namespace") field = &item_.ns;
    if (key == "uid") field = &item_.uid;
    if (key == "resourceVersion") field = &item_.resource_version;
    if (field != nullptr) {
      if (kind == Kind::kString) {
        field->assign(*text);
      } else if (kind != Kind::kNull) {
        ItemError("metadata." + key + " is not a string");
      }
    } else if (key == "deletionTimestamp") {
      item_.terminating = kind != Kind::kNull;
    } else if (key == "labels") {
      if (kind == Kind::kObject) {
        *child = Ctx::kLabels;
      } else if (kind != Kind::kNull) {
        ItemError("metadata.labels is not an object");
      }
    }
  }

  void BeginItem() {
    item_ = ScannedItem{};
    item_start_ = *cursor_ - 1;
    has_api_version_ = has_kind_ = false;
  }

  bool EndItem() {
    const char* end = *cursor_;
    if (item_start_ == nullptr || *item_start_ != '{' || end <= item_start_ || end[-1] != '}') {
      return Fail("internal error: an item's text could not be delimited");
    }
    std::string_view raw(item_start_, static_cast<size_t>(end - item_start_));
    if (has_api_version_ && has_kind_) {
      item_.json.assign(raw);
    } else {
      std::string_view rest = raw.substr(1);
      item_.json.reserve(raw.size() + api_version_member_.size() + kind_member_.size());
      item_.json = "{";
      if (!has_api_version_) item_.json += api_version_member_;
      if (!has_kind_) item_.json += kind_member_;
      // "{}": nothing follows the members added, so no comma either.
      if (rest.find_first_not_of(" \t\r\n") == rest.size() - 1) item_.json.pop_back();
      item_.json += rest;
    }
    if (single_) {
      single_item_ = std::move(item_);
    } else {
      list_.items.push_back(std::move(item_));
    }
    return true;
  }

  const char* const* cursor_;
  const bool single_;
  std::string api_version_member_, kind_member_;  // "\"kind\":\"Pod\","
  std::vector<Level> levels_;  // levels_[0, depth_) are open; the rest keep their buffers
  size_t depth_ = 0;
  ScannedList list_;
  ScannedItem item_;
  const char* item_start_ = nullptr;
  bool has_api_version_ = false, has_kind_ = false;
  std::optional<ScannedItem> single_item_;
  std::string error_;
};

Status Scan(std::string_view text, Scanner& scanner, const char** cursor) {
  *cursor = text.data();
  SharedCursor first(cursor, nullptr);
  SharedCursor last(nullptr, text.data() + text.size());
  try {
    if (Json::sax_parse(first, last, &scanner)) return Status();
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("malformed JSON: ") + e.what());
  }
  const std::string& error = scanner.error();
  return InvalidArgument(error.empty() ? std::string("malformed JSON: parse failed") : error);
}

}  // namespace

StatusOr<ScannedList> ScanListPage(std::string_view body, std::string_view api_version,
                                   std::string_view kind) {
  const char* cursor = nullptr;
  Scanner scanner(&cursor, false, api_version, kind);
  RETURN_IF_ERROR(Scan(body, scanner, &cursor));
  return std::move(scanner.list());
}

StatusOr<ScannedItem> ScanObject(std::string_view text, std::string_view api_version,
                                 std::string_view kind) {
  const char* cursor = nullptr;
  Scanner scanner(&cursor, true, api_version, kind);
  RETURN_IF_ERROR(Scan(text, scanner, &cursor));
  if (!scanner.single_item()) return InvalidArgument("not a JSON object");
  return std::move(*scanner.single_item());
}

}  // namespace steward::kube
