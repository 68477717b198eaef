// Moves between clusters (POST /v1/projects/{p}/move): the project starts on the new cluster
// and everything of it goes from the old one, in the order asked for; a project with storage
// moves only when told what becomes of its data; the URL's host is kept; a move away from a
// cluster that does not answer runs on the new one at once (startFirst), and the old one is
// cleared when it answers again.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "app/clusters_fixture.h"
#include "engine/model/project.h"
#include "test_support/eventually.h"

namespace steward::app {
namespace {

using ::testing::HasSubstr;

// Objects of project `id` (by its label) on the cluster: Deployments, Services, Ingresses,
// Secrets, claims and pods. -1 when the cluster cannot be asked.
int ObjectsOf(cluster::EmbeddedCluster& cluster, const std::string& id) {
  auto client = kube::test_support::ClientFor(cluster);
  kube::ListOptions o;
  o.label_selector = "steward.io/project=" + id;
  int n = 0;
  for (const kube::ResourceType* type :
       {&kube::ResourceType::Deployment(), &kube::ResourceType::Service(),
        &kube::ResourceType::Ingress(), &kube::ResourceType::Secret(),
        &kube::ResourceType::PersistentVolumeClaim(), &kube::ResourceType::Pod()}) {
    auto listed = client->List(*type, "steward", o);
    if (!listed.ok()) return -1;
    n += static_cast<int>(listed->items.size());
  }
  return n;
}

// The summaries of the project's history lines of these kinds, oldest first.
std::vector<std::string> HistoryOf(App& app, const std::string& id) {
  std::vector<std::string> out;
  auto listed = app.store().ListHistory(id, 0, 0);
  if (!listed.ok()) return out;
  for (const auto& h : *listed) {
    if (h.kind == "operation" || h.kind == "phase" || h.kind == "move") {
      out.push_back(h.kind + ":" + h.summary);
    }
  }
  return out;
}

// The position of the first line at or after `from` that starts with `prefix`; -1 when none.
int Find(const std::vector<std::string>& lines, const std::string& prefix, int from = 0) {
  for (int i = from; i < static_cast<int>(lines.size()); ++i) {
    if (lines[i].rfind(prefix, 0) == 0) return i;
  }
  return -1;
}

bool MoveOver(App& app, const std::string& name) {
  auto r = app.store().GetProjectByName(name);
  return r.ok() && r->moving_from.empty() && r->phase == "Running" &&
         r->observed_generation == r->generation;
}

TEST_F(ClustersTest, AMoveStopsFirstThenStartsOnTheNewClusterKeepsTheHostAndLeavesNothing) {
  ServeConfig config = TwoClusters();
  config.clusters[1].engine.domain = "west.localhost";  // west would give another host
  auto started = App::Start(config);
  ASSERT_TRUE(started.ok()) << started.error().ToString();
  App& app = **started;
  cluster::EmbeddedCluster* east = app.embedded_cluster_of("east");
  cluster::EmbeddedCluster* west = app.embedded_cluster_of("west");
  auto put = Call(app, "PUT", "/v1/projects/alpha",
                  R"({"spec": {"team": "t", "cluster": "east", "storage": {"size": "1Gi"}},
                      "start": true})");
  ASSERT_TRUE(put.ok());
  ASSERT_EQ(put->status, 201) << put->body;
  ASSERT_TRUE(
      test_support::Eventually([&] { return Running(app, "alpha"); }, std::chrono::seconds(20)));
  const store::ProjectRecord before = *app.store().GetProjectByName("alpha");
  ASSERT_GT(ObjectsOf(*east, before.id), 0);

