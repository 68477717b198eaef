// The replicated torture run's fencing check (issue 17): no record is written by two replicas in
// overlapping epochs. Its evidence is the cluster's audit log (which replica sent each write, by
// its User-Agent, and when) and the store's shard history (who owned each shard when).
//
// A write to an object of record R, of shard s, sent by replica X over [start, end] holds when one
// epoch of s owned by X spans it: acquired by X at or before `start`, and neither released nor
// acquired by anyone (X's own next process included) before `end`. Anything else — a write by a
// replica that never owned the shard, one after its successor acquired it, one before it acquired
// it — is a violation. Exempt: the Secrets of supplied credentials ("<id>-credentials-<fp>",
// content-addressed and immutable), which the replica that accepts the PUT writes — creates,
// marks as taken (a patch at the read resourceVersion), replaces when a leftover of another
// project (a delete at the read uid) — before it commits the intent, whoever owns the shard; the
// owner's engine deletes them once no pod holds them. Preconditions fence those; they are
// counted apart.
//
// Pure functions of their inputs; any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace steward::torture {

// One write request from the audit log (create, update, patch, delete, deletecollection).
struct AuditWrite {
  // Wall clock, µs since the epoch: the record's startTime (when the request arrived), or for a
  // line without one its time minus its latency.
  int64_t start_us = 0;
  int64_t end_us = 0;   // the record's time (when the answer was sent)
  std::string replica;  // from the User-Agent "... replica/<name>"; "" for none
  std::string verb, resource, ns, name;
  int code = 0;
};

// Parses audit log lines (RequestLog's JSON lines); only writes are kept, malformed lines and
// every other verb skipped. Reads the whole text given.
std::vector<AuditWrite> ParseAuditWrites(std::string_view audit_log);
// The replica named in a User-Agent ("steward/0.9 replica/r1" → "r1"); "" when none.
std::string ReplicaOfUserAgent(std::string_view user_agent);

// Maps an object name (as in the audit log) to the record it belongs to: built from every record
// of the run, with the names the engine gives its objects (manifests' NamesFor; an agent's
// objects are named as the agent). A name used again (deleted, then created anew) belongs to each
// incarnation from its creation on: a new one can only be created once the last was purged.
class ObjectOwners {
 public:
  void AddProject(const std::string& id, const std::string& name, int64_t created_ms);
  void AddAgent(const std::string& id, const std::string& name, int64_t created_ms);
  // The record id for an object name of `resource` (secrets, deployments, ...) written at
  // `at_us`; nullopt when it belongs to no known record. `exempt` is set for an API-made
  // supplied-credentials Secret.
  std::optional<std::string> RecordOf(std::string_view resource, std::string_view name,
                                      int64_t at_us, bool* exempt) const;

  // The object a create of `resource`/`name` may be sent only once it exists, in the engine's
  // dependency order (docs/design.md §3.4, issue 33): a project's Service needs its Deployment, its
  // Ingresses (the main one and `<ingress>-custom`) its Service; an agent's Service its
  // Deployment. nullopt for any other object, or one of no known record.
  struct ObjectRef {
    std::string resource, name;
  };
  std::optional<ObjectRef> DependencyOf(std::string_view resource, std::string_view name) const;

 private:
  void Add(const std::string& key, const std::string& id, int64_t created_ms);
  std::map<std::string, ObjectRef> depends_on_;  // "<resource>/<name>" → what it needs
  // "<resource>/<name>" → (created ms, id), oldest first.
  std::map<std::string, std::vector<std::pair<int64_t, std::string>>> by_name_;
  std::set<std::string> ids_;  // for "<id>-credentials-<fingerprint>" Secrets
};

struct EpochReport {
  int64_t writes = 0;      // writes by a replica
  int64_t attributed = 0;  // of those, to a known record (checked)
  int64_t exempt = 0;      // supplied-credential Secrets
  std::vector<std::string> violations;
};

// Checks every write against the shard history (the store's ListShardHistory, oldest first).
// `shard_of` maps a record id to its shard.
EpochReport CheckWriteEpochs(const std::vector<AuditWrite>& writes,
                             const std::vector<store::ShardEvent>& history,
                             const ObjectOwners& owners,
                             const std::function<int(const std::string&)>& shard_of);

// The handover check: after replica `replica` died at `at_ms`, every shard it held then must be
// acquired again — by another replica, or by its own next process — within `bound_ms`. A replica
// whose next process was ready (`back_ms`) before its Lease could lapse kept its Lease live, so
// the others rightly left its shards alone: its own re-acquisition is then timed from `back_ms`
// (a process start under load is not a handover).
struct Death {
  std::string replica;
  int64_t at_ms = 0;
  int64_t back_ms = 0;  // 0: not back before its Lease could lapse
};
struct HandoverReport {
  int64_t shards = 0;     // shards held by a replica when it died
  int64_t max_ms = 0;     // the longest wait for one of them to be acquired again
  int64_t median_ms = 0;  // of those waits
  std::vector<std::string> violations;
};
HandoverReport CheckHandovers(const std::vector<Death>& deaths,
                              const std::vector<store::ShardEvent>& history, int64_t bound_ms);

}  // namespace steward::torture
