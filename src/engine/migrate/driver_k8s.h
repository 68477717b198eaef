// Migration from FlowFuse's driver-k8s: finds the instances that driver created in a namespace
// and plans their hand-over to Steward (`steward migrate --from driver-k8s`, docs/migration.md).
//
// driver-k8s gives every instance (flowfuse-driver.md §3): a Deployment "<safeName>" labelled
// {nodered: "true", name: <safeName>, app: <project id>} with selector {app: <id>} and the
// platform's credentials as plain env values; a Service "<safeName>" ("srv-" first when the name
// starts with a digit) selecting {name: <safeName>}; an Ingress "<safeName>"; for a custom
// hostname an Ingress "<safeName>-custom"; with storage a PVC "<id>-pvc" labelled
// ff-project-id / ff-project-name; no owner references and no Steward labels. Those are the
// names NamesFor gives, so the objects are adopted as they are (same uid, same PVC).
//
// driver-k8s gives every MQTT schema agent (startBrokerAgent; v2.31.0 and later, PR #369): a
// Deployment "mqtt-schema-agent-<team>-<broker>" (lowercased; "team-broker" for the team's own
// broker) labelled {name: <that>, team, broker, mqttSchemaAgent: "true"} with selector {name:
// <that>} and the platform's token as the plain env value FORGE_TEAM_TOKEN; and a Service of the
// same name selecting {name: <that>} on port 3500. Those are the names AgentName gives, so they
// are adopted as they are. Before v2.31.0 it made a bare Pod of that name instead of the
// Deployment: a Pod cannot become a Deployment, so Steward creates its Deployment beside it and
// the Pod is deleted once Steward reports the agent Running (AgentPlan::bare_pod).
//
// BuildPlan only reads. Relabel and ClearMarkers write one object at a time, each with the
// resourceVersion it read (a 409 is re-read and retried), and are idempotent: running them again
// changes nothing. Nothing here prints or returns a credential value except InstancePlan::spec and
// AgentPlan::spec, which are what the API's PUTs need (docs/api.md) and must not be shown
// (PlanJson and PlanText omit them).
//
// Thread-compatible; the client is not owned.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "engine/model/project.h"
#include "kube/client/client.h"

