#include "cluster/profile/profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace steward::cluster {
namespace {

using std::chrono::milliseconds;
using ::testing::AllOf;
using ::testing::HasSubstr;

// The smallest and largest values a delay can sample.
milliseconds Min(const DelaySpec& d) { return d.fixed; }
milliseconds Max(const DelaySpec& d) { return d.fixed + d.jitter; }

TEST(BuiltinProfileTest, InstantHasNoDelaysAndNoFaults) {
  auto p = BuiltinProfile("instant");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->name, "instant");
  for (const DelaySpec* d :
       {&p->controller, &p->pod_scheduling, &p->pod_start, &p->pod_ready, &p->pod_termination,
        &p->endpoints, &p->load_balancer, &p->service_finalizer, &p->ingress_finalizer,
        &p->pvc_finalizer, &p->pvc_binding, &p->garbage_collection}) {
    EXPECT_EQ(Max(*d), milliseconds(0));
  }
  EXPECT_TRUE(p->faults.latency.empty());
  EXPECT_EQ(p->faults.error_rate_429, 0);
  EXPECT_EQ(p->faults.reset_rate, 0);
  EXPECT_EQ(p->faults.watch_cut_after_events, 0);
  EXPECT_EQ(p->faults.compaction_interval, milliseconds(0));
  EXPECT_FALSE(p->ingress_requires_service);
}

TEST(BuiltinProfileTest, RealisticPodsAreReadyWithinOneToThreeSeconds) {
  auto p = BuiltinProfile("realistic");
  ASSERT_TRUE(p.ok());
  // Creation -> scheduled -> running -> Ready.
  EXPECT_EQ(Min(p->pod_scheduling) + Min(p->pod_start) + Min(p->pod_ready), milliseconds(1000));
  EXPECT_EQ(Max(p->pod_scheduling) + Max(p->pod_start) + Max(p->pod_ready), milliseconds(3000));
  EXPECT_EQ(Min(p->controller), milliseconds(20));
  EXPECT_EQ(Max(p->controller), milliseconds(100));
  EXPECT_EQ(Min(p->load_balancer), milliseconds(500));
  EXPECT_EQ(Max(p->load_balancer), milliseconds(1500));
  EXPECT_EQ(Min(p->service_finalizer), milliseconds(500));
  EXPECT_EQ(Max(p->ingress_finalizer), milliseconds(2000));
  EXPECT_EQ(Min(p->pod_termination), milliseconds(1000));
  EXPECT_EQ(Max(p->pod_termination), milliseconds(2000));
  EXPECT_EQ(Max(p->pvc_binding), milliseconds(1000));
  EXPECT_EQ(Min(p->endpoints), milliseconds(50));
  EXPECT_EQ(Max(p->endpoints), milliseconds(200));
  EXPECT_EQ(Max(p->garbage_collection), milliseconds(300));
  EXPECT_EQ(p->faults.error_rate_429, 0);
  EXPECT_EQ(p->faults.error_rate_500, 0);
  EXPECT_TRUE(p->faults.latency.empty());
}

TEST(BuiltinProfileTest, HostileIsSlowerAndInjectsFaults) {
  auto realistic = BuiltinProfile("realistic");
  auto p = BuiltinProfile("hostile");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(realistic.ok());
  EXPECT_GE(Max(p->pod_ready), 2 * Max(realistic->pod_ready));
  EXPECT_GE(Max(p->load_balancer), 2 * Max(realistic->load_balancer));
  EXPECT_DOUBLE_EQ(p->faults.error_rate_429, 0.03);
  EXPECT_EQ(p->faults.retry_after_seconds, 1);
  EXPECT_DOUBLE_EQ(p->faults.error_rate_500, 0.01);
  EXPECT_DOUBLE_EQ(p->faults.error_rate_503, 0.01);
  EXPECT_DOUBLE_EQ(p->faults.reset_rate, 0.005);
  ASSERT_EQ(p->faults.latency.count("*"), 1u);
  EXPECT_EQ(Min(p->faults.latency.at("*")), milliseconds(0));
  EXPECT_EQ(Max(p->faults.latency.at("*")), milliseconds(200));
  EXPECT_EQ(Min(p->faults.watch_cut_after), milliseconds(20000));
  EXPECT_EQ(Max(p->faults.watch_cut_after), milliseconds(60000));
  EXPECT_EQ(p->faults.watch_cut_after_events, 200);
  EXPECT_EQ(p->faults.compaction_interval, milliseconds(30000));
  EXPECT_TRUE(p->ingress_requires_service);
}

