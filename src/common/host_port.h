// Parsing of HOST:PORT text: listen addresses (flags and configuration keys), the authority of
// a URL, no_proxy entries. One grammar, "HOST", "HOST:PORT", "[V6]" or "[V6]:PORT"; what a
// caller accepts beyond HOST:PORT (no port, port 0, an empty port, a bare IPv6 host) it says in
// HostPortOptions. Pure and thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace steward {

// The pieces of "HOST", "HOST:PORT", "[V6]" or "[V6]:PORT" before any check of their content:
// views into the text split, the host without its brackets.
struct HostPortText {
  std::string_view host;
  std::optional<std::string_view> port;  // what follows the separating ':' ("" for "HOST:")
  bool bracketed = false;                // the host was written in brackets
};

// Splits `text` by syntax only: a leading '[' runs to the first ']', which must end the text or
// be followed by ':'; otherwise the last ':' separates the port. Fails (kInvalidArgument) with
// "unclosed '['", "unexpected text after ']'", or, for an unbracketed host with more than one
// ':', "an IPv6 address must be in brackets" -- unless `bare_ipv6`, when such text is all host
// and has no port (as a no_proxy entry "::1"). The host may come back empty.
StatusOr<HostPortText> SplitHostPortText(std::string_view text, bool bare_ipv6 = false);

// A port written in decimal: 1 to 5 digits, nothing else, at most 65535, and 0 only when
// `allow_zero`. nullopt otherwise.
std::optional<uint16_t> ParsePort(std::string_view digits, bool allow_zero = false);

// What ParseHostPort accepts besides "HOST:PORT" with a port from 1 to 65535. The defaults are
// the strictest rule.
struct HostPortOptions {
  bool port_optional = false;      // "HOST" and "[V6]" alone (HostPort::port stays unset)
  bool allow_port_zero = false;    // port 0 ("any free port", for listen addresses)
  bool empty_port_absent = false;  // "HOST:" as "HOST" (Go's url.Parse); else a bad port
  bool bare_ipv6 = false;          // see SplitHostPortText
};

struct HostPort {
  std::string host;              // without brackets; never empty
  std::optional<uint16_t> port;  // unset only when options.port_optional
  bool bracketed = false;
};

// Parses `text` per `options`. Fails with kInvalidArgument and one of these messages, which a
// caller prefixes with what the text is: SplitHostPortText's, "empty host", "missing port (want
// host:port)", or `bad port "P"` (P the port text as written).
StatusOr<HostPort> ParseHostPort(std::string_view text, const HostPortOptions& options = {});

// Splits a listen address, "HOST:PORT" or "[v6]:PORT" (brackets removed); the port may be 0 (any
// free port). False when malformed: no port, a port over 65535, an empty host, or an unbracketed
// IPv6 host. (ParseHostPort with allow_port_zero, for callers without a message of their own.)
bool SplitHostPort(const std::string& text, std::string* host, uint16_t* port);

// "HOST:PORT", with the host in brackets when it contains a ':' (an IPv6 address): what
// SplitHostPort and ParseHostPort read back.
std::string JoinHostPort(std::string_view host, uint16_t port);

}  // namespace steward
