// Informer against the scripted FakeApi: list, watch, resume, 410 relists with tombstones,
// bookmarks, backoff, handlers (order, late registration, removal, resync), Stop, indexes.
#include "kube/informer/informer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "common/mutex.h"
#include "kube/informer/fake_lister_watcher.h"
#include "test_support/eventually.h"

namespace steward::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using testing::FakeApi;
using testing::FakeListerWatcher;
using testing::MakeApiError;

using ::steward::test_support::Eventually;

std::string Rv(const ObjectRef& o) { return o->key() + "@" + o->resource_version(); }

// A gate a handler can be held at.
class Gate {
 public:
  void Close() {
    MutexLock lock(mu_);
    open_ = false;
  }
  void Open() {
    {
      MutexLock lock(mu_);
      open_ = true;
    }
    cv_.NotifyAll();
  }
  void Pass() {
    MutexLock lock(mu_);
    ++waiting_;
    cv_.NotifyAll();
    cv_.Wait(mu_, [&]() REQUIRES(mu_) { return open_; });
    --waiting_;
  }
  bool WaitForWaiter(milliseconds timeout = seconds(10)) {
    MutexLock lock(mu_);
    return cv_.WaitFor(mu_, timeout, [&]() REQUIRES(mu_) { return waiting_ > 0; });
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool open_ GUARDED_BY(mu_) = true;
  int waiting_ GUARDED_BY(mu_) = 0;
};

// Records every handler call as text: "add n/a@101", "update n/a@101>102", "delete n/a@103",
// "tombstone n/a@101", "resync n/a@101".
class Recorder {
 public:
  explicit Recorder(Gate* gate = nullptr) : gate_(gate) {}

  InformerHandlers Handlers() {
    InformerHandlers h;
    h.on_add = [this](const ObjectRef& o) { Record("add " + Rv(o)); };
    h.on_update = [this](const ObjectRef& old_object, const ObjectRef& new_object) {
      if (old_object == new_object) {
        Record("resync " + Rv(new_object));
      } else {
        Record("update " + Rv(old_object) + ">" + new_object->resource_version());
      }
    };
    h.on_delete = [this](const ObjectRef& o, bool unknown) {
      Record((unknown ? "tombstone " : "delete ") + Rv(o));
    };
    return h;
  }
  std::vector<std::string> log() const {
    MutexLock lock(mu_);
    return log_;
  }
  size_t size() const {
    MutexLock lock(mu_);
    return log_.size();
  }
  bool WaitForSize(size_t n) {
    return Eventually([&] { return size() >= n; });
  }
  std::vector<std::string> Since(size_t from) const {
    auto all = log();
    return std::vector<std::string>(all.begin() + std::min(from, all.size()), all.end());
  }

 private:
  void Record(std::string entry) {
    {
      MutexLock lock(mu_);
      log_.push_back(std::move(entry));
    }
    if (gate_) gate_->Pass();
  }

  Gate* gate_;
  mutable Mutex mu_;
  std::vector<std::string> log_ GUARDED_BY(mu_);
};

std::vector<std::string> Keys(const std::vector<ObjectRef>& objects) {
  std::vector<std::string> out;
  for (const auto& o : objects) out.push_back(o->key());
  return out;
}

std::map<std::string, std::string> CacheState(const Informer& informer) {
  std::map<std::string, std::string> out;
  for (const auto& o : informer.List()) out[o->key()] = o->resource_version();
  return out;
}

class InformerTest : public ::testing::Test {
 protected:
  static InformerOptions Options() {
    InformerOptions o;
    o.name = "test";
    o.backoff_initial = milliseconds(1);
    o.backoff_max = milliseconds(8);
    o.seed = 1;
    o.watch_timeout_seconds = 60;
    o.label_indexes = {"team"};
    return o;
  }
  std::unique_ptr<Informer> Make(InformerOptions options = Options()) {
    return std::make_unique<Informer>(std::make_unique<FakeListerWatcher>(api_), options);
  }
  // Starts `informer` with `recorder` registered and waits for the first sync.
  void StartSynced(Informer& informer, Recorder& recorder) {
    informer.AddHandlers(recorder.Handlers());
    informer.Start();
    ASSERT_TRUE(informer.WaitForSync(seconds(10)));
  }
  // Waits until the informer has an open watch (the n-th request in all).
  bool WaitForWatches(size_t n) {
    return Eventually([&] { return api_->watches().size() >= n && api_->active_watches() > 0; });
  }

