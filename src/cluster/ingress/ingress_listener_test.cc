#include "cluster/ingress/ingress_listener.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include "cluster/ingress/ingress_test_util.h"
#include "net/http_client.h"

namespace steward::cluster::ingress {
namespace {

using testing::BodyJson;
using ::testing::HasSubstr;
using testing::HostRule;
using testing::PathRule;
using testing::Request;
using testing::Rt;
using testing::Rules;
using testing::TestCluster;

class IngressRouterTest : public testing::BackendFixture {
 protected:
  void SetUp() override {
    BackendFixture::SetUp();
    if (HasFatalFailure()) return;
    auto router = IngressRouter::Create(cluster_.storage(), *resolver_, *pods_);
    ASSERT_TRUE(router.ok());
    router_ = std::move(router).value();
  }

  // A Service `name` (port 80 "web" → 1880) with a slice listing `pods` (all ready).
  void Backend(const std::string& ns, const std::string& name, std::vector<Json> pods) {
    cluster_.CreateService(ns, name, {{{"name", "web"}, {"port", 80}, {"targetPort", "web"}}});
    std::vector<Json> eps;
    for (const Json& p : pods) eps.push_back(TestCluster::Endpoint(p, true));
    cluster_.CreateSlice(ns, name, name + "-1", eps, {{{"name", "web"}, {"port", 1880}}});
  }

  // "ns/name -> service" for a host and path, or "none".
  std::string MatchOf(std::string_view host, std::string_view path) {
    auto m = router_->Match(host, path);
    if (!m) return "none";
    return m->ingress_namespace + "/" + m->ingress_name + " -> " + m->service;
  }

  net::HttpResponse Get(std::string host, std::string path) {
    net::HttpRequest req = Request("GET", path, host);
    req.headers.Set("Accept", "application/json");
    return router_->Route(req);
  }

