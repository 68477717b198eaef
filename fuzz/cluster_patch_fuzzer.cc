// The embedded cluster's PATCH formats (JSON merge patch, JSON patch, strategic merge patch, and
// server-side apply's YAML body applied as a strategic merge patch) against a realistic
// Deployment, as ObjectApi::Patch and the REST handler's field validation apply them.
//
// Input: the first byte picks the patch type ('m' merge, 'j' JSON patch, 's' strategic merge,
// 'a' apply YAML; any other byte: its value modulo 4), the rest is the patch body.
#include <string>

#include "cluster/apiserver/patch.h"
#include "common/yaml.h"
#include "fuzz_util.h"

namespace steward::cluster {
namespace {

const Json& Deployment() {
  static const Json* d = new Json(Json::parse(R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "nr-alpha", "namespace": "steward", "uid": "5f0c-11",
      "resourceVersion": "4711", "generation": 3,
      "labels": {"app": "nr-alpha", "steward.io/project": "p-1"},
      "annotations": {"steward.io/spec-hash": "abc"},
      "finalizers": ["steward.io/cleanup"],
      "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                           "uid": "u-1", "controller": true}]},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "nr-alpha"}},
      "strategy": {"type": "Recreate"},
      "template": {"metadata": {"labels": {"app": "nr-alpha"}},
        "spec": {
          "containers": [{"name": "node-red", "image": "flowfuse/node-red:4.0.2",
            "ports": [{"containerPort": 1880, "name": "web"}, {"containerPort": 2880}],
            "env": [{"name": "FORGE_URL", "value": "http://forge"}, {"name": "TZ",
                     "value": "Europe/London"}],
            "resources": {"limits": {"cpu": "100m", "memory": "256Mi"}},
            "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
           {"name": "sidecar", "image": "busybox", "args": ["sleep", "3600"]}],
          "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "nr-alpha"}}],
          "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "nr"}],
          "imagePullSecrets": [{"name": "regcred"}]}}},
    "status": {"observedGeneration": 3, "replicas": 1, "readyReplicas": 1,
      "conditions": [{"type": "Available", "status": "True"},
                     {"type": "Progressing", "status": "True"}]}
  })"));
  return *d;
}

bool HasNull(const Json& j) {
  if (j.is_null()) return true;
  if (j.is_structured()) {
    for (const auto& v : j) {
      if (HasNull(v)) return true;
    }
  }
  return false;
}

bool HasDirective(const Json& j) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (k.starts_with("$") || HasDirective(v)) return true;
    }
  } else if (j.is_array()) {
    for (const auto& v : j) {
      if (HasDirective(v)) return true;
    }
  }
  return false;
}

void CheckSerialises(const Json& j) {
  auto back = ParseJson(DumpJson(j));
  FUZZ_CHECK(back.ok() && *back == j);
}

void FuzzMerge(const Json& patch) {
  auto r = ApplyMergePatch(Deployment(), patch);
  if (!r.ok()) {
    FUZZ_CHECK(r.status().code() == StatusCode::kInvalidArgument);
    return;
  }
  if (patch.is_object()) FUZZ_CHECK(r->is_object());
  CheckSerialises(*r);
  // RFC 7386 merge patches are idempotent.
  auto twice = ApplyMergePatch(*r, patch);
  FUZZ_CHECK(twice.ok() && *twice == *r);
}

void FuzzJsonPatch(const Json& patch) {
  auto r = ApplyJsonPatch(Deployment(), patch);
  if (!r.ok()) {
    FUZZ_CHECK(r.status().code() == StatusCode::kInvalidArgument);
    FUZZ_CHECK(!r.status().message().empty());
    return;
  }
  FUZZ_CHECK(patch.is_array());
  CheckSerialises(*r);
  // An empty patch changes nothing.
  if (patch.empty()) FUZZ_CHECK(*r == Deployment());
}

// `from_yaml`: ParseYaml keeps invalid UTF-8 in strings (ParseJson refuses it), which DumpJson
// then replaces, so the serialisation round trip is only checked for JSON patches.
void FuzzStrategic(const Json& patch, bool from_yaml) {
  auto r = ApplyStrategicMergePatch(Deployment(), patch, "Deployment");
  if (!r.ok()) {
    FUZZ_CHECK(r.status().code() == StatusCode::kInvalidArgument);
    return;
  }
  if (!from_yaml) CheckSerialises(*r);
  if (!patch.is_object()) return;
  FUZZ_CHECK_MSG(r->is_object(), DumpJson(patch));
  if (HasDirective(patch)) return;
  // Without directives a strategic merge patch is idempotent, and for a kind with no patch
  // metadata (beyond the ObjectMeta every kind has) it is a merge patch.
  auto twice = ApplyStrategicMergePatch(*r, patch, "Deployment");
  FUZZ_CHECK_MSG(twice.ok() && *twice == *r, DumpJson(patch));
  // (Nulls are left out: inside a list's new elements a strategic patch drops them, as
  // Kubernetes does when it materialises a new subtree, while a merge patch keeps lists as given.)
  if (!patch.contains("metadata") && !HasNull(patch)) {
    auto unknown = ApplyStrategicMergePatch(Deployment(), patch, "FuzzUnknownKind");
    auto merge = ApplyMergePatch(Deployment(), patch);
    FUZZ_CHECK_MSG(unknown.ok() && merge.ok() && *unknown == *merge, DumpJson(patch));
  }
}

}  // namespace
}  // namespace steward::cluster

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace steward;
  if (size == 0) return 0;
  const char kind = static_cast<char>(data[0]);
  std::string_view body = fuzz::AsView(data + 1, size - 1);
  const int type = kind == 'm'   ? 0
                   : kind == 'j' ? 1
                   : kind == 's' ? 2
                   : kind == 'a' ? 3
                                 : data[0] % 4;
  if (type == 3) {
    auto applied = ParseYaml(body);
    if (!applied.ok()) {
      FUZZ_CHECK(applied.status().code() == StatusCode::kInvalidArgument);
      return 0;
    }
    cluster::FuzzStrategic(*applied, true);
    return 0;
  }
  auto patch = ParseJson(body);
  if (!patch.ok()) return 0;
  switch (type) {
    case 0:
      cluster::FuzzMerge(*patch);
      break;
    case 1:
      cluster::FuzzJsonPatch(*patch);
      break;
    default:
      cluster::FuzzStrategic(*patch, false);
      break;
  }
  return 0;
}