  std::shared_ptr<FakeApi> api_ = std::make_shared<FakeApi>();
};

TEST_F(InformerTest, InitialListIsPaginatedAndEveryObjectIsAddedBeforeSync) {
  std::vector<std::string> expected;
  for (const char* name : {"e", "a", "d", "b", "c"}) {
    std::string rv = api_->Create("ns", name);
    expected.push_back(std::string("add ns/") + name + "@" + rv);
  }
  std::sort(expected.begin(), expected.end());  // delivered in key order
  std::string list_rv = api_->revision();
  auto options = Options();
  options.page_size = 2;
  auto informer = Make(options);
  Recorder recorder;
  EXPECT_FALSE(informer->HasSynced());
  StartSynced(*informer, recorder);
  EXPECT_TRUE(informer->HasSynced());
  EXPECT_THAT(recorder.log(), ElementsAreArray(expected));  // all dispatched at sync
  auto lists = api_->lists();
  ASSERT_EQ(lists.size(), 3u);
  EXPECT_EQ(lists[0].limit, 2);
  EXPECT_EQ(lists[0].continue_token, "");
  EXPECT_EQ(lists[0].resource_version, "");  // a consistent read
  EXPECT_NE(lists[1].continue_token, "");
  EXPECT_NE(lists[2].continue_token, lists[1].continue_token);
  ASSERT_TRUE(WaitForWatches(1));
  auto watch = api_->watches()[0];
  EXPECT_EQ(watch.resource_version, list_rv);
  EXPECT_TRUE(watch.allow_bookmarks);
  EXPECT_GE(watch.timeout_seconds, 60);
  EXPECT_LT(watch.timeout_seconds, 120);
  EXPECT_NE(watch.cancel, nullptr);
  EXPECT_EQ(informer->size(), 5u);
  EXPECT_EQ(informer->Get("ns", "c")->name(), "c");
  EXPECT_EQ(informer->Get("ns", "zz"), nullptr);
  auto stats = informer->stats();
  EXPECT_EQ(stats.lists, 1u);
  EXPECT_EQ(stats.objects, 5u);
  EXPECT_EQ(stats.resource_version, list_rv);
}

TEST_F(InformerTest, SyncWaitsForTheInitialAddsToBeDispatched) {
  api_->Create("ns", "a");
  Gate gate;
  gate.Close();
  Recorder recorder(&gate);
  auto informer = Make();
  informer->AddHandlers(recorder.Handlers());
  informer->Start();
  ASSERT_TRUE(gate.WaitForWaiter());  // the add of ns/a is being handled
  EXPECT_EQ(informer->size(), 1u);    // already cached
  EXPECT_FALSE(informer->WaitForSync(milliseconds(30)));
  EXPECT_FALSE(informer->HasSynced());
  gate.Open();
  EXPECT_TRUE(informer->WaitForSync(seconds(10)));
}

TEST_F(InformerTest, ContinueTokenExpiryRestartsTheList) {
  for (int i = 0; i < 4; ++i) api_->Create("ns", "o" + std::to_string(i));
  api_->ExpireNextContinue();
  auto options = Options();
  options.page_size = 2;
  auto informer = Make(options);
  Recorder recorder;
  StartSynced(*informer, recorder);
  auto lists = api_->lists();
  ASSERT_EQ(lists.size(), 4u);  // page 1, page 2 (410), page 1 again, page 2
  EXPECT_EQ(lists[2].continue_token, "");
  EXPECT_EQ(informer->size(), 4u);
  EXPECT_EQ(recorder.size(), 4u);  // no duplicate adds from the restarted list
  EXPECT_EQ(informer->stats().lists, 1u);
}

TEST_F(InformerTest, WatchEventsReachTheCacheAndHandlersInOrder) {
  auto informer = Make();
  Recorder recorder;
  StartSynced(*informer, recorder);
  std::string a1 = api_->Create("ns", "a", {{"team", "x"}});
  std::string a2 = api_->Update("ns", "a", {{"team", "y"}}, "2");
  std::string b1 = api_->Create("ns", "b");
  std::string a3 = api_->Delete("ns", "a");
  std::string b2 = api_->Update("ns", "b", {}, "3");
  ASSERT_TRUE(recorder.WaitForSize(5));
  EXPECT_THAT(recorder.log(),
              ElementsAre("add ns/a@" + a1, "update ns/a@" + a1 + ">" + a2, "add ns/b@" + b1,
                          "delete ns/a@" + a3, "update ns/b@" + b1 + ">" + b2));
  EXPECT_EQ(CacheState(*informer), api_->Truth());
  auto stats = informer->stats();
  EXPECT_EQ(stats.events, 5u);
  EXPECT_EQ(stats.resource_version, b2);
  EXPECT_EQ(stats.lists, 1u);
}

// A transform shapes what the cache keeps and the handlers get, for listed, watched and deleted
// objects alike.
TEST_F(InformerTest, TheTransformShapesEveryObjectBeforeItIsCached) {
  api_->Create("ns", "listed", {}, "big");
  auto options = Options();
  options.transform = [](Json& o) {
    o.erase("data");
    o["metadata"]["annotations"]["shaped"] = "yes";
  };
  auto informer = Make(options);
  Mutex mu;
  std::vector<std::string> seen;
  InformerHandlers h;
  auto record = [&](const ObjectRef& o) {
    Json j = o->Parse();
    MutexLock lock(mu);
    seen.push_back(o->name() + (j.contains("data") ? " data" : "") +
                   (j["metadata"]["annotations"].value("shaped", "") == "yes" ? " shaped" : ""));
  };
  h.on_add = record;
  h.on_update = [&](const ObjectRef&, const ObjectRef& o) { record(o); };
  h.on_delete = [&](const ObjectRef& o, bool) { record(o); };
  informer->AddHandlers(h);
  informer->Start();
  ASSERT_TRUE(informer->WaitForSync(seconds(10)));
  api_->Create("ns", "watched", {{"team", "x"}}, "big");
  api_->Update("ns", "watched", {{"team", "y"}}, "bigger");
  api_->Delete("ns", "listed");
  ASSERT_TRUE(Eventually([&] {
    MutexLock lock(mu);
    return seen.size() >= 4;
  }));
  {
    MutexLock lock(mu);
    EXPECT_THAT(seen,
                ElementsAre("listed shaped", "watched shaped", "watched shaped", "listed shaped"));
  }
  ObjectRef cached = informer->Get("ns", "watched");
  ASSERT_NE(cached, nullptr);
  EXPECT_FALSE(cached->Parse().contains("data"));
  EXPECT_EQ(cached->label("team"), "y");  // labels (and the index) come through
  EXPECT_EQ(Keys(informer->ByLabel("team", "y")), std::vector<std::string>{"ns/watched"});
}

TEST_F(InformerTest, CacheIsUpdatedBeforeTheHandlerRuns) {
  auto informer = Make();
  Mutex mu;
  std::vector<std::string> seen;  // what Get() returned inside each handler
  InformerHandlers h;
  auto look = [&](const ObjectRef& o) {
    ObjectRef cached = informer->Get(o->ns(), o->name());
    MutexLock lock(mu);
    seen.push_back(cached ? cached->resource_version() : "absent");
  };
  h.on_add = look;
  h.on_update = [&](const ObjectRef&, const ObjectRef& o) { look(o); };
  h.on_delete = [&](const ObjectRef& o, bool) { look(o); };
  informer->AddHandlers(h);
  informer->Start();
  ASSERT_TRUE(informer->WaitForSync(seconds(10)));
  auto count = [&] {
    MutexLock lock(mu);
    return seen.size();
  };
  std::string rv1 = api_->Create("ns", "a");
  ASSERT_TRUE(Eventually([&] { return count() == 1; }));
  std::string rv2 = api_->Update("ns", "a", {}, "x");
  ASSERT_TRUE(Eventually([&] { return count() == 2; }));
  api_->Delete("ns", "a");
  ASSERT_TRUE(Eventually([&] { return count() == 3; }));
  MutexLock lock(mu);
  EXPECT_THAT(seen, ElementsAre(rv1, rv2, "absent"));
}

TEST_F(InformerTest, SlowHandlerDoesNotStallTheWatch) {
  Gate gate;
  Recorder recorder(&gate);
  auto informer = Make();
  StartSynced(*informer, recorder);
  gate.Close();
  std::vector<std::string> expected;
  for (int i = 0; i < 50; ++i) {
    std::string name = "o" + std::to_string(100 + i);
    expected.push_back("add ns/" + name + "@" + api_->Create("ns", name));
  }
  ASSERT_TRUE(gate.WaitForWaiter());  // the first add is blocked in the handler
  EXPECT_TRUE(Eventually([&] { return informer->size() == 50; }));
  EXPECT_EQ(recorder.size(), 1u);
  gate.Open();
  ASSERT_TRUE(recorder.WaitForSize(50));
  EXPECT_EQ(recorder.log(), expected);
}

TEST_F(InformerTest, CutWatchResumesFromTheLastResourceVersion) {
  api_->Create("ns", "a");
  auto informer = Make();
  Recorder recorder;
  StartSynced(*informer, recorder);
  ASSERT_TRUE(WaitForWatches(1));
  api_->Create("ns", "b");
  std::string last = api_->Update("ns", "b", {}, "2");
  ASSERT_TRUE(recorder.WaitForSize(3));
  api_->CutWatches();
  ASSERT_TRUE(WaitForWatches(2));
  EXPECT_EQ(api_->watches()[1].resource_version, last);
  std::string c = api_->Create("ns", "c");
  ASSERT_TRUE(recorder.WaitForSize(4));
  EXPECT_EQ(recorder.log().back(), "add ns/c@" + c);
  EXPECT_EQ(recorder.size(), 4u);  // nothing replayed twice
  auto stats = informer->stats();
  EXPECT_EQ(stats.lists, 1u);
  EXPECT_EQ(stats.watches, 2u);
  EXPECT_EQ(stats.watch_errors, 0u);  // a clean close is not an error
}

TEST_F(InformerTest, WatchesCutAfterEveryEventLoseNothing) {
  api_->set_cut_after_events(1);
  auto informer = Make();
  Recorder recorder;
  StartSynced(*informer, recorder);
  std::vector<std::string> expected;
  for (int i = 0; i < 20; ++i) {
    std::string name = "o" + std::to_string(10 + i);
    std::string rv1 = api_->Create("ns", name);
    std::string rv2 = api_->Update("ns", name, {}, "u");
    expected.push_back("add ns/" + name + "@" + rv1);
    expected.push_back("update ns/" + name + "@" + rv1 + ">" + rv2);
  }
  ASSERT_TRUE(recorder.WaitForSize(40));
  EXPECT_EQ(recorder.log(), expected);
  EXPECT_EQ(informer->stats().lists, 1u);
  EXPECT_GE(informer->stats().watches, 40u);
}

// Changes made while the informer is not watching, then the history is compacted.
struct Missed {
  std::string b_old, c_old, c_new, d;
};

Missed MissChanges(FakeApi& api, const std::string& b_old, const std::string& c_old) {
  Missed m;
  m.b_old = b_old;
  m.c_old = c_old;
  api.Delete("ns", "b");
  m.c_new = api.Update("ns", "c", {{"team", "y"}}, "changed");
  m.d = api.Create("ns", "d", {{"team", "x"}});
  api.Compact();
  return m;
}

TEST_F(InformerTest, GoneErrorEventRelistsWithTombstonesUpdatesAndAdds) {
  api_->Create("ns", "a", {{"team", "x"}});
  std::string b = api_->Create("ns", "b", {{"team", "x"}});
  std::string c = api_->Create("ns", "c", {{"team", "x"}});
  auto informer = Make();
  Recorder recorder;
  StartSynced(*informer, recorder);
  ASSERT_TRUE(WaitForWatches(1));
  api_->set_gone_at_open(false);
  api_->HoldWatches(true);
  Missed m = MissChanges(*api_, b, c);
  api_->HoldWatches(false);  // the live watch finds its history compacted: ERROR 410
  ASSERT_TRUE(recorder.WaitForSize(6));
  EXPECT_THAT(
      recorder.Since(3),
      ElementsAre("tombstone ns/b@" + b, "update ns/c@" + c + ">" + m.c_new, "add ns/d@" + m.d));
  EXPECT_EQ(CacheState(*informer), api_->Truth());
  EXPECT_THAT(Keys(informer->ByLabel("team", "x")), ElementsAre("ns/a", "ns/d"));
  EXPECT_THAT(Keys(informer->ByLabel("team", "y")), ElementsAre("ns/c"));
  auto stats = informer->stats();
  EXPECT_EQ(stats.lists, 2u);
  EXPECT_EQ(stats.relists_gone, 1u);
  EXPECT_EQ(stats.tombstones, 1u);
  EXPECT_EQ(api_->lists()[1].resource_version, "");  // relist is a consistent read
  ASSERT_TRUE(WaitForWatches(2));
  EXPECT_EQ(api_->watches().back().resource_version, m.d);  // watch from the relist
}

TEST_F(InformerTest, GoneAtWatchOpenRelists) {
  std::string b = api_->Create("ns", "b");
  std::string c = api_->Create("ns", "c");
  auto informer = Make();
  Recorder recorder;
  StartSynced(*informer, recorder);
  ASSERT_TRUE(WaitForWatches(1));
  std::string synced_rv = api_->revision();
  api_->HoldWatches(true);
  Missed m = MissChanges(*api_, b, c);
  api_->CutWatches();  // the informer reopens from synced_rv: 410 at open
  ASSERT_TRUE(recorder.WaitForSize(5));
  EXPECT_THAT(
      recorder.Since(2),
      ElementsAre("tombstone ns/b@" + b, "update ns/c@" + c + ">" + m.c_new, "add ns/d@" + m.d));
  EXPECT_EQ(api_->watches()[1].resource_version, synced_rv);
  EXPECT_EQ(informer->stats().relists_gone, 1u);
  api_->HoldWatches(false);
  std::string e = api_->Create("ns", "e");
  ASSERT_TRUE(recorder.WaitForSize(6));
  EXPECT_EQ(recorder.log().back(), "add ns/e@" + e);
  EXPECT_EQ(CacheState(*informer), api_->Truth());
}

TEST_F(InformerTest, BookmarksOnlyAdvanceTheResourceVersion) {
  api_->Create("ns", "a");
  auto informer = Make();
  Recorder recorder;
  StartSynced(*informer, recorder);
  ASSERT_TRUE(WaitForWatches(1));
  api_->AdvanceRevision(50);
  std::string bookmark = api_->Bookmark();
  ASSERT_TRUE(Eventually([&] { return informer->stats().resource_version == bookmark; }));
  EXPECT_EQ(recorder.size(), 1u);
  EXPECT_EQ(informer->stats().events, 0u);
  api_->CutWatches();
  ASSERT_TRUE(WaitForWatches(2));
  EXPECT_EQ(api_->watches()[1].resource_version, bookmark);
}

TEST_F(InformerTest, AddedForACachedObjectIsAnUpdateAndDeletedForAnUnknownOneIsIgnored) {
  std::string a = api_->Create("ns", "a");
  auto informer = Make();
  Recorder recorder;
  StartSynced(*informer, recorder);
  ASSERT_TRUE(WaitForWatches(1));
  Json again = api_->Object("ns", "a");
  std::string a2 = api_->RawEvent(WatchEvent::Type::kAdded, again);
  Json ghost = again;
  ghost["metadata"]["name"] = "ghost";
  std::string ghost_rv = api_->RawEvent(WatchEvent::Type::kDeleted, ghost);
  ASSERT_TRUE(Eventually([&] { return informer->stats().resource_version == ghost_rv; }));
  ASSERT_TRUE(recorder.WaitForSize(2));
  EXPECT_THAT(recorder.log(), ElementsAre("add ns/a@" + a, "update ns/a@" + a + ">" + a2));
  api_->CutWatches();
  ASSERT_TRUE(WaitForWatches(2));
  EXPECT_EQ(api_->watches()[1].resource_version, ghost_rv);
}

TEST_F(InformerTest, AReplayedEventWithTheCachedResourceVersionChangesNothing) {
  std::string a = api_->Create("ns", "a");
  auto informer = Make();
  Recorder recorder;
  StartSynced(*informer, recorder);
  ASSERT_TRUE(WaitForWatches(1));
  ObjectRef before = informer->Get("ns", "a");
  Json same = api_->Object("ns", "a");
  same["data"]["v"] = "not what the cache holds";
  api_->RawEvent(WatchEvent::Type::kModified, same, /*stamp=*/false);
  std::string b = api_->Create("ns", "b");
  ASSERT_TRUE(recorder.WaitForSize(2));
  EXPECT_THAT(recorder.log(), ElementsAre("add ns/a@" + a, "add ns/b@" + b));
  EXPECT_EQ(informer->Get("ns", "a"), before);
  EXPECT_EQ(informer->stats().events, 1u);
}

TEST_F(InformerTest, MalformedObjectsAreSkippedAndTheWatchGoesOn) {
  auto informer = Make();
  Recorder recorder;
  StartSynced(*informer, recorder);
  ASSERT_TRUE(WaitForWatches(1));
  api_->RawEvent(WatchEvent::Type::kAdded, Json{{"metadata", {{"name", 5}}}});
  api_->RawEvent(WatchEvent::Type::kModified, Json::array(), /*stamp=*/false);
  std::string ok = api_->Create("ns", "fine");
  ASSERT_TRUE(recorder.WaitForSize(1));
  EXPECT_THAT(recorder.log(), ElementsAre("add ns/fine@" + ok));
  EXPECT_EQ(informer->size(), 1u);
  EXPECT_EQ(informer->stats().lists, 1u);
}

TEST_F(InformerTest, ListErrorsAreRetriedWithBackoff) {
  api_->Create("ns", "a");
  api_->FailNextLists(3, MakeApiError(500, "InternalError", "etcd is down"));
  auto informer = Make();
  Recorder recorder;
  StartSynced(*informer, recorder);
  EXPECT_EQ(api_->lists().size(), 4u);
  EXPECT_EQ(informer->stats().lists, 1u);
  EXPECT_EQ(recorder.size(), 1u);
}

TEST_F(InformerTest, WatchErrorsAreRetriedFromTheSameResourceVersion) {
  auto informer = Make();
  Recorder recorder;
  StartSynced(*informer, recorder);
  ASSERT_TRUE(WaitForWatches(1));
  std::string a = api_->Create("ns", "a");
  ASSERT_TRUE(recorder.WaitForSize(1));
  api_->FailNextWatches(3, MakeApiError(503, "ServiceUnavailable", "overloaded"));
  api_->CutWatches();
  ASSERT_TRUE(WaitForWatches(5));
  auto watches = api_->watches();
  for (size_t i = 1; i < watches.size(); ++i) EXPECT_EQ(watches[i].resource_version, a);
  auto stats = informer->stats();
  EXPECT_EQ(stats.watch_errors, 3u);
  EXPECT_EQ(stats.lists, 1u);
}

TEST_F(InformerTest, NonGoneErrorEventRewatchesWithoutARelist) {
  auto informer = Make();
  Recorder recorder;
  StartSynced(*informer, recorder);
  ASSERT_TRUE(WaitForWatches(1));
  std::string a = api_->Create("ns", "a");
  ASSERT_TRUE(recorder.WaitForSize(1));
  api_->InjectErrorEvent(testing::StatusJson(500, "InternalError", "watch chan error"));
  ASSERT_TRUE(WaitForWatches(2));
  EXPECT_EQ(api_->watches()[1].resource_version, a);
  auto stats = informer->stats();
  EXPECT_EQ(stats.watch_errors, 1u);
  EXPECT_EQ(stats.relists_gone, 0u);
  EXPECT_EQ(stats.lists, 1u);
}

// A FakeClock that counts reads, so a test can tell that the informer has computed a deadline.
class CountingClock final : public Clock {
 public:
  SteadyTime Now() const override {
    ++reads_;
    return clock_.Now();
  }
  SystemTime WallNow() const override { return clock_.WallNow(); }
  void Advance(std::chrono::nanoseconds d) { clock_.Advance(d); }
  uint64_t reads() const { return reads_.load(); }

