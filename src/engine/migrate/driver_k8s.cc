#include "engine/migrate/driver_k8s.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "common/json_access.h"
#include "engine/manifests/manifests.h"
#include "engine/migrate/driver_k8s_internal.h"

namespace steward::engine::migrate {

using internal::ActionName;
using internal::AddAdoption;
using internal::ByName;
using internal::Marked;
using internal::NameOf;
using internal::ObjectDiff;
using internal::Ours;
using internal::RollsPods;
using internal::SelectorKept;
using internal::TypeOf;
using kube::ResourceType;

namespace {

const ResourceType& kDeployment = ResourceType::Deployment();
const ResourceType& kService = ResourceType::Service();
const ResourceType& kIngress = ResourceType::Ingress();
const ResourceType& kPvc = ResourceType::PersistentVolumeClaim();

// The env names that hold the platform's credentials, and their JSON field in spec.credentials.
const std::pair<std::string_view, std::string_view> kCredentialEnv[] = {
    {"FORGE_CLIENT_ID", "clientId"},
    {"FORGE_CLIENT_SECRET", "clientSecret"},
    {"FORGE_PROJECT_TOKEN", "token"},
    {"FORGE_NR_SECRET", "nodeRedSecret"}};
const std::pair<std::string_view, std::string_view> kBrokerEnv[] = {
    {"FORGE_BROKER_URL", "url"},
    {"FORGE_BROKER_USERNAME", "username"},
    {"FORGE_BROKER_PASSWORD", "password"}};
// Env driver-k8s sets from its own configuration, which Steward renders from its config.
const std::set<std::string_view> kDriverEnv = {"TZ",
                                               "FORGE_URL",
                                               "BASE_URL",
                                               "FORGE_TEAM_ID",
                                               "FORGE_PROJECT_ID",
                                               "FORGE_NR_NO_TCP_IN",
                                               "FORGE_NR_NO_UDP_IN",
                                               "FORGE_LICENSE_TYPE",
                                               "FORGE_MEMORY_LIMIT",
                                               "FORGE_CPU_LIMIT",
                                               "FORGE_LOG_PASSTHROUGH",
                                               "NODE_EXTRA_CA_CERTS"};

}  // namespace

namespace internal {

bool Ours(const Json& obj, const std::string& id) {
  return LabelOf(obj, kProjectLabel) == id && LabelOf(obj, kManagedByLabel) == kManagedByValue;
}

bool Marked(const Json& obj) { return !AnnotationOf(obj, kMigratingAnnotation).empty(); }

std::string NameOf(const Json& obj) { return StringAtPath(obj, "metadata.name"); }

const Json* ByName(const Json& array, const std::string& name) {
  if (!array.is_array()) return nullptr;
  for (const Json& e : array) {
    if (e.is_object() && GetString(e, "name") == name) return &e;
  }
  return nullptr;
}

}  // namespace internal

namespace {

bool Named(const Json& array) {
  if (!array.is_array() || array.empty()) return false;
  return std::all_of(array.begin(), array.end(), [](const Json& e) {
    return e.is_object() && e.contains("name") && e["name"].is_string();
  });
}

// Every place where `live` does not have what `desired` says (fields the server adds are not
// differences; a zero value matches an absent field). Arrays of named elements (containers, env,
// ports, volumes) are compared by name and reported as path[name], never deeper, so that a
// credential's value cannot end up in a path.
void Diff(const Json& desired, const Json& live, const std::string& path,
          std::vector<std::string>* out) {
  if (desired.is_object()) {
    if (!live.is_object()) {
      if (!IsGoZeroValue(desired)) out->push_back(path);
      return;
    }
    for (const auto& [key, value] : desired.items()) {
      const std::string sub = path.empty() ? key : path + "." + key;
      auto it = live.find(key);
      if (it == live.end()) {
        if (!IsGoZeroValue(value)) out->push_back(sub);
      } else {
        Diff(value, *it, sub, out);
      }
    }
    return;
  }
  if (desired.is_array()) {
    if (!live.is_array()) {
      if (!desired.empty()) out->push_back(path);
      return;
    }
    if (Named(desired) && (live.empty() || Named(live))) {
      for (const Json& d : desired) {
        const std::string n = d["name"].get<std::string>();
        const Json* l = ByName(live, n);
        if (l == nullptr) {
          out->push_back(path + "[" + n + "]");
        } else {
          Diff(d, *l, path + "[" + n + "]", out);
        }
      }
      for (const Json& l : live) {
        const std::string n = l["name"].get<std::string>();
        if (ByName(desired, n) == nullptr) out->push_back(path + "[" + n + "] (removed)");
      }
      return;
    }
    if (desired.size() != live.size()) {
      out->push_back(path);
      return;
    }
    for (size_t i = 0; i < desired.size(); ++i) {
      Diff(desired[i], live[i], path + "[" + std::to_string(i) + "]", out);
    }
    return;
  }
  if (desired != live) out->push_back(path);
}

}  // namespace

namespace internal {

// The differences of one object: metadata labels and annotations (Steward's spec-hash and
// the labels Relabel adds aside) and everything outside metadata and status.
std::vector<std::string> ObjectDiff(const Json& desired, const Json& live) {
  std::vector<std::string> out;
  for (const auto& [key, value] : desired.items()) {
    if (key == "status" || key == "apiVersion" || key == "kind") continue;
    if (key == "metadata") {
      Json labels = MemberOrNull(value, "labels");
      if (labels.is_object()) {
        labels.erase(std::string(kProjectLabel));
        labels.erase(std::string(kManagedByLabel));
      }
      Diff(labels, PathOrNull(live, "metadata.labels"), "metadata.labels", &out);
      Json annotations = MemberOrNull(value, "annotations");
      if (annotations.is_object()) annotations.erase(std::string(kSpecHashAnnotation));
      Diff(annotations, PathOrNull(live, "metadata.annotations"), "metadata.annotations", &out);
      continue;
    }
    Diff(value, MemberOrNull(live, key), key, &out);
  }
  return out;
}

}  // namespace internal

namespace {

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

struct Mapped {
  Json spec = Json::object();
  Json credentials = Json::object();
  std::string error;
};

// The Steward spec of an instance from its driver-k8s objects.
Mapped MapInstance(const std::string& id, const Json& dep, const std::optional<Json>& pvc,
                   const std::optional<Json>& custom) {
  Mapped m;
  const std::string what = "Deployment " + NameOf(dep);
  auto fail = [&](std::string why) {
    m.error = what + ": " + std::move(why);
    return m;
  };
  const Json& containers = PathOrNull(dep, "spec.template.spec.containers");
  if (!containers.is_array() || containers.empty()) return fail("has no containers");
  const Json* c = ByName(containers, "node-red");
  if (c == nullptr) c = &containers[0];
  const std::string cname = GetString(*c, "name");
  const std::string cpath = "spec.template.spec.containers[" + cname + "]";
  const std::string image = GetString(*c, "image");
  if (image.empty()) return fail(cpath + ".image: missing");

  std::map<std::string, std::string> env;
  for (const Json& e : MemberOrNull(*c, "env").is_array() ? (*c)["env"] : Json::array()) {
    const std::string n = GetString(e, "name");
    if (e.contains("valueFrom")) {
      for (const auto& [key, field] : kCredentialEnv) {
        if (n == key) return fail(cpath + ".env[" + n + "]: not a plain value (valueFrom)");
      }
      for (const auto& [key, field] : kBrokerEnv) {
        if (n == key) return fail(cpath + ".env[" + n + "]: not a plain value (valueFrom)");
      }
      continue;
    }
    env[n] = GetString(e, "value");
  }
  auto get = [&](std::string_view k) -> std::string {
    auto it = env.find(std::string(k));
    return it == env.end() ? "" : it->second;
  };
  for (std::string_view required :
       {"FORGE_CLIENT_ID", "FORGE_CLIENT_SECRET", "FORGE_PROJECT_TOKEN", "FORGE_TEAM_ID"}) {
    if (get(required).empty()) return fail(cpath + ".env[" + std::string(required) + "]: missing");
  }
  if (!get("FORGE_PROJECT_ID").empty() && get("FORGE_PROJECT_ID") != id) {
    return fail(cpath + ".env[FORGE_PROJECT_ID]: is not the label app (" + id + ")");
  }
  Json& creds = m.credentials;
  for (const auto& [key, field] : kCredentialEnv) {
    if (!get(key).empty()) creds[std::string(field)] = get(key);
  }
  int brokers = 0;
  for (const auto& [key, field] : kBrokerEnv) brokers += get(key).empty() ? 0 : 1;
  if (brokers != 0 && brokers != 3) {
    return fail(cpath +
                ".env: FORGE_BROKER_URL, FORGE_BROKER_USERNAME and "
                "FORGE_BROKER_PASSWORD must be all there or none");
  }
  if (brokers == 3) {
    Json broker = Json::object();
    for (const auto& [key, field] : kBrokerEnv) broker[std::string(field)] = get(key);
    creds["broker"] = std::move(broker);
  }

  Json stack = {{"image", image}};
  const std::string cpu_q = StringAtPath(*c, "resources.requests.cpu");
  const std::string mem_q = StringAtPath(*c, "resources.requests.memory");
  if (!cpu_q.empty()) {
    auto millis = CpuMillis(cpu_q);
    if (!millis || *millis % 10 != 0 || *millis == 0) {
      return fail(cpath + ".resources.requests.cpu: " + cpu_q +
                  " is not a positive multiple of 10m (driver-k8s: stack cpu × 10m)");
    }
    stack["cpu"] = *millis / 10;
  }
  if (!mem_q.empty()) {
    auto mib = MemoryMiB(mem_q);
    if (!mib || *mib == 0) {
      return fail(cpath + ".resources.requests.memory: " + mem_q + " is not a whole number of Mi");
    }
    stack["memory"] = *mib;
  }
  Json stack_env = Json::object();
  for (const auto& [k, v] : env) {
    bool known = kDriverEnv.contains(k);
    for (const auto& [key, field] : kCredentialEnv) known = known || k == key;
    for (const auto& [key, field] : kBrokerEnv) known = known || k == key;
    if (!known && !k.starts_with("FORGE_")) stack_env[k] = v;
  }
  if (!stack_env.empty()) stack["env"] = std::move(stack_env);

  Json& spec = m.spec;
  spec["team"] = get("FORGE_TEAM_ID");
  spec["stack"] = std::move(stack);
  if (!get("BASE_URL").empty()) spec["url"] = get("BASE_URL");
  if (get("FORGE_LICENSE_TYPE") == "ee") spec["licenseType"] = "ee";
  const Json& replicas = PathOrNull(dep, "spec.replicas");
  const int64_t n = replicas.is_number_integer() ? replicas.get<int64_t>() : 1;
  if (n < 1) {
    return fail("spec.replicas: " + std::to_string(n) +
                " (scaled to zero); start it with driver-k8s, or scale it up, then migrate");
  }
  spec["replicas"] = n;
  if (pvc) {
    const std::string size = StringAtPath(*pvc, "spec.resources.requests.storage");
    const Json& modes = PathOrNull(*pvc, "spec.accessModes");
    if (size.empty() || !modes.is_array() || modes.size() != 1 || !modes[0].is_string()) {
      return fail("PersistentVolumeClaim " + NameOf(*pvc) +
                  ": spec.resources.requests.storage and one spec.accessModes entry expected");
    }
    Json storage = {{"size", size}, {"accessMode", modes[0]}};
    const std::string cls = StringAtPath(*pvc, "spec.storageClassName");
    if (!cls.empty()) storage["storageClass"] = cls;
    spec["storage"] = std::move(storage);
  }
  if (custom) {
    const std::string host = StringAtPath(*custom, "spec.rules.0.host");
    const Json& rules = PathOrNull(*custom, "spec.rules");
    std::string h = host;
    if (h.empty() && rules.is_array() && !rules.empty()) h = GetString(rules[0], "host");
    if (h.empty()) return fail("Ingress " + NameOf(*custom) + ": spec.rules[0].host missing");
    spec["customHostname"] = h;
  }
  return m;
}

}  // namespace

namespace internal {

// The pod template differs in a way that rolls the pods.
bool RollsPods(const std::vector<std::string>& deployment_diffs) {
  return std::any_of(deployment_diffs.begin(), deployment_diffs.end(),
                     [](const std::string& d) { return d.starts_with("spec.template"); });
}

// The live selector stays when it selects the rendered pods (as the engine keeps it).
bool SelectorKept(const Json& desired, const Json& live) {
  const Json& match = PathOrNull(live, "spec.selector.matchLabels");
  const Json& labels = PathOrNull(desired, "spec.template.metadata.labels");
  if (!match.is_object() || match.empty() || !labels.is_object()) return false;
  if (PathOrNull(live, "spec.selector").size() != 1) return false;
  for (const auto& [k, v] : match.items()) {
    auto it = labels.find(k);
    if (it == labels.end() || *it != v) return false;
  }
  return true;
}

}  // namespace internal

namespace {

void PlanInstance(const EngineConfig& config, const std::map<std::string, Json>& services,
                  const std::map<std::string, Json>& ingresses,
                  const std::map<std::string, Json>& pvcs, InstancePlan& p, const Json& dep) {
  auto fail = [&](std::string why) {
    p.action = InstancePlan::Action::kError;
    p.error = std::move(why);
  };
  if (Status s = ValidateProjectId(p.id); !s.ok()) {
    return fail("Deployment " + p.name + ": label app: " + s.message());
  }
  if (Status s = ValidateProjectName(p.name); !s.ok()) {
    return fail("Deployment " + p.name + ": name: " + s.message());
  }
  const ObjectNames names = NamesFor(p.id, p.name);
  if (names.deployment != p.name) {
    return fail("Deployment " + p.name + ": not a name Steward gives a project's Deployment");
  }
  auto find = [](const std::map<std::string, Json>& m,
                 const std::string& n) -> std::optional<Json> {
    auto it = m.find(n);
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
  const std::optional<Json> svc = find(services, names.service);
  const std::optional<Json> ing = find(ingresses, names.ingress);
  const std::optional<Json> custom = find(ingresses, names.custom_ingress);
  const std::optional<Json> pvc = find(pvcs, names.pvc);

  // Every object must be this instance's or nobody's in Steward's terms.
  std::vector<std::pair<std::string, const Json*>> found = {{"Deployment", &dep}};
  if (pvc) found.push_back({"PersistentVolumeClaim", &*pvc});
  if (svc) found.push_back({"Service", &*svc});
  if (ing) found.push_back({"Ingress", &*ing});
  if (custom) found.push_back({"Ingress", &*custom});
  for (const auto& [kind, obj] : found) {
    const std::string owner = LabelOf(*obj, kProjectLabel);
    if (!owner.empty() && owner != p.id) {
      return fail(kind + " " + NameOf(*obj) + ": labelled steward.io/project=" + owner +
                  ", not this instance's id " + p.id);
    }
  }

  Mapped m = MapInstance(p.id, dep, pvc, custom);
  if (!m.error.empty()) return fail(m.error);
  Json request = m.spec;
  request["credentials"] = m.credentials;
  CredentialsInput input;
  auto parsed = ParseProjectSpec(request, "spec", &input);
  if (!parsed.ok()) return fail("Deployment " + p.name + ": maps to " + parsed.error().message());
  ProjectSpec spec = *parsed;
  spec.credentials = input.ref;
  if (Status s = CheckSpecPolicy(config, spec); !s.ok()) {
    return fail("Deployment " + p.name + ": maps to " + s.message());
  }
  if (Status s = CheckCustomHostnamePolicy(config, p.name, spec); !s.ok()) {
    return fail("Ingress " + names.custom_ingress + ": maps to " + s.message());
  }
  p.spec = std::move(request);
  p.public_spec = ToJson(spec);
  p.start = true;

  for (const auto& [kind, obj] : found) {
    p.objects.push_back({kind, NameOf(*obj), StringAtPath(*obj, "metadata.uid"),
                         !Ours(*obj, p.id) || Marked(*obj), Marked(*obj)});
  }

  // What Steward would render, against what is there.
  RenderInput in;
  in.id = p.id;
  in.name = p.name;
  in.config = &config;
  in.resolved = Resolve(config, p.name, spec);
  in.credential = {"(steward)", "(steward)"};
  const Manifests want = Render(in);
  p.create.push_back("Secret " + SuppliedSecretName(p.id, input.ref.fingerprint));
  auto differs = [&](const std::string& what, const Json& desired,
                     const std::optional<Json>& live) {
    if (!live) {
      p.create.push_back(what);
      return std::vector<std::string>{};
    }
    std::vector<std::string> d = ObjectDiff(desired, *live);
    for (const std::string& path : d) p.differs.push_back(what + ": " + path);
    return d;
  };
  // The Deployment's selector is immutable; the engine keeps the live one when it selects
  // Steward's pods (driver-k8s: {app: <id>}, and Steward's pods carry app=<id>).
  Json desired_dep = want.deployment;
  if (SelectorKept(desired_dep, dep)) {
    desired_dep["spec"]["selector"] = dep["spec"]["selector"];
  } else if (PathOrNull(dep, "spec.selector") != PathOrNull(desired_dep, "spec.selector")) {
    return fail("Deployment " + p.name +
                ": spec.selector does not select the pods Steward renders (it is immutable)");
  }
  const std::vector<std::string> dep_diffs =
      differs("Deployment " + names.deployment, desired_dep, dep);
  if (RollsPods(dep_diffs)) {
    p.rollout = GetString(PathOrNull(desired_dep, "spec.strategy"), "type") == "Recreate"
                    ? "recreate"
                    : "rolling";
  }
  if (want.pvc) {
    differs("PersistentVolumeClaim " + names.pvc, *want.pvc, pvc);
  } else if (pvc) {
    p.differs.push_back("PersistentVolumeClaim " + names.pvc + ": not in the spec (kept)");
  }
  differs("Service " + names.service, want.service, svc);
  differs("Ingress " + names.ingress, want.ingress, ing);
  if (want.custom_ingress) differs("Ingress " + names.custom_ingress, *want.custom_ingress, custom);
}

}  // namespace

namespace internal {

void AddAdoption(const std::vector<FoundObject>& objects, Json* j) {
  Json adopt = Json::array(), relabel = Json::array();
  for (const FoundObject& o : objects) {
    Json e = {{"kind", o.kind}, {"name", o.name}, {"uid", o.uid}};
    if (o.relabel) relabel.push_back(e);
    adopt.push_back(std::move(e));
  }
  (*j)["adopt"] = std::move(adopt);
  (*j)["relabel"] = std::move(relabel);
}

std::string_view ActionName(InstancePlan::Action a) {
  switch (a) {
    case InstancePlan::Action::kMigrate:
      return "migrate";
    case InstancePlan::Action::kManaged:
      return "managed";
    case InstancePlan::Action::kError:
      return "error";
  }
  return "error";
}

// One object at a time: read, change the metadata, write with the resourceVersion read; a
// conflict (someone wrote it meanwhile) is read again, a few times.
Status EditMetadata(const kube::Client& client, std::string_view ns, const ResourceType& type,
                    const std::string& name, const std::function<bool(Json& meta)>& edit) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto live = client.Get(type, ns, name);
    if (!live.ok()) {
      if (live.error().IsNotFound()) return Status::Ok();
      return live.error().ToStatus();
    }
    Json obj = std::move(*live);
    if (!edit(obj["metadata"])) return Status::Ok();  // already as wanted
    auto updated = client.Update(type, obj);
    if (updated.ok()) return Status::Ok();
    if (!updated.error().IsConflict()) {
      return Status(updated.error().ToStatus().code(),
                    type.kind + " " + name + ": " + updated.error().ToString());
    }
  }
  return Aborted(type.kind + " " + name + ": kept changing while being relabelled; run again");
}

const ResourceType& TypeOf(const std::string& kind) {
  if (kind == "Deployment") return kDeployment;
  if (kind == "Service") return kService;
  if (kind == "Ingress") return kIngress;
  if (kind == "Pod") return ResourceType::Pod();
  return kPvc;
}

Status RelabelObjects(const kube::Client& client, std::string_view ns, const std::string& id,
                      const std::vector<FoundObject>& objects) {
  for (const FoundObject& o : objects) {
    if (!o.relabel) continue;
    Status s = EditMetadata(client, ns, TypeOf(o.kind), o.name, [&](Json& meta) {
      if (GetString(meta, "uid") != o.uid) return false;  // not the object planned: leave it
      Json& labels = meta["labels"];
      Json& annotations = meta["annotations"];
      if (labels.is_null()) labels = Json::object();
      if (annotations.is_null()) annotations = Json::object();
      const bool done = GetString(labels, std::string(kProjectLabel)) == id &&
                        GetString(labels, std::string(kManagedByLabel)) == kManagedByValue;
      if (done) return false;
      labels[std::string(kProjectLabel)] = id;
      labels[std::string(kManagedByLabel)] = std::string(kManagedByValue);
      annotations[std::string(kMigratingAnnotation)] = std::string(kFromDriverK8s);
      return true;
    });
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status ClearObjectMarkers(const kube::Client& client, std::string_view ns,
                          const std::vector<FoundObject>& objects) {
  for (const FoundObject& o : objects) {
    Status s = EditMetadata(client, ns, TypeOf(o.kind), o.name, [&](Json& meta) {
      Json& annotations = meta["annotations"];
      if (!annotations.is_object() || !annotations.contains(std::string(kMigratingAnnotation))) {
        return false;
      }
      annotations.erase(std::string(kMigratingAnnotation));
      return true;
    });
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace internal

std::optional<int64_t> CpuMillis(std::string_view q) {
  if (q.ends_with("m")) return ParseInt(q.substr(0, q.size() - 1));
  const size_t dot = q.find('.');
  if (dot == std::string_view::npos) {
    auto cores = ParseInt(q);
    if (!cores) return std::nullopt;
    return *cores * 1000;
  }
  auto whole = dot == 0 ? std::optional<int64_t>(0) : ParseInt(q.substr(0, dot));
  std::string frac(q.substr(dot + 1));
  if (!whole || frac.empty() || frac.size() > 3) return std::nullopt;
  while (frac.size() < 3) frac += '0';
  auto f = ParseInt(frac);
  if (!f) return std::nullopt;
  return *whole * 1000 + *f;
}

std::optional<int64_t> MemoryMiB(std::string_view q) {
  static const std::pair<std::string_view, int64_t> kUnits[] = {
      {"Ki", -1024}, {"Mi", 1}, {"Gi", 1024}, {"Ti", 1024 * 1024}};
  for (const auto& [suffix, factor] : kUnits) {
    if (!q.ends_with(suffix)) continue;
    auto v = ParseInt(q.substr(0, q.size() - suffix.size()));
    if (!v) return std::nullopt;
    if (factor < 0) {
      if (*v % 1024 != 0) return std::nullopt;
      return *v / 1024;
    }
    return *v * factor;
  }
  auto bytes = ParseInt(q);
  if (!bytes || *bytes % (1024 * 1024) != 0) return std::nullopt;
  return *bytes / (1024 * 1024);
}

StatusOr<Plan> BuildPlan(const kube::Client& client, std::string_view ns,
                         const EngineConfig& config) {
  Plan plan;
  plan.ns = std::string(ns);
  auto list = [&](const ResourceType& type, const std::string& selector,
                  std::map<std::string, Json>* out) -> Status {
    kube::ListOptions options;
    options.label_selector = selector;
    auto got = client.ListAll(type, ns, options);
    if (!got.ok()) {
      return Status(got.error().ToStatus().code(), "list " + type.GroupResource() + " in " +
                                                       std::string(ns) + ": " +
                                                       got.error().ToString());
    }
    for (Json& item : got->items) {
      const std::string name = NameOf(item);
      (*out)[name] = std::move(item);
    }
    return Status::Ok();
  };
  std::map<std::string, Json> deployments, services, ingresses, pvcs;
  RETURN_IF_ERROR(list(kDeployment, "nodered=true", &deployments));
  RETURN_IF_ERROR(list(kService, "", &services));
  RETURN_IF_ERROR(list(kIngress, "", &ingresses));
  RETURN_IF_ERROR(list(kPvc, "", &pvcs));

  std::set<std::string> ids;
  for (const auto& [name, dep] : deployments) {
    InstancePlan p;
    p.name = name;
    p.id = LabelOf(dep, "app");
    if (p.id.empty()) p.id = LabelOf(dep, kProjectLabel);
    ids.insert(p.id);
    if (Ours(dep, p.id) && !Marked(dep)) {
      p.action = InstancePlan::Action::kManaged;
      p.objects.push_back({"Deployment", name, StringAtPath(dep, "metadata.uid"), false, false});
      // A run that stopped before ClearMarkers: the objects the engine does not rewrite (the
      // PVC) may still carry the marker.
      const ObjectNames names = NamesFor(p.id, name);
      for (const auto& [kind, map, object] :
           {std::tuple{"PersistentVolumeClaim", &pvcs, names.pvc},
            std::tuple{"Service", &services, names.service},
            std::tuple{"Ingress", &ingresses, names.ingress},
            std::tuple{"Ingress", &ingresses, names.custom_ingress}}) {
        auto it = map->find(object);
        if (it != map->end() && Ours(it->second, p.id) && Marked(it->second)) {
          p.objects.push_back(
              {kind, object, StringAtPath(it->second, "metadata.uid"), false, true});
        }
      }
    } else if (p.id.empty()) {
      p.action = InstancePlan::Action::kError;
      p.error = "Deployment " + name + ": no label app (the FlowFuse project id)";
    } else {
      PlanInstance(config, services, ingresses, pvcs, p, dep);
    }
    plan.instances.push_back(std::move(p));
  }
  RETURN_IF_ERROR(internal::PlanAgents(client, ns, config, services, &plan));
  for (const auto& [name, pvc] : pvcs) {
    const std::string id = LabelOf(pvc, "ff-project-id");
    if (id.empty() || ids.contains(id) || Ours(pvc, id)) continue;
    plan.skipped.push_back("PersistentVolumeClaim " + name + ": instance " + id + " (" +
                           LabelOf(pvc, "ff-project-name") +
                           ") has no Deployment (suspended by driver-k8s); start it with "
                           "driver-k8s, then migrate");
  }
  return plan;
}

Json PlanJson(const Plan& plan) {
  Json projects = Json::array();
  for (const InstancePlan& p : plan.instances) {
    Json j = {{"name", p.name}, {"id", p.id}, {"action", ActionName(p.action)}};
    if (p.action == InstancePlan::Action::kError) {
      j["error"] = p.error;
      projects.push_back(std::move(j));
      continue;
    }
    AddAdoption(p.objects, &j);
    if (p.action == InstancePlan::Action::kMigrate) {
      j["start"] = p.start;
      j["spec"] = p.public_spec;
      j["create"] = p.create;
      j["differs"] = p.differs;
      j["rollout"] = p.rollout;
    }
    projects.push_back(std::move(j));
  }
  return Json{{"from", kFromDriverK8s},
              {"namespace", plan.ns},
              {"projects", std::move(projects)},
              {"agents", internal::AgentsJson(plan)},
              {"skipped", plan.skipped}};
}

std::string PlanText(const Plan& plan) {
  std::string out;
  for (const InstancePlan& p : plan.instances) {
    out += "project " + p.name + " (id " + p.id + "): " + std::string(ActionName(p.action));
    if (p.action == InstancePlan::Action::kManaged) {
      out += ", already Steward's: nothing to do\n";
      continue;
    }
    if (p.action == InstancePlan::Action::kError) {
      out += "\n  error    " + p.error + " (nothing is changed for it)\n";
      continue;
    }
    out += "\n";
    std::string adopt, relabel;
    for (const FoundObject& o : p.objects) {
      adopt += (adopt.empty() ? "" : ", ") + o.kind + " " + o.name;
      if (o.relabel) relabel += (relabel.empty() ? "" : ", ") + o.kind + " " + o.name;
    }
    out += "  adopt    " + adopt + "\n";
    out += "  relabel  " + (relabel.empty() ? std::string("(none)") : relabel) + "\n";
    std::string create;
    for (const std::string& c : p.create) create += (create.empty() ? "" : ", ") + c;
    out += "  create   " + create + "\n";
    for (const std::string& d : p.differs) out += "  differs  " + d + "\n";
    out += "  rollout  " + p.rollout + "\n";
    out += std::string("  start    ") + (p.start ? "yes" : "no") + "\n";
  }
  out += internal::AgentsText(plan);
  for (const std::string& s : plan.skipped) out += "skipped " + s + "\n";
  if (plan.instances.empty() && plan.agents.empty() && plan.skipped.empty()) {
    out += "no driver-k8s instance or agent in namespace " + plan.ns + "\n";
  }
  return out;
}

Status Relabel(const kube::Client& client, std::string_view ns, const InstancePlan& instance) {
  return internal::RelabelObjects(client, ns, instance.id, instance.objects);
}

Status ClearMarkers(const kube::Client& client, std::string_view ns, const InstancePlan& instance) {
  return internal::ClearObjectMarkers(client, ns, instance.objects);
}

}  // namespace steward::engine::migrate
