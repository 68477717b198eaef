// Test helpers for the ingress module: an in-memory cluster (Storage + ObjectApi) and writers
// for the objects the simulated controllers would otherwise produce (pod status,
// EndpointSlices). For tests only.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/apiserver/object_api.h"
#include "cluster/ingress/endpoint_resolver.h"
#include "cluster/ingress/virtual_pods.h"
#include "cluster/model/resource_types.h"
#include "cluster/storage/storage.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/random.h"
#include "net/http.h"

namespace steward::cluster::ingress::testing {

inline const ResourceType& Rt(std::string_view group_resource) {
  const ResourceType* rt = FindGroupResource(group_resource);
  EXPECT_NE(rt, nullptr) << group_resource;
  return *rt;
}

class TestCluster {
 public:
  TestCluster() {
    auto storage = Storage::Open({});
    EXPECT_TRUE(storage.ok());
    storage_ = std::move(storage).value();
    api_ = std::make_unique<ObjectApi>(*storage_, clock_, random_);
    for (const char* ns : {"default", "other"}) {
      Create("namespaces", "", {{"metadata", {{"name", ns}}}});
    }
  }

  Storage& storage() { return *storage_; }
  ObjectApi& api() { return *api_; }
  FakeClock& clock() { return clock_; }

  Json Create(std::string_view gr, std::string_view ns, Json object) {
    auto r = api_->Create(Rt(gr), ns, std::move(object));
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : Json();
  }

  // A scheduled pod; `containers` is spec.containers.
  Json CreatePod(std::string_view ns, std::string_view name, Json containers) {
    return Create(
        "pods", ns,
        {{"metadata", {{"name", name}, {"labels", {{"app", "demo"}}}}},
         {"spec", {{"nodeName", "steward-node"}, {"containers", std::move(containers)}}}});
  }
  // A pod whose one container "node-red" listens on web (1880) and management (2880).
  Json CreateLauncherPod(std::string_view ns, std::string_view name, Json env = Json::array()) {
    return CreatePod(ns, name,
                     Json::array({{{"name", "node-red"},
                                   {"image", "flowfuse/node-red:4.0.0"},
                                   {"env", std::move(env)},
                                   {"ports",
                                    {{{"name", "web"}, {"containerPort", 1880}},
                                     {{"name", "management"}, {"containerPort", 2880}}}}}}));
  }
  // Writes the status a kubelet would: phase, Ready condition and pod IP.
  Json SetPodStatus(std::string_view ns, std::string_view name, std::string phase, bool ready,
                    std::string ip = "10.244.0.10") {
    auto r = api_->Modify(
        Rt("pods"), ns, name,
        [&](Json& pod) {
          Json status = {{"phase", phase},
                         {"conditions",
                          {{{"type", "Ready"}, {"status", ready ? "True" : "False"}},
                           {{"type", "ContainersReady"}, {"status", ready ? "True" : "False"}}}}};
          if (!ip.empty()) {
            status["podIP"] = ip;
            status["podIPs"] = Json::array({{{"ip", ip}}});
          }
          pod["status"] = status;
          return true;
        },
        Subresource::kStatus);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : Json();
  }
  Json RunningPod(std::string_view ns, std::string_view name, std::string ip = "10.244.0.10",
                  Json env = Json::array()) {
    CreateLauncherPod(ns, name, std::move(env));
    return SetPodStatus(ns, name, "Running", true, std::move(ip));
  }

  // `ports` is spec.ports.
  Json CreateService(std::string_view ns, std::string_view name, std::vector<Json> ports) {
    return Create("services", ns,
                  {{"metadata", {{"name", name}}},
                   {"spec", {{"selector", {{"app", std::string(name)}}}, {"ports", Json(ports)}}}});
  }

