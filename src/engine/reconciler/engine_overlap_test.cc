// Overlapped provisioning and teardown (issue 33): each object is created once the one it
// depends on exists, readiness is waited for at once, and a suspend sends every delete in one
// pass. What the cluster's storage committed, in commit order, is the evidence.
#include <gmock/gmock.h>

#include <string>
#include <thread>
#include <vector>

#include "cluster/storage/storage.h"
#include "common/json_access.h"
#include "engine/intents/intents.h"
#include "engine/reconciler/engine_test_support.h"

namespace steward::engine::testing {
namespace {

using test_support::Eventually;

// Every change the cluster's storage commits for objects of one project (by its label), in
// commit order: "<kind> <event>" with event one of created, ready (a Deployment whose status says
// available, an Ingress with its address), terminating, deleted.
class CommitLog {
 public:
  CommitLog(cluster::Storage& storage, std::string project) : project_(std::move(project)) {
    cluster::WatchRequest req;
    req.from_revision = storage.CurrentRevision();
    auto w = storage.Watch(req);
    EXPECT_TRUE(w.ok());
    if (w.ok()) watcher_ = std::move(*w);
  }
  ~CommitLog() {
    if (watcher_) watcher_->Close();
  }

  // Reads what was committed so far (call from the test thread only).
  const std::vector<std::string>& Read() {
    if (!watcher_) return entries_;
    while (watcher_->Wait(milliseconds(0))) {
      for (const auto& ev : watcher_->Drain()) Note(ev);
    }
    return entries_;
  }
  // The position of the first `entry`, or -1.
  int IndexOf(const std::string& entry) {
    const auto& all = Read();
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i] == entry) return static_cast<int>(i);
    }
    return -1;
  }
  std::string Describe() {
    std::string out;
    for (const auto& e : Read()) out += e + "; ";
    return out;
  }

 private:
  void Add(const std::string& entry) {
    for (const auto& e : entries_) {
      if (e == entry) return;  // first occurrence only
    }
    entries_.push_back(entry);
  }
  void Note(const cluster::WatchEvent& ev) {
    const std::string& gr = ev.object.group_resource;
    const std::string kind = gr == "deployments.apps"              ? "Deployment"
                             : gr == "services"                    ? "Service"
                             : gr == "ingresses.networking.k8s.io" ? "Ingress"
                             : gr == "secrets"                     ? "Secret"
                             : gr == "persistentvolumeclaims"      ? "PVC"
                                                                   : "";
    if (kind.empty()) return;
    const Json obj = ev.object.Parse();
    if (LabelOf(obj, kProjectLabel) != project_) return;
    if (ev.type == cluster::WatchEventType::kDeleted) return Add(kind + " deleted");
    if (ev.type == cluster::WatchEventType::kAdded) Add(kind + " created");
    const Json* ts = FindPath(obj, "metadata.deletionTimestamp");
    if (ts != nullptr && !ts->is_null()) Add(kind + " terminating");
    if (kind == "Deployment" && DeploymentReadiness(obj).ready()) Add(kind + " ready");
    if (kind == "Ingress" && IngressReadiness(obj, true).ready()) Add(kind + " ready");
  }

  const std::string project_;
  std::unique_ptr<cluster::Watcher> watcher_;
  std::vector<std::string> entries_;
};

class OverlapTest : public EngineFixture {};

