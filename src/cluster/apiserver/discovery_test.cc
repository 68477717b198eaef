#include "cluster/apiserver/discovery.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "cluster/apiserver/openapi_schemas.h"
#include "cluster/model/resource_types.h"

namespace steward::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::StartsWith;

const std::vector<std::string> kAllVerbs = {"create", "delete", "deletecollection", "get",
                                            "list",   "patch",  "update",           "watch"};

std::vector<std::string> Strings(const Json& a) {
  std::vector<std::string> out;
  for (const auto& s : a) out.push_back(s.get<std::string>());
  return out;
}

const Json* FindByName(const Json& resources, std::string_view name) {
  for (const auto& r : resources) {
    if (r["name"] == name) return &r;
  }
  return nullptr;
}

TEST(VersionDocumentTest, LooksLikeKubernetes132) {
  Json v = VersionDocument();
  EXPECT_EQ(v["major"], "1");
  EXPECT_EQ(v["minor"], "32");
  EXPECT_THAT(v["gitVersion"].get<std::string>(), StartsWith("v1.32."));
  EXPECT_THAT(v["platform"].get<std::string>(), StartsWith("linux/"));
  for (const char* key : {"gitCommit", "gitTreeState", "buildDate", "goVersion", "compiler"}) {
    EXPECT_TRUE(v[key].is_string()) << key;
  }
}

TEST(ApiVersionsTest, CoreGroupOnly) {
  Json v = ApiVersionsDocument();
  EXPECT_EQ(v["kind"], "APIVersions");
  EXPECT_EQ(v["versions"], Json::array({"v1"}));
  EXPECT_TRUE(v["serverAddressByClientCIDRs"].is_array());
  Json addressed = ApiVersionsDocument("127.0.0.1:6443");
  EXPECT_EQ(addressed["serverAddressByClientCIDRs"],
            Json::parse(R"([{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}])"));
}

TEST(ApiGroupListTest, ServedGroupsPreferV1) {
  Json g = ApiGroupListDocument();
  EXPECT_EQ(g["kind"], "APIGroupList");
  EXPECT_EQ(g["apiVersion"], "v1");
  std::vector<std::string> names;
  for (const auto& group : g["groups"]) {
    names.push_back(group["name"]);
    const std::string gv = group["name"].get<std::string>() + "/v1";
    EXPECT_EQ(group["versions"], Json::array({{{"groupVersion", gv}, {"version", "v1"}}}));
    EXPECT_EQ(group["preferredVersion"], Json({{"groupVersion", gv}, {"version", "v1"}}));
  }
  EXPECT_THAT(names, ElementsAre("apps", "authentication.k8s.io", "authorization.k8s.io",
                                 "networking.k8s.io", "policy", "rbac.authorization.k8s.io",
                                 "coordination.k8s.io", "discovery.k8s.io"));
}

TEST(ApiResourceListTest, EveryServedResourceWithVerbsNamesAndScope) {
  for (const ResourceType& rt : AllResourceTypes()) {
    auto list = ApiResourceListDocument(rt.group, rt.version);
    ASSERT_TRUE(list.has_value()) << rt.GroupResource();
    EXPECT_EQ((*list)["kind"], "APIResourceList");
    EXPECT_EQ((*list)["groupVersion"], rt.ApiVersion());
    const Json* r = FindByName((*list)["resources"], rt.resource);
    ASSERT_NE(r, nullptr) << rt.GroupResource();
    EXPECT_EQ((*r)["kind"], rt.kind);
    EXPECT_EQ((*r)["singularName"], rt.singular);
    EXPECT_EQ((*r)["namespaced"], rt.namespaced);
    EXPECT_FALSE(r->contains("group"));
    if (rt.resource == "namespaces") {
      EXPECT_THAT(Strings((*r)["verbs"]),
                  ElementsAre("create", "delete", "get", "list", "patch", "update", "watch"));
    } else if (rt.create_only) {
      EXPECT_THAT(Strings((*r)["verbs"]), ElementsAre("create")) << rt.resource;
    } else {
      EXPECT_THAT(Strings((*r)["verbs"]), ElementsAreArray(kAllVerbs)) << rt.resource;
    }
    if (rt.short_names.empty()) {
      EXPECT_FALSE(r->contains("shortNames")) << rt.resource;
    } else {
      EXPECT_EQ(Strings((*r)["shortNames"]), rt.short_names);
    }
    if (!rt.categories.empty()) {
      EXPECT_EQ(Strings((*r)["categories"]), rt.categories);
    }
  }
}

