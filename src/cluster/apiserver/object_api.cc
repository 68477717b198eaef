#include "cluster/apiserver/object_api.h"

#include <algorithm>
#include <charconv>
#include <tuple>

#include "cluster/apiserver/object_meta.h"
#include "cluster/apiserver/selectors.h"
#include "cluster/apiserver/validation.h"
#include "common/base64.h"
#include "common/json_access.h"
#include "common/time_util.h"
#include "common/yaml.h"

namespace steward::cluster {

namespace {

using namespace objectmeta;  // NOLINT: the helpers of every write path

// Finalizers the simulation puts on objects whose clean-up takes time on real clusters
// (load balancers, ingress controllers, volume protection); controllers/cleanup removes them.
constexpr const char* kServiceCleanupFinalizer = "service.kubernetes.io/load-balancer-cleanup";
constexpr const char* kIngressCleanupFinalizer = "ingress.steward.io/cleanup";
constexpr const char* kPvcProtectionFinalizer = "kubernetes.io/pvc-protection";
// The object without metadata and status: a change here bumps metadata.generation.
Json SpecPart(const Json& obj) {
  Json copy = obj;
  if (copy.is_object()) {
    copy.erase("metadata");
    copy.erase("status");
  }
  return copy;
}

// The status a newly created object starts with, for types whose status the API owns.
Json InitialStatus(const ResourceType& rt) {
  if (rt.kind == "Pod") return {{"phase", "Pending"}, {"qosClass", "BestEffort"}};
  if (rt.kind == "Namespace") return {{"phase", "Active"}};
  if (rt.kind == "PersistentVolumeClaim") return {{"phase", "Pending"}};
  if (rt.kind == "Service" || rt.kind == "Ingress") {
    return {{"loadBalancer", Json::object()}};
  }
  if (rt.kind == "ReplicaSet") return {{"replicas", 0}};
  return Json::object();
}

bool IsBase64(std::string_view s) { return Base64Decode(s).has_value(); }

// Secrets: stringData is merged into data (base64) and dropped; data must be base64.
std::optional<StatusError> NormalizeSecret(Json& obj) {
  if (obj.contains("stringData")) {
    const Json& sd = obj["stringData"];
    if (sd.is_object()) {
      for (auto it = sd.begin(); it != sd.end(); ++it) {
        if (!it.value().is_string()) {
          return BadRequestError(
              "Secret in version \"v1\" cannot be handled as a Secret: "
              "json: cannot unmarshal " +
              std::string(it.value().type_name()) +
              " into Go struct field Secret.stringData of type string");
        }
        obj["data"][it.key()] = Base64Encode(it.value().get<std::string>());
      }
    }
    obj.erase("stringData");
  }
  const Json& data = MemberOrNull(obj, "data");
  if (data.is_object()) {
    for (auto it = data.begin(); it != data.end(); ++it) {
      if (it.value().is_string() && !IsBase64(it.value().get<std::string>())) {
        return BadRequestError(
            "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at "
            "input byte 0");
      }
    }
  }
  return std::nullopt;
}

// Checks apiVersion/kind of a body against the endpoint's type and fills them in.
std::optional<StatusError> CheckTypeMeta(const ResourceType& rt, Json& body) {
  if (!body.is_object()) {
    return BadRequestError(
        "the body of the request was in an unknown format - accepted media "
        "types include: application/json, application/yaml");
  }
  std::string api_version = GetString(body, "apiVersion");
  std::string kind = GetString(body, "kind");
  if (!api_version.empty() && api_version != rt.ApiVersion()) {
    return BadRequestError("the API version in the data (" + api_version +
                           ") does not match the expected API version (" + rt.ApiVersion() + ")");
  }
  if (!kind.empty() && kind != rt.kind) {
    return BadRequestError(rt.kind + " in version \"" + rt.version + "\" cannot be handled as a " +
                           rt.kind + ": the kind in the data (" + kind +
                           ") does not match the expected kind (" + rt.kind + ")");
  }
  body["apiVersion"] = rt.ApiVersion();
  body["kind"] = rt.kind;
  if (body.contains("metadata") && !body["metadata"].is_object() && !body["metadata"].is_null()) {
    return BadRequestError(rt.kind + " in version \"" + rt.version + "\" cannot be handled as a " +
                           rt.kind + ": json: cannot unmarshal " +
                           std::string(body["metadata"].type_name()) + " into Go struct field " +
                           rt.kind + ".metadata of type v1.ObjectMeta");
  }
  if (!body.contains("metadata") || body["metadata"].is_null()) body["metadata"] = Json::object();
  // Struct-typed top-level fields must be objects (a real server fails to decode otherwise).
  for (const char* field : {"spec", "status", "data", "stringData"}) {
    auto it = body.find(field);
    if (it != body.end() && !it->is_object() && !it->is_null()) {
      return BadRequestError(rt.kind + " in version \"" + rt.version +
                             "\" cannot be handled as a " + rt.kind + ": json: cannot unmarshal " +
                             std::string(it->type_name()) + " into Go struct field " + rt.kind +
                             "." + field + " of type object");
    }
  }
  return std::nullopt;
}

Json ScaleOf(const ResourceType& rt, const Json& obj) {
  const Json& meta = MemberOrNull(obj, "metadata");
  Json scale_meta = {{"name", GetString(meta, "name")},
                     {"namespace", GetString(meta, "namespace")},
                     {"uid", GetString(meta, "uid")},
                     {"resourceVersion", GetString(meta, "resourceVersion")},
                     {"creationTimestamp", MemberOrNull(meta, "creationTimestamp")}};
  const Json& spec = MemberOrNull(obj, "spec");
  const Json& status = MemberOrNull(obj, "status");
  std::string selector;
  auto parsed = LabelSelector::FromJson(MemberOrNull(spec, "selector"));
  if (parsed.ok()) selector = parsed->ToString();
  const Json& status_replicas = MemberOrNull(status, "replicas");
  (void)rt;
  return {{"kind", "Scale"},
          {"apiVersion", "autoscaling/v1"},
          {"metadata", scale_meta},
          {"spec",
           {{"replicas", MemberOrNull(spec, "replicas").is_number() ? MemberOrNull(spec, "replicas")
                                                                    : Json(0)}}},
          {"status",
           {{"replicas", status_replicas.is_number() ? status_replicas : Json(0)},
            {"selector", selector}}}};
}

}  // namespace

ObjectApi::ObjectApi(Storage& storage, const Clock& clock, Random& random)
    : storage_(storage), clock_(clock), random_(random) {}

void ObjectApi::AddAdmissionHook(AdmissionHook hook) { admission_.push_back(std::move(hook)); }

std::optional<StatusError> ObjectApi::Admit(const ResourceType& rt, const Json& object,
                                            const Json* old, const AdmissionHook& admit) {
  for (const auto& hook : admission_) {
    if (auto err = hook(rt, object, old)) return err;
  }
  if (admit) return admit(rt, object, old);
  return std::nullopt;
}

std::string ObjectApi::AllocateClusterIp() {
  MutexLock lock(ip_mu_);
  auto to_uint = [](const std::string& ip) -> std::optional<uint32_t> {
    uint32_t parts[4];
    if (std::sscanf(ip.c_str(), "%u.%u.%u.%u", &parts[0], &parts[1], &parts[2], &parts[3]) != 4) {
      return std::nullopt;
    }
    return (parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3];
  };
  if (!ips_loaded_) {
    for (const auto& rec : storage_.List("services", "").items) {
      Json svc = rec.Parse();
      if (auto v = to_uint(GetString(MemberOrNull(svc, "spec"), "clusterIP")))
        cluster_ips_.insert(*v);
    }
    ips_loaded_ = true;
  }
  // 10.96.0.0/12, skipping 10.96.0.0 and 10.96.0.1 (the kubernetes Service).
  constexpr uint32_t kBase = (10u << 24) | (96u << 16);
  constexpr uint32_t kSize = 1u << 20;
  for (uint32_t tries = 0; tries < kSize; ++tries) {
    uint32_t offset = (next_ip_++ % (kSize - 10)) + 10;
    uint32_t ip = kBase + offset;
    if (cluster_ips_.insert(ip).second) {
      return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 255) + "." +
             std::to_string((ip >> 8) & 255) + "." + std::to_string(ip & 255);
    }
  }
  return "";
}

