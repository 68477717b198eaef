// Status and StatusOr: the result types used across every module boundary.
//
// A Status is a code plus a message, and for bad input the path of the field at fault. Codes
// carry retry meaning (see docs/errors.md): callers decide what to do from the code and the
// field, never from the message text. StatusOr<T> holds either a value or a non-OK Status. Both
// are cheap to move and are not thread-safe to mutate.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace steward {

enum class StatusCode {
  kOk = 0,
  kCancelled,
  kInvalidArgument,     // bad input: never retried
  kNotFound,            // absent
  kAlreadyExists,       // create over an existing object
  kAborted,             // optimistic-concurrency conflict: re-read and decide again
  kFailedPrecondition,  // the system is not in a state where the call can run
  kResourceExhausted,   // throttled: retry after a delay
  kUnavailable,         // transient: retry with backoff
  kDeadlineExceeded,    // timed out: retry with backoff
  kOutOfRange,          // e.g. a revision that has been compacted away
  kUnauthenticated,
  kPermissionDenied,
  kUnimplemented,
  kInternal,  // a bug or corrupted state
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // The field the error is about ("spec.stack.memory", "name"; see common/fields.h), or "" when
  // it is about no one field. Set by InvalidField; the message already names it.
  const std::string& field() const { return field_; }
  Status WithField(std::string field) && {
    field_ = std::move(field);
    return std::move(*this);
  }
  // "CODE: message", for logs and error output.
  std::string ToString() const;

  // Code and message: the field is where the message came from, not another error.
  bool operator==(const Status& other) const {
    return code_ == other.code_ && message_ == other.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::string field_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
inline Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
inline Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }

// Expected<T, E>: a value or an error. E must not be default-"success"; StatusOr<T> is the
// common case. Accessing value() on an error (or error() on a value) is a programming error.
template <typename T, typename E>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit
  Expected(E error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const E& error() const& {
    assert(!ok());
    return std::get<1>(v_);
  }
  E&& error() && {
    assert(!ok());
    return std::get<1>(std::move(v_));
  }

 private:
  std::variant<T, E> v_;
};

template <typename T>
class [[nodiscard]] StatusOr : public Expected<T, Status> {
 public:
  using Expected<T, Status>::Expected;
  // The status: OK when a value is held.
  Status status() const { return this->ok() ? Status() : this->error(); }
};

}  // namespace steward

#define STEWARD_CONCAT_INNER(a, b) a##b
#define STEWARD_CONCAT(a, b) STEWARD_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function if `expr` is not OK.
#define RETURN_IF_ERROR(expr)       \
  do {                              \
    ::steward::Status _st = (expr); \
    if (!_st.ok()) return _st;      \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, StatusOrExpr)`: binds the value or returns the error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(STEWARD_CONCAT(_status_or_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)   \
  auto tmp = (expr);                            \
  if (!tmp.ok()) return std::move(tmp).error(); \
  lhs = std::move(tmp).value()
