// The shared field reader: paths, both wordings, and the field carried as data.
#include "common/fields.h"

#include <gtest/gtest.h>

namespace steward {
namespace {

Json J(std::string_view text) { return Json::parse(text); }

TEST(FieldPathTest, JoinKeyIndexAndChild) {
  EXPECT_EQ(JoinPath("", "spec"), "spec");
  EXPECT_EQ(JoinPath("spec", "stack"), "spec.stack");
  EXPECT_EQ(KeyPath("spec.labels", "a/b"), "spec.labels[\"a/b\"]");
  EXPECT_EQ(IndexPath("spec.tolerations", 2), "spec.tolerations[2]");
  EXPECT_EQ(ChildPath("spec", "team_1"), "spec.team_1");
  EXPECT_EQ(ChildPath("spec", "1team"), "spec[\"1team\"]");
  EXPECT_EQ(ChildPath("", "x: y"), "[\"x: y\"]");
  EXPECT_EQ(QuoteShort(std::string(100, 'k')), "\"" + std::string(80, 'k') + "...\"");
}

TEST(InvalidFieldTest, CarriesThePathAsDataAndInTheMessage) {
  Status s = InvalidField("spec.stack.memory", "must be between 128 and 65536");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.field(), "spec.stack.memory");
  EXPECT_EQ(s.message(), "spec.stack.memory: must be between 128 and 65536");
  Status root = InvalidField("", "the body must be a JSON object");
  EXPECT_EQ(root.field(), "");
  EXPECT_EQ(root.message(), "the body must be a JSON object");
  // Equality is code and message: the field does not make another error.
  EXPECT_EQ(s, InvalidArgument("spec.stack.memory: must be between 128 and 65536"));
}

TEST(FieldReaderTest, JsonWording) {
  Json doc = J(R"({"name":"x","n":300,"f":2.5,"b":"yes","m":{"a":1},"o":[1],"z":null})");
  auto r = FieldReader::Of(doc, "spec");
  ASSERT_TRUE(r.ok());
  std::string s;
  int64_t n = 0;
  bool b = false;
  std::map<std::string, std::string> m;
  std::optional<Json> o;
  EXPECT_TRUE(r->String("name", &s).ok());
  EXPECT_EQ(s, "x");
  Status e = r->Int("n", 1, 10, &n);
  EXPECT_EQ(e.message(), "spec.n: must be between 1 and 10 (got 300)");
  EXPECT_EQ(e.field(), "spec.n");
  EXPECT_EQ(r->Int("f", 1, 10, &n).message(), "spec.f: must be an integer, got 2.5");
  EXPECT_EQ(r->Bool("b", &b).message(), "spec.b: must be a boolean, got string");
  e = r->StringMap("m", &m);
  EXPECT_EQ(e.field(), "spec.m[\"a\"]");
  EXPECT_EQ(e.message(), "spec.m[\"a\"]: must be a string, got integer");
  EXPECT_EQ(r->ObjectArray("o", &o).field(), "spec.o[0]");
  EXPECT_FALSE(o.has_value());
  // Absent and null fields leave the output alone.
  s = "kept";
  EXPECT_TRUE(r->String("z", &s).ok());
  EXPECT_TRUE(r->String("absent", &s).ok());
  EXPECT_EQ(s, "kept");
  EXPECT_EQ(r->Required("z").message(), "spec.z: is required");
  e = r->OnlyKnown({"name", "n", "b"});  // keys are read in order: b, f, m, n, ...
  EXPECT_EQ(e.field(), "spec.f");
  EXPECT_EQ(e.message(), "spec.f: unknown field");
  EXPECT_EQ(FieldReader::Of(J("[1]"), "spec").error().message(),
            "spec: must be an object, got array");
}

TEST(FieldReaderTest, ConfigWording) {
  Json doc = J(R"({"listen":8080,"w":2.5,"k":{"x":1},"src":"minikube"})");
  auto r = FieldReader::Of(&doc, "", FieldStyle::kConfig);
  ASSERT_TRUE(r.ok());
  std::string s;
  int64_t n = 0;
  EXPECT_EQ(r->String("listen", &s).message(), "listen: must be a string (got integer)");
  EXPECT_EQ(r->Int("w", 1, 8, &n).message(), "w: must be an integer (got number)");
  EXPECT_EQ(r->OnlyKnown({"listen", "k", "src"}).message(), "w: unknown key");
  EXPECT_EQ(r->OneOf("src", {"kubeconfig", "embedded"}, &s).message(),
            "src: must be one of kubeconfig, embedded (got \"minikube\")");
  Status root = FieldReader::Of(J("[1]"), "", FieldStyle::kConfig).error();
  EXPECT_EQ(root.message(), "config: must be a mapping (got array)");
  EXPECT_EQ(root.field(), "config");
  // A missing section reads as an empty one.
  auto none = FieldReader::Of(nullptr, "tls", FieldStyle::kConfig);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->OnlyKnown({}).ok());
}

TEST(FieldReaderTest, HugeUnsignedIsOutOfRangeNotWrapped) {
  Json doc = J(R"({"n":18446744073709551615})");
  auto r = FieldReader::Of(doc, "");
  int64_t n = 7;
  EXPECT_EQ(r->Int("n", 0, 100, &n).message(),
            "n: must be between 0 and 100 (got 18446744073709551615)");
  EXPECT_EQ(n, 7);
}

}  // namespace
}  // namespace steward
