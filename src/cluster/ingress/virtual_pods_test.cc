#include "cluster/ingress/virtual_pods.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "cluster/ingress/ingress_test_util.h"
#include "test_support/eventually.h"

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
  EXPECT_EQ(info["versions"]["node-red"], "4.1.15");
  EXPECT_EQ(info["versions"]["launcher"], "2.29.1+mcp");  // MCP commands on (the default)
  EXPECT_EQ(r.headers.Get("X-Steward-Pod"), "default/proj-a");
  // As the real launcher (Express's sendStatus and its unrouted page).
  net::HttpResponse health = MustServe(pod, 2880, Request("GET", "/flowforge/health-check"));
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "OK");
  EXPECT_EQ(health.headers.Get("Content-Type"), "text/plain; charset=utf-8");
  net::HttpResponse ready = MustServe(pod, 2880, Request("GET", "/flowforge/ready"));
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body, "OK");
  net::HttpResponse nope = MustServe(pod, 2880, Request("GET", "/flowforge/nope"));
  EXPECT_EQ(nope.status, 404);
  EXPECT_THAT(nope.body, HasSubstr("Cannot GET /flowforge/nope"));
  EXPECT_EQ(nope.headers.Get("Content-Type"), "text/html; charset=utf-8");
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

  net::HttpResponse already = Command(pod, R"({"cmd":"start"})");
  EXPECT_EQ(already.status, 409);
  EXPECT_EQ(BodyJson(already), (Json{{"err", "Already running"}}));  // lib/admin.js's answer

  EXPECT_EQ(Command(pod, R"({"cmd":"stop"})").status, 200);
  EXPECT_EQ(info()["state"], "stopped");
  EXPECT_EQ(MustServe(pod, 2880, Request("GET", "/flowforge/ready")).status, 503);
  // No Node-RED process: not healthy.
  EXPECT_EQ(MustServe(pod, 2880, Request("GET", "/flowforge/health-check")).status, 500);
  // Node-RED itself is down: its web port refuses connections.
  EXPECT_EQ(pods_->Serve(pod, 1880, Request("GET", "/")).status().code(), StatusCode::kUnavailable);

  cluster_.clock().Advance(std::chrono::seconds(10));
  pods_->SetRestartDuration(std::chrono::seconds(30));
  // A start answers with Node-RED spawned: "starting" (ready, as the real /ready says), and a
  // second start meanwhile is a no-op answered {}.
  EXPECT_EQ(Command(pod, R"({"cmd":"start"})").status, 200);
  EXPECT_EQ(info()["state"], "starting");
  EXPECT_EQ(MustServe(pod, 2880, Request("GET", "/flowforge/ready")).status, 200);
  EXPECT_EQ(Command(pod, R"({"cmd":"start"})").status, 200);
  EXPECT_EQ(Command(pod, R"({"cmd":"stop"})").status, 200);
  pods_->SetRestartDuration(std::chrono::milliseconds(50));
  EXPECT_EQ(Command(pod, R"({"cmd":"start"})").status, 200);
  EXPECT_TRUE(test_support::Eventually([&] { return info()["state"] == "running"; }));
  EXPECT_EQ(info()["lastStartTime"], NowMs());
  EXPECT_EQ(MustServe(pod, 2880, Request("GET", "/flowforge/ready")).status, 200);
  EXPECT_TRUE(pods_->Serve(pod, 1880, Request("GET", "/")).ok());

  cluster_.clock().Advance(std::chrono::seconds(10));
  pods_->SetRestartDuration(std::chrono::seconds(30));
  EXPECT_EQ(Command(pod, R"({"cmd":"restart"})").status, 200);
  // Restarting: "starting", not ready, Node-RED's port refusing, until the restart is over.
  EXPECT_EQ(info()["state"], "starting");
  EXPECT_EQ(info()["lastStartTime"], NowMs());
  EXPECT_EQ(MustServe(pod, 2880, Request("GET", "/flowforge/ready")).status, 503);
  EXPECT_EQ(pods_->Serve(pod, 1880, Request("GET", "/")).status().code(), StatusCode::kUnavailable);
  // A restart while starting is answered {} and changes nothing (lib/admin.js).
  pods_->SetRestartDuration(std::chrono::milliseconds(50));
  EXPECT_EQ(Command(pod, R"({"cmd":"restart"})").status, 200);
  EXPECT_EQ(info()["state"], "starting");
  // Stopped, a restart starts it.
  EXPECT_EQ(Command(pod, R"({"cmd":"stop"})").status, 200);
  EXPECT_EQ(Command(pod, R"({"cmd":"restart"})").status, 200);
  EXPECT_TRUE(test_support::Eventually([&] { return info()["state"] == "running"; }));
  EXPECT_EQ(MustServe(pod, 2880, Request("GET", "/flowforge/ready")).status, 200);
  EXPECT_TRUE(pods_->Serve(pod, 1880, Request("GET", "/")).ok());

  EXPECT_EQ(Command(pod, R"({"cmd":"logout","token":"abc"})").status, 200);
  net::HttpResponse dance = Command(pod, R"({"cmd":"dance"})");
  EXPECT_EQ(dance.status, 404);
  EXPECT_EQ(BodyJson(dance), Json::object());         // as lib/admin.js answers an unknown command
  EXPECT_EQ(Command(pod, R"({"cmd":)").status, 400);  // body-parser's page
  EXPECT_EQ(Command(pod, R"({"nocmd":1})").status, 404);  // no branch of lib/admin.js

  Json logs = BodyJson(MustServe(pod, 2880, Request("GET", "/flowforge/logs")));
  ASSERT_TRUE(logs.is_array());
  EXPECT_GT(logs.size(), initial_logs);
  bool saw_stop = false, saw_logout = false;
  std::string prev_ts;
  for (const Json& line : logs) {
    // As the real launcher writes it: epoch ms and a 4-digit counter, as a string.
    ASSERT_TRUE(line["ts"].is_string()) << line.dump();
    const std::string ts = line["ts"].get<std::string>();
    EXPECT_EQ(ts.size(), 17u) << ts;
    EXPECT_GT(ts, prev_ts);  // strictly increasing
    prev_ts = ts;
    EXPECT_EQ(GetString(line, "src").size(), 4u);
    saw_logout |= GetString(line, "msg") == "Node-RED logout requested";
    EXPECT_TRUE(line["level"].is_string());
    if (line["msg"].get<std::string>().find("Stopping") != std::string::npos) saw_stop = true;
  }
  EXPECT_TRUE(saw_stop);
  EXPECT_TRUE(saw_logout);
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

