// The oracle of a torture run: checks what Steward claims against what the cluster shows, from
// its own Kubernetes client and its own HTTP requests (docs/design.md §3, issue 6):
//   Running   → the Deployment is ready at the claimed generation (observed, every replica
//               updated, ready and available, the claimed image and restart epoch), the Service
//               (of this project) has a ready endpoint, the Ingress — and the custom-hostname
//               Ingress when the spec has one — has its address, and a request through the
//               ingress listener with each host reaches one of the project's pods running the
//               claimed image;
//   Suspended → none of Deployment, Service, Ingress, custom-hostname Ingress, nor a pod of the
//               project exists (terminating counts as existing);
// and for an MQTT schema agent (a record of kind "agent"):
//   Running   → its Deployment is ready at the claimed generation (as above, with the restart
//               epoch and the claimed token's fingerprint in the pod template), its Service has a
//               ready endpoint, and that pod — the agent's, holding the claimed token — answers
//               its own status API (GET :3500/api/v1/status through the API server's pod proxy)
//               with {"connected": bool};
//   Suspended → neither Deployment, Service nor a pod of the agent exists;
// and scans for objects with Steward's labels that belong to no project, or that a project has
// more of than it should.
//
// A check answers kInconclusive when the cluster could not be asked (connection refused during
// a cluster restart): that is neither proof nor violation. Whether a failed check is a violation
// or a claim the project has since moved past (superseded) is the caller's decision: it asks
// Steward for the project's current generation after the check. Thread-safe (the client is).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/json.h"
#include "kube/client/client.h"

namespace steward::torture {

// What Steward said about a project or an agent: a phase reached at a generation.
struct Claim {
  bool agent = false;  // the record's kind is "agent"; name is then the objects' name
  std::string name;
  std::string id;
  std::string cluster;  // the cluster it is placed on ("default" with one)
  int64_t generation = 0;
  std::string phase;  // "Running" | "Suspended"
  std::string image;  // spec.stack.image at that generation
  int64_t restart_epoch = 0;
  std::string url;              // status.url
  std::string custom_hostname;  // spec.customHostname, "" when none
  std::string fingerprint;      // an agent's spec.credentials.fingerprint (its token's)
  int64_t since_ms = 0;         // status.since: when Steward committed the phase (wall ms)

  // Reads a project or an agent as the REST API returns it. nullopt unless it is done at its
  // generation (observedGeneration >= generation) with phase Running or Suspended.
  static std::optional<Claim> FromProject(const Json& project);
  std::string Describe() const;  // "Running at generation 4 (image …, restart epoch 1)"
};

// A project as the REST API shows it that claims a state for a generation it has not reached:
// Running (or Suspended while the project is to run or be deleted) with observedGeneration below
// its generation. Steward must never say so (issue 13); the text describes it, "" when fine.
std::string StaleClaim(const Json& project);

enum class Verdict { kHolds, kViolated, kInconclusive };

struct CheckResult {
  Verdict verdict = Verdict::kHolds;
  std::string showed;  // what the cluster showed, for the report (empty when it holds)
};

// One object with Steward's labels, as a scan saw it.
// LabelledObject::kind of a Secret labelled steward.io/credentials=supplied.
inline constexpr std::string_view kSuppliedSecret = "Secret (supplied credentials)";

struct LabelledObject {
  std::string kind;  // "Deployment", ...
  std::string name;
  std::string uid;
  std::string project_id;  // the steward.io/project label
  bool terminating = false;
  std::string cluster = "default";  // the scanned cluster's name
};

struct ScanResult {
  Verdict verdict = Verdict::kHolds;  // kInconclusive when a list failed
  std::vector<LabelledObject> objects;
  std::string error;
};

class Oracle {
 public:
  struct Options {
    std::string ns = "default";
    std::string ingress_host = "127.0.0.1";
    uint16_t ingress_port = 0;
    std::string cluster = "default";  // its name in Steward's configuration
  };

  Oracle(std::shared_ptr<kube::Client> kube, Options options);

  const std::string& cluster() const { return options_.cluster; }

  CheckResult CheckRunning(const Claim& claim) const;
  CheckResult CheckSuspended(const Claim& claim) const;
  // Every Deployment, Service, Ingress, Secret and PVC with app.kubernetes.io/managed-by=steward
  // (projects' and agents') on this oracle's cluster.
  ScanResult ScanLabelled() const;
  // Objects of a project beyond what one project may have (over every cluster scanned) (1
  // Deployment, Service, Secret, PVC; 2 Ingresses), each described; empty when none. Secrets of
  // supplied credentials (kind kSuppliedSecret) are not counted: a project keeps one per set some
  // pod still holds (a rollout stuck on a failing image keeps its older pods), which a scan of
  // labelled objects cannot judge; FlowFuseTest checks that an older set's Secret goes once no pod
  // holds it. The projects in `moving` (a move under way) are counted per cluster: the cluster
  // they left may still have theirs.
  static std::vector<std::string> Duplicates(const std::vector<LabelledObject>& objects,
                                             const std::set<std::string>& moving = {});
  // The credential token in a project's Secret (FORGE_PROJECT_TOKEN, decoded), "" when the
  // Secret does not exist or is terminating; nullopt when the cluster could not be asked.
  std::optional<std::string> SecretToken(const std::string& name, const std::string& id) const;

 private:
  CheckResult CheckIngress(const Claim& claim, const std::string& name,
                           const std::string& host) const;
  // The Deployment `name` is the claim's and ready at it; `image` (when not empty) and the pod
  // template's annotations (restart epoch; credential id when not empty) are the claimed ones.
  CheckResult CheckDeployment(const Claim& claim, const std::string& name, const std::string& image,
                              const std::string& credential_id) const;
  // The Service `name` is the claim's and has a ready endpoint: the ready pods' names in `pods`.
  CheckResult CheckService(const Claim& claim, const std::string& name,
                           std::vector<std::string>* pods) const;
  CheckResult CheckAgentRunning(const Claim& claim) const;
  CheckResult CheckAgentAnswers(const Claim& claim, const std::string& pod) const;

  std::shared_ptr<kube::Client> kube_;
  Options options_;
};

}  // namespace steward::torture
