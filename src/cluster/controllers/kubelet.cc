#include "cluster/controllers/kubelet.h"

#include <algorithm>
#include <cstdio>

#include "cluster/controllers/container_env.h"
#include "cluster/controllers/pod_status_fields.h"
#include "cluster/controllers/util.h"
#include "common/json_access.h"
#include "common/log.h"

namespace steward::cluster::controllers {

namespace {

const EventSource kKubelet{"kubelet", std::string(kNodeName)};
const EventSource kScheduler{"default-scheduler", ""};

std::vector<std::string> ContainerNames(const Json& pod, const char* list = "containers") {
  std::vector<std::string> names;
  const Json& cs = AtPath(pod, std::string("spec.") + list);
  if (cs.is_array()) {
    for (const auto& c : cs) names.push_back(GetString(c, "name"));
  }
  return names;
}

std::string Bracketed(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += " ";
    out += names[i];
  }
  return out + "]";
}

std::string FieldPath(const std::string& container) { return "spec.containers{" + container + "}"; }

Json& StatusOf(Json& pod) {
  Json& s = pod["status"];
  if (!s.is_object()) s = Json::object();
  return s;
}

// A probe's port: a number, or the name of one of the container's ports (0 when unknown).
int ProbePort(const Json& container, const Json& port) {
  if (port.is_number_integer()) return port.get<int>();
  if (!port.is_string()) return 0;
  const Json& ports = At(container, "ports");
  if (ports.is_array()) {
    for (const auto& p : ports) {
      if (GetString(p, "name") == port.get<std::string>()) {
        return static_cast<int>(GetInt(p, "containerPort", 0));
      }
    }
  }
  return std::atoi(port.get<std::string>().c_str());
}

ProcessRuntime::Probe ReadinessOf(const Json& container) {
  ProcessRuntime::Probe probe;
  const Json& rp = At(container, "readinessProbe");
  if (!rp.is_object()) return probe;
  if (const Json& http = At(rp, "httpGet"); http.is_object()) {
    probe.kind = ProcessRuntime::Probe::Kind::kHttp;
    probe.port = ProbePort(container, At(http, "port"));
    probe.path = GetString(http, "path", "/");
    if (probe.path.empty() || probe.path.front() != '/') probe.path = "/" + probe.path;
  } else if (const Json& tcp = At(rp, "tcpSocket"); tcp.is_object()) {
    probe.kind = ProcessRuntime::Probe::Kind::kTcp;
    probe.port = ProbePort(container, At(tcp, "port"));
  } else {
    return probe;  // exec and grpc are not run: ready once started
  }
  auto seconds = [&](const char* field, int64_t fallback) {
    return std::chrono::milliseconds(std::max<int64_t>(0, GetInt(rp, field, fallback)) * 1000);
  };
  probe.initial_delay = seconds("initialDelaySeconds", 0);
  probe.period = std::max(seconds("periodSeconds", 10), std::chrono::milliseconds(1000));
  // Probes run one after another on the process runtime's thread, which also reaps and kills:
  // a probe may not hold it longer than 10 s, whatever the pod asks.
  probe.timeout = std::clamp(seconds("timeoutSeconds", 1), std::chrono::milliseconds(1000),
                             std::chrono::milliseconds(10000));
  probe.success_threshold = static_cast<int>(GetInt(rp, "successThreshold", 1));
  probe.failure_threshold = static_cast<int>(GetInt(rp, "failureThreshold", 3));
  return probe;
}

std::chrono::milliseconds GracePeriod(const Json& pod) {
  const Json& d = AtPath(pod, "metadata.deletionGracePeriodSeconds");
  if (d.is_number_integer()) return std::chrono::seconds(d.get<int64_t>());
  const Json& t = AtPath(pod, "spec.terminationGracePeriodSeconds");
  if (t.is_number_integer()) return std::chrono::seconds(t.get<int64_t>());
  return std::chrono::seconds(30);
}

// The status of a process container from what the runtime reports.
void ApplyProcessView(Json& c, const ProcessRuntime::View& v) {
  auto terminated = [&](const ProcessRuntime::WallTime& started) {
    return Json{{"terminated",
                 {{"exitCode", v.exit_code},
                  {"reason", v.exit_code == 0 ? "Completed" : "Error"},
                  {"startedAt", Rfc3339(started)},
                  {"finishedAt", Rfc3339(v.finished_at)}}}};
  };
  c["ready"] = v.running && v.ready;
  c["started"] = v.running;
  c["restartCount"] = v.restart_count;
  if (v.exited) c["lastState"] = terminated(v.last_started_at);
  if (v.running) {
    c["state"] = {{"running", {{"startedAt", Rfc3339(v.started_at)}}}};
  } else if (v.waiting) {
    c["state"] = {{"waiting",
                   {{"reason", "CrashLoopBackOff"},
                    {"message", "back-off restarting failed container " + GetString(c, "name")}}}};
  } else if (v.exited) {
    c["state"] = terminated(v.last_started_at);
  }
}

}  // namespace

