#include "cluster/apiserver/discovery.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include "cluster/apiserver/openapi_schemas.h"
#include "cluster/model/resource_types.h"

namespace steward::cluster {

namespace {

// The Kubernetes release whose API this server imitates; kubectl warns when its minor version
// is more than one away from the server's.
constexpr const char* kKubeMajor = "1";
constexpr const char* kKubeMinor = "32";
constexpr const char* kGitVersion = "v1.32.0-steward";

#if defined(__x86_64__)
constexpr const char* kPlatform = "linux/amd64";
#elif defined(__aarch64__)
constexpr const char* kPlatform = "linux/arm64";
#else
constexpr const char* kPlatform = "linux/unknown";
#endif

struct Subresource {
  std::string name;
  std::string group;    // "" = the parent's group (as discovery writes it)
  std::string version;  // "" = the parent's version
  std::string kind;
  std::vector<std::string> verbs;
};

std::vector<std::string> Verbs(const ResourceType& rt) {
  if (rt.create_only) return {"create"};
  // Namespaces are the one served type without deletecollection on a real server.
  if (rt.group.empty() && rt.resource == "namespaces") {
    return {"create", "delete", "get", "list", "patch", "update", "watch"};
  }
  return {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"};
}

bool HasVerb(const ResourceType& rt, std::string_view verb) {
  auto verbs = Verbs(rt);
  return std::find(verbs.begin(), verbs.end(), verb) != verbs.end();
}

// Sorted by name, as a real server lists them.
std::vector<Subresource> Subresources(const ResourceType& rt) {
  std::vector<Subresource> out;
  if (rt.group.empty() && rt.resource == "services") {
    out.push_back(
        {"proxy", "", "", "ServiceProxyOptions", {"create", "delete", "get", "patch", "update"}});
  }
  if (rt.has_scale)
    out.push_back({"scale", "autoscaling", "v1", "Scale", {"get", "patch", "update"}});
  if (rt.has_status) out.push_back({"status", "", "", rt.kind, {"get", "patch", "update"}});
  if (rt.has_token) {
    out.push_back({"token", "authentication.k8s.io", "v1", "TokenRequest", {"create"}});
  }
  return out;
}

// Served group/versions in the order a real server lists them (core first).
std::vector<std::pair<std::string, std::string>> GroupVersions() {
  static const std::vector<std::string> kOrder = {"",
                                                  "apps",
                                                  "authentication.k8s.io",
                                                  "authorization.k8s.io",
                                                  "networking.k8s.io",
                                                  "policy",
                                                  "rbac.authorization.k8s.io",
                                                  "coordination.k8s.io",
                                                  "discovery.k8s.io"};
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::pair<std::string, std::string>> seen;
  auto rank = [](const std::string& g) {
    auto it = std::find(kOrder.begin(), kOrder.end(), g);
    return static_cast<size_t>(it - kOrder.begin());
  };
  std::vector<const ResourceType*> types;
  for (const auto& rt : AllResourceTypes()) types.push_back(&rt);
  std::stable_sort(types.begin(), types.end(), [&](const ResourceType* a, const ResourceType* b) {
    return rank(a->group) < rank(b->group);
  });
  for (const ResourceType* rt : types) {
    if (seen.emplace(rt->group, rt->version).second) out.emplace_back(rt->group, rt->version);
  }
  return out;
}

std::vector<const ResourceType*> TypesOf(std::string_view group, std::string_view version) {
  std::vector<const ResourceType*> out;
  for (const auto& rt : AllResourceTypes()) {
    if (rt.group == group && rt.version == version) out.push_back(&rt);
  }
  std::sort(out.begin(), out.end(),
            [](const ResourceType* a, const ResourceType* b) { return a->resource < b->resource; });
  return out;
}

std::string GroupVersionString(std::string_view group, std::string_view version) {
  return group.empty() ? std::string(version) : std::string(group) + "/" + std::string(version);
}

Json StringArray(const std::vector<std::string>& v) {
  Json a = Json::array();
  for (const auto& s : v) a.push_back(s);
  return a;
}

// ---- aggregated discovery ------------------------------------------------------------------

Json AggregatedResource(const ResourceType& rt) {
  Json r = {{"resource", rt.resource},
            {"responseKind", {{"group", ""}, {"version", ""}, {"kind", rt.kind}}},
            {"scope", rt.namespaced ? "Namespaced" : "Cluster"},
            {"singularResource", rt.singular},
            {"verbs", StringArray(Verbs(rt))}};
  if (!rt.short_names.empty()) r["shortNames"] = StringArray(rt.short_names);
  if (!rt.categories.empty()) r["categories"] = StringArray(rt.categories);
  Json subs = Json::array();
  for (const Subresource& s : Subresources(rt)) {
    subs.push_back(
        {{"subresource", s.name},
         {"responseKind", {{"group", s.group}, {"version", s.version}, {"kind", s.kind}}},
         {"verbs", StringArray(s.verbs)}});
  }
  if (!subs.empty()) r["subresources"] = std::move(subs);
  return r;
}

Json AggregatedGroup(const std::string& group, const std::vector<std::string>& versions) {
  Json meta = {{"creationTimestamp", nullptr}};
  if (!group.empty()) meta["name"] = group;
  Json version_list = Json::array();
  for (const auto& v : versions) {
    Json resources = Json::array();
    for (const ResourceType* rt : TypesOf(group, v)) resources.push_back(AggregatedResource(*rt));
    version_list.push_back(
        {{"version", v}, {"resources", std::move(resources)}, {"freshness", "Current"}});
  }
  return {{"metadata", std::move(meta)}, {"versions", std::move(version_list)}};
}

// ---- OpenAPI paths ---------------------------------------------------------------------------

struct Param {
  const char* name;
  const char* in;
  const char* type;
  const char* description;
  bool required = false;
};

const Param kPretty{"pretty", "query", "string", "If 'true', then the output is pretty printed."};
const Param kNamespace{"namespace", "path", "string",
                       "object name and auth scope, such as for teams and projects", true};
const Param kDryRun{"dryRun", "query", "string",
                    "When present, indicates that modifications should not be persisted. Valid "
                    "values are: - All: all dry run stages will be processed"};
const Param kFieldManager{"fieldManager", "query", "string",
                          "fieldManager is a name associated with the actor or entity that is "
                          "making these changes."};
const Param kFieldValidation{
    "fieldValidation", "query", "string",
    "fieldValidation instructs the server on how to handle objects in the request containing "
    "unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict."};
const Param kForce{"force", "query", "boolean",
                   "Force is going to \"force\" Apply requests. It means user will re-acquire "
                   "conflicting fields owned by other people."};
const Param kGracePeriod{"gracePeriodSeconds", "query", "integer",
                         "The duration in seconds before the object should be deleted. The value "
                         "zero indicates delete immediately."};
const Param kIgnoreStoreRead{"ignoreStoreReadErrorWithClusterBreakingPotential", "query", "boolean",
                             "if set to true, it will trigger an unsafe deletion of the resource "
                             "in case the normal deletion flow fails with a corrupt object error."};
const Param kOrphan{"orphanDependents", "query", "boolean",
                    "Deprecated: please use the PropagationPolicy."};
const Param kPropagation{"propagationPolicy", "query", "string",
                         "Whether and how garbage collection will be performed: 'Orphan', "
                         "'Background' or 'Foreground'."};
const Param kAllowBookmarks{"allowWatchBookmarks", "query", "boolean",
                            "allowWatchBookmarks requests watch events with type \"BOOKMARK\"."};
const Param kContinue{"continue", "query", "string",
                      "The continue option should be set when retrieving more results from the "
                      "server."};
const Param kFieldSelector{"fieldSelector", "query", "string",
                           "A selector to restrict the list of returned objects by their fields. "
                           "Defaults to everything."};
const Param kLabelSelector{"labelSelector", "query", "string",
                           "A selector to restrict the list of returned objects by their labels. "
                           "Defaults to everything."};
const Param kLimit{"limit", "query", "integer",
                   "limit is a maximum number of responses to return for a list call."};
const Param kResourceVersion{"resourceVersion", "query", "string",
                             "resourceVersion sets a constraint on what resource versions a "
                             "request may be served from."};
const Param kResourceVersionMatch{"resourceVersionMatch", "query", "string",
                                  "resourceVersionMatch determines how resourceVersion is "
                                  "applied to list calls."};
const Param kSendInitialEvents{"sendInitialEvents", "query", "boolean",
                               "`sendInitialEvents=true` may be set together with `watch=true`."};
const Param kTimeout{"timeoutSeconds", "query", "integer", "Timeout for the list/watch call."};
const Param kWatch{"watch", "query", "boolean",
                   "Watch for changes to the described resources and return them as a stream of "
                   "add, update, and remove notifications."};

const std::vector<Param> kListParams = {kAllowBookmarks,
                                        kContinue,
                                        kFieldSelector,
                                        kLabelSelector,
                                        kLimit,
                                        kResourceVersion,
                                        kResourceVersionMatch,
                                        kSendInitialEvents,
                                        kTimeout,
                                        kWatch};
const std::vector<Param> kCreateParams = {kDryRun, kFieldManager, kFieldValidation};
const std::vector<Param> kPatchParams = {kDryRun, kFieldManager, kFieldValidation, kForce};
const std::vector<Param> kDeleteParams = {kDryRun, kGracePeriod, kIgnoreStoreRead, kOrphan,
                                          kPropagation};
const std::vector<Param> kDeleteCollectionParams = {
    kContinue, kDryRun, kFieldSelector, kGracePeriod,     kIgnoreStoreRead,      kLabelSelector,
    kLimit,    kOrphan, kPropagation,   kResourceVersion, kResourceVersionMatch, kSendInitialEvents,
    kTimeout};

const std::vector<std::string> kPatchTypes = {
    "application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json",
    "application/strategic-merge-patch+json"};

constexpr const char* kMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.";

struct Operation {
  std::string method;  // get, post, put, patch, delete
  std::string action;  // x-kubernetes-action
  std::string id;
  std::string description;
  std::vector<Param> params;
  std::string body;  // request body definition, "" for none
  std::vector<std::string> body_types;
  std::map<std::string, std::string> responses;  // code -> definition
  bool streams = false;                          // a list that can also watch
  Json gvk;
};

std::string RefTo(const std::string& name, OpenApiFlavor flavor) {
  return (flavor == OpenApiFlavor::kV3 ? "#/components/schemas/" : "#/definitions/") + name;
}

Json ParamJson(const Param& p, OpenApiFlavor flavor) {
  Json j = {{"name", p.name}, {"in", p.in}, {"description", p.description}};
  if (flavor == OpenApiFlavor::kV3) {
    j["schema"] = {{"type", p.type}, {"uniqueItems", true}};
  } else {
    j["type"] = p.type;
    j["uniqueItems"] = true;
  }
  if (p.required) j["required"] = true;
  return j;
}

std::string StatusText(const std::string& code) {
  if (code == "200") return "OK";
  if (code == "201") return "Created";
  if (code == "202") return "Accepted";
  return "";
}

Json OperationJson(const Operation& op, const std::string& tag, OpenApiFlavor flavor) {
  Json j = {{"description", op.description},
            {"operationId", op.id},
            {"tags", Json::array({tag})},
            {"x-kubernetes-action", op.action},
            {"x-kubernetes-group-version-kind", op.gvk}};
  Json params = Json::array();
  for (const Param& p : op.params) params.push_back(ParamJson(p, flavor));
  std::vector<std::string> produces = {"application/json"};
  if (op.streams) produces.push_back("application/json;stream=watch");
  Json responses = Json::object();
  if (flavor == OpenApiFlavor::kV3) {
    if (!op.body.empty()) {
      Json content = Json::object();
      for (const auto& type : op.body_types) {
        content[type] = {{"schema", {{"$ref", RefTo(op.body, flavor)}}}};
      }
      j["requestBody"] = {{"content", std::move(content)}};
      if (op.method != "delete") j["requestBody"]["required"] = true;
    }
    for (const auto& [code, def] : op.responses) {
      Json content = Json::object();
      for (const auto& type : produces)
        content[type] = {{"schema", {{"$ref", RefTo(def, flavor)}}}};
      responses[code] = {{"description", StatusText(code)}, {"content", std::move(content)}};
    }
  } else {
    if (!op.body.empty()) {
      Json body = {
          {"name", "body"}, {"in", "body"}, {"schema", {{"$ref", RefTo(op.body, flavor)}}}};
      if (op.method != "delete") body["required"] = true;
      params.push_back(std::move(body));
    }
    j["consumes"] = op.body_types.empty() ? Json::array({"*/*"}) : StringArray(op.body_types);
    j["produces"] = StringArray(produces);
    j["schemes"] = Json::array({"https"});
    for (const auto& [code, def] : op.responses) {
      responses[code] = {{"description", StatusText(code)},
                         {"schema", {{"$ref", RefTo(def, flavor)}}}};
    }
    responses["401"] = {{"description", "Unauthorized"}};
  }
  if (!params.empty()) j["parameters"] = std::move(params);
  j["responses"] = std::move(responses);
  return j;
}

// "CoreV1", "AppsV1", "NetworkingV1" and the tag "networking_v1".
std::string GroupCamel(const ResourceType& rt) {
  std::string g = rt.group.empty() ? "core" : rt.group.substr(0, rt.group.find('.'));
  std::string v = rt.version;
  g[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(g[0])));
  v[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(v[0])));
  return g + v;
}

std::string Tag(const ResourceType& rt) {
  std::string g = rt.group.empty() ? "core" : rt.group.substr(0, rt.group.find('.'));
  return g + "_" + rt.version;
}

Json PathItem(const std::vector<Param>& path_params, const std::vector<Operation>& ops,
              const std::string& tag, OpenApiFlavor flavor) {
  Json item = Json::object();
  for (const Operation& op : ops) item[op.method] = OperationJson(op, tag, flavor);
  Json params = Json::array();
  for (const Param& p : path_params) params.push_back(ParamJson(p, flavor));
  item["parameters"] = std::move(params);
  return item;
}

// The names one served type's paths and operations are built from.
struct TypePaths {
  std::string prefix;      // /api/v1, /apis/GROUP/VERSION
  std::string collection;  // the collection path, in its namespace when namespaced
  std::string g;           // GroupCamel
  std::string ns;          // "Namespaced" or ""
  std::string tag;
  std::string kind_def;
  std::string list_def;
  Json gvk;
};

TypePaths PathsOf(const ResourceType& rt) {
  TypePaths t;
  t.prefix = rt.group.empty() ? "/api/" + rt.version : "/apis/" + rt.group + "/" + rt.version;
  t.collection = rt.namespaced ? t.prefix + "/namespaces/{namespace}/" + rt.resource
                               : t.prefix + "/" + rt.resource;
  t.g = GroupCamel(rt);
  t.ns = rt.namespaced ? "Namespaced" : "";
  t.tag = Tag(rt);
  t.kind_def = OpenApiKindName(rt);
  t.list_def = OpenApiListName(rt);
  t.gvk = {{"group", rt.group}, {"kind", rt.kind}, {"version", rt.version}};
  return t;
}

std::string StatusDef() { return std::string(kMeta) + "Status"; }
std::string DeleteOptionsDef() { return std::string(kMeta) + "DeleteOptions"; }

// The collection's operations: list (and watch), create and, when served, deletecollection.
std::vector<Operation> CollectionOps(const ResourceType& rt, const TypePaths& t) {
  std::vector<Operation> ops;
  ops.push_back({"get",
                 "list",
                 "list" + t.g + t.ns + rt.kind,
                 "list or watch objects of kind " + rt.kind,
                 kListParams,
                 "",
                 {},
                 {{"200", t.list_def}},
                 true,
                 t.gvk});
  ops.push_back({"post",
                 "post",
                 "create" + t.g + t.ns + rt.kind,
                 "create a " + rt.kind,
                 kCreateParams,
                 t.kind_def,
                 {"*/*"},
                 {{"200", t.kind_def}, {"201", t.kind_def}, {"202", t.kind_def}},
                 false,
                 t.gvk});
  if (HasVerb(rt, "deletecollection")) {
    ops.push_back({"delete",
                   "deletecollection",
                   "delete" + t.g + "Collection" + t.ns + rt.kind,
                   "delete collection of " + rt.kind,
                   kDeleteCollectionParams,
                   DeleteOptionsDef(),
                   {"*/*"},
                   {{"200", StatusDef()}},
                   false,
                   t.gvk});
  }
  return ops;
}

// The operations of one object ("" `suffix`) or of its subresource ("Status", "Scale"): get,
// replace, patch and, `with_delete`, delete. `def` is the definition read and written.
std::vector<Operation> ItemOps(const ResourceType& rt, const TypePaths& t,
                               const std::string& suffix, const std::string& def,
                               const Json& op_gvk, bool with_delete) {
  const std::string patch_def = std::string(kMeta) + "Patch";
  std::vector<Operation> ops;
  const std::string what = suffix.empty() ? rt.kind : suffix + " of the specified " + rt.kind;
  ops.push_back({"get",
                 "get",
                 "read" + t.g + t.ns + rt.kind + suffix,
                 suffix.empty() ? "read the specified " + rt.kind : "read " + what,
                 {},
                 "",
                 {},
                 {{"200", def}},
                 false,
                 op_gvk});
  ops.push_back({"put",
                 "put",
                 "replace" + t.g + t.ns + rt.kind + suffix,
                 suffix.empty() ? "replace the specified " + rt.kind : "replace " + what,
                 kCreateParams,
                 def,
                 {"*/*"},
                 {{"200", def}, {"201", def}},
                 false,
                 op_gvk});
  ops.push_back(
      {"patch",
       "patch",
       "patch" + t.g + t.ns + rt.kind + suffix,
       suffix.empty() ? "partially update the specified " + rt.kind : "partially update " + what,
       kPatchParams,
       patch_def,
       kPatchTypes,
       {{"200", def}, {"201", def}},
       false,
       op_gvk});
  if (with_delete) {
    const std::string status_def = StatusDef();
    ops.push_back({"delete",
                   "delete",
                   "delete" + t.g + t.ns + rt.kind,
                   "delete a " + rt.kind,
                   kDeleteParams,
                   DeleteOptionsDef(),
                   {"*/*"},
                   {{"200", status_def}, {"202", status_def}},
                   false,
                   op_gvk});
  }
  return ops;
}

// Adds every path of one served type.
void AddPaths(const ResourceType& rt, OpenApiFlavor flavor, Json& paths) {
  const TypePaths t = PathsOf(rt);
  const Param name_param{"name", "path", "string", "name of the resource", true};

  std::vector<Param> collection_params;
  if (rt.namespaced) collection_params.push_back(kNamespace);
  collection_params.push_back(kPretty);
  std::vector<Param> item_params = {name_param};
  if (rt.namespaced) item_params.push_back(kNamespace);
  item_params.push_back(kPretty);

  if (rt.create_only) {  // a review: POST only, to the collection
    std::vector<Operation> ops = CollectionOps(rt, t);
    ops.erase(std::remove_if(ops.begin(), ops.end(),
                             [](const Operation& op) { return op.method != "post"; }),
              ops.end());
    paths[t.collection] = PathItem(collection_params, ops, t.tag, flavor);
    return;
  }
  paths[t.collection] = PathItem(collection_params, CollectionOps(rt, t), t.tag, flavor);
  paths[t.collection + "/{name}"] =
      PathItem(item_params, ItemOps(rt, t, "", t.kind_def, t.gvk, true), t.tag, flavor);
  if (rt.has_status) {
    paths[t.collection + "/{name}/status"] =
        PathItem(item_params, ItemOps(rt, t, "Status", t.kind_def, t.gvk, false), t.tag, flavor);
  }
  if (rt.has_scale) {
    const Json scale_gvk = {{"group", "autoscaling"}, {"kind", "Scale"}, {"version", "v1"}};
    paths[t.collection + "/{name}/scale"] = PathItem(
        item_params, ItemOps(rt, t, "Scale", OpenApiScaleName(), scale_gvk, false), t.tag, flavor);
  }
  if (rt.has_token) {
    const std::string def = OpenApiTokenRequestName();
    const Json gvk = {
        {"group", "authentication.k8s.io"}, {"kind", "TokenRequest"}, {"version", "v1"}};
    std::vector<Operation> ops = {{"post",
                                   "post",
                                   "create" + t.g + t.ns + rt.kind + "Token",
                                   "create token of a " + rt.kind,
                                   kCreateParams,
                                   def,
                                   {"*/*"},
                                   {{"200", def}, {"201", def}, {"202", def}},
                                   false,
                                   gvk}};
    paths[t.collection + "/{name}/token"] = PathItem(item_params, ops, t.tag, flavor);
  }
  if (rt.namespaced) {
    std::vector<Operation> all = {{"get",
                                   "list",
                                   "list" + t.g + rt.kind + "ForAllNamespaces",
                                   "list or watch objects of kind " + rt.kind,
                                   kListParams,
                                   "",
                                   {},
                                   {{"200", t.list_def}},
                                   true,
                                   t.gvk}};
    paths[t.prefix + "/" + rt.resource] = PathItem({kPretty}, all, t.tag, flavor);
  }
}

void CollectRefs(const Json& j, std::vector<std::string>& out) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (key == "$ref" && value.is_string()) {
        const std::string ref = value.get<std::string>();
        out.push_back(ref.substr(ref.rfind('/') + 1));
      } else {
        CollectRefs(value, out);
      }
    }
  } else if (j.is_array()) {
    for (const auto& v : j) CollectRefs(v, out);
  }
}

