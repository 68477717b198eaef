// Covers as Kubernetes computes it (k8s.io/component-helpers/auth/rbac/validation
// policy_comparator.go) and the missing permissions as ConfirmNoEscalation lists them: the
// cases of its policy_comparator_test.go and policy_compact_test.go that this port must keep.
// The HTTP behaviour (403s, escalate, bind) is tested in rbac_test.cc.
#include "cluster/apiserver/rbac_escalation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace steward::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

Json Rule(const Json& verbs, const Json& groups, const Json& resources,
          const Json& names = Json::array()) {
  Json r = {{"verbs", verbs}, {"apiGroups", groups}, {"resources", resources}};
  if (!names.empty()) r["resourceNames"] = names;
  return r;
}
Json UrlRule(const Json& verbs, const Json& urls) {
  return {{"verbs", verbs}, {"nonResourceURLs", urls}};
}

TEST(UncoveredPermissionsTest, StarsCoverEverythingOfTheirKind) {
  const Json owner = Json::array({Rule({"*"}, {"*"}, {"*"})});
  EXPECT_THAT(
      UncoveredPermissions(owner, Json::array({Rule({"get", "delete"}, {"", "apps"},
                                                    {"pods", "deployments/scale"}, {"a", "b"})})),
      IsEmpty());
  // Resource rules never cover URLs, nor the reverse.
  EXPECT_THAT(UncoveredPermissions(owner, Json::array({UrlRule({"get"}, {"/metrics"})})),
              ElementsAre("{NonResourceURLs:[\"/metrics\"], Verbs:[\"get\"]}"));
  EXPECT_THAT(UncoveredPermissions(Json::array({UrlRule({"*"}, {"*"})}),
                                   Json::array({Rule({"get"}, {""}, {"pods"})})),
              ElementsAre("{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\"]}"));
}

TEST(UncoveredPermissionsTest, EachGroupResourceVerbAndNameIsCoveredOnItsOwn) {
  // Two owner rules together cover what neither covers alone.
  const Json owner = Json::array({Rule({"get", "list"}, {"apps"}, {"deployments"}),
                                  Rule({"update"}, {"apps"}, {"deployments", "replicasets"})});
  EXPECT_THAT(UncoveredPermissions(
                  owner, Json::array({Rule({"get", "update"}, {"apps"}, {"deployments"})})),
              IsEmpty());
  // Missing verbs of one resource are compacted to one line, in their order; the rest sorted.
  EXPECT_THAT(
      UncoveredPermissions(
          owner, Json::array({Rule({"watch", "get", "delete"}, {"apps", ""}, {"deployments"})})),
      ElementsAre("{APIGroups:[\"\"], Resources:[\"deployments\"], Verbs:[\"watch\" \"get\" "
                  "\"delete\"]}",
                  "{APIGroups:[\"apps\"], Resources:[\"deployments\"], Verbs:[\"watch\" "
                  "\"delete\"]}"));
  // Groups must match exactly.
  EXPECT_THAT(
      UncoveredPermissions(owner, Json::array({Rule({"get"}, {"extensions"}, {"deployments"})})),
      ElementsAre("{APIGroups:[\"extensions\"], Resources:[\"deployments\"], "
                  "Verbs:[\"get\"]}"));
}

TEST(UncoveredPermissionsTest, SubresourcesAreCoveredByThemselvesStarOrStarSlashSub) {
  const Json owner =
      Json::array({Rule({"get"}, {"apps"}, {"deployments", "*/scale", "replicasets/status"})});
  EXPECT_THAT(
      UncoveredPermissions(
          owner,
          Json::array({Rule({"get"}, {"apps"},
                            {"deployments/scale", "statefulsets/scale", "replicasets/status"})})),
      IsEmpty());
  // A resource does not cover its subresources, nor "*/status" a resource.
  EXPECT_THAT(
      UncoveredPermissions(
          owner,
          Json::array({Rule({"get"}, {"apps"}, {"deployments/status", "*/scale", "replicasets"})})),
      ElementsAre("{APIGroups:[\"apps\"], Resources:[\"deployments/status\"], "
                  "Verbs:[\"get\"]}",
                  "{APIGroups:[\"apps\"], Resources:[\"replicasets\"], Verbs:[\"get\"]}"));
  EXPECT_THAT(UncoveredPermissions(Json::array({Rule({"get"}, {""}, {"*"})}),
                                   Json::array({Rule({"get"}, {""}, {"pods/log"})})),
              IsEmpty());
}

