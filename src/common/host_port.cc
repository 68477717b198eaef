#include "common/host_port.h"

namespace steward {

StatusOr<HostPortText> SplitHostPortText(std::string_view text, bool bare_ipv6) {
  HostPortText out;
  if (text.starts_with('[')) {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return InvalidArgument("unclosed '['");
    out.host = text.substr(1, close - 1);
    out.bracketed = true;
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return InvalidArgument("unexpected text after ']'");
      out.port = rest.substr(1);
    }
    return out;
  }
  size_t colon = text.rfind(':');
  if (colon != std::string_view::npos && text.find(':') != colon) {
    if (!bare_ipv6) return InvalidArgument("an IPv6 address must be in brackets");
    out.host = text;
    return out;
  }
  out.host = text.substr(0, colon);
  if (colon != std::string_view::npos) out.port = text.substr(colon + 1);
  return out;
}

std::optional<uint16_t> ParsePort(std::string_view digits, bool allow_zero) {
  if (digits.empty() || digits.size() > 5) return std::nullopt;
  unsigned value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (value > 65535 || (value == 0 && !allow_zero)) return std::nullopt;
  return static_cast<uint16_t>(value);
}

StatusOr<HostPort> ParseHostPort(std::string_view text, const HostPortOptions& options) {
  ASSIGN_OR_RETURN(HostPortText parts, SplitHostPortText(text, options.bare_ipv6));
  if (parts.host.empty()) return InvalidArgument("empty host");
  HostPort out;
  out.host = std::string(parts.host);
  out.bracketed = parts.bracketed;
  if (parts.port && parts.port->empty() && options.empty_port_absent) parts.port.reset();
  if (!parts.port) {
    if (!options.port_optional) return InvalidArgument("missing port (want host:port)");
    return out;
  }
  out.port = ParsePort(*parts.port, options.allow_port_zero);
  if (!out.port) return InvalidArgument("bad port \"" + std::string(*parts.port) + "\"");
  return out;
}

bool SplitHostPort(const std::string& text, std::string* host, uint16_t* port) {
  auto hp = ParseHostPort(text, {.allow_port_zero = true});
  if (!hp.ok()) return false;
  *host = std::move(hp->host);
  *port = *hp->port;
  return true;
}

std::string JoinHostPort(std::string_view host, uint16_t port) {
  std::string h(host);
  if (h.find(':') != std::string::npos) h = "[" + h + "]";
  return h + ":" + std::to_string(port);
}

}  // namespace steward