void ObjectApi::ReleaseClusterIp(const Json& service) {
  std::string ip = GetString(MemberOrNull(service, "spec"), "clusterIP");
  uint32_t p[4];
  if (std::sscanf(ip.c_str(), "%u.%u.%u.%u", &p[0], &p[1], &p[2], &p[3]) != 4) return;
  MutexLock lock(ip_mu_);
  cluster_ips_.erase((p[0] << 24) | (p[1] << 16) | (p[2] << 8) | p[3]);
}

void ObjectApi::OnRemoved(const ResourceType& rt, const Json& object) {
  if (rt.kind == "Service") ReleaseClusterIp(object);
}

ApiResult<ObjectRecord> ObjectApi::GetRecord(const ResourceType& rt, std::string_view ns,
                                             std::string_view name) const {
  auto rec = storage_.Get(rt.GroupResource(), rt.namespaced ? ns : "", name);
  if (!rec) return NotFoundError(rt, name);
  return std::move(*rec);
}

ApiResult<Json> ObjectApi::Get(const ResourceType& rt, std::string_view ns, std::string_view name,
                               Subresource sub) const {
  auto rec = GetRecord(rt, ns, name);
  if (!rec.ok()) return std::move(rec).error();
  Json obj = rec->Parse();
  if (sub == Subresource::kScale) return ScaleOf(rt, obj);
  return obj;
}

