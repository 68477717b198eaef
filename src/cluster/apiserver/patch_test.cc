#include "cluster/apiserver/patch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace steward::cluster {
namespace {

using ::testing::HasSubstr;

Json J(const char* text) { return Json::parse(text); }

// ---- Content types ----

TEST(PatchTypeTest, MapsContentTypes) {
  struct Case {
    const char* content_type;
    PatchType type;
  };
  const Case cases[] = {
      {"application/json-patch+json", PatchType::kJsonPatch},
      {"application/merge-patch+json", PatchType::kJsonMerge},
      {"application/strategic-merge-patch+json", PatchType::kStrategicMerge},
      {"application/apply-patch+yaml", PatchType::kApply},
      {"application/merge-patch+json; charset=utf-8", PatchType::kJsonMerge},
      {"Application/Strategic-Merge-Patch+JSON", PatchType::kStrategicMerge},
      {" application/json-patch+json ;foo=bar", PatchType::kJsonPatch},
  };
  for (const auto& c : cases) {
    auto t = PatchTypeFromContentType(c.content_type);
    ASSERT_TRUE(t.ok()) << c.content_type;
    EXPECT_EQ(*t, c.type) << c.content_type;
  }
  for (const char* bad :
       {"application/json", "", "text/plain", "application/yaml", "application/json-patch"}) {
    auto t = PatchTypeFromContentType(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(t.status().message(), HasSubstr("application/merge-patch+json"));
  }
}

// ---- RFC 7386 (the test cases of its appendix A) ----

TEST(MergePatchTest, Rfc7386Examples) {
  struct Case {
    const char* target;
    const char* patch;
    const char* result;
  };
  const Case cases[] = {
      {R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})"},
      {R"({"a":"b"})", R"({"a":null})", R"({})"},
      {R"({"a":"b","b":"c"})", R"({"a":null})", R"({"b":"c"})"},
      {R"({"a":["b"]})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"c"})", R"({"a":["b"]})", R"({"a":["b"]})"},
      {R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})", R"({"a":{"b":"d"}})"},
      {R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})"},
      {R"(["a","b"])", R"(["c","d"])", R"(["c","d"])"},
      {R"({"a":"b"})", R"(["c"])", R"(["c"])"},
      {R"({"a":"foo"})", "null", "null"},
      {R"({"a":"foo"})", R"("bar")", R"("bar")"},
      {R"({"e":null})", R"({"a":1})", R"({"a":1,"e":null})"},
      {R"([1,2])", R"({"a":"b","c":null})", R"({"a":"b"})"},
      {R"({})", R"({"a":{"bb":{"ccc":null}}})", R"({"a":{"bb":{}}})"},
  };
  for (const auto& c : cases) {
    auto r = ApplyMergePatch(J(c.target), J(c.patch));
    ASSERT_TRUE(r.ok()) << c.patch;
    EXPECT_EQ(*r, J(c.result)) << c.target << " + " << c.patch;
  }
}

