#include "net/http.h"

#include <algorithm>

#include "common/ascii.h"

namespace steward::net {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsUnreserved(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

}  // namespace

void Headers::Set(std::string name, std::string value) {
  std::erase_if(fields_, [&](const auto& f) { return AsciiEqualsIgnoreCase(f.first, name); });
  fields_.emplace_back(std::move(name), std::move(value));
}

std::string_view Headers::Get(std::string_view name) const {
  for (const auto& [n, v] : fields_) {
    if (AsciiEqualsIgnoreCase(n, name)) return v;
  }
  return {};
}

bool Headers::Has(std::string_view name) const {
  return std::any_of(fields_.begin(), fields_.end(),
                     [&](const auto& f) { return AsciiEqualsIgnoreCase(f.first, name); });
}

std::string PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%' && i + 2 < s.size()) {
      int hi = HexValue(s[i + 1]);
      int lo = HexValue(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(plus_is_space && c == '+' ? ' ' : c);
  }
  return out;
}

std::string PercentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (IsUnreserved(c)) {
      out.push_back(c);
    } else {
      auto u = static_cast<unsigned char>(c);
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xF]);
    }
  }
  return out;
}

namespace {

// `target` without the authority of an absolute form (as sent to proxies: "http://host/p?q" →
// "/p?q") and without a fragment.
std::string_view OriginForm(std::string_view target) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (target.size() >= scheme.size() &&
        AsciiEqualsIgnoreCase(target.substr(0, scheme.size()), scheme)) {
      target.remove_prefix(scheme.size());
      size_t slash = target.find_first_of("/?#");
      target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
      break;
    }
  }
  return target.substr(0, target.find('#'));
}

}  // namespace

std::string_view RawPath(std::string_view target) {
  target = OriginForm(target);
  target = target.substr(0, target.find('?'));
  return target.empty() ? std::string_view("/") : target;
}

void ParseTarget(std::string_view target, std::string* path,
                 std::vector<std::pair<std::string, std::string>>* query) {
  *path = PercentDecode(RawPath(target));
  if (path->empty()) path->push_back('/');
  target = OriginForm(target);
  const size_t qmark = target.find('?');
  query->clear();
  if (qmark == std::string_view::npos) return;
  std::string_view rest = target.substr(qmark + 1);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string_view key = pair.substr(0, eq);
    std::string_view value =
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    query->emplace_back(PercentDecode(key, true), PercentDecode(value, true));
  }
}

std::string_view HttpRequest::Query(std::string_view name) const {
  for (const auto& [k, v] : query) {
    if (k == name) return v;
  }
  return {};
}

bool HttpRequest::HasQuery(std::string_view name) const {
  return std::any_of(query.begin(), query.end(), [&](const auto& q) { return q.first == name; });
}

}  // namespace steward::net
