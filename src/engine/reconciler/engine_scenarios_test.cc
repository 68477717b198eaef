// More lifecycle scenarios (docs/design.md §8 layer 3): API faults, HA restarts, custom hostnames,
// ReadWriteOnce storage, the ingress admission switch, drift, and the HTTP probe. Each checks
// what Steward says against the oracle's view of the cluster at every phase commit.
#include <algorithm>
#include <atomic>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include "engine/probe/http_prober.h"
#include "engine/reconciler/engine_test_support.h"

namespace steward::engine::testing {
namespace {

using test_support::Eventually;

class ScenarioTest : public EngineFixture {
 protected:
  // Every snapshot of `id` agrees with its phase: Running ⇒ every object ready; Suspended ⇒
  // Deployment, Service, Ingresses and pods gone. And no phase is Failed.
  void ExpectSnapshotsTruthful(const std::string& id) {
    for (const auto& s : Snapshots()) {
      if (s.id != id) continue;
      EXPECT_NE(s.phase, "Failed") << id << " at generation " << s.generation;
      if (s.phase == "Running") {
        EXPECT_TRUE(s.at.secret && s.at.deployment_ready && s.at.endpoints_ready &&
                    s.at.ingress_address)
            << id << " Running at generation " << s.generation << ": " << s.at.describe;
      }
      if (s.phase == "Suspended") {
        EXPECT_FALSE(s.at.deployment || s.at.service || s.at.ingress || s.at.custom_ingress ||
                     s.at.pods > 0)
            << id << " Suspended at generation " << s.generation << ": " << s.at.describe;
      }
    }
  }

  std::vector<std::string> PhasesOf(const std::string& id, int64_t generation) {
    std::vector<std::string> out;
    for (const auto& s : Snapshots()) {
      if (s.id == id && s.generation == generation) out.push_back(s.phase);
    }
    return out;
  }

  std::optional<PhaseSnapshot> FirstAt(const std::string& id, std::string_view phase,
                                       int64_t generation) {
    for (const auto& s : Snapshots()) {
      if (s.id == id && s.phase == phase && s.generation == generation) return s;
    }
    return std::nullopt;
  }

  // Requests the API server answered with `code` (from its metrics).
  uint64_t RequestsWithCode(int code) {
    const std::string text = cluster_->request_log().MetricsText();
    const std::string needle = "apiserver_request_total{code=\"" + std::to_string(code) + "\"";
    uint64_t total = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
      size_t space = text.find("} ", at);
      size_t end = text.find('\n', space);
      total += std::stoull(text.substr(space + 2, end - space - 2));
    }
    return total;
  }

