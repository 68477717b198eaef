#include "cluster/apiserver/field_validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_support/stack.h"

namespace steward::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const ResourceType& Type(std::string_view api_version, std::string_view kind) {
  const ResourceType* rt = FindKind(api_version, kind);
  EXPECT_NE(rt, nullptr) << kind;
  return *rt;
}

// As the API server's callers parse bodies: duplicate keys are the point of these tests, and the
// last one wins, as Go decodes.
Json Parse(std::string_view text) {
  auto j = ParseJson(text, ParseOptions{.duplicate_keys = DuplicateKeys::kLastWins});
  EXPECT_TRUE(j.ok()) << text;
  return j.ok() ? *j : Json();
}

FieldProblems Check(std::string_view api_version, std::string_view kind, std::string_view raw) {
  return CheckFields(Type(api_version, kind), raw, Parse(raw));
}

// The body of the API server's own field validation integration test
// (test/integration/apiserver/field_validation_test.go), and the error it expects.
constexpr std::string_view kInvalidDeployment = R"({
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {"name": "web", "name": "web", "unknownMeta": "x", "labels": {"app": "nginx"}},
  "spec": {
    "unknown1": "val1",
    "unknownDupe": "valDupe",
    "unknownDupe": "valDupe2",
    "paused": true,
    "paused": false,
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {
      "metadata": {"labels": {"app": "nginx"}},
      "spec": {
        "containers": [{
          "name": "nginx",
          "image": "nginx:latest",
          "unknownNested": "val1",
          "imagePullPolicy": "Always",
          "imagePullPolicy": "Never"
        }]
      }
    }
  }
})";

constexpr std::string_view kInvalidDeploymentError =
    R"(strict decoding error: duplicate field "metadata.name", unknown field "metadata.unknownMeta", unknown field "spec.unknown1", unknown field "spec.unknownDupe", duplicate field "spec.paused", unknown field "spec.template.spec.containers[0].unknownNested", duplicate field "spec.template.spec.containers[0].imagePullPolicy")";

TEST(FieldValidationTest, CreateBodyProblemsInDocumentOrderAsTheApiServerWordsThem) {
  FieldProblems p = Check("apps/v1", "Deployment", kInvalidDeployment);
  EXPECT_EQ(p.StrictError(), kInvalidDeploymentError);
  EXPECT_THAT(p.unknown, ElementsAre("metadata.unknownMeta", "spec.unknown1", "spec.unknownDupe",
                                     "spec.template.spec.containers[0].unknownNested"));
  EXPECT_THAT(p.duplicate, ElementsAre("metadata.name", "spec.paused",
                                       "spec.template.spec.containers[0].imagePullPolicy"));
}

TEST(FieldValidationTest, StrictCreateErrorIsABadRequestNamingKindAndVersion) {
  const ResourceType& rt = Type("apps/v1", "Deployment");
  Json body = Parse(kInvalidDeployment);
  StatusError e = StrictDecodingError(rt, body, CheckFields(rt, kInvalidDeployment, body));
  EXPECT_EQ(e.code, 400);
  EXPECT_EQ(e.reason, "BadRequest");
  EXPECT_EQ(e.message, "Deployment in version \"v1\" cannot be handled as a Deployment: " +
                           std::string(kInvalidDeploymentError));
  // Without apiVersion/kind in the body the URL's type is used.
  Json bare = {{"spec", {{"foo", 1}}}};
  e = StrictDecodingError(rt, bare, CheckFields(rt, DumpJson(bare), bare));
  EXPECT_EQ(e.message,
            "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding "
            "error: unknown field \"spec.foo\"");
}

TEST(FieldValidationTest, AMisspelledContainerFieldIsReportedWithItsIndex) {
  FieldProblems p = Check("apps/v1", "Deployment", R"({"spec": {"template": {"spec": {
      "containers": [{"name": "a", "image": "x"},
                     {"name": "b", "image": "y", "imagePullPolcy": "Always"}]}}}})");
  EXPECT_THAT(p.messages,
              ElementsAre("unknown field \"spec.template.spec.containers[1].imagePullPolcy\""));
}

