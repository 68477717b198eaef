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
// Process pods (ctx.processes set and a container image matching the profile's process_images):
// those containers run as real processes (ProcessRuntime) when the pod starts; the pod's Ready
// condition and container statuses (ready, started, restartCount, state running / waiting
// CrashLoopBackOff / terminated with exit code, lastState) then follow the runtime instead of
// pod_ready; a process that cannot be started leaves the container waiting (RunContainerError,
// phase Pending) and is tried again after pod_start. On deletion the processes get SIGTERM and
// SIGKILL after the grace period (deletionGracePeriodSeconds, else
// terminationGracePeriodSeconds, else 30 s), and the pod is removed once they are gone (not
// after pod_termination). A Running pod adopted from an earlier run gets its processes started.
//
// Worker thread only.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

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
    bool killed = false;     // the Killing step of a terminating pod is done
    bool process = false;    // it ran processes: termination waits for them, not a delay
    bool stop_sent = false;  // the runtime was told to stop them
  };
  // The process mapping of each container (nullopt for a virtual one); empty when none matches
  // or there is no runtime.
  std::vector<std::optional<ProcessImage>> ProcessImages(const Json& pod) const;
  // Starts the process containers of `pod` (its status.podIP taken as `ip`); per container, the
  // error of one that could not be started.
  std::unordered_map<std::string, std::string> StartProcesses(const std::string& key,
                                                              const Json& pod,
                                                              const std::string& ip);
  bool SyncProcesses(const std::string& key, const Json& pod);
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
