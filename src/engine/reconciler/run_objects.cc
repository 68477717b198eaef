// One object at a time: a run's create, update, adopt and delete of one object, and how a
// run holds and settles the outcomes of its steps (run.h).
#include "engine/reconciler/run.h"

namespace steward::engine {

namespace reconciler_internal {

std::string NameOf(const Json& obj) { return GetString(obj["metadata"], "name"); }

bool Terminating(const Json& obj) {
  const Json* ts = FindPath(obj, "metadata.deletionTimestamp");
  return ts != nullptr && !ts->is_null();
}

std::string OwnContentHash(const Json& obj) {
  Json copy = obj;
  auto meta = copy.find("metadata");
  if (meta != copy.end() && meta->is_object()) {
    auto annotations = meta->find("annotations");
    if (annotations != meta->end() && annotations->is_object()) {
      for (auto it = annotations->begin(); it != annotations->end();) {
        if (it.key().find("kubernetes.io/") != std::string::npos) {
          it = annotations->erase(it);
        } else {
          ++it;
        }
      }
    }
  }
  return SpecHash(copy);
}

bool KeepLiveSelector(const Json& desired, const Json& live, Json* out) {
  const Json* live_selector = FindPath(live, "spec.selector");
  const Json* want_selector = FindPath(desired, "spec.selector");
  if (live_selector == nullptr || want_selector == nullptr || *live_selector == *want_selector) {
    return false;
  }
  if (!live_selector->is_object() || live_selector->size() != 1) return false;
  const Json* match = FindPath(*live_selector, "matchLabels");
  const Json* labels = FindPath(desired, "spec.template.metadata.labels");
  if (match == nullptr || !match->is_object() || match->empty() || labels == nullptr ||
      !labels->is_object()) {
    return false;
  }
  for (const auto& [k, v] : match->items()) {
    auto it = labels->find(k);
    if (it == labels->end() || *it != v) return false;
  }
  *out = desired;
  (*out)["spec"]["selector"] = *live_selector;
  return true;
}

int64_t WallMs(const Clock& clock) {
  return std::chrono::duration_cast<Millis>(clock.WallNow().time_since_epoch()).count();
}

}  // namespace reconciler_internal

std::optional<Reconciler::Outcome> Reconciler::Run::Hook(std::string_view when,
                                                         std::string_view verb,
                                                         const ResourceType& type,
                                                         std::string_view name) {
  if (fence && when == "before" && r.check_fence_) {
    if (Status held = r.check_fence_(*fence); !held.ok()) return Outcome::LostShard(held);
  }
  if (!r.options_.write_hook) return std::nullopt;
  Status s = r.options_.write_hook(when, verb, type, name);
  if (s.ok()) return std::nullopt;
  return Outcome::Crashed(std::move(s));
}

Json Reconciler::Run::UpdateBody(const ResourceType& type, const Json& desired, const Json& live) {
  Json body = desired;
  Json& meta = body["metadata"];
  meta["resourceVersion"] = live["metadata"]["resourceVersion"];
  if (const Json* f = FindPath(live, "metadata.finalizers"); f != nullptr) {
    meta["finalizers"] = *f;
  }
  if (const Json* a = FindPath(live, "metadata.annotations"); a != nullptr && a->is_object()) {
    for (const auto& [k, v] : a->items()) {
      if (k.find("kubernetes.io/") != std::string::npos && !meta["annotations"].contains(k)) {
        meta["annotations"][k] = v;
      }
    }
  }
  if (type == kService) {
    for (const char* f : {"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"}) {
      if (const Json* v = FindPath(live, std::string("spec.") + f); v != nullptr) {
        body["spec"][f] = *v;
      }
    }
  }
  return body;
}

Reconciler::Run::Ensured Reconciler::Run::Ensure(const ResourceType& type, const Json& desired,
                                                 std::string_view hold_update) {
  const std::string name = NameOf(desired);
  const std::string what = type.kind + " " + name;
  View view = r.observer_.Get(type, name);
  if (auto known = r.KnownUnpersisted(rec, type.kind + "/" + name, view)) {
    return {Outcome::Failed("NotPersisted", *known), {}};
  }
  if (view.stale) {
    return {Outcome::Wait("ObservingWrite", what + ": waiting for the watch to show it"), {}};
  }
  if (!view.object) return Create(type, desired, view.terminating);
  return Converge(type, desired, view.object->Parse(), view.terminating, hold_update);
}

Reconciler::Run::Ensured Reconciler::Run::Create(const ResourceType& type, const Json& desired,
                                                 bool view_terminating) {
  const std::string name = NameOf(desired);
  const std::string what = type.kind + " " + name;
  if (auto crash = Hook("before", "create", type, name)) return {*crash, {}};
  auto created = r.client_->Create(
      type, ns, desired, {.field_manager = r.options_.field_manager, .field_validation = "Strict"});
  ++r.writes_;
  if (auto crash = Hook("after", "create", type, name)) return {*crash, {}};
  if (created.ok()) {
    created_object = true;
    r.observer_.ExpectExists(type, name, GetString((*created)["metadata"], "uid"));
    if (auto lost = NotPersisted(type, name, desired, *created)) return {*lost, {}};
    return {Outcome::Done(), std::move(*created)};
  }
  const kube::ApiError& e = created.error();
  if (!e.IsAlreadyExists()) return {Classified(e, "create", what), {}};
  // Not yet in the cache (or not ours, so never in it): read it once and decide.
  auto got = r.client_->Get(type, ns, name);
  if (!got.ok()) {
    if (got.error().IsNotFound()) {
      return {Outcome::Error("Conflict", Aborted(what + " vanished after AlreadyExists")), {}};
    }
    return {Classified(got.error(), "get", what), {}};
  }
  // An object created meanwhile by someone else, or ours and not cached yet: not created by us.
  return Converge(type, desired, std::move(*got), view_terminating, "");
}

Reconciler::Run::Ensured Reconciler::Run::Converge(const ResourceType& type, const Json& desired,
                                                   Json live, bool view_terminating,
                                                   std::string_view hold_update) {
  const std::string name = NameOf(desired);
  const std::string what = type.kind + " " + name;
  if (!Ours(live)) {
    return {
        Outcome::Failed("NameTaken", what + " exists in namespace " + ns + " but is not project " +
                                         rec.id + "'s (no steward.io/project=" + rec.id +
                                         " label); remove or rename it"),
        {}};
  }
  if (view_terminating || Terminating(live)) {
    return {Outcome::Wait("Terminating",
                          what + " is still terminating; waiting for it to be gone first"),
            {}};
  }
  // A Deployment's selector is immutable: one it was created with (FlowFuse's driver selects on
  // {app: <id>}) stays when it selects the pods Steward renders, instead of an update the
  // server must refuse.
  Json kept;
  const Json* want = &desired;
  if (type == kDeployment && KeepLiveSelector(desired, live, &kept)) want = &kept;
  const bool same_hash =
      AnnotationOf(live, kSpecHashAnnotation) == AnnotationOf(*want, kSpecHashAnnotation);
  if (same_hash && LiveMatchesDesired(*want, live)) {
    return {Outcome::Done(), std::move(live), /*seen=*/true};
  }
  if (type == kPvc) {
    // A claim's spec is immutable once bound; its data matters more than a label.
    return {Outcome::Done(), std::move(live), /*seen=*/true};
  }
  if (!hold_update.empty()) {
    return {Outcome::Wait("WaitingForDependency",
                          what + " differs from its rendering; " + std::string(hold_update)),
            std::move(live), /*seen=*/true, /*update_held=*/true};
  }
  const std::string old_rv = GetString(live["metadata"], "resourceVersion");
  if (auto crash = Hook("before", "update", type, name)) return {*crash, {}};
  auto updated =
      r.client_->Update(type, UpdateBody(type, *want, live),
                        {.field_manager = r.options_.field_manager, .field_validation = "Strict"});
  ++r.writes_;
  if (auto crash = Hook("after", "update", type, name)) return {*crash, {}};
  if (!updated.ok()) return {Classified(updated.error(), "update", what), {}};
  // Our hash on it but other content: changed behind our back. Else our intent moved on.
  (same_hash ? drift : rolling) = true;
  // An update that changed nothing keeps the resourceVersion: there is no event to wait for.
  if (GetString((*updated)["metadata"], "resourceVersion") != old_rv) {
    r.observer_.ExpectUpdated(type, name, old_rv);
  }
  if (auto lost = NotPersisted(type, name, *want, *updated)) return {*lost, {}};
  return {Outcome::Done(), std::move(*updated), /*seen=*/true};
}

std::optional<Reconciler::Outcome> Reconciler::Run::NotPersisted(const ResourceType& type,
                                                                 const std::string& name,
                                                                 const Json& desired,
                                                                 const Json& answer) {
  const std::string where = FirstMismatch(desired, answer);
  if (where.empty()) return std::nullopt;
  std::string message = type.kind + " " + name + ": the API server did not keep " + where +
                        " as written (it dropped or changed the field: one this cluster does "
                        "not know, or an admission webhook); change the spec or the cluster";
  r.RememberUnpersisted(rec, type.kind + "/" + name, OwnContentHash(answer), message);
  return Outcome::Failed("NotPersisted", std::move(message));
}

Reconciler::Outcome Reconciler::Run::EnsureGone(const ResourceType& type, const std::string& name,
                                                std::string propagation) {
  const std::string what = type.kind + " " + name;
  View view = r.observer_.Get(type, name);
  // A write the cache has not shown yet does not hold a delete up: the uid precondition is
  // all a delete needs, and the cached copy (or the create's answer) has it.
  std::string uid;
  if (view.object) {
    if (view.object->label(kProjectLabel) != rec.id) return Outcome::Done();  // not ours
    uid = view.object->uid();
  } else {
    uid = view.created_uid.empty() ? view.deleted_uid : view.created_uid;
  }
  if (uid.empty()) return Outcome::Done();
  if (view.terminating && !view.object) {
    // Deleted by us, and the cache shows nothing of it: the server says whether it is gone.
    auto got = r.client_->Get(type, ns, name);
    if (!got.ok() && !got.error().IsNotFound()) return Classified(got.error(), "get", what);
    if (!got.ok() || GetString(MemberOrNull(*got, "metadata"), "uid") != uid) {
      r.observer_.ExpectGone(type, name, uid);
      return Outcome::Done();
    }
    if (Terminating(*got)) {
      return Outcome::Wait("Terminating", what + " is terminating; waiting for it to be gone");
    }
    // Not terminating after our delete answered so: delete it again, below.
  } else if (view.terminating) {
    return Outcome::Wait("Terminating", what + " is terminating; waiting for it to be gone");
  }
  kube::DeleteOptions options;
  options.precondition_uid = uid;
  options.propagation_policy = std::move(propagation);
  if (auto crash = Hook("before", "delete", type, name)) return *crash;
  auto deleted = r.client_->Delete(type, ns, name, options);
  ++r.writes_;
  if (auto crash = Hook("after", "delete", type, name)) return *crash;
  if (!deleted.ok()) {
    if (deleted.error().IsNotFound()) {
      r.observer_.ExpectGone(type, name, uid);
      return Outcome::Done();
    }
    return Classified(deleted.error(), "delete", what);
  }
  if (deleted->gone) {
    r.observer_.ExpectGone(type, name, uid);
    return Outcome::Done();
  }
  r.observer_.ExpectTerminating(type, name, uid);
  return Outcome::Wait("Terminating", what + " is terminating; waiting for it to be gone");
}

namespace {
// How much an outcome says against the run: a crash ends it, Failed needs a new intent, Error
// is retried, Wait waits.
int Severity(Reconciler::Outcome::Kind k) {
  using K = Reconciler::Outcome::Kind;
  return k == K::kCrashed ? 3 : k == K::kFailed ? 2 : k == K::kError ? 1 : 0;
}
}  // namespace

std::optional<Reconciler::Outcome> Reconciler::Run::Hold(const std::string& resource, Outcome o) {
  if (o.done()) return std::nullopt;
  if (o.kind == Outcome::Kind::kCrashed) return o;
  Note(resource, o);
  // Failed outranks Error, which outranks Wait; among equals the first (in dependency order)
  // stays, so the status names the earliest object that is not ready yet.
  if (!held_outcome || Severity(o.kind) > Severity(held_outcome->kind)) {
    held_outcome = std::move(o);
    held_resource = resource;
  }
  return std::nullopt;
}

Reconciler::Outcome Reconciler::Run::Settle(Outcome o) {
  if (o.kind == Outcome::Kind::kCrashed) return o;
  if (held_outcome && (o.done() || Severity(held_outcome->kind) > Severity(o.kind))) {
    outcome_resource = held_resource;
    return *held_outcome;
  }
  if (!o.done() && outcome_resource.empty() && !conditions.empty()) {
    outcome_resource = conditions.back().resource;
  }
  return o;
}

Reconciler::Outcome Reconciler::Run::Unseen(const std::string& resource, const std::string& what) {
  if (held_outcome) {
    outcome_resource = held_resource;
    return *held_outcome;
  }
  outcome_resource = resource;
  return Note(resource, Outcome::Wait("ObservingWrite",
                                      what + ": created; waiting for the watch to show it before "
                                             "creating what depends on it"));
}

}  // namespace steward::engine