  std::string Describe(const std::string& id) {
    auto r = store_->GetProject(id);
    if (!r.ok()) return r.error().ToString();
    return "phase " + r->phase + " observed " + std::to_string(r->observed_generation) + " of " +
           std::to_string(r->generation) + ": " + r->status_json;
  }
};

// Five projects against a cluster that throttles, fails, resets connections, cuts watches and
// compacts its history; each ends in its last intent, and every phase committed on the way was
// true of the cluster at that moment.
TEST_F(ScenarioTest, HostileFaultsEveryProjectEndsInItsLastIntentAndEveryPhaseIsTrue) {
  StartCluster(QuickHostileProfile());
  OpenStore();
  RecordSnapshotsAtPhases();
  StartEngine();
  const uint64_t first_lists = cluster_->request_log().Count("list");
  const std::vector<std::string> names = {"h-one", "h-two", "h-three", "h-four", "h-five"};
  std::map<std::string, std::string> ids;
  {
    Mutex mu;
    std::vector<std::thread> threads;
    for (const auto& n : names) {
      threads.emplace_back([&, n] {
        auto put = engine_->intents().Put(n, Spec("flowfuse/node-red:3.1"), "", true);
        ASSERT_TRUE(put.ok()) << put.error().ToString();
        MutexLock lock(mu);
        ids[n] = put->record.id;
      });
    }
    for (auto& t : threads) t.join();
  }
  ASSERT_EQ(ids.size(), names.size());
  for (const auto& n : names) {
    ASSERT_TRUE(WaitPhase(ids[n], "Running", 1, seconds(30))) << n << ": " << Describe(ids[n]);
  }

  // Let the history be compacted at least once under the informers' feet first.
  ASSERT_TRUE(Eventually([&] { return cluster_->storage().CompactedRevision() > 0; }, seconds(5)));

  // Stack change on two, suspend on two, delete on one, all at once.
  std::map<std::string, int64_t> want_generation;
  std::vector<std::thread> ops;
  Mutex mu;
  auto record = [&](const std::string& n, int64_t g) {
    MutexLock lock(mu);
    want_generation[n] = g;
  };
  for (const char* n : {"h-one", "h-two"}) {
    ops.emplace_back([&, n] {
      auto r = engine_->intents().Put(n, Spec("flowfuse/node-red:4.0"));
      ASSERT_TRUE(r.ok() && r->changed);
      record(n, r->record.generation);
    });
  }
  for (const char* n : {"h-three", "h-four"}) {
    ops.emplace_back([&, n] {
      auto r = engine_->intents().Suspend(n);
      ASSERT_TRUE(r.ok());
      record(n, r->generation);
    });
  }
  ops.emplace_back([&] { ASSERT_TRUE(engine_->intents().Delete("h-five").ok()); });
  for (auto& t : ops) t.join();

  for (const char* n : {"h-one", "h-two"}) {
    ASSERT_TRUE(WaitPhase(ids[n], "Running", want_generation[n], seconds(30)))
        << n << ": " << Describe(ids[n]);
  }
  for (const char* n : {"h-three", "h-four"}) {
    ASSERT_TRUE(WaitPhase(ids[n], "Suspended", want_generation[n], seconds(30)))
        << n << ": " << Describe(ids[n]);
  }
  ASSERT_TRUE(WaitPurged(ids["h-five"], seconds(30))) << Describe(ids["h-five"]);

  for (const char* n : {"h-one", "h-two"}) {
    Snapshot now = Observe(ids[n], n);
    EXPECT_EQ(now.image, "flowfuse/node-red:4.0") << n;
    EXPECT_EQ(IngressStatus(std::string(n) + ".localhost"), 200) << n;
  }
  for (const char* n : {"h-three", "h-four"}) {
    Snapshot now = Observe(ids[n], n);
    EXPECT_FALSE(now.deployment || now.service || now.ingress || now.pods > 0)
        << n << ": " << now.describe;
    EXPECT_TRUE(now.secret) << n;  // kept for the next start
    EXPECT_EQ(IngressStatus(std::string(n) + ".localhost"), 404) << n;
  }
  EXPECT_TRUE(Leftovers(ids["h-five"]).empty())
      << ::testing::PrintToString(Leftovers(ids["h-five"]));
  for (const auto& n : names) ExpectSnapshotsTruthful(ids[n]);
  // The faults were really there (else this is just another happy-path test).
  const uint64_t injected = RequestsWithCode(429) + RequestsWithCode(500) + RequestsWithCode(503);
  EXPECT_GT(injected, 0u);
  EXPECT_GT(cluster_->request_log().Count("watch"), 7u);  // watches were reopened
  EXPECT_GT(cluster_->storage().CompactedRevision(), 0u);
  // Once an informer has relisted after a compaction (410) the end state still holds: the
  // relist's differences changed nothing.
  ASSERT_TRUE(
      Eventually([&] { return cluster_->request_log().Count("list") > first_lists; }, seconds(10)));
  ASSERT_TRUE(Eventually([&] { return engine_->stats().queue_depth == 0; }));
  for (const char* n : {"h-one", "h-two"}) {
    EXPECT_EQ(Record(ids[n]).phase, "Running") << n;
    EXPECT_EQ(Record(ids[n]).generation, want_generation[n]) << n;
  }
  for (const char* n : {"h-three", "h-four"}) EXPECT_EQ(Record(ids[n]).phase, "Suspended") << n;
  std::cerr << "hostile scenario: " << injected << " injected 429/500/503 of "
            << cluster_->request_log().Count("get") + cluster_->request_log().Count("list") +
                   cluster_->request_log().Count("watch") + ClusterWrites()
            << " requests; " << cluster_->request_log().Count("watch") << " watches, "
            << cluster_->request_log().Count("list") << " lists\n";
  // A purged project's last objects are not mistaken for orphans.
  for (const auto& o : engine_->stats().orphans) {
    ADD_FAILURE() << "orphan reported: " << o.kind << " " << o.name << " of " << o.project_id;
  }
}

// HA: a restart rolls every one of three pods, and Running at the restart's generation means
// every live pod carries the new restart epoch.
TEST_F(ScenarioTest, HaRestartIsRunningOnlyWhenEveryPodHasTheNewRestartEpoch) {
  StartCluster();
  OpenStore();
  RecordDetailedSnapshotsAtPhases();
  StartEngine();
  auto put = engine_->intents().Put("ha", Spec("flowfuse/node-red:4.0", 3), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1)) << Describe(id);
  std::set<std::string> old_pods;
  for (const auto& p : ObserveDetailed(id, "ha").pod_details) old_pods.insert(p.name);
  ASSERT_EQ(old_pods.size(), 3u);

