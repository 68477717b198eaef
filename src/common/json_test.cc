#include "common/json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "common/json_access.h"
#include "common/yaml.h"
#include "test_support/stack.h"

namespace steward {
namespace {

using ::testing::HasSubstr;

std::string Arrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// {"a":{"a":...{"a":1}...}}
std::string Objects(int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += "{\"a\":";
  s += "1";
  s += std::string(depth, '}');
  return s;
}

// [{"a":[{"a":...}]}]: arrays and objects alternating.
std::string Mixed(int depth) {
  std::string open, close;
  for (int i = 0; i < depth; ++i) {
    open += i % 2 == 0 ? "[" : "{\"a\":";
    close = (i % 2 == 0 ? "]" : "}") + close;
  }
  return open + "null" + close;
}

int DepthOf(const Json& j) {
  int depth = 0;
  const Json* cur = &j;
  while (cur->is_structured() && !cur->empty()) {
    ++depth;
    cur = cur->is_array() ? &(*cur)[0] : &cur->begin().value();
  }
  return depth + (cur->is_structured() ? 1 : 0);
}

TEST(JsonTest, ParsesValuesAsNlohmannDoes) {
  const std::string text =
      R"({"a":-1,"b":18446744073709551615,"c":1.5,"d":"x\u00e9","e":[true,false,null],"f":{}})";
  auto j = ParseJson(text);
  ASSERT_TRUE(j.ok()) << j.error().ToString();
  EXPECT_EQ(*j, Json::parse(text));
  EXPECT_TRUE((*j)["b"].is_number_unsigned());
  EXPECT_TRUE((*j)["a"].is_number_integer());
  EXPECT_EQ(DumpJson(*j), Json::parse(text).dump());
}

TEST(JsonTest, SyntaxErrorsAreInvalidArgumentNamingThePlace) {
  for (const char* text : {"", "{", "{\"a\":}", "[1,]", "[1] x", "\"\xff\""}) {
    auto j = ParseJson(text);
    ASSERT_FALSE(j.ok()) << text;
    EXPECT_EQ(j.error().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(j.error().message(), HasSubstr("malformed JSON: ")) << text;
    EXPECT_THAT(j.error().message(), HasSubstr("parse error at line 1, column")) << text;
  }
}

// A string that breaks half-way (a raw line feed, invalid UTF-8, the end of the text) is
// refused naming where its value goes and the line and column, never quoting what was read of
// it: it may be a credential (issue 34, item 8).
TEST(JsonTest, ABrokenStringIsNeverQuotedInTheError) {
  const std::string secret = "ffpt_" + std::string(4000, 'k');
  const struct {
    std::string text;
    std::string where;
  } cases[] = {
      {R"({"spec":{"credentials":{"token":")" + secret + "\n\"}}}", "spec.credentials.token"},
      {R"({"spec":{"credentials":{"token":")" + secret + "\xff\"}}}", "spec.credentials.token"},
      {R"({"token":")" + secret, "token"},
      {R"({"items":[1,")" + secret + "\x01\"]}", "items[1]"},
  };
  for (const auto& c : cases) {
    auto j = ParseJson(c.text);
    ASSERT_FALSE(j.ok());
    const std::string& m = j.error().message();
    EXPECT_THAT(m, HasSubstr("malformed JSON: at " + c.where + ": ")) << m.substr(0, 200);
    EXPECT_THAT(m, HasSubstr("column")) << m.substr(0, 200);
    EXPECT_EQ(m.find("ffpt_"), std::string::npos) << m.substr(0, 200);
    EXPECT_EQ(m.find("kkkk"), std::string::npos) << m.substr(0, 200);
    EXPECT_EQ(m.find("last read"), std::string::npos) << m.substr(0, 200);
  }
}

