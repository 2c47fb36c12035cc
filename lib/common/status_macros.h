// Status plumbing shared by every stage.
//
// TM_RETURN_IF_ERROR(expr): evaluates an absl::Status expression and returns it from the
// enclosing function when it is not OK.
// TM_ASSIGN_OR_RETURN(lhs, expr): evaluates an absl::StatusOr<T> expression; on error returns
// its status, otherwise moves the value into `lhs` (which may be a declaration).
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TM_STATUS_CONCAT_INNER(a, b) a##b
#define TM_STATUS_CONCAT(a, b) TM_STATUS_CONCAT_INNER(a, b)

#define TM_RETURN_IF_ERROR(expr)                  \
  do {                                            \
    ::absl::Status tm_status_ = (expr);           \
    if (!tm_status_.ok()) return tm_status_;      \
  } while (0)

#define TM_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return std::move(tmp).status(); \
  lhs = std::move(tmp).value()

#define TM_ASSIGN_OR_RETURN(lhs, expr) \
  TM_ASSIGN_OR_RETURN_IMPL(TM_STATUS_CONCAT(tm_statusor_, __LINE__), lhs, expr)
