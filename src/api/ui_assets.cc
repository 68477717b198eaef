// The embedded dashboard files, by name, with their content types and entity tags.
#include "api/ui_assets.h"

#include <cstdint>
#include <map>
#include <string>

namespace steward::api {
namespace {

std::string_view ContentTypeOf(std::string_view name) {
  static const std::map<std::string_view, std::string_view> kTypes = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
  };
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return {};
  auto it = kTypes.find(name.substr(dot));
  return it == kTypes.end() ? std::string_view() : it->second;
}

std::string EtagOf(std::string_view body) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : body) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (int shift = 60; shift >= 0; shift -= 4) out += kHex[(h >> shift) & 0xf];
  return out + "\"";
}

struct Entry {
  std::string content_type;
  std::string etag;
  std::string_view body;
};

const std::map<std::string, Entry, std::less<>>& Table() {
  static const auto* table = [] {
    auto* t = new std::map<std::string, Entry, std::less<>>();
    for (size_t i = 0; i < kUiAssetFileCount; ++i) {
      const UiAssetFile& f = kUiAssetFiles[i];
      std::string_view body(reinterpret_cast<const char*>(f.data), f.size);
      std::string_view type = ContentTypeOf(f.name);
      if (type.empty()) continue;
      (*t)[f.name] = Entry{std::string(type), EtagOf(body), body};
    }
    return t;
  }();
  return *table;
}

}  // namespace

std::optional<UiAsset> FindUiAsset(std::string_view name) {
  if (name.empty()) name = "index.html";
  const auto& table = Table();
  auto it = table.find(name);
  if (it == table.end()) return std::nullopt;
  return UiAsset{it->first, it->second.content_type, it->second.body, it->second.etag};
}

}  // namespace steward::api
