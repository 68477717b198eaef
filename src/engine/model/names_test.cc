#include <gtest/gtest.h>

#include <string>

#include "engine/model/project.h"
#include "engine/model/test_util.h"

namespace steward::engine {
namespace {

using testing::IsInvalidValue;

TEST(Dns1123Test, Labels) {
  for (const char* ok : {"a", "0", "a-b", "a--b", "abc123", "1a"}) {
    EXPECT_TRUE(IsDns1123Label(ok)) << ok;
  }
  EXPECT_TRUE(IsDns1123Label(std::string(63, 'a')));
  for (const char* bad : {"", "-a", "a-", "A", "a_b", "a.b", "a b", "é"}) {
    EXPECT_FALSE(IsDns1123Label(bad)) << bad;
  }
  EXPECT_FALSE(IsDns1123Label(std::string(64, 'a')));
}

TEST(Dns1123Test, Subdomains) {
  for (const char* ok : {"a", "a.b", "a-b.c-d.e", "1.2.3.4", "example.com"}) {
    EXPECT_TRUE(IsDns1123Subdomain(ok)) << ok;
  }
  std::string max = std::string(63, 'a') + "." + std::string(63, 'b') + "." + std::string(63, 'c') +
                    "." + std::string(61, 'd');
  ASSERT_EQ(max.size(), 253u);
  EXPECT_TRUE(IsDns1123Subdomain(max));
  EXPECT_FALSE(IsDns1123Subdomain(max + "d"));
  for (const char* bad : {"", ".", "a.", ".a", "a..b", "A.b", "a_b.c", "-a.b", "a-.b", "a.b/c"}) {
    EXPECT_FALSE(IsDns1123Subdomain(bad)) << bad;
  }
  EXPECT_FALSE(IsDns1123Subdomain(std::string(64, 'a') + ".com"));  // label longer than 63
}

TEST(ValidateProjectNameTest, AcceptsFlowFuseSafeNamesUpTo63Characters) {
  EXPECT_TRUE(ValidateProjectName("my-project").ok());
  EXPECT_TRUE(ValidateProjectName("a").ok());
  EXPECT_TRUE(ValidateProjectName("0abc").ok());
  EXPECT_TRUE(ValidateProjectName(std::string(63, 'x')).ok());
  // What the platform can produce and a DNS label cannot hold: derived names take care of it.
  EXPECT_TRUE(ValidateProjectName("ends-with-").ok());
  EXPECT_TRUE(ValidateProjectName("shop-custom").ok());
}

TEST(DnsLabelOfTest, KeepsLabelsAndHashesTheRestIntoOne) {
  EXPECT_EQ(DnsLabelOf("shop"), "shop");
  EXPECT_EQ(DnsLabelOf(std::string(63, 'a')), std::string(63, 'a'));
  const std::string dashed = DnsLabelOf("shop-");
  EXPECT_TRUE(IsDns1123Label(dashed)) << dashed;
  EXPECT_TRUE(dashed.starts_with("shop-")) << dashed;
  EXPECT_EQ(dashed.size(), 4u + 1 + 8);
  // Different names, different labels; the same name, the same label.
  EXPECT_NE(DnsLabelOf("shop--"), dashed);
  EXPECT_EQ(DnsLabelOf("shop-"), dashed);
  EXPECT_NE(DnsLabelOf("shop-"), "shop");
}

TEST(FitNameTest, CutsLongNamesAndKeepsThemApart) {
  EXPECT_EQ(FitName("abc", "-x", 63), "abc-x");
  const std::string a = FitName("srv-" + std::string(63, 'a'), "", 63);
  const std::string b = FitName("srv-" + std::string(62, 'a') + "b", "", 63);
  EXPECT_EQ(a.size(), 63u);
  EXPECT_TRUE(IsDns1123Label(a)) << a;
  EXPECT_NE(a, b);
  EXPECT_TRUE(a.starts_with("srv-aaaa")) << a;
  // A suffix is kept whole.
  const std::string s = FitName(std::string(60, 'c'), "-custom", 63);
  EXPECT_EQ(s.size(), 63u);
  EXPECT_TRUE(s.ends_with("-custom")) << s;
}

TEST(ValidateProjectNameTest, SaysWhichRuleFailed) {
  EXPECT_TRUE(IsInvalidValue(ValidateProjectName(""), "project name", "must not be empty"));
  EXPECT_TRUE(IsInvalidValue(ValidateProjectName(std::string(64, 'x')),
                             "project name \"" + std::string(64, 'x') + "\"",
                             "at most 63 characters (got 64)"));
  EXPECT_TRUE(IsInvalidValue(ValidateProjectName("MyProject"), "project name \"MyProject\"",
                             "lowercase letters, digits and '-'"));
  EXPECT_TRUE(IsInvalidValue(ValidateProjectName("a.b"), "project name \"a.b\"",
                             "lowercase letters, digits and '-'"));
  EXPECT_TRUE(IsInvalidValue(ValidateProjectName("a_b"), "project name \"a_b\"",
                             "lowercase letters, digits and '-'"));
  EXPECT_TRUE(IsInvalidValue(ValidateProjectName("-ab"), "project name \"-ab\"",
                             "start with a lowercase letter or digit"));
}

TEST(ValidateProjectIdTest, SameRuleNamedAsId) {
  EXPECT_TRUE(ValidateProjectId("p-0123456789abcdef").ok());
  EXPECT_TRUE(ValidateProjectId(std::string(40, '9')).ok());
  EXPECT_TRUE(IsInvalidValue(ValidateProjectId(""), "project id", "must not be empty"));
  EXPECT_TRUE(IsInvalidValue(ValidateProjectId(std::string(41, 'a')),
                             "project id \"" + std::string(41, 'a') + "\"", "at most 40"));
  EXPECT_TRUE(IsInvalidValue(ValidateProjectId("ID"), "project id \"ID\"", "lowercase"));
  EXPECT_TRUE(IsInvalidValue(ValidateProjectId("a-"), "project id \"a-\"", "start and end"));
}

TEST(ValidateProjectNameTest, LongBadNamesAreCutShortInTheMessage) {
  Status s = ValidateProjectName(std::string(1000, 'X'));
  ASSERT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_LT(s.message().size(), 200u) << s.message();
}

TEST(PhaseTest, EveryPhaseRoundTripsByName) {
  const std::pair<Phase, const char*> kAll[] = {
      {Phase::kPending, "Pending"},     {Phase::kProvisioning, "Provisioning"},
      {Phase::kRunning, "Running"},     {Phase::kUpdating, "Updating"},
      {Phase::kDegraded, "Degraded"},   {Phase::kSuspending, "Suspending"},
      {Phase::kSuspended, "Suspended"}, {Phase::kDeleting, "Deleting"},
      {Phase::kFailed, "Failed"},       {Phase::kUnknown, "Unknown"}};
  for (const auto& [phase, name] : kAll) {
    EXPECT_EQ(ToString(phase), name);
    EXPECT_EQ(ParsePhase(name), phase) << name;
  }
}

TEST(PhaseTest, UnknownNamesAreRefused) {
  EXPECT_EQ(ParsePhase("running"), std::nullopt);
  EXPECT_EQ(ParsePhase(""), std::nullopt);
  EXPECT_EQ(ParsePhase("Running "), std::nullopt);
  EXPECT_EQ(ParsePhase("unknown"), std::nullopt);
  EXPECT_EQ(ParsePhase("Gone"), std::nullopt);
}

}  // namespace
}  // namespace steward::engine
