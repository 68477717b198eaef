// Intents::Move: a project placed on another cluster (intents.h says what is promised). The
// engines do the rest: the new cluster's starts it (after the old one has nothing left, or at
// once with startFirst), the old cluster's removes what it has and then ends the move
// (engine/reconciler: Reconciler::Depart).
#include <utility>

#include "common/fields.h"
#include "common/json_access.h"
#include "engine/intents/intents.h"
#include "engine/intents/intents_internal.h"

namespace steward::engine {
namespace {

using store::ProjectRecord;

using store::kMoveStartFirst;
using store::kMoveStopFirst;

Status CheckRequest(const Intents::MoveRequest& request) {
  if (request.cluster.empty()) return InvalidField("cluster", "is required");
  if (!request.order.empty() && request.order != kMoveStopFirst &&
      request.order != kMoveStartFirst) {
    return InvalidField("order", "must be \"stopFirst\" or \"startFirst\"");
  }
  if (!request.storage.empty() && request.storage != "drop") {
    return InvalidField("storage",
                        "must be \"drop\" (volumes do not cross clusters: the data stays behind "
                        "and is deleted with the old cluster's claim)");
  }
  return Status::Ok();
}

// A second move while one is under way: only back to the cluster it comes from (then the
// cluster it is on becomes the one it leaves), or to the same cluster (its order may change).
Status RefuseOtherMove(const ProjectRecord& r, std::string_view to) {
  if (r.moving_from.empty() || r.moving_from == to || r.cluster == to) return Status::Ok();
  return FailedPrecondition("project " + r.name + " is moving from cluster " + r.moving_from +
                            " to " + r.cluster + "; a move to " + std::string(to) +
                            " can follow once cluster " + r.moving_from +
                            " has removed its objects (its history says when)");
}

// The record as Move found it, for the checks made outside the transaction.
Status RefuseChangedMeanwhile(const ProjectRecord& now, const ProjectRecord& checked) {
  if (now.cluster == checked.cluster && now.moving_from == checked.moving_from &&
      now.spec_json == checked.spec_json && now.name == checked.name) {
    return Status::Ok();
  }
  return Aborted("project " + now.name + " changed while its move was checked; send it again");
}

}  // namespace

StatusOr<ProjectRecord> Intents::Move(std::string_view id_or_name, const MoveRequest& request) {
  RETURN_IF_ERROR(CheckRequest(request));
  ASSIGN_OR_RETURN(ProjectRecord found, Find(id_or_name));
  RETURN_IF_ERROR(intents_internal::RefuseIfDeleting(found));
  if (placement_ == nullptr) {  // one cluster: a move can only be to it
    if (request.cluster != kDefaultCluster) {
      return InvalidField("cluster",
                          "no cluster \"" + request.cluster + "\" is configured (known: default)");
    }
    return found;
  }
  ASSIGN_OR_RETURN(const ClusterTarget* to, placement_->Named(request.cluster, "cluster"));
  RETURN_IF_ERROR(RefuseOtherMove(found, request.cluster));
  if (found.cluster == request.cluster) return ReorderMove(found, request.order);
  // Null when the configuration no longer lists the record's cluster: no engine clears it then.
  const ClusterTarget* from = placement_->Find(found.cluster);

  const EngineConfig& from_config = ConfigOf(found.cluster);
  const EngineConfig& to_config = *to->config;
  auto spec_json = ParseJson(found.spec_json);
  ASSIGN_OR_RETURN(ProjectSpec spec, spec_json.ok() ? ParseProjectSpec(*spec_json)
                                                    : StatusOr<ProjectSpec>(spec_json.error()));
  const ResolvedSpec before = Resolve(from_config, found.name, spec);
  if (before.storage && request.storage != "drop") {
    return FailedPrecondition(
        "project " + found.name + " has storage (a claim on cluster " + found.cluster +
        "); volumes do not cross clusters: move it with storage \"drop\" to leave its data "
        "behind, deleted with the claim");
  }
  // The URL's host is kept: pinned as spec.url when the new cluster would give another one
  // (its domain differs), with the new cluster's port (its ingress's; none for the standard one).
  const std::optional<UrlParts> was = SplitInstanceUrl(before.url);
  const bool pin =
      spec.url.empty() && was && Resolve(to_config, found.name, spec).host != was->host;
  if (pin) {
    spec.url = was->scheme + "://" + was->host +
               (to_config.url_port != 0 ? ":" + std::to_string(to_config.url_port) : "");
  }
  if (Status s = CheckSpecPolicy(to_config, spec); !s.ok()) {
    return FailedPrecondition("cluster " + to->name +
                              " refuses the project's spec: " + s.message());
  }
  if (was) {
    if (Status s = CheckCustomHostnamePolicy(to_config, found.name, spec, {was->host}); !s.ok()) {
      return FailedPrecondition("cluster " + to->name +
                                " refuses the project's URL: " + s.message());
    }
  }
  RETURN_IF_ERROR(placement_->CheckRoom(*to));
  // Supplied credentials live only in the old cluster's Secret: copied before the commit.
  std::string created;
  if (spec.credentials) {
    if (from == nullptr || from->vault == nullptr || to->vault == nullptr) {
      return FailedPrecondition("the project's supplied credentials cannot be copied to cluster " +
                                to->name);
    }
    auto values = from->vault->Get(found.id, *spec.credentials);
    if (!values.ok()) {
      return Status(values.error().code(),
                    "the project's supplied credentials are in a Secret on cluster " +
                        found.cluster + " (" + values.error().message() +
                        "), where they live only: move it once that cluster answers");
    }
    ASSIGN_OR_RETURN(created, to->vault->Put(found.id, found.name, *values));
  }
  const std::string order = request.order.empty() ? std::string(kMoveStopFirst) : request.order;
  auto moved = store_.MutateProject(
      found.id, [&](ProjectRecord& r, const auto&, store::Mutation& m) -> Status {
        RETURN_IF_ERROR(intents_internal::RefuseIfDeleting(r));
        RETURN_IF_ERROR(RefuseChangedMeanwhile(r, found));
        Json detail{{"from", r.cluster}, {"to", to->name}, {"order", order}};
        if (!request.storage.empty()) detail["storage"] = request.storage;
        if (pin) detail["url"] = spec.url;
        // A cluster the configuration no longer lists has no engine to clear it: nothing waits
        // for it (what is left there is the operator's, as the cluster is).
        if (from == nullptr) detail["unmanaged"] = true;
        r.moving_from = from != nullptr ? r.cluster : "";
        r.cluster = to->name;
        r.move_order = from != nullptr ? order : "";
        r.spec_json = DumpJson(ToJson(spec));
        ++r.generation;
        intents_internal::MarkAccepted(r);
        m.hostnames = ProjectClaims(to_config, r.id, r.name, spec);
        m.history.push_back(intents_internal::Operation("move", r.generation, std::move(detail)));
        return Status::Ok();
      });
  if (!moved.ok()) {
    if (!created.empty()) to->vault->Discard(found.id, spec.credentials->fingerprint, created);
    return moved.error();
  }
  Notify(*moved);
  return moved;
}

StatusOr<ProjectRecord> Intents::ReorderMove(const ProjectRecord& found, const std::string& order) {
  if (found.moving_from.empty() || order.empty() || order == found.move_order) return found;
  bool changed = false;
  ASSIGN_OR_RETURN(ProjectRecord rec,
                   store_.MutateProject(
                       found.id, [&](ProjectRecord& r, const auto&, store::Mutation& m) -> Status {
                         RETURN_IF_ERROR(intents_internal::RefuseIfDeleting(r));
                         RETURN_IF_ERROR(RefuseChangedMeanwhile(r, found));
                         r.move_order = order;
                         ++r.generation;
                         intents_internal::MarkAccepted(r);
                         m.history.push_back(intents_internal::Operation(
                             "move", r.generation,
                             Json{{"from", r.moving_from}, {"to", r.cluster}, {"order", order}}));
                         changed = true;
                         return Status::Ok();
                       }));
  if (changed) Notify(rec);
  return rec;
}

}  // namespace steward::engine