// The launcher's files API (lib/files/index.js), status for status.
class VirtualPodsFilesTest : public VirtualPodsTest {
 protected:
  net::HttpResponse Files(const Json& pod, std::string method, std::string path,
                          std::string body = "", std::string content_type = "") {
    net::HttpRequest r =
        Request(std::move(method), "/flowforge/files/_/" + path, "", std::move(body));
    if (!content_type.empty()) r.headers.Set("Content-Type", content_type);
    return MustServe(pod, 2880, r);
  }
  static std::string Multipart(const std::string& content) {
    return "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n"
           "Content-Type: application/octet-stream\r\n\r\n" +
           content + "\r\n--XyZ--\r\n";
  }
  static constexpr const char* kMultipart = "multipart/form-data; boundary=XyZ";
};

TEST_F(VirtualPodsFilesTest, ListMkdirUploadRenameDelete) {
  Json pod = cluster_.RunningPod("default", "files-a");
  Json root = BodyJson(Files(pod, "GET", ""));
  // The launcher's own log directory is there from its start.
  ASSERT_EQ(root["count"], 1);
  EXPECT_EQ(root["files"][0]["name"], "ff-logs");
  EXPECT_EQ(root["files"][0]["type"], "directory");

  EXPECT_EQ(Files(pod, "POST", "", R"({"path":"a/b"})", "application/json").status, 201);
  EXPECT_EQ(Files(pod, "POST", "a/b/f.txt", Multipart("hello\r\n--X"), kMultipart).status, 201);
  Json a = BodyJson(Files(pod, "GET", "a"));
  ASSERT_EQ(a["count"], 1);
  EXPECT_EQ(a["files"][0]["name"], "b");
  EXPECT_EQ(a["files"][0]["type"], "directory");
  EXPECT_TRUE(a["files"][0]["lastModified"].is_string());
  Json b = BodyJson(Files(pod, "GET", "a/b"));
  ASSERT_EQ(b["count"], 1);
  EXPECT_EQ(b["files"][0]["name"], "f.txt");
  EXPECT_EQ(b["files"][0]["type"], "file");
  EXPECT_EQ(b["files"][0]["size"], std::string("hello\r\n--X").size());

  // A file is not listed (ENOTDIR 400); a missing path is 404.
  EXPECT_EQ(Files(pod, "GET", "a/b/f.txt").status, 400);
  EXPECT_EQ(Files(pod, "GET", "nope").status, 404);
  // Upload into a missing directory: 404; neither JSON nor multipart: 406.
  EXPECT_EQ(Files(pod, "POST", "x/y.txt", Multipart("z"), kMultipart).status, 404);
  EXPECT_EQ(Files(pod, "POST", "a/z.txt", "raw", "text/plain").status, 406);

  // PUT renames (body {path}, relative to the storage root): 202.
  EXPECT_EQ(Files(pod, "PUT", "a/b/f.txt", R"({"path":"a/g.txt"})", "application/json").status,
            202);
  Json moved = BodyJson(Files(pod, "GET", "a"));
  EXPECT_EQ(moved["count"], 2);
  EXPECT_EQ(BodyJson(Files(pod, "GET", "a/b"))["count"], 0);
  EXPECT_EQ(Files(pod, "PUT", "gone", R"({"path":"a/h"})", "application/json").status, 404);

  // Outside the storage directory: 403 for DELETE, PUT, POST; the root cannot be deleted.
  EXPECT_EQ(Files(pod, "DELETE", "../x").status, 403);
  EXPECT_EQ(Files(pod, "DELETE", "").status, 403);
  EXPECT_EQ(Files(pod, "POST", "../x", Multipart("z"), kMultipart).status, 403);
  EXPECT_EQ(Files(pod, "PUT", "a/g.txt", R"({"path":"../../etc"})", "application/json").status,
            403);

  // DELETE is recursive: 204, then 404.
  EXPECT_EQ(Files(pod, "DELETE", "a").status, 204);
  EXPECT_EQ(Files(pod, "DELETE", "a").status, 404);
  EXPECT_EQ(BodyJson(Files(pod, "GET", ""))["count"], 1);  // ff-logs
}

