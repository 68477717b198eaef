// Several replicas in one process: each an Engine plus a Membership, all sharing one embedded
// cluster and one SQLite store (as replicas share one database), with short leases.
#include "replica/membership.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/model/shard.h"
#include "engine/reconciler/engine.h"
#include "engine/reconciler/engine_test_support.h"
#include "store/cuttable_store.h"
#include "test_support/eventually.h"

namespace steward::replica {
namespace {

using engine::testing::Kind;
using std::chrono::milliseconds;
using std::chrono::seconds;
using test_support::Eventually;
using Steady = std::chrono::steady_clock;

constexpr int kShards = 16;

TEST(LeaseTrackerTest, LivenessIsJudgedByObservedTimeNotByTheHolder) {
  LeaseTracker t;
  const SteadyTime t0{};
  LeaseTracker::Seen lease{"a_1", "10", seconds(2), kShards, {}};
  t.Observe("a", lease, t0);
  EXPECT_TRUE(t.Live("a", t0 + milliseconds(1999)));
  EXPECT_FALSE(t.Live("a", t0 + seconds(2)));  // not renewed for a lease duration: dead
  // The same resourceVersion again is no renewal, whatever its renewTime says.
  t.Observe("a", lease, t0 + seconds(1));
  EXPECT_FALSE(t.Live("a", t0 + seconds(2)));
  lease.resource_version = "11";
  t.Observe("a", lease, t0 + seconds(3));
  EXPECT_TRUE(t.Live("a", t0 + seconds(4)));
  // Released: gone at once.
  lease.resource_version = "12";
  lease.holder = "";
  t.Observe("a", lease, t0 + seconds(4));
  EXPECT_FALSE(t.Live("a", t0 + seconds(4)));
  t.Observe("b", {"b_1", "3", seconds(2), kShards, {}}, t0 + seconds(4));
  EXPECT_EQ(t.LiveReplicas(t0 + seconds(5)), std::vector<std::string>{"b"});
  t.Retain({});
  EXPECT_TRUE(t.LiveReplicas(t0 + seconds(5)).empty());
}

TEST(MembershipOptionsTest, RefusesBadOptionsNamingTheKey) {
  MembershipOptions o;
  o.name = "steward-0";
  o.apply = [](std::map<int, store::Fence>) { return Status::Ok(); };
  EXPECT_TRUE(ValidateMembershipOptions(o).ok());
  auto message = [&](auto change) {
    MembershipOptions bad = o;
    change(bad);
    return ValidateMembershipOptions(bad).message();
  };
  EXPECT_NE(message([](auto& b) { b.name = "Steward_0"; }).find("replicas.name"),
            std::string::npos);
  EXPECT_NE(message([](auto& b) { b.shards = 0; }).find("replicas.shards"), std::string::npos);
  EXPECT_NE(message([](auto& b) { b.shards = 4097; }).find("replicas.shards"), std::string::npos);
  EXPECT_NE(message([](auto& b) { b.renew_deadline = b.lease_duration; }).find("renewDeadline"),
            std::string::npos);
  EXPECT_NE(message([](auto& b) { b.retry_period = b.renew_deadline; }).find("retryPeriod"),
            std::string::npos);
  EXPECT_NE(message([](auto& b) { b.lease_duration = milliseconds(1500); }).find("leaseDuration"),
            std::string::npos);
}

// Fails every Lease request while blocked: a replica cut off from the cluster for renewals only.
class LeaseBlocker final : public engine::testing::ForwardingTransport {
 public:
  using ForwardingTransport::ForwardingTransport;
  std::atomic<bool> blocked{false};
  // Lists by label or field selector (what informers start with) fail while set.
  std::atomic<bool> lists_blocked{false};
  StatusOr<kube::TransportResponse> Do(const kube::TransportRequest& request) override {
    if (blocked && request.target.find("/leases") != std::string::npos) {
      return Unavailable("blocked by the test");
    }
    const bool list = request.method == "GET" &&
                      request.target.find("watch=") == std::string::npos &&
                      (request.target.find("labelSelector=") != std::string::npos ||
                       request.target.find("fieldSelector=") != std::string::npos);
    if (lists_blocked && list) return Unavailable("list blocked by the test");
    return ForwardingTransport::Do(request);
  }
};

struct Replica {
  std::string name;
  std::shared_ptr<LeaseBlocker> transport;
  std::unique_ptr<store::CuttableStore> store;  // the shared store, as this replica reaches it
  std::unique_ptr<engine::Engine> engine;
  std::unique_ptr<Membership> membership;
  std::shared_ptr<kube::Client> client;
  // Kubernetes writes this replica's engine was about to send, with when.
  Mutex mu;
  std::vector<std::pair<Steady::time_point, std::string>> writes GUARDED_BY(mu);
};

class ReplicasTest : public engine::testing::EngineFixture {
 protected:
  void SetUp() override {
    EngineFixture::SetUp();
    StartCluster();
    OpenStore();
  }
  void TearDown() override {
    for (auto& r : replicas_) {
      if (r->membership) r->membership->Abandon();
      if (r->engine) r->engine->Stop();
    }
    replicas_.clear();
    EngineFixture::TearDown();
  }

