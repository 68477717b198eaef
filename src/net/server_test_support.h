// Helpers of the HTTP server's tests (http_server_test.cc, websocket_test.cc): a handler from a
// function, an event to wait for, polling with a deadline, a server on port 0 and a raw TCP
// connection for bytes the client would not send.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "common/mutex.h"
#include "net/http_client.h"
#include "net/http_server.h"

namespace steward::net::server_testing {

using namespace std::chrono_literals;

inline constexpr auto kWait = 10s;  // upper bound for anything a test waits for

// A handler that forwards to a function set by the test.
class FnHandler : public Handler {
 public:
  using Fn = std::function<void(HttpRequest, std::shared_ptr<ResponseWriter>)>;
  explicit FnHandler(Fn fn) : fn_(std::move(fn)) {}
  void Handle(HttpRequest request, std::shared_ptr<ResponseWriter> writer) override {
    fn_(std::move(request), std::move(writer));
  }

 private:
  Fn fn_;
};

// A flag that one thread sets and another waits for, with a deadline.
class Event {
 public:
  void Set() {
    MutexLock lock(mu_);
    set_ = true;
    cv_.NotifyAll();
  }
  bool Wait(std::chrono::milliseconds timeout = kWait) {
    MutexLock lock(mu_);
    return cv_.WaitFor(mu_, timeout, [&]() REQUIRES(mu_) { return set_; });
  }
  bool IsSet() {
    MutexLock lock(mu_);
    return set_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool set_ GUARDED_BY(mu_) = false;
};

// Polls `pred` until it holds or the deadline passes.
template <class Pred>
bool WaitUntil(Pred pred, std::chrono::milliseconds timeout = kWait) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

inline HttpResponse TextResponse(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.headers.Add("Content-Type", "text/plain");
  response.body = std::move(body);
  return response;
}

inline std::unique_ptr<HttpServer> StartServer(Handler& handler, HttpServer::Options options = {}) {
  auto server = HttpServer::Start(options, handler);
  EXPECT_TRUE(server.ok()) << server.error().ToString();
  return server.ok() ? std::move(server).value() : nullptr;
}

inline std::unique_ptr<HttpClient> MakeClient(uint16_t port, HttpClient::Options options = {}) {
  options.port = port;
  return HttpClient::Create(options);
}

// A raw blocking TCP connection, for requests the client cannot send.
class RawConnection {
 public:
  // `source`: the local IPv4 address to connect from (host byte order; any 127.x.y.z works on
  // Linux's loopback), to stand for another client; 0 lets the kernel choose.
  explicit RawConnection(uint16_t port, uint32_t source = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (source != 0) {
      sockaddr_in local{};
      local.sin_family = AF_INET;
      local.sin_addr.s_addr = htonl(source);
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) return;
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawConnection() { ::close(fd_); }
  bool connected() const { return connected_; }
  void Send(std::string_view data) {
    ASSERT_EQ(::send(fd_, data.data(), data.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(data.size()));
  }
  // Everything until the peer closes (or 10 s pass).
  std::string ReadToEof() {
    std::string out;
    char buf[4096];
    while (true) {
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }
  // Reads until `marker` has arrived (or the peer closes, or 10 s pass); returns all read.
  std::string ReadUntil(std::string_view marker) {
    std::string out;
    char c;
    while (out.find(marker) == std::string::npos) {
      if (::recv(fd_, &c, 1, 0) != 1) break;
      out += c;
    }
    return out;
  }
  // Like Send, but reports a failure (the peer closed) instead of failing the test.
  bool TrySend(std::string_view data) {
    return ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
  }
  // True when the peer closed the connection (recv returns 0) within 10 s.
  bool WaitForEof() {
    char buf[256];
    while (true) {
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n == 0) return true;
      if (n < 0) return false;
    }
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

}  // namespace steward::net::server_testing
