// The environment a container starts with, as the kubelet resolves it: envFrom (secretRef,
// configMapRef, with prefix) first, then env entries in order (value with $(VAR) expansion,
// valueFrom secretKeyRef / configMapKeyRef / fieldRef). Secrets and ConfigMaps are read from
// storage at the call (a running process keeps what it started with). A reference to a missing
// object or key leaves the variable out (a real kubelet would refuse to start the container).
// Used by the virtual pods and by the process runtime.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cluster/storage/storage.h"
#include "common/json.h"

namespace steward::cluster::controllers {

std::vector<std::pair<std::string, std::string>> ResolveContainerEnv(Storage& storage,
                                                                     const Json& pod,
                                                                     const Json& container);

}  // namespace steward::cluster::controllers