 private:
  FakeClock clock_;
  mutable std::atomic<uint64_t> reads_{0};
};

TEST_F(InformerTest, ReconnectDelaysDoubleUpToTheCap) {
  CountingClock clock;
  auto options = Options();
  options.clock = &clock;
  options.backoff_initial = milliseconds(100);
  options.backoff_max = milliseconds(400);
  api_->FailNextLists(4, MakeApiError(500, "InternalError", "down"));
  auto informer = Make(options);
  informer->Start();
  auto lists = [&] { return api_->lists().size(); };
  // Delays with ±25% jitter: 100, 200, 400, 400 (capped): advancing just short of the lower
  // bound lets no retry out; advancing past the upper bound does.
  const int expected_ms[] = {100, 200, 400, 400};
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(Eventually([&] { return lists() == static_cast<size_t>(i + 1); }));
    // The failed list is followed by a sleep whose deadline is read from the clock (only the
    // reflector reads it here): once the clock is read after the list, the deadline is set.
    uint64_t reads = clock.reads();
    ASSERT_TRUE(Eventually([&] { return clock.reads() > reads; }));
    int d = expected_ms[i];
    clock.Advance(milliseconds(d * 3 / 4 - 5));
    std::this_thread::sleep_for(milliseconds(30));
    EXPECT_EQ(lists(), static_cast<size_t>(i + 1)) << "retry " << i << " came too early";
    clock.Advance(milliseconds(d / 2 + 10));
    EXPECT_TRUE(Eventually([&] { return lists() == static_cast<size_t>(i + 2); }))
        << "retry " << i << " did not come after " << d * 5 / 4 << " ms";
  }
  EXPECT_TRUE(informer->WaitForSync(seconds(10)));
}

