// EndpointsController: pkg/controller/endpointslice and pkg/controller/endpoint, simulated.
//
// For every Service with a selector (not ExternalName), after profile.endpoints: the pods of
// its namespace that match, have a podIP and are not terminal become endpoints of EndpointSlices
// "<svc>-<suffix>" (one per distinct resolved port list, at most 100 endpoints each; a
// placeholder slice without ports when there are none), owned by the Service, with the
// discovery/v1 conditions ready (ready and not terminating), serving (ready) and terminating;
// and of an Endpoints object named like the Service (ready → addresses, else
// notReadyAddresses; terminating pods left out). When the Service goes the Endpoints object is
// deleted here; its slices go through the garbage collector (ownerReference).
//
// Indexes pods and service selectors by namespace and label pair, so a pod change costs only
// the services whose selectors share one of its labels. Worker thread only.
#pragma once

#include <set>
#include <string>
#include <unordered_map>

#include "cluster/apiserver/selectors.h"
#include "cluster/controllers/controller.h"

namespace steward::cluster::controllers {

class EndpointsController : public Controller {
 public:
  explicit EndpointsController(ControllerContext& ctx);
  void Observe(const Change& change) override;
  bool Sync(Work kind, const std::string& key) override;

 private:
  struct ServiceInfo {
    LabelSelector selector;
    std::string index_key;  // the "ns\x1fk=v" bucket it is filed under
  };
  void ObserveService(const Change& c);
  void ObservePod(const Change& c);
  void ObserveSlice(const Change& c);
  void Enqueue(const std::string& ns, const std::string& service);
  bool SyncSlices(const Json& svc, const std::vector<Json>& pods);
  bool SyncEndpoints(const Json& svc, const std::vector<Json>& pods);

  ControllerContext& ctx_;
  const ResourceType& services_;
  const ResourceType& endpoints_;
  const ResourceType& slices_;
  std::unordered_map<std::string, ServiceInfo> services_info_;                // "ns/svc"
  std::unordered_map<std::string, std::set<std::string>> services_by_label_;  // bucket -> svc
  std::unordered_map<std::string, std::set<std::string>> pods_by_label_;      // bucket -> pod
  std::unordered_map<std::string, std::set<std::string>> slices_by_service_;  // "ns/svc"
  std::unordered_map<std::string, std::string> service_of_slice_;             // "ns/slice"
};

}  // namespace steward::cluster::controllers
