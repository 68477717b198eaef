#include "cluster/apiserver/patch.h"

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "common/ascii.h"

namespace steward::cluster {
namespace {

// ---------------------------------------------------------------------------------------------
// Strategic merge patch metadata: the patchStrategy / patchMergeKey struct tags of k8s.io/api,
// for the types the embedded cluster serves. A field that is not listed is a map (merged key by
// key) or a list without a strategy (replaced whole), e.g. tolerations, envFrom, Ingress rules,
// Endpoints subsets and EndpointSlice endpoints. This is the one place to extend.
// ---------------------------------------------------------------------------------------------

struct FieldMeta {
  std::string_view type;       // the Go type holding the field ("" never matches)
  std::string_view field;      // its JSON name
  std::string_view child;      // the type of the value, or of the list's elements
  bool merge = false;          // patchStrategy "merge" (lists)
  std::string_view merge_key;  // patchMergeKey (lists of objects)
};

constexpr FieldMeta kFields[] = {
    // metav1.ObjectMeta
    {"ObjectMeta", "finalizers", "", true, ""},
    {"ObjectMeta", "ownerReferences", "", true, "uid"},
    // core/v1
    {"PodTemplateSpec", "metadata", "ObjectMeta"},
    {"PodTemplateSpec", "spec", "PodSpec"},
    {"PodSpec", "containers", "Container", true, "name"},
    {"PodSpec", "initContainers", "Container", true, "name"},
    {"PodSpec", "ephemeralContainers", "Container", true, "name"},
    {"PodSpec", "volumes", "", true, "name"},  // merge,retainKeys
    {"PodSpec", "imagePullSecrets", "", true, "name"},
    {"PodSpec", "hostAliases", "", true, "ip"},
    {"PodSpec", "topologySpreadConstraints", "", true, "topologyKey"},
    {"PodSpec", "schedulingGates", "", true, "name"},
    {"PodSpec", "resourceClaims", "", true, "name"},  // merge,retainKeys
    {"Container", "ports", "", true, "containerPort"},
    {"Container", "env", "", true, "name"},
    {"Container", "volumeMounts", "", true, "mountPath"},
    {"Container", "volumeDevices", "", true, "devicePath"},
    {"PodStatus", "conditions", "", true, "type"},
    {"PodStatus", "podIPs", "", true, "ip"},
    {"PodStatus", "hostIPs", "", true, "ip"},
    {"ServiceSpec", "ports", "", true, "port"},
    {"ServiceStatus", "conditions", "", true, "type"},
    {"PersistentVolumeClaimStatus", "conditions", "", true, "type"},
    {"NamespaceStatus", "conditions", "", true, "type"},
    {"NodeSpec", "podCIDRs", "", true, ""},
    {"NodeStatus", "conditions", "", true, "type"},
    {"NodeStatus", "addresses", "", true, "type"},
    // apps/v1, batch/v1
    {"DeploymentSpec", "template", "PodTemplateSpec"},  // strategy: retainKeys ($retainKeys)
    {"DeploymentStatus", "conditions", "", true, "type"},
    {"ReplicaSetSpec", "template", "PodTemplateSpec"},
    {"ReplicaSetStatus", "conditions", "", true, "type"},
    {"StatefulSetSpec", "template", "PodTemplateSpec"},
    {"StatefulSetStatus", "conditions", "", true, "type"},
    {"DaemonSetSpec", "template", "PodTemplateSpec"},
    {"DaemonSetStatus", "conditions", "", true, "type"},
    {"JobSpec", "template", "PodTemplateSpec"},
    {"JobStatus", "conditions", "", true, "type"},
};

// Kind -> the types of its spec and status. Every kind (known or not) has ObjectMeta metadata.
struct KindMeta {
  std::string_view kind;
  std::string_view spec;
  std::string_view status;
};

constexpr KindMeta kKinds[] = {
    {"Pod", "PodSpec", "PodStatus"},
    {"PodTemplate", "", ""},  // "template" handled below
    {"Service", "ServiceSpec", "ServiceStatus"},
    {"PersistentVolumeClaim", "", "PersistentVolumeClaimStatus"},
    {"Namespace", "", "NamespaceStatus"},
    {"Node", "NodeSpec", "NodeStatus"},
    {"Deployment", "DeploymentSpec", "DeploymentStatus"},
    {"ReplicaSet", "ReplicaSetSpec", "ReplicaSetStatus"},
    {"StatefulSet", "StatefulSetSpec", "StatefulSetStatus"},
    {"DaemonSet", "DaemonSetSpec", "DaemonSetStatus"},
    {"Job", "JobSpec", "JobStatus"},
};

// Root types are spelled "kind:<Kind>" so they never collide with a Go type name.
constexpr std::string_view kRootPrefix = "kind:";

struct FieldInfo {
  std::string_view child;
  bool merge = false;
  std::string_view merge_key;
};

FieldInfo LookupField(std::string_view type, std::string_view field) {
  if (type.empty()) return {};
  if (type.substr(0, kRootPrefix.size()) == kRootPrefix) {
    std::string_view kind = type.substr(kRootPrefix.size());
    if (field == "metadata") return {"ObjectMeta"};
    if (kind == "PodTemplate" && field == "template") return {"PodTemplateSpec"};
    for (const KindMeta& k : kKinds) {
      if (k.kind != kind) continue;
      if (field == "spec") return {k.spec};
      if (field == "status") return {k.status};
    }
    return {};
  }
  for (const FieldMeta& f : kFields) {
    if (f.type == type && f.field == field) return {f.child, f.merge, f.merge_key};
  }
  return {};
}

// ---------------------------------------------------------------------------------------------

constexpr std::string_view kDirective = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList";
constexpr std::string_view kSetElementOrder = "$setElementOrder";

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string Join(std::string_view path, std::string_view field) {
  if (path.empty()) return std::string(field);
  return std::string(path) + "." + std::string(field);
}

Status SmpError(std::string_view path, std::string msg) {
  if (path.empty()) return InvalidArgument(std::move(msg));
  return InvalidArgument(std::string(path) + ": " + msg);
}

// A JSON value's kind as Go's decoder would type it (all numbers are float64).
enum class ValueKind { kNull, kObject, kArray, kString, kNumber, kBool };
ValueKind KindOf(const Json& j) {
  switch (j.type()) {
    case Json::value_t::object:
      return ValueKind::kObject;
    case Json::value_t::array:
      return ValueKind::kArray;
    case Json::value_t::string:
      return ValueKind::kString;
    case Json::value_t::boolean:
      return ValueKind::kBool;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return ValueKind::kNumber;
    default:
      return ValueKind::kNull;
  }
}

// The merge key's value of a list element (null when absent or not an object).
const Json& KeyOf(const Json& item, std::string_view merge_key) {
  static const Json kNull;
  if (!item.is_object()) return kNull;
  auto it = item.find(merge_key);
  return it == item.end() ? kNull : *it;
}

// Position of `item` in `list`, comparing merge-key values (objects) or values (scalars).
int IndexIn(const Json& list, const Json& item, std::string_view merge_key) {
  for (size_t i = 0; i < list.size(); ++i) {
    bool eq =
        merge_key.empty() ? list[i] == item : KeyOf(list[i], merge_key) == KeyOf(item, merge_key);
    if (eq) return static_cast<int>(i);
  }
  return -1;
}

void StableSortByOrder(std::vector<Json>& items, const Json& order, std::string_view merge_key) {
  std::stable_sort(items.begin(), items.end(), [&](const Json& a, const Json& b) {
    int ia = IndexIn(order, a, merge_key);
    int ib = IndexIn(order, b, merge_key);
    return (ia < 0 ? INT_MAX : ia) < (ib < 0 ? INT_MAX : ib);
  });
}

// Orders a merged list the way apimachinery does: items named by `patch_order` follow that
// order, the others ("server-only") keep their order in `server_order`, and the two runs are
// interleaved using the server order where both sides appear in it.
Json EnforceOrder(const Json& merged, const Json& patch_order, const Json& server_order,
                  std::string_view merge_key) {
  std::vector<Json> from_patch;
  std::vector<Json> server_only;
  for (const Json& item : merged) {
    (IndexIn(patch_order, item, merge_key) >= 0 ? from_patch : server_only).push_back(item);
  }
  StableSortByOrder(from_patch, patch_order, merge_key);
  StableSortByOrder(server_only, server_order, merge_key);
  Json out = Json::array();
  size_t i = 0;
  size_t j = 0;
  while (i < server_only.size() || j < from_patch.size()) {
    if (i >= server_only.size()) {
      out.push_back(std::move(from_patch[j++]));
    } else if (j >= from_patch.size()) {
      out.push_back(std::move(server_only[i++]));
    } else {
      int li = IndexIn(server_order, server_only[i], merge_key);
      int ri = IndexIn(server_order, from_patch[j], merge_key);
      if (li >= 0 && ri >= 0 && li < ri) {
        out.push_back(std::move(server_only[i++]));
      } else {
        out.push_back(std::move(from_patch[j++]));
      }
    }
  }
  return out;
}

StatusOr<Json> MergeMap(Json original, const Json& patch, std::string_view type,
                        const std::string& path);
StatusOr<Json> MergeList(Json original, const Json& patch, const FieldInfo& field,
                         const std::string& path);

// A patch value with nothing to merge into: directives are applied (and dropped) and nulls
// removed, as decoding into the typed object would.
StatusOr<Json> Materialize(const Json& value, const FieldInfo& field, const std::string& path) {
  if (value.is_object()) return MergeMap(Json::object(), value, field.child, path);
  if (!value.is_array()) return value;
  if (field.merge) return MergeList(Json::array(), value, field, path);
  Json out = Json::array();
  for (const Json& item : value) {
    if (item.is_object()) {
      ASSIGN_OR_RETURN(Json m, MergeMap(Json::object(), item, field.child, path));
      out.push_back(std::move(m));
    } else {
      out.push_back(item);
    }
  }
  return out;
}

Status CheckSameElementKinds(const Json& a, const Json& b, const std::string& path,
                             ValueKind* kind) {
  bool have = false;
  for (const Json* list : {&a, &b}) {
    for (const Json& item : *list) {
      ValueKind k = KindOf(item);
      if (k == ValueKind::kArray) return SmpError(path, "lists of lists are not supported");
      if (!have) {
        *kind = k;
        have = true;
      } else if (k != *kind) {
        return SmpError(path,
                        "list element types are not identical: " + DumpJson(a) + " " + DumpJson(b));
      }
    }
  }
  return Status::Ok();
}

Status NoMergeKey(const std::string& path, const Json& item, std::string_view merge_key) {
  return SmpError(path, "map: " + DumpJson(item) +
                            " does not contain declared merge key: " + std::string(merge_key));
}

// Merges a list with patch strategy "merge": scalars are unioned, objects are matched by the
// merge key and merged, with the "$patch" element directives honoured.
StatusOr<Json> MergeList(Json original, const Json& patch, const FieldInfo& field,
                         const std::string& path) {
  if (original.empty() && patch.empty()) return original;
  ValueKind kind = ValueKind::kNull;
  RETURN_IF_ERROR(CheckSameElementKinds(original, patch, path, &kind));
  const std::string_view mk = field.merge_key;

  if (kind != ValueKind::kObject) {
    Json merged = Json::array();
    for (const Json* list : {static_cast<const Json*>(&original), &patch}) {
      for (const Json& item : *list) {
        if (IndexIn(merged, item, "") < 0) merged.push_back(item);
      }
    }
    return EnforceOrder(merged, patch, original, "");
  }
  if (mk.empty()) return SmpError(path, "cannot merge lists without merge key");

  Json plain = Json::array();
  bool replace = false;
  for (const Json& item : patch) {
    auto d = item.find(kDirective);
    if (d == item.end()) {
      plain.push_back(item);
      continue;
    }
    if (*d == "delete") {
      auto key = item.find(mk);
      if (key == item.end() || key->is_null()) return NoMergeKey(path, item, mk);
      Json kept = Json::array();
      for (Json& o : original) {
        if (!(o.is_object() && KeyOf(o, mk) == *key)) kept.push_back(std::move(o));
      }
      original = std::move(kept);
    } else if (*d == "replace") {
      replace = true;
    } else if (*d == "merge") {
      // Accepted (apimachinery refuses it in lists): the element is merged as usual.
      Json copy = item;
      copy.erase(std::string(kDirective));
      plain.push_back(std::move(copy));
    } else {
      return SmpError(path, "unknown patch type: " + DumpJson(*d) + " in map: " + DumpJson(item));
    }
  }
  if (replace) {
    Json out = Json::array();
    for (const Json& item : plain) {
      ASSIGN_OR_RETURN(Json m, MergeMap(Json::object(), item, field.child, path));
      out.push_back(std::move(m));
    }
    return out;
  }

  const Json server_order = original;
  for (const Json& item : plain) {
    // A null key names no element (and would be dropped from the merged element, which a second
    // application could then not find): as absent.
    auto key = item.find(mk);
    if (key == item.end() || key->is_null()) return NoMergeKey(path, item, mk);
    bool found = false;
    for (Json& o : original) {
      if (!o.is_object()) return SmpError(path, "list element is not an object: " + DumpJson(o));
      auto ok = o.find(mk);
      if (ok != o.end() && *ok == *key) {
        ASSIGN_OR_RETURN(o, MergeMap(std::move(o), item, field.child, path));
        found = true;
        break;
      }
    }
    if (!found) {
      ASSIGN_OR_RETURN(Json m, MergeMap(Json::object(), item, field.child, path));
      original.push_back(std::move(m));
    }
  }
  return EnforceOrder(original, plain, server_order, mk);
}

StatusOr<std::string> DirectiveField(std::string_view key, std::string_view prefix,
                                     const std::string& path, std::string_view error) {
  if (key.size() <= prefix.size() + 1 || key[prefix.size()] != '/') {
    return SmpError(path, std::string(error));
  }
  return std::string(key.substr(prefix.size() + 1));
}

// The items of `patch_list` (deletions and directive elements aside) must appear in the same
// relative order as in the $setElementOrder list.
Status ValidateSetOrder(const Json& patch_list, const Json& order, std::string_view mk,
                        const std::string& path) {
  if (order.empty() || patch_list.empty()) return Status::Ok();
  std::vector<const Json*> items;
  for (const Json& item : patch_list) {
    if (!mk.empty()) {
      if (!item.is_object()) {
        return SmpError(path, "expected a map, but received " + DumpJson(item));
      }
      if (item.contains(kDirective)) continue;
    }
    items.push_back(&item);
  }
  size_t pi = 0;
  size_t si = 0;
  while (pi < items.size() && si < order.size()) {
    bool eq;
    if (mk.empty()) {
      eq = *items[pi] == order[si];
    } else {
      if (!items[pi]->contains(mk)) return NoMergeKey(path, *items[pi], mk);
      if (!order[si].is_object() || !order[si].contains(mk)) return NoMergeKey(path, order[si], mk);
      eq = (*items[pi])[std::string(mk)] == order[si][std::string(mk)];
    }
    if (eq) ++pi;
    ++si;
  }
  if (pi < items.size()) {
    return SmpError(path, "The order in patch list:\n" + DumpJson(patch_list) +
                              "\n doesn't match $setElementOrder list:\n" + DumpJson(order) + "\n");
  }
  return Status::Ok();
}

StatusOr<Json> MergeMap(Json original, const Json& patch, std::string_view type,
                        const std::string& path) {
  if (auto d = patch.find(kDirective); d != patch.end()) {
    if (*d == "replace") {
      Json rest = patch;
      rest.erase(std::string(kDirective));
      return MergeMap(Json::object(), rest, type, path);
    }
    if (*d == "delete") return Json::object();
    if (*d != "merge") {
      return SmpError(path, "unknown patch type: " + DumpJson(*d) + " in map: " + DumpJson(patch));
    }
  }
  if (!original.is_object()) original = Json::object();

  if (auto rk = patch.find(kRetainKeys); rk != patch.end()) {
    if (!rk->is_array()) return SmpError(path, "invalid patch format of retainKeys");
    auto retained = [&](const std::string& key) {
      return std::any_of(rk->begin(), rk->end(), [&](const Json& k) { return k == key; });
    };
    for (const auto& [k, v] : patch.items()) {
      if (v.is_null() || k == kDirective || k == kRetainKeys ||
          StartsWith(k, kDeleteFromPrimitiveList) || StartsWith(k, kSetElementOrder)) {
        continue;
      }
      if (!retained(k)) return SmpError(path, "invalid patch format of retainKeys");
    }
    for (auto it = original.begin(); it != original.end();) {
      it = retained(it.key()) ? std::next(it) : original.erase(it);
    }
  }

  // $setElementOrder/<field>: merge that field now, then order it as the directive says.
  std::vector<std::string> ordered;
  for (const auto& [k, v] : patch.items()) {
    if (!StartsWith(k, kSetElementOrder)) continue;
    ASSIGN_OR_RETURN(
        std::string name,
        DirectiveField(k, kSetElementOrder, path, "invalid patch format of setElementOrder list"));
    if (!v.is_array()) return SmpError(path, "invalid patch format of setElementOrder list");
    const std::string child_path = Join(path, name);
    FieldInfo field = LookupField(type, name);
    auto orig_it = original.find(name);
    auto patch_it = patch.find(name);
    bool in_original = orig_it != original.end();
    bool in_patch = patch_it != patch.end();
    if (in_patch && patch_it->is_null()) continue;  // the field is being deleted
    if (in_original && !orig_it->is_array()) {
      return SmpError(child_path, "expected a list, but received " + DumpJson(*orig_it));
    }
    if (in_patch && !patch_it->is_array()) {
      return SmpError(child_path, "expected a list, but received " + DumpJson(*patch_it));
    }
    if (in_patch) RETURN_IF_ERROR(ValidateSetOrder(*patch_it, v, field.merge_key, child_path));
    if (!in_original && !in_patch) continue;
    Json server_order = in_original ? *orig_it : Json::array();
    Json merged;
    if (in_original && !in_patch) {
      merged = *orig_it;
    } else if (!in_original) {
      ASSIGN_OR_RETURN(merged, Materialize(*patch_it, field, child_path));
    } else if (field.merge) {
      ASSIGN_OR_RETURN(merged, MergeList(*orig_it, *patch_it, field, child_path));
    } else {
      ASSIGN_OR_RETURN(merged, Materialize(*patch_it, field, child_path));
    }
    original[name] = EnforceOrder(merged, v, server_order, field.merge_key);
    ordered.push_back(name);
  }

  for (const auto& [k, v] : patch.items()) {
    if (k == kDirective || k == kRetainKeys || StartsWith(k, kSetElementOrder) ||
        StartsWith(k, kDeleteFromPrimitiveList) ||
        std::find(ordered.begin(), ordered.end(), k) != ordered.end()) {
      continue;
    }
    if (v.is_null()) {
      original.erase(k);
      continue;
    }
    const std::string child_path = Join(path, k);
    FieldInfo field = LookupField(type, k);
    auto it = original.find(k);
    if (it == original.end() || KindOf(*it) != KindOf(v) || !(v.is_object() || v.is_array())) {
      ASSIGN_OR_RETURN(original[k], Materialize(v, field, child_path));
    } else if (v.is_object()) {
      ASSIGN_OR_RETURN(*it, MergeMap(std::move(*it), v, field.child, child_path));
    } else if (field.merge) {
      ASSIGN_OR_RETURN(*it, MergeList(std::move(*it), v, field, child_path));
    } else {
      ASSIGN_OR_RETURN(*it, Materialize(v, field, child_path));
    }
  }

  // $deleteFromPrimitiveList/<field>: remove those values from a list of scalars.
  for (const auto& [k, v] : patch.items()) {
    if (!StartsWith(k, kDeleteFromPrimitiveList)) continue;
    ASSIGN_OR_RETURN(std::string name, DirectiveField(k, kDeleteFromPrimitiveList, path,
                                                      "invalid patch format of primitive list"));
    if (!v.is_array()) return SmpError(path, "invalid patch format of primitive list");
    auto it = original.find(name);
    if (it == original.end() || !it->is_array()) continue;
    Json kept = Json::array();
    for (Json& item : *it) {
      if (item.is_object() || IndexIn(v, item, "") < 0) kept.push_back(std::move(item));
    }
    *it = std::move(kept);
  }
  return original;
}

// ---------------------------------------------------------------------------------------------
// JSON patch (RFC 6902) with JSON pointers (RFC 6901).
// ---------------------------------------------------------------------------------------------

StatusOr<std::vector<std::string>> ParsePointer(std::string_view ptr) {
  std::vector<std::string> tokens;
  if (ptr.empty()) return tokens;
  if (ptr[0] != '/') return InvalidArgument("must be empty or start with '/'");
  size_t pos = 1;
  while (true) {
    size_t slash = ptr.find('/', pos);
    std::string_view raw =
        ptr.substr(pos, slash == std::string_view::npos ? ptr.npos : slash - pos);
    std::string token;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '~') {
        token += raw[i];
      } else if (i + 1 < raw.size() && raw[i + 1] == '0') {
        token += '~';
        ++i;
      } else if (i + 1 < raw.size() && raw[i + 1] == '1') {
        token += '/';
        ++i;
      } else {
        return InvalidArgument("invalid escape in \"" + std::string(raw) +
                               "\" ('~' must be "
                               "followed by '0' or '1')");
      }
    }
    tokens.push_back(std::move(token));
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return tokens;
}

// An array index: "0" or digits without a leading zero, below `size` (or equal to it when
// `allow_end`, for inserting at the end).
StatusOr<size_t> ArrayIndex(const std::string& token, size_t size, bool allow_end) {
  if (token.empty() || token.size() > 9 || (token.size() > 1 && token[0] == '0') ||
      !std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return InvalidArgument("\"" + token + "\" is not a valid array index");
  }
  size_t index = std::stoul(token);
  if (index > size || (index == size && !allow_end)) {
    return InvalidArgument("array index " + token + " out of bounds (length " +
                           std::to_string(size) + ")");
  }
  return index;
}

class JsonPatcher {
 public:
  explicit JsonPatcher(Json doc) : doc_(std::move(doc)) {}
  Json Take() { return std::move(doc_); }

