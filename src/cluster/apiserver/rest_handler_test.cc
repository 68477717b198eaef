// The REST front end's handling of resourceVersions: snapshot-consistent paginated lists over
// HTTP, and reads at a resourceVersion the store has not reached yet (the watch cache's wait and
// its 504 "Too large resource version"); its input limits (nesting, duplicate fields) and the
// bounded labels of apiserver_request_total.
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
#include "net/server_test_support.h"

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
  std::optional<net::HttpResponse> CheckHead(const net::HttpRequest& head) override {
    return inner_.CheckHead(head);
  }
  std::optional<size_t> BodyLimit(const net::HttpRequest& head) override {
    return inner_.BodyLimit(head);
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

// Regression (item 16): the embedded API server read the head, sent "100 Continue" and only
// then checked the token, so an unauthenticated client was invited to send its body (up to
// 3 MiB). Like kube-apiserver's authentication filter, a request without a valid token is
// refused with 401 from its head: no "100 Continue", its body never read, and the refusal
// logged as any other. A valid token still gets "100 Continue" and is served.
TEST_F(RestHandlerTest, UnauthenticatedHeadIsRefusedBefore100Continue) {
  RestHandler::Options options;
  options.token = "secret-token";
  RestHandler rest(*api_, *faults_, *log_, options);
  auto server = net::HttpServer::Start({}, rest);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const std::string body = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}})";
  auto head = [&](const std::string& authorization) {
    return "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: h\r\n" + authorization +
           "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\nExpect: 100-continue\r\n\r\n";
  };
  for (const std::string& authorization :
       {std::string("Authorization: Bearer wrong\r\n"), std::string()}) {
    SCOPED_TRACE(authorization);
    net::server_testing::RawConnection raw((*server)->port());
    ASSERT_TRUE(raw.connected());
    raw.Send(head(authorization));
    const std::string first = raw.ReadUntil("\r\n\r\n");
    ASSERT_EQ(first.rfind("HTTP/1.1 401 Unauthorized\r\n", 0), 0u) << first;
    const std::string rest_of_it = raw.ReadToEof();  // the server closes: no body is read
    EXPECT_NE(rest_of_it.find(R"("reason":"Unauthorized")"), std::string::npos) << rest_of_it;
  }
  EXPECT_FALSE(api_->storage().Get("configmaps", "default", "x"));
  net::server_testing::RawConnection raw((*server)->port());
  ASSERT_TRUE(raw.connected());
  raw.Send(head("Authorization: Bearer secret-token\r\n"));
  EXPECT_EQ(raw.ReadUntil("\r\n\r\n"), "HTTP/1.1 100 Continue\r\n\r\n");
  raw.Send(body);
  EXPECT_EQ(raw.ReadUntil("\r\n").rfind("HTTP/1.1 201 Created", 0), 0u);
  rest.Stop();
  (*server)->Stop();
}

// ---- input limits and bounded metrics (docs/embedded-cluster.md, "Input limits") ----

// A ConfigMap whose unknown field "x" holds nested arrays: `depth` levels in all.
std::string DeepConfigMap(const std::string& name, int depth) {
  const int arrays = depth - 1;  // the object itself
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name + R"("},"x":)" +
         std::string(arrays, '[') + std::string(arrays, ']') + "}";
}

net::Headers ContentType(const std::string& type) {
  net::Headers h;
  h.Set("Content-Type", type);
  return h;
}

// Regression (hardening finding 2): a request body nested 80,000 levels deep overflowed the
// stack of the thread that parsed it. Refused with 400 naming the limit, in JSON and YAML, for
// writes and patches; nothing is stored.
TEST_F(RestHandlerTest, BodiesNestedDeeperThanTheLimitAre400NamingIt) {
  CreateConfigMap("cm");
  auto client = Client();
  const std::string collection = "/api/v1/namespaces/default/configmaps";
  for (int depth : {80000, kMaxNestingDepth + 1}) {
    for (const char* type : {"application/json", "application/yaml"}) {
      auto r = client->Request("POST", collection, DeepConfigMap("deep", depth), ContentType(type));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(r->status, 400) << depth << " " << type;
      EXPECT_THAT(r->body, ::testing::HasSubstr("nested deeper than the limit of 256 levels"))
          << type;
    }
    auto put = client->Request("PUT", collection + "/cm", DeepConfigMap("cm", depth),
                               ContentType("application/json"));
    ASSERT_TRUE(put.ok());
    EXPECT_EQ(put->status, 400);
    for (const char* type :
         {"application/merge-patch+json", "application/strategic-merge-patch+json",
          "application/apply-patch+yaml"}) {
      auto p = client->Request("PATCH", collection + "/cm?fieldManager=t",
                               DeepConfigMap("cm", depth), ContentType(type));
      ASSERT_TRUE(p.ok());
      EXPECT_EQ(p->status, 400) << type;
      EXPECT_THAT(p->body, ::testing::HasSubstr("limit of 256 levels")) << type;
    }
  }
  EXPECT_FALSE(api_->Get(Type("configmaps"), "default", "deep").ok());
  auto cm = api_->Get(Type("configmaps"), "default", "cm");
  ASSERT_TRUE(cm.ok());
  EXPECT_FALSE(cm->contains("x"));
}

