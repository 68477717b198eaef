#include "cluster/ingress/endpoint_resolver.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "common/json_access.h"

namespace steward::cluster::ingress {

namespace {

constexpr std::string_view kServicesResource = "services";
constexpr std::string_view kSlicesResource = "endpointslices.discovery.k8s.io";
constexpr std::string_view kServiceNameLabel = "kubernetes.io/service-name";

std::string Key(std::string_view ns, std::string_view name) {
  std::string k;
  k.reserve(ns.size() + name.size() + 1);
  k.append(ns).push_back('/');
  k.append(name);
  return k;
}

int PortNumber(const Json& p, const char* field) { return static_cast<int>(GetInt(p, field)); }

}  // namespace

ServicePortRef ServicePortRef::Parse(std::string_view text) {
  ServicePortRef ref;
  int n = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (!text.empty() && ec == std::errc() && ptr == text.data() + text.size()) {
    ref.number = n;
  } else {
    ref.name = std::string(text);
  }
  return ref;
}

StatusOr<std::unique_ptr<EndpointResolver>> EndpointResolver::Create(Storage& storage) {
  std::unique_ptr<EndpointResolver> r(new EndpointResolver());
  EndpointResolver* raw = r.get();
  auto feed =
      WatchFeed::Start(storage, {std::string(kServicesResource), std::string(kSlicesResource)},
                       [raw](const WatchEvent& ev) { raw->Apply(ev); });
  if (!feed.ok()) return feed.status();
  r->feed_ = std::move(feed).value();
  return r;
}

EndpointResolver::~EndpointResolver() { Stop(); }

void EndpointResolver::Stop() {
  if (feed_) feed_->Stop();
}

void EndpointResolver::Apply(const WatchEvent& ev) {
  if (ev.object.group_resource == kServicesResource) {
    ApplyService(ev);
  } else if (ev.object.group_resource == kSlicesResource) {
    ApplySlice(ev);
  }
}

void EndpointResolver::ApplyService(const WatchEvent& ev) {
  std::string key = Key(ev.object.ns, ev.object.name);
  if (ev.type == WatchEventType::kDeleted) {
    WriterMutexLock lock(mu_);
    services_.erase(key);
    return;
  }
  Json svc = ev.object.Parse();
  ServiceEntry entry;
  const Json* ports = FindPath(svc, "spec.ports");
  if (ports != nullptr && ports->is_array()) {
    for (const Json& p : *ports) {
      entry.ports.push_back({GetString(p, "name"), PortNumber(p, "port")});
    }
  }
  WriterMutexLock lock(mu_);
  services_[key] = std::move(entry);
}

void EndpointResolver::UnlinkSlice(const std::string& slice_key, const std::string& service_key) {
  auto it = by_service_.find(service_key);
  if (it == by_service_.end()) return;
  auto& keys = it->second->slice_keys;
  keys.erase(std::remove(keys.begin(), keys.end(), slice_key), keys.end());
  if (keys.empty()) by_service_.erase(it);
}

void EndpointResolver::ApplySlice(const WatchEvent& ev) {
  std::string key = Key(ev.object.ns, ev.object.name);
  if (ev.type == WatchEventType::kDeleted) {
    WriterMutexLock lock(mu_);
    auto it = slices_.find(key);
    if (it == slices_.end()) return;
    UnlinkSlice(key, it->second.service_key);
    slices_.erase(it);
    return;
  }
  SliceEntry entry;
  if (ev.object.labels) {
    for (const auto& [k, v] : *ev.object.labels) {
      if (k == kServiceNameLabel) entry.service_key = Key(ev.object.ns, v);
    }
  }
  if (!entry.service_key.empty()) {
    Json slice = ev.object.Parse();
    auto ports = slice.find("ports");
    if (ports != slice.end() && ports->is_array()) {
      for (const Json& p : *ports) {
        entry.ports.push_back({GetString(p, "name"), PortNumber(p, "port")});
      }
    }
    auto endpoints = slice.find("endpoints");
    if (endpoints != slice.end() && endpoints->is_array()) {
      for (const Json& e : *endpoints) {
        // discovery/v1: a nil `ready` means ready.
        const Json* ready = FindPath(e, "conditions.ready");
        if (ready != nullptr && ready->is_boolean() && !ready->get<bool>()) continue;
        auto ref = e.find("targetRef");
        if (ref == e.end() || !ref->is_object() || GetString(*ref, "kind") != "Pod") continue;
        Endpoint ep;
        ep.pod_namespace = GetString(*ref, "namespace", ev.object.ns);
        ep.pod_name = GetString(*ref, "name");
        ep.pod_uid = GetString(*ref, "uid");
        auto addresses = e.find("addresses");
        if (addresses != e.end() && addresses->is_array() && !addresses->empty() &&
            (*addresses)[0].is_string()) {
          ep.address = (*addresses)[0].get<std::string>();
        }
        if (!ep.pod_name.empty()) entry.ready.push_back(std::move(ep));
      }
    }
  }
  WriterMutexLock lock(mu_);
  bool linked = false;
  auto it = slices_.find(key);
  if (it != slices_.end()) {
    if (it->second.service_key == entry.service_key) {
      linked = true;
    } else {
      UnlinkSlice(key, it->second.service_key);
    }
  }
  const std::string service_key = entry.service_key;
  slices_[key] = std::move(entry);
  if (!linked && !service_key.empty()) {
    auto& slot = by_service_[service_key];
    if (!slot) slot = std::make_unique<ServiceSlices>();
    slot->slice_keys.push_back(key);
  }
}

bool EndpointResolver::HasService(std::string_view ns, std::string_view service) const {
  feed_->CatchUp();
  ReaderMutexLock lock(mu_);
  return services_.count(Key(ns, service)) != 0;
}

Expected<ResolvedEndpoint, ResolveError> EndpointResolver::Resolve(
    std::string_view ns, std::string_view service, const ServicePortRef& port,
    const std::vector<std::string>& skip) const {
  feed_->CatchUp();
  const std::string key = Key(ns, service);
  auto quoted = [&] { return "\"" + std::string(service) + "\""; };

  ReaderMutexLock lock(mu_);
  auto svc = services_.find(key);
  if (svc == services_.end()) {
    return ResolveError{ResolveError::Kind::kNoService, "services " + quoted() + " not found"};
  }
  std::string_view want;
  bool found = false;
  for (const NamedPort& p : svc->second.ports) {
    if (port.number ? p.port == *port.number : p.name == port.name) {
      want = p.name;
      found = true;
      break;
    }
  }
  if (!found) {
    if (port.number) {
      return ResolveError{
          ResolveError::Kind::kNoPort,
          "no service port " + std::to_string(*port.number) + " found for service " + quoted()};
    }
    return ResolveError{ResolveError::Kind::kNoPort,
                        "no endpoints available for service " + quoted()};
  }
  const ResolveError no_endpoints{ResolveError::Kind::kNoEndpoints,
                                  "no endpoints available for service " + quoted()};
  auto by = by_service_.find(key);
  if (by == by_service_.end()) return no_endpoints;

  // Two passes (count, then pick) keep the hot path free of allocations.
  auto target_port = [&](const SliceEntry& s) {
    for (const NamedPort& p : s.ports) {
      if (p.name == want) return p.port;
    }
    return 0;
  };
  size_t total = 0;
  for (const std::string& sk : by->second->slice_keys) {
    auto s = slices_.find(sk);
    if (s != slices_.end() && target_port(s->second) > 0) total += s->second.ready.size();
  }
  if (total == 0) return no_endpoints;
  const size_t start = by->second->next.fetch_add(1, std::memory_order_relaxed) % total;
  // The endpoint at position `index` in the concatenation of the slices' ready lists.
  auto at = [&](size_t index) REQUIRES_SHARED(mu_) -> std::optional<ResolvedEndpoint> {
    for (const std::string& sk : by->second->slice_keys) {
      auto s = slices_.find(sk);
      if (s == slices_.end()) continue;
      int tp = target_port(s->second);
      if (tp <= 0) continue;
      if (index < s->second.ready.size()) {
        const Endpoint& ep = s->second.ready[index];
        return ResolvedEndpoint{ep.pod_namespace, ep.pod_name, ep.pod_uid, ep.address, tp};
      }
      index -= s->second.ready.size();
    }
    return std::nullopt;
  };
  auto skipped = [&](const ResolvedEndpoint& ep) {
    for (const std::string& s : skip) {
      if (s.size() == ep.pod_namespace.size() + 1 + ep.pod_name.size() &&
          s.compare(0, ep.pod_namespace.size(), ep.pod_namespace) == 0 &&
          s[ep.pod_namespace.size()] == '/' &&
          s.compare(ep.pod_namespace.size() + 1, std::string::npos, ep.pod_name) == 0) {
        return true;
      }
    }
    return false;
  };
  std::optional<ResolvedEndpoint> fallback;  // the round-robin choice, if all were tried
  for (size_t i = 0; i < total; ++i) {
    std::optional<ResolvedEndpoint> ep = at((start + i) % total);
    if (!ep) break;
    if (skip.empty() || !skipped(*ep)) return *std::move(ep);
    if (!fallback) fallback = std::move(ep);
  }
  if (fallback) return *std::move(fallback);
  return no_endpoints;  // unreachable: `total` counted these endpoints
}

}  // namespace steward::cluster::ingress