  Status Apply(const Json& op) {
    if (!op.is_object()) return InvalidArgument("operation must be an object");
    auto op_it = op.find("op");
    if (op_it == op.end() || !op_it->is_string()) return InvalidArgument("missing \"op\"");
    const std::string name = op_it->get<std::string>();
    auto path_it = op.find("path");
    if (path_it == op.end() || !path_it->is_string()) return InvalidArgument("missing \"path\"");
    auto path = ParsePointer(path_it->get_ref<const std::string&>());
    if (!path.ok()) return InvalidArgument("invalid path: " + path.status().message());
    auto value = op.find("value");
    auto need_value = [&]() -> Status {
      return value == op.end() ? InvalidArgument("missing \"value\"") : Status::Ok();
    };
    auto from = [&]() -> StatusOr<std::vector<std::string>> {
      auto f = op.find("from");
      if (f == op.end() || !f->is_string()) return InvalidArgument("missing \"from\"");
      auto parsed = ParsePointer(f->get_ref<const std::string&>());
      if (!parsed.ok()) return InvalidArgument("invalid from: " + parsed.status().message());
      return parsed;
    };
    if (name == "add") {
      RETURN_IF_ERROR(need_value());
      return Add(*path, *value);
    }
    if (name == "remove") return Remove(*path).status();
    if (name == "replace") {
      RETURN_IF_ERROR(need_value());
      ASSIGN_OR_RETURN(Json * target, Find(*path));
      *target = *value;
      return Status::Ok();
    }
    if (name == "move") {
      ASSIGN_OR_RETURN(auto src, from());
      if (src == *path) return Status::Ok();
      if (src.size() < path->size() && std::equal(src.begin(), src.end(), path->begin())) {
        return InvalidArgument("cannot move a value into one of its children");
      }
      ASSIGN_OR_RETURN(Json moved, Remove(src));
      return Add(*path, moved);
    }
    if (name == "copy") {
      ASSIGN_OR_RETURN(auto src, from());
      ASSIGN_OR_RETURN(Json * source, Find(src));
      Json copy = *source;
      return Add(*path, copy);
    }
    if (name == "test") {
      RETURN_IF_ERROR(need_value());
      ASSIGN_OR_RETURN(Json * target, Find(*path));
      if (*target != *value) {
        return InvalidArgument("test failed: value is " + DumpJson(*target) + ", expected " +
                               DumpJson(*value));
      }
      return Status::Ok();
    }
    return InvalidArgument("unknown op \"" + name + "\"");
  }

