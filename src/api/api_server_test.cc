// The REST API against a real engine, store and embedded cluster (docs/api.md).
#include "api/api_server.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <thread>

#include "api/api_internal.h"
#include "api/api_test_support.h"
#include "engine/intents/intents.h"

namespace steward::api {

// Reaches into the server for what a client cannot see: how many watch streams it holds.
struct ServerTestPeer {
  static size_t Streams(ApiServer& api) {
    auto& s = *static_cast<Server&>(api).hub_;
    MutexLock lock(s.streams_mu_);
    return s.streams_.size();
  }
  // PUTs with supplied credentials waiting for a credential thread; whether Stop has begun.
  static size_t CredentialQueued(ApiServer& api) {
    return static_cast<Server&>(api).credential_pool_->queued();
  }
  static bool Stopping(ApiServer& api) { return static_cast<Server&>(api).stopping_; }
  static size_t Waiters(ApiServer& api) {
    auto& s = static_cast<Server&>(api);
    MutexLock lock(s.wait_mu_);
    return s.waiters_.size();
  }
  // For streams opened afterwards.
  static void SetStreamPendingLimit(ApiServer& api, size_t bytes) {
    static_cast<Server&>(api).hub_->stream_pending_limit_ = bytes;
  }
  static void SetFanoutQueueLimit(ApiServer& api, size_t bytes) {
    static_cast<Server&>(api).hub_->fanout_queue_limit_ = bytes;
  }
  // Changes queued for the fan-out that it has not taken yet.
  static size_t FanoutQueued(ApiServer& api) {
    auto& s = *static_cast<Server&>(api).hub_;
    MutexLock lock(s.fanout_mu_);
    return s.fanout_queue_.size();
  }
  static std::shared_ptr<Stream> StreamAt(ApiServer& api, size_t i) {
    auto& s = *static_cast<Server&>(api).hub_;
    MutexLock lock(s.streams_mu_);
    return i < s.streams_.size() ? s.streams_[i] : nullptr;
  }
};

namespace testing {
namespace {

using test_support::Eventually;

class ApiTest : public ApiFixture {
 protected:
  // {"spec":{"team":"t1",...,"podSecurityContext":{"a":[[...]]}}}: `depth` levels in all.
  static std::string NestedSpecBody(int depth) {
    Json spec = Spec();
    spec["team"] = "t1";
    spec["podSecurityContext"] = "@";
    std::string body = DumpJson(Json{{"spec", spec}});
    const int arrays = depth - 3;  // the body, spec and podSecurityContext
    body.replace(body.find("\"@\""), 3,
                 "{\"a\":" + std::string(arrays, '[') + std::string(arrays, ']') + "}");
    return body;
  }
};

TEST_F(ApiTest, HealthReadinessAndMetrics) {
  auto h = Do("GET", "/healthz", "", "", "");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.body, "ok\n");
  EXPECT_EQ(Do("GET", "/readyz", "", "", "").status, 200);
  ready_ = false;
  auto r = Do("GET", "/readyz", "", "", "");
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body.find("engine caches not synced"), std::string::npos) << r.body;
  ready_ = true;
  EXPECT_EQ(Do("GET", "/readyz", "", "", "").status, 200);

  auto put = Do("PUT", "/v1/projects/alpha?wait=20s", SpecBody("flowfuse/node-red:4.0", true));
  ASSERT_EQ(put.status, 201) << put.body;
  ASSERT_EQ(Do("GET", "/v1/projects/alpha").status, 200);
  // An agent, stopped: counted among agents, never among projects.
  auto agent =
      Do("PUT", "/v1/agents/mqtt-schema-agent-t-b?wait=20s",
         DumpJson(Json{
             {"spec", {{"team", "t"}, {"broker", "b"}, {"credentials", {{"token", "ffbt_m"}}}}}}));
  ASSERT_EQ(agent.status, 201) << agent.body;

