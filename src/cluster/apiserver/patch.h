// The PATCH formats the embedded cluster accepts.
//
// - JSON merge patch (RFC 7386), Content-Type application/merge-patch+json.
// - JSON patch (RFC 6902: add, remove, replace, move, copy, test), application/json-patch+json.
// - Strategic merge patch, application/strategic-merge-patch+json, for the built-in kinds:
//   like a merge patch, except that lists with a patch merge key (containers by "name", ports by
//   "containerPort"/"port", env by "name", volumes by "name", conditions by "type", ...) are merged
//   element by element, and the directives "$patch": "replace" | "delete" | "merge",
//   "$retainKeys", "$deleteFromPrimitiveList/<field>", "$setElementOrder/<field>" are honoured
//   (the last two may be accepted and ignored for ordering). Lists without a merge key are
//   replaced, and primitive lists with strategy "merge" (finalizers) are unioned.
//
// All functions are pure and thread-safe. Errors are kInvalidArgument with a message a user can
// act on (which operation, which path).
#pragma once

#include <string_view>

#include "common/json.h"
#include "common/status.h"

namespace steward::cluster {

enum class PatchType { kJsonMerge, kJsonPatch, kStrategicMerge, kApply };

// Maps a Content-Type (parameters such as "; charset=utf-8" ignored) to a patch type.
// Fails with kInvalidArgument when the media type is not a patch type.
StatusOr<PatchType> PatchTypeFromContentType(std::string_view content_type);

// RFC 7386. `patch` must be a JSON object (or null/primitive, which replaces the document).
StatusOr<Json> ApplyMergePatch(const Json& target, const Json& patch);

// RFC 6902. `patch` must be an array of operations. A failing "test" is an error.
StatusOr<Json> ApplyJsonPatch(const Json& target, const Json& patch);

// Strategic merge patch for an object of the given kind ("Deployment", "Pod", ...). Unknown
// kinds behave as a JSON merge patch except for the directives, which are still honoured.
StatusOr<Json> ApplyStrategicMergePatch(const Json& target, const Json& patch,
                                        std::string_view kind);

}  // namespace steward::cluster
