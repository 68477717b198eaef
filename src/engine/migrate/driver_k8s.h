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
// BuildPlan only reads. Relabel and ClearMarkers write one object at a time, each with the
// resourceVersion it read (a 409 is re-read and retried), and are idempotent: running them again
// changes nothing. Nothing here prints or returns a credential value except InstancePlan::spec,
// which is what the API's PUT needs (docs/api.md) and must not be shown (PlanJson omits it).
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
  std::string kind;  // Deployment, Service, Ingress, PersistentVolumeClaim
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
  std::vector<std::string> create;   // objects Steward will create ("Secret a-credentials")
  // What differs from what Steward renders, as "Kind name: path" (no values).
  std::vector<std::string> differs;
  std::string rollout = "none";  // none | rolling | recreate (the Deployment's pod template)
};

struct Plan {
  std::string ns;
  std::vector<InstancePlan> instances;  // by name
  // driver-k8s objects that belong to no instance Steward can take over (a PVC of an instance
  // driver-k8s has suspended), each "Kind name: why".
  std::vector<std::string> skipped;
};

// Reads the namespace and plans every instance. `config` is Steward's engine config (what it
// would render). Fails only when the namespace cannot be listed; an instance that cannot be
// mapped is an InstancePlan with Action::kError.
StatusOr<Plan> BuildPlan(const kube::Client& client, std::string_view ns,
                         const EngineConfig& config);

// The plan as JSON (no credential values): {"from", "namespace", "projects": [{"name", "id",
// "action": "migrate"|"managed"|"error", "error", "start", "spec", "adopt": [{"kind", "name",
// "uid"}], "relabel": [...], "create": [...], "differs": [...], "rollout"}], "skipped": [...]}.
Json PlanJson(const Plan& plan);
// The plan for a human, one block per project.
std::string PlanText(const Plan& plan);

// Gives every object of the instance Steward's labels (steward.io/project=<id>,
// app.kubernetes.io/managed-by=steward) and the annotation steward.io/migrating=driver-k8s,
// leaving everything else as it is (metadata only: no rollout, no new generation).
Status Relabel(const kube::Client& client, std::string_view ns, const InstancePlan& instance);
// Removes the steward.io/migrating annotation from the instance's objects that still carry it
// (once the project is stored, it is no longer needed).
Status ClearMarkers(const kube::Client& client, std::string_view ns, const InstancePlan& instance);

// Kubernetes quantities as driver-k8s writes them: cpu in millicores ("100m", "1", "0.5"),
// memory in MiB ("128Mi", "1Gi", or bytes that are whole MiB). nullopt when not such a value.
std::optional<int64_t> CpuMillis(std::string_view quantity);
std::optional<int64_t> MemoryMiB(std::string_view quantity);

}  // namespace steward::engine::migrate
