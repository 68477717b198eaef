// Client against the embedded cluster over real HTTPS: typed errors, conditional writes, delete
// preconditions and results, patches, apply, watches (order, bookmarks, 410, cancel) and
// Retry-After under injected throttling.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "cluster/embedded_cluster.h"
#include "common/mutex.h"
#include "kube/client/client.h"
#include "kube/test_support/embedded.h"
#include "test_support/eventually.h"

namespace steward::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using ::steward::test_support::Eventually;

Json ConfigMap(std::string_view name, Json data = {{"k", "v"}}) {
  return Json{{"metadata", {{"name", name}}}, {"data", std::move(data)}};
}

Json Deployment(std::string_view name) {
  Json labels = {{"app", name}};
  Json container = {{"name", "app"}, {"image", "nginx:1"}};
  Json pod_spec = {{"containers", Json::array({container})}};
  Json pod_template = {{"metadata", {{"labels", labels}}}, {"spec", pod_spec}};
  Json spec = {
      {"replicas", 1}, {"selector", {{"matchLabels", labels}}}, {"template", pod_template}};
  return Json{{"metadata", {{"name", name}}}, {"spec", spec}};
}

std::string Rv(const Json& object) { return object["metadata"]["resourceVersion"]; }
std::string Uid(const Json& object) { return object["metadata"]["uid"]; }