  std::unique_ptr<IngressRouter> router_;
};

TEST_F(IngressRouterTest, RoutesByHostAndLongestPrefix) {
  cluster_.CreateIngress("default", "site",
                         Rules({HostRule("a.example.com", {PathRule("/api", "Prefix", "api", 80),
                                                           PathRule("/", "Prefix", "web", 80)})}));
  cluster_.CreateIngress(
      "other", "wild",
      Rules({HostRule("*.example.com", {PathRule("/", "Prefix", "wild", "web")})}));

  EXPECT_EQ(MatchOf("a.example.com", "/api"), "default/site -> api");
  EXPECT_EQ(MatchOf("a.example.com", "/api/"), "default/site -> api");
  EXPECT_EQ(MatchOf("a.example.com", "/api/v1/x"), "default/site -> api");
  EXPECT_EQ(MatchOf("a.example.com", "/apix"), "default/site -> web");  // element-wise
  EXPECT_EQ(MatchOf("a.example.com", "/"), "default/site -> web");
  // Port stripped, case-insensitive.
  EXPECT_EQ(MatchOf("A.Example.COM:8080", "/api"), "default/site -> api");
  // Exact host rules win over the wildcard; the wildcard covers one label only.
  EXPECT_EQ(MatchOf("b.example.com", "/api"), "other/wild -> wild");
  EXPECT_EQ(MatchOf("a.b.example.com", "/"), "none");
  EXPECT_EQ(MatchOf("example.com", "/"), "none");
  EXPECT_EQ(MatchOf("unknown.test", "/"), "none");

  auto m = router_->Match("b.example.com", "/");
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->port.number.has_value());
  EXPECT_EQ(m->port.name, "web");
}

TEST_F(IngressRouterTest, ExactBeatsPrefixAndTrailingSlashIsIgnored) {
  cluster_.CreateIngress(
      "default", "paths",
      Rules({HostRule(
          "p.test",
          {PathRule("/foo", "Prefix", "prefix", 80), PathRule("/foo", "Exact", "exact", 80),
           PathRule("/bar/", "Prefix", "bar", 80), PathRule("/only", "Exact", "only", 80),
           PathRule("/impl", "ImplementationSpecific", "impl", 80)})}));
  EXPECT_EQ(MatchOf("p.test", "/foo"), "default/paths -> exact");
  EXPECT_EQ(MatchOf("p.test", "/foo/"), "default/paths -> prefix");
  EXPECT_EQ(MatchOf("p.test", "/foo/bar"), "default/paths -> prefix");
  EXPECT_EQ(MatchOf("p.test", "/bar"), "default/paths -> bar");
  EXPECT_EQ(MatchOf("p.test", "/bar/baz"), "default/paths -> bar");
  EXPECT_EQ(MatchOf("p.test", "/only"), "default/paths -> only");
  EXPECT_EQ(MatchOf("p.test", "/only/"), "none");
  EXPECT_EQ(MatchOf("p.test", "/impl/x"), "default/paths -> impl");
  EXPECT_EQ(MatchOf("p.test", "/other"), "none");
}

TEST_F(IngressRouterTest, DefaultBackends) {
  cluster_.CreateIngress(
      "default", "with-default",
      {{"defaultBackend", {{"service", {{"name", "fallback"}, {"port", {{"number", 80}}}}}}},
       {"rules", Json::array({HostRule("d.test", {PathRule("/app", "Prefix", "app", 80)})})}});
  EXPECT_EQ(MatchOf("d.test", "/app"), "default/with-default -> app");
  EXPECT_EQ(MatchOf("d.test", "/elsewhere"), "default/with-default -> fallback");
  EXPECT_EQ(MatchOf("nobody.test", "/"), "none");

  cluster_.CreateIngress(
      "other", "catch-all",
      {{"defaultBackend", {{"service", {{"name", "everything"}, {"port", {{"number", 80}}}}}}}});
  EXPECT_EQ(MatchOf("nobody.test", "/"), "other/catch-all -> everything");
  EXPECT_EQ(MatchOf("d.test", "/elsewhere"), "default/with-default -> fallback");

  // Rules without a host apply to every host that no rule names.
  cluster_.CreateIngress("default", "hostless",
                         Rules({HostRule("", {PathRule("/x", "Prefix", "any", 80)})}));
  EXPECT_EQ(MatchOf("nobody.test", "/x/y"), "default/hostless -> any");
  EXPECT_EQ(MatchOf("d.test", "/x"), "default/with-default -> fallback");
}

TEST_F(IngressRouterTest, IndexFollowsIngressChanges) {
  Json ing = cluster_.CreateIngress(
      "default", "site", Rules({HostRule("s.test", {PathRule("/", "Prefix", "v1", 80)})}));
  EXPECT_EQ(MatchOf("s.test", "/"), "default/site -> v1");
  ASSERT_TRUE(cluster_.api()
                  .Modify(Rt("ingresses.networking.k8s.io"), "default", "site",
                          [](Json& obj) {
                            obj["spec"]["rules"] = Json::array(
                                {HostRule("t.test", {PathRule("/", "Prefix", "v2", 80)})});
                            return true;
                          })
                  .ok());
  EXPECT_EQ(MatchOf("s.test", "/"), "none");
  EXPECT_EQ(MatchOf("t.test", "/"), "default/site -> v2");
  // A terminating Ingress (held by its finalizer) is no longer routed.
  ASSERT_TRUE(cluster_.api().Delete(Rt("ingresses.networking.k8s.io"), "default", "site").ok());
  ASSERT_TRUE(cluster_.api().Get(Rt("ingresses.networking.k8s.io"), "default", "site").ok());
  EXPECT_EQ(MatchOf("t.test", "/"), "none");
}

TEST_F(IngressRouterTest, RouteAnswers) {
  Json a = cluster_.RunningPod("default", "pod-a", "10.244.0.1");
  Json b = cluster_.RunningPod("default", "pod-b", "10.244.0.2");
  Backend("default", "web", {a, b});
  cluster_.CreateService("default", "empty", {{{"name", "web"}, {"port", 80}}});
  cluster_.CreateIngress(
      "default", "site",
      Rules({HostRule("site.test", {PathRule("/", "Prefix", "web", 80),
                                    PathRule("/empty", "Prefix", "empty", 80),
                                    PathRule("/missing", "Prefix", "missing", 80),
                                    PathRule("/badport", "Prefix", "web", 81)})}));

  net::HttpResponse none = Get("nowhere.test", "/");
  EXPECT_EQ(none.status, 404);
  EXPECT_EQ(none.body, "default backend - 404");
  EXPECT_FALSE(none.headers.Has("X-Steward-Ingress"));

  std::map<std::string, int> hits;
  for (int i = 0; i < 4; ++i) {
    net::HttpResponse r = Get("site.test", "/hello");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.headers.Get("X-Steward-Ingress"), "default/site");
    Json body = BodyJson(r);
    EXPECT_EQ(body["path"], "/hello");
    EXPECT_EQ(body["host"], "site.test");
    EXPECT_EQ(body["port"], 1880);
    EXPECT_EQ(body["headers"]["X-Forwarded-Host"], "site.test");
    EXPECT_EQ(body["headers"]["X-Forwarded-For"], "127.0.0.1");
    hits[std::string(r.headers.Get("X-Steward-Pod"))]++;
  }
  EXPECT_EQ(hits["default/pod-a"], 2);
  EXPECT_EQ(hits["default/pod-b"], 2);

  for (const char* path : {"/empty", "/missing", "/badport"}) {
    net::HttpResponse r = Get("site.test", path);
    EXPECT_EQ(r.status, 503) << path;
    EXPECT_THAT(r.body, HasSubstr("503 Service Temporarily Unavailable"));
    EXPECT_EQ(r.headers.Get("X-Steward-Ingress"), "default/site");
  }
}

