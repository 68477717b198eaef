// Several clusters, one of them lost (issue 37): how soon its projects say so, whether the
// others are slowed, and what its return costs.
//
// Set-up: C embedded clusters (profile --profile at its means, each its own seed and data dir),
// reached by one Steward (src/app, SQLite store, engine defaults) through kubeconfigs as real
// clusters are, unreachableGrace --grace. N projects: N/C placed on the first cluster ("lost"),
// started and Running first. Then, in one run, the lost cluster's API server is stopped and at
// the same moment the other (C-1)·N/C projects are started on the others; in the other run (the
// baseline, a fresh set-up) the same starts with nothing stopped. Measured:
//   told     time from the stop until each of the lost cluster's projects says Unknown /
//            ClusterUnreachable (max and median), against the goal grace + 2 s;
//   others   time from the starts until every project of the other clusters is Running, with
//            the outage and without: the ratio, against the goal 1.05;
//   adoption the lost cluster answers again (same port and state): time until its projects are
//            Running, and the Kubernetes writes its engine sent meanwhile (goal 0).
//
//   build/bench/clusters_bench [--projects N] [--clusters C] [--grace D] [--profile P]
//
// Nothing passes or fails; the figures and their goals are printed.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "app/app.h"
#include "bench_util.h"
#include "cluster/embedded_cluster.h"
#include "common/duration.h"
#include "common/log.h"
#include "engine/reconciler/engine.h"
#include "kube/test_support/embedded.h"
#include "steward_bench_util.h"

namespace steward::bench {
namespace {

using std::chrono::milliseconds;

struct Setup {
  std::string dir;
  std::vector<cluster::EmbeddedCluster::Options> options;  // to start a stopped one again
  std::vector<std::unique_ptr<cluster::EmbeddedCluster>> clusters;
  std::unique_ptr<app::App> app;
};

std::string ClusterName(int i) { return "c" + std::to_string(i + 1); }

StatusOr<Setup> StartSetup(int clusters, const cluster::Profile& profile,
                           std::chrono::milliseconds grace) {
  Setup s;
  s.dir = MakeTempDir("steward-clusters-bench");
  if (s.dir.empty()) return Internal("no temporary directory");
  app::ServeConfig config;
  config.listen = "127.0.0.1:0";
  config.data_dir = s.dir + "/steward";
  config.log_level = "error";
  for (int i = 0; i < clusters; ++i) {
    cluster::EmbeddedCluster::Options o;
    o.profile = profile;
    o.data_dir = s.dir + "/" + ClusterName(i);
    o.seed = static_cast<uint64_t>(i + 1);
    ASSIGN_OR_RETURN(auto started, cluster::EmbeddedCluster::Start(o));
    o.api_port = started->api_port();
    o.ingress_port = started->ingress_port();
    const std::string kubeconfig = s.dir + "/" + ClusterName(i) + ".kubeconfig";
    RETURN_IF_ERROR(started->WriteKubeconfig(kubeconfig));
    Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "steward"}}}};
    if (auto created = kube::test_support::ClientFor(*started)->Create(
            kube::ResourceType::Namespace(), "", ns);
        !created.ok()) {
      return Unavailable(ClusterName(i) + ": namespace: " + created.error().ToString());
    }
    app::ServeConfig::Cluster c;
    c.name = ClusterName(i);
    c.cluster = app::ClusterSource::kKubeconfig;
    c.kubeconfig = kubeconfig;
    c.unreachable_grace = grace;
    c.engine.url_port = 8443;  // URLs that do not change when an ingress port does
    config.clusters.push_back(std::move(c));
    s.options.push_back(o);
    s.clusters.push_back(std::move(started));
  }
  ASSIGN_OR_RETURN(s.app, app::App::Start(config));
  return s;
}

// Puts `names` with start=true on `cluster` through the app's intents.
Status StartProjects(app::App& app, const std::vector<std::string>& names,
                     const std::string& cluster) {
  for (const std::string& name : names) {
    Json spec = BenchProjectSpec();
    spec["cluster"] = cluster;
    RETURN_IF_ERROR(app.intents().Put(name, spec, "", /*start=*/true).status());
  }
  return Status::Ok();
}

