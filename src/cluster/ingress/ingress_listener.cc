#include "cluster/ingress/ingress_listener.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "cluster/ingress/websocket_tunnel.h"
#include "common/ascii.h"

namespace steward::cluster::ingress {

namespace {

constexpr std::string_view kIngressResource = "ingresses.networking.k8s.io";
constexpr int kMaxTries = 3;  // ingress-nginx proxy-next-upstream-tries

// "Example.com:8080" → "example.com"; "[::1]:80" → "[::1]".
std::string NormalizeHost(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    size_t close = host.find(']');
    if (close != std::string_view::npos) host = host.substr(0, close + 1);
  } else {
    size_t colon = host.rfind(':');
    if (colon != std::string_view::npos) host = host.substr(0, colon);
  }
  if (!host.empty() && host.back() == '.') host.remove_suffix(1);
  return AsciiLower(host);
}

bool PrefixMatches(std::string_view rule, std::string_view path) {
  if (rule == "/") return true;
  if (path.size() < rule.size() || path.substr(0, rule.size()) != rule) return false;
  return path.size() == rule.size() || path[rule.size()] == '/';
}

net::HttpResponse NginxPage(int status, std::string_view title) {
  net::HttpResponse r;
  r.status = status;
  r.headers.Set("Content-Type", "text/html");
  r.body = "<html>\r\n<head><title>" + std::string(title) +
           "</title></head>\r\n<body>\r\n<center><h1>" + std::string(title) +
           "</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
  return r;
}

std::string RemoteIp(std::string_view remote) {
  if (!remote.empty() && remote.front() == '[') {
    size_t close = remote.find(']');
    return std::string(remote.substr(1, close == std::string_view::npos ? 0 : close - 1));
  }
  return std::string(remote.substr(0, remote.rfind(':')));
}

}  // namespace

IngressRouter::IngressRouter(Storage& storage, EndpointResolver& resolver, VirtualPods& pods)
    : storage_(storage), resolver_(resolver), pods_(pods) {}

StatusOr<std::unique_ptr<IngressRouter>> IngressRouter::Create(Storage& storage,
                                                               EndpointResolver& resolver,
                                                               VirtualPods& pods) {
  std::unique_ptr<IngressRouter> router(new IngressRouter(storage, resolver, pods));
  IngressRouter* raw = router.get();
  auto feed = WatchFeed::Start(storage, {std::string(kIngressResource)},
                               [raw](const WatchEvent& ev) { raw->Apply(ev); });
  if (!feed.ok()) return feed.status();
  router->feed_ = std::move(feed).value();
  return router;
}

IngressRouter::~IngressRouter() { Stop(); }

void IngressRouter::Stop() {
  if (feed_) feed_->Stop();
}

void IngressRouter::AddToBucket(Bucket& bucket, const IngressEntry* entry) {
  if (std::find(bucket.begin(), bucket.end(), entry) != bucket.end()) return;
  auto pos = std::upper_bound(
      bucket.begin(), bucket.end(), entry,
      [](const IngressEntry* a, const IngressEntry* b) { return a->order < b->order; });
  bucket.insert(pos, entry);
}

void IngressRouter::RemoveFromBucket(std::unordered_map<std::string, Bucket>& map,
                                     const std::string& key, const IngressEntry* entry) {
  auto it = map.find(key);
  if (it == map.end()) return;
  auto& b = it->second;
  b.erase(std::remove(b.begin(), b.end(), entry), b.end());
  if (b.empty()) map.erase(it);
}

void IngressRouter::Index(const IngressEntry& e) {
  for (const HostRule& r : e.rules) {
    if (r.host.empty()) {
      AddToBucket(any_host_, &e);
    } else if (r.host.rfind("*.", 0) == 0) {
      AddToBucket(wildcard_[r.host.substr(2)], &e);
    } else {
      AddToBucket(exact_[r.host], &e);
    }
  }
  if (e.rules.empty() && e.default_backend) AddToBucket(catch_all_, &e);
}

void IngressRouter::Unindex(const IngressEntry& e) {
  for (const HostRule& r : e.rules) {
    if (r.host.empty()) {
      any_host_.erase(std::remove(any_host_.begin(), any_host_.end(), &e), any_host_.end());
    } else if (r.host.rfind("*.", 0) == 0) {
      RemoveFromBucket(wildcard_, r.host.substr(2), &e);
    } else {
      RemoveFromBucket(exact_, r.host, &e);
    }
  }
  catch_all_.erase(std::remove(catch_all_.begin(), catch_all_.end(), &e), catch_all_.end());
}

