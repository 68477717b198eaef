// WebSocket tunnel: relays one WebSocket between a client of the ingress listener and a process
// pod's loopback port (the process runtime, docs/embedded-cluster.md).
//
// TunnelWebSocket dials 127.0.0.1:`port` and sends the client's opening handshake there (the
// same target and fields, with a fresh Sec-WebSocket-Key; no extension nor subprotocol asked
// for). When the process answers 101, the client's request is accepted
// (ResponseWriter::AcceptWebSocket) and messages are copied both ways until either side
// closes, which closes the other with the same code; the process's pings are answered. Any
// other answer from the process is passed to the client as it is (status, fields, what came of
// its body), and a refused connection answers 502. Text messages stay text and binary ones
// binary, both ways.
//
// Each tunnel runs its reading side on a thread of its own, which owns what it uses (shared) and
// ends when either side closes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "net/http.h"
#include "net/http_server.h"

namespace steward::cluster::ingress {

void TunnelWebSocket(net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer,
                     uint16_t port, std::string pod_id);

}  // namespace steward::cluster::ingress
