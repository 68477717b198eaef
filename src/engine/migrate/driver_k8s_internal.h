// Helpers shared by the planning of driver-k8s instances (driver_k8s.cc) and of its MQTT schema
// agents (driver_k8s_agents.cc). Not part of the module's surface: only those two files and
// their tests include this. Stateless; thread-compatible as the client is.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "engine/migrate/driver_k8s.h"
#include "kube/client/client.h"

namespace steward::engine::migrate::internal {

// Labelled steward.io/project=<id> and managed by Steward.
bool Ours(const Json& obj, const std::string& id);
// Carries the steward.io/migrating annotation.
bool Marked(const Json& obj);
std::string NameOf(const Json& obj);
// The element of a JSON array whose "name" is `name`, or nullptr.
const Json* ByName(const Json& array, const std::string& name);

// Where `live` does not have what `desired` sets, as paths ("spec.ports[web].targetPort"): the
// metadata's labels and annotations (Steward's own labels and spec-hash aside) and everything
// outside metadata and status. Named arrays are compared by name, never deeper than the name
// (a credential's value cannot end up in a path).
std::vector<std::string> ObjectDiff(const Json& desired, const Json& live);
// Some difference is in the Deployment's pod template (so its pods roll).
bool RollsPods(const std::vector<std::string>& deployment_diffs);
// The live Deployment's selector selects the pods `desired` renders (so the engine keeps it: a
// Deployment's selector is immutable).
bool SelectorKept(const Json& desired, const Json& live);

std::string_view ActionName(InstancePlan::Action a);
// A plan row's "adopt" (every object, {kind, name, uid}) and "relabel" (those to relabel).
void AddAdoption(const std::vector<FoundObject>& objects, Json* j);
// "Deployment", "Service", "Ingress", "PersistentVolumeClaim", "Pod".
const kube::ResourceType& TypeOf(const std::string& kind);

// Reads the object, lets `edit` change its metadata (false: nothing to change) and writes it
// with the resourceVersion read; a conflict is read again (a few times). Absent: nothing to do.
Status EditMetadata(const kube::Client& client, std::string_view ns, const kube::ResourceType& type,
                    const std::string& name, const std::function<bool(Json& meta)>& edit);
// Gives each object with `relabel` set Steward's labels for `id` and the migration marker
// (metadata only, with the resourceVersion read, only while its uid is the planned one).
Status RelabelObjects(const kube::Client& client, std::string_view ns, const std::string& id,
                      const std::vector<FoundObject>& objects);
// Removes the migration marker from those of `objects` that carry it.
Status ClearObjectMarkers(const kube::Client& client, std::string_view ns,
                          const std::vector<FoundObject>& objects);

// Plans every MQTT schema agent in the namespace into plan->agents (and plan->skipped):
// Deployments labelled mqttSchemaAgent=true and driver-k8s's bare agent Pods; `services` are
// the namespace's Services by name.
Status PlanAgents(const kube::Client& client, std::string_view ns, const EngineConfig& config,
                  const std::map<std::string, Json>& services, Plan* plan);
// The agents' part of PlanJson ("agents": [...]) and of PlanText.
Json AgentsJson(const Plan& plan);
std::string AgentsText(const Plan& plan);

}  // namespace steward::engine::migrate::internal
