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

}  // namespace
}  // namespace steward
