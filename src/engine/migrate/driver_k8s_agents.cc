// The MQTT schema agents of a driver-k8s namespace (driver_k8s.h): found, mapped onto Steward's
// agent spec, compared with what RenderAgent renders, and the steps that hand them over.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/json_access.h"
#include "common/sha256.h"
#include "engine/manifests/manifests.h"
#include "engine/migrate/driver_k8s.h"
#include "engine/migrate/driver_k8s_internal.h"
#include "engine/model/agent.h"

namespace steward::engine::migrate::internal {
namespace {

using kube::ResourceType;

constexpr std::string_view kAgentPrefix = "mqtt-schema-agent-";
constexpr std::string_view kAgentContainer = "mqtt-schema-agent";

// An id of the layout Steward gives agents (a UUID v4's), from the uid of the driver's object:
// the same on every run, so a dry run shows the id the real run labels the objects with.
std::string DerivedId(const std::string& uid) {
  std::string h = Sha256Hex("steward migrate --from driver-k8s: agent " + uid).substr(0, 32);
  h[12] = '4';
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20, 12);
}

// Written by Steward's engine (sealed with its spec hash), not only relabelled by a migration.
bool StewardRendered(const Json& obj) { return !AnnotationOf(obj, kSpecHashAnnotation).empty(); }

// A pod no controller owns (driver-k8s before v2.31.0 created the agent as one).
bool BarePod(const Json& pod) {
  const Json& owners = PathOrNull(pod, "metadata.ownerReferences");
  return !owners.is_array() || owners.empty();
}

// The driver's agent is (meant to be) running.
bool PodRunning(const Json& pod) {
  const std::string phase = StringAtPath(pod, "status.phase");
  return phase != "Failed" && phase != "Succeeded" &&
         PathOrNull(pod, "metadata.deletionTimestamp").is_null();
}

struct MappedAgent {
  std::string team, broker, token;
  std::string error;
};

// Team, broker and token from the object driver-k8s rendered the agent's pod from: a
// Deployment (its labels, its pod template's container) or a bare Pod.
MappedAgent MapAgent(const std::string& kind, const Json& obj) {
  MappedAgent m;
  const std::string what = kind + " " + NameOf(obj);
  const std::string spec_path = kind == "Pod" ? "spec" : "spec.template.spec";
  auto fail = [&](std::string why) {
    m.error = what + ": " + std::move(why);
    return m;
  };
  const Json& containers = PathOrNull(obj, spec_path + ".containers");
  if (!containers.is_array() || containers.empty()) return fail("has no containers");
  const Json* c = ByName(containers, std::string(kAgentContainer));
  if (c == nullptr) c = &containers[0];
  const std::string cpath = spec_path + ".containers[" + GetString(*c, "name") + "]";
  std::map<std::string, std::string> env;
  for (const Json& e : MemberOrNull(*c, "env").is_array() ? (*c)["env"] : Json::array()) {
    const std::string n = GetString(e, "name");
    if (n == "FORGE_TEAM_TOKEN" && e.contains("valueFrom")) {
      return fail(cpath + ".env[FORGE_TEAM_TOKEN]: not a plain value (valueFrom)");
    }
    if (!e.contains("valueFrom")) env[n] = GetString(e, "value");
  }
  auto get = [&](const std::string& k) {
    auto it = env.find(k);
    return it == env.end() ? std::string() : it->second;
  };
  m.token = get("FORGE_TEAM_TOKEN");
  if (m.token.empty()) return fail(cpath + ".env[FORGE_TEAM_TOKEN]: missing");
  // The labels say which team and broker; the env the pod runs with must agree.
  for (const auto& [label, env_name, out] : {std::tuple{"team", "FORGE_TEAM_ID", &m.team},
                                             std::tuple{"broker", "FORGE_BROKER_ID", &m.broker}}) {
    const std::string from_label = LabelOf(obj, label);
    const std::string from_env = get(env_name);
    if (!from_label.empty() && !from_env.empty() && from_label != from_env) {
      return fail(std::string("label ") + label + " (" + from_label + ") is not " + cpath +
                  ".env[" + env_name + "] (" + from_env + ")");
    }
    *out = from_label.empty() ? from_env : from_label;
    if (out->empty()) {
      return fail(std::string("no label ") + label + " and no " + cpath + ".env[" + env_name + "]");
    }
  }
  return m;
}

FoundObject Found(const std::string& kind, const Json& obj, const std::string& id) {
  return {kind, NameOf(obj), StringAtPath(obj, "metadata.uid"), !Ours(obj, id) || Marked(obj),
          Marked(obj)};
}

// The differences of the Deployment (keeping its selector as the engine does) and the Service,
// and the rollout they cause. False (with a->error) when the live selector cannot be kept.
bool DiffAgent(const AgentManifests& want, const std::optional<Json>& dep,
               const std::optional<Json>& svc, AgentPlan* a) {
  if (dep) {
    Json desired = want.deployment;
    if (SelectorKept(desired, *dep)) {
      desired["spec"]["selector"] = (*dep)["spec"]["selector"];
    } else if (PathOrNull(*dep, "spec.selector") != PathOrNull(desired, "spec.selector")) {
      a->error = "Deployment " + a->name +
                 ": spec.selector does not select the pods Steward renders (it is immutable)";
      return false;
    }
    const std::vector<std::string> d = ObjectDiff(desired, *dep);
    for (const std::string& path : d) a->differs.push_back("Deployment " + a->name + ": " + path);
    if (RollsPods(d)) a->rollout = "rolling";
  } else {
    a->create.push_back("Deployment " + a->name);
    a->rollout = "replace";
  }
  if (svc) {
    for (const std::string& path : ObjectDiff(want.service, *svc)) {
      a->differs.push_back("Service " + a->name + ": " + path);
    }
  } else {
    a->create.push_back("Service " + a->name);
  }
  return true;
}

// Plans one agent from what is there under its name: the driver's Deployment (or Steward's,
// on a rerun), its bare Pod (older drivers), its Service.
void PlanAgent(const EngineConfig& config, const std::optional<Json>& dep,
               const std::optional<Json>& pod, const std::optional<Json>& svc, AgentPlan& a) {
  auto fail = [&](std::string why) {
    a.action = AgentPlan::Action::kError;
    a.error = std::move(why);
  };
  // Whose the objects are in Steward's terms: nobody's, or one id for all.
  std::string owner;
  if (dep) owner = LabelOf(*dep, kProjectLabel);
  if (svc) {
    const std::string o = LabelOf(*svc, kProjectLabel);
    if (!o.empty() && !owner.empty() && o != owner) {
      return fail("Service " + a.name + ": labelled steward.io/project=" + o +
                  ", its Deployment steward.io/project=" + owner);
    }
    if (owner.empty()) owner = o;
  }
  if (dep && !pod && Ours(*dep, owner) && (!Marked(*dep) || StewardRendered(*dep))) {
    a.action = AgentPlan::Action::kManaged;
    a.id = owner;
    a.objects.push_back(Found("Deployment", *dep, owner));
    a.objects.back().relabel = false;
    // A run that stopped before ClearMarkers may have left the marker where the engine did not
    // write since.
    if (svc && Ours(*svc, owner) && Marked(*svc)) {
      a.objects.push_back(Found("Service", *svc, owner));
      a.objects.back().relabel = false;
    }
    return;
  }
  // Steward's own Deployment (a rerun after the put) holds the token by reference; the bare Pod
  // it is replacing still has it as a value.
  const bool from_dep = dep && !(pod && StewardRendered(*dep));
  const std::string kind = from_dep ? "Deployment" : "Pod";
  const Json& source = from_dep ? *dep : *pod;
  a.id = owner.empty() ? DerivedId(StringAtPath(source, "metadata.uid")) : owner;
  if (Status s = ValidateProjectId(a.id); !s.ok()) {
    return fail(kind + " " + a.name + ": label steward.io/project: " + s.message());
  }
  MappedAgent m = MapAgent(kind, source);
  if (!m.error.empty()) return fail(m.error);
  a.team = m.team;
  a.broker = m.broker;
  Json request = {{"team", m.team}, {"broker", m.broker}, {"credentials", {{"token", m.token}}}};
  CredentialsInput input;
  auto parsed = ParseAgentSpec(request, "spec", &input);
  if (!parsed.ok()) return fail(kind + " " + a.name + ": maps to " + parsed.error().message());
  auto want_name = AgentName(*parsed);
  if (!want_name.ok() || *want_name != a.name) {
    return fail(kind + " " + a.name + ": not the name Steward gives the agent of team " + m.team +
                " and broker " + m.broker +
                (want_name.ok() ? " (" + *want_name + ")" : ": " + want_name.error().message()));
  }
  a.spec = std::move(request);
  a.public_spec = ToJson(*parsed);

  if (dep) {
    const Json& replicas = PathOrNull(*dep, "spec.replicas");
    a.start = !replicas.is_number_integer() || replicas.get<int64_t>() > 0;
    if (!a.start) a.stopped = "Deployment " + a.name + " has spec.replicas 0";
  } else {
    a.start = PodRunning(*pod);
    if (!a.start) {
      a.stopped = "Pod " + a.name + " is " +
                  (PathOrNull(*pod, "metadata.deletionTimestamp").is_null()
                       ? StringAtPath(*pod, "status.phase")
                       : std::string("terminating"));
    }
  }
  if (dep) a.objects.push_back(Found("Deployment", *dep, a.id));
  if (svc) a.objects.push_back(Found("Service", *svc, a.id));
  if (pod)
    a.bare_pod = FoundObject{"Pod", a.name, StringAtPath(*pod, "metadata.uid"), false, false};

  const AgentManifests want = RenderAgent(a.id, a.name, &config, *parsed, 0);
  a.create.insert(a.create.begin(), "Secret " + want.secret);
  if (!DiffAgent(want, dep, svc, &a)) return fail(a.error);
  if (!a.start) a.rollout = "remove";
}

}  // namespace

