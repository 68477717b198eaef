// Parsing of HOST:PORT flag values (--listen, --ingress-listen), shared by the commands.
#pragma once

#include <cstdint>
#include <string>

namespace steward::cli {

// Splits "HOST:PORT" or "[v6]:PORT" (brackets removed); the port may be 0. False when malformed.
bool SplitHostPort(const std::string& text, std::string* host, uint16_t* port);

}  // namespace steward::cli