TEST(MergePatchTest, ListsAreReplacedNotMerged) {
  Json pod = J(R"({"spec":{"containers":[{"name":"a","image":"1"},{"name":"b","image":"1"}]}})");
  auto r = ApplyMergePatch(pod, J(R"({"spec":{"containers":[{"name":"a","image":"2"}]}})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["spec"]["containers"], J(R"([{"name":"a","image":"2"}])"));
}

// ---- RFC 6902 ----

TEST(JsonPatchTest, AllOperations) {
  struct Case {
    const char* doc;
    const char* patch;
    const char* result;
  };
  const Case cases[] = {
      // add
      {R"({"a":1})", R"([{"op":"add","path":"/b","value":2}])", R"({"a":1,"b":2})"},
      {R"({"a":1})", R"([{"op":"add","path":"/a","value":[1]}])", R"({"a":[1]})"},
      {R"({"l":[1,3]})", R"([{"op":"add","path":"/l/1","value":2}])", R"({"l":[1,2,3]})"},
      {R"({"l":[1]})", R"([{"op":"add","path":"/l/1","value":2}])", R"({"l":[1,2]})"},
      {R"({"l":[1]})", R"([{"op":"add","path":"/l/-","value":2}])", R"({"l":[1,2]})"},
      {R"({"l":[]})", R"([{"op":"add","path":"/l/0","value":{"x":null}}])",
       R"({"l":[{"x":null}]})"},
      {R"({"a":1})", R"([{"op":"add","path":"","value":[1]}])", R"([1])"},
      {R"({})", R"([{"op":"add","path":"/","value":1}])", R"({"":1})"},
      // JSON pointer escapes: ~1 is '/', ~0 is '~'
      {R"({"metadata":{"labels":{}}})",
       R"([{"op":"add","path":"/metadata/labels/app.kubernetes.io~1name","value":"x"}])",
       R"({"metadata":{"labels":{"app.kubernetes.io/name":"x"}}})"},
      {R"({"a~b":1})", R"([{"op":"replace","path":"/a~0b","value":2}])", R"({"a~b":2})"},
      // remove
      {R"({"a":1,"b":2})", R"([{"op":"remove","path":"/a"}])", R"({"b":2})"},
      {R"({"l":[1,2,3]})", R"([{"op":"remove","path":"/l/1"}])", R"({"l":[1,3]})"},
      // replace
      {R"({"spec":{"replicas":1}})", R"([{"op":"replace","path":"/spec/replicas","value":3}])",
       R"({"spec":{"replicas":3}})"},
      {R"({"l":[1,2]})", R"([{"op":"replace","path":"/l/0","value":9}])", R"({"l":[9,2]})"},
      {R"({"a":1})", R"([{"op":"replace","path":"","value":{"b":2}}])", R"({"b":2})"},
      // move
      {R"({"a":{"x":1},"b":{}})", R"([{"op":"move","from":"/a/x","path":"/b/y"}])",
       R"({"a":{},"b":{"y":1}})"},
      {R"({"l":[1,2,3]})", R"([{"op":"move","from":"/l/0","path":"/l/-"}])", R"({"l":[2,3,1]})"},
      {R"({"a":1})", R"([{"op":"move","from":"/a","path":"/a"}])", R"({"a":1})"},
      // copy
      {R"({"a":{"x":[1]}})", R"([{"op":"copy","from":"/a","path":"/b"}])",
       R"({"a":{"x":[1]},"b":{"x":[1]}})"},
      // test (deep equality; numbers compare by value; key order is irrelevant)
      {R"({"a":{"x":1,"y":[1,{"z":true}]}})",
       R"([{"op":"test","path":"/a","value":{"y":[1,{"z":true}],"x":1.0}}])",
       R"({"a":{"x":1,"y":[1,{"z":true}]}})"},
      {R"({"a":null})", R"([{"op":"test","path":"/a","value":null}])", R"({"a":null})"},
      // several operations in order
      {R"({"spec":{"replicas":1}})",
       R"([{"op":"test","path":"/spec/replicas","value":1},
           {"op":"replace","path":"/spec/replicas","value":2},
           {"op":"add","path":"/spec/paused","value":true},
           {"op":"remove","path":"/spec/paused"}])",
       R"({"spec":{"replicas":2}})"},
      {R"({"a":1})", "[]", R"({"a":1})"},
  };
  for (const auto& c : cases) {
    auto r = ApplyJsonPatch(J(c.doc), J(c.patch));
    ASSERT_TRUE(r.ok()) << c.patch << ": " << r.status().ToString();
    EXPECT_EQ(*r, J(c.result)) << c.patch;
  }
}