Kubelet::Kubelet(ControllerContext& ctx) : ctx_(ctx), pods_(TypeOf("pods")) {}

Kubelet::Stage Kubelet::StageOf(const Json& pod) {
  if (IsDeleting(pod)) return Stage::kTerminating;
  if (IsPodTerminal(pod)) return Stage::kTerminated;
  if (StrAt(pod, "spec.nodeName").empty()) return Stage::kUnscheduled;
  const Json& cs = AtPath(pod, "status.containerStatuses");
  if (cs.is_array()) {
    for (const auto& c : cs) {
      std::string reason = StrAt(c, "state.waiting.reason");
      if (reason == "ErrImagePull") return Stage::kImagePullError;
      if (reason == "ImagePullBackOff") return Stage::kImagePullBackOff;
    }
  }
  if (StrAt(pod, "status.phase") != "Running") return Stage::kStarting;
  if (!IsPodReady(pod)) return Stage::kRunning;
  return Stage::kReady;
}

std::chrono::milliseconds Kubelet::DelayFor(Stage stage, const Json& pod) {
  switch (stage) {
    case Stage::kUnscheduled:
      return ctx_.Delay(&Profile::pod_scheduling);
    case Stage::kStarting:
    case Stage::kImagePullError:
      return ctx_.Delay(&Profile::pod_start);
    case Stage::kRunning:
      return ctx_.Delay(&Profile::pod_ready);
    case Stage::kTerminating: {
      // An unscheduled pod has nothing to stop.
      if (StrAt(pod, "spec.nodeName").empty()) return std::chrono::milliseconds(0);
      auto d = ctx_.Delay(&Profile::pod_termination);
      const Json& grace = AtPath(pod, "metadata.deletionGracePeriodSeconds");
      if (grace.is_number_integer()) {
        d = std::min<std::chrono::milliseconds>(d, std::chrono::seconds(grace.get<int64_t>()));
      }
      return d;
    }
    default:
      return std::chrono::milliseconds(0);
  }
}

void Kubelet::Observe(const Change& c) {
  if (c.gr != "pods") return;
  std::string key = NsName(c.ns, c.name);
  if (c.type == WatchEventType::kDeleted) {
    pods_state_.erase(key);
    ReleaseIp(key);
    // Removed without the kubelet's termination (a forced delete): its processes go now.
    if (ctx_.processes != nullptr) {
      ctx_.processes->Stop(StrAt(c.object, "metadata.uid"), GracePeriod(c.object));
    }
    return;
  }
  std::string ip = StrAt(c.object, "status.podIP");
  if (!ip.empty()) ReserveIp(key, ip);
  Track(key, c.object);
}

void Kubelet::Track(const std::string& key, const Json& pod) {
  Stage stage = StageOf(pod);
  SteadyTime now = ctx_.Now();
  auto [it, inserted] = pods_state_.try_emplace(key);
  PodState& st = it->second;
  if (inserted || st.stage != stage) {
    st = PodState{stage, now, now + DelayFor(stage, pod), false};
  }
  switch (stage) {
    case Stage::kReady:
      // A process pod without its processes (adopted from an earlier run) starts them now.
      if (ctx_.processes != nullptr && !ctx_.processes->Has(StrAt(pod, "metadata.uid")) &&
          !ProcessImages(pod).empty()) {
        ctx_.queue.Add({Work::kPod, key});
      }
      return;
    case Stage::kImagePullBackOff:
    case Stage::kTerminated:
      return;
    case Stage::kTerminating:
      if (!st.killed) {
        ctx_.queue.Add({Work::kPod, key});
        return;
      }
      break;
    default:
      break;
  }
  ctx_.queue.AddAfter({Work::kPod, key}, std::max(st.due - now, SteadyTime::duration::zero()));
}