ApiResult<Json> ObjectApi::Create(const ResourceType& rt, std::string_view ns, Json object,
                                  const WriteOptions& opts) {
  if (auto err = CheckTypeMeta(rt, object)) return *err;
  Json& meta = object["metadata"];
  if (rt.namespaced) {
    std::string body_ns = GetString(meta, "namespace");
    if (!body_ns.empty() && body_ns != ns) {
      return BadRequestError(
          "the namespace of the provided object does not match the namespace sent on the "
          "request");
    }
    if (ns.empty()) return BadRequestError("a namespace is required for " + rt.resource);
    meta["namespace"] = std::string(ns);
  } else {
    meta.erase("namespace");
  }
  if (!ResourceVersionOf(object).empty()) {
    return BadRequestError("resourceVersion should not be set on objects to be created");
  }
  std::string name = GetString(meta, "name");
  if (name.empty()) {
    std::string generate = GetString(meta, "generateName");
    if (!generate.empty()) {
      name = generate + random_.AlnumSuffix(5);
      meta["name"] = name;
    }
  }
  for (const char* f : {"uid", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink",
                        "managedFields", "generation", "creationTimestamp"}) {
    meta.erase(f);
  }
  if (rt.kind == "Secret") {
    if (auto err = NormalizeSecret(object)) return *err;
  }
  if (rt.has_status) object["status"] = InitialStatus(rt);
  ApplyDefaults(rt, object);
  auto causes = ValidateObject(rt, object, nullptr);
  if (!causes.empty()) return InvalidError(rt, name, std::move(causes));

  if (rt.namespaced) {
    const ResourceType* ns_type = FindGroupResource("namespaces");
    auto ns_rec = storage_.Get("namespaces", "", ns);
    if (!ns_rec) return NotFoundError(*ns_type, ns);
    if (rt.kind != "Event" && HasDeletionTimestamp(ns_rec->Parse())) {
      StatusError e = ForbiddenError(rt.GroupResource() + " \"" + name +
                                     "\" is forbidden: unable to create new content in namespace " +
                                     std::string(ns) + " because it is being terminated");
      e.name = name;
      e.group = rt.group;
      e.kind = rt.resource;
      return e;
    }
  }
  if (auto err = Admit(rt, object, nullptr, opts.admit)) return *err;

  std::vector<std::string> finalizers = Finalizers(object);
  if (rt.kind == "Service") AddFinalizer(finalizers, kServiceCleanupFinalizer);
  if (rt.kind == "Ingress") AddFinalizer(finalizers, kIngressCleanupFinalizer);
  if (rt.kind == "PersistentVolumeClaim") AddFinalizer(finalizers, kPvcProtectionFinalizer);
  SetFinalizers(object, finalizers);
  meta["uid"] = random_.Uuid();
  meta["creationTimestamp"] = FormatRfc3339(clock_.WallNow());
  if (rt.has_generation) meta["generation"] = 1;
  bool allocated_ip = false;
  if (rt.kind == "Service") {
    Json& spec = object["spec"];
    std::string type = GetString(spec, "type");
    std::string ip = GetString(spec, "clusterIP");
    if (type != "ExternalName" && ip != "None") {
      if (ip.empty()) {
        ip = AllocateClusterIp();
        allocated_ip = true;
      }
      spec["clusterIP"] = ip;
      spec["clusterIPs"] = Json::array({ip});
    } else if (ip == "None") {
      spec["clusterIPs"] = Json::array({"None"});
    }
    auto ports = spec.find("ports");
    if ((type == "NodePort" || type == "LoadBalancer") && ports != spec.end() &&
        ports->is_array()) {
      int port = 30000 + static_cast<int>(random_.Uniform(0, 2767));
      for (auto& p : *ports) {
        if (p.is_object() && !p.contains("nodePort")) p["nodePort"] = port++;
      }
    }
  }
  if (opts.dry_run) {
    if (allocated_ip) ReleaseClusterIp(object);
    if (auto existing = storage_.Get(rt.GroupResource(), rt.namespaced ? ns : "", name)) {
      if (HasDeletionTimestamp(existing->Parse())) return BeingDeletedError(rt, name);
      return AlreadyExistsError(rt, name);
    }
    return object;
  }

  ErrorHolder holder;
  auto result = storage_.Mutate(rt.GroupResource(), rt.namespaced ? ns : "", name,
                                [&](const ObjectRecord* current) -> StatusOr<Storage::Mutation> {
                                  if (current != nullptr) {
                                    if (HasDeletionTimestamp(current->Parse())) {
                                      return holder.Raise(BeingDeletedError(rt, name));
                                    }
                                    return holder.Raise(AlreadyExistsError(rt, name));
                                  }
                                  return Storage::Mutation::Put(object);
                                });
  if (!result.ok()) {
    if (allocated_ip) ReleaseClusterIp(object);
    if (holder.error) return *holder.error;
    return InternalError(result.status().message());
  }
  meta["resourceVersion"] = std::to_string(result->object->revision);
  return object;
}

