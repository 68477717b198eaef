// ReplicaSetController: pkg/controller/replicaset, simulated. Creates pods from the template
// (generateName "<rs>-", controller owner reference) or deletes the least valuable ones
// (unscheduled, pending, not ready, newest first) to match spec.replicas; adopts matching
// orphan pods and releases pods that no longer match; writes status replicas,
// fullyLabeledReplicas, readyReplicas, availableReplicas and observedGeneration.
//
// Each sync runs profile.controller after the change that triggered it. Worker thread only.
#pragma once

#include <string>

#include "cluster/controllers/controller.h"

namespace steward::cluster::controllers {

class ReplicaSetController : public Controller {
 public:
  explicit ReplicaSetController(ControllerContext& ctx);
  void Observe(const Change& change) override;
  bool Sync(Work kind, const std::string& key) override;

 private:
  bool ManageReplicas(const Json& rs, const std::vector<Json>& active);

  ControllerContext& ctx_;
  const ResourceType& replicasets_;
  const ResourceType& pods_;
};

}  // namespace steward::cluster::controllers