bool Kubelet::Sync(Work, const std::string& key) {
  auto [ns, name] = SplitNsName(key);
  const CachedObject* co = ctx_.cache.Find("pods", ns, name);
  if (co == nullptr) return true;
  Json pod = co->Parse();
  Stage stage = StageOf(pod);
  auto it = pods_state_.find(key);
  if (it == pods_state_.end() || it->second.stage != stage) {
    Track(key, pod);
    return true;
  }
  PodState& st = it->second;
  if (stage == Stage::kTerminating) return Terminate(key, pod, st);
  if ((stage == Stage::kRunning || stage == Stage::kReady) && ctx_.processes != nullptr &&
      (ctx_.processes->Has(StrAt(pod, "metadata.uid")) || !ProcessImages(pod).empty())) {
    return SyncProcesses(key, pod);
  }
  SteadyTime now = ctx_.Now();
  if (now < st.due) {
    ctx_.queue.AddAfter({Work::kPod, key}, st.due - now);
    return true;
  }
  switch (stage) {
    case Stage::kUnscheduled:
      return Schedule(ns, name, pod);
    case Stage::kStarting:
      return Start(key, pod, st);
    case Stage::kImagePullError:
      return BackOff(pod);
    case Stage::kRunning:
      return MakeReady(pod);
    default:
      return true;
  }
}

std::vector<std::optional<ProcessImage>> Kubelet::ProcessImages(const Json& pod) const {
  std::vector<std::optional<ProcessImage>> out;
  if (ctx_.processes == nullptr) return out;
  auto profile = ctx_.profile.Get();
  if (profile->process_images.empty()) return out;
  bool any = false;
  for (const auto& ct : AtPath(pod, "spec.containers")) {
    const ProcessImage* pi = ProcessImageFor(*profile, GetString(ct, "image"));
    any = any || pi != nullptr;
    out.push_back(pi == nullptr ? std::nullopt : std::optional<ProcessImage>(*pi));
  }
  if (!any) out.clear();
  return out;
}

std::unordered_map<std::string, std::string> Kubelet::StartProcesses(const std::string& key,
                                                                     const Json& pod,
                                                                     const std::string& ip) {
  std::unordered_map<std::string, std::string> errors;
  std::vector<std::optional<ProcessImage>> images = ProcessImages(pod);
  if (images.empty()) return errors;
  Json with_ip = pod;
  with_ip["status"]["podIP"] = ip;
  std::string restart_policy = StrAt(pod, "spec.restartPolicy");
  size_t i = 0;
  for (const auto& ct : AtPath(pod, "spec.containers")) {
    const std::optional<ProcessImage>& pi = images[i++];
    if (!pi) continue;
    ProcessRuntime::Spec spec;
    spec.key = key;
    spec.uid = StrAt(pod, "metadata.uid");
    spec.container = GetString(ct, "name");
    spec.command = pi->command;
    spec.dir = pi->dir;
    for (const auto& [k, v] : pi->env) spec.env.emplace_back(k, v);
    for (auto& kv : ResolveContainerEnv(ctx_.api.storage(), with_ip, ct)) {
      spec.env.push_back(std::move(kv));
    }
    const Json& ports = At(ct, "ports");
    if (ports.is_array()) {
      for (const auto& p : ports) {
        spec.ports.push_back({GetString(p, "name"), static_cast<int>(GetInt(p, "containerPort"))});
      }
    }
    spec.readiness = ReadinessOf(ct);
    if (spec.readiness.kind == ProcessRuntime::Probe::Kind::kNone && !pi->ready_path.empty() &&
        !spec.ports.empty()) {
      spec.readiness.kind = ProcessRuntime::Probe::Kind::kHttp;
      spec.readiness.port = spec.ports.front().container_port;
      spec.readiness.path = pi->ready_path;
      spec.readiness.period = std::chrono::seconds(1);
    }
    if (!restart_policy.empty()) spec.restart_policy = restart_policy;
    Status st = ctx_.processes->Start(spec);
    if (!st.ok()) {
      LOG_WARN("kubelet: pod {} container {}: {}", key, spec.container, st.message());
      errors[spec.container] = st.message();
    }
  }
  return errors;
}

