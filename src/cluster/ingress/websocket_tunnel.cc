#include "cluster/ingress/websocket_tunnel.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string_view>
#include <thread>
#include <utility>

#include "common/ascii.h"
#include "common/base64.h"
#include "common/mutex.h"

namespace steward::cluster::ingress {

namespace {

constexpr size_t kMaxMessage = 16u << 20;

bool Skipped(std::string_view name) {
  for (std::string_view h : {"Connection", "Upgrade", "Keep-Alive", "Content-Length",
                             "Transfer-Encoding", "Sec-WebSocket-Key", "Sec-WebSocket-Version",
                             "Sec-WebSocket-Extensions", "Sec-WebSocket-Protocol"}) {
    if (AsciiEqualsIgnoreCase(name, h)) return true;
  }
  return false;
}

// The connection to the process: frames out (masked, as a client must) from any thread.
class Upstream {
 public:
  explicit Upstream(int fd) : fd_(fd) {}
  ~Upstream() { ::close(fd_); }
  Upstream(const Upstream&) = delete;
  Upstream& operator=(const Upstream&) = delete;

  int fd() const { return fd_; }

  bool SendAll(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  bool SendFrame(uint8_t opcode, std::string_view payload) {
    std::string frame;
    frame.push_back(static_cast<char>(0x80 | opcode));
    const size_t n = payload.size();
    if (n < 126) {
      frame.push_back(static_cast<char>(0x80 | n));
    } else if (n <= 0xffff) {
      frame.push_back(static_cast<char>(0x80 | 126));
      frame.push_back(static_cast<char>(n >> 8));
      frame.push_back(static_cast<char>(n & 0xff));
    } else {
      frame.push_back(static_cast<char>(0x80 | 127));
      for (int i = 7; i >= 0; --i) frame.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
    }
    std::array<uint8_t, 4> mask;
    {
      MutexLock lock(mu_);
      uint32_t r = static_cast<uint32_t>(rng_());
      std::memcpy(mask.data(), &r, 4);
    }
    for (uint8_t m : mask) frame.push_back(static_cast<char>(m));
    for (size_t i = 0; i < n; ++i) {
      frame.push_back(static_cast<char>(static_cast<uint8_t>(payload[i]) ^ mask[i % 4]));
    }
    MutexLock lock(mu_);
    if (closed_) return false;
    if (opcode == 0x8) closed_ = true;
    return SendAll(frame);
  }

  void SendClose(uint16_t code) {
    std::string body;
    if (code != 1005 && code != 1006 && code != 1015) {
      body.push_back(static_cast<char>(code >> 8));
      body.push_back(static_cast<char>(code & 0xff));
    }
    SendFrame(0x8, body);
  }

  void Shutdown() { ::shutdown(fd_, SHUT_RDWR); }

 private:
  const int fd_;
  Mutex mu_;
  std::minstd_rand rng_ GUARDED_BY(mu_){std::random_device{}()};
  bool closed_ GUARDED_BY(mu_) = false;
};

// Reads exactly n bytes (after what `buffer` holds); false at EOF or error.
bool ReadExactly(int fd, std::string& buffer, size_t n) {
  char chunk[16384];
  while (buffer.size() < n) {
    ssize_t got = ::recv(fd, chunk, sizeof chunk, 0);
    if (got <= 0) return false;
    buffer.append(chunk, static_cast<size_t>(got));
  }
  return true;
}

int Dial(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The process's answer to the handshake: its head parsed, and the bytes that followed it.
struct HandshakeAnswer {
  net::HttpResponse response;
  std::string rest;
};

std::optional<HandshakeAnswer> ReadHandshake(int fd) {
  std::string buffer;
  char chunk[4096];
  size_t end;
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
    if (buffer.size() > (64u << 10)) return std::nullopt;
    ssize_t got = ::recv(fd, chunk, sizeof chunk, 0);
    if (got <= 0) return std::nullopt;
    buffer.append(chunk, static_cast<size_t>(got));
  }
  HandshakeAnswer out;
  std::string_view head(buffer.data(), end);
  size_t eol = head.find("\r\n");
  std::string_view status_line = head.substr(0, eol);
  if (status_line.size() < 12 || status_line.substr(0, 5) != "HTTP/") return std::nullopt;
  out.response.status = std::atoi(std::string(status_line.substr(9, 3)).c_str());
  while (eol != std::string_view::npos) {
    size_t start = eol + 2;
    eol = head.find("\r\n", start);
    std::string_view line = head.substr(start, eol == std::string_view::npos ? eol : eol - start);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    out.response.headers.Add(std::string(line.substr(0, colon)), std::string(value));
  }
  out.rest = buffer.substr(end + 4);
  return out;
}

// Copies the process's messages to the client until either side is done.
void Relay(const std::shared_ptr<Upstream>& up, const std::shared_ptr<net::WebSocket>& ws,
           std::string buffer) {
  std::string message;
  bool binary = false;  // the kind of the message being reassembled
  uint16_t close_code = net::kWsGoingAway;
  for (;;) {
    if (!ReadExactly(up->fd(), buffer, 2)) break;
    const uint8_t b0 = static_cast<uint8_t>(buffer[0]), b1 = static_cast<uint8_t>(buffer[1]);
    size_t header = 2;
    uint64_t len = b1 & 0x7f;
    if (len == 126 || len == 127) {
      size_t extra = len == 126 ? 2 : 8;
      if (!ReadExactly(up->fd(), buffer, 2 + extra)) break;
      len = 0;
      for (size_t i = 0; i < extra; ++i) len = (len << 8) | static_cast<uint8_t>(buffer[2 + i]);
      header += extra;
    }
    const bool masked = (b1 & 0x80) != 0;
    if (masked) header += 4;
    if (len > kMaxMessage) {
      close_code = net::kWsTooBig;
      break;
    }
    if (!ReadExactly(up->fd(), buffer, header + len)) break;
    std::string payload = buffer.substr(header, len);
    if (masked) {
      for (size_t i = 0; i < payload.size(); ++i) payload[i] ^= buffer[header - 4 + i % 4];
    }
    buffer.erase(0, header + len);
    const uint8_t opcode = b0 & 0x0f;
    const bool fin = (b0 & 0x80) != 0;
    if (opcode == 0x8) {  // close
      close_code = payload.size() >= 2
                       ? static_cast<uint16_t>((static_cast<uint8_t>(payload[0]) << 8) |
                                               static_cast<uint8_t>(payload[1]))
                       : net::kWsNormal;
      up->SendClose(close_code);
      ws->Close(close_code, payload.size() > 2 ? payload.substr(2) : "");
      return;
    }
    if (opcode == 0x9) {
      up->SendFrame(0xA, payload);
      continue;
    }
    if (opcode == 0xA) continue;
    if (opcode == 0x1 || opcode == 0x2) binary = opcode == 0x2;  // a message's first frame
    message += payload;
    if (message.size() > kMaxMessage) {
      close_code = net::kWsTooBig;
      break;
    }
    if (!fin) continue;
    if (!(binary ? ws->SendBinary(std::move(message)) : ws->Send(std::move(message)))) break;
    message.clear();
  }
  up->SendClose(close_code);
  ws->Close(close_code, "");
}

}  // namespace

void TunnelWebSocket(net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer,
                     uint16_t port, std::string pod_id) {
  std::thread([request = std::move(request), writer = std::move(writer), port,
               pod_id = std::move(pod_id)]() mutable {
    int fd = Dial(port);
    if (fd < 0) {
      net::HttpResponse r;
      r.status = 502;
      r.headers.Set("Content-Type", "text/plain; charset=utf-8");
      r.body = "502 Bad Gateway: " + pod_id + " refused the connection\n";
      writer->Send(std::move(r));
      return;
    }
    auto up = std::make_shared<Upstream>(fd);
    std::string key_bytes(16, '\0');
    std::random_device rd;
    for (char& c : key_bytes) c = static_cast<char>(rd() & 0xff);
    std::string head =
        "GET " + (request.target.empty() ? std::string("/") : request.target) + " HTTP/1.1\r\n";
    for (const auto& [k, v] : request.headers.fields()) {
      if (!Skipped(k)) head += k + ": " + v + "\r\n";
    }
    head += "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n";
    head += "Sec-WebSocket-Key: " + Base64Encode(key_bytes) + "\r\n\r\n";
    std::optional<HandshakeAnswer> answer;
    if (up->SendAll(head)) answer = ReadHandshake(fd);
    if (!answer) {
      net::HttpResponse r;
      r.status = 502;
      r.body = "502 Bad Gateway: " + pod_id + " did not answer the WebSocket handshake\n";
      writer->Send(std::move(r));
      return;
    }
    if (answer->response.status != 101) {
      net::HttpResponse r = std::move(answer->response);
      // The body, as far as Content-Length says (within the handshake's 10 s).
      const std::string length(r.headers.Get("Content-Length"));
      const size_t want = std::min<size_t>(std::strtoul(length.c_str(), nullptr, 10), 1u << 20);
      ReadExactly(fd, answer->rest, want);
      r.body = std::move(answer->rest);
      net::HttpResponse cleaned;
      cleaned.status = r.status;
      cleaned.body = std::move(r.body);
      for (const auto& [k, v] : r.headers.fields()) {
        if (!Skipped(k)) cleaned.headers.Add(k, v);
      }
      cleaned.headers.Set("X-Steward-Pod", pod_id);
      writer->Send(std::move(cleaned));
      return;
    }
    timeval none{0, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
    net::WebSocketOptions options;
    options.max_message_bytes = kMaxMessage;
    options.max_queued_bytes = 4 * kMaxMessage;
    std::weak_ptr<Upstream> weak = up;
    options.on_message = [weak](std::string message, bool binary) {
      if (auto u = weak.lock()) u->SendFrame(binary ? 0x2 : 0x1, message);
    };
    std::shared_ptr<net::WebSocket> ws = writer->AcceptWebSocket(std::move(options));
    if (!ws) return;
    ws->OnClose([weak](const net::WebSocketClose& close) {
      if (auto u = weak.lock()) {
        u->SendClose(close.code);
        u->Shutdown();
      }
    });
    Relay(up, ws, std::move(answer->rest));
  }).detach();
}

}  // namespace steward::cluster::ingress
