// The steps toward stopped: delete the Ingresses, Service and Deployment, the TLS Secrets, and on
// delete the claim and every Secret (run.h).
#include "engine/reconciler/run.h"

namespace steward::engine {

Reconciler::Outcome Reconciler::Run::Teardown(const ObjectNames& names, bool remove) {
  return Settle([&]() -> Outcome {
    // Every delete goes out in this pass, the Ingresses' first; each wait is held.
    bool ingresses_gone = true;
    if (!names.ingress.empty()) {  // an agent has none
      for (const auto& [resource, name] : {std::pair{"Ingress", names.ingress},
                                           std::pair{"CustomIngress", names.custom_ingress}}) {
        Outcome gone = EnsureGone(kIngress, name);
        if (gone.done()) continue;
        ingresses_gone = false;
        if (auto crash = Hold(resource, std::move(gone))) return *crash;
      }
      if (ingresses_gone) Condition("Ingress", true, "Gone", "Ingresses gone");
    }
    Outcome svc = EnsureGone(kService, names.service);
    if (svc.done()) {
      Condition("Service", true, "Gone", "Service " + names.service + " gone");
    } else if (auto crash = Hold("Service", std::move(svc))) {
      return *crash;
    }
    // Foreground: the Deployment stays (terminating) until its ReplicaSets and pods are gone.
    Outcome dep = EnsureGone(kDeployment, names.deployment, "Foreground");
    if (dep.done()) {
      auto pods = r.observer_.ByLabel(kPod, kProjectLabel, rec.id);
      if (pods.empty()) {
        Condition("Deployment", true, "Gone",
                  "Deployment " + names.deployment + " and its pods gone");
      } else {
        Hold("Pods", Outcome::Wait("PodsTerminating", std::to_string(pods.size()) +
                                                          " pod(s) still exist (" +
                                                          pods.front()->name() + ")"));
      }
    } else if (auto crash = Hold("Deployment", std::move(dep))) {
      return *crash;
    }
    if (remove) {
      // A claim in use stays (terminating) until its pods are gone, as Kubernetes keeps it.
      if (!names.pvc.empty()) {  // an agent has neither a claim nor Steward's credentials
        if (auto crash = Hold("PersistentVolumeClaim", EnsureGone(kPvc, names.pvc))) return *crash;
        if (auto crash = Hold("Secret", EnsureGone(kSecret, names.secret))) return *crash;
      }
      // Every other Secret of the project: supplied credentials, one of a name it had before.
      for (const auto& other : r.observer_.ByLabel(kSecret, kProjectLabel, rec.id)) {
        if (other->name() == names.secret) continue;
        if (auto crash = Hold("Secret", EnsureGone(kSecret, other->name()))) return *crash;
      }
    }
    // cert-manager's certificates go with the Ingresses (it made them for those, and would make
    // them again while an Ingress asks for one), as FlowFuse's driver deletes them on suspend.
    if (!ingresses_gone) return Outcome::Done();
    bool tls_gone = true;
    for (const std::string& tls : {names.tls, names.custom_tls}) {
      if (tls.empty()) continue;
      Outcome o = RemoveTlsSecret(tls);
      tls_gone = tls_gone && o.done();
      if (auto crash = Hold("TLSSecrets", std::move(o))) return *crash;
    }
    if (tls_gone) Condition("TLSSecrets", true, "Gone", "no TLS Secret of the Ingresses is left");
    return Outcome::Done();
  }());
}

Reconciler::Outcome Reconciler::Run::RemoveTlsSecret(const std::string& name) {
  const std::string what = "Secret " + name;
  Json live;
  if (std::optional<kube::ObjectRef> cached = r.observer_.TlsSecret(name)) {
    if (!*cached || (*cached)->terminating()) return Outcome::Done();  // none (left) to delete
    live = (*cached)->Parse();
  } else {  // no cache of TLS Secrets: ask the server
    auto got = r.client_->Get(kSecret, ns, name);
    if (!got.ok()) {
      if (got.error().IsNotFound()) return Outcome::Done();
      return Classified(got.error(), "get", what);
    }
    live = std::move(*got);
  }
  const std::string owner = LabelOf(live, kProjectLabel);
  if (GetString(live, "type") != "kubernetes.io/tls" || (!owner.empty() && owner != rec.id)) {
    return Outcome::Done();  // not a certificate of ours: leave it
  }
  kube::DeleteOptions options;
  options.precondition_uid = GetString(MemberOrNull(live, "metadata"), "uid");
  if (auto crash = Hook("before", "delete", kSecret, name)) return *crash;
  auto deleted = r.client_->Delete(kSecret, ns, name, options);
  ++r.writes_;
  if (auto crash = Hook("after", "delete", kSecret, name)) return *crash;
  // 404: gone already; 409: the uid is another's now (cert-manager made it again): a later run
  // judges the new one.
  if (!deleted.ok() && !deleted.error().IsNotFound()) {
    return Classified(deleted.error(), "delete", what);
  }
  return Outcome::Done();
}

Reconciler::Outcome Reconciler::Run::Remove() {
  // The API writes a supplied-credentials Secret just before it commits the intent naming it,
  // so the cache may not show it yet: before the record goes, ask the server itself (one list
  // per delete) and delete what it still has.
  kube::ListOptions list;
  list.label_selector = std::string(kProjectLabel) + "=" + rec.id + "," +
                        std::string(kManagedByLabel) + "=" + std::string(kManagedByValue);
  auto left = r.client_->List(kSecret, ns, list);
  if (!left.ok()) return Note("Secret", Classified(left.error(), "list", "Secrets"));
  for (const Json& s : left->items) {
    const Json& meta = MemberOrNull(s, "metadata");
    kube::DeleteOptions options;
    options.precondition_uid = GetString(meta, "uid");
    const std::string name = GetString(meta, "name");
    if (auto crash = Hook("before", "delete", kSecret, name)) return *crash;
    auto deleted = r.client_->Delete(kSecret, ns, name, options);
    ++r.writes_;
    if (auto crash = Hook("after", "delete", kSecret, name)) return *crash;
    if (!deleted.ok() && !deleted.error().IsNotFound()) {
      return Note("Secret", Classified(deleted.error(), "delete", "Secret " + name));
    }
  }
  return Outcome::Done();
}

}  // namespace steward::engine
