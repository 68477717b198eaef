// RBAC in the embedded cluster over HTTP: ServiceAccount tokens from TokenRequest, Role /
// RoleBinding / ClusterRole / ClusterRoleBinding evaluation, the real 403 messages,
// SelfSubjectAccessReview, and the validation of the policy kinds (RBAC, PodDisruptionBudget,
// NetworkPolicy) with the API server's messages.
#include "cluster/apiserver/rbac.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>

#include "cluster/apiserver/rest_handler.h"
#include "cluster/apiserver/validation.h"
#include "cluster/model/resource_types.h"
#include "common/base64.h"
#include "net/http_client.h"
#include "net/http_server.h"

namespace steward::cluster {
namespace {

using ::testing::HasSubstr;

constexpr char kAdmin[] = "admin-token";

class RbacTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto storage = Storage::Open({});
    ASSERT_TRUE(storage.ok()) << storage.status().ToString();
    storage_ = std::move(storage).value();
    api_ = std::make_unique<ObjectApi>(*storage_, RealClock::Get(), random_);
    for (const char* ns : {"steward", "other"}) {
      ASSERT_TRUE(api_->Create(Type("namespaces"), "", Json{{"metadata", {{"name", ns}}}}).ok());
    }
    faults_ = std::make_unique<FaultInjector>(FaultSpec{}, 1);
    log_ = std::make_unique<RequestLog>(RealClock::Get());
    RestHandler::Options options;
    options.token = kAdmin;
    rest_ = std::make_unique<RestHandler>(*api_, *faults_, *log_, options);
    auto server = net::HttpServer::Start({}, *rest_);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
  }
  void TearDown() override {
    if (rest_) rest_->Stop();
    server_.reset();
  }

  static const ResourceType& Type(std::string_view gr) { return *FindGroupResource(gr); }

  net::HttpResponse Do(const std::string& token, const std::string& method,
                       const std::string& target, const Json& body = nullptr) {
    net::HttpClient::Options o;
    o.port = server_->port();
    o.bearer_token = token;
    auto client = net::HttpClient::Create(o);
    net::Headers headers;
    if (!body.is_null()) headers.Set("Content-Type", "application/json");
    auto r = client->Request(method, target, body.is_null() ? "" : DumpJson(body), headers);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : net::HttpResponse{};
  }
  Json DoJson(const std::string& token, const std::string& method, const std::string& target,
              const Json& body = nullptr, int want = 0) {
    auto r = Do(token, method, target, body);
    if (want != 0) {
      EXPECT_EQ(r.status, want) << method << " " << target << ": " << r.body;
    }
    auto j = ParseJson(r.body);
    return j.ok() ? *j : Json{{"unparsed", r.body}};
  }

  // A ServiceAccount in "steward" and a token for it, issued through the API.
  std::string ServiceAccountToken(const std::string& name = "steward") {
    DoJson(kAdmin, "POST", "/api/v1/namespaces/steward/serviceaccounts",
           {{"metadata", {{"name", name}}}}, 201);
    Json tr =
        DoJson(kAdmin, "POST", "/api/v1/namespaces/steward/serviceaccounts/" + name + "/token",
               {{"apiVersion", "authentication.k8s.io/v1"},
                {"kind", "TokenRequest"},
                {"spec", Json::object()}},
               201);
    return tr["status"].value("token", "");
  }