  auto restarted = engine_->intents().Restart(id);
  ASSERT_TRUE(restarted.ok());
  const std::string epoch = std::to_string(restarted->restart_epoch);
  ASSERT_EQ(restarted->restart_epoch, 1);
  ASSERT_TRUE(WaitPhase(id, "Running", restarted->generation)) << Describe(id);
  ASSERT_TRUE(WaitSnapshot(id, "Running", restarted->generation));

  auto phases = PhasesOf(id, restarted->generation);
  ASSERT_FALSE(phases.empty());
  EXPECT_EQ(phases.front(), "Updating") << ::testing::PrintToString(phases);
  EXPECT_EQ(phases.back(), "Running") << ::testing::PrintToString(phases);
  auto running = FirstAt(id, "Running", restarted->generation);
  ASSERT_TRUE(running.has_value());
  int with_epoch = 0, live = 0;
  for (const auto& p : running->at.pod_details) {
    if (p.terminating) continue;
    ++live;
    EXPECT_EQ(p.restart_epoch, epoch) << p.name;
    EXPECT_TRUE(p.ready) << p.name;
    EXPECT_FALSE(old_pods.contains(p.name)) << p.name << " was not replaced";
    with_epoch += p.restart_epoch == epoch;
  }
  EXPECT_EQ(live, 3) << running->at.describe;
  EXPECT_EQ(with_epoch, 3) << running->at.describe;
  EXPECT_TRUE(running->at.deployment_ready && running->at.endpoints_ready) << running->at.describe;
  ExpectSnapshotsTruthful(id);
  // The restart changed nothing but the pods: same credentials, one of them.
  EXPECT_EQ(Creds(id).size(), 1u);
}

