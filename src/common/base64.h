// Base64 (RFC 4648, standard alphabet, padded), as Kubernetes uses for Secret data and
// kubeconfig *-data fields.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace steward {

std::string Base64Encode(std::string_view in);
// nullopt when `in` is not canonical padded base64.
std::optional<std::string> Base64Decode(std::string_view in);

// base64url without padding (RFC 4648 §5, RFC 7515 §2), as JWTs use it.
std::string Base64UrlEncode(std::string_view in);
// nullopt when `in` is not unpadded base64url.
std::optional<std::string> Base64UrlDecode(std::string_view in);

}  // namespace steward
