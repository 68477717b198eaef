// Kubelet: the scheduler and the one node ("steward-node") of the embedded cluster, simulated.
//
// A pod goes through: scheduled (after profile.pod_scheduling: spec.nodeName, PodScheduled,
// containers waiting in ContainerCreating, phase Pending) → started (after pod_start: phase
// Running, a unique podIP in 10.244.0.0/16, containers running, not ready) → ready (after
// pod_ready). A container whose image ImageFails() never starts: ErrImagePull, then
// ImagePullBackOff, phase Pending. On deletion the pod is marked not ready at once and removed
// (ForceRemove, uid-checked) after min(pod_termination, deletionGracePeriodSeconds), once it
// has no finalizers left. Events: Scheduled, Pulling, Pulled, Created, Started, Failed,
// BackOff, Killing.
//
// Worker thread only.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "cluster/controllers/controller.h"

namespace steward::cluster::controllers {

class Kubelet : public Controller {
 public:
  explicit Kubelet(ControllerContext& ctx);
  void Observe(const Change& change) override;
  bool Sync(Work kind, const std::string& key) override;

  enum class Stage {
    kUnscheduled,
    kStarting,
    kImagePullError,
    kImagePullBackOff,
    kRunning,
    kReady,
    kTerminating,
    kTerminated,
  };
  static Stage StageOf(const Json& pod);

 private:
  struct PodState {
    Stage stage;
    SteadyTime since;
    SteadyTime due;
    bool killed = false;  // the Killing step of a terminating pod is done
  };
  std::chrono::milliseconds DelayFor(Stage stage, const Json& pod);
  void Track(const std::string& key, const Json& pod);
  bool Schedule(const std::string& ns, const std::string& name, const Json& pod);
  bool Start(const std::string& key, const Json& pod, const PodState& st);
  bool BackOff(const Json& pod);
  bool MakeReady(const Json& pod);
  bool Terminate(const std::string& key, const Json& pod, PodState& st);
  std::string AllocateIp(const std::string& key);
  void ReleaseIp(const std::string& key);
  void ReserveIp(const std::string& key, const std::string& ip);

  ControllerContext& ctx_;
  const ResourceType& pods_;
  std::unordered_map<std::string, PodState> pods_state_;  // "ns/name"
  std::unordered_map<std::string, uint32_t> ip_of_;       // "ns/name" -> address index
  std::unordered_set<uint32_t> used_ips_;
  uint32_t next_ip_ = 0;
};

}  // namespace steward::cluster::controllers