// Checked against the real launcher 2.29.1: these requests end its process (unhandled
// rejections in lib/files); the stand-in drops the connection and restarts the launcher.
TEST_F(VirtualPodsFilesTest, RequestsThatKillTheRealLauncherDropTheConnectionAndRestartIt) {
  Json pod = cluster_.RunningPod("default", "crash-a");
  ASSERT_EQ(Files(pod, "POST", "", R"({"path":"d"})", "application/json").status, 201);
  struct Case {
    std::string method, path, body, content_type;
  };
  const std::string no_file_part =
      "--XyZ\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nx\r\n--XyZ--\r\n";
  for (const Case& c : std::vector<Case>{
           {"PUT", "d", "x", "text/plain"},
           {"PUT", "d", "{}", "application/json"},
           {"POST", "d/f", "x", ""},
           {"POST", "d", "{}", "application/json"},
           {"POST", "d/f", no_file_part, kMultipart},
           {"POST", "d", Multipart("x"), kMultipart},
           {"POST", "", Multipart("x"), kMultipart},
       }) {
    // Logs pile up from the start; a crash starts them afresh.
    EXPECT_EQ(Command(pod, R"({"cmd":"logout"})").status, 200);
    net::HttpRequest r = Request(c.method, "/flowforge/files/_/" + c.path, "", c.body);
    if (!c.content_type.empty()) r.headers.Set("Content-Type", c.content_type);
    auto answer = pods_->Serve(pod, 2880, r);
    ASSERT_FALSE(answer.ok()) << c.method << " " << c.path << " " << c.body;
    EXPECT_EQ(answer.status().code(), StatusCode::kUnavailable);
    EXPECT_THAT(answer.status().message(), HasSubstr("exited"));
    Json info = BodyJson(MustServe(pod, 2880, Request("GET", "/flowforge/info")));
    EXPECT_EQ(info["state"], "starting") << c.body;
    bool logout = false;
    for (const Json& l : BodyJson(MustServe(pod, 2880, Request("GET", "/flowforge/logs")))) {
      logout |= GetString(l, "msg") == "Node-RED logout requested";
    }
    EXPECT_FALSE(logout) << "logs survived a crash: " << c.body;
    // The storage directory is kept.
    EXPECT_EQ(Files(pod, "GET", "d").status, 200);
  }
}