  // A replica's engine (sharded, acting for no shard yet), without its membership.
  Replica& AddEngine(const std::string& name, milliseconds sync_timeout = seconds(10)) {
    auto r = std::make_unique<Replica>();
    r->name = name;
    kube::TransportOptions to;
    to.user_agent = "steward/test replica/" + name;
    auto inner = kube::Transport::Create(kube::test_support::RestConfigFor(*cluster_), to);
    EXPECT_TRUE(inner.ok());
    r->transport = std::make_shared<LeaseBlocker>(*inner);
    auto client = std::make_shared<kube::Client>(r->transport);
    engine::EngineOptions eo = DefaultOptions();
    eo.config.shards = kShards;
    eo.config.workers = 2;
    eo.sync_timeout = sync_timeout;
    Replica* self = r.get();
    eo.write_hook = [self](std::string_view when, std::string_view verb,
                           const kube::ResourceType& type, std::string_view obj) -> Status {
      if (when == "before") {
        MutexLock lock(self->mu);
        self->writes.push_back(
            {Steady::now(), std::string(verb) + " " + type.kind + "/" + std::string(obj)});
      }
      return Status::Ok();
    };
    r->store = std::make_unique<store::CuttableStore>(*store_);
    auto e = engine::Engine::Create(eo, client, *r->store);
    EXPECT_TRUE(e.ok()) << e.error().ToString();
    r->engine = std::move(*e);
    EXPECT_TRUE(r->engine->Start().ok());
    r->client = client;
    replicas_.push_back(std::move(r));
    return *replicas_.back();
  }

  Replica& Add(const std::string& name) {
    Replica& r = AddEngine(name);
    MembershipOptions mo;
    mo.name = name;
    mo.ns = kNs;
    mo.shards = kShards;
    mo.lease_duration = seconds(2);
    mo.renew_deadline = seconds(1);
    mo.retry_period = milliseconds(200);
    engine::Engine* eng = r.engine.get();
    mo.apply = [eng](std::map<int, store::Fence> owned) {
      return eng->SetOwnedShards(std::move(owned));
    };
    auto m = Membership::Create(mo, r.client, *r.store);
    EXPECT_TRUE(m.ok()) << m.error().ToString();
    r.membership = std::move(*m);
    r.membership->Start();
    return r;
  }

  // Every shard owned in the store by a replica among `names`, and each replica's engine acting
  // for exactly the shards the store gives it.
  bool Settled(const std::set<std::string>& names) {
    auto owners = store_->ListShardOwners();
    if (!owners.ok() || owners->size() != kShards) return false;
    std::map<std::string, std::map<int, int64_t>> by_owner;
    for (const auto& o : *owners) {
      if (!names.contains(o.owner)) return false;
      by_owner[o.owner][o.shard] = o.epoch;
    }
    for (auto& r : replicas_) {
      if (!names.contains(r->name)) continue;
      if (r->engine->OwnedShards() != by_owner[r->name]) return false;
    }
    // And as rendezvous assigns them among `names` (no handover under way).
    const auto assigned =
        engine::AssignShards(kShards, std::vector<std::string>(names.begin(), names.end()));
    for (const auto& o : *owners) {
      if (assigned[o.shard] != o.owner) return false;
    }
    return true;
  }