TEST(UncoveredPermissionsTest, ResourceNamesNarrowWhatARuleGrants) {
  // An owner rule without names covers any name; one with names covers those only, and never
  // a rule without names (which means every name).
  const Json any = Json::array({Rule({"get"}, {""}, {"secrets"})});
  const Json some = Json::array({Rule({"get"}, {""}, {"secrets"}, {"a", "b"})});
  EXPECT_THAT(UncoveredPermissions(any, Json::array({Rule({"get"}, {""}, {"secrets"}, {"a"})})),
              IsEmpty());
  EXPECT_THAT(
      UncoveredPermissions(some, Json::array({Rule({"get"}, {""}, {"secrets"}, {"b", "a"})})),
      IsEmpty());
  EXPECT_THAT(UncoveredPermissions(some, Json::array({Rule({"get"}, {""}, {"secrets"})})),
              ElementsAre("{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}"));
  // One line per missing name.
  EXPECT_THAT(UncoveredPermissions(
                  some, Json::array({Rule({"get", "list"}, {""}, {"secrets"}, {"a", "c", "d"})})),
              ElementsAre("{APIGroups:[\"\"], Resources:[\"secrets\"], ResourceNames:[\"a\"], "
                          "Verbs:[\"list\"]}",
                          "{APIGroups:[\"\"], Resources:[\"secrets\"], ResourceNames:[\"c\"], "
                          "Verbs:[\"get\" \"list\"]}",
                          "{APIGroups:[\"\"], Resources:[\"secrets\"], ResourceNames:[\"d\"], "
                          "Verbs:[\"get\" \"list\"]}"));
}

TEST(UncoveredPermissionsTest, NonResourceUrlsMatchExactlyOrByATrailingStarPrefix) {
  const Json owner = Json::array({UrlRule({"get"}, {"/api/*", "/apis*", "/healthz"})});
  EXPECT_THAT(UncoveredPermissions(
                  owner, Json::array({UrlRule({"get"}, {"/api/v1", "/api/", "/apis",
                                                        "/apis/apps/v1", "/apisx", "/healthz"})})),
              IsEmpty());
  EXPECT_THAT(
      UncoveredPermissions(
          owner, Json::array({UrlRule({"get", "post"}, {"/api", "/healthz/ping", "/healthz"})})),
      ElementsAre("{NonResourceURLs:[\"/api\"], Verbs:[\"get\"]}",
                  "{NonResourceURLs:[\"/api\"], Verbs:[\"post\"]}",
                  "{NonResourceURLs:[\"/healthz\"], Verbs:[\"post\"]}",
                  "{NonResourceURLs:[\"/healthz/ping\"], Verbs:[\"get\"]}",
                  "{NonResourceURLs:[\"/healthz/ping\"], Verbs:[\"post\"]}"));
  // "*" covers every URL; several trailing stars are one.
  EXPECT_THAT(UncoveredPermissions(Json::array({UrlRule({"*"}, {"*", "/x**"})}),
                                   Json::array({UrlRule({"get"}, {"/anything", "/x/y"})})),
              IsEmpty());
}

TEST(UncoveredPermissionsTest, NothingAskedIsAlwaysCoveredAndLinesAreUnique) {
  EXPECT_THAT(UncoveredPermissions(Json::array(), Json::array()), IsEmpty());
  EXPECT_THAT(
      UncoveredPermissions(Json::array(), Json::array({Rule(Json::array(), {""}, {"pods"})})),
      IsEmpty());
  // The same URL permission asked twice is listed once.
  EXPECT_THAT(UncoveredPermissions(
                  Json::array(), Json::array({UrlRule({"get"}, {"/a"}), UrlRule({"get"}, {"/a"})})),
              ElementsAre("{NonResourceURLs:[\"/a\"], Verbs:[\"get\"]}"));
  // Quotes in values are escaped as Go's %q does.
  EXPECT_THAT(UncoveredPermissions(Json::array(), Json::array({Rule({"get"}, {""}, {"a\"b"})})),
              ElementsAre("{APIGroups:[\"\"], Resources:[\"a\\\"b\"], Verbs:[\"get\"]}"));
}

}  // namespace
}  // namespace steward::cluster