TEST(FieldValidationTest, FreeFormMapsInlineFieldsAndRarelyUsedFieldsAreAccepted) {
  // Every key here is real Kubernetes, including fields the hand-written OpenAPI schemas leave
  // out (awsElasticBlockStore, ephemeralContainers, windowsOptions): no false positives.
  constexpr std::string_view kPod = R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "labels": {"any/key": "v", "x": "y"},
                 "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
                 "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "n", "uid": "u",
                                      "controller": true}],
                 "managedFields": [{"manager": "m", "fieldsType": "FieldsV1",
                                    "fieldsV1": {"f:spec": {"f:anything": {}}}}]},
    "spec": {
      "nodeSelector": {"disktype": "ssd"},
      "securityContext": {"runAsUser": 1000, "windowsOptions": {"runAsUserName": "u"}},
      "volumes": [{"name": "a", "emptyDir": {"sizeLimit": "1Gi"}},
                  {"name": "b", "configMap": {"name": "cm", "items": [{"key": "k", "path": "p"}]}},
                  {"name": "c", "awsElasticBlockStore": {"volumeID": "vol-1", "fsType": "ext4"}}],
      "ephemeralContainers": [{"name": "debug", "image": "busybox", "targetContainerName": "a"}],
      "containers": [{
        "name": "a", "image": "nginx",
        "resources": {"limits": {"cpu": "1", "nvidia.com/gpu": 1}, "requests": {"memory": "1Gi"}},
        "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 5},
        "env": [{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}}],
        "ports": [{"containerPort": 80, "name": "http"}]
      }]
    },
    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
  })";
  EXPECT_THAT(Check("v1", "Pod", kPod).messages, IsEmpty());
  EXPECT_THAT(
      Check("v1", "ConfigMap", R"({"data": {"a.b": "1", "c": "2"}, "binaryData": {"x": "AA=="}})")
          .messages,
      IsEmpty());
  EXPECT_THAT(Check("v1", "Secret", R"({"stringData": {"u": "v"}, "data": {"k": "dg=="},
                                         "type": "Opaque", "immutable": true})")
                  .messages,
              IsEmpty());
  EXPECT_THAT(Check("networking.k8s.io/v1", "Ingress",
                    R"({"spec": {"rules": [{"host": "h", "http": {"paths": [{"path": "/",
                        "pathType": "Prefix", "backend": {"service": {"name": "s",
                        "port": {"number": 80}}}}]}}]}})")
                  .messages,
              IsEmpty());
}

TEST(FieldValidationTest, TopLevelAndMapDuplicatesAreReported) {
  FieldProblems p = Check("v1", "ConfigMap",
                          R"({"apiVersion": "v1", "kind": "ConfigMap", "dataa": {},
                              "metadata": {"labels": {"a": "1", "a": "2"}},
                              "data": {"k": "1", "k": "2"}})");
  EXPECT_THAT(p.messages,
              ElementsAre("unknown field \"dataa\"", "duplicate field \"metadata.labels.a\"",
                          "duplicate field \"data.k\""));
}

TEST(FieldValidationTest, ValuesUnderUnknownFieldsAndRawFieldsAreNotLookedInto) {
  FieldProblems p = Check("v1", "ConfigMap",
                          R"({"extra": {"a": 1, "a": 2, "b": {"c": 1}},
                              "metadata": {"managedFields": [{"fieldsV1": {"x": 1, "x": 2}}]}})");
  EXPECT_THAT(p.messages, ElementsAre("unknown field \"extra\""));
}

