// Test fixture for the API: the engine fixture (embedded cluster, SQLite store, engine) plus
// InstanceOps through the API server's pod proxy, a metrics registry and the ApiServer on port
// 0, and a client that speaks to it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "api/api_server.h"
#include "app/engine_metrics.h"
#include "common/metrics.h"
#include "common/mutex.h"
#include "engine/reconciler/engine_test_support.h"
#include "instance/instance_ops.h"
#include "net/http_client.h"

namespace steward::api::testing {

using std::chrono::milliseconds;
using std::chrono::seconds;

inline constexpr const char* kToken = "test-api-token-0123456789";

// One server-sent event.
struct Event {
  std::string event, id, data;
};
// An event's data as JSON (null when it is not JSON).
inline Json DataOf(const Event& e) {
  auto j = ParseJson(e.data);
  return j.ok() ? *j : Json();
}

// A watch event id's parts, "<feed>.<position>": the position (0 when `id` is not one) and
// the feed ("" when it is not one).
inline uint64_t PositionOf(const std::string& id) {
  const size_t dot = id.find('.');
  if (dot == std::string::npos || dot + 1 == id.size()) return 0;
  uint64_t n = 0;
  for (char c : id.substr(dot + 1)) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}
inline std::string FeedOf(const std::string& id) {
  const size_t dot = id.find('.');
  return dot == std::string::npos ? "" : id.substr(0, dot);
}

// Splits an SSE byte stream into events (comments are counted, not returned).
class SseParser {
 public:
  void Feed(std::string_view data, std::vector<Event>* out, int* comments) {
    buffer_ += data;
    size_t end;
    while ((end = buffer_.find("\n\n")) != std::string::npos) {
      std::string block = buffer_.substr(0, end);
      buffer_.erase(0, end + 2);
      Event e;
      bool any = false;
      size_t i = 0;
      while (i <= block.size()) {
        size_t nl = block.find('\n', i);
        if (nl == std::string::npos) nl = block.size();
        std::string line = block.substr(i, nl - i);
        i = nl + 1;
        if (line.empty()) continue;
        if (line[0] == ':') {
          ++*comments;
          continue;
        }
        size_t colon = line.find(": ");
        ASSERT_NE(colon, std::string::npos) << "bad SSE line: " << line;
        std::string field = line.substr(0, colon), value = line.substr(colon + 2);
        if (field == "event") {
          e.event = value;
        } else if (field == "id") {
          e.id = value;
        } else if (field == "data") {
          e.data = value;
        } else {
          ADD_FAILURE() << "unknown SSE field: " << line;
        }
        any = true;
      }
      if (any) out->push_back(std::move(e));
    }
  }