  // Refused, with nothing changed: what the body must say, and storage without "drop".
  const std::string move = "/v1/projects/alpha/move";
  for (const auto& [body, status, says] : std::vector<std::tuple<std::string, int, std::string>>{
           {R"({})", 400, "cluster"},
           {R"({"cluster": "mars"})", 400, "is configured (known: east, west)"},
           {R"({"cluster": "west", "order": "sideways"})", 400, "order"},
           {R"({"cluster": "west", "storage": "keep"})", 400, "storage"},
           {R"({"cluster": "west", "x": 1})", 400, "x"},
           {R"({"cluster": 7})", 400, "cluster"},
           {R"({"cluster": "west"})", 409, "volumes do not cross clusters"},
       }) {
    auto refused = Call(app, "POST", move, body);
    ASSERT_TRUE(refused.ok());
    EXPECT_EQ(refused->status, status) << body << ": " << refused->body;
    EXPECT_THAT(refused->body, HasSubstr(says)) << body;
  }
  auto agent = Call(app, "POST", "/v1/projects/no-such/move", R"({"cluster": "west"})");
  ASSERT_TRUE(agent.ok());
  EXPECT_EQ(agent->status, 404) << agent->body;
  // The cluster it is on: nothing to do (accepted as a start of a running project is).
  auto same = Call(app, "POST", move, R"({"cluster": "east"})");
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->status, 202) << same->body;
  EXPECT_EQ(app.store().GetProjectByName("alpha")->generation, before.generation);

  // East's Deployment is held (a finalizer of someone else's), so that the move cannot end
  // before the test lets it.
  auto east_client = kube::test_support::ClientFor(*east);
  const kube::ResourceType& deployments = kube::ResourceType::Deployment();
  ASSERT_TRUE(east_client
                  ->Patch(deployments, "steward", "alpha", kube::PatchType::kMerge,
                          R"({"metadata": {"finalizers": ["test.steward.io/hold"]}})", {})
                  .ok());
  auto moved = Call(app, "POST", move, R"({"cluster": "west", "storage": "drop"})");
  ASSERT_TRUE(moved.ok());
  ASSERT_EQ(moved->status, 202) << moved->body;
  Json answer = *ParseJson(moved->body);
  EXPECT_EQ(answer["cluster"], "west");
  EXPECT_EQ(answer["move"], (Json{{"from", "east"}, {"order", "stopFirst"}}));
  EXPECT_EQ(answer["generation"], before.generation + 1);
  // The host is kept (west's domain would give alpha.west.localhost), on west's ingress port.
  const std::string url = "http://alpha.localhost:" + std::to_string(west->ingress_port());
  EXPECT_EQ(answer["spec"]["url"], url);

  // Stop first: west waits for east, and has nothing of the project meanwhile.
  auto status = [&] {
    return engine::ParseStoredStatus(app.store().GetProjectByName("alpha")->status_json);
  };
  ASSERT_TRUE(test_support::Eventually(
      [&] {
        auto s = status();
        return s && s->reason == "MoveUnderWay" && s->observed_generation == before.generation + 1;
      },
      std::chrono::seconds(20)))
      << app.store().GetProjectByName("alpha")->status_json;
  EXPECT_EQ(status()->phase, engine::Phase::kPending);
  EXPECT_THAT(status()->message, HasSubstr("waiting for cluster east"));
  EXPECT_EQ(ObjectsOf(*west, before.id), 0);
  EXPECT_EQ(app.store().GetProjectByName("alpha")->moving_from, "east");
  // Let go: the rest of east goes, then west starts it. The garbage collector may drop its own
  // finalizer meanwhile: the patch names the version it read (409, read again, when it moved).
  auto release = [&] {
    auto held = east_client->Get(deployments, "steward", "alpha");
    if (!held.ok()) return false;
    Json finalizers = Json::array();
    for (const Json& f : (*held)["metadata"]["finalizers"]) {
      if (f != "test.steward.io/hold") finalizers.push_back(f);
    }
    const Json patch = {{"metadata",
                         {{"finalizers", finalizers},
                          {"resourceVersion", (*held)["metadata"]["resourceVersion"]}}}};
    return east_client
        ->Patch(deployments, "steward", "alpha", kube::PatchType::kMerge, patch.dump(), {})
        .ok();
  };
  ASSERT_TRUE(test_support::Eventually(release, std::chrono::seconds(10)));
  ASSERT_TRUE(
      test_support::Eventually([&] { return MoveOver(app, "alpha"); }, std::chrono::seconds(30)))
      << app.store().GetProjectByName("alpha")->status_json;
  EXPECT_EQ(ObjectsOf(*east, before.id), 0);  // the claim too: its data is dropped
  EXPECT_TRUE(HasDeployment(*west, "alpha"));
  auto claim = kube::test_support::ClientFor(*west)->Get(
      kube::ResourceType::PersistentVolumeClaim(), "steward", before.id + "-pvc");
  EXPECT_TRUE(claim.ok());
  EXPECT_EQ(engine::ParseStoredStatus(app.store().GetProjectByName("alpha")->status_json)->url,
            url + "/");
  auto got = Call(app, "GET", "/v1/projects/alpha");
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(ParseJson(got->body)->contains("move")) << got->body;

