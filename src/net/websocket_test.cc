// WebSocket on HttpServer: the opening handshake (accepted, refused), messages both ways and in
// order, closes from either side, the send-queue bound, the message-size limit, keep-alive pings
// and the idle limit, many sockets at once, TLS, and the server stopping with sockets open. The
// client is Boost.Beast's (test_support/websocket_client.h); raw connections send what it
// would not.
#include "net/websocket.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "common/ascii.h"
#include "common/mutex.h"
#include "net/http_server.h"
#include "net/server_test_support.h"
#include "net/tls_certs.h"
#include "test_support/websocket_client.h"

namespace steward::net {
namespace {

using namespace server_testing;
using test_support::WsClient;
using test_support::WssClient;

// The handshake request of RFC 6455 §1.3, whose answer must carry the accept key of the RFC.
constexpr std::string_view kRfcKey = "dGhlIHNhbXBsZSBub25jZQ==";
constexpr std::string_view kRfcAccept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

std::string Handshake(std::string_view extra = "", std::string_view method = "GET",
                      std::string_view version = "HTTP/1.1") {
  return std::string(method) + " /chat " + std::string(version) +
         "\r\nHost: server.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         "Sec-WebSocket-Key: " +
         std::string(kRfcKey) + "\r\nSec-WebSocket-Version: 13\r\n" + std::string(extra) + "\r\n";
}

// A handler that accepts every upgrade with the options set by the test and keeps the sockets,
// in the order they were accepted, with how each one ended.
class AcceptingHandler : public Handler {
 public:
  explicit AcceptingHandler(WebSocketOptions options = {}) : options_(std::move(options)) {}

  void Handle(HttpRequest request, std::shared_ptr<ResponseWriter> writer) override {
    auto socket = writer->AcceptWebSocket(options_);
    MutexLock lock(mu_);
    targets_.push_back(request.target);
    if (socket == nullptr) {
      ++refused_;
      return;
    }
    const size_t index = sockets_.size();
    sockets_.push_back(socket);
    closes_.emplace_back();
    socket->OnClose([this, index](const WebSocketClose& how) {
      MutexLock l(mu_);
      closes_[index] = how;
      cv_.NotifyAll();
    });
    cv_.NotifyAll();
  }

  // The i-th socket accepted, waiting for it.
  std::shared_ptr<WebSocket> Socket(size_t i) {
    MutexLock lock(mu_);
    if (!cv_.WaitFor(mu_, kWait, [&]() REQUIRES(mu_) { return sockets_.size() > i; })) {
      return nullptr;
    }
    return sockets_[i];
  }
  // How the i-th socket ended, waiting for it.
  std::optional<WebSocketClose> Closed(size_t i, std::chrono::milliseconds timeout = kWait) {
    MutexLock lock(mu_);
    cv_.WaitFor(mu_, timeout,
                [&]() REQUIRES(mu_) { return closes_.size() > i && closes_[i].has_value(); });
    return closes_.size() > i ? closes_[i] : std::nullopt;
  }
  int refused() {
    MutexLock lock(mu_);
    return refused_;
  }
  size_t accepted() {
    MutexLock lock(mu_);
    return sockets_.size();
  }
  void Release() {
    MutexLock lock(mu_);
    sockets_.clear();
  }

