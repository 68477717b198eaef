#include "net/http.h"

#include <gtest/gtest.h>

namespace steward::net {
namespace {

using Query = std::vector<std::pair<std::string, std::string>>;

TEST(HeadersTest, LookupIsCaseInsensitiveAndKeepsOrder) {
  Headers h;
  h.Add("Content-Type", "application/json");
  h.Add("X-Multi", "a");
  h.Add("x-multi", "b");
  EXPECT_EQ(h.Get("content-type"), "application/json");
  EXPECT_EQ(h.Get("X-MULTI"), "a");
  EXPECT_TRUE(h.Has("CONTENT-TYPE"));
  EXPECT_FALSE(h.Has("Accept"));
  EXPECT_EQ(h.Get("Accept"), "");
  ASSERT_EQ(h.fields().size(), 3u);
  EXPECT_EQ(h.fields()[2].second, "b");
}

TEST(HeadersTest, SetReplacesEveryFieldOfThatName) {
  Headers h;
  h.Add("X-Multi", "a");
  h.Add("Other", "o");
  h.Add("x-multi", "b");
  h.Set("X-MULTI", "c");
  ASSERT_EQ(h.fields().size(), 2u);
  EXPECT_EQ(h.fields()[0].first, "Other");
  EXPECT_EQ(h.fields()[1].first, "X-MULTI");
  EXPECT_EQ(h.Get("x-multi"), "c");
}

TEST(PercentTest, DecodesEscapesAndKeepsMalformedOnes) {
  EXPECT_EQ(PercentDecode("a%20b%2Fc%2fd"), "a b/c/d");
  EXPECT_EQ(PercentDecode("a+b"), "a+b");
  EXPECT_EQ(PercentDecode("a+b", /*plus_is_space=*/true), "a b");
  EXPECT_EQ(PercentDecode("100%"), "100%");
  EXPECT_EQ(PercentDecode("%zz%4"), "%zz%4");
  EXPECT_EQ(PercentDecode("%e2%9c%93"), "\xe2\x9c\x93");
}

TEST(PercentTest, EncodesAllButUnreserved) {
  EXPECT_EQ(PercentEncode("aZ09-._~"), "aZ09-._~");
  EXPECT_EQ(PercentEncode("a b/c=d&e+f"), "a%20b%2Fc%3Dd%26e%2Bf");
  EXPECT_EQ(PercentEncode("\xe2\x9c\x93"), "%E2%9C%93");
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  EXPECT_EQ(PercentDecode(PercentEncode(all)), all);
}

TEST(ParseTargetTest, SplitsPathAndQuery) {
  std::string path;
  Query query;
  ParseTarget("/api/v1/namespaces/a%20b/pods?watch=1&labelSelector=app%3Dx%2Cy&empty&x=a+b", &path,
              &query);
  EXPECT_EQ(path, "/api/v1/namespaces/a b/pods");
  EXPECT_EQ(query,
            (Query{{"watch", "1"}, {"labelSelector", "app=x,y"}, {"empty", ""}, {"x", "a b"}}));
}

TEST(ParseTargetTest, HandlesEdgeCases) {
  std::string path;
  Query query{{"stale", "value"}};
  ParseTarget("/plain", &path, &query);
  EXPECT_EQ(path, "/plain");
  EXPECT_TRUE(query.empty());

  ParseTarget("/p?&&a=1&&b=2=3&", &path, &query);
  EXPECT_EQ(query, (Query{{"a", "1"}, {"b", "2=3"}}));

  ParseTarget("http://example.com:8080/x/y?q=1", &path, &query);
  EXPECT_EQ(path, "/x/y");
  EXPECT_EQ(query, (Query{{"q", "1"}}));

  ParseTarget("?only=query", &path, &query);
  EXPECT_EQ(path, "/");
  EXPECT_EQ(query, (Query{{"only", "query"}}));
}

TEST(RawPathTest, IsThePathAsSent) {
  EXPECT_EQ(RawPath("/v1/projects/a%2Fhistory?wait=1s#x"), "/v1/projects/a%2Fhistory");
  EXPECT_EQ(RawPath("HTTPS://host:8080/x%20y?q"), "/x%20y");
  EXPECT_EQ(RawPath("http://host"), "/");
  EXPECT_EQ(RawPath("http://host#frag"), "/");
  EXPECT_EQ(RawPath("http://host?q=1"), "/");
  EXPECT_EQ(RawPath("?only=query"), "/");
  EXPECT_EQ(RawPath(""), "/");
  // The fragment goes before the query is looked for.
  std::string path;
  Query query;
  ParseTarget("/p#frag?not=query", &path, &query);
  EXPECT_EQ(path, "/p");
  EXPECT_TRUE(query.empty());
}

TEST(HttpRequestTest, QueryReturnsFirstValue) {
  HttpRequest request;
  ParseTarget("/x?a=1&b=&a=2", &request.path, &request.query);
  EXPECT_EQ(request.Query("a"), "1");
  EXPECT_TRUE(request.HasQuery("b"));
  EXPECT_EQ(request.Query("b"), "");
  EXPECT_FALSE(request.HasQuery("c"));
  EXPECT_EQ(request.Query("c"), "");
}

}  // namespace
}  // namespace steward::net
