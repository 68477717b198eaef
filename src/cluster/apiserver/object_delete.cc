// ObjectApi's deletes: preconditions, propagation policies as the orphan and foregroundDeletion
// finalizers, a pod's grace period (a second delete may shorten it), a namespace's
// Terminating phase; deletes of a list; and the forced removal the controllers use.
#include <chrono>

#include "cluster/apiserver/object_api.h"
#include "cluster/apiserver/object_meta.h"
#include "common/json_access.h"
#include "common/time_util.h"

namespace steward::cluster {

using namespace objectmeta;  // NOLINT: the helpers of every write path

ApiResult<Json> ObjectApi::Delete(const ResourceType& rt, std::string_view ns,
                                  std::string_view name, const DeleteOptions& opts) {
  std::string_view scope_ns = rt.namespaced ? ns : "";
  const std::string& policy = opts.propagation_policy;
  if (!policy.empty() && policy != "Orphan" && policy != "Background" && policy != "Foreground") {
    StatusError e = InvalidError(rt, name,
                                 {{"FieldValueNotSupported",
                                   "Unsupported value: \"" + policy +
                                       "\": supported values: \"Foreground\", \"Background\", "
                                       "\"Orphan\"",
                                   "propagationPolicy"}});
    return e;
  }
  if (opts.grace_period_seconds && *opts.grace_period_seconds < 0) {
    return BadRequestError("gracePeriodSeconds must be a non-negative integer");
  }
  if (rt.kind == "Namespace" &&
      (name == "default" || name == "kube-system" || name == "kube-public")) {
    StatusError e = ForbiddenError("namespaces \"" + std::string(name) +
                                   "\" is forbidden: this namespace may not be deleted");
    e.name = std::string(name);
    e.kind = "namespaces";
    return e;
  }
  ErrorHolder holder;
  Json last;
  auto result = storage_.Mutate(
      rt.GroupResource(), scope_ns, name,
      [&](const ObjectRecord* current) -> StatusOr<Storage::Mutation> {
        if (current == nullptr) return holder.Raise(NotFoundError(rt, name));
        Json old = current->Parse();
        last = old;
        const Json& meta = old["metadata"];
        if (opts.precondition_uid && *opts.precondition_uid != GetString(meta, "uid")) {
          return holder.Raise(
              ConflictError(rt, name,
                            "Precondition failed: UID in precondition: " + *opts.precondition_uid +
                                ", UID in object meta: " + GetString(meta, "uid")));
        }
        if (opts.precondition_resource_version &&
            *opts.precondition_resource_version != ResourceVersionOf(old)) {
          return holder.Raise(
              ConflictError(rt, name,
                            "Precondition failed: ResourceVersion in precondition: " +
                                *opts.precondition_resource_version +
                                ", ResourceVersion in meta: " + ResourceVersionOf(old)));
        }
        if (opts.dry_run) return Storage::Mutation::Noop();
        Json next = old;
        auto finalizers = Finalizers(old);
        if (policy == "Orphan") {
          AddFinalizer(finalizers, kOrphanFinalizer);
          RemoveFinalizer(finalizers, kForegroundFinalizer);
        } else if (policy == "Foreground") {
          AddFinalizer(finalizers, kForegroundFinalizer);
          RemoveFinalizer(finalizers, kOrphanFinalizer);
        } else if (policy == "Background") {
          RemoveFinalizer(finalizers, kOrphanFinalizer);
          RemoveFinalizer(finalizers, kForegroundFinalizer);
        }
        bool deleting = HasDeletionTimestamp(old);
        if (deleting) {
          bool changed = finalizers != Finalizers(old);
          SetFinalizers(next, finalizers);
          // A second delete of a terminating pod may shorten its grace period (--force).
          const Json& cur_grace = MemberOrNull(old["metadata"], "deletionGracePeriodSeconds");
          if (rt.kind == "Pod" && opts.grace_period_seconds && cur_grace.is_number_integer() &&
              *opts.grace_period_seconds < cur_grace.get<int64_t>()) {
            next["metadata"]["deletionGracePeriodSeconds"] = *opts.grace_period_seconds;
            next["metadata"]["deletionTimestamp"] =
                FormatRfc3339(clock_.WallNow() + std::chrono::seconds(*opts.grace_period_seconds));
            changed = true;
          }
          if (!changed) return Storage::Mutation::Noop();
          next["metadata"]["resourceVersion"] = ResourceVersionOf(old);
          if (IsRemovable(rt, next)) return Storage::Mutation::Delete();
          return Storage::Mutation::Put(std::move(next));
        }
        int64_t grace = 0;
        if (rt.kind == "Pod") {
          const Json& spec = MemberOrNull(old, "spec");
          const Json& tgps = MemberOrNull(spec, "terminationGracePeriodSeconds");
          grace = opts.grace_period_seconds ? *opts.grace_period_seconds
                                            : (tgps.is_number_integer() ? tgps.get<int64_t>() : 30);
          std::string phase = GetString(MemberOrNull(old, "status"), "phase");
          if (GetString(spec, "nodeName").empty() || phase == "Succeeded" || phase == "Failed") {
            grace = 0;
          }
        }
        bool namespace_finalizer = rt.kind == "Namespace";
        if (finalizers.empty() && grace == 0 && !namespace_finalizer) {
          return Storage::Mutation::Delete();
        }
        SetFinalizers(next, finalizers);
        auto now = clock_.WallNow();
        next["metadata"]["deletionTimestamp"] = FormatRfc3339(now + std::chrono::seconds(grace));
        next["metadata"]["deletionGracePeriodSeconds"] = grace;
        if (GenerationOf(old) > 0) next["metadata"]["generation"] = GenerationOf(old) + 1;
        if (namespace_finalizer) next["status"]["phase"] = "Terminating";
        return Storage::Mutation::Put(std::move(next));
      });
  if (!result.ok()) {
    if (holder.error) return *holder.error;
    return InternalError(result.status().message());
  }
  if (result->applied == Storage::Mutation::Kind::kDelete || opts.dry_run) {
    if (!opts.dry_run) OnRemoved(rt, last);
    if (opts.dry_run && HasDeletionTimestamp(last)) return last;
    Json details = {{"name", std::string(name)},
                    {"kind", rt.resource},
                    {"uid", GetString(last["metadata"], "uid")}};
    if (!rt.group.empty()) details["group"] = rt.group;
    return Json{{"kind", "Status"},
                {"apiVersion", "v1"},
                {"metadata", Json::object()},
                {"status", "Success"},
                {"details", std::move(details)}};
  }
  if (!result->object) return InternalError("object vanished during delete");
  return result->object->Parse();
}

ApiResult<Json> ObjectApi::DeleteCollection(const ResourceType& rt, std::string_view ns,
                                            const ListOptions& list_opts,
                                            const DeleteOptions& opts) {
  auto records = ListRecords(rt, ns, list_opts);
  if (!records.ok()) return std::move(records).error();
  Json items = Json::array();
  for (const auto& rec : records->items) {
    auto deleted = Delete(rt, rec.ns, rec.name, opts);
    if (deleted.ok()) {
      items.push_back(GetString(*deleted, "kind") == "Status" ? rec.Parse() : *deleted);
    } else if (deleted.error().code != 404) {
      return std::move(deleted).error();
    }
  }
  return Json{{"kind", rt.ListKind()},
              {"apiVersion", rt.ApiVersion()},
              {"metadata", {{"resourceVersion", std::to_string(storage_.CurrentRevision())}}},
              {"items", std::move(items)}};
}

ApiResult<bool> ObjectApi::ForceRemove(const ResourceType& rt, std::string_view ns,
                                       std::string_view name, std::string_view uid) {
  Json removed_object;
  auto result = storage_.Mutate(rt.GroupResource(), rt.namespaced ? ns : "", name,
                                [&](const ObjectRecord* current) -> StatusOr<Storage::Mutation> {
                                  if (current == nullptr) return Storage::Mutation::Noop();
                                  Json old = current->Parse();
                                  if (!uid.empty() && GetString(old["metadata"], "uid") != uid) {
                                    return Storage::Mutation::Noop();
                                  }
                                  removed_object = std::move(old);
                                  return Storage::Mutation::Delete();
                                });
  if (!result.ok()) return InternalError(result.status().message());
  bool removed = result->applied == Storage::Mutation::Kind::kDelete;
  if (removed) OnRemoved(rt, removed_object);
  return removed;
}

}  // namespace steward::cluster