TEST_F(IngressRouterTest, RefusingPodIsSkippedThenBadGateway) {
  Json a = cluster_.RunningPod("default", "pod-a", "10.244.0.1");
  Json b = cluster_.RunningPod("default", "pod-b", "10.244.0.2");
  Backend("default", "web", {a, b});
  cluster_.CreateIngress("default", "site",
                         Rules({HostRule("site.test", {PathRule("/", "Prefix", "web", 80)})}));
  // The slice still says ready, but pod-b no longer is (the endpoints controller lags).
  cluster_.SetPodStatus("default", "pod-b", "Running", false, "10.244.0.2");
  for (int i = 0; i < 4; ++i) {
    net::HttpResponse r = Get("site.test", "/");
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(r.headers.Get("X-Steward-Pod"), "default/pod-a");
  }
  cluster_.SetPodStatus("default", "pod-a", "Running", false, "10.244.0.1");
  net::HttpResponse r = Get("site.test", "/");
  EXPECT_EQ(r.status, 502);
  EXPECT_EQ(r.headers.Get("X-Steward-Ingress"), "default/site");
  // A pod replaced under the same name (new uid) is not the endpoint's pod.
  ASSERT_TRUE(cluster_.api().ForceRemove(Rt("pods"), "default", "pod-a", "").ok());
  cluster_.RunningPod("default", "pod-a", "10.244.0.9");
  EXPECT_EQ(Get("site.test", "/").status, 502);
}

TEST_F(IngressRouterTest, ListenerServesOverHttp) {
  Json a = cluster_.RunningPod("default", "pod-a", "10.244.0.1");
  Backend("default", "web", {a});
  cluster_.CreateIngress("default", "site",
                         Rules({HostRule("site.test", {PathRule("/", "Prefix", "web", 80)})}));
  auto listener = IngressListener::Start(*router_, {});
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  ASSERT_NE((*listener)->port(), 0);

  net::HttpClient::Options opts;
  opts.port = (*listener)->port();
  auto client = net::HttpClient::Create(opts);
  net::Headers headers;
  headers.Set("Host", "site.test:" + std::to_string(opts.port));
  headers.Set("Accept", "application/json");
  auto r = client->Request("GET", "/dashboard?x=1", "", headers);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->headers.Get("X-Steward-Ingress"), "default/site");
  EXPECT_EQ(r->headers.Get("X-Steward-Pod"), "default/pod-a");
  Json body = BodyJson(*r);
  EXPECT_EQ(body["path"], "/dashboard");

  net::Headers other;
  other.Set("Host", "nothing.test");
  auto miss = client->Request("GET", "/", "", other);
  ASSERT_TRUE(miss.ok());
  EXPECT_EQ(miss->status, 404);
  EXPECT_EQ(miss->body, "default backend - 404");
  (*listener)->Stop();
}

}  // namespace
}  // namespace steward::cluster::ingress

namespace steward::cluster::ingress {
namespace {

TEST_F(IngressRouterTest, ConcurrentRoutingWhileObjectsChange) {
  Json a = cluster_.RunningPod("default", "pod-a", "10.244.0.1");
  Json b = cluster_.RunningPod("default", "pod-b", "10.244.0.2");
  Backend("default", "web", {a, b});
  cluster_.CreateIngress("default", "site",
                         Rules({HostRule("site.test", {PathRule("/", "Prefix", "web", 80)})}));
  constexpr int kThreads = 4;
  constexpr int kPerThread = 2000;
  std::atomic<int> ok{0};
  std::atomic<int> unexpected{0};
  std::vector<std::thread> threads;
  auto started = std::chrono::steady_clock::now();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        net::HttpResponse r = router_->Route(Request("GET", "/x", "site.test"));
        std::string pod(r.headers.Get("X-Steward-Pod"));
        if (r.status == 200 && (pod == "default/pod-a" || pod == "default/pod-b")) {
          ok++;
        } else if (r.status != 502 && r.status != 503 && r.status != 404) {
          unexpected++;
        }
      }
    });
  }
  // Meanwhile: readiness flaps, the slice changes, the Ingress is rewritten.
  for (int i = 0; i < 50; ++i) {
    cluster_.SetPodStatus("default", "pod-b", "Running", i % 2 == 0, "10.244.0.2");
    cluster_.UpdateSlice("default", "web-1",
                         {TestCluster::Endpoint(a, true), TestCluster::Endpoint(b, i % 3 != 0)});
    ASSERT_TRUE(cluster_.api()
                    .Modify(Rt("ingresses.networking.k8s.io"), "default", "site",
                            [&](Json& obj) {
                              obj["metadata"]["annotations"]["flap"] = std::to_string(i);
                              return true;
                            })
                    .ok());
  }
  for (auto& t : threads) t.join();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  RecordProperty("routes_per_second", static_cast<int>(kThreads * kPerThread / secs));
  EXPECT_EQ(unexpected.load(), 0);
  // pod-a is always ready and listed: nginx-style retries mean every request is served.
  EXPECT_EQ(ok.load(), kThreads * kPerThread);
}

}  // namespace
}  // namespace steward::cluster::ingress