Status PlanAgents(const kube::Client& client, std::string_view ns, const EngineConfig& config,
                  const std::map<std::string, Json>& services, Plan* plan) {
  auto list = [&](const ResourceType& type,
                  const std::string& selector) -> StatusOr<std::vector<Json>> {
    kube::ListOptions options;
    options.label_selector = selector;
    auto got = client.ListAll(type, ns, options);
    if (!got.ok()) {
      return Status(got.error().ToStatus().code(), "list " + type.GroupResource() + " in " +
                                                       std::string(ns) + ": " +
                                                       got.error().ToString());
    }
    return std::move(got->items);
  };
  // Both kinds of object an agent may have, by its name.
  std::map<std::string, std::pair<std::optional<Json>, std::optional<Json>>> agents;
  ASSIGN_OR_RETURN(std::vector<Json> deployments,
                   list(ResourceType::Deployment(), "mqttSchemaAgent=true"));
  for (Json& d : deployments) agents[NameOf(d)].first = std::move(d);
  // Before v2.31.0 the pod had no label mqttSchemaAgent; it always had team and broker.
  ASSIGN_OR_RETURN(std::vector<Json> pods, list(ResourceType::Pod(), "team,broker"));
  for (Json& p : pods) {
    const std::string name = NameOf(p);
    if (name.starts_with(kAgentPrefix) && BarePod(p)) agents[name].second = std::move(p);
  }
  for (auto& [name, objects] : agents) {
    AgentPlan a;
    a.name = name;
    auto svc = services.find(name);
    PlanAgent(config, objects.first, objects.second,
              svc == services.end() ? std::nullopt : std::optional<Json>(svc->second), a);
    plan->agents.push_back(std::move(a));
  }
  for (const auto& [name, svc] : services) {
    if (!name.starts_with(kAgentPrefix) || agents.contains(name)) continue;
    if (LabelOf(svc, "team").empty() || LabelOf(svc, "broker").empty()) continue;
    if (!LabelOf(svc, kProjectLabel).empty()) continue;  // Steward's (a stopped agent's)
    plan->skipped.push_back("Service " + name +
                            ": an agent's Service without its Deployment or Pod (driver-k8s "
                            "recreates those at its next start while the broker runs); start the "
                            "agent with driver-k8s, then migrate");
  }
  return Status::Ok();
}