// The Service and the Ingress are created while the Deployment rolls out (a pod takes ~1.5 s to
// be ready here, the Ingress's address 50 ms), each after the object it depends on; Running
// comes only once every object is ready.
TEST_F(OverlapTest, StartCreatesInOrderWithoutWaitingForReadinessAndIsRunningOnlyWhenAllAreReady) {
  cluster::Profile p = QuickProfile();
  p.pod_ready = {milliseconds(1500), milliseconds(0)};
  p.load_balancer = {milliseconds(50), milliseconds(0)};
  p.ingress_requires_service = true;
  StartCluster(p);
  OpenStore();
  RecordSnapshotsAtPhases();
  StartEngine();
  const std::string id = "ovl-start";
  CommitLog log(cluster_->api().storage(), id);
  auto put = engine_->intents().Put("overlap", Spec(), id, /*start=*/true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  ASSERT_TRUE(WaitSnapshot(id, "Running"));

  const int secret = log.IndexOf("Secret created"), dep = log.IndexOf("Deployment created"),
            svc = log.IndexOf("Service created"), ing = log.IndexOf("Ingress created"),
            addressed = log.IndexOf("Ingress ready"), ready = log.IndexOf("Deployment ready");
  const std::string seen = log.Describe();
  ASSERT_TRUE(secret >= 0 && dep >= 0 && svc >= 0 && ing >= 0 && ready >= 0 && addressed >= 0)
      << seen;
  EXPECT_LT(secret, dep) << seen;
  EXPECT_LT(dep, svc) << seen;
  EXPECT_LT(svc, ing) << seen;
  // The overlap: the Ingress was there, with its address, before the Deployment was ready.
  EXPECT_LT(ing, ready) << seen;
  EXPECT_LT(addressed, ready) << seen;
  for (const auto& s : Snapshots()) {
    if (s.id != id || s.phase != "Running") continue;
    EXPECT_TRUE(s.at.deployment_ready && s.at.endpoints_ready && s.at.ingress_address)
        << s.at.describe;
  }
  for (const auto& c : StatusOf(id).conditions) EXPECT_TRUE(c.ready) << c.resource;
}

// While the Deployment is not ready, the status names it (the earliest object not ready), and
// lists the others' conditions too.
TEST_F(OverlapTest, WhileRollingOutTheStatusNamesTheDeploymentAndShowsTheOthersReady) {
  cluster::Profile p = QuickProfile();
  p.pod_ready = {milliseconds(4000), milliseconds(0)};
  p.load_balancer = {milliseconds(20), milliseconds(0)};
  StartCluster(p);
  OpenStore();
  StartEngine();
  auto put = engine_->intents().Put("rolling", Spec(), "", /*start=*/true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(Eventually([&] {
    for (const auto& c : StatusOf(id).conditions) {
      if (c.resource == "Ingress" && c.ready) return true;
    }
    return false;
  })) << StatusOf(id).message;
  const ProjectStatus st = StatusOf(id);
  EXPECT_EQ(st.phase, Phase::kProvisioning);
  EXPECT_THAT(st.message, ::testing::HasSubstr("Deployment"));
  ASSERT_TRUE(WaitPhase(id, "Running", 1, seconds(30)));
}

// A suspend deletes the Ingress, the Service and the Deployment in one pass: the Service and the
// Deployment start terminating while the Ingress still waits on its (slow) finalizer; Suspended
// only once everything is gone.
TEST_F(OverlapTest, SuspendSendsEveryDeleteAtOnceIngressFirstAndIsSuspendedOnlyWhenAllAreGone) {
  cluster::Profile p = QuickProfile();
  p.ingress_finalizer = {milliseconds(1500), milliseconds(0)};
  p.service_finalizer = {milliseconds(100), milliseconds(0)};
  StartCluster(p);
  OpenStore();
  RecordSnapshotsAtPhases();
  StartEngine();
  const std::string id = "ovl-suspend";
  auto put = engine_->intents().Put("teardown", Spec(), id, /*start=*/true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  CommitLog log(cluster_->api().storage(), id);
  ASSERT_TRUE(engine_->intents().Suspend(id).ok());
  ASSERT_TRUE(WaitPhase(id, "Suspended", 2, seconds(30)));
  ASSERT_TRUE(WaitSnapshot(id, "Suspended"));

  const int ing_term = log.IndexOf("Ingress terminating"),
            ing_gone = log.IndexOf("Ingress deleted"),
            svc_term = log.IndexOf("Service terminating"),
            dep_term = log.IndexOf("Deployment terminating");
  const std::string seen = log.Describe();
  ASSERT_TRUE(ing_term >= 0 && ing_gone >= 0 && svc_term >= 0 && dep_term >= 0) << seen;
  EXPECT_LT(ing_term, svc_term) << seen;  // traffic stops first
  EXPECT_LT(svc_term, ing_gone) << seen;  // without waiting for the Ingress to be gone
  EXPECT_LT(dep_term, ing_gone) << seen;
  for (const auto& s : Snapshots()) {
    if (s.id != id || s.phase != "Suspended") continue;
    EXPECT_FALSE(s.at.deployment || s.at.service || s.at.ingress || s.at.pods > 0) << s.at.describe;
  }
}

// A start and a suspend read nothing from the server: every decision comes from the caches, the
// TLS Secrets of the Ingresses (which carry none of Steward's labels) included — and the
// certificate cert-manager made is still deleted on suspend.
TEST_F(OverlapTest, AStartAndSuspendCycleSendsNoGetAndStillRemovesTheCertificate) {
  StartCluster();
  OpenStore();
  StartEngine();
  const uint64_t gets = cluster_->request_log().Count("get");
  auto put = engine_->intents().Put("nogets", Spec(), "", /*start=*/true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  Json tls = {{"apiVersion", "v1"},
              {"kind", "Secret"},
              {"metadata", {{"name", "nogets"}, {"namespace", kNs}}},
              {"type", "kubernetes.io/tls"},
              {"data", {{"tls.crt", "Yw=="}, {"tls.key", "aw=="}}}};
  ASSERT_TRUE(cluster_->api().Create(Kind("secrets"), kNs, tls).ok());
  ASSERT_TRUE(engine_->intents().Suspend(id).ok());
  ASSERT_TRUE(WaitPhase(id, "Suspended", 2));
  EXPECT_FALSE(Get("secrets", "nogets").has_value());
  auto started = engine_->intents().Start(id);
  ASSERT_TRUE(started.ok());
  ASSERT_TRUE(WaitPhase(id, "Running", started->generation));
  ASSERT_TRUE(engine_->intents().Suspend(id).ok());
  ASSERT_TRUE(WaitPhase(id, "Suspended", started->generation + 1));
  EXPECT_EQ(cluster_->request_log().Count("get"), gets);
}

// A burst finishes what it started first (issue 33 §4): 24 projects pending when the engine
// starts, one worker, every write waiting for the client's limiter (20 a second), so the queue's
// order is the order of the writes. The first project must be Running while most of the burst
// has not even had its Secret created — with the queue as one FIFO per team (every project's
// next step behind every other project's first) all 24 Secrets come first.
TEST_F(OverlapTest, ABurstFinishesItsFirstProjectsBeforeItStartsItsLast) {
  constexpr int kProjects = 24;
  cluster::Profile p = QuickProfile();
  p.pod_ready = {milliseconds(0), milliseconds(0)};
  StartCluster(p);
  kube::TransportOptions throttled;
  throttled.qps = 20;
  throttled.burst = 1;
  client_ = kube::test_support::ClientFor(*cluster_, throttled);
  OpenStore();
  {
    Intents intents(*store_, nullptr);
    for (int i = 0; i < kProjects; ++i) {
      ASSERT_TRUE(intents.Put("burst-" + std::to_string(i), Spec(), "", /*start=*/true).ok());
    }
  }
  cluster::WatchRequest req;
  req.from_revision = cluster_->api().storage().CurrentRevision();
  auto watcher = cluster_->api().storage().Watch(req);
  ASSERT_TRUE(watcher.ok());
  EngineOptions options = DefaultOptions();
  options.config.workers = 1;
  StartEngine(options);
  auto any_running = [&] {
    auto all = store_->ListProjects(store::ListFilter{});
    if (!all.ok()) return false;
    for (const auto& r : *all) {
      if (r.phase == "Running") return true;
    }
    return false;
  };
  ASSERT_TRUE(Eventually(any_running, seconds(30)));
  int secrets = 0;  // Secrets the cluster committed by the time the first project was Running
  while ((*watcher)->Wait(milliseconds(0))) {
    for (const auto& ev : (*watcher)->Drain()) {
      secrets +=
          ev.type == cluster::WatchEventType::kAdded && ev.object.group_resource == "secrets";
    }
  }
  (*watcher)->Close();
  EXPECT_LT(secrets, kProjects / 2);
  EXPECT_GT(secrets, 0);
}

}  // namespace
}  // namespace steward::engine::testing