// A custom hostname is served through its own Ingress; taking it out of the spec deletes that
// Ingress, and Running at that generation means it is gone.
TEST_F(ScenarioTest, CustomHostnameIsReachableAndRemovingItDeletesItsIngress) {
  StartCluster();
  OpenStore();
  RecordSnapshotsAtPhases();
  StartEngine();
  Json spec = Spec();
  spec["customHostname"] = "flows.example.com";
  auto put = engine_->intents().Put("cust", spec, "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1)) << Describe(id);
  std::string body;
  EXPECT_EQ(IngressStatus("flows.example.com", &body), 200) << body;
  EXPECT_EQ(IngressStatus("cust.localhost"), 200);
  EXPECT_TRUE(Observe(id, "cust").custom_ingress);
  bool custom_condition = false;
  for (const auto& c : StatusOf(id).conditions) {
    if (c.resource == "CustomIngress") custom_condition = c.ready;
  }
  EXPECT_TRUE(custom_condition);

  auto plain = engine_->intents().Put("cust", Spec());
  ASSERT_TRUE(plain.ok());
  ASSERT_TRUE(plain->changed);
  ASSERT_TRUE(WaitPhase(id, "Running", plain->record.generation)) << Describe(id);
  ASSERT_TRUE(WaitSnapshot(id, "Running", plain->record.generation));
  EXPECT_FALSE(Get("ingresses.networking.k8s.io", "cust-custom").has_value());
  EXPECT_EQ(IngressStatus("flows.example.com"), 404);
  EXPECT_EQ(IngressStatus("cust.localhost"), 200);
  auto running = FirstAt(id, "Running", plain->record.generation);
  ASSERT_TRUE(running.has_value());
  EXPECT_FALSE(running->at.custom_ingress) << "Running while the custom Ingress still existed";
  for (const auto& c : StatusOf(id).conditions) EXPECT_NE(c.resource, "CustomIngress");
  ExpectSnapshotsTruthful(id);
}

// ReadWriteOnce storage cannot be mounted by two pods: the Deployment uses Recreate, a stack
// change still converges, and the claim (the user's data) is the same object throughout.
TEST_F(ScenarioTest, ReadWriteOnceStorageUsesRecreateAndKeepsTheClaimAcrossAStackChange) {
  StartCluster();
  OpenStore();
  RecordSnapshotsAtPhases();
  StartEngine();
  Json spec = Spec("flowfuse/node-red:3.1");
  spec["storage"] = {{"size", "1Gi"}, {"accessMode", "ReadWriteOnce"}};
  auto put = engine_->intents().Put("rwo", spec, "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1)) << Describe(id);
  const ObjectNames names = NamesFor(id, "rwo");
  auto dep = Get("deployments.apps", names.deployment);
  ASSERT_TRUE(dep.has_value());
  EXPECT_EQ(GetString((*dep)["spec"]["strategy"], "type"), "Recreate");
  auto pvc = Get("persistentvolumeclaims", names.pvc);
  ASSERT_TRUE(pvc.has_value());
  const std::string pvc_uid = GetString((*pvc)["metadata"], "uid");
  EXPECT_EQ((*pvc)["spec"]["accessModes"], Json::array({"ReadWriteOnce"}));

  Json next = spec;
  next["stack"]["image"] = "flowfuse/node-red:4.0";
  auto changed = engine_->intents().Put("rwo", next);
  ASSERT_TRUE(changed.ok() && changed->changed);
  ASSERT_TRUE(WaitPhase(id, "Running", changed->record.generation)) << Describe(id);
  ASSERT_TRUE(WaitSnapshot(id, "Running", changed->record.generation));
  Snapshot now = ObserveDetailed(id, "rwo");
  EXPECT_EQ(now.image, "flowfuse/node-red:4.0");
  EXPECT_TRUE(now.pvc_bound);
  EXPECT_EQ(GetString((*Get("persistentvolumeclaims", names.pvc))["metadata"], "uid"), pvc_uid);
  for (const auto& p : now.pod_details) {
    if (!p.terminating) {
      EXPECT_EQ(p.image, "flowfuse/node-red:4.0") << p.name;
    }
  }
  auto running = FirstAt(id, "Running", changed->record.generation);
  ASSERT_TRUE(running.has_value());
  EXPECT_EQ(running->at.image, "flowfuse/node-red:4.0");
  EXPECT_EQ(IngressStatus("rwo.localhost"), 200);
  ExpectSnapshotsTruthful(id);
}

// The admission switch refuses an Ingress whose Service is missing; with Services that take a
// while to go away, suspend/start cycles (starts arriving mid-teardown) never end in Failed.
TEST_F(ScenarioTest, AdmissionSwitchWithSlowServiceFinalizersNeverFailsAcrossCycles) {
  cluster::Profile p = QuickProfile();
  p.ingress_requires_service = true;
  p.service_finalizer = {milliseconds(600), milliseconds(300)};
  p.ingress_finalizer = {milliseconds(100), milliseconds(100)};
  StartCluster(p);
  OpenStore();
  RecordSnapshotsAtPhases();
  StartEngine();
  auto put = engine_->intents().Put("adm", Spec(), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1)) << Describe(id);
  const ObjectNames names = NamesFor(id, "adm");
  for (int cycle = 0; cycle < 3; ++cycle) {
    auto suspended = engine_->intents().Suspend(id);
    ASSERT_TRUE(suspended.ok());
    if (cycle == 1) {
      // Start while the Service is terminating (the Ingress already gone).
      ASSERT_TRUE(Eventually([&] {
        auto svc = Get("services", names.service);
        return svc && (*svc)["metadata"].contains("deletionTimestamp");
      })) << "cycle "
          << cycle << ": " << Describe(id);
    } else if (cycle == 2) {
      // Start while the Ingress is terminating.
      ASSERT_TRUE(Eventually([&] {
        auto ing = Get("ingresses.networking.k8s.io", names.ingress);
        return !ing || (*ing)["metadata"].contains("deletionTimestamp");
      })) << "cycle "
          << cycle;
    } else {
      ASSERT_TRUE(WaitPhase(id, "Suspended", suspended->generation)) << Describe(id);
    }
    auto started = engine_->intents().Start(id);
    ASSERT_TRUE(started.ok());
    ASSERT_TRUE(WaitPhase(id, "Running", started->generation, seconds(20)))
        << "cycle " << cycle << ": " << Describe(id);
    EXPECT_EQ(IngressStatus("adm.localhost"), 200) << "cycle " << cycle;
  }
  ExpectSnapshotsTruthful(id);
  auto history = store_->ListHistory(id, 0, 1000);
  ASSERT_TRUE(history.ok());
  for (const auto& h : *history) EXPECT_NE(h.summary, "Failed") << h.detail_json;
}

// Drift: an image changed behind Steward's back is put back, and the project is Running again
// with the spec's image.
TEST_F(ScenarioTest, OutOfBandImageEditIsRevertedAndTheProjectReturnsToRunning) {
  StartCluster();
  OpenStore();
  RecordSnapshotsAtPhases();
  StartEngine();
  auto put = engine_->intents().Put("drift", Spec("flowfuse/node-red:4.0"), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1)) << Describe(id);
  // The store shows Running before the listener has recorded what the cluster looked like then:
  // an edit before that record would be taken for what Running claimed.
  ASSERT_TRUE(WaitSnapshot(id, "Running", 1));
  const std::string rv =
      GetString((*Get("deployments.apps", "drift"))["metadata"], "resourceVersion");

  Json dep = *Get("deployments.apps", "drift");
  dep["spec"]["template"]["spec"]["containers"][0]["image"] = "someone/else:1";
  auto edited = cluster_->api().Update(Kind("deployments.apps"), kNs, "drift", dep);
  ASSERT_TRUE(edited.ok());
  const std::string edited_rv = GetString((*edited)["metadata"], "resourceVersion");
  ASSERT_NE(edited_rv, rv);

  ASSERT_TRUE(Eventually(
      [&] {
        auto d = Get("deployments.apps", "drift");
        // Running again after having said Degraded (the store's phase alone could still be the
        // Running from before the edit was noticed).
        auto phases = PhasesOf(id, 1);
        auto degraded = std::find(phases.begin(), phases.end(), "Degraded");
        return d && GetString((*d)["metadata"], "resourceVersion") != edited_rv &&
               GetString((*d)["spec"]["template"]["spec"]["containers"][0], "image") ==
                   "flowfuse/node-red:4.0" &&
               degraded != phases.end() &&
               std::find(degraded, phases.end(), "Running") != phases.end() &&
               Record(id).phase == "Running";
      },
      seconds(15)))
      << Describe(id) << " image " << Observe(id, "drift").image;
  EXPECT_EQ(Record(id).generation, 1);  // drift is no intent
  Snapshot now = ObserveDetailed(id, "drift");
  EXPECT_TRUE(now.deployment_ready) << now.describe;
  for (const auto& p : now.pod_details) {
    if (!p.terminating) {
      EXPECT_EQ(p.image, "flowfuse/node-red:4.0") << p.name;
    }
  }
  // While it was being put back the project said so.
  auto phases = PhasesOf(id, 1);
  EXPECT_NE(std::find(phases.begin(), phases.end(), "Degraded"), phases.end())
      << ::testing::PrintToString(phases);
  ExpectSnapshotsTruthful(id);
  EXPECT_EQ(IngressStatus("drift.localhost"), 200);
}

