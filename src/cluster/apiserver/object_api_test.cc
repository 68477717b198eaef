#include "cluster/apiserver/object_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <optional>

#include "common/base64.h"

namespace steward::cluster {
namespace {

using ::testing::HasSubstr;

class ObjectApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto storage = Storage::Open({});
    ASSERT_TRUE(storage.ok());
    storage_ = std::move(storage).value();
    api_ = std::make_unique<ObjectApi>(*storage_, clock_, random_);
    ASSERT_TRUE(
        api_->Create(Type("namespaces"), "", Json{{"metadata", {{"name", "default"}}}}).ok());
  }

  static const ResourceType& Type(std::string_view gr) { return *FindGroupResource(gr); }

  Json MustCreate(std::string_view gr, Json obj, std::string_view ns = "default") {
    auto r = api_->Create(Type(gr), ns, std::move(obj));
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : Json();
  }

  static Json Deployment(const std::string& name, const std::string& image = "nginx:1") {
    return {{"metadata", {{"name", name}}},
            {"spec",
             {{"selector", {{"matchLabels", {{"app", name}}}}},
              {"template",
               {{"metadata", {{"labels", {{"app", name}}}}},
                {"spec", {{"containers", {{{"name", "c"}, {"image", image}}}}}}}}}}};
  }

  static Json ConfigMap(const std::string& name) {
    return {{"metadata", {{"name", name}, {"labels", {{"tier", "a"}}}}}, {"data", {{"k", "v"}}}};
  }

  static std::string Rv(const Json& obj) { return obj["metadata"]["resourceVersion"]; }

  FakeClock clock_;
  Random random_{7};
  std::unique_ptr<Storage> storage_;
  std::unique_ptr<ObjectApi> api_;
};