class ClientClusterTest : public ::testing::Test {
 protected:
  void Start(bool controllers = false, TransportOptions transport_options = {}) {
    cluster::EmbeddedCluster::Options o;
    o.ingress = false;
    o.controllers = controllers;
    auto c = cluster::EmbeddedCluster::Start(o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    cluster_ = std::move(c).value();
    client_ = MakeClient(transport_options);
    ASSERT_NE(client_, nullptr);
  }

  std::shared_ptr<Client> MakeClient(TransportOptions transport_options = {}) {
    return test_support::ClientFor(*cluster_, transport_options);
  }

  Json MustCreate(const ResourceType& type, const Json& object, std::string_view ns = "default") {
    auto created = client_->Create(type, ns, object);
    EXPECT_TRUE(created.ok()) << created.error().ToString();
    return created.ok() ? *created : Json();
  }

  std::unique_ptr<cluster::EmbeddedCluster> cluster_;
  std::shared_ptr<Client> client_;
  const ResourceType& cm_ = ResourceType::ConfigMap();
};

TEST_F(ClientClusterTest, GetListAndPaginate) {
  Start();
  for (int i = 0; i < 5; ++i) {
    Json cm = ConfigMap("cm-" + std::to_string(i));
    cm["metadata"]["labels"] = {{"app", "x"}};
    MustCreate(cm_, cm);
  }
  MustCreate(cm_, ConfigMap("other"));
  auto got = client_->Get(cm_, "default", "cm-3");
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  EXPECT_EQ((*got)["data"]["k"], "v");
  EXPECT_FALSE(Uid(*got).empty());

  ListOptions page_options;
  page_options.limit = 2;
  page_options.label_selector = "app=x";
  auto page = client_->List(cm_, "default", page_options);
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_FALSE(page->continue_token.empty());
  EXPECT_FALSE(page->resource_version.empty());
  EXPECT_EQ(page->items[0]["kind"], "ConfigMap");
  EXPECT_EQ(page->items[0]["apiVersion"], "v1");

  auto all = client_->ListAll(cm_, "default", page_options);
  ASSERT_TRUE(all.ok()) << all.error().ToString();
  std::vector<std::string> names;
  for (const auto& item : all->items) names.push_back(item["metadata"]["name"]);
  EXPECT_THAT(names, ElementsAre("cm-0", "cm-1", "cm-2", "cm-3", "cm-4"));
  EXPECT_EQ(all->continue_token, "");
  EXPECT_EQ(all->resource_version, page->resource_version);
  // A list across all namespaces without a limit.
  auto everything = client_->List(cm_, "");
  ASSERT_TRUE(everything.ok());
  EXPECT_GE(everything->items.size(), 6u);

  auto missing = client_->Get(cm_, "default", "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.error().IsNotFound());
  EXPECT_EQ(missing.error().http_status, 404);
  EXPECT_EQ(missing.error().code, StatusCode::kNotFound);
  EXPECT_EQ(missing.error().name, "nope");
  EXPECT_EQ(missing.error().kind, "configmaps");
}

TEST_F(ClientClusterTest, CreateTwiceIsAlreadyExistsAndBadObjectsAreInvalid) {
  Start();
  MustCreate(cm_, ConfigMap("a"));
  auto again = client_->Create(cm_, "default", ConfigMap("a"));
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(again.error().IsAlreadyExists());
  EXPECT_EQ(again.error().code, StatusCode::kAlreadyExists);
  EXPECT_EQ(again.error().http_status, 409);

  auto invalid = client_->Create(cm_, "default", ConfigMap("Not_A_Name"));
  ASSERT_FALSE(invalid.ok());
  EXPECT_TRUE(invalid.error().IsInvalid());
  EXPECT_EQ(invalid.error().code, StatusCode::kInvalidArgument);
  ASSERT_FALSE(invalid.error().causes.empty());
  EXPECT_EQ(invalid.error().causes[0].field, "metadata.name");
  EXPECT_FALSE(invalid.error().causes[0].type.empty());
}

TEST_F(ClientClusterTest, ConditionalUpdateFromAStaleReadConflicts) {
  Start();
  MustCreate(cm_, ConfigMap("a"));
  auto read1 = client_->Get(cm_, "default", "a");
  auto read2 = client_->Get(cm_, "default", "a");
  ASSERT_TRUE(read1.ok() && read2.ok());
  Json first = *read1;
  first["data"]["k"] = "first";
  auto updated = client_->Update(cm_, first);
  ASSERT_TRUE(updated.ok()) << updated.error().ToString();
  EXPECT_NE(Rv(*updated), Rv(*read1));
  Json second = *read2;
  second["data"]["k"] = "second";
  auto conflict = client_->Update(cm_, second);
  ASSERT_FALSE(conflict.ok());
  EXPECT_TRUE(conflict.error().IsConflict());
  EXPECT_EQ(conflict.error().code, StatusCode::kAborted);
  EXPECT_THAT(conflict.error().message, HasSubstr("the object has been modified"));
  EXPECT_EQ((*client_->Get(cm_, "default", "a"))["data"]["k"], "first");
}

TEST_F(ClientClusterTest, AWriteThatMayHaveAppliedIsReturnedNotRepeated) {
  Start();
  Json object = MustCreate(cm_, ConfigMap("a"));
  object["data"]["k"] = "w";
  cluster::Profile p = cluster_->profile();
  p.faults.reset_rate = 1.0;
  cluster_->SetProfile(p);
  uint64_t updates = cluster_->request_log().Count("update");
  auto reset = client_->Update(cm_, object);
  ASSERT_FALSE(reset.ok());
  EXPECT_TRUE(reset.error().IsTransport());
  EXPECT_THAT(reset.error().message, HasSubstr("PUT /api/v1/namespaces/default/configmaps/a"));
  EXPECT_EQ(cluster_->request_log().Count("update"), updates + 1);
  p.faults.reset_rate = 0;
  p.faults.error_rate_500 = 1.0;
  cluster_->SetProfile(p);
  auto failed = client_->Update(cm_, object);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().http_status, 500);
  EXPECT_TRUE(failed.error().IsRetryable());
  EXPECT_EQ(cluster_->request_log().Count("update"), updates + 2);
}

TEST_F(ClientClusterTest, UpdateStatusWritesOnlyTheStatus) {
  Start();
  const auto& deploy = ResourceType::Deployment();
  Json created = MustCreate(deploy, Deployment("web"));
  Json object = created;
  object["status"] = {{"replicas", 3}, {"observedGeneration", 1}};
  object["spec"]["replicas"] = 7;  // ignored by the status subresource
  auto written = client_->UpdateStatus(deploy, object);
  ASSERT_TRUE(written.ok()) << written.error().ToString();
  EXPECT_EQ((*written)["status"]["replicas"], 3);
  EXPECT_EQ((*written)["spec"]["replicas"], 1);
  // The same resourceVersion rule: the status write moved it on.
  auto stale = client_->UpdateStatus(deploy, object);
  ASSERT_FALSE(stale.ok());
  EXPECT_TRUE(stale.error().IsConflict());
}

TEST_F(ClientClusterTest, MergeJsonAndStrategicPatches) {
  Start();
  MustCreate(cm_, ConfigMap("a"));
  auto merged = client_->Patch(cm_, "default", "a", PatchType::kMerge, R"({"data":{"m":"1"}})");
  ASSERT_TRUE(merged.ok()) << merged.error().ToString();
  EXPECT_EQ((*merged)["data"], (Json{{"k", "v"}, {"m", "1"}}));
  auto json_patched = client_->Patch(cm_, "default", "a", PatchType::kJson,
                                     R"([{"op":"remove","path":"/data/k"}])");
  ASSERT_TRUE(json_patched.ok()) << json_patched.error().ToString();
  EXPECT_EQ((*json_patched)["data"], (Json{{"m", "1"}}));
  auto failed_test = client_->Patch(cm_, "default", "a", PatchType::kJson,
                                    R"([{"op":"test","path":"/data/m","value":"2"}])");
  ASSERT_FALSE(failed_test.ok());
  EXPECT_GE(failed_test.error().http_status, 400);

  // Strategic merge merges containers by name; a merge patch would replace the list.
  const auto& deploy = ResourceType::Deployment();
  MustCreate(deploy, Deployment("web"));
  auto strategic = client_->Patch(
      deploy, "default", "web", PatchType::kStrategic,
      R"({"spec":{"template":{"spec":{"containers":[{"name":"app","env":[{"name":"A","value":"1"}]}]}}}})");
  ASSERT_TRUE(strategic.ok()) << strategic.error().ToString();
  const Json& containers = (*strategic)["spec"]["template"]["spec"]["containers"];
  ASSERT_EQ(containers.size(), 1u);
  EXPECT_EQ(containers[0]["image"], "nginx:1");
  EXPECT_EQ(containers[0]["env"][0]["name"], "A");
}

TEST_F(ClientClusterTest, ApplyCreatesThenUpdatesWithAFieldManager) {
  Start();
  Json config = {{"metadata", {{"name", "applied"}, {"namespace", "default"}}},
                 {"data", {{"a", "1"}}}};
  auto created = client_->Apply(cm_, config, {.field_manager = "steward"});
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  EXPECT_EQ((*created)["data"]["a"], "1");
  config["data"]["a"] = "2";
  auto updated = client_->Apply(cm_, config, {.field_manager = "steward", .force = true});
  ASSERT_TRUE(updated.ok()) << updated.error().ToString();
  EXPECT_EQ((*updated)["data"]["a"], "2");
  EXPECT_EQ(Uid(*updated), Uid(*created));
  // A dry run stores nothing.
  Json dry_config = config;
  dry_config["metadata"]["name"] = "dry";
  ASSERT_TRUE(client_->Apply(cm_, dry_config, {.field_manager = "steward", .dry_run = true}).ok());
  EXPECT_TRUE(client_->Get(cm_, "default", "dry").error().IsNotFound());
}

TEST_F(ClientClusterTest, DeleteWithAStaleUidSparesTheRecreatedObject) {
  Start();
  Json old_object = MustCreate(cm_, ConfigMap("a"));
  auto deleted = client_->Delete(cm_, "default", "a");
  ASSERT_TRUE(deleted.ok()) << deleted.error().ToString();
  EXPECT_TRUE(deleted->gone);
  Json recreated = MustCreate(cm_, ConfigMap("a", {{"k", "new"}}));
  ASSERT_NE(Uid(recreated), Uid(old_object));
  auto stale = client_->Delete(cm_, "default", "a", {.precondition_uid = Uid(old_object)});
  ASSERT_FALSE(stale.ok());
  EXPECT_TRUE(stale.error().IsConflict());
  EXPECT_THAT(stale.error().message, HasSubstr("Precondition failed"));
  auto intact = client_->Get(cm_, "default", "a");
  ASSERT_TRUE(intact.ok());
  EXPECT_EQ(Uid(*intact), Uid(recreated));
  EXPECT_EQ((*intact)["data"]["k"], "new");
  auto matching = client_->Delete(cm_, "default", "a", {.precondition_uid = Uid(recreated)});
  ASSERT_TRUE(matching.ok()) << matching.error().ToString();
  EXPECT_TRUE(matching->gone);
}

TEST_F(ClientClusterTest, DeleteWithAResourceVersionPrecondition) {
  Start();
  Json v1 = MustCreate(cm_, ConfigMap("a"));
  Json changed = v1;
  changed["data"]["k"] = "w";
  auto v2 = client_->Update(cm_, changed);
  ASSERT_TRUE(v2.ok());
  auto stale = client_->Delete(cm_, "default", "a", {.precondition_resource_version = Rv(v1)});
  ASSERT_FALSE(stale.ok());
  EXPECT_TRUE(stale.error().IsConflict());
  ASSERT_TRUE(client_->Get(cm_, "default", "a").ok());
  auto current = client_->Delete(cm_, "default", "a", {.precondition_resource_version = Rv(*v2)});
  ASSERT_TRUE(current.ok()) << current.error().ToString();
  EXPECT_TRUE(current->gone);
  EXPECT_TRUE(client_->Get(cm_, "default", "a").error().IsNotFound());
  auto again = client_->Delete(cm_, "default", "a");
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(again.error().IsNotFound());
}

TEST_F(ClientClusterTest, GoneVersusTerminating) {
  Start();
  MustCreate(cm_, ConfigMap("plain"));
  auto plain = client_->Delete(cm_, "default", "plain");
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->gone);