TEST(JsonPatchTest, ErrorsNameTheOperationAndPath) {
  struct Case {
    const char* doc;
    const char* patch;
    std::string message;
  };
  const Case cases[] = {
      {R"({"a":1})", R"([{"op":"remove","path":"/b"}])",
       "json patch operation 0 (remove \"/b\"): path \"/b\" does not exist"},
      {R"({"a":1})",
       R"([{"op":"add","path":"/a","value":2},{"op":"replace","path":"/x/y","value":1}])",
       "json patch operation 1 (replace \"/x/y\"): path \"/x\" does not exist"},
      {R"({"l":[1]})", R"([{"op":"add","path":"/l/2","value":1}])",
       "json patch operation 0 (add \"/l/2\"): path \"/l/2\": array index 2 out of bounds (length "
       "1)"},
      {R"({"l":[1]})", R"([{"op":"replace","path":"/l/1","value":1}])",
       "json patch operation 0 (replace \"/l/1\"): path \"/l/1\": array index 1 out of bounds "
       "(length 1)"},
      {R"({"l":[1]})", R"([{"op":"remove","path":"/l/01"}])",
       "json patch operation 0 (remove \"/l/01\"): path \"/l/01\": \"01\" is not a valid array "
       "index"},
      {R"({"l":[1]})", R"([{"op":"remove","path":"/l/-"}])",
       "json patch operation 0 (remove \"/l/-\"): path \"/l/-\": \"-\" is not a valid array index"},
      {R"({"a":1})", R"([{"op":"test","path":"/a","value":2}])",
       "json patch operation 0 (test \"/a\"): test failed: value is 1, expected 2"},
      {R"({"a":1})", R"([{"op":"test","path":"/b","value":2}])",
       "json patch operation 0 (test \"/b\"): path \"/b\" does not exist"},
      {R"({"a":1})", R"([{"op":"frobnicate","path":"/a"}])",
       "json patch operation 0 (frobnicate \"/a\"): unknown op \"frobnicate\""},
      {R"({"a":1})", R"([{"path":"/a"}])", "json patch operation 0 (? \"/a\"): missing \"op\""},
      {R"({"a":1})", R"([{"op":"add","value":1}])",
       "json patch operation 0 (add \"\"): missing \"path\""},
      {R"({"a":1})", R"([{"op":"add","path":"/b"}])",
       "json patch operation 0 (add \"/b\"): missing \"value\""},
      {R"({"a":1})", R"([{"op":"move","path":"/b"}])",
       "json patch operation 0 (move \"/b\"): missing \"from\""},
      {R"({"a":{"b":1}})", R"([{"op":"move","from":"/a","path":"/a/b/c"}])",
       "json patch operation 0 (move \"/a/b/c\"): cannot move a value into one of its children"},
      {R"({"a":1})", R"([{"op":"add","path":"a","value":1}])",
       "json patch operation 0 (add \"a\"): invalid path: must be empty or start with '/'"},
      {R"({"a":1})", R"([{"op":"add","path":"/a~2","value":1}])",
       "json patch operation 0 (add \"/a~2\"): invalid path: invalid escape in \"a~2\" ('~' must "
       "be followed by '0' or '1')"},
      {R"({"a":1})", R"([{"op":"add","path":"/a/b","value":1}])",
       "json patch operation 0 (add \"/a/b\"): path \"/a/b\": parent \"/a\" is not an object or "
       "array"},
      {R"({"a":1})", R"([{"op":"remove","path":""}])",
       "json patch operation 0 (remove \"\"): cannot remove the whole document"},
      {R"({"a":1})", R"([1])", "json patch operation 0 (? \"\"): operation must be an object"},
      {R"({"a":1})", R"({"op":"add"})",
       "json patch must be a list of operations, got {\"op\":\"add\"}"},
  };
  for (const auto& c : cases) {
    auto r = ApplyJsonPatch(J(c.doc), J(c.patch));
    ASSERT_FALSE(r.ok()) << c.patch << " gave " << DumpJson(*r);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(), c.message) << c.patch;
  }
}

// ---- Strategic merge patch ----

