// Small file and path helpers shared by the kube/config loaders (internal to this module).
// Stateless and thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/file.h"
#include "common/status.h"

namespace steward::kube::config_internal {

// From common/file.h (one file reader for all of Steward).
using ::steward::ErrnoText;
using ::steward::ReadSmallFile;

// True when `path` names an existing file system entry (of any type).
bool PathExists(const std::string& path);

// The absolute directory holding `file` ("/a/b/config" -> "/a/b"; relative paths are made
// absolute against the current directory first).
std::string AbsoluteDirOf(const std::string& file);

// `path` unchanged when empty or absolute, else `base_dir`/`path` (kubectl's ResolvePath).
std::string ResolveAgainst(const std::string& base_dir, const std::string& path);

}  // namespace steward::kube::config_internal
