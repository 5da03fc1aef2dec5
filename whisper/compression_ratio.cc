#include "whisper/compression_ratio.h"

namespace whisper {
namespace {

// deflateInit2 with windowBits 15 and memLevel 8 asks for the deflate_state (~6 KB), the window
// (64 KB), prev and head (64 KB each) and the pending buffer (64 KB): zlib.h's "(1 << (windowBits
// + 2)) + (1 << (memLevel + 9))" plus the state. 320 KB leaves room for alignment.
constexpr size_t kArenaBytes = 320 << 10;
constexpr size_t kAlign = 64;

}  // namespace

void* CompressionRatio::Alloc(void* opaque, unsigned items, unsigned size) {
  auto* self = static_cast<CompressionRatio*>(opaque);
  const size_t bytes = static_cast<size_t>(items) * size;
  const size_t at = (self->arena_used_ + kAlign - 1) / kAlign * kAlign;
  if (bytes > kArenaBytes || at > kArenaBytes - bytes) return Z_NULL;
  self->arena_used_ = at + bytes;
  return self->arena_.get() + at;
}

void CompressionRatio::Free(void*, void*) {}  // the arena goes with the object

CompressionRatio::CompressionRatio() : arena_(new unsigned char[kArenaBytes]) {
  stream_.zalloc = &CompressionRatio::Alloc;
  stream_.zfree = &CompressionRatio::Free;
  stream_.opaque = this;
  ready_ = deflateInit2(&stream_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, MAX_WBITS, /*memLevel=*/8,
                        Z_DEFAULT_STRATEGY) == Z_OK;
}

CompressionRatio::~CompressionRatio() {
  if (ready_) deflateEnd(&stream_);
}

double CompressionRatio::Of(absl::string_view text) {
  if (!ready_ || deflateReset(&stream_) != Z_OK) return -1.0;
  // Only the compressed length is needed: deflate into a small buffer, counting total_out.
  unsigned char out[4096];
  stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream_.avail_in = static_cast<uInt>(text.size());
  int ret = Z_OK;
  do {
    stream_.next_out = out;
    stream_.avail_out = sizeof(out);
    ret = deflate(&stream_, Z_FINISH);
    if (ret == Z_STREAM_ERROR) return -1.0;
  } while (ret != Z_STREAM_END);
  return static_cast<double>(text.size()) / static_cast<double>(stream_.total_out);
}

}  // namespace whisper
