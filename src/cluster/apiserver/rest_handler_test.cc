// The REST front end's handling of resourceVersions: snapshot-consistent paginated lists over
// HTTP, and reads at a resourceVersion the store has not reached yet (the watch cache's wait and
// its 504 "Too large resource version").
#include "cluster/apiserver/rest_handler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "cluster/model/resource_types.h"
#include "net/http_client.h"

namespace steward::cluster {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

// Counts the requests handed to the REST handler (so a test knows they are in).
class CountingHandler final : public net::Handler {
 public:
  explicit CountingHandler(net::Handler& inner) : inner_(inner) {}
  void Handle(net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) override {
    ++count_;
    inner_.Handle(std::move(request), std::move(writer));
  }
  int count() const { return count_.load(); }

 private:
  net::Handler& inner_;
  std::atomic<int> count_{0};
};

class RestHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto storage = Storage::Open({});
    ASSERT_TRUE(storage.ok()) << storage.status().ToString();
    storage_ = std::move(storage).value();
    api_ = std::make_unique<ObjectApi>(*storage_, RealClock::Get(), random_);
    ASSERT_TRUE(api_->Create(Type(), "", Json{{"metadata", {{"name", "default"}}}}).ok());
    faults_ = std::make_unique<FaultInjector>(FaultSpec{}, 1);
    log_ = std::make_unique<RequestLog>(RealClock::Get());
    RestHandler::Options options;
    options.bookmark_interval = 20ms;
    rest_ = std::make_unique<RestHandler>(*api_, *faults_, *log_, options);
    counting_ = std::make_unique<CountingHandler>(*rest_);
    auto server = net::HttpServer::Start({}, *counting_);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
  }

  void TearDown() override {
    if (rest_) rest_->Stop();
    server_.reset();
  }

  static const ResourceType& Type(std::string_view gr = "namespaces") {
    return *FindGroupResource(gr);
  }

  std::unique_ptr<net::HttpClient> Client() {
    net::HttpClient::Options o;
    o.port = server_->port();
    return net::HttpClient::Create(o);
  }

  void CreateConfigMap(const std::string& name) {
    auto r = api_->Create(Type("configmaps"), "default",
                          Json{{"metadata", {{"name", name}}}, {"data", {{"k", "v"}}}});
    ASSERT_TRUE(r.ok()) << r.error().message;
  }

  uint64_t Current() const { return storage_->CurrentRevision(); }

  // A watch stream's events, one JSON per line, until `done` says so or the stream ends.
  struct Streamed {
    int status = 0;
    std::vector<Json> events;
    bool ended = false;  // the server ended the stream
  };
  Streamed Watch(const std::string& query, const std::function<bool(const Json&)>& done,
                 std::chrono::milliseconds timeout = 10s) {
    Streamed out;
    std::string buffer;
    bool stopped = false;
    auto client = Client();
    auto resp = client->Stream(
        "GET", "/api/v1/namespaces/default/configmaps?watch=1&" + query,
        [&](std::string_view data) {
          buffer.append(data);
          for (size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
            auto line = ParseJson(std::string_view(buffer).substr(0, nl));
            buffer.erase(0, nl + 1);
            EXPECT_TRUE(line.ok()) << "not JSON: " << buffer;
            if (!line.ok()) return false;
            out.events.push_back(*line);
            if (done(*line)) {
              stopped = true;
              return false;
            }
          }
          return true;
        },
        {}, timeout);
    EXPECT_TRUE(resp.ok()) << resp.status().ToString();
    if (resp.ok()) out.status = resp->status;
    out.ended = resp.ok() && !stopped;
    return out;
  }

  Random random_{3};
  std::unique_ptr<Storage> storage_;
  std::unique_ptr<ObjectApi> api_;
  std::unique_ptr<FaultInjector> faults_;
  std::unique_ptr<RequestLog> log_;
  std::unique_ptr<RestHandler> rest_;
  std::unique_ptr<CountingHandler> counting_;
  std::unique_ptr<net::HttpServer> server_;
};

std::string Name(const Json& event) {
  const Json* name = FindPath(event, "object.metadata.name");
  return name != nullptr && name->is_string() ? name->get<std::string>() : "";
}