 private:
  std::string buffer_;
};

// A watch stream read on its own thread. kStallAfterSync: it stops reading once the stream's
// `sync` event came (its connection's buffers then fill up) until Resume() or Stop().
// `headers` are sent with the request (Last-Event-ID).
class Watcher {
 public:
  enum Mode { kRead, kStallAfterSync };
  Watcher(uint16_t port, std::string target, Mode mode = kRead, net::Headers headers = {}) {
    thread_ = std::thread([this, port, target, mode, headers] {
      net::HttpClient::Options o;
      o.port = port;
      o.bearer_token = kToken;
      auto client = net::HttpClient::Create(o);
      SseParser parser;
      auto r = client->Stream(
          "GET", target,
          [&](std::string_view data) {
            MutexLock lock(mu_);
            parser.Feed(data, &events_, &comments_);
            if (mode == kStallAfterSync && !resumed_ && Synced()) {
              stalled_ = true;
              cv_.Wait(mu_, [&]() REQUIRES(mu_) { return resumed_; });
            }
            return !stop_;
          },
          headers, seconds(120));
      MutexLock lock(mu_);
      done_ = true;
      if (r.ok()) {
        status_ = r->status;
        content_type_ = std::string(r->headers.Get("Content-Type"));
      } else {
        error_ = r.error().ToString();
      }
    });
  }
  ~Watcher() {
    Stop();
    thread_.join();
  }
  void Stop() {
    {
      MutexLock lock(mu_);
      stop_ = true;
      resumed_ = true;
    }
    cv_.NotifyAll();
  }
  void Resume() {
    {
      MutexLock lock(mu_);
      resumed_ = true;
    }
    cv_.NotifyAll();
  }
  bool stalled() {
    MutexLock lock(mu_);
    return stalled_;
  }
  std::vector<Event> events() {
    MutexLock lock(mu_);
    return events_;
  }
  int comments() {
    MutexLock lock(mu_);
    return comments_;
  }
  bool done() {
    MutexLock lock(mu_);
    return done_;
  }
  std::string error() {
    MutexLock lock(mu_);
    return error_;
  }
  int status() {
    MutexLock lock(mu_);
    return status_;
  }
  std::string content_type() {
    MutexLock lock(mu_);
    return content_type_;
  }
  bool Has(std::string_view event, std::string_view phase = "", std::string_view name = "") {
    for (const auto& e : events()) {
      if (e.event != event) continue;
      if (name.empty() && phase.empty()) return true;
      auto j = ParseJson(e.data);
      if (!j.ok()) continue;
      if (!name.empty() && GetString(*j, "name") != name) continue;
      if (!phase.empty() && GetString((*j)["status"], "phase") != phase) continue;
      return true;
    }
    return false;
  }

 private:
  bool Synced() const REQUIRES(mu_) {
    return std::any_of(events_.begin(), events_.end(),
                       [](const Event& e) { return e.event == "sync"; });
  }

  Mutex mu_;
  CondVar cv_;  // resumed_ was set
  std::vector<Event> events_ GUARDED_BY(mu_);
  int comments_ GUARDED_BY(mu_) = 0;
  bool stalled_ GUARDED_BY(mu_) = false;
  bool resumed_ GUARDED_BY(mu_) = false;
  bool stop_ GUARDED_BY(mu_) = false;
  bool done_ GUARDED_BY(mu_) = false;
  int status_ GUARDED_BY(mu_) = 0;
  std::string error_ GUARDED_BY(mu_), content_type_ GUARDED_BY(mu_);
  std::thread thread_;
};

class ApiFixture : public engine::testing::EngineFixture {
 protected:
  // The embedded cluster's profile (a fixture may run under another).
  virtual cluster::Profile ClusterProfile() { return engine::testing::QuickProfile(); }

  void SetUp() override {
    EngineFixture::SetUp();
    StartCluster(ClusterProfile());
    OpenStore();
    engine::EngineOptions eo = DefaultOptions();
    engine_metrics_ = std::make_unique<app::EngineMetrics>(metrics_);
    engine_metrics_->Hook(eo);
    StartEngine(eo);
    engine_metrics_->Watch(*engine_);
    app::InstallStoreMetrics(metrics_, *store_);
    instance::InstanceOptions io;
    io.ns = kNs;
    io.access = instance::Access::kProxy;
    instance_ = std::make_unique<instance::InstanceOps>(client_, io);
    config_ = eo.config;
    StartApi();
  }
  void TearDown() override {
    if (api_) api_->Stop();
    api_.reset();
    EngineFixture::TearDown();
  }

  // `tweak` changes the options (a test's watch window). A test may Stop the server, reset api_
  // and start another (a restart: the same store, so the same feed and positions for the watch
  // streams), without `metrics` (a registry takes each family once).
  void StartApi(const std::function<void(ApiOptions&)>& tweak = nullptr, bool metrics = true) {
    ApiOptions o;
    o.token = kToken;
    o.keepalive = milliseconds(100);
    o.workers = 4;
    if (tweak) tweak(o);
    ApiDeps d;
    d.store = store_.get();
    d.intents = intents_ != nullptr ? intents_ : &engine_->intents();
    d.config = &config_;
    d.instance = instance_.get();
    d.metrics = metrics ? &metrics_ : nullptr;
    d.ready = [this]() -> Status {
      if (!ready_) return Unavailable("engine caches not synced");
      return Status::Ok();
    };
    auto s = ApiServer::Start(o, d);
    ASSERT_TRUE(s.ok()) << s.error().ToString();
    api_ = std::move(*s);
  }