TEST(FieldValidationTest, YamlBodiesReportUnknownFieldsInKeyOrder) {
  // A YAML body reaches the check as parsed JSON: no duplicates, sorted keys (as the server's
  // YAML-to-JSON conversion sorts them).
  const ResourceType& rt = Type("apps/v1", "Deployment");
  Json parsed = Parse(R"({"spec": {"zeta": 1, "template": {"spec": {"containers": [{"nam": "a"}]}},
                          "alpha": 2}, "metadata": {"unknownMeta": 1}})");
  FieldProblems p = CheckFields(rt, "spec:\n  zeta: 1\n", parsed);
  EXPECT_THAT(p.unknown, ElementsAre("metadata.unknownMeta", "spec.alpha",
                                     "spec.template.spec.containers[0].nam", "spec.zeta"));
}

TEST(FieldValidationTest, TheScaleSubresourceIsCheckedAgainstScale) {
  const ResourceType& rt = Type("apps/v1", "Deployment");
  std::string raw = R"({"kind": "Scale", "apiVersion": "autoscaling/v1",
                        "spec": {"replicas": 2, "paused": true}})";
  FieldProblems p = CheckFields(rt, raw, Parse(raw), Subresource::kScale);
  EXPECT_THAT(p.unknown, ElementsAre("spec.paused"));
  StatusError e = StrictDecodingError(rt, Parse(raw), p, Subresource::kScale);
  EXPECT_EQ(e.message,
            "Scale in version \"v1\" cannot be handled as a Scale: strict decoding error: unknown "
            "field \"spec.paused\"");
  // The same field is known to the Deployment itself.
  EXPECT_THAT(CheckFields(rt, raw, Parse(raw)).unknown, IsEmpty());
}

TEST(FieldValidationTest, DropUnknownFieldsRemovesExactlyTheUnknownOnes) {
  const ResourceType& rt = Type("apps/v1", "Deployment");
  Json body = Parse(kInvalidDeployment);
  EXPECT_TRUE(DropUnknownFields(rt, body));
  EXPECT_FALSE(body["metadata"].contains("unknownMeta"));
  EXPECT_FALSE(body["spec"].contains("unknown1"));
  EXPECT_FALSE(body["spec"].contains("unknownDupe"));
  const Json& container = body["spec"]["template"]["spec"]["containers"][0];
  EXPECT_FALSE(container.contains("unknownNested"));
  EXPECT_EQ(container["imagePullPolicy"], "Never");
  EXPECT_EQ(body["metadata"]["labels"]["app"], "nginx");
  EXPECT_EQ(body["apiVersion"], "apps/v1");
  std::string clean = DumpJson(body);
  EXPECT_THAT(CheckFields(rt, clean, body).messages, IsEmpty());
  EXPECT_FALSE(DropUnknownFields(rt, body));
}

Json CurrentDeployment() {
  return Parse(R"({"apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default", "labels": {"app": "nginx"}},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "nginx"}},
             "template": {"metadata": {"labels": {"app": "nginx"}},
                          "spec": {"containers": [{"name": "nginx", "image": "nginx:latest",
                                                   "imagePullPolicy": "Always"}]}}}})");
}

constexpr std::string_view kMergePatch = R"({
  "spec": {
    "unknown1": "val1",
    "unknownDupe": "valDupe",
    "unknownDupe": "valDupe2",
    "paused": true,
    "paused": false,
    "template": {"spec": {"containers": [{
      "name": "nginx", "image": "nginx:latest", "unknownNested": "val1",
      "imagePullPolicy": "Always", "imagePullPolicy": "Never"}]}}
  }
})";

constexpr std::string_view kPatchError =
    R"(strict decoding error: duplicate field "spec.unknownDupe", duplicate field "spec.paused", duplicate field "spec.template.spec.containers[0].imagePullPolicy", unknown field "spec.template.spec.containers[0].unknownNested", unknown field "spec.unknown1", unknown field "spec.unknownDupe")";