  auto m = Do("GET", "/metrics", "", "", "");
  ASSERT_EQ(m.status, 200);
  EXPECT_EQ(m.headers.Get("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  const std::string& t = m.body;
  EXPECT_NE(t.find("# TYPE steward_reconcile_duration_seconds histogram\n"), std::string::npos);
  EXPECT_NE(t.find("steward_reconciles_total{cluster=\"default\",result=\"terminal\"} 0\n"),
            std::string::npos);
  EXPECT_NE(t.find("steward_api_requests_total{method=\"GET\",route=\"/v1/projects/{project}\","
                   "code=\"200\"} 1\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("steward_api_requests_total{method=\"PUT\",route=\"/v1/projects/{project}\","
                   "code=\"201\"} 1\n"),
            std::string::npos);
  EXPECT_EQ(t.find("/v1/projects/alpha"), std::string::npos) << "raw paths must not be labels";
  EXPECT_NE(t.find("steward_projects{phase=\"Running\"} 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("steward_projects{phase=\"Suspended\"} 0\n"), std::string::npos);
  EXPECT_NE(t.find("steward_agents{phase=\"Suspended\"} 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("steward_agents{phase=\"Running\"} 0\n"), std::string::npos) << t;
  EXPECT_EQ(t.find("ffbt_m"), std::string::npos);
  EXPECT_NE(t.find("steward_api_request_duration_seconds_count{route=\"/readyz\"} 3\n"),
            std::string::npos);
  EXPECT_NE(t.find("# TYPE steward_workqueue_depth gauge\n"), std::string::npos);
  EXPECT_NE(t.find("# TYPE steward_kube_writes_total counter\n"), std::string::npos);
  EXPECT_NE(t.find("steward_orphans{cluster=\"default\"} 0\n"), std::string::npos);
  // Steward's own credentials refused (DESIGN §5's loud metric): exposed, at zero, per code.
  EXPECT_NE(t.find("steward_kube_auth_failures_total{cluster=\"default\",code=\"401\"} 0\n"),
            std::string::npos);
  EXPECT_NE(t.find("steward_kube_auth_failures_total{cluster=\"default\",code=\"403\"} 0\n"),
            std::string::npos);
  // The reconcile histogram counted runs (whatever their results).
  int64_t runs = 0, infinite_bucket = 0;
  for (std::string result : {"ok", "requeue", "error", "terminal"}) {
    const std::string count =
        "\nsteward_reconcile_duration_seconds_count{cluster=\"default\",result=\"" + result +
        "\"} ";
    const std::string inf =
        "\nsteward_reconcile_duration_seconds_bucket{cluster=\"default\",result=\"" + result +
        "\",le=\"+Inf\"} ";
    if (size_t at = t.find(count); at != std::string::npos) {
      runs += std::stoll(t.substr(at + count.size()));
    }
    if (size_t at = t.find(inf); at != std::string::npos) {
      infinite_bucket += std::stoll(t.substr(at + inf.size()));
    }
  }
  EXPECT_GT(runs, 0) << t;
  EXPECT_EQ(infinite_bucket, runs);
  const std::string writes_prefix = "\nsteward_kube_writes_total{cluster=\"default\"} ";
  size_t at = t.find(writes_prefix);
  ASSERT_NE(at, std::string::npos);
  EXPECT_GE(std::stoll(t.substr(at + writes_prefix.size())), 4);  // secret, dep, svc, ingress
}

size_t SeriesOf(const std::string& metrics, const std::string& family) {
  size_t n = 0;
  const std::string prefix = "\n" + family + "{";
  for (size_t at = 0; (at = metrics.find(prefix, at)) != std::string::npos; ++at) ++n;
  return n;
}

// Regression (hardening finding 10): each unauthenticated request with a new method name added a
// permanent steward_api_requests_total series (36 KB of /metrics grew to 1 MB after 100
// requests). The method label now takes its value from a fixed set, "other" for the rest.
TEST_F(ApiTest, RequestsWithRandomMethodsDoNotGrowTheMetrics) {
  auto once = [&](int i) {
    const std::string method = "X" + std::to_string(i) + "Q";
    EXPECT_NE(Do(method, "/v1/projects", "", "", "").status, 0);
    EXPECT_NE(Do(method, "/v1/projects/p" + std::to_string(i)).status, 0);
    EXPECT_NE(Do(method, "/p" + std::to_string(i), "", "", "").status, 0);
  };
  once(0);
  Do("GET", "/metrics", "", "", "");  // counted once served: the next answer shows its series
  const std::string before = Do("GET", "/metrics", "", "", "").body;
  for (int i = 1; i <= 100; ++i) once(i);
  const std::string after = Do("GET", "/metrics", "", "", "").body;
  for (const char* family :
       {"steward_api_requests_total", "steward_api_request_duration_seconds_count"}) {
    EXPECT_EQ(SeriesOf(after, family), SeriesOf(before, family)) << family << "\n" << after;
  }
  EXPECT_EQ(after.find("X17Q"), std::string::npos);
  EXPECT_EQ(after.find("p17"), std::string::npos);
  EXPECT_NE(after.find("steward_api_requests_total{method=\"other\""), std::string::npos) << after;
}

TEST_F(ApiTest, AuthenticationIsRequiredOnV1Only) {
  for (const std::string& auth :
       {std::string(""), std::string("Bearer wrong"), std::string("Basic ") + kToken,
        std::string(kToken), std::string("Bearer")}) {
    auto r = Do("GET", "/v1/projects", "", "", auth);
    ExpectError(r, 401, "Unauthorized", "", auth.empty() ? "Authorization" : "not valid");
    EXPECT_EQ(r.headers.Get("WWW-Authenticate"), "Bearer realm=\"steward\"") << auth;
  }
  // Unknown /v1 paths do not reveal themselves without a token either.
  EXPECT_EQ(Do("GET", "/v1/nope", "", "", "").status, 401);
  // The scheme is case-insensitive.
  EXPECT_EQ(Do("GET", "/v1/projects", "", "", std::string("bearer ") + kToken).status, 200);
  EXPECT_EQ(Do("GET", "/healthz", "", "", "Bearer wrong").status, 200);
  EXPECT_EQ(Do("GET", "/metrics", "", "", "").status, 200);
}

TEST_F(ApiTest, PutCreatesUpdatesAndIsIdempotent) {
  auto created = Do("PUT", "/v1/projects/alpha", SpecBody());
  ASSERT_EQ(created.status, 201) << created.body;
  Json p = Body(created);
  EXPECT_EQ(p["name"], "alpha");
  EXPECT_EQ(p["team"], "t1");
  EXPECT_EQ(p["generation"], 1);
  EXPECT_EQ(p["desiredState"], "suspended");
  EXPECT_EQ(p["restartEpoch"], 0);
  EXPECT_EQ(p["spec"]["stack"]["image"], "flowfuse/node-red:4.0");
  EXPECT_TRUE(p["status"].contains("phase"));
  EXPECT_EQ(GetString(p, "createdAt").size(), 24u) << p.dump();  // 2026-11-30T04:00:00.000Z
  EXPECT_EQ(GetString(p, "createdAt").back(), 'Z');
  const std::string id = p["id"];

  auto same = Do("PUT", "/v1/projects/alpha", SpecBody());
  ASSERT_EQ(same.status, 200) << same.body;
  EXPECT_EQ(Body(same)["generation"], 1);

  auto changed = Do("PUT", "/v1/projects/alpha", SpecBody("flowfuse/node-red:4.1"));
  ASSERT_EQ(changed.status, 200);
  EXPECT_EQ(Body(changed)["generation"], 2);
  EXPECT_EQ(Body(changed)["spec"]["stack"]["image"], "flowfuse/node-red:4.1");
  EXPECT_EQ(Body(changed)["id"], id);

  // By id and by name.
  EXPECT_EQ(Body(Do("GET", "/v1/projects/" + id))["name"], "alpha");
  EXPECT_EQ(Body(Do("GET", "/v1/projects/alpha"))["id"], id);

  // An explicit id on create; a different id for an existing name is a conflict.
  Json b =
      Body(Do("PUT", "/v1/projects/beta", DumpJson(Json{{"spec", Spec()}, {"id", "beta-id-1"}})));
  EXPECT_EQ(b["id"], "beta-id-1");
  std::string before = StoreState();
  auto conflict =
      Do("PUT", "/v1/projects/alpha", DumpJson(Json{{"spec", Spec()}, {"id", "other-id"}}));
  ExpectError(conflict, 409, "Conflict", "", "taken by project " + id);
  EXPECT_EQ(StoreState(), before);

  // An id that is another project's name, or a name that is another's id, would shadow it in
  // every {project} path (issue 34): 409, nothing stored, both paths still the old project's.
  auto shadow = Do("PUT", "/v1/projects/dupid3", DumpJson(Json{{"spec", Spec()}, {"id", "alpha"}}));
  ExpectError(shadow, 409, "Conflict", "", "\"alpha\" is already another record's id or name");
  ExpectError(Do("PUT", "/v1/projects/beta-id-1", SpecBody()), 409, "Conflict", "",
              "\"beta-id-1\" is already another record's id or name");
  EXPECT_EQ(StoreState(), before);
  EXPECT_EQ(Body(Do("GET", "/v1/projects/alpha"))["id"], id);
  EXPECT_EQ(Body(Do("GET", "/v1/projects/beta-id-1"))["name"], "beta");
}

// A CredentialVault that holds every Put until Open(): a cluster slow to take Secrets.
class GatedVault : public engine::CredentialVault {
 public:
  StatusOr<std::string> Put(const std::string& id, const std::string& name,
                            const engine::SuppliedCredentials&) override {
    MutexLock lock(mu_);
    entered_.push_back(name);
    // Bounded: a test that never opens the gate fails instead of hanging.
    if (!cv_.WaitFor(mu_, seconds(60), [&]() REQUIRES(mu_) { return open_; })) {
      return Unavailable("the gate stayed shut");
    }
    return "v-" + id;
  }
  void Discard(const std::string&, const std::string&, const std::string&) override {}
  void Open() {
    MutexLock lock(mu_);
    open_ = true;
    cv_.NotifyAll();
  }
  std::vector<std::string> Entered() {
    MutexLock lock(mu_);
    return entered_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool open_ GUARDED_BY(mu_) = false;
  std::vector<std::string> entered_ GUARDED_BY(mu_);
};

// The API over intents of its own whose supplied credentials go to a GatedVault, with one
// credential thread and room for one more such PUT.
class CredentialLaneTest : public ApiTest {
 protected:
  void SetUp() override {
    ApiTest::SetUp();
    api_->Stop();
    api_.reset();
    gated_ = std::make_unique<engine::Intents>(*store_, nullptr, &config_, &vault_);
    intents_ = gated_.get();
    StartApi(
        [](ApiOptions& o) {
          o.workers = 2;
          o.credential_workers = 1;
          o.credential_queue = 1;
        },
        false);
  }
  void TearDown() override {
    vault_.Open();
    if (api_) api_->Stop();
    api_.reset();
    intents_ = nullptr;
    gated_.reset();
    ApiTest::TearDown();
  }
  static std::string CredentialBody() {
    Json spec = Spec();
    spec["team"] = "t1";
    spec["credentials"] = {
        {"clientId", "ffp_client"},
        {"clientSecret", "s3cret"},
        {"token", "ffpt_token"},
        {"broker", {{"url", "mqtts://broker:8883"}, {"username", "u"}, {"password", "p"}}}};
    return DumpJson(Json{{"spec", spec}});
  }
  GatedVault vault_;
  std::unique_ptr<engine::Intents> gated_;
};

// A PUT with supplied credentials writes their Secret before it commits. A cluster slow to take
// it holds the credential threads, never the API's workers (issue 35): reads and PUTs without
// credentials are answered meanwhile, and past the credential queue such a PUT is refused 503
// with Retry-After, committing nothing; once the cluster takes the Secrets, the waiting ones
// are answered 201.
TEST_F(CredentialLaneTest, ACredentialWriteWaitingForTheClusterHoldsNoWorker) {
  net::HttpResponse a;
  std::thread first([&] { a = Do("PUT", "/v1/projects/cred-a", CredentialBody()); });
  ASSERT_TRUE(Eventually([&] { return vault_.Entered().size() == 1; })) << "A never reached it";
  // Two more while A holds the one credential thread: one waits, the other is refused.
  Mutex mu;
  std::map<std::string, net::HttpResponse> answers;
  std::vector<std::thread> more;
  for (const std::string name : {"cred-b", "cred-c"}) {
    more.emplace_back([&, name] {
      net::HttpResponse r = Do("PUT", "/v1/projects/" + name, CredentialBody());
      MutexLock lock(mu);
      answers[name] = r;
    });
  }
  std::string refused, waiting;
  ASSERT_TRUE(Eventually([&] {
    MutexLock lock(mu);
    if (answers.size() != 1) return false;
    refused = answers.begin()->first;
    waiting = refused == "cred-b" ? "cred-c" : "cred-b";
    return true;
  })) << "neither of the two was answered while the cluster held the first";
  {
    MutexLock lock(mu);
    const net::HttpResponse& r = answers[refused];
    ExpectError(r, 503, "Unavailable", "", "too many requests with supplied credentials");
    EXPECT_EQ(r.headers.Get("Retry-After"), "1");
  }
  // The workers are free: a read and a PUT without credentials are answered now.
  EXPECT_EQ(Do("GET", "/v1/projects").status, 200);
  EXPECT_EQ(Do("PUT", "/v1/projects/plain", SpecBody()).status, 201);
  ExpectError(Do("GET", "/v1/projects/" + refused), 404, "NotFound", "", refused);
  EXPECT_EQ(vault_.Entered().size(), 1u);  // the waiting one has not reached the cluster yet

  vault_.Open();
  first.join();
  for (auto& t : more) t.join();
  EXPECT_EQ(a.status, 201) << a.body;
  EXPECT_EQ(answers[waiting].status, 201) << answers[waiting].body;
  EXPECT_EQ(Do("PUT", "/v1/projects/" + refused, CredentialBody()).status, 201);
  EXPECT_EQ(vault_.Entered(), (std::vector<std::string>{"cred-a", waiting, refused}));
  for (const std::string name : {"cred-a", "cred-b", "cred-c"}) {
    Json p = Body(Do("GET", "/v1/projects/" + name));
    EXPECT_TRUE(p["spec"]["credentials"].contains("fingerprint")) << p.dump();
  }
}

// A stop while the cluster holds one credential PUT and another waits for the thread: the
// waiting one goes no further (it never reaches the cluster and commits nothing), so a slow
// cluster holds the stop for the PUTs under way only, not for the whole queue.
TEST_F(CredentialLaneTest, AStopDropsTheCredentialPutsThatHaveNotBegun) {
  // The answers may or may not make it out before the stop closes the connections.
  auto put = [&](const std::string& name, net::HttpResponse* out) {
    net::HttpClient::Options o;
    o.port = api_->port();
    o.timeout = seconds(30);
    net::Headers h;
    h.Set("Authorization", std::string("Bearer ") + kToken);
    h.Set("Content-Type", "application/json");
    auto r =
        net::HttpClient::Create(o)->Request("PUT", "/v1/projects/" + name, CredentialBody(), h);
    if (r.ok()) *out = *r;
  };
  net::HttpResponse a, b;
  std::thread first([&] { put("cred-a", &a); });
  ASSERT_TRUE(Eventually([&] { return vault_.Entered().size() == 1; }));
  std::thread second([&] { put("cred-b", &b); });
  ASSERT_TRUE(Eventually([&] { return ServerTestPeer::CredentialQueued(*api_) == 1; }));
  std::thread stop([&] { api_->Stop(); });
  ASSERT_TRUE(Eventually([&] { return ServerTestPeer::Stopping(*api_); }));
  vault_.Open();  // the PUT under way finishes; the stop then runs the queued one
  stop.join();
  first.join();
  second.join();
  EXPECT_EQ(vault_.Entered(), std::vector<std::string>{"cred-a"});
  EXPECT_EQ(store_->GetProjectByName("cred-b").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->GetProjectByName("cred-a").ok());
  if (a.status != 0) {
    EXPECT_EQ(a.status, 201) << a.body;
  }
  if (b.status != 0) {
    ExpectError(b, 503, "Unavailable", "", "stopping");
  }
}

// First PUTs of one new name racing each other: one 201, every other one 200 on that project,
// never a 409 (the look-up and the write are one store transaction).
TEST_F(ApiTest, RacingFirstPutsOfANameGiveOne201AndThe200s) {
  constexpr int kClients = 6;
  std::vector<int> codes(kClients, 0);
  std::vector<std::string> ids(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      auto r =
          Do("PUT", "/v1/projects/alpha", SpecBody("flowfuse/node-red:4." + std::to_string(i)));
      codes[i] = r.status;
      if (r.status == 200 || r.status == 201) ids[i] = GetString(Body(r), "id");
    });
  }
  for (auto& c : clients) c.join();
  EXPECT_EQ(std::count(codes.begin(), codes.end(), 201), 1) << ::testing::PrintToString(codes);
  EXPECT_EQ(std::count(codes.begin(), codes.end(), 200), kClients - 1)
      << ::testing::PrintToString(codes);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), ids[0]), kClients);
  EXPECT_EQ(Body(Do("GET", "/v1/projects"))["items"].size(), 1u);
  EXPECT_EQ(Body(Do("GET", "/v1/projects/alpha"))["generation"], kClients);
}

TEST_F(ApiTest, WaitUntilRunningSuspendedAndPurged) {
  auto put = Do("PUT", "/v1/projects/alpha?wait=20s", SpecBody("flowfuse/node-red:4.0", true));
  ASSERT_EQ(put.status, 201) << put.body;
  Json p = Body(put);
  EXPECT_EQ(p["status"]["phase"], "Running") << put.body;
  EXPECT_GE(p["status"]["observedGeneration"].get<int64_t>(), p["generation"].get<int64_t>());
  const std::string id = p["id"];
  EXPECT_TRUE(Observe(id, "alpha").endpoints_ready);

  auto start = Do("POST", "/v1/projects/alpha/start");  // already running: nothing changes
  ASSERT_EQ(start.status, 202);
  EXPECT_EQ(Body(start)["generation"], p["generation"]);

  auto suspend = Do("POST", "/v1/projects/alpha/suspend?wait=20s");
  ASSERT_EQ(suspend.status, 200) << suspend.body;
  EXPECT_EQ(Body(suspend)["status"]["phase"], "Suspended");
  EXPECT_EQ(Body(suspend)["generation"], 2);
  EXPECT_FALSE(Observe(id, "alpha").deployment);

  // Restart of a suspended project is a conflict and changes nothing.
  std::string before = StoreState();
  ExpectError(Do("POST", "/v1/projects/alpha/restart"), 409, "Conflict", "", "not running");
  EXPECT_EQ(StoreState(), before);

  auto del = Do("DELETE", "/v1/projects/" + id + "?wait=20s");
  ASSERT_EQ(del.status, 200) << del.body;
  EXPECT_EQ(Body(del), (Json{{"id", id}, {"name", "alpha"}, {"deleted", true}}));
  ExpectError(Do("GET", "/v1/projects/alpha"), 404, "NotFound", "", "alpha");
  EXPECT_TRUE(Leftovers(id).empty());

  // History stays reachable by id, oldest first, ending with the tombstone.
  auto hist = Do("GET", "/v1/projects/" + id + "/history");
  ASSERT_EQ(hist.status, 200) << hist.body;
  Json items = Body(hist)["items"];
  ASSERT_GE(items.size(), 4u);
  EXPECT_EQ(items[0]["kind"], "operation");
  EXPECT_EQ(items[0]["summary"], "create+start");
  EXPECT_EQ(items.back()["kind"], "purged");
  std::vector<std::string> kinds;
  for (size_t i = 1; i < items.size(); ++i) {
    EXPECT_GT(items[i]["seq"].get<int64_t>(), items[i - 1]["seq"].get<int64_t>());
  }
  for (const auto& i : items) kinds.push_back(i["kind"]);
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "phase"), kinds.end());
  // Paging through history with after/limit.
  auto page = Body(Do("GET", "/v1/projects/" + id + "/history?limit=1&after=" +
                                 std::to_string(items[0]["seq"].get<int64_t>())))["items"];
  ASSERT_EQ(page.size(), 1u);
  EXPECT_EQ(page[0], items[1]);
}

