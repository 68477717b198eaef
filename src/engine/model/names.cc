#include <array>
#include <string>

#include "engine/model/project.h"

namespace steward::engine {
namespace {

constexpr size_t kMaxProjectNameLength = 40;

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

Status ValidateDnsLabelName(std::string_view what, std::string_view s) {
  std::string quoted =
      std::string(what) + " \"" + std::string(s.substr(0, 64)) + (s.size() > 64 ? "...\"" : "\"");
  if (s.empty()) return InvalidArgument(std::string(what) + ": must not be empty");
  if (s.size() > kMaxProjectNameLength) {
    return InvalidArgument(quoted + ": must be at most " + std::to_string(kMaxProjectNameLength) +
                           " characters (got " + std::to_string(s.size()) + ")");
  }
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') {
      return InvalidArgument(quoted +
                             ": must consist of lowercase letters, digits and '-' (a DNS-1123 "
                             "label)");
    }
  }
  if (s.front() == '-' || s.back() == '-') {
    return InvalidArgument(quoted + ": must start and end with a lowercase letter or digit");
  }
  return Status::Ok();
}

constexpr std::array<std::string_view, 9> kPhaseNames = {"Pending",   "Provisioning", "Running",
                                                         "Updating",  "Degraded",     "Suspending",
                                                         "Suspended", "Deleting",     "Failed"};

}  // namespace

bool IsDns1123Label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    if (!IsDns1123Label(s.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

Status ValidateProjectName(std::string_view name) {
  RETURN_IF_ERROR(ValidateDnsLabelName("project name", name));
  // Project "x" owns the Ingress "x-custom" (its custom hostname); a project named "x-custom"
  // would own an Ingress of the same name.
  constexpr std::string_view kReserved = "-custom";
  if (name.size() > kReserved.size() && name.ends_with(kReserved)) {
    return InvalidArgument("project name \"" + std::string(name) +
                           "\": names ending in -custom are reserved (the custom-hostname "
                           "Ingress of project \"" +
                           std::string(name.substr(0, name.size() - kReserved.size())) + "\")");
  }
  return Status::Ok();
}

Status ValidateProjectId(std::string_view id) { return ValidateDnsLabelName("project id", id); }

std::string_view ToString(Phase p) {
  auto i = static_cast<size_t>(p);
  return i < kPhaseNames.size() ? kPhaseNames[i] : "Unknown";
}

std::optional<Phase> ParsePhase(std::string_view s) {
  for (size_t i = 0; i < kPhaseNames.size(); ++i) {
    if (kPhaseNames[i] == s) return static_cast<Phase>(i);
  }
  return std::nullopt;
}

}  // namespace steward::engine