TEST(FieldValidationTest, MergePatchReportsPatchDuplicatesThenUnknownFieldsOfTheResult) {
  const ResourceType& rt = Type("apps/v1", "Deployment");
  Json current = CurrentDeployment();
  Json patch = Parse(kMergePatch);
  auto patched = ApplyMergePatch(current, patch);
  ASSERT_TRUE(patched.ok());
  FieldProblems p =
      CheckPatchFields(rt, PatchType::kJsonMerge, kMergePatch, patch, &*patched, &current);
  EXPECT_EQ(p.StrictError(), kPatchError);
}

TEST(FieldValidationTest, StrategicMergePatchReportsTheSameAsTheServer) {
  const ResourceType& rt = Type("apps/v1", "Deployment");
  Json current = CurrentDeployment();
  Json patch = Parse(kMergePatch);
  auto patched = ApplyStrategicMergePatch(current, patch, "Deployment");
  ASSERT_TRUE(patched.ok());
  FieldProblems p =
      CheckPatchFields(rt, PatchType::kStrategicMerge, kMergePatch, patch, &*patched, &current);
  EXPECT_EQ(p.StrictError(), kPatchError);
}

TEST(FieldValidationTest, UnknownFieldOrderDiffersBetweenMergeAndStrategicPatches) {
  // The server sorts a strategic merge patch's unknown fields as strings ('-' < '.'), but finds
  // a merge patch's in key order, depth first.
  const ResourceType& rt = Type("apps/v1", "Deployment");
  Json current = CurrentDeployment();
  std::string raw = R"({"spec": {"template-x": 1, "template": {"spec": {"x": 1}}}})";
  Json patch = Parse(raw);
  auto merged = ApplyMergePatch(current, patch);
  auto strategic = ApplyStrategicMergePatch(current, patch, "Deployment");
  ASSERT_TRUE(merged.ok() && strategic.ok());
  EXPECT_THAT(CheckPatchFields(rt, PatchType::kJsonMerge, raw, patch, &*merged).unknown,
              ElementsAre("spec.template.spec.x", "spec.template-x"));
  EXPECT_THAT(CheckPatchFields(rt, PatchType::kStrategicMerge, raw, patch, &*strategic).unknown,
              ElementsAre("spec.template-x", "spec.template.spec.x"));
}

TEST(FieldValidationTest, JsonPatchReportsOperationProblemsWithItsPrefix) {
  constexpr std::string_view kJsonPatch = R"([
    {"op": "add", "path": "/spec/unknown1", "value": "val1", "foo": "bar"},
    {"op": "add", "path": "/spec/unknown2", "path": "/spec/unknown3", "value": "val1"},
    {"op": "add", "path": "/spec/unknownDupe", "value": "valDupe"},
    {"op": "add", "path": "/spec/unknownDupe", "value": "valDupe2"},
    {"op": "add", "path": "/spec/paused", "value": true},
    {"op": "add", "path": "/spec/paused", "value": false},
    {"op": "add", "path": "/spec/template/spec/containers/0/unknownNested", "value": "val1"},
    {"op": "add", "path": "/spec/template/spec/containers/0/imagePullPolicy", "value": "Always"},
    {"op": "add", "path": "/spec/template/spec/containers/0/imagePullPolicy", "value": "Never"}
  ])";
  const ResourceType& rt = Type("apps/v1", "Deployment");
  Json current = CurrentDeployment();
  Json patch = Parse(kJsonPatch);
  auto patched = ApplyJsonPatch(current, patch);
  ASSERT_TRUE(patched.ok()) << patched.status().message();
  FieldProblems p =
      CheckPatchFields(rt, PatchType::kJsonPatch, kJsonPatch, patch, &*patched, &current);
  EXPECT_EQ(
      p.StrictError(),
      R"(strict decoding error: json patch unknown field "[0].foo", json patch duplicate field "[1].path", unknown field "spec.template.spec.containers[0].unknownNested", unknown field "spec.unknown1", unknown field "spec.unknown3", unknown field "spec.unknownDupe")");
}

