#include "cluster/ingress/endpoint_resolver.h"

#include <gtest/gtest.h>

#include <map>

#include "cluster/ingress/ingress_test_util.h"

namespace steward::cluster::ingress {
namespace {

using testing::Rt;
using testing::TestCluster;

class EndpointResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    resolver_ = testing::MakeEndpointResolver(cluster_);
    ASSERT_NE(resolver_, nullptr);
    a_ = cluster_.RunningPod("default", "pod-a", "10.244.0.1");
    b_ = cluster_.RunningPod("default", "pod-b", "10.244.0.2");
    c_ = cluster_.RunningPod("default", "pod-c", "10.244.0.3");
    cluster_.CreateService("default", "web",
                           {{{"name", "http"}, {"port", 80}, {"targetPort", "web"}},
                            {{"name", "management"}, {"port", 2880}}});
  }

  std::vector<Json> Ports() {
    return {{{"name", "http"}, {"port", 1880}, {"protocol", "TCP"}},
            {{"name", "management"}, {"port", 2880}, {"protocol", "TCP"}}};
  }

  TestCluster cluster_;
  std::unique_ptr<EndpointResolver> resolver_;
  Json a_, b_, c_;
};

TEST_F(EndpointResolverTest, RoundRobinOverReadyEndpointsOnly) {
  cluster_.CreateSlice("default", "web", "web-abc",
                       {TestCluster::Endpoint(a_, true), TestCluster::Endpoint(b_, nullptr),
                        TestCluster::Endpoint(c_, false)},
                       Ports());
  std::map<std::string, int> hits;
  for (int i = 0; i < 10; ++i) {
    auto ep = resolver_->Resolve("default", "web", ServicePortRef::Parse("80"));
    ASSERT_TRUE(ep.ok()) << ep.error().message;
    EXPECT_EQ(ep->port, 1880);
    EXPECT_EQ(ep->pod_namespace, "default");
    hits[ep->pod_name]++;
  }
  EXPECT_EQ(hits["pod-a"], 5);
  EXPECT_EQ(hits["pod-b"], 5);  // no condition means ready
  EXPECT_EQ(hits.count("pod-c"), 0u);
}

TEST_F(EndpointResolverTest, PortByNameOrNumberGivesTheTargetPort) {
  cluster_.CreateSlice("default", "web", "web-abc", {TestCluster::Endpoint(a_, true)}, Ports());
  auto by_name = resolver_->Resolve("default", "web", ServicePortRef::Parse("management"));
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(by_name->port, 2880);
  EXPECT_EQ(by_name->pod_name, "pod-a");
  EXPECT_EQ(by_name->pod_uid, a_["metadata"]["uid"]);
  EXPECT_EQ(by_name->address, "10.244.0.1");
  auto by_number = resolver_->Resolve("default", "web", ServicePortRef::Parse("2880"));
  ASSERT_TRUE(by_number.ok());
  EXPECT_EQ(by_number->port, 2880);
  auto http = resolver_->Resolve("default", "web", ServicePortRef::Parse("http"));
  ASSERT_TRUE(http.ok());
  EXPECT_EQ(http->port, 1880);
}

TEST_F(EndpointResolverTest, DistinctErrors) {
  auto none = resolver_->Resolve("default", "nope", ServicePortRef::Parse("80"));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().kind, ResolveError::Kind::kNoService);
  EXPECT_EQ(none.error().message, "services \"nope\" not found");
  // Same name, other namespace: not found either.
  EXPECT_EQ(resolver_->Resolve("other", "web", ServicePortRef::Parse("80")).error().kind,
            ResolveError::Kind::kNoService);

  auto bad_port = resolver_->Resolve("default", "web", ServicePortRef::Parse("81"));
  ASSERT_FALSE(bad_port.ok());
  EXPECT_EQ(bad_port.error().kind, ResolveError::Kind::kNoPort);
  EXPECT_EQ(bad_port.error().message, "no service port 81 found for service \"web\"");

  auto bad_name = resolver_->Resolve("default", "web", ServicePortRef::Parse("metrics"));
  EXPECT_EQ(bad_name.error().kind, ResolveError::Kind::kNoPort);
  // A multi-port Service has no unnamed port: as on a real API server, "" matches nothing.
  EXPECT_EQ(resolver_->Resolve("default", "web", ServicePortRef::Parse("")).error().kind,
            ResolveError::Kind::kNoPort);

  auto no_eps = resolver_->Resolve("default", "web", ServicePortRef::Parse("80"));
  ASSERT_FALSE(no_eps.ok());
  EXPECT_EQ(no_eps.error().kind, ResolveError::Kind::kNoEndpoints);
  EXPECT_EQ(no_eps.error().message, "no endpoints available for service \"web\"");

  cluster_.CreateSlice("default", "web", "web-abc", {TestCluster::Endpoint(a_, false)}, Ports());
  EXPECT_EQ(resolver_->Resolve("default", "web", ServicePortRef::Parse("80")).error().kind,
            ResolveError::Kind::kNoEndpoints);
}

