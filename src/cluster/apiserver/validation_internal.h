// Internals of validation.cc shared with validation_policy.cc (RBAC, PodDisruptionBudget,
// NetworkPolicy): the list of causes a validation builds, worded as the API server words them
// (k8s.io/apimachinery/pkg/util/validation/field). Not for other users.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/apiserver/status_error.h"
#include "cluster/apiserver/validation.h"
#include "common/json.h"

namespace steward::cluster::validation_internal {

class Causes {
 public:
  void Required(std::string field, std::string detail = "") {
    std::string msg = "Required value";
    if (!detail.empty()) msg += ": " + detail;
    list_.push_back({"FieldValueRequired", std::move(msg), std::move(field)});
  }
  void Invalid(std::string field, const Json& value, std::string detail) {
    list_.push_back({"FieldValueInvalid", "Invalid value: " + RenderValue(value) + ": " + detail,
                     std::move(field)});
  }
  void Unsupported(std::string field, const Json& value, const std::vector<std::string>& allowed) {
    std::string msg = "Unsupported value: " + RenderValue(value) + ": supported values: ";
    for (size_t i = 0; i < allowed.size(); ++i) {
      if (i > 0) msg += ", ";
      msg += "\"" + allowed[i] + "\"";
    }
    list_.push_back({"FieldValueNotSupported", std::move(msg), std::move(field)});
  }
  void Duplicate(std::string field, const Json& value) {
    list_.push_back(
        {"FieldValueDuplicate", "Duplicate value: " + RenderValue(value), std::move(field)});
  }
  void Forbidden(std::string field, std::string detail) {
    list_.push_back({"FieldValueForbidden", "Forbidden: " + detail, std::move(field)});
  }
  void Immutable(std::string field, const Json& value) {
    Invalid(std::move(field), value, "field is immutable");
  }
  void TypeInvalid(std::string field, const Json& value, std::string expected) {
    list_.push_back({"FieldValueTypeInvalid",
                     "Invalid value: " + RenderValue(value) + ": expected " + expected,
                     std::move(field)});
  }
  void TooLong(std::string field, std::string detail) {
    list_.push_back({"FieldValueTooLong", "Too long: " + detail, std::move(field)});
  }
  std::vector<StatusCause> Take() { return std::move(list_); }

 private:
  std::vector<StatusCause> list_;
};

// An IANA service name (a container port's name).
bool IsPortName(std::string_view v);

// Per kind (validation_policy.cc). `old` is non-null on update.
void ValidateRbacRules(Causes& c, const Json& obj, bool namespaced);
void ValidateRbacBinding(Causes& c, const Json& obj, const Json* old, bool namespaced);
void ValidatePodDisruptionBudget(Causes& c, const Json& obj);
void ValidateNetworkPolicy(Causes& c, const Json& obj);
// Defaults of the same kinds (ApplyDefaults).
void DefaultRbacBinding(Json& obj);
void DefaultNetworkPolicy(Json& obj);

}  // namespace steward::cluster::validation_internal