bool Kubelet::SyncProcesses(const std::string& key, const Json& pod) {
  const std::string uid = StrAt(pod, "metadata.uid");
  if (ctx_.processes->stopping()) return true;  // the cluster is stopping: nothing to report
  if (!ctx_.processes->Has(uid)) {
    // A Running pod from an earlier run of the cluster: its processes start now.
    auto errors = StartProcesses(key, pod, StrAt(pod, "status.podIP"));
    if (!errors.empty() && !ctx_.processes->Has(uid)) return false;  // retried with back-off
  }
  std::string now = Rfc3339(ctx_.WallNow());
  std::vector<std::string> names = ContainerNames(pod);
  auto res = ctx_.api.Modify(
      pods_, StrAt(pod, "metadata.namespace"), StrAt(pod, "metadata.name"),
      [&](Json& obj) {
        Json before = At(obj, "status");
        Json& status = StatusOf(obj);
        if (GetString(status, "phase") != "Running") return false;
        Json& cs = status["containerStatuses"];
        if (!cs.is_array()) return false;
        bool all_ready = true, any_running = false, any_waiting = false, all_succeeded = true;
        for (auto& c : cs) {
          auto view = ctx_.processes->Get(uid, GetString(c, "name"));
          if (view) {
            ApplyProcessView(c, *view);
            any_waiting = any_waiting || view->waiting;
            all_succeeded = all_succeeded && view->exited && view->exit_code == 0;
          } else if (AtPath(c, "state.running").is_object()) {
            c["ready"] = true;  // a virtual container of a process pod: ready once running
          }
          if (AtPath(c, "state.running").is_object()) any_running = true;
          if (!At(c, "ready").is_boolean() || !At(c, "ready").get<bool>()) all_ready = false;
        }
        if (!any_running && !any_waiting) status["phase"] = all_succeeded ? "Succeeded" : "Failed";
        std::string unready = "containers with unready status: " + Bracketed(names);
        SetPodCondition(status, "Ready", all_ready, all_ready ? "" : "ContainersNotReady", unready,
                        now);
        SetPodCondition(status, "ContainersReady", all_ready, all_ready ? "" : "ContainersNotReady",
                        unready, now);
        return At(obj, "status") != before;
      },
      Subresource::kStatus);
  return res.ok() || res.error().code == 404;
}

bool Kubelet::Schedule(const std::string& ns, const std::string& name, const Json& pod) {
  auto bound = ctx_.api.Modify(pods_, ns, name, [](Json& obj) {
    if (!StrAt(obj, "spec.nodeName").empty()) return false;
    obj["spec"]["nodeName"] = std::string(kNodeName);
    return true;
  });
  if (!bound.ok()) return bound.error().code == 404;
  ctx_.events.Record(pods_, *bound, "Normal", "Scheduled",
                     "Successfully assigned " + ns + "/" + name + " to " + std::string(kNodeName),
                     kScheduler);
  std::string now = Rfc3339(ctx_.WallNow());
  std::vector<std::string> names = ContainerNames(pod);
  std::vector<std::string> init_names = ContainerNames(pod, "initContainers");
  auto res = ctx_.api.Modify(
      pods_, ns, name,
      [&](Json& obj) {
        Json before = At(obj, "status");
        Json& status = StatusOf(obj);
        status["phase"] = "Pending";
        SetPodCondition(status, "PodReadyToStartContainers", false, "", "", now);
        if (init_names.empty()) {
          SetPodCondition(status, "Initialized", true, "", "", now);
        } else {
          SetPodCondition(status, "Initialized", false, "ContainersNotInitialized",
                          "containers with incomplete status: " + Bracketed(init_names), now);
        }
        std::string unready = "containers with unready status: " + Bracketed(names);
        SetPodCondition(status, "Ready", false, "ContainersNotReady", unready, now);
        SetPodCondition(status, "ContainersReady", false, "ContainersNotReady", unready, now);
        SetPodCondition(status, "PodScheduled", true, "", "", now);
        status["hostIP"] = std::string(kHostIp);
        status["hostIPs"] = Json::array({Json{{"ip", std::string(kHostIp)}}});
        if (!status.contains("startTime")) status["startTime"] = now;
        if (!status.contains("qosClass")) status["qosClass"] = QosClass(obj);
        auto waiting = [&](const Json& ct, const char* reason) {
          return Json{{"name", GetString(ct, "name")},
                      {"image", NormalizeImage(GetString(ct, "image"))},
                      {"imageID", ""},
                      {"lastState", Json::object()},
                      {"ready", false},
                      {"restartCount", 0},
                      {"started", false},
                      {"state", {{"waiting", {{"reason", reason}}}}}};
        };
        Json cs = Json::array();
        for (const auto& ct : AtPath(obj, "spec.containers")) {
          cs.push_back(waiting(ct, "ContainerCreating"));
        }
        status["containerStatuses"] = std::move(cs);
        if (!init_names.empty()) {
          Json ics = Json::array();
          for (const auto& ct : AtPath(obj, "spec.initContainers")) {
            ics.push_back(waiting(ct, "PodInitializing"));
          }
          status["initContainerStatuses"] = std::move(ics);
        }
        return At(obj, "status") != before;
      },
      Subresource::kStatus);
  return res.ok() || res.error().code == 404;
}

