// A run's credential steps: which credential the pods should hold, supplied credentials' Secrets,
// activation after a rotation and revocation of what no pod holds (run.h).
#include <algorithm>
#include <charconv>
#include <set>

#include "engine/reconciler/run.h"

namespace steward::engine {

const store::Credential* Reconciler::Run::CredentialToHold(
    const std::vector<store::Credential>& creds, bool pending_only) {
  const store::Credential* best = nullptr;
  for (const auto& c : creds) {
    if (c.state == CredentialState::kPending &&
        (best == nullptr || best->state != CredentialState::kPending ||
         c.created_ms > best->created_ms ||
         (c.created_ms == best->created_ms && c.id > best->id))) {
      best = &c;
    }
  }
  if (best != nullptr || pending_only) return best;
  for (const auto& c : creds) {
    if (c.state == CredentialState::kActive &&
        (best == nullptr || c.activated_ms > best->activated_ms)) {
      best = &c;
    }
  }
  return best;
}

Reconciler::Outcome Reconciler::Run::SuppliedCredentialsPresent() {
  if (!spec.credentials) return Outcome::Done();
  const std::string name = SuppliedSecretName(rec.id, spec.credentials->fingerprint);
  View view = r.observer_.Get(kSecret, name);
  if (view.object && view.object->label(kProjectLabel) != rec.id) {
    return Note("Credentials", Outcome::Failed("CredentialsNotOurs",
                                               "Secret " + name + " belongs to another project"));
  }
  if (!view.object || view.terminating) {
    return Note("Credentials",
                Outcome::Wait("WaitingForCredentials",
                              "Secret " + name +
                                  " (the supplied credentials) is not there; put the "
                                  "credentials again if it was deleted"));
  }
  Condition("Credentials", true, "Ready", "supplied credentials Secret " + name + " is there");
  return Outcome::Done();
}

Reconciler::Outcome Reconciler::Run::RemoveSuppliedSecrets(const std::string& keep) {
  // A set some pod still holds stays too (a rollout stuck on a failing image keeps its older
  // pods, and a restart of one of their containers reads the Secret again).
  std::set<std::string> held = {keep};
  for (const auto& p : r.observer_.ByLabel(kPod, kProjectLabel, rec.id)) {
    const std::string id = AnnotationOf(p->Parse(), kCredentialAnnotation);
    if (id.starts_with(kSuppliedCredentialPrefix)) {
      held.insert(SuppliedSecretName(rec.id, id.substr(kSuppliedCredentialPrefix.size())));
    }
  }
  auto supplied_at = [](const kube::ObjectRef& s) -> int64_t {
    const std::string v = AnnotationOf(s->Parse(), kSuppliedAtAnnotation);
    int64_t ms = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), ms);
    return ec == std::errc() && ptr == v.data() + v.size() ? ms : 0;
  };
  int64_t current_at = -1;  // no current set: only the grace period lets a set go
  if (!keep.empty()) {
    View current = r.observer_.Get(kSecret, keep);
    if (!current.object) return Outcome::Done();  // not seen yet: judge nothing against it
    current_at = supplied_at(current.object);
  }
  const int64_t now = WallMs(r.clock_);
  for (const auto& secret : r.observer_.ByLabel(kSecret, kProjectLabel, rec.id)) {
    if (secret->label(kCredentialsLabel) != kSuppliedValue || held.contains(secret->name())) {
      continue;
    }
    const int64_t at = supplied_at(secret);
    if (!(at < current_at || now - at > kSuppliedGraceMs)) continue;  // maybe a newer intent's
    Outcome gone = EnsureGone(kSecret, secret->name());
    if (!gone.done()) return gone;
  }
  return Outcome::Done();
}

