#include "torture/oracle.h"

#include <map>
#include <set>
#include <tuple>

#include "common/base64.h"
#include "common/json_access.h"
#include "engine/manifests/manifests.h"
#include "net/http_client.h"

namespace steward::torture {
namespace {

using kube::ResourceType;

int64_t IntAt(const Json& obj, std::string_view path) {
  const Json* v = FindPath(obj, path);
  return v != nullptr && v->is_number_integer() ? v->get<int64_t>() : 0;
}

bool Terminating(const Json& obj) {
  const Json* ts = FindPath(obj, "metadata.deletionTimestamp");
  return ts != nullptr && !ts->is_null();
}

// A failed read: kInconclusive when the cluster did not answer, else the error as shown.
CheckResult ReadFailed(const std::string& what, const kube::ApiError& error) {
  if (error.http_status == 0 && !error.local) {
    return {Verdict::kInconclusive, what + ": cluster unreachable: " + error.message};
  }
  return {Verdict::kViolated, what + ": " + std::to_string(error.http_status) + " " + error.reason +
                                  " " + error.message};
}

// "http://name.localhost:8080/x" → "name.localhost".
std::string HostOfUrl(const std::string& url) {
  std::string rest = url;
  if (auto p = rest.find("://"); p != std::string::npos) rest = rest.substr(p + 3);
  if (auto p = rest.find('/'); p != std::string::npos) rest = rest.substr(0, p);
  if (auto p = rest.find(':'); p != std::string::npos) rest = rest.substr(0, p);
  return rest;
}

}  // namespace

std::optional<Claim> Claim::FromProject(const Json& project) {
  if (!project.is_object()) return std::nullopt;
  const Json& status = project.value("status", Json::object());
  const std::string phase = GetString(status, "phase");
  if (phase != "Running" && phase != "Suspended") return std::nullopt;
  Claim c;
  c.generation = IntAt(project, "generation");
  if (IntAt(status, "observedGeneration") < c.generation) return std::nullopt;
  c.agent = GetString(project, "kind") == "agent";
  c.name = GetString(project, "name");
  c.id = GetString(project, "id");
  c.cluster = GetString(project, "cluster");
  c.phase = phase;
  if (const Json* f = FindPath(project, "spec.credentials.fingerprint"); f && f->is_string()) {
    c.fingerprint = f->get<std::string>();
  }
  if (const Json* image = FindPath(project, "spec.stack.image"); image && image->is_string()) {
    c.image = image->get<std::string>();
  }
  c.restart_epoch = IntAt(project, "restartEpoch");
  c.since_ms = IntAt(status, "since");
  c.url = GetString(status, "url");
  const Json* custom = FindPath(project, "spec.customHostname");
  if (custom != nullptr && custom->is_string()) c.custom_hostname = custom->get<std::string>();
  return c;
}

std::string StaleClaim(const Json& project) {
  if (!project.is_object()) return "";
  const Json& status = project.value("status", Json::object());
  const std::string phase = GetString(status, "phase");
  const int64_t generation = IntAt(project, "generation");
  const int64_t observed = IntAt(status, "observedGeneration");
  if (observed >= generation) return "";
  const std::string desired = GetString(project, "desiredState");
  if (phase == "Running" || (phase == "Suspended" && desired != "suspended")) {
    return phase + " for generation " + std::to_string(generation) + " (desired " + desired +
           ") while observedGeneration is " + std::to_string(observed);
  }
  return "";
}

std::string Claim::Describe() const {
  if (agent) {
    return "agent " + phase + " at generation " + std::to_string(generation) + " (id " + id +
           ", token " + fingerprint + ", restart epoch " + std::to_string(restart_epoch) + ")";
  }
  return phase + " at generation " + std::to_string(generation) + " (id " + id + ", image " +
         image + ", restart epoch " + std::to_string(restart_epoch) +
         (cluster.empty() || cluster == "default" ? "" : ", cluster " + cluster) + ")";
}

Oracle::Oracle(std::shared_ptr<kube::Client> kube, Options options)
    : kube_(std::move(kube)), options_(std::move(options)) {}

CheckResult Oracle::CheckRunning(const Claim& claim) const {
  if (claim.agent) return CheckAgentRunning(claim);
  const auto names = engine::NamesFor(claim.id, claim.name);
  if (auto r = CheckDeployment(claim, names.deployment, claim.image, "");
      r.verdict != Verdict::kHolds) {
    return r;
  }
  std::vector<std::string> pods;
  if (auto r = CheckService(claim, names.service, &pods); r.verdict != Verdict::kHolds) return r;
  if (auto r = CheckIngress(claim, names.ingress, HostOfUrl(claim.url));
      r.verdict != Verdict::kHolds) {
    return r;
  }
  if (!claim.custom_hostname.empty()) {
    return CheckIngress(claim, names.custom_ingress, claim.custom_hostname);
  }
  return {};
}

CheckResult Oracle::CheckDeployment(const Claim& claim, const std::string& name,
                                    const std::string& image,
                                    const std::string& credential_id) const {
  auto deployment = kube_->Get(ResourceType::Deployment(), options_.ns, name);
  if (!deployment.ok()) return ReadFailed("Deployment " + name, deployment.error());
  const Json& d = *deployment;
  std::vector<std::string> wrong;
  if (Terminating(d)) wrong.push_back("terminating");
  if (LabelOf(d, engine::kProjectLabel) != claim.id) {
    wrong.push_back("belongs to project " + LabelOf(d, engine::kProjectLabel));
  }
  const int64_t replicas = IntAt(d, "spec.replicas");
  const int64_t generation = IntAt(d, "metadata.generation");
  const int64_t observed = IntAt(d, "status.observedGeneration");
  if (observed < generation) {
    wrong.push_back("observedGeneration " + std::to_string(observed) + " < generation " +
                    std::to_string(generation));
  }
  for (const char* field : {"updatedReplicas", "readyReplicas", "availableReplicas"}) {
    const int64_t n = IntAt(d, std::string("status.") + field);
    if (n < replicas) {
      wrong.push_back(std::string(field) + " " + std::to_string(n) + " of " +
                      std::to_string(replicas));
    }
  }
  if (replicas < 1) wrong.push_back("spec.replicas " + std::to_string(replicas));
  if (!image.empty()) {
    const Json* containers = FindPath(d, "spec.template.spec.containers");
    const std::string got = containers != nullptr && containers->is_array() && !containers->empty()
                                ? GetString((*containers)[0], "image")
                                : "";
    if (got != image) wrong.push_back("image " + got);
  }
  const Json* annotations = FindPath(d, "spec.template.metadata.annotations");
  auto annotation = [&](std::string_view key) {
    return annotations != nullptr ? GetString(*annotations, key) : std::string();
  };
  if (const std::string epoch = annotation(engine::kRestartAnnotation);
      epoch != std::to_string(claim.restart_epoch)) {
    wrong.push_back("pod template restart epoch '" + epoch + "'");
  }
  if (const std::string credential = annotation(engine::kCredentialAnnotation);
      !credential_id.empty() && credential != credential_id) {
    wrong.push_back("pod template credential '" + credential + "', claimed '" + credential_id +
                    "'");
  }
  if (!wrong.empty()) {
    std::string s = "Deployment " + name + ":";
    for (const auto& w : wrong) s += " " + w + ";";
    return {Verdict::kViolated, s};
  }
  return {};
}

CheckResult Oracle::CheckService(const Claim& claim, const std::string& name,
                                 std::vector<std::string>* pods) const {
  const std::string& ns = options_.ns;
  auto service = kube_->Get(ResourceType::Service(), ns, name);
  if (!service.ok()) return ReadFailed("Service " + name, service.error());
  if (Terminating(*service)) return {Verdict::kViolated, "Service " + name + " terminating"};
  if (LabelOf(*service, engine::kProjectLabel) != claim.id) {
    return {Verdict::kViolated, "Service " + name + " belongs to project '" +
                                    LabelOf(*service, engine::kProjectLabel) + "'"};
  }

  kube::ListOptions by_service;
  by_service.label_selector = "kubernetes.io/service-name=" + name;
  auto slices = kube_->List(ResourceType::EndpointSlice(), ns, by_service);
  if (!slices.ok()) return ReadFailed("EndpointSlices of " + name, slices.error());
  for (const Json& slice : slices->items) {
    const Json* endpoints = FindPath(slice, "endpoints");
    if (endpoints == nullptr || !endpoints->is_array()) continue;
    for (const Json& e : *endpoints) {
      const Json* r = FindPath(e, "conditions.ready");
      if (r != nullptr && r->is_boolean() && r->get<bool>()) {
        const Json* pod = FindPath(e, "targetRef.name");
        pods->push_back(pod != nullptr && pod->is_string() ? pod->get<std::string>() : "");
      }
    }
  }
  if (pods->empty()) return {Verdict::kViolated, "Service " + name + ": no ready endpoint"};
  return {};
}

CheckResult Oracle::CheckAgentRunning(const Claim& claim) const {
  if (claim.fingerprint.empty()) {
    return {Verdict::kViolated, "the agent record shows no credentials fingerprint"};
  }
  const std::string credential_id =
      std::string(engine::kSuppliedCredentialPrefix) + claim.fingerprint;
  if (auto r = CheckDeployment(claim, claim.name, "", credential_id);
      r.verdict != Verdict::kHolds) {
    return r;
  }
  std::vector<std::string> pods;
  if (auto r = CheckService(claim, claim.name, &pods); r.verdict != Verdict::kHolds) return r;
  return CheckAgentAnswers(claim, pods.front());
}

// The ready pod `pod` is the agent's, holds the claimed token, and answers its status API.
CheckResult Oracle::CheckAgentAnswers(const Claim& claim, const std::string& pod) const {
  auto got = kube_->Get(ResourceType::Pod(), options_.ns, pod);
  if (!got.ok()) {
    if (got.error().IsNotFound())
      return {Verdict::kViolated, "the ready endpoint's pod " + pod + " does not exist"};
    return ReadFailed("Pod " + pod, got.error());
  }
  if (LabelOf(*got, engine::kProjectLabel) != claim.id) {
    return {Verdict::kViolated, "the ready endpoint's pod " + pod + " is of project '" +
                                    LabelOf(*got, engine::kProjectLabel) + "'"};
  }
  const Json* annotations = FindPath(*got, "metadata.annotations");
  const std::string credential =
      annotations != nullptr ? GetString(*annotations, engine::kCredentialAnnotation) : "";
  if (credential != std::string(engine::kSuppliedCredentialPrefix) + claim.fingerprint) {
    return {Verdict::kViolated, "the ready pod " + pod + " holds credential '" + credential + "'"};
  }
  kube::TransportRequest request;
  request.method = "GET";
  request.target = "/api/v1/namespaces/" + options_.ns + "/pods/" + pod + ":" +
                   std::to_string(engine::kAgentPort) + "/proxy/api/v1/status";
  request.timeout = std::chrono::seconds(10);
  auto answer = kube_->transport().Do(request);
  if (!answer.ok()) {
    return {Verdict::kInconclusive, "pod proxy to " + pod + ": " + answer.error().ToString()};
  }
  auto body = ParseJson(answer->body);
  if (answer->status != 200 || !body.ok() || !body->is_object() ||
      !body->value("connected", Json()).is_boolean()) {
    return {Verdict::kViolated, "GET :3500/api/v1/status of pod " + pod + ": " +
                                    std::to_string(answer->status) + " " +
                                    answer->body.substr(0, 200)};
  }
  return {};
}

// The Ingress `name` exists, has its address, and `GET /` with `host` through the ingress
// listener reaches a pod of the claimed project running the claimed image.
CheckResult Oracle::CheckIngress(const Claim& claim, const std::string& name,
                                 const std::string& host) const {
  const std::string& ns = options_.ns;
  auto ingress = kube_->Get(ResourceType::Ingress(), ns, name);
  if (!ingress.ok()) return ReadFailed("Ingress " + name, ingress.error());
  if (Terminating(*ingress)) return {Verdict::kViolated, "Ingress " + name + " terminating"};
  const Json* lb = FindPath(*ingress, "status.loadBalancer.ingress");
  if (lb == nullptr || !lb->is_array() || lb->empty()) {
    return {Verdict::kViolated, "Ingress " + name + ": no address"};
  }

  // Through the ingress listener, as a user opening the URL would.
  if (host.empty()) return {Verdict::kViolated, "status.url '" + claim.url + "' has no host"};
  net::HttpClient::Options http;
  http.host = options_.ingress_host;
  http.port = options_.ingress_port;
  http.timeout = std::chrono::seconds(10);
  auto client = net::HttpClient::Create(http);
  net::Headers headers;
  headers.Set("Host", host);
  headers.Set("Accept", "application/json");
  auto answer = client->Request("GET", "/", "", headers);
  if (!answer.ok()) {
    return {Verdict::kInconclusive, "ingress listener unreachable: " + answer.error().ToString()};
  }
  if (answer->status != 200) {
    return {Verdict::kViolated, "GET http://" + host +
                                    "/ through the ingress: " + std::to_string(answer->status) +
                                    " " + answer->body.substr(0, 200)};
  }
  auto body = ParseJson(answer->body);
  if (!body.ok())
    return {Verdict::kViolated, "ingress answer is not JSON: " + answer->body.substr(0, 200)};
  const std::string pod_name = GetString(*body, "pod");
  if (GetString(*body, "image") != claim.image) {
    return {Verdict::kViolated,
            "ingress reached pod " + pod_name + " running image " + GetString(*body, "image")};
  }
  auto pod = kube_->Get(ResourceType::Pod(), ns, pod_name);
  if (!pod.ok()) {
    if (pod.error().IsNotFound())
      return {Verdict::kViolated, "ingress reached pod " + pod_name + " which does not exist"};
    return ReadFailed("Pod " + pod_name, pod.error());
  }
  if (LabelOf(*pod, engine::kProjectLabel) != claim.id) {
    return {Verdict::kViolated, "ingress reached pod " + pod_name + " of project '" +
                                    LabelOf(*pod, engine::kProjectLabel) + "'"};
  }
  return {};
}

CheckResult Oracle::CheckSuspended(const Claim& claim) const {
  const auto names = engine::NamesFor(claim.id, claim.name);
  struct Want {
    const ResourceType* type;
    std::string name;
  };
  std::vector<Want> wants;
  if (claim.agent) {
    wants = {{&ResourceType::Deployment(), claim.name}, {&ResourceType::Service(), claim.name}};
  } else {
    wants = {{&ResourceType::Deployment(), names.deployment},
             {&ResourceType::Service(), names.service},
             {&ResourceType::Ingress(), names.ingress},
             {&ResourceType::Ingress(), names.custom_ingress}};
  }
  std::string present;
  for (const Want& w : wants) {
    auto got = kube_->Get(*w.type, options_.ns, w.name);
    if (got.ok()) {
      present += " " + w.type->kind + " " + w.name + (Terminating(*got) ? " (terminating)" : "") +
                 " of project '" + LabelOf(*got, engine::kProjectLabel) + "';";
      continue;
    }
    if (!got.error().IsNotFound()) return ReadFailed(w.type->kind + " " + w.name, got.error());
  }
  // No pod of it either: "suspended" means nothing of it runs.
  kube::ListOptions of_it;
  of_it.label_selector = std::string(engine::kProjectLabel) + "=" + claim.id;
  auto pods = kube_->List(ResourceType::Pod(), options_.ns, of_it);
  if (!pods.ok()) return ReadFailed("pods of " + claim.id, pods.error());
  for (const Json& pod : pods->items) {
    present += " Pod " + GetString(pod["metadata"], "name") +
               (Terminating(pod) ? " (terminating)" : "") + ";";
  }
  if (!present.empty()) return {Verdict::kViolated, "still present:" + present};
  return {};
}

ScanResult Oracle::ScanLabelled() const {
  ScanResult result;
  kube::ListOptions options;
  options.label_selector =
      std::string(engine::kManagedByLabel) + "=" + std::string(engine::kManagedByValue);
  for (const ResourceType* type :
       {&ResourceType::Deployment(), &ResourceType::Service(), &ResourceType::Ingress(),
        &ResourceType::Secret(), &ResourceType::PersistentVolumeClaim()}) {
    auto list = kube_->ListAll(*type, options_.ns, options);
    if (!list.ok()) {
      result.verdict = Verdict::kInconclusive;
      result.error = "listing " + type->resource + ": " + list.error().message;
      return result;
    }
    for (const Json& item : list->items) {
      const bool supplied = type == &ResourceType::Secret() &&
                            LabelOf(item, engine::kCredentialsLabel) == engine::kSuppliedValue;
      result.objects.push_back(
          {supplied ? std::string(kSuppliedSecret) : type->kind,
           GetString(item["metadata"], "name"), GetString(item["metadata"], "uid"),
           LabelOf(item, engine::kProjectLabel), Terminating(item), options_.cluster});
    }
  }
  return result;
}

std::vector<std::string> Oracle::Duplicates(const std::vector<LabelledObject>& objects,
                                            const std::set<std::string>& moving) {
  // By (project, kind, cluster: "" but for a project being moved).
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::string>> by;
  for (const auto& o : objects) {
    const std::string apart = moving.count(o.project_id) ? o.cluster : "";
    by[{o.project_id, o.kind, apart}].push_back(o.cluster == "default" ? o.name
                                                                       : o.cluster + "/" + o.name);
  }
  std::vector<std::string> out;
  for (const auto& [key, names] : by) {
    const auto& [project, kind, apart] = key;
    size_t allowed = kind == "Ingress" ? 2 : 1;
    if (kind == kSuppliedSecret) allowed = names.size();
    if (names.size() <= allowed) continue;
    std::string s =
        "project " + project + " has " + std::to_string(names.size()) + " " + kind + " objects:";
    for (const auto& n : names) s += " " + n;
    out.push_back(s);
  }
  return out;
}

std::optional<std::string> Oracle::SecretToken(const std::string& name,
                                               const std::string& id) const {
  const auto names = engine::NamesFor(id, name);
  auto secret = kube_->Get(ResourceType::Secret(), options_.ns, names.secret);
  if (!secret.ok()) {
    if (secret.error().IsNotFound()) return std::string();
    if (secret.error().http_status == 0) return std::nullopt;
    return std::string();
  }
  if (Terminating(*secret) || LabelOf(*secret, engine::kProjectLabel) != id) return std::string();
  const Json* data = FindPath(*secret, "data");
  if (data == nullptr || !data->is_object()) return std::string();
  auto token = Base64Decode(GetString(*data, "FORGE_PROJECT_TOKEN"));
  return token.value_or("");
}

}  // namespace steward::torture
