// Watchers: the watch benchmark's clients — many GET /v1/watch streams on raw sockets read by one
// epoll thread, which decodes the chunked bodies, splits them into SSE events and tracks which
// version of the probe project each stream has read. Thread-safe; owns its sockets and thread.
// Benchmark code, not linked into Steward.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "common/json.h"
#include "common/mutex.h"

namespace steward::bench {

// A set of watch streams read by one epoll thread. For each stream it decodes the chunked body,
// splits it into SSE events and tracks the highest record version of the probe project seen;
// Reached(v) tells when every stream had read version v. Thread-safe.
class Watchers {
  using milliseconds = std::chrono::milliseconds;

 public:
  Watchers() = default;
  ~Watchers() { Close(); }

  // Connects `n` streams to GET `target` with `token`; false on a connection failure (printed).
  bool Open(int n, uint16_t port, const std::string& target, const std::string& token) {
    const std::string request = "GET " + target +
                                " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token +
                                "\r\nAccept: text/event-stream\r\n\r\n";
    epoll_ = epoll_create1(EPOLL_CLOEXEC);
    for (int i = 0; i < n; ++i) {
      int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(port);
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
          send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
              static_cast<ssize_t>(request.size())) {
        std::fprintf(stderr, "watcher %d: connect/send: %s\n", i, std::strerror(errno));
        if (fd >= 0) ::close(fd);
        return false;
      }
      auto c = std::make_unique<Conn>();
      c->fd = fd;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.ptr = c.get();
      epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev);
      conns_.push_back(std::move(c));
    }
    reader_ = std::thread([this] { Run(); });
    return true;
  }

  // Waits until every stream has its response head (200); false after `timeout`.
  bool WaitStarted(milliseconds timeout) {
    MutexLock lock(mu_);
    return cv_.WaitFor(mu_, timeout, [&]() REQUIRES(mu_) { return started_ == conns_.size(); }) &&
           failed_ == 0;
  }

  // When every stream had read a probe event of version >= v (nullopt: not yet, after timeout).
  std::optional<BenchClock::time_point> WaitReached(int64_t v, milliseconds timeout) {
    MutexLock lock(mu_);
    if (!cv_.WaitFor(mu_, timeout, [&]() REQUIRES(mu_) { return reached_.contains(v); })) {
      return std::nullopt;
    }
    return reached_[v];
  }

  void Close() {
    stop_ = true;
    if (reader_.joinable()) reader_.join();
    for (auto& c : conns_) ::close(c->fd);
    conns_.clear();
    if (epoll_ >= 0) ::close(epoll_);
    epoll_ = -1;
  }

  // What the streams read: the fewest and most events, whether they all read the same ids in
  // the same order, how many ids went backwards. After WaitEvents or Close.
  struct Order {
    uint64_t fewest = 0, most = 0, out_of_order = 0;
    bool identical = true;
  };
  // Waits until every stream has read at least `n` events with an id; false after `timeout`.
  bool WaitEvents(uint64_t n, milliseconds timeout) {
    MutexLock lock(mu_);
    return cv_.WaitFor(mu_, timeout, [&]() REQUIRES(mu_) {
      for (const auto& c : conns_) {
        if (c->events < n) return false;
      }
      return true;
    });
  }
  Order order() {
    MutexLock lock(mu_);
    Order o;
    bool first = true;
    for (const auto& c : conns_) {
      o.fewest = first ? c->events : std::min(o.fewest, c->events);
      o.most = std::max(o.most, c->events);
      o.out_of_order += c->out_of_order;
      o.identical = o.identical && c->ids_hash == conns_.front()->ids_hash;
      first = false;
    }
    return o;
  }

  size_t size() const { return conns_.size(); }
  uint64_t bytes() const { return bytes_.load(); }
  int slow_consumer_errors() const { return slow_.load(); }
  // CPU seconds the reader thread used (valid after Close()).
  double reader_cpu_s() const { return reader_cpu_s_.load(); }
  int ended() const { return ended_.load(); }

 private:
  struct Conn {
    int fd = -1;
    bool head_done = false;
    std::string head;
    // Chunked decoding.
    enum { kSize, kData, kCrlf } state = kSize;
    std::string size_line;
    size_t chunk_left = 0;
    size_t crlf_left = 0;
    std::string sse;  // decoded, not yet split into events
    int64_t probe_version = 0;
    bool closed = false;
    // Every event with an id: how many, the last stream position, a hash of the ids in the
    // order read (two streams that read the same events in the same order hash alike), and
    // how many ids did not move forward.
    uint64_t events = 0;
    int64_t last_position = -1;
    uint64_t ids_hash = 1469598103934665603ULL;
    uint64_t out_of_order = 0;
  };

  void Run() {
    const double cpu0 = ThreadCpuSeconds();
    Read();
    reader_cpu_s_ = ThreadCpuSeconds() - cpu0;
  }

  void Read() {
    std::vector<epoll_event> events(256);
    std::vector<char> buf(1 << 16);
    while (!stop_) {
      int n = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), 50);
      for (int i = 0; i < n; ++i) {
        Conn& c = *static_cast<Conn*>(events[i].data.ptr);
        ssize_t got = ::recv(c.fd, buf.data(), buf.size(), MSG_DONTWAIT);
        if (got <= 0) {
          if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
            epoll_ctl(epoll_, EPOLL_CTL_DEL, c.fd, nullptr);
            c.closed = true;
            ++ended_;
          }
          continue;
        }
        bytes_ += static_cast<uint64_t>(got);
        Feed(c, buf.data(), static_cast<size_t>(got));
      }
    }
  }

  void Feed(Conn& c, const char* p, size_t n) {
    if (!c.head_done) {
      c.head.append(p, n);
      size_t end = c.head.find("\r\n\r\n");
      if (end == std::string::npos) return;
      const bool ok = c.head.starts_with("HTTP/1.1 200");
      std::string rest = c.head.substr(end + 4);
      c.head_done = true;
      {
        MutexLock lock(mu_);
        ++started_;
        if (!ok) ++failed_;
      }
      cv_.NotifyAll();
      if (!ok) std::fprintf(stderr, "watch answered: %s\n", c.head.substr(0, end).c_str());
      Decode(c, rest.data(), rest.size());
      return;
    }
    Decode(c, p, n);
  }

  void Decode(Conn& c, const char* p, size_t n) {
    size_t i = 0;
    while (i < n) {
      switch (c.state) {
        case Conn::kSize: {
          char ch = p[i++];
          if (ch != '\n') {
            c.size_line += ch;
            break;
          }
          c.chunk_left = std::stoul(c.size_line, nullptr, 16);
          c.size_line.clear();
          c.state = c.chunk_left == 0 ? Conn::kCrlf : Conn::kData;
          c.crlf_left = 2;
          break;
        }
        case Conn::kData: {
          size_t take = std::min(c.chunk_left, n - i);
          c.sse.append(p + i, take);
          i += take;
          c.chunk_left -= take;
          if (c.chunk_left == 0) {
            c.state = Conn::kCrlf;
            c.crlf_left = 2;
          }
          break;
        }
        case Conn::kCrlf:
          ++i;
          if (--c.crlf_left == 0) c.state = Conn::kSize;
          break;
      }
    }
    Split(c);
  }

  // The event's "id: <feed>.<position>" line, if any, into the stream's order check. The
  // counters are read by other threads under mu_.
  void CountId(Conn& c, std::string_view block) REQUIRES(mu_) {
    size_t at = block.find("\nid: ");
    if (at == std::string_view::npos) return;
    at += 5;
    const size_t eol = block.find('\n', at);
    std::string_view id = block.substr(at, eol == std::string_view::npos ? eol : eol - at);
    const size_t dot = id.rfind('.');
    const int64_t position = std::atoll(std::string(id.substr(dot + 1)).c_str());
    if (position <= c.last_position) ++c.out_of_order;
    c.last_position = position;
    for (char ch : id) c.ids_hash = (c.ids_hash ^ static_cast<uint8_t>(ch)) * 1099511628211ULL;
    c.ids_hash = (c.ids_hash ^ '\n') * 1099511628211ULL;
    ++c.events;
  }

  void Split(Conn& c) {
    size_t start = 0, end;
    int64_t newest = c.probe_version;
    MutexLock counting(mu_);
    const uint64_t events_before = c.events;
    while ((end = c.sse.find("\n\n", start)) != std::string::npos) {
      std::string_view block(c.sse.data() + start, end - start);
      start = end + 2;
      CountId(c, block);
      if (block.starts_with("event: error")) {
        ++slow_;
        continue;
      }
      if (!block.starts_with("event: project\n")) continue;
      if (block.find("\"name\":\"probe\"") == std::string_view::npos) continue;
      // The record version is data.version (the id is the stream position), the data's last
      // key (they are sorted), so the last "version" of the block.
      constexpr std::string_view kVersion = "\"version\":";
      const size_t at = block.rfind(kVersion);
      if (at == std::string_view::npos) continue;
      newest = std::max<int64_t>(newest, std::atoll(block.data() + at + kVersion.size()));
    }
    c.sse.erase(0, start);
    if (newest == c.probe_version) {
      if (c.events != events_before) cv_.NotifyAll();
      return;
    }
    const auto now = BenchClock::now();
    for (int64_t v = c.probe_version + 1; v <= newest; ++v) {
      if (++count_[v] == conns_.size()) {
        reached_[v] = now;
        count_.erase(v);
      }
    }
    c.probe_version = newest;
    cv_.NotifyAll();
  }

  int epoll_ = -1;
  std::vector<std::unique_ptr<Conn>> conns_;
  std::thread reader_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<int> slow_{0}, ended_{0};
  std::atomic<double> reader_cpu_s_{0};
  Mutex mu_;
  CondVar cv_;  // a stream started, or a probe version was reached
  size_t started_ GUARDED_BY(mu_) = 0, failed_ GUARDED_BY(mu_) = 0;
  std::map<int64_t, size_t> count_ GUARDED_BY(mu_);  // version → streams that read it
  // Version → when the last stream read it.
  std::map<int64_t, BenchClock::time_point> reached_ GUARDED_BY(mu_);
};

}  // namespace steward::bench
