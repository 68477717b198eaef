#include "cluster/storage/storage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <tuple>

#include "common/mutex.h"

namespace steward::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Kind = Storage::Mutation::Kind;
using namespace std::chrono_literals;

Json Obj(std::string_view ns, std::string_view name, Json labels = nullptr, int value = 0) {
  Json o = {{"kind", "Pod"},
            {"metadata", {{"name", name}, {"namespace", ns}}},
            {"spec", {{"value", value}}}};
  if (!labels.is_null()) o["metadata"]["labels"] = std::move(labels);
  return o;
}

std::unique_ptr<Storage> OpenMem(size_t history_limit = 100000) {
  Storage::Options opts;
  opts.history_limit = history_limit;
  auto s = Storage::Open(opts);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

StatusOr<Storage::MutateResult> Put(Storage& s, std::string_view gr, std::string_view ns,
                                    std::string_view name, Json obj) {
  return s.Mutate(gr, ns, name, [&](const ObjectRecord*) -> StatusOr<Storage::Mutation> {
    return Storage::Mutation::Put(obj);
  });
}

StatusOr<Storage::MutateResult> PutPod(Storage& s, std::string_view ns, std::string_view name,
                                       int value = 0, Json labels = nullptr) {
  return Put(s, "pods", ns, name, Obj(ns, name, std::move(labels), value));
}

StatusOr<Storage::MutateResult> Del(Storage& s, std::string_view gr, std::string_view ns,
                                    std::string_view name) {
  return s.Mutate(gr, ns, name, [](const ObjectRecord*) -> StatusOr<Storage::Mutation> {
    return Storage::Mutation::Delete();
  });
}

std::string Rv(const ObjectRecord& rec) {
  return GetString(rec.Parse()["metadata"], "resourceVersion");
}

std::vector<uint64_t> Revisions(const std::vector<WatchEvent>& events) {
  std::vector<uint64_t> out;
  for (const auto& e : events) out.push_back(e.object.revision);
  return out;
}

// Waits (with a deadline) until `n` events have been drained from `w`.
std::vector<WatchEvent> DrainN(Watcher& w, size_t n, std::chrono::milliseconds deadline = 5s) {
  std::vector<WatchEvent> out;
  auto end = std::chrono::steady_clock::now() + deadline;
  while (out.size() < n && std::chrono::steady_clock::now() < end) {
    w.Wait(10ms);
    for (auto& e : w.Drain()) out.push_back(std::move(e));
  }
  return out;
}

TEST(StorageTest, CrudStampsMonotonicRevisions) {
  auto s = OpenMem();
  EXPECT_EQ(s->CurrentRevision(), 0u);
  EXPECT_EQ(s->CompactedRevision(), 0u);

  auto r1 = PutPod(*s, "default", "a", 1, {{"app", "x"}});
  ASSERT_TRUE(r1.ok());
  EXPECT_EQ(r1->applied, Kind::kPut);
  ASSERT_TRUE(r1->object.has_value());
  EXPECT_EQ(r1->object->revision, 1u);
  EXPECT_EQ(Rv(*r1->object), "1");  // a string, as in Kubernetes
  EXPECT_EQ(r1->object->Parse()["metadata"]["resourceVersion"].type(), Json::value_t::string);
  EXPECT_EQ(*r1->object->labels, (Labels{{"app", "x"}}));
  // Stored compactly.
  EXPECT_EQ(r1->object->json->find(' '), std::string::npos);

  auto got = s->Get("pods", "default", "a");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->revision, 1u);
  EXPECT_EQ(got->Parse()["spec"]["value"], 1);
  EXPECT_FALSE(s->Get("pods", "default", "b").has_value());
  EXPECT_FALSE(s->Get("pods", "other", "a").has_value());
  EXPECT_FALSE(s->Get("services", "default", "a").has_value());

  auto r2 =
      s->Mutate("pods", "default", "a", [](const ObjectRecord* cur) -> StatusOr<Storage::Mutation> {
        EXPECT_NE(cur, nullptr);
        Json o = cur->Parse();
        o["spec"]["value"] = 2;
        return Storage::Mutation::Put(o);
      });
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->object->revision, 2u);
  EXPECT_EQ(Rv(*r2->object), "2");

  ASSERT_TRUE(PutPod(*s, "default", "b").ok());
  EXPECT_EQ(s->CurrentRevision(), 3u);

  auto r4 = Del(*s, "pods", "default", "a");
  ASSERT_TRUE(r4.ok());
  EXPECT_EQ(r4->applied, Kind::kDelete);
  ASSERT_TRUE(r4->object.has_value());
  EXPECT_EQ(r4->object->revision, 4u);
  EXPECT_EQ(Rv(*r4->object), "4");
  EXPECT_EQ(r4->object->Parse()["spec"]["value"], 2);  // the last state
  EXPECT_FALSE(s->Get("pods", "default", "a").has_value());
  EXPECT_EQ(s->CurrentRevision(), 4u);
  EXPECT_EQ(s->Size().first, 1u);
  EXPECT_EQ(s->Size().second, s->Get("pods", "default", "b")->json->size());
}

