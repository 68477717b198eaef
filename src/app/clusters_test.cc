// App with two embedded clusters (instant profile) in one process: each record runs on the
// cluster it is placed on and nowhere else, the API answers for each through its cluster, the
// metrics carry the cluster, and a restart adopts both with no write.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "app/app.h"
#include "app/clusters_fixture.h"
#include "cluster/embedded_cluster.h"
#include "cluster/profile/profile.h"
#include "common/json.h"
#include "engine/model/project.h"
#include "kube/test_support/embedded.h"
#include "local_postgres/local_postgres.h"
#include "net/http_client.h"
#include "test_support/eventually.h"

namespace steward::app {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST_F(ClustersTest, EachProjectRunsOnItsPlacedClusterOnly) {
  auto started = App::Start(TwoClusters());
  ASSERT_TRUE(started.ok()) << started.error().ToString();
  App& app = **started;
  EXPECT_THAT(app.cluster_names(), ElementsAre("east", "west"));
  cluster::EmbeddedCluster* east = app.embedded_cluster_of("east");
  cluster::EmbeddedCluster* west = app.embedded_cluster_of("west");
  ASSERT_NE(east, nullptr);
  ASSERT_NE(west, nullptr);
  EXPECT_NE(east->api_url(), west->api_url());
  EXPECT_NE(east->ca_pem(), west->ca_pem());
  EXPECT_TRUE(fs::is_directory(dir_ + "/data/clusters/east"));
  EXPECT_TRUE(fs::is_directory(dir_ + "/data/clusters/west"));
  EXPECT_EQ(app.engine_of("mars"), nullptr);

  // alpha names west; beta is placed by the policy (the least loaded: east).
  auto alpha = Call(app, "PUT", "/v1/projects/alpha",
                    R"({"spec": {"team": "t", "cluster": "west"}, "start": true})");
  ASSERT_TRUE(alpha.ok()) << alpha.error().ToString();
  ASSERT_EQ(alpha->status, 201) << alpha->body;
  auto beta = Call(app, "PUT", "/v1/projects/beta", R"({"spec": {"team": "t"}, "start": true})");
  ASSERT_TRUE(beta.ok());
  ASSERT_EQ(beta->status, 201) << beta->body;
  EXPECT_EQ(ParseJson(beta->body)->value("cluster", ""), "east") << beta->body;

  ASSERT_TRUE(test_support::Eventually(
      [&] { return Running(app, "alpha") && Running(app, "beta"); }, std::chrono::seconds(20)));
  // Each URL is on its own cluster's ingress listener.
  auto status_of = [&](const std::string& name) {
    return engine::ParseStoredStatus(app.store().GetProjectByName(name)->status_json);
  };
  EXPECT_EQ(status_of("alpha")->url,
            "http://alpha.localhost:" + std::to_string(west->ingress_port()) + "/");
  EXPECT_EQ(status_of("beta")->url,
            "http://beta.localhost:" + std::to_string(east->ingress_port()) + "/");
  // The objects exist on the placed cluster only.
  EXPECT_TRUE(HasDeployment(*west, "alpha"));
  EXPECT_FALSE(HasDeployment(*east, "alpha"));
  EXPECT_TRUE(HasDeployment(*east, "beta"));
  EXPECT_FALSE(HasDeployment(*west, "beta"));

  // The API shows the placement and filters by it.
  auto got = Call(app, "GET", "/v1/projects/alpha");
  ASSERT_TRUE(got.ok());
  Json alpha_json = *ParseJson(got->body);
  EXPECT_EQ(alpha_json["cluster"], "west");
  EXPECT_EQ(alpha_json["spec"]["cluster"], "west");
  EXPECT_EQ(alpha_json["status"]["cluster"], "west");
  auto listed = Call(app, "GET", "/v1/projects?cluster=east");
  ASSERT_TRUE(listed.ok());
  Json items = (*ParseJson(listed->body))["items"];
  ASSERT_EQ(items.size(), 1u) << listed->body;
  EXPECT_EQ(items[0]["name"], "beta");

