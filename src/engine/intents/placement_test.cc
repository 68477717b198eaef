// Placement over several clusters, and what Intents do with it: against a SQLite store in a temp
// dir (no cluster). The cluster a record is placed on is stored with it and never changes by a
// put; the policy picks by labels, room and load; a team's records stay together when asked.
#include "engine/intents/placement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/intents/intents.h"
#include "engine/model/test_util.h"
#include "store/store.h"

namespace steward::engine {
namespace {

using ::testing::HasSubstr;

// Remembers what was put into it, per cluster: the test's stand-in for a cluster's Secrets.
class RecordingVault final : public CredentialVault {
 public:
  StatusOr<std::string> Put(const std::string& id, const std::string&,
                            const SuppliedCredentials& values) override {
    ids.push_back(id);
    held[id] = values;
    return std::string("1");
  }
  void Discard(const std::string&, const std::string&, const std::string&) override {}
  StatusOr<SuppliedCredentials> Get(const std::string& id, const CredentialsRef& ref) override {
    if (down) return Unavailable("cannot read the credentials Secret: no answer");
    auto it = held.find(id);
    if (it == held.end() || it->second.Ref() != ref) return NotFound("no such Secret");
    return it->second;
  }
  std::vector<std::string> ids;
  std::map<std::string, SuppliedCredentials> held;
  bool down = false;  // Get answers kUnavailable
};

class PlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/steward-placement-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    store::SqliteOptions so;
    so.path = dir_ + "/steward.db";
    so.synchronous_full = false;
    auto s = store::OpenSqliteStore(so);
    ASSERT_TRUE(s.ok()) << s.error().ToString();
    store_ = std::move(*s);
    east_config_.domain = "east.example";
    west_config_.domain = "west.example";
  }
  void TearDown() override {
    intents_.reset();
    placement_.reset();
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Clusters east (tier=prod, capacity `east_capacity`) and west (tier=prod, region=us; no
  // limit), and Intents placing over them.
  void Build(int64_t east_capacity = 0, PlacementPolicy policy = {}) {
    std::vector<ClusterTarget> targets(2);
    targets[0].name = "east";
    targets[0].config = &east_config_;
    targets[0].vault = &east_vault_;
    targets[0].capacity = east_capacity;
    targets[0].labels = {{"tier", "prod"}};
    targets[1].name = "west";
    targets[1].config = &west_config_;
    targets[1].vault = &west_vault_;
    targets[1].labels = {{"tier", "prod"}, {"region", "us"}};
    placement_ = std::make_unique<Placement>(std::move(targets), std::move(policy), *store_);
    intents_ =
        std::make_unique<Intents>(*store_, nullptr, &east_config_, &east_vault_, placement_.get());
  }

  static Json Spec(std::string team = "t1") {
    return Json{{"team", std::move(team)},
                {"stack", {{"image", "flowfuse/node-red:4.0"}, {"memory", 256}}}};
  }
  // Spec() naming `cluster`, with platform-issued credentials when `supplied`.
  static Json SpecOn(const std::string& cluster, bool supplied = false) {
    Json s = Spec();
    s["cluster"] = cluster;
    if (supplied) {
      s["credentials"] = Json{{"clientId", "ffp_id"}, {"clientSecret", "s3cret"}, {"token", "tok"}};
    }
    return s;
  }
  std::string ClusterOf(const std::string& name) {
    auto r = store_->GetProjectByName(name);
    return r.ok() ? r->cluster : "(" + r.error().message() + ")";
  }

  std::string dir_;
  std::unique_ptr<store::Store> store_;
  EngineConfig east_config_, west_config_;
  RecordingVault east_vault_, west_vault_;
  std::unique_ptr<Placement> placement_;
  std::unique_ptr<Intents> intents_;
};

TEST_F(PlacementTest, ANamedClusterIsStoredAndKeptOutOfTheStoredSpec) {
  Build();
  Json spec = Spec();
  spec["cluster"] = "west";
  auto put = intents_->Put("alpha", spec);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  EXPECT_EQ(put->record.cluster, "west");
  EXPECT_EQ(ClusterOf("alpha"), "west");
  EXPECT_EQ(put->record.spec_json.find("cluster"), std::string::npos) << put->record.spec_json;
  // Put again naming it, or not naming it (the platform sends its spec without): no change.
  auto again = intents_->Put("alpha", spec);
  ASSERT_TRUE(again.ok()) << again.error().ToString();
  EXPECT_FALSE(again->changed);
  auto unnamed = intents_->Put("alpha", Spec());
  ASSERT_TRUE(unnamed.ok()) << unnamed.error().ToString();
  EXPECT_FALSE(unnamed->changed);
  EXPECT_EQ(ClusterOf("alpha"), "west");
  // Hostnames are claimed under the placed cluster's domain.
  auto other = intents_->Put("beta", [] {
    Json s = Spec();
    s["cluster"] = "east";
    return s;
  }());
  ASSERT_TRUE(other.ok());
  Json taken = Spec();
  taken["customHostname"] = "alpha.west.example";
  auto clash = intents_->Put("beta", taken);
  EXPECT_EQ(clash.error().code(), StatusCode::kAlreadyExists) << clash.error().ToString();
}

TEST_F(PlacementTest, APutNamingAnotherClusterThanTheRecordsIsRefusedAndMovesNothing) {
  Build();
  Json spec = Spec();
  spec["cluster"] = "east";
  ASSERT_TRUE(intents_->Put("alpha", spec).ok());
  const int64_t version = store_->GetProjectByName("alpha")->version;
  spec["cluster"] = "west";
  auto moved = intents_->Put("alpha", spec, "", /*start=*/true);
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(moved.error().message(), HasSubstr("is on cluster east"));
  EXPECT_EQ(store_->GetProjectByName("alpha")->version, version);
  EXPECT_EQ(ClusterOf("alpha"), "east");
}

TEST_F(PlacementTest, APlacementPreferencePlacesANewRecordAndIsNotCheckedAgainstAnExistingOne) {
  Build();
  Json spec = Spec();
  spec["placement"] = Json{{"cluster", "west"}};
  auto put = intents_->Put("alpha", spec);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  EXPECT_EQ(put->record.cluster, "west");
  // The platform sends the stack's placement for an instance that is elsewhere: no refusal, no
  // change, no move.
  spec["placement"] = Json{{"cluster", "east"}};
  auto again = intents_->Put("alpha", spec);
  ASSERT_TRUE(again.ok()) << again.error().ToString();
  EXPECT_FALSE(again->changed);
  EXPECT_EQ(ClusterOf("alpha"), "west");
  // Both forms at once must agree.
  spec["cluster"] = "west";
  auto both = intents_->Put("beta", spec);
  EXPECT_EQ(both.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(both.error().message(), HasSubstr("spec.placement.cluster"));
}

TEST_F(PlacementTest, UnknownClustersAndBadPlacementFieldsAreRefusedNamingTheField) {
  Build();
  struct Case {
    Json cluster;
    Json placement;
    std::string field;
  };
  for (const Case& c : std::vector<Case>{
           {"mars", nullptr, "spec.cluster"},
           {"Not_A_Label", nullptr, "spec.cluster"},
           {42, nullptr, "spec.cluster"},
           {nullptr, Json{{"zone", "a"}}, "spec.placement"},
           {nullptr, Json{{"cluster", "No!"}}, "spec.placement.cluster"},
           {nullptr, Json{{"labels", {{"bad key!", "x"}}}}, "spec.placement.labels"},
           {nullptr, Json{{"labels", {{"tier", 3}}}}, R"(spec.placement.labels["tier"])"},
       }) {
    Json spec = Spec();
    if (!c.cluster.is_null()) spec["cluster"] = c.cluster;
    if (!c.placement.is_null()) spec["placement"] = c.placement;
    auto put = intents_->Put("alpha", spec);
    ASSERT_FALSE(put.ok()) << spec.dump();
    EXPECT_EQ(put.error().code(), StatusCode::kInvalidArgument) << put.error().ToString();
    EXPECT_THAT(put.error().message(), HasSubstr(c.field)) << put.error().ToString();
  }
  EXPECT_EQ(store_->GetProjectByName("alpha").error().code(), StatusCode::kNotFound);
}

TEST_F(PlacementTest, TheLeastLoadedClusterWithTheWantedLabelsAndRoomIsPicked) {
  Build(/*east_capacity=*/2);
  // Alternates while both have room (east's load counts over its capacity 2, west's over it).
  std::vector<std::string> placed;
  for (const char* name : {"p1", "p2", "p3", "p4"}) {
    auto put = intents_->Put(name, Spec());
    ASSERT_TRUE(put.ok()) << put.error().ToString();
    placed.push_back(put->record.cluster);
  }
  EXPECT_EQ(placed, (std::vector<std::string>{"east", "west", "east", "west"}));
  // East is full (2): everything else goes west.
  ASSERT_TRUE(intents_->Put("p5", Spec()).ok());
  EXPECT_EQ(ClusterOf("p5"), "west");
  // Labels only west carries.
  Json us = Spec();
  us["placement"] = Json{{"labels", {{"region", "us"}}}};
  auto put = intents_->Put("p6", us);
  ASSERT_TRUE(put.ok());
  EXPECT_EQ(put->record.cluster, "west");
  // Labels no cluster carries: refused, nothing stored.
  Json eu = Spec();
  eu["placement"] = Json{{"labels", {{"region", "eu"}}}};
  auto none = intents_->Put("p7", eu);
  EXPECT_EQ(none.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(none.error().message(), HasSubstr("region=eu"));
  // Naming the full cluster is refused too: its capacity is a limit.
  Json full = Spec();
  full["cluster"] = "east";
  auto refused = intents_->Put("p8", full);
  EXPECT_EQ(refused.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.error().message(), HasSubstr("capacity"));
  // A record being deleted no longer counts: east has room again.
  ASSERT_TRUE(intents_->Delete("p1").ok());
  auto room = intents_->Put("p9", full);
  ASSERT_TRUE(room.ok()) << room.error().ToString();
  EXPECT_EQ(room->record.cluster, "east");
}

TEST_F(PlacementTest, RequiredLabelsOfTheConfigurationNarrowEveryPlacement) {
  PlacementPolicy policy;
  policy.required_labels = {{"region", "us"}};
  Build(0, policy);
  for (const char* name : {"p1", "p2", "p3"}) {
    ASSERT_TRUE(intents_->Put(name, Spec()).ok());
    EXPECT_EQ(ClusterOf(name), "west");
  }
  Json east = Spec();
  east["cluster"] = "east";
  auto refused = intents_->Put("p4", east);
  EXPECT_EQ(refused.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.error().message(), HasSubstr("lacks the labels region=us"));
}

TEST_F(PlacementTest, TeamAffinityKeepsATeamOnOneClusterWhileItHasRoom) {
  PlacementPolicy policy;
  policy.team_affinity = true;
  Build(/*east_capacity=*/3, policy);
  // Team a's first record goes to the least loaded (east); its others follow it, although
  // west is emptier, until east is full.
  std::vector<std::string> placed;
  for (const char* name : {"a1", "a2", "a3", "a4"}) {
    auto put = intents_->Put(name, Spec("team-a"));
    ASSERT_TRUE(put.ok()) << put.error().ToString();
    placed.push_back(put->record.cluster);
  }
  EXPECT_EQ(placed, (std::vector<std::string>{"east", "east", "east", "west"}));
  // Another team starts on the least loaded.
  ASSERT_TRUE(intents_->Put("b1", Spec("team-b")).ok());
  EXPECT_EQ(ClusterOf("b1"), "west");
}

TEST_F(PlacementTest, SuppliedCredentialsGoToThePlacedClustersVault) {
  Build();
  auto put = intents_->Put("alpha", SpecOn("west", true));
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  EXPECT_EQ(west_vault_.ids, std::vector<std::string>{put->record.id});
  EXPECT_TRUE(east_vault_.ids.empty());
}

TEST_F(PlacementTest, WithoutPlacementOnlyTheDefaultClusterIsKnown) {
  Intents one(*store_, nullptr);
  Json spec = Spec();
  spec["cluster"] = "default";
  auto put = one.Put("alpha", spec);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  EXPECT_EQ(put->record.cluster, "default");
  spec["cluster"] = "east";
  auto refused = one.Put("beta", spec);
  EXPECT_EQ(refused.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.error().message(), HasSubstr("spec.cluster"));
}

TEST_F(PlacementTest, AgentsArePlacedLikeProjects) {
  Build();
  Json spec = {{"team", "t1"},
               {"broker", "b1"},
               {"cluster", "west"},
               {"credentials", {{"token", "agent-token"}}}};
  auto put = intents_->PutAgent("mqtt-schema-agent-t1-b1", spec);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  EXPECT_EQ(put->record.cluster, "west");
  EXPECT_EQ(west_vault_.ids.size(), 1u);
}

// A move: the record's cluster changes with a new generation and a "move" line, the cluster it
// left is kept until its engine ends the move, the URL's host stays (pinned: west's domain
// differs), supplied credentials are copied from the old cluster's vault to the new one's.
TEST_F(PlacementTest, AMoveReplacesTheRecordsClusterKeepsItsHostAndCopiesItsCredentials) {
  Build();
  auto put = intents_->Put("alpha", SpecOn("east", true));
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  const std::string id = put->record.id;
  auto moved = intents_->Move("alpha", {"west", "", ""});
  ASSERT_TRUE(moved.ok()) << moved.error().ToString();
  EXPECT_EQ(moved->cluster, "west");
  EXPECT_EQ(moved->moving_from, "east");
  EXPECT_EQ(moved->move_order, "stopFirst");
  EXPECT_EQ(moved->generation, put->record.generation + 1);
  EXPECT_EQ(ParseJson(moved->spec_json)->value("url", ""), "http://alpha.east.example");
  ASSERT_EQ(west_vault_.ids, std::vector<std::string>{id});
  EXPECT_EQ(west_vault_.held[id].env, east_vault_.held[id].env);
  auto history = store_->ListHistory(id, 0, 0);
  ASSERT_TRUE(history.ok());
  EXPECT_EQ(history->back().summary, "move");
  EXPECT_EQ(*ParseJson(history->back().detail_json), (Json{{"from", "east"},
                                                           {"to", "west"},
                                                           {"order", "stopFirst"},
                                                           {"url", "http://alpha.east.example"}}));
  // The host stays claimed by alpha: no other project may take it on west.
  Json other = SpecOn("west");
  other["url"] = "http://alpha.east.example";
  EXPECT_EQ(intents_->Put("beta", other).error().code(), StatusCode::kAlreadyExists);
  // A rename waits for the move's end.
  EXPECT_EQ(intents_->Rename("alpha", "gamma").error().code(), StatusCode::kFailedPrecondition);
  // The cluster it is on: only the order of the move under way may change.
  auto same = intents_->Move("alpha", {"west", "", ""});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->version, moved->version);
  auto reordered = intents_->Move("alpha", {"west", "startFirst", ""});
  ASSERT_TRUE(reordered.ok()) << reordered.error().ToString();
  EXPECT_EQ(reordered->move_order, "startFirst");
  EXPECT_EQ(reordered->generation, moved->generation + 1);
  // Back to the cluster it left: the roles swap.
  auto back = intents_->Move("alpha", {"east", "", ""});
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  EXPECT_EQ(back->cluster, "east");
  EXPECT_EQ(back->moving_from, "west");
}

// A record on a cluster the configuration no longer lists moves without waiting for it: no
// engine would ever clear it.
TEST_F(PlacementTest, AMoveAwayFromAClusterNoLongerConfiguredWaitsForNothing) {
  Build();
  auto put = intents_->Put("alpha", SpecOn("east"));
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  ASSERT_TRUE(store_
                  ->MutateProject(put->record.id,
                                  [](store::ProjectRecord& r, const auto&, store::Mutation&) {
                                    r.cluster = "retired";
                                    return Status::Ok();
                                  })
                  .ok());
  auto moved = intents_->Move("alpha", {"west", "", ""});
  ASSERT_TRUE(moved.ok()) << moved.error().ToString();
  EXPECT_EQ(moved->cluster, "west");
  EXPECT_EQ(moved->moving_from, "");
  EXPECT_EQ(ParseJson(store_->ListHistory(put->record.id, 0, 0)->back().detail_json)
                ->value("unmanaged", false),
            true);
}

TEST_F(PlacementTest, AMoveIsRefusedWhenTheNewClusterIsFullOrTheCredentialsCannotBeRead) {
  Build(/*east_capacity=*/1);
  ASSERT_TRUE(intents_->Put("beta", SpecOn("east")).ok());
  auto put = intents_->Put("alpha", SpecOn("west", true));
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  auto full = intents_->Move("alpha", {"east", "", ""});
  EXPECT_EQ(full.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(full.error().message(), HasSubstr("cluster east is full"));
  // Room again, but west holds the credentials and does not answer: nothing is committed.
  ASSERT_TRUE(intents_->Delete("beta").ok());
  west_vault_.down = true;
  auto unread = intents_->Move("alpha", {"east", "", ""});
  EXPECT_EQ(unread.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(unread.error().message(), HasSubstr("on cluster west"));
  EXPECT_TRUE(east_vault_.ids.empty());  // nothing was copied
  auto rec = store_->GetProjectByName("alpha");
  EXPECT_EQ(rec->cluster, "west");
  EXPECT_EQ(rec->version, put->record.version);
  // Unknown clusters and values are refused naming the field.
  EXPECT_EQ(intents_->Move("alpha", {"mars", "", ""}).error().field(), "cluster");
  EXPECT_EQ(intents_->Move("alpha", {"east", "later", ""}).error().field(), "order");
  EXPECT_EQ(intents_->Move("alpha", {"east", "", "keep"}).error().field(), "storage");
}

}  // namespace
}  // namespace steward::engine
