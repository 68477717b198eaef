// ScanListPage / ScanObject: the items' texts and metadata of a list page, and exactly
// ParseJson's refusals.
#include "kube/client/list_scan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/json.h"

namespace steward::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::StartsWith;

// Items as a real server lists them (no apiVersion/kind), one pretty-printed, with strings
// holding braces and escaped quotes, and numbers right before a closing brace (where the lexer
// reads ahead).
constexpr const char* kPage = R"({"kind":"PodList","apiVersion":"v1",
  "metadata":{"resourceVersion":"812","continue":"tok"},
  "items":[
    {"metadata":{"name":"a","namespace":"n","uid":"u-a","resourceVersion":"7",
                 "labels":{"app":"web","x":"{\"}"}},
     "spec":{"replicas":3}},
    {
      "metadata": { "name": "b", "namespace": "n", "resourceVersion": "8",
                    "deletionTimestamp": "2026-01-01T00:00:00Z", "generation": 2 },
      "status": { "phase": "Running}", "n": -1.5e3 }
    },
    {"apiVersion":"v1","kind":"Pod","metadata":{"name":"c","resourceVersion":"9","uid":null,
     "deletionTimestamp":null,"labels":null},"data":[1,{"k":[]},2]}
  ]})";

TEST(ListScanTest, KeepsEachItemsTextAndMetadataAndAddsTypeMetaWhereMissing) {
  auto page = ScanListPage(kPage, "v1", "Pod");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->resource_version, "812");
  EXPECT_EQ(page->continue_token, "tok");
  ASSERT_EQ(page->items.size(), 3u);

  const ScannedItem& a = page->items[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.ns, "n");
  EXPECT_EQ(a.uid, "u-a");
  EXPECT_EQ(a.resource_version, "7");
  EXPECT_TRUE(a.metadata_object);
  EXPECT_FALSE(a.terminating);
  EXPECT_THAT(a.labels, ElementsAre(Pair("app", "web"), Pair("x", "{\"}")));
  EXPECT_EQ(a.error, "");
  // The text as sent, apiVersion and kind put first.
  EXPECT_EQ(
      a.json,
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"n","uid":"u-a","resourceVersion":"7",
                 "labels":{"app":"web","x":"{\"}"}},
     "spec":{"replicas":3}})");

  const ScannedItem& b = page->items[1];
  EXPECT_EQ(b.name, "b");
  EXPECT_TRUE(b.terminating);
  EXPECT_EQ(b.uid, "");
  EXPECT_THAT(b.json, StartsWith("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\n      \"metadata\""));

  const ScannedItem& c = page->items[2];
  EXPECT_EQ(c.name, "c");
  EXPECT_EQ(c.ns, "");
  EXPECT_FALSE(c.terminating);  // null is not set
  EXPECT_TRUE(c.labels.empty());
  EXPECT_THAT(c.json, StartsWith(R"({"apiVersion":"v1","kind":"Pod","metadata")"));  // not twice

  // Every item's text is the item ParseJson would give, with the type filled in.
  auto whole = ParseJson(kPage);
  ASSERT_TRUE(whole.ok());
  for (size_t i = 0; i < 3; ++i) {
    Json expected = (*whole)["items"][i];
    expected["apiVersion"] = "v1";
    expected["kind"] = "Pod";
    auto parsed = ParseJson(page->items[i].json);
    ASSERT_TRUE(parsed.ok()) << page->items[i].json;
    EXPECT_EQ(*parsed, expected) << i;
  }
}

TEST(ListScanTest, EmptyAndAbsentItemsAndAnEmptyItemObject) {
  auto none = ScanListPage(R"({"metadata":{"resourceVersion":"3"}})", "v1", "Pod");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->items.empty());
  EXPECT_EQ(none->resource_version, "3");
  auto null_items = ScanListPage(R"({"items":null})", "v1", "Pod");
  ASSERT_TRUE(null_items.ok());
  EXPECT_TRUE(null_items->items.empty());

  auto empty = ScanListPage(R"({"items":[{ }]})", "apps/v1", "Deployment");
  ASSERT_TRUE(empty.ok());
  ASSERT_EQ(empty->items.size(), 1u);
  EXPECT_EQ(empty->items[0].json, R"({"apiVersion":"apps/v1","kind":"Deployment" })");
  EXPECT_TRUE(ParseJson(empty->items[0].json).ok());
  EXPECT_FALSE(empty->items[0].metadata_object);
}

