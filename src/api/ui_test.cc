// The dashboard's serving side (/ui, docs/dashboard.md): the embedded files, their headers, and
// that serving them opens nothing else of the API.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string_view>

#include "api/api_test_support.h"
#include "api/ui_assets.h"

namespace steward::api::testing {
namespace {

// `path` is under src/api/ui/ (the chart library's files: under node_modules/, which `npm ci`
// installs there from the pinned package-lock.json).
std::string SourceFile(const std::string& path) {
  std::ifstream in(std::string(STEWARD_SOURCE_DIR) + "/src/api/ui/" + path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(UiAssetsTest, EveryFileIsEmbeddedAsItIsInTheTreeWithItsType) {
  struct File {
    const char* name;  // as served under /ui/
    const char* path;  // under src/api/ui/
    const char* type;
  };
  const File files[] = {
      {"index.html", "index.html", "text/html; charset=utf-8"},
      {"app.js", "app.js", "text/javascript; charset=utf-8"},
      {"charts.js", "charts.js", "text/javascript; charset=utf-8"},
      {"fleet.js", "fleet.js", "text/javascript; charset=utf-8"},
      {"style.css", "style.css", "text/css; charset=utf-8"},
      {"uplot.js", "node_modules/uplot/dist/uPlot.iife.min.js", "text/javascript; charset=utf-8"},
      {"uplot.css", "node_modules/uplot/dist/uPlot.min.css", "text/css; charset=utf-8"},
  };
  // Every embedded file is in the list (a file added to the build is added here too).
  ASSERT_EQ(kUiAssetFileCount, std::size(files));
  for (size_t i = 0; i < kUiAssetFileCount; ++i) {
    EXPECT_TRUE(std::any_of(std::begin(files), std::end(files), [&](const File& f) {
      return std::string_view(f.name) == kUiAssetFiles[i].name;
    })) << kUiAssetFiles[i].name;
  }
  for (const auto& [name, path, type] : files) {
    auto a = FindUiAsset(name);
    ASSERT_TRUE(a.has_value()) << name;
    EXPECT_EQ(a->content_type, type) << name;
    const std::string on_disk = SourceFile(path);
    ASSERT_FALSE(on_disk.empty()) << path;
    EXPECT_EQ(a->body, on_disk) << name << ": the build embedded another version of " << path;
    EXPECT_EQ(a->etag.size(), 18u) << a->etag;
  }
  EXPECT_EQ(FindUiAsset("")->name, "index.html");
  EXPECT_NE(FindUiAsset("app.js")->etag, FindUiAsset("style.css")->etag);
  // The chart library is uPlot as package.json pins it, and the installed copy is that version.
  EXPECT_NE(FindUiAsset("uplot.js")->body.find("uPlot"), std::string_view::npos);
  EXPECT_NE(SourceFile("package.json").find("\"uplot\": \"1.6.32\""), std::string::npos);
  EXPECT_NE(SourceFile("node_modules/uplot/package.json").find("\"version\": \"1.6.32\""),
            std::string::npos);
  for (const char* name :
       {"nope.js", "index", "../app.js", "ui/app.js", "embed.cmake", "package.json",
        "package-lock.json", "node_modules/uplot/package.json", "uPlot.iife.min.js"}) {
    EXPECT_FALSE(FindUiAsset(name).has_value()) << name;
  }
}

TEST(UiAssetsTest, ThePageLoadsOnlyItsOwnFilesAndHasNoInlineScript) {
  const std::string html(FindUiAsset("index.html")->body);
  EXPECT_NE(html.find("<script src=\"/ui/uplot.js\"></script>"), std::string::npos);
  EXPECT_NE(html.find("<script type=\"module\" src=\"/ui/app.js\"></script>"), std::string::npos);
  EXPECT_NE(html.find("href=\"/ui/style.css\""), std::string::npos);
  EXPECT_NE(html.find("href=\"/ui/uplot.css\""), std::string::npos);
  // Every <script> has a src (the CSP refuses inline script anyway), nothing is fetched from
  // another origin, and no inline handler or style.
  size_t at = 0, scripts = 0;
  while ((at = html.find("<script", at)) != std::string::npos) {
    EXPECT_NE(html.substr(at, html.find('>', at) - at).find(" src=\"/ui/"), std::string::npos);
    ++at;
    ++scripts;
  }
  EXPECT_EQ(scripts, 2u);  // uplot.js, app.js (which imports charts.js and fleet.js)
  for (const char* banned : {"http://", "https://", "//cdn", " onclick=", " onload=", " style="}) {
    EXPECT_EQ(html.find(banned), std::string::npos) << banned;
  }
}

class UiTest : public ApiFixture {
 protected:
  net::HttpResponse Get(const std::string& target, const std::string& if_none_match = "") {
    net::HttpClient::Options o;
    o.port = api_->port();
    o.timeout = seconds(30);
    auto client = net::HttpClient::Create(o);
    net::Headers h;
    if (!if_none_match.empty()) h.Set("If-None-Match", if_none_match);
    auto r = client->Request("GET", target, "", h);
    EXPECT_TRUE(r.ok()) << target << ": " << r.error().ToString();
    return r.ok() ? *r : net::HttpResponse{0, {}, ""};
  }
  static void ExpectUiHeaders(const net::HttpResponse& r) {
    const std::string csp(r.headers.Get("Content-Security-Policy"));
    EXPECT_NE(csp.find("default-src 'self'"), std::string::npos) << csp;
    EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << csp;
    EXPECT_EQ(csp.find("unsafe"), std::string::npos) << csp;
    EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << csp;
    EXPECT_EQ(r.headers.Get("X-Content-Type-Options"), "nosniff");
    EXPECT_EQ(r.headers.Get("Referrer-Policy"), "no-referrer");
  }
};

TEST_F(UiTest, TheShellIsServedWithoutTheTokenAndHoldsNoData) {
  auto put =
      Do("PUT", "/v1/projects/secret-name?wait=20s", SpecBody("flowfuse/node-red:4.0", true));
  ASSERT_EQ(put.status, 201) << put.body;
  for (const char* target : {"/ui", "/ui/", "/ui/index.html", "/ui?x=1"}) {
    auto r = Get(target);
    EXPECT_EQ(r.status, 200) << target;
    EXPECT_EQ(r.headers.Get("Content-Type"), "text/html; charset=utf-8") << target;
    EXPECT_EQ(r.body, FindUiAsset("index.html")->body) << target;
    EXPECT_EQ(r.headers.Get("Cache-Control"), "no-cache");
    ExpectUiHeaders(r);
  }
  // Nothing of the store is in any file: no project name, no token.
  for (const char* target : {"/ui", "/ui/app.js", "/ui/charts.js", "/ui/fleet.js", "/ui/style.css",
                             "/ui/uplot.js", "/ui/uplot.css"}) {
    auto r = Get(target);
    EXPECT_EQ(r.body.find("secret-name"), std::string::npos) << target;
    EXPECT_EQ(r.body.find(kToken), std::string::npos) << target;
  }
  // The API is as closed as before: no token or a wrong one is 401, also for unknown /v1 paths.
  ExpectError(Do("GET", "/v1/projects", "", "", ""), 401, "Unauthorized", "", "required");
  ExpectError(Do("GET", "/v1/projects/secret-name", "", "", "Bearer nope"), 401, "Unauthorized", "",
              "not valid");
  ExpectError(Do("GET", "/v1/ui", "", "", ""), 401, "Unauthorized", "", "required");
  ExpectError(Do("GET", "/v1/watch", "", "", ""), 401, "Unauthorized", "", "required");
}

TEST_F(UiTest, AssetsHaveTheirTypesAndTags) {
  const std::pair<const char*, const char*> files[] = {
      {"/ui/app.js", "text/javascript; charset=utf-8"},
      {"/ui/charts.js", "text/javascript; charset=utf-8"},
      {"/ui/fleet.js", "text/javascript; charset=utf-8"},
      {"/ui/style.css", "text/css; charset=utf-8"},
      {"/ui/uplot.js", "text/javascript; charset=utf-8"},
      {"/ui/uplot.css", "text/css; charset=utf-8"},
  };
  for (const auto& [target, type] : files) {
    auto r = Get(target);
    EXPECT_EQ(r.status, 200) << target;
    EXPECT_EQ(r.headers.Get("Content-Type"), type) << target;
    EXPECT_FALSE(r.body.empty());
    ExpectUiHeaders(r);
    const std::string etag(r.headers.Get("ETag"));
    ASSERT_FALSE(etag.empty()) << target;
    auto again = Get(target, etag);
    EXPECT_EQ(again.status, 304) << target;
    EXPECT_EQ(again.body, "");
    EXPECT_EQ(Get(target, "\"0000000000000000\"").status, 200) << target;
  }
}

TEST_F(UiTest, UnknownPathsAre404AndOnlyGetAndHeadAreAllowed) {
  for (const char* target : {"/ui/nope.js", "/ui/ui/app.js", "/ui/app.js/", "/ui/embed.cmake",
                             "/ui/..", "/uix", "/ui/app.js/x"}) {
    auto r = Get(target);
    EXPECT_EQ(r.status, 404) << target << ": " << r.body;
    EXPECT_EQ(r.headers.Get("Content-Type"), "application/json") << target;
  }
  ExpectUiHeaders(Get("/ui/nope.js"));
  auto head = Do("HEAD", "/ui/app.js", "", "", "");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.body, "");
  EXPECT_EQ(head.headers.Get("Content-Length"), std::to_string(FindUiAsset("app.js")->body.size()));
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"}) {
    for (const char* target : {"/ui", "/ui/app.js"}) {
      auto r = Do(method, target, "", "", "");
      ExpectError(r, 405, "MethodNotAllowed", "", "allowed: GET, HEAD");
      EXPECT_EQ(r.headers.Get("Allow"), "GET, HEAD") << method << " " << target;
    }
  }
}

// With a probe listener, /ui stays on the API's port and the probe port does not serve it.
class UiProbeTest : public UiTest {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    api_->Stop();
    api_.reset();
    StartApi([](ApiOptions& o) { o.probe_http = net::HttpServer::Options{}; }, false);
  }
};

TEST_F(UiProbeTest, TheDashboardIsOnTheApiPortOnly) {
  EXPECT_EQ(Get("/ui").status, 200);
  auto probe = Do("GET", "/ui", "", "", "", api_->probe_port());
  EXPECT_EQ(probe.status, 404);
  EXPECT_EQ(probe.body.find("<html"), std::string::npos);
}

}  // namespace
}  // namespace steward::api::testing
