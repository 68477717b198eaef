#include "cluster/apiserver/api_error.h"

#include "cluster/model/resource_types.h"

namespace steward::cluster {

Json ApiError::ToStatus() const {
  Json status = {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", Json::object()},
                 {"status", "Failure"}, {"message", message}, {"reason", reason},
                 {"code", code}};
  Json details = Json::object();
  if (!name.empty()) details["name"] = name;
  if (!group.empty()) details["group"] = group;
  if (!kind.empty()) details["kind"] = kind;
  if (!causes.empty()) {
    Json arr = Json::array();
    for (const auto& c : causes) {
      Json cause = {{"reason", c.reason}, {"message", c.message}};
      if (!c.field.empty()) cause["field"] = c.field;
      arr.push_back(std::move(cause));
    }
    details["causes"] = std::move(arr);
  }
  if (retry_after_seconds > 0) details["retryAfterSeconds"] = retry_after_seconds;
  if (!details.empty()) status["details"] = std::move(details);
  if (reason.empty()) status.erase("reason");
  return status;
}

namespace {

ApiError Make(int code, std::string reason, std::string message) {
  ApiError e;
  e.code = code;
  e.reason = std::move(reason);
  e.message = std::move(message);
  return e;
}

ApiError ForResource(int code, std::string reason, const ResourceType& rt, std::string_view name,
                     std::string message) {
  ApiError e = Make(code, std::move(reason), std::move(message));
  e.name = std::string(name);
  e.group = rt.group;
  e.kind = rt.resource;
  return e;
}

// `deployments.apps "x"`, or `pods "x"` for the core group.
std::string Qualified(const ResourceType& rt, std::string_view name) {
  return rt.GroupResource() + " \"" + std::string(name) + "\"";
}

}  // namespace

ApiError NotFoundError(const ResourceType& rt, std::string_view name) {
  return ForResource(404, "NotFound", rt, name, Qualified(rt, name) + " not found");
}

ApiError AlreadyExistsError(const ResourceType& rt, std::string_view name) {
  return ForResource(409, "AlreadyExists", rt, name, Qualified(rt, name) + " already exists");
}

ApiError BeingDeletedError(const ResourceType& rt, std::string_view name) {
  return ForResource(409, "AlreadyExists", rt, name,
                     "object is being deleted: " + Qualified(rt, name) + " already exists");
}

ApiError ConflictError(const ResourceType& rt, std::string_view name, std::string_view detail) {
  return ForResource(
      409, "Conflict", rt, name,
      "Operation cannot be fulfilled on " + Qualified(rt, name) + ": " + std::string(detail));
}

ApiError InvalidError(const ResourceType& rt, std::string_view name,
                      std::vector<StatusCause> causes) {
  std::string group_kind = rt.group.empty() ? rt.kind : rt.kind + "." + rt.group;
  std::string message = group_kind + " \"" + std::string(name) + "\" is invalid: ";
  if (causes.size() > 1) message += "[";
  for (size_t i = 0; i < causes.size(); ++i) {
    if (i > 0) message += ", ";
    if (!causes[i].field.empty()) message += causes[i].field + ": ";
    message += causes[i].message;
  }
  if (causes.size() > 1) message += "]";
  ApiError e = Make(422, "Invalid", std::move(message));
  e.name = std::string(name);
  e.group = rt.group;
  e.kind = rt.kind;
  e.causes = std::move(causes);
  return e;
}

ApiError BadRequestError(std::string message) {
  return Make(400, "BadRequest", std::move(message));
}
ApiError ExpiredError(std::string message) { return Make(410, "Expired", std::move(message)); }
ApiError MethodNotAllowedError(std::string message) {
  return Make(405, "MethodNotAllowed", std::move(message));
}
ApiError UnsupportedMediaTypeError(std::string message) {
  return Make(415, "UnsupportedMediaType", std::move(message));
}
ApiError NotAcceptableError(std::string message) {
  return Make(406, "NotAcceptable", std::move(message));
}
ApiError TooLargeError(std::string message) {
  return Make(413, "RequestEntityTooLarge", std::move(message));
}
ApiError TooManyRequestsError(int retry_after_seconds) {
  ApiError e = Make(429, "TooManyRequests", "Too many requests, please try again later.");
  e.retry_after_seconds = retry_after_seconds;
  return e;
}
ApiError InternalError(std::string message) {
  return Make(500, "InternalError", "Internal error occurred: " + message);
}
ApiError ServiceUnavailableError(std::string message) {
  return Make(503, "ServiceUnavailable", std::move(message));
}
ApiError UnauthorizedError() { return Make(401, "Unauthorized", "Unauthorized"); }
ApiError ForbiddenError(std::string message) { return Make(403, "Forbidden", std::move(message)); }
ApiError NotFoundPathError(std::string_view /*path*/) {
  return Make(404, "NotFound", "the server could not find the requested resource");
}

}  // namespace steward::cluster