TEST_F(ObjectApiTest, CreateAssignsIdentityVersionAndGeneration) {
  Json d = MustCreate("deployments.apps", Deployment("web"));
  EXPECT_FALSE(d["metadata"]["uid"].get<std::string>().empty());
  EXPECT_FALSE(Rv(d).empty());
  EXPECT_EQ(d["metadata"]["creationTimestamp"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(d["metadata"]["generation"], 1);
  EXPECT_EQ(d["apiVersion"], "apps/v1");
  EXPECT_EQ(d["kind"], "Deployment");
  EXPECT_EQ(d["spec"]["replicas"], 1);  // defaulted
  EXPECT_EQ(d["spec"]["strategy"]["type"], "RollingUpdate");
  Json cm = MustCreate("configmaps", ConfigMap("a"));
  EXPECT_FALSE(cm["metadata"].contains("generation"));
  EXPECT_GT(std::stoull(Rv(cm)), std::stoull(Rv(d)));
}

// The REST layer answers GETs with GetRecord's bytes instead of serialising Get()'s object:
// they must be the same document.
TEST_F(ObjectApiTest, GetRecordIsTheSerialisedGet) {
  Json created = MustCreate("deployments.apps", Deployment("web"));
  auto rec = api_->GetRecord(Type("deployments.apps"), "default", "web");
  ASSERT_TRUE(rec.ok());
  auto obj = api_->Get(Type("deployments.apps"), "default", "web");
  ASSERT_TRUE(obj.ok());
  EXPECT_EQ(*rec->json, DumpJson(*obj));
  EXPECT_EQ(*obj, created);
  EXPECT_EQ(std::to_string(rec->revision), Rv(created));
  auto missing = api_->GetRecord(Type("deployments.apps"), "default", "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, 404);
  auto missing_obj = api_->Get(Type("deployments.apps"), "default", "nope");
  ASSERT_FALSE(missing_obj.ok());
  EXPECT_EQ(missing.error().message, missing_obj.error().message);
}

TEST_F(ObjectApiTest, GenerateNameMakesAUniqueName) {
  Json obj = {{"metadata", {{"generateName", "job-"}}}, {"data", Json::object()}};
  Json a = MustCreate("configmaps", obj);
  Json b = MustCreate("configmaps", obj);
  EXPECT_THAT(a["metadata"]["name"].get<std::string>(), ::testing::StartsWith("job-"));
  EXPECT_NE(a["metadata"]["name"], b["metadata"]["name"]);
}

TEST_F(ObjectApiTest, CreateRefusesDuplicatesMissingNamespacesAndInvalidNames) {
  MustCreate("configmaps", ConfigMap("a"));
  auto dup = api_->Create(Type("configmaps"), "default", ConfigMap("a"));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, 409);
  EXPECT_EQ(dup.error().reason, "AlreadyExists");
  EXPECT_EQ(dup.error().message, "configmaps \"a\" already exists");

  auto no_ns = api_->Create(Type("configmaps"), "nowhere", ConfigMap("a"));
  ASSERT_FALSE(no_ns.ok());
  EXPECT_EQ(no_ns.error().code, 404);
  EXPECT_EQ(no_ns.error().message, "namespaces \"nowhere\" not found");

  auto bad = api_->Create(Type("configmaps"), "default", ConfigMap("Bad_Name"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, 422);
  EXPECT_EQ(bad.error().reason, "Invalid");
  ASSERT_EQ(bad.error().causes.size(), 1u);
  EXPECT_EQ(bad.error().causes[0].field, "metadata.name");
  EXPECT_THAT(bad.error().message, HasSubstr("ConfigMap \"Bad_Name\" is invalid"));

  auto missing = api_->Create(Type("deployments.apps"), "default",
                              Json{{"metadata", {{"name", "x"}}}, {"spec", Json::object()}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, 422);
  bool selector_cause = false;
  for (const auto& c : missing.error().causes) {
    if (c.field == "spec.selector") selector_cause = true;
  }
  EXPECT_TRUE(selector_cause) << missing.error().message;
  EXPECT_FALSE(storage_->Get("deployments.apps", "default", "x").has_value());
}

TEST_F(ObjectApiTest, UpdateWithStaleResourceVersionConflicts) {
  Json cm = MustCreate("configmaps", ConfigMap("a"));
  Json first = cm;
  first["data"]["k"] = "v2";
  auto ok = api_->Update(Type("configmaps"), "default", "a", first);
  ASSERT_TRUE(ok.ok());
  Json stale = cm;
  stale["data"]["k"] = "v3";
  auto conflict = api_->Update(Type("configmaps"), "default", "a", stale);
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.error().code, 409);
  EXPECT_EQ(conflict.error().reason, "Conflict");
  EXPECT_THAT(conflict.error().message,
              HasSubstr("Operation cannot be fulfilled on configmaps \"a\": the object has been "
                        "modified"));
  // Without a resourceVersion the update is unconditional.
  stale["metadata"].erase("resourceVersion");
  auto forced = api_->Update(Type("configmaps"), "default", "a", stale);
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ((*forced)["data"]["k"], "v3");
}

// A Lease as client-go's leader election uses it: acquire by create (one wins), renew by an
// update at the resourceVersion read (a stale one conflicts), take over after expiry the same
// way; the spec's numbers validated as the real API server does.
TEST_F(ObjectApiTest, LeasesAreAcquiredRenewedAndTakenOverUnderResourceVersionPreconditions) {
  auto lease = [](const std::string& holder, int64_t transitions) {
    return Json{{"metadata", {{"name", "steward-shard-0"}}},
                {"spec",
                 {{"holderIdentity", holder},
                  {"leaseDurationSeconds", 15},
                  {"acquireTime", "2026-12-02T04:50:00.000000Z"},
                  {"renewTime", "2026-12-02T04:50:00.000000Z"},
                  {"leaseTransitions", transitions}}}};
  };
  Json a = MustCreate("leases.coordination.k8s.io", lease("a", 0));
  auto b_create = api_->Create(Type("leases.coordination.k8s.io"), "default", lease("b", 0));
  ASSERT_FALSE(b_create.ok());
  EXPECT_EQ(b_create.error().code, 409);
  EXPECT_EQ(b_create.error().reason, "AlreadyExists");

  // a renews at the version it read; b, holding the same read, is refused.
  Json renew = a;
  renew["spec"]["renewTime"] = "2026-12-02T04:50:10.000000Z";
  auto renewed =
      api_->Update(Type("leases.coordination.k8s.io"), "default", "steward-shard-0", renew);
  ASSERT_TRUE(renewed.ok()) << renewed.error().message;
  EXPECT_NE(Rv(*renewed), Rv(a));
  Json takeover = a;
  takeover["spec"]["holderIdentity"] = "b";
  auto stale =
      api_->Update(Type("leases.coordination.k8s.io"), "default", "steward-shard-0", takeover);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, 409);
  EXPECT_EQ(stale.error().reason, "Conflict");
  // After expiry b takes over from the current version.
  takeover = *renewed;
  takeover["spec"]["holderIdentity"] = "b";
  takeover["spec"]["leaseTransitions"] = 1;
  auto taken =
      api_->Update(Type("leases.coordination.k8s.io"), "default", "steward-shard-0", takeover);
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  EXPECT_EQ((*taken)["spec"]["holderIdentity"], "b");
  EXPECT_EQ((*taken)["spec"]["acquireTime"], "2026-12-02T04:50:00.000000Z");

  Json bad = *taken;
  bad["spec"]["leaseDurationSeconds"] = 0;
  bad["spec"]["leaseTransitions"] = -1;
  auto refused =
      api_->Update(Type("leases.coordination.k8s.io"), "default", "steward-shard-0", bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, 422);
  EXPECT_THAT(refused.error().message,
              HasSubstr("spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"));
  EXPECT_THAT(refused.error().message,
              HasSubstr("spec.leaseTransitions: Invalid value: -1: must be greater than or "
                        "equal to 0"));
  auto created_bad = api_->Create(
      Type("leases.coordination.k8s.io"), "default",
      Json{{"metadata", {{"name", "neg"}}}, {"spec", {{"leaseDurationSeconds", -15}}}});
  ASSERT_FALSE(created_bad.ok());
  EXPECT_EQ(created_bad.error().code, 422);
}

TEST_F(ObjectApiTest, GenerationFollowsSpecChangesOnly) {
  Json d = MustCreate("deployments.apps", Deployment("web"));
  Json labelled = d;
  labelled["metadata"]["labels"]["x"] = "y";
  auto r1 = api_->Update(Type("deployments.apps"), "default", "web", labelled);
  ASSERT_TRUE(r1.ok());
  EXPECT_EQ((*r1)["metadata"]["generation"], 1);
  Json scaled = *r1;
  scaled["spec"]["replicas"] = 3;
  scaled["status"] = {{"replicas", 99}};  // ignored on the main resource
  auto r2 = api_->Update(Type("deployments.apps"), "default", "web", scaled);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ((*r2)["metadata"]["generation"], 2);
  EXPECT_FALSE((*r2)["status"].contains("replicas"));
  Json status = *r2;
  status["status"] = {{"observedGeneration", 2}, {"replicas", 3}};
  status["spec"]["replicas"] = 10;  // ignored on /status
  auto r3 = api_->Update(Type("deployments.apps"), "default", "web", status, Subresource::kStatus);
  ASSERT_TRUE(r3.ok());
  EXPECT_EQ((*r3)["metadata"]["generation"], 2);
  EXPECT_EQ((*r3)["status"]["replicas"], 3);
  EXPECT_EQ((*r3)["spec"]["replicas"], 3);
}

TEST_F(ObjectApiTest, NoOpWritesKeepTheResourceVersion) {
  Json cm = MustCreate("configmaps", ConfigMap("a"));
  uint64_t before = storage_->CurrentRevision();
  auto same = api_->Update(Type("configmaps"), "default", "a", cm);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(Rv(*same), Rv(cm));
  EXPECT_EQ(storage_->CurrentRevision(), before);
  auto unchanged = api_->Modify(Type("configmaps"), "default", "a", [](Json&) { return false; });
  ASSERT_TRUE(unchanged.ok());
  EXPECT_EQ(storage_->CurrentRevision(), before);
}

TEST_F(ObjectApiTest, DeleteWithFinalizersTerminatesUntilTheyAreRemoved) {
  Json cm = ConfigMap("a");
  cm["metadata"]["finalizers"] = {"example.com/hold"};
  MustCreate("configmaps", cm);
  auto deleted = api_->Delete(Type("configmaps"), "default", "a");
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ((*deleted)["kind"], "ConfigMap");  // still there: the object comes back
  EXPECT_TRUE((*deleted)["metadata"].contains("deletionTimestamp"));

  auto recreate = api_->Create(Type("configmaps"), "default", ConfigMap("a"));
  ASSERT_FALSE(recreate.ok());
  EXPECT_EQ(recreate.error().code, 409);
  EXPECT_THAT(recreate.error().message, HasSubstr("object is being deleted: "));

  Json more = *deleted;
  more["metadata"]["finalizers"] = {"example.com/hold", "example.com/other"};
  auto refused = api_->Update(Type("configmaps"), "default", "a", more);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, 422);
  EXPECT_THAT(refused.error().message, HasSubstr("no new finalizers can be added"));

  Json release = *deleted;
  release["metadata"]["finalizers"] = Json::array();
  ASSERT_TRUE(api_->Update(Type("configmaps"), "default", "a", release).ok());
  EXPECT_FALSE(storage_->Get("configmaps", "default", "a").has_value());
  EXPECT_TRUE(api_->Create(Type("configmaps"), "default", ConfigMap("a")).ok());
}

TEST_F(ObjectApiTest, DeleteWithoutFinalizersAnswersStatusSuccess) {
  Json cm = MustCreate("configmaps", ConfigMap("a"));
  auto deleted = api_->Delete(Type("configmaps"), "default", "a");
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ((*deleted)["kind"], "Status");
  EXPECT_EQ((*deleted)["status"], "Success");
  EXPECT_EQ((*deleted)["details"]["uid"], cm["metadata"]["uid"]);
  auto again = api_->Delete(Type("configmaps"), "default", "a");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, 404);
}