  // A put naming another cluster does not move the project.
  auto moved =
      Call(app, "PUT", "/v1/projects/alpha", R"({"spec": {"team": "t", "cluster": "east"}})");
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->status, 409) << moved->body;
  EXPECT_THAT(moved->body, HasSubstr("is on cluster west"));
  // A put of the spec read back changes nothing.
  auto same = Call(app, "PUT", "/v1/projects/alpha",
                   Json{{"spec", alpha_json["spec"]}, {"start", true}}.dump());
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->status, 200) << same->body;
  EXPECT_EQ((*ParseJson(same->body))["generation"], alpha_json["generation"]);

  // FlowFuse's stack editor is offered the placement property (with one cluster it is not).
  auto stack = Call(app, "GET", "/v1/stack");
  ASSERT_TRUE(stack.ok());
  EXPECT_TRUE((*ParseJson(stack->body))["properties"].contains("placement")) << stack->body;

  // Instance operations reach the pods through the project's own cluster.
  auto info = Call(app, "GET", "/v1/projects/alpha/instance");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->status, 200) << info->body;

  // Metrics by cluster.
  const std::string metrics = app.metrics().Text();
  EXPECT_THAT(metrics, HasSubstr(R"(steward_reconciles_total{cluster="east",result="ok"})"));
  EXPECT_THAT(metrics, HasSubstr(R"(steward_reconciles_total{cluster="west",result="ok"})"));
  EXPECT_THAT(metrics, HasSubstr("steward_cluster_records{cluster=\"east\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("steward_cluster_records{cluster=\"west\"} 1\n"));
}

TEST_F(ClustersTest, ARestartAdoptsTheProjectsOfEveryClusterWithNoWrite) {
  ServeConfig config = TwoClusters();
  // The URLs name a port of their own: the ingress listeners take new ports at the restart, and
  // a project whose URL changed is rightly updated.
  for (ServeConfig::Cluster& c : config.clusters) c.engine.url_port = 8443;
  {
    auto started = App::Start(config);
    ASSERT_TRUE(started.ok()) << started.error().ToString();
    App& app = **started;
    for (const char* name : {"alpha", "beta", "gamma"}) {
      auto put = Call(app, "PUT", std::string("/v1/projects/") + name,
                      R"({"spec": {"team": "t"}, "start": true})");
      ASSERT_TRUE(put.ok());
      ASSERT_EQ(put->status, 201) << put->body;
    }
    ASSERT_TRUE(test_support::Eventually(
        [&] { return Running(app, "alpha") && Running(app, "beta") && Running(app, "gamma"); },
        std::chrono::seconds(20)));
    app.Stop();
  }
  auto again = App::Start(config);
  ASSERT_TRUE(again.ok()) << again.error().ToString();
  App& app = **again;
  // Every project gets a run on its cluster's engine; none of them writes to a cluster.
  engine::Engine& east = *app.engine_of("east");
  engine::Engine& west = *app.engine_of("west");
  ASSERT_TRUE(test_support::Eventually(
      [&] {
        return east.stats().reconciles + west.stats().reconciles >= 3 &&
               east.stats().queue_depth == 0 && west.stats().queue_depth == 0 &&
               east.stats().queue_processing == 0 && west.stats().queue_processing == 0;
      },
      std::chrono::seconds(20)));
  EXPECT_GE(east.stats().reconciles, 1u);
  EXPECT_GE(west.stats().reconciles, 1u);
  EXPECT_EQ(east.stats().writes, 0u);
  EXPECT_EQ(west.stats().writes, 0u);
  for (const char* name : {"alpha", "beta", "gamma"}) EXPECT_TRUE(Running(app, name)) << name;
}