bool Kubelet::Start(const std::string& key, const Json& pod, const PodState& st) {
  auto [ns, name] = SplitNsName(key);
  auto profile = ctx_.profile.Get();
  std::string now = Rfc3339(ctx_.WallNow());
  std::string ip = AllocateIp(key);
  auto pull_time = std::chrono::duration_cast<std::chrono::milliseconds>(ctx_.Now() - st.since);

  struct Outcome {
    std::string name, image, normalized;
    bool fails;
    std::string error;
  };
  std::vector<Outcome> outcomes;
  for (const auto& ct : AtPath(pod, "spec.containers")) {
    Outcome o;
    o.name = GetString(ct, "name");
    o.image = GetString(ct, "image");
    o.normalized = NormalizeImage(o.image);
    o.fails = ImageFails(*profile, o.image);
    if (o.fails) {
      o.error = "rpc error: code = NotFound desc = failed to pull and unpack image \"" +
                o.normalized + "\": failed to resolve reference \"" + o.normalized +
                "\": " + o.normalized + ": not found";
    }
    outcomes.push_back(std::move(o));
  }
  bool any_fails = std::any_of(outcomes.begin(), outcomes.end(), [](auto& o) { return o.fails; });
  std::vector<std::string> names = ContainerNames(pod);
  std::unordered_map<std::string, std::string> run_errors;
  const std::string uid = StrAt(pod, "metadata.uid");
  if (!any_fails) run_errors = StartProcesses(key, pod, ip);
  const bool pending = any_fails || !run_errors.empty();

  auto res = ctx_.api.Modify(
      pods_, ns, name,
      [&](Json& obj) {
        Json& status = StatusOf(obj);
        status["podIP"] = ip;
        status["podIPs"] = Json::array({Json{{"ip", ip}}});
        status["hostIP"] = std::string(kHostIp);
        status["hostIPs"] = Json::array({Json{{"ip", std::string(kHostIp)}}});
        if (!status.contains("startTime")) status["startTime"] = now;
        if (!status.contains("qosClass")) status["qosClass"] = QosClass(obj);
        status["phase"] = pending ? "Pending" : "Running";
        SetPodCondition(status, "PodReadyToStartContainers", true, "", "", now);
        SetPodCondition(status, "Initialized", true, "", "", now);
        std::string unready = "containers with unready status: " + Bracketed(names);
        SetPodCondition(status, "Ready", false, "ContainersNotReady", unready, now);
        SetPodCondition(status, "ContainersReady", false, "ContainersNotReady", unready, now);
        SetPodCondition(status, "PodScheduled", true, "", "", now);
        Json cs = Json::array();
        for (const auto& o : outcomes) {
          Json c = {{"name", o.name},
                    {"image", o.normalized},
                    {"lastState", Json::object()},
                    {"ready", false},
                    {"restartCount", 0}};
          auto run_error = run_errors.find(o.name);
          auto view = ctx_.processes != nullptr ? ctx_.processes->Get(uid, o.name) : std::nullopt;
          if (o.fails) {
            c["imageID"] = "";
            c["started"] = false;
            c["state"] = {{"waiting", {{"reason", "ErrImagePull"}, {"message", o.error}}}};
          } else if (run_error != run_errors.end()) {
            c["imageID"] = ImageId(o.normalized);
            c["started"] = false;
            c["state"] = {
                {"waiting", {{"reason", "RunContainerError"}, {"message", run_error->second}}}};
          } else if (view) {
            c["imageID"] = ImageId(o.normalized);
            c["containerID"] = ContainerId(ctx_.random.Uuid());
            ApplyProcessView(c, *view);
          } else {
            c["imageID"] = ImageId(o.normalized);
            c["containerID"] = ContainerId(ctx_.random.Uuid());
            c["started"] = true;
            c["state"] = {{"running", {{"startedAt", now}}}};
          }
          cs.push_back(std::move(c));
        }
        status["containerStatuses"] = std::move(cs);
        if (status.contains("initContainerStatuses")) {
          for (auto& ic : status["initContainerStatuses"]) {
            ic["ready"] = true;
            ic["started"] = false;
            ic["imageID"] = ImageId(GetString(ic, "image"));
            ic["containerID"] = ContainerId(ctx_.random.Uuid());
            ic["state"] = {{"terminated",
                            {{"exitCode", 0},
                             {"reason", "Completed"},
                             {"startedAt", now},
                             {"finishedAt", now}}}};
          }
        }
        return true;
      },
      Subresource::kStatus);
  if (!res.ok()) {
    ReleaseIp(key);
    return res.error().code == 404;
  }
  for (const auto& o : outcomes) {
    std::string fp = FieldPath(o.name);
    ctx_.events.Record(pods_, *res, "Normal", "Pulling", "Pulling image \"" + o.image + "\"",
                       kKubelet, fp);
    if (o.fails) {
      ctx_.events.Record(pods_, *res, "Warning", "Failed",
                         "Failed to pull image \"" + o.image + "\": " + o.error, kKubelet, fp);
      ctx_.events.Record(pods_, *res, "Warning", "Failed", "Error: ErrImagePull", kKubelet, fp);
      continue;
    }
    std::string took = GoDuration(pull_time);
    uint64_t size = 10000000 + Fnv32a(o.normalized) % 90000000;
    ctx_.events.Record(pods_, *res, "Normal", "Pulled",
                       "Successfully pulled image \"" + o.image + "\" in " + took + " (" + took +
                           " including waiting). Image size: " + std::to_string(size) + " bytes.",
                       kKubelet, fp);
    ctx_.events.Record(pods_, *res, "Normal", "Created", "Created container: " + o.name, kKubelet,
                       fp);
    ctx_.events.Record(pods_, *res, "Normal", "Started", "Started container " + o.name, kKubelet,
                       fp);
  }
  return true;
}

