#include "cluster/ingress/virtual_pods.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "cluster/ingress/ingress_test_util.h"

namespace steward::cluster::ingress {
namespace {

using testing::BodyJson;
using ::testing::HasSubstr;
using testing::Request;
using testing::Rt;

class VirtualPodsTest : public testing::VirtualPodsFixture {
 protected:
  Json GetPod(std::string_view ns, std::string_view name) {
    auto r = cluster_.api().Get(Rt("pods"), ns, name);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : Json();
  }

  net::HttpResponse MustServe(const Json& pod, int port, const net::HttpRequest& req) {
    auto r = pods_->Serve(pod, port, req);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : net::HttpResponse{};
  }

  net::HttpResponse Command(const Json& pod, std::string body) {
    return MustServe(pod, 2880, Request("POST", "/flowforge/command", "", std::move(body)));
  }

  int64_t NowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               cluster_.clock().WallNow().time_since_epoch())
        .count();
  }
};

TEST_F(VirtualPodsTest, WebPortAnswersJsonWhenAsked) {
  Json pod = cluster_.RunningPod("default", "web-1");
  net::HttpRequest req = Request("GET", "/hello/world?x=1", "demo.example.com");
  req.headers.Set("Accept", "application/json");
  net::HttpResponse r = MustServe(pod, 1880, req);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers.Get("X-Steward-Pod"), "default/web-1");
  EXPECT_THAT(std::string(r.headers.Get("Content-Type")), HasSubstr("application/json"));
  Json body = BodyJson(r);
  EXPECT_EQ(body["pod"], "web-1");
  EXPECT_EQ(body["namespace"], "default");
  EXPECT_EQ(body["path"], "/hello/world");
  EXPECT_EQ(body["host"], "demo.example.com");
  EXPECT_EQ(body["image"], "flowfuse/node-red:4.0.0");
  EXPECT_EQ(body["port"], 1880);
}

TEST_F(VirtualPodsTest, WebPortAnswersHtmlForBrowsers) {
  Json pod = cluster_.RunningPod("default", "web-1");
  net::HttpResponse r = MustServe(pod, 1880, Request("GET", "/", "demo.example.com"));
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(std::string(r.headers.Get("Content-Type")), HasSubstr("text/html"));
  EXPECT_THAT(r.body, HasSubstr("default/web-1"));
  EXPECT_THAT(r.body, HasSubstr("flowfuse/node-red:4.0.0"));
  EXPECT_THAT(r.body, HasSubstr("demo.example.com"));
}

TEST_F(VirtualPodsTest, HeadHasNoBody) {
  Json pod = cluster_.RunningPod("default", "web-1");
  net::HttpResponse r = MustServe(pod, 1880, Request("HEAD", "/", "h"));
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.body.empty());
}

