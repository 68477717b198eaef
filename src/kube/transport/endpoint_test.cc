// Server and proxy URLs, NO_PROXY matching and proxy selection (pure functions).
#include "kube/transport/endpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace steward::kube {
namespace {

using ::testing::HasSubstr;

ServerUrl Server(const std::string& url) {
  auto s = ParseServerUrl(url);
  EXPECT_TRUE(s.ok()) << url << ": " << s.status().ToString();
  return s.ok() ? *s : ServerUrl{};
}

TEST(ServerUrlTest, ParsesSchemeHostPortAndPrefix) {
  ServerUrl a = Server("https://10.0.0.1:6443");
  EXPECT_TRUE(a.tls);
  EXPECT_EQ(a.host, "10.0.0.1");
  EXPECT_EQ(a.port, 6443);
  EXPECT_TRUE(a.host_is_ip);
  EXPECT_EQ(a.path_prefix, "");
  EXPECT_EQ(a.Authority(), "10.0.0.1:6443");
  EXPECT_EQ(a.HostHeader(), "10.0.0.1:6443");

  ServerUrl b = Server("HTTPS://API.Example.com/prefix/k8s/");
  EXPECT_EQ(b.host, "api.example.com");
  EXPECT_EQ(b.port, 443);
  EXPECT_FALSE(b.host_is_ip);
  EXPECT_EQ(b.path_prefix, "/prefix/k8s");
  EXPECT_EQ(b.HostHeader(), "api.example.com");  // default port left out
  EXPECT_EQ(b.ToString(), "https://api.example.com:443/prefix/k8s");

  ServerUrl c = Server("http://[::1]:8080/");
  EXPECT_FALSE(c.tls);
  EXPECT_EQ(c.host, "::1");
  EXPECT_TRUE(c.host_is_ip);
  EXPECT_EQ(c.Authority(), "[::1]:8080");
  EXPECT_EQ(c.path_prefix, "");

  ServerUrl d = Server("http://example.com");
  EXPECT_EQ(d.port, 80);
  EXPECT_EQ(d.HostHeader(), "example.com");
}

TEST(ServerUrlTest, RejectsBadUrlsNamingTheProblem) {
  struct Case {
    std::string url;
    std::string why;
  };
  for (const auto& [url, why] : std::vector<Case>{
           {"10.0.0.1:6443", "missing scheme"},
           {"ftp://h", "unsupported scheme \"ftp\""},
           {"https://", "missing or malformed host"},
           {"https://h:0", "bad port \"0\""},
           {"https://h:70000", "bad port"},
           {"https://h:x", "bad port"},
           {"https://user:pw@h", "user info"},
           {"https://h/p?q=1", "query or fragment"},
           {"https://[nothex]:1", "bad IPv6"},
           {"https://::1:443", "bad host"},
       }) {
    auto s = ParseServerUrl(url);
    ASSERT_FALSE(s.ok()) << url;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.status().message(), HasSubstr(why)) << url;
    EXPECT_THAT(s.status().message(), HasSubstr(url)) << url;
  }
}

TEST(ProxyUrlTest, ParsesHostPortAndCredentials) {
  auto p = ParseProxyUrl("http://alice:s%40cret@proxy.corp:3128");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->host, "proxy.corp");
  EXPECT_EQ(p->port, 3128);
  EXPECT_EQ(p->authorization, "Basic YWxpY2U6c0BjcmV0");  // base64("alice:s@cret")
  auto bare = ParseProxyUrl("proxy.corp:8080");           // no scheme: http
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->Authority(), "proxy.corp:8080");
  EXPECT_EQ(bare->authorization, "");
  auto default_port = ParseProxyUrl("http://proxy.corp/");
  ASSERT_TRUE(default_port.ok());
  EXPECT_EQ(default_port->port, 80);
}

TEST(ProxyUrlTest, RejectsUnsupportedSchemes) {
  for (const char* url : {"https://proxy:443", "socks5://proxy:1080"}) {
    auto p = ParseProxyUrl(url);
    ASSERT_FALSE(p.ok()) << url;
    EXPECT_THAT(p.status().message(), HasSubstr("only http:// proxies"));
    EXPECT_THAT(p.status().message(), HasSubstr(url));
  }
}

