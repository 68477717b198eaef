#include "engine/intents/placement.h"

#include <algorithm>
#include <map>

#include "common/fields.h"
#include "engine/model/value_rules.h"

namespace steward::engine {
namespace {

bool Carries(const StringMap& have, const StringMap& want) {
  return std::all_of(want.begin(), want.end(), [&](const auto& kv) {
    auto it = have.find(kv.first);
    return it != have.end() && it->second == kv.second;
  });
}

Status CheckClusterName(const std::string& name, const std::string& field) {
  if (name.empty() || IsDns1123Label(name)) return Status::Ok();
  return InvalidField(field,
                      "must be a cluster's name, a DNS label (got \"" + name.substr(0, 64) + "\")");
}

std::string Describe(const StringMap& labels) {
  std::string out;
  for (const auto& [k, v] : labels) out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

}  // namespace

StatusOr<PlacementRequest> TakePlacementRequest(Json& spec, std::string_view path) {
  PlacementRequest out;
  if (!spec.is_object()) return out;
  if (auto it = spec.find("cluster"); it != spec.end()) {
    const std::string field = JoinPath(path, "cluster");
    if (!it->is_null()) {
      if (!it->is_string()) {
        return InvalidField(field, "must be a string (got " + std::string(JsonTypeName(*it)) + ")");
      }
      out.cluster = it->get<std::string>();
      RETURN_IF_ERROR(CheckClusterName(out.cluster, field));
      out.strict = !out.cluster.empty();
    }
    spec.erase(it);
  }
  if (auto it = spec.find("placement"); it != spec.end()) {
    const std::string field = JoinPath(path, "placement");
    ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(*it, field));
    RETURN_IF_ERROR(f.OnlyKnown({"cluster", "labels"}));
    std::string preferred;
    RETURN_IF_ERROR(f.String("cluster", &preferred));
    RETURN_IF_ERROR(CheckClusterName(preferred, f.PathOf("cluster")));
    if (!preferred.empty() && !out.cluster.empty() && preferred != out.cluster) {
      return InvalidField(f.PathOf("cluster"), "is not spec.cluster (\"" + out.cluster + "\")");
    }
    if (out.cluster.empty()) out.cluster = preferred;
    RETURN_IF_ERROR(f.StringMap("labels", &out.labels));
    RETURN_IF_ERROR(internal::CheckLabels(out.labels, f.PathOf("labels"), false));
    spec.erase(it);
  }
  return out;
}

Placement::Placement(std::vector<ClusterTarget> clusters, PlacementPolicy policy,
                     store::Store& store)
    : clusters_(std::move(clusters)), policy_(std::move(policy)), store_(store) {}

const ClusterTarget* Placement::Find(std::string_view cluster) const {
  for (const ClusterTarget& c : clusters_) {
    if (c.name == cluster) return &c;
  }
  return nullptr;
}

StatusOr<const ClusterTarget*> Placement::Named(std::string_view cluster,
                                                std::string_view field) const {
  if (const ClusterTarget* c = Find(cluster)) return c;
  std::string known;
  for (const ClusterTarget& c : clusters_) known += (known.empty() ? "" : ", ") + c.name;
  return InvalidField(
      field, "no cluster \"" + std::string(cluster) + "\" is configured (known: " + known + ")");
}

Status Placement::CheckRoom(const ClusterTarget& c) {
  if (c.capacity <= 0) return Status::Ok();
  ASSIGN_OR_RETURN(auto load, store_.CountByCluster());
  if (load[c.name] < c.capacity) return Status::Ok();
  return FailedPrecondition("cluster " + c.name + " is full (" + std::to_string(c.capacity) +
                            " records: its capacity)");
}

StatusOr<const ClusterTarget*> Placement::Place(const PlacementRequest& request,
                                                std::string_view team) {
  StringMap want = policy_.required_labels;
  for (const auto& [k, v] : request.labels) want[k] = v;
  if (!request.cluster.empty()) {
    ASSIGN_OR_RETURN(const ClusterTarget* named, Named(request.cluster, "spec.cluster"));
    if (!Carries(named->labels, want)) {
      return InvalidField("spec.cluster", "cluster " + named->name + " lacks the labels " +
                                              Describe(want) + " placement requires");
    }
    if (Status room = CheckRoom(*named); !room.ok()) {
      if (room.code() != StatusCode::kFailedPrecondition) return room;
      return FailedPrecondition("spec.cluster: " + room.message());
    }
    return named;
  }
  std::vector<const ClusterTarget*> eligible;
  for (const ClusterTarget& c : clusters_) {
    if (Carries(c.labels, want)) eligible.push_back(&c);
  }
  if (eligible.empty()) {
    return FailedPrecondition("spec.placement: no configured cluster carries the labels " +
                              Describe(want));
  }
  std::map<std::string, int64_t> load;
  if (eligible.size() > 1 || eligible[0]->capacity > 0) {
    ASSIGN_OR_RETURN(load, store_.CountByCluster());
  }
  auto has_room = [&](const ClusterTarget* c) {
    return c->capacity == 0 || load[c->name] < c->capacity;
  };
  if (policy_.team_affinity && eligible.size() > 1) {
    store::ListFilter f;
    f.team = std::string(team);
    ASSIGN_OR_RETURN(auto mates, store_.ListProjects(f));
    std::map<std::string, int64_t> held;
    for (const auto& r : mates) {
      if (r.desired != store::DesiredState::kDeleted) ++held[r.cluster];
    }
    const ClusterTarget* home = nullptr;
    for (const ClusterTarget* c : eligible) {
      if (held[c->name] > 0 && has_room(c) &&
          (home == nullptr || held[c->name] > held[home->name])) {
        home = c;
      }
    }
    if (home != nullptr) return home;
  }
  // Least loaded: records over capacity (a cluster without a limit counts its records over the
  // largest capacity configured, or as a plain count when none is).
  int64_t largest = 1;
  for (const ClusterTarget* c : eligible) largest = std::max(largest, c->capacity);
  const ClusterTarget* best = nullptr;
  double best_fill = 0;
  for (const ClusterTarget* c : eligible) {
    if (!has_room(c)) continue;
    const double fill = static_cast<double>(load[c->name]) /
                        static_cast<double>(c->capacity > 0 ? c->capacity : largest);
    if (best == nullptr || fill < best_fill) {
      best = c;
      best_fill = fill;
    }
  }
  if (best == nullptr) {
    return FailedPrecondition("spec.placement: every cluster that matches (" +
                              std::to_string(eligible.size()) + ") is at its capacity");
  }
  return best;
}

}  // namespace steward::engine
