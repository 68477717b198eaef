// Test helpers for the model tests (header-only; not part of the library's contract).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "common/json.h"
#include "common/status.h"

namespace steward::engine::testing {

// Success when `s` is kInvalidArgument, its message starts with "<prefix>: " and contains
// `part`: for errors about a value that is no field (a project name as such).
inline ::testing::AssertionResult IsInvalidValue(const Status& s, std::string_view prefix,
                                                 std::string_view part = "") {
  if (s.code() != StatusCode::kInvalidArgument) {
    return ::testing::AssertionFailure() << "expected INVALID_ARGUMENT, got " << s.ToString();
  }
  if (s.message().rfind(std::string(prefix) + ": ", 0) != 0) {
    return ::testing::AssertionFailure()
           << "message does not start with '" << prefix << ": ': " << s.message();
  }
  if (s.message().find(part) == std::string::npos) {
    return ::testing::AssertionFailure() << "message lacks '" << part << "': " << s.message();
  }
  return ::testing::AssertionSuccess();
}

// Success when `s` is kInvalidArgument about `field`: the status's field (Status::field()) is
// `field`, its message starts with "<field>: " and contains `part`.
inline ::testing::AssertionResult IsInvalid(const Status& s, std::string_view field,
                                            std::string_view part = "") {
  if (s.code() == StatusCode::kInvalidArgument && s.field() != field) {
    return ::testing::AssertionFailure()
           << "the status's field is '" << s.field() << "', not '" << field << "': " << s.message();
  }
  return IsInvalidValue(s, field, part);
}

template <typename T>
::testing::AssertionResult IsInvalid(const StatusOr<T>& r, std::string_view field,
                                     std::string_view part = "") {
  if (r.ok()) return ::testing::AssertionFailure() << "expected an error, got a value";
  return IsInvalid(r.error(), field, part);
}

inline Json J(std::string_view text) { return Json::parse(text); }

}  // namespace steward::engine::testing