  // One endpoint of `pod`; `ready` null leaves the condition out (which means ready).
  static Json Endpoint(const Json& pod, Json ready) {
    Json ep = {{"addresses", Json::array({GetString(pod["status"], "podIP", "10.0.0.1")})},
               {"targetRef",
                {{"kind", "Pod"},
                 {"name", pod["metadata"]["name"]},
                 {"namespace", pod["metadata"]["namespace"]},
                 {"uid", pod["metadata"]["uid"]}}}};
    if (!ready.is_null()) ep["conditions"] = {{"ready", ready}};
    return ep;
  }
  // An EndpointSlice for `service`; `ports` is [{name, port}] with target ports.
  Json CreateSlice(std::string_view ns, std::string_view service, std::string_view name,
                   std::vector<Json> endpoints, std::vector<Json> ports) {
    return Create(
        "endpointslices.discovery.k8s.io", ns,
        {{"metadata", {{"name", name}, {"labels", {{"kubernetes.io/service-name", service}}}}},
         {"addressType", "IPv4"},
         {"endpoints", Json(endpoints)},
         {"ports", Json(ports)}});
  }
  Json UpdateSlice(std::string_view ns, std::string_view name, std::vector<Json> endpoints) {
    auto r = api_->Modify(Rt("endpointslices.discovery.k8s.io"), ns, name, [&](Json& s) {
      s["endpoints"] = Json(endpoints);
      return true;
    });
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : Json();
  }

  Json CreateIngress(std::string_view ns, std::string_view name, Json spec) {
    return Create("ingresses.networking.k8s.io", ns,
                  {{"metadata", {{"name", name}}}, {"spec", std::move(spec)}});
  }

 private:
  FakeClock clock_;
  Random random_{7};
  std::unique_ptr<Storage> storage_;
  std::unique_ptr<ObjectApi> api_;
};

// The VirtualPods serving `cluster`'s pods; a test failure (and nullptr) when it cannot start.
inline std::unique_ptr<VirtualPods> MakeVirtualPods(TestCluster& cluster) {
  auto pods = VirtualPods::Create(cluster.api());
  EXPECT_TRUE(pods.ok());
  return pods.ok() ? std::move(pods).value() : nullptr;
}

// The EndpointResolver over `cluster`'s storage; a test failure (and nullptr) when it cannot
// start.
inline std::unique_ptr<EndpointResolver> MakeEndpointResolver(TestCluster& cluster) {
  auto resolver = EndpointResolver::Create(cluster.storage());
  EXPECT_TRUE(resolver.ok());
  return resolver.ok() ? std::move(resolver).value() : nullptr;
}

// A test over a TestCluster and the VirtualPods that serve its pods, created in SetUp (which a
// derived fixture's SetUp calls first).
class VirtualPodsFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    pods_ = MakeVirtualPods(cluster_);
    ASSERT_NE(pods_, nullptr);
  }

  TestCluster cluster_;
  std::unique_ptr<VirtualPods> pods_;
};

// VirtualPodsFixture plus an EndpointResolver over the cluster's storage: what the router and
// the proxy are built on.
class BackendFixture : public VirtualPodsFixture {
 protected:
  void SetUp() override {
    VirtualPodsFixture::SetUp();
    if (HasFatalFailure()) return;
    resolver_ = MakeEndpointResolver(cluster_);
    ASSERT_NE(resolver_, nullptr);
  }

  std::unique_ptr<EndpointResolver> resolver_;
};

// A Prefix/Exact path rule to `service` port `port` (a number, or a name as a string).
inline Json PathRule(std::string path, std::string type, std::string service, Json port) {
  Json p = port.is_string() ? Json{{"name", port}} : Json{{"number", port}};
  return {{"path", path},
          {"pathType", type},
          {"backend", {{"service", {{"name", service}, {"port", p}}}}}};
}

inline Json HostRule(std::string host, std::vector<Json> paths) {
  Json r = {{"http", {{"paths", Json(paths)}}}};
  if (!host.empty()) r["host"] = host;
  return r;
}

// An Ingress spec with these rules.
inline Json Rules(std::vector<Json> rules) { return {{"rules", Json(rules)}}; }

inline net::HttpRequest Request(std::string method, std::string target, std::string host = "",
                                std::string body = "") {
  net::HttpRequest r;
  r.method = std::move(method);
  r.target = target;
  net::ParseTarget(target, &r.path, &r.query);
  if (!host.empty()) r.headers.Set("Host", host);
  r.body = std::move(body);
  r.remote_address = "127.0.0.1:40000";
  return r;
}

inline Json BodyJson(const net::HttpResponse& r) {
  auto j = ParseJson(r.body);
  EXPECT_TRUE(j.ok()) << r.body;
  return j.ok() ? *j : Json();
}

}  // namespace steward::cluster::ingress::testing
