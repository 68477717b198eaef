// `steward serve`: the assembled service (app::App) from a configuration file and flags, until
// SIGINT/SIGTERM.
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdio>
#include <memory>
#include <string>

#include "app/app.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "common/duration.h"
#include "common/host_port.h"
#include "common/log.h"
#include "engine/model/project.h"

namespace steward::cli {
namespace {

// Flag values; each is applied over the configuration file only when given on the command line
// (the matching CLI::Option counted it).
struct ServeFlags {
  std::string config_file;
  std::string listen, probe_listen, data_dir, database, database_password_file, api_token_file;
  std::string tls_cert_file, tls_key_file;
  int workers = 0;
  std::string namespace_name, domain;
  std::string kubeconfig, context;
  bool in_cluster = false;
  std::string embedded_profile;
  std::string ingress_listen, kubeconfig_out;
  std::string instance_access;
  std::string log_level;
  int64_t api_max_connections = 0;
  std::string api_read_header_timeout, api_read_timeout;
  std::string replica_name;
};

struct ServeOptions {
  CLI::Option *listen, *probe_listen, *data_dir, *database, *database_password_file,
      *api_token_file, *tls_cert_file, *tls_key_file, *workers, *namespace_name, *domain,
      *kubeconfig, *context, *in_cluster, *embedded, *ingress_listen, *kubeconfig_out,
      *instance_access, *log_level, *api_max_connections, *api_read_header_timeout,
      *api_read_timeout, *replica_name;
};

int Fail(const std::string& message) {
  std::fprintf(stderr, "steward serve: %s\n", message.c_str());
  return kExitUsage;
}

bool Given(const CLI::Option* o) { return o->count() > 0; }

// A duration flag within the range the configuration file allows for the same key.
Status DurationFlag(std::string_view flag, const std::string& text,
                    std::chrono::milliseconds* out) {
  auto d = ParseDuration(text);
  if (!d || *d < std::chrono::milliseconds(1) || *d > std::chrono::hours(1)) {
    return InvalidArgument(std::string(flag) + ": expected a duration between 1ms and 1h " +
                           std::string(kDurationForms) + ", got \"" + text.substr(0, 64) + "\"");
  }
  *out = *d;
  return Status::Ok();
}

// The configuration: the file (or the defaults), then every given flag over it. Flag values are
// checked here, with the flag named, since they bypass the file's parser.
StatusOr<app::ServeConfig> BuildConfig(const ServeFlags& f, const ServeOptions& o) {
  app::ServeConfig c;
  if (!f.config_file.empty()) {
    ASSIGN_OR_RETURN(c, app::LoadServeConfig(f.config_file));
  }
  if (!c.clusters.empty()) {
    // These set the one cluster of a configuration without clusters:; with several, each
    // cluster's own section says it (never silently applied to some and not others).
    for (const auto& [given, flag] :
         {std::pair{Given(o.workers), "--workers"},
          std::pair{Given(o.namespace_name), "--namespace"}, std::pair{Given(o.domain), "--domain"},
          std::pair{Given(o.kubeconfig), "--kubeconfig"}, std::pair{Given(o.context), "--context"},
          std::pair{Given(o.in_cluster), "--in-cluster"},
          std::pair{Given(o.embedded), "--embedded-cluster"},
          std::pair{Given(o.ingress_listen), "--ingress-listen"},
          std::pair{Given(o.kubeconfig_out), "--kubeconfig-out"}}) {
      if (given) {
        return InvalidArgument(std::string(flag) + ": the configuration file lists clusters:; " +
                               "set this in each cluster's kubernetes: or engine: section");
      }
    }
  }
  std::string host;
  uint16_t port = 0;
  if (Given(o.listen)) {
    if (!SplitHostPort(f.listen, &host, &port)) {
      return InvalidArgument("--listen: expected HOST:PORT, got \"" + f.listen + "\"");
    }
    c.listen = f.listen;
  }
  if (Given(o.probe_listen)) {
    if (!SplitHostPort(f.probe_listen, &host, &port)) {
      return InvalidArgument("--probe-listen: expected HOST:PORT, got \"" + f.probe_listen + "\"");
    }
    c.probe_listen = f.probe_listen;
  }
  if (Given(o.data_dir)) {
    if (f.data_dir.empty()) return InvalidArgument("--data-dir: must not be empty");
    c.data_dir = f.data_dir;
  }
  if (Given(o.database)) c.database = f.database;
  if (Given(o.database_password_file)) c.database_password_file = f.database_password_file;
  if (Given(o.replica_name)) {
    // Sharded mode (replicas.name); the name is checked with the rest of the section at start.
    c.replicas.enabled = true;
    c.replicas.name = f.replica_name;
  }
  if (Given(o.api_token_file)) c.api_token_file = f.api_token_file;
  if (Given(o.workers)) c.engine.workers = f.workers;
  if (Given(o.namespace_name)) {
    if (!engine::IsDns1123Label(f.namespace_name)) {
      return InvalidArgument("--namespace: must be a DNS-1123 label, got \"" + f.namespace_name +
                             "\"");
    }
    c.engine.namespace_name = f.namespace_name;
  }
  if (Given(o.domain)) {
    if (!engine::IsDns1123Subdomain(f.domain)) {
      return InvalidArgument("--domain: must be a DNS-1123 subdomain, got \"" + f.domain + "\"");
    }
    c.engine.domain = f.domain;
  }
  if (Given(o.kubeconfig) || Given(o.context)) {
    c.cluster = app::ClusterSource::kKubeconfig;
    if (Given(o.kubeconfig)) c.kubeconfig = f.kubeconfig;
    if (Given(o.context)) c.context = f.context;
  }
  if (Given(o.in_cluster) && f.in_cluster) c.cluster = app::ClusterSource::kInCluster;
  if (Given(o.embedded)) {
    c.cluster = app::ClusterSource::kEmbedded;
    // A bare --embedded-cluster keeps the file's profile (itself "realistic" by default).
    if (!f.embedded_profile.empty()) c.embedded_profile = f.embedded_profile;
  }
  if (Given(o.ingress_listen)) {
    if (!SplitHostPort(f.ingress_listen, &host, &port)) {
      return InvalidArgument("--ingress-listen: expected HOST:PORT, got \"" + f.ingress_listen +
                             "\"");
    }
    c.ingress_listen = f.ingress_listen;
  }
  if (Given(o.kubeconfig_out)) c.kubeconfig_out = f.kubeconfig_out;
  if ((Given(o.ingress_listen) || Given(o.kubeconfig_out)) &&
      c.cluster != app::ClusterSource::kEmbedded) {
    return InvalidArgument(
        std::string(Given(o.ingress_listen) ? "--ingress-listen" : "--kubeconfig-out") +
        ": only with an embedded cluster (--embedded-cluster)");
  }
  if (Given(o.instance_access)) {
    c.instance_access = f.instance_access == "direct"  ? app::InstanceAccess::kDirect
                        : f.instance_access == "proxy" ? app::InstanceAccess::kProxy
                                                       : app::InstanceAccess::kAuto;
  }
  if (Given(o.log_level)) c.log_level = f.log_level;
  if (Given(o.api_max_connections)) {
    if (f.api_max_connections < 1 || f.api_max_connections > 1000000) {
      return InvalidArgument("--api-max-connections: must be between 1 and 1000000, got " +
                             std::to_string(f.api_max_connections));
    }
    c.api_max_connections = static_cast<size_t>(f.api_max_connections);
  }
  if (Given(o.api_read_header_timeout)) {
    RETURN_IF_ERROR(DurationFlag("--api-read-header-timeout", f.api_read_header_timeout,
                                 &c.api_read_header_timeout));
  }
  if (Given(o.api_read_timeout)) {
    RETURN_IF_ERROR(DurationFlag("--api-read-timeout", f.api_read_timeout, &c.api_read_timeout));
  }
  if (Given(o.tls_cert_file)) c.tls_cert_file = f.tls_cert_file;
  if (Given(o.tls_key_file)) c.tls_key_file = f.tls_key_file;
  if (c.tls_cert_file.empty() != c.tls_key_file.empty()) {
    return InvalidArgument(c.tls_cert_file.empty()
                               ? "--tls-key-file: needs --tls-cert-file (or tls.certFile)"
                               : "--tls-cert-file: needs --tls-key-file (or tls.keyFile)");
  }
  return c;
}

std::string DescribeCluster(const app::ServeConfig& c, app::App& app) {
  switch (c.cluster) {
    case app::ClusterSource::kEmbedded: {
      auto* cluster = app.embedded_cluster();
      std::string s = "embedded (profile " + c.embedded_profile + "): API server " +
                      cluster->api_url() + ", ingress " + cluster->ingress_url();
      if (!c.kubeconfig_out.empty()) s += ", kubeconfig " + c.kubeconfig_out;
      return s;
    }
    case app::ClusterSource::kInCluster:
      return "in-cluster service account";
    case app::ClusterSource::kKubeconfig:
      return "kubeconfig " +
             (c.kubeconfig.empty() ? "($KUBECONFIG or ~/.kube/config)" : c.kubeconfig) +
             ", context " + (c.context.empty() ? "(current)" : c.context);
  }
  return "";
}

int RunServe(const ServeFlags& flags, const ServeOptions& options) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("steward"));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  auto config = BuildConfig(flags, options);
  if (!config.ok()) return Fail(config.error().message());