  Json held = ConfigMap("held");
  held["metadata"]["finalizers"] = {"example.com/hold"};
  MustCreate(cm_, held);
  auto terminating = client_->Delete(cm_, "default", "held");
  ASSERT_TRUE(terminating.ok()) << terminating.error().ToString();
  EXPECT_FALSE(terminating->gone);
  EXPECT_TRUE(terminating->object["metadata"].contains("deletionTimestamp"));
  auto still = client_->Get(cm_, "default", "held");
  ASSERT_TRUE(still.ok());
  // A second delete of a terminating object is still "terminating".
  auto second = client_->Delete(cm_, "default", "held");
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->gone);
  // Removing the finalizer completes the deletion.
  ASSERT_TRUE(
      client_
          ->Patch(cm_, "default", "held", PatchType::kMerge, R"({"metadata":{"finalizers":null}})")
          .ok());
  EXPECT_TRUE(client_->Get(cm_, "default", "held").error().IsNotFound());
}

TEST_F(ClientClusterTest, GracefulPodAndNamespaceDeletionsAreTerminating) {
  Start();
  Json pod = {{"metadata", {{"name", "p"}}},
              {"spec",
               {{"nodeName", "node-1"},
                {"containers", Json::array({{{"name", "c"}, {"image", "nginx:1"}}})}}}};
  MustCreate(ResourceType::Pod(), pod);
  auto graceful = client_->Delete(ResourceType::Pod(), "default", "p");
  ASSERT_TRUE(graceful.ok()) << graceful.error().ToString();
  EXPECT_FALSE(graceful->gone);
  EXPECT_GT(graceful->object["metadata"]["deletionGracePeriodSeconds"].get<int64_t>(), 0);
  auto forced = client_->Delete(ResourceType::Pod(), "default", "p", {.grace_period_seconds = 0});
  ASSERT_TRUE(forced.ok()) << forced.error().ToString();
  EXPECT_TRUE(forced->gone);
  EXPECT_TRUE(client_->Get(ResourceType::Pod(), "default", "p").error().IsNotFound());

  const auto& ns = ResourceType::Namespace();
  MustCreate(ns, Json{{"metadata", {{"name", "team-a"}}}}, "");
  auto namespace_deleted = client_->Delete(ns, "", "team-a");
  ASSERT_TRUE(namespace_deleted.ok()) << namespace_deleted.error().ToString();
  EXPECT_FALSE(namespace_deleted->gone);
  EXPECT_TRUE(client_->Get(ns, "", "team-a").ok());
}