  std::string OwnerOf(const std::string& id) {
    auto owners = store_->ListShardOwners();
    if (!owners.ok()) return "";
    const int shard = engine::ShardOf(id, kShards);
    for (const auto& o : *owners) {
      if (o.shard == shard) return o.owner;
    }
    return "";
  }

  // Projects p-0..p-(n-1), running, created through the replicas' APIs in turn.
  std::vector<std::string> CreateRunning(int n) {
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) {
      auto& via = *replicas_[i % replicas_.size()];
      auto put = via.engine->intents().Put("p-" + std::to_string(i), Spec(), "", true);
      EXPECT_TRUE(put.ok()) << put.error().ToString();
      ids.push_back(put->record.id);
    }
    for (const auto& id : ids) {
      EXPECT_TRUE(WaitPhase(id, "Running", Record(id).generation)) << id << " " << Record(id).phase;
    }
    return ids;
  }

  Replica* Named(const std::string& name) {
    for (auto& r : replicas_) {
      if (r->name == name) return r.get();
    }
    return nullptr;
  }

  // Milliseconds until every shard of `gone` is owned by one of `others`.
  int64_t MillisUntilTakenOver(const std::set<std::string>& others) {
    const auto begin = Steady::now();
    EXPECT_TRUE(Eventually([&] { return Settled(others); }, seconds(10)));
    return std::chrono::duration_cast<milliseconds>(Steady::now() - begin).count();
  }

