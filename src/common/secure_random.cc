#include "common/secure_random.h"

#include <openssl/rand.h>

#include <cstdio>
#include <cstdlib>

namespace steward {

std::string SecureRandomBytes(size_t n) {
  std::string raw(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(n)) != 1) {
    // The OS CSPRNG failing is not something to paper over with a weak token.
    std::fprintf(stderr, "steward: RAND_bytes failed\n");
    std::abort();
  }
  return raw;
}

std::string SecureRandomHex(size_t bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes * 2);
  for (unsigned char c : SecureRandomBytes(bytes)) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

std::string SecureRandomUuid() {
  std::string h = SecureRandomHex(16);
  h[12] = '4';
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20, 12);
}

}  // namespace steward
