#include "cluster/controllers/endpoints_controller.h"

#include <algorithm>
#include <map>

#include "cluster/controllers/util.h"

namespace steward::cluster::controllers {

namespace {

constexpr std::string_view kServiceNameLabel = "kubernetes.io/service-name";
constexpr std::string_view kManagedByLabel = "endpointslice.kubernetes.io/managed-by";
constexpr std::string_view kManagedBy = "endpointslice-controller.k8s.io";
constexpr std::string_view kHeadlessLabel = "service.kubernetes.io/headless";
constexpr size_t kMaxEndpointsPerSlice = 100;

std::string Bucket(const std::string& ns, const std::string& k, const std::string& v) {
  std::string b;
  b.reserve(ns.size() + k.size() + v.size() + 2);
  b.append(ns).push_back('\x1f');
  b.append(k).push_back('=');
  b.append(v);
  return b;
}

std::optional<int64_t> ResolveTargetPort(const Json& pod, const Json& svc_port) {
  Json tp = At(svc_port, "targetPort");
  if (tp.is_null()) tp = At(svc_port, "port");
  if (tp.is_number_integer()) return tp.get<int64_t>();
  if (!tp.is_string()) return std::nullopt;
  std::string name = tp.get<std::string>();
  if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit)) {
    return std::stoll(name);
  }
  std::string protocol = GetString(svc_port, "protocol", "TCP");
  for (const auto& ct : AtPath(pod, "spec.containers")) {
    for (const auto& p : At(ct, "ports")) {
      if (GetString(p, "name") == name && GetString(p, "protocol", "TCP") == protocol) {
        return IntAt(p, "containerPort");
      }
    }
  }
  return std::nullopt;
}

// The service's ports as resolved for one pod; `slice_form` writes name "" for unnamed ports
// (discovery/v1), the Endpoints form omits it.
Json ResolvePorts(const Json& svc, const Json& pod, bool slice_form) {
  Json out = Json::array();
  for (const auto& sp : AtPath(svc, "spec.ports")) {
    auto port = ResolveTargetPort(pod, sp);
    if (!port) continue;
    Json p = Json::object();
    std::string name = GetString(sp, "name");
    if (slice_form || !name.empty()) p["name"] = name;
    p["port"] = *port;
    p["protocol"] = GetString(sp, "protocol", "TCP");
    if (At(sp, "appProtocol").is_string()) p["appProtocol"] = sp["appProtocol"];
    out.push_back(std::move(p));
  }
  return out;
}

Json TargetRef(const Json& pod) {
  return Json{{"kind", "Pod"},
              {"namespace", StrAt(pod, "metadata.namespace")},
              {"name", StrAt(pod, "metadata.name")},
              {"uid", StrAt(pod, "metadata.uid")}};
}

Json ServiceLabels(const Json& svc) {
  Json labels = AtPath(svc, "metadata.labels");
  if (!labels.is_object()) labels = Json::object();
  if (StrAt(svc, "spec.clusterIP") == "None") labels[std::string(kHeadlessLabel)] = "";
  return labels;
}

// null and [] are the same list on the wire.
Json NormList(const Json& v) { return v.is_null() ? Json::array() : v; }

}  // namespace

EndpointsController::EndpointsController(ControllerContext& ctx)
    : ctx_(ctx),
      services_(TypeOf("services")),
      endpoints_(TypeOf("endpoints")),
      slices_(TypeOf("endpointslices.discovery.k8s.io")) {}

void EndpointsController::Enqueue(const std::string& ns, const std::string& service) {
  ctx_.queue.AddAfter({Work::kEndpoints, NsName(ns, service)}, ctx_.Delay(&Profile::endpoints));
}

void EndpointsController::Observe(const Change& c) {
  if (c.gr == "pods") {
    ObservePod(c);
  } else if (c.gr == "services") {
    ObserveService(c);
  } else if (c.gr == "endpointslices.discovery.k8s.io") {
    ObserveSlice(c);
  } else if (c.gr == "endpoints" && c.type == WatchEventType::kDeleted) {
    if (services_info_.count(NsName(c.ns, c.name)) != 0) Enqueue(c.ns, c.name);
  }
}