// At the limit everything the server does with a body (strict field validation, dropping unknown
// fields, each kind of patch, the strict error's rendering of the patched object) runs on it. The
// sanitizer builds run this too, on their much larger frames.
TEST_F(RestHandlerTest, BodiesAtTheLimitAreServed) {
  CreateConfigMap("cm");
  auto client = Client();
  const std::string collection = "/api/v1/namespaces/default/configmaps";
  const std::string at = DeepConfigMap("at", kMaxNestingDepth);
  auto warned = client->Request("POST", collection, at, ContentType("application/json"));
  ASSERT_TRUE(warned.ok());
  EXPECT_EQ(warned->status, 201) << warned->body;
  EXPECT_THAT(std::string(warned->headers.Get("Warning")), ::testing::HasSubstr("unknown field"));
  auto strict =
      client->Request("POST", collection + "?fieldValidation=Strict",
                      DeepConfigMap("at2", kMaxNestingDepth), ContentType("application/json"));
  ASSERT_TRUE(strict.ok());
  EXPECT_EQ(strict->status, 400) << strict->body;
  EXPECT_THAT(strict->body, ::testing::HasSubstr("unknown field \\\"x\\\""));
  for (const char* type :
       {"application/merge-patch+json", "application/strategic-merge-patch+json"}) {
    for (const char* validation : {"Warn", "Strict"}) {
      auto p =
          client->Request("PATCH", collection + "/cm?fieldValidation=" + std::string(validation),
                          DeepConfigMap("cm", kMaxNestingDepth), ContentType(type));
      ASSERT_TRUE(p.ok());
      EXPECT_EQ(p->status, std::string(validation) == "Warn" ? 200 : 422) << type << p->body;
    }
  }
  const int arrays = kMaxNestingDepth - 2;  // the operations array and the operation
  const std::string json_patch = R"([{"op":"add","path":"/x","value":)" + std::string(arrays, '[') +
                                 std::string(arrays, ']') + "}]";
  auto jp = client->Request("PATCH", collection + "/cm", json_patch,
                            ContentType("application/json-patch+json"));
  ASSERT_TRUE(jp.ok());
  EXPECT_EQ(jp->status, 200) << jp->body;
}

// Regression (hardening round 2, item 11): the 3 MiB object limit applied to pods/proxy, which a
// real API server streams, so a file upload through it over 3 MiB was refused (413, which Steward
// answered as the caller's 400). A proxied body has its own, larger limit; objects keep theirs;
// over either, the answer names the limit that applied, from the head, before any body byte.
TEST_F(RestHandlerTest, ProxiedBodiesHaveTheirOwnLimitAboveTheObjectLimit) {
  std::atomic<size_t> proxied{0};
  rest_->SetProxy([&proxied](const std::string&, const std::string&, const std::string&,
                             const std::string&, const net::HttpRequest& request,
                             std::shared_ptr<net::ResponseWriter> writer) {
    proxied = request.body.size();
    writer->Send(net::HttpResponse{200, {}, std::to_string(request.body.size())});
  });
  auto client = Client();
  const std::string upload(5 * 1024 * 1024, 'u');
  auto through = client->Request("POST", "/api/v1/namespaces/default/pods/p:8080/proxy/up", upload,
                                 ContentType("application/octet-stream"));
  ASSERT_TRUE(through.ok()) << through.status().ToString();
  EXPECT_EQ(through->status, 200) << through->body;
  EXPECT_EQ(proxied.load(), upload.size());
  auto service = client->Request("PUT", "/api/v1/namespaces/default/services/web/proxy", upload,
                                 ContentType("application/octet-stream"));
  ASSERT_TRUE(service.ok()) << service.status().ToString();
  EXPECT_EQ(service->status, 200) << service->body;

  const std::string object = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},)"
                             R"("data":{"k":")" +
                             upload + R"("}})";
  auto refused = client->Request("POST", "/api/v1/namespaces/default/configmaps", object,
                                 ContentType("application/json"));
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_EQ(refused->status, 413);
  EXPECT_THAT(refused->body, ::testing::HasSubstr("limit is 3145728"));
  // Not a proxy: a pod named "proxy", a proxy-like subresource of another kind.
  for (const char* path :
       {"/api/v1/namespaces/default/pods/proxy", "/api/v1/namespaces/default/configmaps/c/proxy",
        "/api/v1/namespaces/default/pods/p/proxyx"}) {
    auto r = client->Request("PUT", path, upload, ContentType("application/json"));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 413) << path;
  }

  // Over the proxy's own limit: refused from the head, naming it.
  net::server_testing::RawConnection raw(server_->port());
  ASSERT_TRUE(raw.connected());
  raw.Send(
      "POST /api/v1/namespaces/default/pods/p/proxy/up HTTP/1.1\r\nHost: h\r\n"
      "Content-Length: " +
      std::to_string(64 * 1024 * 1024 + 1) + "\r\n\r\n");
  const std::string answer = raw.ReadToEof();
  EXPECT_EQ(answer.rfind("HTTP/1.1 413 ", 0), 0u) << answer;
  EXPECT_THAT(answer, ::testing::HasSubstr("limit is 67108864"));
  EXPECT_EQ(proxied.load(), upload.size());  // never handed to the proxy
}

