// Lifecycle scenarios: the whole engine against the embedded cluster (docs/design.md §8 layer 3).
#include <atomic>
#include <random>
#include <set>
#include <thread>

#include "engine/reconciler/engine_test_support.h"

namespace steward::engine::testing {
namespace {

using test_support::Eventually;

class LifecycleTest : public EngineFixture {};

TEST_F(LifecycleTest, StartIsRunningOnlyOnceEveryObjectIsReady) {
  StartCluster();
  OpenStore();
  RecordSnapshotsAtPhases();
  StartEngine();
  auto put = engine_->intents().Put("alpha", Spec(), "", /*start=*/true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  ASSERT_TRUE(WaitSnapshot(id, "Running"));

  // At the moment Running was first committed, the cluster showed every object ready.
  bool saw_running = false, saw_provisioning = false;
  for (const auto& s : Snapshots()) {
    if (s.id != id) continue;
    if (s.phase == "Provisioning") saw_provisioning = true;
    if (s.phase != "Running") continue;
    saw_running = true;
    EXPECT_TRUE(s.at.secret && s.at.deployment_ready && s.at.endpoints_ready &&
                s.at.ingress_address)
        << s.at.describe;
  }
  EXPECT_TRUE(saw_provisioning);
  EXPECT_TRUE(saw_running);

  // And it is reachable through the ingress listener.
  std::string body;
  EXPECT_EQ(IngressStatus("alpha.localhost", &body), 200) << body;

  store::ProjectRecord rec = Record(id);
  auto status = ParseProjectStatus(*ParseJson(rec.status_json));
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->url, "http://alpha.localhost/");
  EXPECT_EQ(status->observed_generation, 1);
  EXPECT_FALSE(status->conditions.empty());
  for (const auto& c : status->conditions) EXPECT_TRUE(c.ready) << c.resource << ": " << c.message;
}

TEST_F(LifecycleTest, EndpointSlicesOfAnswersFromTheCacheOnlyWhileTheEngineRuns) {
  StartCluster();
  OpenStore();
  auto created = Engine::Create(DefaultOptions(), client_, *store_);
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  EXPECT_FALSE((*created)->EndpointSlicesOf("alpha").has_value()) << "not started: no cache";
  created->reset();
  StartEngine();
  auto put = engine_->intents().Put("alpha", Spec(), "", /*start=*/true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  ASSERT_TRUE(WaitPhase(put->record.id, "Running", 1));
  // Running was judged from these slices: one has a ready endpoint of alpha's pod.
  auto slices = engine_->EndpointSlicesOf("alpha");
  ASSERT_TRUE(slices.has_value());
  bool ready_pod = false;
  for (const Json& slice : *slices) {
    for (const Json& ep : slice.value("endpoints", Json::array())) {
      const std::string pod = ep.value("targetRef", Json::object()).value("name", "");
      if (pod.rfind("alpha-", 0) == 0 && ep["conditions"].value("ready", false)) ready_pod = true;
    }
  }
  EXPECT_TRUE(ready_pod) << Json(*slices).dump();
  auto none = engine_->EndpointSlicesOf("nobody");
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
  engine_->Stop();
  EXPECT_FALSE(engine_->EndpointSlicesOf("alpha").has_value()) << "stopped: no cache";
}

TEST_F(LifecycleTest, SuspendIsSuspendedOnlyOnceEverythingIsGoneAndKeepsPvcAndSecret) {
  StartCluster();
  OpenStore();
  RecordSnapshotsAtPhases();
  StartEngine();
  Json spec = Spec();
  spec["storage"] = {{"size", "1Gi"}};
  auto put = engine_->intents().Put("beta", spec, "", true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  auto suspended = engine_->intents().Suspend("beta");
  ASSERT_TRUE(suspended.ok());
  ASSERT_EQ(suspended->generation, 2);
  ASSERT_TRUE(WaitPhase(id, "Suspended", 2));
  ASSERT_TRUE(WaitSnapshot(id, "Suspended"));

  bool saw = false;
  for (const auto& s : Snapshots()) {
    if (s.id != id || s.phase != "Suspended") continue;
    saw = true;
    EXPECT_FALSE(s.at.deployment || s.at.service || s.at.ingress || s.at.custom_ingress ||
                 s.at.pods > 0)
        << s.at.describe;
  }
  EXPECT_TRUE(saw);
  Snapshot now = Observe(id, "beta");
  EXPECT_TRUE(now.secret);
  EXPECT_TRUE(now.pvc_bound);
  EXPECT_EQ(IngressStatus("beta.localhost"), 404);
}

// The seed bug: a stack change done as suspend + start while deletions are slow (finalizers on
// the Service and Ingress, and an admission check that refuses an Ingress without its Service).
TEST_F(LifecycleTest, StackChangeAsSuspendPlusStartUnderSlowFinalizersEndsRunningAndReachable) {
  cluster::Profile p = QuickProfile();
  p.service_finalizer = {milliseconds(1500), milliseconds(300)};
  p.ingress_finalizer = {milliseconds(1500), milliseconds(300)};
  p.pod_termination = {milliseconds(800), milliseconds(200)};
  p.ingress_requires_service = true;
  StartCluster(p);
  OpenStore();
  RecordSnapshotsAtPhases();
  StartEngine();
  auto put = engine_->intents().Put("gamma", Spec("flowfuse/node-red:3.1"), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1));

  // What FlowFuse does on a stack change: stop, change the stack, start, with no pause.
  ASSERT_TRUE(engine_->intents().Suspend(id).ok());
  // Let the teardown begin (the Ingress is terminating) before the start arrives.
  ASSERT_TRUE(Eventually([&] { return Record(id).phase == "Suspending"; }));
  ASSERT_TRUE(engine_->intents().Put("gamma", Spec("flowfuse/node-red:4.0")).ok());
  auto started = engine_->intents().Start(id);
  ASSERT_TRUE(started.ok());
  ASSERT_TRUE(WaitPhase(id, "Running", started->generation, seconds(40)));

  Snapshot now = Observe(id, "gamma");
  EXPECT_EQ(now.image, "flowfuse/node-red:4.0");
  EXPECT_TRUE(now.deployment_ready && now.endpoints_ready && now.ingress_address) << now.describe;
  EXPECT_EQ(IngressStatus("gamma.localhost"), 200);
  for (const auto& s : Snapshots()) {
    if (s.id == id && s.phase == "Running") {
      EXPECT_TRUE(s.at.deployment_ready && s.at.endpoints_ready && s.at.ingress_address)
          << "generation " << s.generation << ": " << s.at.describe;
    }
    EXPECT_NE(s.phase, "Failed");
  }
}

TEST_F(LifecycleTest, StackChangeWhileRunningRollsInPlaceAndIsRunningOnlyWhenRolledOut) {
  StartCluster();
  OpenStore();
  RecordSnapshotsAtPhases();
  StartEngine();
  auto put = engine_->intents().Put("delta", Spec("flowfuse/node-red:3.1", 2), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  auto deployment_uid = GetString((*Get("deployments.apps", "delta"))["metadata"], "uid");

  auto changed = engine_->intents().Put("delta", Spec("flowfuse/node-red:4.0", 2));
  ASSERT_TRUE(changed.ok());
  ASSERT_TRUE(changed->changed);
  ASSERT_EQ(changed->record.generation, 2);
  ASSERT_TRUE(WaitPhase(id, "Running", 2));
  ASSERT_TRUE(WaitSnapshot(id, "Running", 2));
  // In place: the same Deployment object, rolled.
  EXPECT_EQ(GetString((*Get("deployments.apps", "delta"))["metadata"], "uid"), deployment_uid);
  bool saw_updating = false;
  for (const auto& s : Snapshots()) {
    if (s.id != id) continue;
    if (s.phase == "Updating") saw_updating = true;
    if (s.phase == "Running" && s.generation == 2) {
      EXPECT_EQ(s.at.image, "flowfuse/node-red:4.0");
      EXPECT_TRUE(s.at.deployment_ready) << s.at.describe;
    }
  }
  EXPECT_TRUE(saw_updating);
}

TEST_F(LifecycleTest, RepeatedStartChangesNothing) {
  StartCluster();
  OpenStore();
  StartEngine();
  auto put = engine_->intents().Put("eps", Spec(), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  auto again = engine_->intents().Start(id);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->generation, 1);
  auto same = engine_->intents().Put("eps", Spec(), "", true);
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(same->changed);
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  const uint64_t writes = ClusterWrites();
  ASSERT_TRUE(engine_->intents().Start("eps").ok());
  const uint64_t runs = engine_->stats().reconciles;
  engine_->Enqueue(id);
  ASSERT_TRUE(Eventually([&] { return engine_->stats().reconciles > runs; }));
  EXPECT_EQ(ClusterWrites(), writes);
  EXPECT_EQ(Record(id).generation, 1);
}

TEST_F(LifecycleTest, StartWhileSuspendingAndSuspendWhileStartingConverge) {
  StartCluster();
  OpenStore();
  RecordSnapshotsAtPhases();
  StartEngine();
  auto put = engine_->intents().Put("zeta", Spec(), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  // Suspend while starting.
  ASSERT_TRUE(Eventually([&] { return Record(id).phase == "Provisioning"; }));
  auto s1 = engine_->intents().Suspend(id);
  ASSERT_TRUE(s1.ok());
  ASSERT_TRUE(WaitPhase(id, "Suspended", s1->generation));
  EXPECT_EQ(Observe(id, "zeta").pods, 0);
  // Start, then start while suspending.
  auto s2 = engine_->intents().Start(id);
  ASSERT_TRUE(WaitPhase(id, "Running", s2->generation));
  ASSERT_TRUE(engine_->intents().Suspend(id).ok());
  ASSERT_TRUE(Eventually([&] { return Record(id).phase == "Suspending"; }));
  auto s3 = engine_->intents().Start(id);
  ASSERT_TRUE(s3.ok());
  ASSERT_TRUE(WaitPhase(id, "Running", s3->generation, seconds(40)));
  EXPECT_EQ(IngressStatus("zeta.localhost"), 200);
}

TEST_F(LifecycleTest, DeleteWhileStartingRemovesEverythingAndKeepsHistory) {
  StartCluster();
  OpenStore();
  StartEngine();
  Json spec = Spec();
  spec["storage"] = {{"size", "1Gi"}};
  spec["customHostname"] = "eta.example.com";
  auto put = engine_->intents().Put("eta", spec, "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(Eventually([&] { return Get("deployments.apps", "eta").has_value(); }));
  ASSERT_TRUE(engine_->intents().Delete(id).ok());
  ASSERT_TRUE(WaitPurged(id));
  for (const char* kind : {"secrets", "persistentvolumeclaims", "deployments.apps", "services",
                           "ingresses.networking.k8s.io", "pods"}) {
    EXPECT_TRUE(ListLabelled(kind, "steward.io/project=" + id).empty()) << kind;
  }
  auto history = store_->ListHistory(id, 0, 1000);
  ASSERT_TRUE(history.ok());
  ASSERT_FALSE(history->empty());
  EXPECT_EQ(history->back().kind, "purged");
  // Its credentials are gone with it.
  EXPECT_TRUE(Creds(id).empty());
}

TEST_F(LifecycleTest, TwentyConcurrentOperationsEndInTheLastIntent) {
  StartCluster();
  OpenStore();
  StartEngine();
  auto put = engine_->intents().Put("theta", Spec(), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  std::atomic<int> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      while (next.fetch_add(1) < 20) {
        int op = static_cast<int>(rng() % 4);
        StatusOr<store::ProjectRecord> r =
            op == 0   ? engine_->intents().Start(id)
            : op == 1 ? engine_->intents().Suspend(id)
            : op == 2 ? engine_->intents().Restart(id)
            : engine_->intents().Put("theta", Spec(rng() % 2 ? "a/b:1" : "a/b:2")).ok()
                ? engine_->intents().Find(id)
                : engine_->intents().Find(id);
        (void)r;
      }
    });
  }
  for (auto& th : threads) th.join();
  // The last intent is whatever the store holds now; the engine must converge to it.
  store::ProjectRecord last = Record(id);
  const char* want = last.desired == store::DesiredState::kRunning ? "Running" : "Suspended";
  ASSERT_TRUE(WaitPhase(id, want, last.generation, seconds(40)))
      << "phase " << Record(id).phase << " at " << Record(id).observed_generation;
  Snapshot s = Observe(id, "theta");
  if (last.desired == store::DesiredState::kRunning) {
    EXPECT_TRUE(s.deployment_ready && s.endpoints_ready && s.ingress_address) << s.describe;
  } else {
    EXPECT_FALSE(s.deployment || s.service || s.ingress || s.pods > 0) << s.describe;
  }
}

TEST_F(LifecycleTest, ObjectDeletedOutOfBandIsRestoredAndDegradedMeanwhile) {
  StartCluster();
  OpenStore();
  RecordSnapshotsAtPhases();
  StartEngine();
  auto put = engine_->intents().Put("iota", Spec(), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  auto old_uid = GetString((*Get("services", "iota"))["metadata"], "uid");
  cluster::DeleteOptions d;
  ASSERT_TRUE(cluster_->api().Delete(Kind("services"), kNs, "iota", d).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        auto svc = Get("services", "iota");
        return svc && GetString((*svc)["metadata"], "uid") != old_uid &&
               Record(id).phase == "Running";
      },
      seconds(30)));
  bool degraded = false;
  for (const auto& s : Snapshots()) degraded |= s.id == id && s.phase == "Degraded";
  EXPECT_TRUE(degraded);
  EXPECT_EQ(IngressStatus("iota.localhost"), 200);
}

TEST_F(LifecycleTest, RotationActivatesNewCredentialsOnlyWhenNewPodsAreReady) {
  StartCluster();
  OpenStore();
  StartEngine();
  auto put = engine_->intents().Put("kappa", Spec(), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  auto creds = Creds(id);
  ASSERT_EQ(creds.size(), 1u);
  const store::Credential old = creds.front();

  auto rotated = engine_->intents().Rotate(id);
  ASSERT_TRUE(rotated.ok());
  // The pending credential is accepted at once (new pods need it), the old one too.
  std::string pending_token;
  for (const auto& c : Creds(id)) {
    if (c.state == store::CredentialState::kPending) pending_token = c.token;
  }
  ASSERT_FALSE(pending_token.empty());
  EXPECT_TRUE(engine_->intents().CheckCredential(old.token)->valid);
  EXPECT_TRUE(engine_->intents().CheckCredential(pending_token)->valid);

  ASSERT_TRUE(WaitPhase(id, "Running", rotated->generation));
  ASSERT_TRUE(Eventually([&] { return !engine_->intents().CheckCredential(old.token)->valid; }));
  auto check = engine_->intents().CheckCredential(pending_token);
  EXPECT_TRUE(check->valid);
  EXPECT_EQ(check->state, "active");
  EXPECT_EQ(check->project_id, id);
  // Every pod now holds the new credential.
  for (const auto& pod : ListLabelled("pods", "steward.io/project=" + id)) {
    if (pod["metadata"].contains("deletionTimestamp")) continue;
    EXPECT_NE(Annotation(pod, kCredentialAnnotation), old.id);
  }
}

TEST_F(LifecycleTest, FailedRolloutIsFailedWithTheReasonAndKeepsOldCredentialsValid) {
  StartCluster();
  OpenStore();
  StartEngine();
  auto put = engine_->intents().Put("lambda", Spec(), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  const store::Credential old = Creds(id).front();
  ASSERT_TRUE(engine_->intents().Rotate(id).ok());
  auto broken = engine_->intents().Put("lambda", Spec("registry.invalid/node-red:1"));
  ASSERT_TRUE(broken.ok());
  ASSERT_TRUE(WaitPhase(id, "Failed", broken->record.generation, seconds(40)))
      << Record(id).status_json;
  auto status = ParseProjectStatus(*ParseJson(Record(id).status_json));
  EXPECT_EQ(status->reason, "ProgressDeadlineExceeded");
  // The cluster's own words: the Deployment's condition and the pod's waiting reason.
  EXPECT_NE(status->message.find("timed out progressing"), std::string::npos) << status->message;
  EXPECT_NE(status->message.find("ImagePull"), std::string::npos) << status->message;
  EXPECT_TRUE(engine_->intents().CheckCredential(old.token)->valid);
  // Fixing the image converges, and only then is the old credential revoked.
  auto fixed = engine_->intents().Put("lambda", Spec("flowfuse/node-red:4.1"));
  ASSERT_TRUE(WaitPhase(id, "Running", fixed->record.generation, seconds(40)));
  ASSERT_TRUE(Eventually([&] { return !engine_->intents().CheckCredential(old.token)->valid; }));
}

TEST_F(LifecycleTest, RestartAfterAdoptionIssuesNoWritesWhenNothingDiffers) {
  StartCluster();
  OpenStore();
  StartEngine();
  Json spec = Spec();
  spec["storage"] = {{"size", "1Gi"}};
  spec["customHostname"] = "mu.example.com";
  auto put = engine_->intents().Put("mu", spec, "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  const std::string secret_rv =
      GetString((*Get("secrets", "mu-credentials"))["metadata"], "resourceVersion");
  engine_.reset();  // stop
  const uint64_t writes = ClusterWrites();
  StartEngine();
  ASSERT_TRUE(Eventually([&] { return engine_->stats().reconciles >= 1; }));
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  // Give every informer event of the start a chance to trigger a run, then compare.
  ASSERT_TRUE(Eventually([&] { return engine_->stats().queue_depth == 0; }));
  EXPECT_EQ(ClusterWrites(), writes);
  EXPECT_EQ(engine_->stats().writes, 0u);
  EXPECT_EQ(GetString((*Get("secrets", "mu-credentials"))["metadata"], "resourceVersion"),
            secret_rv);
  EXPECT_EQ(Creds(id).size(), 1u);
}

// Issue 18 §2: a restart finds Running projects whose cluster objects did not move by their
// adoption fingerprint — no render, no status write, no Kubernetes write — and a project whose
// Deployment was edited while Steward was down gets a full run that restores it.
TEST_F(LifecycleTest, ARestartFindsUnchangedProjectsByFingerprintAndRestoresAnEditedOne) {
  StartCluster();
  OpenStore();
  StartEngine();
  Json with_storage = Spec();
  with_storage["storage"] = {{"size", "1Gi"}};
  with_storage["customHostname"] = "nu.example.com";
  std::vector<std::string> ids;
  for (const auto& [name, spec] :
       {std::pair{"nu", with_storage}, std::pair{"xi", Spec()}, std::pair{"omicron", Spec()}}) {
    auto put = engine_->intents().Put(name, spec, "", true);
    ASSERT_TRUE(put.ok()) << put.error().ToString();
    ids.push_back(put->record.id);
  }
  for (const auto& id : ids) ASSERT_TRUE(WaitPhase(id, "Running", 1));
  ASSERT_TRUE(Eventually([&] { return Quiet(); }));
  for (const auto& id : ids) {
    EXPECT_FALSE(ParseStoredStatus(Record(id).status_json)->fingerprint.empty()) << id;
  }
  // A first restart brings up to date any fingerprint a late event of the start made stale.
  engine_.reset();
  StartEngine();
  ASSERT_TRUE(Eventually([&] { return engine_->stats().reconciles >= ids.size() && Quiet(); }));

  // The restart that counts: nothing moved.
  engine_.reset();
  const int64_t position = *store_->LastPosition();  // moves with every commit
  const uint64_t cluster_writes = ClusterWrites();
  StartEngine();
  ASSERT_TRUE(Eventually([&] { return engine_->stats().reconciles >= ids.size() && Quiet(); }));
  EngineStats s = engine_->stats();
  EXPECT_EQ(s.unchanged_runs, s.reconciles);
  EXPECT_EQ(s.writes, 0u);
  EXPECT_EQ(ClusterWrites(), cluster_writes);
  EXPECT_EQ(*store_->LastPosition(), position);
  for (const auto& id : ids) EXPECT_EQ(Record(id).phase, "Running");

  // An edit while Steward is down, our spec-hash annotation kept, that makes no object appear or
  // go (a Service's port): only its resourceVersion tells, so the restart must run the project
  // in full and revert it.
  engine_.reset();
  Json svc = *Get("services", "xi");
  ASSERT_EQ(svc["spec"]["ports"][0]["port"], 1880);
  svc["spec"]["ports"][0]["port"] = 8081;
  ASSERT_TRUE(cluster_->api().Update(Kind("services"), kNs, "xi", svc).ok());
  StartEngine();
  ASSERT_TRUE(Eventually([&] {
    auto restored = Get("services", "xi");
    return restored && (*restored)["spec"]["ports"][0]["port"] == 1880 &&
           Record(ids[1]).phase == "Running" && Quiet();
  }));
  s = engine_->stats();
  EXPECT_LT(s.unchanged_runs, s.reconciles);
  EXPECT_GE(s.writes, 1u);
}

TEST_F(LifecycleTest, EngineStoppedInTheMiddleOfEachStepConvergesWithoutDuplicatesOrRotation) {
  StartCluster();
  OpenStore();
  StartEngine();
  auto put = engine_->intents().Put("nu", Spec(), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  const store::Credential cred = Creds(id).front();
  // Stop the engine as soon as each object appears, and start it again on the same store.
  for (const char* kind :
       {"secrets", "deployments.apps", "services", "ingresses.networking.k8s.io"}) {
    ASSERT_TRUE(Eventually([&] { return !ListLabelled(kind, "steward.io/project=" + id).empty(); },
                           seconds(20)))
        << kind;
    engine_.reset();
    StartEngine();
  }
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  for (const char* kind :
       {"secrets", "deployments.apps", "services", "ingresses.networking.k8s.io"}) {
    EXPECT_EQ(ListLabelled(kind, "steward.io/project=" + id).size(), 1u) << kind;
  }
  auto creds = Creds(id);
  ASSERT_EQ(creds.size(), 1u);
  EXPECT_EQ(creds.front().id, cred.id);
  EXPECT_EQ(creds.front().state, store::CredentialState::kActive);
}

// Kills the engine (as a process death would: nothing more written) right before or right after
// its k-th write to the cluster, for every write of a start and of a suspend; a new engine on the
// same store must converge with no duplicate object and no rotated credential.
struct CrashPlan {
  int at = 0;          // the k-th write (1-based) of the run
  bool after = false;  // crash after the write was sent (its answer lost) instead of before
  std::atomic<int> seen{0};
  std::atomic<bool> fired{false};
};

EngineOptions WithCrash(EngineOptions o, std::shared_ptr<CrashPlan> plan) {
  o.write_hook = [plan](std::string_view when, std::string_view, const kube::ResourceType&,
                        std::string_view) -> Status {
    if (plan->fired) return Aborted("dead");
    if (when == "before") {
      if (++plan->seen == plan->at && !plan->after) {
        plan->fired = true;
        return Aborted("crash before write");
      }
    } else if (plan->seen == plan->at && plan->after) {
      plan->fired = true;
      return Aborted("crash after write");
    }
    return Status::Ok();
  };
  return o;
}

TEST_F(LifecycleTest, CrashAtEveryWriteOfAStartAndASuspendConvergesWithoutDuplicates) {
  StartCluster();
  OpenStore();
  Json spec = Spec();
  spec["storage"] = {{"size", "1Gi"}};
  const std::vector<std::string> kinds = {"secrets", "persistentvolumeclaims", "deployments.apps",
                                          "services", "ingresses.networking.k8s.io"};
  int n = 0;
  // A start writes five objects: Secret, PVC, Deployment, Service, Ingress.
  for (int at = 1; at <= 5; ++at) {
    for (bool after : {false, true}) {
      SCOPED_TRACE("start, crash " + std::string(after ? "after" : "before") + " write " +
                   std::to_string(at));
      const std::string name = "crash" + std::to_string(n++);
      auto plan = std::make_shared<CrashPlan>();
      plan->at = at;
      plan->after = after;
      StartEngine(WithCrash(DefaultOptions(), plan));
      auto put = engine_->intents().Put(name, spec, "", true);
      ASSERT_TRUE(put.ok());
      const std::string id = put->record.id;
      const std::vector<store::Credential> before = Creds(id);
      ASSERT_TRUE(Eventually([&] { return plan->fired.load(); }));
      engine_.reset();
      StartEngine();
      ASSERT_TRUE(WaitPhase(id, "Running", 1)) << Record(id).status_json;
      for (const auto& kind : kinds) {
        EXPECT_EQ(ListLabelled(kind, "steward.io/project=" + id).size(), 1u) << kind;
      }
      const std::vector<store::Credential> now = Creds(id);
      ASSERT_EQ(now.size(), 1u);
      EXPECT_EQ(now.front().id, before.front().id);
      EXPECT_EQ(now.front().state, store::CredentialState::kActive);
      engine_.reset();
    }
  }
  // A suspend deletes three: Ingress, Service, Deployment.
  for (int at = 1; at <= 3; ++at) {
    for (bool after : {false, true}) {
      SCOPED_TRACE("suspend, crash " + std::string(after ? "after" : "before") + " write " +
                   std::to_string(at));
      const std::string name = "crash" + std::to_string(n++);
      StartEngine();
      auto put = engine_->intents().Put(name, spec, "", true);
      ASSERT_TRUE(put.ok());
      const std::string id = put->record.id;
      ASSERT_TRUE(WaitPhase(id, "Running", 1));
      engine_.reset();
      auto plan = std::make_shared<CrashPlan>();
      plan->at = at;
      plan->after = after;
      StartEngine(WithCrash(DefaultOptions(), plan));
      ASSERT_TRUE(engine_->intents().Suspend(id).ok());
      ASSERT_TRUE(Eventually([&] { return plan->fired.load(); }));
      engine_.reset();
      StartEngine();
      ASSERT_TRUE(WaitPhase(id, "Suspended", 2));
      Snapshot s = Observe(id, name);
      EXPECT_FALSE(s.deployment || s.service || s.ingress || s.pods > 0) << s.describe;
      EXPECT_TRUE(s.secret && s.pvc_bound) << s.describe;
      EXPECT_EQ(Creds(id).size(), 1u);
      engine_.reset();
    }
  }
}

// A config change that alters the rendered Deployment (here the URL's port, which is in the
// pod's BASE_URL) is applied at the next start with exactly one update per changed object.
TEST_F(LifecycleTest, ConfigChangeAtStartupUpdatesEachChangedObjectOnce) {
  StartCluster(*cluster::BuiltinProfile("realistic"));
  OpenStore();
  StartEngine();
  auto put = engine_->intents().Put("omicron", Spec(), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  const int64_t generation =
      (*Get("deployments.apps", "omicron"))["metadata"]["generation"].get<int64_t>();
  engine_.reset();
  const uint64_t updates = cluster_->request_log().Count("update");
  const uint64_t creates = cluster_->request_log().Count("create");
  EngineOptions o = DefaultOptions();
  o.config.url_port = 8080;
  StartEngine(o);
  ASSERT_TRUE(Eventually([&] {
    auto dep = Get("deployments.apps", "omicron");
    return dep && DeploymentReadiness(*dep).ready() &&
           dep->dump().find("http://omicron.localhost:8080") != std::string::npos &&
           Record(id).phase == "Running";
  }));
  ASSERT_TRUE(Eventually([&] { return engine_->stats().queue_depth == 0; }));
  EXPECT_EQ(cluster_->request_log().Count("update"), updates + 1);
  // A rollout Steward started for a new rendering is an update, not a degradation.
  auto history = store_->ListHistory(id, 0, 1000);
  ASSERT_TRUE(history.ok());
  bool updating = false;
  for (const auto& h : *history) {
    EXPECT_NE(h.summary, "Degraded");
    updating |= h.kind == "phase" && h.summary == "Updating";
  }
  EXPECT_TRUE(updating);
  EXPECT_EQ(cluster_->request_log().Count("create"), creates);
  EXPECT_EQ((*Get("deployments.apps", "omicron"))["metadata"]["generation"].get<int64_t>(),
            generation + 1);
}

TEST_F(LifecycleTest, OrphansAreReportedAndRemovedOnlyWhenConfigured) {
  StartCluster();
  OpenStore();
  // An object with Steward's labels for a project the store does not know.
  Json orphan = {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata",
       {{"name", "ghost"},
        {"labels",
         {{"steward.io/project", "ghost-id"}, {"app.kubernetes.io/managed-by", "steward"}}}}},
      {"spec", {{"ports", {{{"name", "web"}, {"port", 1880}}}}}}};
  ASSERT_TRUE(cluster_->api().Create(Kind("services"), kNs, orphan).ok());
  StartEngine();
  ASSERT_TRUE(Eventually([&] { return !engine_->stats().orphans.empty(); }));
  EXPECT_EQ(engine_->stats().orphans.front().name, "ghost");
  EXPECT_EQ(engine_->stats().orphans.front().project_id, "ghost-id");
  EXPECT_TRUE(Get("services", "ghost").has_value());
  engine_.reset();
  EngineOptions o = DefaultOptions();
  o.config.remove_orphans = true;
  StartEngine(o);
  ASSERT_TRUE(Eventually([&] { return !Get("services", "ghost").has_value(); }));
}

TEST_F(LifecycleTest, AProjectStoredAfterItsObjectsAreSeenIsNoOrphanAndAYoungSuppliedSecretNever) {
  StartCluster();
  OpenStore();
  const Json labels = {{std::string(kProjectLabel), "later-id"},
                       {std::string(kManagedByLabel), std::string(kManagedByValue)}};
  Json service = {{"apiVersion", "v1"},
                  {"kind", "Service"},
                  {"metadata", {{"name", "later-early"}, {"labels", labels}}},
                  {"spec", {{"ports", {{{"name", "web"}, {"port", 1880}}}}}}};
  Json supplied_labels = labels;
  supplied_labels[std::string(kCredentialsLabel)] = std::string(kSuppliedValue);
  Json secret = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"metadata", {{"name", "later-id-credentials-0123"}, {"labels", supplied_labels}}},
                 {"stringData", {{"FORGE_PROJECT_TOKEN", "t"}}}};
  ASSERT_TRUE(cluster_->api().Create(Kind("secrets"), kNs, secret).ok());
  ASSERT_TRUE(cluster_->api().Create(Kind("services"), kNs, service).ok());
  StartEngine();
  // Both were judged in one run: the Service is reported, the Secret (the API writes it just
  // before its commit) is not.
  ASSERT_TRUE(Eventually([&] { return !engine_->stats().orphans.empty(); }));
  for (const auto& o : engine_->stats().orphans) {
    EXPECT_EQ(o.kind, "Service") << o.name;
  }
  // The project is stored now: nothing of it is an orphan any more.
  auto put = engine_->intents().Put("later", Spec(), "later-id", false);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  EXPECT_TRUE(Eventually([&] { return engine_->stats().orphans.empty(); }));
}

// A Steward killed between writing a project's supplied-credentials Secret and committing the
// project leaves the Secret to the next process: it is young then, so it is looked at again when
// its grace ends, and removed, without any other event for that id.
TEST_F(LifecycleTest, AYoungSuppliedSecretOfNoProjectIsRemovedOnceItsGraceEnds) {
  StartCluster();
  OpenStore();
  Json labels = {{std::string(kProjectLabel), "lost-id"},
                 {std::string(kManagedByLabel), std::string(kManagedByValue)},
                 {std::string(kCredentialsLabel), std::string(kSuppliedValue)}};
  Json secret = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"metadata", {{"name", "lost-id-credentials-0123"}, {"labels", labels}}},
                 {"stringData", {{"FORGE_PROJECT_TOKEN", "t"}}}};
  ASSERT_TRUE(cluster_->api().Create(Kind("secrets"), kNs, secret).ok());
  // An orphan Service of the same id marks the first judgement: it goes at once.
  Json service = {{"apiVersion", "v1"},
                  {"kind", "Service"},
                  {"metadata", {{"name", "lost-early"}, {"labels", labels}}},
                  {"spec", {{"ports", {{{"name", "web"}, {"port", 1880}}}}}}};
  service["metadata"]["labels"].erase(std::string(kCredentialsLabel));
  ASSERT_TRUE(cluster_->api().Create(Kind("services"), kNs, service).ok());
  OffsetClock& clock = offset_clock_;
  EngineOptions o = DefaultOptions();
  o.config.remove_orphans = true;
  o.clock = &clock;
  o.queue.max_timer_wait = milliseconds(100);
  o.recheck = std::chrono::minutes(10);  // no recheck comes due: only the grace's requeue can
  StartEngine(o);
  // Judged, and waiting for the grace to end (a run that reads the clock before the jump below
  // and ends after it measures its requeue when it ends).
  ASSERT_TRUE(Eventually([&] {
    const EngineStats s = engine_->stats();
    return !Get("services", "lost-early").has_value() && s.queue_depth == 0 && s.queue_waiting == 1;
  }));
  // Left alone: it is young.
  EXPECT_TRUE(Get("secrets", "lost-id-credentials-0123").has_value());
  for (const auto& orphan : engine_->stats().orphans) EXPECT_EQ(orphan.kind, "Service");
  clock.Advance(std::chrono::milliseconds(kSuppliedOrphanGraceMs));
  EXPECT_TRUE(Eventually([&] { return !Get("secrets", "lost-id-credentials-0123").has_value(); },
                         seconds(10)));
}

// A young supplied Secret beside an orphan held terminating by someone else's finalizer: the
// wait for that object neither puts the Secret's appointment off to the recheck nor keeps the
// Secret once its grace ends (found by CI: the Wait's recheck replaced the grace's requeue).
TEST_F(LifecycleTest, AnOrphanStuckTerminatingNeitherDelaysNorKeepsAYoungSuppliedSecret) {
  StartCluster();
  OpenStore();
  Json labels = {{std::string(kProjectLabel), "held-id"},
                 {std::string(kManagedByLabel), std::string(kManagedByValue)}};
  Json service = {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata",
       {{"name", "held"}, {"labels", labels}, {"finalizers", Json::array({"example.com/hold"})}}},
      {"spec", {{"ports", {{{"name", "web"}, {"port", 1880}}}}}}};
  ASSERT_TRUE(cluster_->api().Create(Kind("services"), kNs, service).ok());
  ASSERT_TRUE(cluster_->api().Delete(Kind("services"), kNs, "held", {}).ok());
  ASSERT_TRUE(Eventually([&] {
    auto held = Get("services", "held");
    return held && held->contains("metadata") && (*held)["metadata"].contains("deletionTimestamp");
  }));
  labels[std::string(kCredentialsLabel)] = std::string(kSuppliedValue);
  Json secret = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"metadata", {{"name", "held-id-credentials-0123"}, {"labels", labels}}},
                 {"stringData", {{"FORGE_PROJECT_TOKEN", "t"}}}};
  ASSERT_TRUE(cluster_->api().Create(Kind("secrets"), kNs, secret).ok());
  EngineOptions o = DefaultOptions();
  o.config.remove_orphans = true;
  o.clock = &offset_clock_;
  o.queue.max_timer_wait = milliseconds(100);
  o.recheck = std::chrono::minutes(10);  // only the grace's requeue can come due
  StartEngine(o);
  ASSERT_TRUE(Eventually([&] {
    const EngineStats s = engine_->stats();
    return s.orphans.size() == 1 && s.queue_depth == 0 && s.queue_processing == 0 &&
           s.queue_waiting == 1;
  }));
  EXPECT_EQ(engine_->stats().orphans[0].kind, "Service");
  EXPECT_TRUE(Get("secrets", "held-id-credentials-0123").has_value());
  offset_clock_.Advance(std::chrono::milliseconds(kSuppliedOrphanGraceMs));
  EXPECT_TRUE(Eventually([&] { return !Get("secrets", "held-id-credentials-0123").has_value(); },
                         seconds(10)));
  EXPECT_TRUE(Get("services", "held").has_value());  // still held by its finalizer
}