TEST_F(EndpointResolverTest, FollowsSliceChangesAtOnce) {
  cluster_.CreateSlice("default", "web", "web-abc", {TestCluster::Endpoint(a_, false)}, Ports());
  EXPECT_FALSE(resolver_->Resolve("default", "web", ServicePortRef::Parse("80")).ok());
  cluster_.UpdateSlice("default", "web-abc", {TestCluster::Endpoint(a_, true)});
  auto ep = resolver_->Resolve("default", "web", ServicePortRef::Parse("80"));
  ASSERT_TRUE(ep.ok());
  EXPECT_EQ(ep->pod_name, "pod-a");

  // A second slice of the same Service adds its endpoints.
  cluster_.CreateSlice("default", "web", "web-def", {TestCluster::Endpoint(b_, true)}, Ports());
  std::map<std::string, int> hits;
  for (int i = 0; i < 4; ++i) {
    hits[resolver_->Resolve("default", "web", ServicePortRef::Parse("80"))->pod_name]++;
  }
  EXPECT_EQ(hits["pod-a"], 2);
  EXPECT_EQ(hits["pod-b"], 2);

  ASSERT_TRUE(
      cluster_.api().Delete(Rt("endpointslices.discovery.k8s.io"), "default", "web-abc").ok());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(resolver_->Resolve("default", "web", ServicePortRef::Parse("80"))->pod_name, "pod-b");
  }
  // Once the Service object is gone: "no such service".
  ASSERT_TRUE(cluster_.api().ForceRemove(Rt("services"), "default", "web", "").ok());
  EXPECT_EQ(resolver_->Resolve("default", "web", ServicePortRef::Parse("80")).error().kind,
            ResolveError::Kind::kNoService);
  EXPECT_FALSE(resolver_->HasService("default", "web"));
}

TEST_F(EndpointResolverTest, SingleUnnamedPort) {
  cluster_.CreateService("default", "plain", {{{"port", 8080}, {"targetPort", 1880}}});
  cluster_.CreateSlice("default", "plain", "plain-1", {TestCluster::Endpoint(a_, true)},
                       {{{"port", 1880}}});
  auto ep = resolver_->Resolve("default", "plain", ServicePortRef::Parse(""));
  ASSERT_TRUE(ep.ok());
  EXPECT_EQ(ep->port, 1880);
  EXPECT_TRUE(resolver_->Resolve("default", "plain", ServicePortRef::Parse("8080")).ok());
}

TEST_F(EndpointResolverTest, ExistingObjectsAreIndexedAtStart) {
  cluster_.CreateSlice("default", "web", "web-abc", {TestCluster::Endpoint(a_, true)}, Ports());
  auto fresh = EndpointResolver::Create(cluster_.storage());
  ASSERT_TRUE(fresh.ok());
  EXPECT_TRUE((*fresh)->Resolve("default", "web", ServicePortRef::Parse("80")).ok());
}

TEST(ServicePortRefTest, Parse) {
  EXPECT_EQ(ServicePortRef::Parse("80").number, 80);
  EXPECT_FALSE(ServicePortRef::Parse("web").number.has_value());
  EXPECT_EQ(ServicePortRef::Parse("web").name, "web");
  EXPECT_FALSE(ServicePortRef::Parse("").number.has_value());
  EXPECT_FALSE(ServicePortRef::Parse("80x").number.has_value());
}

}  // namespace
}  // namespace steward::cluster::ingress

namespace steward::cluster::ingress {
namespace {

TEST_F(EndpointResolverTest, RetriesPassOverPodsAlreadyTried) {
  cluster_.CreateSlice("default", "web", "web-abc",
                       {TestCluster::Endpoint(a_, true), TestCluster::Endpoint(b_, true),
                        TestCluster::Endpoint(c_, true)},
                       Ports());
  for (int i = 0; i < 6; ++i) {
    auto ep = resolver_->Resolve("default", "web", ServicePortRef::Parse("80"),
                                 {"default/pod-a", "default/pod-b"});
    ASSERT_TRUE(ep.ok());
    EXPECT_EQ(ep->pod_name, "pod-c");
  }
  // All tried: still an answer (the round-robin one).
  auto ep = resolver_->Resolve("default", "web", ServicePortRef::Parse("80"),
                               {"default/pod-a", "default/pod-b", "default/pod-c"});
  EXPECT_TRUE(ep.ok());
}

}  // namespace
}  // namespace steward::cluster::ingress