Json Deployment() {
  return J(R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "ns", "labels": {"app": "web", "tier": "fe"},
                 "annotations": {"a": "1"}, "finalizers": ["f1", "f2"],
                 "ownerReferences": [{"uid": "u1", "name": "o1", "kind": "X"}]},
    "spec": {
      "replicas": 1,
      "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
      "template": {
        "metadata": {"labels": {"app": "web"}},
        "spec": {
          "containers": [
            {"name": "app", "image": "app:1",
             "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
             "ports": [{"containerPort": 80, "name": "http"}, {"containerPort": 9090}],
             "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
            {"name": "sidecar", "image": "side:1"}],
          "volumes": [{"name": "data", "emptyDir": {}}],
          "tolerations": [{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}],
          "nodeSelector": {"disk": "ssd", "zone": "a"}}}},
    "status": {"conditions": [{"type": "Available", "status": "True"},
                              {"type": "Progressing", "status": "True", "reason": "R"}]}})");
}

Json Smp(const Json& target, const char* patch, std::string_view kind = "Deployment") {
  auto r = ApplyStrategicMergePatch(target, J(patch), kind);
  EXPECT_TRUE(r.ok()) << patch << ": " << r.status().ToString();
  return r.ok() ? *r : Json();
}

const Json& Containers(const Json& d) { return d["spec"]["template"]["spec"]["containers"]; }

bool HasDirectives(const Json& j) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (!k.empty() && k[0] == '$') return true;
      if (HasDirectives(v)) return true;
    }
  } else if (j.is_array()) {
    for (const auto& v : j) {
      if (HasDirectives(v)) return true;
    }
  }
  return false;
}

TEST(StrategicMergePatchTest, KubectlApplyImageChangeWithSetElementOrder) {
  // What `kubectl apply` sends after an image change in a two-container Deployment.
  Json out = Smp(Deployment(), R"({
    "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
    "spec": {"template": {"spec": {
      "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
      "containers": [{"image": "app:2", "name": "app"}]}}}})");
  const Json& c = Containers(out);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0]["name"], "app");
  EXPECT_EQ(c[0]["image"], "app:2");
  EXPECT_EQ(c[0]["env"].size(), 2u);  // the rest of the container is kept
  EXPECT_EQ(c[0]["ports"].size(), 2u);
  EXPECT_EQ(c[1], J(R"({"name": "sidecar", "image": "side:1"})"));
  EXPECT_EQ(out["metadata"]["annotations"]["a"], "1");
  EXPECT_EQ(out["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"],
            "{}");
  EXPECT_FALSE(HasDirectives(out)) << DumpJson(out);
}

TEST(StrategicMergePatchTest, SetElementOrderReordersAndPlacesNewItems) {
  Json out = Smp(Deployment(), R"({"spec": {"template": {"spec": {
      "$setElementOrder/containers": [{"name": "init"}, {"name": "sidecar"}, {"name": "app"}],
      "containers": [{"name": "init", "image": "i:1"}]}}}})");
  const Json& c = Containers(out);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0]["name"], "init");
  EXPECT_EQ(c[1]["name"], "sidecar");
  EXPECT_EQ(c[2]["name"], "app");
  EXPECT_EQ(c[2]["image"], "app:1");
  EXPECT_FALSE(HasDirectives(out));

  // Order only, no content change.
  Json reordered = Smp(Deployment(), R"({"spec": {"template": {"spec": {
      "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}]}}}})");
  EXPECT_EQ(Containers(reordered)[0]["name"], "sidecar");
  EXPECT_EQ(Containers(reordered)[1]["image"], "app:1");

  // A primitive list ordered by the directive.
  Json fin = Smp(Deployment(), R"({"metadata": {
      "$setElementOrder/finalizers": ["f2", "f3", "f1"], "finalizers": ["f3"]}})");
  EXPECT_EQ(fin["metadata"]["finalizers"], J(R"(["f2", "f3", "f1"])"));
}

TEST(StrategicMergePatchTest, SetElementOrderMustAgreeWithThePatchList) {
  auto r = ApplyStrategicMergePatch(Deployment(), J(R"({"spec": {"template": {"spec": {
      "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
      "containers": [{"name": "sidecar", "image": "s:2"}, {"name": "app", "image": "a:2"}]}}}})"),
                                    "Deployment");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("doesn't match $setElementOrder list"));
  EXPECT_THAT(r.status().message(), HasSubstr("spec.template.spec.containers"));
}

