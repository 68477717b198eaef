// ConnectionAdmission: which new connections a listener takes (HttpServer's connection caps), and
// the short refusal the others get. At most `max_connections` in all and at most
// `max_connections_per_client` (capped by the first) from one client, a client being the peer's
// IP address (an IPv4-mapped IPv6 address counts as the IPv4 one).
//
// Thread-safe. The server calls Admit for each accepted socket and Release once for each
// admitted client key when its connection is gone.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "common/mutex.h"

namespace steward::net {

class ConnectionAdmission {
 public:
  ConnectionAdmission(size_t max_connections, size_t max_connections_per_client);

  // The client a socket is counted against ("" when it has no peer any more).
  static std::string ClientOf(const boost::asio::ip::tcp::socket& socket);
  // Counts a connection of `client` and returns true, or returns false (nothing counted) when
  // either cap is reached; the first refusal and every 1,000th after it are logged (a warning
  // naming the listener's `port` and the caps).
  bool Admit(const std::string& client, uint16_t port) EXCLUDES(mu_);
  void Release(const std::string& client) EXCLUDES(mu_);

 private:
  const size_t max_connections_;
  const size_t max_per_client_;
  mutable Mutex mu_;
  size_t open_ GUARDED_BY(mu_) = 0;
  std::unordered_map<std::string, size_t> per_client_ GUARDED_BY(mu_);
  uint64_t refused_ GUARDED_BY(mu_) = 0;
};

// Answers a connection over a cap and closes it, without blocking: over plain HTTP a short 503
// ("too many connections", Retry-After: 1, Connection: close) after reading what the request
// already sent (so that the close does not reset the answer away); over TLS (`tls`) it is closed
// at once, which the client sees as a failed handshake.
void RefuseConnection(boost::asio::ip::tcp::socket socket, bool tls);

}  // namespace steward::net
