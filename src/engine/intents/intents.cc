#include "engine/intents/intents.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "common/ascii.h"
#include "common/fields.h"
#include "common/json_access.h"
#include "common/log.h"
#include "common/secure_random.h"
#include "engine/intents/intents_internal.h"
#include "engine/manifests/manifests.h"
#include "engine/model/agent.h"

namespace steward::engine {
namespace {

using namespace intents_internal;  // NOLINT(google-build-using-namespace): this module's own

using store::DesiredState;
using store::ProjectRecord;

std::string NewProjectId() { return SecureRandomUuid(); }  // as FlowFuse ids look

store::Credential NewCredential(const std::string& project_id, store::CredentialState state) {
  store::Credential c;
  c.id = NewCredentialId();
  c.project_id = project_id;
  c.token = NewToken();
  c.state = state;
  return c;
}

// The update half of a put: the canonical spec `stored` (and a start) onto `r` with a new
// generation and a history line. False, with nothing touched, when both are as stored already.
bool ApplyPut(ProjectRecord& r, store::Mutation& m, const Json& stored, const std::string& team,
              bool start) {
  const std::string canonical = DumpJson(stored);
  const bool want_start = start && r.desired != DesiredState::kRunning;
  if (r.spec_json == canonical && !want_start) return false;
  r.spec_json = canonical;
  r.team = team;
  if (want_start) r.desired = DesiredState::kRunning;
  ++r.generation;
  MarkAccepted(r);
  // The detail is the spec as stored: the same text, serialised once.
  m.history.push_back(
      OperationText(want_start ? "update+start" : "update", r.generation, r.spec_json));
  return true;
}

const EngineConfig& DefaultConfig() {
  static const EngineConfig config;
  return config;
}

// The spec.url a stored project keeps ("" when none, or when it is an agent or unreadable).
std::string StoredUrl(const ProjectRecord& r) {
  if (r.kind != store::RecordKind::kProject) return "";
  auto j = ParseJson(r.spec_json);
  if (!j.ok()) return "";
  auto spec = ParseProjectSpec(*j);
  return spec.ok() ? spec->url : "";
}

// The generated hosts of the names project `id` had before a rename (its history's "rename"
// lines): FlowFuse keeps an instance's URL across renames, so a renamed instance's next spec
// carries <old name>.<domain>.
StatusOr<std::vector<std::string>> FormerNameHosts(store::Store& store, const EngineConfig& config,
                                                   const std::string& id) {
  constexpr int kPage = 500;
  std::vector<std::string> out;
  int64_t after = 0;
  while (true) {
    ASSIGN_OR_RETURN(std::vector<store::HistoryEntry> page, store.ListHistory(id, after, kPage));
    for (const store::HistoryEntry& e : page) {
      if (e.kind != "operation" || e.summary != "rename") continue;
      auto detail = ParseJson(e.detail_json);
      const std::string from = detail.ok() ? GetString(*detail, "from") : "";
      if (!from.empty()) out.push_back(AsciiLower(DnsLabelOf(from) + "." + config.domain));
    }
    if (page.size() < kPage) return out;
    after = page.back().seq;
  }
}

// The hosts record `r` holds besides its name's: its stored URL's, and `former` (its former
// names' hosts, when they were read for it).
std::vector<std::string> HeldHosts(const ProjectRecord& r, std::vector<std::string> former) {
  if (const std::optional<UrlParts> url = SplitInstanceUrl(StoredUrl(r))) {
    former.push_back(AsciiLower(url->host));
  }
  return former;
}

// A put of one kind on a name a record of the other kind holds.
Status RefuseOtherKind(const ProjectRecord& r, store::RecordKind kind) {
  if (r.kind == kind) return Status::Ok();
  return AlreadyExists(
      "name " + r.name + " is taken by " +
      (r.kind == store::RecordKind::kAgent ? "an MQTT schema agent" : "a project") +
      " (its objects would have the same names)");
}

// An agent's name lowercases its team and broker and joins them with dashes, so (aBc, b) and
// (AbC, b), or (x-y, z) and (x, y-z), get one name: a put whose (team, broker) is not the stored
// agent's is another agent, and must not take this one over (nor replace its token).
Status RefuseOtherAgent(const ProjectRecord& r, const AgentSpec& wanted) {
  auto json = ParseJson(r.spec_json);
  auto stored = json.ok() ? ParseAgentSpec(*json) : StatusOr<AgentSpec>(json.error());
  if (stored.ok() && stored->team == wanted.team && stored->broker == wanted.broker) {
    return Status::Ok();
  }
  return AlreadyExists("agent name " + r.name +
                       " is taken by the agent of another team or broker (the name lowercases "
                       "both: pairs that differ in case or in where a dash falls share it)");
}

// A put by name alone must not move another team's project to the caller's team: a team change
// names the project's id (as a platform moving an instance between its teams does).
Status RefuseTeamChangeByName(const ProjectRecord& r, std::string_view team, std::string_view id) {
  if (r.team == team || r.id == id) return Status::Ok();
  return AlreadyExists("project " + r.name +
                       " belongs to another team: a put that changes a project's team must name "
                       "its id (\"id\" in the body)");
}

// The record's cluster is no longer the one its put was checked for (a move, or a create of the
// same name placed elsewhere, came in between).
Status RefuseMovedMeanwhile(const ProjectRecord& r, std::string_view cluster) {
  if (r.cluster == cluster) return Status::Ok();
  return Aborted(std::string(KindWord(r.kind)) + " " + r.name + " went to cluster " + r.cluster +
                 " while the request was checked for " + std::string(cluster) +
                 "; send the request again");
}

}  // namespace

std::string NewToken() { return SecureRandomHex(32); }
std::string NewCredentialId() { return "c-" + SecureRandomHex(8); }

Intents::Intents(store::Store& store, Enqueue enqueue, const EngineConfig* config,
                 CredentialVault* vault, Placement* placement)
    : store_(store),
      enqueue_(std::move(enqueue)),
      config_(config != nullptr ? *config : DefaultConfig()),
      vault_(vault),
      placement_(placement) {}

const EngineConfig& Intents::ConfigOf(std::string_view cluster) const {
  if (placement_ == nullptr) return config_;
  const ClusterTarget* c = placement_->Find(cluster);
  return c != nullptr && c->config != nullptr ? *c->config : config_;
}

StatusOr<ClusterTarget> Intents::TargetOf(std::string_view name, const PlacementRequest& request,
                                          std::string_view team) {
  if (placement_ == nullptr) {
    if (!request.cluster.empty() && request.cluster != kDefaultCluster) {
      return InvalidField("spec.cluster",
                          "no cluster \"" + request.cluster + "\" is configured (known: default)");
    }
    ClusterTarget one;
    one.name = std::string(kDefaultCluster);
    one.config = &config_;
    one.vault = vault_;
    return one;
  }
  auto existing = store_.GetProjectByName(name);
  if (existing.ok()) {
    if (request.strict && request.cluster != existing->cluster) {
      return FailedPrecondition("spec.cluster: " + std::string(KindWord(existing->kind)) + " " +
                                existing->name + " is on cluster " + existing->cluster +
                                "; a move (POST .../move) takes it to another");
    }
    const ClusterTarget* on = placement_->Find(existing->cluster);
    if (on == nullptr) {
      return FailedPrecondition(std::string(KindWord(existing->kind)) + " " + existing->name +
                                " is on cluster " + existing->cluster +
                                ", which this Steward's configuration does not list");
    }
    return *on;
  }
  if (existing.error().code() != StatusCode::kNotFound) return existing.error();
  ASSIGN_OR_RETURN(const ClusterTarget* placed, placement_->Place(request, team));
  return *placed;
}

std::vector<std::string> ProjectClaims(const EngineConfig& config, std::string_view id,
                                       std::string_view name, const ProjectSpec& spec) {
  std::vector<std::string> claims = ProjectHostnames(config, name, spec);
  claims.push_back(store::ReferenceClaim(id));
  claims.push_back(store::ReferenceClaim(name));
  RenderInput in;
  in.id = std::string(id);
  in.name = std::string(name);
  in.config = &config;
  in.resolved = Resolve(config, name, spec);
  const Manifests m = Render(in);
  auto claim = [&](const Json& object) {
    claims.push_back(GetString(object, "kind") + "/" + GetString(object["metadata"], "name"));
    if (const Json* tls = FindPath(object, "spec.tls"); tls != nullptr && tls->is_array()) {
      for (const Json& t : *tls) claims.push_back("Secret/" + GetString(t, "secretName"));
    }
  };
  // The generated credentials' Secret name stays claimed while supplied ones are used: going
  // back to generated credentials must not find it taken.
  claims.push_back("Secret/" + m.names.secret);
  if (m.pvc) claim(*m.pvc);
  claim(m.deployment);
  claim(m.service);
  claim(m.ingress);
  if (m.custom_ingress) claim(*m.custom_ingress);
  std::sort(claims.begin(), claims.end());
  claims.erase(std::unique(claims.begin(), claims.end()), claims.end());
  return claims;
}

void Intents::Notify(const ProjectRecord& record) const {
  if (enqueue_) enqueue_(record);
}

StatusOr<ProjectRecord> Intents::Find(std::string_view id_or_name, store::RecordKind kind) {
  auto found = store_.GetProject(id_or_name);
  if (!found.ok() && found.error().code() == StatusCode::kNotFound) {
    found = store_.GetProjectByName(id_or_name);
  }
  if ((!found.ok() && found.error().code() == StatusCode::kNotFound) ||
      (found.ok() && found->kind != kind)) {
    return NotFound(std::string(KindWord(kind)) + " " + std::string(id_or_name) + " not found");
  }
  return found;
}

StatusOr<Intents::PutResult> Intents::Put(std::string_view name, const Json& spec_json,
                                          std::string_view id, bool start) {
  // The one place a put is validated: the API hands the request over as it came.
  if (Status s = ValidateProjectName(name); !s.ok()) return InvalidField("name", s.message());
  if (!id.empty()) {
    if (Status s = ValidateProjectId(id); !s.ok()) return InvalidField("id", s.message());
  }
  Json spec_copy;
  const Json* spec_in = &spec_json;
  PlacementRequest where;
  if (spec_json.is_object() && (spec_json.contains("cluster") || spec_json.contains("placement"))) {
    spec_copy = spec_json;
    ASSIGN_OR_RETURN(where, TakePlacementRequest(spec_copy, "spec"));
    spec_in = &spec_copy;
  }
  CredentialsInput credentials;
  ASSIGN_OR_RETURN(ProjectSpec spec, ParseProjectSpec(*spec_in, "spec", &credentials));
  ASSIGN_OR_RETURN(const ClusterTarget target, TargetOf(name, where, spec.team));
  const EngineConfig& config = *target.config;
  CredentialVault* const vault = target.vault;
  RETURN_IF_ERROR(CheckSpecPolicy(config, spec, "spec"));
  // A kept URL on <label>.<domain> other than its name's is the project's only when it holds that
  // host already (its stored URL's, a former name's): read only when the check fails without
  // them, and checked again in the transaction against the record found there.
  std::string held_id;
  std::vector<std::string> former;
  if (Status hosts = CheckCustomHostnamePolicy(config, name, spec); !hosts.ok()) {
    if (spec.url.empty()) return hosts;
    auto existing = store_.GetProjectByName(name);
    if (!existing.ok() && existing.error().code() != StatusCode::kNotFound) {
      return existing.error();
    }
    if (!existing.ok() || existing->kind != store::RecordKind::kProject) return hosts;
    held_id = existing->id;
    ASSIGN_OR_RETURN(former, FormerNameHosts(store_, config, held_id));
    RETURN_IF_ERROR(CheckCustomHostnamePolicy(config, name, spec, HeldHosts(*existing, former)));
  }

  // Supplied values go to their Secret before the intent that names them is committed, so the
  // engine never renders a reference to a Secret that was never written. That needs the id of
  // the project the name will be: the existing one's, else a new one (checked again inside the
  // transaction, in case the name changed hands in between).
  std::string project_id(id);
  std::string created;  // the version of a Secret this Put created, to discard if not committed
  if (credentials.mode == CredentialsInput::Mode::kSupplied) {
    if (vault == nullptr) {
      return FailedPrecondition(
          "spec.credentials: supplied credentials need the engine's Kubernetes client, which "
          "this Steward does not have");
    }
    auto existing = store_.GetProjectByName(name);
    if (existing.ok()) {
      RETURN_IF_ERROR(RefuseOtherKind(*existing, store::RecordKind::kProject));
      RETURN_IF_ERROR(RefuseTeamChangeByName(*existing, spec.team, id));  // before its Secret
      if (!project_id.empty() && project_id != existing->id) {
        return AlreadyExists("project name " + std::string(name) + " is taken by project " +
                             existing->id);
      }
      RETURN_IF_ERROR(RefuseIfDeleting(*existing));  // before anything is written for it
      project_id = existing->id;
    } else if (existing.error().code() != StatusCode::kNotFound) {
      return existing.error();
    } else if (project_id.empty()) {
      project_id = NewProjectId();
    }
    ASSIGN_OR_RETURN(created, vault->Put(project_id, std::string(name), credentials.values));
  }

  // The spec as it will be stored, given the project's current credentials (kKeep keeps them).
  auto final_spec = [&](const std::optional<CredentialsRef>& current) -> StatusOr<ProjectSpec> {
    ProjectSpec out = spec;
    switch (credentials.mode) {
      case CredentialsInput::Mode::kKeep:
        out.credentials = current;
        break;
      case CredentialsInput::Mode::kFingerprint:
        if (!current || *current != credentials.ref) {
          return InvalidField("spec.credentials.fingerprint",
                              "is not the project's current credentials (send the values to "
                              "change them, or {} for Steward-generated ones)");
        }
        break;
      case CredentialsInput::Mode::kGenerated:
      case CredentialsInput::Mode::kSupplied:
        break;
    }
    return out;
  };

  // One transaction: no create of the same name and no purge can come between the look-up and
  // the write.
  bool changed = false;
  auto create = [&](ProjectRecord& r, store::Mutation& m) -> Status {
    if (!held_id.empty()) RETURN_IF_ERROR(CheckCustomHostnamePolicy(config, name, spec));
    r.id = project_id.empty() ? NewProjectId() : project_id;
    r.cluster = target.name;
    ASSIGN_OR_RETURN(ProjectSpec stored, final_spec(std::nullopt));
    r.team = stored.team;
    r.spec_json = DumpJson(ToJson(stored));
    r.desired = start ? DesiredState::kRunning : DesiredState::kSuspended;
    r.generation = 1;
    // The first credentials are active at once: no instance holds any other. None with
    // supplied ones: nothing would read them.
    if (!stored.credentials) {
      m.credentials.push_back(NewCredential(r.id, store::CredentialState::kActive));
    }
    m.history.push_back(OperationText(start ? "create+start" : "create", 1, r.spec_json));
    m.hostnames = ProjectClaims(config, r.id, name, stored);
    changed = true;
    return Status::Ok();
  };
  auto update = [&](ProjectRecord& r, const std::vector<store::Credential>& creds,
                    store::Mutation& m) -> Status {
    if (!project_id.empty() && project_id != r.id) {
      if (!id.empty()) {
        return AlreadyExists("project name " + std::string(name) + " is taken by project " + r.id);
      }
      return Aborted("project " + std::string(name) +
                     " was deleted and created again while its credentials were stored; send "
                     "the request again");
    }
    RETURN_IF_ERROR(RefuseOtherKind(r, store::RecordKind::kProject));
    RETURN_IF_ERROR(RefuseMovedMeanwhile(r, target.name));
    RETURN_IF_ERROR(RefuseTeamChangeByName(r, spec.team, id));
    RETURN_IF_ERROR(RefuseIfDeleting(r));
    if (!held_id.empty()) {
      RETURN_IF_ERROR(CheckCustomHostnamePolicy(
          config, name, spec, HeldHosts(r, r.id == held_id ? former : std::vector<std::string>{})));
    }
    ASSIGN_OR_RETURN(ProjectSpec stored, final_spec(StoredCredentials(r)));
    changed = ApplyPut(r, m, ToJson(stored), stored.team, start);
    if (changed) m.hostnames = ProjectClaims(config, r.id, name, stored);
    // Back to Steward's credentials (or a project that never had any): new ones, active at once,
    // since the engine revoked the old ones when supplied ones replaced them.
    const bool live = std::any_of(creds.begin(), creds.end(), [](const store::Credential& c) {
      return c.state != store::CredentialState::kRevoked;
    });
    if (changed && !stored.credentials && !live) {
      m.credentials.push_back(NewCredential(r.id, store::CredentialState::kActive));
    }
    return Status::Ok();
  };
  auto put = store_.UpsertProjectByName(name, create, update);
  if (!put.ok()) {
    if (!created.empty()) vault->Discard(project_id, credentials.ref.fingerprint, created);
    return put.error();
  }
  if (changed) Notify(put->record);
  return PutResult{std::move(put->record), put->created, changed};
}

StatusOr<Intents::PutResult> Intents::PutAgent(std::string_view name, const Json& spec_json,
                                               std::string_view id, bool start) {
  if (!id.empty()) {
    if (Status s = ValidateProjectId(id); !s.ok()) return InvalidField("id", s.message());
  }
  Json spec_copy;
  const Json* spec_in = &spec_json;
  PlacementRequest where;
  if (spec_json.is_object() && (spec_json.contains("cluster") || spec_json.contains("placement"))) {
    spec_copy = spec_json;
    ASSIGN_OR_RETURN(where, TakePlacementRequest(spec_copy, "spec"));
    spec_in = &spec_copy;
  }
  CredentialsInput credentials;
  ASSIGN_OR_RETURN(AgentSpec spec, ParseAgentSpec(*spec_in, "spec", &credentials));
  ASSIGN_OR_RETURN(std::string want, AgentName(spec));
  if (name != want) {
    return InvalidField("name", "must be " + want +
                                    " (mqtt-schema-agent-<team>-<broker> of spec.team and "
                                    "spec.broker, lowercased), got " +
                                    std::string(name));
  }
  // The token goes to its Secret before the intent naming it is committed (as Put does).
  std::string agent_id;
  std::string created;  // the version of a Secret this Put created, to discard if not committed
  auto existing = store_.GetProjectByName(name);
  if (existing.ok()) {
    RETURN_IF_ERROR(RefuseOtherKind(*existing, store::RecordKind::kAgent));
    RETURN_IF_ERROR(RefuseOtherAgent(*existing, spec));  // before its token is touched
    if (!id.empty() && id != existing->id) {
      return AlreadyExists("agent name " + std::string(name) + " is taken by agent " +
                           existing->id);
    }
    RETURN_IF_ERROR(RefuseIfDeleting(*existing));
    agent_id = existing->id;
  } else if (existing.error().code() != StatusCode::kNotFound) {
    return existing.error();
  } else {
    agent_id = id.empty() ? NewProjectId() : std::string(id);
  }
  ASSIGN_OR_RETURN(const ClusterTarget target, TargetOf(name, where, spec.team));
  CredentialVault* const vault = target.vault;
  if (credentials.mode == CredentialsInput::Mode::kSupplied) {
    if (vault == nullptr) {
      return FailedPrecondition(
          "spec.credentials: an agent's token needs the engine's Kubernetes client, which this "
          "Steward does not have");
    }
    ASSIGN_OR_RETURN(created, vault->Put(agent_id, std::string(name), credentials.values));
  }
  std::vector<std::string> claims = {"Deployment/" + want, "Service/" + want,
                                     store::ReferenceClaim(agent_id), store::ReferenceClaim(want)};
  std::sort(claims.begin(), claims.end());
  claims.erase(std::unique(claims.begin(), claims.end()), claims.end());
  bool changed = false;
  auto create = [&](ProjectRecord& r, store::Mutation& m) -> Status {
    if (!spec.credentials) {
      return InvalidField("spec.credentials.token",
                          "is required to create an agent: it runs with the token its platform "
                          "issues");
    }
    if (credentials.mode == CredentialsInput::Mode::kFingerprint) {
      return InvalidField("spec.credentials.fingerprint",
                          "is not the agent's current token (it has none yet: send the token)");
    }
    r.id = agent_id;
    r.kind = store::RecordKind::kAgent;
    r.cluster = target.name;
    r.team = spec.team;
    r.spec_json = DumpJson(ToJson(spec));
    r.desired = start ? DesiredState::kRunning : DesiredState::kSuspended;
    r.generation = 1;
    m.history.push_back(OperationText(start ? "create+start" : "create", 1, r.spec_json));
    m.hostnames = claims;
    changed = true;
    return Status::Ok();
  };
  auto update = [&](ProjectRecord& r, const auto&, store::Mutation& m) -> Status {
    RETURN_IF_ERROR(RefuseOtherKind(r, store::RecordKind::kAgent));
    if (!id.empty() && id != r.id) {
      return AlreadyExists("agent name " + std::string(name) + " is taken by agent " + r.id);
    }
    if (r.id != agent_id) {
      return Aborted("agent " + std::string(name) +
                     " was deleted and created again while its token was stored; send the "
                     "request again");
    }
    RETURN_IF_ERROR(RefuseOtherAgent(r, spec));
    RETURN_IF_ERROR(RefuseIfDeleting(r));
    RETURN_IF_ERROR(RefuseMovedMeanwhile(r, target.name));
    AgentSpec stored = spec;
    auto current_json = ParseJson(r.spec_json);
    auto current = current_json.ok() ? ParseAgentSpec(*current_json)
                                     : StatusOr<AgentSpec>(current_json.error());
    const std::optional<CredentialsRef> held =
        current.ok() ? current->credentials : std::optional<CredentialsRef>();
    if (credentials.mode == CredentialsInput::Mode::kKeep) stored.credentials = held;
    if (credentials.mode == CredentialsInput::Mode::kFingerprint && held != credentials.ref) {
      return InvalidField("spec.credentials.fingerprint",
                          "is not the agent's current token (send the token to change it)");
    }
    changed = ApplyPut(r, m, ToJson(stored), stored.team, start);
    if (changed) m.hostnames = claims;
    return Status::Ok();
  };
  auto put = store_.UpsertProjectByName(name, create, update);
  if (!put.ok()) {
    if (!created.empty()) vault->Discard(agent_id, credentials.ref.fingerprint, created);
    return put.error();
  }
  if (changed) Notify(put->record);
  return PutResult{std::move(put->record), put->created, changed};
}

StatusOr<ProjectRecord> Intents::SetDesired(std::string_view id_or_name, store::RecordKind kind,
                                            DesiredState d, std::string_view operation) {
  ASSIGN_OR_RETURN(ProjectRecord found, Find(id_or_name, kind));
  bool changed = false;
  ASSIGN_OR_RETURN(ProjectRecord rec,
                   store_.MutateProject(
                       found.id, [&](ProjectRecord& r, const auto&, store::Mutation& m) -> Status {
                         if (r.desired == d) return Status::Ok();
                         RETURN_IF_ERROR(RefuseIfDeleting(r));
                         changed = true;
                         r.desired = d;
                         ++r.generation;
                         MarkAccepted(r);
                         m.history.push_back(Operation(std::string(operation), r.generation));
                         return Status::Ok();
                       }));
  if (changed) Notify(rec);
  return rec;
}

StatusOr<ProjectRecord> Intents::Start(std::string_view id_or_name, store::RecordKind kind) {
  return SetDesired(id_or_name, kind, DesiredState::kRunning, "start");
}
StatusOr<ProjectRecord> Intents::Suspend(std::string_view id_or_name, store::RecordKind kind) {
  return SetDesired(id_or_name, kind, DesiredState::kSuspended, "suspend");
}
StatusOr<ProjectRecord> Intents::Delete(std::string_view id_or_name, store::RecordKind kind) {
  return SetDesired(id_or_name, kind, DesiredState::kDeleted, "delete");
}

StatusOr<ProjectRecord> Intents::Restart(std::string_view id_or_name, store::RecordKind kind) {
  ASSIGN_OR_RETURN(ProjectRecord found, Find(id_or_name, kind));
  ASSIGN_OR_RETURN(ProjectRecord rec,
                   store_.MutateProject(
                       found.id, [&](ProjectRecord& r, const auto&, store::Mutation& m) -> Status {
                         RETURN_IF_ERROR(RefuseIfDeleting(r));
                         if (r.desired != DesiredState::kRunning) {
                           return FailedPrecondition(std::string(KindWord(r.kind)) + " " + r.name +
                                                     " is not running; start it instead");
                         }
                         ++r.restart_epoch;
                         ++r.generation;
                         MarkAccepted(r);
                         m.history.push_back(Operation("restart", r.generation));
                         return Status::Ok();
                       }));
  Notify(rec);
  return rec;
}

StatusOr<ProjectRecord> Intents::Rotate(std::string_view id_or_name, store::RecordKind kind) {
  ASSIGN_OR_RETURN(ProjectRecord found, Find(id_or_name, kind));
  ASSIGN_OR_RETURN(
      ProjectRecord rec,
      store_.MutateProject(
          found.id,
          [&](ProjectRecord& r, const std::vector<store::Credential>& creds,
              store::Mutation& m) -> Status {
            RETURN_IF_ERROR(RefuseIfDeleting(r));
            if (r.kind == store::RecordKind::kAgent || StoredCredentials(r)) {
              return FailedPrecondition(
                  "project " + r.name +
                  " runs with credentials the platform supplied (spec.credentials); put new ones "
                  "in its spec to rotate them");
            }
            // An older pending credential stays valid: pods of the unfinished rollout may hold it.
            // The engine revokes it with the active one once pods with the newest are ready.
            (void)creds;
            store::Credential fresh = NewCredential(r.id, store::CredentialState::kPending);
            ++r.generation;
            MarkAccepted(r);
            m.history.push_back(Operation("rotate", r.generation, Json{{"pending", fresh.id}}));
            m.credentials.push_back(std::move(fresh));
            return Status::Ok();
          }));
  Notify(rec);
  return rec;
}

StatusOr<ProjectRecord> Intents::Rename(std::string_view id_or_name, std::string_view new_name) {
  if (Status s = ValidateProjectName(new_name); !s.ok()) return InvalidField("name", s.message());
  ASSIGN_OR_RETURN(ProjectRecord found, Find(id_or_name));
  bool changed = false;
  ASSIGN_OR_RETURN(
      ProjectRecord rec,
      store_.MutateProject(
          found.id,
          [&](ProjectRecord& r, const std::vector<store::Credential>&,
              store::Mutation& m) -> Status {
            if (r.name == new_name) return Status::Ok();
            RETURN_IF_ERROR(RefuseIfDeleting(r));
            if (!r.moving_from.empty()) {  // the old cluster removes its objects by their names
              return FailedPrecondition("project " + r.name + " is moving from cluster " +
                                        r.moving_from + "; rename it once the move is over");
            }
            if (r.desired != DesiredState::kSuspended || r.phase != "Suspended") {
              return FailedPrecondition(
                  "project " + r.name + " can be renamed only when it is Suspended (it is " +
                  (r.phase.empty() ? std::string("Pending") : r.phase) + ", to be " +
                  std::string(store::ToString(r.desired)) + "): suspend it first");
            }
            auto spec_json = ParseJson(r.spec_json);
            ASSIGN_OR_RETURN(ProjectSpec spec, spec_json.ok()
                                                   ? ParseProjectSpec(*spec_json)
                                                   : StatusOr<ProjectSpec>(spec_json.error()));
            const std::string old_name = r.name;
            r.name = std::string(new_name);
            ++r.generation;
            MarkAccepted(r);
            m.hostnames = ProjectClaims(ConfigOf(r.cluster), r.id, new_name, spec);
            m.history.push_back(Operation("rename", r.generation,
                                          Json{{"from", old_name}, {"to", std::string(new_name)}}));
            changed = true;
            return Status::Ok();
          }));
  if (changed) Notify(rec);
  return rec;
}

StatusOr<int> Intents::ClaimUnclaimedHostnames() {
  ASSIGN_OR_RETURN(std::vector<ProjectRecord> unclaimed, store_.ListProjectsWithoutHostnames());
  if (unclaimed.empty()) return 0;
  // Oldest first: of two old projects that share a hostname, the one that had it first keeps it.
  std::vector<std::pair<std::string, std::vector<std::string>>> claims;
  std::map<std::string, std::string> names;
  for (const ProjectRecord& r : unclaimed) {
    auto j = ParseJson(r.spec_json);
    auto spec = j.ok() ? ParseProjectSpec(*j) : StatusOr<ProjectSpec>(j.error());
    // A spec that does not parse any more still owns its generated host.
    claims.emplace_back(
        r.id, ProjectClaims(ConfigOf(r.cluster), r.id, r.name, spec.ok() ? *spec : ProjectSpec{}));
    names[r.id] = r.name;
  }
  ASSIGN_OR_RETURN(auto skipped, store_.ClaimHostnames(claims));
  for (const auto& [host, holder] : skipped) {
    std::string others;
    for (const auto& [id, hosts] : claims) {
      if (id != holder && std::find(hosts.begin(), hosts.end(), host) != hosts.end()) {
        others += (others.empty() ? "" : ", ") + names[id];
      }
    }
    LOG_ERROR(
        "hostname {} is wanted by several projects stored before hostnames were unique: kept by "
        "project {} (the oldest), not claimed for {}; their next spec change is refused until "
        "the operator changes the custom hostname",
        host, names.count(holder) ? names[holder] : holder, others);
  }
  LOG_INFO("claimed the hostnames of {} projects stored before hostnames were unique ({} clashes)",
           unclaimed.size(), skipped.size());
  return static_cast<int>(unclaimed.size());
}

StatusOr<CredentialCheck> Intents::CheckCredential(std::string_view token) {
  CredentialCheck out;
  auto cred = store_.FindCredentialByToken(token);
  if (!cred.ok()) {
    if (cred.error().code() == StatusCode::kNotFound) return out;
    return cred.error();
  }
  out.project_id = cred->project_id;
  out.state = std::string(store::ToString(cred->state));
  out.valid = cred->state != store::CredentialState::kRevoked;
  auto rec = store_.GetProject(cred->project_id);
  if (rec.ok()) out.project_name = rec->name;
  return out;
}

}  // namespace steward::engine
