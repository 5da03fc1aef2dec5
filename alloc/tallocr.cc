// ggml_tallocr (ggml-alloc.c): bump allocation of tensors in a backend buffer.
#include "alloc/tallocr.h"

#include "absl/status/status.h"
#include "alloc/tallocr_status.h"

namespace {

enum class AllocResult { kOk, kInvalid, kNoSpace };

AllocResult Alloc(ggml_tallocr* talloc, ggml_tensor* tensor) {
  if (talloc == nullptr || tensor == nullptr || talloc->buffer == nullptr) {
    ggml_set_error("ggml_tallocr_alloc: %s is NULL",
                   talloc == nullptr ? "the allocator" : tensor == nullptr ? "the tensor" : "the allocator's buffer");
    return AllocResult::kInvalid;
  }
  const char* name = tensor->name[0] != '\0' ? tensor->name : "(unnamed)";
  if (tensor->view_src != nullptr || (tensor->data != nullptr && tensor->buffer != talloc->buffer)) {
    ggml_set_error("ggml_tallocr_alloc: '%s' %s", name,
                   tensor->view_src != nullptr ? "is a view (use ggml_backend_view_init)"
                                               : "already has data outside this buffer");
    return AllocResult::kInvalid;
  }
  const size_t size = GGML_PAD(ggml_backend_buffer_get_alloc_size(talloc->buffer, tensor), talloc->alignment);
  const size_t capacity = ggml_backend_buffer_get_size(talloc->buffer);
  const size_t left = capacity > talloc->offset ? capacity - talloc->offset : 0;
  if (size > left) {
    ggml_set_error("ggml_tallocr_alloc: not enough space in the buffer for '%s' (needed %zu bytes, %zu bytes "
                   "left of %zu)",
                   name, size, left, capacity);
    return AllocResult::kNoSpace;
  }
  if (!ggml_backend_tensor_alloc(talloc->buffer, tensor, static_cast<char*>(talloc->base) + talloc->offset)) {
    return AllocResult::kInvalid;
  }
  talloc->offset += size;
  return AllocResult::kOk;
}

}  // namespace

ggml_tallocr ggml_tallocr_new(ggml_backend_buffer_t buffer) {
  ggml_tallocr talloc;
  talloc.buffer = buffer;
  talloc.base = buffer != nullptr ? ggml_backend_buffer_get_base(buffer) : nullptr;
  talloc.alignment = buffer != nullptr ? ggml_backend_buffer_get_alignment(buffer) : GGML_BACKEND_CPU_ALIGNMENT;
  talloc.offset = 0;
  return talloc;
}

bool ggml_tallocr_alloc(ggml_tallocr* talloc, ggml_tensor* tensor) {
  return Alloc(talloc, tensor) == AllocResult::kOk;
}

absl::Status TallocrAlloc(ggml_tallocr& talloc, ggml_tensor* tensor) {
  switch (Alloc(&talloc, tensor)) {
    case AllocResult::kOk:
      return absl::OkStatus();
    case AllocResult::kNoSpace:
      return absl::ResourceExhaustedError(ggml_last_error());
    case AllocResult::kInvalid:
      break;
  }
  return absl::InvalidArgumentError(ggml_last_error());
}
