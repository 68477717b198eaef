// ClustersTest: the fixture of the tests of an App over several embedded clusters
// (clusters_test.cc, cluster_moves_test.cc): a temporary directory, the configuration of two
// embedded clusters, clusters started outside the app, and calls to the app's API.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "app/app.h"
#include "cluster/embedded_cluster.h"
#include "cluster/profile/profile.h"
#include "common/json.h"
#include "kube/test_support/embedded.h"
#include "net/http_client.h"
#include "test_support/eventually.h"

namespace steward::app {

inline uint16_t PortOf(const std::string& url) {
  return static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
}

class ClustersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "clusters-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Clusters east and west, both embedded (instant), on free loopback ports.
  ServeConfig TwoClusters() const {
    ServeConfig c;
    c.listen = "127.0.0.1:0";
    c.data_dir = dir_ + "/data";
    c.log_level = "warn";
    for (const char* name : {"east", "west"}) {
      ServeConfig::Cluster k;
      k.name = name;
      k.cluster = ClusterSource::kEmbedded;
      k.embedded_profile = "instant";
      k.seed = c.clusters.size() + 1;
      k.engine.workers = 2;
      k.labels = {{"zone", name}};
      c.clusters.push_back(std::move(k));
    }
    return c;
  }

  // An embedded cluster (instant) outside the apps, so that a test can stop it (and start it
  // again from `*options`, its ports filled in), with the namespace "steward"; its kubeconfig is
  // written to dir_/<name>.kubeconfig. Null (a failure recorded) when it cannot start.
  std::unique_ptr<cluster::EmbeddedCluster> StartOutside(
      const std::string& name, uint64_t seed,
      cluster::EmbeddedCluster::Options* options = nullptr) {
    cluster::EmbeddedCluster::Options o;
    o.profile = *cluster::LoadProfile("instant");
    o.data_dir = dir_ + "/" + name;
    o.seed = seed;
    auto started = cluster::EmbeddedCluster::Start(o);
    if (!started.ok()) {
      ADD_FAILURE() << started.error().ToString();
      return nullptr;
    }
    o.api_port = (*started)->api_port();
    o.ingress_port = (*started)->ingress_port();
    if (options != nullptr) *options = o;
    EXPECT_TRUE((*started)->WriteKubeconfig(KubeconfigOf(name)).ok());
    auto client = kube::test_support::ClientFor(**started);
    Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "steward"}}}};
    EXPECT_TRUE(client->Create(kube::ResourceType::Namespace(), "", ns).ok());
    return std::move(*started);
  }
  // TwoClusters with west reached by the kubeconfig StartOutside("west") wrote, and a grace of
  // 1 s on both (so that a test sees a cluster declared unreachable soon).
  ServeConfig EastAndOutsideWest() const {
    ServeConfig config = TwoClusters();
    for (ServeConfig::Cluster& c : config.clusters) c.unreachable_grace = std::chrono::seconds(1);
    config.clusters[1].cluster = ClusterSource::kKubeconfig;
    config.clusters[1].kubeconfig = KubeconfigOf("west");
    return config;
  }
  std::string KubeconfigOf(const std::string& name) const {
    return dir_ + "/" + name + ".kubeconfig";
  }

  static StatusOr<net::HttpResponse> Call(const App& app, const std::string& method,
                                          const std::string& target, const std::string& body = "") {
    net::HttpClient::Options o;
    o.port = PortOf(app.api_url());
    o.bearer_token = app.api_token();
    net::Headers headers;
    if (!body.empty()) headers.Set("Content-Type", "application/json");
    return net::HttpClient::Create(o)->Request(method, target, body, headers);
  }

  // PUT /v1/projects/<name> of team t placed on `cluster`, started: success when created (201).
  static ::testing::AssertionResult CreateStarted(const App& app, const std::string& name,
                                                  const std::string& cluster) {
    auto put = Call(app, "PUT", "/v1/projects/" + name,
                    Json{{"spec", {{"team", "t"}, {"cluster", cluster}}}, {"start", true}}.dump());
    if (!put.ok()) return ::testing::AssertionFailure() << put.error().ToString();
    if (put->status != 201) {
      return ::testing::AssertionFailure()
             << "PUT " << name << ": " << put->status << " " << put->body;
    }
    return ::testing::AssertionSuccess();
  }

  // App::Start(config) with `name` created on `cluster`, started and Running: the app, or null
  // (a failure recorded).
  static std::unique_ptr<App> StartWithRunning(const ServeConfig& config, const std::string& name,
                                               const std::string& cluster) {
    auto started = App::Start(config);
    if (!started.ok()) {
      ADD_FAILURE() << started.error().ToString();
      return nullptr;
    }
    if (!CreateStarted(**started, name, cluster)) {
      ADD_FAILURE() << "could not create " << name << " on " << cluster;
      return nullptr;
    }
    if (!test_support::Eventually([&] { return Running(**started, name); },
                                  std::chrono::seconds(20))) {
      ADD_FAILURE() << name << " is not Running: "
                    << (*started)->store().GetProjectByName(name)->status_json;
      return nullptr;
    }
    return std::move(*started);
  }

  // Whether the cluster's API server holds the Deployment named `name` in the namespace.
  static bool HasDeployment(cluster::EmbeddedCluster& cluster, const std::string& name) {
    auto client = kube::test_support::ClientFor(cluster);
    return client->Get(kube::ResourceType::Deployment(), "steward", name).ok();
  }

  static bool Running(App& app, const std::string& name) {
    auto r = app.store().GetProjectByName(name);
    return r.ok() && r->phase == "Running" && r->observed_generation == r->generation;
  }

  std::string dir_;
};

}  // namespace steward::app