// With the HTTP probe on, Running also means the project's URL answered through the ingress.
TEST_F(ScenarioTest, HttpProbeThroughTheIngressListenerGatesRunning) {
  StartCluster();
  OpenStore();
  RecordSnapshotsAtPhases();
  EngineOptions o = DefaultOptions();
  o.config.http_probe = true;
  o.config.http_probe_address = "127.0.0.1:" + std::to_string(cluster_->ingress_port());
  std::atomic<int> probes{0};
  HttpProber real =
      MakeHttpProber(o.config.http_probe_address, milliseconds(o.config.http_probe_timeout_ms));
  o.prober = [&probes, real](const std::string& host, const std::string& url) {
    ++probes;
    return real(host, url);
  };
  StartEngine(o);
  auto put = engine_->intents().Put("probed", Spec(), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1)) << Describe(id);
  EXPECT_GE(probes.load(), 1);
  bool probe_ready = false;
  for (const auto& c : StatusOf(id).conditions) {
    if (c.resource != "Probe") continue;
    probe_ready = c.ready;
    EXPECT_EQ(c.message, "http://probed.localhost/ answers");
  }
  EXPECT_TRUE(probe_ready) << Record(id).status_json;
  ExpectSnapshotsTruthful(id);
}

// A probe that cannot get an answer keeps the project out of Running, saying why.
TEST_F(ScenarioTest, HttpProbeThatFailsKeepsTheProjectProvisioningWithTheReason) {
  StartCluster();
  OpenStore();
  EngineOptions o = DefaultOptions();
  o.config.http_probe = true;
  // The ingress listener with a Host no rule matches: 404.
  o.config.http_probe_address = "127.0.0.1:" + std::to_string(cluster_->ingress_port());
  HttpProber real = MakeHttpProber(o.config.http_probe_address, milliseconds(2000));
  o.prober = [real](const std::string&, const std::string& url) {
    return real("nobody.invalid", url);
  };
  StartEngine(o);
  auto put = engine_->intents().Put("unprobed", Spec(), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(Eventually([&] { return StatusOf(id).reason == "ProbeFailed"; }, seconds(20)))
      << Describe(id);
  ProjectStatus st = StatusOf(id);
  EXPECT_EQ(st.phase, Phase::kProvisioning);
  EXPECT_NE(st.message.find("HTTP 404"), std::string::npos) << st.message;
  std::map<std::string, bool> ready;
  for (const auto& c : st.conditions) ready[c.resource] = c.ready;
  EXPECT_TRUE(ready["Deployment"] && ready["Service"] && ready["Ingress"]);
  ASSERT_TRUE(ready.contains("Probe"));
  EXPECT_FALSE(ready["Probe"]);
  // Everything else is ready: only the probe holds it back.
  Snapshot now = Observe(id, "unprobed");
  EXPECT_TRUE(now.deployment_ready && now.endpoints_ready && now.ingress_address) << now.describe;
}

// A run for a project the store no longer has (a late pod or EndpointSlice event wakes one
// right after the purge) must not report as orphans the objects the purge has just deleted and
// the server said were gone, only because an informer has not caught up yet. Here the Secrets
// informer is held behind the cluster while the project is deleted.
TEST_F(ScenarioTest, ObjectsJustDeletedByThePurgeAreNotReportedAsOrphans) {
  StartCluster();
  std::shared_ptr<GatedTransport> gate = GateClient();
  OpenStore();
  StartEngine();
  auto put = engine_->intents().Put("orph", Spec(), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1)) << Describe(id);
  gate->Hold("/secrets");
  ASSERT_TRUE(engine_->intents().Delete(id).ok());
  ASSERT_TRUE(WaitPurged(id)) << Describe(id);
  ASSERT_FALSE(Get("secrets", "orph-credentials").has_value());
  // The late event.
  const uint64_t runs = engine_->stats().reconciles;
  engine_->Enqueue(id);
  ASSERT_TRUE(Eventually([&] { return engine_->stats().reconciles > runs; }));
  // Give a wrong report its chance to appear (the run is short).
  Eventually([&] { return !engine_->stats().orphans.empty(); }, milliseconds(500));
  gate->Release();
  for (const auto& o : engine_->stats().orphans) {
    ADD_FAILURE() << "reported as an orphan right after the purge deleted it: " << o.kind << " "
                  << o.name << " of " << o.project_id;
  }
  EXPECT_TRUE(Leftovers(id).empty()) << ::testing::PrintToString(Leftovers(id));
}

