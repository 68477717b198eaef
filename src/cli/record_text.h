// How `steward project` and `steward agent` read a record's answer (docs/api.md) and print to
// the terminal: status fields, padding, "-" for nothing, and the failure line with its exit
// code. Internal to cli/ (project_command.cc, record_wait.cc). Header only; any thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "common/json.h"
#include "common/json_access.h"

namespace steward::cli {

// Prints "steward: <message>" on standard error (after what standard output holds) and returns
// `code`, the exit code (exit_codes.h).
inline int Fail(const std::string& message, int code) {
  std::fflush(stdout);
  std::fprintf(stderr, "steward: %s\n", message.c_str());
  return code;
}

// A field of the record's status ("" when there is no status yet).
inline std::string StatusField(const Json& record, const char* key) {
  auto it = record.find("status");
  return it != record.end() && it->is_object() ? GetString(*it, key) : std::string();
}

inline int64_t ObservedGeneration(const Json& record) {
  auto it = record.find("status");
  return it != record.end() && it->is_object() ? GetInt(*it, "observedGeneration") : 0;
}

inline std::string OrDash(const std::string& s) { return s.empty() ? "-" : s; }

inline std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

}  // namespace steward::cli