TEST_F(ApiTest, WaitTimesOutWith202) {
  auto put = Do("PUT", "/v1/projects/alpha?wait=1ms", SpecBody("flowfuse/node-red:4.0", true));
  ASSERT_EQ(put.status, 202) << put.body;
  EXPECT_NE(Body(put)["status"]["phase"], "Running");
  // A wait of 0 answers at once too.
  EXPECT_EQ(Do("POST", "/v1/projects/alpha/restart?wait=0").status, 202);
}

TEST_F(ApiTest, StopAnswersPendingWaitsAndEndsStreams) {
  ASSERT_EQ(Do("PUT", "/v1/projects/alpha", SpecBody()).status, 201);
  engine_->Stop();  // nothing converges any more: the wait below stays pending
  Watcher watcher(api_->port(), "/v1/watch");
  ASSERT_TRUE(Eventually([&] { return watcher.Has("sync"); }));
  net::HttpResponse answer;
  std::thread waiting([&] { answer = Do("POST", "/v1/projects/alpha/start?wait=60s"); });
  ASSERT_TRUE(Eventually(
      [&] { return watcher.Has("project", "", "alpha") && watcher.events().size() >= 3; }));
  api_->Stop();
  waiting.join();
  EXPECT_EQ(answer.status, 202) << answer.body;
  EXPECT_EQ(Body(answer)["desiredState"], "running");
  ASSERT_TRUE(Eventually([&] { return watcher.done(); }));
  EXPECT_EQ(watcher.error(), "");  // ended with the last chunk, not cut off
  EXPECT_EQ(watcher.status(), 200);
}

TEST_F(ApiTest, ListFiltersAndPages) {
  for (std::string n : {"p1", "p2", "p3"}) {
    ASSERT_EQ(Do("PUT", "/v1/projects/" + n,
                 SpecBody("flowfuse/node-red:4.0", false, n == "p3" ? "t2" : "t1"))
                  .status,
              201);
  }
  auto first = Body(Do("GET", "/v1/projects?limit=2"));
  ASSERT_EQ(first["items"].size(), 2u);
  ASSERT_NE(first["continue"], "");
  auto second = Body(Do("GET", "/v1/projects?limit=2&continue=" +
                                   net::PercentEncode(first["continue"].get<std::string>())));
  ASSERT_EQ(second["items"].size(), 1u) << second.dump();
  EXPECT_EQ(second["continue"], "");
  std::vector<std::string> ids;
  for (const auto& i : first["items"]) ids.push_back(i["id"]);
  ids.push_back(second["items"][0]["id"]);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), 3u);

  auto t2 = Body(Do("GET", "/v1/projects?team=t2"));
  ASSERT_EQ(t2["items"].size(), 1u);
  EXPECT_EQ(t2["items"][0]["name"], "p3");
  EXPECT_EQ(Body(Do("GET", "/v1/projects?desiredState=suspended"))["items"].size(), 3u);
  EXPECT_EQ(Body(Do("GET", "/v1/projects?desiredState=running"))["items"].size(), 0u);
  EXPECT_EQ(Body(Do("GET", "/v1/projects?phase=Running"))["items"].size(), 0u);
  ASSERT_TRUE(Eventually(
      [&] { return Body(Do("GET", "/v1/projects?phase=Suspended"))["items"].size() == 3u; }));

  ExpectError(Do("GET", "/v1/projects?limit=0"), 400, "InvalidArgument", "limit", "between 1");
  ExpectError(Do("GET", "/v1/projects?limit=1001"), 400, "InvalidArgument", "limit", "1000");
  ExpectError(Do("GET", "/v1/projects?limit=x"), 400, "InvalidArgument", "limit", "\"x\"");
  ExpectError(Do("GET", "/v1/projects?continue=garbage"), 400, "InvalidArgument", "continue",
              "token");
  ExpectError(Do("GET", "/v1/projects?phase=Sleeping"), 400, "InvalidArgument", "phase",
              "Sleeping");
  ExpectError(Do("GET", "/v1/projects?desiredState=off"), 400, "InvalidArgument", "desiredState",
              "off");
}

// The value of steward_api_list_reads_total{source="<source>"} in the metrics text.
double ListReads(const MetricsRegistry& metrics, const std::string& source) {
  const std::string text = metrics.Text();
  const std::string series = "steward_api_list_reads_total{source=\"" + source + "\"} ";
  auto at = text.find(series);
  return at == std::string::npos ? 0 : std::stod(text.substr(at + series.size()));
}

// What a list answers, rendered from the store's records as the API renders each record.
std::string ListBody(const std::vector<store::ProjectRecord>& records, const std::string& next) {
  Json items = Json::array();
  for (const auto& r : records) items.push_back(ProjectJson(r));
  return DumpJson(Json{{"items", std::move(items)}, {"continue", next}}) + "\n";
}

// Lists are served from memory (the view the change feed keeps) and are, byte for byte, what
// rendering the store's records gives, for every filter and page; a committed change is in the
// very next list.
TEST_F(ApiTest, ListsComeFromTheViewAndAreTheStoresRecordsAsRendered) {
  engine_->Stop();  // no status writes: the records change only through this test
  for (std::string n : {"p1", "p2", "p3", "p4"}) {
    ASSERT_EQ(Do("PUT", "/v1/projects/" + n,
                 SpecBody("flowfuse/node-red:4.0", false, n == "p3" ? "t2" : "t1"))
                  .status,
              201);
  }
  ASSERT_EQ(Do("POST", "/v1/projects/p2/start").status, 202);
  const double view_reads = ListReads(metrics_, "view");
  const double store_reads = ListReads(metrics_, "store");
  auto records = [&](store::ListFilter f) {
    auto got = store_->ListProjects(f);
    EXPECT_TRUE(got.ok());
    return got.ok() ? *got : std::vector<store::ProjectRecord>{};
  };
  store::ListFilter projects;
  projects.kind = store::RecordKind::kProject;
  const auto all = records(projects);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(Do("GET", "/v1/projects").body, ListBody(all, ""));
  store::ListFilter t2 = projects;
  t2.team = "t2";
  EXPECT_EQ(Do("GET", "/v1/projects?team=t2").body, ListBody(records(t2), ""));
  store::ListFilter running = projects;
  running.desired = store::DesiredState::kRunning;
  EXPECT_EQ(Do("GET", "/v1/projects?desiredState=running").body, ListBody(records(running), ""));
  // Pending: no status written yet counts as Pending.
  EXPECT_EQ(Do("GET", "/v1/projects?phase=Pending").body, ListBody(all, ""));
  EXPECT_EQ(Do("GET", "/v1/projects?phase=Running").body, ListBody({}, ""));
  // Pages: two, then the rest after the token.
  auto first = Do("GET", "/v1/projects?limit=2");
  const std::string token = Body(first)["continue"];
  ASSERT_FALSE(token.empty());
  EXPECT_EQ(first.body, ListBody({all[0], all[1]}, token));
  EXPECT_EQ(Do("GET", "/v1/projects?limit=2&continue=" + net::PercentEncode(token)).body,
            ListBody({all[2], all[3]}, ""));
  // A change is in the next list; a deletion (not yet purged) shows its new desired state.
  ASSERT_EQ(Do("DELETE", "/v1/projects/p4").status, 202);
  EXPECT_EQ(Do("GET", "/v1/projects").body, ListBody(records(projects), ""));
  EXPECT_EQ(ListReads(metrics_, "view") - view_reads, 8);
  EXPECT_EQ(ListReads(metrics_, "store"), store_reads);
}

