// ASCII helpers for protocol text (header names and values, schemes, host names): case folding
// and trimming. Not for human text: only A-Z and a-z are folded, only ASCII whitespace trimmed.
// Pure and thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace steward {

inline char AsciiLower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

inline bool AsciiEqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

// What C's isspace() matches in the "C" locale: space, \t, \n, \v, \f, \r.
inline constexpr std::string_view kAsciiWhitespace = " \t\n\v\f\r";
// HTTP's optional whitespace (OWS, RFC 9110 §5.6.3): space and horizontal tab only.
inline constexpr std::string_view kHttpWhitespace = " \t";

// `s` without its leading characters that are in `chars`; a view into `s`.
inline std::string_view TrimLeft(std::string_view s, std::string_view chars) {
  size_t b = s.find_first_not_of(chars);
  return b == std::string_view::npos ? std::string_view() : s.substr(b);
}

// `s` without its trailing characters that are in `chars`; a view into `s`.
inline std::string_view TrimRight(std::string_view s, std::string_view chars) {
  size_t e = s.find_last_not_of(chars);
  return e == std::string_view::npos ? std::string_view() : s.substr(0, e + 1);
}

// `s` without leading and trailing characters that are in `chars`; a view into `s` ("" when
// every character is in `chars`).
inline std::string_view Trim(std::string_view s, std::string_view chars) {
  return TrimRight(TrimLeft(s, chars), chars);
}

// `s` without leading and trailing kAsciiWhitespace (as std::isspace in the "C" locale).
inline std::string_view TrimAsciiWhitespace(std::string_view s) {
  return Trim(s, kAsciiWhitespace);
}

// `s` without leading and trailing HTTP optional whitespace (space and tab; not CR or LF).
inline std::string_view TrimHttpWhitespace(std::string_view s) { return Trim(s, kHttpWhitespace); }

}  // namespace steward