void EndpointsController::ObserveService(const Change& c) {
  std::string key = NsName(c.ns, c.name);
  if (auto it = services_info_.find(key); it != services_info_.end()) {
    auto b = services_by_label_.find(it->second.index_key);
    if (b != services_by_label_.end()) {
      b->second.erase(c.name);
      if (b->second.empty()) services_by_label_.erase(b);
    }
    services_info_.erase(it);
  }
  Enqueue(c.ns, c.name);
  if (c.type == WatchEventType::kDeleted) return;
  const Json& selector = AtPath(c.object, "spec.selector");
  if (!selector.is_object() || selector.empty()) return;
  if (StrAt(c.object, "spec.type") == "ExternalName") return;
  auto parsed = LabelSelector::FromJson(Json{{"matchLabels", selector}});
  if (!parsed.ok()) return;
  // File the service under the label pair shared by the fewest services, so that a common
  // pair ("app=web") does not collect every service of the namespace.
  std::string best;
  size_t best_size = SIZE_MAX;
  for (const auto& [k, v] : selector.items()) {
    if (!v.is_string()) continue;
    std::string b = Bucket(c.ns, k, v.get<std::string>());
    auto it = services_by_label_.find(b);
    size_t n = it == services_by_label_.end() ? 0 : it->second.size();
    if (n < best_size) {
      best_size = n;
      best = std::move(b);
    }
  }
  if (best.empty()) return;
  services_by_label_[best].insert(c.name);
  services_info_.emplace(key, ServiceInfo{std::move(*parsed), best});
}

void EndpointsController::ObservePod(const Change& c) {
  const Labels* old_labels =
      c.old_obj && c.old_obj->record.labels ? c.old_obj->record.labels.get() : nullptr;
  const Labels* new_labels =
      c.new_obj && c.new_obj->record.labels ? c.new_obj->record.labels.get() : nullptr;
  if (old_labels != nullptr) {
    for (const auto& [k, v] : *old_labels) {
      auto it = pods_by_label_.find(Bucket(c.ns, k, v));
      if (it == pods_by_label_.end()) continue;
      it->second.erase(c.name);
      if (it->second.empty()) pods_by_label_.erase(it);
    }
  }
  if (new_labels != nullptr) {
    for (const auto& [k, v] : *new_labels) pods_by_label_[Bucket(c.ns, k, v)].insert(c.name);
  }
  std::set<std::string> seen;
  for (const Labels* labels : {old_labels, new_labels}) {
    if (labels == nullptr) continue;
    for (const auto& [k, v] : *labels) {
      auto it = services_by_label_.find(Bucket(c.ns, k, v));
      if (it == services_by_label_.end()) continue;
      for (const auto& svc : it->second) {
        if (seen.count(svc) != 0) continue;
        auto info = services_info_.find(NsName(c.ns, svc));
        if (info == services_info_.end() || !info->second.selector.Matches(*labels)) continue;
        seen.insert(svc);
        Enqueue(c.ns, svc);
      }
    }
  }
}

void EndpointsController::ObserveSlice(const Change& c) {
  std::string key = NsName(c.ns, c.name);
  if (auto it = service_of_slice_.find(key); it != service_of_slice_.end()) {
    std::string svc_key = NsName(c.ns, it->second);
    auto s = slices_by_service_.find(svc_key);
    if (s != slices_by_service_.end()) {
      s->second.erase(c.name);
      if (s->second.empty()) slices_by_service_.erase(s);
    }
    if (c.type == WatchEventType::kDeleted && services_info_.count(svc_key) != 0) {
      Enqueue(c.ns, it->second);  // repair a slice someone else deleted
    }
    service_of_slice_.erase(it);
  }
  if (c.type == WatchEventType::kDeleted) return;
  const Json& labels = AtPath(c.object, "metadata.labels");
  if (GetString(labels, kManagedByLabel) != kManagedBy) return;
  std::string svc = GetString(labels, kServiceNameLabel);
  if (svc.empty()) return;
  service_of_slice_[key] = svc;
  slices_by_service_[NsName(c.ns, svc)].insert(c.name);
}