bool Kubelet::BackOff(const Json& pod) {
  std::string ns = StrAt(pod, "metadata.namespace");
  std::string name = StrAt(pod, "metadata.name");
  std::vector<std::pair<std::string, std::string>> backed_off;  // (container, image)
  auto res = ctx_.api.Modify(
      pods_, ns, name,
      [&](Json& obj) {
        backed_off.clear();
        Json& cs = StatusOf(obj)["containerStatuses"];
        if (!cs.is_array()) return false;
        const Json& specs = AtPath(obj, "spec.containers");
        for (auto& c : cs) {
          if (StrAt(c, "state.waiting.reason") != "ErrImagePull") continue;
          std::string image = GetString(c, "image");
          for (const auto& ct : specs) {
            if (GetString(ct, "name") == GetString(c, "name")) image = GetString(ct, "image");
          }
          c["state"] = {{"waiting",
                         {{"reason", "ImagePullBackOff"},
                          {"message", "Back-off pulling image \"" + image + "\""}}}};
          backed_off.emplace_back(GetString(c, "name"), image);
        }
        return !backed_off.empty();
      },
      Subresource::kStatus);
  if (!res.ok()) return res.error().code == 404;
  for (const auto& [container, image] : backed_off) {
    ctx_.events.Record(pods_, *res, "Normal", "BackOff", "Back-off pulling image \"" + image + "\"",
                       kKubelet, FieldPath(container));
    ctx_.events.Record(pods_, *res, "Warning", "Failed", "Error: ImagePullBackOff", kKubelet,
                       FieldPath(container));
  }
  return true;
}

bool Kubelet::MakeReady(const Json& pod) {
  std::string now = Rfc3339(ctx_.WallNow());
  auto res = ctx_.api.Modify(
      pods_, StrAt(pod, "metadata.namespace"), StrAt(pod, "metadata.name"),
      [&](Json& obj) {
        Json before = At(obj, "status");
        Json& status = StatusOf(obj);
        if (GetString(status, "phase") != "Running") return false;
        Json& cs = status["containerStatuses"];
        if (cs.is_array()) {
          for (auto& c : cs) {
            if (AtPath(c, "state.running").is_object()) c["ready"] = true;
          }
        }
        SetPodCondition(status, "Ready", true, "", "", now);
        SetPodCondition(status, "ContainersReady", true, "", "", now);
        return At(obj, "status") != before;
      },
      Subresource::kStatus);
  return res.ok() || res.error().code == 404;
}