void IngressRouter::Apply(const WatchEvent& ev) {
  const std::string key = ev.object.ns + "/" + ev.object.name;
  std::unique_ptr<IngressEntry> entry;
  if (ev.type != WatchEventType::kDeleted) {
    Json ing = ev.object.Parse();
    const Json* deletion = FindPath(ing, "metadata.deletionTimestamp");
    if (deletion == nullptr || deletion->is_null()) {
      auto backend_of = [](const Json& b) {
        Backend out;
        const Json* svc = FindPath(b, "service");
        if (svc == nullptr || !svc->is_object()) return out;
        out.service = GetString(*svc, "name");
        const Json* number = FindPath(*svc, "port.number");
        if (number != nullptr && number->is_number_integer()) {
          out.port.number = number->get<int>();
        } else if (const Json* name = FindPath(*svc, "port.name");
                   name != nullptr && name->is_string()) {
          out.port.name = name->get<std::string>();
        }
        return out;
      };
      entry = std::make_unique<IngressEntry>();
      entry->ns = ev.object.ns;
      entry->name = ev.object.name;
      entry->order = GetString(ing["metadata"], "creationTimestamp") + " " + key;
      const Json* rules = FindPath(ing, "spec.rules");
      if (rules != nullptr && rules->is_array()) {
        for (const Json& r : *rules) {
          HostRule hr;
          hr.host = AsciiLower(GetString(r, "host"));
          const Json* paths = FindPath(r, "http.paths");
          if (paths != nullptr && paths->is_array()) {
            for (const Json& p : *paths) {
              PathRule pr;
              pr.type = GetString(p, "pathType") == "Exact" ? PathType::kExact : PathType::kPrefix;
              pr.path = GetString(p, "path", "/");
              if (pr.path.empty()) pr.path = "/";
              if (pr.type == PathType::kPrefix) {
                while (pr.path.size() > 1 && pr.path.back() == '/') pr.path.pop_back();
              }
              if (const Json* b = FindPath(p, "backend"); b != nullptr && b->is_object()) {
                pr.backend = backend_of(*b);
              }
              hr.paths.push_back(std::move(pr));
            }
          }
          entry->rules.push_back(std::move(hr));
        }
      }
      if (const Json* d = FindPath(ing, "spec.defaultBackend"); d != nullptr && d->is_object()) {
        entry->default_backend = backend_of(*d);
      }
    }
  }
  WriterMutexLock lock(mu_);
  auto it = ingresses_.find(key);
  if (it != ingresses_.end()) {
    Unindex(*it->second);
    ingresses_.erase(it);
  }
  if (entry) {
    Index(*entry);
    ingresses_.emplace(key, std::move(entry));
  }
}

std::optional<IngressMatch> IngressRouter::Match(std::string_view host_header,
                                                 std::string_view path) const {
  feed_->CatchUp();
  const std::string host = NormalizeHost(host_header);
  ReaderMutexLock lock(mu_);

  const Bucket* bucket = nullptr;
  std::string pattern;
  if (auto it = exact_.find(host); it != exact_.end()) {
    bucket = &it->second;
    pattern = host;
  } else if (size_t dot = host.find('.'); dot != std::string::npos) {
    if (auto w = wildcard_.find(host.substr(dot + 1)); w != wildcard_.end()) {
      bucket = &w->second;
      pattern = "*." + host.substr(dot + 1);
    }
  }
  if (bucket == nullptr && !any_host_.empty()) bucket = &any_host_;

  auto make = [](const IngressEntry& e, const Backend& b) {
    return IngressMatch{e.ns, e.name, b.service, b.port};
  };
  if (bucket != nullptr) {
    const IngressEntry* best_entry = nullptr;
    const PathRule* best = nullptr;
    for (const IngressEntry* e : *bucket) {
      for (const HostRule& r : e->rules) {
        if (r.host != pattern) continue;
        for (const PathRule& p : r.paths) {
          bool hit = p.type == PathType::kExact ? path == p.path : PrefixMatches(p.path, path);
          if (!hit) continue;
          // Longest wins; on equal length Exact beats Prefix; otherwise the oldest (first).
          if (best == nullptr || p.path.size() > best->path.size() ||
              (p.path.size() == best->path.size() && p.type == PathType::kExact &&
               best->type != PathType::kExact)) {
            best = &p;
            best_entry = e;
          }
        }
      }
    }
    if (best != nullptr) return make(*best_entry, best->backend);
    for (const IngressEntry* e : *bucket) {
      if (e->default_backend) return make(*e, *e->default_backend);
    }
    return std::nullopt;
  }
  if (!catch_all_.empty()) return make(*catch_all_.front(), *catch_all_.front()->default_backend);
  return std::nullopt;
}