 private:
  static std::string Pointer(const std::vector<std::string>& tokens, size_t n) {
    std::string out;
    for (size_t i = 0; i < n; ++i) {
      out += '/';
      for (char c : tokens[i]) {
        if (c == '~') {
          out += "~0";
        } else if (c == '/') {
          out += "~1";
        } else {
          out += c;
        }
      }
    }
    return out;
  }

  // The value at the first `n` tokens.
  StatusOr<Json*> Walk(const std::vector<std::string>& tokens, size_t n) {
    Json* cur = &doc_;
    for (size_t i = 0; i < n; ++i) {
      const std::string& t = tokens[i];
      if (cur->is_object()) {
        auto it = cur->find(t);
        if (it == cur->end()) {
          return InvalidArgument("path \"" + Pointer(tokens, i + 1) + "\" does not exist");
        }
        cur = &*it;
      } else if (cur->is_array()) {
        if (t == "-") {
          return InvalidArgument("\"-\" (past the end) cannot be read at \"" +
                                 Pointer(tokens, i + 1) + "\"");
        }
        auto idx = ArrayIndex(t, cur->size(), false);
        if (!idx.ok()) {
          return InvalidArgument("path \"" + Pointer(tokens, i + 1) +
                                 "\": " + idx.status().message());
        }
        cur = &(*cur)[*idx];
      } else {
        return InvalidArgument("path \"" + Pointer(tokens, i + 1) + "\" does not exist (\"" +
                               Pointer(tokens, i) + "\" is not an object or array)");
      }
    }
    return cur;
  }

