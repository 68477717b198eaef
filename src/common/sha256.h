// SHA-256 of a byte string, as lowercase hex (64 characters). Pure; any thread.
#pragma once

#include <string>
#include <string_view>

namespace steward {

std::string Sha256Hex(std::string_view data);

}  // namespace steward