namespace steward::engine::migrate {

inline constexpr std::string_view kFromDriverK8s = "driver-k8s";

// One existing object of an instance.
struct FoundObject {
  std::string kind;  // Deployment, Service, Ingress, PersistentVolumeClaim, Pod
  std::string name;
  std::string uid;
  bool relabel =
      false;            // lacks Steward's labels (steward.io/project, managed-by) or has the marker
  bool marked = false;  // carries steward.io/migrating (ClearMarkers removes it)
};

struct InstancePlan {
  enum class Action {
    kMigrate,  // driver-k8s objects (or a migration left half way): relabel, PUT, adopt
    kManaged,  // already Steward's (labelled, no migration marker): nothing to do
    kError,    // cannot be mapped; nothing is changed for it
  };
  Action action = Action::kMigrate;
  std::string error;  // kError: what is wrong, naming the object and field
  std::string id, name;
  // The body's spec for PUT /v1/projects/{name}, credentials as values. Secret: never print.
  Json spec;
  // The same spec with credentials as {fingerprint, keys} (what GET shows): printable.
  Json public_spec;
  bool start = true;
  std::vector<FoundObject> objects;  // adopted (kept, same uid)
  std::vector<std::string> create;   // objects Steward will create ("Secret <id>-credentials-<fp>")
  // What differs from what Steward renders, as "Kind name: path" (no values).
  std::vector<std::string> differs;
  std::string rollout = "none";  // none | rolling | recreate (the Deployment's pod template)
};

// One MQTT schema agent driver-k8s made (or Steward's, or a migration left half way).
struct AgentPlan {
  using Action = InstancePlan::Action;
  Action action = Action::kMigrate;
  std::string error;  // kError: what is wrong, naming the object and field
  // The record's name (mqtt-schema-agent-<team>-<broker>) and the id Steward's labels carry:
  // the one a previous run labelled the objects with, else one derived from the driver's
  // object's uid (the same on every run until then).
  std::string name, id;
  std::string team, broker;  // labels team and broker (else env FORGE_TEAM_ID, FORGE_BROKER_ID)
  // The body's spec for PUT /v1/agents/{name}: {team, broker, credentials: {token}} with the
  // token from env FORGE_TEAM_TOKEN. Secret: never print.
  Json spec;
  // The same with credentials as {fingerprint, keys} (what GET shows): printable.
  Json public_spec;
  // The driver's agent was running: its Deployment has replicas, its bare Pod has not failed
  // or ended. When not, the agent is put stopped, and Steward removes its objects.
  bool start = true;
  std::string stopped;               // !start: why, naming the object
  std::vector<FoundObject> objects;  // adopted (kept, same uid): the Deployment, the Service
  // driver-k8s before v2.31.0: its bare Pod, deleted (uid precondition) once Steward reports the
  // agent Running with its own Deployment, whose pod the Service then selects.
  std::optional<FoundObject> bare_pod;
  std::vector<std::string> create;   // "Secret <id>-credentials-<fingerprint>", "Deployment <name>"
  std::vector<std::string> differs;  // as InstancePlan::differs
  // none | rolling (the Deployment's pod template changes) | replace (a new Deployment, then the
  // bare Pod goes) | remove (put stopped: Steward takes the objects away)
  std::string rollout = "none";
};

struct Plan {
  std::string ns;
  std::vector<InstancePlan> instances;  // by name
  std::vector<AgentPlan> agents;        // by name
  // driver-k8s objects that belong to no instance or agent Steward can take over (a PVC of an
  // instance driver-k8s has suspended, an agent's Service without its Deployment or Pod), each
  // "Kind name: why".
  std::vector<std::string> skipped;
};

// Reads the namespace and plans every instance and agent. `config` is Steward's engine config (what
// it would render). Fails only when the namespace cannot be listed; an instance that cannot be
// mapped is an InstancePlan (AgentPlan) with Action::kError.
StatusOr<Plan> BuildPlan(const kube::Client& client, std::string_view ns,
                         const EngineConfig& config);

// The plan as JSON (no credential values): {"from", "namespace", "projects": [{"name", "id",
// "action": "migrate"|"managed"|"error", "error", "start", "spec", "adopt": [{"kind", "name",
// "uid"}], "relabel": [...], "create": [...], "differs": [...], "rollout"}], "agents": [{"name",
// "id", "team", "broker", "action", "error", "start", "stopped", "spec", "adopt", "relabel",
// "replace": [{"kind": "Pod", "name", "uid"}], "create", "differs", "rollout"}], "skipped"}.
Json PlanJson(const Plan& plan);
// The plan for a human, one block per project, then one per agent.
std::string PlanText(const Plan& plan);

// Gives every object of the instance Steward's labels (steward.io/project=<id>,
// app.kubernetes.io/managed-by=steward) and the annotation steward.io/migrating=driver-k8s,
// leaving everything else as it is (metadata only: no rollout, no new generation).
Status Relabel(const kube::Client& client, std::string_view ns, const InstancePlan& instance);
// Removes the steward.io/migrating annotation from the instance's objects that still carry it
// (once the project is stored, it is no longer needed).
Status ClearMarkers(const kube::Client& client, std::string_view ns, const InstancePlan& instance);

// The same for an agent: its Deployment and Service (the bare Pod is never relabelled: it is
// not Steward's, and Steward's Service must not select it).
Status Relabel(const kube::Client& client, std::string_view ns, const AgentPlan& agent);
Status ClearMarkers(const kube::Client& client, std::string_view ns, const AgentPlan& agent);
// Once Steward reports the agent Running: its Deployment and Service are the ones adopted (the
// planned uids; the Deployment Steward creates beside a bare Pod is not checked).
// kFailedPrecondition naming the object otherwise.
Status CheckAdopted(const kube::Client& client, std::string_view ns, const AgentPlan& agent);
// Deletes the agent's bare Pod with its uid as precondition. True when it is gone (also when it
// was already, or the name now has another uid), false while it terminates.
StatusOr<bool> DeleteBarePod(const kube::Client& client, std::string_view ns,
                             const AgentPlan& agent);
// The bare Pod is gone (404, or the name has another uid). True when there is none.
StatusOr<bool> BarePodGone(const kube::Client& client, std::string_view ns, const AgentPlan& agent);

// Kubernetes quantities as driver-k8s writes them: cpu in millicores ("100m", "1", "0.5"),
// memory in MiB ("128Mi", "1Gi", or bytes that are whole MiB). nullopt when not such a value.
std::optional<int64_t> CpuMillis(std::string_view quantity);
std::optional<int64_t> MemoryMiB(std::string_view quantity);

}  // namespace steward::engine::migrate
