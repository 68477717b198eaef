// EmbeddedCluster: the whole embedded Kubernetes-compatible cluster in one object — storage,
// API semantics, the HTTPS API server, simulated controllers, virtual pods and the ingress
// listener. Used by `steward cluster`, by tests and benchmarks, and (later) embedded by
// `steward serve --embedded-cluster`.
//
// Lifecycle: Start() brings everything up and returns once the API answers; Stop() (idempotent,
// also run by the destructor) stops the listeners first, then the controllers, then storage.
// Accessors may be used from any thread between Start and Stop.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cluster/apiserver/faults.h"
#include "cluster/apiserver/object_api.h"
#include "cluster/apiserver/request_log.h"
#include "cluster/profile/profile.h"
#include "cluster/storage/storage.h"
#include "common/status.h"

namespace steward::cluster {

class EmbeddedCluster {
 public:
  struct Options {
    std::string api_host = "127.0.0.1";
    uint16_t api_port = 0;  // 0 picks a free port
    bool ingress = true;
    std::string ingress_host = "127.0.0.1";
    uint16_t ingress_port = 0;
    // Persistent state (objects, revision counter, CA, token); empty keeps state in memory. A
    // directory created here is 0700 and every file in it 0600, whatever the umask; an existing
    // directory open to group or others is used, with a warning in the log.
    std::string data_dir;
    Profile profile;
    // Seeds every random choice (uids, generated names, delays). A start over a data dir that
    // already holds objects mixes in the stored revision, so a restarted cluster never hands
    // out the uids or names of an earlier run again.
    uint64_t seed = 1;
    std::string audit_log;  // path; empty: no audit log
    // Bearer token required by the API; empty: generated (and kept in data_dir if given).
    std::string token;
    bool tls = true;  // plain HTTP only for benchmarks that measure TLS's share
    // Simulated controllers; off only for benchmarks of the bare API server.
    bool controllers = true;
    int api_threads = 2;
  };

  static StatusOr<std::unique_ptr<EmbeddedCluster>> Start(const Options& options);
  ~EmbeddedCluster();
  EmbeddedCluster(const EmbeddedCluster&) = delete;
  EmbeddedCluster& operator=(const EmbeddedCluster&) = delete;

  void Stop();

  // "https://127.0.0.1:PORT".
  std::string api_url() const;
  // "http://127.0.0.1:PORT" ("" without ingress listener).
  std::string ingress_url() const;
  uint16_t api_port() const;
  uint16_t ingress_port() const;
  const std::string& token() const;
  const std::string& ca_pem() const;
  // A kubeconfig (YAML) with the server URL, CA data and token; context "steward".
  std::string Kubeconfig() const;
  // Writes Kubeconfig() to `path` (mode 0600 whatever the umask; an existing file is replaced
  // atomically, also its mode). Fails with kInvalidArgument naming the path.
  Status WriteKubeconfig(const std::string& path) const;

  // Switches delays, faults and the ingress admission switch at run time.
  void SetProfile(const Profile& profile);
  Profile profile() const;

  ObjectApi& api();
  Storage& storage();
  RequestLog& request_log();
  FaultInjector& faults();

 private:
  struct Parts;
  explicit EmbeddedCluster(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

}  // namespace steward::cluster
