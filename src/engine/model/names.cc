#include <algorithm>
#include <array>
#include <string>

#include "common/sha256.h"
#include "engine/model/project.h"

namespace steward::engine {
namespace {

constexpr size_t kMaxProjectNameLength = 63;
constexpr size_t kMaxIdLength = 40;
constexpr size_t kHashDigits = 8;

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

std::string Quoted(std::string_view what, std::string_view s) {
  return std::string(what) + " \"" + std::string(s.substr(0, 64)) +
         (s.size() > 64 ? "...\"" : "\"");
}

// [a-z0-9-]{1,max}, starting with a letter or digit; `strict` also wants one at the end.
Status ValidateLabelish(std::string_view what, std::string_view s, size_t max, bool strict) {
  const std::string quoted = Quoted(what, s);
  if (s.empty()) return InvalidArgument(std::string(what) + ": must not be empty");
  if (s.size() > max) {
    return InvalidArgument(quoted + ": must be at most " + std::to_string(max) +
                           " characters (got " + std::to_string(s.size()) + ")");
  }
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') {
      return InvalidArgument(quoted +
                             ": must consist of lowercase letters, digits and '-' (a DNS-1123 "
                             "label; FlowFuse passes an instance's lowercase safe name)");
    }
  }
  if (s.front() == '-') {
    return InvalidArgument(quoted + ": must start with a lowercase letter or digit");
  }
  if (strict && s.back() == '-') {
    return InvalidArgument(quoted + ": must start and end with a lowercase letter or digit");
  }
  return Status::Ok();
}

constexpr std::array<std::string_view, 10> kPhaseNames = {
    "Pending",    "Provisioning", "Running",  "Updating", "Degraded",
    "Suspending", "Suspended",    "Deleting", "Failed",   "Unknown"};

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
  return ValidateLabelish("project name", name, kMaxProjectNameLength, /*strict=*/false);
}

Status ValidateProjectId(std::string_view id) {
  return ValidateLabelish("project id", id, kMaxIdLength, /*strict=*/true);
}

std::string FitName(std::string_view base, std::string_view suffix, size_t max) {
  std::string whole = std::string(base) + std::string(suffix);
  if (whole.size() <= max && !base.ends_with('-')) return whole;
  const std::string hash = Sha256Hex(base).substr(0, kHashDigits);
  const size_t room = max - suffix.size() - hash.size() - 1;
  std::string_view cut = base.substr(0, std::min(room, base.size()));
  while (!cut.empty() && cut.back() == '-') cut.remove_suffix(1);
  return std::string(cut) + (cut.empty() ? "" : "-") + hash + std::string(suffix);
}

std::string DnsLabelOf(std::string_view name) {
  if (IsDns1123Label(name)) return std::string(name);
  return FitName(name, "", 63);
}

std::string_view ToString(Phase p) {
  auto i = static_cast<size_t>(p);
  return i < kPhaseNames.size() ? kPhaseNames[i] : "?";
}

std::optional<Phase> ParsePhase(std::string_view s) {
  for (size_t i = 0; i < kPhaseNames.size(); ++i) {
    if (kPhaseNames[i] == s) return static_cast<Phase>(i);
  }
  return std::nullopt;
}

}  // namespace steward::engine