TEST(ApiResourceListTest, Subresources) {
  auto apps = *ApiResourceListDocument("apps", "v1");
  EXPECT_EQ(apps["apiVersion"], "v1");
  const Json* scale = FindByName(apps["resources"], "deployments/scale");
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ((*scale)["group"], "autoscaling");
  EXPECT_EQ((*scale)["version"], "v1");
  EXPECT_EQ((*scale)["kind"], "Scale");
  EXPECT_EQ((*scale)["namespaced"], true);
  EXPECT_EQ((*scale)["singularName"], "");
  EXPECT_THAT(Strings((*scale)["verbs"]), ElementsAre("get", "patch", "update"));
  const Json* status = FindByName(apps["resources"], "deployments/status");
  ASSERT_NE(status, nullptr);
  EXPECT_EQ((*status)["kind"], "Deployment");
  EXPECT_FALSE(status->contains("group"));
  EXPECT_NE(FindByName(apps["resources"], "replicasets/scale"), nullptr);
  EXPECT_NE(FindByName(apps["resources"], "replicasets/status"), nullptr);

  auto core = *ApiResourceListDocument("", "v1");
  EXPECT_FALSE(core.contains("apiVersion"));  // as a real server writes /api/v1
  for (const char* name :
       {"pods/status", "services/status", "namespaces/status", "persistentvolumeclaims/status"}) {
    EXPECT_NE(FindByName(core["resources"], name), nullptr) << name;
  }
  const Json* proxy = FindByName(core["resources"], "services/proxy");
  ASSERT_NE(proxy, nullptr);
  EXPECT_EQ((*proxy)["kind"], "ServiceProxyOptions");
  EXPECT_EQ(FindByName(core["resources"], "pods/log"), nullptr);  // not served
  EXPECT_EQ(FindByName(core["resources"], "secrets/status"), nullptr);

  auto net = *ApiResourceListDocument("networking.k8s.io", "v1");
  EXPECT_NE(FindByName(net["resources"], "ingresses/status"), nullptr);
  EXPECT_EQ(FindByName(net["resources"], "ingressclasses/status"), nullptr);

  // Sorted by name, as a real server lists them.
  std::vector<std::string> names;
  for (const auto& r : core["resources"]) names.push_back(r["name"]);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST(ApiResourceListTest, UnservedGroupVersions) {
  EXPECT_FALSE(ApiResourceListDocument("apps", "v2").has_value());
  EXPECT_FALSE(ApiResourceListDocument("batch", "v1").has_value());
  EXPECT_FALSE(ApiResourceListDocument("", "v2").has_value());
}

// What client-go's SplitGroupsAndResources makes of an aggregated document: the legacy
// resource entries. Keyed by group/version, then resource name.
using LegacyView =
    std::map<std::string,
             std::map<std::string, std::tuple<std::string, std::string, std::string, bool, Json>>>;

LegacyView FromAggregated(const Json& doc) {
  LegacyView out;
  for (const auto& group : doc["items"]) {
    const std::string name = group["metadata"].value("name", "");
    for (const auto& version : group["versions"]) {
      EXPECT_EQ(version["freshness"], "Current");
      const std::string gv = name.empty() ? version["version"].get<std::string>()
                                          : name + "/" + version["version"].get<std::string>();
      for (const auto& r : version["resources"]) {
        const bool namespaced = r["scope"] == "Namespaced";
        const Json& kind = r["responseKind"];
        out[gv][r["resource"]] = {kind["group"], kind["version"], kind["kind"], namespaced,
                                  r["verbs"]};
        for (const auto& s : r.value("subresources", Json::array())) {
          const Json& sk = s["responseKind"];
          out[gv][r["resource"].get<std::string>() + "/" + s["subresource"].get<std::string>()] = {
              sk["group"], sk["version"], sk["kind"], namespaced, s["verbs"]};
        }
      }
    }
  }
  return out;
}

TEST(AggregatedDiscoveryTest, SameResourcesAsLegacyDiscovery) {
  Json core = AggregatedDiscoveryDocument(true);
  Json apis = AggregatedDiscoveryDocument(false);
  for (const Json* doc : {&core, &apis}) {
    EXPECT_EQ((*doc)["kind"], "APIGroupDiscoveryList");
    EXPECT_EQ((*doc)["apiVersion"], "apidiscovery.k8s.io/v2");
  }
  ASSERT_EQ(core["items"].size(), 1u);
  EXPECT_FALSE(core["items"][0]["metadata"].contains("name"));
  EXPECT_TRUE(core["items"][0]["metadata"]["creationTimestamp"].is_null());

  LegacyView aggregated = FromAggregated(core);
  for (auto& [gv, resources] : FromAggregated(apis)) aggregated[gv] = resources;

  LegacyView legacy;
  for (const std::string gv :
       {"v1", "apps/v1", "authentication.k8s.io/v1", "authorization.k8s.io/v1",
        "networking.k8s.io/v1", "policy/v1", "rbac.authorization.k8s.io/v1",
        "coordination.k8s.io/v1", "discovery.k8s.io/v1"}) {
    const size_t slash = gv.find('/');
    const std::string group = slash == std::string::npos ? "" : gv.substr(0, slash);
    auto list = ApiResourceListDocument(group, "v1");
    ASSERT_TRUE(list.has_value()) << gv;
    for (const auto& r : (*list)["resources"]) {
      legacy[gv][r["name"]] = {r.value("group", ""), r.value("version", ""), r["kind"],
                               r["namespaced"], r["verbs"]};
    }
  }
  EXPECT_EQ(aggregated, legacy);
}

TEST(AggregatedDiscoveryTest, ResourceFields) {
  Json apis = AggregatedDiscoveryDocument(false);
  const Json* apps = nullptr;
  for (const auto& item : apis["items"]) {
    if (item["metadata"]["name"] == "apps") apps = &item;
  }
  ASSERT_NE(apps, nullptr);
  const Json& resources = (*apps)["versions"][0]["resources"];
  const Json* deployments = nullptr;
  for (const auto& r : resources) {
    if (r["resource"] == "deployments") deployments = &r;
  }
  ASSERT_NE(deployments, nullptr);
  EXPECT_EQ((*deployments)["scope"], "Namespaced");
  EXPECT_EQ((*deployments)["singularResource"], "deployment");
  EXPECT_EQ((*deployments)["responseKind"],
            Json({{"group", ""}, {"version", ""}, {"kind", "Deployment"}}));
  EXPECT_EQ((*deployments)["shortNames"], Json::array({"deploy"}));
  EXPECT_EQ((*deployments)["categories"], Json::array({"all"}));
  ASSERT_EQ((*deployments)["subresources"].size(), 2u);
  EXPECT_EQ((*deployments)["subresources"][0]["subresource"], "scale");
  EXPECT_EQ((*deployments)["subresources"][0]["responseKind"],
            Json({{"group", "autoscaling"}, {"version", "v1"}, {"kind", "Scale"}}));
  EXPECT_EQ((*deployments)["subresources"][1]["subresource"], "status");

  Json core = AggregatedDiscoveryDocument(true);
  for (const auto& r : core["items"][0]["versions"][0]["resources"]) {
    if (r["resource"] == "namespaces") {
      EXPECT_EQ(r["scope"], "Cluster");
    }
  }
}

// ---- OpenAPI -------------------------------------------------------------------------------

std::string ApiPath(const ResourceType& rt) {
  return rt.group.empty() ? "api/" + rt.version : "apis/" + rt.group + "/" + rt.version;
}

void CollectRefs(const Json& j, std::set<std::string>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (k == "$ref") {
        out.insert(v.get<std::string>());
      } else {
        CollectRefs(v, out);
      }
    }
  } else if (j.is_array()) {
    for (const auto& v : j) CollectRefs(v, out);
  }
}

