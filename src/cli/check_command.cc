// `steward check`: connects to a cluster the way Steward will and reports, step by step, whether
// it can do its job there: configuration, TLS and credentials, the namespace, every permission
// Steward uses there (one SelfSubjectAccessReview per verb and resource, each missing one named),
// a list of every kind Steward manages, and a watch (an informer sync). Exit 0 when every step
// passes.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app/app.h"
#include "app/permissions.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/kube_flags.h"
#include "common/json.h"
#include "common/json_access.h"
#include "common/log.h"
#include "kube/client/client.h"
#include "kube/informer/informer.h"
#include "kube/transport/transport.h"

namespace steward::cli {
namespace {

struct CheckFlags {
  KubeFlags kube;
  // --config FILE --cluster NAME: check that cluster of the configuration as Steward reaches it.
  std::string config_file;
  std::string cluster;
  int timeout_seconds = 20;
  bool replicas = false;  // check the Lease verbs too (replicas.enabled)
};

void Pass(const std::string& what) { std::printf("ok    %s\n", what.c_str()); }
int Fail(const std::string& what) {
  std::printf("FAIL  %s\n", what.c_str());
  std::fflush(stdout);
  return kExitFailed;
}

// Asks the API server, one SelfSubjectAccessReview per verb, whether the credentials may do
// everything Steward does in `ns`; prints one FAIL line per missing permission. The number of
// failures, or -1 (with the FAIL line) when the reviews themselves cannot be made.
int CheckPermissions(kube::Transport& transport, const std::string& ns, bool replicas) {
  int missing = 0;
  int granted = 0;
  for (const app::Permission& p : app::RequiredPermissions(replicas)) {
    const std::string what = p.group.empty() ? p.resource : p.resource + "." + p.group;
    for (const std::string& verb : p.verbs) {
      kube::TransportRequest request;
      request.method = "POST";
      request.target = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
      request.content_type = "application/json";
      request.body = DumpJson(Json{
          {"apiVersion", "authorization.k8s.io/v1"},
          {"kind", "SelfSubjectAccessReview"},
          {"spec",
           {{"resourceAttributes",
             {{"namespace", ns}, {"verb", verb}, {"group", p.group}, {"resource", p.resource}}}}}});
      auto response = transport.Do(request);
      if (!response.ok() || response->status != 201) {
        Fail("permissions: SelfSubjectAccessReview failed: " +
             (response.ok() ? std::to_string(response->status) + " " + response->body.substr(0, 200)
                            : response.error().ToString()));
        return -1;
      }
      auto review = ParseJson(response->body);
      const Json* allowed_field = review.ok() ? FindPath(*review, "status.allowed") : nullptr;
      const bool allowed = allowed_field != nullptr && *allowed_field == true;
      if (allowed) {
        ++granted;
        continue;
      }
      ++missing;
      Fail("permission: " + verb + " " + what + " in " + ns +
           " is not granted (Steward needs it for " + p.why + ")");
    }
  }
  if (missing == 0)
    Pass("permissions: all " + std::to_string(granted) + " verbs Steward uses in " + ns);
  return missing;
}

// The kube flags a cluster of the configuration file stands for (flags given win).
StatusOr<KubeFlags> FlagsOfCluster(const CheckFlags& flags) {
  KubeFlags kube = flags.kube;
  if (flags.cluster.empty()) {
    if (!flags.config_file.empty()) return InvalidArgument("--config: only with --cluster");
    return kube;
  }
  if (flags.config_file.empty()) return InvalidArgument("--cluster: needs --config FILE");
  ASSIGN_OR_RETURN(app::ServeConfig serve, app::LoadServeConfig(flags.config_file));
  for (const app::ServeConfig::Cluster& c : app::EffectiveClusters(serve)) {
    if (c.name != flags.cluster) continue;
    if (c.cluster == app::ClusterSource::kEmbedded) {
      return InvalidArgument("--cluster: " + c.name +
                             " is an embedded cluster (Steward starts it; nothing to check)");
    }
    if (kube.kubeconfig.empty() && kube.context.empty() && !kube.in_cluster) {
      kube.kubeconfig = c.kubeconfig;
      kube.context = c.context;
      kube.in_cluster = c.cluster == app::ClusterSource::kInCluster;
    }
    if (kube.namespace_name.empty()) kube.namespace_name = c.engine.namespace_name;
    return kube;
  }
  return InvalidArgument("--cluster: the configuration lists no cluster \"" + flags.cluster + "\"");
}

int RunCheck(const CheckFlags& flags) {
  spdlog::set_level(spdlog::level::warn);
  auto kube_flags = FlagsOfCluster(flags);
  if (!kube_flags.ok()) return Fail("configuration: " + kube_flags.error().message());
  auto config = LoadRestConfig(*kube_flags);
  if (!config.ok()) return Fail("configuration: " + config.error().message());
  Pass("configuration: " + config->source + " → " + config->server + ", namespace " +
       config->namespace_name);

  kube::TransportOptions options;
  options.default_timeout = std::chrono::seconds(flags.timeout_seconds);
  auto transport = kube::Transport::Create(*config, options);
  if (!transport.ok()) return Fail("transport: " + transport.error().message());
  auto client = std::make_shared<kube::Client>(*transport);

  // Reaching the server proves TLS and the route; /version needs no permission.
  kube::TransportRequest version_request;
  version_request.method = "GET";
  version_request.target = "/version";
  auto version = (*transport)->Do(version_request);
  if (!version.ok()) return Fail("server: " + version.error().ToString());
  if (version->status != 200) {
    return Fail("server: GET /version answered " + std::to_string(version->status) + ": " +
                version->body.substr(0, 200));
  }
  auto version_json = ParseJson(version->body);
  Pass("server: Kubernetes " + (version_json.ok()
                                    ? GetString(*version_json, "gitVersion", "(unknown version)")
                                    : std::string("(version not readable)")));

  const std::string& ns = config->namespace_name;
  auto ns_object = client->Get(kube::ResourceType::Namespace(), "", ns);
  if (!ns_object.ok()) {
    if (ns_object.error().IsNotFound()) {
      return Fail("namespace " + ns + ": does not exist (create it, or choose one with -n)");
    }
    // Without permission to read namespaces, the list checks below still tell whether the
    // namespace is usable.
    if (!ns_object.error().IsForbidden()) {
      return Fail("namespace " + ns + ": " + ns_object.error().ToString());
    }
    Pass("namespace " + ns + ": not readable (" + ns_object.error().reason +
         "), checking the kinds inside it");
  } else {
    Pass("namespace " + ns + ": exists");
  }

  if (CheckPermissions(**transport, ns, flags.replicas) != 0) return kExitFailed;

  const std::vector<const kube::ResourceType*> kinds = {
      &kube::ResourceType::Secret(),     &kube::ResourceType::PersistentVolumeClaim(),
      &kube::ResourceType::Deployment(), &kube::ResourceType::Service(),
      &kube::ResourceType::Ingress(),    &kube::ResourceType::EndpointSlice(),
      &kube::ResourceType::Pod(),        &kube::ResourceType::ReplicaSet()};
  int failures = 0;
  for (const auto* kind : kinds) {
    kube::ListOptions list_options;
    list_options.limit = 1;
    auto list = client->List(*kind, ns, list_options);
    if (list.ok()) {
      Pass("list " + kind->GroupResource() + " in " + ns);
    } else {
      failures +=
          Fail("list " + kind->GroupResource() + " in " + ns + ": " + list.error().ToString());
    }
  }
  if (failures > 0) return kExitFailed;

  // A watch through an informer: what the engine relies on for every wait.
  kube::InformerOptions informer_options;
  informer_options.name = "check";
  kube::Informer informer(kube::MakeListerWatcher(client, kube::ResourceType::Deployment(), ns,
                                                  "app.kubernetes.io/managed-by=steward"),
                          informer_options);
  informer.Start();
  bool synced = informer.WaitForSync(std::chrono::seconds(flags.timeout_seconds));
  informer.Stop();
  if (!synced) {
    return Fail("watch deployments.apps in " + ns + ": no sync within " +
                std::to_string(flags.timeout_seconds) + " s");
  }
  Pass("watch deployments.apps in " + ns + ": synced (" + std::to_string(informer.size()) +
       " managed by Steward)");
  std::printf("Steward can work with this cluster.\n");
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace

void AddCheckCommand(CLI::App& app) {
  auto flags = std::make_shared<CheckFlags>();
  auto* cmd = app.add_subcommand(
      "check",
      "Check that Steward can work with a cluster: configuration, TLS and credentials, the "
      "namespace, every permission Steward uses there, a list of every managed kind, and a "
      "watch");
  AddKubeFlags(*cmd, flags->kube);
  cmd->add_option("--config", flags->config_file, "Steward's configuration file (with --cluster)");
  cmd->add_option("--cluster", flags->cluster,
                  "Check this cluster of the configuration file (clusters[].name; \"default\" "
                  "without clusters:) as Steward reaches it: its kubeconfig, context and "
                  "namespace, unless flags give them");
  cmd->add_flag("--replicas", flags->replicas,
                "Also check the Lease verbs that several replicas need (replicas.enabled)");
  cmd->add_option("--timeout", flags->timeout_seconds, "Seconds allowed for each step")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  cmd->callback([flags] { SetExitCode(RunCheck(*flags)); });
}

}  // namespace steward::cli
