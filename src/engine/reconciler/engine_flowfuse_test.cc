// FlowFuse parity through the whole engine against the embedded cluster (issue 15): platform-
// supplied credentials (write-only, in their own Secret, rolled like a rotation), names as the
// platform makes them, and the TLS Secrets cert-manager makes, deleted on suspend.
#include <gmock/gmock.h>

#include "common/base64.h"
#include "common/file.h"
#include "engine/reconciler/engine_test_support.h"
#include "engine/reconciler/secret_vault.h"

namespace steward::engine::testing {
namespace {

using test_support::Eventually;
using ::testing::HasSubstr;

class FlowFuseTest : public EngineFixture {
 protected:
  static Json Credentials(const std::string& token) {
    return Json{{"clientId", "ffp_" + token},
                {"clientSecret", "secret-" + token},
                {"token", "ffpt_" + token},
                {"nodeRedSecret", "nr-" + token}};
  }
  // The environment a ready pod of the project started with, from its launcher stand-in.
  Json PodEnv(const std::string& service) {
    kube::TransportRequest request;
    request.method = "GET";
    request.target = "/api/v1/namespaces/" + std::string(kNs) + "/services/" + service +
                     ":2880/proxy/flowforge/env";
    auto response = client_->transport().Do(request);
    if (!response.ok() || response->status != 200) return nullptr;
    auto env = ParseJson(response->body);
    return env.ok() ? *env : Json(nullptr);
  }
  std::vector<std::string> SuppliedSecrets(const std::string& id) {
    std::vector<std::string> names;
    for (const Json& s :
         ListLabelled("secrets", "steward.io/project=" + id + ",steward.io/credentials=supplied")) {
      names.push_back(GetString(s["metadata"], "name"));
    }
    return names;
  }
  // The whole store file, as bytes: a supplied value must not be anywhere in it.
  std::string StoreBytes() {
    std::string all;
    for (const char* suffix : {"/steward.db", "/steward.db-wal"}) {
      auto bytes = ReadSmallFile(dir_ + suffix, 256u << 20);
      if (bytes.ok()) all += *bytes;
    }
    return all;
  }
};

TEST_F(FlowFuseTest, SuppliedCredentialsReachTheLauncherAndRotateWithoutAGap) {
  StartCluster();
  OpenStore();
  RecordDetailedSnapshotsAtPhases();
  StartEngine();
  Json spec = Spec();
  spec["credentials"] = Credentials("one");
  auto put = engine_->intents().Put("alpha", spec, "", /*start=*/true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  const std::string fp1 = ParseJson(Record(id).spec_json)->at("credentials")["fingerprint"];

  // The launcher got exactly the platform's values, from the Secret of this set. (The service
  // proxy resolves endpoints from a watch of its own, which may lag the engine's by a moment.)
  Json env;
  ASSERT_TRUE(Eventually(
      [&] {
        env = PodEnv("alpha");
        return env.is_object();
      },
      seconds(10)));
  EXPECT_EQ(env["FORGE_CLIENT_ID"], "ffp_one");
  EXPECT_EQ(env["FORGE_CLIENT_SECRET"], "secret-one");
  EXPECT_EQ(env["FORGE_PROJECT_TOKEN"], "ffpt_one");
  EXPECT_EQ(env["FORGE_NR_SECRET"], "nr-one");
  EXPECT_THAT(SuppliedSecrets(id), ::testing::ElementsAre(id + "-credentials-" + fp1));
  auto dep = Get("deployments.apps", "alpha");
  ASSERT_TRUE(dep.has_value());
  EXPECT_THAT(DumpJson(*dep), ::testing::Not(HasSubstr("ffpt_one")));

  // New values (the platform refreshed the tokens): a rolling replacement, the old Secret
  // deleted only once no pod holds it, and Running only with every pod on the new set.
  spec["credentials"] = Credentials("two");
  auto rotate = engine_->intents().Put("alpha", spec);
  ASSERT_TRUE(rotate.ok()) << rotate.error().ToString();
  ASSERT_EQ(rotate->record.generation, 2);
  ASSERT_TRUE(WaitPhase(id, "Running", 2));
  ASSERT_TRUE(WaitSnapshot(id, "Running", 2));
  const std::string fp2 = ParseJson(Record(id).spec_json)->at("credentials")["fingerprint"];
  ASSERT_NE(fp1, fp2);
  for (const auto& s : Snapshots()) {
    if (s.id != id || s.phase != "Running" || s.generation != 2) continue;
    for (const auto& pod : s.at.pod_details) {
      EXPECT_EQ(pod.credential_id, "supplied-" + fp2) << s.at.describe;
    }
  }
  ASSERT_TRUE(Eventually([&] { return SuppliedSecrets(id).size() == 1; }, seconds(10)));
  EXPECT_THAT(SuppliedSecrets(id), ::testing::ElementsAre(id + "-credentials-" + fp2));
  EXPECT_TRUE(Eventually(
      [&] {
        const Json e = PodEnv("alpha");
        return e.is_object() && e.value("FORGE_PROJECT_TOKEN", "") == "ffpt_two";
      },
      seconds(10)))
      << PodEnv("alpha").dump();

  // Nothing of the values is in the store (spec, status, history, any page of the file).
  const std::string bytes = StoreBytes();
  ASSERT_FALSE(bytes.empty());
  for (const char* value : {"ffpt_one", "ffpt_two", "secret-one", "secret-two", "nr-two"}) {
    EXPECT_EQ(bytes.find(value), std::string::npos) << value;
  }

  // Delete: every Secret of the project goes, supplied ones too.
  ASSERT_TRUE(engine_->intents().Delete(id).ok());
  ASSERT_TRUE(WaitPurged(id));
  EXPECT_TRUE(Leftovers(id).empty()) << ::testing::PrintToString(Leftovers(id));
}

TEST_F(FlowFuseTest, ASuppliedSecretDeletedBehindStewardsBackIsReportedNotInvented) {
  StartCluster();
  OpenStore();
  StartEngine();
  Json spec = Spec();
  spec["credentials"] = Credentials("one");
  auto put = engine_->intents().Put("beta", spec, "", false);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Suspended", 1));
  // The Secret is gone before the start: Steward cannot make the values up.
  const uint64_t runs_before = engine_->stats().reconciles;
  for (const std::string& name : SuppliedSecrets(id)) {
    ASSERT_TRUE(cluster_->api().Delete(Kind("secrets"), kNs, name, {}).ok());
  }
  // The engine has seen the deletion (its informer woke the project, after updating its cache)
  // before the start: otherwise a start racing the watch event acts on the cached Secret, as any
  // cache-driven controller would, and creates the Deployment (seen once in a loaded run).
  ASSERT_TRUE(Eventually([&] {
    const EngineStats st = engine_->stats();
    return st.reconciles > runs_before && st.queue_depth == 0 && st.queue_processing == 0;
  }));
  ASSERT_TRUE(engine_->intents().Start(id).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        ProjectStatus st = StatusOf(id);
        return st.observed_generation == 2 && st.reason == "WaitingForCredentials";
      },
      seconds(20)))
      << StatusOf(id).reason << ": " << StatusOf(id).message;
  EXPECT_FALSE(Get("deployments.apps", "beta").has_value());
  // Putting the credentials again recovers.
  spec["credentials"] = Credentials("again");
  ASSERT_TRUE(engine_->intents().Put("beta", spec).ok());
  ASSERT_TRUE(WaitPhase(id, "Running", 3));
}

TEST_F(FlowFuseTest, NamesTheDriverCannotHoldRunAndAreReachable) {
  StartCluster();
  OpenStore();
  StartEngine();
  const std::string longest = "n" + std::string(61, 'x') + "9";  // 63 characters
  for (const std::string& name : {longest, std::string("7-up"), std::string("ends-with-")}) {
    auto put = engine_->intents().Put(name, Spec(), "", true);
    ASSERT_TRUE(put.ok()) << name << ": " << put.error().ToString();
    ASSERT_TRUE(WaitPhase(put->record.id, "Running", 1))
        << name << ": " << StatusOf(put->record.id).message;
    const ObjectNames n = NamesFor(put->record.id, name);
    EXPECT_TRUE(Get("services", n.service).has_value()) << n.service;
    const std::string host = DnsLabelOf(name) + ".localhost";
    EXPECT_EQ(StatusOf(put->record.id).url, "http://" + host + "/");
    EXPECT_EQ(IngressStatus(host), 200) << host;
  }
}

TEST_F(FlowFuseTest, SuspendDeletesTheTlsSecretsCertManagerMadeAndNoOtherSecret) {
  StartCluster();
  OpenStore();
  EngineOptions options = DefaultOptions();
  options.config.cert_manager_issuer = "letsencrypt";
  options.config.require_ingress_address = true;
  StartEngine(options);
  auto put = engine_->intents().Put("gamma", Spec(), "", true);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  auto ingress = Get("ingresses.networking.k8s.io", "gamma");
  ASSERT_TRUE(ingress.has_value());
  EXPECT_EQ((*ingress)["spec"]["tls"][0]["secretName"], "gamma");
  // What cert-manager would make for it (no Steward labels), and an unrelated Secret whose name
  // is the custom one's but that is not a certificate.
  auto tls = [](const std::string& name, const std::string& type) {
    return Json{{"apiVersion", "v1"},
                {"kind", "Secret"},
                {"metadata", {{"name", name}, {"namespace", kNs}}},
                {"type", type},
                {"data", {{"tls.crt", Base64Encode("c")}, {"tls.key", Base64Encode("k")}}}};
  };
  ASSERT_TRUE(cluster_->api().Create(Kind("secrets"), kNs, tls("gamma", "kubernetes.io/tls")).ok());
  ASSERT_TRUE(cluster_->api().Create(Kind("secrets"), kNs, tls("gamma-custom", "Opaque")).ok());

  ASSERT_TRUE(engine_->intents().Suspend(id).ok());
  ASSERT_TRUE(WaitPhase(id, "Suspended", 2));
  EXPECT_FALSE(Get("secrets", "gamma").has_value());
  EXPECT_TRUE(Get("secrets", "gamma-custom").has_value());       // not a certificate: not ours
  EXPECT_TRUE(Get("secrets", "gamma-credentials").has_value());  // kept on suspend
  bool recorded = false;
  for (const auto& c : StatusOf(id).conditions) {
    if (c.resource == "TLSSecrets") recorded = c.ready;
  }
  EXPECT_TRUE(recorded);
}

}  // namespace
}  // namespace steward::engine::testing