Reconciler::Outcome Reconciler::Run::PromoteCredentials(const std::vector<store::Credential>& creds,
                                                        const std::string& generated_secret) {
  if (spec.credentials) {
    // The platform's credentials: every pod must hold the current set before the older sets'
    // Secrets go (an old pod still reads its env from one only at start, but a restart of its
    // container would need it).
    const std::string want = std::string(kSuppliedCredentialPrefix) + spec.credentials->fingerprint;
    for (const auto& p : r.observer_.ByLabel(kPod, kProjectLabel, rec.id)) {
      if (AnnotationOf(p->Parse(), kCredentialAnnotation) != want) {
        return Note("Credentials",
                    Outcome::Wait("RotationInProgress",
                                  "pod " + p->name() + " still holds older credentials"));
      }
    }
    Outcome gc = RemoveSuppliedSecrets(SuppliedSecretName(rec.id, spec.credentials->fingerprint));
    if (!gc.done()) return Note("Credentials", gc);
    // Steward's own credentials: no pod holds them, so their Secret goes and then they stop
    // being valid (in that order: a Secret of the project never holds a revoked token).
    if (!generated_secret.empty()) {
      Outcome gone = EnsureGone(kSecret, generated_secret);
      if (!gone.done()) return Note("Credentials", gone);
    }
    const bool live = std::any_of(creds.begin(), creds.end(), [](const store::Credential& c) {
      return c.state != CredentialState::kRevoked;
    });
    if (live) {
      Status s = RevokeGeneratedCredentials();
      if (fence && s.code() == StatusCode::kAborted) return Outcome::LostShard(s);
      if (!s.ok()) return Outcome::Error("StoreError", s);
    }
    return Outcome::Done();
  }
  if (const store::Credential* pending = CredentialToHold(creds, true); pending != nullptr) {
    for (const auto& p : r.observer_.ByLabel(kPod, kProjectLabel, rec.id)) {
      Json pod = p->Parse();
      if (AnnotationOf(pod, kCredentialAnnotation) != pending->id) {
        return Note("Credentials",
                    Outcome::Wait("RotationInProgress",
                                  "pod " + p->name() + " still holds older credentials"));
      }
    }
    Status s = ActivateCredential(pending->id);
    if (fence && s.code() == StatusCode::kAborted) return Outcome::LostShard(s);
    if (!s.ok()) return Outcome::Error("StoreError", s);
  }
  // Back to Steward's credentials from supplied ones: the old sets go once no pod holds one.
  for (const auto& p : r.observer_.ByLabel(kPod, kProjectLabel, rec.id)) {
    if (AnnotationOf(p->Parse(), kCredentialAnnotation).starts_with(kSuppliedCredentialPrefix)) {
      return Note("Credentials",
                  Outcome::Wait("RotationInProgress",
                                "pod " + p->name() + " still holds supplied credentials"));
    }
  }
  Outcome gc = RemoveSuppliedSecrets("");
  if (!gc.done()) return Note("Credentials", gc);
  return Outcome::Done();
}

Status Reconciler::Run::ActivateCredential(const std::string& pending_id) {
  const int64_t now = WallMs(r.clock_);
  auto result = r.store_.MutateProject(
      rec.id,
      [&](ProjectRecord&, const std::vector<store::Credential>& creds,
          store::Mutation& m) -> Status {
        m.fence = fence;
        const store::Credential* newest = CredentialToHold(creds, true);
        if (newest == nullptr || newest->id != pending_id) return Status::Ok();  // superseded
        std::string revoked;
        for (const auto& c : creds) {
          store::Credential next = c;
          if (c.id == pending_id) {
            next.state = CredentialState::kActive;
            next.activated_ms = now;
          } else if (c.state != CredentialState::kRevoked) {
            next.state = CredentialState::kRevoked;
            next.revoked_ms = now;
            revoked += (revoked.empty() ? "" : ",") + c.id;
          } else {
            continue;
          }
          m.credentials.push_back(std::move(next));
        }
        store::HistoryEntry h;
        h.kind = "credential";
        h.generation = rec.generation;
        h.summary = "activated " + pending_id + (revoked.empty() ? "" : "; revoked " + revoked);
        m.history.push_back(std::move(h));
        return Status::Ok();
      });
  return result.status();
}

Status Reconciler::Run::RevokeGeneratedCredentials() {
  const int64_t now = WallMs(r.clock_);
  auto result = r.store_.MutateProject(
      rec.id,
      [&](ProjectRecord& current, const std::vector<store::Credential>& creds,
          store::Mutation& m) -> Status {
        m.fence = fence;
        if (current.generation != rec.generation) return Status::Ok();  // a newer intent decides
        std::string revoked;
        for (const auto& c : creds) {
          if (c.state == CredentialState::kRevoked) continue;
          store::Credential next = c;
          next.state = CredentialState::kRevoked;
          next.revoked_ms = now;
          revoked += (revoked.empty() ? "" : ",") + c.id;
          m.credentials.push_back(std::move(next));
        }
        if (revoked.empty()) return Status::Ok();
        store::HistoryEntry h;
        h.kind = "credential";
        h.generation = rec.generation;
        h.summary = "revoked " + revoked + ": every pod holds the supplied credentials";
        m.history.push_back(std::move(h));
        return Status::Ok();
      });
  return result.status();
}

}  // namespace steward::engine
