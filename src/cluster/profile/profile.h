// Profile: how the embedded cluster behaves — the delays of its simulated controllers and the
// faults it injects into its API. Built-in profiles: "instant", "realistic", "hostile".
//
// A profile file is YAML or JSON with the same field names as below (snake_case), for example
//   base: realistic           # start from a built-in profile (default: instant)
//   pod_ready: {fixed_ms: 1000, jitter_ms: 2000}
//   faults: {error_rate_429: 0.05, retry_after_seconds: 1}
// Delays are {fixed_ms, jitter_ms} maps; FaultSpec::compaction_interval is written
// compaction_interval_ms. Unknown fields, wrong types and out-of-range values are errors naming
// the field's dotted path and, for files, the path and line. docs/profiles.md has every field
// and the built-in profiles.
//
// A Profile is a plain value; copy it freely.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/random.h"
#include "common/status.h"

namespace steward::cluster {

struct DelaySpec {
  std::chrono::milliseconds fixed{0};
  std::chrono::milliseconds jitter{0};  // a uniform extra in [0, jitter]
  std::chrono::milliseconds Sample(Random& random) const { return random.Delay(fixed, jitter); }
};

struct FaultSpec {
  // Added latency per verb: get, list, watch, create, update, patch, delete, deletecollection;
  // "*" applies to verbs not named.
  std::map<std::string, DelaySpec> latency;
  double error_rate_429 = 0;  // fraction of requests answered 429 with Retry-After
  int retry_after_seconds = 1;
  double error_rate_500 = 0;
  double error_rate_503 = 0;
  double reset_rate = 0;           // fraction of requests whose connection is reset without answer
  int watch_cut_after_events = 0;  // close a watch stream after N events (0 = never)
  DelaySpec watch_cut_after;       // close a watch stream after this long (0 = never)
  std::chrono::milliseconds compaction_interval{0};  // drop watch history periodically (0 = never)
};

// The process runtime (docs/embedded-cluster.md): a container whose image matches `image` (a
// glob, '*' wildcard) runs `command` (through /bin/sh -c) as a real local process instead of a
// virtual one, in `dir` (empty: the pod's own directory) with `env` added to its environment.
// `ready_path` (e.g. "/"), when set, is the readiness check of a container that declares no
// readinessProbe: an HTTP GET on its first port every second (what a chart would declare), so
// that Ready means the process answers rather than merely runs.
struct ProcessImage {
  std::string image;
  std::string command;
  std::string dir;
  std::map<std::string, std::string> env;
  std::string ready_path;
};

struct Profile {
  std::string name = "instant";
  DelaySpec controller;          // reaction time of the deployment/replicaset controllers
  DelaySpec pod_scheduling;      // pod created → scheduled (nodeName, ContainerCreating)
  DelaySpec pod_start;           // scheduled → containers running (phase Running, not ready)
  DelaySpec pod_ready;           // running → Ready
  DelaySpec pod_termination;     // deletion requested → pod gone
  DelaySpec endpoints;           // pod readiness change → EndpointSlice/Endpoints updated
  DelaySpec load_balancer;       // Ingress created → status.loadBalancer written
  DelaySpec service_finalizer;   // Service deletion → its clean-up finalizer removed
  DelaySpec ingress_finalizer;   // Ingress deletion → its clean-up finalizer removed
  DelaySpec pvc_finalizer;       // PVC deletion → kubernetes.io/pvc-protection removed
  DelaySpec pvc_binding;         // PVC created → Bound
  DelaySpec garbage_collection;  // owner gone → dependents deleted
  // Images matching any of these globs ('*' wildcard) never start: ErrImagePull, and the
  // Deployment reports ProgressDeadlineExceeded after its progressDeadlineSeconds.
  std::vector<std::string> failing_images = {"*.invalid/*", "*:fail"};
  // The admission switch: refuse an Ingress whose backend Service does not exist.
  bool ingress_requires_service = false;
  std::string load_balancer_ip = "127.0.0.1";
  // Scales every Deployment's progressDeadlineSeconds (1 = as written; 0.01 makes a 600 s
  // deadline 6 s), so failing images are reported quickly in tests.
  double progress_deadline_scale = 1.0;
  FaultSpec faults;
  // Images that run as real processes (the first match wins); empty: every pod is virtual.
  std::vector<ProcessImage> process_images;
};

// "instant", "realistic", "hostile", or a path to a profile file (kNotFound naming it when it
// is neither).
StatusOr<Profile> LoadProfile(std::string_view name_or_path);
// Parses profile text (YAML or JSON). `origin` names the source in error messages.
StatusOr<Profile> ParseProfile(std::string_view text, std::string_view origin);
StatusOr<Profile> BuiltinProfile(std::string_view name);
// Sets one field by dotted name ("pod_ready.fixed_ms", "faults.error_rate_429",
// "faults.latency.*.jitter_ms", "ingress_requires_service", "failing_images" = comma list)
// from text, for command-line overrides. Same names, types and ranges as a file; on error
// (kInvalidArgument naming the field) the profile is unchanged.
Status SetProfileField(Profile& profile, std::string_view field, std::string_view value);
// True when `image` matches one of the profile's failing_images globs.
bool ImageFails(const Profile& profile, std::string_view image);
// The first process_images entry whose glob matches `image`; null when none does.
const ProcessImage* ProcessImageFor(const Profile& profile, std::string_view image);

}  // namespace steward::cluster
