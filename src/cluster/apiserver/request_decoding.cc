#include "cluster/apiserver/request_decoding.h"

#include <utility>

#include "cluster/apiserver/field_validation.h"
#include "cluster/apiserver/protobuf_decode.h"
#include "cluster/apiserver/rest_request.h"
#include "common/ascii.h"
#include "common/json_access.h"
#include "common/yaml.h"

namespace steward::cluster {
namespace {

// Request bodies and patches are decoded as Go decodes them: the last of duplicate keys wins
// (field validation sees the raw text and reports duplicates).
const ParseOptions kLastWins{.duplicate_keys = DuplicateKeys::kLastWins};

// The media type of a request body: the Content-Type without parameters, lower case.
std::string BodyMediaType(const net::HttpRequest& http) {
  std::string content_type = AsciiLower(http.headers.Get("Content-Type"));
  return std::string(TrimHttpWhitespace(content_type.substr(0, content_type.find(';'))));
}

// Reads the fields of a DeleteOptions body into `del`; an error for a body that is not an
// object or has an invalid dryRun.
std::optional<StatusError> ReadDeleteOptionsBody(const Json& body, DeleteOptions& del) {
  if (!body.is_object()) {
    return BadRequestError("the body of a delete must be a DeleteOptions object");
  }
  const Json& pre = body.contains("preconditions") ? body["preconditions"] : Json();
  if (pre.is_object()) {
    if (pre.contains("uid") && pre["uid"].is_string()) {
      del.precondition_uid = pre["uid"].get<std::string>();
    }
    if (pre.contains("resourceVersion") && pre["resourceVersion"].is_string()) {
      del.precondition_resource_version = pre["resourceVersion"].get<std::string>();
    }
  }
  del.propagation_policy = GetString(body, "propagationPolicy");
  if (body.contains("orphanDependents") && body["orphanDependents"].is_boolean() &&
      del.propagation_policy.empty()) {
    del.propagation_policy = body["orphanDependents"].get<bool>() ? "Orphan" : "Background";
  }
  if (body.contains("gracePeriodSeconds") && body["gracePeriodSeconds"].is_number_integer()) {
    del.grace_period_seconds = body["gracePeriodSeconds"].get<int64_t>();
  }
  if (body.contains("dryRun")) {
    const Json& d = body["dryRun"];
    if (!d.is_array() || (d.size() == 1 && d[0] != "All") || d.size() > 1) {
      return BadRequestError("Invalid dry run value: " + DumpJson(d));
    }
    if (!d.empty()) del.dry_run = true;
  }
  return std::nullopt;
}

}  // namespace

std::optional<StatusError> DecodeBody(const net::HttpRequest& http, Json* out) {
  const std::string media = BodyMediaType(http);
  if (media.empty() || media == "application/json" || media == "*/*") {
    auto parsed = ParseJson(http.body, kLastWins);
    if (!parsed.ok()) {
      return BadRequestError("the request body is not valid JSON: " + parsed.status().message());
    }
    *out = std::move(parsed).value();
    return std::nullopt;
  }
  if (media == "application/yaml" || media == "application/x-yaml") {
    auto parsed = ParseYaml(http.body, kLastWins);
    if (!parsed.ok()) {
      return BadRequestError("the request body is not valid YAML: " + parsed.status().message());
    }
    *out = std::move(parsed).value();
    return std::nullopt;
  }
  if (media == kProtobufMediaType) {
    auto decoded = DecodeKubernetesProtobuf(http.body);
    if (!decoded.ok()) {
      return BadRequestError("the request body is not valid protobuf: " +
                             decoded.status().message());
    }
    *out = std::move(decoded).value();
    return std::nullopt;
  }
  return UnsupportedMediaTypeError(
      "the body of the request was in an unknown format - accepted media types include: "
      "application/json, application/yaml, application/vnd.kubernetes.protobuf");
}

std::optional<StatusError> ParseListOptions(const net::HttpRequest& http, ListOptions* out) {
  out->label_selector = std::string(http.Query("labelSelector"));
  out->field_selector = std::string(http.Query("fieldSelector"));
  out->continue_token = std::string(http.Query("continue"));
  out->resource_version = std::string(http.Query("resourceVersion"));
  out->resource_version_match = std::string(http.Query("resourceVersionMatch"));
  if (http.HasQuery("limit")) {
    auto limit = rest::ParseInt(http.Query("limit"));
    if (!limit || *limit < 0) {
      return BadRequestError("invalid limit: " + std::string(http.Query("limit")));
    }
    out->limit = *limit;
  }
  return std::nullopt;
}

std::optional<StatusError> ParseDeleteOptions(const net::HttpRequest& http, DeleteOptions* out) {
  out->dry_run = rest::WriteOptionsOf(http).dry_run;
  if (!http.body.empty()) {
    Json body;
    if (auto error = DecodeBody(http, &body)) return error;
    if (auto error = ReadDeleteOptionsBody(body, *out)) return error;
  }
  if (http.HasQuery("propagationPolicy")) {
    out->propagation_policy = std::string(http.Query("propagationPolicy"));
  }
  if (http.HasQuery("gracePeriodSeconds")) {
    auto g = rest::ParseInt(http.Query("gracePeriodSeconds"));
    if (!g) return BadRequestError("invalid gracePeriodSeconds");
    out->grace_period_seconds = *g;
  }
  return std::nullopt;
}

std::optional<StatusError> ValidateBody(const net::HttpRequest& http, const ResourceType& type,
                                        Subresource sub, std::string_view options_kind, Json* body,
                                        HeaderList* headers) {
  auto validation = ParseFieldValidation(http.Query("fieldValidation"), options_kind);
  if (!validation.ok()) return validation.error();
  if (BodyMediaType(http) == kProtobufMediaType) return std::nullopt;
  if (*validation != FieldValidation::kIgnore) {
    FieldProblems problems = CheckFields(type, http.body, *body, sub);
    if (!problems.empty() && *validation == FieldValidation::kStrict) {
      return StrictDecodingError(type, *body, problems, sub);
    }
    for (auto& w : WarningHeaders(problems)) headers->emplace_back("Warning", std::move(w));
  }
  DropUnknownFields(type, *body, sub);
  return std::nullopt;
}

std::optional<StatusError> DecodeValidBody(const net::HttpRequest& http, const ResourceType& type,
                                           Subresource sub, std::string_view options_kind,
                                           Json* body, HeaderList* headers) {
  if (auto error = DecodeBody(http, body)) return error;
  return ValidateBody(http, type, sub, options_kind, body, headers);
}

std::optional<StatusError> ValidatePatch(const net::HttpRequest& http, const ResourceType& type,
                                         Subresource sub, PatchType patch_type,
                                         const std::function<ApiResult<Json>()>& current,
                                         std::string* patch, HeaderList* headers) {
  auto validation = ParseFieldValidation(http.Query("fieldValidation"), "PatchOptions");
  if (!validation.ok()) return validation.error();
  if (patch_type == PatchType::kApply) return std::nullopt;
  auto parsed = ParseJson(*patch, kLastWins);
  if (!parsed.ok()) return std::nullopt;
  if (*validation != FieldValidation::kIgnore) {
    auto object = current();
    if (!object.ok()) return std::nullopt;
    StatusOr<Json> patched =
        patch_type == PatchType::kJsonMerge ? ApplyMergePatch(*object, *parsed)
        : patch_type == PatchType::kJsonPatch
            ? ApplyJsonPatch(*object, *parsed)
            : ApplyStrategicMergePatch(*object, *parsed,
                                       sub == Subresource::kScale ? "Scale" : type.kind);
    if (!patched.ok()) return std::nullopt;
    FieldProblems problems =
        CheckPatchFields(type, patch_type, *patch, *parsed, &*patched, &*object, sub);
    if (!problems.empty() && *validation == FieldValidation::kStrict) {
      return StrictPatchError(problems, patch_type == PatchType::kStrategicMerge
                                            ? GoMapString(*parsed)
                                            : DumpJson(*patched));
    }
    for (auto& w : WarningHeaders(problems)) headers->emplace_back("Warning", std::move(w));
  }
  if (DropUnknownPatchFields(type, patch_type, *parsed, sub)) *patch = DumpJson(*parsed);
  return std::nullopt;
}

}  // namespace steward::cluster
