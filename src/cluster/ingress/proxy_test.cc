#include "cluster/ingress/proxy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster/ingress/ingress_test_util.h"

namespace steward::cluster::ingress {
namespace {

using testing::BodyJson;
using ::testing::HasSubstr;
using testing::Request;
using testing::Rt;
using testing::TestCluster;

class ProxyTest : public testing::BackendFixture {
 protected:
  void SetUp() override {
    BackendFixture::SetUp();
    if (HasFatalFailure()) return;
    proxy_ = std::make_unique<Proxy>(cluster_.storage(), *resolver_, *pods_);

    pod_ = cluster_.RunningPod("default", "proj-a", "10.244.0.4",
                               Json::array({{{"name", "FORGE_PROJECT_ID"}, {"value", "p-1"}}}));
    cluster_.CreateService("default", "proj-a",
                           {{{"name", "web"}, {"port", 1880}, {"targetPort", "web"}},
                            {{"name", "management"}, {"port", 2880}}});
    cluster_.CreateSlice(
        "default", "proj-a", "proj-a-x", {TestCluster::Endpoint(pod_, true)},
        {{{"name", "web"}, {"port", 1880}}, {{"name", "management"}, {"port", 2880}}});
  }

  // The original request as the REST handler received it.
  static net::HttpRequest Original(std::string method, std::string target, std::string body = "") {
    net::HttpRequest r =
        Request(std::move(method), std::move(target), "127.0.0.1:6443", std::move(body));
    r.headers.Set("Authorization", "Bearer secret-token");
    return r;
  }

  static void ExpectStatus(const net::HttpResponse& r, int code, std::string_view reason,
                           std::string_view message) {
    EXPECT_EQ(r.status, code);
    Json st = BodyJson(r);
    EXPECT_EQ(st["kind"], "Status");
    EXPECT_EQ(st["status"], "Failure");
    EXPECT_EQ(st["code"], code);
    EXPECT_EQ(st["reason"], reason);
    EXPECT_EQ(st["message"], message);
  }