TEST_F(InformerTest, LateHandlersGetTheCacheAsAddsBeforeLaterEvents) {
  std::string a = api_->Create("ns", "a");
  std::string b = api_->Create("ns", "b");
  Gate gate;
  Recorder first(&gate);
  auto informer = Make();
  StartSynced(*informer, first);
  ASSERT_TRUE(WaitForWatches(1));
  gate.Close();
  std::string a2 = api_->Update("ns", "a", {}, "2");
  ASSERT_TRUE(gate.WaitForWaiter());  // `first` is held in the update of ns/a
  ASSERT_EQ(informer->Get("ns", "a")->resource_version(), a2);
  Recorder late;
  informer->AddHandlers(late.Handlers());
  std::string b2 = api_->Update("ns", "b", {}, "2");
  ASSERT_TRUE(Eventually([&] { return informer->Get("ns", "b")->resource_version() == b2; }));
  gate.Open();
  ASSERT_TRUE(late.WaitForSize(3));
  ASSERT_TRUE(first.WaitForSize(4));
  EXPECT_THAT(late.log(),
              ElementsAre("add ns/a@" + a2, "add ns/b@" + b, "update ns/b@" + b + ">" + b2));
  EXPECT_THAT(first.Since(2),
              ElementsAre("update ns/a@" + a + ">" + a2, "update ns/b@" + b + ">" + b2));
}