bool EndpointsController::Sync(Work, const std::string& key) {
  auto [ns, name] = SplitNsName(key);
  const CachedObject* co = ctx_.cache.Find("services", ns, name);
  if (co == nullptr) {
    if (ctx_.cache.Find("endpoints", ns, name) != nullptr) {
      auto res = ctx_.api.Delete(endpoints_, ns, name);
      if (!res.ok() && res.error().code != 404) return false;
    }
    return true;
  }
  auto info = services_info_.find(key);
  if (info == services_info_.end()) return true;  // no selector: endpoints are the user's
  Json svc = co->Parse();

  // The pods of the smallest bucket among the selector's pairs, then the full match.
  const std::set<std::string>* candidates = nullptr;
  for (const auto& req : info->second.selector.requirements()) {
    if (req.op != LabelSelector::Op::kEquals || req.values.empty()) continue;
    auto it = pods_by_label_.find(Bucket(ns, req.key, req.values[0]));
    static const std::set<std::string> kNone;
    const std::set<std::string>* bucket = it == pods_by_label_.end() ? &kNone : &it->second;
    if (candidates == nullptr || bucket->size() < candidates->size()) candidates = bucket;
  }
  std::vector<Json> pods;
  if (candidates != nullptr) {
    for (const auto& pod_name : *candidates) {
      const CachedObject* pod = ctx_.cache.Find("pods", ns, pod_name);
      if (pod == nullptr || !pod->record.labels ||
          !info->second.selector.Matches(*pod->record.labels)) {
        continue;
      }
      pods.push_back(pod->Parse());
    }
  }
  bool ok = SyncSlices(svc, pods);
  ok = SyncEndpoints(svc, pods) && ok;
  return ok;
}

bool EndpointsController::SyncSlices(const Json& svc, const std::vector<Json>& pods) {
  std::string ns = StrAt(svc, "metadata.namespace");
  std::string name = StrAt(svc, "metadata.name");
  std::string uid = StrAt(svc, "metadata.uid");
  bool publish = AtPath(svc, "spec.publishNotReadyAddresses") == Json(true);

  std::map<std::string, std::pair<Json, Json>> groups;  // ports dump -> (ports, endpoints)
  for (const auto& pod : pods) {
    std::string ip = StrAt(pod, "status.podIP");
    if (ip.empty() || IsPodTerminal(pod)) continue;
    Json ports = ResolvePorts(svc, pod, true);
    bool serving = publish || IsPodReady(pod);
    bool terminating = IsDeleting(pod);
    bool ready = publish || (serving && !terminating);
    Json ep = {
        {"addresses", Json::array({ip})},
        {"conditions", {{"ready", ready}, {"serving", serving}, {"terminating", terminating}}},
        {"targetRef", TargetRef(pod)}};
    std::string node = StrAt(pod, "spec.nodeName");
    if (!node.empty()) ep["nodeName"] = node;
    auto& g = groups[DumpJson(ports)];
    if (g.second.is_null()) {
      g.first = std::move(ports);
      g.second = Json::array();
    }
    g.second.push_back(std::move(ep));
  }
  struct Desired {
    Json ports;
    Json endpoints;
  };
  std::vector<Desired> desired;
  for (auto& [dump, g] : groups) {
    for (size_t i = 0; i < g.second.size(); i += kMaxEndpointsPerSlice) {
      Json chunk = Json::array();
      for (size_t j = i; j < std::min(i + kMaxEndpointsPerSlice, g.second.size()); ++j) {
        chunk.push_back(g.second[j]);
      }
      desired.push_back({g.first, std::move(chunk)});
    }
  }
  if (desired.empty()) desired.push_back({nullptr, Json::array()});  // the placeholder

  Json labels = ServiceLabels(svc);
  labels[std::string(kServiceNameLabel)] = name;
  labels[std::string(kManagedByLabel)] = std::string(kManagedBy);

  std::vector<Json> existing;
  if (auto it = slices_by_service_.find(NsName(ns, name)); it != slices_by_service_.end()) {
    for (const auto& slice_name : it->second) {
      const CachedObject* co = ctx_.cache.Find("endpointslices.discovery.k8s.io", ns, slice_name);
      if (co == nullptr || co->deleting) continue;
      const OwnerRef* ctl = co->Controller();
      if (ctl == nullptr || ctl->uid != uid) continue;  // an old service's: the GC's business
      existing.push_back(co->Parse());
    }
  }
  auto same = [&](const Json& slice, const Desired& d) {
    return At(slice, "ports") == d.ports && NormList(At(slice, "endpoints")) == d.endpoints &&
           AtPath(slice, "metadata.labels") == labels;
  };
  std::vector<bool> used(existing.size(), false);
  std::vector<const Desired*> pending;
  for (const auto& d : desired) {
    bool matched = false;
    for (size_t i = 0; i < existing.size() && !matched; ++i) {
      if (!used[i] && same(existing[i], d)) used[i] = matched = true;
    }
    if (!matched) pending.push_back(&d);
  }
  bool ok = true;
  for (const Desired* d : pending) {
    size_t slot = existing.size();
    for (size_t i = 0; i < existing.size(); ++i) {
      if (!used[i]) {
        slot = i;
        break;
      }
    }
    if (slot < existing.size()) {
      used[slot] = true;
      auto res =
          ctx_.api.Modify(slices_, ns, StrAt(existing[slot], "metadata.name"), [&](Json& obj) {
            Json before = obj;
            obj["metadata"]["labels"] = labels;
            obj["addressType"] = "IPv4";
            obj["ports"] = d->ports;
            obj["endpoints"] = d->endpoints;
            return obj != before;
          });
      if (!res.ok() && res.error().code != 404) ok = false;
      continue;
    }
    Json slice = {{"apiVersion", "discovery.k8s.io/v1"},
                  {"kind", "EndpointSlice"},
                  {"metadata",
                   {{"generateName", name + "-"},
                    {"namespace", ns},
                    {"labels", labels},
                    {"ownerReferences", Json::array({ControllerRefTo(svc, services_)})}}},
                  {"addressType", "IPv4"},
                  {"endpoints", d->endpoints},
                  {"ports", d->ports}};
    auto res = ctx_.api.Create(slices_, ns, std::move(slice));
    if (!res.ok()) ok = false;
  }
  for (size_t i = 0; i < existing.size(); ++i) {
    if (used[i]) continue;
    DeleteOptions opts;
    opts.precondition_uid = StrAt(existing[i], "metadata.uid");
    auto res = ctx_.api.Delete(slices_, ns, StrAt(existing[i], "metadata.name"), opts);
    if (!res.ok() && res.error().code != 404) ok = false;
  }
  return ok;
}