TEST(StorageTest, NoopAndFailedWritesConsumeNoRevision) {
  auto s = OpenMem();
  ASSERT_TRUE(PutPod(*s, "ns", "a").ok());
  auto w = s->Watch({.from_revision = 1});
  ASSERT_TRUE(w.ok());

  auto noop =
      s->Mutate("pods", "ns", "a", [](const ObjectRecord* cur) -> StatusOr<Storage::Mutation> {
        EXPECT_NE(cur, nullptr);
        return Storage::Mutation::Noop();
      });
  ASSERT_TRUE(noop.ok());
  EXPECT_EQ(noop->applied, Kind::kNoop);
  ASSERT_TRUE(noop->object.has_value());
  EXPECT_EQ(noop->object->revision, 1u);

  auto absent =
      s->Mutate("pods", "ns", "zz", [](const ObjectRecord* cur) -> StatusOr<Storage::Mutation> {
        EXPECT_EQ(cur, nullptr);
        return Storage::Mutation::Noop();
      });
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->object.has_value());

  auto del_absent = Del(*s, "pods", "ns", "zz");
  ASSERT_TRUE(del_absent.ok());
  EXPECT_EQ(del_absent->applied, Kind::kNoop);
  EXPECT_FALSE(del_absent->object.has_value());

  auto failed = s->Mutate(
      "pods", "ns", "a",
      [](const ObjectRecord*) -> StatusOr<Storage::Mutation> { return Aborted("conflict"); });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status(), Aborted("conflict"));

  auto not_object = Put(*s, "pods", "ns", "b", Json::array({1, 2}));
  ASSERT_FALSE(not_object.ok());
  EXPECT_EQ(not_object.status().code(), StatusCode::kInvalidArgument);

  EXPECT_EQ(s->CurrentRevision(), 1u);
  EXPECT_FALSE((*w)->Wait(0ms));
  EXPECT_TRUE((*w)->Drain().empty());

  // The next real write takes the very next revision.
  ASSERT_TRUE(PutPod(*s, "ns", "b").ok());
  auto events = DrainN(**w, 1);
  EXPECT_THAT(Revisions(events), ElementsAre(2u));
}

// Stored JSON lives as long as the object: it must not keep the serialiser's growth slack
// (which cost a third of the JSON's size in memory).
TEST(StorageTest, StoredJsonHasNoSpareCapacity) {
  auto s = OpenMem();
  Json big = Obj("ns", "a");
  big["spec"]["blob"] = std::string(3000, 'x');
  ASSERT_TRUE(Put(*s, "pods", "ns", "a", big).ok());
  auto rec = s->Get("pods", "ns", "a");
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->json->capacity(), rec->json->size());
  EXPECT_EQ(s->Size().second, rec->json->size());
}

TEST(StorageTest, ListIsOrderedAndScopedToOneNamespace) {
  auto s = OpenMem();
  for (auto [ns, name] : std::vector<std::pair<std::string, std::string>>{
           {"b", "y"}, {"a", "z"}, {"a-b", "a"}, {"a", "m"}, {"ab", "a"}, {"b", "x"}}) {
    ASSERT_TRUE(PutPod(*s, ns, name).ok());
  }
  ASSERT_TRUE(Put(*s, "services", "a", "svc", Obj("a", "svc")).ok());
  ASSERT_TRUE(Put(*s, "namespaces", "", "a", Obj("", "a")).ok());

  auto keys = [](const Storage::ListResult& r) {
    std::vector<std::string> out;
    for (const auto& i : r.items) out.push_back(i.ns + "/" + i.name);
    return out;
  };
  auto in_a = s->List("pods", "a");
  EXPECT_THAT(keys(in_a), ElementsAre("a/m", "a/z"));
  EXPECT_EQ(in_a.revision, 8u);
  EXPECT_THAT(keys(s->List("pods", "")), ElementsAre("a/m", "a/z", "a-b/a", "ab/a", "b/x", "b/y"));
  EXPECT_THAT(keys(s->List("pods", "c")), ElementsAre());
  EXPECT_THAT(keys(s->List("services", "")), ElementsAre("a/svc"));
  EXPECT_THAT(keys(s->List("namespaces", "")), ElementsAre("/a"));
  EXPECT_THAT(keys(s->List("secrets", "")), ElementsAre());
}

TEST(StorageTest, LabelsAreParsedSortedAndReportedBeforeAndAfter) {
  auto s = OpenMem();
  auto w = s->Watch({.group_resource = "pods"});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(PutPod(*s, "ns", "a", 0, {{"z", "1"}, {"a", "2"}, {"m", "3"}}).ok());
  ASSERT_TRUE(PutPod(*s, "ns", "a", 1, {{"z", "1"}, {"a", "2"}, {"m", "3"}}).ok());
  ASSERT_TRUE(PutPod(*s, "ns", "a", 2, {{"a", "other"}}).ok());
  ASSERT_TRUE(Del(*s, "pods", "ns", "a").ok());
  auto ev = DrainN(**w, 4);
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[0].type, WatchEventType::kAdded);
  EXPECT_EQ(ev[0].prev_labels, nullptr);
  EXPECT_EQ(*ev[0].object.labels, (Labels{{"a", "2"}, {"m", "3"}, {"z", "1"}}));
  EXPECT_EQ(ev[1].type, WatchEventType::kModified);
  EXPECT_EQ(*ev[1].prev_labels, *ev[0].object.labels);
  // Unchanged labels are shared, not copied.
  EXPECT_EQ(ev[1].object.labels.get(), ev[0].object.labels.get());
  EXPECT_EQ(*ev[2].object.labels, (Labels{{"a", "other"}}));
  EXPECT_EQ(*ev[2].prev_labels, *ev[1].object.labels);
  EXPECT_EQ(ev[3].type, WatchEventType::kDeleted);
  EXPECT_EQ(ev[3].object.revision, 4u);
  EXPECT_EQ(Rv(ev[3].object), "4");
  EXPECT_EQ(ev[3].object.Parse()["spec"]["value"], 2);
  EXPECT_EQ(*ev[3].prev_labels, (Labels{{"a", "other"}}));
}