TEST(OpenApiV3Test, RootPointsAtDocumentsThatExist) {
  Json root = OpenApiV3Root();
  std::set<std::string> expected;
  for (const ResourceType& rt : AllResourceTypes()) expected.insert(ApiPath(rt));
  std::set<std::string> listed;
  for (const auto& [path, entry] : root["paths"].items()) {
    listed.insert(path);
    const std::string url = entry["serverRelativeURL"];
    EXPECT_THAT(url, StartsWith("/openapi/v3/" + path + "?hash="));
    EXPECT_GT(url.size(), ("/openapi/v3/" + path + "?hash=").size());
    auto doc = OpenApiV3Document(path);
    ASSERT_TRUE(doc.has_value()) << path;
    EXPECT_EQ((*doc)["openapi"], "3.0.0");
    // The URL exactly as a client sends it resolves too.
    EXPECT_TRUE(OpenApiV3Document(url.substr(std::string("/openapi/v3").size())).has_value());
  }
  EXPECT_EQ(listed, expected);
  EXPECT_FALSE(OpenApiV3Document("apis/batch/v1").has_value());
  EXPECT_FALSE(OpenApiV3Document("").has_value());
}

TEST(OpenApiV3Test, EveryReferenceResolves) {
  const Json root = OpenApiV3Root();  // items() must not outlive the document
  for (const auto& [path, entry] : root["paths"].items()) {
    Json doc = *OpenApiV3Document(path);
    std::set<std::string> refs;
    CollectRefs(doc, refs);
    EXPECT_FALSE(refs.empty());
    for (const auto& ref : refs) {
      ASSERT_THAT(ref, StartsWith("#/components/schemas/"));
      EXPECT_TRUE(doc["components"]["schemas"].contains(ref.substr(21))) << path << " " << ref;
    }
  }
}