Storage::Mutation ObjectApi::FinishUpdate(const ResourceType& rt, const Json& old, Json next,
                                          Subresource sub) {
  if (rt.has_generation && sub == Subresource::kNone && SpecPart(old) != SpecPart(next)) {
    next["metadata"]["generation"] = GenerationOf(old) + 1;
  }
  next["metadata"]["resourceVersion"] = ResourceVersionOf(old);
  if (IsRemovable(rt, next)) return Storage::Mutation::Delete();
  if (next == old) return Storage::Mutation::Noop();
  return Storage::Mutation::Put(std::move(next));
}

ApiResult<Storage::Mutation> ObjectApi::PrepareUpdate(const ResourceType& rt, const Json& old,
                                                      Json body, Subresource sub,
                                                      bool check_resource_version,
                                                      const AdmissionHook& admit) {
  const Json& old_meta = MemberOrNull(old, "metadata");
  std::string name = GetString(old_meta, "name");
  const Json& body_meta = MemberOrNull(body, "metadata");
  std::string body_rv = GetString(body_meta, "resourceVersion");
  if (check_resource_version && !body_rv.empty() && body_rv != ResourceVersionOf(old)) {
    return ConflictError(rt, name,
                         "the object has been modified; please apply your changes to the latest "
                         "version and try again");
  }
  std::string body_uid = GetString(body_meta, "uid");
  if (!body_uid.empty() && body_uid != GetString(old_meta, "uid")) {
    return ConflictError(rt, name,
                         "Precondition failed: UID in precondition: " + body_uid +
                             ", UID in object meta: " + GetString(old_meta, "uid"));
  }
  Json next;
  if (sub == Subresource::kStatus) {
    next = old;
    if (body.contains("status")) {
      next["status"] = body["status"];
    } else {
      next.erase("status");
    }
  } else {
    next = std::move(body);
    Json& meta = next["metadata"];
    for (const char* f : {"uid", "creationTimestamp", "generation", "deletionTimestamp",
                          "deletionGracePeriodSeconds", "namespace", "name"}) {
      if (old_meta.contains(f)) {
        meta[f] = old_meta[f];
      } else {
        meta.erase(f);
      }
    }
    meta.erase("selfLink");
    meta.erase("managedFields");
    if (rt.has_status) {
      if (old.contains("status")) {
        next["status"] = old["status"];
      } else {
        next.erase("status");
      }
    }
    if (rt.kind == "Secret") {
      if (auto err = NormalizeSecret(next)) return *err;
    }
    if (rt.kind == "Service") {
      // Allocated values the client left out are kept, as the API server does.
      const Json& old_spec = MemberOrNull(old, "spec");
      Json& spec = next["spec"];
      if (spec.is_object()) {
        for (const char* f : {"clusterIP", "clusterIPs"}) {
          if ((!spec.contains(f) || spec[f] == "" || spec[f].is_null()) && old_spec.contains(f)) {
            spec[f] = old_spec[f];
          }
        }
      }
    }
    ApplyDefaults(rt, next);
  }
  auto causes = ValidateObject(rt, next, &old);
  if (!causes.empty()) return InvalidError(rt, name, std::move(causes));
  if (HasDeletionTimestamp(old)) {
    auto old_f = Finalizers(old);
    for (const auto& f : Finalizers(next)) {
      if (std::find(old_f.begin(), old_f.end(), f) == old_f.end()) {
        return InvalidError(rt, name,
                            {{"FieldValueForbidden",
                              "Forbidden: no new finalizers can be added if the object is being "
                              "deleted, found new finalizers []string{\"" +
                                  f + "\"}",
                              "metadata.finalizers"}});
      }
    }
  }
  if (sub == Subresource::kNone) {
    if (auto err = Admit(rt, next, &old, admit)) return *err;
  }
  return FinishUpdate(rt, old, std::move(next), sub);
}