TEST(StorageTest, WatchFromRevisionReplaysHistoryThenLiveEvents) {
  auto s = OpenMem();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(PutPod(*s, "ns", "p" + std::to_string(i)).ok());
  auto w = s->Watch({.group_resource = "pods", .from_revision = 2});
  ASSERT_TRUE(w.ok());
  auto replay = DrainN(**w, 3);
  EXPECT_THAT(Revisions(replay), ElementsAre(3u, 4u, 5u));
  EXPECT_EQ(replay[0].object.name, "p2");
  ASSERT_TRUE(PutPod(*s, "ns", "p0", 9).ok());
  auto live = DrainN(**w, 1);
  EXPECT_THAT(Revisions(live), ElementsAre(6u));
  EXPECT_EQ(live[0].type, WatchEventType::kModified);

  // From the current revision: nothing to replay.
  auto w2 = s->Watch({.from_revision = 6});
  ASSERT_TRUE(w2.ok());
  EXPECT_FALSE((*w2)->Wait(0ms));
}

TEST(StorageTest, WatchFromFutureRevisionSkipsUntilThen) {
  auto s = OpenMem();
  ASSERT_TRUE(PutPod(*s, "ns", "a").ok());
  auto w = s->Watch({.from_revision = 3});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(PutPod(*s, "ns", "b").ok());  // 2
  ASSERT_TRUE(PutPod(*s, "ns", "c").ok());  // 3
  ASSERT_TRUE(PutPod(*s, "ns", "d").ok());  // 4
  auto ev = DrainN(**w, 1);
  EXPECT_THAT(Revisions(ev), ElementsAre(4u));
  EXPECT_TRUE((*w)->Drain().empty());
}

TEST(StorageTest, WatchFiltersByGroupResourceAndNamespace) {
  auto s = OpenMem();
  auto pods_a = s->Watch({.group_resource = "pods", .ns = "a"});
  auto pods_all = s->Watch({.group_resource = "pods"});
  auto all_a = s->Watch({.ns = "a"});
  auto all = s->Watch({});
  ASSERT_TRUE(pods_a.ok() && pods_all.ok() && all_a.ok() && all.ok());
  ASSERT_TRUE(PutPod(*s, "a", "x").ok());                                // 1
  ASSERT_TRUE(PutPod(*s, "b", "x").ok());                                // 2
  ASSERT_TRUE(Put(*s, "services", "a", "x", Obj("a", "x")).ok());        // 3
  ASSERT_TRUE(Put(*s, "services.other", "b", "x", Obj("b", "x")).ok());  // 4
  ASSERT_TRUE(PutPod(*s, "ab", "x").ok());                               // 5
  EXPECT_THAT(Revisions(DrainN(**all, 5)), ElementsAre(1u, 2u, 3u, 4u, 5u));
  EXPECT_THAT(Revisions((*pods_a)->Drain()), ElementsAre(1u));
  EXPECT_THAT(Revisions((*pods_all)->Drain()), ElementsAre(1u, 2u, 5u));
  EXPECT_THAT(Revisions((*all_a)->Drain()), ElementsAre(1u, 3u));
}

TEST(StorageTest, CompactionMakesOldRevisionsOutOfRange) {
  auto s = OpenMem();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(PutPod(*s, "ns", "p" + std::to_string(i)).ok());
  ASSERT_TRUE(s->Watch({.from_revision = 0}).ok());
  s->Compact();
  EXPECT_EQ(s->CompactedRevision(), 3u);
  auto old = s->Watch({.from_revision = 1});
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status(), OutOfRange("too old resource version: 1 (3)"));
  auto ok = s->Watch({.from_revision = 3});
  ASSERT_TRUE(ok.ok());
  ASSERT_TRUE(PutPod(*s, "ns", "p9").ok());
  EXPECT_THAT(Revisions(DrainN(**ok, 1)), ElementsAre(4u));
  // A snapshot watch does not depend on history.
  auto snap = s->Watch({.from_revision = 1, .initial_snapshot = true});
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ((*snap)->Drain().size(), 4u);
}

TEST(StorageTest, HistoryLimitTrimsOldestEvents) {
  auto s = OpenMem(/*history_limit=*/3);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(PutPod(*s, "ns", "p" + std::to_string(i)).ok());
  EXPECT_EQ(s->CompactedRevision(), 2u);
  auto old = s->Watch({.from_revision = 1});
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(old.status().message(), "too old resource version: 1 (2)");
  auto w = s->Watch({.from_revision = 2});
  ASSERT_TRUE(w.ok());
  EXPECT_THAT(Revisions(DrainN(**w, 3)), ElementsAre(3u, 4u, 5u));

  auto none = OpenMem(/*history_limit=*/0);
  ASSERT_TRUE(PutPod(*none, "ns", "a").ok());
  ASSERT_TRUE(PutPod(*none, "ns", "b").ok());
  EXPECT_EQ(none->CompactedRevision(), 2u);
  EXPECT_FALSE(none->Watch({.from_revision = 1}).ok());
  EXPECT_TRUE(none->Watch({.from_revision = 2}).ok());
}

