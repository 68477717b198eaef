#include "net/connection_admission.h"

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <string_view>

#include "common/log.h"

namespace steward::net {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

ConnectionAdmission::ConnectionAdmission(size_t max_connections, size_t max_connections_per_client)
    : max_connections_(max_connections),
      max_per_client_(std::min(max_connections, max_connections_per_client)) {}

std::string ConnectionAdmission::ClientOf(const tcp::socket& socket) {
  error_code ec;
  tcp::endpoint peer = socket.remote_endpoint(ec);
  if (ec) return "";
  asio::ip::address a = peer.address();
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    a = asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6());
  }
  return a.to_string();
}

bool ConnectionAdmission::Admit(const std::string& client, uint16_t port) {
  MutexLock lock(mu_);
  auto it = per_client_.find(client);
  if (open_ >= max_connections_ || (it != per_client_.end() && it->second >= max_per_client_)) {
    if (refused_++ % 1000 == 0) {
      LOG_WARN(
          "HTTP server on port {}: at its connection cap ({} in all, {} per client); refusing new "
          "ones ({} so far)",
          port, max_connections_, max_per_client_, refused_);
    }
    return false;
  }
  ++open_;
  ++per_client_[client];
  return true;
}

void ConnectionAdmission::Release(const std::string& client) {
  MutexLock lock(mu_);
  auto it = per_client_.find(client);
  if (it == per_client_.end()) return;
  --open_;
  if (--it->second == 0) per_client_.erase(it);
}

void RefuseConnection(tcp::socket socket, bool tls) {
  static constexpr std::string_view kBusy =
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
      "Content-Length: 21\r\nRetry-After: 1\r\nConnection: close\r\n\r\ntoo many connections\n";
  error_code ignored;
  socket.non_blocking(true, ignored);
  if (!tls) {
    char sink[4096];
    for (int i = 0; i < 16; ++i) {
      error_code ec;
      if (socket.read_some(asio::buffer(sink), ec) == 0 || ec) break;
    }
    socket.write_some(asio::buffer(kBusy), ignored);
  }
  socket.shutdown(tcp::socket::shutdown_send, ignored);
  socket.close(ignored);
}

}  // namespace steward::net