  // Signals are taken synchronously by this thread; every thread started later inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto app = app::App::Start(*config);
  if (!app.ok()) return Fail(app.error().message());
  std::printf("Steward serving\n");
  std::printf("  API         %s\n", (*app)->api_url().c_str());
  if (!(*app)->probe_url().empty()) {
    std::printf("  probes      %s (/healthz, /readyz, /metrics)\n", (*app)->probe_url().c_str());
  }
  std::printf("  API token   %s\n", (*app)->api_token_file().c_str());
  std::printf("  Cluster     %s\n", DescribeCluster(*config, **app).c_str());
  std::printf("  Namespace   %s\n", (*app)->engine().options().config.namespace_name.c_str());
  std::printf("  Store       %s\n", (*app)->store().Describe().c_str());
  std::printf("Try:         curl -H \"Authorization: Bearer $(cat %s)\" %s/v1/projects\n",
              (*app)->api_token_file().c_str(), (*app)->api_url().c_str());
  std::fflush(stdout);

  int sig = 0;
  sigwait(&signals, &sig);
  std::printf("Received %s, stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
  std::fflush(stdout);
  (*app)->Stop();
  std::printf("Stopped\n");
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace

void AddServeCommand(CLI::App& app) {
  auto flags = std::make_shared<ServeFlags>();
  auto options = std::make_shared<ServeOptions>();
  auto* cmd = app.add_subcommand(
      "serve",
      "Run Steward: the REST API, the store and the engine against a cluster (kubeconfig, "
      "in-cluster or embedded) until SIGINT/SIGTERM");
  cmd->add_option("--config", flags->config_file,
                  "Configuration file (YAML or JSON; see docs/operations.md); flags override it")
      ->check(CLI::ExistingFile);
  ServeOptions& o = *options;
  o.listen = cmd->add_option("--listen", flags->listen,
                             "API address HOST:PORT (port 0: any free; default 127.0.0.1:8080)");
  o.probe_listen = cmd->add_option(
      "--probe-listen", flags->probe_listen,
      "Serve /healthz, /readyz and /metrics on this HOST:PORT only, not on --listen");
  o.data_dir = cmd->add_option(
      "--data-dir", flags->data_dir,
      "Store, API token and embedded cluster state (created if absent; default steward-data)");
  o.database = cmd->add_option("--database", flags->database,
                               "sqlite:PATH (default: sqlite:<data-dir>/steward.db) or "
                               "postgres://USER@HOST[:PORT]/DB[?sslmode=...] (no password)");
  o.database_password_file =
      cmd->add_option("--database-password-file", flags->database_password_file,
                      "File holding the PostgreSQL password (mode 0600; else PGPASSWORD)");
  o.replica_name = cmd->add_option(
      "--replica-name", flags->replica_name,
      "Run as this replica of several sharing one postgres:// database (replicas.name; a DNS "
      "label, unique per replica)");
  o.api_token_file = cmd->add_option(
      "--api-token-file", flags->api_token_file,
      "File holding the API bearer token (default: <data-dir>/api-token, created 0600)");
  o.workers = cmd->add_option("--workers", flags->workers, "Engine workers (engine.workers)")
                  ->check(CLI::Range(1, 256));
  o.api_max_connections = cmd->add_option("--api-max-connections", flags->api_max_connections,
                                          "Open API connections at most; more are refused with 503 "
                                          "(api.maxConnections, default 512)");
  o.api_read_header_timeout =
      cmd->add_option("--api-read-header-timeout", flags->api_read_header_timeout,
                      "A request's head must arrive within this (api.readHeaderTimeout, "
                      "default 10s)");
  o.api_read_timeout =
      cmd->add_option("--api-read-timeout", flags->api_read_timeout,
                      "A whole request must arrive within this (api.readTimeout, default 60s)");
  o.tls_cert_file = cmd->add_option("--tls-cert-file", flags->tls_cert_file,
                                    "Serve the API over HTTPS with this PEM certificate chain");
  o.tls_key_file =
      cmd->add_option("--tls-key-file", flags->tls_key_file, "The certificate's PEM private key");
  o.namespace_name = cmd->add_option("--namespace,-n", flags->namespace_name,
                                     "Namespace of the projects' objects (engine.namespace)");
  o.domain = cmd->add_option("--domain", flags->domain,
                             "Project URLs are <name>.<domain> (engine.domain)");
  o.kubeconfig = cmd->add_option("--kubeconfig", flags->kubeconfig,
                                 "Kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)");
  o.context =
      cmd->add_option("--context", flags->context, "Kubeconfig context (default: current-context)");
  o.in_cluster = cmd->add_flag("--in-cluster", flags->in_cluster,
                               "Use the pod's service account (KUBERNETES_SERVICE_HOST/PORT)");
  o.embedded =
      cmd->add_option("--embedded-cluster", flags->embedded_profile,
                      "Run an embedded cluster in this process with PROFILE (instant, realistic, "
                      "hostile or a file; default: the config file's, else realistic)")
          ->expected(0, 1)
          ->default_str("");
  o.ingress_listen = cmd->add_option("--ingress-listen", flags->ingress_listen,
                                     "Embedded cluster's ingress address HOST:PORT");
  o.kubeconfig_out = cmd->add_option("--kubeconfig-out", flags->kubeconfig_out,
                                     "Write a kubeconfig for the embedded cluster to FILE");
  o.instance_access =
      cmd->add_option("--instance-access", flags->instance_access,
                      "How instance operations reach pods: auto (direct in-cluster, else proxy), "
                      "direct, proxy")
          ->check(CLI::IsMember({"auto", "direct", "proxy"}));
  o.log_level =
      cmd->add_option("--log-level", flags->log_level, "trace, debug, info, warn, error")
          ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  o.in_cluster->excludes(o.kubeconfig)->excludes(o.context)->excludes(o.embedded);
  o.embedded->excludes(o.kubeconfig)->excludes(o.context);
  cmd->callback([flags, options] { SetExitCode(RunServe(*flags, *options)); });
}

}  // namespace steward::cli