TEST(BuiltinProfileTest, UnknownNameIsAnError) {
  auto p = BuiltinProfile("fast");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(p.error().message(), AllOf(HasSubstr("fast"), HasSubstr("realistic")));
}

TEST(ParseProfileTest, YamlOverridesItsBase) {
  auto p = ParseProfile(R"(
base: realistic
name: slow-pods
pod_ready: {fixed_ms: 5000}
failing_images: ["bad/*"]
ingress_requires_service: true
load_balancer_ip: 10.0.0.9
progress_deadline_scale: 0.01
faults:
  error_rate_429: 0.05
  retry_after_seconds: 2
  latency:
    get: {fixed_ms: 10, jitter_ms: 5}
    "*": {jitter_ms: 50}
  watch_cut_after: {fixed_ms: 1000}
  watch_cut_after_events: 7
  compaction_interval_ms: 2500
)",
                        "slow.yaml");
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_EQ(p->name, "slow-pods");
  // A delay object in a file states the whole delay: jitter not given is 0.
  EXPECT_EQ(p->pod_ready.fixed, milliseconds(5000));
  EXPECT_EQ(p->pod_ready.jitter, milliseconds(0));
  // Fields not mentioned keep the base's values.
  EXPECT_EQ(p->pod_start.fixed, milliseconds(300));
  EXPECT_EQ(p->pod_start.jitter, milliseconds(400));
  EXPECT_EQ(p->failing_images, std::vector<std::string>{"bad/*"});
  EXPECT_TRUE(p->ingress_requires_service);
  EXPECT_EQ(p->load_balancer_ip, "10.0.0.9");
  EXPECT_DOUBLE_EQ(p->progress_deadline_scale, 0.01);
  EXPECT_DOUBLE_EQ(p->faults.error_rate_429, 0.05);
  EXPECT_EQ(p->faults.retry_after_seconds, 2);
  EXPECT_EQ(p->faults.latency.at("get").fixed, milliseconds(10));
  EXPECT_EQ(p->faults.latency.at("get").jitter, milliseconds(5));
  EXPECT_EQ(p->faults.latency.at("*").jitter, milliseconds(50));
  EXPECT_EQ(p->faults.watch_cut_after.fixed, milliseconds(1000));
  EXPECT_EQ(p->faults.watch_cut_after_events, 7);
  EXPECT_EQ(p->faults.compaction_interval, milliseconds(2500));
}

TEST(ParseProfileTest, JsonIsAccepted) {
  auto p = ParseProfile(
      R"({"base": "hostile", "faults": {"error_rate_500": 0.2}, "controller": {"fixed_ms": 1}})",
      "p.json");
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_EQ(p->name, "hostile");
  EXPECT_DOUBLE_EQ(p->faults.error_rate_500, 0.2);
  EXPECT_DOUBLE_EQ(p->faults.error_rate_429, 0.03);  // from the base
  EXPECT_EQ(p->controller.fixed, milliseconds(1));
  EXPECT_EQ(p->controller.jitter, milliseconds(0));
}

TEST(ParseProfileTest, EmptyTextIsInstant) {
  auto p = ParseProfile("", "empty.yaml");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->name, "instant");
}

TEST(ParseProfileTest, UnknownTopLevelFieldNamesFieldOriginAndLine) {
  auto p = ParseProfile("base: realistic\npod_redy: {fixed_ms: 1}\n", "/etc/steward/p.yaml");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(p.error().message(), AllOf(HasSubstr("/etc/steward/p.yaml:2:1"),
                                         HasSubstr("\"pod_redy\""), HasSubstr("unknown field")));
}

TEST(ParseProfileTest, UnknownNestedFieldsNameTheirPath) {
  auto delay = ParseProfile("pod_ready:\n  fixed: 100\n", "a.yaml");
  ASSERT_FALSE(delay.ok());
  EXPECT_THAT(delay.error().message(),
              AllOf(HasSubstr("a.yaml:2:3"), HasSubstr("\"pod_ready.fixed\"")));

  auto fault = ParseProfile("faults:\n  error_rate_404: 0.1\n", "b.yaml");
  ASSERT_FALSE(fault.ok());
  EXPECT_THAT(fault.error().message(), HasSubstr("\"faults.error_rate_404\""));

  auto verb = ParseProfile("faults: {latency: {fetch: {fixed_ms: 1}}}", "c.yaml");
  ASSERT_FALSE(verb.ok());
  EXPECT_THAT(verb.error().message(),
              AllOf(HasSubstr("\"faults.latency.fetch\""), HasSubstr("unknown verb")));
}

