// The one duration syntax of Steward's interfaces (the API's ?wait=, the CLI's --wait and
// --timeout, configuration files): "1500ms", "30s", "2m", "1h", or a bare number of seconds;
// decimals allowed ("1.5", "0.5m"); no sign, spaces or exponent. Callers apply their own bounds
// (a zero wait is fine for the API, not for the CLI's --timeout).
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace steward {

// nullopt for anything else, and for more than 10^12 ms (about 31 years).
std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text);

// For error messages: "like 30s, 2m, 1500ms, 1h or a number of seconds".
inline constexpr std::string_view kDurationForms =
    "like 30s, 2m, 1500ms, 1h or a number of seconds";

}  // namespace steward