TEST_F(InformerTest, RemovedHandlersAreNotCalledAgain) {
  auto informer = Make();
  Recorder kept, removed;
  informer->AddHandlers(kept.Handlers());
  int id = informer->AddHandlers(removed.Handlers());
  informer->Start();
  ASSERT_TRUE(informer->WaitForSync(seconds(10)));
  api_->Create("ns", "a");
  ASSERT_TRUE(removed.WaitForSize(1));
  informer->RemoveHandlers(id);
  api_->Create("ns", "b");
  ASSERT_TRUE(kept.WaitForSize(2));
  EXPECT_EQ(removed.size(), 1u);
}

TEST_F(InformerTest, ResyncReplaysTheCacheAsUpdatesOfTheSameObject) {
  std::string a = api_->Create("ns", "a");
  std::string b = api_->Create("ns", "b");
  auto options = Options();
  options.resync = milliseconds(20);
  auto informer = Make(options);
  Recorder recorder;
  StartSynced(*informer, recorder);
  ASSERT_TRUE(recorder.WaitForSize(6));  // 2 adds + at least 2 rounds of 2 resyncs
  auto log = recorder.log();
  EXPECT_THAT(std::vector<std::string>(log.begin(), log.begin() + 6),
              ElementsAre("add ns/a@" + a, "add ns/b@" + b, "resync ns/a@" + a, "resync ns/b@" + b,
                          "resync ns/a@" + a, "resync ns/b@" + b));
  EXPECT_EQ(api_->lists().size(), 1u);  // resync is local
}