TEST(ListScanTest, AnItemWithBadMetadataCarriesItsErrorAndTheOthersStay) {
  auto page = ScanListPage(
      R"({"items":[
        {"metadata":{"name":5,"resourceVersion":"1"}},
        {"metadata":{"name":"ok","resourceVersion":"2","labels":{"a":1}}},
        {"metadata":{"name":"l","resourceVersion":"3","labels":["a"]}},
        {"metadata":"text"},
        {"metadata":{"name":"fine","resourceVersion":"4"}}]})",
      "v1", "Pod");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->items.size(), 5u);
  EXPECT_EQ(page->items[0].error, "metadata.name is not a string");
  EXPECT_EQ(page->items[1].error, "label a is not a string");
  EXPECT_EQ(page->items[2].error, "metadata.labels is not an object");
  EXPECT_FALSE(page->items[3].metadata_object);
  EXPECT_EQ(page->items[4].error, "");
  EXPECT_EQ(page->items[4].name, "fine");
}

TEST(ListScanTest, RefusesWhatParseJsonRefusesAndABadShape) {
  auto message = [](std::string_view body) {
    auto page = ScanListPage(body, "v1", "Pod");
    return page.ok() ? std::string("ok") : page.status().message();
  };
  EXPECT_THAT(message(R"({"items":[{"metadata":{}}])"), StartsWith("malformed JSON: "));
  EXPECT_EQ(message(R"({"items":[{"metadata":{}},{"metadata":{"labels":{"a":"1","a":"2"}}}]})"),
            "malformed JSON: duplicate key \"items[1].metadata.labels.a\"");
  EXPECT_EQ(message(R"({"kind":"PodList","kind":"PodList"})"),
            "malformed JSON: duplicate key \"kind\"");
  // Past the linear check's 32 keys, the hash set still sees a repeat.
  std::string many = R"({"items":[{"data":{)";
  for (int i = 0; i < 40; ++i) many += "\"k" + std::to_string(i) + "\":0,";
  std::string repeated = many + "\"k35\":1}}]}";
  many += "\"k40\":1}}]}";
  EXPECT_EQ(message(many), "ok");
  EXPECT_EQ(message(repeated), "malformed JSON: duplicate key \"items[0].data.k35\"");
  // ParseJson's depth limit, to the level.
  auto nested = [](int levels) {
    return R"({"items":[{"x":)" + std::string(levels - 3, '[') + std::string(levels - 3, ']') +
           "}]}";
  };
  EXPECT_EQ(message(nested(kMaxNestingDepth)), "ok");
  EXPECT_THAT(message(nested(kMaxNestingDepth + 1)), HasSubstr("nested deeper than the limit"));
  EXPECT_EQ(ParseJson(nested(kMaxNestingDepth)).ok(), true);
  EXPECT_EQ(ParseJson(nested(kMaxNestingDepth + 1)).ok(), false);

  EXPECT_EQ(message("[]"), "not a JSON object");
  EXPECT_EQ(message("\"x\""), "not a JSON object");
  EXPECT_EQ(message(R"({"items":{}})"), "\"items\" is not a list");
  EXPECT_EQ(message(R"({"items":[{},3]})"), "an item is not an object");
  EXPECT_EQ(message(R"({"items":[[]]})"), "an item is not an object");
  EXPECT_THAT(message(""), StartsWith("malformed JSON: "));
  EXPECT_THAT(message(R"({"items":[]} x)"), StartsWith("malformed JSON: "));
}

TEST(ListScanTest, ScanObjectReadsOneDocument) {
  auto one = ScanObject(R"({"kind":"Secret","metadata":{"name":"s","resourceVersion":"4"}})", "v1",
                        "Secret");
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->name, "s");
  EXPECT_EQ(one->json,
            R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","resourceVersion":"4"}})");
  EXPECT_EQ(ScanObject("[1]", "v1", "Secret").status().message(), "not a JSON object");
  EXPECT_THAT(ScanObject(R"({"a":1,"a":2})", "v1", "Secret").status().message(),
              HasSubstr("duplicate key \"a\""));
}

}  // namespace
}  // namespace steward::kube
