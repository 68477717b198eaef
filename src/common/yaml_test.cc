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

// Found by fuzz/serve_config_fuzzer (corpus entry self_alias): an alias inside the node it names
// is a cycle; converting it recursed until the stack overflowed.
TEST(YamlTest, SelfReferentialAliasIsRefusedNotFollowed) {
  for (const char* y : {"a: &a [*a]\n", "&m {k: *m}\n", "x: &x {y: [1, {z: *x}]}\n"}) {
    auto j = ParseYaml(y);
    ASSERT_FALSE(j.ok()) << y;
    EXPECT_EQ(j.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(j.error().message().find("nested more than 1000 levels"), std::string::npos)
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

}  // namespace
}  // namespace steward
