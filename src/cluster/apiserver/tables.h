// Server-side table printing (meta.k8s.io/v1 Table), as kubectl get asks for with
// Accept: application/json;as=Table;v=v1;g=meta.k8s.io. Columns and cell values follow what
// a real API server prints for each kind (e.g. Deployment: Name, Ready, Up-to-date, Available,
// Age, and with -o wide Containers, Images, Selector).
//
// Pure and thread-safe.
#pragma once

#include <string_view>
#include <vector>

#include "cluster/model/resource_types.h"
#include "common/clock.h"
#include "common/json.h"

namespace steward::cluster {

enum class TableIncludeObject { kNone, kMetadata, kObject };  // ?includeObject=, default Metadata

// A Table of `objects` (all of type `rt`). `list_metadata` is copied to the table's metadata
// (resourceVersion, continue). `now` computes ages. `no_headers` omits columnDefinitions (used
// for watch events after the first).
Json ToTable(const ResourceType& rt, const std::vector<Json>& objects, const Json& list_metadata,
             SystemTime now, TableIncludeObject include, bool no_headers = false);

}  // namespace steward::cluster