  void CreateRole(const std::string& ns, const std::string& name, const Json& rules) {
    const bool cluster = ns.empty();
    DoJson(kAdmin, "POST",
           cluster ? "/apis/rbac.authorization.k8s.io/v1/clusterroles"
                   : "/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/roles",
           {{"metadata", {{"name", name}}}, {"rules", rules}}, 201);
  }
  void Bind(const std::string& ns, const std::string& name, const std::string& role_kind,
            const std::string& role, const Json& subjects) {
    const bool cluster = ns.empty();
    DoJson(kAdmin, "POST",
           cluster ? "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
                   : "/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/rolebindings",
           {{"metadata", {{"name", name}}},
            {"roleRef",
             {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", role_kind}, {"name", role}}},
            {"subjects", subjects}},
           201);
  }
  static Json Sa(const std::string& name, const std::string& ns = "") {
    Json s = {{"kind", "ServiceAccount"}, {"name", name}};
    if (!ns.empty()) s["namespace"] = ns;
    return Json::array({s});
  }

  Json Review(const std::string& token, const Json& attributes, bool resource = true) {
    return DoJson(
        token, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        {{"apiVersion", "authorization.k8s.io/v1"},
         {"kind", "SelfSubjectAccessReview"},
         {"spec", {{resource ? "resourceAttributes" : "nonResourceAttributes", attributes}}}},
        201);
  }

  Random random_{5};
  std::unique_ptr<Storage> storage_;
  std::unique_ptr<ObjectApi> api_;
  std::unique_ptr<FaultInjector> faults_;
  std::unique_ptr<RequestLog> log_;
  std::unique_ptr<RestHandler> rest_;
  std::unique_ptr<net::HttpServer> server_;
};

TEST_F(RbacTest, AServiceAccountTokenIsForbiddenUntilARoleBindingAllowsExactlyItsVerbs) {
  const std::string token = ServiceAccountToken();
  ASSERT_FALSE(token.empty());
  EXPECT_EQ(Do("wrong", "GET", "/api/v1/namespaces/steward/secrets").status, 401);

  Json denied = DoJson(token, "GET", "/api/v1/namespaces/steward/secrets", nullptr, 403);
  EXPECT_EQ(denied["reason"], "Forbidden");
  EXPECT_EQ(denied["message"],
            "secrets is forbidden: User \"system:serviceaccount:steward:steward\" cannot list "
            "resource \"secrets\" in API group \"\" in the namespace \"steward\"");
  EXPECT_EQ(denied["details"]["kind"], "secrets");

  CreateRole("steward", "steward",
             {{{"apiGroups", {""}}, {"resources", {"secrets"}}, {"verbs", {"get", "list"}}},
              {{"apiGroups", {"apps"}}, {"resources", {"deployments"}}, {"verbs", {"create"}}}});
  // A Role alone grants nothing.
  EXPECT_EQ(Do(token, "GET", "/api/v1/namespaces/steward/secrets").status, 403);
  Bind("steward", "steward", "Role", "steward", Sa("steward"));
  EXPECT_EQ(Do(token, "GET", "/api/v1/namespaces/steward/secrets").status, 200);
  EXPECT_EQ(Do(token, "GET", "/api/v1/namespaces/steward/secrets/absent").status, 404);
  // Not the verbs, groups, namespaces or resources the rules leave out.
  Json del = DoJson(token, "DELETE", "/api/v1/namespaces/steward/secrets/x", nullptr, 403);
  EXPECT_EQ(del["message"],
            "secrets \"x\" is forbidden: User \"system:serviceaccount:steward:steward\" cannot "
            "delete resource \"secrets\" in API group \"\" in the namespace \"steward\"");
  EXPECT_EQ(Do(token, "GET", "/api/v1/namespaces/other/secrets").status, 403);
  EXPECT_EQ(Do(token, "GET", "/api/v1/namespaces/steward/configmaps").status, 403);
  Json deploy = DoJson(token, "GET", "/apis/apps/v1/namespaces/steward/deployments", nullptr, 403);
  EXPECT_THAT(deploy["message"].get<std::string>(),
              HasSubstr("deployments.apps is forbidden: User "
                        "\"system:serviceaccount:steward:steward\" cannot list resource "
                        "\"deployments\" in API group \"apps\""));
  Json cluster = DoJson(token, "GET", "/api/v1/namespaces", nullptr, 403);
  EXPECT_THAT(cluster["message"].get<std::string>(), HasSubstr("at the cluster scope"));
  // Discovery and version are every authenticated user's; metrics are not.
  EXPECT_EQ(Do(token, "GET", "/api").status, 200);
  EXPECT_EQ(Do(token, "GET", "/apis").status, 200);
  EXPECT_EQ(Do(token, "GET", "/openapi/v3").status, 200);
  Json metrics = DoJson(token, "GET", "/metrics", nullptr, 403);
  EXPECT_EQ(metrics["message"],
            "forbidden: User \"system:serviceaccount:steward:steward\" cannot get path "
            "\"/metrics\"");
  // The admin is allowed everything.
  EXPECT_EQ(Do(kAdmin, "GET", "/metrics").status, 200);
  EXPECT_EQ(Do(kAdmin, "GET", "/api/v1/namespaces/other/secrets").status, 200);
}

TEST_F(RbacTest, ClusterRolesSubresourcesWildcardsAndResourceNames) {
  const std::string token = ServiceAccountToken();
  CreateRole("", "reader", {{{"apiGroups", {"*"}}, {"resources", {"*"}}, {"verbs", {"get"}}}});
  CreateRole("", "scaler",
             {{{"apiGroups", {"apps"}}, {"resources", {"deployments/scale"}}, {"verbs", {"*"}}},
              {{"apiGroups", {""}},
               {"resources", {"configmaps"}},
               {"resourceNames", {"mine"}},
               {"verbs", {"update", "get"}}}});
  // A ClusterRole bound in one namespace grants there only.
  Bind("other", "read", "ClusterRole", "reader", Sa("steward", "steward"));
  EXPECT_EQ(Do(token, "GET", "/api/v1/namespaces/other/pods/p").status, 404);  // allowed
  EXPECT_EQ(Do(token, "GET", "/api/v1/namespaces/steward/pods/p").status, 403);
  EXPECT_EQ(Do(token, "GET", "/api/v1/namespaces/other/pods").status, 403);  // list is not get
  // Bound cluster-wide: every namespace.
  Bind("", "scale", "ClusterRole", "scaler", Sa("steward", "steward"));
  EXPECT_EQ(Do(token, "GET", "/apis/apps/v1/namespaces/steward/deployments/d/scale").status, 404);
  EXPECT_EQ(Do(token, "GET", "/apis/apps/v1/namespaces/steward/deployments/d").status, 403);
  EXPECT_EQ(Do(token, "GET", "/api/v1/namespaces/steward/configmaps/mine").status, 404);
  EXPECT_EQ(Do(token, "GET", "/api/v1/namespaces/steward/configmaps/yours").status, 403);
  EXPECT_EQ(Do(token, "GET", "/api/v1/namespaces/steward/configmaps").status, 403);
  // Groups: every ServiceAccount of a namespace.
  const std::string other = ServiceAccountToken("second");
  EXPECT_EQ(Do(other, "GET", "/api/v1/namespaces/other/pods/p").status, 403);
  Bind("other", "all-sas", "ClusterRole", "reader",
       Json::array({{{"kind", "Group"}, {"name", "system:serviceaccounts:steward"}}}));
  EXPECT_EQ(Do(other, "GET", "/api/v1/namespaces/other/pods/p").status, 404);
}

// Regression: the proxy subresources were handed to the proxy before authorization, so any
// ServiceAccount token reached every pod and Service. They are authorized as kube-apiserver does:
// pods/proxy or services/proxy, the verb from the HTTP method.
TEST_F(RbacTest, ProxySubresourcesNeedTheirOwnPermission) {
  std::atomic<int> proxied{0};
  rest_->SetProxy([&proxied](const std::string&, const std::string&, const std::string&,
                             const std::string&, const net::HttpRequest&,
                             std::shared_ptr<net::ResponseWriter> writer) {
    ++proxied;
    writer->Send(net::HttpResponse{200, {}, "from the pod"});
  });
  const std::string token = ServiceAccountToken();
  const std::string pod = "/api/v1/namespaces/steward/pods/p:1880/proxy/flowforge/info";
  const std::string svc = "/api/v1/namespaces/steward/services/web/proxy/";
  Json denied = DoJson(token, "GET", pod, nullptr, 403);
  EXPECT_THAT(denied.value("message", ""), HasSubstr("cannot get resource \"pods/proxy\""));
  EXPECT_EQ(Do(token, "POST", svc).status, 403);
  EXPECT_EQ(proxied.load(), 0);
  // Reading pods is not proxying to them.
  CreateRole("steward", "pods", {{{"apiGroups", {""}}, {"resources", {"pods"}}, {"verbs", {"*"}}}});
  Bind("steward", "pods", "Role", "pods", Sa("steward", "steward"));
  EXPECT_EQ(Do(token, "GET", pod).status, 403);
  CreateRole("steward", "proxy",
             {{{"apiGroups", {""}}, {"resources", {"pods/proxy"}}, {"verbs", {"get"}}}});
  Bind("steward", "proxy", "Role", "proxy", Sa("steward", "steward"));
  auto got = Do(token, "GET", pod);
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body, "from the pod");
  EXPECT_EQ(Do(token, "POST", pod).status, 403);  // create is another verb
  EXPECT_EQ(Do(token, "GET", svc).status, 403);   // and services/proxy another resource
  EXPECT_EQ(proxied.load(), 1);
  EXPECT_EQ(Do(kAdmin, "POST", svc).status, 200);
}

TEST_F(RbacTest, ABindingToAMissingRoleSaysSoAndDeletingTheServiceAccountRevokesItsTokens) {
  const std::string token = ServiceAccountToken();
  Bind("steward", "dangling", "Role", "absent", Sa("steward"));
  Json denied = DoJson(token, "GET", "/api/v1/namespaces/steward/pods", nullptr, 403);
  EXPECT_THAT(denied["message"].get<std::string>(),
              HasSubstr("in the namespace \"steward\": RBAC: role.rbac.authorization.k8s.io "
                        "\"absent\" not found"));
  DoJson(kAdmin, "DELETE", "/api/v1/namespaces/steward/serviceaccounts/steward", nullptr, 200);
  EXPECT_EQ(Do(token, "GET", "/api").status, 401);
  // A new ServiceAccount of the same name does not bring the old tokens back.
  DoJson(kAdmin, "POST", "/api/v1/namespaces/steward/serviceaccounts",
         {{"metadata", {{"name", "steward"}}}}, 201);
  EXPECT_EQ(Do(token, "GET", "/api").status, 401);
}

TEST_F(RbacTest, TokenRequestsNeedAServiceAccountAndAtLeastTenMinutes) {
  Json absent = DoJson(kAdmin, "POST", "/api/v1/namespaces/steward/serviceaccounts/nobody/token",
                       {{"spec", Json::object()}}, 404);
  EXPECT_EQ(absent["message"], "serviceaccounts \"nobody\" not found");
  DoJson(kAdmin, "POST", "/api/v1/namespaces/steward/serviceaccounts",
         {{"metadata", {{"name", "sa"}}}}, 201);
  Json short_lived = DoJson(kAdmin, "POST", "/api/v1/namespaces/steward/serviceaccounts/sa/token",
                            {{"spec", {{"expirationSeconds", 60}}}}, 422);
  EXPECT_EQ(short_lived["message"],
            "TokenRequest.authentication.k8s.io \"sa\" is invalid: spec.expirationSeconds: "
            "Invalid value: 60: may not specify a duration less than 10 minutes");
  Json ok = DoJson(kAdmin, "POST", "/api/v1/namespaces/steward/serviceaccounts/sa/token",
                   {{"spec", Json::object()}}, 201);
  EXPECT_EQ(ok["kind"], "TokenRequest");
  EXPECT_EQ(ok["spec"]["expirationSeconds"], 3600);
  EXPECT_FALSE(ok["status"]["expirationTimestamp"].get<std::string>().empty());
  EXPECT_EQ(Do(kAdmin, "GET", "/api/v1/namespaces/steward/serviceaccounts/sa/token").status, 405);
}

TEST_F(RbacTest, SelfSubjectAccessReviewsAnswerForTheCaller) {
  const std::string token = ServiceAccountToken();
  CreateRole("steward", "r",
             {{{"apiGroups", {"apps"}}, {"resources", {"deployments"}}, {"verbs", {"list"}}}});
  Bind("steward", "b", "Role", "r", Sa("steward"));
  Json yes = Review(
      token,
      {{"namespace", "steward"}, {"verb", "list"}, {"group", "apps"}, {"resource", "deployments"}});
  EXPECT_EQ(yes["status"]["allowed"], true);
  EXPECT_EQ(yes["status"]["reason"],
            "RBAC: allowed by RoleBinding \"steward/b\" of Role \"r\" to ServiceAccount "
            "\"steward/steward\"");
  Json no = Review(token, {{"namespace", "steward"},
                           {"verb", "delete"},
                           {"group", "apps"},
                           {"resource", "deployments"}});
  EXPECT_EQ(no["status"]["allowed"], false);
  EXPECT_EQ(
      Review(kAdmin,
             {{"namespace", "x"}, {"verb", "delete"}, {"resource", "pods"}})["status"]["allowed"],
      true);
  EXPECT_EQ(Review(token, {{"verb", "get"}, {"path", "/metrics"}}, false)["status"]["allowed"],
            false);
  Json both = DoJson(token, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                     {{"spec", Json::object()}}, 422);
  EXPECT_THAT(both["message"].get<std::string>(),
              HasSubstr("exactly one of nonResourceAttributes or resourceAttributes must be "
                        "specified"));
  EXPECT_EQ(Do(token, "GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews").status, 405);
}

// The rules of a SelfSubjectRulesReview's status as "verbs apiGroups resources resourceNames"
// lines and "verbs nonResourceURLs" lines, for comparing whole answers.
std::vector<std::string> RuleLines(const Json& status) {
  auto join = [](const Json& list) {
    std::string out;
    if (!list.is_array()) return std::string("-");
    for (const Json& v : list) out += (out.empty() ? "" : ",") + v.get<std::string>();
    return out;
  };
  std::vector<std::string> out;
  for (const Json& r : status["resourceRules"]) {
    out.push_back(join(r["verbs"]) + " " + join(r.value("apiGroups", Json())) + " " +
                  join(r.value("resources", Json())) + " " +
                  join(r.value("resourceNames", Json())));
  }
  for (const Json& r : status["nonResourceRules"]) {
    out.push_back(join(r["verbs"]) + " " + join(r.value("nonResourceURLs", Json())));
  }
  return out;
}

TEST_F(RbacTest, SelfSubjectRulesReviewsListWhatTheCallerMayDoInANamespace) {
  const std::string token = ServiceAccountToken();
  CreateRole("steward", "r",
             {{{"apiGroups", {"apps"}},
               {"resources", {"deployments", "deployments/scale"}},
               {"verbs", {"get", "list"}}}});
  Bind("steward", "b", "Role", "r", Sa("steward"));
  CreateRole("", "cm",
             {{{"apiGroups", {""}},
               {"resources", {"configmaps"}},
               {"resourceNames", {"mine"}},
               {"verbs", {"update"}}},
              {{"nonResourceURLs", {"/metrics"}}, {"verbs", {"get"}}}});
  Bind("", "cm", "ClusterRole", "cm", Sa("steward", "steward"));
  Bind("other", "only-there", "ClusterRole", "cm", Sa("steward", "steward"));
  Bind("", "dangling", "ClusterRole", "absent", Sa("steward", "steward"));
  // A binding for someone else grants the caller nothing.
  Bind("steward", "theirs", "Role", "r", Sa("someone-else"));

  auto rules = [&](const std::string& who, const std::string& ns) {
    return DoJson(who, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                  {{"apiVersion", "authorization.k8s.io/v1"},
                   {"kind", "SelfSubjectRulesReview"},
                   {"spec", {{"namespace", ns}}}},
                  201);
  };
  const std::vector<std::string> bootstrap = {
      "create authorization.k8s.io selfsubjectaccessreviews,selfsubjectrulesreviews -",
      "create authentication.k8s.io selfsubjectreviews -",
      "get /api,/api/*,/apis,/apis/*,/healthz,/livez,/openapi,/openapi/*,/readyz,/version,"
      "/version/",
      "get /healthz,/livez,/readyz,/version,/version/"};
  Json in_steward = rules(token, "steward");
  EXPECT_EQ(in_steward["kind"], "SelfSubjectRulesReview");
  EXPECT_EQ(in_steward["status"]["incomplete"], false);
  // Bootstrap first, then ClusterRoleBindings, then the namespace's RoleBindings.
  std::vector<std::string> want = {bootstrap[0],
                                   bootstrap[1],
                                   "update  configmaps mine",
                                   "get,list apps deployments,deployments/scale -",
                                   bootstrap[2],
                                   bootstrap[3],
                                   "get /metrics"};
  std::vector<std::string> got = RuleLines(in_steward["status"]);
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
  EXPECT_EQ(in_steward["status"]["evaluationError"],
            "clusterrole.rbac.authorization.k8s.io \"absent\" not found");

  // In another namespace: the cluster-wide rules and that namespace's bindings only.
  std::vector<std::string> other = RuleLines(rules(token, "other")["status"]);
  EXPECT_EQ(std::count(other.begin(), other.end(), "update  configmaps mine"), 2);
  EXPECT_EQ(std::count_if(other.begin(), other.end(),
                          [](const std::string& l) { return l.find("deployments") != l.npos; }),
            0);

  // The admin may do everything.
  std::vector<std::string> admin = RuleLines(rules(kAdmin, "steward")["status"]);
  EXPECT_THAT(admin, ::testing::Contains("* * * -"));
  EXPECT_THAT(admin, ::testing::Contains("* *"));

  // A namespace is required, as on a real server.
  Json none = DoJson(token, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                     {{"spec", Json::object()}}, 400);
  EXPECT_EQ(none["message"], "no namespace on request");
}

TEST_F(RbacTest, SelfSubjectReviewsSayWhoTheCallerIs) {
  const std::string token = ServiceAccountToken();
  Json sa = DoJson(kAdmin, "GET", "/api/v1/namespaces/steward/serviceaccounts/steward");
  Json me =
      DoJson(token, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
             {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}}, 201);
  EXPECT_EQ(me["kind"], "SelfSubjectReview");
  EXPECT_EQ(me["status"]["userInfo"]["username"], "system:serviceaccount:steward:steward");
  EXPECT_EQ(me["status"]["userInfo"]["uid"], sa["metadata"]["uid"]);
  EXPECT_EQ(me["status"]["userInfo"]["groups"],
            Json::array({"system:serviceaccounts", "system:serviceaccounts:steward",
                         "system:authenticated"}));
  Json admin = DoJson(kAdmin, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                      Json::object(), 201);
  EXPECT_EQ(admin["status"]["userInfo"]["username"], "admin");
  EXPECT_FALSE(admin["status"]["userInfo"].contains("uid"));
  EXPECT_EQ(admin["status"]["userInfo"]["groups"],
            Json::array({"system:masters", "system:authenticated"}));
  // Only create, and nothing is kept.
  EXPECT_EQ(Do(token, "GET", "/apis/authentication.k8s.io/v1/selfsubjectreviews").status, 405);
  EXPECT_EQ(Do("wrong", "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", Json::object())
                .status,
            401);
}

