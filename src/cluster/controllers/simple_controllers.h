// The small controllers of the embedded cluster.
//
//   - IngressController: after profile.load_balancer, writes
//     status.loadBalancer.ingress = [{ip: profile.load_balancer_ip}] on every Ingress that is
//     not being deleted. EnsureIngressClass() creates the default IngressClass "steward".
//   - CleanupFinalizers: removes the clean-up finalizers the API server adds, once the object
//     is being deleted: Services (service.kubernetes.io/load-balancer-cleanup, after
//     service_finalizer), Ingresses (ingress.steward.io/cleanup, after ingress_finalizer) and
//     PVCs (kubernetes.io/pvc-protection, after pvc_finalizer and only once no non-terminal pod
//     of the namespace mounts the claim).
//   - PvcBinder: after pvc_binding, binds a pending PVC: spec.volumeName "pvc-<uid>", phase
//     Bound, capacity = the requested storage, accessModes as requested.
//
// Worker thread only (EnsureIngressClass: any thread, before Start's worker runs).
#pragma once

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "cluster/controllers/controller.h"

namespace steward::cluster::controllers {

inline constexpr std::string_view kIngressClassName = "steward";
inline constexpr std::string_view kIngressControllerName = "steward.io/ingress-controller";

class IngressController : public Controller {
 public:
  explicit IngressController(ControllerContext& ctx);
  void Observe(const Change& change) override;
  bool Sync(Work kind, const std::string& key) override;
  // Creates IngressClass "steward" (the default class) unless it exists.
  static Status EnsureIngressClass(ObjectApi& api);

 private:
  ControllerContext& ctx_;
  const ResourceType& ingresses_;
};

class CleanupFinalizers : public Controller {
 public:
  explicit CleanupFinalizers(ControllerContext& ctx);
  void Observe(const Change& change) override;
  bool Sync(Work kind, const std::string& key) override;

 private:
  struct PodClaims {
    std::vector<std::string> claims;
    bool terminal = false;
  };
  bool ClaimInUse(const std::string& ns, const std::string& claim) const;

  ControllerContext& ctx_;
  std::unordered_map<std::string, PodClaims> pod_claims_;               // "ns/pod"
  std::unordered_map<std::string, std::set<std::string>> claim_users_;  // "ns/claim" -> pods
};

class PvcBinder : public Controller {
 public:
  explicit PvcBinder(ControllerContext& ctx);
  void Observe(const Change& change) override;
  bool Sync(Work kind, const std::string& key) override;

 private:
  ControllerContext& ctx_;
  const ResourceType& pvcs_;
};

}  // namespace steward::cluster::controllers