Json AgentsJson(const Plan& plan) {
  Json agents = Json::array();
  for (const AgentPlan& a : plan.agents) {
    Json j = {{"name", a.name}, {"id", a.id}, {"action", ActionName(a.action)}};
    if (a.action == AgentPlan::Action::kError) {
      j["error"] = a.error;
      agents.push_back(std::move(j));
      continue;
    }
    AddAdoption(a.objects, &j);
    if (a.action == AgentPlan::Action::kMigrate) {
      j["team"] = a.team;
      j["broker"] = a.broker;
      j["start"] = a.start;
      if (!a.start) j["stopped"] = a.stopped;
      j["spec"] = a.public_spec;
      Json replace = Json::array();
      if (a.bare_pod) {
        replace.push_back(
            {{"kind", a.bare_pod->kind}, {"name", a.bare_pod->name}, {"uid", a.bare_pod->uid}});
      }
      j["replace"] = std::move(replace);
      j["create"] = a.create;
      j["differs"] = a.differs;
      j["rollout"] = a.rollout;
    }
    agents.push_back(std::move(j));
  }
  return agents;
}

std::string AgentsText(const Plan& plan) {
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
    return out.empty() ? std::string("(none)") : out;
  };
  std::string out;
  for (const AgentPlan& a : plan.agents) {
    out += "agent " + a.name;
    if (a.action == AgentPlan::Action::kError) {
      out += ": error\n  error    " + a.error + " (nothing is changed for it)\n";
      continue;
    }
    if (a.action == AgentPlan::Action::kManaged) {
      out += " (id " + a.id + "): managed, already Steward's: nothing to do\n";
      continue;
    }
    out += " (team " + a.team + ", broker " + a.broker + ", id " + a.id + "): migrate\n";
    std::vector<std::string> adopt, relabel;
    for (const FoundObject& o : a.objects) {
      adopt.push_back(o.kind + " " + o.name);
      if (o.relabel) relabel.push_back(o.kind + " " + o.name);
    }
    out += "  adopt    " + join(adopt) + "\n";
    out += "  relabel  " + join(relabel) + "\n";
    out += "  create   " + join(a.create) + "\n";
    if (a.bare_pod) {
      out += "  replace  Pod " + a.bare_pod->name +
             " (driver-k8s before v2.31.0): deleted once Steward reports the agent " +
             (a.start ? "Running" : "Suspended") + "\n";
    }
    for (const std::string& d : a.differs) out += "  differs  " + d + "\n";
    out += "  rollout  " + a.rollout + "\n";
    out += "  start    " +
           (a.start ? std::string("yes")
                    : "no (" + a.stopped +
                          "): put stopped; Steward removes its Deployment and Service and "
                          "keeps the token's Secret") +
           "\n";
  }
  return out;
}

}  // namespace steward::engine::migrate::internal