// A cluster that stops answering: after its grace each of its projects says Unknown /
// ClusterUnreachable with what was last observed, the other cluster's projects go on (and new
// ones start there), and when it answers again its projects are Running again with no write.
TEST_F(ClustersTest, AClusterThatStopsAnsweringIsToldPerProjectAndAdoptedWhenItReturns) {
  // West is the test's own embedded cluster, reached through a kubeconfig as a real one is, so
  // that the test can stop it and start it again on the same port and state.
  cluster::EmbeddedCluster::Options wo;
  auto west = StartOutside("west", 7, &wo);
  ASSERT_NE(west, nullptr);

  ServeConfig config = EastAndOutsideWest();
  config.clusters[1].engine.url_port = 8443;  // the URL stays when west's ingress returns
  auto started = App::Start(config);
  ASSERT_TRUE(started.ok()) << started.error().ToString();
  App& app = **started;
  for (const auto& [name, cluster] : {std::pair{"alpha", "west"}, std::pair{"beta", "east"}}) {
    ASSERT_TRUE(CreateStarted(app, name, cluster));
  }
  ASSERT_TRUE(test_support::Eventually(
      [&] { return Running(app, "alpha") && Running(app, "beta"); }, std::chrono::seconds(20)));
  engine::Engine& west_engine = *app.engine_of("west");
  const uint64_t writes_before = west_engine.stats().writes;
  const int64_t running_since =
      engine::ParseStoredStatus(app.store().GetProjectByName("alpha")->status_json)->since_ms;

  west->Stop();
  const auto stopped = std::chrono::steady_clock::now();
  ASSERT_TRUE(test_support::Eventually(
      [&] { return app.store().GetProjectByName("alpha")->phase == "Unknown"; },
      std::chrono::seconds(20)));
  const double told_after =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
  EXPECT_GE(told_after, 1.0) << "before the grace";
  auto got = Call(app, "GET", "/v1/projects/alpha");
  ASSERT_TRUE(got.ok());
  Json status = (*ParseJson(got->body))["status"];
  EXPECT_EQ(status["phase"], "Unknown") << status.dump();
  EXPECT_EQ(status["reason"], "ClusterUnreachable");
  EXPECT_EQ(status["lastPhase"], "Running");
  EXPECT_EQ(status["lastPhaseSince"], running_since);
  EXPECT_EQ(status["cluster"], "west");
  EXPECT_THAT(status["message"].get<std::string>(), HasSubstr("cluster west has not answered"));
  EXPECT_GT(west_engine.stats().unreachable_since_ms, 0);
  EXPECT_THAT(app.metrics().Text(), HasSubstr("steward_cluster_reachable{cluster=\"west\"} 0\n"));
  EXPECT_THAT(app.metrics().Text(), HasSubstr("steward_cluster_reachable{cluster=\"east\"} 1\n"));
  // East goes on: its project is Running, and a new one starts there.
  EXPECT_TRUE(Running(app, "beta"));
  ASSERT_TRUE(CreateStarted(app, "gamma", "east"));
  EXPECT_TRUE(
      test_support::Eventually([&] { return Running(app, "gamma"); }, std::chrono::seconds(20)));

  // West answers again (same port, same state): alpha is observed Running again, adopted as it
  // stands.
  auto back = cluster::EmbeddedCluster::Start(wo);
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  ASSERT_TRUE(
      test_support::Eventually([&] { return Running(app, "alpha"); }, std::chrono::seconds(30)))
      << app.store().GetProjectByName("alpha")->status_json;
  EXPECT_EQ(west_engine.stats().unreachable_since_ms, 0);
  EXPECT_EQ(west_engine.stats().writes, writes_before) << "adoption wrote to the cluster";
  EXPECT_THAT(app.metrics().Text(), HasSubstr("steward_cluster_reachable{cluster=\"west\"} 1\n"));
  app.Stop();
}

// A run that was talking to the cluster when it went (here: a suspend sent just after) does not
// hold its project's telling back: once the cluster is declared unreachable its client retries
// nothing, so the run ends at its next failure (before, each of the run's requests spent its
// whole retry backoff first: the project said Deleting 9 s after the kill in the torture run
// that found it, 6 s past the grace). The informers go on probing, one attempt each; at the
// first answer the client retries again.
TEST_F(ClustersTest, WhileAClusterIsUnreachableItsClientRetriesNothing) {
  cluster::EmbeddedCluster::Options wo;
  auto west = StartOutside("west", 7, &wo);
  ASSERT_NE(west, nullptr);
  ServeConfig config = EastAndOutsideWest();
  auto started = StartWithRunning(config, "alpha", "west");
  ASSERT_NE(started, nullptr);
  App& app = *started;

  engine::Engine& west_engine = *app.engine_of("west");
  west->Stop();
  auto suspend = Call(app, "POST", "/v1/projects/alpha/suspend", "");
  ASSERT_TRUE(suspend.ok());
  ASSERT_EQ(suspend->status, 202) << suspend->body;
  ASSERT_TRUE(test_support::Eventually(
      [&] { return app.store().GetProjectByName("alpha")->phase == "Unknown"; },
      std::chrono::seconds(30)));
  // Declared unreachable: the informers' relists and watches go on, none of them retried.
  const engine::EngineStats down = west_engine.stats();
  ASSERT_TRUE(test_support::Eventually(
      [&] { return west_engine.stats().kube_requests >= down.kube_requests + 10; },
      std::chrono::seconds(30)));
  EXPECT_EQ(west_engine.stats().kube_retries, down.kube_retries);
  // It answers again: the suspend goes on to Suspended, and the client retries again.
  auto back = cluster::EmbeddedCluster::Start(wo);
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  ASSERT_TRUE(test_support::Eventually(
      [&] { return app.store().GetProjectByName("alpha")->phase == "Suspended"; },
      std::chrono::seconds(30)))
      << app.store().GetProjectByName("alpha")->status_json;
  app.Stop();
}