// A record another process wrote to the same database (a second SQLite connection: this
// server's store is never told of it) is in the lists all the same: the view has not caught up
// with the store's position, so the list reads the store; the next change this process sees
// reveals the gap and the view is loaded again, and lists come from memory once more.
TEST_F(ApiTest, ARecordAnotherProcessWroteIsListedAndTheViewReloads) {
  engine_->Stop();
  ASSERT_EQ(Do("PUT", "/v1/projects/local", SpecBody()).status, 201);
  store::SqliteOptions so;
  so.path = dir_ + "/steward.db";
  so.synchronous_full = false;
  auto other = store::OpenSqliteStore(so);
  ASSERT_TRUE(other.ok()) << other.error().ToString();
  engine::Intents elsewhere(**other, nullptr);
  ASSERT_TRUE(elsewhere.Put("elsewhere", Spec()).ok());
  auto names = [&](const net::HttpResponse& r) {
    std::vector<std::string> out;
    const Json body = Body(r);
    for (const auto& item : body["items"]) out.push_back(item["name"]);
    std::sort(out.begin(), out.end());
    return out;
  };
  const double store_reads = ListReads(metrics_, "store");
  EXPECT_EQ(names(Do("GET", "/v1/projects")), (std::vector<std::string>{"elsewhere", "local"}));
  EXPECT_EQ(ListReads(metrics_, "store"), store_reads + 1);
  // This process's next commit comes after a gap: the view reloads and serves again.
  ASSERT_EQ(Do("PUT", "/v1/projects/later", SpecBody()).status, 201);
  const double view_reads = ListReads(metrics_, "view");
  ASSERT_TRUE(Eventually([&] {
    auto r = Do("GET", "/v1/projects");
    return ListReads(metrics_, "view") > view_reads && names(r).size() == 3;
  }));
}

TEST_F(ApiTest, PendingFilterIncludesProjectsWithoutStatus) {
  engine_->Stop();  // the engine writes no status
  ASSERT_EQ(Do("PUT", "/v1/projects/p1", SpecBody()).status, 201);
  auto pending = Body(Do("GET", "/v1/projects?phase=Pending"));
  ASSERT_EQ(pending["items"].size(), 1u);
  EXPECT_EQ(pending["items"][0]["status"]["phase"], "Pending");
  EXPECT_EQ(pending["items"][0]["status"]["reason"], "Accepted");
}

TEST_F(ApiTest, WatchDeliversEveryPhaseOfAStartInOrderAndTheDeletion) {
  Watcher all(api_->port(), "/v1/watch");
  Watcher other_team(api_->port(), "/v1/watch?team=t2&initial=false");
  ASSERT_TRUE(Eventually([&] { return all.Has("sync"); }));
  EXPECT_EQ(all.events()[0].event, "sync");  // no projects yet
  EXPECT_EQ(all.content_type(), "");         // headers are reported at the end

  auto put = Do("PUT", "/v1/projects/alpha?wait=20s", SpecBody("flowfuse/node-red:4.0", true));
  ASSERT_EQ(put.status, 201);
  const std::string id = Body(put)["id"];
  ASSERT_TRUE(Eventually([&] { return all.Has("project", "Running", "alpha"); }));
  ASSERT_EQ(Do("DELETE", "/v1/projects/alpha?wait=20s").status, 200);
  ASSERT_TRUE(Eventually([&] { return all.Has("deleted"); }));

  // The phases in the order they were committed: Pending, Provisioning..., Running, then the
  // teardown, and the deletion last; record versions (data.version) increase, and so do the
  // ids' positions, by one per change (nothing else was committed), all of this store's feed.
  std::vector<std::string> phases;
  int64_t last_version = 0;
  Json deleted;
  const std::string feed = FeedOf(all.events()[0].id);
  uint64_t position = PositionOf(all.events()[0].id);  // the sync's
  EXPECT_EQ(position, 0u);                             // nothing was committed before it
  for (const auto& e : all.events()) {
    if (e.event == "sync") continue;
    EXPECT_EQ(FeedOf(e.id), feed);
    EXPECT_EQ(PositionOf(e.id), ++position) << e.id;
    if (e.event == "deleted") {
      deleted = Body(net::HttpResponse{200, {}, e.data});
      continue;
    }
    ASSERT_EQ(e.event, "project");
    ASSERT_TRUE(deleted.is_null()) << "an event after the deletion";
    Json p = Body(net::HttpResponse{200, {}, e.data});
    EXPECT_EQ(p["id"], id);
    int64_t v = p["version"];
    EXPECT_GT(v, last_version);
    last_version = v;
    std::string phase = p["status"]["phase"];
    if (phases.empty() || phases.back() != phase) phases.push_back(phase);
  }
  ASSERT_GE(phases.size(), 4u);
  EXPECT_EQ(phases[0], "Pending");
  EXPECT_EQ(phases[1], "Provisioning");
  EXPECT_EQ(phases[2], "Running");
  EXPECT_EQ(phases[3], "Deleting");
  EXPECT_EQ(deleted, (Json{{"id", id}, {"name", "alpha"}, {"version", last_version + 1}}));

  // A stream for another team saw nothing; keep-alive comments flow.
  EXPECT_TRUE(other_team.events().empty());
  ASSERT_TRUE(Eventually([&] { return other_team.comments() > 0; }));
}

TEST_F(ApiTest, WatchSnapshotAndProjectFilter) {
  ASSERT_EQ(Do("PUT", "/v1/projects/p1", SpecBody()).status, 201);
  ASSERT_EQ(Do("PUT", "/v1/projects/p2", SpecBody()).status, 201);
  Watcher one(api_->port(), "/v1/watch?project=p2");
  ASSERT_TRUE(Eventually([&] { return one.Has("sync"); }));
  auto events = one.events();
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[0].event, "project");
  EXPECT_EQ(Body(net::HttpResponse{200, {}, events[0].data})["name"], "p2");
  EXPECT_EQ(events[1].event, "sync");
  EXPECT_EQ(events[1].data, "{\"projects\":1}");
  ASSERT_EQ(Do("PUT", "/v1/projects/p1", SpecBody("flowfuse/node-red:4.1")).status, 200);
  ASSERT_EQ(Do("PUT", "/v1/projects/p2", SpecBody("flowfuse/node-red:4.1")).status, 200);
  ASSERT_TRUE(Eventually([&] {
    for (const auto& e : one.events()) {
      if (e.event == "project" && e.data.find("4.1") != std::string::npos) return true;
    }
    return false;
  }));
  for (const auto& e : one.events()) {
    if (e.event == "project") {
      EXPECT_EQ(Body(net::HttpResponse{200, {}, e.data})["name"], "p2");
    }
  }
  // A name that does not exist yet: an empty snapshot, then the project once it is created.
  Watcher later(api_->port(), "/v1/watch?project=p3");
  ASSERT_TRUE(Eventually([&] { return later.Has("sync"); }));
  EXPECT_EQ(later.events().front().data, "{\"projects\":0}");
  ASSERT_EQ(Do("PUT", "/v1/projects/p3", SpecBody()).status, 201);
  ASSERT_TRUE(Eventually([&] { return later.Has("project"); }));
  for (const auto& e : later.events()) {
    if (e.event == "project") {
      EXPECT_EQ(Body(net::HttpResponse{200, {}, e.data})["name"], "p3");
    }
  }
  ExpectError(Do("GET", "/v1/watch?initial=maybe"), 400, "InvalidArgument", "initial", "maybe");
}

TEST_F(ApiTest, CredentialCheckAcceptsActiveAndRefusesRevokedAfterRotate) {
  auto put = Do("PUT", "/v1/projects/alpha?wait=20s", SpecBody("flowfuse/node-red:4.0", true));
  ASSERT_EQ(put.status, 201);
  const std::string id = Body(put)["id"];
  auto creds = Creds(id);
  ASSERT_EQ(creds.size(), 1u);
  const std::string old_token = creds[0].token;
  auto check = [&](const std::string& token) {
    return Body(Do("POST", "/v1/credentials/check", DumpJson(Json{{"token", token}})));
  };
  EXPECT_EQ(check(old_token),
            (Json{{"valid", true}, {"projectId", id}, {"project", "alpha"}, {"state", "active"}}));
  EXPECT_EQ(check("no-such-token"), (Json{{"valid", false}, {"state", "unknown"}}));

  auto rotate = Do("POST", "/v1/projects/alpha/rotate-credentials?wait=20s");
  ASSERT_EQ(rotate.status, 200) << rotate.body;
  ASSERT_TRUE(Eventually([&] { return check(old_token)["state"] == "revoked"; }));
  EXPECT_EQ(check(old_token), (Json{{"valid", false}, {"state", "revoked"}}));
  std::string new_token;
  for (const auto& c : Creds(id)) {
    if (c.state == store::CredentialState::kActive) new_token = c.token;
  }
  ASSERT_FALSE(new_token.empty());
  EXPECT_EQ(check(new_token)["valid"], true);

  ExpectError(Do("POST", "/v1/credentials/check", "{}"), 400, "InvalidArgument", "token",
              "non-empty string");
  ExpectError(Do("POST", "/v1/credentials/check", R"({"token":"x","extra":1})"), 400,
              "InvalidArgument", "extra", "unknown field");
  // A token whose string breaks (a raw line feed, truncation) is never echoed (issue 34).
  for (const std::string& broken :
       {R"({"token":")" + new_token + "\n\"}", R"({"token":")" + new_token}) {
    auto refused = Do("POST", "/v1/credentials/check", broken);
    EXPECT_EQ(refused.status, 400) << refused.body;
    EXPECT_NE(refused.body.find("at token"), std::string::npos) << refused.body;
    EXPECT_EQ(refused.body.find(new_token.substr(0, 12)), std::string::npos) << refused.body;
  }
}

