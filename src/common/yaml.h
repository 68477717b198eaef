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
// become JSON values; quoted scalars stay strings. Fails with kInvalidArgument ("malformed YAML:
// ...") on invalid UTF-8 or NUL (naming the byte), on a syntax error (naming the line), on nesting
// deeper than kMaxNestingDepth (json.h; an alias that refers to its own node nests without end), on
// aliases that expand to far more nodes than the text holds ("billion laughs") and, unless
// `options` say kLastWins, on a key given twice in one mapping, naming its path and line
// (`duplicate key "spec.team" at line 3`). Keys that differ in YAML but not as JSON strings (1 and
// "1") count as duplicates.
StatusOr<Json> ParseYaml(std::string_view text, const ParseOptions& options = {});
// Every document of a multi-document stream ("---" separated); empty documents are skipped.
StatusOr<std::vector<Json>> ParseYamlDocuments(std::string_view text,
                                               const ParseOptions& options = {});
// Block-style YAML for a JSON value (kubeconfig output).
std::string ToYaml(const Json& value);

}  // namespace steward