namespace {

// Applies an update-like mutation and maps the storage result back to the API result.
ApiResult<Json> ResultOf(const StatusOr<Storage::MutateResult>& result, const ErrorHolder& holder,
                         const ResourceType& rt, Subresource sub) {
  if (!result.ok()) {
    if (holder.error) return *holder.error;
    return InternalError(result.status().message());
  }
  if (!result->object) return InternalError("object vanished during update");
  Json obj = result->object->Parse();
  if (sub == Subresource::kScale) return ScaleOf(rt, obj);
  return obj;
}

}  // namespace

ApiResult<Json> ObjectApi::GuaranteedUpdate(
    const ResourceType& rt, std::string_view ns, std::string_view name, Subresource sub,
    bool dry_run, const std::function<ApiResult<Storage::Mutation>(const Json& old)>& compute) {
  // Compute outside the storage lock (admission hooks read storage), then write only if the
  // object is still the one the computation saw; otherwise start again, as the API server's
  // GuaranteedUpdate does.
  for (int attempt = 0;; ++attempt) {
    auto rec = storage_.Get(rt.GroupResource(), ns, name);
    if (!rec) return NotFoundError(rt, name);
    Json old = rec->Parse();
    auto mutation = compute(old);
    if (!mutation.ok()) return std::move(mutation).error();
    if (dry_run) {
      if (mutation->kind == Storage::Mutation::Kind::kPut) {
        Json out = std::move(mutation->object);
        if (sub == Subresource::kScale) return ScaleOf(rt, out);
        return out;
      }
      if (sub == Subresource::kScale) return ScaleOf(rt, old);
      return old;
    }
    bool stale = false;
    auto result = storage_.Mutate(rt.GroupResource(), ns, name,
                                  [&](const ObjectRecord* current) -> StatusOr<Storage::Mutation> {
                                    if (current == nullptr || current->revision != rec->revision) {
                                      stale = true;
                                      return Aborted("stale");
                                    }
                                    return std::move(mutation).value();
                                  });
    if (stale) {
      if (attempt < 64) continue;
      return ConflictError(rt, name, "the object is being modified too often; try again");
    }
    if (!result.ok()) return InternalError(result.status().message());
    if (result->applied == Storage::Mutation::Kind::kDelete) OnRemoved(rt, old);
    if (!result->object) return InternalError("object vanished during update");
    Json obj = result->object->Parse();
    if (sub == Subresource::kScale) return ScaleOf(rt, obj);
    return obj;
  }
}