// Waits until every record of `names` is in `phase` (polling the store every 20 ms); returns
// for each the time it was first seen so, from `t0`, in seconds; empty on timeout.
std::vector<double> WaitForPhase(app::App& app, const std::vector<std::string>& names,
                                 const std::string& phase, BenchClock::time_point t0,
                                 std::chrono::seconds timeout) {
  std::map<std::string, double> seen;
  while (seen.size() < names.size()) {
    if (BenchClock::now() - t0 > timeout) return {};
    for (const std::string& name : names) {
      if (seen.count(name)) continue;
      auto r = app.store().GetProjectByName(name);
      if (r.ok() && r->phase == phase &&
          (phase != "Running" || r->observed_generation == r->generation)) {
        seen[name] = Seconds(BenchClock::now() - t0);
      }
    }
    std::this_thread::sleep_for(milliseconds(20));  // a poll interval, not a synchronisation
  }
  std::vector<double> out;
  for (const auto& [name, s] : seen) out.push_back(s);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> Names(const std::string& prefix, long count) {
  std::vector<std::string> out;
  for (long i = 0; i < count; ++i) out.push_back(prefix + "-" + std::to_string(i));
  return out;
}

// One run: the lost cluster's projects Running, then (outage or not) the others' starts.
// Returns the seconds until every other project is Running; prints the outage figures.
StatusOr<double> Run(bool outage, long n, int clusters, const cluster::Profile& profile,
                     std::chrono::milliseconds grace) {
  ASSIGN_OR_RETURN(Setup s, StartSetup(clusters, profile, grace));
  app::App& app = *s.app;
  const long per_cluster = n / clusters;
  const std::vector<std::string> lost = Names("lost", per_cluster);
  RETURN_IF_ERROR(StartProjects(app, lost, ClusterName(0)));
  if (WaitForPhase(app, lost, "Running", BenchClock::now(), std::chrono::seconds(600)).empty()) {
    return Status(StatusCode::kDeadlineExceeded, "the lost cluster's projects did not all run");
  }
  std::vector<std::string> others;
  std::vector<std::vector<std::string>> by_cluster;
  for (int c = 1; c < clusters; ++c) {
    by_cluster.push_back(Names(ClusterName(c), per_cluster));
    others.insert(others.end(), by_cluster.back().begin(), by_cluster.back().end());
  }
  engine::Engine& lost_engine = *app.engine_of(ClusterName(0));
  const uint64_t writes_before = lost_engine.stats().writes;
  const auto t0 = BenchClock::now();
  if (outage) s.clusters[0]->Stop();
  for (int c = 1; c < clusters; ++c) {
    RETURN_IF_ERROR(StartProjects(app, by_cluster[c - 1], ClusterName(c)));
  }
  // Both watched at once: the others' times must not wait for the lost cluster's.
  std::vector<double> told;
  std::thread telling;
  if (outage) {
    telling = std::thread(
        [&] { told = WaitForPhase(app, lost, "Unknown", t0, std::chrono::seconds(600)); });
  }
  const std::vector<double> running =
      WaitForPhase(app, others, "Running", t0, std::chrono::seconds(600));
  if (telling.joinable()) telling.join();
  if (outage && told.empty()) {
    return Status(StatusCode::kDeadlineExceeded, "the lost cluster's projects were not all told");
  }
  if (running.empty())
    return Status(StatusCode::kDeadlineExceeded, "the other clusters' projects did not all run");
  const double others_s = running.back();
  if (!outage) return others_s;

  const double goal = std::chrono::duration<double>(grace).count() + 2;
  std::printf(
      "  told:     %ld projects Unknown/ClusterUnreachable after the stop: median %.2f s, "
      "max %.2f s (goal ≤ grace + 2 s = %.2f s)\n",
      per_cluster, told[told.size() / 2], told.back(), goal);
  auto back = cluster::EmbeddedCluster::Start(s.options[0]);
  if (!back.ok()) return back.error();
  const auto t1 = BenchClock::now();
  const std::vector<double> adopted =
      WaitForPhase(app, lost, "Running", t1, std::chrono::seconds(600));
  if (adopted.empty())
    return Status(StatusCode::kDeadlineExceeded, "the lost cluster's projects did not run again");
  std::printf(
      "  adoption: the cluster back, all %ld Running again after %.2f s; Kubernetes "
      "writes of its engine since the stop: %llu (goal 0)\n",
      per_cluster, adopted.back(),
      static_cast<unsigned long long>(lost_engine.stats().writes - writes_before));
  app.Stop();
  (*back)->Stop();
  return others_s;
}

int Main(int argc, char** argv) {
  long n = 1000;
  int clusters = 3;
  std::string grace_text = "5s";
  std::string profile_name = "realistic";
  CLI::App cli("A cluster lost among several: how soon it is told, whether the others slow.",
               "clusters_bench");
  AddFlag(cli, "--projects", &n, "projects over all clusters")->check(CLI::Range(3L, 100000L));
  AddFlag(cli, "--clusters", &clusters, "clusters (the first is lost)")->check(CLI::Range(2, 8));
  AddFlag(cli, "--grace", &grace_text, "clusters[].unreachableGrace");
  AddFlag(cli, "--profile", &profile_name, "cluster profile (at its means)");
  if (auto exit_code = ParseFlags(cli, argc, argv)) return *exit_code;
  auto grace = ParseDuration(grace_text);
  if (!grace || *grace < std::chrono::seconds(1)) {
    std::fprintf(stderr, "--grace: a duration of at least 1s\n");
    return 2;
  }
  auto loaded = cluster::LoadProfile(profile_name);
  if (!loaded.ok()) {
    std::fprintf(stderr, "--profile: %s\n", loaded.error().ToString().c_str());
    return 2;
  }
  const cluster::Profile profile = MeanProfile(*loaded);
  spdlog::set_level(spdlog::level::err);
  std::printf("clusters_bench: %ld cores, load average %s before the run\ncommand: %s\n",
              sysconf(_SC_NPROCESSORS_ONLN), LoadAverage().c_str(),
              CommandLine(argc, argv).c_str());
  std::printf("%ld projects over %d clusters (%ld each), profile %s at its means, grace %s\n", n,
              clusters, n / clusters, profile_name.c_str(), grace_text.c_str());
  std::printf("baseline (nothing stopped):\n");
  auto base = Run(false, n, clusters, profile, *grace);
  if (!base.ok()) {
    std::fprintf(stderr, "baseline: %s\n", base.error().ToString().c_str());
    return 1;
  }
  std::printf("  others:   %ld starts on the other clusters all Running after %.2f s\n",
              n / clusters * (clusters - 1), *base);
  std::printf("outage (the first cluster's API server stopped as the others' starts begin):\n");
  auto lost = Run(true, n, clusters, profile, *grace);
  if (!lost.ok()) {
    std::fprintf(stderr, "outage: %s\n", lost.error().ToString().c_str());
    return 1;
  }
  std::printf("  others:   all Running after %.2f s; ratio to the baseline %.3f (goal ≤ 1.05)\n",
              *lost, *lost / *base);
  std::printf("load average %s after the run\n", LoadAverage().c_str());
  return 0;
}

}  // namespace
}  // namespace steward::bench

int main(int argc, char** argv) { return steward::bench::Main(argc, argv); }