// "ns/name" of each record.
std::vector<std::string> Keys(const std::vector<ObjectRecord>& items) {
  std::vector<std::string> out;
  for (const auto& i : items) out.push_back(i.ns + "/" + i.name);
  return out;
}

TEST(StorageTest, ListAtShowsTheObjectsAsTheyWereAtTheRevision) {
  auto s = OpenMem();
  ASSERT_TRUE(PutPod(*s, "ns", "a", 0, {{"tier", "x"}}).ok());  // 1
  ASSERT_TRUE(PutPod(*s, "ns", "b", 0, {{"tier", "x"}}).ok());  // 2
  ASSERT_TRUE(PutPod(*s, "ns", "c", 0, {{"tier", "x"}}).ok());  // 3
  ASSERT_TRUE(PutPod(*s, "ns", "d", 0, {{"tier", "x"}}).ok());  // 4
  auto before = s->List("pods", "ns");
  ASSERT_EQ(before.revision, 4u);
  ASSERT_TRUE(PutPod(*s, "ns", "b", 1, {{"tier", "y"}}).ok());       // 5: modified (and relabelled)
  ASSERT_TRUE(PutPod(*s, "ns", "b", 2, {{"tier", "z"}}).ok());       // 6: modified again
  ASSERT_TRUE(Del(*s, "pods", "ns", "c").ok());                      // 7: deleted
  ASSERT_TRUE(PutPod(*s, "ns", "bb").ok());                          // 8: created
  ASSERT_TRUE(PutPod(*s, "ns", "e").ok());                           // 9: created
  ASSERT_TRUE(PutPod(*s, "other", "a").ok());                        // 10: another namespace
  ASSERT_TRUE(Put(*s, "services", "ns", "c", Obj("ns", "c")).ok());  // 11: another resource
  EXPECT_THAT(Keys(s->List("pods", "ns").items),
              ElementsAre("ns/a", "ns/b", "ns/bb", "ns/d", "ns/e"));

  auto at = s->ListAt("pods", "ns", 4, std::nullopt);
  ASSERT_TRUE(at.ok()) << at.status().ToString();
  EXPECT_EQ(at->revision, 4u);
  ASSERT_THAT(Keys(at->items), ElementsAre("ns/a", "ns/b", "ns/c", "ns/d"));
  // Every record is exactly what a List at revision 4 returned: JSON, labels and revision.
  for (size_t i = 0; i < before.items.size(); ++i) {
    EXPECT_EQ(*at->items[i].json, *before.items[i].json) << at->items[i].name;
    EXPECT_EQ(*at->items[i].labels, *before.items[i].labels) << at->items[i].name;
    EXPECT_EQ(at->items[i].revision, before.items[i].revision) << at->items[i].name;
  }
  EXPECT_EQ(Rv(at->items[2]), "3");  // the deleted object carries its own revision, not 7's

  // Resuming after a key, and across namespaces.
  auto rest = s->ListAt("pods", "ns", 4, Storage::ListFrom{"ns", "b"});
  ASSERT_TRUE(rest.ok());
  EXPECT_THAT(Keys(rest->items), ElementsAre("ns/c", "ns/d"));
  auto all = s->ListAt("pods", "", 4, Storage::ListFrom{"ns", "a"});
  ASSERT_TRUE(all.ok());
  EXPECT_THAT(Keys(all->items), ElementsAre("ns/b", "ns/c", "ns/d"));
  auto at9 = s->ListAt("pods", "", 9, std::nullopt);
  ASSERT_TRUE(at9.ok());
  EXPECT_THAT(Keys(at9->items), ElementsAre("ns/a", "ns/b", "ns/bb", "ns/d", "ns/e"));
  auto services = s->ListAt("services", "", 4, std::nullopt);
  ASSERT_TRUE(services.ok());
  EXPECT_THAT(Keys(services->items), ElementsAre());

  // At the current revision: the current objects.
  auto now = s->ListAt("pods", "", s->CurrentRevision(), Storage::ListFrom{"ns", "e"});
  ASSERT_TRUE(now.ok());
  EXPECT_THAT(Keys(now->items), ElementsAre("other/a"));
}