// A token's claims (the JWT's middle part).
Json Claims(const std::string& token) {
  const size_t a = token.find('.');
  const size_t b = token.rfind('.');
  auto decoded = Base64UrlDecode(token.substr(a + 1, b - a - 1));
  if (!decoded) return Json();
  auto j = ParseJson(*decoded);
  return j.ok() ? *j : Json();
}

TEST_F(RbacTest, TokensAreSignedJwtsOnlyTheirKeyAcceptsUntilTheyExpire) {
  const std::string via_api = ServiceAccountToken("robot");
  const Json sa = DoJson(kAdmin, "GET", "/api/v1/namespaces/steward/serviceaccounts/robot");
  const std::string uid = sa["metadata"]["uid"];
  Json claims = Claims(via_api);
  EXPECT_EQ(claims["sub"], "system:serviceaccount:steward:robot");
  EXPECT_EQ(claims["iss"], "https://kubernetes.default.svc.cluster.local");
  EXPECT_EQ(claims["aud"], Json::array({"https://kubernetes.default.svc.cluster.local"}));
  EXPECT_EQ(claims["kubernetes.io"]["namespace"], "steward");
  EXPECT_EQ(claims["kubernetes.io"]["serviceaccount"], Json({{"name", "robot"}, {"uid", uid}}));
  EXPECT_EQ(claims["exp"].get<int64_t>() - claims["iat"].get<int64_t>(), 3600);
  EXPECT_EQ(Do(via_api, "GET", "/api").status, 200);

  // Claims changed without the key: refused (here: the token passes as another account).
  DoJson(kAdmin, "POST", "/api/v1/namespaces/steward/serviceaccounts",
         {{"metadata", {{"name", "admin-ish"}}}}, 201);
  Json forged = claims;
  forged["kubernetes.io"]["serviceaccount"]["name"] = "admin-ish";
  forged["kubernetes.io"]["serviceaccount"]["uid"] = DoJson(
      kAdmin, "GET", "/api/v1/namespaces/steward/serviceaccounts/admin-ish")["metadata"]["uid"];
  const std::string payload = Base64UrlEncode(DumpJson(forged));
  const size_t a = via_api.find('.');
  const size_t b = via_api.rfind('.');
  const std::string tampered = via_api.substr(0, a + 1) + payload + via_api.substr(b);
  EXPECT_EQ(Do(tampered, "GET", "/api").status, 401);
  EXPECT_EQ(Do(via_api.substr(0, b), "GET", "/api").status, 401);  // no signature
  EXPECT_EQ(Do(via_api + "x", "GET", "/api").status, 401);

  // Another key refuses the token; its own accepts it until exp, not at exp.
  TokenAuthority mine("admin", "key one");
  TokenAuthority other("admin", "key two");
  const SystemTime now = std::chrono::system_clock::now();
  const std::string t = mine.Issue("steward", "robot", uid, TokenAuthority::ApiAudiences(), now,
                                   now + std::chrono::hours(1));
  auto who = mine.Authenticate("Bearer " + t, *storage_, now + std::chrono::minutes(59));
  ASSERT_TRUE(who.has_value());
  EXPECT_EQ(who->name, "system:serviceaccount:steward:robot");
  EXPECT_EQ(who->uid, uid);
  EXPECT_FALSE(mine.Authenticate("Bearer " + t, *storage_, now + std::chrono::hours(1)));
  EXPECT_FALSE(other.Authenticate("Bearer " + t, *storage_, now));
  // A token for an account with another uid (deleted and created again) is refused.
  const std::string stale =
      mine.Issue("steward", "robot", "not-the-uid", TokenAuthority::ApiAudiences(), now,
                 now + std::chrono::hours(1));
  EXPECT_FALSE(mine.Authenticate("Bearer " + stale, *storage_, now));

  // The header as kube-apiserver reads it (bearertoken.go): trimmed, split at single spaces,
  // the scheme in any case, the second part the token.
  for (const std::string& header :
       {"bearer " + t, "BEARER " + t, "  Bearer " + t + "  ", "Bearer " + t + " trailing"}) {
    EXPECT_TRUE(mine.Authenticate(header, *storage_, now).has_value()) << header;
  }
  for (const std::string& header :
       {std::string("Bearer"), std::string("Bearer "), "Bearer  " + t, "Basic " + t, t}) {
    EXPECT_FALSE(mine.Authenticate(header, *storage_, now).has_value()) << header;
  }
  EXPECT_EQ(mine.Authenticate("bearer admin", *storage_, now)->name, "admin");
}

