// Test helpers for the model tests (header-only; not part of the library's contract).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "common/json.h"
#include "common/status.h"

namespace steward::engine::testing {

// Success when `s` is kInvalidArgument, its message starts with "<field>: " and contains `part`.
inline ::testing::AssertionResult IsInvalid(const Status& s, std::string_view field,
                                            std::string_view part = "") {
  if (s.code() != StatusCode::kInvalidArgument) {
    return ::testing::AssertionFailure() << "expected INVALID_ARGUMENT, got " << s.ToString();
  }
  std::string prefix = std::string(field) + ": ";
  if (s.message().rfind(prefix, 0) != 0) {
    return ::testing::AssertionFailure()
           << "message does not start with '" << prefix << "': " << s.message();
  }
  if (s.message().find(part) == std::string::npos) {
    return ::testing::AssertionFailure() << "message lacks '" << part << "': " << s.message();
  }
  return ::testing::AssertionSuccess();
}

template <typename T>
::testing::AssertionResult IsInvalid(const StatusOr<T>& r, std::string_view field,
                                     std::string_view part = "") {
  if (r.ok()) return ::testing::AssertionFailure() << "expected an error, got a value";
  return IsInvalid(r.error(), field, part);
}

inline Json J(std::string_view text) { return Json::parse(text); }

}  // namespace steward::engine::testing
