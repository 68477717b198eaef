#include "common/yaml.h"

#include <gtest/gtest.h>

namespace steward {
namespace {

TEST(YamlTest, PlainScalarsGetJsonTypesQuotedStayStrings) {
  auto j = ParseYaml("a: 1\nb: true\nc: ~\nd: '1'\ne: 1.5\nf: text\n");
  ASSERT_TRUE(j.ok()) << j.error().ToString();
  EXPECT_EQ(*j, Json::parse(R"({"a":1,"b":true,"c":null,"d":"1","e":1.5,"f":"text"})"));
}

TEST(YamlTest, MalformedYamlNamesTheLine) {
  auto j = ParseYaml("a: 1\nb: [1, 2\n");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(j.error().message().find("line"), std::string::npos) << j.error().message();
}

TEST(YamlTest, ModestAliasesExpand) {
  auto j = ParseYaml("base: &b {x: 1}\none: *b\ntwo: *b\n");
  ASSERT_TRUE(j.ok()) << j.error().ToString();
  EXPECT_EQ((*j)["two"]["x"], 1);
}

// "Billion laughs": nine levels of ten aliases each would expand to 10^9 nodes.
std::string AliasBomb() {
  std::string y = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    std::string prev = "*l" + std::to_string(i - 1);
    y += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) y += (k ? ", " : "") + prev;
    y += "]\n";
  }
  return y;
}

TEST(YamlTest, AliasBombIsRefusedNotExpanded) {
  auto j = ParseYaml(AliasBomb());
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(j.error().message().find("excessive aliasing"), std::string::npos);

  auto docs = ParseYamlDocuments("a: 1\n---\n" + AliasBomb());
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.error().message().find("excessive aliasing"), std::string::npos);
}

// Found by fuzz/json_parse_fuzzer (it ran out of memory): few nodes, but each alias copies a
// long scalar. 8 KB of YAML expanded to gigabytes while the node budget was far from spent;
// the bytes converted are budgeted too.
TEST(YamlTest, LongScalarBehindManyAliasesIsRefusedNotExpanded) {
  std::string y =
      "s: &s " + std::string(4000, 'x') + "\nl0: &l0 [*s, *s, *s, *s, *s, *s, *s, *s]\n";
  for (int i = 1; i <= 3; ++i) {
    std::string prev = "*l" + std::to_string(i - 1);
    y += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int k = 0; k < 8; ++k) y += (k ? ", " : "") + prev;
    y += "]\n";
  }
  // 8^4 = 4096 copies of 4000 bytes (16 MB) from 4.5 KB, in 4700 nodes: within the node budget.
  auto j = ParseYaml(y);
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.error().message().find("excessive aliasing"), std::string::npos)
      << j.error().message();
  // A few copies of a long scalar are fine.
  auto few = ParseYaml("s: &s " + std::string(4000, 'x') + "\nl: [*s, *s, *s]\n");
  ASSERT_TRUE(few.ok()) << few.error().ToString();
  EXPECT_EQ(few->at("l").size(), 3u);
}

// Found by fuzz/json_parse_fuzzer (it ran out of memory): yaml-cpp's LoadAll reads a stream
// whose document starts with ',' as empty documents without end, allocating each.
TEST(YamlTest, StreamThatDoesNotAdvanceIsRefusedNotLoadedForever) {
  for (const char* y : {",", "[1],", "a: 1\n---\n,"}) {
    auto docs = ParseYamlDocuments(y);
    ASSERT_FALSE(docs.ok()) << y;
    EXPECT_EQ(docs.error().code(), StatusCode::kInvalidArgument);
  }
  auto docs = ParseYamlDocuments("a: 1\n---\nb: 2\n...\n---\nc: 3\n");
  ASSERT_TRUE(docs.ok()) << docs.error().ToString();
  EXPECT_EQ(docs->size(), 3u);
}

