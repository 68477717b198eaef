// The order checks must catch what they claim to catch: pure tests of each rule on audit writes
// made up here, then a mutant driver against a real embedded cluster's audit log (everything
// created at once) that must fail, beside the same objects created in order that must hold.
#include "torture/creation_order.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cluster/embedded_cluster.h"
#include "cluster/profile/profile.h"
#include "common/mutex.h"
#include "engine/manifests/manifests.h"
#include "kube/test_support/embedded.h"
#include "test_support/eventually.h"

namespace steward::torture {
namespace {

using ::testing::AllOf;
using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr int64_t kT = 1767225600000;  // ms

AuditWrite Write(std::string verb, std::string resource, std::string name, int64_t start_ms,
                 int64_t end_ms, int code = 201, std::string ns = "default") {
  AuditWrite w;
  w.verb = std::move(verb);
  w.resource = std::move(resource);
  w.ns = std::move(ns);
  w.name = std::move(name);
  w.start_us = (kT + start_ms) * 1000;
  w.end_us = (kT + end_ms) * 1000;
  w.code = code;
  return w;
}
AuditWrite Create(std::string resource, std::string name, int64_t start_ms, int64_t end_ms,
                  int code = 201) {
  return Write("create", std::move(resource), std::move(name), start_ms, end_ms, code);
}
AuditWrite Delete(std::string resource, std::string name, int64_t start_ms, int64_t end_ms,
                  int code = 200) {
  return Write("delete", std::move(resource), std::move(name), start_ms, end_ms, code);
}

ObjectOwners Alpha() {
  ObjectOwners owners;
  owners.AddProject("p-alpha", "alpha", kT - 1000);
  return owners;
}

TEST(CreationOrderTest, DependenciesFollowTheEnginesNames) {
  ObjectOwners owners;
  owners.AddProject("p-1", "alpha", kT);
  owners.AddProject("p-2", "0day", kT);  // a Service name starts with a letter: srv-0day
  owners.AddAgent("a-1", "mqtt-schema-agent-t-b0000", kT);
  auto dep = [&](std::string_view resource, std::string_view name) {
    auto d = owners.DependencyOf(resource, name);
    return d ? d->resource + "/" + d->name : std::string("none");
  };
  EXPECT_EQ(dep("services", "alpha"), "deployments/alpha");
  EXPECT_EQ(dep("ingresses", "alpha"), "services/alpha");
  EXPECT_EQ(dep("ingresses", "alpha-custom"), "services/alpha");
  EXPECT_EQ(dep("services", "srv-0day"), "deployments/0day");
  EXPECT_EQ(dep("ingresses", "0day-custom"), "services/srv-0day");
  EXPECT_EQ(dep("services", "mqtt-schema-agent-t-b0000"), "deployments/mqtt-schema-agent-t-b0000");
  EXPECT_EQ(dep("deployments", "alpha"), "none");
  EXPECT_EQ(dep("secrets", "alpha-credentials"), "none");
  EXPECT_EQ(dep("ingresses", "mqtt-schema-agent-t-b0000"), "none");
  EXPECT_EQ(dep("services", "nobody"), "none");
}

TEST(CreationOrderTest, EachCreateAfterItsDependencyWasAnsweredHolds) {
  const std::vector<AuditWrite> writes = {
      Create("secrets", "alpha-credentials", 0, 10), Create("deployments", "alpha", 20, 30),
      Create("services", "alpha", 31, 40), Create("ingresses", "alpha", 41, 50),
      Create("ingresses", "alpha-custom", 41, 55)};
  OrderReport r = CheckCreationOrder(writes, Alpha(), {});
  EXPECT_EQ(r.checked, 3);
  EXPECT_EQ(r.excused, 0);
  EXPECT_THAT(r.violations, IsEmpty());
}

TEST(CreationOrderTest, AServiceCreatedBeforeItsDeploymentsCreateWasAnsweredIsAViolation) {
  // The Deployment's create is in flight (arrived, not answered) when the Service's arrives.
  OrderReport r = CheckCreationOrder(
      {Create("deployments", "alpha", 0, 30), Create("services", "alpha", 20, 25)}, Alpha(), {});
  EXPECT_EQ(r.checked, 1);
  ASSERT_THAT(r.violations, SizeIs(1));
  EXPECT_THAT(r.violations[0],
              AllOf(HasSubstr("Service alpha was created before its Deployment alpha existed "
                              "(record p-alpha; its create arrived 2026-01-01T00:00:00.020000Z"),
                    HasSubstr("had no create answered before it"),
                    HasSubstr("a create of Deployment alpha arrived 2026-01-01T00:00:00.000000Z")));

  // No Deployment create at all (or only refused ones) is no better.
  r = CheckCreationOrder(
      {Create("deployments", "alpha", 0, 10, 409), Create("deployments", "alpha", 11, 12, 500),
       Create("services", "alpha", 20, 25)},
      Alpha(), {});
  ASSERT_THAT(r.violations, SizeIs(1));
  EXPECT_THAT(r.violations[0], HasSubstr("had no create answered before it"));
}

TEST(CreationOrderTest, AnIngressCreatedBeforeItsServiceExistedIsAViolation) {
  OrderReport r = CheckCreationOrder(
      {Create("deployments", "alpha", 0, 10), Create("ingresses", "alpha-custom", 11, 20),
       Create("services", "alpha", 12, 21), Create("ingresses", "alpha", 22, 30)},
      Alpha(), {});
  EXPECT_EQ(r.checked, 3);
  ASSERT_THAT(r.violations, SizeIs(1));
  EXPECT_THAT(r.violations[0],
              HasSubstr("Ingress alpha-custom was created before its Service alpha existed"));
}

TEST(CreationOrderTest, ACreateOverADeletedOrTerminatingDependencyIsAViolation) {
  for (int code : {200, 202}) {
    // The delete arrived before the Service's create did: from then on the Deployment was
    // terminating or gone, however long its answer or its finalizers took.
    OrderReport r = CheckCreationOrder(
        {Create("deployments", "alpha", 0, 10), Delete("deployments", "alpha", 20, 40, code),
         Create("services", "alpha", 30, 35)},
        Alpha(), {});
    ASSERT_THAT(r.violations, SizeIs(1)) << code;
    EXPECT_THAT(r.violations[0], HasSubstr("Deployment alpha was deleted (a delete arrived "
                                           "2026-01-01T00:00:00.020000Z, answered " +
                                           std::to_string(code) + ")"));
  }
  // A delete refused (404, 409 on its precondition) deleted nothing; one that arrived after the
  // Service's create did is no concern of it.
  OrderReport r = CheckCreationOrder(
      {Create("deployments", "alpha", 0, 10), Delete("deployments", "alpha", 20, 25, 409),
       Delete("deployments", "alpha", 26, 27, 404), Create("services", "alpha", 30, 35),
       Delete("deployments", "alpha", 31, 32)},
      Alpha(), {});
  EXPECT_THAT(r.violations, IsEmpty());
}

TEST(CreationOrderTest, ADependencyCreatedAgainAfterItsDeleteHolds) {
  OrderReport r = CheckCreationOrder(
      {Create("deployments", "alpha", 0, 10), Create("services", "alpha", 11, 12),
       Delete("services", "alpha", 20, 21), Delete("deployments", "alpha", 22, 23),
       Create("deployments", "alpha", 40, 50), Create("services", "alpha", 51, 52),
       Create("ingresses", "alpha", 53, 54)},
      Alpha(), {});
  EXPECT_EQ(r.checked, 3);
  EXPECT_THAT(r.violations, IsEmpty());

  // ... but not while the new create is still in flight.
  r = CheckCreationOrder(
      {Create("deployments", "alpha", 0, 10), Delete("deployments", "alpha", 22, 23),
       Create("deployments", "alpha", 40, 50), Create("services", "alpha", 45, 52)},
      Alpha(), {});
  ASSERT_THAT(r.violations, SizeIs(1));
  EXPECT_THAT(r.violations[0], HasSubstr("was deleted"));
}

TEST(CreationOrderTest, AnAgentsServiceNeedsItsDeployment) {
  ObjectOwners owners;
  owners.AddAgent("a-1", "mqtt-schema-agent-t-b0000", kT);
  const std::string name = "mqtt-schema-agent-t-b0000";
  OrderReport good = CheckCreationOrder(
      {Create("deployments", name, 0, 10), Create("services", name, 11, 12)}, owners, {});
  EXPECT_EQ(good.checked, 1);
  EXPECT_THAT(good.violations, IsEmpty());
  OrderReport bad = CheckCreationOrder(
      {Create("services", name, 0, 10), Create("deployments", name, 11, 12)}, owners, {});
  ASSERT_THAT(bad.violations, SizeIs(1));
  EXPECT_THAT(bad.violations[0], HasSubstr("Service " + name +
                                           " was created before its "
                                           "Deployment " +
                                           name + " existed (record a-1;"));
}

TEST(CreationOrderTest, OnlySuccessfulCreatesOfKnownRecordsInTheSameNamespaceCount) {
  OrderReport r = CheckCreationOrder(
      {Create("services", "alpha", 0, 10, 409), Create("services", "alpha", 0, 10, 422),
       Create("ingresses", "alpha", 0, 10, 403), Create("services", "stranger", 0, 10)},
      Alpha(), {});
  EXPECT_EQ(r.checked, 0);
  EXPECT_THAT(r.violations, IsEmpty());
  // A Deployment of that name in another namespace is not this Service's.
  AuditWrite elsewhere = Write("create", "deployments", "alpha", 0, 10, 201, "other");
  r = CheckCreationOrder({elsewhere, Create("services", "alpha", 20, 30)}, Alpha(), {});
  EXPECT_THAT(r.violations, SizeIs(1));
}

TEST(CreationOrderTest, ACreateNoLineProvesIsExcusedOnlyAcrossAClusterKill) {
  // A create of the Deployment committed but unlogged (the cluster killed before it logged the
  // answer) leaves no line: excused when a kill falls between the last event and the create.
  const int64_t kill_us = (kT + 15) * 1000;
  const std::vector<AuditWrite> writes = {Create("services", "alpha", 20, 30)};
  OrderReport r = CheckCreationOrder(writes, Alpha(), {kill_us});
  EXPECT_EQ(r.checked, 1);
  EXPECT_EQ(r.excused, 1);
  EXPECT_THAT(r.violations, IsEmpty());
  // A kill before the Deployment's last delete (or after the create) excuses nothing.
  r = CheckCreationOrder(
      {Create("deployments", "alpha", 0, 10), Delete("deployments", "alpha", 16, 17),
       Create("services", "alpha", 20, 30)},
      Alpha(), {kill_us, (kT + 25) * 1000});
  EXPECT_EQ(r.excused, 0);
  EXPECT_THAT(r.violations, SizeIs(1));
}

RunningClaim Claim(int64_t since_ms) {
  return {"p-alpha", "default", "alpha", kT + since_ms, "Running at generation 1"};
}

TEST(CreationOrderTest, RunningSoonerThanAPodCanBeReadyAfterTheDeploymentsCreateIsAViolation) {
  const std::vector<AuditWrite> writes = {Create("deployments", "alpha", 0, 100)};
  ReadinessReport early = CheckRunningAfterCreate({Claim(600)}, writes, 2500);
  EXPECT_EQ(early.checked, 1);
  ASSERT_THAT(early.violations, SizeIs(1));
  EXPECT_THAT(early.violations[0],
              AllOf(HasSubstr("record p-alpha: Running at generation 1 committed"),
                    HasSubstr("600 ms after the create of its Deployment alpha arrived"),
                    HasSubstr("sooner than 2500 ms")));
  // Once the minimum has passed the claim may be true (the live check judges it).
  EXPECT_THAT(CheckRunningAfterCreate({Claim(2500)}, writes, 2500).violations, IsEmpty());
  // A profile without a minimum checks nothing.
  EXPECT_EQ(CheckRunningAfterCreate({Claim(600)}, writes, 0).checked, 0);
}

TEST(CreationOrderTest, RunningIsJudgedAgainstTheLatestCreateBeforeIt) {
  const std::vector<AuditWrite> writes = {
      Create("deployments", "alpha", 0, 100), Delete("deployments", "alpha", 5000, 5100),
      Create("deployments", "alpha", 9000, 9100), Create("deployments", "alpha", 9500, 9600, 409)};
  // Running long after the first create, before the second: holds. The same claim seen twice
  // (since is kept across generations) is checked once.
  ReadinessReport r = CheckRunningAfterCreate({Claim(4000), Claim(4000), Claim(0)}, writes, 2500);
  EXPECT_EQ(r.checked, 2);
  EXPECT_THAT(r.violations, IsEmpty());
  // Running 1 s after the re-create (the refused create later does not count).
  r = CheckRunningAfterCreate({Claim(10000)}, writes, 2500);
  ASSERT_THAT(r.violations, SizeIs(1));
  EXPECT_THAT(r.violations[0], HasSubstr("1000 ms after"));
  // A claim of no Deployment the log knows is not judged here.
  RunningClaim other = Claim(600);
  other.deployment = "beta";
  EXPECT_THAT(CheckRunningAfterCreate({other}, writes, 2500).violations, IsEmpty());
}

// Against a real API server: a driver that creates a project's objects all at once (here in the
// order that makes it fail every time: Ingress, then Service, then Deployment, each sent from its
// own thread once the one before was answered) fails the check; the same objects created in
// dependency order, each after the one before was answered, hold.
class CreationOrderClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("creation-order-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    cluster::EmbeddedCluster::Options o;
    o.profile = *cluster::BuiltinProfile("instant");
    o.audit_log = (dir_ / "audit.log").string();
    auto c = cluster::EmbeddedCluster::Start(o);
    ASSERT_TRUE(c.ok()) << c.error().ToString();
    cluster_ = std::move(*c);
    kube_ = kube::test_support::ClientFor(*cluster_);
  }
  void TearDown() override {
    cluster_.reset();
    std::filesystem::remove_all(dir_);
  }