TEST(StrategicMergePatchTest, KubectlPatchMergesContainersByName) {
  // kubectl patch deployment web -p '{"spec":{"template":{"spec":{"containers":[...]}}}}'
  Json out = Smp(Deployment(), R"({"spec": {"template": {"spec": {"containers": [
      {"name": "sidecar", "image": "side:2"}, {"name": "new", "image": "n:1"}]}}}})");
  const Json& c = Containers(out);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0]["name"], "app");
  EXPECT_EQ(c[0]["image"], "app:1");
  EXPECT_EQ(c[1]["name"], "sidecar");
  EXPECT_EQ(c[1]["image"], "side:2");
  EXPECT_EQ(c[2]["name"], "new");
}

TEST(StrategicMergePatchTest, NullDeletesKeys) {
  // kubectl label deployment web tier-  /  kubectl apply dropping a label.
  Json out = Smp(Deployment(), R"({"metadata": {"labels": {"tier": null, "new": "x"}},
                                   "spec": {"template": {"spec": {"nodeSelector": null}}}})");
  EXPECT_EQ(out["metadata"]["labels"], J(R"({"app": "web", "new": "x"})"));
  EXPECT_FALSE(out["spec"]["template"]["spec"].contains("nodeSelector"));
  // A null for an absent key is simply dropped, also inside new subtrees.
  Json added = Smp(Deployment(), R"({"metadata": {"labels": {"absent": null}},
                                     "spec": {"paused": null, "extra": {"a": 1, "b": null}}})");
  EXPECT_FALSE(added["metadata"]["labels"].contains("absent"));
  EXPECT_FALSE(added["spec"].contains("paused"));
  EXPECT_EQ(added["spec"]["extra"], J(R"({"a": 1})"));
}

TEST(StrategicMergePatchTest, NestedListsMergeByTheirKeys) {
  Json out = Smp(Deployment(), R"({"spec": {"template": {"spec": {"containers": [{
      "name": "app",
      "env": [{"name": "B", "value": "20"}, {"name": "C", "value": "3"}],
      "ports": [{"containerPort": 9090, "name": "metrics"}],
      "volumeMounts": [{"mountPath": "/data", "readOnly": true}]}]}}}})");
  const Json& app = Containers(out)[0];
  EXPECT_EQ(app["env"], J(R"([{"name": "A", "value": "1"}, {"name": "B", "value": "20"},
                              {"name": "C", "value": "3"}])"));
  EXPECT_EQ(app["ports"], J(R"([{"containerPort": 80, "name": "http"},
                                {"containerPort": 9090, "name": "metrics"}])"));
  EXPECT_EQ(app["volumeMounts"],
            J(R"([{"name": "data", "mountPath": "/data", "readOnly": true}])"));
}

TEST(StrategicMergePatchTest, ListsWithoutStrategyAreReplaced) {
  Json out = Smp(Deployment(), R"({"spec": {"template": {"spec": {
      "tolerations": [{"key": "c", "operator": "Exists"}]}}}})");
  EXPECT_EQ(out["spec"]["template"]["spec"]["tolerations"],
            J(R"([{"key": "c", "operator": "Exists"}])"));

  Json ing = J(R"({"kind": "Ingress", "spec": {"rules": [{"host": "a"}, {"host": "b"}],
                   "tls": [{"hosts": ["a"]}]}})");
  Json out2 = Smp(ing, R"({"spec": {"rules": [{"host": "c"}]}})", "Ingress");
  EXPECT_EQ(out2["spec"]["rules"], J(R"([{"host": "c"}])"));
  EXPECT_EQ(out2["spec"]["tls"], J(R"([{"hosts": ["a"]}])"));

  Json slice = J(R"({"kind": "EndpointSlice", "endpoints": [{"addresses": ["10.0.0.1"]}]})");
  Json out3 = Smp(slice, R"({"endpoints": [{"addresses": ["10.0.0.2"]}]})", "EndpointSlice");
  EXPECT_EQ(out3["endpoints"], J(R"([{"addresses": ["10.0.0.2"]}])"));
}