TEST_F(ClientClusterTest, ForegroundDeletionOfADeploymentWaitsForItsReplicaSets) {
  Start(/*controllers=*/true);
  const auto& deploy = ResourceType::Deployment();
  MustCreate(deploy, Deployment("web"));
  auto replica_sets = [&] {
    auto list = client_->List(ResourceType::ReplicaSet(), "default");
    return list.ok() ? list->items.size() : size_t{999};
  };
  ASSERT_TRUE(Eventually([&] { return replica_sets() == 1; }));
  auto deleted = client_->Delete(deploy, "default", "web", {.propagation_policy = "Foreground"});
  ASSERT_TRUE(deleted.ok()) << deleted.error().ToString();
  EXPECT_FALSE(deleted->gone);
  EXPECT_THAT(deleted->object["metadata"]["finalizers"].dump(), HasSubstr("foregroundDeletion"));
  ASSERT_TRUE(Eventually([&] {
    auto got = client_->Get(deploy, "default", "web");
    return !got.ok() && got.error().IsNotFound();
  }));
  EXPECT_EQ(replica_sets(), 0u);
}

// Events seen by a watch on another thread.
struct Recorder {
  Mutex mu;
  std::vector<std::string> seen GUARDED_BY(mu);
  std::vector<std::string> Snapshot() {
    MutexLock lock(mu);
    return seen;
  }
};