TEST(FieldValidationTest, UnknownFieldsTheObjectAlreadyHadAreNotThePatchs) {
  const ResourceType& rt = Type("apps/v1", "Deployment");
  Json current = CurrentDeployment();
  current["spec"]["legacy"] = true;
  std::string raw = R"({"spec": {"replicas": 3}})";
  Json patch = Parse(raw);
  auto patched = ApplyMergePatch(current, patch);
  ASSERT_TRUE(patched.ok());
  EXPECT_TRUE(CheckPatchFields(rt, PatchType::kJsonMerge, raw, patch, &*patched, &current).empty());
  EXPECT_THAT(CheckPatchFields(rt, PatchType::kJsonMerge, raw, patch, &*patched).unknown,
              ElementsAre("spec.legacy"));
}

TEST(FieldValidationTest, WithoutTheResultThePatchDocumentItselfIsChecked) {
  const ResourceType& rt = Type("apps/v1", "Deployment");
  // Merge: a null deletes (adds nothing unknown).
  std::string merge = R"({"spec": {"foo": 1, "bar": null, "replicas": 2}})";
  EXPECT_THAT(CheckPatchFields(rt, PatchType::kJsonMerge, merge, Parse(merge)).unknown,
              ElementsAre("spec.foo"));
  // Strategic: directives are not fields; list elements are checked by the list's item type.
  std::string smp = R"({"spec": {"template": {"spec": {
      "$setElementOrder/containers": [{"name": "a"}],
      "containers": [{"name": "a", "$patch": "delete"}, {"name": "b", "imagePullPolcy": "x"}]}},
      "$retainKeys": ["replicas"]}})";
  EXPECT_THAT(CheckPatchFields(rt, PatchType::kStrategicMerge, smp, Parse(smp)).unknown,
              ElementsAre("spec.template.spec.containers[1].imagePullPolcy"));
  // In a merge patch "$patch" is just an unknown key.
  std::string dollar = R"({"spec": {"$patch": "replace"}})";
  EXPECT_THAT(CheckPatchFields(rt, PatchType::kJsonMerge, dollar, Parse(dollar)).unknown,
              ElementsAre("spec.$patch"));
  // JSON patch: the path of add/replace, then the value below it.
  std::string ops = R"([{"op": "add", "path": "/spec/foo", "value": 1},
      {"op": "replace", "path": "/spec/template/spec/containers/0",
       "value": {"name": "a", "imagePullPolcy": "x"}},
      {"op": "add", "path": "/metadata/labels/any~1key", "value": "v"},
      {"op": "remove", "path": "/spec/whatever"}])";
  EXPECT_THAT(CheckPatchFields(rt, PatchType::kJsonPatch, ops, Parse(ops)).unknown,
              ElementsAre("spec.foo", "spec.template.spec.containers[0].imagePullPolcy"));
  // Apply patches are left to the apply machinery.
  EXPECT_TRUE(CheckPatchFields(rt, PatchType::kApply, merge, Parse(merge)).empty());
}

TEST(FieldValidationTest, DropUnknownPatchFields) {
  const ResourceType& rt = Type("apps/v1", "Deployment");
  Json smp = Parse(R"({"metadata": {"labels": {"x": "y"}}, "spec": {"foo": 1, "replicas": 2,
      "template": {"spec": {"$setElementOrder/containers": [{"name": "a"}],
                            "containers": [{"name": "a", "imagePullPolcy": "x"}]}}}})");
  EXPECT_TRUE(DropUnknownPatchFields(rt, PatchType::kStrategicMerge, smp));
  EXPECT_EQ(smp, Parse(R"({"metadata": {"labels": {"x": "y"}}, "spec": {"replicas": 2,
      "template": {"spec": {"$setElementOrder/containers": [{"name": "a"}],
                            "containers": [{"name": "a"}]}}}})"));
  Json ops = Parse(R"([{"op": "add", "path": "/spec/foo", "value": 1},
      {"op": "add", "path": "/spec/template/spec/containers/-",
       "value": {"name": "b", "image": "i", "bogus": 1}},
      {"op": "replace", "path": "/spec/replicas", "value": 3}])");
  EXPECT_TRUE(DropUnknownPatchFields(rt, PatchType::kJsonPatch, ops));
  EXPECT_EQ(ops, Parse(R"([{"op": "add", "path": "/spec/template/spec/containers/-",
      "value": {"name": "b", "image": "i"}},
      {"op": "replace", "path": "/spec/replicas", "value": 3}])"));
  Json clean = Parse(R"({"spec": {"replicas": 2}})");
  EXPECT_FALSE(DropUnknownPatchFields(rt, PatchType::kJsonMerge, clean));
}