  // The history shows each step: accepted, waiting, east cleared, Running on west.
  const std::vector<std::string> history = HistoryOf(app, before.id);
  const int accepted = Find(history, "operation:move");
  const int gone = Find(history, "move:moved: nothing left on cluster east");
  ASSERT_GE(accepted, 0) << testing::PrintToString(history);
  EXPECT_GT(Find(history, "phase:Pending", accepted), accepted) << testing::PrintToString(history);
  ASSERT_GT(gone, Find(history, "phase:Pending", accepted)) << testing::PrintToString(history);
  EXPECT_GT(Find(history, "phase:Running", gone), gone) << testing::PrintToString(history);
  app.Stop();
}

// Start first away from a cluster that does not answer: the project runs on the new cluster at
// once, the move stays under way (the old cluster may still have its objects), and ends once
// the old cluster answers and has nothing of it left.
TEST_F(ClustersTest, AMoveAwayFromAClusterThatIsDownRunsAtOnceAndClearsTheOldOneWhenItAnswers) {
  cluster::EmbeddedCluster::Options wo;
  auto west = StartOutside("west", 9, &wo);
  ASSERT_NE(west, nullptr);
  ServeConfig config = EastAndOutsideWest();
  auto started = StartWithRunning(config, "alpha", "west");
  ASSERT_NE(started, nullptr);
  App& app = *started;
  const std::string id = app.store().GetProjectByName("alpha")->id;
  ASSERT_GT(ObjectsOf(*west, id), 0);

  west->Stop();
  ASSERT_TRUE(test_support::Eventually(
      [&] { return app.store().GetProjectByName("alpha")->phase == "Unknown"; },
      std::chrono::seconds(20)));
  auto moved =
      Call(app, "POST", "/v1/projects/alpha/move", R"({"cluster": "east", "order": "startFirst"})");
  ASSERT_TRUE(moved.ok());
  ASSERT_EQ(moved->status, 202) << moved->body;
  ASSERT_TRUE(
      test_support::Eventually([&] { return Running(app, "alpha"); }, std::chrono::seconds(20)))
      << app.store().GetProjectByName("alpha")->status_json;
  EXPECT_EQ(app.store().GetProjectByName("alpha")->moving_from, "west");
  EXPECT_TRUE(HasDeployment(*app.embedded_cluster_of("east"), "alpha"));
  // The cluster it is on again, without an order: nothing changes.
  const int64_t generation = app.store().GetProjectByName("alpha")->generation;
  auto other = Call(app, "POST", "/v1/projects/alpha/move", R"({"cluster": "east"})");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->status, 202) << other->body;
  EXPECT_EQ(ParseJson(other->body)->value("generation", int64_t{0}), generation);

  auto back = cluster::EmbeddedCluster::Start(wo);
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  EXPECT_TRUE(
      test_support::Eventually([&] { return MoveOver(app, "alpha"); }, std::chrono::seconds(30)))
      << app.store().GetProjectByName("alpha")->moving_from;
  EXPECT_EQ(ObjectsOf(**back, id), 0);
  EXPECT_TRUE(HasDeployment(*app.embedded_cluster_of("east"), "alpha"));
  const std::vector<std::string> history = HistoryOf(app, id);
  const int accepted = Find(history, "operation:move");
  ASSERT_GE(accepted, 0);
  // Start first: Running on east before west was cleared.
  EXPECT_LT(Find(history, "phase:Running", accepted),
            Find(history, "move:moved: nothing left on cluster west"))
      << testing::PrintToString(history);
  app.Stop();
}

}  // namespace
}  // namespace steward::app