// Without engine.removeOrphans, a supplied-credentials Secret of no project goes after its grace
// only when this store's Steward wrote it (steward.io/store: the store's FeedId): it was written
// for an intent that was never committed. One another store's Steward wrote, or one without the
// annotation, is only reported.
TEST_F(LifecycleTest, ASuppliedSecretThisStoreWroteForNoProjectGoesAfterItsGraceAlone) {
  StartCluster();
  OpenStore();
  EngineOptions o = DefaultOptions();
  auto supplied = [&](const std::string& token, const std::string& store_id) {
    SuppliedCredentials values;
    values.env = {{"FORGE_PROJECT_TOKEN", token}};
    Json secret = RenderSuppliedSecret("lost-id", "lost", &o.config, values, 1, store_id);
    EXPECT_TRUE(cluster_->api().Create(Kind("secrets"), kNs, secret).ok());
    return GetString(secret["metadata"], "name");
  };
  const std::string ours = supplied("a", store_->FeedId());
  const std::string other_store = supplied("b", "otherfeed");
  const std::string unmarked = supplied("c", "");
  o.clock = &offset_clock_;
  o.queue.max_timer_wait = milliseconds(100);
  o.recheck = std::chrono::minutes(10);  // no recheck comes due: only the grace's requeue can
  StartEngine(o);
  // Judged young (nothing reported), a requeue pending for the grace of this store's Secret.
  ASSERT_TRUE(Eventually([&] {
    const EngineStats s = engine_->stats();
    return s.reconciles > 0 && s.queue_depth == 0 && s.queue_processing == 0 &&
           s.queue_waiting == 1;
  }));
  EXPECT_TRUE(engine_->stats().orphans.empty());
  offset_clock_.Advance(std::chrono::milliseconds(kSuppliedOrphanGraceMs));
  ASSERT_TRUE(Eventually([&] { return !Get("secrets", ours).has_value(); }, seconds(10)));
  // Judged in the same run: reported, kept.
  EXPECT_TRUE(Get("secrets", other_store).has_value());
  EXPECT_TRUE(Get("secrets", unmarked).has_value());
  std::set<std::string> reported;
  for (const auto& orphan : engine_->stats().orphans) reported.insert(orphan.name);
  EXPECT_TRUE(reported.contains(other_store));
  EXPECT_TRUE(reported.contains(unmarked));
}