TEST_F(ObjectApiTest, DeletePreconditionsProtectARecreatedObject) {
  Json old = MustCreate("configmaps", ConfigMap("a"));
  ASSERT_TRUE(api_->Delete(Type("configmaps"), "default", "a").ok());
  Json fresh = MustCreate("configmaps", ConfigMap("a"));
  DeleteOptions opts;
  opts.precondition_uid = old["metadata"]["uid"].get<std::string>();
  auto refused = api_->Delete(Type("configmaps"), "default", "a", opts);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, 409);
  EXPECT_THAT(refused.error().message, HasSubstr("Precondition failed: UID in precondition"));
  DeleteOptions rv_opts;
  rv_opts.precondition_resource_version = "1";
  auto stale = api_->Delete(Type("configmaps"), "default", "a", rv_opts);
  ASSERT_FALSE(stale.ok());
  EXPECT_THAT(stale.error().message, HasSubstr("Precondition failed: ResourceVersion"));
  EXPECT_TRUE(storage_->Get("configmaps", "default", "a").has_value());
  opts.precondition_uid = fresh["metadata"]["uid"].get<std::string>();
  EXPECT_TRUE(api_->Delete(Type("configmaps"), "default", "a", opts).ok());
}

TEST_F(ObjectApiTest, PropagationPoliciesSetTheirFinalizers) {
  MustCreate("deployments.apps", Deployment("orphaned"));
  MustCreate("deployments.apps", Deployment("foreground"));
  DeleteOptions orphan;
  orphan.propagation_policy = "Orphan";
  auto o = api_->Delete(Type("deployments.apps"), "default", "orphaned", orphan);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ((*o)["metadata"]["finalizers"], Json::array({"orphan"}));
  EXPECT_EQ((*o)["metadata"]["generation"], 2);  // deletion bumps the generation
  DeleteOptions fg;
  fg.propagation_policy = "Foreground";
  auto f = api_->Delete(Type("deployments.apps"), "default", "foreground", fg);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)["metadata"]["finalizers"], Json::array({"foregroundDeletion"}));
  DeleteOptions bad;
  bad.propagation_policy = "Sometimes";
  MustCreate("deployments.apps", Deployment("x"));
  auto b = api_->Delete(Type("deployments.apps"), "default", "x", bad);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().code, 422);
}

