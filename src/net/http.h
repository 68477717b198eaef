// HTTP message types shared by the server and the client.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace steward::net {

// Header fields in arrival order. Lookups are case-insensitive.
class Headers {
 public:
  void Add(std::string name, std::string value) {
    fields_.emplace_back(std::move(name), std::move(value));
  }
  // Replaces every field of that name.
  void Set(std::string name, std::string value);
  // First value of the field, or "" when absent.
  std::string_view Get(std::string_view name) const;
  bool Has(std::string_view name) const;
  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

// Percent-decodes `s` ('+' is kept as is unless `plus_is_space`). Malformed escapes are kept
// literally.
std::string PercentDecode(std::string_view s, bool plus_is_space = false);
// Percent-encodes everything but unreserved characters (RFC 3986).
std::string PercentEncode(std::string_view s);

struct HttpRequest {
  std::string method;                                      // upper case, as received: "GET"
  int version = 11;                                        // 11 = HTTP/1.1, 10 = HTTP/1.0
  std::string target;                                      // as received: "/api/v1/pods?watch=1"
  std::string path;                                        // target before '?', percent-decoded
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in order
  Headers headers;
  std::string body;
  std::string remote_address;  // "127.0.0.1:53412"
  bool tls = false;
  // Set when the body exceeded the server's limit; `body` is then empty and the connection
  // is closed after the response.
  bool body_too_large = false;

  // First value of a query parameter, or "" when absent.
  std::string_view Query(std::string_view name) const;
  bool HasQuery(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  Headers headers;
  std::string body;
};

// A success status (2xx).
inline bool Is2xx(int status) { return status >= 200 && status < 300; }

// The path of a request target as sent, not decoded: before '?' and '#', the authority of an
// absolute form ("http://host/p?q") skipped; "/" when empty. For routing on raw segments.
std::string_view RawPath(std::string_view target);

// Builds `target`'s path (RawPath, percent-decoded) and query fields; used by the server,
// exposed for tests.
void ParseTarget(std::string_view target, std::string* path,
                 std::vector<std::pair<std::string, std::string>>* query);

}  // namespace steward::net