namespace steward::engine::testing {
namespace {

TEST_F(FlowFuseTest, RenameWhileSuspendedKeepsThePvcHistoryAndUrl) {
  StartCluster();
  OpenStore();
  StartEngine();
  Json spec = Spec();
  spec["storage"] = {{"size", "1Gi"}};
  spec["url"] = "http://old.localhost";  // as the platform keeps project.url
  auto put = engine_->intents().Put("old", spec, "", true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  auto pvc = Get("persistentvolumeclaims", id + "-pvc");
  ASSERT_TRUE(pvc.has_value());
  const std::string pvc_uid = GetString((*pvc)["metadata"], "uid");

  // Not while it runs.
  auto early = engine_->intents().Rename("old", "new");
  ASSERT_EQ(early.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(early.status().message(), HasSubstr("Suspended"));

  ASSERT_TRUE(engine_->intents().Suspend(id).ok());
  ASSERT_TRUE(WaitPhase(id, "Suspended", 2));
  auto renamed = engine_->intents().Rename("old", "new");
  ASSERT_TRUE(renamed.ok()) << renamed.error().ToString();
  EXPECT_EQ(renamed->name, "new");
  EXPECT_EQ(renamed->generation, 3);
  ASSERT_TRUE(engine_->intents().Start("new").ok());
  ASSERT_TRUE(WaitPhase(id, "Running", 4));

  EXPECT_EQ(GetString(Get("persistentvolumeclaims", id + "-pvc")->at("metadata"), "uid"), pvc_uid);
  EXPECT_TRUE(Get("deployments.apps", "new").has_value());
  EXPECT_FALSE(Get("deployments.apps", "old").has_value());
  EXPECT_TRUE(
      Eventually([&] { return !Get("secrets", "old-credentials").has_value(); }, seconds(10)));
  // The kept URL is still the instance's address.
  EXPECT_EQ(StatusOf(id).url, "http://old.localhost/");
  EXPECT_EQ(IngressStatus("old.localhost"), 200);
  auto history = store_->ListHistory(id, 0, 100);
  ASSERT_TRUE(history.ok());
  bool saw_rename = false;
  for (const auto& h : *history) saw_rename = saw_rename || h.summary == "rename";
  EXPECT_TRUE(saw_rename);
}

}  // namespace
}  // namespace steward::engine::testing

namespace steward::engine::testing {
namespace {

// Regression (found by the torture run): a run on an older intent deleted the Secret a newer
// PUT had just written (the vault writes it before the intent is committed), and the newer
// intent then waited for its credentials for ever.
TEST_F(FlowFuseTest, ARunOnAnOlderIntentKeepsTheSecretOfANewerSet) {
  StartCluster();
  OpenStore();
  EngineOptions options = DefaultOptions();
  StartEngine(options);
  Json spec = Spec();
  spec["credentials"] = Credentials("one");
  auto put = engine_->intents().Put("delta", spec, "", true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  // Marked as written for this store's intents (removed by the engine if none is committed).
  ASSERT_EQ(SuppliedSecrets(id).size(), 1u);
  EXPECT_EQ(Get("secrets", SuppliedSecrets(id).front())
                ->at("metadata")["annotations"]
                .value("steward.io/store", ""),
            store_->FeedId());
  // A newer set's Secret, as a PUT in flight leaves it before its commit.
  SecretVault vault(client_, options.config, "test", store_->FeedId());
  SuppliedCredentials newer;
  newer.env = {{"FORGE_CLIENT_ID", "ffp_new"},
               {"FORGE_CLIENT_SECRET", "secret-new"},
               {"FORGE_PROJECT_TOKEN", "ffpt_new"}};
  auto wrote = vault.Put(id, "delta", newer);
  ASSERT_TRUE(wrote.ok() && !wrote->empty());
  const std::string newer_name = SuppliedSecretName(id, newer.Ref().fingerprint);
  ASSERT_TRUE(Eventually([&] { return SuppliedSecrets(id).size() == 2; }, seconds(10)));
  // A run on the current intent (a restart rolls the pods and ends in Running again).
  auto restarted = engine_->intents().Restart(id);
  ASSERT_TRUE(restarted.ok());
  ASSERT_TRUE(WaitPhase(id, "Running", restarted->generation));
  EXPECT_TRUE(Get("secrets", newer_name).has_value());
  // The same set put again is fine, and the older set goes once the newer one runs.
  Json next = Spec();
  next["credentials"] = {
      {"clientId", "ffp_new"}, {"clientSecret", "secret-new"}, {"token", "ffpt_new"}};
  auto rotated = engine_->intents().Put("delta", next);
  ASSERT_TRUE(rotated.ok()) << rotated.error().ToString();
  ASSERT_TRUE(WaitPhase(id, "Running", rotated->record.generation));
  ASSERT_TRUE(Eventually([&] { return SuppliedSecrets(id).size() == 1; }, seconds(10)));
  EXPECT_THAT(SuppliedSecrets(id), ::testing::ElementsAre(newer_name));
}

// Steward's own credentials exist only while a pod may need them (issue 34 item 7): none are
// generated for a project created with supplied ones; a project that switches to supplied ones
// loses its generated Secret and credentials (revoked) once every pod holds the supplied set,
// running or suspended; one that switches back gets new ones.
TEST_F(FlowFuseTest, StewardsCredentialsAreRevokedOnceNoPodHoldsThemAndNeverMadeForSuppliedOnes) {
  StartCluster();
  OpenStore();
  StartEngine();
  auto active_of = [&](const std::string& id) {
    std::vector<store::Credential> live;
    for (const auto& c : Creds(id)) {
      if (c.state != store::CredentialState::kRevoked) live.push_back(c);
    }
    return live;
  };
  auto check = [&](const std::string& token) {
    auto c = engine_->intents().CheckCredential(token);
    EXPECT_TRUE(c.ok());
    return c.ok() ? c->state : std::string("error");
  };

  // Created with supplied credentials: no credential of Steward's, no <name>-credentials Secret.
  Json supplied = Spec();
  supplied["credentials"] = Credentials("one");
  auto beta = engine_->intents().Put("beta", supplied, "", true);
  ASSERT_TRUE(beta.ok()) << beta.error().ToString();
  ASSERT_TRUE(WaitPhase(beta->record.id, "Running", 1));
  EXPECT_TRUE(Creds(beta->record.id).empty());
  EXPECT_FALSE(Get("secrets", "beta-credentials").has_value());

  // Created with Steward's credentials, then switched to supplied ones while running.
  auto alpha = engine_->intents().Put("alpha", Spec(), "", true);
  ASSERT_TRUE(alpha.ok()) << alpha.error().ToString();
  const std::string id = alpha->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  ASSERT_EQ(active_of(id).size(), 1u);
  const store::Credential generated = active_of(id).front();
  EXPECT_EQ(check(generated.token), "active");
  ASSERT_TRUE(Get("secrets", "alpha-credentials").has_value());
  auto switched = engine_->intents().Put("alpha", supplied);
  ASSERT_TRUE(switched.ok()) << switched.error().ToString();
  ASSERT_TRUE(WaitPhase(id, "Running", 2));
  EXPECT_TRUE(Eventually([&] { return active_of(id).empty(); }, seconds(10)));
  EXPECT_EQ(check(generated.token), "revoked");
  EXPECT_FALSE(Get("secrets", "alpha-credentials").has_value());
  bool noted = false;
  auto history = store_->ListHistory(id, 0, 100);
  ASSERT_TRUE(history.ok());
  for (const auto& h : *history) {
    noted |= h.kind == "credential" && h.summary.find("revoked " + generated.id) == 0;
  }
  EXPECT_TRUE(noted);

  // Back to Steward's credentials: new ones, active, in a new Secret the pods read.
  Json generated_again = Spec();
  generated_again["credentials"] = Json::object();
  auto back = engine_->intents().Put("alpha", generated_again);
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  ASSERT_TRUE(WaitPhase(id, "Running", 3));
  ASSERT_EQ(active_of(id).size(), 1u);
  const store::Credential fresh = active_of(id).front();
  EXPECT_NE(fresh.id, generated.id);
  EXPECT_EQ(check(fresh.token), "active");
  auto secret = Get("secrets", "alpha-credentials");
  ASSERT_TRUE(secret.has_value());
  EXPECT_EQ(Base64Decode(secret->at("data")["FORGE_CLIENT_ID"].get<std::string>()),
            std::optional<std::string>(fresh.id));
  EXPECT_EQ(Get("deployments.apps", "alpha")
                ->at("spec")["template"]["metadata"]["annotations"]["steward.io/credential-id"],
            fresh.id);

  // Switched to supplied ones while suspended: no pod holds anything, so they go at once.
  auto gamma = engine_->intents().Put("gamma", Spec(), "", true);
  ASSERT_TRUE(gamma.ok());
  const std::string gid = gamma->record.id;
  ASSERT_TRUE(WaitPhase(gid, "Running", 1));
  auto suspended = engine_->intents().Suspend(gid);
  ASSERT_TRUE(suspended.ok());
  ASSERT_TRUE(WaitPhase(gid, "Suspended", suspended->generation));
  ASSERT_EQ(active_of(gid).size(), 1u);  // kept for the next start
  auto gamma_supplied = engine_->intents().Put("gamma", supplied);
  ASSERT_TRUE(gamma_supplied.ok());
  EXPECT_TRUE(Eventually([&] { return active_of(gid).empty(); }, seconds(10)))
      << Record(gid).status_json;
  EXPECT_TRUE(
      Eventually([&] { return !Get("secrets", "gamma-credentials").has_value(); }, seconds(10)));
}

// A PUT whose commit fails discards the Secret it created — unless another PUT of the same set
// took it meanwhile (its intent may be committed, and would name a Secret that is gone).
TEST_F(FlowFuseTest, ADiscardKeepsTheSecretAnotherPutOfTheSameSetTookMeanwhile) {
  StartCluster();
  OpenStore();
  const EngineOptions options = DefaultOptions();
  SecretVault vault(client_, options.config, "test", store_->FeedId());
  SuppliedCredentials set;
  set.env = {{"FORGE_CLIENT_ID", "ffp_theta"},
             {"FORGE_CLIENT_SECRET", "secret-theta"},
             {"FORGE_PROJECT_TOKEN", "ffpt_theta"}};
  const std::string name = SuppliedSecretName("theta-id", set.Ref().fingerprint);
  auto first = vault.Put("theta-id", "theta", set);
  ASSERT_TRUE(first.ok() && !first->empty());
  auto second = vault.Put("theta-id", "theta", set);  // another PUT of the same set
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, "") << "it was there: not this Put's to discard";
  vault.Discard("theta-id", set.Ref().fingerprint, *first);  // the first PUT's commit failed
  EXPECT_TRUE(Get("secrets", name).has_value());
  // Nobody took it since: a discard removes it.
  SuppliedCredentials other = set;
  other.env["FORGE_PROJECT_TOKEN"] = "ffpt_other";
  auto lone = vault.Put("theta-id", "theta", other);
  ASSERT_TRUE(lone.ok() && !lone->empty());
  vault.Discard("theta-id", other.Ref().fingerprint, *lone);
  EXPECT_FALSE(Get("secrets", SuppliedSecretName("theta-id", other.Ref().fingerprint)).has_value());
}

// A newer set's Secret that no commit followed (a PUT that died before it) is young when the
// project's last full run sees it, so it stays; once its grace has passed, a restart of Steward
// removes it. The adoption fingerprint must not let the restart skip that run: the removal
// depends on the time, which no fingerprint holds.
TEST_F(FlowFuseTest, ALeftoverSuppliedSecretGoesAtARestartAfterItsGrace) {
  StartCluster();
  OpenStore();
  EngineOptions options = DefaultOptions();
  StartEngine(options);
  Json spec = Spec();
  spec["credentials"] = Credentials("one");
  auto put = engine_->intents().Put("eta", spec, "", true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  const std::string fp1 = ParseJson(Record(id).spec_json)->at("credentials")["fingerprint"];
  ASSERT_TRUE(Eventually([&] { return Quiet(); }));
  const uint64_t runs_before = engine_->stats().reconciles;
  SecretVault vault(client_, options.config, "test", store_->FeedId());
  SuppliedCredentials leftover;
  leftover.env = {{"FORGE_CLIENT_ID", "ffp_left"},
                  {"FORGE_CLIENT_SECRET", "secret-left"},
                  {"FORGE_PROJECT_TOKEN", "ffpt_left"}};
  auto wrote = vault.Put(id, "eta", leftover);
  ASSERT_TRUE(wrote.ok() && !wrote->empty());
  const std::string leftover_name = SuppliedSecretName(id, leftover.Ref().fingerprint);
  // The Secret's event runs the project: Running still, the young Secret kept.
  ASSERT_TRUE(Eventually([&] {
    return SuppliedSecrets(id).size() == 2 && engine_->stats().reconciles > runs_before && Quiet();
  }));
  EXPECT_EQ(Record(id).phase, "Running");
  engine_.reset();

  offset_clock_.Advance(std::chrono::milliseconds(kSuppliedGraceMs) + std::chrono::minutes(1));
  EngineOptions later = DefaultOptions();
  later.clock = &offset_clock_;
  StartEngine(later);
  EXPECT_TRUE(Eventually([&] { return !Get("secrets", leftover_name).has_value(); }, seconds(10)));
  EXPECT_THAT(SuppliedSecrets(id), ::testing::ElementsAre(id + "-credentials-" + fp1));
  EXPECT_EQ(Record(id).phase, "Running");
}

}  // namespace
}  // namespace steward::engine::testing

namespace steward::engine::testing {
namespace {

// Found by the torture run (cluster restarts): a supplied-credentials Secret the cache had not
// shown yet outlived its deleted project.
TEST_F(FlowFuseTest, DeleteRemovesASecretOfTheProjectTheCacheHasNotShown) {
  StartCluster();
  auto gate = GateClient();
  OpenStore();
  StartEngine();
  auto put = engine_->intents().Put("eps", Spec(), "", false);
  ASSERT_TRUE(put.ok());
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Suspended", 1));
  gate->Hold("secrets");  // the engine's Secret watch sees nothing from here on
  SuppliedCredentials values;
  values.env = {
      {"FORGE_CLIENT_ID", "a"}, {"FORGE_CLIENT_SECRET", "b"}, {"FORGE_PROJECT_TOKEN", "c"}};
  const EngineOptions options = DefaultOptions();
  const Json secret = RenderSuppliedSecret(id, "eps", &options.config, values, 1, "");
  ASSERT_TRUE(cluster_->api().Create(Kind("secrets"), kNs, secret).ok());
  ASSERT_TRUE(engine_->intents().Delete(id).ok());
  ASSERT_TRUE(WaitPurged(id));
  EXPECT_FALSE(Get("secrets", GetString(secret["metadata"], "name")).has_value());
  gate->Release();
}

}  // namespace
}  // namespace steward::engine::testing
