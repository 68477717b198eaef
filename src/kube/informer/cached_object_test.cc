// CachedObject and ObjectCache: parsing, labels, errors, and the relist diff.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kube/informer/informer.h"
#include "kube/informer/object_cache.h"

namespace steward::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Json Object(const std::string& ns, const std::string& name, const std::string& rv,
            Json labels = nullptr) {
  Json o = {{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", {{"name", name}, {"resourceVersion", rv}, {"uid", "u-" + name}}},
            {"data", {{"k", "v"}}}};
  if (!ns.empty()) o["metadata"]["namespace"] = ns;
  if (!labels.is_null()) o["metadata"]["labels"] = labels;
  return o;
}

ObjectRef Build(const Json& j) {
  auto built = CachedObject::FromJson(j);
  EXPECT_TRUE(built.ok()) << built.status().ToString();
  return built.ok() ? std::move(built).value() : nullptr;
}

TEST(ObjectKeyTest, NamespacedAndClusterScoped) {
  EXPECT_EQ(ObjectKey("ns", "a"), "ns/a");
  EXPECT_EQ(ObjectKey("", "node-1"), "node-1");
}

TEST(CachedObjectTest, KeepsKeyFieldsLabelsAndCompactJson) {
  Json j = Object("team-a", "web", "42", {{"b", "2"}, {"a", "1"}, {"empty", ""}});
  j["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  ObjectRef o = Build(j);
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->ns(), "team-a");
  EXPECT_EQ(o->name(), "web");
  EXPECT_EQ(o->uid(), "u-web");
  EXPECT_EQ(o->resource_version(), "42");
  EXPECT_EQ(o->key(), "team-a/web");
  EXPECT_TRUE(o->terminating());
  EXPECT_EQ(o->label("a"), "1");
  EXPECT_EQ(o->label("b"), "2");
  EXPECT_EQ(o->label("missing"), "");
  EXPECT_TRUE(o->has_label("empty"));
  EXPECT_FALSE(o->has_label("missing"));
  EXPECT_EQ(o->labels().front().first, "a");  // sorted
  EXPECT_EQ(o->json(), j.dump());             // compact
  EXPECT_EQ(o->Parse(), j);
}

TEST(CachedObjectTest, ClusterScopedAndNotTerminating) {
  ObjectRef o = Build(Object("", "node-1", "7"));
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->ns(), "");
  EXPECT_EQ(o->key(), "node-1");
  EXPECT_FALSE(o->terminating());
  EXPECT_TRUE(o->labels().empty());
}

TEST(CachedObjectTest, RefusesObjectsWithoutKeyFieldsNamingTheField) {
  EXPECT_THAT(CachedObject::FromJson(Json::array()).status().message(),
              HasSubstr("not a JSON object"));
  EXPECT_THAT(CachedObject::FromJson(Json{{"kind", "X"}}).status().message(),
              HasSubstr("metadata"));
  Json no_name = Object("ns", "a", "1");
  no_name["metadata"].erase("name");
  EXPECT_THAT(CachedObject::FromJson(no_name).status().message(), HasSubstr("metadata.name"));
  Json number_name = Object("ns", "a", "1");
  number_name["metadata"]["name"] = 5;
  EXPECT_THAT(CachedObject::FromJson(number_name).status().message(),
              HasSubstr("metadata.name is not a string"));
  Json no_rv = Object("ns", "a", "");
  auto status = CachedObject::FromJson(no_rv).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("ns/a: metadata.resourceVersion"));
  Json bad_label = Object("ns", "a", "1", {{"x", 1}});
  EXPECT_THAT(CachedObject::FromJson(bad_label).status().message(),
              HasSubstr("label x is not a string"));
}

ObjectRef BuildScanned(const std::string& text) {
  auto scanned = ScanObject(text, "v1", "ConfigMap");
  EXPECT_TRUE(scanned.ok()) << scanned.status().ToString();
  if (!scanned.ok()) return nullptr;
  auto built = CachedObject::FromScanned(std::move(scanned).value());
  EXPECT_TRUE(built.ok()) << built.status().ToString();
  return built.ok() ? std::move(built).value() : nullptr;
}