// `kubectl create token dep --audience=vault` makes a token for Vault, not for this API server:
// kube-apiserver accepts only tokens whose audiences intersect its --api-audiences (the issuer
// by default) and answers anything else 401, whatever RBAC would allow the ServiceAccount.
TEST_F(RbacTest, ATokenForAnotherAudienceIsUnauthenticatedOneThatAlsoNamesTheServerWorks) {
  DoJson(kAdmin, "POST", "/api/v1/namespaces/steward/serviceaccounts",
         {{"metadata", {{"name", "dep"}}}}, 201);
  CreateRole("steward", "read",
             {{{"apiGroups", {""}}, {"resources", {"secrets"}}, {"verbs", {"get", "list"}}}});
  Bind("steward", "read", "Role", "read", Sa("dep"));
  auto token_for = [&](const Json& audiences) {
    Json tr = DoJson(kAdmin, "POST", "/api/v1/namespaces/steward/serviceaccounts/dep/token",
                     {{"apiVersion", "authentication.k8s.io/v1"},
                      {"kind", "TokenRequest"},
                      {"spec", {{"audiences", audiences}}}},
                     201);
    EXPECT_EQ(tr["spec"]["audiences"], audiences);
    return tr["status"].value("token", "");
  };
  const std::string server = TokenAuthority::ApiAudiences()[0];
  EXPECT_EQ(server, "https://kubernetes.default.svc.cluster.local");

  const std::string vault = token_for(Json::array({"vault"}));
  EXPECT_EQ(Claims(vault)["aud"], Json::array({"vault"}));
  Json refused = DoJson(vault, "GET", "/api/v1/namespaces/steward/secrets", nullptr, 401);
  EXPECT_EQ(refused["reason"], "Unauthorized");
  EXPECT_EQ(Do(vault, "GET", "/api").status, 401);
  EXPECT_EQ(
      Do(vault, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", Json::object()).status,
      401);
  EXPECT_EQ(Do(token_for(Json::array({"vault", "nats"})), "GET", "/api").status, 401);

  // A token for the server and Vault is the server's too; so is one with the default audience.
  const std::string both = token_for(Json::array({server, "vault"}));
  EXPECT_EQ(Do(both, "GET", "/api/v1/namespaces/steward/secrets").status, 200);
  EXPECT_EQ(Do(token_for(Json::array({"vault", server})), "GET", "/api").status, 200);
  Json defaulted = DoJson(kAdmin, "POST", "/api/v1/namespaces/steward/serviceaccounts/dep/token",
                          {{"spec", Json::object()}}, 201);
  EXPECT_EQ(defaulted["spec"]["audiences"], Json::array({server}));
  EXPECT_EQ(Do(defaulted["status"]["token"].get<std::string>(), "GET",
               "/api/v1/namespaces/steward/secrets")
                .status,
            200);
}

// nbf and iat as go-jose checks them for kube-apiserver: a token is refused while either lies
// more than a minute (its leeway) ahead.
TEST_F(RbacTest, ATokenIsNotAcceptedBeforeItsNotBeforeTime) {
  DoJson(kAdmin, "POST", "/api/v1/namespaces/steward/serviceaccounts",
         {{"metadata", {{"name", "robot"}}}}, 201);
  const std::string uid =
      DoJson(kAdmin, "GET", "/api/v1/namespaces/steward/serviceaccounts/robot")["metadata"]["uid"];
  TokenAuthority tokens("admin", "key");
  const SystemTime issued = std::chrono::system_clock::now() + std::chrono::minutes(10);
  const std::string t = tokens.Issue("steward", "robot", uid, TokenAuthority::ApiAudiences(),
                                     issued, issued + std::chrono::hours(1));
  EXPECT_EQ(Claims(t)["nbf"], Claims(t)["iat"]);
  EXPECT_FALSE(tokens.Authenticate("Bearer " + t, *storage_, issued - std::chrono::minutes(10)));
  EXPECT_FALSE(tokens.Authenticate("Bearer " + t, *storage_, issued - std::chrono::seconds(61)));
  EXPECT_TRUE(tokens.Authenticate("Bearer " + t, *storage_, issued - std::chrono::seconds(59)));
  EXPECT_TRUE(tokens.Authenticate("Bearer " + t, *storage_, issued));

  // A token for another audience is refused whenever it is presented.
  const std::string vault =
      tokens.Issue("steward", "robot", uid, {"vault"}, issued, issued + std::chrono::hours(1));
  EXPECT_FALSE(tokens.Authenticate("Bearer " + vault, *storage_, issued));
  const std::string none =
      tokens.Issue("steward", "robot", uid, {}, issued, issued + std::chrono::hours(1));
  EXPECT_FALSE(tokens.Authenticate("Bearer " + none, *storage_, issued));
}

// Escalation prevention (rbac_escalation.h): being allowed to create Roles and RoleBindings does
// not let a ServiceAccount grant itself more than it holds, as on a real cluster.
TEST_F(RbacTest, AServiceAccountAllowedOnlyToCreateRolesAndBindingsCannotGrantItselfMore) {
  const std::string token = ServiceAccountToken();
  CreateRole("steward", "rbac-writer",
             {{{"apiGroups", {"rbac.authorization.k8s.io"}},
               {"resources", {"roles", "rolebindings"}},
               {"verbs", {"create"}}}});
  Bind("steward", "rbac-writer", "Role", "rbac-writer", Sa("steward"));
  CreateRole("", "everything",
             {{{"apiGroups", {"*"}}, {"resources", {"*"}}, {"verbs", {"*"}}},
              {{"nonResourceURLs", {"*"}}, {"verbs", {"*"}}}});
  const std::string user =
      "user \"system:serviceaccount:steward:steward\" (groups=[\"system:serviceaccounts\" "
      "\"system:serviceaccounts:steward\" \"system:authenticated\"]) is attempting to grant RBAC "
      "permissions not currently held:\n";

  // A */* Role: refused, and nothing is stored.
  Json role = DoJson(token, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/steward/roles",
                     {{"metadata", {{"name", "all"}}},
                      {"rules", {{{"apiGroups", {"*"}}, {"resources", {"*"}}, {"verbs", {"*"}}}}}},
                     403);
  EXPECT_EQ(role["reason"], "Forbidden");
  EXPECT_EQ(role["message"], "roles.rbac.authorization.k8s.io \"all\" is forbidden: " + user +
                                 "{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}");
  EXPECT_EQ(role["details"],
            Json({{"name", "all"}, {"group", "rbac.authorization.k8s.io"}, {"kind", "roles"}}));
  EXPECT_EQ(
      Do(kAdmin, "GET", "/apis/rbac.authorization.k8s.io/v1/namespaces/steward/roles/all").status,
      404);

  // Binding the cluster's most powerful ClusterRole to itself: refused, every missing
  // permission listed.
  auto bind = [&](const std::string& name, const std::string& kind, const std::string& to) {
    return DoJson(
        token, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/steward/rolebindings",
        {{"metadata", {{"name", name}}},
         {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", kind}, {"name", to}}},
         {"subjects", Sa("steward", "steward")}});
  };
  Json binding = bind("mine", "ClusterRole", "everything");
  EXPECT_EQ(binding["code"], 403);
  EXPECT_EQ(binding["message"],
            "rolebindings.rbac.authorization.k8s.io \"mine\" is forbidden: " + user +
                "{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}\n"
                "{NonResourceURLs:[\"*\"], Verbs:[\"*\"]}");
  EXPECT_EQ(Do(token, "GET", "/api/v1/namespaces/steward/secrets").status, 403);

  // A modest Role is refused the same way: the missing verbs of one resource on one line.
  CreateRole("steward", "reader",
             {{{"apiGroups", {""}}, {"resources", {"secrets"}}, {"verbs", {"list", "get"}}}});
  EXPECT_EQ(bind("read", "Role", "reader")["message"],
            "rolebindings.rbac.authorization.k8s.io \"read\" is forbidden: " + user +
                "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"list\" \"get\"]}");
  // The role a binding names must exist: the registry's 404.
  Json absent = bind("absent", "Role", "absent");
  EXPECT_EQ(absent["code"], 404);
  EXPECT_EQ(absent["message"], "roles.rbac.authorization.k8s.io \"absent\" not found");

  // What it holds, it may grant: a Role of its own permissions, and a binding to its own Role.
  DoJson(token, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/steward/roles",
         {{"metadata", {{"name", "roles-only"}}},
          {"rules",
           {{{"apiGroups", {"rbac.authorization.k8s.io"}},
             {"resources", {"roles"}},
             {"verbs", {"create"}}}}}},
         201);
  EXPECT_EQ(bind("writer-too", "Role", "rbac-writer")["kind"], "RoleBinding");

  // A binding of the user's to a missing role is named after the missing permissions.
  Bind("steward", "dangling", "Role", "gone", Sa("steward"));
  EXPECT_EQ(bind("again", "Role", "reader")["message"],
            "rolebindings.rbac.authorization.k8s.io \"again\" is forbidden: " + user +
                "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"list\" \"get\"]}; "
                "resolution errors: [roles.rbac.authorization.k8s.io \"gone\" not found]");
}

TEST_F(RbacTest, RolesMayGrantOnlyHeldPermissionsOnEveryWriteUnlessTheUserMayEscalate) {
  const std::string token = ServiceAccountToken();
  CreateRole(
      "steward", "holder",
      {{{"apiGroups", {""}}, {"resources", {"pods", "pods/log"}}, {"verbs", {"get", "list"}}},
       {{"apiGroups", {"apps"}}, {"resources", {"deployments"}}, {"verbs", {"*"}}},
       {{"apiGroups", {"rbac.authorization.k8s.io"}},
        {"resources", {"roles"}},
        {"verbs", {"create", "update", "patch", "get"}}}});
  Bind("steward", "holder", "Role", "holder", Sa("steward"));
  CreateRole("", "clusterrole-writer",
             {{{"apiGroups", {"rbac.authorization.k8s.io"}},
               {"resources", {"clusterroles"}},
               {"verbs", {"create"}}}});
  Bind("", "clusterrole-writer", "ClusterRole", "clusterrole-writer", Sa("steward", "steward"));
  const std::string roles = "/apis/rbac.authorization.k8s.io/v1/namespaces/steward/roles";

  // A subset of what it holds: allowed.
  DoJson(token, "POST", roles,
         {{"metadata", {{"name", "subset"}}},
          {"rules",
           {{{"apiGroups", {""}}, {"resources", {"pods/log"}}, {"verbs", {"get"}}},
            {{"apiGroups", {"apps"}},
             {"resources", {"deployments"}},
             {"resourceNames", {"web"}},
             {"verbs", {"update", "get"}}}}}},
         201);
  // One verb more: refused on create, on update and on a patch (judged by what it produces).
  Json more = DoJson(
      token, "POST", roles,
      {{"metadata", {{"name", "more"}}},
       {"rules", {{{"apiGroups", {""}}, {"resources", {"pods"}}, {"verbs", {"get", "delete"}}}}}},
      403);
  EXPECT_THAT(more["message"].get<std::string>(),
              HasSubstr("not currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], "
                        "Verbs:[\"delete\"]}"));
  Json subset = DoJson(token, "GET", roles + "/subset", nullptr, 200);
  Json widened = subset;
  widened["rules"].push_back({{"apiGroups", {""}}, {"resources", {"secrets"}}, {"verbs", {"get"}}});
  Json put = DoJson(token, "PUT", roles + "/subset", widened, 403);
  EXPECT_THAT(put["message"].get<std::string>(),
              HasSubstr("roles.rbac.authorization.k8s.io \"subset\" is forbidden: user "));
  EXPECT_THAT(put["message"].get<std::string>(),
              HasSubstr("{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}"));
  net::Headers merge;
  merge.Set("Content-Type", "application/merge-patch+json");
  net::HttpClient::Options o;
  o.port = server_->port();
  o.bearer_token = token;
  auto patched = net::HttpClient::Create(o)->Request(
      "PATCH", roles + "/subset", DumpJson({{"rules", widened["rules"]}}), merge);
  ASSERT_TRUE(patched.ok());
  EXPECT_EQ(patched->status, 403) << patched->body;
  EXPECT_EQ(DoJson(kAdmin, "GET", roles + "/subset")["rules"], subset["rules"]);
  // Narrowing is allowed.
  Json narrowed = subset;
  narrowed["rules"].erase(1);
  EXPECT_EQ(Do(token, "PUT", roles + "/subset", narrowed).status, 200);

  // A ClusterRole is judged by the cluster-wide rules: those of RoleBindings count for nothing.
  Json cluster_role =
      DoJson(token, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
             {{"metadata", {{"name", "pod-reader"}}},
              {"rules", {{{"apiGroups", {""}}, {"resources", {"pods"}}, {"verbs", {"get"}}}}}},
             403);
  EXPECT_THAT(cluster_role["message"].get<std::string>(),
              HasSubstr("clusterroles.rbac.authorization.k8s.io \"pod-reader\" is forbidden"));

  // The garbage collector's fields may change on any Role: only finalizers and owners here.
  CreateRole("steward", "powerful",
             {{{"apiGroups", {"*"}}, {"resources", {"*"}}, {"verbs", {"*"}}}});
  auto patch = [&](const std::string& name, const Json& body) {
    auto r =
        net::HttpClient::Create(o)->Request("PATCH", roles + "/" + name, DumpJson(body), merge);
    return r.ok() ? r->status : 0;
  };
  EXPECT_EQ(patch("powerful", {{"metadata", {{"finalizers", {"example.com/keep"}}}}}), 200);
  EXPECT_EQ(patch("powerful", {{"metadata", {{"labels", {{"mine", "yes"}}}}}}), 403);

  // With `escalate` on roles in the namespace, anything goes, as on a real cluster.
  CreateRole("steward", "escalator",
             {{{"apiGroups", {"rbac.authorization.k8s.io"}},
               {"resources", {"roles"}},
               {"verbs", {"escalate"}}}});
  Bind("steward", "escalator", "Role", "escalator", Sa("steward"));
  DoJson(token, "POST", roles,
         {{"metadata", {{"name", "all"}}},
          {"rules", {{{"apiGroups", {"*"}}, {"resources", {"*"}}, {"verbs", {"*"}}}}}},
         201);
  EXPECT_EQ(patch("powerful", {{"metadata", {{"labels", {{"mine", "yes"}}}}}}), 200);
  // ... and still nothing it does not hold is granted to it.
  EXPECT_EQ(Do(token, "GET", "/api/v1/namespaces/steward/secrets").status, 403);
}

TEST_F(RbacTest, EscalateAndBindAreScopedByResourceNamesAndTheAdminIsNeverChecked) {
  const std::string token = ServiceAccountToken();
  const std::string roles = "/apis/rbac.authorization.k8s.io/v1/namespaces/steward/roles";
  const std::string bindings = "/apis/rbac.authorization.k8s.io/v1/namespaces/steward/rolebindings";
  CreateRole("steward", "rbac",
             {{{"apiGroups", {"rbac.authorization.k8s.io"}},
               {"resources", {"roles", "rolebindings"}},
               {"verbs", {"create", "update", "get"}}},
              {{"apiGroups", {"rbac.authorization.k8s.io"}},
               {"resources", {"roles"}},
               {"resourceNames", {"named"}},
               {"verbs", {"escalate"}}},
              {{"apiGroups", {"rbac.authorization.k8s.io"}},
               {"resources", {"clusterroles"}},
               {"resourceNames", {"secret-reader"}},
               {"verbs", {"bind"}}}});
  Bind("steward", "rbac", "Role", "rbac", Sa("steward"));
  const Json all = Json::array({{{"apiGroups", {"*"}}, {"resources", {"*"}}, {"verbs", {"*"}}}});

  // escalate for the name "named": an update of that Role, not a create (which has no name
  // in its request), nor another Role.
  CreateRole("steward", "named", Json::array());
  CreateRole("steward", "other", Json::array());
  EXPECT_EQ(Do(token, "POST", roles, {{"metadata", {{"name", "named-2"}}}, {"rules", all}}).status,
            403);
  Json named = DoJson(token, "GET", roles + "/named", nullptr, 200);
  named["rules"] = all;
  EXPECT_EQ(Do(token, "PUT", roles + "/named", named).status, 200);
  Json other = DoJson(token, "GET", roles + "/other", nullptr, 200);
  other["rules"] = all;
  EXPECT_EQ(Do(token, "PUT", roles + "/other", other).status, 403);

  // bind on the ClusterRole secret-reader: the SA may bind it to itself, and then reads
  // Secrets; not another ClusterRole.
  CreateRole("", "secret-reader",
             {{{"apiGroups", {""}}, {"resources", {"secrets"}}, {"verbs", {"get", "list"}}}});
  CreateRole("", "pod-reader",
             {{{"apiGroups", {""}}, {"resources", {"pods"}}, {"verbs", {"get", "list"}}}});
  auto binding = [&](const std::string& name, const std::string& role) {
    return Json{
        {"metadata", {{"name", name}}},
        {"roleRef",
         {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", role}}},
        {"subjects", Sa("steward", "steward")}};
  };
  EXPECT_EQ(Do(token, "POST", bindings, binding("pods", "pod-reader")).status, 403);
  EXPECT_EQ(Do(token, "GET", "/api/v1/namespaces/steward/secrets").status, 403);
  EXPECT_EQ(Do(token, "POST", bindings, binding("secrets", "secret-reader")).status, 201);
  EXPECT_EQ(Do(token, "GET", "/api/v1/namespaces/steward/secrets").status, 200);
  // In the namespace it was granted in only.
  DoJson(kAdmin, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/other/roles",
         {{"metadata", {{"name", "rbac"}}},
          {"rules",
           {{{"apiGroups", {"rbac.authorization.k8s.io"}},
             {"resources", {"rolebindings"}},
             {"verbs", {"create"}}}}}},
         201);
  Bind("other", "rbac", "Role", "rbac", Sa("steward", "steward"));
  EXPECT_EQ(Do(token, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/other/rolebindings",
               binding("secrets", "secret-reader"))
                .status,
            403);

  // The admin (system:masters) is never checked: any Role, binding, aggregated ClusterRole.
  EXPECT_EQ(
      Do(kAdmin, "POST", roles, {{"metadata", {{"name", "admin-all"}}}, {"rules", all}}).status,
      201);
  EXPECT_EQ(Do(kAdmin, "POST", bindings, binding("admin-binding", "secret-reader")).status, 201);
  EXPECT_EQ(
      Do(kAdmin, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
         {{"metadata", {{"name", "aggregated"}}},
          {"aggregationRule",
           {{"clusterRoleSelectors", {{{"matchLabels", {{"rbac.example.com/agg", "true"}}}}}}}},
          {"rules", all}})
          .status,
      201);
}

// An aggregationRule gathers any rules: only a user holding everything may set one.
TEST_F(RbacTest, AnAggregationRuleNeedsFullAuthority) {
  const std::string token = ServiceAccountToken();
  CreateRole("", "clusterrole-writer",
             {{{"apiGroups", {"rbac.authorization.k8s.io"}},
               {"resources", {"clusterroles"}},
               {"verbs", {"create"}}}});
  Bind("", "clusterrole-writer", "ClusterRole", "clusterrole-writer", Sa("steward", "steward"));
  const std::string clusterroles = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
  EXPECT_EQ(Do(token, "POST", clusterroles,
               {{"metadata", {{"name", "plain"}}},
                {"rules",
                 {{{"apiGroups", {"rbac.authorization.k8s.io"}},
                   {"resources", {"clusterroles"}},
                   {"verbs", {"create"}}}}}})
                .status,
            201);
  Json aggregated =
      DoJson(token, "POST", clusterroles,
             {{"metadata", {{"name", "aggregated"}}},
              {"aggregationRule",
               {{"clusterRoleSelectors", {{{"matchLabels", {{"rbac.example.com/agg", "true"}}}}}}}},
              {"rules", Json::array()}},
             403);
  EXPECT_EQ(aggregated["message"],
            "clusterroles.rbac.authorization.k8s.io \"aggregated\" is forbidden: must have "
            "cluster-admin privileges to use the aggregationRule");
}

std::vector<std::string> Messages(std::string_view gr, const Json& obj, const Json* old = nullptr) {
  std::vector<std::string> out;
  for (const auto& c : ValidateObject(*FindGroupResource(gr), obj, old)) {
    out.push_back(c.field + ": " + c.message);
  }
  return out;
}

TEST(PolicyValidationTest, RbacRulesAndBindingsAsTheApiServerWordsThem) {
  using ::testing::ElementsAre;
  Json role = {{"metadata", {{"name", "system:x"}, {"namespace", "n"}}},
               {"rules",
                {{{"apiGroups", {""}}, {"resources", {"pods"}}},
                 {{"verbs", {"get"}}, {"nonResourceURLs", {"/metrics"}}},
                 {{"verbs", {"get"}}}}}};
  EXPECT_THAT(
      Messages("roles.rbac.authorization.k8s.io", role),
      ElementsAre("rules[0].verbs: Required value: verbs must contain at least one value",
                  "rules[1].nonResourceURLs: Invalid value: [\"/metrics\"]: namespaced rules "
                  "cannot apply to non-resource URLs",
                  "rules[2].apiGroups: Required value: resource rules must supply at least one "
                  "api group",
                  "rules[2].resources: Required value: resource rules must supply at least one "
                  "resource"));
  Json binding = {{"metadata", {{"name", "b"}, {"namespace", "n"}}},
                  {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Pod"}}},
                  {"subjects", {{{"kind", "Robot"}, {"name", "r"}}}}};
  EXPECT_THAT(Messages("rolebindings.rbac.authorization.k8s.io", binding),
              ElementsAre("roleRef.kind: Unsupported value: \"Pod\": supported values: "
                          "\"ClusterRole\", \"Role\"",
                          "roleRef.name: Required value",
                          "subjects[0].kind: Unsupported value: \"Robot\": supported values: "
                          "\"ServiceAccount\", \"User\", \"Group\""));
  Json old = {
      {"metadata", {{"name", "b"}, {"namespace", "n"}}},
      {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", "a"}}}};
  Json changed = old;
  changed["roleRef"]["name"] = "c";
  EXPECT_THAT(Messages("rolebindings.rbac.authorization.k8s.io", changed, &old),
              ElementsAre(HasSubstr("roleRef: Invalid value: ")));
  EXPECT_THAT(Messages("rolebindings.rbac.authorization.k8s.io", changed, &old)[0],
              HasSubstr("cannot change roleRef"));
}

TEST(PolicyValidationTest, PodDisruptionBudgetsAndNetworkPolicies) {
  using ::testing::ElementsAre;
  Json pdb = {{"metadata", {{"name", "p"}, {"namespace", "n"}}},
              {"spec", {{"minAvailable", 1}, {"maxUnavailable", "150%"}}}};
  auto pdb_messages = Messages("poddisruptionbudgets.policy", pdb);
  ASSERT_EQ(pdb_messages.size(), 2u);
  EXPECT_THAT(pdb_messages[0], HasSubstr("minAvailable and maxUnavailable cannot be both set"));
  EXPECT_EQ(pdb_messages[1],
            "spec.maxUnavailable: Invalid value: \"150%\": must not be greater than 100%");
  Json netpol = {{"metadata", {{"name", "np"}, {"namespace", "n"}}},
                 {"spec",
                  {{"podSelector", Json::object()},
                   {"ingress",
                    {{{"from", {Json::object(), {{"ipBlock", {{"cidr", "10.0.0.0/40"}}}}}},
                      {"ports", {{{"protocol", "ICMP"}, {"port", 70000}}}}}}},
                   {"policyTypes", {"Sideways"}}}}};
  EXPECT_THAT(Messages("networkpolicies.networking.k8s.io", netpol),
              ElementsAre("spec.ingress[0].ports[0].protocol: Unsupported value: \"ICMP\": "
                          "supported values: \"SCTP\", \"TCP\", \"UDP\"",
                          "spec.ingress[0].ports[0].port: Invalid value: 70000: must be between "
                          "1 and 65535, inclusive",
                          "spec.ingress[0].from[0]: Required value: must specify a peer",
                          "spec.ingress[0].from[1].ipBlock.cidr: Invalid value: "
                          "\"10.0.0.0/40\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or "
                          "2001:db8::/64)",
                          "spec.policyTypes[0]: Unsupported value: \"Sideways\": supported "
                          "values: \"Egress\", \"Ingress\""));
  Json defaulted = {{"spec", {{"egress", {{{"ports", {{{"port", 53}}}}}}}}}};
  ApplyDefaults(*FindGroupResource("networkpolicies.networking.k8s.io"), defaulted);
  EXPECT_EQ(defaulted["spec"]["policyTypes"], Json::array({"Ingress", "Egress"}));
  EXPECT_EQ(defaulted["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");
}

}  // namespace
}  // namespace steward::cluster
