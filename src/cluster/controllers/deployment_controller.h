// DeploymentController: pkg/controller/deployment, simulated. Keeps one ReplicaSet per pod
// template (named <deployment>-<pod-template-hash>), rolls between them (RollingUpdate with
// maxSurge/maxUnavailable, or Recreate), scales proportionally, cleans up old ReplicaSets past
// revisionHistoryLimit and writes a truthful status (Available / Progressing conditions,
// ProgressDeadlineExceeded after progressDeadlineSeconds × profile.progress_deadline_scale).
//
// Each sync runs profile.controller after the change that triggered it. Worker thread only.
#pragma once

#include <string>

#include "cluster/controllers/controller.h"

namespace steward::cluster::controllers {

class DeploymentController : public Controller {
 public:
  explicit DeploymentController(ControllerContext& ctx);
  void Observe(const Change& change) override;
  bool Sync(Work kind, const std::string& key) override;

 private:
  struct State;
  bool SyncDeployment(State& st);
  bool GetAllReplicaSetsAndSyncRevision(State& st, bool create);
  bool CreateNewReplicaSet(State& st, int64_t new_revision);
  bool RolloutRolling(State& st);
  bool RolloutRecreate(State& st);
  bool SyncScale(State& st);
  void Scale(State& st);
  bool ReconcileNewReplicaSet(State& st);
  bool ReconcileOldReplicaSets(State& st);
  int64_t CleanupUnhealthyReplicas(State& st, int64_t max_cleanup);
  int64_t ScaleDownOldReplicaSetsForRollingUpdate(State& st);
  bool OldPodsRunning(const State& st) const;
  void CleanupDeployment(State& st);
  bool IsScalingEvent(State& st);
  bool CheckPausedConditions(State& st);
  bool SyncRolloutStatus(State& st);
  bool SyncDeploymentStatus(State& st);
  Json CalculateStatus(const State& st) const;
  void RequeueStuckDeployment(const State& st, const Json& new_status);
  // Scales ReplicaSet st.rss[idx] (and its replica annotations); true when the size changed.
  bool ScaleReplicaSet(State& st, size_t idx, int64_t new_scale);
  bool WriteStatus(State& st, Json status);
  bool SetRevisionAnnotation(State& st, const std::string& revision);
  std::chrono::milliseconds ProgressDeadline(const Json& d) const;

  ControllerContext& ctx_;
  const ResourceType& deployments_;
  const ResourceType& replicasets_;
  const ResourceType& pods_;
};

}  // namespace steward::cluster::controllers
