#include "kube/config/credential_providers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "kube/config/test_util.h"

namespace steward::kube {
namespace {

using test_util::TempDir;
using ::testing::AnyOf;
using ::testing::HasSubstr;

std::string TokenOf(CredentialProvider& p) {
  auto c = p.Get();
  return c.ok() ? c->bearer_token : "<error: " + c.error().message() + ">";
}

TEST(StaticCredentialsTest, ReturnsWhatItWasGiven) {
  Credentials in;
  in.bearer_token = "t";
  in.client_cert_pem = "cert";
  in.client_key_pem = "key";
  auto p = MakeStaticCredentialProvider(in, "static test");
  p->Invalidate();
  auto c = p->Get();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->bearer_token, "t");
  EXPECT_EQ(c->client_cert_pem, "cert");
  EXPECT_EQ(c->client_key_pem, "key");
  EXPECT_EQ(p->Describe(), "static test");
}

struct TokenFileFixture : ::testing::Test {
  TempDir dir;
  FakeClock clock;
  CredentialOptions options;
  std::string path;
  TokenFileFixture() {
    options.clock = &clock;
    options.token_reread_interval = std::chrono::minutes(1);
    path = dir.Write("token", "t1\n");
  }
};

TEST_F(TokenFileFixture, RereadAfterInvalidate) {
  auto p = TokenFileCredentialProvider::Create(path, {}, options);
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ(TokenOf(**p), "t1");
  dir.Write("token", "t2\n");
  EXPECT_EQ(TokenOf(**p), "t1");  // cached: the interval has not passed
  (*p)->Invalidate();             // a 401
  EXPECT_EQ(TokenOf(**p), "t2");
  EXPECT_EQ((*p)->Describe(), "token file " + path);
}

TEST_F(TokenFileFixture, RereadWhenTheIntervalPasses) {
  auto p = TokenFileCredentialProvider::Create(path, {}, options);
  ASSERT_TRUE(p.ok());
  dir.Write("token", "t2");
  clock.Advance(std::chrono::seconds(59));
  EXPECT_EQ(TokenOf(**p), "t1");
  clock.Advance(std::chrono::seconds(1));
  EXPECT_EQ(TokenOf(**p), "t2");
  dir.Write("token", "t3");
  clock.Advance(std::chrono::seconds(30));
  EXPECT_EQ(TokenOf(**p), "t2");  // next read is a full interval after the last one
  clock.Advance(std::chrono::seconds(30));
  EXPECT_EQ(TokenOf(**p), "t3");
}

TEST_F(TokenFileFixture, FailedPeriodicRereadKeepsTheLastGoodToken) {
  auto p = TokenFileCredentialProvider::Create(path, {}, options);
  ASSERT_TRUE(p.ok());
  std::filesystem::remove(path);
  clock.Advance(std::chrono::minutes(2));
  EXPECT_EQ(TokenOf(**p), "t1");
  // After a 401 the old token is known bad: a failed read is now an error naming the file.
  (*p)->Invalidate();
  auto c = (*p)->Get();
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code(), StatusCode::kUnauthenticated);
  EXPECT_THAT(c.error().message(), HasSubstr("token file " + path));
  dir.Write("token", "t4");
  EXPECT_EQ(TokenOf(**p), "t4");  // recovers as soon as the file is back
}

TEST_F(TokenFileFixture, FallbackTokenWhileTheFileIsUnreadable) {
  Credentials base;
  base.bearer_token = "fallback";
  base.client_cert_pem = "cert";
  base.client_key_pem = "key";
  auto p = TokenFileCredentialProvider::Create(dir.Path("absent"), base, options);
  ASSERT_TRUE(p.ok());
  auto c = (*p)->Get();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->bearer_token, "fallback");
  EXPECT_EQ(c->client_cert_pem, "cert");
  dir.Write("absent", "from-file");
  clock.Advance(std::chrono::minutes(1));
  EXPECT_EQ(TokenOf(**p), "from-file");
}

TEST_F(TokenFileFixture, CreateFailsOnMissingOrEmptyFile) {
  auto missing = TokenFileCredentialProvider::Create(dir.Path("nope"), {}, options);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message(), HasSubstr(dir.Path("nope") + ": No such file"));
  auto empty = TokenFileCredentialProvider::Create(dir.Write("empty", " \n\t\n"), {}, options);
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message(), HasSubstr(dir.Path("empty") + ": empty"));
}

TEST_F(TokenFileFixture, ConcurrentGetsWhileRotating) {
  options.clock = nullptr;  // real clock
  options.token_reread_interval = Millis(1);
  auto p = TokenFileCredentialProvider::Create(path, {}, options);
  ASSERT_TRUE(p.ok());
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < 4; ++i) {
    readers.emplace_back([&] {
      while (!stop) {
        std::string t = TokenOf(**p);
        if (t != "t1" && t != "t2") ++bad;
      }
    });
  }
  for (int i = 0; i < 200; ++i) {
    dir.Write("token", i % 2 ? "t1" : "t2");
    (*p)->Invalidate();
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_THAT(TokenOf(**p), AnyOf("t1", "t2"));
}

}  // namespace
}  // namespace steward::kube