Json Info() { return {{"title", "Kubernetes"}, {"version", "v1.32.0"}}; }

Json BuildV3Document(const std::string& group, const std::string& version) {
  Json paths = Json::object();
  for (const ResourceType* rt : TypesOf(group, version)) AddPaths(*rt, OpenApiFlavor::kV3, paths);
  std::vector<std::string> roots;
  CollectRefs(paths, roots);
  // Kinds are listed even when no path refers to them (none today), as kubectl explain looks
  // them up by their x-kubernetes-group-version-kind.
  for (const ResourceType* rt : TypesOf(group, version)) roots.push_back(OpenApiKindName(*rt));
  const Json& defs = OpenApiDefinitions(OpenApiFlavor::kV3);
  Json schemas = Json::object();
  for (const auto& name : OpenApiClosure(roots)) schemas[name] = defs.at(name);
  return {{"openapi", "3.0.0"},
          {"info", Info()},
          {"paths", std::move(paths)},
          {"components", {{"schemas", std::move(schemas)}}}};
}

// FNV-1a over the served bytes: the "hash" in serverRelativeURL only has to change when the
// document does (clients treat it as opaque and use it for cache busting).
std::string Fingerprint(const std::string& bytes) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIX64, h);
  return buf;
}

std::string ApiPath(const std::string& group, const std::string& version) {
  return group.empty() ? "api/" + version : "apis/" + group + "/" + version;
}