bool EndpointsController::SyncEndpoints(const Json& svc, const std::vector<Json>& pods) {
  std::string ns = StrAt(svc, "metadata.namespace");
  std::string name = StrAt(svc, "metadata.name");
  bool publish = AtPath(svc, "spec.publishNotReadyAddresses") == Json(true);
  std::map<std::string, Json> subsets;  // ports dump -> subset
  for (const auto& pod : pods) {
    std::string ip = StrAt(pod, "status.podIP");
    if (ip.empty() || IsPodTerminal(pod)) continue;
    if (IsDeleting(pod) && !publish) continue;
    Json ports = ResolvePorts(svc, pod, false);
    Json addr = {{"ip", ip}, {"targetRef", TargetRef(pod)}};
    std::string node = StrAt(pod, "spec.nodeName");
    if (!node.empty()) addr["nodeName"] = node;
    Json& subset = subsets[DumpJson(ports)];
    if (subset.is_null()) {
      subset = Json::object();
      if (!ports.empty()) subset["ports"] = ports;
    }
    subset[publish || IsPodReady(pod) ? "addresses" : "notReadyAddresses"].push_back(
        std::move(addr));
  }
  Json list = Json::array();
  for (auto& [dump, subset] : subsets) {
    for (const char* field : {"addresses", "notReadyAddresses"}) {
      if (!subset.contains(field)) continue;
      std::vector<Json> addrs(subset[field].begin(), subset[field].end());
      std::sort(addrs.begin(), addrs.end(), [](const Json& a, const Json& b) {
        return GetString(a, "ip") < GetString(b, "ip");
      });
      subset[field] = Json(addrs);
    }
    list.push_back(std::move(subset));
  }
  Json labels = ServiceLabels(svc);
  auto apply = [&](Json& obj) {
    Json before = obj;
    if (labels.empty()) {
      obj["metadata"].erase("labels");
    } else {
      obj["metadata"]["labels"] = labels;
    }
    if (list.empty()) {
      obj.erase("subsets");
    } else {
      obj["subsets"] = list;
    }
    return obj != before;
  };
  if (ctx_.cache.Find("endpoints", ns, name) == nullptr) {
    Json ep = {{"apiVersion", "v1"},
               {"kind", "Endpoints"},
               {"metadata", {{"name", name}, {"namespace", ns}}}};
    apply(ep);
    auto res = ctx_.api.Create(endpoints_, ns, std::move(ep));
    if (res.ok() || res.error().reason != "AlreadyExists") return res.ok();
  }
  auto res = ctx_.api.Modify(endpoints_, ns, name, apply);
  return res.ok() || res.error().code == 404;
}

}  // namespace steward::cluster::controllers
