#include "engine/reconciler/adoption.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "common/json.h"
#include "common/sha256.h"
#include "engine/manifests/manifests.h"

namespace steward::engine {
namespace {

using kube::ResourceType;

// Bump when what makes a project Running changes without the rendering changing (a readiness
// rule, a step added to the run toward Running): every stored fingerprint then differs and the
// next run of each project is a full one.
constexpr std::string_view kAdoptionRules = "steward-adoption-1";

void Append(std::string* out, std::string_view field) {
  out->append(field);
  out->push_back('\0');  // no field contains a NUL: fields cannot run into each other
}

// Two sample projects rendered under `config`: one with defaults only, one with every optional
// object and most options (storage, a custom hostname, supplied credentials, labels,
// annotations, HA). A change of the config or of Render shows in their text.
std::string SampleRenderings(const EngineConfig& config) {
  ProjectSpec plain;
  plain.team = "sample";
  ProjectSpec full = plain;
  full.stack = {"sample/image:1", 25, 512, {{"SAMPLE_ENV", "1"}}};
  full.custom_hostname = "sample.example.com";
  full.storage = StorageSpec{"1Gi", "", "ReadWriteOnce"};
  full.replicas = 2;
  full.labels = {{"sample-label", "1"}};
  full.annotations = {{"sample.io/annotation", "1"}};
  full.credentials = CredentialsRef{"0123456789abcdef", {"FORGE_CLIENT_ID"}};
  full.license_type = "ee";
  std::string out;
  for (const ProjectSpec* spec : {&plain, &full}) {
    RenderInput in;
    in.id = "sample-id";
    in.name = "sample";
    in.config = &config;
    in.resolved = Resolve(config, in.name, *spec);
    in.restart_epoch = 1;
    in.credential = {"sample-client", "sample-token"};
    const Manifests m = Render(in);
    for (const Json* object : {&m.deployment, &m.service, &m.ingress}) {
      Append(&out, DumpJson(*object));
    }
    if (m.secret) Append(&out, DumpJson(*m.secret));
    if (m.pvc) Append(&out, DumpJson(*m.pvc));
    if (m.custom_ingress) Append(&out, DumpJson(*m.custom_ingress));
  }
  return out;
}

std::string Rules(const EngineConfig& config) {
  std::string all(kAdoptionRules);
  all.push_back('\0');
  Append(&all, SampleRenderings(config));
  Append(&all, config.require_ingress_address ? "address" : "no-address");
  Append(&all, std::to_string(config.shards));
  return Sha256Hex(all);
}

void AppendObjects(std::string* out, std::string_view kind, std::vector<kube::ObjectRef> objects) {
  std::sort(objects.begin(), objects.end(), [](const kube::ObjectRef& a, const kube::ObjectRef& b) {
    return a->name() < b->name();
  });
  Append(out, kind);
  Append(out, std::to_string(objects.size()));
  for (const kube::ObjectRef& o : objects) {
    Append(out, o->name());
    Append(out, o->resource_version());
    Append(out, o->terminating() ? "terminating" : "live");
  }
}

}  // namespace

AdoptionFingerprints::AdoptionFingerprints(const EngineConfig& config, Observer& observer)
    : config_(config), observer_(observer), rules_(Rules(config)) {}

std::optional<std::string> AdoptionFingerprints::Of(
    const store::ProjectRecord& rec, const ProjectSpec& spec,
    const std::vector<store::Credential>& creds) const {
  if (rec.kind != store::RecordKind::kProject || config_.http_probe) return std::nullopt;
  std::string in = rules_;
  in.push_back('\0');
  Append(&in, rec.id);
  Append(&in, rec.name);
  Append(&in, std::to_string(rec.generation));
  Append(&in, std::to_string(rec.restart_epoch));
  Append(&in, rec.spec_json);
  std::vector<std::string> held;
  for (const store::Credential& c : creds) {
    held.push_back(c.id + "=" + std::string(store::ToString(c.state)));
  }
  std::sort(held.begin(), held.end());
  for (const std::string& h : held) Append(&in, h);

  // The objects a run looks up by name: one of our writes not yet observed means the cache is
  // not what the run would act on.
  const ObjectNames names = NamesFor(rec.id, rec.name);
  const std::pair<const ResourceType*, const std::string*> named[] = {
      {&ResourceType::Secret(), &names.secret},
      {&ResourceType::PersistentVolumeClaim(), &names.pvc},
      {&ResourceType::Deployment(), &names.deployment},
      {&ResourceType::Service(), &names.service},
      {&ResourceType::Ingress(), &names.ingress},
      {&ResourceType::Ingress(), &names.custom_ingress}};
  for (const auto& [type, name] : named) {
    const View view = observer_.Get(*type, *name);
    if (view.stale) return std::nullopt;
    Append(&in, view.object ? "present" : "absent");
  }
  const std::string current_supplied =
      spec.credentials ? SuppliedSecretName(rec.id, spec.credentials->fingerprint) : "";
  std::vector<kube::ObjectRef> secrets =
      observer_.ByLabel(ResourceType::Secret(), kProjectLabel, rec.id);
  for (const kube::ObjectRef& secret : secrets) {
    if (secret->label(kCredentialsLabel) == kSuppliedValue && secret->name() != current_supplied) {
      return std::nullopt;  // its removal waits for a grace period to end
    }
  }
  AppendObjects(&in, ResourceType::Secret().kind, std::move(secrets));
  for (const ResourceType* type :
       {&ResourceType::PersistentVolumeClaim(), &ResourceType::Deployment(),
        &ResourceType::ReplicaSet(), &ResourceType::Pod(), &ResourceType::Service(),
        &ResourceType::Ingress()}) {
    AppendObjects(&in, type->kind, observer_.ByLabel(*type, kProjectLabel, rec.id));
  }
  AppendObjects(&in, ResourceType::EndpointSlice().kind,
                observer_.ByLabel(ResourceType::EndpointSlice(), "kubernetes.io/service-name",
                                  names.service));
  return Sha256Hex(in);
}

}  // namespace steward::engine