 private:
  WebSocketOptions options_;
  Mutex mu_;
  CondVar cv_;  // a socket was accepted or closed
  std::vector<std::shared_ptr<WebSocket>> sockets_ GUARDED_BY(mu_);
  std::vector<std::optional<WebSocketClose>> closes_ GUARDED_BY(mu_);
  std::vector<std::string> targets_ GUARDED_BY(mu_);
  int refused_ GUARDED_BY(mu_) = 0;
};

WsClient::Options ClientOptions(uint16_t port, bool read = true) {
  WsClient::Options o;
  o.port = port;
  o.target = "/ws";
  o.read = read;
  return o;
}

std::string StatusLine(const std::string& response) {
  return response.substr(0, response.find('\r'));
}

// The request without any field called `name`.
void Without(HttpRequest& r, std::string_view name) {
  Headers kept;
  for (const auto& [n, v] : r.headers.fields()) {
    if (!AsciiEqualsIgnoreCase(n, name)) kept.Add(n, v);
  }
  r.headers = kept;
}

TEST(WebSocketHandshakeTest, WhatIsRefusedAndWhy) {
  HttpRequest good;
  good.method = "GET";
  good.target = "/chat";
  good.headers.Add("Host", "server.example.com");
  good.headers.Add("Upgrade", "websocket");
  good.headers.Add("Connection", "keep-alive, Upgrade");
  good.headers.Add("Sec-WebSocket-Version", "13");
  good.headers.Add("Sec-WebSocket-Key", std::string(kRfcKey));
  EXPECT_FALSE(CheckWebSocketHandshake(good).has_value());
  EXPECT_TRUE(IsWebSocketUpgrade(good));

  struct Case {
    const char* what;
    std::function<void(HttpRequest&)> change;
    int status;
    const char* message_part;
  };
  const std::vector<Case> cases = {
      {"no Upgrade", [](HttpRequest& r) { r.headers.Set("Upgrade", "h2c"); }, 426,
       "WebSocket only"},
      {"POST", [](HttpRequest& r) { r.method = "POST"; }, 400, "GET"},
      {"HTTP/1.0", [](HttpRequest& r) { r.version = 10; }, 400, "HTTP/1.1"},
      {"no Host", [](HttpRequest& r) { Without(r, "host"); }, 400, "Host"},
      {"Connection without upgrade",
       [](HttpRequest& r) { r.headers.Set("Connection", "keep-alive"); }, 400,
       "Connection: Upgrade"},
      {"no version", [](HttpRequest& r) { Without(r, "sec-websocket-version"); }, 400,
       "Sec-WebSocket-Version"},
      {"version 8", [](HttpRequest& r) { r.headers.Set("Sec-WebSocket-Version", "8"); }, 426,
       "version 13"},
      {"no key", [](HttpRequest& r) { Without(r, "sec-websocket-key"); }, 400,
       "one Sec-WebSocket-Key"},
      {"short key", [](HttpRequest& r) { r.headers.Set("Sec-WebSocket-Key", "c2hvcnQ="); }, 400,
       "16 bytes"},
      {"key not base64",
       [](HttpRequest& r) { r.headers.Set("Sec-WebSocket-Key", "!!!!!!!!!!!!!!!!!!!!!!=="); }, 400,
       "16 bytes"},
      {"two keys", [](HttpRequest& r) { r.headers.Add("Sec-WebSocket-Key", std::string(kRfcKey)); },
       400, "one Sec-WebSocket-Key"},
      {"a body",
       [](HttpRequest& r) {
         r.body = "x";
         r.headers.Add("Content-Length", "1");
       },
       400, "no body"},
      {"chunked", [](HttpRequest& r) { r.headers.Add("Transfer-Encoding", "chunked"); }, 400,
       "no body"},
  };
  for (const Case& c : cases) {
    HttpRequest r = good;
    c.change(r);
    auto refusal = CheckWebSocketHandshake(r);
    ASSERT_TRUE(refusal.has_value()) << c.what;
    EXPECT_EQ(refusal->status, c.status) << c.what;
    EXPECT_NE(refusal->message.find(c.message_part), std::string::npos)
        << c.what << ": " << refusal->message;
    if (c.status == 426) {
      EXPECT_EQ(refusal->headers.Get("Sec-WebSocket-Version"), "13") << c.what;
    }
  }
  // Repeated Connection and Upgrade fields are one list each; names and tokens ignore case.
  HttpRequest split = good;
  split.headers.Set("Connection", "keep-alive");
  split.headers.Add("CONNECTION", "UPGRADE");
  split.headers.Set("Upgrade", "h2c");
  split.headers.Add("upgrade", "WebSocket");
  EXPECT_FALSE(CheckWebSocketHandshake(split).has_value());
}

TEST(WebSocketTest, HandshakeIsAnsweredWithTheRfcAcceptKey) {
  AcceptingHandler handler;
  auto server = StartServer(handler);
  ASSERT_TRUE(server);
  RawConnection raw(server->port());
  ASSERT_TRUE(raw.connected());
  raw.Send(Handshake());
  std::string answer = raw.ReadUntil("\r\n\r\n");
  EXPECT_EQ(StatusLine(answer), "HTTP/1.1 101 Switching Protocols") << answer;
  EXPECT_NE(answer.find("Sec-WebSocket-Accept: " + std::string(kRfcAccept) + "\r\n"),
            std::string::npos)
      << answer;
  EXPECT_NE(answer.find("Upgrade: websocket\r\n"), std::string::npos) << answer;
  ASSERT_NE(handler.Socket(0), nullptr);
  EXPECT_FALSE(handler.Socket(0)->closed());
  EXPECT_EQ(server->connection_count(), 1u);
}

TEST(WebSocketTest, BadHandshakesGetAClearAnswerAndNoSocket) {
  AcceptingHandler handler;
  auto server = StartServer(handler);
  ASSERT_TRUE(server);
  struct Case {
    std::string request;
    std::string status_line;
    std::string body_part;
  };
  const std::string key = "Sec-WebSocket-Key: " + std::string(kRfcKey) + "\r\n";
  const std::vector<Case> cases = {
      {"GET /x HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 426 Upgrade Required", "WebSocket only"},
      {Handshake("", "POST"), "HTTP/1.1 400 Bad Request", "GET"},
      {Handshake("", "GET", "HTTP/1.0"), "HTTP/1.1 400 Bad Request", "HTTP/1.1"},
      {"GET /x HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" + key +
           "Sec-WebSocket-Version: 8\r\n\r\n",
       "HTTP/1.1 426 Upgrade Required", "version 13"},
      {"GET /x HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" + key + "\r\n",
       "HTTP/1.1 400 Bad Request", "Sec-WebSocket-Version"},
      {"GET /x HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: keep-alive\r\n" + key +
           "Sec-WebSocket-Version: 13\r\n\r\n",
       "HTTP/1.1 400 Bad Request", "Connection: Upgrade"},
      {"GET /x HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
       "Sec-WebSocket-Version: 13\r\n\r\n",
       "HTTP/1.1 400 Bad Request", "Sec-WebSocket-Key"},
      {"GET /x HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
       "Sec-WebSocket-Key: c2hvcnQ=\r\nSec-WebSocket-Version: 13\r\n\r\n",
       "HTTP/1.1 400 Bad Request", "16 bytes"},
      // A client must wait for the answer before it sends anything more (RFC 6455 §4.1).
      {Handshake() + "\x81\x02hi", "HTTP/1.1 400 Bad Request", "before the WebSocket handshake"},
  };
  int refused = 0;
  for (const Case& c : cases) {
    RawConnection raw(server->port());
    ASSERT_TRUE(raw.connected());
    raw.Send(c.request);
    std::string answer = raw.ReadUntil("\r\n\r\n");
    answer += raw.ReadUntil("\n");  // the body: one line
    EXPECT_EQ(StatusLine(answer), c.status_line) << c.request << "\n" << answer;
    EXPECT_NE(answer.find(c.body_part), std::string::npos) << c.request << "\n" << answer;
    if (c.status_line.find("426") != std::string::npos) {
      EXPECT_NE(answer.find("Sec-WebSocket-Version: 13\r\n"), std::string::npos) << answer;
    }
    ++refused;
    EXPECT_TRUE(WaitUntil([&] { return handler.refused() == refused; }));
  }
  EXPECT_EQ(handler.accepted(), 0u);
}

// A Handler::CheckHead refusal (say 401) answers an upgrade before the handler sees it.
TEST(WebSocketTest, CheckHeadRefusesAnUpgradeLikeAnyRequest) {
  class Guarded : public AcceptingHandler {
   public:
    std::optional<HttpResponse> CheckHead(const HttpRequest& head) override {
      if (head.headers.Get("Authorization") == "Bearer right") return std::nullopt;
      return TextResponse(401, "no token\n");
    }
  } handler;
  auto server = StartServer(handler);
  ASSERT_TRUE(server);
  WsClient refused(ClientOptions(server->port()));
  EXPECT_FALSE(refused.upgraded());
  EXPECT_EQ(refused.status(), 401);
  EXPECT_EQ(refused.body(), "no token\n");
  auto options = ClientOptions(server->port());
  options.headers = {{"Authorization", "Bearer right"}};
  WsClient accepted(options);
  EXPECT_TRUE(accepted.upgraded()) << accepted.handshake_error();
  EXPECT_NE(handler.Socket(0), nullptr);
  EXPECT_EQ(handler.accepted(), 1u);
  EXPECT_EQ(handler.refused(), 0);
}

TEST(WebSocketTest, MessagesArriveInOrderBothWays) {
  Mutex mu;
  std::vector<std::string> received;
  WebSocketOptions options;
  options.on_message = [&](std::string m, bool binary) {
    MutexLock lock(mu);
    received.push_back((binary ? "b:" : "t:") + m);
  };
  AcceptingHandler handler(options);
  auto server = StartServer(handler);
  ASSERT_TRUE(server);
  WsClient client(ClientOptions(server->port()));
  ASSERT_TRUE(client.upgraded()) << client.handshake_error();
  auto socket = handler.Socket(0);
  ASSERT_NE(socket, nullptr);
  constexpr int kCount = 2000;
  // Every third message is binary, with a byte that is not UTF-8 (a text frame could not hold
  // it: the client would fail the connection).
  std::thread producer([&] {
    for (int i = 0; i < kCount; ++i) {
      if (i % 3 == 0) {
        ASSERT_TRUE(socket->SendBinary("m" + std::to_string(i) + "\xff"));
      } else {
        ASSERT_TRUE(socket->Send("m" + std::to_string(i)));
      }
    }
  });
  for (int i = 0; i < 100; ++i) client.Send("c" + std::to_string(i), i % 2 == 1);
  producer.join();
  ASSERT_TRUE(client.WaitForMessages(kCount)) << client.messages().size();
  auto messages = client.messages();
  ASSERT_EQ(messages.size(), static_cast<size_t>(kCount));
  auto binary = client.binary_flags();
  for (int i = 0; i < kCount; ++i) {
    ASSERT_EQ(messages[i], "m" + std::to_string(i) + (i % 3 == 0 ? "\xff" : ""));
    ASSERT_EQ(binary[i], i % 3 == 0) << i;
  }
  ASSERT_TRUE(WaitUntil([&] {
    MutexLock lock(mu);
    return received.size() == 100;
  }));
  MutexLock lock(mu);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(received[i], (i % 2 ? "b:c" : "t:c") + std::to_string(i));
  }
}

TEST(WebSocketTest, AClientCloseIsNoticedAtOnce) {
  AcceptingHandler handler;
  auto server = StartServer(handler);
  ASSERT_TRUE(server);
  WsClient client(ClientOptions(server->port()));
  ASSERT_TRUE(client.upgraded());
  auto socket = handler.Socket(0);
  ASSERT_NE(socket, nullptr);
  client.Close(4321, "bye");
  auto how = handler.Closed(0);
  ASSERT_TRUE(how.has_value());
  EXPECT_EQ(how->code, 4321);
  EXPECT_EQ(how->reason, "bye");
  EXPECT_TRUE(how->by_peer);
  EXPECT_TRUE(socket->closed());
  EXPECT_FALSE(socket->Send("too late"));
  ASSERT_TRUE(client.WaitEnded());
  EXPECT_EQ(client.close_code(), 4321);  // the server answered with the same code
  EXPECT_TRUE(WaitUntil([&] { return server->connection_count() == 0; }));
  // OnClose after the close runs at once.
  std::optional<WebSocketClose> late;
  socket->OnClose([&](const WebSocketClose& c) { late = c; });
  ASSERT_TRUE(late.has_value());
  EXPECT_EQ(late->code, 4321);
}

TEST(WebSocketTest, AClientThatDropsTheConnectionIsNoticed) {
  AcceptingHandler handler;
  auto server = StartServer(handler);
  ASSERT_TRUE(server);
  {
    WsClient client(ClientOptions(server->port()));
    ASSERT_TRUE(client.upgraded());
    ASSERT_NE(handler.Socket(0), nullptr);
  }  // the client closes its socket without a close frame
  auto how = handler.Closed(0);
  ASSERT_TRUE(how.has_value());
  EXPECT_EQ(how->code, kWsAbnormal);
  EXPECT_TRUE(how->by_peer);
  EXPECT_TRUE(WaitUntil([&] { return server->connection_count() == 0; }));
}

TEST(WebSocketTest, TheServersCloseFrameFollowsWhatWasQueued) {
  AcceptingHandler handler;
  auto server = StartServer(handler);
  ASSERT_TRUE(server);
  WsClient client(ClientOptions(server->port()));
  ASSERT_TRUE(client.upgraded());
  auto socket = handler.Socket(0);
  ASSERT_NE(socket, nullptr);
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(socket->Send(std::string(1000, 'a' + i % 26)));
  socket->Close(4001, "done");
  EXPECT_TRUE(socket->closed());
  EXPECT_FALSE(socket->Send("after close"));
  ASSERT_TRUE(client.WaitEnded());
  EXPECT_EQ(client.messages().size(), 50u);
  EXPECT_EQ(client.close_code(), 4001);
  EXPECT_EQ(client.close_reason(), "done");
  auto how = handler.Closed(0);
  ASSERT_TRUE(how.has_value());
  EXPECT_EQ(how->code, 4001);
  EXPECT_EQ(how->reason, "done");
  EXPECT_FALSE(how->by_peer);
  EXPECT_TRUE(WaitUntil([&] { return server->connection_count() == 0; }));
}

TEST(WebSocketTest, ACloseCodeThatMayNotBeSentBecomes1011AndALongReasonIsCut) {
  AcceptingHandler handler;
  auto server = StartServer(handler);
  ASSERT_TRUE(server);
  WsClient client(ClientOptions(server->port()));
  ASSERT_TRUE(client.upgraded());
  auto socket = handler.Socket(0);
  ASSERT_NE(socket, nullptr);
  std::string reason;
  for (int i = 0; i < 100; ++i) reason += "\xc3\xa9";  // é, two bytes each
  socket->Close(1005, reason);
  ASSERT_TRUE(client.WaitEnded());
  EXPECT_EQ(client.close_code(), kWsInternalError);
  // Cut at a character boundary: 61 whole characters (the Beast client would refuse bad UTF-8).
  EXPECT_EQ(client.close_reason(), reason.substr(0, 122));
}

TEST(WebSocketTest, ReleasingTheSocketClosesItGoingAway) {
  AcceptingHandler handler;
  auto server = StartServer(handler);
  ASSERT_TRUE(server);
  WsClient client(ClientOptions(server->port()));
  ASSERT_TRUE(client.upgraded());
  {
    auto socket = handler.Socket(0);
    ASSERT_NE(socket, nullptr);
    ASSERT_TRUE(socket->Send("last"));
    handler.Release();
  }
  ASSERT_TRUE(client.WaitEnded());
  EXPECT_EQ(client.messages(), std::vector<std::string>{"last"});
  EXPECT_EQ(client.close_code(), kWsGoingAway);
}

// A client that does not read: the queue bound is kept, the socket is closed with 1008 and the
// client, once it reads, gets a prefix of the messages in order and then the close frame.
TEST(WebSocketTest, ASlowConsumerIsClosedWithPolicyViolation) {
  WebSocketOptions options;
  options.max_queued_bytes = 256 * 1024;
  AcceptingHandler handler(options);
  auto server = StartServer(handler);
  ASSERT_TRUE(server);
  WsClient client(ClientOptions(server->port(), /*read=*/false));
  ASSERT_TRUE(client.upgraded());
  auto socket = handler.Socket(0);
  ASSERT_NE(socket, nullptr);
  const std::string payload(16 * 1024, 'x');
  int sent = 0;
  size_t most_pending = 0;
  auto send = [&] {
    if (!socket->Send(std::to_string(sent) + ":" + payload)) return false;
    ++sent;
    most_pending = std::max(most_pending, socket->pending_bytes());
    return true;
  };
  // First fill the kernel's socket buffers (some megabytes), as a producer that minds
  // pending_bytes() would: once the queue stops draining, nothing more leaves the server.
  while (sent < 4096) {
    if (!WaitUntil([&] { return socket->pending_bytes() < 64 * 1024; }, 2s)) break;
    ASSERT_TRUE(send());
  }
  ASSERT_LT(sent, 4096) << "the queue never stopped draining";
  const int before_overflow = sent;
  while (sent < 4096 && send()) {
  }
  ASSERT_LT(sent, 4096) << "Send never refused a message";
  EXPECT_GT(sent, before_overflow);
  EXPECT_LE(most_pending, options.max_queued_bytes);
  EXPECT_TRUE(socket->closed());
  EXPECT_FALSE(socket->Send("x"));
  client.StartReading();
  ASSERT_TRUE(client.WaitEnded());
  EXPECT_EQ(client.close_code(), kWsPolicyViolation);
  EXPECT_NE(client.close_reason().find("send queue full"), std::string::npos);
  auto messages = client.messages();
  EXPECT_LT(messages.size(), static_cast<size_t>(sent)) << "queued messages were dropped";
  for (size_t i = 0; i < messages.size(); ++i) {
    ASSERT_EQ(messages[i], std::to_string(i) + ":" + payload) << i;
  }
  auto how = handler.Closed(0);
  ASSERT_TRUE(how.has_value());
  EXPECT_EQ(how->code, kWsPolicyViolation);
  EXPECT_FALSE(how->by_peer);
}

TEST(WebSocketTest, AnOversizedClientMessageIsRefusedWith1009) {
  Mutex mu;
  std::vector<size_t> sizes;
  WebSocketOptions options;
  options.max_message_bytes = 1024;
  options.on_message = [&](std::string m, bool) {
    MutexLock lock(mu);
    sizes.push_back(m.size());
  };
  AcceptingHandler handler(options);
  auto server = StartServer(handler);
  ASSERT_TRUE(server);
  WsClient client(ClientOptions(server->port()));
  ASSERT_TRUE(client.upgraded());
  client.Send(std::string(1024, 'a'));
  client.Send(std::string(1025, 'b'));
  client.Send("never read");
  ASSERT_TRUE(client.WaitEnded());
  EXPECT_EQ(client.close_code(), kWsTooBig);
  auto how = handler.Closed(0);
  ASSERT_TRUE(how.has_value());
  EXPECT_EQ(how->code, kWsTooBig);
  MutexLock lock(mu);
  EXPECT_EQ(sizes, std::vector<size_t>{1024});
}

TEST(WebSocketTest, AnIdlePeerIsPingedAndOneThatDoesNotAnswerIsDropped) {
  WebSocketOptions options;
  options.idle_timeout = std::chrono::milliseconds(400);
  AcceptingHandler handler(options);
  auto server = StartServer(handler);
  ASSERT_TRUE(server);
  // Beast's client answers pings: it stays connected while pings come.
  WsClient client(ClientOptions(server->port()));
  ASSERT_TRUE(client.upgraded());
  ASSERT_TRUE(WaitUntil([&] { return client.pings() >= 4; })) << client.pings();
  EXPECT_FALSE(client.ended()) << client.end_error();
  // A peer that never answers: dropped after the idle limit.
  RawConnection raw(server->port());
  raw.Send(Handshake());
  EXPECT_EQ(StatusLine(raw.ReadUntil("\r\n\r\n")), "HTTP/1.1 101 Switching Protocols");
  EXPECT_TRUE(raw.WaitForEof());
  auto how = handler.Closed(1);
  ASSERT_TRUE(how.has_value());
  EXPECT_EQ(how->code, kWsAbnormal);
  EXPECT_EQ(how->reason, "idle timeout");
  EXPECT_FALSE(handler.Closed(0, std::chrono::milliseconds(0)).has_value());
}

TEST(WebSocketTest, ManySocketsAtOnceEachInOrder) {
  constexpr int kSockets = 8, kMessages = 300;
  AcceptingHandler handler;
  auto server = StartServer(handler);
  ASSERT_TRUE(server);
  std::vector<std::unique_ptr<WsClient>> clients;
  for (int i = 0; i < kSockets; ++i) {
    clients.push_back(std::make_unique<WsClient>(ClientOptions(server->port())));
    ASSERT_TRUE(clients.back()->upgraded());
  }
  std::vector<std::thread> producers;
  for (int i = 0; i < kSockets; ++i) {
    auto socket = handler.Socket(i);
    ASSERT_NE(socket, nullptr);
    producers.emplace_back([socket, i] {
      for (int n = 0; n < kMessages; ++n) socket->Send(std::to_string(i) + ":" + std::to_string(n));
      socket->Close(kWsNormal, "all sent");
    });
  }
  for (auto& t : producers) t.join();
  // Accept order is the connect order: client i got socket i.
  for (int i = 0; i < kSockets; ++i) {
    ASSERT_TRUE(clients[i]->WaitEnded());
    EXPECT_EQ(clients[i]->close_code(), kWsNormal);
    auto messages = clients[i]->messages();
    ASSERT_EQ(messages.size(), static_cast<size_t>(kMessages)) << i;
    for (int n = 0; n < kMessages; ++n) {
      ASSERT_EQ(messages[n], std::to_string(i) + ":" + std::to_string(n));
    }
  }
  EXPECT_TRUE(WaitUntil([&] { return server->connection_count() == 0; }));
}

TEST(WebSocketTest, StoppingTheServerClosesOpenSocketsGoingAway) {
  AcceptingHandler handler;
  auto server = StartServer(handler);
  ASSERT_TRUE(server);
  std::vector<std::unique_ptr<WsClient>> clients;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<WsClient>(ClientOptions(server->port())));
    ASSERT_TRUE(clients.back()->upgraded());
    ASSERT_NE(handler.Socket(i), nullptr);
  }
  ASSERT_TRUE(handler.Socket(0)->Send("queued before the stop"));
  // A peer that never answers the close frame.
  RawConnection raw(server->port());
  raw.Send(Handshake());
  EXPECT_EQ(StatusLine(raw.ReadUntil("\r\n\r\n")), "HTTP/1.1 101 Switching Protocols");
  ASSERT_NE(handler.Socket(3), nullptr);
  auto start = std::chrono::steady_clock::now();
  server->Stop();
  auto took = std::chrono::steady_clock::now() - start;
  // The silent peer gets one second (kWsStopGrace) to answer.
  EXPECT_LT(took, std::chrono::seconds(4));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(clients[i]->WaitEnded());
    EXPECT_EQ(clients[i]->close_code(), kWsGoingAway) << clients[i]->end_error();
    EXPECT_EQ(clients[i]->close_reason(), "the server is stopping");
    auto how = handler.Closed(i);
    ASSERT_TRUE(how.has_value());
    EXPECT_EQ(how->code, kWsGoingAway);
  }
  EXPECT_EQ(clients[0]->messages(), std::vector<std::string>{"queued before the stop"});
  auto silent = handler.Closed(3);
  ASSERT_TRUE(silent.has_value());
  EXPECT_EQ(silent->code, kWsAbnormal);
  EXPECT_FALSE(handler.Socket(0)->Send("after the stop"));
}

