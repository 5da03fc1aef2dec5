// Parsing half of ggml_file.h.
#include <string.h>

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tools/convert/byte_cursor.h"
#include "tools/convert/ggml_file.h"
#include "tools/convert/status_macros.h"

namespace ggml_whisper::convert {
namespace {

constexpr int32_t kMaxNameLength = 1024;

absl::Status NonNegative(int64_t v, absl::string_view field, size_t at, absl::string_view source) {
  if (v >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": ", field, " at offset ", at, " is ", v, ", expected >= 0"));
}

// One tensor record at the cursor (the record numbered `index`): n_dims, name length, type,
// ne[n_dims], name, data. Errors name `source`, the record and the field.
absl::StatusOr<GgmlTensorRecord> ReadTensorRecord(ByteCursor& in, size_t index, size_t image_size,
                                                  absl::string_view source) {
  const std::string what = absl::StrCat("tensor record #", index, " at offset ", in.offset());
  CONVERT_ASSIGN_OR_RETURN(const int32_t n_dims, in.Read<int32_t>(what + " n_dims"));
  CONVERT_ASSIGN_OR_RETURN(const int32_t name_len, in.Read<int32_t>(what + " name length"));
  CONVERT_ASSIGN_OR_RETURN(const int32_t type, in.Read<int32_t>(what + " type"));
  if (n_dims < 1 || n_dims > 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": ", what, " has n_dims ", n_dims, ", expected 1..4"));
  }
  if (name_len < 1 || name_len > kMaxNameLength) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", what, " has name length ",
                                                   name_len, ", expected 1..", kMaxNameLength));
  }
  GgmlTensorRecord t;
  t.type = static_cast<GgmlFileType>(type);
  if (GgmlFileTypeSize(t.type) == 0) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", what, " has ggml_type ", type,
                                                   ", this parser reads f32 (0) and f16 (1)"));
  }
  uint64_t n = 1;
  for (int d = 0; d < n_dims; ++d) {
    CONVERT_ASSIGN_OR_RETURN(const int32_t ne, in.Read<int32_t>(what + " ne"));
    if (ne < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": ", what, " has ne[", d, "] = ", ne, ", expected >= 1"));
    }
    t.ne.push_back(ne);
    // No tensor can hold more elements than the file has bytes. Checking after each factor
    // also keeps n <= image.size() * 2^31, so the product never overflows.
    n *= static_cast<uint64_t>(ne);
    if (n > image_size) {
      return absl::DataLossError(
          absl::StrCat(source, ": ", what, " claims more elements than the file has bytes"));
    }
  }
  CONVERT_ASSIGN_OR_RETURN(const uint8_t* name, in.Bytes(name_len, what + " name"));
  t.name.assign(reinterpret_cast<const char*>(name), name_len);
  t.nbytes = n * GgmlFileTypeSize(t.type);
  t.data_offset = in.offset();
  CONVERT_RETURN_IF_ERROR(
      in.Bytes(t.nbytes, absl::StrCat("tensor '", t.name, "' data")).status());
  return t;
}

}  // namespace

absl::StatusOr<GgmlModelFile> ParseGgmlModelFile(const std::vector<uint8_t>& image,
                                                 absl::string_view source) {
  ByteCursor in(image.data(), image.size(), source);
  GgmlModelFile f;
  CONVERT_ASSIGN_OR_RETURN(const uint32_t magic, in.Read<uint32_t>("magic"));
  if (magic != kGgmlFileMagic) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": magic 0x", absl::Hex(magic),
                                                   ", expected 0x", absl::Hex(kGgmlFileMagic),
                                                   " (\"ggml\")"));
  }
  WhisperHparams& h = f.hparams;
  for (int32_t* field :
       {&h.n_vocab, &h.n_audio_ctx, &h.n_audio_state, &h.n_audio_head, &h.n_audio_layer,
        &h.n_text_ctx, &h.n_text_state, &h.n_text_head, &h.n_text_layer, &h.n_mels, &h.ftype}) {
    CONVERT_ASSIGN_OR_RETURN(*field, in.Read<int32_t>("hparams"));
  }

  size_t at = in.offset();
  CONVERT_ASSIGN_OR_RETURN(f.mel.n_mel, in.Read<int32_t>("mel n_mel"));
  CONVERT_ASSIGN_OR_RETURN(f.mel.n_fft, in.Read<int32_t>("mel n_fft"));
  CONVERT_RETURN_IF_ERROR(NonNegative(f.mel.n_mel, "mel n_mel", at, source));
  CONVERT_RETURN_IF_ERROR(NonNegative(f.mel.n_fft, "mel n_fft", at + 4, source));
  const size_t n_filter = static_cast<size_t>(f.mel.n_mel) * static_cast<size_t>(f.mel.n_fft);
  CONVERT_ASSIGN_OR_RETURN(const uint8_t* mel, in.Bytes(4 * n_filter, "mel filters"));
  f.mel.data.resize(n_filter);
  if (n_filter > 0) memcpy(f.mel.data.data(), mel, 4 * n_filter);

  at = in.offset();
  CONVERT_ASSIGN_OR_RETURN(const int32_t n_tokens, in.Read<int32_t>("vocabulary count"));
  CONVERT_RETURN_IF_ERROR(NonNegative(n_tokens, "vocabulary count", at, source));
  for (int32_t i = 0; i < n_tokens; ++i) {
    CONVERT_ASSIGN_OR_RETURN(const uint32_t len, in.Read<uint32_t>("token length"));
    CONVERT_ASSIGN_OR_RETURN(const uint8_t* bytes, in.Bytes(len, absl::StrCat("token ", i)));
    f.vocab.emplace_back(reinterpret_cast<const char*>(bytes), len);
  }
  f.header_bytes = in.offset();

  while (in.remaining() > 0) {
    CONVERT_ASSIGN_OR_RETURN(GgmlTensorRecord t, ReadTensorRecord(in, f.tensors.size(), image.size(), source));
    f.tensors.push_back(std::move(t));
  }
  return f;
}

}  // namespace ggml_whisper::convert