// client-go's queryParamVerifierV3 and kubectl's apply patcher, in miniature: the PATCH
// operation carrying this GVK must accept fieldValidation (else kubectl falls back to
// client-side validation, which needs the protobuf OpenAPI v2) and strategic merge patches.
TEST(OpenApiV3Test, PatchOperationsSupportFieldValidationForEveryKind) {
  for (const ResourceType& rt : AllResourceTypes()) {
    Json doc = *OpenApiV3Document(ApiPath(rt));
    const Json gvk = {{"group", rt.group}, {"kind", rt.kind}, {"version", rt.version}};
    int patches = 0;
    for (const auto& [p, item] : doc["paths"].items()) {
      for (const char* method : {"patch", "post", "put"}) {
        if (!item.contains(method) || item[method]["x-kubernetes-group-version-kind"] != gvk) {
          continue;
        }
        const Json& op = item[method];
        std::set<std::string> params;
        for (const auto& param : op["parameters"]) params.insert(param["name"]);
        EXPECT_TRUE(params.count("fieldValidation")) << p << " " << method;
        EXPECT_TRUE(params.count("fieldManager")) << p << " " << method;
        if (std::string(method) == "patch") {
          ++patches;
          EXPECT_EQ(op["x-kubernetes-action"], "patch");
          EXPECT_TRUE(
              op["requestBody"]["content"].contains("application/strategic-merge-patch+json"));
          EXPECT_TRUE(op["requestBody"]["content"].contains("application/merge-patch+json"));
          EXPECT_TRUE(op["requestBody"]["content"].contains("application/json-patch+json"));
        }
      }
    }
    // A review kind is only created: no patch, no list.
    EXPECT_EQ(patches, rt.create_only ? 0 : rt.has_status ? 2 : 1) << rt.GroupResource();
    // The kind's schema carries its GVK, as kubectl explain and apply look it up.
    const Json& schema = doc["components"]["schemas"][OpenApiKindName(rt)];
    EXPECT_EQ(schema["x-kubernetes-group-version-kind"], Json::array({gvk})) << rt.kind;
    EXPECT_EQ(doc["components"]["schemas"].contains(OpenApiListName(rt)), !rt.create_only);
  }
}