  StatusOr<Json*> Find(const std::vector<std::string>& tokens) {
    return Walk(tokens, tokens.size());
  }

  Status Add(const std::vector<std::string>& tokens, const Json& value) {
    if (tokens.empty()) {
      doc_ = value;
      return Status::Ok();
    }
    ASSIGN_OR_RETURN(Json * parent, Walk(tokens, tokens.size() - 1));
    const std::string& last = tokens.back();
    if (parent->is_object()) {
      (*parent)[last] = value;
      return Status::Ok();
    }
    if (parent->is_array()) {
      if (last == "-") {
        parent->push_back(value);
        return Status::Ok();
      }
      auto idx = ArrayIndex(last, parent->size(), true);
      if (!idx.ok()) {
        return InvalidArgument("path \"" + Pointer(tokens, tokens.size()) +
                               "\": " + idx.status().message());
      }
      parent->insert(parent->begin() + static_cast<std::ptrdiff_t>(*idx), value);
      return Status::Ok();
    }
    return InvalidArgument("path \"" + Pointer(tokens, tokens.size()) + "\": parent \"" +
                           Pointer(tokens, tokens.size() - 1) + "\" is not an object or array");
  }

  StatusOr<Json> Remove(const std::vector<std::string>& tokens) {
    if (tokens.empty()) return InvalidArgument("cannot remove the whole document");
    ASSIGN_OR_RETURN(Json * parent, Walk(tokens, tokens.size() - 1));
    const std::string& last = tokens.back();
    if (parent->is_object()) {
      auto it = parent->find(last);
      if (it == parent->end()) {
        return InvalidArgument("path \"" + Pointer(tokens, tokens.size()) + "\" does not exist");
      }
      Json out = std::move(*it);
      parent->erase(it);
      return out;
    }
    if (parent->is_array()) {
      auto idx = ArrayIndex(last, parent->size(), false);
      if (!idx.ok()) {
        return InvalidArgument("path \"" + Pointer(tokens, tokens.size()) +
                               "\": " + idx.status().message());
      }
      Json out = std::move((*parent)[*idx]);
      parent->erase(static_cast<size_t>(*idx));
      return out;
    }
    return InvalidArgument("path \"" + Pointer(tokens, tokens.size()) + "\" does not exist");
  }

