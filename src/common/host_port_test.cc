#include "common/host_port.h"

#include <gtest/gtest.h>

namespace steward {
namespace {

TEST(HostPortTest, SplitsHostsAndPorts) {
  std::string host;
  uint16_t port = 1;
  ASSERT_TRUE(SplitHostPort("127.0.0.1:0", &host, &port));
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 0);
  ASSERT_TRUE(SplitHostPort("localhost:65535", &host, &port));
  EXPECT_EQ(host, "localhost");
  EXPECT_EQ(port, 65535);
  ASSERT_TRUE(SplitHostPort("[::1]:8080", &host, &port));
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 8080);
}

TEST(HostPortTest, RefusesMalformedAddresses) {
  std::string host;
  uint16_t port = 0;
  for (const char* bad : {"", "8080", ":8080", "host:", "host:65536", "host:123456", "host:8o",
                          "host:-1", "::1:8080", "[::1:8080", "[]:80", "host: 80"}) {
    EXPECT_FALSE(SplitHostPort(bad, &host, &port)) << bad;
  }
}

std::string ErrorOf(std::string_view text, const HostPortOptions& options = {}) {
  auto hp = ParseHostPort(text, options);
  return hp.ok() ? "ok" : hp.error().message();
}

TEST(ParseHostPortTest, ParsesHostAndPort) {
  auto hp = ParseHostPort("ingress.local:8080");
  ASSERT_TRUE(hp.ok()) << hp.error().message();
  EXPECT_EQ(hp->host, "ingress.local");
  EXPECT_EQ(hp->port, 8080);
  EXPECT_FALSE(hp->bracketed);
  hp = ParseHostPort("h:1");
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->port, 1);
  hp = ParseHostPort("h:65535");
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->port, 65535);
}

TEST(ParseHostPortTest, ParsesBracketedIpv6) {
  auto hp = ParseHostPort("[::1]:80");
  ASSERT_TRUE(hp.ok()) << hp.error().message();
  EXPECT_EQ(hp->host, "::1");
  EXPECT_EQ(hp->port, 80);
  EXPECT_TRUE(hp->bracketed);
  EXPECT_EQ(ErrorOf("[::1:80"), "unclosed '['");
  EXPECT_EQ(ErrorOf("[::1]x:80"), "unexpected text after ']'");
  EXPECT_EQ(ErrorOf("::1:80"), "an IPv6 address must be in brackets");
  EXPECT_EQ(ErrorOf("[]:80"), "empty host");
}

TEST(ParseHostPortTest, RefusesAMissingPortUnlessOptional) {
  EXPECT_EQ(ErrorOf("ingress"), "missing port (want host:port)");
  EXPECT_EQ(ErrorOf("[::1]"), "missing port (want host:port)");
  auto hp = ParseHostPort("ingress", {.port_optional = true});
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->host, "ingress");
  EXPECT_FALSE(hp->port.has_value());
  hp = ParseHostPort("[::1]", {.port_optional = true});
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->host, "::1");
  EXPECT_FALSE(hp->port.has_value());
}

TEST(ParseHostPortTest, AnEmptyPortIsBadUnlessCountedAsAbsent) {
  EXPECT_EQ(ErrorOf("h:"), "bad port \"\"");
  EXPECT_EQ(ErrorOf("h:", {.port_optional = true}), "bad port \"\"");
  auto hp = ParseHostPort("h:", {.port_optional = true, .empty_port_absent = true});
  ASSERT_TRUE(hp.ok());
  EXPECT_FALSE(hp->port.has_value());
  EXPECT_EQ(ErrorOf("h:", {.empty_port_absent = true}), "missing port (want host:port)");
}

TEST(ParseHostPortTest, RefusesPortZeroUnlessAllowed) {
  EXPECT_EQ(ErrorOf("h:0"), "bad port \"0\"");
  auto hp = ParseHostPort("h:0", {.allow_port_zero = true});
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->port, 0);
}

TEST(ParseHostPortTest, RefusesBadPorts) {
  EXPECT_EQ(ErrorOf("h:65536"), "bad port \"65536\"");
  EXPECT_EQ(ErrorOf("h:123456"), "bad port \"123456\"");
  EXPECT_EQ(ErrorOf("h:http"), "bad port \"http\"");
  EXPECT_EQ(ErrorOf("h:8o"), "bad port \"8o\"");
  EXPECT_EQ(ErrorOf("h:-1"), "bad port \"-1\"");
  EXPECT_EQ(ErrorOf("h:+80"), "bad port \"+80\"");
  EXPECT_EQ(ErrorOf("h: 80"), "bad port \" 80\"");
}

TEST(ParseHostPortTest, RefusesAnEmptyHost) {
  EXPECT_EQ(ErrorOf(":80"), "empty host");
  EXPECT_EQ(ErrorOf(""), "empty host");
  EXPECT_EQ(ErrorOf("", {.port_optional = true}), "empty host");
}

TEST(ParseHostPortTest, BareIpv6IsAllHostWhenAllowed) {
  auto hp = ParseHostPort("::1", {.port_optional = true, .bare_ipv6 = true});
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->host, "::1");
  EXPECT_FALSE(hp->port.has_value());
  EXPECT_FALSE(hp->bracketed);
  hp = ParseHostPort("fe80::1:443", {.port_optional = true, .bare_ipv6 = true});
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->host, "fe80::1:443");  // no port: the last group is part of the address
}

TEST(HostPortTest, ParsePortTakesOneToFiveDigits) {
  EXPECT_EQ(ParsePort("80"), 80);
  EXPECT_EQ(ParsePort("00080"), 80);
  EXPECT_EQ(ParsePort("000080"), std::nullopt);
  EXPECT_EQ(ParsePort(""), std::nullopt);
  EXPECT_EQ(ParsePort("0"), std::nullopt);
  EXPECT_EQ(ParsePort("0", /*allow_zero=*/true), 0);
  EXPECT_EQ(ParsePort("65535"), 65535);
  EXPECT_EQ(ParsePort("65536"), std::nullopt);
  EXPECT_EQ(ParsePort("99999"), std::nullopt);
}

TEST(HostPortTest, SplitHostPortTextKeepsThePortTextAsWritten) {
  auto parts = SplitHostPortText("h:x");
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(parts->host, "h");
  EXPECT_EQ(parts->port, "x");
  parts = SplitHostPortText("[::1]:");
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(parts->host, "::1");
  EXPECT_EQ(parts->port, "");
  EXPECT_TRUE(parts->bracketed);
  parts = SplitHostPortText("h");
  ASSERT_TRUE(parts.ok());
  EXPECT_FALSE(parts->port.has_value());
}

TEST(HostPortTest, JoinHostPortBracketsIpv6) {
  EXPECT_EQ(JoinHostPort("127.0.0.1", 0), "127.0.0.1:0");
  EXPECT_EQ(JoinHostPort("::1", 8080), "[::1]:8080");
  std::string host;
  uint16_t port = 0;
  ASSERT_TRUE(SplitHostPort(JoinHostPort("::1", 8080), &host, &port));
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 8080);
}

}  // namespace
}  // namespace steward
