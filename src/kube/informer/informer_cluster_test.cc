// Informers against the embedded cluster over HTTPS: a burst of writes under hostile faults
// (watch cuts every few hundred ms, periodic compaction, 5xx, resets, throttling), a forced 410
// with objects changed while disconnected, a label-selected informer, and the factory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <thread>

#include "cluster/embedded_cluster.h"
#include "cluster/model/resource_types.h"
#include "common/mutex.h"
#include "kube/informer/informer.h"
#include "kube/test_support/embedded.h"
#include "test_support/eventually.h"

namespace steward::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// The hostile profile makes convergence slower than elsewhere: a longer default wait.
bool Eventually(const std::function<bool()>& fn, milliseconds timeout = seconds(20)) {
  return ::steward::test_support::Eventually(fn, timeout);
}

uint64_t Num(const std::string& rv) { return std::stoull(rv); }

// Checks every handler call against the handler's own running view of the objects: an add only
// for an absent key, an update whose old object is the last one seen, a delete only of a present
// key (a tombstone carrying exactly the last seen state), revisions only moving forward (the
// embedded cluster's resourceVersions are numbers; the informer never relies on that).
class Tracker {
 public:
  InformerHandlers Handlers() {
    InformerHandlers h;
    h.on_add = [this](const ObjectRef& o) { OnAdd(o); };
    h.on_update = [this](const ObjectRef& o, const ObjectRef& n) { OnUpdate(o, n); };
    h.on_delete = [this](const ObjectRef& o, bool unknown) { OnDelete(o, unknown); };
    return h;
  }
  std::map<std::string, std::string> live() const {
    MutexLock lock(mu_);
    return live_;
  }
  std::vector<std::string> violations() const {
    MutexLock lock(mu_);
    return violations_;
  }
  bool ever_added(const std::string& key) const {
    MutexLock lock(mu_);
    return added_.contains(key);
  }
  bool deleted(const std::string& key) const {
    MutexLock lock(mu_);
    return deleted_.contains(key);
  }
  std::vector<std::string> log() const {
    MutexLock lock(mu_);
    return log_;
  }

 private:
  void OnAdd(const ObjectRef& o) {
    MutexLock lock(mu_);
    log_.push_back("add " + o->name());
    if (live_.contains(o->key())) Violation("add of a present key " + o->key());
    CheckForward(o->key(), o->resource_version(), "add");
    live_[o->key()] = o->resource_version();
    added_.insert(o->key());
  }
  void OnUpdate(const ObjectRef& old_object, const ObjectRef& new_object) {
    MutexLock lock(mu_);
    log_.push_back("update " + new_object->name());
    auto it = live_.find(new_object->key());
    if (it == live_.end()) {
      Violation("update of an absent key " + new_object->key());
    } else if (it->second != old_object->resource_version()) {
      Violation("update of " + new_object->key() + " from " + old_object->resource_version() +
                " but the last seen was " + it->second);
    }
    CheckForward(new_object->key(), new_object->resource_version(), "update");
    live_[new_object->key()] = new_object->resource_version();
  }
  void OnDelete(const ObjectRef& o, bool unknown) {
    MutexLock lock(mu_);
    log_.push_back((unknown ? "tombstone " : "delete ") + o->name());
    auto it = live_.find(o->key());
    if (it == live_.end()) {
      Violation("delete of an absent key " + o->key());
    } else if (unknown && it->second != o->resource_version()) {
      Violation("tombstone of " + o->key() + " at " + o->resource_version() +
                " but the last seen was " + it->second);
    }
    if (!unknown) CheckForward(o->key(), o->resource_version(), "delete");
    live_.erase(o->key());
    deleted_.insert(o->key());
  }
  void CheckForward(const std::string& key, const std::string& rv, const char* what) REQUIRES(mu_) {
    auto& last = last_rv_[key];
    if (Num(rv) <= last) {
      Violation(std::string(what) + " of " + key + " went back from " + std::to_string(last) +
                " to " + rv);
    }
    last = Num(rv);
  }
  void Violation(std::string v) REQUIRES(mu_) { violations_.push_back(std::move(v)); }