TEST_F(ObjectApiTest, PodsAreDeletedGracefullyOnceScheduled) {
  Json pod = {{"metadata", {{"name", "p"}}},
              {"spec", {{"containers", {{{"name", "c"}, {"image", "x"}}}}}}};
  MustCreate("pods", pod);
  // Not scheduled: removed at once.
  auto now = api_->Delete(Type("pods"), "default", "p");
  ASSERT_TRUE(now.ok());
  EXPECT_EQ((*now)["kind"], "Status");
  MustCreate("pods", pod);
  ASSERT_TRUE(api_->Modify(Type("pods"), "default", "p",
                           [](Json& p) {
                             p["spec"]["nodeName"] = "node";
                             return true;
                           })
                  .ok());
  auto graceful = api_->Delete(Type("pods"), "default", "p");
  ASSERT_TRUE(graceful.ok());
  EXPECT_EQ((*graceful)["metadata"]["deletionGracePeriodSeconds"], 30);
  EXPECT_TRUE(storage_->Get("pods", "default", "p").has_value());
  auto removed = api_->ForceRemove(Type("pods"), "default", "p",
                                   (*graceful)["metadata"]["uid"].get<std::string>());
  ASSERT_TRUE(removed.ok());
  EXPECT_TRUE(*removed);
  EXPECT_FALSE(storage_->Get("pods", "default", "p").has_value());
}

TEST_F(ObjectApiTest, ListSelectsAndPaginates) {
  for (int i = 0; i < 7; ++i) {
    Json cm = ConfigMap("cm" + std::to_string(i));
    cm["metadata"]["labels"]["tier"] = i % 2 == 0 ? "even" : "odd";
    MustCreate("configmaps", cm);
  }
  ListOptions even;
  even.label_selector = "tier=even";
  auto l = api_->List(Type("configmaps"), "default", even);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ((*l)["items"].size(), 4u);
  EXPECT_EQ((*l)["kind"], "ConfigMapList");

  ListOptions by_name;
  by_name.field_selector = "metadata.name=cm3";
  auto n = api_->List(Type("configmaps"), "", by_name);
  ASSERT_TRUE(n.ok());
  ASSERT_EQ((*n)["items"].size(), 1u);
  EXPECT_EQ((*n)["items"][0]["metadata"]["name"], "cm3");

  ListOptions bad_field;
  bad_field.field_selector = "data.k=v";
  auto bf = api_->List(Type("configmaps"), "default", bad_field);
  ASSERT_FALSE(bf.ok());
  EXPECT_EQ(bf.error().code, 400);
  EXPECT_EQ(bf.error().message, "field label not supported: data.k");

  ListOptions page;
  page.limit = 3;
  std::vector<std::string> names;
  std::string rv;
  for (int pages = 0; pages < 10; ++pages) {
    auto p = api_->List(Type("configmaps"), "default", page);
    ASSERT_TRUE(p.ok());
    if (rv.empty()) rv = (*p)["metadata"]["resourceVersion"];
    EXPECT_EQ((*p)["metadata"]["resourceVersion"], rv);
    for (const auto& item : (*p)["items"]) names.push_back(item["metadata"]["name"]);
    if (!(*p)["metadata"].contains("continue")) break;
    page.continue_token = (*p)["metadata"]["continue"];
  }
  EXPECT_EQ(names, (std::vector<std::string>{"cm0", "cm1", "cm2", "cm3", "cm4", "cm5", "cm6"}));
  ListOptions broken;
  broken.continue_token = "not-a-token";
  auto b = api_->List(Type("configmaps"), "default", broken);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().code, 400);
}

