// Early-return helpers for absl::Status / absl::StatusOr (Abseil has no public ones).
#ifndef GGML_WHISPER_TOOLS_CONVERT_STATUS_MACROS_H_
#define GGML_WHISPER_TOOLS_CONVERT_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns the status of `expr` (an absl::Status) from the enclosing function unless it is OK.
#define CONVERT_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    const ::absl::Status convert_status_ = (expr);     \
    if (!convert_status_.ok()) return convert_status_; \
  } while (0)

#define CONVERT_CONCAT_INNER_(a, b) a##b
#define CONVERT_CONCAT_(a, b) CONVERT_CONCAT_INNER_(a, b)

// `lhs = *expr` for an absl::StatusOr `expr`, or returns its status from the enclosing function.
// `lhs` may declare a variable: CONVERT_ASSIGN_OR_RETURN(uint32_t n, cursor.Read<uint32_t>("n"));
#define CONVERT_ASSIGN_OR_RETURN(lhs, expr) \
  CONVERT_ASSIGN_OR_RETURN_IMPL_(CONVERT_CONCAT_(convert_statusor_, __LINE__), lhs, expr)
#define CONVERT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(*tmp)

#endif  // GGML_WHISPER_TOOLS_CONVERT_STATUS_MACROS_H_