TEST(StorageTest, ListPageAtKeepsSelectedRecordsUpToTheLimitAndCountsTheRest) {
  auto s = OpenMem();
  for (const char* name : {"a", "b", "c", "d", "e", "f"}) {
    Json labels = {{"tier", std::string(name) < "d" ? "x" : "y"}};
    if (std::string(name) == "b") labels = {{"tier", "y"}};
    ASSERT_TRUE(PutPod(*s, "ns", name, 0, labels).ok());  // 1..6; tier x: a c; y: b d e f
  }
  Storage::Page page;
  page.keep = [](const ObjectRecord& rec) {
    return rec.labels && rec.labels->front().second == "y";
  };
  page.limit = 2;
  // At the current revision (the page is cut while collecting).
  const uint64_t six = s->CurrentRevision();
  auto first = s->ListPageAt("pods", "ns", six, std::nullopt, page);
  ASSERT_TRUE(first.ok());
  EXPECT_THAT(Keys(first->items), ElementsAre("ns/b", "ns/d"));
  EXPECT_EQ(first->remaining, 2u);  // e, f
  auto second = s->ListPageAt("pods", "ns", six, Storage::ListFrom{"ns", "d"}, page);
  ASSERT_TRUE(second.ok());
  EXPECT_THAT(Keys(second->items), ElementsAre("ns/e", "ns/f"));
  EXPECT_EQ(second->remaining, 0u);
  // At an older revision (built whole, then cut): f relabelled and a new y added since.
  ASSERT_TRUE(PutPod(*s, "ns", "f", 1, {{"tier", "x"}}).ok());
  ASSERT_TRUE(PutPod(*s, "ns", "g", 0, {{"tier", "y"}}).ok());
  auto old_second = s->ListPageAt("pods", "ns", six, Storage::ListFrom{"ns", "d"}, page);
  ASSERT_TRUE(old_second.ok());
  EXPECT_THAT(Keys(old_second->items), ElementsAre("ns/e", "ns/f"));
  EXPECT_EQ(old_second->remaining, 0u);
  auto now = s->ListPageAt("pods", "ns", s->CurrentRevision(), Storage::ListFrom{"ns", "d"}, page);
  ASSERT_TRUE(now.ok());
  EXPECT_THAT(Keys(now->items), ElementsAre("ns/e", "ns/g"));
  // Not counting the rest: collecting stops at the first kept record past the limit.
  page.count_rest = false;
  auto uncounted = s->ListPageAt("pods", "ns", six, std::nullopt, page);
  ASSERT_TRUE(uncounted.ok());
  EXPECT_THAT(Keys(uncounted->items), ElementsAre("ns/b", "ns/d"));
  EXPECT_EQ(uncounted->remaining, 1u);
  auto last = s->ListPageAt("pods", "ns", six, Storage::ListFrom{"ns", "d"}, page);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->remaining, 0u);
  auto old_uncounted = s->ListPageAt("pods", "ns", six, std::nullopt, page);
  ASSERT_TRUE(old_uncounted.ok());
  EXPECT_EQ(old_uncounted->remaining, 1u);
  // No selector, no limit: ListAt's records.
  auto whole = s->ListPageAt("pods", "ns", six, std::nullopt, Storage::Page{});
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->items.size(), 6u);
  EXPECT_EQ(whole->remaining, 0u);
}

TEST(StorageTest, ListAtSeesThroughDeleteAndRecreate) {
  auto s = OpenMem();
  ASSERT_TRUE(PutPod(*s, "ns", "a", 1).ok());    // 1
  ASSERT_TRUE(Del(*s, "pods", "ns", "a").ok());  // 2
  ASSERT_TRUE(PutPod(*s, "ns", "a", 3).ok());    // 3: recreated
  ASSERT_TRUE(PutPod(*s, "ns", "b", 4).ok());    // 4
  ASSERT_TRUE(Del(*s, "pods", "ns", "b").ok());  // 5: created and deleted since 3
  auto at1 = s->ListAt("pods", "ns", 1, std::nullopt);
  ASSERT_TRUE(at1.ok());
  ASSERT_THAT(Keys(at1->items), ElementsAre("ns/a"));
  EXPECT_EQ(at1->items[0].revision, 1u);
  EXPECT_EQ(at1->items[0].Parse()["spec"]["value"], 1);
  auto at2 = s->ListAt("pods", "ns", 2, std::nullopt);
  ASSERT_TRUE(at2.ok());
  EXPECT_THAT(Keys(at2->items), ElementsAre());
  auto at3 = s->ListAt("pods", "ns", 3, std::nullopt);
  ASSERT_TRUE(at3.ok());
  ASSERT_THAT(Keys(at3->items), ElementsAre("ns/a"));
  EXPECT_EQ(at3->items[0].Parse()["spec"]["value"], 3);
}

TEST(StorageTest, ListAtMatchesASnapshotTakenThenUnderRandomWrites) {
  // A model check: snapshots taken with List() at several revisions must be reproduced exactly
  // by ListAt() after many more random creates, updates, relabels and deletes.
  auto s = OpenMem();
  std::mt19937 rng(5);
  std::vector<Storage::ListResult> snapshots;
  for (int op = 0; op < 600; ++op) {
    std::string ns = rng() % 2 ? "a" : "b";
    std::string name = "p" + std::to_string(rng() % 30);
    if (rng() % 4 == 0) {
      ASSERT_TRUE(Del(*s, "pods", ns, name).ok());
    } else {
      Json labels = {{"v", std::to_string(rng() % 3)}};
      ASSERT_TRUE(PutPod(*s, ns, name, op, labels).ok());
    }
    if (op % 50 == 0) snapshots.push_back(s->List("pods", ""));
  }
  for (const auto& snap : snapshots) {
    for (std::optional<Storage::ListFrom> after :
         {std::optional<Storage::ListFrom>(), std::optional(Storage::ListFrom{"a", "p2"}),
          std::optional(Storage::ListFrom{"b", ""})}) {
      auto at = s->ListAt("pods", "", snap.revision, after);
      ASSERT_TRUE(at.ok()) << at.status().ToString();
      std::vector<std::string> want;
      for (const auto& rec : snap.items) {
        if (after && std::pair<std::string_view, std::string_view>(rec.ns, rec.name) <=
                         std::pair(after->ns, after->name)) {
          continue;
        }
        want.push_back(rec.ns + "/" + rec.name + "@" + std::to_string(rec.revision) + " " +
                       *rec.json + " " + std::to_string(rec.labels->size()));
      }
      std::vector<std::string> got;
      for (const auto& rec : at->items) {
        got.push_back(rec.ns + "/" + rec.name + "@" + std::to_string(rec.revision) + " " +
                      *rec.json + " " + std::to_string(rec.labels->size()));
        EXPECT_EQ(GetString(rec.Parse()["metadata"], "resourceVersion"),
                  std::to_string(rec.revision));
      }
      EXPECT_EQ(got, want) << "at revision " << snap.revision;
    }
  }
}