struct OpenApiV3Cache {
  std::map<std::string, Json, std::less<>> documents;  // "apis/apps/v1" -> document
  Json root;
};

const OpenApiV3Cache& V3Cache() {
  static const OpenApiV3Cache kCache = [] {
    OpenApiV3Cache c;
    Json paths = Json::object();
    for (const auto& [group, version] : GroupVersions()) {
      const std::string path = ApiPath(group, version);
      Json doc = BuildV3Document(group, version);
      paths[path] = {
          {"serverRelativeURL", "/openapi/v3/" + path + "?hash=" + Fingerprint(DumpJson(doc))}};
      c.documents.emplace(path, std::move(doc));
    }
    c.root = {{"paths", std::move(paths)}};
    return c;
  }();
  return kCache;
}

}  // namespace

Json VersionDocument() {
  return {{"major", kKubeMajor},       {"minor", kKubeMinor},
          {"gitVersion", kGitVersion}, {"gitCommit", "0000000000000000000000000000000000000000"},
          {"gitTreeState", "clean"},   {"buildDate", "1970-01-01T00:00:00Z"},
          {"goVersion", ""},           {"compiler", "gcc"},
          {"platform", kPlatform}};
}

Json ApiVersionsDocument(std::string_view server_address) {
  Json addresses = Json::array();
  if (!server_address.empty()) {
    addresses.push_back(
        {{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", std::string(server_address)}});
  }
  return {{"kind", "APIVersions"},
          {"versions", Json::array({"v1"})},
          {"serverAddressByClientCIDRs", std::move(addresses)}};
}

Json ApiGroupListDocument() {
  std::map<std::string, std::vector<std::string>> versions;
  std::vector<std::string> order;
  for (const auto& [group, version] : GroupVersions()) {
    if (group.empty()) continue;
    if (versions.find(group) == versions.end()) order.push_back(group);
    versions[group].push_back(version);
  }
  Json groups = Json::array();
  for (const auto& group : order) {
    Json list = Json::array();
    for (const auto& v : versions[group]) {
      list.push_back({{"groupVersion", group + "/" + v}, {"version", v}});
    }
    Json preferred = list.front();
    groups.push_back({{"name", group},
                      {"versions", std::move(list)},
                      {"preferredVersion", std::move(preferred)}});
  }
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", std::move(groups)}};
}

std::optional<Json> ApiResourceListDocument(std::string_view group, std::string_view version) {
  auto types = TypesOf(group, version);
  if (types.empty()) return std::nullopt;
  Json resources = Json::array();
  for (const ResourceType* rt : types) {
    Json r = {{"name", rt->resource},
              {"singularName", rt->singular},
              {"namespaced", rt->namespaced},
              {"kind", rt->kind},
              {"verbs", StringArray(Verbs(*rt))}};
    if (!rt->short_names.empty()) r["shortNames"] = StringArray(rt->short_names);
    if (!rt->categories.empty()) r["categories"] = StringArray(rt->categories);
    resources.push_back(std::move(r));
    for (const Subresource& s : Subresources(*rt)) {
      Json sub = {{"name", rt->resource + "/" + s.name},
                  {"singularName", ""},
                  {"namespaced", rt->namespaced},
                  {"kind", s.kind},
                  {"verbs", StringArray(s.verbs)}};
      if (!s.group.empty()) sub["group"] = s.group;
      if (!s.version.empty()) sub["version"] = s.version;
      resources.push_back(std::move(sub));
    }
  }
  Json doc = {{"kind", "APIResourceList"},
              {"groupVersion", GroupVersionString(group, version)},
              {"resources", std::move(resources)}};
  // A real server omits apiVersion on the core group's list (a historical quirk clients
  // tolerate) and sets it on every other.
  if (!group.empty()) doc["apiVersion"] = "v1";
  return doc;
}

Json AggregatedDiscoveryDocument(bool core) {
  std::map<std::string, std::vector<std::string>> versions;
  std::vector<std::string> order;
  for (const auto& [group, version] : GroupVersions()) {
    if (group.empty() != core) continue;
    if (versions.find(group) == versions.end()) order.push_back(group);
    versions[group].push_back(version);
  }
  Json items = Json::array();
  for (const auto& group : order) items.push_back(AggregatedGroup(group, versions[group]));
  return {{"kind", "APIGroupDiscoveryList"},
          {"apiVersion", "apidiscovery.k8s.io/v2"},
          {"metadata", Json::object()},
          {"items", std::move(items)}};
}

Json OpenApiV3Root() { return V3Cache().root; }

std::optional<Json> OpenApiV3Document(std::string_view path) {
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  if (size_t q = path.find('?'); q != std::string_view::npos) path = path.substr(0, q);
  const auto& docs = V3Cache().documents;
  auto it = docs.find(path);
  if (it == docs.end()) return std::nullopt;
  return it->second;
}

Json OpenApiV2Document() {
  static const Json kDoc = [] {
    Json paths = Json::object();
    for (const auto& rt : AllResourceTypes()) AddPaths(rt, OpenApiFlavor::kV2, paths);
    return Json{{"swagger", "2.0"},
                {"info", Info()},
                {"paths", std::move(paths)},
                {"definitions", OpenApiDefinitions(OpenApiFlavor::kV2)}};
  }();
  return kDoc;
}

}  // namespace steward::cluster