// Regression guard (hardening finding 3): ParseJson now refuses duplicate keys by default; the
// cluster's bodies keep Go's behaviour, the last one winning, with field validation refusing them
// under Strict and warning otherwise, as a real API server does.
TEST_F(RestHandlerTest, DuplicateFieldsWarnAndLastWinsOrFailUnderStrict) {
  auto client = Client();
  const std::string collection = "/api/v1/namespaces/default/configmaps";
  const std::string dup =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d"},"data":{"k":"1"},)"
      R"("data":{"k":"2"}})";
  auto strict = client->Request("POST", collection + "?fieldValidation=Strict", dup,
                                ContentType("application/json"));
  ASSERT_TRUE(strict.ok());
  EXPECT_EQ(strict->status, 400) << strict->body;
  EXPECT_THAT(strict->body, ::testing::HasSubstr("duplicate field \\\"data\\\""));
  auto warned = client->Request("POST", collection, dup, ContentType("application/json"));
  ASSERT_TRUE(warned.ok());
  EXPECT_EQ(warned->status, 201) << warned->body;
  EXPECT_EQ(warned->headers.Get("Warning"), "299 - \"duplicate field \\\"data\\\"\"");
  auto stored = api_->Get(Type("configmaps"), "default", "d");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ((*stored)["data"]["k"], "2");
  auto patched = client->Request("PATCH", collection + "/d", R"({"data":{"k":"3","k":"4"}})",
                                 ContentType("application/merge-patch+json"));
  ASSERT_TRUE(patched.ok());
  EXPECT_EQ(patched->status, 200) << patched->body;
  EXPECT_EQ(Json::parse(patched->body)["data"]["k"], "4");
}

size_t RequestSeries(const std::string& metrics) {
  size_t n = 0;
  for (size_t at = 0; (at = metrics.find("\napiserver_request_total{", at)) != std::string::npos;
       ++at) {
    ++n;
  }
  return n;
}

// Regression (hardening finding 10): every request with a new method, group, resource or
// subresource name added a permanent apiserver_request_total series. Each label now takes its
// value from a fixed set, "other" for the rest.
TEST_F(RestHandlerTest, RequestsWithRandomNamesDoNotGrowTheMetrics) {
  auto client = Client();
  auto metrics = [&] {
    auto m = client->Request("GET", "/metrics");
    EXPECT_TRUE(m.ok());
    return m.ok() ? m->body : std::string();
  };
  // One of each kind first, so that the "other" series exist.
  auto once = [&](int i) {
    const std::string r = "r" + std::to_string(i);
    ASSERT_TRUE(client->Request("M" + std::to_string(i) + "X", "/api/v1/namespaces").ok());
    ASSERT_TRUE(client->Request("GET", "/api/v1/" + r).ok());
    ASSERT_TRUE(client->Request("GET", "/apis/g" + r + ".io/v1/" + r).ok());
    ASSERT_TRUE(client->Request("GET", "/api/v1/namespaces/default/" + r + "/x/" + r).ok());
    ASSERT_TRUE(client->Request("GET", "/api/v1/namespaces/default/configmaps/x/" + r).ok());
    ASSERT_TRUE(client->Request("M" + std::to_string(i) + "Y", "/" + r).ok());
  };
  once(0);
  metrics();  // counted once served: the next answer shows its series
  const std::string before = metrics();
  const size_t series = RequestSeries(before);
  for (int i = 1; i <= 100; ++i) once(i);
  const std::string after = metrics();
  EXPECT_EQ(RequestSeries(after), series) << after;
  EXPECT_EQ(after.find("r17"), std::string::npos) << after;
  EXPECT_EQ(after.find("M17X"), std::string::npos) << after;
  EXPECT_THAT(after, ::testing::HasSubstr("resource=\"other\""));
  EXPECT_THAT(after, ::testing::HasSubstr("verb=\"OTHER\""));
  EXPECT_THAT(after, ::testing::HasSubstr("group=\"other\""));
  EXPECT_THAT(after, ::testing::HasSubstr("subresource=\"other\""));
}

}  // namespace
}  // namespace steward::cluster