TEST_F(InformerTest, StopWaitsForARunningHandlerAndNothingRunsAfterIt) {
  Gate gate;
  Recorder recorder(&gate);
  auto informer = Make();
  StartSynced(*informer, recorder);
  ASSERT_TRUE(WaitForWatches(1));
  gate.Close();
  for (int i = 0; i < 10; ++i) api_->Create("ns", "o" + std::to_string(i));
  ASSERT_TRUE(gate.WaitForWaiter());
  ASSERT_TRUE(Eventually([&] { return informer->size() == 10; }));
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    informer->Stop();
    stopped = true;
  });
  std::this_thread::sleep_for(milliseconds(30));
  EXPECT_FALSE(stopped.load());  // the handler is still running
  gate.Open();
  stopper.join();
  size_t calls = recorder.size();
  EXPECT_EQ(calls, 1u);  // queued notifications were dropped
  EXPECT_EQ(api_->active_watches(), 0);
  api_->Create("ns", "late");
  std::this_thread::sleep_for(milliseconds(30));
  EXPECT_EQ(recorder.size(), calls);
  informer->Start();  // a stopped informer stays stopped
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(api_->watches().size(), 1u);
}

TEST_F(InformerTest, StopFromAHandlerEndsDeliveryAfterIt) {
  for (int i = 0; i < 5; ++i) api_->Create("ns", "o" + std::to_string(i));
  auto informer = Make();
  std::atomic<int> calls{0};
  InformerHandlers h;
  h.on_add = [&](const ObjectRef&) {
    ++calls;
    informer->Stop();  // must not deadlock on its own thread
  };
  informer->AddHandlers(h);
  informer->Start();
  ASSERT_TRUE(Eventually([&] { return calls.load() >= 1; }));
  informer->Stop();  // from another thread: joins
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(api_->active_watches(), 0);
  informer.reset();
  EXPECT_EQ(calls.load(), 1);
}