namespace steward::engine::migrate {

Status Relabel(const kube::Client& client, std::string_view ns, const AgentPlan& agent) {
  return internal::RelabelObjects(client, ns, agent.id, agent.objects);
}

Status ClearMarkers(const kube::Client& client, std::string_view ns, const AgentPlan& agent) {
  return internal::ClearObjectMarkers(client, ns, agent.objects);
}

Status CheckAdopted(const kube::Client& client, std::string_view ns, const AgentPlan& agent) {
  for (const FoundObject& o : agent.objects) {
    auto live = client.Get(internal::TypeOf(o.kind), ns, o.name);
    if (!live.ok()) {
      if (live.error().IsNotFound()) {
        return FailedPrecondition(o.kind + " " + o.name + " (uid " + o.uid +
                                  ") is gone: it was not adopted");
      }
      return live.error().ToStatus();
    }
    const std::string uid = StringAtPath(*live, "metadata.uid");
    if (uid != o.uid) {
      return FailedPrecondition(o.kind + " " + o.name + " has uid " + uid + ", not the adopted " +
                                o.uid + ": it was re-created");
    }
  }
  return Status::Ok();
}

StatusOr<bool> DeleteBarePod(const kube::Client& client, std::string_view ns,
                             const AgentPlan& agent) {
  if (!agent.bare_pod) return true;
  kube::DeleteOptions options;
  options.precondition_uid = agent.bare_pod->uid;
  auto deleted = client.Delete(kube::ResourceType::Pod(), ns, agent.bare_pod->name, options);
  if (!deleted.ok()) {
    // Absent, or the name is another pod's now (the uid precondition failed): not ours to touch.
    if (deleted.error().IsNotFound() || deleted.error().IsConflict()) return true;
    return Status(deleted.error().ToStatus().code(),
                  "Pod " + agent.bare_pod->name + ": " + deleted.error().ToString());
  }
  return deleted->gone;
}

StatusOr<bool> BarePodGone(const kube::Client& client, std::string_view ns,
                           const AgentPlan& agent) {
  if (!agent.bare_pod) return true;
  auto live = client.Get(kube::ResourceType::Pod(), ns, agent.bare_pod->name);
  if (!live.ok()) {
    if (live.error().IsNotFound()) return true;
    return live.error().ToStatus();
  }
  return StringAtPath(*live, "metadata.uid") != agent.bare_pod->uid;
}

}  // namespace steward::engine::migrate
