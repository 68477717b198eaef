#include "cluster/controllers/kubelet.h"

#include <algorithm>
#include <cstdio>

#include "cluster/controllers/util.h"

namespace steward::cluster::controllers {

namespace {

const EventSource kKubelet{"kubelet", std::string(kNodeName)};
const EventSource kScheduler{"default-scheduler", ""};

int ConditionOrder(std::string_view type) {
  static constexpr std::string_view kOrder[] = {"PodReadyToStartContainers", "Initialized", "Ready",
                                                "ContainersReady", "PodScheduled"};
  for (int i = 0; i < 5; ++i) {
    if (kOrder[i] == type) return i;
  }
  return 5;
}

// Sets a pod condition; lastTransitionTime moves only when the status changes.
void SetPodCondition(Json& status, std::string_view type, bool value, std::string_view reason,
                     const std::string& message, const std::string& now) {
  Json& conds = status["conditions"];
  if (!conds.is_array()) conds = Json::array();
  std::string s = value ? "True" : "False";
  Json* found = nullptr;
  for (auto& c : conds) {
    if (GetString(c, "type") == type) found = &c;
  }
  if (found == nullptr) {
    conds.push_back(Json{{"type", type}, {"lastProbeTime", nullptr}});
    found = &conds.back();
    (*found)["status"] = "";
  }
  Json& c = *found;
  if (GetString(c, "status") != s) {
    c["status"] = s;
    c["lastTransitionTime"] = now;
  }
  if (reason.empty()) {
    c.erase("reason");
    c.erase("message");
  } else {
    c["reason"] = reason;
    c["message"] = message;
  }
  std::vector<Json> sorted(conds.begin(), conds.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const Json& a, const Json& b) {
    return ConditionOrder(GetString(a, "type")) < ConditionOrder(GetString(b, "type"));
  });
  conds = Json(sorted);
}

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

// The reference a container runtime reports: "nginx" -> "docker.io/library/nginx:latest".
std::string NormalizeImage(const std::string& image) {
  std::string out = image;
  size_t slash = image.find('/');
  if (slash == std::string::npos) {
    out = "docker.io/library/" + image;
  } else {
    std::string first = image.substr(0, slash);
    if (first.find('.') == std::string::npos && first.find(':') == std::string::npos &&
        first != "localhost") {
      out = "docker.io/" + image;
    }
  }
  size_t last = out.rfind('/');
  std::string tail = out.substr(last + 1);
  if (tail.find(':') == std::string::npos && tail.find('@') == std::string::npos) out += ":latest";
  return out;
}

std::string Hex64(std::string_view seed) {
  std::string out;
  char buf[9];
  for (uint32_t i = 0; i < 8; ++i) {
    std::snprintf(buf, sizeof buf, "%08x", Fnv32a(seed, 2166136261u + i * 7919u));
    out += buf;
  }
  return out;
}

std::string ImageId(const std::string& normalized) {
  std::string repo = normalized;
  size_t at = repo.find('@');
  if (at != std::string::npos) return repo;
  size_t colon = repo.rfind(':');
  if (colon != std::string::npos && colon > repo.rfind('/')) repo = repo.substr(0, colon);
  return repo + "@sha256:" + Hex64(normalized);
}

std::string GoDuration(std::chrono::milliseconds d) {
  char buf[32];
  if (d < std::chrono::seconds(1)) {
    std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(d.count()));
  } else {
    std::snprintf(buf, sizeof buf, "%.3fs", static_cast<double>(d.count()) / 1000.0);
  }
  return buf;
}

std::string QosClass(const Json& pod) {
  bool any = false, guaranteed = true;
  const Json& cs = AtPath(pod, "spec.containers");
  if (!cs.is_array()) return "BestEffort";
  for (const auto& c : cs) {
    const Json& req = AtPath(c, "resources.requests");
    const Json& lim = AtPath(c, "resources.limits");
    if ((req.is_object() && !req.empty()) || (lim.is_object() && !lim.empty())) any = true;
    for (const char* r : {"cpu", "memory"}) {
      const Json& l = At(lim, r);
      const Json& q = At(req, r);
      if (l.is_null() || (!q.is_null() && q != l)) guaranteed = false;
    }
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

std::string FieldPath(const std::string& container) { return "spec.containers{" + container + "}"; }

Json& StatusOf(Json& pod) {
  Json& s = pod["status"];
  if (!s.is_object()) s = Json::object();
  return s;
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
        status["phase"] = any_fails ? "Pending" : "Running";
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
          if (o.fails) {
            c["imageID"] = "";
            c["started"] = false;
            c["state"] = {{"waiting", {{"reason", "ErrImagePull"}, {"message", o.error}}}};
          } else {
            c["imageID"] = ImageId(o.normalized);
            c["containerID"] = "containerd://" + Hex64(ctx_.random.Uuid());
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
            ic["containerID"] = "containerd://" + Hex64(ctx_.random.Uuid());
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
  SteadyTime now = ctx_.Now();
  if (now < st.due) {
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