  std::unique_ptr<Proxy> proxy_;
  Json pod_;
};

TEST_F(ProxyTest, ServiceByPortNameNumberAndScheme) {
  const std::string base = "/api/v1/namespaces/default/services/";
  for (const char* id :
       {"proj-a:management", "proj-a:2880", "http:proj-a:2880", "https:proj-a:management"}) {
    net::HttpResponse r = proxy_->ProxyToService(
        "default", id, "/flowforge/info", Original("GET", base + id + "/proxy/flowforge/info"));
    ASSERT_EQ(r.status, 200) << id << " " << r.body;
    EXPECT_EQ(BodyJson(r)["id"], "p-1") << id;
    EXPECT_EQ(r.headers.Get("X-Steward-Pod"), "default/proj-a");
  }
  // POST bodies reach the pod.
  net::HttpResponse stop = proxy_->ProxyToService(
      "default", "proj-a:management", "/flowforge/command",
      Original("POST", base + "proj-a:management/proxy/flowforge/command", R"({"cmd":"stop"})"));
  EXPECT_EQ(stop.status, 200);
  net::HttpResponse info =
      proxy_->ProxyToService("default", "proj-a:2880", "/flowforge/info",
                             Original("GET", base + "proj-a:2880/proxy/flowforge/info"));
  EXPECT_EQ(BodyJson(info)["state"], "stopped");

  // Web port, query string passed on.
  net::HttpRequest web = Original("GET", base + "proj-a:web/proxy/some/page?q=1");
  web.headers.Set("Accept", "application/json");
  pods_->Forget(pod_["metadata"]["uid"].get<std::string>());  // a fresh, running launcher
  net::HttpResponse page = proxy_->ProxyToService("default", "proj-a:web", "/some/page", web);
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_EQ(BodyJson(page)["path"], "/some/page");
  EXPECT_EQ(BodyJson(page)["target"], "/some/page?q=1");
  EXPECT_EQ(BodyJson(page)["port"], 1880);
  // What the client escaped stays escaped in the target a process pod receives on the wire:
  // a CR LF cannot end the request line, a '?' cannot start a query.
  net::HttpRequest injected =
      Original("GET", base + "proj-a:web/proxy/a%20b%0D%0AX-Injected:%201%3Fx?q=2");
  injected.headers.Set("Accept", "application/json");
  net::HttpResponse escaped =
      proxy_->ProxyToService("default", "proj-a:web", "/a b\r\nX-Injected: 1?x", injected);
  ASSERT_EQ(escaped.status, 200) << escaped.body;
  EXPECT_EQ(BodyJson(escaped)["target"], "/a%20b%0D%0AX-Injected%3A%201%3Fx?q=2");
  // The API server consumes the credentials; the pod never sees them.
  EXPECT_TRUE(BodyJson(page)["headers"].contains("Accept"));
  EXPECT_FALSE(BodyJson(page)["headers"].contains("Authorization"));
}

TEST_F(ProxyTest, ServiceErrors) {
  auto call = [&](std::string_view ns, std::string_view id) {
    return proxy_->ProxyToService(ns, id, "/", Original("GET", "/x/proxy/"));
  };
  ExpectStatus(call("default", "missing:80"), 404, "NotFound", "services \"missing\" not found");
  ExpectStatus(call("other", "proj-a"), 404, "NotFound", "services \"proj-a\" not found");
  ExpectStatus(call("default", "proj-a:81"), 503, "ServiceUnavailable",
               "no service port 81 found for service \"proj-a\"");
  // Both ports are named: no port in the id matches none (as on a real API server).
  ExpectStatus(call("default", "proj-a"), 503, "ServiceUnavailable",
               "no endpoints available for service \"proj-a\"");
  ExpectStatus(call("default", "a:b:c:d"), 400, "BadRequest",
               "invalid service request \"a:b:c:d\"");
  ExpectStatus(call("default", "ftp:proj-a:80"), 400, "BadRequest",
               "invalid service request \"ftp:proj-a:80\"");

  cluster_.CreateService("default", "idle", {{{"name", "web"}, {"port", 80}}});
  ExpectStatus(call("default", "idle:web"), 503, "ServiceUnavailable",
               "no endpoints available for service \"idle\"");

  // The endpoint is listed ready but the pod no longer answers.
  cluster_.SetPodStatus("default", "proj-a", "Running", false, "10.244.0.4");
  ExpectStatus(call("default", "proj-a:web"), 503, "ServiceUnavailable",
               "error trying to reach service: dial tcp 10.244.0.4:1880: connect: connection "
               "refused");
}

// A rollout's moment between a pod's deletion and the endpoints controller dropping it: the
// slice still lists the old pod ready, the new one answers. A real container would still be
// serving then; the virtual one has stopped, so the proxy must pass over it.
TEST_F(ProxyTest, AServiceEndpointWhosePodStoppedIsPassedOverForOneThatAnswers) {
  Json old_pod = cluster_.RunningPod("default", "agent-old", "10.244.0.1");
  Json new_pod = cluster_.RunningPod("default", "agent-new", "10.244.0.2");
  cluster_.CreateService("default", "agent", {{{"name", "api"}, {"port", 3500}}});
  cluster_.CreateSlice("default", "agent", "agent-x",
                       {TestCluster::Endpoint(old_pod, true), TestCluster::Endpoint(new_pod, true)},
                       {{{"name", "api"}, {"port", 2880}}});
  // Marked for deletion (a finalizer keeps it terminating), the slice not yet updated.
  ASSERT_TRUE(cluster_.api()
                  .Modify(Rt("pods"), "default", "agent-old",
                          [](Json& pod) {
                            pod["metadata"]["finalizers"] = Json::array({"test.steward.io/hold"});
                            return true;
                          })
                  .ok());
  auto deleted = cluster_.api().Delete(Rt("pods"), "default", "agent-old");
  ASSERT_TRUE(deleted.ok());
  ASSERT_TRUE((*deleted)["metadata"].contains("deletionTimestamp"));
  for (int i = 0; i < 4; ++i) {  // the round robin starts at each endpoint in turn
    net::HttpResponse r = proxy_->ProxyToService("default", "agent:api", "/flowforge/info",
                                                 Original("GET", "/x/proxy/flowforge/info"));
    ASSERT_EQ(r.status, 200) << i << " " << r.body;
    EXPECT_EQ(r.headers.Get("X-Steward-Pod"), "default/agent-new") << i;
  }
  // Neither answers: 503, naming one of them.
  cluster_.SetPodStatus("default", "agent-new", "Running", false, "10.244.0.2");
  net::HttpResponse r = proxy_->ProxyToService("default", "agent:api", "/flowforge/info",
                                               Original("GET", "/x/proxy/flowforge/info"));
  EXPECT_EQ(r.status, 503);
  EXPECT_THAT(BodyJson(r)["message"].get<std::string>(),
              ::testing::MatchesRegex("error trying to reach service: dial tcp "
                                      "10\\.244\\.0\\.[12]:2880: connect: connection refused"));
}

TEST_F(ProxyTest, EmptyPathRedirectsGetToTrailingSlash) {
  net::HttpResponse r = proxy_->ProxyToService(
      "default", "proj-a:web", "",
      Original("GET", "/api/v1/namespaces/default/services/proj-a:web/proxy?a=b"));
  EXPECT_EQ(r.status, 301);
  EXPECT_EQ(r.headers.Get("Location"), "/api/v1/namespaces/default/services/proj-a:web/proxy/?a=b");
  // Other methods go to "/".
  net::HttpResponse post = proxy_->ProxyToService(
      "default", "proj-a:web", "",
      Original("POST", "/api/v1/namespaces/default/services/proj-a:web/proxy"));
  EXPECT_EQ(post.status, 200);
  // Errors come before the redirect.
  EXPECT_EQ(proxy_->ProxyToService("default", "nope", "", Original("GET", "/x/proxy")).status, 404);
}

TEST_F(ProxyTest, HandleDispatchesOnTheResource) {
  net::HttpRequest req = Original("GET", "/x/proxy/flowforge/info");
  EXPECT_EQ(
      BodyJson(proxy_->Handle("services", "default", "proj-a:2880", "/flowforge/info", req))["id"],
      "p-1");
  EXPECT_EQ(
      BodyJson(proxy_->Handle("pods", "default", "proj-a:2880", "/flowforge/info", req))["id"],
      "p-1");
  EXPECT_EQ(proxy_->Handle("secrets", "default", "x", "/", req).status, 404);
}

TEST_F(ProxyTest, Pods) {
  const std::string base = "/api/v1/namespaces/default/pods/";
  net::HttpResponse r =
      proxy_->ProxyToPod("default", "proj-a:2880", "/flowforge/info",
                         Original("GET", base + "proj-a:2880/proxy/flowforge/info"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(BodyJson(r)["id"], "p-1");

  // No port: the first declared container port (web, 1880).
  net::HttpRequest web = Original("GET", base + "proj-a/proxy/");
  web.headers.Set("Accept", "application/json");
  net::HttpResponse first = proxy_->ProxyToPod("default", "http:proj-a:", "/", web);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(BodyJson(first)["port"], 1880);
  EXPECT_EQ(BodyJson(proxy_->ProxyToPod("default", "proj-a", "/", web))["port"], 1880);

  ExpectStatus(proxy_->ProxyToPod("default", "ghost:80", "/", Original("GET", "/p/")), 404,
               "NotFound", "pods \"ghost\" not found");
  ExpectStatus(proxy_->ProxyToPod("default", "proj-a:management", "/", Original("GET", "/p/")), 503,
               "ServiceUnavailable",
               "error trying to reach service: dial tcp: lookup tcp/management: unknown port");

  cluster_.CreateLauncherPod("default", "pending");  // no IP yet
  ExpectStatus(proxy_->ProxyToPod("default", "pending:1880", "/", Original("GET", "/p/")), 400,
               "BadRequest", "address not allowed");

  cluster_.SetPodStatus("default", "proj-a", "Running", false, "10.244.0.4");
  ExpectStatus(proxy_->ProxyToPod("default", "proj-a:1880", "/", Original("GET", "/p/")), 503,
               "ServiceUnavailable",
               "error trying to reach service: dial tcp 10.244.0.4:1880: connect: connection "
               "refused");
}

}  // namespace
}  // namespace steward::cluster::ingress