TEST(StrategicMergePatchTest, ElementDirectives) {
  // $patch: delete removes the element with that key.
  Json del = Smp(Deployment(), R"({"spec": {"template": {"spec": {"containers": [
      {"name": "sidecar", "$patch": "delete"}]}}}})");
  ASSERT_EQ(Containers(del).size(), 1u);
  EXPECT_EQ(Containers(del)[0]["name"], "app");

  // $patch: replace replaces the whole list with the other elements.
  Json rep = Smp(Deployment(), R"({"spec": {"template": {"spec": {"containers": [
      {"name": "only", "image": "o:1"}, {"$patch": "replace"}]}}}})");
  EXPECT_EQ(Containers(rep), J(R"([{"name": "only", "image": "o:1"}])"));

  // $patch: merge on an element is the default behaviour.
  Json merge = Smp(Deployment(), R"({"spec": {"template": {"spec": {"containers": [
      {"name": "app", "image": "app:3", "$patch": "merge"}]}}}})");
  EXPECT_EQ(Containers(merge)[0]["image"], "app:3");
  EXPECT_EQ(Containers(merge)[0]["env"].size(), 2u);
  EXPECT_FALSE(HasDirectives(merge));
}

TEST(StrategicMergePatchTest, MapDirectives) {
  Json rep = Smp(Deployment(), R"({"spec": {"template": {"spec": {
      "nodeSelector": {"$patch": "replace", "zone": "b"}}}}})");
  EXPECT_EQ(rep["spec"]["template"]["spec"]["nodeSelector"], J(R"({"zone": "b"})"));

  Json del = Smp(Deployment(), R"({"metadata": {"annotations": {"$patch": "delete"}}})");
  EXPECT_EQ(del["metadata"]["annotations"], Json::object());
  EXPECT_EQ(del["metadata"]["labels"]["app"], "web");

  Json merge = Smp(Deployment(), R"({"metadata": {"labels": {"$patch": "merge", "x": "1"}}})");
  EXPECT_EQ(merge["metadata"]["labels"], J(R"({"app": "web", "tier": "fe", "x": "1"})"));
}

TEST(StrategicMergePatchTest, RetainKeysClearsOtherFields) {
  // kubectl apply switching the strategy from RollingUpdate to Recreate.
  Json out = Smp(Deployment(), R"({"spec": {"strategy": {"$retainKeys": ["type"],
                                                        "type": "Recreate",
                                                        "rollingUpdate": null}}})");
  EXPECT_EQ(out["spec"]["strategy"], J(R"({"type": "Recreate"})"));

  // Volumes carry $retainKeys per element (emptyDir -> configMap).
  Json vol = Smp(Deployment(), R"({"spec": {"template": {"spec": {"volumes": [
      {"name": "data", "$retainKeys": ["configMap", "name"], "configMap": {"name": "cm"}}]}}}})");
  EXPECT_EQ(vol["spec"]["template"]["spec"]["volumes"],
            J(R"([{"name": "data", "configMap": {"name": "cm"}}])"));
  EXPECT_FALSE(HasDirectives(vol));

  auto bad = ApplyStrategicMergePatch(
      Deployment(), J(R"({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}})"),
      "Deployment");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "spec.strategy: invalid patch format of retainKeys");
  auto bad2 = ApplyStrategicMergePatch(
      Deployment(), J(R"({"spec": {"strategy": {"$retainKeys": "type"}}})"), "Deployment");
  ASSERT_FALSE(bad2.ok());
}

