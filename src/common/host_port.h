// Parsing of HOST:PORT listen addresses (flags and configuration keys).
#pragma once

#include <cstdint>
#include <string>

namespace steward {

// Splits "HOST:PORT" or "[v6]:PORT" (brackets removed); the port may be 0 (any free port). False
// when malformed: no port, a port over 65535, an empty host, or an unbracketed IPv6 host.
bool SplitHostPort(const std::string& text, std::string* host, uint16_t* port);

}  // namespace steward
