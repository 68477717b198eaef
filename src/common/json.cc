#include "common/json.h"

namespace steward {

StatusOr<Json> ParseJson(std::string_view text) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    return InvalidArgument(std::string("malformed JSON: ") + e.what());
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("malformed JSON: ") + e.what());
  }
}

std::string DumpJson(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string GetString(const Json& obj, std::string_view key, std::string_view fallback) {
  if (!obj.is_object()) return std::string(fallback);
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return std::string(fallback);
  return it->get<std::string>();
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

}  // namespace steward