  engine::Manifests Render(const std::string& name) {
    engine::ProjectSpec spec;
    spec.team = "t";
    spec.stack.image = "nodered/node-red:4.0";
    spec.custom_hostname = name + ".example.localhost";
    engine::RenderInput in;
    in.id = "p-" + name;
    in.name = name;
    in.config = &config_;
    in.resolved = engine::Resolve(config_, name, spec);
    in.credential = {"c-1", "token-" + name};
    return engine::Render(in);
  }

  // The audit log's writes, once it holds `creates` creates (the API server logs a request
  // just after it sent the answer the client may already hold).
  std::vector<AuditWrite> AuditWrites(size_t creates) {
    std::vector<AuditWrite> writes;
    EXPECT_TRUE(test_support::Eventually([&] {
      std::ifstream in(dir_ / "audit.log");
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      writes = ParseAuditWrites(text);
      return static_cast<size_t>(std::count_if(writes.begin(), writes.end(), [](const auto& w) {
               return w.verb == "create";
             })) >= creates;
    }));
    return writes;
  }

  engine::EngineConfig config_;
  std::filesystem::path dir_;
  std::unique_ptr<cluster::EmbeddedCluster> cluster_;
  std::shared_ptr<kube::Client> kube_;
};

TEST_F(CreationOrderClusterTest, ADriverThatCreatesEverythingAtOnceFailsAndOneInOrderHolds) {
  using kube::ResourceType;
  const std::string ns = "default";
  ObjectOwners owners;
  owners.AddProject("p-good", "good", 0);
  owners.AddProject("p-racy", "racy", 0);

  // In order: each create once the one before was answered.
  engine::Manifests good = Render("good");
  for (const auto& [type, object] : std::vector<std::pair<const ResourceType*, Json>>{
           {&ResourceType::Deployment(), good.deployment},
           {&ResourceType::Service(), good.service},
           {&ResourceType::Ingress(), good.ingress},
           {&ResourceType::Ingress(), *good.custom_ingress}}) {
    auto r = kube_->Create(*type, ns, object);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  OrderReport in_order = CheckCreationOrder(AuditWrites(4), owners, {});
  EXPECT_EQ(in_order.checked, 3);
  EXPECT_THAT(in_order.violations, IsEmpty());

  // The mutant: one thread per object, all started at once.
  engine::Manifests racy = Render("racy");
  Mutex mu;
  CondVar cv;
  int answered = 0;  // 1: the Ingresses, 2: + the Service, 3: + the Deployment
  std::vector<std::string> errors;
  auto create = [&](int turn, std::vector<std::pair<const ResourceType*, Json>> objects) {
    {
      MutexLock lock(mu);
      cv.Wait(mu, [&]() REQUIRES(mu) { return answered == turn; });
    }
    for (const auto& [type, object] : objects) {
      auto r = kube_->Create(*type, ns, object);
      if (!r.ok()) {
        MutexLock lock(mu);
        errors.push_back(r.error().message);
      }
    }
    MutexLock lock(mu);
    ++answered;
    cv.NotifyAll();
  };
  std::vector<std::thread> threads;
  threads.emplace_back(create, 2,
                       std::vector<std::pair<const ResourceType*, Json>>{
                           {&ResourceType::Deployment(), racy.deployment}});
  threads.emplace_back(
      create, 1,
      std::vector<std::pair<const ResourceType*, Json>>{{&ResourceType::Service(), racy.service}});
  threads.emplace_back(create, 0,
                       std::vector<std::pair<const ResourceType*, Json>>{
                           {&ResourceType::Ingress(), racy.ingress},
                           {&ResourceType::Ingress(), *racy.custom_ingress}});
  for (auto& t : threads) t.join();
  ASSERT_THAT(errors, IsEmpty());  // the cluster took them all: only the order is wrong

  OrderReport mutant = CheckCreationOrder(AuditWrites(8), owners, {});
  EXPECT_EQ(mutant.checked, 6);
  ASSERT_THAT(mutant.violations, SizeIs(3));
  EXPECT_THAT(mutant.violations, Each(HasSubstr("(record p-racy;")));
  EXPECT_THAT(mutant.violations[0], HasSubstr("Ingress racy was created before its Service racy"));
  EXPECT_THAT(mutant.violations[1],
              HasSubstr("Ingress racy-custom was created before its Service racy"));
  EXPECT_THAT(mutant.violations[2],
              HasSubstr("Service racy was created before its Deployment racy"));
}

}  // namespace
}  // namespace steward::torture
