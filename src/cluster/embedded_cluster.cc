#include "cluster/embedded_cluster.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cluster/apiserver/rest_handler.h"
#include "cluster/controllers/controller_manager.h"
#include "cluster/controllers/process_runtime.h"
#include "cluster/ingress/endpoint_resolver.h"
#include "cluster/ingress/ingress_listener.h"
#include "cluster/ingress/proxy.h"
#include "cluster/ingress/virtual_pods.h"
#include "common/base64.h"
#include "common/clock.h"
#include "common/file.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/random.h"
#include "common/scheduler.h"
#include "common/secure_random.h"
#include "common/sha256.h"
#include "common/yaml.h"
#include "net/http_server.h"
#include "net/tls_certs.h"

namespace steward::cluster {

namespace fs = std::filesystem;

struct EmbeddedCluster::Parts {
  Options options;
  std::unique_ptr<Storage> storage;
  std::unique_ptr<Random> random;
  std::unique_ptr<ObjectApi> api;
  std::unique_ptr<FaultInjector> faults;
  std::unique_ptr<RequestLog> log;
  std::unique_ptr<RestHandler> rest;
  std::unique_ptr<net::HttpServer> server;
  // Before `controllers`, so that it is destroyed after them: the kubelet's workers call it until
  // ~ControllerManager joins them (a start that fails half-way destroys Parts without Stop()).
  std::unique_ptr<::steward::cluster::controllers::ProcessRuntime> processes;
  std::unique_ptr<ControllerManager> controllers;
  std::unique_ptr<ingress::VirtualPods> pods;
  std::unique_ptr<ingress::EndpointResolver> resolver;
  std::unique_ptr<ingress::IngressRouter> router;
  std::unique_ptr<ingress::Proxy> proxy;
  std::unique_ptr<ingress::IngressListener> listener;
  std::unique_ptr<Scheduler> housekeeping;
  std::function<void()> compact_task;
  std::string token;
  std::string ca_pem;
  std::string token_signing_key;  // secret: derived from the CA key
  uint16_t api_port = 0;
  uint16_t ingress_port = 0;
  mutable Mutex profile_mu;
  Profile profile GUARDED_BY(profile_mu);
  std::atomic<bool> ingress_requires_service{false};
  bool stopped = false;
};

namespace {

StatusOr<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument("cannot read " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The seed of a run over stored objects. A restart must not replay the random stream of an
// earlier run: uids (and generated names) would repeat those of objects that still exist, and
// every uid check (GC owner references, preconditions, clients' "same name, new uid") would
// then mistake one object for another. The stored revision differs between any two runs that
// created objects, and keeps a run reproducible from its seed and data dir.
uint64_t RunSeed(uint64_t seed, uint64_t stored_revision) {
  if (stored_revision == 0) return seed;
  auto mix = [](uint64_t x) {  // splitmix64's finalizer
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  };
  return mix(seed ^ mix(stored_revision));
}

std::string RandomToken(Random& random) {
  std::string t;
  for (int i = 0; i < 4; ++i) t += random.AlnumSuffix(8);
  return t;
}

// The CA and token, generated or reused from the data dir.
Status LoadIdentity(const EmbeddedCluster::Options& options, Random& random, std::string* token,
                    net::CertAndKey* ca) {
  fs::path dir = options.data_dir;
  bool persistent = !options.data_dir.empty();
  if (persistent && fs::exists(dir / "ca.crt") && fs::exists(dir / "ca.key")) {
    ASSIGN_OR_RETURN(std::string warning, TightenPrivateFile((dir / "ca.key").string()));
    if (!warning.empty()) LOG_WARN("embedded cluster CA key {}", warning);
    ASSIGN_OR_RETURN(ca->cert_pem, ReadFile(dir / "ca.crt"));
    ASSIGN_OR_RETURN(ca->key_pem, ReadFile(dir / "ca.key"));
  } else {
    ASSIGN_OR_RETURN(*ca, net::GenerateCa("steward-embedded-cluster-ca"));
    if (persistent) {
      RETURN_IF_ERROR(WritePrivateFile((dir / "ca.crt").string(), ca->cert_pem));
      RETURN_IF_ERROR(WritePrivateFile((dir / "ca.key").string(), ca->key_pem));
    }
  }
  if (!options.token.empty()) {
    *token = options.token;
  } else if (persistent && fs::exists(dir / "token")) {
    ASSIGN_OR_RETURN(*token, ReadFile(dir / "token"));
    while (!token->empty() && (token->back() == '\n' || token->back() == '\r')) token->pop_back();
    if (token->empty()) return InvalidArgument((dir / "token").string() + " is empty");
  } else {
    // A secret: from the operating system's CSPRNG, never from the seeded simulation random
    // (whose stream anyone who knows the seed can replay). That stream still advances as it
    // did, so that everything else a seed decides (names, uids, faults) stays reproducible.
    (void)RandomToken(random);
    *token = SecureRandomHex(16);
  }
  if (persistent) RETURN_IF_ERROR(WritePrivateFile((dir / "token").string(), *token + "\n"));
  return Status::Ok();
}

Status EnsureNamespaces(ObjectApi& api) {
  const ResourceType* ns_type = FindGroupResource("namespaces");
  for (const char* name : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    if (api.storage().Get("namespaces", "", name)) continue;
    auto created = api.Create(*ns_type, "", Json{{"metadata", {{"name", name}}}});
    if (!created.ok() && created.error().code != 409) {
      return Internal("cannot create namespace " + std::string(name) + ": " +
                      created.error().message);
    }
  }
  return Status::Ok();
}

// The "ingress_requires_service" admission switch: some clusters' webhooks refuse an Ingress
// whose backend Service does not exist yet.
std::optional<StatusError> CheckIngressBackends(Storage& storage, const Json& ingress) {
  std::vector<std::string> services;
  const Json& spec = ingress.contains("spec") ? ingress["spec"] : Json();
  auto add = [&](const Json& backend) {
    if (backend.is_object() && backend.contains("service")) {
      std::string name = GetString(backend["service"], "name");
      if (!name.empty()) services.push_back(name);
    }
  };
  if (spec.is_object()) {
    if (spec.contains("defaultBackend")) add(spec["defaultBackend"]);
    if (spec.contains("rules") && spec["rules"].is_array()) {
      for (const auto& rule : spec["rules"]) {
        const Json* paths = FindPath(rule, "http.paths");
        if (paths == nullptr || !paths->is_array()) continue;
        for (const auto& p : *paths) {
          if (p.contains("backend")) add(p["backend"]);
        }
      }
    }
  }
  std::string ns = GetString(ingress["metadata"], "namespace");
  for (const auto& svc : services) {
    if (!storage.Get("services", ns, svc)) {
      StatusError e;
      e.code = 403;
      e.reason = "Forbidden";
      e.message =
          "admission webhook \"validate.ingress.steward.io\" denied the request: "
          "backend service " +
          ns + "/" + svc + " does not exist";
      return e;
    }
  }
  return std::nullopt;
}

}  // namespace

EmbeddedCluster::EmbeddedCluster(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

EmbeddedCluster::~EmbeddedCluster() { Stop(); }

StatusOr<std::unique_ptr<EmbeddedCluster>> EmbeddedCluster::Start(const Options& options) {
  auto p = std::make_unique<Parts>();
  p->options = options;
  {
    MutexLock lock(p->profile_mu);  // not shared yet (uncontended); taken for the analysis
    p->profile = options.profile;
  }
  p->ingress_requires_service = options.profile.ingress_requires_service;
  p->random = std::make_unique<Random>(options.seed);
  if (!options.data_dir.empty()) {
    if (Status st = CreatePrivateDir(options.data_dir); !st.ok()) {
      return InvalidArgument("cannot create data dir " + st.message());
    }
    std::string warning = PrivateDirWarning(options.data_dir);
    if (!warning.empty()) LOG_WARN("embedded cluster data dir {}", warning);
  }
  net::CertAndKey ca;
  RETURN_IF_ERROR(LoadIdentity(options, *p->random, &p->token, &ca));
  p->ca_pem = ca.cert_pem;
  // ServiceAccount tokens are signed with a key derived from the CA key, which the data dir
  // keeps (0600): tokens issued before a restart stay valid.
  p->token_signing_key = Sha256Hex("steward service account tokens\n" + ca.key_pem);

  Storage::Options storage_options;
  if (!options.data_dir.empty()) {
    storage_options.persist_path = (fs::path(options.data_dir) / "cluster.db").string();
  }
  ASSIGN_OR_RETURN(p->storage, Storage::Open(storage_options));
  const uint64_t run_seed = RunSeed(options.seed, p->storage->CurrentRevision());
  if (run_seed != options.seed) p->random = std::make_unique<Random>(run_seed);
  p->api = std::make_unique<ObjectApi>(*p->storage, RealClock::Get(), *p->random);
  Parts* raw = p.get();
  p->api->AddAdmissionHook(
      [raw](const ResourceType& rt, const Json& obj, const Json*) -> std::optional<StatusError> {
        if (rt.kind != "Ingress" || !raw->ingress_requires_service) return std::nullopt;
        return CheckIngressBackends(*raw->storage, obj);
      });
  RETURN_IF_ERROR(EnsureNamespaces(*p->api));

  p->faults = std::make_unique<FaultInjector>(options.profile.faults, options.seed + 1);
  p->log = std::make_unique<RequestLog>(RealClock::Get());
  if (!options.audit_log.empty()) RETURN_IF_ERROR(p->log->OpenAuditLog(options.audit_log));

  p->processes = std::make_unique<::steward::cluster::controllers::ProcessRuntime>();
  if (options.controllers) {
    p->controllers = std::make_unique<ControllerManager>(*p->api, options.profile, run_seed + 2);
    p->controllers->SetProcessRuntime(p->processes.get());
    RETURN_IF_ERROR(p->controllers->Start());
  }

  ASSIGN_OR_RETURN(p->pods, ingress::VirtualPods::Create(*p->api));
  p->pods->SetProcessRuntime(p->processes.get(), [raw](std::string_view image) {
    MutexLock lock(raw->profile_mu);
    return ProcessImageFor(raw->profile, image) != nullptr;
  });
  ASSIGN_OR_RETURN(p->resolver, ingress::EndpointResolver::Create(*p->storage));
  p->proxy = std::make_unique<ingress::Proxy>(*p->storage, *p->resolver, *p->pods);

  RestHandler::Options rest_options;
  rest_options.token = p->token;
  rest_options.token_signing_key = p->token_signing_key;
  p->rest = std::make_unique<RestHandler>(*p->api, *p->faults, *p->log, rest_options);
  p->rest->SetProxy([raw](const std::string& kind, const std::string& ns,
                          const std::string& name_port, const std::string& path,
                          const net::HttpRequest& request,
                          std::shared_ptr<net::ResponseWriter> writer) {
    if (kind == "services") {
      writer->Send(raw->proxy->ProxyToService(ns, name_port, path, request));
    } else {
      writer->Send(raw->proxy->ProxyToPod(ns, name_port, path, request));
    }
  });
  p->rest->SetMetricsSource([raw] {
    auto [objects, bytes] = raw->storage->Size();
    return "# HELP steward_cluster_objects Objects stored by the embedded cluster.\n"
           "# TYPE steward_cluster_objects gauge\n"
           "steward_cluster_objects " +
           std::to_string(objects) +
           "\n# HELP steward_cluster_object_bytes Bytes of stored object JSON.\n"
           "# TYPE steward_cluster_object_bytes gauge\n"
           "steward_cluster_object_bytes " +
           std::to_string(bytes) +
           "\n# HELP steward_cluster_watches Open watch streams.\n"
           "# TYPE steward_cluster_watches gauge\n"
           "steward_cluster_watches " +
           std::to_string(raw->rest->ActiveWatches()) + "\n";
  });

  net::HttpServer::Options server_options;
  server_options.host = options.api_host;
  server_options.port = options.api_port;
  server_options.threads = options.api_threads;
  if (options.tls) {
    std::vector<std::string> dns = {"localhost", "kubernetes", "kubernetes.default",
                                    "kubernetes.default.svc"};
    std::vector<std::string> ips = {"127.0.0.1", "::1"};
    if (options.api_host != "127.0.0.1" && options.api_host != "localhost" &&
        options.api_host != "0.0.0.0" && !options.api_host.empty()) {
      if (options.api_host.find_first_not_of("0123456789.:") == std::string::npos) {
        ips.push_back(options.api_host);
      } else {
        dns.push_back(options.api_host);
      }
    }
    ASSIGN_OR_RETURN(auto serving,
                     net::GenerateServingCert(ca, "steward-embedded-apiserver", dns, ips));
    server_options.tls = net::TlsConfig{serving.cert_pem + ca.cert_pem, serving.key_pem};
  }
  ASSIGN_OR_RETURN(p->server, net::HttpServer::Start(server_options, *p->rest));
  p->api_port = p->server->port();

  if (options.ingress) {
    ASSIGN_OR_RETURN(p->router,
                     ingress::IngressRouter::Create(*p->storage, *p->resolver, *p->pods));
    ingress::IngressListener::Options lo;
    lo.host = options.ingress_host;
    lo.port = options.ingress_port;
    ASSIGN_OR_RETURN(p->listener, ingress::IngressListener::Start(*p->router, lo));
    p->ingress_port = p->listener->port();
  }

  p->housekeeping = std::make_unique<Scheduler>("cluster-house");
  auto compaction = options.profile.faults.compaction_interval;
  if (compaction.count() > 0) {
    // Periodic history compaction (fault injection): watches from older revisions get 410.
    p->compact_task = [raw, compaction] {
      raw->storage->Compact();
      raw->housekeeping->Schedule(compaction, raw->compact_task);
    };
    p->housekeeping->Schedule(compaction, p->compact_task);
  }
  return std::unique_ptr<EmbeddedCluster>(new EmbeddedCluster(std::move(p)));
}

void EmbeddedCluster::Stop() {
  if (!parts_ || parts_->stopped) return;
  parts_->stopped = true;
  if (parts_->housekeeping) parts_->housekeeping->Stop();
  if (parts_->listener) parts_->listener->Stop();
  if (parts_->rest) parts_->rest->Stop();
  if (parts_->server) parts_->server->Stop();
  if (parts_->router) parts_->router->Stop();
  // Process pods stop before the controllers: its notifications go to their queue.
  if (parts_->processes) parts_->processes->StopAll();
  if (parts_->controllers) parts_->controllers->Stop();
  if (parts_->resolver) parts_->resolver->Stop();
  if (parts_->pods) parts_->pods->Stop();
}

namespace {
// The host part of a URL: wildcard addresses become loopback, IPv6 literals get brackets.
std::string UrlHost(std::string host) {
  if (host == "0.0.0.0" || host.empty()) return "127.0.0.1";
  if (host == "::") return "[::1]";
  if (host.find(':') != std::string::npos) return "[" + host + "]";
  return host;
}
}  // namespace

std::string EmbeddedCluster::api_url() const {
  std::string host = UrlHost(parts_->options.api_host);
  return std::string(parts_->options.tls ? "https" : "http") + "://" + host + ":" +
         std::to_string(parts_->api_port);
}

std::string EmbeddedCluster::ingress_url() const {
  if (!parts_->listener) return "";
  std::string host = UrlHost(parts_->options.ingress_host);
  return "http://" + host + ":" + std::to_string(parts_->ingress_port);
}

uint16_t EmbeddedCluster::api_port() const { return parts_->api_port; }
uint16_t EmbeddedCluster::ingress_port() const { return parts_->ingress_port; }
const std::string& EmbeddedCluster::token() const { return parts_->token; }
const std::string& EmbeddedCluster::ca_pem() const { return parts_->ca_pem; }

std::string EmbeddedCluster::Kubeconfig() const {
  Json cluster = {{"server", api_url()}};
  if (parts_->options.tls) cluster["certificate-authority-data"] = Base64Encode(parts_->ca_pem);
  Json config = {
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"clusters", Json::array({{{"name", "steward"}, {"cluster", cluster}}})},
      {"users", Json::array({{{"name", "steward-admin"}, {"user", {{"token", parts_->token}}}}})},
      {"contexts",
       Json::array(
           {{{"name", "steward"},
             {"context",
              {{"cluster", "steward"}, {"user", "steward-admin"}, {"namespace", "default"}}}}})},
      {"current-context", "steward"},
      {"preferences", Json::object()}};
  return ToYaml(config);
}

Status EmbeddedCluster::WriteKubeconfig(const std::string& path) const {
  Status st = WritePrivateFile(path, Kubeconfig());
  if (!st.ok()) return InvalidArgument(st.message());
  return Status::Ok();
}

void EmbeddedCluster::SetProfile(const Profile& profile) {
  {
    MutexLock lock(parts_->profile_mu);
    parts_->profile = profile;
  }
  parts_->ingress_requires_service = profile.ingress_requires_service;
  parts_->faults->SetSpec(profile.faults);
  if (parts_->controllers) parts_->controllers->SetProfile(profile);
}

Profile EmbeddedCluster::profile() const {
  MutexLock lock(parts_->profile_mu);
  return parts_->profile;
}

ObjectApi& EmbeddedCluster::api() { return *parts_->api; }
Storage& EmbeddedCluster::storage() { return *parts_->storage; }
RequestLog& EmbeddedCluster::request_log() { return *parts_->log; }
FaultInjector& EmbeddedCluster::faults() { return *parts_->faults; }

}  // namespace steward::cluster