TEST_F(ObjectApiTest, PaginationAcrossNamespacesKeepsEveryObject) {
  // "a-b" sorts before "a/" as a string but after "a" as a namespace: tokens must compare
  // (namespace, name) pairs.
  for (const char* ns : {"a", "a-b"}) {
    MustCreate("namespaces", Json{{"metadata", {{"name", ns}}}}, "");
    MustCreate("configmaps", ConfigMap(std::string("cm-") + ns), ns);
  }
  ListOptions page;
  page.limit = 1;
  std::vector<std::string> seen;
  for (int i = 0; i < 10; ++i) {
    auto p = api_->List(Type("configmaps"), "", page);
    ASSERT_TRUE(p.ok());
    for (const auto& item : (*p)["items"]) seen.push_back(item["metadata"]["name"]);
    if (!(*p)["metadata"].contains("continue")) break;
    page.continue_token = (*p)["metadata"]["continue"];
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"cm-a", "cm-a-b"}));
}

// Pages through a list, running `between` after every page; returns the items of all pages and
// checks that every page reports the first page's resourceVersion.
struct Paged {
  std::vector<Json> items;
  std::string rv;
  std::vector<int64_t> remaining;  // remainingItemCount of each page that had one
  std::optional<StatusError> error;
};

class PaginationTest : public ObjectApiTest {
 protected:
  Paged ListInPages(ListOptions opts, const std::function<void(int page)>& between) {
    Paged out;
    for (int page = 0; page < 100; ++page) {
      auto p = api_->List(Type("configmaps"), "default", opts);
      if (!p.ok()) {
        out.error = p.error();
        return out;
      }
      const Json& meta = (*p)["metadata"];
      if (out.rv.empty()) out.rv = meta["resourceVersion"];
      EXPECT_EQ(meta["resourceVersion"], out.rv) << "page " << page;
      for (const auto& item : (*p)["items"]) out.items.push_back(item);
      if (!meta.contains("continue")) break;
      if (meta.contains("remainingItemCount")) out.remaining.push_back(meta["remainingItemCount"]);
      opts.continue_token = meta["continue"];
      // As client-go's pager: the continue token carries the revision.
      opts.resource_version.clear();
      opts.resource_version_match.clear();
      between(page);
    }
    return out;
  }

  void CreateLabelled(const std::string& name, const std::string& tier) {
    Json cm = ConfigMap(name);
    cm["metadata"]["labels"]["tier"] = tier;
    MustCreate("configmaps", cm);
  }

  void Relabel(const std::string& name, const std::string& tier, const std::string& data) {
    auto r = api_->Modify(Type("configmaps"), "default", name, [&](Json& cm) {
      cm["metadata"]["labels"]["tier"] = tier;
      cm["data"]["k"] = data;
      return true;
    });
    ASSERT_TRUE(r.ok()) << r.error().message;
  }

  // The whole list now, unpaginated.
  std::vector<Json> Everything(const ListOptions& opts) {
    ListOptions all = opts;
    all.limit = 0;
    auto l = api_->List(Type("configmaps"), "default", all);
    EXPECT_TRUE(l.ok());
    return l.ok() ? (*l)["items"].get<std::vector<Json>>() : std::vector<Json>();
  }
};

TEST_F(PaginationTest, EveryPageShowsTheFirstPagesSnapshot) {
  for (int i = 0; i < 10; ++i) CreateLabelled("cm" + std::to_string(i), i % 2 ? "b" : "a");
  ListOptions opts;
  opts.limit = 3;
  std::vector<Json> truth = Everything(opts);
  ASSERT_EQ(truth.size(), 10u);
  std::string first_rv = std::to_string(storage_->CurrentRevision());
  // Between pages: objects ahead of the cursor are modified, deleted and created.
  auto paged = ListInPages(opts, [&](int page) {
    if (page == 0) {
      Relabel("cm4", "b", "changed");
      ASSERT_TRUE(api_->Delete(Type("configmaps"), "default", "cm5").ok());
      CreateLabelled("cm45", "a");  // sorts between cm4 and cm5
      CreateLabelled("cm99", "a");
    }
    if (page == 1) {
      Relabel("cm8", "a", "changed");
      Relabel("cm8", "b", "changed again");
      ASSERT_TRUE(api_->Delete(Type("configmaps"), "default", "cm9").ok());
      CreateLabelled("cm9", "a");  // recreated: a different object
    }
  });
  ASSERT_FALSE(paged.error) << paged.error->message;
  EXPECT_EQ(paged.items, truth);  // the objects exactly as they were, resourceVersions included
  EXPECT_EQ(paged.rv, first_rv);
  // remainingItemCount counts the snapshot, not the current objects.
  EXPECT_EQ(paged.remaining, (std::vector<int64_t>{7, 4, 1}));
  // And the list now is different.
  EXPECT_NE(Everything(opts), truth);
}

