// Observer expectations over informers fed by the scripted FakeApi (kube/informer): each
// expectation corrects the cache until the cache shows the write, and expires after the timeout
// (FakeClock).
#include "engine/reconciler/observer.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/clock.h"
#include "kube/informer/fake_lister_watcher.h"
#include "test_support/eventually.h"

namespace steward::engine {
namespace {

using kube::ResourceType;
using kube::WatchEvent;
using kube::testing::FakeApi;
using kube::testing::FakeListerWatcher;
using std::chrono::milliseconds;
using test_support::Eventually;

constexpr milliseconds kTimeout{30000};
constexpr const char* kNs = "projects";

const ResourceType& kService = ResourceType::Service();
const ResourceType& kSecret = ResourceType::Secret();

Json Object(const std::string& name, const std::string& uid, const std::string& ns = kNs,
            bool terminating = false) {
  Json o = {{"apiVersion", "v1"},
            {"kind", "Service"},
            {"metadata",
             {{"name", name},
              {"namespace", ns},
              {"uid", uid},
              {"labels", {{"steward.io/project", "p1"}}}}}};
  if (terminating) {
    o["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
    o["metadata"]["finalizers"] = Json::array({"ingress.steward.io/cleanup"});
  }
  return o;
}

class ObserverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    observer_ = std::make_unique<Observer>(clock_, kTimeout, kNs);
    services_ = StartInformer(services_api_);
    secrets_ = StartInformer(secrets_api_);
    observer_->Add(kService, services_);
    observer_->Add(kSecret, secrets_);
  }
  void TearDown() override {
    services_->Stop();
    secrets_->Stop();
  }

  static std::shared_ptr<kube::Informer> StartInformer(const std::shared_ptr<FakeApi>& api) {
    kube::InformerOptions o;
    o.backoff_initial = milliseconds(10);
    o.seed = 1;
    auto informer = std::make_shared<kube::Informer>(std::make_unique<FakeListerWatcher>(api), o);
    informer->Start();
    EXPECT_TRUE(informer->WaitForSync(milliseconds(10000)));
    return informer;
  }

  // Waits until the services informer's cache holds ns/name at `rv` ("" = absent).
  bool CacheShows(const std::string& name, const std::string& rv, const std::string& ns = kNs) {
    return Eventually([&] {
      kube::ObjectRef o = services_->Get(ns, name);
      return rv.empty() ? o == nullptr : (o != nullptr && o->resource_version() == rv);
    });
  }

  std::string Put(const Json& object) {
    std::string rv = services_api_->CreateObject(object);
    EXPECT_TRUE(CacheShows(object["metadata"]["name"], rv, object["metadata"]["namespace"]));
    return rv;
  }