TEST(JsonTest, NestingAtTheLimitIsAcceptedOneMoreIsRefusedNamingTheLimit) {
  for (auto make : {Arrays, Objects, Mixed}) {
    auto at = ParseJson(make(kMaxNestingDepth));
    ASSERT_TRUE(at.ok()) << at.error().ToString();
    EXPECT_EQ(DepthOf(*at), kMaxNestingDepth);

    auto over = ParseJson(make(kMaxNestingDepth + 1));
    ASSERT_FALSE(over.ok());
    EXPECT_EQ(over.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(over.error().message(), "malformed JSON: nested deeper than the limit of 256 levels");
  }
}

TEST(JsonTest, NumberOverflowIsInvalidArgument) {
  auto j = ParseJson("[1e99999]");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(j.error().message(), HasSubstr("malformed JSON: "));
}

// Regression (hardening finding 2): 80,000 levels (200 KB) overflowed the stack of the server
// thread that parsed them; 60,000 were accepted and stored.
TEST(JsonTest, EightyThousandLevelsAreRefusedWithoutRecursing) {
  for (const std::string& text :
       {Arrays(80000), Objects(80000), Mixed(80000), std::string(80000, '['),
        "{\"spec\":{\"team\":\"t\",\"podSecurityContext\":{\"a\":" + Arrays(80000) + "}}}"}) {
    bool done = test_support::RunWithStack(test_support::kDefaultThreadStack, [&] {
      auto j = ParseJson(text);
      ASSERT_FALSE(j.ok());
      EXPECT_THAT(j.error().message(), HasSubstr("limit of 256 levels"));
    });
    EXPECT_TRUE(done);
  }
}

// Every recursive operation Steward (or nlohmann) performs on a parsed document must survive the
// deepest document the parsers accept, on a default-sized thread stack. The sanitizer builds run
// this too, where frames are several times larger.
TEST(JsonTest, RecursiveOperationsSurviveTheDeepestAcceptedDocument) {
  bool done = test_support::RunWithStack(test_support::kDefaultThreadStack, [] {
    for (auto make : {Arrays, Objects, Mixed}) {
      auto j = ParseJson(make(kMaxNestingDepth));
      ASSERT_TRUE(j.ok());
      std::string dumped = DumpJson(*j);
      EXPECT_EQ(dumped, make(kMaxNestingDepth));
      Json copy = *j;  // NOLINT(performance-unnecessary-copy-initialization): the copy is the test
      EXPECT_TRUE(copy == *j);
      EXPECT_FALSE(copy != *j);
      copy = Json::array();
      EXPECT_FALSE(copy == *j);
      auto from_yaml = ParseYaml(dumped);  // JSON is YAML: the YAML conversion at the limit
      ASSERT_TRUE(from_yaml.ok()) << from_yaml.error().ToString();
      EXPECT_EQ(*from_yaml, *j);
      auto round = ParseYaml(ToYaml(*j));
      ASSERT_TRUE(round.ok()) << round.error().ToString();
      EXPECT_EQ(*round, *j);
    }
  });
  EXPECT_TRUE(done);
}

// Regression (hardening finding 3): {"spec":{"team":"a"},"spec":{"team":"b"}} was accepted, the
// last one winning, while a proxy or validator in front may read the first.
TEST(JsonTest, DuplicateKeysAreRefusedNamingTheirPath) {
  struct Case {
    const char* text;
    const char* path;
  };
  for (const Case& c : {
           Case{R"({"spec":{"team":"a"},"spec":{"team":"b"}})", "spec"},
           Case{R"({"spec":{"team":"a","team":"b"}})", "spec.team"},
           Case{R"({"a":[1,{"b":{"c":1,"c":2}}]})", "a[1].b.c"},
           Case{R"([{"x":1},{"y":1,"y":1}])", "[1].y"},
           Case{R"({"":1,"":2})", ""},
       }) {
    auto j = ParseJson(c.text);
    ASSERT_FALSE(j.ok()) << c.text;
    EXPECT_EQ(j.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(j.error().message(), std::string("malformed JSON: duplicate key \"") + c.path + "\"")
        << c.text;
  }
  // The same key in different objects is no duplicate.
  auto ok = ParseJson(R"({"a":{"k":1},"b":{"k":2},"c":[{"k":1},{"k":2}]})");
  EXPECT_TRUE(ok.ok()) << ok.error().ToString();
}

TEST(JsonTest, LastWinsOnlyWhenAskedForAsGoDecodes) {
  ParseOptions last_wins{.duplicate_keys = DuplicateKeys::kLastWins};
  auto j = ParseJson(R"({"spec":{"team":"a","x":1},"spec":{"team":"b"},"n":[1],"n":2})", last_wins);
  ASSERT_TRUE(j.ok()) << j.error().ToString();
  EXPECT_EQ(*j, Json::parse(R"({"spec":{"team":"b"},"n":2})"));
  // Depth is limited whatever the duplicate policy.
  EXPECT_FALSE(ParseJson(Arrays(kMaxNestingDepth + 1), last_wins).ok());
}

TEST(JsonTest, MemberReadersAreNullSafe) {
  const Json obj = Json::parse(R"({"s":"x","i":7,"u":18446744073709551615,"f":2.0,"n":null,
                                   "o":{"k":"v"}})");
  ASSERT_NE(Member(obj, "s"), nullptr);
  EXPECT_EQ(*Member(obj, "s"), "x");
  ASSERT_NE(Member(obj, "n"), nullptr);  // a null member is there
  EXPECT_TRUE(Member(obj, "n")->is_null());
  EXPECT_EQ(Member(obj, "absent"), nullptr);
  for (const Json& not_object : {Json(), Json(1), Json("s"), Json::array({1})}) {
    EXPECT_EQ(Member(not_object, "s"), nullptr) << not_object;
    EXPECT_TRUE(MemberOrNull(not_object, "s").is_null()) << not_object;
    EXPECT_EQ(GetString(not_object, "s", "fb"), "fb") << not_object;
    EXPECT_EQ(GetInt(not_object, "i", -1), -1) << not_object;
    EXPECT_TRUE(PathOrNull(not_object, "o.k").is_null()) << not_object;
  }
  EXPECT_EQ(MemberOrNull(obj, "o"), Json::parse(R"({"k":"v"})"));
  EXPECT_TRUE(MemberOrNull(obj, "absent").is_null());
  EXPECT_EQ(GetString(obj, "s"), "x");
  EXPECT_EQ(GetString(obj, "i"), "");  // not a string
  EXPECT_EQ(GetString(obj, "absent", "fb"), "fb");
  EXPECT_EQ(GetInt(obj, "i"), 7);
  EXPECT_EQ(GetInt(obj, "f", -1), -1);  // 2.0 is no integer
  EXPECT_EQ(GetInt(obj, "s", -1), -1);
  EXPECT_EQ(GetInt(obj, "absent"), 0);
  EXPECT_EQ(GetInt(obj, "u"), -1);  // documented: wraps
  EXPECT_EQ(PathOrNull(obj, "o.k"), "v");
  EXPECT_TRUE(PathOrNull(obj, "o.absent").is_null());
  EXPECT_TRUE(PathOrNull(obj, "s.k").is_null());
}

TEST(JsonTest, PathReadersTakeWhatTheirTypeAllows) {
  const Json obj = Json::parse(R"({"spec":{"replicas":3,"scale":2.9,"neg":-2.9,"name":"web",
                                   "flag":true}})");
  EXPECT_EQ(StringAtPath(obj, "spec.name"), "web");
  EXPECT_EQ(StringAtPath(obj, "spec.replicas"), "");
  EXPECT_EQ(StringAtPath(obj, "spec.absent.deeper"), "");
  EXPECT_EQ(StringAtPath(Json("web"), "spec"), "");
  EXPECT_EQ(NumberAtPath(obj, "spec.replicas"), 3);
  EXPECT_EQ(NumberAtPath(obj, "spec.scale"), 2);  // truncated toward zero
  EXPECT_EQ(NumberAtPath(obj, "spec.neg"), -2);
  EXPECT_EQ(NumberAtPath(obj, "spec.name", -1), -1);
  EXPECT_EQ(NumberAtPath(obj, "spec.flag", -1), -1);  // a boolean is no number
  EXPECT_EQ(NumberAtPath(obj, "spec.absent", 7), 7);
  EXPECT_EQ(NumberAtPath(Json::array({1}), "spec", 7), 7);
}

}  // namespace
}  // namespace steward