// Finding 6 of the hardening issue: a spec object the cluster would prune (an unknown field in
// a security context) used to be accepted and leave the project waiting for ever to observe its
// own write. It is refused up front, naming the field, and nothing is stored or written.
TEST_F(ApiTest, SpecFieldsTheClusterWouldPruneAreRefused) {
  const std::string before = StoreState();
  const uint64_t writes = ClusterWrites();
  Json bad = Spec();
  bad["podSecurityContext"] = Json{{"a", 1}};
  ExpectError(Do("PUT", "/v1/projects/alpha", DumpJson(Json{{"spec", bad}, {"start", true}})), 400,
              "InvalidArgument", "spec.podSecurityContext.a", "unknown field");
  bad = Spec();
  bad["containerSecurityContext"] = Json{{"bogus", true}};
  ExpectError(
      Do("PUT", "/v1/projects/alpha?wait=20s", DumpJson(Json{{"spec", bad}, {"start", true}})), 400,
      "InvalidArgument", "spec.containerSecurityContext.bogus", "unknown field");
  bad = Spec();
  bad["podSecurityContext"] = Json{{"runAsUser", "1000"}};
  ExpectError(Do("PUT", "/v1/projects/alpha", DumpJson(Json{{"spec", bad}, {"start", true}})), 400,
              "InvalidArgument", "spec.podSecurityContext.runAsUser", "must be an integer");
  // The operator's policy (defaults: no privileged containers, no root).
  bad = Spec();
  bad["containerSecurityContext"] = Json{{"privileged", true}};
  ExpectError(Do("PUT", "/v1/projects/alpha", DumpJson(Json{{"spec", bad}, {"start", true}})), 400,
              "InvalidArgument", "spec.containerSecurityContext.privileged",
              "engine.policy.allowPrivileged");
  bad = Spec();
  bad["podSecurityContext"] = Json{{"runAsUser", 0}};
  ExpectError(Do("PUT", "/v1/projects/alpha", DumpJson(Json{{"spec", bad}, {"start", true}})), 400,
              "InvalidArgument", "spec.podSecurityContext.runAsUser",
              "engine.policy.allowRunAsRoot");
  EXPECT_EQ(Do("GET", "/v1/projects/alpha").status, 404);
  EXPECT_EQ(StoreState(), before);
  EXPECT_EQ(ClusterWrites(), writes);
}

TEST_F(ApiTest, RefusedRequestsChangeNothing) {
  auto put = Do("PUT", "/v1/projects/alpha?wait=20s", SpecBody());
  ASSERT_EQ(put.status, 201) << put.body;
  const std::string before = StoreState();
  const uint64_t writes = ClusterWrites();

  ExpectError(Do("PUT", "/v1/projects/alpha", "{\"spec\": "), 400, "MalformedJson", "", "not JSON");
  ExpectError(Do("PUT", "/v1/projects/alpha", "[1]"), 400, "InvalidArgument", "",
              "must be a JSON object");
  ExpectError(Do("PUT", "/v1/projects/alpha", ""), 400, "MalformedJson", "", "empty");
  ExpectError(Do("PUT", "/v1/projects/alpha", DumpJson(Json{{"spec", Spec()}, {"color", 1}})), 400,
              "InvalidArgument", "color", "color: unknown field");
  Json bad_spec = Spec();
  bad_spec["foo"] = 1;
  ExpectError(Do("PUT", "/v1/projects/alpha", DumpJson(Json{{"spec", bad_spec}})), 400,
              "InvalidArgument", "spec.foo", "unknown field");
  bad_spec = Spec();
  bad_spec["stack"]["memory"] = 0;
  ExpectError(Do("PUT", "/v1/projects/alpha", DumpJson(Json{{"spec", bad_spec}})), 400,
              "InvalidArgument", "spec.stack.memory", "between 1 and 1048576");
  ExpectError(Do("PUT", "/v1/projects/alpha", DumpJson(Json{{"id", "x"}})), 400, "InvalidArgument",
              "spec", "required");
  ExpectError(Do("PUT", "/v1/projects/alpha", DumpJson(Json{{"spec", Spec()}, {"start", "yes"}})),
              400, "InvalidArgument", "start", "boolean");
  ExpectError(Do("PUT", "/v1/projects/Bad_Name", SpecBody()), 400, "InvalidArgument", "name",
              "Bad_Name");
  ExpectError(Do("PUT", "/v1/projects/-x", SpecBody()), 400, "InvalidArgument", "name",
              "start with a lowercase letter or digit");
  ExpectError(Do("PUT", "/v1/projects/" + std::string(64, 'a'), SpecBody()), 400, "InvalidArgument",
              "name", "at most 63");
  ExpectError(Do("PUT", "/v1/projects/beta", DumpJson(Json{{"spec", Spec()}, {"id", "Bad Id"}})),
              400, "InvalidArgument", "id", "DNS-1123");
  std::string big = SpecBody();
  big.insert(big.size() - 1, ",\"pad\":\"" + std::string(1024 * 1024, 'x') + "\"");
  ExpectError(Do("PUT", "/v1/projects/alpha", big), 413, "BodyTooLarge", "", "1048576");
  // Over the HTTP server's own limit too (the connection is then closed after the answer).
  big.insert(big.size() - 1, ",\"more\":\"" + std::string(512 * 1024, 'y') + "\"");
  ExpectError(Do("PUT", "/v1/projects/alpha", big), 413, "BodyTooLarge", "", "1048576");
  ExpectError(Do("PUT", "/v1/projects/alpha", SpecBody(), "text/plain"), 415,
              "UnsupportedMediaType", "", "text/plain");
  ExpectError(Do("PUT", "/v1/projects/alpha", SpecBody(), ""), 415, "UnsupportedMediaType", "",
              "application/json");
  ExpectError(Do("PUT", "/v1/projects/alpha", SpecBody(), "application/json; charset=latin1"), 415,
              "UnsupportedMediaType", "", "latin1");
  ExpectError(Do("POST", "/v1/projects/nope/start"), 404, "NotFound", "", "nope");
  ExpectError(Do("DELETE", "/v1/projects/nope"), 404, "NotFound", "", "nope");
  ExpectError(Do("GET", "/v1/projects/nope/history"), 404, "NotFound", "", "nope");
  ExpectError(Do("PUT", "/v1/projects/alpha?wait=forever", SpecBody("flowfuse/node-red:4.2")), 400,
              "InvalidArgument", "wait", "forever");
  ExpectError(Do("POST", "/v1/projects/alpha/start?wait=11m"), 400, "InvalidArgument", "wait",
              "11m");
  ExpectError(Do("DELETE", "/v1/projects/alpha?wait=-1s"), 400, "InvalidArgument", "wait", "-1s");
  ExpectError(Do("POST", "/v1/projects/alpha/start", R"({"now":true})"), 400, "InvalidArgument",
              "now", "unknown field");
  auto wrong = Do("POST", "/v1/projects/alpha");
  ExpectError(wrong, 405, "MethodNotAllowed", "", "POST");
  EXPECT_EQ(wrong.headers.Get("Allow"), "DELETE, GET, PUT");
  auto wrong2 = Do("GET", "/v1/projects/alpha/start");
  ExpectError(wrong2, 405, "MethodNotAllowed", "", "GET");
  EXPECT_EQ(wrong2.headers.Get("Allow"), "POST");
  ExpectError(Do("GET", "/v1/nothing/here"), 404, "NotFound", "", "/v1/nothing/here");
  ExpectError(Do("GET", "/nothing"), 404, "NotFound", "", "/nothing");

  EXPECT_EQ(StoreState(), before);
  EXPECT_EQ(ClusterWrites(), writes);
  // A charset parameter is accepted.
  EXPECT_EQ(Do("PUT", "/v1/projects/alpha", SpecBody(), "application/json; charset=utf-8").status,
            200);
}

// Issue 13, findings 4 and 5: unknown or repeated query parameters, and a path that only names a
// route once decoded.
TEST_F(ApiTest, QueryParametersAndEscapedSlashesAreCheckedBeforeAnythingHappens) {
  ASSERT_EQ(Do("PUT", "/v1/projects/alpha", SpecBody()).status, 201);
  const std::string before = StoreState();
  const uint64_t writes = ClusterWrites();
  ExpectError(Do("POST", "/v1/projects/alpha/start?wiat=5s"), 400, "InvalidArgument", "wiat",
              "unknown query parameter \"wiat\" (this route takes wait)");
  ExpectError(Do("POST", "/v1/projects/alpha/start?wait=1s&wait=2s"), 400, "InvalidArgument",
              "wait", "given more than once");
  ExpectError(Do("PUT", "/v1/projects/alpha?dryRun=true", SpecBody("flowfuse/node-red:4.1")), 400,
              "InvalidArgument", "dryRun", "unknown query parameter");
  ExpectError(Do("GET", "/v1/projects/alpha?wait=1s"), 400, "InvalidArgument", "wait",
              "this route takes none");
  ExpectError(Do("GET", "/v1/projects?limit=1&limit=2"), 400, "InvalidArgument", "limit",
              "more than once");
  ExpectError(Do("GET", "/v1/projects?phase=Running&phases=Failed"), 400, "InvalidArgument",
              "phases", "team, phase, desiredState, cluster, limit, continue");
  ExpectError(Do("GET", "/healthz?verbose", "", "", ""), 400, "InvalidArgument", "verbose",
              "unknown query parameter");
  // "%2F" inside a segment is not a separator: no route is reached through it.
  ExpectError(Do("GET", "/v1/projects/alpha%2fhistory"), 400, "BadPath", "", "%2F");
  ExpectError(Do("DELETE", "/v1/projects/alpha%2Fstart"), 400, "BadPath", "", "escaped");
  // Still authentication first.
  EXPECT_EQ(Do("GET", "/v1/projects/alpha%2fhistory", "", "", "").status, 401);
  // Other escapes decode as before.
  EXPECT_EQ(Do("GET", "/v1/projects/%61lpha").status, 200);
  EXPECT_EQ(StoreState(), before);
  EXPECT_EQ(ClusterWrites(), writes);
}

// Issue 13, finding 7: a custom hostname may not be another project's host.
TEST_F(ApiTest, HostnamesAreUniqueAcrossProjects) {
  Json spec = Spec();
  spec["customHostname"] = "flows.example.com";
  ASSERT_EQ(Do("PUT", "/v1/projects/alpha", DumpJson(Json{{"spec", spec}})).status, 201);
  const std::string before = StoreState();
  auto thief = Do("PUT", "/v1/projects/thief", DumpJson(Json{{"spec", spec}, {"start", true}}));
  ExpectError(thief, 409, "Conflict", "", "hostname \"flows.example.com\" is already in use");
  EXPECT_EQ(thief.body.find("alpha"), std::string::npos) << thief.body;
  Json squat = Spec();
  squat["customHostname"] = "alpha." + config_.domain;
  ExpectError(Do("PUT", "/v1/projects/thief", DumpJson(Json{{"spec", squat}})), 400,
              "InvalidArgument", "spec.customHostname", "reserved for project names");
  EXPECT_EQ(StoreState(), before);
}