TEST(ParseProfileTest, WrongTypesNameTheField) {
  auto s = ParseProfile("pod_ready: 500\n", "t.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message(), AllOf(HasSubstr("\"pod_ready\""), HasSubstr("expected a map")));

  auto i = ParseProfile("pod_ready: {fixed_ms: soon}\n", "t.yaml");
  ASSERT_FALSE(i.ok());
  EXPECT_THAT(i.error().message(),
              AllOf(HasSubstr("t.yaml:1:23"), HasSubstr("\"pod_ready.fixed_ms\""),
                    HasSubstr("integer"), HasSubstr("soon")));

  auto b = ParseProfile("ingress_requires_service: maybe\n", "t.yaml");
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.error().message(), HasSubstr("\"ingress_requires_service\""));

  auto l = ParseProfile("failing_images: nginx\n", "t.yaml");
  ASSERT_FALSE(l.ok());
  EXPECT_THAT(l.error().message(), AllOf(HasSubstr("\"failing_images\""), HasSubstr("list")));

  auto neg = ParseProfile("pod_ready: {fixed_ms: -5}\n", "t.yaml");
  ASSERT_FALSE(neg.ok());
  EXPECT_THAT(neg.error().message(), HasSubstr("negative"));

  auto rate = ParseProfile("faults: {reset_rate: 1.5}\n", "t.yaml");
  ASSERT_FALSE(rate.ok());
  EXPECT_THAT(rate.error().message(), AllOf(HasSubstr("\"faults.reset_rate\""), HasSubstr("1.5")));

  auto scale = ParseProfile("progress_deadline_scale: 0\n", "t.yaml");
  ASSERT_FALSE(scale.ok());
  EXPECT_THAT(scale.error().message(), HasSubstr("progress_deadline_scale"));
}

TEST(ParseProfileTest, BadBaseAndMalformedTextAreErrors) {
  auto base = ParseProfile("base: turbo\n", "x.yaml");
  ASSERT_FALSE(base.ok());
  EXPECT_THAT(base.error().message(), AllOf(HasSubstr("x.yaml:1:7"), HasSubstr("turbo")));

  auto syntax = ParseProfile("pod_ready: {fixed_ms: 1\n", "y.yaml");
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(syntax.error().message(), AllOf(HasSubstr("y.yaml"), HasSubstr("malformed")));

  auto list = ParseProfile("- realistic\n", "z.yaml");
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(list.error().message(), HasSubstr("must be a map"));
}

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    path_ = (std::filesystem::temp_directory_path() /
             ("steward_profile_test_" + std::to_string(::getpid()) + "_" +
              std::to_string(counter_++) + ".yaml"))
                .string();
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

TEST(LoadProfileTest, BuiltinNames) {
  auto p = LoadProfile("hostile");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->name, "hostile");
}

TEST(LoadProfileTest, ReadsAFile) {
  TempFile file("base: realistic\npod_ready: {fixed_ms: 42}\n");
  auto p = LoadProfile(file.path());
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_EQ(p->pod_ready.fixed, milliseconds(42));
  EXPECT_EQ(p->pod_start.fixed, milliseconds(300));
}

TEST(LoadProfileTest, ErrorsInAFileNameThePath) {
  TempFile file("base: realistic\nbogus: 1\n");
  auto p = LoadProfile(file.path());
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.error().message(), AllOf(HasSubstr(file.path() + ":2:1"), HasSubstr("bogus")));
}

TEST(LoadProfileTest, MissingFileIsNamed) {
  auto p = LoadProfile("/nonexistent/dir/profile.yaml");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code(), StatusCode::kNotFound);
  EXPECT_THAT(p.error().message(),
              AllOf(HasSubstr("/nonexistent/dir/profile.yaml"), HasSubstr("built-in")));
}

TEST(SetProfileFieldTest, SetsLeavesByDottedName) {
  Profile p = *BuiltinProfile("realistic");
  ASSERT_TRUE(SetProfileField(p, "pod_ready.fixed_ms", "500").ok());
  EXPECT_EQ(p.pod_ready.fixed, milliseconds(500));
  EXPECT_EQ(p.pod_ready.jitter, milliseconds(1400));  // untouched
  ASSERT_TRUE(SetProfileField(p, "faults.error_rate_429", "0.1").ok());
  EXPECT_DOUBLE_EQ(p.faults.error_rate_429, 0.1);
  ASSERT_TRUE(SetProfileField(p, "ingress_requires_service", "true").ok());
  EXPECT_TRUE(p.ingress_requires_service);
  ASSERT_TRUE(SetProfileField(p, "failing_images", "a,b/*").ok());
  EXPECT_EQ(p.failing_images, (std::vector<std::string>{"a", "b/*"}));
  ASSERT_TRUE(SetProfileField(p, "failing_images", "").ok());
  EXPECT_TRUE(p.failing_images.empty());
  ASSERT_TRUE(SetProfileField(p, "faults.latency.*.jitter_ms", "25").ok());
  EXPECT_EQ(p.faults.latency.at("*").jitter, milliseconds(25));
  ASSERT_TRUE(SetProfileField(p, "faults.watch_cut_after.fixed_ms", "3000").ok());
  EXPECT_EQ(p.faults.watch_cut_after.fixed, milliseconds(3000));
  ASSERT_TRUE(SetProfileField(p, "faults.compaction_interval_ms", "100").ok());
  EXPECT_EQ(p.faults.compaction_interval, milliseconds(100));
  ASSERT_TRUE(SetProfileField(p, "load_balancer_ip", "192.0.2.1").ok());
  EXPECT_EQ(p.load_balancer_ip, "192.0.2.1");
}