ApiResult<Json> ObjectApi::Update(const ResourceType& rt, std::string_view ns,
                                  std::string_view name, Json object, Subresource sub,
                                  const WriteOptions& opts) {
  std::string_view scope_ns = rt.namespaced ? ns : "";
  if (sub == Subresource::kScale) {
    if (!object.is_object()) return BadRequestError("the body of the request must be a Scale");
    std::string body_rv = ResourceVersionOf(object);
    const Json& replicas = MemberOrNull(MemberOrNull(object, "spec"), "replicas");
    if (!replicas.is_null() && (!replicas.is_number_integer() || replicas.get<int64_t>() < 0)) {
      StatusError e = InvalidError(
          rt, name,
          {{"FieldValueInvalid",
            "Invalid value: " + RenderValue(replicas) + ": must be greater than or equal to 0",
            "spec.replicas"}});
      e.kind = "Scale";
      e.group = "autoscaling";
      return e;
    }
    return GuaranteedUpdate(rt, scope_ns, name, Subresource::kScale, opts.dry_run,
                            [&](const Json& old) -> ApiResult<Storage::Mutation> {
                              if (!body_rv.empty() && body_rv != ResourceVersionOf(old)) {
                                return ConflictError(
                                    rt, name,
                                    "the object has been modified; please apply your changes to "
                                    "the latest version and try again");
                              }
                              Json next = old;
                              next["spec"]["replicas"] = replicas.is_null() ? Json(0) : replicas;
                              return FinishUpdate(rt, old, std::move(next), Subresource::kNone);
                            });
  }
  if (auto err = CheckTypeMeta(rt, object)) return *err;
  std::string body_name = GetString(object["metadata"], "name");
  if (body_name != name) {
    return BadRequestError("the name of the object (" + body_name +
                           ") does not match the name on the URL (" + std::string(name) + ")");
  }
  std::string body_ns = GetString(object["metadata"], "namespace");
  if (rt.namespaced && !body_ns.empty() && body_ns != ns) {
    return BadRequestError(
        "the namespace of the provided object does not match the namespace sent on the request");
  }
  return GuaranteedUpdate(rt, scope_ns, name, sub, opts.dry_run, [&](const Json& old) {
    return PrepareUpdate(rt, old, object, sub, true, opts.admit);
  });
}

