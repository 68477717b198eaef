// docs/openapi.yaml against the router itself: every route is a path of the document with the
// same methods, the same query parameters and the same authentication, and the document has no
// path the router lacks. The answers' bodies are checked against the document's schemas by
// tests/contract (ajv, on a running steward).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "api/api_internal.h"
#include "common/yaml.h"

namespace steward::api::testing {
namespace {

Json LoadDocument() {
  std::ifstream in(std::string(STEWARD_SOURCE_DIR) + "/docs/openapi.yaml");
  std::ostringstream text;
  text << in.rdbuf();
  auto doc = ParseYaml(text.str());
  EXPECT_TRUE(doc.ok()) << doc.error().ToString();
  return doc.ok() ? *doc : Json::object();
}

// "/v1/projects/{project}/files/{path...}" → "/v1/projects/{project}/files/{path}".
std::string DocumentPath(std::string pattern) {
  for (size_t at = pattern.find("...}"); at != std::string::npos; at = pattern.find("...}")) {
    pattern.erase(at, 3);
  }
  return pattern;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// A parameter as written or through its $ref (#/components/parameters/<name>).
const Json& Resolve(const Json& doc, const Json& param) {
  if (!param.contains("$ref")) return param;
  const std::string ref = param["$ref"].get<std::string>();
  const std::string prefix = "#/components/parameters/";
  EXPECT_TRUE(ref.starts_with(prefix)) << ref;
  const Json& found = doc["components"]["parameters"][ref.substr(prefix.size())];
  EXPECT_TRUE(found.is_object()) << "no " << ref;
  return found;
}

std::set<std::string> QueryParameters(const Json& doc, const Json& path_item, const Json& op) {
  std::set<std::string> names;
  for (const Json* list : {&path_item, &op}) {
    if (!list->contains("parameters")) continue;
    for (const Json& p : (*list)["parameters"]) {
      const Json& param = Resolve(doc, p);
      if (param.value("in", "") == "query") names.insert(param.value("name", ""));
    }
  }
  return names;
}

const std::set<std::string> kMethods = {"get", "put", "post", "delete", "head", "patch", "options"};

class OpenApiTest : public ::testing::Test {
 protected:
  // The route table is built by the constructor; nothing is started.
  Server server_{ApiOptions{}, ApiDeps{}};
  Json doc_ = LoadDocument();
};

TEST_F(OpenApiTest, EveryRouteIsInTheDocumentWithItsMethodsParametersAndAuthentication) {
  const Json& paths = doc_["paths"];
  ASSERT_TRUE(paths.is_object());
  ASSERT_GT(server_.routes().size(), 30u);
  for (const Route& route : server_.routes()) {
    const std::string path = DocumentPath(route.pattern);
    ASSERT_TRUE(paths.contains(path)) << "docs/openapi.yaml lacks the route " << route.pattern;
    const Json& item = paths[path];
    for (const auto& [method, m] : route.methods) {
      const std::string key = Lower(method);
      ASSERT_TRUE(item.contains(key))
          << "docs/openapi.yaml lacks " << method << " " << route.pattern;
      const Json& op = item[key];
      std::set<std::string> want(m.params.begin(), m.params.end());
      EXPECT_EQ(QueryParameters(doc_, item, op), want)
          << method << " " << path << ": the document's query parameters are not the router's";
      // An open route says so (security: []); every other one needs the bearer token and
      // answers 401 without it.
      const bool open_in_doc = op.contains("security") && op["security"].empty();
      EXPECT_EQ(open_in_doc, route.open) << method << " " << path;
      if (!route.open) {
        EXPECT_TRUE(op["responses"].contains("401")) << method << " " << path << " lacks 401";
      }
    }
    for (const auto& [key, value] : item.items()) {
      if (!kMethods.count(key)) continue;
      std::string upper = key;
      std::transform(upper.begin(), upper.end(), upper.begin(),
                     [](unsigned char c) { return std::toupper(c); });
      EXPECT_TRUE(route.methods.count(upper))
          << "docs/openapi.yaml has " << upper << " " << path << ", which the router does not";
    }
  }
}

TEST_F(OpenApiTest, TheDocumentHasNoPathTheRouterLacks) {
  std::set<std::string> routed;
  for (const Route& route : server_.routes()) routed.insert(DocumentPath(route.pattern));
  for (const auto& [path, item] : doc_["paths"].items()) {
    EXPECT_TRUE(routed.count(path)) << "docs/openapi.yaml has " << path << ", no route has";
  }
}

TEST_F(OpenApiTest, EveryOperationHasItsOwnIdAndEveryAnswerADescription) {
  std::set<std::string> ids;
  for (const auto& [path, item] : doc_["paths"].items()) {
    for (const auto& [key, op] : item.items()) {
      if (!kMethods.count(key)) continue;
      const std::string id = op.value("operationId", "");
      EXPECT_FALSE(id.empty()) << key << " " << path;
      EXPECT_TRUE(ids.insert(id).second) << "operationId " << id << " twice";
      ASSERT_TRUE(op.contains("responses")) << key << " " << path;
      EXPECT_FALSE(op["responses"].empty()) << key << " " << path;
    }
  }
}

}  // namespace
}  // namespace steward::api::testing
