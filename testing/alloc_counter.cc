// Allocation counting by malloc interposition (glibc), or by sanitizer malloc hooks under ASan.
#include "testing/alloc_counter.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include <atomic>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(__SANITIZE_ADDRESS__)
#define __SANITIZE_ADDRESS__ 1
#endif
#if __has_feature(thread_sanitizer) && !defined(__SANITIZE_THREAD__)
#define __SANITIZE_THREAD__ 1
#endif
#if __has_feature(memory_sanitizer)
#define GGML_TESTING_MSAN 1
#endif
#endif

#if defined(__SANITIZE_THREAD__) || defined(GGML_TESTING_MSAN)
#define GGML_TESTING_COUNT_MODE 0  // not supported
#elif defined(__SANITIZE_ADDRESS__)
#define GGML_TESTING_COUNT_MODE 1  // sanitizer hooks
#else
#define GGML_TESTING_COUNT_MODE 2  // malloc interposition
#endif

namespace {

// Constant-initialized: safe to use from allocations made before static constructors run.
std::atomic<bool> g_enabled{false};
std::atomic<int64_t> g_allocations{0};
std::atomic<int64_t> g_bytes{0};

inline void Note(size_t size) {
  if (g_enabled.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    g_bytes.fetch_add(static_cast<int64_t>(size), std::memory_order_relaxed);
  }
}

}  // namespace

#if GGML_TESTING_COUNT_MODE == 1

extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, size_t),
                                                         void (*free_hook)(const volatile void*));

namespace {

void MallocHook(const volatile void*, size_t size) { Note(size); }
void FreeHook(const volatile void*) {}

const bool g_hooks_installed = __sanitizer_install_malloc_and_free_hooks(MallocHook, FreeHook) != 0;

}  // namespace

#elif GGML_TESTING_COUNT_MODE == 2

// glibc's implementations, exported for exactly this use (interposing malloc).
extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t n, size_t size);
void* __libc_realloc(void* ptr, size_t size);
void __libc_free(void* ptr);
void* __libc_memalign(size_t alignment, size_t size);
void* __libc_valloc(size_t size);
void* __libc_pvalloc(size_t size);

void* malloc(size_t size) noexcept {
  Note(size);
  return __libc_malloc(size);
}

void* calloc(size_t n, size_t size) noexcept {
  Note(n * size);
  return __libc_calloc(n, size);
}

void* realloc(void* ptr, size_t size) noexcept {
  if (size > 0) Note(size);
  return __libc_realloc(ptr, size);
}

void* reallocarray(void* ptr, size_t n, size_t size) noexcept {
  if (size != 0 && n > SIZE_MAX / size) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(ptr, n * size);
}

void free(void* ptr) noexcept { __libc_free(ptr); }

void* memalign(size_t alignment, size_t size) noexcept {
  Note(size);
  return __libc_memalign(alignment, size);
}

void* aligned_alloc(size_t alignment, size_t size) noexcept {
  Note(size);
  return __libc_memalign(alignment, size);
}

int posix_memalign(void** out, size_t alignment, size_t size) noexcept {
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  Note(size);
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

void* valloc(size_t size) noexcept {
  Note(size);
  return __libc_valloc(size);
}

void* pvalloc(size_t size) noexcept {
  Note(size);
  return __libc_pvalloc(size);
}
}  // extern "C"

#endif

namespace ggml_testing {

bool AllocCounter::Supported() {
#if GGML_TESTING_COUNT_MODE == 1
  return g_hooks_installed;
#else
  return GGML_TESTING_COUNT_MODE != 0;
#endif
}

void AllocCounter::Start() {
  g_allocations.store(0, std::memory_order_relaxed);
  g_bytes.store(0, std::memory_order_relaxed);
  g_enabled.store(true, std::memory_order_seq_cst);
}

int64_t AllocCounter::Stop() {
  g_enabled.store(false, std::memory_order_seq_cst);
  return g_allocations.load(std::memory_order_relaxed);
}

int64_t AllocCounter::Allocations() { return g_allocations.load(std::memory_order_relaxed); }
int64_t AllocCounter::Bytes() { return g_bytes.load(std::memory_order_relaxed); }

}  // namespace ggml_testing