// Two replicas over two clusters keep their Leases in the shared store (replicas.leases
// defaults to store with several clusters): when the first cluster stops answering, the
// replicas go on renewing, its project says Unknown, and the other cluster's projects go on
// being run (a new one starts). With the Leases in the first cluster (as before), no replica
// could renew, every one stopped acting on every cluster, and the new project never started
// (the torture run with replicas found the first cluster's projects left in their last status).
// Then one replica stops during the outage: the other takes its shards at once.
TEST_F(ClustersTest,
       ReplicasKeepTheirLeasesInTheStoreSoTheFirstClustersLossStopsNoOtherNorAHandover) {
  auto server = LocalPostgres::Launch();
  ASSERT_TRUE(server.ok()) << server.error().ToString();
  ASSERT_TRUE((*server)->CreateDatabase("steward").ok());
  // Both clusters outside the apps (the replicas share them), reached by kubeconfig.
  std::vector<std::unique_ptr<cluster::EmbeddedCluster>> clusters;
  ServeConfig base;
  base.listen = "127.0.0.1:0";
  base.log_level = "warn";
  base.database = (*server)->Url("steward");
  base.replicas.enabled = true;
  base.replicas.shards = 8;
  base.replicas.lease_duration = std::chrono::seconds(2);
  base.replicas.renew_deadline = std::chrono::milliseconds(1500);
  base.replicas.retry_period = std::chrono::milliseconds(200);
  for (const char* name : {"west", "east"}) {
    auto started = StartOutside(name, clusters.size() + 3);
    ASSERT_NE(started, nullptr);
    ServeConfig::Cluster k;
    k.name = name;
    k.cluster = ClusterSource::kKubeconfig;
    k.kubeconfig = KubeconfigOf(name);
    k.engine.workers = 2;
    k.unreachable_grace = std::chrono::seconds(1);
    base.clusters.push_back(std::move(k));
    clusters.push_back(std::move(started));
  }
  std::vector<std::unique_ptr<App>> apps;
  for (const char* name : {"r0", "r1"}) {
    ServeConfig c = base;
    c.data_dir = dir_ + "/" + name;
    c.replicas.name = name;
    auto app = App::Start(c);
    ASSERT_TRUE(app.ok()) << app.error().ToString();
    apps.push_back(std::move(*app));
  }
  App& app = *apps[0];
  for (const auto& [name, cluster] : {std::pair{"alpha", "west"}, std::pair{"beta", "east"}}) {
    ASSERT_TRUE(CreateStarted(app, name, cluster));
  }
  ASSERT_TRUE(test_support::Eventually(
      [&] { return Running(app, "alpha") && Running(app, "beta"); }, std::chrono::seconds(30)));
  // No Lease in either cluster: they are in the store.
  for (auto& c : clusters) {
    auto leases = kube::test_support::ClientFor(*c)->List(kube::ResourceType::Lease(), "steward",
                                                          kube::ListOptions{});
    ASSERT_TRUE(leases.ok());
    EXPECT_TRUE(leases->items.empty());
  }
  EXPECT_EQ(app.store().ListLeases()->size(), 2u);

  clusters[0]->Stop();  // west, the first cluster
  ASSERT_TRUE(test_support::Eventually(
      [&] { return app.store().GetProjectByName("alpha")->phase == "Unknown"; },
      std::chrono::seconds(20)));
  // Both replicas go on renewing past the renew deadline (1.5 s: ten renewals of 200 ms)...
  auto version = [&](const char* replica) {
    auto lease = app.store().GetLease(std::string("steward-replica-") + replica);
    return lease.ok() ? lease->version : int64_t{0};
  };
  const int64_t r0 = version("r0"), r1 = version("r1");
  ASSERT_TRUE(
      test_support::Eventually([&] { return version("r0") >= r0 + 10 && version("r1") >= r1 + 10; },
                               std::chrono::seconds(20)));
  for (auto& a : apps) {
    const std::string metrics = a->metrics().Text();
    EXPECT_THAT(metrics, HasSubstr("steward_replica_lease_renewing 1\n"));
    EXPECT_THAT(metrics, HasSubstr("steward_replica_lease_renew_failures_total 0\n"));
  }
  // ... and act on the other cluster: a new project there starts.
  ASSERT_TRUE(CreateStarted(app, "gamma", "east"));
  EXPECT_TRUE(
      test_support::Eventually([&] { return Running(app, "gamma"); }, std::chrono::seconds(20)))
      << app.store().GetProjectByName("gamma")->status_json;
  for (auto& a : apps) {
    auto ready = Call(*a, "GET", "/readyz");
    ASSERT_TRUE(ready.ok());
    EXPECT_EQ(ready->status, 200) << ready->body;
  }

  // A handover during the outage: r1 goes, r0 takes its shards at once on both clusters (the
  // dead one's caches sync when it answers). Before, r0's swap waited the whole sync timeout
  // (60 s) for the dead cluster's informers, then dropped every shard on every cluster.
  apps[1]->Stop();
  ASSERT_TRUE(test_support::Eventually(
      [&] {
        return app.metrics().Text().find("steward_replica_shards_owned 8\n") != std::string::npos;
      },
      std::chrono::seconds(15)))
      << app.metrics().Text();
  ASSERT_TRUE(CreateStarted(app, "delta", "east"));
  EXPECT_TRUE(
      test_support::Eventually([&] { return Running(app, "delta"); }, std::chrono::seconds(20)))
      << app.store().GetProjectByName("delta")->status_json;
  // The shards stay r0's (no failed swap dropped them meanwhile), and west's project is still
  // told Unknown, not anything its empty caches would suggest.
  EXPECT_THAT(app.metrics().Text(), HasSubstr("steward_replica_shards_owned 8\n"));
  EXPECT_EQ(app.store().GetProjectByName("alpha")->phase, "Unknown");
  app.Stop();
}