TEST_F(ClientClusterTest, WatchDeliversAddedModifiedDeletedInOrder) {
  Start();
  auto list = client_->List(cm_, "default");
  ASSERT_TRUE(list.ok());
  Recorder recorder;
  Result<WatchEnd> end = WatchEnd{};
  WatchOptions o;
  o.resource_version = list->resource_version;
  o.timeout_seconds = 20;
  std::thread watcher([&] {
    end = client_->Watch(cm_, "default", o, [&](const WatchEvent& ev) {
      if (ev.type == WatchEvent::Type::kBookmark) return true;
      MutexLock lock(recorder.mu);
      recorder.seen.push_back(std::string(WatchEventTypeName(ev.type)) + " " +
                              ev.object["metadata"]["name"].get<std::string>() + " " +
                              GetString(*FindPath(ev.object, "data"), "k"));
      return ev.type != WatchEvent::Type::kDeleted;
    });
  });
  Json created = MustCreate(cm_, ConfigMap("w"));
  created["data"]["k"] = "w2";
  ASSERT_TRUE(client_->Update(cm_, created).ok());
  ASSERT_TRUE(client_->Delete(cm_, "default", "w").ok());
  watcher.join();
  ASSERT_TRUE(end.ok()) << end.error().ToString();
  EXPECT_TRUE(end->stopped_by_handler);
  EXPECT_THAT(recorder.Snapshot(), ElementsAre("ADDED w v", "MODIFIED w w2", "DELETED w w2"));
}

TEST_F(ClientClusterTest, WatchListEndsItsInitialEventsWithABookmark) {
  Start();
  MustCreate(cm_, ConfigMap("a"));
  Json last = MustCreate(cm_, ConfigMap("b"));
  WatchOptions o;
  o.send_initial_events = true;
  o.timeout_seconds = 10;
  std::vector<std::string> seen;
  std::string bookmark_rv;
  auto end = client_->Watch(cm_, "default", o, [&](const WatchEvent& ev) {
    if (ev.type != WatchEvent::Type::kBookmark) {
      seen.push_back(std::string(WatchEventTypeName(ev.type)) + " " +
                     ev.object["metadata"]["name"].get<std::string>());
      return true;
    }
    const Json* ann = FindPath(ev.object, "metadata.annotations");
    if (ann == nullptr || GetString(*ann, "k8s.io/initial-events-end") != "true") return true;
    bookmark_rv = ev.ResourceVersion();
    return false;
  });
  ASSERT_TRUE(end.ok()) << end.error().ToString();
  EXPECT_TRUE(end->stopped_by_handler);
  EXPECT_THAT(seen, ElementsAre("ADDED a", "ADDED b"));
  ASSERT_FALSE(bookmark_rv.empty());
  EXPECT_GE(std::stoull(bookmark_rv), std::stoull(Rv(last)));
}