TEST_F(PaginationTest, SelectorsApplyToTheSnapshotsState) {
  for (int i = 0; i < 10; ++i) CreateLabelled("cm" + std::to_string(i), i % 2 ? "b" : "a");
  ListOptions opts;
  opts.limit = 2;
  opts.label_selector = "tier=a";
  opts.field_selector = "metadata.name!=cm2";
  std::vector<Json> truth = Everything(opts);
  std::vector<std::string> names;
  for (const auto& item : truth) names.push_back(item["metadata"]["name"]);
  ASSERT_EQ(names, (std::vector<std::string>{"cm0", "cm4", "cm6", "cm8"}));
  auto paged = ListInPages(opts, [&](int page) {
    if (page != 0) return;
    Relabel("cm6", "b", "left the selection");     // still listed: it matched at the snapshot
    Relabel("cm7", "a", "entered the selection");  // not listed: it did not
    ASSERT_TRUE(api_->Delete(Type("configmaps"), "default", "cm8").ok());
    CreateLabelled("cm5a", "a");
  });
  ASSERT_FALSE(paged.error) << paged.error->message;
  EXPECT_EQ(paged.items, truth);
  // With selectors the count of the rest is unknown: Kubernetes leaves remainingItemCount out.
  EXPECT_TRUE(paged.remaining.empty());
}

TEST_F(PaginationTest, ContinueAfterCompactionIsExpired) {
  for (int i = 0; i < 6; ++i) CreateLabelled("cm" + std::to_string(i), "a");
  ListOptions opts;
  opts.limit = 2;
  // Compacted with nothing written since the first page: the snapshot is the current state.
  auto quiet = ListInPages(opts, [&](int) { storage_->Compact(); });
  ASSERT_FALSE(quiet.error) << quiet.error->message;
  EXPECT_EQ(quiet.items.size(), 6u);

  auto paged = ListInPages(opts, [&](int page) {
    if (page != 0) return;
    Relabel("cm0", "b", "x");
    storage_->Compact();
  });
  ASSERT_TRUE(paged.error);
  EXPECT_EQ(paged.items.size(), 2u);
  EXPECT_EQ(paged.error->code, 410);
  EXPECT_EQ(paged.error->reason, "Expired");
  EXPECT_EQ(paged.error->message,
            "The provided continue parameter is too old to display a consistent list result. You "
            "can start a new list without the continue parameter, or use the continue token in "
            "this response to retrieve the remainder of the results. Continuing with the provided "
            "token results in an inconsistent list - objects that were created, modified, or "
            "deleted between the time the first chunk was returned and now may show up in the "
            "list.");
}

TEST_F(PaginationTest, ExactResourceVersionReadsAtThatRevision) {
  CreateLabelled("cm0", "a");
  CreateLabelled("cm1", "a");
  std::string rv = std::to_string(storage_->CurrentRevision());
  std::vector<Json> truth = Everything({});
  Relabel("cm0", "b", "x");
  ASSERT_TRUE(api_->Delete(Type("configmaps"), "default", "cm1").ok());
  CreateLabelled("cm2", "a");

  ListOptions exact;
  exact.resource_version = rv;
  exact.resource_version_match = "Exact";
  auto l = api_->List(Type("configmaps"), "default", exact);
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ((*l)["metadata"]["resourceVersion"], rv);
  EXPECT_EQ((*l)["items"].get<std::vector<Json>>(), truth);
  // Paginated too.
  exact.limit = 1;
  auto paged = ListInPages(exact, [](int) {});
  ASSERT_FALSE(paged.error) << paged.error->message;
  EXPECT_EQ(paged.rv, rv);
  EXPECT_EQ(paged.items, truth);
  // NotOlderThan reads the current state.
  ListOptions not_older;
  not_older.resource_version = rv;
  not_older.resource_version_match = "NotOlderThan";
  auto now = api_->List(Type("configmaps"), "default", not_older);
  ASSERT_TRUE(now.ok());
  EXPECT_EQ((*now)["metadata"]["resourceVersion"], std::to_string(storage_->CurrentRevision()));

  storage_->Compact();
  exact.limit = 0;
  auto gone = api_->List(Type("configmaps"), "default", exact);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, 410);
  EXPECT_EQ(gone.error().reason, "Expired");
  EXPECT_EQ(gone.error().message, "The resourceVersion for the provided list is too old.");
}

TEST_F(PaginationTest, FutureResourceVersionIsTooLarge) {
  CreateLabelled("cm0", "a");
  uint64_t current = storage_->CurrentRevision();
  for (const char* match : {"", "NotOlderThan", "Exact"}) {
    ListOptions opts;
    opts.resource_version = std::to_string(current + 5);
    opts.resource_version_match = match;
    auto l = api_->List(Type("configmaps"), "default", opts);
    ASSERT_FALSE(l.ok()) << match;
    EXPECT_EQ(l.error().code, 504);
    EXPECT_EQ(l.error().reason, "Timeout");
    EXPECT_EQ(l.error().message,
              "Timeout: Too large resource version: " + std::to_string(current + 5) +
                  ", current: " + std::to_string(current));
    Json status = l.error().ToStatus();
    EXPECT_EQ(status["details"]["causes"],
              Json::parse(R"([{"reason":"ResourceVersionTooLarge",)"
                          R"("message":"Too large resource version"}])"));
    EXPECT_EQ(status["details"]["retryAfterSeconds"], 1);
  }
}