TEST(StorageTest, ListAtFailsOnceCompactedOrInTheFuture) {
  auto s = OpenMem(/*history_limit=*/3);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(PutPod(*s, "ns", "p" + std::to_string(i)).ok());
  ASSERT_EQ(s->CompactedRevision(), 2u);
  auto old = s->ListAt("pods", "ns", 1, std::nullopt);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status(), OutOfRange("too old resource version: 1 (2)"));
  auto oldest = s->ListAt("pods", "ns", 2, std::nullopt);
  ASSERT_TRUE(oldest.ok());
  EXPECT_THAT(Keys(oldest->items), ElementsAre("ns/p0", "ns/p1"));
  auto future = s->ListAt("pods", "ns", 6, std::nullopt);
  ASSERT_FALSE(future.ok());
  EXPECT_EQ(future.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(future.status().message(), HasSubstr("revision 6"));
  s->Compact();
  EXPECT_EQ(s->ListAt("pods", "ns", 4, std::nullopt).status().code(), StatusCode::kOutOfRange);
  // At the compaction revision itself nothing needs the history.
  auto current = s->ListAt("pods", "ns", 5, std::nullopt);
  ASSERT_TRUE(current.ok());
  EXPECT_EQ(current->items.size(), 5u);
}

TEST(StorageTest, InitialSnapshotListsExistingObjectsInKeyOrder) {
  auto s = OpenMem();
  ASSERT_TRUE(PutPod(*s, "b", "x").ok());
  ASSERT_TRUE(PutPod(*s, "a", "y").ok());
  ASSERT_TRUE(PutPod(*s, "a", "x").ok());
  ASSERT_TRUE(Put(*s, "services", "a", "s", Obj("a", "s")).ok());
  ASSERT_TRUE(Del(*s, "pods", "b", "x").ok());
  auto w = s->Watch({.group_resource = "pods", .initial_snapshot = true});
  ASSERT_TRUE(w.ok());
  auto ev = (*w)->Drain();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].object.name, "x");
  EXPECT_EQ(ev[0].object.ns, "a");
  EXPECT_EQ(ev[1].object.name, "y");
  for (const auto& e : ev) {
    EXPECT_EQ(e.type, WatchEventType::kAdded);
    EXPECT_EQ(e.prev_labels, nullptr);
  }
  auto ns_b = s->Watch({.group_resource = "pods", .ns = "b", .initial_snapshot = true});
  ASSERT_TRUE(ns_b.ok());
  EXPECT_TRUE((*ns_b)->Drain().empty());
  ASSERT_TRUE(PutPod(*s, "b", "z").ok());
  auto live = DrainN(**ns_b, 1);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].object.revision, 6u);
}

// A watch started while another thread writes must see every object's final state, each object's
// revisions strictly increasing, no event twice and no gap between snapshot and live events.
TEST(StorageTest, InitialSnapshotIsAtomicUnderConcurrentWriters) {
  auto s = OpenMem();
  constexpr int kKeys = 40;
  constexpr int kWrites = 4000;
  std::atomic<bool> started{false};
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < kWrites; ++i) {
      std::string name = "k" + std::to_string(i % kKeys);
      if (i % 7 == 3) {
        ASSERT_TRUE(Del(*s, "pods", "ns", name).ok());
      } else {
        ASSERT_TRUE(PutPod(*s, "ns", name, i).ok());
      }
      if (i == 100) started = true;
    }
    done = true;
  });
  while (!started) std::this_thread::yield();
  std::vector<std::unique_ptr<Watcher>> watchers;
  for (int i = 0; i < 8; ++i) {
    // Spread the watches over the write stream (without sleeping).
    while (!done && s->CurrentRevision() < static_cast<uint64_t>(100 + i * 300)) {
      std::this_thread::yield();
    }
    auto w = s->Watch({.group_resource = "pods", .initial_snapshot = true});
    ASSERT_TRUE(w.ok());
    watchers.push_back(std::move(w).value());
    std::this_thread::yield();
  }
  writer.join();
  const uint64_t final_rev = s->CurrentRevision();
  auto final_list = s->List("pods", "");

  for (auto& w : watchers) {
    std::map<std::string, std::string> state;  // name -> json
    std::map<std::string, uint64_t> last_rev;  // name -> last revision seen
    std::vector<WatchEvent> all = w->Drain();
    for (const auto& e : all) {
      const std::string& name = e.object.name;
      // Per object: strictly increasing revisions, hence no duplicates.
      ASSERT_GT(e.object.revision, last_rev[name]) << name;
      last_rev[name] = e.object.revision;
      if (e.type == WatchEventType::kDeleted) {
        ASSERT_EQ(state.count(name), 1u) << "delete of unknown " << name;
        state.erase(name);
      } else if (e.type == WatchEventType::kAdded) {
        ASSERT_EQ(state.count(name), 0u) << "add of known " << name;
        state[name] = *e.object.json;
      } else {
        ASSERT_EQ(state.count(name), 1u) << "modify of unknown " << name;
        state[name] = *e.object.json;
      }
    }
    // The snapshot is the leading run of ADDED events with distinct names (it may swallow a live
    // ADDED or two, which is harmless for the checks below).
    size_t i = 0;
    std::set<std::string> snap_names;
    uint64_t prev = 0;
    while (i < all.size() && all[i].type == WatchEventType::kAdded &&
           snap_names.insert(all[i].object.name).second) {
      prev = std::max(prev, all[i].object.revision);
      ++i;
    }
    // Every write here is a pods event, so live events must be newer than the snapshot and then
    // gap-free up to the final revision.
    if (i == all.size()) prev = final_rev;
    if (i < all.size()) {
      ASSERT_GT(all[i].object.revision, prev);
      prev = all[i].object.revision;
      for (++i; i < all.size(); ++i) {
        ASSERT_EQ(all[i].object.revision, prev + 1);
        prev = all[i].object.revision;
      }
    }
    // (Without live events, the last writes may have been deletes the snapshot cannot show.)
    EXPECT_EQ(prev, final_rev) << "live events: " << (all.size() - snap_names.size());
    std::map<std::string, std::string> expected;
    for (const auto& item : final_list.items) expected[item.name] = *item.json;
    EXPECT_EQ(state, expected);
  }
}