TEST_F(ClientClusterTest, WatchFromACompactedVersionGetsAnExpiredErrorEvent) {
  Start();
  Json object = MustCreate(cm_, ConfigMap("a"));
  std::string old_rv = Rv(object);
  for (int i = 0; i < 3; ++i) {
    object["data"]["k"] = std::to_string(i);
    auto updated = client_->Update(cm_, object);
    ASSERT_TRUE(updated.ok());
    object = *updated;
  }
  cluster_->storage().Compact();
  WatchOptions o;
  o.resource_version = old_rv;
  o.timeout_seconds = 10;
  std::optional<ApiError> expired;
  auto end = client_->Watch(cm_, "default", o, [&](const WatchEvent& ev) {
    if (ev.type == WatchEvent::Type::kError) expired = ApiErrorFromStatusObject(ev.object);
    return true;
  });
  ASSERT_TRUE(end.ok()) << end.error().ToString();
  ASSERT_TRUE(expired.has_value());
  EXPECT_TRUE(expired->IsGone());
  EXPECT_EQ(expired->http_status, 410);
  EXPECT_EQ(expired->code, StatusCode::kOutOfRange);
  EXPECT_FALSE(end->stopped_by_handler);
}

TEST_F(ClientClusterTest, WatchEndsAtTheServerTimeoutAndOnCancel) {
  Start();
  WatchOptions o;
  o.timeout_seconds = 1;
  auto start = std::chrono::steady_clock::now();
  auto end = client_->Watch(cm_, "default", o, [](const WatchEvent&) { return true; });
  ASSERT_TRUE(end.ok()) << end.error().ToString();
  EXPECT_FALSE(end->stopped_by_handler);
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(900));

  WatchOptions cancellable;
  cancellable.cancel = std::make_shared<CancelToken>();
  uint64_t watches_before = cluster_->request_log().Count("watch");
  Result<WatchEnd> cancelled = WatchEnd{};
  std::thread watcher([&] {
    cancelled = client_->Watch(cm_, "default", cancellable, [](const WatchEvent&) { return true; });
  });
  ASSERT_TRUE(Eventually([&] { return cluster_->request_log().Count("watch") > watches_before; }));
  auto cancel_at = std::chrono::steady_clock::now();
  cancellable.cancel->Cancel();
  watcher.join();
  EXPECT_LT(std::chrono::steady_clock::now() - cancel_at, seconds(5));
  ASSERT_FALSE(cancelled.ok());
  EXPECT_EQ(cancelled.error().code, StatusCode::kCancelled);
}

TEST_F(ClientClusterTest, RetryAfterIsRespectedAndTyped) {
  TransportOptions no_retries;
  no_retries.max_retries = 0;
  Start(false, no_retries);
  MustCreate(cm_, ConfigMap("a"));
  cluster::Profile p = cluster_->profile();
  p.faults.error_rate_429 = 1.0;
  p.faults.retry_after_seconds = 1;
  cluster_->SetProfile(p);
  // Without retries the 429 is returned, typed, with its Retry-After.
  auto throttled = client_->Get(cm_, "default", "a");
  ASSERT_FALSE(throttled.ok());
  EXPECT_TRUE(throttled.error().IsTooManyRequests());
  EXPECT_TRUE(throttled.error().IsRetryable());
  EXPECT_EQ(throttled.error().code, StatusCode::kResourceExhausted);
  ASSERT_TRUE(throttled.error().retry_after.has_value());
  EXPECT_EQ(*throttled.error().retry_after, milliseconds(1000));

  // With retries, the call waits Retry-After and then succeeds once the throttling stops.
  auto retrying = MakeClient();
  uint64_t gets_before = cluster_->request_log().Count("get");
  std::atomic<bool> done{false};
  Result<Json> got = Json();
  auto start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::duration took{};
  std::thread caller([&] {
    got = retrying->Get(cm_, "default", "a");
    took = std::chrono::steady_clock::now() - start;
    done = true;
  });
  ASSERT_TRUE(Eventually([&] { return cluster_->request_log().Count("get") > gets_before; }));
  p.faults.error_rate_429 = 0;
  cluster_->SetProfile(p);
  caller.join();
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  EXPECT_EQ((*got)["data"]["k"], "v");
  EXPECT_GE(took, milliseconds(950));  // the server asked for 1 s
  EXPECT_GE(cluster_->request_log().Count("get"), gets_before + 2);
}

}  // namespace
}  // namespace steward::kube