  mutable Mutex mu_;
  std::map<std::string, std::string> live_ GUARDED_BY(mu_);
  std::map<std::string, uint64_t> last_rv_ GUARDED_BY(mu_);
  std::set<std::string> added_ GUARDED_BY(mu_);
  std::set<std::string> deleted_ GUARDED_BY(mu_);
  std::vector<std::string> violations_ GUARDED_BY(mu_);
  std::vector<std::string> log_ GUARDED_BY(mu_);
};

std::map<std::string, std::string> CacheState(const Informer& informer) {
  std::map<std::string, std::string> out;
  for (const auto& o : informer.List()) out[o->key()] = o->resource_version();
  return out;
}

class InformerClusterTest : public ::testing::Test {
 protected:
  void Start(cluster::Profile profile = {}) {
    cluster::EmbeddedCluster::Options o;
    o.ingress = false;
    o.controllers = false;
    o.profile = std::move(profile);
    o.seed = 7;
    auto c = cluster::EmbeddedCluster::Start(o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    cluster_ = std::move(c).value();
    TransportOptions transport_options;
    transport_options.backoff_initial = milliseconds(10);
    transport_options.backoff_max = milliseconds(100);
    transport_options.default_timeout = seconds(10);
    client_ = test_support::ClientFor(*cluster_, transport_options);
  }

  static InformerOptions Options() {
    InformerOptions o;
    o.name = "configmaps";
    o.backoff_initial = milliseconds(20);
    o.backoff_max = milliseconds(300);
    o.page_size = 50;
    o.watch_timeout_seconds = 30;
    o.seed = 3;
    o.label_indexes = {"team"};
    return o;
  }

  std::unique_ptr<Informer> MakeInformer(const std::string& ns, const std::string& selector = "",
                                         InformerOptions options = Options()) {
    return std::make_unique<Informer>(
        MakeListerWatcher(client_, ResourceType::ConfigMap(), ns, selector), options);
  }

  // In-process writes (no faults): the cluster's ObjectApi.
  const cluster::ResourceType& Cm() { return *cluster::FindGroupResource("configmaps"); }
  void CreateNamespace(const std::string& ns) {
    auto r = cluster_->api().Create(*cluster::FindGroupResource("namespaces"), "",
                                    Json{{"metadata", {{"name", ns}}}});
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  std::string Create(const std::string& ns, const std::string& name, const std::string& team) {
    Json cm = {{"metadata", {{"name", name}, {"labels", {{"team", team}}}}},
               {"data", {{"v", "0"}}}};
    auto r = cluster_->api().Create(Cm(), ns, cm);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? (*r)["metadata"]["resourceVersion"].get<std::string>() : "";
  }
  std::string Modify(const std::string& ns, const std::string& name, const std::string& team,
                     const std::string& value) {
    auto r = cluster_->api().Modify(Cm(), ns, name, [&](Json& o) {
      o["metadata"]["labels"]["team"] = team;
      o["data"]["v"] = value;
      return true;
    });
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? (*r)["metadata"]["resourceVersion"].get<std::string>() : "";
  }
  void Delete(const std::string& ns, const std::string& name) {
    auto r = cluster_->api().Delete(Cm(), ns, name);
    EXPECT_TRUE(r.ok()) << r.error().message;
  }
  // What a fresh list returns: key → resourceVersion.
  std::map<std::string, std::string> Truth(const std::string& ns) {
    std::map<std::string, std::string> out;
    auto list = cluster_->api().List(Cm(), ns, {});
    EXPECT_TRUE(list.ok());
    if (!list.ok()) return out;
    for (const auto& item : (*list)["items"]) {
      out[ns + "/" + item["metadata"]["name"].get<std::string>()] =
          item["metadata"]["resourceVersion"];
    }
    return out;
  }

  std::unique_ptr<cluster::EmbeddedCluster> cluster_;
  std::shared_ptr<Client> client_;
};

cluster::Profile Hostile() {
  cluster::Profile p;
  p.name = "hostile-fast";
  p.faults.watch_cut_after = {milliseconds(150), milliseconds(250)};  // 150-400 ms
  p.faults.watch_cut_after_events = 60;
  p.faults.compaction_interval = milliseconds(300);
  p.faults.error_rate_429 = 0.02;
  p.faults.retry_after_seconds = 0;
  p.faults.error_rate_500 = 0.02;
  p.faults.error_rate_503 = 0.02;
  p.faults.reset_rate = 0.01;
  p.faults.latency["*"] = {milliseconds(0), milliseconds(5)};
  // Slow reconnects: writes and compactions land between a cut and the next watch.
  p.faults.latency["watch"] = {milliseconds(40), milliseconds(120)};
  p.faults.latency["list"] = {milliseconds(10), milliseconds(40)};
  return p;
}

TEST_F(InformerClusterTest, BurstUnderHostileFaultsEndsExactlyAtTheServerState) {
  Start(Hostile());
  CreateNamespace("burst");
  for (int i = 0; i < 60; ++i) Create("burst", "pre-" + std::to_string(i), "a");
  // Small pages (Options().page_size, 50, against 40-250 objects): relists are paginated, each
  // page served at the first page's snapshot, and a continue that outlives a compaction is
  // answered 410 Expired, which the informer must recover from.
  auto informer = MakeInformer("burst");
  Tracker tracker;
  informer->AddHandlers(tracker.Handlers());
  informer->Start();
  ASSERT_TRUE(informer->WaitForSync(seconds(30)));

  std::mt19937 rng(11);
  std::vector<std::string> live;
  for (int i = 0; i < 60; ++i) live.push_back("pre-" + std::to_string(i));
  std::set<std::string> deleted;
  int created = 0;
  for (int op = 0; op < 1000; ++op) {
    int dice = static_cast<int>(rng() % 100);
    if (live.size() < 40 || dice < 40) {
      std::string name = "cm-" + std::to_string(created++);
      Create("burst", name, rng() % 2 ? "a" : "b");
      live.push_back(name);
    } else if (dice < 75) {
      Modify("burst", live[rng() % live.size()], rng() % 2 ? "a" : "b", std::to_string(op));
    } else {
      size_t i = rng() % live.size();
      Delete("burst", live[i]);
      deleted.insert("burst/" + live[i]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    }
    // Spread the burst over about two seconds so faults land in the middle of it.
    if (op % 10 == 9) std::this_thread::sleep_for(milliseconds(20));
  }

  auto truth = Truth("burst");
  EXPECT_EQ(truth.size(), live.size());
  EXPECT_TRUE(Eventually([&] { return CacheState(*informer) == truth; }));
  EXPECT_TRUE(Eventually([&] { return tracker.live() == truth; }));
  EXPECT_EQ(CacheState(*informer), truth);
  EXPECT_EQ(tracker.live(), truth);
  EXPECT_THAT(tracker.violations(), IsEmpty());
  size_t unseen = 0;
  for (const auto& key : deleted) {
    if (tracker.ever_added(key)) {
      EXPECT_TRUE(tracker.deleted(key)) << key << " was deleted but never reported";
    } else {
      ++unseen;  // created and deleted while the informer was relisting
    }
  }
  // The label index agrees with the objects.
  for (const char* team : {"a", "b"}) {
    for (const auto& o : informer->ByLabel("team", team)) EXPECT_EQ(o->label("team"), team);
  }
  EXPECT_EQ(informer->ByLabel("team", "a").size() + informer->ByLabel("team", "b").size(),
            truth.size());
  auto stats = informer->stats();
  std::printf(
      "hostile burst: lists=%llu relists_gone=%llu watches=%llu watch_errors=%llu events=%llu "
      "tombstones=%llu objects=%zu deleted=%zu never_seen=%zu\n",
      static_cast<unsigned long long>(stats.lists),
      static_cast<unsigned long long>(stats.relists_gone),
      static_cast<unsigned long long>(stats.watches),
      static_cast<unsigned long long>(stats.watch_errors),
      static_cast<unsigned long long>(stats.events),
      static_cast<unsigned long long>(stats.tombstones), stats.objects, deleted.size(), unseen);
  EXPECT_GT(stats.watches, 3u);  // the watch was cut and reopened
  informer->Stop();
}

TEST_F(InformerClusterTest, ChangesMissedWhileDisconnectedArriveAfterA410) {
  cluster::Profile profile;
  profile.faults.watch_cut_after = {milliseconds(200), milliseconds(0)};
  Start(profile);
  CreateNamespace("gone");
  Create("gone", "a", "x");
  std::string b = Create("gone", "b", "x");
  std::string c = Create("gone", "c", "x");
  auto informer = MakeInformer("gone");
  Tracker tracker;
  informer->AddHandlers(tracker.Handlers());
  informer->Start();
  ASSERT_TRUE(informer->WaitForSync(seconds(20)));
  ASSERT_TRUE(Eventually([&] { return tracker.log().size() == 3; }));

  // Every request now fails; once a watch request starts after that, none is open.
  cluster::Profile down = profile;
  down.faults.error_rate_503 = 1.0;
  cluster_->SetProfile(down);
  uint64_t watches = informer->stats().watches;
  ASSERT_TRUE(Eventually([&] { return informer->stats().watches > watches; }));
  Delete("gone", "b");
  std::string c2 = Modify("gone", "c", "y", "changed");
  std::string d = Create("gone", "d", "y");
  cluster_->storage().Compact();
  cluster_->SetProfile(profile);

  ASSERT_TRUE(Eventually([&] { return tracker.log().size() == 6; }));
  EXPECT_THAT(tracker.log(),
              ElementsAre("add a", "add b", "add c", "tombstone b", "update c", "add d"));
  EXPECT_THAT(tracker.violations(), IsEmpty());
  EXPECT_EQ(CacheState(*informer), Truth("gone"));
  EXPECT_EQ(informer->Get("gone", "c")->resource_version(), c2);
  EXPECT_EQ(informer->Get("gone", "d")->resource_version(), d);
  auto stats = informer->stats();
  EXPECT_GE(stats.relists_gone, 1u);
  EXPECT_EQ(stats.tombstones, 1u);
  EXPECT_EQ(stats.lists, 2u);
}

TEST_F(InformerClusterTest, SelectedInformerSeesObjectsEnterAndLeave) {
  Start();
  CreateNamespace("sel");
  auto informer = MakeInformer("sel", "team=a");
  Tracker tracker;
  informer->AddHandlers(tracker.Handlers());
  informer->Start();
  ASSERT_TRUE(informer->WaitForSync(seconds(20)));
  Create("sel", "x", "a");
  Create("sel", "y", "b");
  ASSERT_TRUE(Eventually([&] { return informer->size() == 1; }));
  Modify("sel", "x", "b", "1");  // leaves the selection
  Modify("sel", "y", "a", "1");  // enters it
  ASSERT_TRUE(Eventually([&] { return tracker.log().size() == 3; }));
  EXPECT_THAT(tracker.log(), ElementsAre("add x", "delete x", "add y"));
  EXPECT_THAT(tracker.violations(), IsEmpty());
  ASSERT_EQ(informer->ByLabel("team", "a").size(), 1u);
  EXPECT_EQ(informer->ByLabel("team", "a")[0]->name(), "y");
  EXPECT_EQ(informer->Get("sel", "x"), nullptr);
}

TEST_F(InformerClusterTest, FactorySharesOneInformerPerResourceNamespaceAndSelector) {
  Start();
  CreateNamespace("f");
  Create("f", "one", "a");
  Create("f", "two", "b");
  InformerFactory factory(client_, Options());
  auto all = factory.For(ResourceType::ConfigMap(), "f");
  EXPECT_EQ(factory.For(ResourceType::ConfigMap(), "f"), all);
  auto selected = factory.For(ResourceType::ConfigMap(), "f", "team=b");
  EXPECT_NE(selected, all);
  EXPECT_NE(factory.For(ResourceType::Secret(), "f"), all);
  factory.StartAll();
  ASSERT_TRUE(factory.WaitForAllSynced(seconds(20)));
  EXPECT_EQ(all->size(), 2u);
  ASSERT_EQ(selected->size(), 1u);
  EXPECT_EQ(selected->List()[0]->name(), "two");
  factory.StopAll();
}

}  // namespace
}  // namespace steward::kube
