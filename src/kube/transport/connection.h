// Connection: one HTTP/1.1 connection of the transport's pool — TCP, optionally tunnelled
// through an HTTP CONNECT proxy, optionally TLS — with its own io_context.
//
// Blocking: every operation runs its asynchronous Asio operation to completion on the calling
// thread, bounded by a deadline (on the transport's Clock) and by the CancelToken bound with
// Bind(): Cancel() stops the io_context from any thread, the connection is then closed and the
// operation fails with kCancelled. A connection that failed in any way is closed and must not be
// reused.
//
// Not thread-safe: one thread uses a connection at a time (the pool hands it over under its
// lock); only the bound CancelToken touches it from other threads.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/clock.h"
#include "kube/transport/endpoint.h"
#include "kube/transport/tls.h"
#include "kube/transport/transport.h"

namespace steward::kube {

class Connection {
 public:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  using Parser = boost::beast::http::response_parser<boost::beast::http::buffer_body>;

  enum class Result { kOk, kFailed, kTimedOut, kCancelled };
  struct Outcome {
    Result result = Result::kOk;
    boost::system::error_code ec;
    size_t bytes = 0;        // transferred by the operation
    bool permanent = false;  // Connect only: retrying cannot help (certificate, proxy refusal)
    std::string message;     // for failures: what failed and why
    bool ok() const { return result == Result::kOk; }
  };

  // `tls` null: plain HTTP. `generation` is the TlsContexts generation of `tls`.
  Connection(const Clock& clock, std::shared_ptr<boost::asio::ssl::context> tls,
             uint64_t generation);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Resolves, connects (through `proxy` with CONNECT when given) and does the TLS handshake.
  Outcome Connect(const ServerUrl& server, const std::optional<ProxyUrl>& proxy,
                  const TlsContexts* tls, SteadyTime deadline);
  // Writes the whole request; `bytes` tells whether anything was written.
  Outcome Write(Request& request, SteadyTime deadline);
  Outcome ReadHeader(Parser& parser, SteadyTime deadline);
  // Reads some body into the parser's buffer (need_buffer is not a failure).
  Outcome ReadSome(Parser& parser, SteadyTime deadline);

  // Makes Cancel() on `cancel` (may be null) interrupt this connection until Unbind().
  void Bind(const std::shared_ptr<CancelToken>& cancel);
  void Unbind();

  // Checked before reusing an idle connection: true when the server closed it (or sent bytes
  // nobody asked for) while it sat in the pool.
  bool LooksStale();
  // True when the connection can go back to the pool after a complete response.
  bool Reusable() const;
  void Close();

  uint64_t generation() const { return generation_; }
  bool reused() const { return reused_; }
  void set_reused() { reused_ = true; }

 private:
  struct Completion;
  template <class Start>
  Outcome Run(Start&& start, SteadyTime deadline);
  bool Cancelled() const;
  boost::beast::tcp_stream& Lowest();
  Outcome Resolve(const std::string& host, uint16_t port, SteadyTime deadline,
                  std::vector<boost::asio::ip::tcp::endpoint>* endpoints);
  Outcome Tunnel(const ServerUrl& server, const ProxyUrl& proxy, SteadyTime deadline);
  Outcome Handshake(const TlsContexts& tls, SteadyTime deadline);

  const Clock& clock_;
  boost::asio::io_context ioc_;
  std::shared_ptr<boost::asio::ssl::context> tls_context_;
  const uint64_t generation_;
  boost::asio::ip::tcp::resolver resolver_{ioc_};
  std::optional<boost::beast::tcp_stream> tcp_;
  std::optional<boost::beast::ssl_stream<boost::beast::tcp_stream>> tls_;
  boost::beast::flat_buffer buffer_;
  bool open_ = false;
  bool reused_ = false;
  std::shared_ptr<CancelToken> cancel_;
  int subscription_ = -1;
};

}  // namespace steward::kube