// A Service re-created under the same name (suspend, then start) is a new object: the
// EndpointSlices of the old one (owned by the old uid) must not make it look ready. Here the
// EndpointSlice informer lags behind the cluster while the project is suspended and started,
// and the cluster takes its time to publish the new Service's endpoints.
TEST_F(ScenarioTest, EndpointSlicesOfTheDeletedServiceDoNotMakeItsSuccessorReady) {
  cluster::Profile p = QuickProfile();
  p.endpoints = {milliseconds(1500), milliseconds(0)};
  StartCluster(p);
  std::shared_ptr<GatedTransport> gate = GateClient();
  OpenStore();
  RecordSnapshotsAtPhases();
  StartEngine();
  auto put = engine_->intents().Put("slc", Spec(), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1)) << Describe(id);

  gate->Hold("/endpointslices");
  auto suspended = engine_->intents().Suspend(id);
  ASSERT_TRUE(suspended.ok());
  ASSERT_TRUE(WaitPhase(id, "Suspended", suspended->generation)) << Describe(id);
  auto started = engine_->intents().Start(id);
  ASSERT_TRUE(started.ok());
  // Wait until the engine has judged the new Service.
  ASSERT_TRUE(Eventually(
      [&] {
        ProjectStatus st = StatusOf(id);
        return st.observed_generation == started->generation &&
               (st.phase == Phase::kRunning || st.reason == "NoReadyEndpoints");
      },
      seconds(10)))
      << Describe(id);
  EXPECT_NE(Record(id).phase, "Running")
      << "Running on the strength of the old Service's EndpointSlice; the cluster shows: "
      << Observe(id, "slc").describe;
  gate->Release();
  ASSERT_TRUE(WaitPhase(id, "Running", started->generation)) << Describe(id);
  ExpectSnapshotsTruthful(id);
}

