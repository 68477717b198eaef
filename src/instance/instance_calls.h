// InstanceCalls: the operations on a running instance that Steward's REST API offers (the
// launcher's info, logs and commands), as an interface. Header only and free of Kubernetes, so
// that the API links this and not the client: the implementation is instance::InstanceOps
// (instance_ops.h), wired in by the app; tests may supply their own. Implementations are
// thread-safe (calls may run concurrently) and may block (the API calls them from its worker
// threads, never from an I/O thread).
#pragma once

#include <string>
#include <vector>

#include "common/json.h"
#include "common/status.h"

namespace steward::instance {

// One pod's answer to a command. status 0 with `error` set when the pod could not be reached.
struct PodAnswer {
  std::string pod;
  int status = 0;
  Json body;          // the launcher's JSON answer (null when none or not JSON)
  std::string error;  // transport error, empty when an HTTP answer came
};

class InstanceCalls {
 public:
  virtual ~InstanceCalls() = default;
  // `service` is the project's Service name (manifests::NamesFor(id, name).service). What each
  // answers, and its errors, are InstanceOps' (instance_ops.h).
  virtual StatusOr<Json> Info(const std::string& service) const = 0;
  virtual StatusOr<Json> Logs(const std::string& service) const = 0;
  virtual StatusOr<std::vector<PodAnswer>> Command(const std::string& service,
                                                   const Json& command) const = 0;
};

}  // namespace steward::instance