TEST(StorageTest, WaitNotifyAndClose) {
  auto s = OpenMem();
  auto w = s->Watch({});
  ASSERT_TRUE(w.ok());
  Watcher& watcher = **w;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(watcher.Wait(30ms));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 30ms);

  std::atomic<int> notified{0};
  watcher.SetNotify([&] { ++notified; });
  EXPECT_EQ(notified, 0);  // nothing queued yet
  ASSERT_TRUE(PutPod(*s, "ns", "a").ok());
  EXPECT_EQ(notified, 1);  // called synchronously by the writer
  ASSERT_TRUE(PutPod(*s, "ns", "b").ok());
  EXPECT_EQ(notified, 1);  // queue was already non-empty
  EXPECT_TRUE(watcher.Wait(0ms));
  EXPECT_EQ(watcher.Drain().size(), 2u);
  ASSERT_TRUE(PutPod(*s, "ns", "c").ok());
  EXPECT_EQ(notified, 2);

  // A callback set while events are pending fires at once.
  std::atomic<int> late{0};
  watcher.SetNotify([&] { ++late; });
  EXPECT_EQ(late, 1);
  EXPECT_EQ(watcher.Drain().size(), 1u);

  // Wait wakes when another thread writes.
  std::thread writer([&] { ASSERT_TRUE(PutPod(*s, "ns", "d").ok()); });
  EXPECT_TRUE(watcher.Wait(5s));
  writer.join();
  EXPECT_EQ(watcher.Drain().size(), 1u);

  // Close: Wait returns at once, nothing more is queued or notified.
  std::thread closer([&] { watcher.Close(); });
  EXPECT_FALSE(watcher.Wait(10s));
  closer.join();
  int before = late;
  ASSERT_TRUE(PutPod(*s, "ns", "e").ok());
  EXPECT_TRUE(watcher.Drain().empty());
  EXPECT_EQ(late, before);
}

TEST(StorageTest, CloseWaitsForARunningCallback) {
  auto s = OpenMem();
  auto w = s->Watch({});
  ASSERT_TRUE(w.ok());
  Mutex mu;
  CondVar cv;
  bool entered = false, release = false, finished = false;  // guarded by mu
  (*w)->SetNotify([&] {
    MutexLock lock(mu);
    entered = true;
    cv.NotifyAll();
    cv.WaitFor(mu, 10s, [&] { return release; });
    finished = true;
  });
  std::thread writer([&] { ASSERT_TRUE(PutPod(*s, "ns", "a").ok()); });
  {
    MutexLock lock(mu);
    ASSERT_TRUE(cv.WaitFor(mu, 10s, [&] { return entered; }));
  }
  std::atomic<bool> closing{false};
  bool finished_when_closed = false;
  std::thread closer([&] {
    closing = true;
    (*w)->Close();
    MutexLock lock(mu);
    finished_when_closed = finished;
  });
  while (!closing) std::this_thread::yield();
  for (int i = 0; i < 100; ++i) std::this_thread::yield();  // let Close() start (not required)
  {
    MutexLock lock(mu);
    release = true;
    cv.NotifyAll();
  }
  closer.join();
  writer.join();
  EXPECT_TRUE(finished_when_closed);

  // A callback may close its own watcher without deadlocking.
  auto w2 = s->Watch({.from_revision = s->CurrentRevision()});
  ASSERT_TRUE(w2.ok());
  Watcher* raw = w2->get();
  std::atomic<int> calls{0};
  raw->SetNotify([&] {
    ++calls;
    raw->Close();
  });
  ASSERT_TRUE(PutPod(*s, "ns", "b").ok());
  ASSERT_TRUE(PutPod(*s, "ns", "c").ok());
  EXPECT_EQ(calls, 1);
}