net::HttpResponse IngressRouter::Route(const net::HttpRequest& request) const {
  auto match = Match(request.headers.Get("Host"), request.path);
  if (!match) {
    net::HttpResponse r;
    r.status = 404;
    r.headers.Set("Content-Type", "text/plain; charset=utf-8");
    r.body = "default backend - 404";
    return r;
  }
  const std::string ingress_id = match->ingress_namespace + "/" + match->ingress_name;
  auto finish = [&](net::HttpResponse r) {
    r.headers.Set("X-Steward-Ingress", ingress_id);
    return r;
  };
  if (match->service.empty()) return finish(NginxPage(503, "503 Service Temporarily Unavailable"));

  net::HttpRequest upstream = request;
  const std::string client_ip = RemoteIp(request.remote_address);
  upstream.headers.Set("X-Real-IP", client_ip);
  upstream.headers.Set("X-Forwarded-For", client_ip);
  upstream.headers.Set("X-Forwarded-Host", std::string(request.headers.Get("Host")));
  upstream.headers.Set("X-Forwarded-Proto", request.tls ? "https" : "http");

  std::vector<std::string> tried;
  for (int attempt = 0; attempt < kMaxTries; ++attempt) {
    auto ep = resolver_.Resolve(match->ingress_namespace, match->service, match->port, tried);
    if (!ep.ok()) {
      if (attempt == 0) return finish(NginxPage(503, "503 Service Temporarily Unavailable"));
      break;
    }
    tried.push_back(ep->pod_namespace + "/" + ep->pod_name);
    auto pod = storage_.Get("pods", ep->pod_namespace, ep->pod_name);
    if (!pod) continue;  // the endpoint outlived its pod: nothing listens at that address
    auto answer = pods_.Serve(*pod, ep->port, upstream, ep->pod_uid);
    if (answer.ok()) return finish(std::move(answer).value());
  }
  return finish(NginxPage(502, "502 Bad Gateway"));
}

std::optional<std::pair<uint16_t, std::string>> IngressRouter::ProcessTarget(
    const net::HttpRequest& request) const {
  auto match = Match(request.headers.Get("Host"), request.path);
  if (!match || match->service.empty()) return std::nullopt;
  auto ep = resolver_.Resolve(match->ingress_namespace, match->service, match->port);
  if (!ep.ok()) return std::nullopt;
  auto pod = storage_.Get("pods", ep->pod_namespace, ep->pod_name);
  if (!pod) return std::nullopt;
  auto port = pods_.ProcessPort(*pod, ep->port, ep->pod_uid);
  if (!port) return std::nullopt;
  return std::make_pair(*port, ep->pod_namespace + "/" + ep->pod_name);
}

// ---- IngressListener ----

StatusOr<std::unique_ptr<IngressListener>> IngressListener::Start(IngressRouter& router,
                                                                  const Options& options) {
  std::unique_ptr<IngressListener> listener(new IngressListener(router));
  net::HttpServer::Options server_options;
  server_options.host = options.host;
  server_options.port = options.port;
  server_options.threads = options.threads;
  auto server = net::HttpServer::Start(server_options, *listener);
  if (!server.ok()) return server.status();
  listener->server_ = std::move(server).value();
  return listener;
}

IngressListener::~IngressListener() { Stop(); }

uint16_t IngressListener::port() const { return server_->port(); }

void IngressListener::Stop() {
  if (server_) server_->Stop();
}

void IngressListener::Handle(net::HttpRequest request,
                             std::shared_ptr<net::ResponseWriter> writer) {
  if (request.body_too_large) {
    writer->Send(NginxPage(413, "413 Request Entity Too Large"));
    return;
  }
  if (net::IsWebSocketUpgrade(request)) {
    if (auto target = router_.ProcessTarget(request)) {
      const std::string client_ip = RemoteIp(request.remote_address);
      request.headers.Set("X-Real-IP", client_ip);
      request.headers.Set("X-Forwarded-For", client_ip);
      request.headers.Set("X-Forwarded-Host", std::string(request.headers.Get("Host")));
      request.headers.Set("X-Forwarded-Proto", request.tls ? "https" : "http");
      TunnelWebSocket(std::move(request), std::move(writer), target->first,
                      std::move(target->second));
      return;
    }
  }
  writer->Send(router_.Route(request));
}

}  // namespace steward::cluster::ingress
