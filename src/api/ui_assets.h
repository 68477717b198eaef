// The web dashboard's files (src/api/ui/, docs/dashboard.md), compiled into the binary: the
// build turns each file into a byte array (src/api/ui/embed.cmake → ui_assets_data.cc), so that
// nothing is read from disk at run time. The API serves them at /ui (ApiServer, HandleUi).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace steward::api {

// One file as the build embedded it (generated: ui_assets_data.cc).
struct UiAssetFile {
  const char* name;  // "index.html", "app.js": the file's name in src/api/ui/
  const unsigned char* data;
  size_t size;
};
extern const UiAssetFile kUiAssetFiles[];
extern const size_t kUiAssetFileCount;

// A file as served.
struct UiAsset {
  std::string_view name;
  std::string_view content_type;  // from the name's extension
  std::string_view body;
  std::string_view etag;  // "\"<16 hex of FNV-1a 64 of the body>\""
};

// The file named `name` ("" is index.html); nullopt for a name that is not one of the embedded
// files or whose extension has no known type (such a file is never served).
std::optional<UiAsset> FindUiAsset(std::string_view name);

// The headers every /ui answer carries: Content-Security-Policy (no inline script, nothing but
// this origin), X-Content-Type-Options, Referrer-Policy, X-Frame-Options.
inline constexpr std::string_view kUiContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'";

}  // namespace steward::api