TEST(NoProxyTest, MatchesHostsDomainsIpsCidrsAndPorts) {
  ServerUrl api = Server("https://api.k8s.example.com:6443");
  ServerUrl ip = Server("https://10.1.2.3:6443");
  ServerUrl v6 = Server("https://[fd00::5]:6443");

  EXPECT_TRUE(NoProxyMatches("*", api));
  EXPECT_TRUE(NoProxyMatches("api.k8s.example.com", api));
  EXPECT_TRUE(NoProxyMatches("example.com", api));            // a domain matches its subdomains
  EXPECT_TRUE(NoProxyMatches(".example.com", api));           // leading dot: subdomains
  EXPECT_TRUE(NoProxyMatches("*.example.com", api));          // same as a leading dot
  EXPECT_FALSE(NoProxyMatches(".api.k8s.example.com", api));  // subdomains only, not itself
  EXPECT_FALSE(NoProxyMatches("ample.com", api));             // no partial labels
  EXPECT_TRUE(NoProxyMatches(" other.org , EXAMPLE.COM ", api));
  EXPECT_TRUE(NoProxyMatches("example.com:6443", api));
  EXPECT_FALSE(NoProxyMatches("example.com:443", api));
  EXPECT_FALSE(NoProxyMatches("", api));
  EXPECT_FALSE(NoProxyMatches(",,", api));

  EXPECT_TRUE(NoProxyMatches("10.1.2.3", ip));
  EXPECT_TRUE(NoProxyMatches("10.1.2.3:6443", ip));
  EXPECT_FALSE(NoProxyMatches("10.1.2.3:443", ip));
  EXPECT_FALSE(NoProxyMatches("10.1.2.4", ip));
  EXPECT_TRUE(NoProxyMatches("10.0.0.0/8", ip));
  EXPECT_TRUE(NoProxyMatches("10.1.2.0/24", ip));
  EXPECT_FALSE(NoProxyMatches("10.1.3.0/24", ip));
  EXPECT_TRUE(NoProxyMatches("10.1.2.2/31", Server("https://10.1.2.3")));
  EXPECT_FALSE(NoProxyMatches("10.1.2.0/31", ip));
  EXPECT_FALSE(NoProxyMatches("10.0.0.0/8", api));  // CIDRs match IP hosts only
  EXPECT_FALSE(NoProxyMatches("10.0.0.0/99", ip));  // malformed entries are ignored

  EXPECT_TRUE(NoProxyMatches("fd00::/8", v6));
  EXPECT_TRUE(NoProxyMatches("fd00::5", v6));
  EXPECT_TRUE(NoProxyMatches("[fd00::5]:6443", v6));
  EXPECT_FALSE(NoProxyMatches("fd00::6", v6));
  EXPECT_FALSE(NoProxyMatches("10.0.0.0/8", v6));
}

class FakeEnv {
 public:
  std::map<std::string, std::string> vars;
  EnvLookup lookup() const {
    return [this](const char* name) -> std::optional<std::string> {
      auto it = vars.find(name);
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
  }
};

std::string Chosen(const StatusOr<std::optional<ProxyUrl>>& p) {
  if (!p.ok()) return "error: " + p.status().message();
  return p->has_value() ? (*p)->Authority() : "direct";
}

TEST(SelectProxyTest, ExplicitProxyWinsForEveryHost) {
  FakeEnv env;
  env.vars["HTTPS_PROXY"] = "http://envproxy:1";
  env.vars["NO_PROXY"] = "*";
  EXPECT_EQ(
      Chosen(SelectProxy(Server("https://127.0.0.1:6443"), "http://explicit:3128", env.lookup())),
      "explicit:3128");
}

TEST(SelectProxyTest, EnvironmentWithNoProxyAndLoopback) {
  FakeEnv env;
  ServerUrl api = Server("https://api.example.com:6443");
  EXPECT_EQ(Chosen(SelectProxy(api, "", env.lookup())), "direct");
  env.vars["https_proxy"] = "http://lower:2";
  EXPECT_EQ(Chosen(SelectProxy(api, "", env.lookup())), "lower:2");
  env.vars["HTTPS_PROXY"] = "http://upper:1";
  EXPECT_EQ(Chosen(SelectProxy(api, "", env.lookup())), "upper:1");  // upper case first
  // http:// servers use HTTP_PROXY.
  EXPECT_EQ(Chosen(SelectProxy(Server("http://api.example.com"), "", env.lookup())), "direct");
  env.vars["HTTP_PROXY"] = "http://plain:3";
  EXPECT_EQ(Chosen(SelectProxy(Server("http://api.example.com"), "", env.lookup())), "plain:3");
  // Loopback and localhost are never proxied from the environment.
  EXPECT_EQ(Chosen(SelectProxy(Server("https://127.0.0.1:6443"), "", env.lookup())), "direct");
  EXPECT_EQ(Chosen(SelectProxy(Server("https://localhost:6443"), "", env.lookup())), "direct");
  EXPECT_EQ(Chosen(SelectProxy(Server("https://[::1]:6443"), "", env.lookup())), "direct");
  env.vars["no_proxy"] = "example.com";
  EXPECT_EQ(Chosen(SelectProxy(api, "", env.lookup())), "direct");
  env.vars["NO_PROXY"] = "other.org";  // upper case first: example.com is now proxied
  EXPECT_EQ(Chosen(SelectProxy(api, "", env.lookup())), "upper:1");
}

TEST(SelectProxyTest, BadEnvironmentProxyNamesTheVariable) {
  FakeEnv env;
  env.vars["HTTPS_PROXY"] = "socks5://s:1080";
  auto p = SelectProxy(Server("https://api.example.com"), "", env.lookup());
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("HTTPS_PROXY"));
  EXPECT_THAT(p.status().message(), HasSubstr("socks5://s:1080"));
}

}  // namespace
}  // namespace steward::kube