TEST(SetProfileFieldTest, ErrorsNameTheFieldAndLeaveTheProfileUnchanged) {
  Profile p = *BuiltinProfile("realistic");
  const Profile before = p;

  Status unknown = SetProfileField(p, "pod_redy.fixed_ms", "1");
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.message(), HasSubstr("\"pod_redy\""));

  Status type = SetProfileField(p, "pod_ready.fixed_ms", "fast");
  EXPECT_THAT(type.message(), AllOf(HasSubstr("\"pod_ready.fixed_ms\""), HasSubstr("fast")));

  Status leaf = SetProfileField(p, "pod_ready", "500");
  EXPECT_THAT(leaf.message(), HasSubstr("\"pod_ready\""));

  Status rate = SetProfileField(p, "faults.error_rate_503", "2");
  EXPECT_THAT(rate.message(), HasSubstr("\"faults.error_rate_503\""));

  Status empty = SetProfileField(p, "faults..x", "2");
  EXPECT_FALSE(empty.ok());

  Status base = SetProfileField(p, "base", "hostile");
  EXPECT_FALSE(base.ok());

  EXPECT_EQ(p.pod_ready.fixed, before.pod_ready.fixed);
  EXPECT_EQ(p.faults.error_rate_503, before.faults.error_rate_503);
}

TEST(ImageFailsTest, MatchesGlobs) {
  Profile p;  // defaults: "*.invalid/*", "*:fail"
  EXPECT_TRUE(ImageFails(p, "registry.invalid/nodered:1"));
  EXPECT_TRUE(ImageFails(p, "nodered/node-red:fail"));
  EXPECT_FALSE(ImageFails(p, "nodered/node-red:4.0"));
  EXPECT_FALSE(ImageFails(p, "registry.invalid"));
  p.failing_images = {"exact:1", "a?c", "*"};
  EXPECT_TRUE(ImageFails(p, "anything"));
  p.failing_images = {"exact:1", "a?c"};
  EXPECT_TRUE(ImageFails(p, "exact:1"));
  EXPECT_FALSE(ImageFails(p, "exact:10"));
  EXPECT_TRUE(ImageFails(p, "abc"));
  EXPECT_FALSE(ImageFails(p, "ac"));
  p.failing_images.clear();
  EXPECT_FALSE(ImageFails(p, "registry.invalid/x"));
}

TEST(ProfileTest, ProcessImagesAreReadInOrderAndTheFirstMatchWins) {
  auto p = ParseProfile(R"(base: instant
process_images:
  - image: "flowfuse/node-red*"
    command: node red.js --settings s.js
    ready_path: /
    env: {NODE_PATH: /opt/nr}
  - {image: "*", command: "sleep 1000", dir: /srv}
)",
                        "t.yaml");
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->process_images.size(), 2u);
  const ProcessImage* nr = ProcessImageFor(*p, "flowfuse/node-red:4.0");
  ASSERT_NE(nr, nullptr);
  EXPECT_EQ(nr->command, "node red.js --settings s.js");
  EXPECT_EQ(nr->ready_path, "/");
  EXPECT_EQ(nr->env.at("NODE_PATH"), "/opt/nr");
  const ProcessImage* any = ProcessImageFor(*p, "nginx");
  ASSERT_NE(any, nullptr);
  EXPECT_EQ(any->dir, "/srv");
  EXPECT_EQ(ProcessImageFor(Profile{}, "nginx"), nullptr);

  auto missing = ParseProfile("process_images: [{image: x}]\n", "t.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message(), HasSubstr("process_images[0]"));
  auto unknown = ParseProfile("process_images: [{image: x, command: y, cmd: z}]\n", "t.yaml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message(), HasSubstr("process_images[0].cmd"));
}

}  // namespace
}  // namespace steward::cluster
