// Readiness rules (docs/design.md §4) over hand-built objects shaped as the API server returns
// them.
#include "engine/readiness/readiness.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace steward::engine {
namespace {

using State = Readiness::State;
using ::testing::HasSubstr;

Json Deployment(int64_t generation, Json spec, Json status) {
  Json d = {{"metadata", {{"name", "web"}, {"generation", generation}}}, {"spec", std::move(spec)}};
  if (!status.is_null()) d["status"] = std::move(status);
  return d;
}

Json Counts(int64_t observed, int64_t replicas, int64_t updated, int64_t available) {
  return Json{{"observedGeneration", observed},
              {"replicas", replicas},
              {"updatedReplicas", updated},
              {"availableReplicas", available}};
}

TEST(DeploymentReadinessTest, ReadyWhenEveryCountReached) {
  auto r = DeploymentReadiness(Deployment(3, {{"replicas", 2}}, Counts(3, 2, 2, 2)));
  EXPECT_EQ(r.state, State::kReady);
  EXPECT_TRUE(r.ready());
  EXPECT_FALSE(r.failed());
  EXPECT_EQ(r.reason, "Ready");
  EXPECT_EQ(r.message, "2 replicas available");
}

TEST(DeploymentReadinessTest, ObservedGenerationBehindWaitsEvenWhenCountsLookDone) {
  auto r = DeploymentReadiness(Deployment(4, {{"replicas", 1}}, Counts(3, 1, 1, 1)));
  EXPECT_EQ(r.state, State::kWaiting);
  EXPECT_EQ(r.reason, "GenerationNotObserved");
  EXPECT_EQ(r.message,
            "waiting for the deployment controller to observe generation 4 (observed 3)");
}

TEST(DeploymentReadinessTest, ObservedGenerationAheadCountsAsObserved) {
  // A read from a lagging cache may show an older metadata.generation; >= is the rule.
  auto r = DeploymentReadiness(Deployment(2, {{"replicas", 1}}, Counts(3, 1, 1, 1)));
  EXPECT_TRUE(r.ready());
}

TEST(DeploymentReadinessTest, MissingStatusWaitsForObservation) {
  auto r = DeploymentReadiness(Deployment(1, {{"replicas", 1}}, nullptr));
  EXPECT_EQ(r.state, State::kWaiting);
  EXPECT_EQ(r.reason, "GenerationNotObserved");
  EXPECT_THAT(r.message, HasSubstr("observed 0"));
}

TEST(DeploymentReadinessTest, ObservedButNoCountsWaitsForUpdatedReplicas) {
  // Zero counts are omitted by the server, so an observed status may hold no counts at all.
  auto r = DeploymentReadiness(Deployment(1, {{"replicas", 2}}, {{"observedGeneration", 1}}));
  EXPECT_EQ(r.state, State::kWaiting);
  EXPECT_EQ(r.reason, "RolloutInProgress");
  EXPECT_EQ(r.message, "rollout: 0 of 2 replicas updated");
}

TEST(DeploymentReadinessTest, UnsetSpecReplicasMeansOne) {
  auto waiting = DeploymentReadiness(Deployment(1, Json::object(), {{"observedGeneration", 1}}));
  EXPECT_EQ(waiting.reason, "RolloutInProgress");
  EXPECT_EQ(waiting.message, "rollout: 0 of 1 replica updated");
  EXPECT_TRUE(DeploymentReadiness(Deployment(1, Json::object(), Counts(1, 1, 1, 1))).ready());
}

TEST(DeploymentReadinessTest, RolloutNotAllReplicasUpdated) {
  auto r = DeploymentReadiness(Deployment(2, {{"replicas", 2}}, Counts(2, 3, 1, 2)));
  EXPECT_EQ(r.state, State::kWaiting);
  EXPECT_EQ(r.reason, "RolloutInProgress");
  EXPECT_EQ(r.message, "rollout: 1 of 2 replicas updated");
}

TEST(DeploymentReadinessTest, OldReplicasStillPresent) {
  // All new replicas exist and are available, but an old pod is still counted.
  auto r = DeploymentReadiness(Deployment(2, {{"replicas", 2}}, Counts(2, 3, 2, 2)));
  EXPECT_EQ(r.state, State::kWaiting);
  EXPECT_EQ(r.reason, "RolloutInProgress");
  EXPECT_EQ(r.message, "rollout: 1 old replica pending termination");
  auto two = DeploymentReadiness(Deployment(2, {{"replicas", 1}}, Counts(2, 3, 1, 1)));
  EXPECT_EQ(two.message, "rollout: 2 old replicas pending termination");
}

TEST(DeploymentReadinessTest, UpdatedButNotAvailable) {
  auto r = DeploymentReadiness(Deployment(1, {{"replicas", 1}}, Counts(1, 1, 1, 0)));
  EXPECT_EQ(r.state, State::kWaiting);
  EXPECT_EQ(r.reason, "WaitingForAvailable");
  EXPECT_EQ(r.message, "waiting for 1 available replica (0 available)");
  auto two = DeploymentReadiness(Deployment(1, {{"replicas", 2}}, Counts(1, 2, 2, 1)));
  EXPECT_EQ(two.message, "waiting for 2 available replicas (1 available)");
}

TEST(DeploymentReadinessTest, ZeroReplicasIsReadyOnceOldPodsAreGone) {
  EXPECT_TRUE(
      DeploymentReadiness(Deployment(5, {{"replicas", 0}}, {{"observedGeneration", 5}})).ready());
  auto draining = DeploymentReadiness(Deployment(5, {{"replicas", 0}}, Counts(5, 1, 0, 1)));
  EXPECT_EQ(draining.state, State::kWaiting);
  EXPECT_EQ(draining.message, "rollout: 1 old replica pending termination");
}

Json DeadlineStatus(int64_t observed, std::string status = "False") {
  Json s = Counts(observed, 1, 1, 0);
  s["conditions"] = Json::array(
      {{{"type", "Available"}, {"status", "False"}, {"reason", "MinimumReplicasUnavailable"}},
       {{"type", "Progressing"},
        {"status", status},
        {"reason", "ProgressDeadlineExceeded"},
        {"message", "ReplicaSet \"web-5d4f\" has timed out progressing."}}});
  return s;
}

TEST(DeploymentReadinessTest, ProgressDeadlineExceededFailsWithTheConditionMessage) {
  auto r = DeploymentReadiness(Deployment(2, {{"replicas", 1}}, DeadlineStatus(2)));
  EXPECT_EQ(r.state, State::kFailed);
  EXPECT_TRUE(r.failed());
  EXPECT_EQ(r.reason, "ProgressDeadlineExceeded");
  EXPECT_EQ(r.message, "ReplicaSet \"web-5d4f\" has timed out progressing.");
}

TEST(DeploymentReadinessTest, ProgressDeadlineFromAnOlderGenerationIsNotAFailure) {
  auto r = DeploymentReadiness(Deployment(3, {{"replicas", 1}}, DeadlineStatus(2)));
  EXPECT_EQ(r.state, State::kWaiting);
  EXPECT_EQ(r.reason, "GenerationNotObserved");
}

TEST(DeploymentReadinessTest, ProgressingTrueIsNotAFailure) {
  Json status = Counts(1, 1, 1, 1);
  status["conditions"] = Json::array(
      {{{"type", "Progressing"}, {"status", "True"}, {"reason", "NewReplicaSetAvailable"}}});
  EXPECT_TRUE(DeploymentReadiness(Deployment(1, {{"replicas", 1}}, status)).ready());
}

TEST(DeploymentReadinessTest, DeadlineWithoutMessageGetsOne) {
  Json status = {{"observedGeneration", 1},
                 {"conditions", Json::array({{{"type", "Progressing"},
                                              {"status", "False"},
                                              {"reason", "ProgressDeadlineExceeded"}}})}};
  auto r = DeploymentReadiness(Deployment(1, {{"replicas", 1}}, status));
  EXPECT_EQ(r.state, State::kFailed);
  EXPECT_EQ(r.message, "deployment exceeded its progress deadline");
}

TEST(DeploymentReadinessTest, GarbageInputWaitsInsteadOfCrashing) {
  EXPECT_EQ(DeploymentReadiness(Json()).state, State::kWaiting);
  EXPECT_EQ(DeploymentReadiness(Json::array()).state, State::kWaiting);
  auto r = DeploymentReadiness(Json{{"metadata", {{"generation", "x"}}}, {"status", 7}});
  EXPECT_EQ(r.state, State::kWaiting);
  EXPECT_EQ(r.reason, "RolloutInProgress");
}

Json Pvc(Json status) {
  Json p = {{"metadata", {{"name", "p1-pvc"}}}};
  if (!status.is_null()) p["status"] = std::move(status);
  return p;
}

Json Owned(int64_t revision) {
  Json d = Deployment(3, {{"replicas", 1}}, Counts(3, 1, 1, 1));
  d["metadata"]["uid"] = "dep-uid";
  d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = std::to_string(revision);
  return d;
}

Json ReplicaSet(const std::string& name, int64_t revision, int64_t generation, int64_t observed,
                int64_t want, int64_t have, const std::string& owner_uid = "dep-uid") {
  return Json{{"metadata",
               {{"name", name},
                {"generation", generation},
                {"annotations", {{"deployment.kubernetes.io/revision", std::to_string(revision)}}},
                {"ownerReferences", Json::array({{{"kind", "Deployment"},
                                                  {"name", "web"},
                                                  {"uid", owner_uid},
                                                  {"controller", true}}})}}},
              {"spec", {{"replicas", want}}},
              {"status", {{"observedGeneration", observed}, {"replicas", have}}}};
}

TEST(ReplicaSetsReadinessTest, EveryReplicaSetAtItsSpecIsReady) {
  auto r = ReplicaSetsReadiness(
      Owned(3), {ReplicaSet("web-a", 3, 1, 1, 1, 1), ReplicaSet("web-b", 2, 2, 2, 0, 0)});
  EXPECT_TRUE(r.ready()) << r.message;
}

// An out-of-band edit reverted at once: the abandoned ReplicaSet was scaled to 0 before its
// controller saw that, and a pod it created is not counted anywhere yet.
TEST(ReplicaSetsReadinessTest, AnAbandonedReplicaSetNotYetObservedWaits) {
  auto r = ReplicaSetsReadiness(
      Owned(3), {ReplicaSet("web-a", 3, 1, 1, 1, 1), ReplicaSet("web-b", 2, 2, 1, 0, 0)});
  EXPECT_EQ(r.state, State::kWaiting);
  EXPECT_EQ(r.reason, "RolloutInProgress");
  EXPECT_EQ(r.message,
            "waiting for the replica set controller to observe generation 2 of ReplicaSet web-b "
            "(observed 1)");
}

TEST(ReplicaSetsReadinessTest, AnOldReplicaSetWithAPodLeftWaits) {
  auto r = ReplicaSetsReadiness(
      Owned(3), {ReplicaSet("web-a", 3, 1, 1, 1, 1), ReplicaSet("web-b", 2, 2, 2, 0, 1)});
  EXPECT_FALSE(r.ready());
  EXPECT_EQ(r.message,
            "rollout: ReplicaSet web-b has 1 replica of 0 (not the Deployment's "
            "revision)");
}

// The cached Deployment has not caught up with an edit whose ReplicaSet the cache already shows.
TEST(ReplicaSetsReadinessTest, AReplicaSetNewerThanTheCachedDeploymentWaits) {
  auto r = ReplicaSetsReadiness(
      Owned(1), {ReplicaSet("web-a", 1, 1, 1, 1, 1), ReplicaSet("web-b", 2, 1, 1, 1, 1)});
  EXPECT_FALSE(r.ready());
  EXPECT_EQ(r.message,
            "rollout: ReplicaSet web-b has 1 replica of 1 (not the Deployment's "
            "revision)");
}

TEST(ReplicaSetsReadinessTest, TheCurrentReplicaSetShortOfItsSpecWaits) {
  auto r = ReplicaSetsReadiness(Owned(3), {ReplicaSet("web-a", 3, 2, 2, 2, 1)});
  EXPECT_FALSE(r.ready());
  EXPECT_EQ(r.message, "rollout: ReplicaSet web-a has 1 replica of 2");
}

TEST(ReplicaSetsReadinessTest, TheReplicaSetOfTheDeploymentsRevisionMustBeSeen) {
  // The cache has not caught up with the ReplicaSet the Deployment now runs.
  auto r = ReplicaSetsReadiness(Owned(4), {ReplicaSet("web-a", 3, 2, 2, 0, 0)});
  EXPECT_FALSE(r.ready());
  EXPECT_EQ(r.message, "waiting to see the ReplicaSet of revision 4");
}

TEST(ReplicaSetsReadinessTest, OthersReplicaSetsAndDeletedEmptyOnesDoNotCount) {
  Json deleted = ReplicaSet("web-old", 1, 5, 4, 0, 0);
  deleted["metadata"]["deletionTimestamp"] = "2026-12-01T00:00:00Z";
  auto r =
      ReplicaSetsReadiness(Owned(3), {ReplicaSet("web-a", 3, 1, 1, 1, 1),
                                      ReplicaSet("other", 9, 2, 1, 0, 3, "other-uid"), deleted});
  EXPECT_TRUE(r.ready()) << r.message;
}

TEST(ReplicaSetsReadinessTest, ASlimmedReplicaSetIsJudgedAsTheWholeOne) {
  for (Json rs : {ReplicaSet("web-a", 3, 1, 1, 1, 1), ReplicaSet("web-b", 2, 2, 1, 0, 0),
                  ReplicaSet("web-c", 3, 2, 2, 0, 1)}) {
    rs["metadata"]["namespace"] = "projects";
    rs["metadata"]["resourceVersion"] = "7";
    rs["metadata"]["labels"] = {{"steward.io/project", "p"}};
    rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "1";
    rs["metadata"]["managedFields"] = Json::array({{{"manager", "x"}}});
    rs["spec"]["template"] = {{"spec", {{"containers", Json::array({{{"image", "nr"}}})}}}};
    Json slim = rs;
    SlimReplicaSet(slim);
    EXPECT_EQ(ReplicaSetsReadiness(Owned(3), {slim}).message,
              ReplicaSetsReadiness(Owned(3), {rs}).message);
    EXPECT_FALSE(slim["spec"].contains("template"));
    EXPECT_FALSE(slim["metadata"].contains("managedFields"));
    EXPECT_EQ(slim["metadata"]["annotations"].size(), 1u);  // the revision only
    for (const char* key : {"name", "namespace", "resourceVersion", "labels", "ownerReferences"}) {
      EXPECT_EQ(slim["metadata"][key], rs["metadata"][key]) << key;
    }
  }
  Json odd = Json::array({1, 2});
  SlimReplicaSet(odd);  // not an object: left alone
  EXPECT_EQ(odd, Json::array({1, 2}));
}

TEST(ReplicaSetsReadinessTest, GarbageInputWaitsInsteadOfCrashing) {
  EXPECT_FALSE(ReplicaSetsReadiness(Owned(1), {Json(), Json::array(), Json("x")}).ready());
  EXPECT_TRUE(ReplicaSetsReadiness(Json(), {Json(42)}).ready());  // no revision to wait for
}

TEST(PvcReadinessTest, BoundIsReady) {
  auto r = PvcReadiness(Pvc({{"phase", "Bound"}}));
  EXPECT_TRUE(r.ready());
  EXPECT_EQ(r.reason, "Ready");
}

TEST(PvcReadinessTest, PendingWaits) {
  auto r = PvcReadiness(Pvc({{"phase", "Pending"}}));
  EXPECT_EQ(r.state, State::kWaiting);
  EXPECT_EQ(r.reason, "NotBound");
  EXPECT_EQ(r.message, "claim is Pending");
}

TEST(PvcReadinessTest, LostFails) {
  auto r = PvcReadiness(Pvc({{"phase", "Lost"}}));
  EXPECT_EQ(r.state, State::kFailed);
  EXPECT_EQ(r.reason, "Lost");
  EXPECT_THAT(r.message, HasSubstr("Lost"));
}

TEST(PvcReadinessTest, MissingStatusWaits) {
  auto r = PvcReadiness(Pvc(nullptr));
  EXPECT_EQ(r.state, State::kWaiting);
  EXPECT_EQ(r.reason, "NotBound");
  EXPECT_EQ(r.message, "claim has no phase yet");
}

Json Service(std::string name = "web") { return Json{{"metadata", {{"name", name}}}}; }

Json Endpoint(Json ready) {
  Json e = {{"addresses", Json::array({"10.0.0.1"})}, {"conditions", Json::object()}};
  if (!ready.is_null()) e["conditions"]["ready"] = std::move(ready);
  return e;
}

Json Slice(std::string service, Json endpoints) {
  Json s = {{"metadata",
             {{"name", service + "-abc"}, {"labels", {{"kubernetes.io/service-name", service}}}}},
            {"addressType", "IPv4"}};
  if (!endpoints.is_null()) s["endpoints"] = std::move(endpoints);
  return s;
}

TEST(ServiceReadinessTest, ReadyEndpointMakesItReady) {
  auto r =
      ServiceReadiness(Service(), {Slice("web", Json::array({Endpoint(false), Endpoint(true)}))});
  EXPECT_TRUE(r.ready());
  EXPECT_EQ(r.message, "1 of 2 endpoints ready");
}

TEST(ServiceReadinessTest, SlicesOfAPredecessorWithTheSameNameAreIgnored) {
  Json service = Service();
  service["metadata"]["uid"] = "new-uid";
  Json old_slice = Slice("web", Json::array({Endpoint(true)}));
  old_slice["metadata"]["ownerReferences"] = {{{"kind", "Service"}, {"uid", "old-uid"}}};
  auto r = ServiceReadiness(service, {old_slice});
  EXPECT_FALSE(r.ready());
  EXPECT_EQ(r.reason, "NoReadyEndpoints");
  Json own_slice = Slice("web", Json::array({Endpoint(true)}));
  own_slice["metadata"]["ownerReferences"] = {{{"kind", "Service"}, {"uid", "new-uid"}}};
  EXPECT_TRUE(ServiceReadiness(service, {old_slice, own_slice}).ready());
}

TEST(ServiceReadinessTest, MissingReadyConditionCountsAsReady) {
  auto r = ServiceReadiness(Service(), {Slice("web", Json::array({Endpoint(nullptr)}))});
  EXPECT_TRUE(r.ready());
  EXPECT_EQ(r.message, "1 of 1 endpoint ready");
  Json no_conditions = {{"addresses", Json::array({"10.0.0.2"})}};
  EXPECT_TRUE(ServiceReadiness(Service(), {Slice("web", Json::array({no_conditions}))}).ready());
}

TEST(ServiceReadinessTest, ReadyFalseEverywhereWaits) {
  auto r = ServiceReadiness(Service(), {Slice("web", Json::array({Endpoint(false)})),
                                        Slice("web", Json::array({Endpoint(false)}))});
  EXPECT_EQ(r.state, State::kWaiting);
  EXPECT_EQ(r.reason, "NoReadyEndpoints");
  EXPECT_EQ(r.message, "none of 2 endpoints ready");
}

TEST(ServiceReadinessTest, ReadyEndpointInALaterSliceCounts) {
  auto r = ServiceReadiness(Service(), {Slice("web", Json::array({Endpoint(false)})),
                                        Slice("web", Json::array({Endpoint(true)}))});
  EXPECT_TRUE(r.ready());
}

TEST(ServiceReadinessTest, SlicesWithoutEndpointsWait) {
  // A slice with no endpoints omits the field (or has an empty list).
  auto r = ServiceReadiness(Service(), {Slice("web", nullptr), Slice("web", Json::array())});
  EXPECT_EQ(r.state, State::kWaiting);
  EXPECT_EQ(r.reason, "NoReadyEndpoints");
  EXPECT_EQ(r.message, "service has no endpoints yet");
}

TEST(ServiceReadinessTest, NoSlicesWait) {
  auto r = ServiceReadiness(Service(), {});
  EXPECT_EQ(r.state, State::kWaiting);
  EXPECT_EQ(r.reason, "NoReadyEndpoints");
}

TEST(ServiceReadinessTest, SliceOfAnotherServiceIsIgnored) {
  auto r = ServiceReadiness(Service("web"), {Slice("other", Json::array({Endpoint(true)}))});
  EXPECT_EQ(r.state, State::kWaiting);
  EXPECT_EQ(r.message, "service has no endpoints yet");
}

Json Ingress(Json load_balancer) {
  Json i = {{"metadata", {{"name", "web"}}}, {"spec", Json::object()}};
  if (!load_balancer.is_null()) i["status"] = {{"loadBalancer", std::move(load_balancer)}};
  return i;
}

TEST(IngressReadinessTest, IpMakesItReady) {
  auto r = IngressReadiness(Ingress({{"ingress", Json::array({{{"ip", "10.1.2.3"}}})}}), true);
  EXPECT_TRUE(r.ready());
  EXPECT_EQ(r.message, "address 10.1.2.3");
}

TEST(IngressReadinessTest, HostnameOnlyMakesItReady) {
  auto r = IngressReadiness(Ingress({{"ingress", Json::array({{{"hostname", "lb.example.com"}}})}}),
                            true);
  EXPECT_TRUE(r.ready());
  EXPECT_EQ(r.message, "address lb.example.com");
}

TEST(IngressReadinessTest, EntryWithoutAddressWaits) {
  auto r = IngressReadiness(
      Ingress({{"ingress", Json::array({{{"ports", Json::array({{{"port", 80}}})}}})}}), true);
  EXPECT_EQ(r.state, State::kWaiting);
  EXPECT_EQ(r.reason, "NoAddress");
}

TEST(IngressReadinessTest, EmptyOrMissingStatusWaits) {
  EXPECT_EQ(IngressReadiness(Ingress(Json::object()), true).reason, "NoAddress");
  EXPECT_EQ(IngressReadiness(Ingress({{"ingress", Json::array()}}), true).reason, "NoAddress");
  auto r = IngressReadiness(Ingress(nullptr), true);
  EXPECT_EQ(r.state, State::kWaiting);
  EXPECT_EQ(r.reason, "NoAddress");
}

TEST(IngressReadinessTest, AddressNotRequiredIsReadyAtOnce) {
  auto r = IngressReadiness(Ingress(nullptr), false);
  EXPECT_TRUE(r.ready());
  EXPECT_EQ(r.reason, "Ready");
}

Json Pod(Json container_statuses) {
  return Json{{"metadata", {{"name", "web-1"}}},
              {"status", {{"phase", "Pending"}, {"containerStatuses", container_statuses}}}};
}

Json Waiting(std::string reason, std::string message) {
  Json waiting = {{"reason", reason}};
  if (!message.empty()) waiting["message"] = message;
  return Json{{"name", "node-red"}, {"state", {{"waiting", waiting}}}};
}

TEST(PodFailureDetailTest, ImagePullErrorGivesReasonAndMessage) {
  auto detail = PodFailureDetail(
      {Pod(Json::array({Waiting("ErrImagePull", "image \"x.invalid/nr\" not found")}))});
  EXPECT_EQ(detail, "ErrImagePull: image \"x.invalid/nr\" not found");
}

TEST(PodFailureDetailTest, EveryFailureReasonIsRecognised) {
  for (const char* reason : {"ErrImagePull", "ImagePullBackOff", "CrashLoopBackOff",
                             "InvalidImageName", "CreateContainerConfigError"}) {
    EXPECT_EQ(PodFailureDetail({Pod(Json::array({Waiting(reason, "m")}))}),
              std::string(reason) + ": m");
  }
}

TEST(PodFailureDetailTest, ReasonWithoutMessage) {
  EXPECT_EQ(PodFailureDetail({Pod(Json::array({Waiting("CrashLoopBackOff", "")}))}),
            "CrashLoopBackOff");
}

TEST(PodFailureDetailTest, OrdinaryWaitingIsNotAFailure) {
  EXPECT_EQ(PodFailureDetail({Pod(Json::array({Waiting("ContainerCreating", "")}))}), "");
  EXPECT_EQ(PodFailureDetail({Pod(Json::array({Waiting("PodInitializing", "")}))}), "");
}

TEST(PodFailureDetailTest, RunningPodsAndMissingStatusGiveNothing) {
  Json running = {{"name", "node-red"}, {"state", {{"running", {{"startedAt", "t"}}}}}};
  EXPECT_EQ(PodFailureDetail({Pod(Json::array({running}))}), "");
  EXPECT_EQ(PodFailureDetail({Json{{"metadata", {{"name", "p"}}}}}), "");
  EXPECT_EQ(PodFailureDetail({}), "");
}

TEST(PodFailureDetailTest, FirstFailingContainerAcrossPodsWins) {
  Json running = {{"name", "node-red"}, {"state", {{"running", Json::object()}}}};
  auto detail = PodFailureDetail({Pod(Json::array({running})),
                                  Pod(Json::array({Waiting("ImagePullBackOff", "back-off 1"),
                                                   Waiting("ErrImagePull", "second")})),
                                  Pod(Json::array({Waiting("CrashLoopBackOff", "third")}))});
  EXPECT_EQ(detail, "ImagePullBackOff: back-off 1");
}

}  // namespace
}  // namespace steward::engine