TEST_F(VirtualPodsTest, OnlyRunningReadyPodsAnswer) {
  cluster_.CreateLauncherPod("default", "p");
  // Pending (as created): refused.
  auto r = pods_->Serve(GetPod("default", "p"), 1880, Request("GET", "/"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  // Running, not Ready: refused.
  cluster_.SetPodStatus("default", "p", "Running", false);
  r = pods_->Serve(GetPod("default", "p"), 1880, Request("GET", "/"));
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  // Running and Ready: answers.
  cluster_.SetPodStatus("default", "p", "Running", true);
  EXPECT_TRUE(pods_->Serve(GetPod("default", "p"), 1880, Request("GET", "/")).ok());
  // Terminating (graceful deletion keeps the pod with a deletionTimestamp): refused.
  ASSERT_TRUE(cluster_.api().Delete(Rt("pods"), "default", "p").ok());
  Json terminating = GetPod("default", "p");
  ASSERT_TRUE(terminating["metadata"].contains("deletionTimestamp"));
  r = pods_->Serve(terminating, 1880, Request("GET", "/"));
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(pods_->Serve(terminating, 2880, Request("GET", "/flowforge/health-check")).ok());
}

TEST_F(VirtualPodsTest, ManagementInfoReportsProjectIdAndStart) {
  Json pod = cluster_.RunningPod("default", "proj-a", "10.244.0.5",
                                 Json::array({{{"name", "FORGE_PROJECT_ID"}, {"value", "p-123"}}}));
  int64_t started = NowMs();
  EXPECT_EQ(pods_->TrackedPods(), 1u);  // the watch has seen the pod Running: it has started
  cluster_.clock().Advance(std::chrono::seconds(5));
  net::HttpResponse r = MustServe(pod, 2880, Request("GET", "/flowforge/info"));
  ASSERT_EQ(r.status, 200);
  Json info = BodyJson(r);
  EXPECT_EQ(info["id"], "p-123");
  EXPECT_EQ(info["state"], "running");
  // Started when the pod went Running, not when first asked.
  EXPECT_EQ(info["lastStartTime"], started);
  EXPECT_EQ(info["versions"]["node-red"], "4.0.0");
  EXPECT_EQ(info["versions"]["launcher"], "2.10.0");
  EXPECT_EQ(r.headers.Get("X-Steward-Pod"), "default/proj-a");
  EXPECT_EQ(MustServe(pod, 2880, Request("GET", "/flowforge/health-check")).status, 200);
  EXPECT_EQ(MustServe(pod, 2880, Request("GET", "/flowforge/ready")).status, 200);
  EXPECT_EQ(MustServe(pod, 2880, Request("GET", "/flowforge/nope")).status, 404);
}

TEST_F(VirtualPodsTest, StartTimeComesFromTheContainerStatus) {
  cluster_.CreateLauncherPod("default", "proj-s");
  Json pod = cluster_.SetPodStatus("default", "proj-s", "Running", true);
  ASSERT_TRUE(cluster_.api()
                  .Modify(
                      Rt("pods"), "default", "proj-s",
                      [](Json& p) {
                        p["status"]["containerStatuses"] = Json::array(
                            {{{"name", "node-red"},
                              {"ready", true},
                              {"state", {{"running", {{"startedAt", "2025-12-31T23:59:00Z"}}}}}}});
                        return true;
                      },
                      Subresource::kStatus)
                  .ok());
  EXPECT_EQ(pods_->TrackedPods(), 1u);                       // every event seen
  pods_->Forget(pod["metadata"]["uid"].get<std::string>());  // start again from the status
  pod = GetPod("default", "proj-s");
  Json info = BodyJson(MustServe(pod, 2880, Request("GET", "/flowforge/info")));
  EXPECT_EQ(info["lastStartTime"], int64_t{1767225540000});
}

TEST_F(VirtualPodsTest, ProjectIdDefaultsToPodName) {
  Json pod = cluster_.RunningPod("default", "proj-b");
  EXPECT_EQ(BodyJson(MustServe(pod, 2880, Request("GET", "/flowforge/info")))["id"], "proj-b");
}

TEST_F(VirtualPodsTest, CommandsChangeLauncherState) {
  Json pod = cluster_.RunningPod("default", "proj-a");
  auto info = [&] { return BodyJson(MustServe(pod, 2880, Request("GET", "/flowforge/info"))); };
  size_t initial_logs = BodyJson(MustServe(pod, 2880, Request("GET", "/flowforge/logs"))).size();
  EXPECT_GE(initial_logs, 3u);

  EXPECT_EQ(Command(pod, R"({"cmd":"start"})").status, 409);  // already running

  EXPECT_EQ(Command(pod, R"({"cmd":"stop"})").status, 200);
  EXPECT_EQ(info()["state"], "stopped");
  EXPECT_EQ(MustServe(pod, 2880, Request("GET", "/flowforge/ready")).status, 503);
  EXPECT_EQ(MustServe(pod, 2880, Request("GET", "/flowforge/health-check")).status, 200);
  // Node-RED itself is down: its web port refuses connections.
  EXPECT_EQ(pods_->Serve(pod, 1880, Request("GET", "/")).status().code(), StatusCode::kUnavailable);

  cluster_.clock().Advance(std::chrono::seconds(10));
  EXPECT_EQ(Command(pod, R"({"cmd":"start"})").status, 200);
  EXPECT_EQ(info()["state"], "running");
  EXPECT_EQ(info()["lastStartTime"], NowMs());
  EXPECT_EQ(MustServe(pod, 2880, Request("GET", "/flowforge/ready")).status, 200);
  EXPECT_TRUE(pods_->Serve(pod, 1880, Request("GET", "/")).ok());

  cluster_.clock().Advance(std::chrono::seconds(10));
  EXPECT_EQ(Command(pod, R"({"cmd":"restart"})").status, 200);
  EXPECT_EQ(info()["state"], "running");
  EXPECT_EQ(info()["lastStartTime"], NowMs());

  EXPECT_EQ(Command(pod, R"({"cmd":"logout","token":"abc"})").status, 200);
  EXPECT_EQ(Command(pod, R"({"cmd":"dance"})").status, 404);
  EXPECT_EQ(Command(pod, R"({"cmd":)").status, 400);
  EXPECT_EQ(Command(pod, R"({"nocmd":1})").status, 400);

  Json logs = BodyJson(MustServe(pod, 2880, Request("GET", "/flowforge/logs")));
  ASSERT_TRUE(logs.is_array());
  EXPECT_GT(logs.size(), initial_logs);
  bool saw_stop = false;
  int64_t prev_ts = 0;
  for (const Json& line : logs) {
    EXPECT_TRUE(line["ts"].is_number_integer());
    EXPECT_GT(line["ts"].get<int64_t>(), prev_ts);  // strictly increasing
    prev_ts = line["ts"].get<int64_t>();
    EXPECT_TRUE(line["level"].is_string());
    if (line["msg"].get<std::string>().find("Stopping") != std::string::npos) saw_stop = true;
  }
  EXPECT_TRUE(saw_stop);
}

TEST_F(VirtualPodsTest, EnvIsResolvedWhenThePodStartsAndKept) {
  auto b64 = [](std::string_view s) {
    static const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    size_t i = 0;
    for (; i + 2 < s.size(); i += 3) {
      uint32_t n = (uint8_t(s[i]) << 16) | (uint8_t(s[i + 1]) << 8) | uint8_t(s[i + 2]);
      for (int k = 3; k >= 0; --k) out.push_back(a[(n >> (6 * k)) & 63]);
    }
    if (s.size() - i == 1) {
      uint32_t n = uint8_t(s[i]) << 16;
      out += std::string{a[(n >> 18) & 63], a[(n >> 12) & 63], '=', '='};
    } else if (s.size() - i == 2) {
      uint32_t n = (uint8_t(s[i]) << 16) | (uint8_t(s[i + 1]) << 8);
      out += std::string{a[(n >> 18) & 63], a[(n >> 12) & 63], a[(n >> 6) & 63], '='};
    }
    return out;
  };
  cluster_.Create("secrets", "default",
                  {{"metadata", {{"name", "creds"}}},
                   {"data", {{"clientId", b64("id-v1")}, {"token", b64("secret-v1")}}}});
  cluster_.Create("configmaps", "default",
                  {{"metadata", {{"name", "settings"}}}, {"data", {{"domain", "example.com"}}}});
  Json env = Json::array(
      {{{"name", "FORGE_CLIENT_ID"},
        {"valueFrom", {{"secretKeyRef", {{"name", "creds"}, {"key", "clientId"}}}}}},
       {{"name", "FORGE_TOKEN"},
        {"valueFrom", {{"secretKeyRef", {{"name", "creds"}, {"key", "token"}}}}}},
       {{"name", "DOMAIN"},
        {"valueFrom", {{"configMapKeyRef", {{"name", "settings"}, {"key", "domain"}}}}}},
       {{"name", "POD_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}},
       {{"name", "BASE_URL"}, {"value", "https://$(POD_NAME).$(DOMAIN)"}},
       {{"name", "MISSING"},
        {"valueFrom", {{"secretKeyRef", {{"name", "absent"}, {"key", "k"}}}}}}});
  Json pod = cluster_.RunningPod("default", "proj-a", "10.244.0.7", env);
  // The pod is Running: its process has started (the watch saw it).
  EXPECT_EQ(pods_->TrackedPods(), 1u);

  // Rotating the Secret afterwards does not change a running process's env.
  ASSERT_TRUE(cluster_.api()
                  .Modify(Rt("secrets"), "default", "creds",
                          [&](Json& s) {
                            s["data"]["token"] = b64("secret-v2");
                            return true;
                          })
                  .ok());
  Json got = BodyJson(MustServe(pod, 2880, Request("GET", "/flowforge/env")));
  EXPECT_EQ(got["FORGE_CLIENT_ID"], "id-v1");
  EXPECT_EQ(got["FORGE_TOKEN"], "secret-v1");
  EXPECT_EQ(got["DOMAIN"], "example.com");
  EXPECT_EQ(got["POD_NAME"], "proj-a");
  EXPECT_EQ(got["BASE_URL"], "https://proj-a.example.com");
  EXPECT_FALSE(got.contains("MISSING"));

  // A new pod (new uid) starts with the Secret as it is now.
  ASSERT_TRUE(cluster_.api().ForceRemove(Rt("pods"), "default", "proj-a", "").ok());
  Json pod2 = cluster_.RunningPod("default", "proj-a", "10.244.0.8", env);
  got = BodyJson(MustServe(pod2, 2880, Request("GET", "/flowforge/env")));
  EXPECT_EQ(got["FORGE_TOKEN"], "secret-v2");
}

TEST_F(VirtualPodsTest, StateIsForgottenWhenThePodGoes) {
  Json pod = cluster_.RunningPod("default", "proj-a");
  EXPECT_EQ(Command(pod, R"({"cmd":"stop"})").status, 200);
  EXPECT_EQ(pods_->TrackedPods(), 1u);
  ASSERT_TRUE(cluster_.api().ForceRemove(Rt("pods"), "default", "proj-a", "").ok());
  EXPECT_EQ(pods_->TrackedPods(), 0u);
  // Same name, new pod: a fresh, running launcher.
  Json again = cluster_.RunningPod("default", "proj-a");
  EXPECT_NE(again["metadata"]["uid"], pod["metadata"]["uid"]);
  Json info = BodyJson(MustServe(again, 2880, Request("GET", "/flowforge/info")));
  EXPECT_EQ(info["state"], "running");

  pods_->Forget(again["metadata"]["uid"].get<std::string>());
  EXPECT_EQ(pods_->TrackedPods(), 0u);
}

TEST_F(VirtualPodsTest, UndeclaredManagementPortStillServesTheLauncher) {
  cluster_.CreatePod("default", "bare", Json::array({{{"name", "app"}, {"image", "nginx:1.27"}}}));
  Json pod = cluster_.SetPodStatus("default", "bare", "Running", true);
  EXPECT_EQ(MustServe(pod, 2880, Request("GET", "/flowforge/info")).status, 200);
  net::HttpRequest req = Request("GET", "/");
  req.headers.Set("Accept", "application/json");
  EXPECT_EQ(BodyJson(MustServe(pod, 8080, req))["image"], "nginx:1.27");
}

TEST_F(VirtualPodsTest, ServeFromRecordChecksTheUid) {
  Json pod = cluster_.RunningPod("default", "proj-a");
  auto rec = cluster_.storage().Get("pods", "default", "proj-a");
  ASSERT_TRUE(rec.has_value());
  const std::string uid = pod["metadata"]["uid"];
  EXPECT_TRUE(pods_->Serve(*rec, 1880, Request("GET", "/"), uid).ok());
  EXPECT_TRUE(pods_->Serve(*rec, 1880, Request("GET", "/")).ok());  // cached parse
  EXPECT_EQ(pods_->Serve(*rec, 1880, Request("GET", "/"), "other-uid").status().code(),
            StatusCode::kUnavailable);
}

}  // namespace
}  // namespace steward::cluster::ingress