TEST(StorageTest, DestroyedWatchersAreDroppedAndStorageOutlivesNothing) {
  auto s = OpenMem();
  std::atomic<int> calls{0};
  {
    auto w = s->Watch({});
    ASSERT_TRUE(w.ok());
    (*w)->SetNotify([&] { ++calls; });
  }
  ASSERT_TRUE(PutPod(*s, "ns", "a").ok());
  EXPECT_EQ(calls, 0);
  // A watcher that outlives its storage is closed, not dangling.
  auto w = s->Watch({.from_revision = 1});
  ASSERT_TRUE(w.ok());
  s.reset();
  EXPECT_FALSE((*w)->Wait(10s));
}

class PersistentStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/storage_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/cluster.db";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  StatusOr<std::unique_ptr<Storage>> OpenAt(const std::string& path) {
    Storage::Options opts;
    opts.persist_path = path;
    return Storage::Open(opts);
  }

  std::string dir_;
  std::string path_;
};

TEST_F(PersistentStorageTest, RoundTripKeepsObjectsAndRevision) {
  std::string b_json;
  {
    auto s = OpenAt(path_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE(PutPod(**s, "ns", "a", 1, {{"app", "x"}}).ok());        // 1
    ASSERT_TRUE(PutPod(**s, "ns", "b", 2).ok());                        // 2
    ASSERT_TRUE(PutPod(**s, "ns", "a", 3, {{"app", "y"}}).ok());        // 3
    ASSERT_TRUE(Put(**s, "namespaces", "", "ns", Obj("", "ns")).ok());  // 4
    ASSERT_TRUE(PutPod(**s, "other", "c").ok());                        // 5
    ASSERT_TRUE(Del(**s, "pods", "other", "c").ok());                   // 6
    b_json = *(*s)->Get("pods", "ns", "b")->json;
    EXPECT_EQ((*s)->CurrentRevision(), 6u);
  }
  auto s = OpenAt(path_);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Storage& st = **s;
  EXPECT_EQ(st.CurrentRevision(), 6u);
  EXPECT_EQ(st.CompactedRevision(), 6u);
  auto a = st.Get("pods", "ns", "a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->revision, 3u);
  EXPECT_EQ(Rv(*a), "3");
  EXPECT_EQ(a->Parse()["spec"]["value"], 3);
  EXPECT_EQ(*a->labels, (Labels{{"app", "y"}}));
  EXPECT_EQ(*st.Get("pods", "ns", "b")->json, b_json);
  EXPECT_FALSE(st.Get("pods", "other", "c").has_value());
  EXPECT_TRUE(st.Get("namespaces", "", "ns").has_value());
  EXPECT_EQ(st.Size().first, 3u);
  EXPECT_EQ(st.List("pods", "ns").items.size(), 2u);

  auto old = st.Watch({.from_revision = 2});
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().message(), "too old resource version: 2 (6)");
  auto w = st.Watch({.from_revision = 6});
  ASSERT_TRUE(w.ok());
  auto r = PutPod(st, "ns", "d");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->object->revision, 7u);
  EXPECT_THAT(Revisions(DrainN(**w, 1)), ElementsAre(7u));
  s.value().reset();  // close before reopening

  auto again = OpenAt(path_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->CurrentRevision(), 7u);
  EXPECT_EQ((*again)->Size().first, 4u);
}

TEST_F(PersistentStorageTest, DeleteOfLastObjectKeepsTheRevisionCounter) {
  {
    auto s = OpenAt(path_);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(PutPod(**s, "ns", "a").ok());
    ASSERT_TRUE(Del(**s, "pods", "ns", "a").ok());
  }
  auto s = OpenAt(path_);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->CurrentRevision(), 2u);
  EXPECT_EQ((*s)->Size().first, 0u);
}

TEST_F(PersistentStorageTest, RefusesFilesThatAreNotClusterStores) {
  // Not a database at all.
  std::string text = dir_ + "/notes.txt";
  std::ofstream(text) << "this is not a database, just some text that is long enough to matter\n"
                      << std::string(200, 'x');
  auto r1 = OpenAt(text);
  ASSERT_FALSE(r1.ok());
  EXPECT_EQ(r1.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r1.status().message(), HasSubstr(text));
  EXPECT_THAT(r1.status().message(), HasSubstr("not a Steward cluster store"));

  // Someone else's SQLite database: refused, and left untouched.
  std::string foreign = dir_ + "/foreign.db";
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(foreign.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE projects (id TEXT); INSERT INTO projects VALUES ('p')",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  auto size_before = std::filesystem::file_size(foreign);
  auto r2 = OpenAt(foreign);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r2.status().message(), HasSubstr(foreign));
  EXPECT_THAT(r2.status().message(), HasSubstr("not a Steward cluster store"));
  EXPECT_EQ(std::filesystem::file_size(foreign), size_before);
  EXPECT_FALSE(std::filesystem::exists(foreign + "-wal"));

  // A path that cannot be created.
  std::string missing = dir_ + "/no/such/dir/cluster.db";
  auto r3 = OpenAt(missing);
  ASSERT_FALSE(r3.ok());
  EXPECT_THAT(r3.status().message(), HasSubstr(missing));
}

TEST_F(PersistentStorageTest, RefusesDamagedRows) {
  {
    auto s = OpenAt(path_);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(PutPod(**s, "ns", "a").ok());
  }
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "UPDATE objects SET json = '{broken'", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  auto s = OpenAt(path_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr(path_));
  EXPECT_THAT(s.status().message(), HasSubstr("damaged"));
}

}  // namespace
}  // namespace steward::cluster