// Policy hardening, findings A and B: pod-level baseline fields, IP addresses as hosts, a kept
// URL on another project's name and names under the forge host are 400 naming the field, and
// nothing is stored or written.
TEST_F(ApiTest, PolicyHardeningRefusalsNameTheField) {
  const std::string before = StoreState();
  const uint64_t writes = ClusterWrites();
  auto put = [&](const std::string& field, const Json& value) {
    Json spec = Spec();
    spec[field] = value;
    return Do("PUT", "/v1/projects/alpha", DumpJson(Json{{"spec", spec}, {"start", true}}));
  };
  ExpectError(put("podSecurityContext", Json{{"seLinuxOptions", {{"type", "spc_t"}}}}), 400,
              "InvalidArgument", "spec.podSecurityContext.seLinuxOptions.type",
              "engine.policy.allowPrivileged");
  ExpectError(put("podSecurityContext", Json{{"windowsOptions", {{"hostProcess", true}}}}), 400,
              "InvalidArgument", "spec.podSecurityContext.windowsOptions.hostProcess",
              "engine.policy.allowPrivileged");
  ExpectError(put("customHostname", "127.1"), 400, "InvalidArgument", "spec.customHostname",
              "IPv4 address");
  ExpectError(put("url", "http://0x7f.0.0.1:1880"), 400, "InvalidArgument", "spec.url",
              "IPv4 address");
  ExpectError(put("url", "http://beta." + config_.domain), 400, "InvalidArgument", "spec.url",
              "reserved for project names");
  const std::string forge = config_.forge_url.substr(config_.forge_url.find("://") + 3);
  ExpectError(put("customHostname", "x." + forge), 400, "InvalidArgument", "spec.customHostname",
              "platform");
  EXPECT_EQ(Do("GET", "/v1/projects/alpha").status, 404);
  EXPECT_EQ(StoreState(), before);
  EXPECT_EQ(ClusterWrites(), writes);
}

// Issue 13, finding 15: no answer says Running for a generation the engine has not reached.
TEST_F(ApiTest, AnAcceptedIntentIsNeverReportedAsTheOldPhase) {
  auto put = Do("PUT", "/v1/projects/alpha?wait=20s", SpecBody("flowfuse/node-red:4.0", true));
  ASSERT_EQ(put.status, 201) << put.body;
  ASSERT_EQ(Body(put)["status"]["phase"], "Running");
  engine_->Stop();  // nothing acts on what follows
  Watcher watch(api_->port(), "/v1/watch?project=alpha&initial=false");
  ASSERT_TRUE(Eventually([&] { return ServerTestPeer::Streams(*api_) == 1; }));
  auto suspend = Do("POST", "/v1/projects/alpha/suspend");
  ASSERT_EQ(suspend.status, 202);
  Json s = Body(suspend);
  EXPECT_EQ(s["generation"], 2);
  EXPECT_EQ(s["status"]["phase"], "Suspending");
  EXPECT_EQ(s["status"]["reason"], "Accepted");
  EXPECT_EQ(s["status"]["observedGeneration"], 1);
  EXPECT_EQ(Body(Do("GET", "/v1/projects/alpha"))["status"]["phase"], "Suspending");
  EXPECT_TRUE(Body(Do("GET", "/v1/projects?phase=Running"))["items"].empty());
  EXPECT_EQ(Body(Do("GET", "/v1/projects?phase=Suspending"))["items"].size(), 1u);
  // A stack change on top: still nothing the engine reached.
  auto start = Do("PUT", "/v1/projects/alpha", SpecBody("flowfuse/node-red:4.1", true));
  ASSERT_EQ(start.status, 200) << start.body;
  EXPECT_EQ(Body(start)["status"]["phase"], "Updating");
  ASSERT_TRUE(Eventually([&] { return watch.Has("project", "Updating", "alpha"); }));
  EXPECT_TRUE(watch.Has("project", "Suspending", "alpha"));
  EXPECT_FALSE(watch.Has("project", "Running", "alpha"));
  watch.Stop();
}

// docs/security.md: the open routes can live on a listener of their own.
TEST_F(ApiTest, AProbeListenerTakesTheOpenRoutesOffTheApiPort) {
  // A second API server over the same engine, with its own registry and a probe listener.
  MetricsRegistry registry;
  ApiOptions o;
  o.token = kToken;
  o.workers = 2;
  o.probe_http = net::HttpServer::Options{};
  ApiDeps d;
  d.store = store_.get();
  d.intents = &engine_->intents();
  d.config = &config_;
  d.metrics = &registry;
  auto started = ApiServer::Start(o, d);
  ASSERT_TRUE(started.ok()) << started.error().ToString();
  std::unique_ptr<ApiServer> api = std::move(*started);
  const uint16_t port = api->port();
  const uint16_t probe = api->probe_port();
  ASSERT_NE(probe, 0);
  ASSERT_NE(probe, port);
  EXPECT_EQ(api_->probe_port(), 0);
  EXPECT_EQ(Do("GET", "/healthz", "", "", "", probe).status, 200);
  EXPECT_EQ(Do("GET", "/readyz", "", "", "", probe).status, 200);
  auto m = Do("GET", "/metrics", "", "", "", probe);
  EXPECT_EQ(m.status, 200);
  EXPECT_NE(m.body.find("steward_api_requests_total"), std::string::npos) << m.body;
  // Not on the API's port any more, with or without a token.
  ExpectError(Do("GET", "/metrics", "", "", "", port), 404, "NotFound", "", "/metrics");
  ExpectError(Do("GET", "/healthz", "", "", std::string("Bearer ") + kToken, port), 404, "NotFound",
              "", "/healthz");
  // And the API is not on the probe port, even with the token.
  ExpectError(Do("GET", "/v1/projects", "", "", std::string("Bearer ") + kToken, probe), 404,
              "NotFound", "", "serves /healthz, /readyz and /metrics only");
  EXPECT_EQ(Do("GET", "/v1/projects", "", "", std::string("Bearer ") + kToken, port).status, 200);
  api->Stop();
}

// Regressions (hardening findings 2 and 3): a body nested 80,000 levels deep (200 KB, under the
// body limit) crashed the server, 60,000 were accepted and stored; a key given twice was accepted
// with the last value winning. Both are now a 400 naming the limit or the key, storing nothing.
TEST_F(ApiTest, DeepOrDuplicateKeyBodiesAreRefusedAndStoreNothing) {
  auto put = Do("PUT", "/v1/projects/alpha", SpecBody());
  ASSERT_EQ(put.status, 201) << put.body;
  const std::string before = StoreState();

  for (int depth : {80000, kMaxNestingDepth + 1}) {
    ExpectError(Do("PUT", "/v1/projects/alpha", NestedSpecBody(depth)), 400, "MalformedJson", "",
                "nested deeper than the limit of 256 levels");
    ExpectError(Do("PUT", "/v1/projects/beta", NestedSpecBody(depth)), 400, "MalformedJson", "",
                "nested deeper than the limit of 256 levels");
  }
  ExpectError(Do("PUT", "/v1/projects/alpha", R"({"spec":{"team":"a"},"spec":{"team":"b"}})"), 400,
              "MalformedJson", "", "duplicate key \"spec\"");
  ExpectError(Do("PUT", "/v1/projects/beta", R"({"spec":{"team":"a","team":"b"}})"), 400,
              "MalformedJson", "", "duplicate key \"spec.team\"");
  ExpectError(Do("POST", "/v1/projects/alpha/start", R"({"wait":1,"wait":2})"), 400,
              "MalformedJson", "", "duplicate key \"wait\"");
  EXPECT_EQ(StoreState(), before);

  // At the limit the body is parsed: what answers is the spec's own validation (no spec field
  // takes free-form nesting since the pass-through objects are schema-checked), and the server
  // keeps answering.
  ExpectError(Do("PUT", "/v1/projects/alpha", NestedSpecBody(kMaxNestingDepth)), 400,
              "InvalidArgument", "spec.podSecurityContext.a", "unknown field");
  EXPECT_EQ(StoreState(), before);
  EXPECT_EQ(Do("GET", "/v1/projects/alpha").status, 200);
}

TEST_F(ApiTest, OperationsOnADeletingProjectConflict) {
  engine_->Stop();  // the deletion stays pending
  ASSERT_EQ(Do("PUT", "/v1/projects/alpha", SpecBody()).status, 201);
  auto del = Do("DELETE", "/v1/projects/alpha");
  ASSERT_EQ(del.status, 202);
  EXPECT_EQ(Body(del)["desiredState"], "deleted");
  const std::string before = StoreState();
  ExpectError(Do("POST", "/v1/projects/alpha/start"), 409, "Conflict", "", "being deleted");
  ExpectError(Do("POST", "/v1/projects/alpha/rotate-credentials"), 409, "Conflict", "",
              "being deleted");
  ExpectError(Do("PUT", "/v1/projects/alpha", SpecBody("flowfuse/node-red:4.1")), 409, "Conflict",
              "", "being deleted");
  EXPECT_EQ(StoreState(), before);
}

TEST_F(ApiTest, InstanceOperations) {
  ASSERT_EQ(
      Do("PUT", "/v1/projects/alpha?wait=20s", SpecBody("flowfuse/node-red:4.0", true)).status,
      201);
  ASSERT_EQ(Do("PUT", "/v1/projects/beta?wait=20s", SpecBody()).status, 201);
  const std::string id = Body(Do("GET", "/v1/projects/alpha"))["id"];

  auto info = Do("GET", "/v1/projects/alpha/instance");
  ASSERT_EQ(info.status, 200) << info.body;
  EXPECT_EQ(Body(info)["project"]["id"], id);
  EXPECT_EQ(Body(info)["instance"]["id"], id);
  EXPECT_EQ(Body(info)["instance"]["state"], "running");

  auto stop = Do("POST", "/v1/projects/alpha/flows/stop");
  ASSERT_EQ(stop.status, 200) << stop.body;
  ASSERT_EQ(Body(stop)["pods"].size(), 1u);
  EXPECT_EQ(Body(stop)["pods"][0]["status"], 200);
  EXPECT_EQ(Body(Do("GET", "/v1/projects/alpha/instance"))["instance"]["state"], "stopped");
  ASSERT_EQ(Do("POST", "/v1/projects/alpha/flows/start").status, 200);
  ASSERT_EQ(Do("POST", "/v1/projects/alpha/flows/restart").status, 200);
  // Start while running (not while starting: that the launcher answers {}): it refuses, and the
  // error says why in the launcher's words ({"err": "Already running"}).
  ASSERT_TRUE(Eventually([&] {
    return Body(Do("GET", "/v1/projects/alpha/instance"))["instance"]["state"] == "running";
  }));
  ExpectError(Do("POST", "/v1/projects/alpha/flows/start"), 502, "InstanceError", "",
              "answered 409: Already running");
  auto logout = Do("POST", "/v1/projects/alpha/logout", R"({"token":"user-token"})");
  ASSERT_EQ(logout.status, 200) << logout.body;
  ExpectError(Do("POST", "/v1/projects/alpha/logout", "{}"), 400, "InvalidArgument", "token",
              "non-empty");

  auto logs = Do("GET", "/v1/projects/alpha/logs");
  ASSERT_EQ(logs.status, 200) << logs.body;
  Json items = Body(logs)["items"];
  ASSERT_FALSE(items.empty());
  bool saw_stop = false, saw_logout = false;
  for (const auto& l : items) {
    EXPECT_FALSE(GetString(l, "pod").empty());
    saw_stop |= GetString(l, "msg") == "Stopping Node-RED";
    saw_logout |= GetString(l, "msg") == "Node-RED logout requested";
  }
  EXPECT_TRUE(saw_stop);
  EXPECT_TRUE(saw_logout);

  for (std::string path : {"/instance", "/logs"}) {
    ExpectError(Do("GET", "/v1/projects/beta" + path), 409, "ProjectNotRunning", "", "Suspended");
  }
  ExpectError(Do("POST", "/v1/projects/beta/flows/start"), 409, "ProjectNotRunning", "",
              "Suspended");
  ExpectError(Do("POST", "/v1/projects/beta/logout", R"({"token":"t"})"), 409, "ProjectNotRunning",
              "", "Suspended");
  ExpectError(Do("GET", "/v1/projects/nope/instance"), 404, "NotFound", "", "nope");
}