TEST(WebSocketTest, WorksOverTls) {
  auto ca = GenerateCa("test-ca");
  ASSERT_TRUE(ca.ok());
  auto serving = GenerateServingCert(*ca, "steward", {"localhost"}, {"127.0.0.1"});
  ASSERT_TRUE(serving.ok());
  AcceptingHandler handler;
  HttpServer::Options options;
  options.tls = TlsConfig{serving->cert_pem, serving->key_pem};
  auto server = StartServer(handler, options);
  ASSERT_TRUE(server);
  WssClient::Options o;
  o.port = server->port();
  o.target = "/wss";
  o.ca_pem = ca->cert_pem;
  WssClient client(o);
  ASSERT_TRUE(client.upgraded()) << client.handshake_error();
  auto socket = handler.Socket(0);
  ASSERT_NE(socket, nullptr);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(socket->Send("tls " + std::to_string(i)));
  socket->Close(kWsNormal, "bye");
  ASSERT_TRUE(client.WaitEnded());
  ASSERT_EQ(client.messages().size(), 100u);
  EXPECT_EQ(client.messages()[99], "tls 99");
  EXPECT_EQ(client.close_code(), kWsNormal);
  EXPECT_EQ(client.close_reason(), "bye");
  auto how = handler.Closed(0);
  ASSERT_TRUE(how.has_value());
  EXPECT_EQ(how->code, kWsNormal);
}

}  // namespace
}  // namespace steward::net