uint64_t EventRevision(const Json& event) {
  const Json* rv = FindPath(event, "object.metadata.resourceVersion");
  return rv != nullptr && rv->is_string() ? std::stoull(rv->get<std::string>()) : 0;
}

TEST_F(RestHandlerTest, PagesOverHttpKeepTheirSnapshotAndExpireOnceCompacted) {
  for (int i = 0; i < 6; ++i) CreateConfigMap("cm" + std::to_string(i));
  auto client = Client();
  const std::string path = "/api/v1/namespaces/default/configmaps?limit=2";
  auto first = client->Request("GET", path);
  ASSERT_TRUE(first.ok());
  auto page1 = ParseJson(first->body);
  ASSERT_TRUE(page1.ok());
  std::string rv = (*page1)["metadata"]["resourceVersion"];
  std::string token = (*page1)["metadata"]["continue"];
  ASSERT_TRUE(api_->Delete(Type("configmaps"), "default", "cm2").ok());
  CreateConfigMap("cm2a");

  auto second = client->Request("GET", path + "&continue=" + token);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->status, 200) << second->body;
  auto page2 = ParseJson(second->body);
  ASSERT_TRUE(page2.ok());
  EXPECT_EQ((*page2)["metadata"]["resourceVersion"], rv);
  ASSERT_EQ((*page2)["items"].size(), 2u);
  EXPECT_EQ((*page2)["items"][0]["metadata"]["name"], "cm2");  // deleted since, listed as it was
  EXPECT_EQ((*page2)["items"][1]["metadata"]["name"], "cm3");
  EXPECT_EQ((*page2)["metadata"]["remainingItemCount"], 2);

  storage_->Compact();
  auto third = client->Request(
      "GET", path + "&continue=" + (*page2)["metadata"]["continue"].get<std::string>());
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->status, 410);
  auto status = ParseJson(third->body);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ((*status)["kind"], "Status");
  EXPECT_EQ((*status)["reason"], "Expired");
  EXPECT_EQ((*status)["code"], 410);
  EXPECT_THAT((*status)["message"].get<std::string>(),
              ::testing::StartsWith("The provided continue parameter is too old to display a "
                                    "consistent list result."));
}

TEST_F(RestHandlerTest, ReadsAtAFutureRevisionWaitForIt) {
  CreateConfigMap("a");
  uint64_t want = Current() + 2;
  int before = counting_->count();
  auto start = Steady::now();
  // The list, the get and the sendInitialEvents watch wait; two writes bring the revision.
  auto list = std::async(std::launch::async, [&] {
    return Client()->Request(
        "GET", "/api/v1/namespaces/default/configmaps?resourceVersion=" + std::to_string(want));
  });
  auto get = std::async(std::launch::async, [&] {
    return Client()->Request(
        "GET", "/api/v1/namespaces/default/configmaps/a?resourceVersion=" + std::to_string(want));
  });
  auto watch = std::async(std::launch::async, [&] {
    return Watch(
        "sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&"
        "resourceVersion=" +
            std::to_string(want),
        [](const Json& ev) { return ev["type"] == "BOOKMARK"; });
  });
  // The writes come once the three requests are in (and so waiting).
  auto deadline = Steady::now() + 5s;
  while (counting_->count() < before + 3 && Steady::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_EQ(counting_->count(), before + 3);
  EXPECT_EQ(list.wait_for(0s), std::future_status::timeout);  // still waiting
  EXPECT_EQ(get.wait_for(0s), std::future_status::timeout);
  CreateConfigMap("b");
  CreateConfigMap("c");

  auto l = list.get();
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->status, 200) << l->body;
  auto listed = ParseJson(l->body);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ((*listed)["items"].size(), 3u);
  EXPECT_EQ((*listed)["metadata"]["resourceVersion"], std::to_string(want));
  auto g = get.get();
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->status, 200) << g->body;
  auto w = watch.get();
  EXPECT_EQ(w.status, 200);
  std::vector<std::string> names;
  for (const auto& ev : w.events) names.push_back(ev["type"].get<std::string>() + " " + Name(ev));
  EXPECT_EQ(names, (std::vector<std::string>{"ADDED a", "ADDED b", "ADDED c", "BOOKMARK "}));
  ASSERT_FALSE(w.events.empty());
  EXPECT_EQ(EventRevision(w.events.back()), want);
  EXPECT_LT(Steady::now() - start, 2500ms);  // served when the revision came, not at the timeout
}