TEST_F(ObjectApiTest, WritesToTerminatingObjectsDoNotRemoveThemEarly) {
  // A namespace waits for its content (spec.finalizers), a pod for its kubelet (grace period).
  MustCreate("namespaces", Json{{"metadata", {{"name", "team"}}}}, "");
  ASSERT_TRUE(api_->Delete(Type("namespaces"), "", "team").ok());
  ASSERT_TRUE(api_->Modify(
                      Type("namespaces"), "", "team",
                      [](Json& ns) {
                        ns["status"]["conditions"] = Json::array({{{"type", "Test"}}});
                        return true;
                      },
                      Subresource::kStatus)
                  .ok());
  EXPECT_TRUE(storage_->Get("namespaces", "", "team").has_value());

  Json pod = {{"metadata", {{"name", "p"}}},
              {"spec", {{"nodeName", "node"}, {"containers", {{{"name", "c"}, {"image", "x"}}}}}}};
  MustCreate("pods", pod);
  ASSERT_TRUE(api_->Delete(Type("pods"), "default", "p").ok());
  auto labelled = api_->Patch(Type("pods"), "default", "p", PatchType::kJsonMerge,
                              R"({"metadata":{"labels":{"x":"y"}}})");
  ASSERT_TRUE(labelled.ok()) << labelled.error().message;
  EXPECT_TRUE(storage_->Get("pods", "default", "p").has_value());
  // A forced second delete shortens the grace period to zero and removes the pod.
  DeleteOptions force;
  force.grace_period_seconds = 0;
  ASSERT_TRUE(api_->Delete(Type("pods"), "default", "p", force).ok());
  EXPECT_FALSE(storage_->Get("pods", "default", "p").has_value());
}

TEST_F(ObjectApiTest, ScaleSubresourceReadsAndWritesReplicas) {
  MustCreate("deployments.apps", Deployment("web"));
  auto scale = api_->Get(Type("deployments.apps"), "default", "web", Subresource::kScale);
  ASSERT_TRUE(scale.ok());
  EXPECT_EQ((*scale)["kind"], "Scale");
  EXPECT_EQ((*scale)["spec"]["replicas"], 1);
  EXPECT_EQ((*scale)["status"]["selector"], "app=web");
  Json up = *scale;
  up["spec"]["replicas"] = 4;
  auto r = api_->Update(Type("deployments.apps"), "default", "web", up, Subresource::kScale);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["spec"]["replicas"], 4);
  auto d = api_->Get(Type("deployments.apps"), "default", "web");
  EXPECT_EQ((*d)["spec"]["replicas"], 4);
  EXPECT_EQ((*d)["metadata"]["generation"], 2);
  auto stale = api_->Update(Type("deployments.apps"), "default", "web", up, Subresource::kScale);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, 409);
  auto patched = api_->Patch(Type("deployments.apps"), "default", "web", PatchType::kJsonMerge,
                             R"({"spec":{"replicas":2}})", Subresource::kScale);
  ASSERT_TRUE(patched.ok()) << patched.error().message;
  EXPECT_EQ((*patched)["spec"]["replicas"], 2);
}

TEST_F(ObjectApiTest, PatchTypesApplyAndHonourResourceVersionPreconditions) {
  Json d = MustCreate("deployments.apps", Deployment("web"));
  auto merge = api_->Patch(Type("deployments.apps"), "default", "web", PatchType::kJsonMerge,
                           R"({"metadata":{"labels":{"a":"b"}}})");
  ASSERT_TRUE(merge.ok());
  EXPECT_EQ((*merge)["metadata"]["labels"]["a"], "b");
  auto strategic = api_->Patch(
      Type("deployments.apps"), "default", "web", PatchType::kStrategicMerge,
      R"({"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}}})");
  ASSERT_TRUE(strategic.ok()) << strategic.error().message;
  EXPECT_EQ((*strategic)["spec"]["template"]["spec"]["containers"].size(), 1u);
  EXPECT_EQ((*strategic)["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:2");
  EXPECT_EQ((*strategic)["metadata"]["generation"], 2);
  auto json_patch = api_->Patch(Type("deployments.apps"), "default", "web", PatchType::kJsonPatch,
                                R"([{"op":"replace","path":"/spec/replicas","value":5}])");
  ASSERT_TRUE(json_patch.ok());
  EXPECT_EQ((*json_patch)["spec"]["replicas"], 5);
  std::string stale_patch =
      R"({"metadata":{"resourceVersion":")" + Rv(d) + R"("},"spec":{"replicas":1}})";
  auto stale =
      api_->Patch(Type("deployments.apps"), "default", "web", PatchType::kJsonMerge, stale_patch);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, 409);
  auto malformed =
      api_->Patch(Type("deployments.apps"), "default", "web", PatchType::kJsonMerge, "{not json");
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.error().code, 400);
  auto failing_test = api_->Patch(Type("deployments.apps"), "default", "web", PatchType::kJsonPatch,
                                  R"([{"op":"test","path":"/spec/replicas","value":7}])");
  ASSERT_FALSE(failing_test.ok());
  EXPECT_EQ(failing_test.error().code, 422);
}