TEST(CachedObjectTest, FromScannedKeepsTheTextAsSentAndTheSameFieldsAsFromJson) {
  Json j = Object("team-a", "web", "42", {{"b", "2"}, {"a", "1"}});
  j["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  // As a server may send it: members in its own order, with spaces.
  std::string text = R"({ "metadata": {"resourceVersion":"42", "uid":"u-web","name":"web",)"
                     R"("namespace":"team-a","labels":{"b":"2","a":"1"},)"
                     R"("deletionTimestamp":"2026-01-01T00:00:00Z"}, "data": {"k":"v"} })";
  ObjectRef scanned = BuildScanned(text);
  ObjectRef parsed = Build(j);
  ASSERT_NE(scanned, nullptr);
  ASSERT_NE(parsed, nullptr);
  EXPECT_EQ(scanned->key(), parsed->key());
  EXPECT_EQ(scanned->uid(), parsed->uid());
  EXPECT_EQ(scanned->resource_version(), parsed->resource_version());
  EXPECT_EQ(scanned->labels(), parsed->labels());  // sorted too
  EXPECT_TRUE(scanned->terminating());
  EXPECT_EQ(scanned->json(), R"({"apiVersion":"v1","kind":"ConfigMap", "metadata")" +
                                 text.substr(std::string(R"({ "metadata")").size()));
  EXPECT_EQ(scanned->Parse(), parsed->Parse());
}

TEST(CachedObjectTest, FromScannedRefusesAsFromJsonDoes) {
  auto refuse = [](const std::string& text) {
    auto scanned = ScanObject(text, "v1", "ConfigMap");
    if (!scanned.ok()) return "scan: " + scanned.status().message();
    auto built = CachedObject::FromScanned(std::move(scanned).value());
    return built.ok() ? std::string("ok") : built.status().message();
  };
  EXPECT_THAT(refuse(R"({"kind":"X"})"), HasSubstr("metadata is missing or not an object"));
  EXPECT_THAT(refuse(R"({"metadata":{"resourceVersion":"1"}})"),
              HasSubstr("metadata.name is missing"));
  EXPECT_EQ(refuse(R"({"metadata":{"name":"a","namespace":"ns"}})"),
            "cached object ns/a: metadata.resourceVersion is missing");
  EXPECT_EQ(refuse(R"({"metadata":{"name":"a","namespace":"ns","resourceVersion":"1",)"
                   R"("labels":{"x":1}}})"),
            "cached object ns/a: label x is not a string");
  EXPECT_EQ(refuse(R"({"metadata":{"name":"a","resourceVersion":"1"}})"), "ok");
}

std::vector<std::string> Keys(const std::vector<ObjectRef>& objects) {
  std::vector<std::string> out;
  for (const auto& o : objects) out.push_back(o->key());
  return out;
}

TEST(ObjectCacheTest, ReplaceReportsAddsUpdatesAndDeletesAndReindexes) {
  internal::ObjectCache cache({"team"});
  cache.Upsert(Build(Object("n", "a", "1", {{"team", "x"}})));
  cache.Upsert(Build(Object("n", "b", "2", {{"team", "x"}})));
  cache.Upsert(Build(Object("n", "c", "3", {{"team", "y"}})));
  std::map<std::string, ObjectRef, std::less<>> next;
  next["n/b"] = Build(Object("n", "b", "2", {{"team", "x"}}));   // unchanged
  next["n/c"] = Build(Object("n", "c", "9", {{"team", "x"}}));   // changed, label moved
  next["n/d"] = Build(Object("n", "d", "10", {{"team", "y"}}));  // new
  auto changes = cache.Replace(std::move(next));
  using Kind = internal::ObjectCache::Change::Kind;
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0].kind, Kind::kDelete);
  EXPECT_EQ(changes[0].old_object->key(), "n/a");
  EXPECT_EQ(changes[1].kind, Kind::kUpdate);
  EXPECT_EQ(changes[1].old_object->resource_version(), "3");
  EXPECT_EQ(changes[1].new_object->resource_version(), "9");
  EXPECT_EQ(changes[2].kind, Kind::kAdd);
  EXPECT_EQ(changes[2].new_object->key(), "n/d");
  EXPECT_THAT(Keys(cache.ByLabel("team", "x")), ElementsAre("n/b", "n/c"));
  EXPECT_THAT(Keys(cache.ByLabel("team", "y")), ElementsAre("n/d"));
  EXPECT_EQ(cache.size(), 3u);
}

TEST(ObjectCacheTest, NamespaceIndexIsExactAndLabelScanCoversUnindexedKeys) {
  internal::ObjectCache cache({});
  cache.Upsert(Build(Object("a", "x", "1", {{"k", "v"}})));
  cache.Upsert(Build(Object("a-b", "y", "2")));
  cache.Upsert(Build(Object("ab", "z", "3", {{"k", "v"}})));
  cache.Upsert(Build(Object("", "cluster", "4")));
  EXPECT_THAT(Keys(cache.ByNamespace("a")), ElementsAre("a/x"));
  EXPECT_THAT(Keys(cache.ByNamespace("")), ElementsAre("cluster"));
  EXPECT_THAT(Keys(cache.ByLabel("k", "v")), ElementsAre("a/x", "ab/z"));
  EXPECT_EQ(cache.Remove("a/x")->resource_version(), "1");
  EXPECT_EQ(cache.Remove("a/x"), nullptr);
  EXPECT_THAT(Keys(cache.ByLabel("k", "v")), ElementsAre("ab/z"));
}

}  // namespace
}  // namespace steward::kube