// A Service the engine created and deleted before its watch showed it (a burst: start, then a
// suspend at once, the Services informer behind): the delete answered "terminating", and the cache,
// which never held it, has nothing to show. Absent from the cache is not gone from the cluster:
// Suspended waits until the server says so (the torture run caught Suspended claimed while such
// a Service was still terminating).
TEST_F(ScenarioTest, AServiceDeletedBeforeItsWatchShowedItHoldsSuspendedUntilTheServerSaysGone) {
  cluster::Profile p = QuickProfile();
  p.service_finalizer = {milliseconds(2000), milliseconds(0)};
  StartCluster(p);
  std::shared_ptr<GatedTransport> gate = GateClient();
  OpenStore();
  RecordSnapshotsAtPhases();
  StartEngine();
  gate->Hold("/services");
  auto put = engine_->intents().Put("unseen", Spec(), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  const ObjectNames names = NamesFor(id, "unseen");
  ASSERT_TRUE(Eventually([&] { return Get("services", names.service).has_value(); }, seconds(10)))
      << Describe(id);
  auto suspended = engine_->intents().Suspend(id);
  ASSERT_TRUE(suspended.ok());
  // Everything else goes quickly; the Service is held by its finalizer for 2 s.
  ASSERT_TRUE(Eventually(
      [&] {
        auto svc = Get("services", names.service);
        return svc && (*svc)["metadata"].contains("deletionTimestamp") &&
               !Get("deployments.apps", names.deployment) &&
               ListLabelled("pods", "steward.io/project=" + id).empty();
      },
      seconds(10)))
      << Describe(id);
  ASSERT_TRUE(Eventually([&] { return !Get("services", names.service).has_value(); }, seconds(10)));
  gate->Release();
  ASSERT_TRUE(WaitPhase(id, "Suspended", suspended->generation)) << Describe(id);
  ExpectSnapshotsTruthful(id);
}

// The statuses the engine reports for metrics (EngineOptions::on_status): each intent's first
// status in a done phase completes it, once, naming its operation and when it was accepted; the
// phases between are reported as transitions that complete nothing.
TEST_F(ScenarioTest, EveryIntentIsReportedCompleteOnceWithItsOperationAndAcceptedTime) {
  StartCluster();
  OpenStore();
  Mutex mu;
  std::vector<StatusWritten> seen;
  EngineOptions options = DefaultOptions();
  options.on_status = [&](const StatusWritten& w) {
    MutexLock lock(mu);
    seen.push_back(w);
  };
  StartEngine(options);
  const int64_t before_ms =
      std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  auto put = engine_->intents().Put("slo", Spec(), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1)) << Describe(id);
  auto suspended = engine_->intents().Suspend(id);
  ASSERT_TRUE(suspended.ok());
  ASSERT_TRUE(WaitPhase(id, "Suspended", suspended->generation)) << Describe(id);
  auto completions = [&](int64_t generation) {
    MutexLock lock(mu);
    std::vector<StatusWritten> out;
    for (const auto& w : seen) {
      if (w.id == id && w.generation == generation && w.completes) out.push_back(w);
    }
    return out;
  };
  ASSERT_TRUE(Eventually([&] { return completions(suspended->generation).size() == 1; }));
  const auto started = completions(1);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].operation, "create+start");
  EXPECT_EQ(started[0].to, "Running");
  EXPECT_FALSE(started[0].agent);
  EXPECT_GE(started[0].accepted_ms, before_ms);
  EXPECT_GE(started[0].at_ms, started[0].accepted_ms);
  const auto stopped = completions(suspended->generation);
  EXPECT_EQ(stopped[0].operation, "suspend");
  EXPECT_EQ(stopped[0].to, "Suspended");
  EXPECT_GE(stopped[0].accepted_ms, started[0].at_ms);
  // Every write is reported; those that change the phase chain up: each starts where the last
  // ended (the API's "Accepted" phases are not the engine's writes, so a chain may jump there).
  MutexLock lock(mu);
  std::vector<std::string> phases;
  for (const auto& w : seen) {
    if (w.id != id) continue;
    if (w.from == w.to) continue;
    phases.push_back(w.to);
  }
  const std::string path = ::testing::PrintToString(phases);
  EXPECT_NE(std::find(phases.begin(), phases.end(), "Provisioning"), phases.end()) << path;
  EXPECT_EQ(phases.back(), "Suspended") << path;
}

}  // namespace
}  // namespace steward::engine::testing
