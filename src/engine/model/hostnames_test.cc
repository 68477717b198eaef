// The hostname policy (CheckCustomHostnamePolicy): IP addresses in every form, the platform's
// hosts and the names reserved for projects, for spec.customHostname and spec.url.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <string>

#include "engine/model/project.h"
#include "engine/model/test_util.h"

namespace steward::engine {
namespace {

using testing::IsInvalid;

EngineConfig Config() {
  EngineConfig c;
  c.domain = "nr.example.com";
  c.forge_url = "https://forge.example.com";
  return c;
}

// The spec of `field` = `value`, parsed as a request's; the parse must pass (the policy is what
// these tests are about).
ProjectSpec SpecWith(const std::string& field, const std::string& value) {
  auto spec = ParseProjectSpec(Json{{"team", "t"}, {field, value}});
  EXPECT_TRUE(spec.ok()) << value << ": " << spec.error().ToString();
  return spec.ok() ? *spec : ProjectSpec{};
}

// The same text as inet_aton(3) (glibc) reads it: every form it takes, and the near misses it
// refuses.
TEST(HostnamePolicyTest, Ipv4FormsAreInetAtons) {
  for (const char* host :
       {"127.0.0.1", "0x7f.0.0.1", "0177.0.0.1", "127.1", "127.0.1", "2130706433", "0x7f000001",
        "017700000001", "10.0.0.0x1", "0", "0x0", "1.2.3.255", "255.255.255.255", "1.0xffffff",
        "1.2.0xffff", "0xffffffff", "00000000000000000001.2.3.4", "0x00000000000000ff.1"}) {
    in_addr addr{};
    EXPECT_NE(inet_aton(host, &addr), 0) << host << " (the test's own premise)";
    EXPECT_TRUE(IsInetAtonAddress(host)) << host;
  }
  for (const char* host :
       {"256.0.0.1",  "1.2.3.256",      "1.2.3.4.5",   "08.1.1.1", "1.2.3.09", "0x",
        "0x.1",       "1..2",           "1.2.3.",      ".1.2.3",   "",         "0x100000000",
        "4294967296", "1.0x1000000",    "1.2.0x10000", "a.1.2.3",  "1.2.3.a",  "0xg",
        "1.2.3.4a",   "nr.example.com", "1e3"}) {
    in_addr addr{};
    EXPECT_EQ(inet_aton(host, &addr), 0) << host << " (the test's own premise)";
    EXPECT_FALSE(IsInetAtonAddress(host)) << host;
  }
}

// Finding B1: an IP address as a custom hostname or the kept URL's host. These all pass the
// spec's parse (they are DNS-1123 names in form); Kubernetes refuses the dotted quad as an
// Ingress host, and browsers read every one of them as an address.
TEST(HostnamePolicyTest, IpAddressesAreRefusedNamingTheField) {
  const EngineConfig config = Config();
  for (const char* host : {"127.0.0.1", "0x7f.0.0.1", "0177.0.0.1", "127.1", "10.0.0.0x1",
                           "169.254.169.254", "1.2.3.4"}) {
    EXPECT_TRUE(IsInvalid(CheckCustomHostnamePolicy(config, "p", SpecWith("customHostname", host)),
                          "spec.customHostname", "IPv4 address"))
        << host;
    EXPECT_TRUE(
        IsInvalid(CheckCustomHostnamePolicy(
                      config, "p", SpecWith("url", std::string("https://") + host + ":8443")),
                  "spec.url", "IPv4 address"))
        << host;
  }
  // A last label of digits (or 0x and hex digits): no top-level domain is, and browsers read
  // the host as an address (and refuse it when it is none).
  for (const char* host : {"nr.example.123", "a.0x1f", "a.0x", "1.2.3.09", "256.0.0.1"}) {
    EXPECT_TRUE(IsInvalid(CheckCustomHostnamePolicy(config, "p", SpecWith("customHostname", host)),
                          "spec.customHostname", "numeric label"))
        << host;
    EXPECT_TRUE(IsInvalid(
        CheckCustomHostnamePolicy(config, "p", SpecWith("url", std::string("http://") + host)),
        "spec.url", "numeric label"))
        << host;
  }
  // Near misses are names.
  for (const char* host : {"nr.customer.com", "1.customer.com", "0x7f.example.io", "a.b1", "a.1e3",
                           "127-0-0-1.example.com"}) {
    Status s = CheckCustomHostnamePolicy(config, "p", SpecWith("customHostname", host));
    EXPECT_TRUE(s.ok()) << host << ": " << s.ToString();
  }
}

// Forms the spec's parse refuses already (no dot, an IPv6 literal): refused naming the field.
TEST(HostnamePolicyTest, IpAddressesTheParseRefusesNameTheField) {
  for (const char* host : {"::1", "[::1]", "fe80::1"}) {
    EXPECT_TRUE(IsInvalid(ParseProjectSpec(Json{{"team", "t"}, {"customHostname", host}}),
                          "spec.customHostname", "not an IP address"))
        << host;
  }
  for (const char* url : {"http://[::1]", "https://[::ffff:127.0.0.1]:8443"}) {
    EXPECT_TRUE(IsInvalid(ParseProjectSpec(Json{{"team", "t"}, {"url", url}}), "spec.url",
                          "not an IP address"))
        << url;
  }
  EXPECT_TRUE(IsInvalid(ParseProjectSpec(Json{{"team", "t"}, {"customHostname", "2130706433"}}),
                        "spec.customHostname"));
  EXPECT_TRUE(
      IsInvalid(ParseProjectSpec(Json{{"team", "t"}, {"url", "http://2130706433"}}), "spec.url"));
}

// Finding B3: the forge (platform) host and every name under it; not its siblings or parents.
TEST(HostnamePolicyTest, TheForgeHostAndItsSubdomainsAreRefused) {
  const EngineConfig config = Config();
  for (const char* host : {"forge.example.com", "x.forge.example.com", "a.b.forge.example.com"}) {
    EXPECT_TRUE(IsInvalid(CheckCustomHostnamePolicy(config, "p", SpecWith("customHostname", host)),
                          "spec.customHostname", "platform"))
        << host;
    EXPECT_TRUE(IsInvalid(
        CheckCustomHostnamePolicy(config, "p", SpecWith("url", std::string("https://") + host)),
        "spec.url", "platform"))
        << host;
  }
  for (const char* host :
       {"forge.example.com.evil.org", "xforge.example.com", "example.com", "other.example.com"}) {
    Status s = CheckCustomHostnamePolicy(config, "p", SpecWith("customHostname", host));
    EXPECT_TRUE(s.ok()) << host << ": " << s.ToString();
  }
  // The forge URL's host however it is written: user info, port, path, upper case, a final dot.
  EngineConfig written = config;
  written.forge_url = "https://ops@Forge.Example.COM.:8443/app?x#y";
  EXPECT_TRUE(IsInvalid(
      CheckCustomHostnamePolicy(written, "p", SpecWith("customHostname", "x.forge.example.com")),
      "spec.customHostname", "under the platform's host forge.example.com"));
  EXPECT_TRUE(IsInvalid(
      CheckCustomHostnamePolicy(written, "p", SpecWith("customHostname", "forge.example.com")),
      "spec.customHostname", "platform's own host"));
}

// When the operator put the projects' domain under the forge host (or made them one), the names
// under the domain are like every project's own host; the rest under the forge host is not.
TEST(HostnamePolicyTest, ADomainUnderTheForgeHostKeepsItsNames) {
  EngineConfig config;
  config.forge_url = "https://example.com";
  config.domain = "nr.example.com";
  EXPECT_TRUE(
      CheckCustomHostnamePolicy(config, "p", SpecWith("customHostname", "a.b.nr.example.com"))
          .ok());
  EXPECT_TRUE(
      CheckCustomHostnamePolicy(config, "p", SpecWith("url", "https://p.nr.example.com")).ok());
  EXPECT_TRUE(IsInvalid(
      CheckCustomHostnamePolicy(config, "p", SpecWith("customHostname", "shop.example.com")),
      "spec.customHostname", "under the platform's host example.com"));
  config.domain = "example.com";
  EXPECT_TRUE(
      CheckCustomHostnamePolicy(config, "p", SpecWith("url", "https://p.example.com")).ok());
  EXPECT_TRUE(
      CheckCustomHostnamePolicy(config, "p", SpecWith("customHostname", "a.b.example.com")).ok());
}

// Finding B2: a kept URL on <label>.<domain> is another project's host unless it is this
// project's own name's, or the URL the project keeps already (a renamed project's).
TEST(HostnamePolicyTest, AKeptUrlUnderTheDomainIsTheProjectsOwn) {
  const EngineConfig config = Config();
  EXPECT_TRUE(
      CheckCustomHostnamePolicy(config, "alpha", SpecWith("url", "https://alpha.nr.example.com"))
          .ok());
  EXPECT_TRUE(IsInvalid(
      CheckCustomHostnamePolicy(config, "alpha", SpecWith("url", "https://beta.nr.example.com")),
      "spec.url", "reserved for project names"));
  // The project holds it already (it was named beta, or keeps beta's URL): its own.
  EXPECT_TRUE(CheckCustomHostnamePolicy(config, "alpha",
                                        SpecWith("url", "https://beta.nr.example.com:8080"),
                                        {"gamma.nr.example.com", "beta.nr.example.com"})
                  .ok());
  EXPECT_TRUE(IsInvalid(
      CheckCustomHostnamePolicy(config, "alpha", SpecWith("url", "https://beta.nr.example.com"),
                                {"gamma.nr.example.com"}),
      "spec.url", "reserved for project names"));
  // A name that is no DNS label has its label form (DnsLabelOf) as its host.
  const std::string own = "https://" + DnsLabelOf("trailing-") + ".nr.example.com";
  EXPECT_TRUE(CheckCustomHostnamePolicy(config, "trailing-", SpecWith("url", own)).ok());
  // Deeper names under the domain, and hosts elsewhere, as before.
  EXPECT_TRUE(
      CheckCustomHostnamePolicy(config, "alpha", SpecWith("url", "https://a.b.nr.example.com"))
          .ok());
  EXPECT_TRUE(
      CheckCustomHostnamePolicy(config, "alpha", SpecWith("url", "https://shop.customer.com"))
          .ok());
  EXPECT_TRUE(IsInvalid(
      CheckCustomHostnamePolicy(config, "alpha", SpecWith("url", "https://nr.example.com")),
      "spec.url", "platform's own host"));
}

}  // namespace
}  // namespace steward::engine
