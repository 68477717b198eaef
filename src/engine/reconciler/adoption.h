// Adoption fingerprints: what lets a run find a Running project unchanged without rendering its
// manifests or parsing a cached object (issue 18 §2: a restart of Steward with 10,000 projects
// is mostly runs that change nothing).
//
// A fingerprint is a SHA-256 over everything a run toward Running decides from:
//   - the rules: a sample rendering under this engine's config (so a change of config or of the
//     rendering code changes every fingerprint), the readiness settings, kAdoptionRules (bumped
//     when readiness or adoption rules change without the rendering changing);
//   - the intent: id, name, generation, restart epoch, the stored spec text, the credentials'
//     ids and states (never their tokens);
//   - the observations: for every object the run reads (the project's labelled Secrets, PVC,
//     Deployment, ReplicaSets, pods, Service, Ingresses, and its Service's EndpointSlices), its
//     name, resourceVersion and whether it is terminating, plus the named objects' presence.
// A run that ends Running stores the fingerprint taken at its start in the status
// (ProjectStatus::fingerprint). A later run whose fingerprint is the stored one, with the status
// Running at the record's generation, has nothing to decide: every object is at the
// resourceVersion the Running verdict was made on (resourceVersions never come back), the intent
// and the rules are those it was made under. Any difference — a pod's status update, an edit
// behind Steward's back, a new pod, a deleted object, a new config — means a full run.
//
// No fingerprint (nullopt) is taken for agents, when config.httpProbe asks for a probe of the URL
// (an observation outside the cluster), while one of the project's own writes is not yet in the
// cache (an expectation pending), or while the project has a supplied-credentials Secret other
// than its current one (whether it may go depends on the time, which no fingerprint holds).
//
// Thread-safety: immutable after construction; Of() may be called from any worker thread (the
// Observer is thread-safe).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/model/project.h"
#include "engine/reconciler/observer.h"
#include "store/store.h"

namespace steward::engine {

class AdoptionFingerprints {
 public:
  // `config` and `observer` must outlive this object.
  AdoptionFingerprints(const EngineConfig& config, Observer& observer);

  // The fingerprint of `rec` (a project to run, `spec` its stored spec parsed) with its
  // credentials `creds`, from the cache as it is now; nullopt when none applies (see above).
  std::optional<std::string> Of(const store::ProjectRecord& rec, const ProjectSpec& spec,
                                const std::vector<store::Credential>& creds) const;

  // The part that depends only on the config and the code (for tests).
  const std::string& rules() const { return rules_; }

 private:
  const EngineConfig& config_;
  Observer& observer_;
  const std::string rules_;
};

}  // namespace steward::engine
