#include "cluster/apiserver/status_error.h"

#include "cluster/model/resource_types.h"

namespace steward::cluster {

Json StatusError::ToStatus() const {
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

StatusError Make(int code, std::string reason, std::string message) {
  StatusError e;
  e.code = code;
  e.reason = std::move(reason);
  e.message = std::move(message);
  return e;
}

StatusError ForResource(int code, std::string reason, const ResourceType& rt, std::string_view name,
                        std::string message) {
  StatusError e = Make(code, std::move(reason), std::move(message));
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

StatusError NotFoundError(const ResourceType& rt, std::string_view name) {
  return ForResource(404, "NotFound", rt, name, Qualified(rt, name) + " not found");
}

StatusError AlreadyExistsError(const ResourceType& rt, std::string_view name) {
  return ForResource(409, "AlreadyExists", rt, name, Qualified(rt, name) + " already exists");
}

StatusError BeingDeletedError(const ResourceType& rt, std::string_view name) {
  return ForResource(409, "AlreadyExists", rt, name,
                     "object is being deleted: " + Qualified(rt, name) + " already exists");
}

StatusError ConflictError(const ResourceType& rt, std::string_view name, std::string_view detail) {
  return ForResource(
      409, "Conflict", rt, name,
      "Operation cannot be fulfilled on " + Qualified(rt, name) + ": " + std::string(detail));
}

StatusError InvalidError(const ResourceType& rt, std::string_view name,
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
  StatusError e = Make(422, "Invalid", std::move(message));
  e.name = std::string(name);
  e.group = rt.group;
  e.kind = rt.kind;
  e.causes = std::move(causes);
  return e;
}

StatusError BadRequestError(std::string message) {
  return Make(400, "BadRequest", std::move(message));
}
StatusError UnprocessableError(std::string message) {
  return Make(422, "Invalid", std::move(message));
}
StatusError ExpiredError(std::string message) { return Make(410, "Expired", std::move(message)); }
StatusError MethodNotAllowedError(std::string message) {
  return Make(405, "MethodNotAllowed", std::move(message));
}
StatusError UnsupportedMediaTypeError(std::string message) {
  return Make(415, "UnsupportedMediaType", std::move(message));
}
StatusError NotAcceptableError(std::string message) {
  return Make(406, "NotAcceptable", std::move(message));
}
StatusError TooLargeError(std::string message) {
  return Make(413, "RequestEntityTooLarge", std::move(message));
}
StatusError TooManyRequestsError(int retry_after_seconds) {
  StatusError e = Make(429, "TooManyRequests", "Too many requests, please try again later.");
  e.retry_after_seconds = retry_after_seconds;
  return e;
}
StatusError InternalError(std::string message) {
  return Make(500, "InternalError", "Internal error occurred: " + message);
}
StatusError ServiceUnavailableError(std::string message) {
  return Make(503, "ServiceUnavailable", std::move(message));
}
StatusError UnauthorizedError() { return Make(401, "Unauthorized", "Unauthorized"); }
StatusError ForbiddenError(std::string message) {
  return Make(403, "Forbidden", std::move(message));
}
StatusError NotFoundPathError(std::string_view /*path*/) {
  return Make(404, "NotFound", "the server could not find the requested resource");
}

}  // namespace steward::cluster