  net::HttpResponse Do(const std::string& method, const std::string& target,
                       const std::string& body = "", std::string content_type = "application/json",
                       std::string authorization = std::string("Bearer ") + kToken,
                       uint16_t port = 0) {
    net::HttpClient::Options o;
    o.port = port != 0 ? port : api_->port();
    o.timeout = seconds(30);
    auto client = net::HttpClient::Create(o);
    net::Headers h;
    if (!authorization.empty()) h.Set("Authorization", authorization);
    if (!body.empty() && !content_type.empty()) h.Set("Content-Type", content_type);
    auto r = client->Request(method, target, body, h);
    EXPECT_TRUE(r.ok()) << method << " " << target << ": " << r.error().ToString();
    return r.ok() ? *r : net::HttpResponse{0, {}, ""};
  }
  static Json Body(const net::HttpResponse& r) {
    auto j = ParseJson(r.body);
    EXPECT_TRUE(j.ok()) << r.body;
    return j.ok() ? *j : Json();
  }
  // Asserts an error answer: status, reason, field ("" = absent) and a message fragment.
  static void ExpectError(const net::HttpResponse& r, int status, std::string_view reason,
                          std::string_view field, std::string_view message_part) {
    EXPECT_EQ(r.status, status) << r.body;
    Json j = Body(r);
    ASSERT_TRUE(j.contains("error")) << r.body;
    const Json& e = j["error"];
    EXPECT_EQ(e["code"], status) << r.body;
    EXPECT_EQ(GetString(e, "reason"), reason) << r.body;
    if (field.empty()) {
      EXPECT_FALSE(e.contains("field")) << r.body;
    } else {
      EXPECT_EQ(GetString(e, "field"), field) << r.body;
    }
    EXPECT_NE(GetString(e, "message").find(message_part), std::string::npos) << r.body;
    EXPECT_EQ(r.headers.Get("Content-Type"), "application/json");
  }

  static std::string SpecBody(const std::string& image = "flowfuse/node-red:4.0",
                              bool start = false, const std::string& team = "t1") {
    Json spec = Spec(image);
    spec["team"] = team;
    Json b = {{"spec", spec}};
    if (start) b["start"] = true;
    return DumpJson(b);
  }

  // Everything a refused request must leave alone: every project's intent (the engine's status
  // writes, which go on concurrently, are not part of it), its operations and credentials.
  std::string StoreState() {
    std::string out;
    auto all = store_->ListProjects({});
    EXPECT_TRUE(all.ok());
    for (const auto& r : *all) {
      out += r.id + " " + r.name + " " + r.team + " g" + std::to_string(r.generation) + " e" +
             std::to_string(r.restart_epoch) + " " + std::string(store::ToString(r.desired)) + " " +
             r.spec_json + "\n";
      auto h = store_->ListHistory(r.id, 0, 0);
      EXPECT_TRUE(h.ok());
      for (const auto& e : *h) {
        if (e.kind == "operation") out += "  " + std::to_string(e.seq) + " " + e.summary + "\n";
      }
      auto c = store_->ListCredentials(r.id);
      EXPECT_TRUE(c.ok());
      for (const auto& cr : *c)
        out += "  " + cr.id + " " + std::string(store::ToString(cr.state)) + "\n";
    }
    return out;
  }

  MetricsRegistry metrics_;
  std::unique_ptr<app::EngineMetrics> engine_metrics_;  // feeds metrics_
  engine::EngineConfig config_;
  std::unique_ptr<instance::InstanceOps> instance_;
  // The API's intents when set (a test's own, over the same store); else the engine's.
  engine::Intents* intents_ = nullptr;
  std::unique_ptr<ApiServer> api_;
  std::atomic<bool> ready_{true};
};

}  // namespace steward::api::testing