  std::vector<std::unique_ptr<Replica>> replicas_;
};

TEST_F(ReplicasTest, ProjectsAreSharedAndADeadReplicasShareIsTakenOver) {
  Add("r0");
  Add("r1");
  Add("r2");
  ASSERT_TRUE(Eventually([&] { return Settled({"r0", "r1", "r2"}); }, seconds(15)));
  const std::vector<std::string> ids = CreateRunning(9);
  // Each project is acted for by exactly one replica, and only its owner's informers see its
  // objects (EndpointSlices inherit the Service's shard label).
  for (const auto& id : ids) {
    const std::string owner = OwnerOf(id);
    const std::string service = engine::NamesFor(id, Record(id).name).service;
    for (auto& r : replicas_) {
      auto slices = r->engine->EndpointSlicesOf(service);
      if (r->name == owner) {
        ASSERT_TRUE(slices.has_value()) << id;
        EXPECT_FALSE(slices->empty()) << id;
      } else {
        EXPECT_FALSE(slices.has_value()) << id << " is in " << r->name << "'s caches";
      }
    }
    auto dep = Get("deployments.apps", engine::NamesFor(id, Record(id).name).deployment);
    ASSERT_TRUE(dep.has_value());
    const std::string shard = std::to_string(engine::ShardOf(id, kShards));
    EXPECT_EQ((*dep)["metadata"]["labels"]["steward.io/shard"], shard);
    EXPECT_EQ((*dep)["spec"]["template"]["metadata"]["labels"]["steward.io/shard"], shard);
  }
  // Leases: one per replica, labelled, announcing the shard count.
  auto leases = cluster_->api().List(Kind("leases.coordination.k8s.io"), kNs, {});
  ASSERT_TRUE(leases.ok());
  EXPECT_EQ((*leases)["items"].size(), 3u);

  // r2 dies silently: no renewal, no release, its engine gone.
  Replica* r2 = Named("r2");
  const auto died = Steady::now();
  r2->membership->Abandon();
  r2->engine->Stop();
  ASSERT_TRUE(Eventually([&] { return Settled({"r0", "r1"}); }, seconds(10)));
  const int64_t took = std::chrono::duration_cast<milliseconds>(Steady::now() - died).count();
  std::cout << "silent death: shards taken over after " << took << " ms (lease 2000 ms, retry "
            << "200 ms)\n";
  EXPECT_LT(took, 2000 + 200 + 1500);
  // A change made after the death converges: every project of r2's old share suspends.
  for (const auto& id : ids) {
    ASSERT_TRUE(replicas_[0]->engine->intents().Suspend(id).ok());
  }
  for (const auto& id : ids) {
    EXPECT_TRUE(WaitPhase(id, "Suspended", Record(id).generation)) << id << " " << Record(id).phase;
  }
}

TEST_F(ReplicasTest, CleanStopHandsOverAtOnceAndAJoinerTakesOnlyItsShare) {
  Add("r0");
  Add("r1");
  ASSERT_TRUE(Eventually([&] { return Settled({"r0", "r1"}); }, seconds(15)));
  const std::vector<std::string> ids = CreateRunning(4);
  auto before = store_->ListShardOwners();
  ASSERT_TRUE(before.ok());

  // A joiner takes only the shards rendezvous gives it; the others keep theirs (same epoch).
  Add("r2");
  ASSERT_TRUE(Eventually([&] { return Settled({"r0", "r1", "r2"}); }, seconds(15)));
  const auto assigned = engine::AssignShards(kShards, {"r0", "r1", "r2"});
  auto after = store_->ListShardOwners();
  ASSERT_TRUE(after.ok());
  for (int s = 0; s < kShards; ++s) {
    EXPECT_EQ((*after)[s].owner, assigned[s]) << "shard " << s;
    if (assigned[s] != "r2") {
      EXPECT_EQ((*after)[s].epoch, (*before)[s].epoch) << "shard " << s;
    }
  }

  // A clean stop: drained, released, Lease released; the others own its shards at once.
  const auto begin = Steady::now();
  Named("r2")->membership->Stop();
  Named("r2")->engine->Stop();
  const int64_t took = std::chrono::duration_cast<milliseconds>(Steady::now() - begin).count() +
                       MillisUntilTakenOver({"r0", "r1"});
  std::cout << "clean stop: shards taken over after " << took << " ms (lease 2000 ms)\n";
  EXPECT_LT(took, 1500);

  // No overlap ever: every shard's history alternates acquire / release (nobody died here).
  auto history = store_->ListShardHistory(0, 0);
  ASSERT_TRUE(history.ok());
  std::map<int, std::string> holder;
  for (const auto& e : *history) {
    if (e.acquired) {
      EXPECT_EQ(holder[e.shard], "") << "shard " << e.shard << " acquired by " << e.owner
                                     << " while " << holder[e.shard] << " held it";
      holder[e.shard] = e.owner;
    } else {
      EXPECT_EQ(holder[e.shard], e.owner) << "shard " << e.shard;
      holder[e.shard] = "";
    }
  }
  // Still converging with two replicas.
  for (const auto& id : ids) ASSERT_TRUE(replicas_[1]->engine->intents().Restart(id).ok());
  for (const auto& id : ids) EXPECT_TRUE(WaitPhase(id, "Running", Record(id).generation)) << id;
}

TEST_F(ReplicasTest, AReplicaThatCannotRenewStopsWritingBeforeItsShardsAreTakenOver) {
  Add("r0");
  Add("r1");
  ASSERT_TRUE(Eventually([&] { return Settled({"r0", "r1"}); }, seconds(15)));
  const std::vector<std::string> ids = CreateRunning(4);
  Replica* r1 = Named("r1");
  const std::map<int, int64_t> held = r1->engine->OwnedShards();
  ASSERT_FALSE(held.empty());

  r1->transport->blocked = true;
  const auto blocked_at = Steady::now();
  ASSERT_TRUE(Eventually([&] { return !r1->membership->Ready().ok(); }, seconds(3)));
  EXPECT_TRUE(Eventually([&] { return r1->engine->OwnedShards().empty(); }, seconds(1)));
  const int64_t stopped_after =
      std::chrono::duration_cast<milliseconds>(Steady::now() - blocked_at).count();
  EXPECT_LT(stopped_after, 2000) << "must stop acting before the lease could expire";
  EXPECT_NE(r1->membership->Ready().message().find("renew"), std::string::npos);

  // r0 takes over after the lease duration.
  ASSERT_TRUE(Eventually([&] { return Settled({"r0"}); }, seconds(10)));
  const auto taken_at = Steady::now();
  // r1's old fences no longer hold in the store.
  const auto& [shard, epoch] = *held.begin();
  store::Fence stale{shard, "r1", epoch};
  EXPECT_EQ(store_->CheckFence(stale).code(), StatusCode::kAborted);
  std::string victim;
  for (const auto& id : ids) {
    if (engine::ShardOf(id, kShards) == shard) victim = id;
  }
  if (!victim.empty()) {
    auto fenced = store_->MutateProject(
        victim, [&](store::ProjectRecord& r, const auto&, store::Mutation& m) {
          r.status_json = "{}";
          m.fence = stale;
          return Status::Ok();
        });
    EXPECT_EQ(fenced.status().code(), StatusCode::kAborted);
  }
  // Work after the takeover is r0's: suspend everything; r1 sends no Kubernetes write.
  for (const auto& id : ids) ASSERT_TRUE(replicas_[0]->engine->intents().Suspend(id).ok());
  for (const auto& id : ids) EXPECT_TRUE(WaitPhase(id, "Suspended", Record(id).generation)) << id;
  {
    MutexLock lock(r1->mu);
    for (const auto& [at, what] : r1->writes) {
      EXPECT_LT(at, taken_at) << "r1 wrote " << what << " after r0 took its shards";
    }
  }
  // Renewing again, r1 rejoins and takes its share back (new epochs).
  r1->transport->blocked = false;
  ASSERT_TRUE(Eventually([&] { return Settled({"r0", "r1"}); }, seconds(10)));
  EXPECT_TRUE(Eventually([&] { return r1->membership->Ready().ok(); }, seconds(2)));
  for (const auto& [s, e] : r1->engine->OwnedShards()) {
    if (held.contains(s)) {
      EXPECT_GT(e, held.at(s));
    }
  }
}

TEST_F(ReplicasTest, AReplicaCutOffFromTheDatabaseStopsRenewingAndItsShardsAreTakenOver) {
  Add("r0");
  Add("r1");
  ASSERT_TRUE(Eventually([&] { return Settled({"r0", "r1"}); }, seconds(15)));
  const std::vector<std::string> ids = CreateRunning(4);
  Replica* r1 = Named("r1");
  const std::map<int, int64_t> held = r1->engine->OwnedShards();
  ASSERT_FALSE(held.empty());

  // r1 still reaches the cluster (it could renew its Lease) but not the database.
  r1->store->cut = true;
  ASSERT_TRUE(Eventually([&] { return r1->engine->OwnedShards().empty(); }, seconds(3)));
  EXPECT_NE(r1->membership->Ready().message().find("the store does not answer"), std::string::npos)
      << r1->membership->Ready().message();
  // Its Lease runs out: r0 takes every shard and works them.
  ASSERT_TRUE(Eventually([&] { return Settled({"r0"}); }, seconds(10)));
  for (const auto& id : ids) ASSERT_TRUE(replicas_[0]->engine->intents().Suspend(id).ok());
  for (const auto& id : ids) EXPECT_TRUE(WaitPhase(id, "Suspended", Record(id).generation)) << id;

  // The database back: r1 renews, rejoins and takes its share afresh.
  r1->store->cut = false;
  ASSERT_TRUE(Eventually([&] { return Settled({"r0", "r1"}); }, seconds(10)));
  EXPECT_TRUE(Eventually([&] { return r1->membership->Ready().ok(); }, seconds(2)));
  for (const auto& [s, e] : r1->engine->OwnedShards()) {
    if (held.contains(s)) {
      EXPECT_GT(e, held.at(s));
    }
  }
}

TEST_F(ReplicasTest, ARestartedReplicaTakesItsLeaseAndShardsBackAtOnce) {
  Add("r0");
  Add("r1");
  ASSERT_TRUE(Eventually([&] { return Settled({"r0", "r1"}); }, seconds(15)));
  const std::map<int, int64_t> before = Named("r1")->engine->OwnedShards();
  const std::string old_identity = Named("r1")->membership->identity();
  // The process dies and a new one starts under the same name (a StatefulSet pod restarted).
  Named("r1")->membership->Abandon();
  Named("r1")->engine->Stop();
  std::erase_if(replicas_, [](const auto& r) { return r->name == "r1"; });
  const auto begin = Steady::now();
  Replica& again = Add("r1");
  ASSERT_TRUE(Eventually([&] { return Settled({"r0", "r1"}); }, seconds(10)));
  const int64_t took = std::chrono::duration_cast<milliseconds>(Steady::now() - begin).count();
  // Its own shards need no wait for the old Lease to expire: they are its own.
  EXPECT_LT(took, 1800);
  for (const auto& [shard, epoch] : again.engine->OwnedShards()) {
    EXPECT_GT(epoch, before.at(shard)) << "the past process must be fenced out";
  }
  auto lease = cluster_->api().Get(Kind("leases.coordination.k8s.io"), kNs, "steward-replica-r1");
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ((*lease)["spec"]["holderIdentity"], again.membership->identity());
  EXPECT_NE(again.membership->identity(), old_identity);
  EXPECT_EQ((*lease)["spec"]["leaseTransitions"], 1);
  EXPECT_EQ((*lease)["metadata"]["labels"]["steward.io/role"], "replica");
  EXPECT_EQ((*lease)["metadata"]["annotations"]["steward.io/shards"], std::to_string(kShards));
  const std::string renew = (*lease)["spec"]["renewTime"].get<std::string>();
  EXPECT_EQ(renew.size(), std::string("2026-12-02T05:50:32.482000Z").size()) << renew;
}

// Two shard counts at once would map one record to two shards, which two replicas could then
// own under different fences: every replica that sees a live Lease of another count refuses to
// work — the newcomer and the replica already at work alike — until the counts agree again.
TEST_F(ReplicasTest, AReplicaRefusesToWorkBesideALiveLeaseOfAnotherShardCount) {
  Replica& r0 = Add("r0");
  ASSERT_TRUE(Eventually([&] { return Settled({"r0"}); }, seconds(15)));
  std::atomic<int> applied_shards{-1};
  MembershipOptions mo;
  mo.name = "odd";
  mo.ns = kNs;
  mo.shards = kShards * 2;
  mo.lease_duration = seconds(2);
  mo.renew_deadline = seconds(1);
  mo.retry_period = milliseconds(200);
  mo.apply = [&](std::map<int, store::Fence> owned) {
    applied_shards = static_cast<int>(owned.size());
    return Status::Ok();
  };
  auto odd = Membership::Create(mo, client_, *store_);
  ASSERT_TRUE(odd.ok());
  (*odd)->Start();
  ASSERT_TRUE(Eventually(
      [&] {
        return (*odd)->Ready().message().find("shards must be the same") != std::string::npos;
      },
      seconds(5)));
  EXPECT_TRUE((*odd)->stats().owned.empty());
  EXPECT_EQ(applied_shards, -1);  // never acted
  // r0 refuses too, once it sees the other count, and gives its shards up.
  ASSERT_TRUE(Eventually(
      [&] {
        return r0.membership->Ready().message().find("shards must be the same") !=
                   std::string::npos &&
               r0.engine->OwnedShards().empty();
      },
      seconds(5)));
  // The other replica gone (its Lease released), r0 takes its shards back.
  (*odd)->Stop();
  EXPECT_TRUE(
      Eventually([&] { return Settled({"r0"}) && r0.membership->Ready().ok(); }, seconds(10)));
  EXPECT_EQ(applied_shards, -1);
}

TEST_F(ReplicasTest, AnEngineWhoseShardWasTakenSendsNoKubernetesWriteAndNoStatus) {
  // A replica that has not noticed yet (paused, partitioned) that another acquired its shard:
  // its engine still believes it owns the shard, but the store's fence refuses it.
  Replica& r = AddEngine("r0");
  const int shard = 3;
  auto mine = store_->AcquireShard(shard, "r0", 0);
  ASSERT_TRUE(mine.ok());
  ASSERT_TRUE(r.engine->SetOwnedShards({{shard, store::Fence{shard, "r0", mine->epoch}}}).ok());
  std::string id;
  for (int k = 0; id.empty(); ++k) {
    if (engine::ShardOf("fenced-" + std::to_string(k), kShards) == shard) {
      id = "fenced-" + std::to_string(k);
    }
  }
  ASSERT_TRUE(store_->AcquireShard(shard, "r9", mine->epoch).ok());  // the takeover
  auto put = r.engine->intents().Put("fenced", Spec(), id, true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  ASSERT_TRUE(Eventually([&] { return r.engine->stats().lost_shard_runs > 0; }, seconds(10)));
  EXPECT_EQ(Record(id).status_json, "");  // no status written
  EXPECT_TRUE(Leftovers(id).empty());     // nothing created
  MutexLock lock(r.mu);
  EXPECT_TRUE(r.writes.empty()) << r.writes.front().second;
}

TEST_F(ReplicasTest, ShardsTakenWhileTheClusterCannotListAreKeptAndDecideNothingUntilItCan) {
  // A replica takes shards while its cluster answers no list (down, or slow to list): it
  // keeps them (before, a failed sync dropped every shard, on every cluster of the replica),
  // and its runs decide nothing from the empty caches: a suspend is not Suspended while the
  // project's objects are there.
  Replica& r = AddEngine("r0", milliseconds(300));
  auto take = [&]() {
    std::map<int, store::Fence> all;
    auto owners = store_->ListShardOwners();
    EXPECT_TRUE(owners.ok());
    std::map<int, int64_t> epochs;
    for (const auto& o : *owners) epochs[o.shard] = o.epoch;
    for (int shard = 0; shard < kShards; ++shard) {
      auto got = store_->AcquireShard(shard, "r0", epochs[shard]);
      EXPECT_TRUE(got.ok()) << got.error().ToString();
      all[shard] = store::Fence{shard, "r0", got->epoch};
    }
    return all;
  };
  ASSERT_TRUE(r.engine->SetOwnedShards(take()).ok());
  auto put = r.engine->intents().Put("held", Spec(), "", true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", put->record.generation));

  ASSERT_TRUE(r.engine->SetOwnedShards({}).ok());
  r.transport->lists_blocked = true;
  auto suspended = r.engine->intents().Suspend(id);
  ASSERT_TRUE(suspended.ok()) << suspended.error().ToString();
  const std::map<int, store::Fence> fences = take();
  const uint64_t runs = r.engine->stats().reconciles;
  ASSERT_TRUE(r.engine->SetOwnedShards(fences).ok());
  EXPECT_EQ(r.engine->OwnedShards().size(), static_cast<size_t>(kShards));
  // Runs come and go (each put off), and none says Suspended: the Deployment is still there.
  ASSERT_TRUE(Eventually(
      [&] { return r.engine->stats().reconciles >= runs + 2 || Record(id).phase == "Suspended"; },
      seconds(10)));
  EXPECT_GT(r.engine->stats().unsynced_runs, 0u);
  EXPECT_FALSE(r.engine->stats().caches_synced);  // what steward_cluster_caches_synced shows
  EXPECT_NE(Record(id).phase, "Suspended");
  EXPECT_TRUE(Get("deployments.apps", "held").has_value());
  // Once the cluster lists again, the caches sync and the suspend finishes, truthfully.
  r.transport->lists_blocked = false;
  ASSERT_TRUE(WaitPhase(id, "Suspended", suspended->generation)) << Record(id).phase;
  EXPECT_FALSE(Get("deployments.apps", "held").has_value());
  EXPECT_EQ(r.engine->OwnedShards().size(), static_cast<size_t>(kShards));
  EXPECT_TRUE(r.engine->stats().caches_synced);
}

TEST_F(ReplicasTest, UnshardedEngineWritesNoLeaseAndNoShardLabel) {
  StartEngine();
  auto put = engine_->intents().Put("solo", Spec(), "", true);
  ASSERT_TRUE(put.ok());
  ASSERT_TRUE(WaitPhase(put->record.id, "Running", put->record.generation));
  auto dep = Get("deployments.apps", "solo");
  ASSERT_TRUE(dep.has_value());
  EXPECT_FALSE((*dep)["metadata"]["labels"].contains("steward.io/shard"));
  auto leases = cluster_->api().List(Kind("leases.coordination.k8s.io"), kNs, {});
  ASSERT_TRUE(leases.ok());
  EXPECT_TRUE((*leases)["items"].empty());
  EXPECT_FALSE(engine_->SetOwnedShards({}).ok());  // not sharded
}

}  // namespace
}  // namespace steward::replica