TEST_F(InformerTest, StopBeforeSyncEndsWaitForSync) {
  api_->FailNextLists(1000, MakeApiError(500, "InternalError", "down"));
  auto informer = Make();
  informer->Start();
  std::thread stopper([&] {
    Eventually([&] { return api_->lists().size() >= 2; });
    informer->Stop();
  });
  EXPECT_FALSE(informer->WaitForSync(seconds(10)));
  stopper.join();
  EXPECT_FALSE(informer->HasSynced());
}

TEST_F(InformerTest, IndexesFollowLabelChangesAndDeletes) {
  api_->Create("n1", "a", {{"team", "x"}});
  api_->Create("n2", "b", {{"team", "x"}, {"tier", "web"}});
  api_->Create("n1", "c", {{"team", "y"}});
  api_->Create("", "d");
  auto informer = Make();
  Recorder recorder;
  StartSynced(*informer, recorder);
  EXPECT_THAT(Keys(informer->ByLabel("team", "x")), ElementsAre("n1/a", "n2/b"));
  EXPECT_THAT(Keys(informer->ByNamespace("n1")), ElementsAre("n1/a", "n1/c"));
  EXPECT_THAT(Keys(informer->ByNamespace("")), ElementsAre("d"));
  EXPECT_THAT(Keys(informer->ByLabel("tier", "web")), ElementsAre("n2/b"));  // scanned
  api_->Update("n1", "a", {{"team", "y"}}, "");
  api_->Update("n2", "b", {}, "");
  api_->Delete("n1", "c");
  ASSERT_TRUE(recorder.WaitForSize(7));
  EXPECT_THAT(Keys(informer->ByLabel("team", "x")), ElementsAre());
  EXPECT_THAT(Keys(informer->ByLabel("team", "y")), ElementsAre("n1/a"));
  EXPECT_THAT(Keys(informer->ByLabel("tier", "web")), ElementsAre());
  EXPECT_THAT(Keys(informer->ByNamespace("n1")), ElementsAre("n1/a"));
  EXPECT_THAT(Keys(informer->List()), ElementsAre("d", "n1/a", "n2/b"));
}

}  // namespace
}  // namespace steward::kube
