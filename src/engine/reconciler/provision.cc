// The steps toward running: create in dependency order, wait for readiness, probe (run.h).
#include "engine/reconciler/run.h"

namespace steward::engine {

Reconciler::Outcome Reconciler::Run::Provision(const Manifests& m,
                                               const std::vector<store::Credential>& creds) {
  Outcome o = Settle([&] {
    Outcome step = ProvisionStorage(m);
    if (!step.done()) return step;
    step = SuppliedCredentialsPresent();
    if (!step.done()) return step;
    // Sets no pod holds any more go at once, whatever the rollout's state.
    if (spec.credentials) {
      step = RemoveSuppliedSecrets(SuppliedSecretName(rec.id, spec.credentials->fingerprint));
      if (auto crash = Hold("Credentials", step)) return *crash;
    }
    step = ProvisionDeployment(m.deployment, m.names.deployment);
    if (!step.done()) return step;
    step = ProvisionService(m.service, m.names.service);
    if (!step.done()) return step;
    return ProvisionIngresses(m);
  }());
  if (!o.done()) return o;  // an object is not there yet, or not ready
  o = Probe();
  if (!o.done()) return o;
  return PromoteCredentials(creds, m.names.secret);
}

Reconciler::Outcome Reconciler::Run::ProvisionStorage(const Manifests& m) {
  // The Secret and the claim depend on nothing: both are made in the same run, and the
  // Deployment waits until both are seen.
  std::optional<Ensured> secret;  // none with supplied credentials
  if (m.secret) {
    secret = Ensure(kSecret, *m.secret);
    if (secret->outcome.kind == Outcome::Kind::kCrashed) return secret->outcome;
  }
  std::optional<Ensured> pvc;
  if (m.pvc) {
    pvc = Ensure(kPvc, *m.pvc);
    if (pvc->outcome.kind == Outcome::Kind::kCrashed) return pvc->outcome;
  }
  if (secret) {
    if (!secret->outcome.done()) return Note("Secret", secret->outcome);
    Condition("Secret", true, "Ready", "credentials Secret " + m.names.secret + " matches");
  }
  // The credentials Secret of the name the project had before a rename (the current name's,
  // with supplied credentials, goes once no pod reads it: PromoteCredentials).
  for (const auto& old : r.observer_.ByLabel(kSecret, kProjectLabel, rec.id)) {
    if (old->label(kCredentialsLabel) == kSuppliedValue || old->name() == m.names.secret) continue;
    if (auto crash = Hold("Secret", EnsureGone(kSecret, old->name()))) return *crash;
  }
  if (pvc) {
    if (!pvc->outcome.done()) return Note("PersistentVolumeClaim", pvc->outcome);
    // Binding is a readiness wait: the Deployment that mounts the claim may exist before it.
    if (Readiness rd = PvcReadiness(pvc->live); rd.ready()) {
      Condition("PersistentVolumeClaim", true, "Bound", m.names.pvc + " is Bound");
    } else if (auto crash =
                   Hold("PersistentVolumeClaim", FromReadiness(rd, "claim " + m.names.pvc))) {
      return *crash;
    }
  }
  if (secret && !secret->seen) return Unseen("Secret", "Secret " + m.names.secret);
  if (pvc && !pvc->seen) return Unseen("PersistentVolumeClaim", "claim " + m.names.pvc);
  return Outcome::Done();
}

Reconciler::Outcome Reconciler::Run::ProvisionAgent(const AgentManifests& m) {
  if (!spec.credentials) {
    return Note("Credentials", Outcome::Failed("NoCredentials", "agent " + rec.name +
                                                                    " has no token: put one in "
                                                                    "spec.credentials.token"));
  }
  Outcome o = Settle([&] {
    Outcome step = SuppliedCredentialsPresent();
    if (!step.done()) return step;
    if (auto crash = Hold("Credentials", RemoveSuppliedSecrets(m.secret))) return *crash;
    step = ProvisionDeployment(m.deployment, m.name);
    if (!step.done()) return step;
    return ProvisionService(m.service, m.name);
  }());
  if (!o.done()) return o;
  return PromoteCredentials({}, "");
}

Reconciler::Outcome Reconciler::Run::ProvisionDeployment(const Json& deployment,
                                                         const std::string& name) {
  auto dep = Ensure(kDeployment, deployment);
  if (!dep.outcome.done()) return Note("Deployment", dep.outcome);
  Readiness rd = DeploymentReadiness(dep.live);
  std::string pod_detail;
  if (rd.ready()) {
    std::vector<Json> replica_sets;
    for (const auto& rs : r.observer_.ByLabel(kReplicaSet, kProjectLabel, rec.id)) {
      replica_sets.push_back(rs->Parse());
    }
    rd = ReplicaSetsReadiness(dep.live, replica_sets);
  } else {
    std::vector<Json> pods;
    for (const auto& p : r.observer_.ByLabel(kPod, kProjectLabel, rec.id)) {
      pods.push_back(p->Parse());
    }
    pod_detail = PodFailureDetail(pods);
  }
  if (rd.ready()) {
    deployment_ready = true;
    Condition("Deployment", true, "Ready", rd.message);
  } else {
    Outcome o = FromReadiness(rd, "Deployment " + name);
    if (!pod_detail.empty()) o.message += " (pod: " + pod_detail + ")";
    if (auto crash = Hold("Deployment", std::move(o))) return *crash;
  }
  if (!dep.seen) return Unseen("Deployment", "Deployment " + name);
  return Outcome::Done();
}

Reconciler::Outcome Reconciler::Run::ProvisionService(const Json& service,
                                                      const std::string& name) {
  auto svc =
      Ensure(kService, service, deployment_ready ? "" : "updated once its Deployment is ready");
  if (svc.update_held) {
    // It exists: what depends on it may be created; its readiness is judged once updated.
    if (auto crash = Hold("Service", svc.outcome)) return *crash;
    return Outcome::Done();
  }
  if (!svc.outcome.done()) return Note("Service", svc.outcome);
  std::vector<Json> slices;
  for (const auto& s : r.observer_.ByLabel(kSlice, "kubernetes.io/service-name", name)) {
    slices.push_back(s->Parse());
  }
  if (Readiness rd = ServiceReadiness(svc.live, slices); rd.ready()) {
    service_ready = true;
    Condition("Service", true, "Ready", rd.message);
  } else if (auto crash = Hold("Service", FromReadiness(rd, "Service " + name))) {
    return *crash;
  }
  if (!svc.seen) return Unseen("Service", "Service " + name);
  return Outcome::Done();
}

Reconciler::Outcome Reconciler::Run::ProvisionIngresses(const Manifests& m) {
  // Both Ingresses route to the Service (seen by now) and to nothing else: neither waits for
  // the other.
  const bool require_address = r.options_.config.require_ingress_address;
  auto ingress = [&](const std::string& resource, const Json& desired,
                     const std::string& name) -> std::optional<Outcome> {
    auto ing = Ensure(kIngress, desired, service_ready ? "" : "updated once its Service is ready");
    if (!ing.outcome.done()) return Hold(resource, ing.outcome);
    Readiness rd = IngressReadiness(ing.live, require_address);
    if (rd.ready()) {
      Condition(resource, true, "Ready", rd.message);
      return std::nullopt;
    }
    return Hold(resource, FromReadiness(rd, "Ingress " + name));
  };
  if (auto crash = ingress("Ingress", m.ingress, m.names.ingress)) return *crash;
  if (m.custom_ingress) {
    if (auto crash = ingress("CustomIngress", *m.custom_ingress, m.names.custom_ingress)) {
      return *crash;
    }
  } else if (auto crash = Hold("CustomIngress", EnsureGone(kIngress, m.names.custom_ingress))) {
    return *crash;
  }
  return Outcome::Done();
}

Reconciler::Outcome Reconciler::Run::Probe() {
  if (!r.options_.config.http_probe) return Outcome::Done();
  const ResolvedSpec resolved = Resolve(r.options_.config, rec.name, spec);
  Status probe = r.options_.prober ? r.options_.prober(resolved.host, resolved.url)
                                   : FailedPrecondition("no HTTP prober configured");
  if (!probe.ok()) {
    return Note("Probe", Outcome::Wait("ProbeFailed", resolved.url + ": " + probe.message()));
  }
  Condition("Probe", true, "Ready", resolved.url + " answers");
  return Outcome::Done();
}

}  // namespace steward::engine