  FakeClock clock_;
  std::shared_ptr<FakeApi> services_api_ = std::make_shared<FakeApi>();
  std::shared_ptr<FakeApi> secrets_api_ = std::make_shared<FakeApi>();
  std::shared_ptr<kube::Informer> services_, secrets_;
  std::unique_ptr<Observer> observer_;
};

TEST_F(ObserverTest, WithoutExpectationsTheCacheIsTheView) {
  View absent = observer_->Get(kService, "a");
  EXPECT_EQ(absent.object, nullptr);
  EXPECT_FALSE(absent.stale);
  EXPECT_FALSE(absent.terminating);
  Put(Object("a", "u1"));
  View present = observer_->Get(kService, "a");
  ASSERT_NE(present.object, nullptr);
  EXPECT_EQ(present.object->uid(), "u1");
  EXPECT_FALSE(present.stale);
  EXPECT_FALSE(present.terminating);
  Put(Object("a", "u1", kNs, /*terminating=*/true));
  EXPECT_TRUE(observer_->Get(kService, "a").terminating);
  // A kind without an informer: nothing known.
  View none = observer_->Get(ResourceType::Ingress(), "a");
  EXPECT_EQ(none.object, nullptr);
  EXPECT_FALSE(none.stale);
  EXPECT_EQ(observer_->informer(ResourceType::Ingress()), nullptr);
  EXPECT_EQ(observer_->informer(kService), services_.get());
}

TEST_F(ObserverTest, ExpectExistsIsStaleUntilTheCacheShowsThatUidThenClears) {
  observer_->ExpectExists(kService, "a", "u2");
  View missing = observer_->Get(kService, "a");
  EXPECT_TRUE(missing.stale);
  EXPECT_EQ(missing.object, nullptr);
  // An older object of that name (another uid) is not the one created: still stale.
  Put(Object("a", "u1"));
  EXPECT_TRUE(observer_->Get(kService, "a").stale);
  // Stale on every read until then (reads do not consume the expectation).
  EXPECT_TRUE(observer_->Get(kService, "a").stale);
  Put(Object("a", "u2"));
  View seen = observer_->Get(kService, "a");
  EXPECT_FALSE(seen.stale);
  ASSERT_NE(seen.object, nullptr);
  EXPECT_EQ(seen.object->uid(), "u2");
  // Cleared: the object vanishing now is plain absence, not staleness.
  services_api_->Delete(kNs, "a");
  ASSERT_TRUE(CacheShows("a", ""));
  View gone = observer_->Get(kService, "a");
  EXPECT_FALSE(gone.stale);
  EXPECT_EQ(gone.object, nullptr);
}

TEST_F(ObserverTest, ExpectExistsExpiresAfterTheTimeoutAndNotBefore) {
  observer_->ExpectExists(kService, "a", "u1");
  clock_.Advance(kTimeout);
  EXPECT_TRUE(observer_->Get(kService, "a").stale) << "exactly the timeout is not past it";
  clock_.Advance(milliseconds(1));
  View expired = observer_->Get(kService, "a");
  EXPECT_FALSE(expired.stale);
  EXPECT_EQ(expired.object, nullptr);
  // Expired expectations are dropped, not revived by time going back to normal.
  EXPECT_FALSE(observer_->Get(kService, "a").stale);
}

TEST_F(ObserverTest, ExpectationsAreKeyedByKindAndName) {
  observer_->ExpectExists(kService, "a", "u1");
  EXPECT_FALSE(observer_->Get(kSecret, "a").stale);
  EXPECT_FALSE(observer_->Get(kService, "b").stale);
  EXPECT_TRUE(observer_->Get(kService, "a").stale);
  // A newer expectation for the same object replaces the older one.
  Put(Object("a", "u1"));
  observer_->ExpectGone(kService, "a", "u1");
  View v = observer_->Get(kService, "a");
  EXPECT_FALSE(v.stale);
  EXPECT_EQ(v.object, nullptr);
}

TEST_F(ObserverTest, ExpectUpdatedIsStaleWhileTheCacheShowsTheOldResourceVersion) {
  const std::string old_rv = Put(Object("a", "u1"));
  observer_->ExpectUpdated(kService, "a", old_rv);
  View v = observer_->Get(kService, "a");
  EXPECT_TRUE(v.stale);
  ASSERT_NE(v.object, nullptr);  // the old copy is still shown, flagged stale
  EXPECT_EQ(v.object->resource_version(), old_rv);
  Json updated = Object("a", "u1");
  updated["metadata"]["labels"]["x"] = "1";
  const std::string new_rv = Put(updated);
  View after = observer_->Get(kService, "a");
  EXPECT_FALSE(after.stale);
  EXPECT_EQ(after.object->resource_version(), new_rv);
  // Cleared: a later read of the same rv is not stale.
  EXPECT_FALSE(observer_->Get(kService, "a").stale);
}

TEST_F(ObserverTest, ExpectUpdatedIsMetWhenTheObjectIsGoneAndExpires) {
  const std::string rv = Put(Object("a", "u1"));
  observer_->ExpectUpdated(kService, "a", rv);
  services_api_->Delete(kNs, "a");
  ASSERT_TRUE(CacheShows("a", ""));
  EXPECT_FALSE(observer_->Get(kService, "a").stale);

  const std::string rv_b = Put(Object("b", "u2"));
  observer_->ExpectUpdated(kService, "b", rv_b);
  clock_.Advance(kTimeout + milliseconds(1));
  View v = observer_->Get(kService, "b");
  EXPECT_FALSE(v.stale);
  EXPECT_EQ(v.object->resource_version(), rv_b);
}

TEST_F(ObserverTest, ExpectGoneHidesTheCachedObjectOfThatUid) {
  Put(Object("a", "u1", kNs, /*terminating=*/true));
  observer_->ExpectGone(kService, "a", "u1");
  for (int i = 0; i < 2; ++i) {
    View v = observer_->Get(kService, "a");
    EXPECT_EQ(v.object, nullptr);
    EXPECT_FALSE(v.terminating);
    EXPECT_FALSE(v.stale);
  }
  // A new object of that name (another uid) is shown: it is not the one deleted.
  Put(Object("a", "u2"));
  View fresh = observer_->Get(kService, "a");
  ASSERT_NE(fresh.object, nullptr);
  EXPECT_EQ(fresh.object->uid(), "u2");
}

TEST_F(ObserverTest, ExpectGoneClearsWhenTheCacheDropsItAndExpiresOtherwise) {
  Put(Object("a", "u1"));
  observer_->ExpectGone(kService, "a", "u1");
  services_api_->Delete(kNs, "a");
  ASSERT_TRUE(CacheShows("a", ""));
  EXPECT_EQ(observer_->Get(kService, "a").object, nullptr);
  // Cleared: the same uid showing up again (it never does in a real cluster) is shown.
  Put(Object("a", "u1"));
  EXPECT_NE(observer_->Get(kService, "a").object, nullptr);

  Put(Object("b", "u3"));
  observer_->ExpectGone(kService, "b", "u3");
  EXPECT_EQ(observer_->Get(kService, "b").object, nullptr);
  clock_.Advance(kTimeout + milliseconds(1));
  // After the timeout the cache is trusted again.
  View v = observer_->Get(kService, "b");
  ASSERT_NE(v.object, nullptr);
  EXPECT_EQ(v.object->uid(), "u3");
}

TEST_F(ObserverTest, ExpectTerminatingMarksItTerminatingUntilTheCacheDoes) {
  Put(Object("a", "u1"));
  observer_->ExpectTerminating(kService, "a", "u1");
  View v = observer_->Get(kService, "a");
  ASSERT_NE(v.object, nullptr);
  EXPECT_TRUE(v.terminating);
  EXPECT_FALSE(v.stale);
  EXPECT_FALSE(v.object->terminating());  // the cache itself has not caught up
  // The cache shows the deletionTimestamp: met, and the cache says terminating on its own.
  Put(Object("a", "u1", kNs, true));
  EXPECT_TRUE(observer_->Get(kService, "a").terminating);
  // Cleared: if the cache later shows it not terminating (a new object of another uid here),
  // the view follows the cache.
  Put(Object("a", "u2"));
  EXPECT_FALSE(observer_->Get(kService, "a").terminating);
}

TEST_F(ObserverTest, ExpectTerminatingIgnoresAnotherUidAndExpires) {
  Put(Object("a", "u9"));
  observer_->ExpectTerminating(kService, "a", "u1");
  EXPECT_FALSE(observer_->Get(kService, "a").terminating);

  Put(Object("b", "u2"));
  observer_->ExpectTerminating(kService, "b", "u2");
  clock_.Advance(kTimeout - milliseconds(1));
  EXPECT_TRUE(observer_->Get(kService, "b").terminating);
  clock_.Advance(milliseconds(2));
  EXPECT_FALSE(observer_->Get(kService, "b").terminating);
  EXPECT_FALSE(observer_->Get(kService, "b").terminating);
}

// A delete that answered "terminating" for an object the cache never showed (its create's
// event still on the way): an empty cache is not "gone". The view stays terminating, naming the
// uid deleted so that the run can ask the server, until the cache shows the object (here
// terminating) or the expectation times out.
TEST_F(ObserverTest, ExpectTerminatingOfAnObjectTheCacheNeverShowedIsNotMetByAnEmptyCache) {
  observer_->ExpectTerminating(kService, "a", "u1");
  View v = observer_->Get(kService, "a");
  EXPECT_EQ(v.object, nullptr);
  EXPECT_TRUE(v.terminating);
  EXPECT_EQ(v.deleted_uid, "u1");
  EXPECT_TRUE(observer_->Get(kService, "a").terminating);  // still: nothing met it
  Put(Object("a", "u1", kNs, true));
  View shown = observer_->Get(kService, "a");
  ASSERT_NE(shown.object, nullptr);
  EXPECT_TRUE(shown.terminating);
  EXPECT_TRUE(shown.deleted_uid.empty());
  // Met: once the cache drops it, it is gone.
  services_api_->Delete(kNs, "a");
  ASSERT_TRUE(CacheShows("a", ""));
  View gone = observer_->Get(kService, "a");
  EXPECT_EQ(gone.object, nullptr);
  EXPECT_FALSE(gone.terminating);

  observer_->ExpectTerminating(kService, "b", "u2");
  clock_.Advance(kTimeout + milliseconds(1));
  View expired = observer_->Get(kService, "b");
  EXPECT_FALSE(expired.terminating);
  EXPECT_TRUE(expired.deleted_uid.empty());
}

TEST_F(ObserverTest, ByLabelReturnsOnlyTheObserversNamespace) {
  Put(Object("a", "u1"));
  Put(Object("a", "u2", "elsewhere"));
  auto found = observer_->ByLabel(kService, "steward.io/project", "p1");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0]->uid(), "u1");
  EXPECT_TRUE(observer_->ByLabel(kService, "steward.io/project", "p2").empty());
  EXPECT_TRUE(observer_->ByLabel(ResourceType::Ingress(), "steward.io/project", "p1").empty());
}

}  // namespace
}  // namespace steward::engine