TEST(StrategicMergePatchTest, PrimitiveListsMergeAsSets) {
  Json add = Smp(Deployment(), R"({"metadata": {"finalizers": ["f3", "f1"]}})");
  // The union: patch items in patch order, server-only items interleaved by their server
  // position (a new item goes before them, as apimachinery's mergeSortedSlice does).
  EXPECT_EQ(add["metadata"]["finalizers"], J(R"(["f3", "f1", "f2"])"));
  Json del = Smp(Deployment(), R"({"metadata": {"$deleteFromPrimitiveList/finalizers": ["f1"]}})");
  EXPECT_EQ(del["metadata"]["finalizers"], J(R"(["f2"])"));
  // What kubectl apply sends when one finalizer is swapped for another.
  Json swap = Smp(Deployment(), R"({"metadata": {
      "$setElementOrder/finalizers": ["f2", "f9"],
      "$deleteFromPrimitiveList/finalizers": ["f1"],
      "finalizers": ["f9"]}})");
  EXPECT_EQ(swap["metadata"]["finalizers"], J(R"(["f2", "f9"])"));
  EXPECT_FALSE(HasDirectives(swap));
  // On a kind without strategy metadata the list is replaced.
  Json cm = Smp(J(R"({"metadata": {"finalizers": ["a"]}, "x": ["a"]})"),
                R"({"metadata": {"finalizers": ["b"]}, "x": ["b"]})", "ConfigMap");
  EXPECT_EQ(cm["metadata"]["finalizers"], J(R"(["b", "a"])"));
  EXPECT_EQ(cm["x"], J(R"(["b"])"));
}

TEST(StrategicMergePatchTest, OwnerReferencesConditionsAndServicePorts) {
  Json owners = Smp(Deployment(), R"({"metadata": {"ownerReferences": [
      {"uid": "u2", "name": "o2", "kind": "Y"}, {"uid": "u1", "name": "renamed"}]}})");
  EXPECT_EQ(owners["metadata"]["ownerReferences"], J(R"([{"uid": "u2", "name": "o2", "kind": "Y"},
                  {"uid": "u1", "name": "renamed", "kind": "X"}])"));

  // A status patch as controllers send it: one condition by type.
  Json cond = Smp(Deployment(), R"({"status": {"conditions": [
      {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}]}})");
  EXPECT_EQ(cond["status"]["conditions"], J(R"([{"type": "Available", "status": "True"},
                  {"type": "Progressing", "status": "False",
                   "reason": "ProgressDeadlineExceeded"}])"));

  Json svc = J(R"({"kind": "Service", "spec": {"ports": [{"port": 80, "targetPort": 8080},
                                                         {"port": 443, "targetPort": 8443}],
                                               "selector": {"app": "web"}}})");
  Json out = Smp(svc, R"({"spec": {"ports": [{"port": 443, "targetPort": 9443},
                                             {"port": 8080, "name": "alt"}]}})",
                 "Service");
  EXPECT_EQ(out["spec"]["ports"], J(R"([{"port": 80, "targetPort": 8080},
                                        {"port": 443, "targetPort": 9443},
                                        {"port": 8080, "name": "alt"}])"));

  // Pods merge containers too, and ReplicaSets their template.
  Json pod = J(R"({"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b"}]}})");
  Json p2 = Smp(pod, R"({"spec": {"containers": [{"name": "a", "image": "2"}]}})", "Pod");
  EXPECT_EQ(p2["spec"]["containers"], J(R"([{"name": "a", "image": "2"}, {"name": "b"}])"));
  Json rs = J(R"({"spec": {"template": {"spec": {"initContainers": [{"name": "i", "image": "1"}],
                                                  "containers": [{"name": "a"}]}}}})");
  Json rs2 = Smp(rs, R"({"spec": {"template": {"spec": {"initContainers": [
      {"name": "i", "image": "2"}]}}}})",
                 "ReplicaSet");
  EXPECT_EQ(rs2["spec"]["template"]["spec"]["initContainers"],
            J(R"([{"name": "i", "image": "2"}])"));
}