TEST_F(LifecycleTest, ObjectOfTheSameNameThatIsNotOursFailsTheStartWithAReason) {
  StartCluster();
  OpenStore();
  Json foreign = {{"apiVersion", "v1"},
                  {"kind", "Secret"},
                  {"metadata", {{"name", "xi-credentials"}}},
                  {"data", Json::object()}};
  ASSERT_TRUE(cluster_->api().Create(Kind("secrets"), kNs, foreign).ok());
  StartEngine();
  auto put = engine_->intents().Put("xi", Spec(), "", true);
  ASSERT_TRUE(WaitPhase(put->record.id, "Failed", 1));
  auto status = ParseProjectStatus(*ParseJson(Record(put->record.id).status_json));
  EXPECT_EQ(status->reason, "NameTaken");
  EXPECT_NE(status->message.find("xi-credentials"), std::string::npos);
  // Untouched.
  EXPECT_FALSE((*Get("secrets", "xi-credentials"))["metadata"].contains("labels"));
}

}  // namespace
}  // namespace steward::engine::testing

namespace steward::engine::testing {
namespace {

// engine.maxStarting 1: one start under way at a time. The others are Pending (reason Queued)
// with nothing created until the one under way is Running; then the next is woken. Every start
// ends Running; no two are ever Provisioning at once.
TEST_F(LifecycleTest, StartsBeyondMaxStartingWaitQueuedUntilTheOneUnderWayRuns) {
  StartCluster();
  OpenStore();
  struct Phase {
    std::string id, phase, reason;
  };
  Mutex mu;
  std::vector<Phase> phases;  // every status commit, in commit order
  ScopedListener recording(*store_, [&](const store::ProjectChange& c) {
    if (!c.record || c.record->status_json.empty()) return;
    auto status = ParseProjectStatus(*ParseJson(c.record->status_json));
    if (!status.ok()) return;
    MutexLock lock(mu);
    phases.push_back({c.project_id, c.record->phase, status->reason});
  });
  EngineOptions o = DefaultOptions();
  o.config.max_starting = 1;
  StartEngine(o);
  std::vector<std::string> ids;
  for (const char* name : {"alpha", "beta", "gamma"}) {
    auto put = engine_->intents().Put(name, Spec(), "", /*start=*/true);
    ASSERT_TRUE(put.ok()) << put.error().ToString();
    ids.push_back(put->record.id);
  }
  for (const auto& id : ids) ASSERT_TRUE(WaitPhase(id, "Running", 1));

  MutexLock lock(mu);
  int queued = 0;
  std::string under_way;  // the project between its first non-Pending phase and Running
  std::set<std::string> started;
  for (const Phase& p : phases) {
    if (p.phase == "Pending") {
      queued += p.reason == "Queued" ? 1 : 0;
      continue;
    }
    if (!started.contains(p.id)) {
      EXPECT_TRUE(under_way.empty()) << p.id << " began while " << under_way << " was starting";
      started.insert(p.id);
      under_way = p.id;
    }
    if (p.phase == "Running" && p.id == under_way) under_way.clear();
  }
  EXPECT_EQ(started.size(), 3u);
  EXPECT_GE(queued, 1) << "a start waited with reason Queued";
  EXPECT_EQ(engine_->stats().queue_depth, 0u);
}

}  // namespace
}  // namespace steward::engine::testing