TEST(FieldValidationTest, StrictPatchErrorIsAnInvalidOnThePatchField) {
  FieldProblems p;
  p.unknown = {"spec.foo"};
  p.messages = {"unknown field \"spec.foo\""};
  StatusError e = StrictPatchError(p, GoMapString(Parse(R"({"spec": {"foo": 1}})")));
  EXPECT_EQ(e.code, 422);
  EXPECT_EQ(e.reason, "Invalid");
  EXPECT_EQ(e.message,
            " \"\" is invalid: patch: Invalid value: \"map[spec:map[foo:1]]\": strict decoding "
            "error: unknown field \"spec.foo\"");
  ASSERT_EQ(e.causes.size(), 1u);
  EXPECT_EQ(e.causes[0].reason, "FieldValueInvalid");
  EXPECT_EQ(e.causes[0].field, "patch");
  EXPECT_EQ(e.causes[0].message,
            "Invalid value: \"map[spec:map[foo:1]]\": strict decoding error: unknown field "
            "\"spec.foo\"");
  Json status = e.ToStatus();
  EXPECT_FALSE(status["details"].contains("kind"));
  // A JSON value quoted the Go way.
  e = StrictPatchError(p, R"({"a":"b"})");
  EXPECT_THAT(e.message, ::testing::HasSubstr(R"(Invalid value: "{\"a\":\"b\"}": strict)"));
}

TEST(FieldValidationTest, GoMapStringPrintsLikeFmtPlusV) {
  EXPECT_EQ(GoMapString(Parse(R"({"spec": {"replicas": 3, "paused": true, "x": [1, "a", null],
                                   "f": 1.5, "big": 1e21, "s": "two words"}})")),
            "map[spec:map[big:1e+21 f:1.5 paused:true replicas:3 s:two words x:[1 a <nil>]]]");
}

TEST(FieldValidationTest, ParseFieldValidation) {
  EXPECT_EQ(*ParseFieldValidation("", "CreateOptions"), FieldValidation::kWarn);
  EXPECT_EQ(*ParseFieldValidation("Warn", "CreateOptions"), FieldValidation::kWarn);
  EXPECT_EQ(*ParseFieldValidation("Strict", "PatchOptions"), FieldValidation::kStrict);
  EXPECT_EQ(*ParseFieldValidation("Ignore", "UpdateOptions"), FieldValidation::kIgnore);
  auto bad = ParseFieldValidation("strict", "CreateOptions");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, 422);
  EXPECT_EQ(bad.error().message,
            "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: "
            "\"strict\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"");
  EXPECT_EQ(bad.error().kind, "CreateOptions");
  EXPECT_EQ(bad.error().group, "meta.k8s.io");
  ASSERT_EQ(bad.error().causes.size(), 1u);
  EXPECT_EQ(bad.error().causes[0].field, "fieldValidation");
}

TEST(FieldValidationTest, WarningHeadersQuoteEachMessage) {
  FieldProblems p = Check("v1", "ConfigMap", R"({"dat": {}, "data": {"a": "1", "a": "2"}})");
  EXPECT_THAT(WarningHeaders(p), ElementsAre(R"(299 - "unknown field \"dat\"")",
                                             R"(299 - "duplicate field \"data.a\"")"));
}

// {"a":{"a":...{"a":1}}}: `depth` levels of objects.
Json DeepObjects(int depth) {
  std::string text;
  for (int i = 0; i < depth; ++i) text += "{\"a\":";
  text += "1" + std::string(depth, '}');
  return Parse(text);
}

// Everything the API server does with a body or patch recurses over it somewhere (the scan of
// the raw text does not, nlohmann's parser does not): at the deepest document ParseJson accepts
// (hardening finding 2), each must fit a default thread stack. The sanitizer builds run this
// too, on frames several times larger.
TEST(FieldValidationTest, EveryCheckSurvivesTheDeepestAcceptedDocument) {
  bool ran = test_support::RunWithStack(test_support::kDefaultThreadStack, [] {
    const ResourceType& cm = Type("v1", "ConfigMap");
    const Json current = Parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}})");
    Json body = current;
    body["x"] = DeepObjects(kMaxNestingDepth - 1);
    const std::string raw = DumpJson(body);
    ASSERT_TRUE(ParseJson(raw).ok());
    FieldProblems p = CheckFields(cm, raw, body);
    EXPECT_THAT(p.unknown, ElementsAre("x"));
    EXPECT_FALSE(StrictDecodingError(cm, body, p).message.empty());
    Json dropped = body;
    EXPECT_TRUE(DropUnknownFields(cm, dropped));
    EXPECT_EQ(dropped, current);

    Json patch = Json::object();
    patch["x"] = DeepObjects(kMaxNestingDepth - 1);
    const std::string raw_patch = DumpJson(patch);
    for (PatchType type : {PatchType::kJsonMerge, PatchType::kStrategicMerge}) {
      auto patched = type == PatchType::kJsonMerge
                         ? ApplyMergePatch(current, patch)
                         : ApplyStrategicMergePatch(current, patch, "ConfigMap");
      ASSERT_TRUE(patched.ok()) << patched.status().ToString();
      EXPECT_EQ((*patched)["x"], patch["x"]);
      FieldProblems pp = CheckPatchFields(cm, type, raw_patch, patch, &*patched, &current);
      EXPECT_THAT(pp.unknown, ElementsAre("x"));
      FieldProblems unpatched = CheckPatchFields(cm, type, raw_patch, patch);
      EXPECT_THAT(unpatched.unknown, ElementsAre("x"));
      EXPECT_FALSE(StrictPatchError(pp, type == PatchType::kStrategicMerge ? GoMapString(patch)
                                                                           : DumpJson(*patched))
                       .message.empty());
      Json p2 = patch;
      EXPECT_TRUE(DropUnknownPatchFields(cm, type, p2));
    }
    Json ops = Json::array({Json{{"op", "add"}, {"path", "/x"}}});
    ops[0]["value"] = DeepObjects(kMaxNestingDepth - 2);
    const std::string raw_ops = DumpJson(ops);
    ASSERT_TRUE(ParseJson(raw_ops).ok());
    auto json_patched = ApplyJsonPatch(current, ops);
    ASSERT_TRUE(json_patched.ok()) << json_patched.status().ToString();
    EXPECT_EQ((*json_patched)["x"], ops[0]["value"]);
    FieldProblems jp =
        CheckPatchFields(cm, PatchType::kJsonPatch, raw_ops, ops, &*json_patched, &current);
    EXPECT_THAT(jp.unknown, ElementsAre("x"));
    EXPECT_THAT(CheckPatchFields(cm, PatchType::kJsonPatch, raw_ops, ops).messages,
                ::testing::Not(IsEmpty()));
    Json ops2 = ops;
    DropUnknownPatchFields(cm, PatchType::kJsonPatch, ops2);
  });
  EXPECT_TRUE(ran);
}

}  // namespace
}  // namespace steward::cluster
