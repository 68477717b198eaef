// Watch event ids ("<feed>.<position>") and the resume decision (api_internal.h), apart from
// the server so that the fuzzers can take them alone.
#include "api/api_internal.h"

namespace steward::api {
namespace {

constexpr size_t kMaxFeedChars = 32;
constexpr size_t kMaxPositionDigits = 19;  // 2^63 - 1 has 19
constexpr uint64_t kMaxPosition = (uint64_t{1} << 63) - 1;

}  // namespace

std::string EventId(std::string_view feed, uint64_t position) {
  return std::string(feed) + "." + std::to_string(position);
}

std::optional<ParsedEventId> ParseEventId(std::string_view text) {
  const size_t dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot > kMaxFeedChars) return std::nullopt;
  const std::string_view feed = text.substr(0, dot);
  const std::string_view digits = text.substr(dot + 1);
  for (char c : feed) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'))) return std::nullopt;
  }
  if (digits.empty() || digits.size() > kMaxPositionDigits) return std::nullopt;
  if (digits.size() > 1 && digits[0] == '0') return std::nullopt;
  uint64_t n = 0;  // 19 digits stay below 2^64: no overflow
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (n > kMaxPosition) return std::nullopt;
  return ParsedEventId{std::string(feed), n};
}

ResumeVerdict JudgeResume(std::string_view last_id, std::string_view feed, uint64_t oldest,
                          uint64_t current) {
  auto id = ParseEventId(last_id);
  if (!id) return ResumeVerdict::kMalformed;
  if (id->feed != feed) return ResumeVerdict::kUnknownFeed;
  if (id->position > current) return ResumeVerdict::kAhead;
  if (id->position + 1 < oldest) return ResumeVerdict::kExpired;
  return ResumeVerdict::kResume;
}

std::string_view ResetReason(ResumeVerdict v) {
  switch (v) {
    case ResumeVerdict::kMalformed:
      return "Malformed";
    case ResumeVerdict::kUnknownFeed:
      return "UnknownFeed";
    case ResumeVerdict::kExpired:
      return "Expired";
    case ResumeVerdict::kAhead:
      return "Ahead";
    case ResumeVerdict::kResume:
      break;
  }
  return "";
}

}  // namespace steward::api