  Json doc_;
};

}  // namespace

StatusOr<PatchType> PatchTypeFromContentType(std::string_view content_type) {
  std::string media =
      AsciiLower(TrimHttpWhitespace(content_type.substr(0, content_type.find(';'))));
  if (media == "application/json-patch+json") return PatchType::kJsonPatch;
  if (media == "application/merge-patch+json") return PatchType::kJsonMerge;
  if (media == "application/strategic-merge-patch+json") return PatchType::kStrategicMerge;
  if (media == "application/apply-patch+yaml") return PatchType::kApply;
  return InvalidArgument(
      "the body of the request was in an unknown format - accepted media types "
      "include: application/json-patch+json, application/merge-patch+json, "
      "application/apply-patch+yaml, application/strategic-merge-patch+json");
}

StatusOr<Json> ApplyMergePatch(const Json& target, const Json& patch) {
  struct Merger {
    static Json Merge(Json t, const Json& p) {
      if (!p.is_object()) return p;
      if (!t.is_object()) t = Json::object();
      for (const auto& [k, v] : p.items()) {
        if (v.is_null()) {
          t.erase(k);
        } else {
          Json& slot = t[k];
          slot = Merge(std::move(slot), v);
        }
      }
      return t;
    }
  };
  return Merger::Merge(target, patch);
}

StatusOr<Json> ApplyJsonPatch(const Json& target, const Json& patch) {
  if (!patch.is_array()) {
    return InvalidArgument("json patch must be a list of operations, got " + DumpJson(patch));
  }
  JsonPatcher patcher(target);
  for (size_t i = 0; i < patch.size(); ++i) {
    Status st = patcher.Apply(patch[i]);
    if (!st.ok()) {
      std::string op = patch[i].is_object() ? GetString(patch[i], "op", "?") : "?";
      std::string path = patch[i].is_object() ? GetString(patch[i], "path", "") : "";
      return InvalidArgument("json patch operation " + std::to_string(i) + " (" + op + " \"" +
                             path + "\"): " + st.message());
    }
  }
  return patcher.Take();
}

StatusOr<Json> ApplyStrategicMergePatch(const Json& target, const Json& patch,
                                        std::string_view kind) {
  if (!patch.is_object()) {
    return InvalidArgument("strategic merge patch must be a JSON object, got " + DumpJson(patch));
  }
  std::string root = std::string(kRootPrefix) + std::string(kind);
  return MergeMap(target, patch, root, "");
}

}  // namespace steward::cluster
