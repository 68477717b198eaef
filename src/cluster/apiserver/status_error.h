// StatusError: a Kubernetes API error, rendered on the wire as a meta/v1 Status object.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/status.h"

namespace steward::cluster {

struct ResourceType;

struct StatusCause {
  std::string reason;  // "FieldValueRequired", "FieldValueInvalid", "FieldValueNotSupported"...
  std::string message;
  std::string field;  // "metadata.name"
};

struct StatusError {
  int code = 500;
  std::string reason;  // "NotFound", "AlreadyExists", "Conflict", "Invalid", "Expired"...
  std::string message;
  // details: name, group, kind, causes, retryAfterSeconds (omitted when empty).
  std::string name;
  std::string group;
  std::string kind;  // the resource as the API server names it in details: "deployments"
  std::vector<StatusCause> causes;
  int retry_after_seconds = 0;

  // {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",...}
  Json ToStatus() const;
};

template <typename T>
using ApiResult = Expected<T, StatusError>;

// Constructors with the exact messages the Kubernetes API server uses.
StatusError NotFoundError(const ResourceType& rt, std::string_view name);
StatusError AlreadyExistsError(const ResourceType& rt, std::string_view name);
// `object is being deleted: <AlreadyExists message>`.
StatusError BeingDeletedError(const ResourceType& rt, std::string_view name);
// "Operation cannot be fulfilled on deployments.apps \"x\": <detail>".
StatusError ConflictError(const ResourceType& rt, std::string_view name, std::string_view detail);
// 422 "<Kind> \"name\" is invalid: <field>: <message>, ..." with one cause per problem.
StatusError InvalidError(const ResourceType& rt, std::string_view name,
                         std::vector<StatusCause> causes);
StatusError BadRequestError(std::string message);
// 422 Invalid with the message as it is and no details: a patch that cannot be applied.
StatusError UnprocessableError(std::string message);
StatusError ExpiredError(std::string message);  // 410 Expired
StatusError MethodNotAllowedError(std::string message);
StatusError UnsupportedMediaTypeError(std::string message);
StatusError NotAcceptableError(std::string message);
StatusError TooLargeError(std::string message);
StatusError TooManyRequestsError(int retry_after_seconds);
StatusError InternalError(std::string message);
StatusError ServiceUnavailableError(std::string message);
StatusError UnauthorizedError();
StatusError ForbiddenError(std::string message);
StatusError NotFoundPathError(std::string_view path);  // 404 for an unknown URL, "the server could
                                                       // not find the requested resource"

}  // namespace steward::cluster
