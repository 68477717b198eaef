// Random values from the operating system's CSPRNG (OpenSSL's RAND_bytes), for tokens, ids and
// keys. A failing CSPRNG aborts the process: nothing falls back to a weak source. Any thread.
#pragma once

#include <cstddef>
#include <string>

namespace steward {

// `n` random bytes.
std::string SecureRandomBytes(size_t n);
// `bytes` random bytes as lowercase hex (2 × bytes characters).
std::string SecureRandomHex(size_t bytes);
// 32 hex digits in the 8-4-4-4-12 layout of a UUID with version digit 4 (as FlowFuse's ids).
std::string SecureRandomUuid();

}  // namespace steward