TEST_F(VirtualPodsFilesTest, StorageIsPerPodAndCapped) {
  Json a = cluster_.RunningPod("default", "cap-a", "10.244.0.21");
  Json b = cluster_.RunningPod("default", "cap-b", "10.244.0.22");
  EXPECT_EQ(Files(a, "POST", "one", Multipart("1"), kMultipart).status, 201);
  EXPECT_EQ(BodyJson(Files(a, "GET", ""))["count"], 2);  // one, ff-logs
  EXPECT_EQ(BodyJson(Files(b, "GET", ""))["count"], 1);  // ff-logs
  const std::string big(VirtualPods::kMaxStorageBytes / 2 + 1, 'x');
  EXPECT_EQ(Files(a, "POST", "big1", Multipart(big), kMultipart).status, 201);
  // ENOSPC: the real launcher's write fails unhandled and its process ends.
  net::HttpRequest full = Request("POST", "/flowforge/files/_/big2", "", Multipart(big));
  full.headers.Set("Content-Type", kMultipart);
  EXPECT_EQ(pods_->Serve(a, 2880, full).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(Files(a, "DELETE", "big1").status, 204);
  EXPECT_EQ(Files(a, "POST", "big2", Multipart(big), kMultipart).status, 201);
}

TEST_F(VirtualPodsTest, ResourcesAreSampledAtTheInterval) {
  pods_->SetResourceSampleInterval(std::chrono::seconds(5));
  Json pod = cluster_.RunningPod("default", "res-a");
  auto resources = [&] {
    return BodyJson(MustServe(pod, 2880, Request("GET", "/flowforge/resources")));
  };
  Json first = resources();
  EXPECT_EQ(first["count"], first["resources"].size());
  const size_t before = first["resources"].size();
  cluster_.clock().Advance(std::chrono::seconds(16));
  Json later = resources();
  ASSERT_EQ(later["resources"].size(), before + 3);
  int64_t prev = 0;
  for (const Json& s : later["resources"]) {
    EXPECT_GT(s["ts"].get<int64_t>(), prev);
    prev = s["ts"].get<int64_t>();
    // lib/resources/sample.js's fields; cpu from the second sample of a process on.
    for (const char* k : {"src", "ps", "ela", "el99", "nrmsgs", "nrrecv", "nrsend"}) {
      EXPECT_TRUE(s.contains(k)) << k;
    }
    EXPECT_EQ(s.contains("cpu"), &s != &later["resources"][0]) << s.dump();
    EXPECT_FALSE(s.contains("hs") || s.contains("hu")) << s.dump();
  }
  EXPECT_LE(prev, NowMs());
  // None while Node-RED is stopped.
  EXPECT_EQ(Command(pod, R"({"cmd":"stop"})").status, 200);
  const size_t stopped = resources()["count"].get<size_t>();
  cluster_.clock().Advance(std::chrono::seconds(20));
  EXPECT_EQ(resources()["count"].get<size_t>(), stopped);
}

TEST_F(VirtualPodsTest, McpCommandsOffAnswerAs2291Does) {
  pods_->SetMcpCommands(false);
  Json pod = cluster_.RunningPod("default", "mcp-off");
  net::HttpResponse features = Command(pod, R"({"cmd":"mcp:get-features","data":{}})");
  EXPECT_EQ(features.status, 404);
  EXPECT_EQ(BodyJson(features), Json::object());
  Json info = BodyJson(MustServe(pod, 2880, Request("GET", "/flowforge/info")));
  EXPECT_EQ(info["versions"]["launcher"], "2.29.1");
  pods_->SetMcpCommands(true);
}

TEST_F(VirtualPodsTest, McpCommandsAnswerAsTheLauncherDoes) {
  Json pod = cluster_.RunningPod("default", "mcp-a");
  Json features = BodyJson(Command(
      pod, R"({"cmd":"mcp:get-features","data":{"endpoints":["/mcp",{"mcpEndpoint":"/m2"},7]}})"));
  ASSERT_EQ(features.size(), 3u);
  EXPECT_EQ(features[0]["spec"]["key"], "/mcp");
  EXPECT_EQ(features[0]["features"]["tools"][0]["name"], "echo");
  EXPECT_TRUE(features[0]["error"].is_null());
  EXPECT_EQ(features[1]["spec"]["mcpEndpoint"], "/m2");
  EXPECT_THAT(GetString(features[2], "error"), HasSubstr("Invalid endpoint spec"));
  EXPECT_EQ(BodyJson(Command(pod, R"({"cmd":"mcp:get-features"})")), Json::array());

  net::HttpResponse call = Command(
      pod,
      R"({"cmd":"mcp:call-tool","data":{"endpoint":"/mcp","name":"echo","input":{"text":"hi"}}})");
  EXPECT_EQ(call.status, 200);
  EXPECT_EQ(BodyJson(call)["content"][0]["text"], "hi");
  net::HttpResponse missing =
      Command(pod, R"({"cmd":"mcp:call-tool","data":{"endpoint":"/mcp","name":"nope"}})");
  EXPECT_EQ(missing.status, 500);
  EXPECT_THAT(GetString(BodyJson(missing), "err"), HasSubstr("nope"));
  EXPECT_EQ(Command(pod, R"({"cmd":"mcp:call-tool","data":{"name":"echo"}})").status, 500);

  net::HttpResponse read = Command(
      pod, R"({"cmd":"mcp:read-resource","data":{"endpoint":"/mcp","uri":"nodered://flows"}})");
  EXPECT_EQ(read.status, 200);
  EXPECT_EQ(BodyJson(read)["contents"][0]["uri"], "nodered://flows");
  EXPECT_EQ(Command(pod, R"({"cmd":"mcp:read-resource","data":{"endpoint":"/mcp"}})").status, 500);
}

// The MQTT schema agent stand-in, on pods shaped as FlowFuse's Kubernetes driver makes them.
class VirtualPodsAgentTest : public VirtualPodsTest {
 protected:
  // The driver's env for an agent; the team token comes from Secret `secret`.
  static Json AgentEnv(const std::string& secret) {
    return Json::array({{{"name", "FORGE_TEAM_TOKEN"},
                         {"valueFrom", {{"secretKeyRef", {{"name", secret}, {"key", "token"}}}}}},
                        {{"name", "FORGE_URL"}, {"value", "https://forge.example.com"}},
                        {{"name", "FORGE_BROKER_ID"}, {"value", "b1"}},
                        {{"name", "FORGE_TEAM_ID"}, {"value", "T1"}}});
  }
  // A running pod whose one container "mqtt-schema-agent" has `env` and `ports`.
  Json RunningAgent(std::string_view name, Json env,
                    Json ports = Json::array({{{"name", "web"}, {"containerPort", 3500}}})) {
    Json container = {{"name", "mqtt-schema-agent"},
                      {"image", "flowfuse/mqtt-schema-agent"},
                      {"env", std::move(env)}};
    if (!ports.is_null()) container["ports"] = std::move(ports);
    cluster_.CreatePod("default", name, Json::array({std::move(container)}));
    return cluster_.SetPodStatus("default", name, "Running", true);
  }
  void CreateTokenSecret(std::string_view name) {
    cluster_.Create("secrets", "default",
                    {{"metadata", {{"name", name}}}, {"stringData", {{"token", "team-token"}}}});
  }
  net::HttpResponse Agent(const Json& pod, std::string method, std::string path, int port = 3500) {
    return MustServe(pod, port, Request(std::move(method), std::move(path)));
  }
  Json Status(const Json& pod) { return BodyJson(Agent(pod, "GET", "/api/v1/status")); }
};

TEST_F(VirtualPodsAgentTest, StatusAndCommandsAnswerAsTheAgentDoes) {
  CreateTokenSecret("agent-token");
  Json pod = RunningAgent("mqtt-schema-agent-t1-b1", AgentEnv("agent-token"));
  // The agent connects at start-up (the token came through the secretKeyRef).
  net::HttpResponse status = Agent(pod, "GET", "/api/v1/status");
  EXPECT_EQ(status.status, 200);
  EXPECT_THAT(std::string(status.headers.Get("Content-Type")), HasSubstr("application/json"));
  EXPECT_EQ(status.headers.Get("X-Steward-Pod"), "default/mqtt-schema-agent-t1-b1");
  EXPECT_EQ(BodyJson(status), Json({{"connected", true}, {"error", nullptr}}));

  net::HttpResponse stop = Agent(pod, "POST", "/api/v1/commands/stop");
  EXPECT_EQ(stop.status, 200);
  EXPECT_EQ(BodyJson(stop), Json::object());
  EXPECT_EQ(Status(pod), Json({{"connected", false}, {"error", nullptr}}));
  EXPECT_EQ(Agent(pod, "POST", "/api/v1/commands/stop").status, 200);  // stopping again is fine
  EXPECT_EQ(Status(pod)["connected"], false);

  net::HttpResponse start = Agent(pod, "POST", "/api/v1/commands/start");
  EXPECT_EQ(start.status, 200);
  EXPECT_EQ(BodyJson(start), Json::object());
  EXPECT_EQ(Status(pod)["connected"], true);
  EXPECT_EQ(Agent(pod, "POST", "/api/v1/commands/start").status, 200);  // start reconnects
  EXPECT_EQ(Status(pod)["connected"], true);

  EXPECT_EQ(BodyJson(Agent(pod, "GET", "/healthz")), Json::object());
  net::HttpResponse head = Agent(pod, "HEAD", "/api/v1/status");
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());
}

TEST_F(VirtualPodsAgentTest, StateIsPerPodAndStartsAfreshWithANewPod) {
  CreateTokenSecret("agent-token");
  Json a = RunningAgent("agent-a", AgentEnv("agent-token"));
  Json b = RunningAgent("agent-b", AgentEnv("agent-token"));
  ASSERT_EQ(Agent(a, "POST", "/api/v1/commands/stop").status, 200);
  EXPECT_EQ(Status(a)["connected"], false);
  EXPECT_EQ(Status(b)["connected"], true);
  // Kept per pod across requests, including through a stored record.
  auto rec = cluster_.storage().Get("pods", "default", "agent-a");
  ASSERT_TRUE(rec.has_value());
  auto served = pods_->Serve(*rec, 3500, Request("GET", "/api/v1/status"));
  ASSERT_TRUE(served.ok()) << served.status().ToString();
  EXPECT_EQ(BodyJson(*served)["connected"], false);

  ASSERT_TRUE(cluster_.api().ForceRemove(Rt("pods"), "default", "agent-a", "").ok());
  Json again = RunningAgent("agent-a", AgentEnv("agent-token"));
  ASSERT_NE(again["metadata"]["uid"], a["metadata"]["uid"]);
  EXPECT_EQ(Status(again)["connected"], true);
}

TEST_F(VirtualPodsAgentTest, WithoutItsCredentialsTheAgentCannotConnect) {
  // The token's Secret does not exist: the agent cannot fetch its broker credentials.
  Json pod = RunningAgent("agent-nocreds", AgentEnv("absent"));
  EXPECT_EQ(Status(pod), Json({{"connected", false}, {"error", nullptr}}));
  net::HttpResponse start = Agent(pod, "POST", "/api/v1/commands/start");
  EXPECT_EQ(start.status, 400);
  EXPECT_EQ(BodyJson(start), Json({{"error", ""}, {"message", ""}}));
  EXPECT_EQ(Status(pod)["connected"], false);
  EXPECT_EQ(Agent(pod, "POST", "/api/v1/commands/stop").status, 200);

  // Every part of the credentials request is needed: a FORGE_URL that is not http(s) is not.
  CreateTokenSecret("agent-token");
  Json env = AgentEnv("agent-token");
  env[1]["value"] = "forge.example.com";
  Json no_url = RunningAgent("agent-nourl", env);
  EXPECT_EQ(Status(no_url)["connected"], false);
  env = AgentEnv("agent-token");
  env.erase(3);  // no FORGE_TEAM_ID
  Json no_team = RunningAgent("agent-noteam", env);
  EXPECT_EQ(Status(no_team)["connected"], false);
  Json complete = RunningAgent("agent-complete", AgentEnv("agent-token"));
  EXPECT_EQ(Status(complete)["connected"], true);
}

TEST_F(VirtualPodsAgentTest, OtherRoutesAnswerAsExpressDoes) {
  CreateTokenSecret("agent-token");
  Json pod = RunningAgent("agent-routes", AgentEnv("agent-token"));
  net::HttpResponse missing = Agent(pod, "GET", "/api/v1/nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.headers.Get("Content-Type"), "text/html; charset=utf-8");
  EXPECT_THAT(missing.body, HasSubstr("<pre>Cannot GET /api/v1/nope</pre>"));
  // The launcher's routes are not the agent's.
  EXPECT_EQ(Agent(pod, "GET", "/flowforge/info").status, 404);
  // A wrong method is no route either (Express has no 405), and changes nothing.
  net::HttpResponse post_status = Agent(pod, "POST", "/api/v1/status");
  EXPECT_EQ(post_status.status, 404);
  EXPECT_THAT(post_status.body, HasSubstr("Cannot POST /api/v1/status"));
  EXPECT_EQ(Agent(pod, "GET", "/api/v1/commands/stop").status, 404);
  EXPECT_EQ(Agent(pod, "PUT", "/api/v1/commands/stop").status, 404);
  EXPECT_EQ(Status(pod)["connected"], true);
  // Routes match case-insensitively, with an optional trailing '/'.
  EXPECT_EQ(Agent(pod, "POST", "/API/v1/Commands/STOP/").status, 200);
  EXPECT_EQ(BodyJson(Agent(pod, "GET", "/api/v1/status/"))["connected"], false);
  EXPECT_EQ(Agent(pod, "GET", "/api/v1/status//").status, 404);
  // OPTIONS lists a route's methods.
  net::HttpResponse options = Agent(pod, "OPTIONS", "/api/v1/status");
  EXPECT_EQ(options.status, 200);
  EXPECT_EQ(options.headers.Get("Allow"), "GET, HEAD");
  EXPECT_EQ(options.body, "GET, HEAD");
  EXPECT_EQ(Agent(pod, "OPTIONS", "/api/v1/commands/start").headers.Get("Allow"), "POST");
  EXPECT_EQ(Agent(pod, "OPTIONS", "/api/v1/other").status, 404);
  // body-parser refuses a JSON body that does not parse, before any route runs.
  net::HttpRequest bad = Request("POST", "/api/v1/commands/start", "", "{not json");
  bad.headers.Set("Content-Type", "application/json");
  net::HttpResponse refused = MustServe(pod, 3500, bad);
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(Status(pod)["connected"], false);
  bad.body = R"("a string")";  // strict: objects and arrays only
  EXPECT_EQ(MustServe(pod, 3500, bad).status, 400);
  bad.body = R"({"any":"object"})";
  EXPECT_EQ(MustServe(pod, 3500, bad).status, 200);
  EXPECT_EQ(Status(pod)["connected"], true);
}

TEST_F(VirtualPodsAgentTest, TheAgentAnswersOnTheContainerThatDeclaresThePort) {
  CreateTokenSecret("agent-token");
  // No ports declared: 3500 still reaches the agent, other ports the page.
  Json bare = RunningAgent("agent-bare", AgentEnv("agent-token"), nullptr);
  EXPECT_EQ(Status(bare)["connected"], true);
  net::HttpRequest page = Request("GET", "/api/v1/status");
  page.headers.Set("Accept", "application/json");
  EXPECT_EQ(BodyJson(MustServe(bare, 8080, page))["pod"], "agent-bare");

  // The agent on another port: that port is the agent's, the undeclared 3500 is not.
  Json moved = RunningAgent("agent-moved", AgentEnv("agent-token"),
                            Json::array({{{"name", "web"}, {"containerPort", 4000}}}));
  EXPECT_EQ(BodyJson(Agent(moved, "GET", "/api/v1/status", 4000))["connected"], true);
  EXPECT_EQ(BodyJson(MustServe(moved, 3500, page))["pod"], "agent-moved");

  // A pod with a launcher and an agent: each port reaches its own process.
  cluster_.CreatePod("default", "both",
                     Json::array({{{"name", "node-red"},
                                   {"image", "flowfuse/node-red:4.0.0"},
                                   {"ports", {{{"name", "management"}, {"containerPort", 2880}}}}},
                                  {{"name", "mqtt-schema-agent"},
                                   {"image", "flowfuse/mqtt-schema-agent"},
                                   {"env", AgentEnv("agent-token")},
                                   {"ports", {{{"name", "web"}, {"containerPort", 3500}}}}}}));
  Json both = cluster_.SetPodStatus("default", "both", "Running", true);
  EXPECT_EQ(Status(both)["connected"], true);
  EXPECT_EQ(BodyJson(MustServe(both, 2880, Request("GET", "/flowforge/info")))["state"], "running");

  // 3500 on a container of another name is not the agent.
  cluster_.CreatePod("default", "other",
                     Json::array({{{"name", "app"},
                                   {"image", "nginx:1.27"},
                                   {"ports", {{{"name", "web"}, {"containerPort", 3500}}}}}}));
  Json other = cluster_.SetPodStatus("default", "other", "Running", true);
  Json answer = BodyJson(MustServe(other, 3500, page));
  EXPECT_EQ(answer["container"], "app");
  EXPECT_FALSE(answer.contains("connected"));
}

}  // namespace
}  // namespace steward::cluster::ingress

namespace steward::cluster::ingress {
namespace {

// A pod whose image runs as a process (process_images) but whose process the runtime does not
// run (a pod adopted from an earlier run, before the kubelet starts it) refuses connections: the
// stand-in must not answer for it. Pods of other images are answered as ever.
TEST_F(VirtualPodsTest, APodOfAProcessImageWithoutItsProcessRefusesInsteadOfTheStandIn) {
  controllers::ProcessRuntime runtime;
  Json pod = cluster_.RunningPod("default", "proc-1");
  const std::string image = pod["spec"]["containers"][0]["image"].get<std::string>();
  pods_->SetProcessRuntime(&runtime, [&](std::string_view i) { return i == image; });
  auto refused = pods_->Serve(pod, 1880, Request("GET", "/", "x.example.com"));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);

  pods_->SetProcessRuntime(&runtime, [](std::string_view) { return false; });
  EXPECT_EQ(MustServe(pod, 1880, Request("GET", "/", "x.example.com")).status, 200);
}

}  // namespace
}  // namespace steward::cluster::ingress
