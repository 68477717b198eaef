// Test support for the controller tests: an in-memory Storage + ObjectApi + ControllerManager,
// helpers to build and read objects, and WaitFor, a deadline-bounded wait that re-checks its
// condition after every storage change (a watch), never by sleeping.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/apiserver/object_api.h"
#include "cluster/controllers/controller_manager.h"
#include "cluster/profile/profile.h"
#include "cluster/storage/storage.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/random.h"

namespace steward::cluster::testing {

using namespace std::chrono_literals;

inline Profile InstantProfile() {
  auto p = BuiltinProfile("instant");
  return p.ok() ? *p : Profile{};
}

// A delay without jitter.
inline DelaySpec Fixed(int ms) {
  return {std::chrono::milliseconds(ms), std::chrono::milliseconds(0)};
}

// An Ingress routing NAME.example.com/ to Service "web" port 80.
inline Json IngressObj(const std::string& name) {
  return Json{
      {"apiVersion", "networking.k8s.io/v1"},
      {"kind", "Ingress"},
      {"metadata", {{"name", name}}},
      {"spec",
       {{"rules",
         Json::array(
             {{{"host", name + ".example.com"},
               {"http",
                {{"paths",
                  Json::array(
                      {{{"path", "/"},
                        {"pathType", "Prefix"},
                        {"backend",
                         {{"service", {{"name", "web"}, {"port", {{"number", 80}}}}}}}}})}}}}})}}}};
}

// A 1Gi ReadWriteOnce claim.
inline Json PvcObj(const std::string& name) {
  return Json{{"apiVersion", "v1"},
              {"kind", "PersistentVolumeClaim"},
              {"metadata", {{"name", name}}},
              {"spec",
               {{"accessModes", Json::array({"ReadWriteOnce"})},
                {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
}

class ClusterTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (manager_) manager_->Stop();
  }

  // `persist_path` (a SQLite file) keeps the objects for RestartCluster(); empty: memory only.
  void StartCluster(Profile profile = InstantProfile(), std::string persist_path = "") {
    Storage::Options options;
    options.persist_path = std::move(persist_path);
    auto storage = Storage::Open(options);
    ASSERT_TRUE(storage.ok()) << storage.status().ToString();
    storage_ = std::move(*storage);
    api_ = std::make_unique<ObjectApi>(*storage_, RealClock::Get(), random_);
    for (const char* ns : {"default", "test"}) {
      auto r = api_->Create(
          Type("namespaces"), "",
          Json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
      ASSERT_TRUE(r.ok()) << r.error().message;
    }
    StartControllers(std::move(profile));
  }

  void StartControllers(Profile profile = InstantProfile()) {
    manager_ = std::make_unique<ControllerManager>(*api_, std::move(profile), 1234);
    Status st = manager_->Start();
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  // Stops the controllers (dropping their pending work and in-memory state), as a crash of
  // the control plane does; the objects stay.
  void StopControllers() {
    if (manager_) manager_->Stop();
    manager_.reset();
  }

  // A control plane restart: the controllers are stopped, the store is closed and opened again
  // from `persist_path` (as StartCluster() was given), and new controllers start on it.
  void RestartCluster(const std::string& persist_path, Profile profile = InstantProfile()) {
    StopControllers();
    api_.reset();
    storage_.reset();
    Storage::Options options;
    options.persist_path = persist_path;
    auto storage = Storage::Open(options);
    ASSERT_TRUE(storage.ok()) << storage.status().ToString();
    storage_ = std::move(*storage);
    api_ = std::make_unique<ObjectApi>(*storage_, RealClock::Get(), random_);
    StartControllers(std::move(profile));
  }

  static const ResourceType& Type(std::string_view gr) { return *FindGroupResource(gr); }

  Json MustCreate(std::string_view gr, std::string_view ns, Json obj) {
    auto r = api_->Create(Type(gr), ns, std::move(obj));
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : Json();
  }

  std::optional<Json> Get(std::string_view gr, std::string_view ns, std::string_view name) {
    auto r = api_->Get(Type(gr), ns, name);
    if (!r.ok()) return std::nullopt;
    return *r;
  }

  std::vector<Json> List(std::string_view gr, std::string_view ns,
                         std::string label_selector = "") {
    ListOptions opts;
    opts.label_selector = std::move(label_selector);
    auto r = api_->List(Type(gr), ns, opts);
    std::vector<Json> out;
    if (!r.ok()) return out;
    for (auto& item : (*r)["items"]) out.push_back(item);
    return out;
  }

  // Applies `mutate` to the main resource; fails the test on error.
  Json MustModify(std::string_view gr, std::string_view ns, std::string_view name,
                  const std::function<void(Json&)>& mutate) {
    auto r = api_->Modify(Type(gr), ns, name, [&](Json& o) {
      mutate(o);
      return true;
    });
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : Json();
  }

  // Waits until pred() holds, re-evaluating after every storage change. False on timeout.
  bool WaitFor(const std::function<bool()>& pred, std::chrono::milliseconds timeout = 15s) {
    WatchRequest req;
    req.from_revision = storage_->CurrentRevision();
    auto watcher = storage_->Watch(req);
    if (!watcher.ok()) return false;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (pred()) return true;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left <= 0ms) return false;
      (*watcher)->Wait(left);
      (*watcher)->Drain();
    }
  }

  // A watch from now on, for tests that check the order of changes.
  std::unique_ptr<Watcher> WatchFromNow(std::string gr = "") {
    WatchRequest req;
    req.group_resource = std::move(gr);
    req.from_revision = storage_->CurrentRevision();
    auto w = storage_->Watch(req);
    EXPECT_TRUE(w.ok());
    return w.ok() ? std::move(*w) : nullptr;
  }

  std::unique_ptr<Storage> storage_;
  Random random_{7};
  std::unique_ptr<ObjectApi> api_;
  std::unique_ptr<ControllerManager> manager_;
};

// Small readers.
inline std::string S(const Json& obj, std::string_view dotted) {
  const Json* v = FindPath(obj, dotted);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}
inline int64_t I(const Json& obj, std::string_view dotted) {
  const Json* v = FindPath(obj, dotted);
  return v != nullptr && v->is_number_integer() ? v->get<int64_t>() : 0;
}
inline const Json* Condition(const Json& obj, std::string_view type) {
  const Json* conds = FindPath(obj, "status.conditions");
  if (conds == nullptr || !conds->is_array()) return nullptr;
  for (const auto& c : *conds) {
    if (c.value("type", "") == type) return &c;
  }
  return nullptr;
}
inline bool CondIs(const Json& obj, std::string_view type, std::string_view status,
                   std::string_view reason = "") {
  const Json* c = Condition(obj, type);
  if (c == nullptr || c->value("status", "") != status) return false;
  return reason.empty() || c->value("reason", "") == reason;
}
inline bool PodReady(const Json& pod) { return CondIs(pod, "Ready", "True"); }

inline Json DeploymentObj(const std::string& name, const std::string& image, int replicas) {
  return Json{
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", {{"name", name}, {"labels", {{"app", name}}}}},
      {"spec",
       {{"replicas", replicas},
        {"selector", {{"matchLabels", {{"app", name}}}}},
        {"template",
         {{"metadata", {{"labels", {{"app", name}}}}},
          {"spec",
           {{"containers",
             Json::array(
                 {{{"name", "web"},
                   {"image", image},
                   {"ports", Json::array({{{"name", "http"}, {"containerPort", 8080}}})}}})}}}}}}}};
}

inline Json ServiceObj(const std::string& name, const std::string& app) {
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", {{"name", name}, {"labels", {{"team", "a"}}}}},
      {"spec",
       {{"selector", {{"app", app}}},
        {"ports",
         Json::array(
             {{{"name", "web"}, {"port", 80}, {"targetPort", "http"}, {"protocol", "TCP"}}})}}}};
}

inline Json PodObj(const std::string& name, const std::string& image,
                   const Json& labels = Json::object()) {
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"labels", labels}}},
      {"spec",
       {{"containers",
         Json::array({{{"name", "main"},
                       {"image", image},
                       {"ports", Json::array({{{"name", "http"}, {"containerPort", 8080}}})}}})}}}};
}

}  // namespace steward::cluster::testing