TEST(StrategicMergePatchTest, NewSubtreesAreMaterialised) {
  // A merge list that does not exist yet: directives are applied and dropped.
  Json pod = J(R"({"spec": {}})");
  Json out = Smp(pod, R"({"spec": {
      "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
      "containers": [{"name": "b", "image": "2"},
                     {"name": "a", "image": "1", "env": [{"name": "X", "value": null}]}]}})",
                 "Pod");
  EXPECT_EQ(
      out["spec"]["containers"],
      J(R"([{"name": "b", "image": "2"}, {"name": "a", "image": "1", "env": [{"name": "X"}]}])"));
  EXPECT_FALSE(HasDirectives(out));

  // An empty patch list leaves a merge list alone.
  Json same = Smp(Deployment(), R"({"spec": {"template": {"spec": {"containers": []}}}})");
  EXPECT_EQ(Containers(same), Containers(Deployment()));

  // Type changes replace the value.
  Json changed = Smp(Deployment(), R"({"spec": {"replicas": {"odd": true}}})");
  EXPECT_EQ(changed["spec"]["replicas"], J(R"({"odd": true})"));

  // Whole-object replace.
  Json whole = Smp(Deployment(), R"({"$patch": "replace", "kind": "Deployment"})");
  EXPECT_EQ(whole, J(R"({"kind": "Deployment"})"));
}

TEST(StrategicMergePatchTest, UnknownKindsBehaveAsMergePatchWithDirectives) {
  Json cm = J(R"({"kind": "ConfigMap", "data": {"a": "1", "b": "2"}, "list": [1, 2]})");
  Json out = Smp(cm, R"({"data": {"a": null, "c": "3"}, "list": [3]})", "ConfigMap");
  EXPECT_EQ(out, J(R"({"kind": "ConfigMap", "data": {"b": "2", "c": "3"}, "list": [3]})"));
  Json rep = Smp(cm, R"({"data": {"$patch": "replace", "z": "9"}})", "SomethingNew");
  EXPECT_EQ(rep["data"], J(R"({"z": "9"})"));
}

TEST(StrategicMergePatchTest, Errors) {
  struct Case {
    const char* patch;
    std::string message;
  };
  const Case cases[] = {
      {R"({"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}})",
       "spec.template.spec.containers: map: {\"image\":\"x\"} does not contain declared merge "
       "key: name"},
      // Found by the cluster_patch fuzzer: a null merge key was merged as a new element without
      // a name, so the same patch applied twice added it twice.
      {R"({"spec": {"template": {"spec": {"containers": [{"image": "x", "name": null}]}}}})",
       "spec.template.spec.containers: map: {\"image\":\"x\",\"name\":null} does not contain "
       "declared merge key: name"},
      {R"({"spec": {"template": {"spec": {"containers": [{"$patch": "delete"}]}}}})",
       "spec.template.spec.containers: map: {\"$patch\":\"delete\"} does not contain declared "
       "merge key: name"},
      {R"({"spec": {"template": {"spec": {"containers": [{"name": "a", "$patch": "frob"}]}}}})",
       "spec.template.spec.containers: unknown patch type: \"frob\" in map: "
       "{\"$patch\":\"frob\",\"name\":\"a\"}"},
      {R"({"metadata": {"labels": {"$patch": "frob"}}})",
       "metadata.labels: unknown patch type: \"frob\" in map: {\"$patch\":\"frob\"}"},
      {R"({"spec": {"template": {"spec": {"containers": ["app"]}}}})",
       "spec.template.spec.containers: list element types are not identical"},
      {R"({"metadata": {"finalizers": [["a"]]}})",
       "metadata.finalizers: lists of lists are not "
       "supported"},
      {R"({"metadata": {"$deleteFromPrimitiveList/finalizers": "f1"}})",
       "metadata: invalid patch format of primitive list"},
      {R"({"metadata": {"$setElementOrder": []}})",
       "metadata: invalid patch format of setElementOrder list"},
      {R"({"metadata": {"$setElementOrder/finalizers": "f1"}})",
       "metadata: invalid patch format of setElementOrder list"},
  };
  for (const auto& c : cases) {
    auto r = ApplyStrategicMergePatch(Deployment(), J(c.patch), "Deployment");
    ASSERT_FALSE(r.ok()) << c.patch << " gave " << DumpJson(*r);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), ::testing::StartsWith(c.message)) << c.patch;
  }
  auto not_object = ApplyStrategicMergePatch(Deployment(), J("[1]"), "Deployment");
  ASSERT_FALSE(not_object.ok());
  EXPECT_EQ(not_object.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace steward::cluster
