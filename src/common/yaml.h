// YAML ⇄ JSON conversion (yaml-cpp), for request bodies, kubeconfig files and profiles.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/status.h"

namespace steward {

// Parses one YAML document (JSON is valid YAML) into JSON. Scalars keep YAML 1.1-ish types as
// Kubernetes' sigs.k8s.io/yaml does for plain scalars: true/false, null/~, integers and floats
// become JSON values; quoted scalars stay strings. Fails with kInvalidArgument naming the line.
StatusOr<Json> ParseYaml(std::string_view text);
// Every document of a multi-document stream ("---" separated); empty documents are skipped.
StatusOr<std::vector<Json>> ParseYamlDocuments(std::string_view text);
// Block-style YAML for a JSON value (kubeconfig output).
std::string ToYaml(const Json& value);

}  // namespace steward
