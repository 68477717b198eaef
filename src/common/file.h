// Reading whole small files (configuration, tokens, certificates, specs) with errors that name
// the path and the cause. Stateless and thread-safe.
#pragma once

#include <cstddef>
#include <string>

#include "common/status.h"

namespace steward {

// Reads a whole regular file of at most `max_bytes`. kNotFound when it does not exist,
// kFailedPrecondition for anything else (permission denied, a directory, too large, read error);
// the message is "<path>: <cause>".
StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes = 16u << 20);

// strerror_r's text for `err`.
std::string ErrnoText(int err);

}  // namespace steward
