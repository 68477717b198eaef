// Small file and path helpers shared by the kube/config loaders (internal to this module).
// Stateless and thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace steward::kube::config_internal {

// Reads a whole regular file of at most `max_bytes`. Errors name the path and the cause:
// kNotFound when it does not exist, kFailedPrecondition for anything else (permission denied,
// a directory, too large, read error).
StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes = 16u << 20);

// True when `path` names an existing file system entry (of any type).
bool PathExists(const std::string& path);

// The absolute directory holding `file` ("/a/b/config" -> "/a/b"; relative paths are made
// absolute against the current directory first).
std::string AbsoluteDirOf(const std::string& file);

// `path` unchanged when empty or absolute, else `base_dir`/`path` (kubectl's ResolvePath).
std::string ResolveAgainst(const std::string& base_dir, const std::string& path);

// `s` without leading and trailing ASCII whitespace.
std::string TrimWhitespace(std::string_view s);

// "No such file or directory" for an errno value (thread-safe strerror).
std::string ErrnoText(int err);

}  // namespace steward::kube::config_internal
