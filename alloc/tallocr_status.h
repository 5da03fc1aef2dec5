// absl::Status wrapper over ggml_tallocr_alloc (alloc/tallocr.h) for the C++ layers.
#ifndef GGML_WHISPER_ALLOC_TALLOCR_STATUS_H_
#define GGML_WHISPER_ALLOC_TALLOCR_STATUS_H_

#include "absl/status/status.h"
#include "alloc/tallocr.h"

// ggml_tallocr_alloc as a Status. Errors:
//   ResourceExhausted - the tensor does not fit; the message names the tensor, the bytes needed
//                       and the bytes left.
//   InvalidArgument   - the tensor is NULL, a view, or already has data outside the buffer, or
//                       the allocator has no buffer.
// On error the allocator and the tensor are unchanged.
absl::Status TallocrAlloc(ggml_tallocr& talloc, ggml_tensor* tensor);

#endif  // GGML_WHISPER_ALLOC_TALLOCR_STATUS_H_