ApiResult<Json> ObjectApi::Patch(const ResourceType& rt, std::string_view ns, std::string_view name,
                                 PatchType type, std::string_view patch, Subresource sub,
                                 const WriteOptions& opts) {
  std::string_view scope_ns = rt.namespaced ? ns : "";
  Json patch_json;
  if (type == PatchType::kApply) {
    // Server-side apply, approximated: the applied configuration is created when absent and
    // otherwise merged like a strategic merge patch. Field ownership (managedFields) is not
    // tracked, so fields dropped from a later apply stay (see docs/embedded-cluster.md).
    auto applied = ParseYaml(patch, ParseOptions{.duplicate_keys = DuplicateKeys::kLastWins});
    if (!applied.ok()) return BadRequestError("error decoding YAML: " + applied.status().message());
    if (!applied->is_object())
      return BadRequestError("the applied configuration must be an object");
    Json config = std::move(applied).value();
    if (auto err = CheckTypeMeta(rt, config)) return *err;
    std::string applied_name = GetString(config["metadata"], "name");
    if (applied_name.empty()) config["metadata"]["name"] = std::string(name);
    if (!applied_name.empty() && applied_name != name) {
      return BadRequestError("the name of the object (" + applied_name +
                             ") does not match the name on the URL (" + std::string(name) + ")");
    }
    config["metadata"].erase("resourceVersion");
    if (sub == Subresource::kNone && !storage_.Get(rt.GroupResource(), scope_ns, name)) {
      auto created = Create(rt, ns, config, opts);
      if (created.ok() || created.error().code != 409) return created;
    }
    type = PatchType::kStrategicMerge;
    patch_json = std::move(config);
  } else {
    // Duplicate keys in a patch: the last wins, as Go decodes (field validation reports them).
    auto parsed = ParseJson(patch, ParseOptions{.duplicate_keys = DuplicateKeys::kLastWins});
    if (!parsed.ok()) {
      return BadRequestError("error decoding patch: " + parsed.status().message());
    }
    patch_json = std::move(parsed).value();
  }
  if (type == PatchType::kJsonPatch && !patch_json.is_array()) {
    return BadRequestError(
        "json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp");
  }
  if ((type == PatchType::kJsonMerge || type == PatchType::kStrategicMerge) &&
      !patch_json.is_object()) {
    return BadRequestError("error decoding patch: the patch must be a JSON object");
  }
  auto apply = [&](const Json& target) -> StatusOr<Json> {
    switch (type) {
      case PatchType::kJsonMerge:
        return ApplyMergePatch(target, patch_json);
      case PatchType::kJsonPatch:
        return ApplyJsonPatch(target, patch_json);
      case PatchType::kStrategicMerge:
        return ApplyStrategicMergePatch(target, patch_json,
                                        sub == Subresource::kScale ? "Scale" : rt.kind);
      case PatchType::kApply:
        break;
    }
    return InvalidArgument("unsupported patch type");
  };
  return GuaranteedUpdate(
      rt, scope_ns, name, sub, opts.dry_run, [&](const Json& old) -> ApiResult<Storage::Mutation> {
        if (sub == Subresource::kScale) {
          Json scale = ScaleOf(rt, old);
          auto patched = apply(scale);
          if (!patched.ok()) {
            return UnprocessableError(patched.status().message());
          }
          std::string prv = ResourceVersionOf(*patched);
          if (!prv.empty() && prv != ResourceVersionOf(old)) {
            return (ConflictError(rt, name,
                                  "the object has been modified; please apply your "
                                  "changes to the latest version and try again"));
          }
          const Json& replicas = MemberOrNull(MemberOrNull(*patched, "spec"), "replicas");
          if (!replicas.is_number_integer() || replicas.get<int64_t>() < 0) {
            StatusError e = InvalidError(rt, name,
                                         {{"FieldValueInvalid",
                                           "Invalid value: " + RenderValue(replicas) +
                                               ": must be greater than or equal to 0",
                                           "spec.replicas"}});
            e.kind = "Scale";
            e.group = "autoscaling";
            return e;
          }
          Json next = old;
          next["spec"]["replicas"] = replicas;
          return FinishUpdate(rt, old, std::move(next), Subresource::kNone);
        }
        auto patched = apply(old);
        if (!patched.ok()) {
          return UnprocessableError(patched.status().message());
        }
        Json body = std::move(patched).value();
        if (!body.is_object()) {
          return (BadRequestError("the patch did not produce an object"));
        }
        // A patch may carry metadata.resourceVersion as a precondition; otherwise it applies
        // to whatever is current (the API server retries patches on conflicts itself).
        if (auto err = CheckTypeMeta(rt, body)) return std::move(*err);
        if (GetString(body["metadata"], "name") != name) {
          return (BadRequestError("metadata.name cannot be changed by a patch"));
        }
        return PrepareUpdate(rt, old, std::move(body), sub, true, opts.admit);
      });
}

ApiResult<Json> ObjectApi::Modify(const ResourceType& rt, std::string_view ns,
                                  std::string_view name, const std::function<bool(Json&)>& mutate,
                                  Subresource sub) {
  ErrorHolder holder;
  Json removed_object;
  auto result = storage_.Mutate(rt.GroupResource(), rt.namespaced ? ns : "", name,
                                [&](const ObjectRecord* current) -> StatusOr<Storage::Mutation> {
                                  if (current == nullptr)
                                    return holder.Raise(NotFoundError(rt, name));
                                  Json old = current->Parse();
                                  Json next = old;
                                  if (!mutate(next)) return Storage::Mutation::Noop();
                                  if (sub == Subresource::kStatus) {
                                    Json status = next.contains("status") ? next["status"] : Json();
                                    next = old;
                                    if (status.is_null()) {
                                      next.erase("status");
                                    } else {
                                      next["status"] = std::move(status);
                                    }
                                  }
                                  auto mutation = FinishUpdate(rt, old, std::move(next), sub);
                                  if (mutation.kind == Storage::Mutation::Kind::kDelete)
                                    removed_object = old;
                                  return mutation;
                                });
  if (result.ok() && result->applied == Storage::Mutation::Kind::kDelete) {
    OnRemoved(rt, removed_object);
  }
  return ResultOf(result, holder, rt, Subresource::kNone);
}

}  // namespace steward::cluster
