// Helpers shared by the fuzzers: invariant checks that abort (libFuzzer then saves the input)
// and a cursor over the input bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace steward::fuzz {

// Aborts with the failed condition when an invariant does not hold.
#define FUZZ_CHECK(cond)                                                                  \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)

// Same, printing a detail (e.g. the offending value) first.
#define FUZZ_CHECK_MSG(cond, detail)                                                           \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      std::fprintf(stderr, "%s:%d: invariant violated: %s\n  %s\n", __FILE__, __LINE__, #cond, \
                   std::string(detail).c_str());                                               \
      std::abort();                                                                            \
    }                                                                                          \
  } while (0)

inline std::string_view AsView(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Takes the text up to the next '\n' (exclusive) off the front of `in`; the rest when none.
inline std::string_view TakeLine(std::string_view& in) {
  size_t nl = in.find('\n');
  std::string_view line = in.substr(0, nl);
  in = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
  return line;
}

}  // namespace steward::fuzz