TEST_F(ApiTest, AWaitEndsWhenItsClientLeaves) {
  engine_->Stop();  // nothing converges: the wait below would last its full minute
  ASSERT_EQ(Do("PUT", "/v1/projects/alpha", SpecBody()).status, 201);
  {
    net::HttpClient::Options o;
    o.port = api_->port();
    o.bearer_token = kToken;
    o.timeout = milliseconds(300);
    auto client = net::HttpClient::Create(o);
    auto r = client->Request("POST", "/v1/projects/alpha/start?wait=60s");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), StatusCode::kDeadlineExceeded);
  }
  ASSERT_TRUE(Eventually([&] { return ServerTestPeer::Waiters(*api_) == 0; }));
  // The intent itself was committed before the wait began.
  EXPECT_EQ(Body(Do("GET", "/v1/projects/alpha"))["desiredState"], "running");
}

TEST_F(ApiTest, AGoneWatchClientIsForgottenAndNeverBlocksCommits) {
  {
    Watcher w(api_->port(), "/v1/watch?initial=false");
    ASSERT_TRUE(Eventually([&] { return w.comments() > 0; }));
    EXPECT_EQ(ServerTestPeer::Streams(*api_), 1u);
    w.Stop();  // the client reads no more and closes at its next chunk
    ASSERT_TRUE(Eventually([&] { return w.done(); }));
  }
  ASSERT_TRUE(Eventually([&] { return ServerTestPeer::Streams(*api_) == 0; }));
  // Commits go on (the listener has nobody to wait for).
  for (std::string n : {"p1", "p2", "p3"}) {
    ASSERT_EQ(Do("PUT", "/v1/projects/" + n, SpecBody()).status, 201);
  }
}

// A client that stops reading is ended with a final `event: error` (SlowConsumer) once its
// unsent output passes the bound, after everything it had not read yet; commits never wait.
TEST_F(ApiTest, AWatchClientThatDoesNotReadIsEndedWithASlowConsumerError) {
  engine_->Stop();  // only this test's commits (and a spec the engine need not understand)
  ServerTestPeer::SetStreamPendingLimit(*api_, 64 * 1024);
  Watcher slow(api_->port(), "/v1/watch", Watcher::kStallAfterSync);
  ASSERT_TRUE(Eventually([&] { return slow.stalled(); }));
  ASSERT_EQ(ServerTestPeer::Streams(*api_), 1u);
  // Each commit of this project is a 64 KiB event.
  store::ProjectRecord big;
  big.id = big.name = "big";
  big.team = "t1";
  big.spec_json = DumpJson(Json{{"pad", std::string(64 * 1024, 'x')}});
  ASSERT_TRUE(store_->CreateProject(big, {}).ok());
  int commits = 1;
  auto bump = [](store::ProjectRecord& r, const std::vector<store::Credential>&, store::Mutation&) {
    ++r.generation;
    return Status::Ok();
  };
  // Commit until the stream is dropped (the kernel's socket buffers fill first), at most 2,000.
  ASSERT_TRUE(Eventually(
      [&] {
        if (ServerTestPeer::Streams(*api_) == 0) return true;
        if (commits < 2000) {
          EXPECT_TRUE(store_->MutateProject("big", bump).ok());
          ++commits;
        }
        return false;
      },
      seconds(60), milliseconds(2)))
      << commits << " commits";
  // The drop may be tripped by a keep-alive after the last commit was written, so commit a few
  // more now: the ended stream must get none of them.
  const int commits_at_drop = commits;
  for (int i = 0; i < 3; ++i, ++commits) ASSERT_TRUE(store_->MutateProject("big", bump).ok());
  // The client reads on: every change up to the drop, in order, then the error, then the end.
  slow.Resume();
  ASSERT_TRUE(Eventually([&] { return slow.done(); }, seconds(30)));
  EXPECT_EQ(slow.error(), "");  // ended with the last chunk, not cut off
  auto events = slow.events();
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.front().event, "sync");
  int64_t version = 0;
  for (size_t i = 1; i + 1 < events.size(); ++i) {
    ASSERT_EQ(events[i].event, "project");
    EXPECT_EQ(DataOf(events[i])["version"], ++version);  // none lost, none repeated
    EXPECT_EQ(PositionOf(events[i].id), PositionOf(events.front().id) + i);
  }
  EXPECT_LE(version, commits_at_drop);  // nothing committed after the drop reached it
  const Event& last = events.back();
  EXPECT_EQ(last.event, "error");
  EXPECT_EQ(last.id, "");
  Json error = Body(net::HttpResponse{200, {}, last.data});
  EXPECT_EQ(error["reason"], "SlowConsumer");
  EXPECT_NE(GetString(error, "message").find("Last-Event-ID"), std::string::npos) << last.data;
  const std::string metrics = metrics_.Text();
  EXPECT_NE(metrics.find("steward_watch_streams_ended_total{reason=\"slow_consumer\"} 1\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("steward_watch_streams_ended_total{reason=\"fanout_behind\"} 0\n"),
            std::string::npos);
  // Other streams and commits go on.
  Watcher later(api_->port(), "/v1/watch?project=big");
  ASSERT_TRUE(Eventually([&] { return later.Has("sync"); }));
  ASSERT_TRUE(store_->MutateProject("big", bump).ok());
  ASSERT_TRUE(Eventually([&] {
    auto e = later.events();
    return !e.empty() && DataOf(e.back())["version"] == commits + 1;
  }));
}

// The store listener only queues: a stream the fan-out cannot write to (its lock held here, as
// if its writes were slow) holds up no commit, and then gets every change in commit order.
TEST_F(ApiTest, CommitsDoNotWaitForWatchStreams) {
  engine_->Stop();  // only the commits below
  Watcher w(api_->port(), "/v1/watch?initial=false");
  ASSERT_TRUE(Eventually([&] { return ServerTestPeer::Streams(*api_) == 1; }));
  std::shared_ptr<Stream> stream = ServerTestPeer::StreamAt(*api_, 0);
  ASSERT_NE(stream, nullptr);
  const std::vector<std::string> names = {"p1", "p2", "p3", "p4", "p5"};
  auto provisioning = [](store::ProjectRecord& r, const std::vector<store::Credential>&,
                         store::Mutation&) {
    r.status_json = R"({"phase":"Provisioning","observedGeneration":1})";
    r.phase = "Provisioning";
    return Status::Ok();
  };
  {
    MutexLock hold(stream->mu);
    std::string first_id;
    for (const std::string& n : names) {
      auto put = Do("PUT", "/v1/projects/" + n, SpecBody());
      ASSERT_EQ(put.status, 201);
      if (first_id.empty()) first_id = GetString(Body(put), "id");
    }
    ASSERT_TRUE(store_->MutateProject(first_id, provisioning).ok());
    EXPECT_TRUE(w.events().empty());
  }
  ASSERT_TRUE(Eventually([&] { return w.events().size() >= names.size() + 1; }));
  auto events = w.events();
  ASSERT_EQ(events.size(), names.size() + 1);
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(events[i].event, "project");
    EXPECT_EQ(DataOf(events[i])["name"], names[i]);
    EXPECT_EQ(DataOf(events[i])["version"], 1);
    EXPECT_EQ(PositionOf(events[i].id), i + 1);
  }
  EXPECT_EQ(DataOf(events.back())["name"], "p1");
  EXPECT_EQ(DataOf(events.back())["version"], 2);
  EXPECT_EQ(PositionOf(events.back().id), names.size() + 1);
}