TEST(OpenApiV3Test, PathsAndOperationsOfADeployment) {
  Json doc = *OpenApiV3Document("apis/apps/v1");
  const Json& paths = doc["paths"];
  const Json& collection = paths["/apis/apps/v1/namespaces/{namespace}/deployments"];
  EXPECT_EQ(collection["get"]["x-kubernetes-action"], "list");
  EXPECT_EQ(collection["get"]["operationId"], "listAppsV1NamespacedDeployment");
  EXPECT_EQ(collection["post"]["x-kubernetes-action"], "post");
  EXPECT_EQ(collection["delete"]["x-kubernetes-action"], "deletecollection");
  const Json& item = paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"];
  for (const char* m : {"get", "put", "patch", "delete"}) EXPECT_TRUE(item.contains(m)) << m;
  std::set<std::string> path_params;
  for (const auto& p : item["parameters"]) path_params.insert(p["name"]);
  EXPECT_EQ(path_params, (std::set<std::string>{"name", "namespace", "pretty"}));
  EXPECT_TRUE(paths.contains("/apis/apps/v1/deployments"));  // all namespaces

  const Json& scale = paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"];
  EXPECT_EQ(scale["patch"]["x-kubernetes-group-version-kind"],
            Json({{"group", "autoscaling"}, {"kind", "Scale"}, {"version", "v1"}}));
  EXPECT_EQ(scale["get"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/io.k8s.api.autoscaling.v1.Scale");
  EXPECT_TRUE(doc["components"]["schemas"].contains("io.k8s.api.autoscaling.v1.Scale"));

  // Namespaces have no deletecollection.
  Json core = *OpenApiV3Document("api/v1");
  EXPECT_FALSE(core["paths"]["/api/v1/namespaces"].contains("delete"));
  EXPECT_TRUE(core["paths"]["/api/v1/namespaces/{name}/status"].contains("patch"));
}

// Follows a property path the way strategicpatch.PatchMetaFromOpenAPIV3 does: through allOf
// and $ref, into array items.
const Json* Resolve(const Json& schemas, const Json* s) {
  if (s->contains("allOf")) s = &(*s)["allOf"][0];
  if (s->contains("$ref")) {
    std::string ref = (*s)["$ref"];
    s = &schemas[ref.substr(ref.rfind('/') + 1)];
  }
  return s;
}

const Json& Property(const Json& schemas, const Json& s, const std::string& name) {
  const Json* resolved = Resolve(schemas, &s);
  EXPECT_TRUE((*resolved)["properties"].contains(name)) << name;
  return (*resolved)["properties"][name];
}

const Json& Items(const Json& schemas, const Json& array) {
  return *Resolve(schemas, &array["items"]);
}

TEST(OpenApiV3Test, DeploymentSchemaCarriesStrategicMergeKeys) {
  Json doc = *OpenApiV3Document("apis/apps/v1");
  const Json& schemas = doc["components"]["schemas"];
  const Json& deployment = schemas["io.k8s.api.apps.v1.Deployment"];
  const Json& strategy = Property(schemas, Property(schemas, deployment, "spec"), "strategy");
  EXPECT_EQ(strategy["x-kubernetes-patch-strategy"], "retainKeys");
  const Json& pod_spec = Property(
      schemas, Property(schemas, Property(schemas, deployment, "spec"), "template"), "spec");
  const Json& containers = Property(schemas, pod_spec, "containers");
  EXPECT_EQ(containers["type"], "array");
  EXPECT_EQ(containers["x-kubernetes-patch-strategy"], "merge");
  EXPECT_EQ(containers["x-kubernetes-patch-merge-key"], "name");
  EXPECT_EQ(containers["x-kubernetes-list-type"], "map");
  const Json& container = Items(schemas, containers);
  EXPECT_EQ(container["required"], Json::array({"name"}));
  const Json& ports = Property(schemas, container, "ports");
  EXPECT_EQ(ports["x-kubernetes-patch-merge-key"], "containerPort");
  EXPECT_EQ(ports["x-kubernetes-list-map-keys"], Json::array({"containerPort", "protocol"}));
  EXPECT_EQ(Property(schemas, container, "env")["x-kubernetes-patch-merge-key"], "name");
  EXPECT_EQ(Property(schemas, container, "volumeMounts")["x-kubernetes-patch-merge-key"],
            "mountPath");
  const Json& volumes = Property(schemas, pod_spec, "volumes");
  EXPECT_EQ(volumes["x-kubernetes-patch-strategy"], "merge,retainKeys");
  EXPECT_EQ(volumes["x-kubernetes-patch-merge-key"], "name");
  EXPECT_EQ(Property(schemas, pod_spec, "imagePullSecrets")["x-kubernetes-patch-merge-key"],
            "name");
  EXPECT_FALSE(Property(schemas, pod_spec, "tolerations").contains("x-kubernetes-patch-strategy"));
  // Quantities and int-or-strings keep their special forms.
  const Json& limits = Property(schemas, Property(schemas, container, "resources"), "limits");
  EXPECT_EQ(limits["additionalProperties"]["$ref"],
            "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity");
  const Json& meta = Property(schemas, deployment, "metadata");
  EXPECT_EQ(Property(schemas, meta, "ownerReferences")["x-kubernetes-patch-merge-key"], "uid");
  EXPECT_EQ(Property(schemas, meta, "finalizers")["x-kubernetes-patch-strategy"], "merge");
  // A described reference is wrapped in allOf (OpenAPI 3 ignores siblings of $ref).
  EXPECT_TRUE(Property(schemas, deployment, "spec").contains("allOf"));
  EXPECT_TRUE(Property(schemas, deployment, "spec").contains("description"));
}

TEST(OpenApiV3Test, ServiceSchemaCarriesPortMergeKey) {
  Json doc = *OpenApiV3Document("api/v1");
  const Json& schemas = doc["components"]["schemas"];
  const Json& ports =
      Property(schemas, Property(schemas, schemas["io.k8s.api.core.v1.Service"], "spec"), "ports");
  EXPECT_EQ(ports["x-kubernetes-patch-merge-key"], "port");
  const Json& target = Property(schemas, Items(schemas, ports), "targetPort");
  EXPECT_EQ(Resolve(schemas, &target)->value("format", ""), "int-or-string");
}

TEST(OpenApiV2Test, SwaggerDocumentIsSelfContained) {
  Json doc = OpenApiV2Document();
  EXPECT_EQ(doc["swagger"], "2.0");
  std::set<std::string> refs;
  CollectRefs(doc, refs);
  for (const auto& ref : refs) {
    ASSERT_THAT(ref, StartsWith("#/definitions/"));
    EXPECT_TRUE(doc["definitions"].contains(ref.substr(14))) << ref;
  }
  const Json& patch =
      doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
  EXPECT_EQ(patch["x-kubernetes-group-version-kind"],
            Json({{"group", "apps"}, {"kind", "Deployment"}, {"version", "v1"}}));
  EXPECT_THAT(Strings(patch["consumes"]),
              ::testing::Contains("application/strategic-merge-patch+json"));
  bool field_validation = false, body = false;
  for (const auto& p : patch["parameters"]) {
    if (p["name"] == "fieldValidation") field_validation = p["type"] == "string";
    if (p["in"] == "body") body = true;
  }
  EXPECT_TRUE(field_validation);
  EXPECT_TRUE(body);
  // Swagger 2 keeps the description beside the $ref (no allOf).
  const Json& spec = doc["definitions"]["io.k8s.api.apps.v1.Deployment"]["properties"]["spec"];
  EXPECT_EQ(spec["$ref"], "#/definitions/io.k8s.api.apps.v1.DeploymentSpec");
  for (const ResourceType& rt : AllResourceTypes()) {
    EXPECT_TRUE(
        doc["definitions"][OpenApiKindName(rt)].contains("x-kubernetes-group-version-kind"));
  }
}

TEST(OpenApiSchemasTest, ClosureFollowsReferences) {
  auto names = OpenApiClosure({"io.k8s.api.coordination.v1.Lease", "no.such.Definition"});
  EXPECT_THAT(
      names, ElementsAre("io.k8s.api.coordination.v1.Lease", "io.k8s.api.coordination.v1.LeaseSpec",
                         "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
                         "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
                         "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
                         "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
                         "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
                         "io.k8s.apimachinery.pkg.apis.meta.v1.Time"));
}

}  // namespace
}  // namespace steward::cluster
