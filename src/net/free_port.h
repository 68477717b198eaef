// PickFreePort: a loopback TCP port for a server a test (or a torture run, or a benchmark) starts
// in another process, which binds it itself a moment later and may be stopped and started again
// on it.
//
// Below Linux's default ephemeral range (32768-60999), on purpose: a port the kernel hands out
// for outgoing connections could be taken as the source port of any connection on the machine
// between the pick and the bind, or while the server is down between a stop and a start (seen: a
// real Node-RED failing to start with EADDRINUSE five times in a row). Ports are visited in a
// scrambled order from a random start (n * 11761 mod 12000 visits every residue once per 12000
// steps, gcd(11761, 12000) = 1), so processes running in parallel do not walk the same sequence.
// Thread-safe.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <random>

namespace steward::net {

// A port in 20000-31999 that was free on 127.0.0.1 a moment ago, never the same twice in a
// process (until 12000 picks); 0 when none was found.
inline uint16_t PickFreePort() {
  static std::atomic<uint64_t> next{std::random_device{}()};
  for (int attempt = 0; attempt < 200; ++attempt) {
    const uint16_t port = static_cast<uint16_t>(20000 + (next++ * 11761u) % 12000u);
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    const bool free = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    close(fd);
    if (free) return port;
  }
  return 0;
}

}  // namespace steward::net