// One of several clusters down when Steward starts holds up neither the start nor the other
// clusters: its projects say Unknown after the grace, and Running again once it answers (before,
// the start failed on its GET /version, and with that answered, on its informers' sync).
TEST_F(ClustersTest, AClusterDownAtStartHoldsUpNeitherTheStartNorTheOthers) {
  cluster::EmbeddedCluster::Options wo;
  auto west = StartOutside("west", 7, &wo);
  ASSERT_NE(west, nullptr);
  ServeConfig config = EastAndOutsideWest();
  config.clusters[1].engine.url_port = 8443;  // the URL stays when west's ingress returns
  {
    auto first = StartWithRunning(config, "alpha", "west");
    ASSERT_NE(first, nullptr);
    first->Stop();
  }
  west->Stop();

  auto started = App::Start(config);
  ASSERT_TRUE(started.ok()) << started.error().ToString();
  App& app = **started;
  ASSERT_TRUE(test_support::Eventually(
      [&] { return app.store().GetProjectByName("alpha")->phase == "Unknown"; },
      std::chrono::seconds(20)));
  EXPECT_EQ(engine::ParseStoredStatus(app.store().GetProjectByName("alpha")->status_json)->reason,
            "ClusterUnreachable");
  ASSERT_TRUE(CreateStarted(app, "beta", "east"));
  EXPECT_TRUE(
      test_support::Eventually([&] { return Running(app, "beta"); }, std::chrono::seconds(20)));

  // West answers (same port, same state): alpha is observed, and Running, again.
  auto back = cluster::EmbeddedCluster::Start(wo);
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  EXPECT_TRUE(
      test_support::Eventually([&] { return Running(app, "alpha"); }, std::chrono::seconds(30)))
      << app.store().GetProjectByName("alpha")->status_json;
  app.Stop();
}

TEST_F(ClustersTest, AnUnreadableKubeconfigOfOneClusterStopsTheStartNamingIt) {
  // The configuration decides: a kubeconfig that cannot be read stops the start naming that
  // cluster (one that cannot be reached does not: the test above).
  ServeConfig config = TwoClusters();
  config.clusters[1].cluster = ClusterSource::kKubeconfig;
  config.clusters[1].kubeconfig = dir_ + "/no-such-kubeconfig";
  auto started = App::Start(config);
  ASSERT_FALSE(started.ok());
  EXPECT_THAT(started.error().message(), HasSubstr("clusters.west.kubernetes: "));
}

}  // namespace
}  // namespace steward::app