// A fan-out that falls behind by more than its bound holds no more: the queue is dropped and
// every stream open then is ended with an Overloaded error, after what it was already sent, in
// order; streams opened afterwards get every later change.
TEST_F(ApiTest, AFanoutThatFallsBehindEndsEveryStreamWithAnOverloadedError) {
  engine_->Stop();  // only this test's commits
  ServerTestPeer::SetFanoutQueueLimit(*api_, 256 * 1024);
  Watcher w(api_->port(), "/v1/watch?initial=false");
  ASSERT_TRUE(Eventually([&] { return ServerTestPeer::Streams(*api_) == 1; }));
  std::shared_ptr<Stream> stream = ServerTestPeer::StreamAt(*api_, 0);
  ASSERT_NE(stream, nullptr);
  store::ProjectRecord big;
  big.id = big.name = "big";
  big.team = "t1";
  big.spec_json = DumpJson(Json{{"pad", std::string(64 * 1024, 'x')}});  // 64 KiB events
  auto bump = [](store::ProjectRecord& r, const std::vector<store::Credential>&, store::Mutation&) {
    ++r.generation;
    return Status::Ok();
  };
  constexpr int kCommits = 10;  // 9 × 64 KiB queued: past the bound while the fan-out is held
  {
    MutexLock hold(stream->mu);
    ASSERT_TRUE(store_->CreateProject(big, {}).ok());
    // The fan-out took the first change and waits for this stream; the rest pile up.
    ASSERT_TRUE(Eventually([&] { return ServerTestPeer::FanoutQueued(*api_) == 0; }));
    for (int i = 1; i < kCommits; ++i) ASSERT_TRUE(store_->MutateProject("big", bump).ok());
  }
  ASSERT_TRUE(Eventually([&] { return w.done(); }, seconds(30)));
  EXPECT_EQ(w.error(), "");  // ended with the last chunk
  auto events = w.events();
  ASSERT_EQ(events.size(), 2u);  // the change it was being sent, then the error
  EXPECT_EQ(events[0].event, "project");
  EXPECT_EQ(DataOf(events[0])["version"], 1);
  EXPECT_EQ(PositionOf(events[0].id), 1u);
  EXPECT_EQ(events.back().event, "error");
  Json error = Body(net::HttpResponse{200, {}, events.back().data});
  EXPECT_EQ(error["reason"], "Overloaded");
  EXPECT_NE(GetString(error, "message").find("Last-Event-ID"), std::string::npos);
  ASSERT_TRUE(Eventually([&] { return ServerTestPeer::Streams(*api_) == 0; }));
  EXPECT_NE(metrics_.Text().find("steward_watch_streams_ended_total{reason=\"fanout_behind\"} 1\n"),
            std::string::npos);
  // The window was filled by the listener, not from the dropped queue: resuming from the last
  // id received replays every change the stream missed, in order, and nothing else.
  {
    net::Headers h;
    h.Set("Last-Event-ID", events[0].id);
    Watcher resumed(api_->port(), "/v1/watch?initial=false", Watcher::kRead, h);
    ASSERT_TRUE(Eventually([&] { return resumed.Has("resumed"); }));
    auto replay = resumed.events();
    ASSERT_EQ(replay.size(), static_cast<size_t>(kCommits));  // kCommits - 1, then `resumed`
    for (int i = 0; i + 1 < kCommits; ++i) {
      EXPECT_EQ(replay[i].event, "project");
      EXPECT_EQ(PositionOf(replay[i].id), static_cast<uint64_t>(i + 2));
      EXPECT_EQ(DataOf(replay[i])["version"], i + 2);
    }
    EXPECT_EQ(replay.back().event, "resumed");
    EXPECT_EQ(DataOf(replay.back()), (Json{{"from", events[0].id}, {"replayed", kCommits - 1}}));
  }
  // Nothing more is dropped: a new stream gets its snapshot and the next change.
  Watcher later(api_->port(), "/v1/watch?project=big");
  ASSERT_TRUE(Eventually([&] { return later.Has("sync"); }));
  ASSERT_TRUE(store_->MutateProject("big", bump).ok());
  ASSERT_TRUE(Eventually([&] {
    auto e = later.events();
    return !e.empty() && DataOf(e.back())["version"] == kCommits + 1;
  }));
}

// The text on the wire is exactly docs/api.md's, as rendered once per change.
TEST_F(ApiTest, WatchEventsAreTheDocumentedText) {
  engine_->Stop();
  Watcher w(api_->port(), "/v1/watch?initial=false");
  ASSERT_TRUE(Eventually([&] { return ServerTestPeer::Streams(*api_) == 1; }));
  ASSERT_EQ(Do("PUT", "/v1/projects/alpha", SpecBody()).status, 201);
  ASSERT_TRUE(Eventually([&] { return w.Has("project"); }));
  auto rec = store_->GetProjectByName("alpha");
  ASSERT_TRUE(rec.ok());
  auto e = w.events().front();
  EXPECT_EQ(PositionOf(e.id), 1u);
  const std::string json = DumpJson(ProjectJson(*rec));
  EXPECT_EQ(ProjectEvent(rec->kind, json, e.id),
            "event: project\nid: " + e.id + "\ndata: " + DumpJson(ProjectJson(*rec)) + "\n\n");
  EXPECT_EQ(e.data, DumpJson(ProjectJson(*rec)));
  EXPECT_EQ(DataOf(e)["version"], rec->version);
  EXPECT_EQ(ProjectEvent(rec->kind, json, ""),
            "event: project\ndata: " + DumpJson(ProjectJson(*rec)) + "\n\n");
  EXPECT_EQ(DeletedEvent("i", "n", 7, "b.3"),
            "event: deleted\nid: b.3\ndata: {\"id\":\"i\",\"name\":\"n\",\"version\":7}\n\n");
  EXPECT_EQ(DeletedEvent("i", "n", 0, "b.3"),
            "event: deleted\nid: b.3\ndata: {\"id\":\"i\",\"name\":\"n\"}\n\n");
  EXPECT_EQ(SyncEvent(2, "b.3"), "event: sync\nid: b.3\ndata: {\"projects\":2}\n\n");
  EXPECT_EQ(ResumedEvent("b.1", 2, "b.3"),
            "event: resumed\nid: b.3\ndata: {\"from\":\"b.1\",\"replayed\":2}\n\n");
  EXPECT_EQ(ResetEvent("Expired", "m"),
            "event: reset\ndata: {\"message\":\"m\",\"reason\":\"Expired\"}\n\n");
  const std::string slow = SlowConsumerEvent(123);
  const std::string prefix = "event: error\ndata: ";
  ASSERT_TRUE(slow.starts_with(prefix)) << slow;
  ASSERT_TRUE(slow.ends_with("}\n\n")) << slow;
  Json data = Body(net::HttpResponse{200, {}, slow.substr(prefix.size())});
  EXPECT_EQ(data["reason"], "SlowConsumer");
  EXPECT_NE(GetString(data, "message").find("123 bytes unsent"), std::string::npos) << slow;
}

}  // namespace
}  // namespace testing
}  // namespace steward::api

namespace steward::api {
namespace testing {
namespace {

// Issue 15 §1: supplied credentials are write-only — no answer, history line or watch event
// carries a value, only the fingerprint.
TEST_F(ApiTest, SuppliedCredentialsAreWriteOnlyEverywhere) {
  Watcher watch(api_->port(), "/v1/watch?project=alpha");
  ASSERT_TRUE(Eventually([&] { return ServerTestPeer::Streams(*api_) == 1; }));
  Json spec = Spec();
  spec["credentials"] = {{"clientId", "ffp_visible_id"},
                         {"clientSecret", "hunter2-secret"},
                         {"token", "ffpt_hunter2_token"},
                         {"broker",
                          {{"url", "mqtts://broker.example.com:8883"},
                           {"username", "team-u"},
                           {"password", "hunter2-broker"}}}};
  auto put =
      Do("PUT", "/v1/projects/alpha?wait=30s", DumpJson(Json{{"spec", spec}, {"start", true}}));
  ASSERT_EQ(put.status, 201) << put.body;
  ASSERT_EQ(Body(put)["status"]["phase"], "Running") << put.body;
  const Json shown = Body(put)["spec"]["credentials"];
  ASSERT_TRUE(shown.contains("fingerprint")) << put.body;
  EXPECT_EQ(shown["keys"].size(), 6u);

  std::string everything = put.body;
  for (const char* target : {"/v1/projects/alpha", "/v1/projects", "/v1/projects/alpha/history",
                             "/v1/projects/alpha/instance", "/metrics"}) {
    auto r = Do("GET", target);
    EXPECT_LT(r.status, 500) << target << ": " << r.body;
    everything += r.body;
  }
  ASSERT_TRUE(Eventually([&] { return watch.Has("project", "Running", "alpha"); }));
  watch.Stop();
  for (const auto& e : watch.events()) everything += e.data;
  for (const char* value : {"hunter2-secret", "ffpt_hunter2_token", "hunter2-broker"}) {
    EXPECT_EQ(everything.find(value), std::string::npos) << value;
  }
  // Echoing the spec back as GET shows it changes nothing.
  Json echoed = Body(Do("GET", "/v1/projects/alpha"))["spec"];
  auto again = Do("PUT", "/v1/projects/alpha", DumpJson(Json{{"spec", echoed}}));
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(Body(again)["generation"], 1);
  // A malformed set is refused naming the field, and nothing changes.
  const std::string before = StoreState();
  Json bad = Spec();
  bad["credentials"] = {{"clientId", "a"}, {"clientSecret", "hunter2 x"}, {"token", "t"}};
  ExpectError(Do("PUT", "/v1/projects/alpha", DumpJson(Json{{"spec", bad}})), 400,
              "InvalidArgument", "spec.credentials.clientSecret", "printable ASCII");
  EXPECT_EQ(StoreState(), before);
}

TEST_F(ApiTest, StackDefaultsAnswerAsTheDriversInit) {
  auto r = Do("GET", "/v1/stack");
  ASSERT_EQ(r.status, 200) << r.body;
  Json j = Body(r);
  EXPECT_EQ(j["defaults"]["container"], config_.default_stack.image);
  EXPECT_EQ(j["defaults"]["cpu"], config_.default_stack.cpu);
  EXPECT_EQ(j["defaults"]["memory"], config_.default_stack.memory_mb);
  EXPECT_EQ(j["properties"]["cpu"]["label"], "CPU Cores (in 1/100th units)");
  EXPECT_TRUE(j["properties"]["memory"]["validate"].is_string());
  ExpectError(Do("GET", "/v1/stack?x=1"), 400, "InvalidArgument", "x", "unknown");
}

TEST_F(ApiTest, RenameTakesANameAndOnlyASuspendedProject) {
  ASSERT_EQ(
      Do("PUT", "/v1/projects/alpha?wait=30s", SpecBody("flowfuse/node-red:4.0", true)).status,
      201);
  ExpectError(Do("POST", "/v1/projects/alpha/rename", DumpJson(Json{{"name", "beta"}})), 409,
              "Conflict", "", "Suspended");
  ASSERT_EQ(Do("POST", "/v1/projects/alpha/suspend?wait=30s").status, 200);
  ExpectError(Do("POST", "/v1/projects/alpha/rename", "{}"), 400, "InvalidArgument", "name",
              "required");
  ExpectError(Do("POST", "/v1/projects/alpha/rename", DumpJson(Json{{"name", "Bad"}})), 400,
              "InvalidArgument", "name", "lowercase");
  ExpectError(Do("POST", "/v1/projects/alpha/rename", DumpJson(Json{{"name", "b"}, {"x", 1}})), 400,
              "InvalidArgument", "x", "unknown");
  auto renamed = Do("POST", "/v1/projects/alpha/rename?wait=30s", DumpJson(Json{{"name", "beta"}}));
  ASSERT_EQ(renamed.status, 200) << renamed.body;
  EXPECT_EQ(Body(renamed)["name"], "beta");
  EXPECT_EQ(Body(renamed)["status"]["phase"], "Suspended");
  EXPECT_EQ(Do("GET", "/v1/projects/alpha").status, 404);
  EXPECT_EQ(Do("GET", "/v1/projects/beta").status, 200);
}

}  // namespace
}  // namespace testing
}  // namespace steward::api