TEST_F(ObjectApiTest, ServerSideApplyCreatesThenMerges) {
  std::string config = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: applied
  labels: {a: "1"}
data:
  k: v
)";
  auto created = api_->Patch(Type("configmaps"), "default", "applied", PatchType::kApply, config);
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_EQ((*created)["data"]["k"], "v");
  std::string second = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied"},
                           "data":{"k2":"v2"}})";
  auto merged = api_->Patch(Type("configmaps"), "default", "applied", PatchType::kApply, second);
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ((*merged)["data"]["k"], "v");
  EXPECT_EQ((*merged)["data"]["k2"], "v2");
  EXPECT_EQ((*merged)["metadata"]["labels"]["a"], "1");
  auto wrong = api_->Patch(Type("configmaps"), "default", "other", PatchType::kApply, second);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().code, 400);
}

TEST_F(ObjectApiTest, ServicesGetClusterIpsAndCleanupFinalizers) {
  Json svc = {{"metadata", {{"name", "web"}}},
              {"spec", {{"ports", {{{"port", 80}}}}, {"selector", {{"app", "web"}}}}}};
  Json a = MustCreate("services", svc);
  svc["metadata"]["name"] = "api";
  Json b = MustCreate("services", svc);
  EXPECT_FALSE(a["spec"]["clusterIP"].get<std::string>().empty());
  EXPECT_NE(a["spec"]["clusterIP"], b["spec"]["clusterIP"]);
  EXPECT_EQ(a["spec"]["ports"][0]["targetPort"], 80);
  EXPECT_EQ(a["metadata"]["finalizers"],
            Json::array({"service.kubernetes.io/load-balancer-cleanup"}));
  // A PUT that leaves clusterIP out keeps the allocated one; changing it is refused.
  Json update = a;
  update["spec"].erase("clusterIP");
  auto kept = api_->Update(Type("services"), "default", "web", update);
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  EXPECT_EQ((*kept)["spec"]["clusterIP"], a["spec"]["clusterIP"]);
  Json moved = *kept;
  moved["spec"]["clusterIP"] = "10.0.0.99";
  auto refused = api_->Update(Type("services"), "default", "web", moved);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("field is immutable"));
}

TEST_F(ObjectApiTest, SecretsEncodeStringDataAndRefuseBadBase64) {
  Json s = {{"metadata", {{"name", "creds"}}}, {"stringData", {{"token", "s3cret"}}}};
  Json secret = MustCreate("secrets", s);
  EXPECT_FALSE(secret.contains("stringData"));
  EXPECT_EQ(secret["data"]["token"], Base64Encode("s3cret"));
  EXPECT_EQ(secret["type"], "Opaque");
  Json bad = {{"metadata", {{"name", "bad"}}}, {"data", {{"token", "***"}}}};
  auto r = api_->Create(Type("secrets"), "default", bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 400);
  EXPECT_THAT(r.error().message, HasSubstr("illegal base64 data"));
}

TEST_F(ObjectApiTest, NamespacesTerminateAndProtectedOnesStay) {
  MustCreate("namespaces", Json{{"metadata", {{"name", "team"}}}}, "");
  auto d = api_->Delete(Type("namespaces"), "", "team");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)["status"]["phase"], "Terminating");
  auto blocked = api_->Create(Type("configmaps"), "team", ConfigMap("a"));
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.error().code, 403);
  EXPECT_THAT(blocked.error().message, HasSubstr("because it is being terminated"));
  auto def = api_->Delete(Type("namespaces"), "", "default");
  ASSERT_FALSE(def.ok());
  EXPECT_EQ(def.error().code, 403);
}

TEST_F(ObjectApiTest, AdmissionHooksCanRefuseWrites) {
  api_->AddAdmissionHook(
      [](const ResourceType& rt, const Json& obj, const Json*) -> std::optional<StatusError> {
        if (rt.kind == "ConfigMap" && obj["metadata"]["name"] == "forbidden") {
          return ForbiddenError("denied by test hook");
        }
        return std::nullopt;
      });
  auto r = api_->Create(Type("configmaps"), "default", ConfigMap("forbidden"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "denied by test hook");
  EXPECT_TRUE(api_->Create(Type("configmaps"), "default", ConfigMap("allowed")).ok());
}

}  // namespace
}  // namespace steward::cluster