// Found by fuzz/json_parse_fuzzer: invalid UTF-8 was kept in strings and keys, which DumpJson
// then replaced, so two different keys became the same one; leading NUL bytes made yaml-cpp
// decode the text as UTF-32.
TEST(YamlTest, InvalidUtf8IsRefusedNamingTheByte) {
  for (const std::string& y : {std::string("a: \xa0\n"), std::string("\xa0 k: 1\n\xa1 k: 2\n"),
                               std::string("a: \xed\xa0\x80\n"), std::string("a: \xc0\xaf\n"),
                               std::string("a: \xe2\x82\n"), std::string("\x03\0\0\0[1]", 7)}) {
    auto j = ParseYaml(y);
    ASSERT_FALSE(j.ok()) << y;
    EXPECT_EQ(j.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(j.error().message().find("malformed YAML: invalid UTF-8 or NUL at byte"),
              std::string::npos)
        << j.error().message();
    EXPECT_FALSE(ParseYamlDocuments(y).ok()) << y;
  }
  // An escape yaml-cpp decodes to a single byte (\N, U+0085).
  for (const char* y : {"a: \"x\\N\"\n", "\"\\N\": 1\n"}) {
    auto j = ParseYaml(y);
    ASSERT_FALSE(j.ok()) << y;
    EXPECT_NE(j.error().message().find("not valid UTF-8 once its escapes are decoded"),
              std::string::npos)
        << j.error().message();
  }
  EXPECT_EQ(*ParseYaml("a: \"\\u00e9\\0\"\n"), Json::parse(R"({"a":"\u00e9\u0000"})"));
  auto ok = ParseYaml("a: caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82\xac\n");
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  EXPECT_EQ((*ok)["a"], "caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82\xac");
}

// Found by fuzz/serve_config_fuzzer (corpus entry self_alias): an alias inside the node it names
// is a cycle; converting it recursed until the stack overflowed.
TEST(YamlTest, SelfReferentialAliasIsRefusedNotFollowed) {
  for (const char* y : {"a: &a [*a]\n", "&m {k: *m}\n", "x: &x {y: [1, {z: *x}]}\n"}) {
    auto j = ParseYaml(y);
    ASSERT_FALSE(j.ok()) << y;
    EXPECT_EQ(j.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(j.error().message().find("nested deeper than the limit of 256 levels"),
              std::string::npos)
        << j.error().message();
    auto docs = ParseYamlDocuments(std::string("a: 1\n---\n") + y);
    ASSERT_FALSE(docs.ok()) << y;
    EXPECT_EQ(docs.error().code(), StatusCode::kInvalidArgument);
  }
}

TEST(YamlTest, DeepButAcyclicNestingStillParses) {
  const std::string y = "v: " + std::string(200, '[') + "1" + std::string(200, ']') + "\n";
  auto j = ParseYaml(y);
  ASSERT_TRUE(j.ok()) << j.error().ToString();
  const Json* v = &(*j)["v"];
  for (int i = 0; i < 200; ++i) v = &(*v)[0];
  EXPECT_EQ(*v, 1);
}

TEST(YamlTest, LargeDocumentWithoutAliasesIsWithinBudget) {
  std::string y = "items:\n";
  for (int i = 0; i < 20000; ++i) y += "- {name: n" + std::to_string(i) + ", v: 1}\n";
  auto j = ParseYaml(y);
  ASSERT_TRUE(j.ok()) << j.error().ToString();
  EXPECT_EQ((*j)["items"].size(), 20000u);
}

std::string FlowSequences(int depth) {
  return std::string(depth, '[') + "1" + std::string(depth, ']') + "\n";
}

// key:\n  key:\n    ... 1: mappings in block style, `depth` deep.
std::string BlockMappings(int depth) {
  std::string y;
  for (int i = 0; i < depth; ++i) y += std::string(i, ' ') + "k:" + (i + 1 < depth ? "\n" : " 1\n");
  return y;
}

TEST(YamlTest, NestingAtTheLimitIsAcceptedOneMoreIsRefusedNamingTheLimit) {
  for (auto make : {FlowSequences, BlockMappings}) {
    auto at = ParseYaml(make(kMaxNestingDepth));
    ASSERT_TRUE(at.ok()) << at.error().ToString();
    auto over = ParseYaml(make(kMaxNestingDepth + 1));
    ASSERT_FALSE(over.ok());
    EXPECT_EQ(over.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(over.error().message().find("nested deeper than the limit of 256 levels"),
              std::string::npos)
        << over.error().message();
  }
}

// Regression (hardening finding 2): yaml-cpp's parser stops at 2000 levels on its own, with a
// message that did not name Steward's limit.
TEST(YamlTest, EightyThousandLevelsAreRefusedNamingTheLimit) {
  auto j = ParseYaml("spec: {a: " + FlowSequences(80000) + "}\n");
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.error().message().find("limit of 256 levels"), std::string::npos)
      << j.error().message();
}

// Regression (hardening finding 3): a key given twice in one mapping was accepted, last wins.
TEST(YamlTest, DuplicateKeysAreRefusedNamingPathAndLine) {
  struct Case {
    const char* yaml;
    const char* message;
  };
  for (const Case& c : {
           Case{"spec: {team: a}\nspec: {team: b}\n", "duplicate key \"spec\" at line 2"},
           Case{"spec:\n  team: a\n  team: b\n", "duplicate key \"spec.team\" at line 3"},
           Case{"a:\n- x: 1\n- {y: 1, y: 2}\n", "duplicate key \"a[1].y\" at line 3"},
           Case{"1: a\n\"1\": b\n", "duplicate key \"1\" at line 2"},
       }) {
    auto j = ParseYaml(c.yaml);
    ASSERT_FALSE(j.ok()) << c.yaml;
    EXPECT_EQ(j.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(j.error().message(), std::string("malformed YAML: ") + c.message) << c.yaml;
    auto docs = ParseYamlDocuments(std::string("a: 1\n---\n") + c.yaml);
    EXPECT_FALSE(docs.ok()) << c.yaml;
  }
  auto ok = ParseYaml("a: {k: 1}\nb: {k: 2}\nc: [{k: 1}, {k: 2}]\n");
  EXPECT_TRUE(ok.ok()) << ok.error().ToString();
}

TEST(YamlTest, LastWinsOnlyWhenAskedFor) {
  ParseOptions last_wins{.duplicate_keys = DuplicateKeys::kLastWins};
  auto j = ParseYaml("spec: {team: a, x: 1}\nspec: {team: b}\n", last_wins);
  ASSERT_TRUE(j.ok()) << j.error().ToString();
  EXPECT_EQ(*j, Json::parse(R"({"spec":{"team":"b"}})"));
  auto docs = ParseYamlDocuments("a: 1\na: 2\n---\nb: 1\nb: 3\n", last_wins);
  ASSERT_TRUE(docs.ok()) << docs.error().ToString();
  EXPECT_EQ(docs->at(1), Json::parse(R"({"b":3})"));
}

}  // namespace
}  // namespace steward