bool Kubelet::Terminate(const std::string& key, const Json& pod, PodState& st) {
  auto [ns, name] = SplitNsName(key);
  if (!st.killed) {
    st.killed = true;
    if (!StrAt(pod, "spec.nodeName").empty()) {
      std::string now = Rfc3339(ctx_.WallNow());
      std::vector<std::string> names = ContainerNames(pod);
      auto res = ctx_.api.Modify(
          pods_, ns, name,
          [&](Json& obj) {
            Json before = At(obj, "status");
            Json& status = StatusOf(obj);
            Json& cs = status["containerStatuses"];
            if (cs.is_array()) {
              for (auto& c : cs) c["ready"] = false;
            } else {
              status.erase("containerStatuses");
            }
            std::string unready = "containers with unready status: " + Bracketed(names);
            SetPodCondition(status, "Ready", false, "ContainersNotReady", unready, now);
            SetPodCondition(status, "ContainersReady", false, "ContainersNotReady", unready, now);
            return At(obj, "status") != before;
          },
          Subresource::kStatus);
      if (!res.ok() && res.error().code != 404) return false;
      const Json& cs = AtPath(pod, "status.containerStatuses");
      if (cs.is_array()) {
        for (const auto& c : cs) {
          if (!AtPath(c, "state.running").is_object()) continue;
          ctx_.events.Record(pods_, res.ok() ? *res : pod, "Normal", "Killing",
                             "Stopping container " + GetString(c, "name"), kKubelet,
                             FieldPath(GetString(c, "name")));
        }
      }
    }
  }
  if (ctx_.processes != nullptr && ctx_.processes->Has(StrAt(pod, "metadata.uid"))) {
    st.process = true;
    if (!st.stop_sent) {
      st.stop_sent = true;
      ctx_.processes->Stop(StrAt(pod, "metadata.uid"), GracePeriod(pod));
    }
    return true;  // the runtime's notification brings the pod back once its processes are gone
  }
  SteadyTime now = ctx_.Now();
  if (now < st.due && !st.process) {
    ctx_.queue.AddAfter({Work::kPod, key}, st.due - now);
    return true;
  }
  // Other finalizers keep the pod until they are removed (a later change re-queues it).
  const CachedObject* co = ctx_.cache.Find("pods", ns, name);
  if (co != nullptr && !co->finalizers.empty()) return true;
  auto res = ctx_.api.ForceRemove(pods_, ns, name, StrAt(pod, "metadata.uid"));
  return res.ok() || res.error().code == 404 || res.error().code == 409;
}

std::string Kubelet::AllocateIp(const std::string& key) {
  constexpr uint32_t kCapacity = 256 * 254;
  auto it = ip_of_.find(key);
  uint32_t idx;
  if (it != ip_of_.end()) {
    idx = it->second;
  } else {
    idx = next_ip_;
    for (uint32_t tries = 0; tries < kCapacity && used_ips_.count(idx) != 0; ++tries) {
      idx = (idx + 1) % kCapacity;
    }
    next_ip_ = (idx + 1) % kCapacity;
    used_ips_.insert(idx);
    ip_of_[key] = idx;
  }
  return "10.244." + std::to_string(idx / 254) + "." + std::to_string(idx % 254 + 1);
}

void Kubelet::ReserveIp(const std::string& key, const std::string& ip) {
  unsigned a, b, x, y;
  char tail;
  if (std::sscanf(ip.c_str(), "%u.%u.%u.%u%c", &a, &b, &x, &y, &tail) != 4) return;
  if (a != 10 || b != 244 || x > 255 || y < 1 || y > 254) return;
  uint32_t idx = x * 254 + (y - 1);
  auto it = ip_of_.find(key);
  if (it != ip_of_.end()) {
    if (it->second == idx) return;
    used_ips_.erase(it->second);
  }
  ip_of_[key] = idx;
  used_ips_.insert(idx);
}

void Kubelet::ReleaseIp(const std::string& key) {
  auto it = ip_of_.find(key);
  if (it == ip_of_.end()) return;
  used_ips_.erase(it->second);
  ip_of_.erase(it);
}

}  // namespace steward::cluster::controllers