TEST_F(RestHandlerTest, ReadsAtARevisionThatNeverComesTimeOutWithTooLarge) {
  CreateConfigMap("a");
  uint64_t current = Current();
  std::string want = std::to_string(current + 100);
  const std::string message =
      "Timeout: Too large resource version: " + want + ", current: " + std::to_string(current);
  auto start = Steady::now();
  auto list = std::async(std::launch::async, [&] {
    return Client()->Request("GET", "/api/v1/namespaces/default/configmaps?resourceVersion=" +
                                        want + "&resourceVersionMatch=NotOlderThan&limit=10");
  });
  auto get = std::async(std::launch::async, [&] {
    return Client()->Request("GET",
                             "/api/v1/namespaces/default/configmaps/a?resourceVersion=" + want);
  });
  auto watch = Watch(
      "sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&"
      "resourceVersion=" +
          want,
      [](const Json&) { return false; });
  // The watch: one ERROR event carrying the 504, then the end of the stream.
  EXPECT_EQ(watch.status, 200);
  EXPECT_TRUE(watch.ended);
  ASSERT_EQ(watch.events.size(), 1u);
  EXPECT_EQ(watch.events[0]["type"], "ERROR");
  const Json& status = watch.events[0]["object"];
  EXPECT_EQ(status["kind"], "Status");
  EXPECT_EQ(status["code"], 504);
  EXPECT_EQ(status["reason"], "Timeout");
  EXPECT_EQ(status["message"], message);
  EXPECT_EQ(status["details"]["causes"],
            Json::parse(R"([{"reason":"ResourceVersionTooLarge",)"
                        R"("message":"Too large resource version"}])"));
  EXPECT_EQ(status["details"]["retryAfterSeconds"], 1);
  // The list and the get: a 504 with Retry-After.
  for (auto* f : {&list, &get}) {
    auto resp = f->get();
    ASSERT_TRUE(resp.ok());
    EXPECT_EQ(resp->status, 504) << resp->body;
    EXPECT_EQ(resp->headers.Get("Retry-After"), "1");
    auto body = ParseJson(resp->body);
    ASSERT_TRUE(body.ok());
    EXPECT_EQ((*body)["reason"], "Timeout");
    EXPECT_EQ((*body)["message"], message);
  }
  // They waited (about 3 s) before giving up.
  EXPECT_GE(Steady::now() - start, 2900ms);
}

TEST_F(RestHandlerTest, PlainWatchFromAFutureRevisionWaitsForItsEvents) {
  // Without sendInitialEvents a watch from a future resourceVersion is not an error: it streams
  // the events after that revision whenever they come, and never a bookmark below it.
  CreateConfigMap("a");
  uint64_t from = Current() + 2;
  auto watch = std::async(std::launch::async, [&] {
    return Watch("allowWatchBookmarks=true&resourceVersion=" + std::to_string(from),
                 [](const Json& ev) { return ev["type"] == "ADDED"; });
  });
  auto deadline = Steady::now() + 5s;
  while (rest_->ActiveWatches() == 0 && Steady::now() < deadline) std::this_thread::sleep_for(5ms);
  ASSERT_EQ(rest_->ActiveWatches(), 1u);
  // Long enough for several 20 ms bookmark ticks while the store is still below `from`.
  std::this_thread::sleep_for(150ms);
  CreateConfigMap("b");  // from - 1
  CreateConfigMap("c");  // from: not delivered (the watch starts after it)
  CreateConfigMap("d");  // from + 1
  auto w = watch.get();
  EXPECT_EQ(w.status, 200);
  ASSERT_FALSE(w.events.empty());
  EXPECT_EQ(w.events.back()["type"], "ADDED");
  EXPECT_EQ(Name(w.events.back()), "d");
  for (const auto& ev : w.events) {
    EXPECT_NE(ev["type"], "ERROR");
    EXPECT_GE(EventRevision(ev), from) << DumpJson(ev);
  }
}

}  // namespace
}  // namespace steward::cluster
