#include "common/duration.h"

#include <cmath>
#include <cstdint>
#include <string>

namespace steward {

std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  std::string_view number = text;
  double unit_ms = 1000;  // a bare number is seconds
  if (text.ends_with("ms")) {
    number.remove_suffix(2);
    unit_ms = 1;
  } else if (text.ends_with('s')) {
    number.remove_suffix(1);
  } else if (text.ends_with('m')) {
    number.remove_suffix(1);
    unit_ms = 60000;
  } else if (text.ends_with('h')) {
    number.remove_suffix(1);
    unit_ms = 3600000;
  }
  // Digits with at most one inner dot: strtod alone would take " 1", "+1", "1e3", "inf".
  if (number.empty() || number.size() > 20 || number.front() == '.' || number.back() == '.') {
    return std::nullopt;
  }
  int dots = 0;
  for (char c : number) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return std::nullopt;
    }
  }
  if (dots > 1) return std::nullopt;
  const double ms = std::strtod(std::string(number).c_str(), nullptr) * unit_ms;
  if (!std::isfinite(ms) || ms > 1e12) return std::nullopt;
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(ms)));
}

}  // namespace steward
