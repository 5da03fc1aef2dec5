// Serialization half of ggml_file.h.
#include <string.h>

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/convert/ggml_file.h"
#include "tools/convert/status_macros.h"

namespace ggml_whisper::convert {
namespace {

void AppendI32(std::string& out, int32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }
void AppendU32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }

// whisper.cpp reads a name of any length into a std::string; the longest Whisper name is 36
// bytes. The bound keeps a corrupt length from meaning gigabytes.
constexpr size_t kMaxNameLength = 1024;

}  // namespace

size_t GgmlFileTypeSize(GgmlFileType type) {
  switch (type) {
    case GgmlFileType::kF32: return 4;
    case GgmlFileType::kF16: return 2;
  }
  return 0;
}

const char* GgmlFileTypeName(GgmlFileType type) {
  switch (type) {
    case GgmlFileType::kF32: return "f32";
    case GgmlFileType::kF16: return "f16";
  }
  return "unknown";
}

bool WhisperHparams::operator==(const WhisperHparams& o) const {
  return n_vocab == o.n_vocab && n_audio_ctx == o.n_audio_ctx && n_audio_state == o.n_audio_state &&
         n_audio_head == o.n_audio_head && n_audio_layer == o.n_audio_layer &&
         n_text_ctx == o.n_text_ctx && n_text_state == o.n_text_state &&
         n_text_head == o.n_text_head && n_text_layer == o.n_text_layer && n_mels == o.n_mels &&
         ftype == o.ftype;
}

absl::StatusOr<std::string> SerializeGgmlHeader(const WhisperHparams& h, const MelFilters& mel,
                                                const std::vector<std::string>& vocab) {
  if (mel.n_mel <= 0 || mel.n_fft <= 0 ||
      mel.data.size() != static_cast<size_t>(mel.n_mel) * static_cast<size_t>(mel.n_fft)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "mel filters: ", mel.data.size(), " values for n_mel ", mel.n_mel, " x n_fft ", mel.n_fft));
  }
  if (vocab.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return absl::InvalidArgumentError(absl::StrCat("vocabulary of ", vocab.size(), " tokens"));
  }
  std::string out;
  AppendU32(out, kGgmlFileMagic);
  for (int32_t v :
       {h.n_vocab, h.n_audio_ctx, h.n_audio_state, h.n_audio_head, h.n_audio_layer, h.n_text_ctx,
        h.n_text_state, h.n_text_head, h.n_text_layer, h.n_mels, h.ftype}) {
    AppendI32(out, v);
  }
  AppendI32(out, mel.n_mel);
  AppendI32(out, mel.n_fft);
  out.append(reinterpret_cast<const char*>(mel.data.data()), 4 * mel.data.size());
  AppendI32(out, static_cast<int32_t>(vocab.size()));
  for (const std::string& token : vocab) {
    AppendU32(out, static_cast<uint32_t>(token.size()));
    out.append(token);
  }
  return out;
}

absl::StatusOr<std::string> SerializeTensorRecordHeader(absl::string_view name, GgmlFileType type,
                                                        const std::vector<int64_t>& ne) {
  if (name.empty() || name.size() > kMaxNameLength) {
    return absl::InvalidArgumentError(absl::StrCat("tensor name '", name, "' has length ",
                                                   name.size(), ", expected 1..", kMaxNameLength));
  }
  if (ne.empty() || ne.size() > 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", name, "' has ", ne.size(), " dims, a ggml file allows 1..4"));
  }
  for (int64_t n : ne) {
    if (n < 1 || n > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", name, "' has ne [", absl::StrJoin(ne, ", "), "]: each must be in 1..2^31-1"));
    }
  }
  if (GgmlFileTypeSize(type) == 0) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "' has ggml_type ",
                                                   static_cast<int32_t>(type),
                                                   ", the converter writes f32 (0) or f16 (1)"));
  }
  std::string out;
  AppendI32(out, static_cast<int32_t>(ne.size()));
  AppendI32(out, static_cast<int32_t>(name.size()));
  AppendI32(out, static_cast<int32_t>(type));
  for (int64_t n : ne) AppendI32(out, static_cast<int32_t>(n));
  out.append(name.data(), name.size());
  return out;
}

absl::StatusOr<GgmlModelWriter> GgmlModelWriter::Create(const std::string& path,
                                                        const WhisperHparams& hparams,
                                                        const MelFilters& mel,
                                                        const std::vector<std::string>& vocab) {
  CONVERT_ASSIGN_OR_RETURN(const std::string header, SerializeGgmlHeader(hparams, mel, vocab));
  CONVERT_ASSIGN_OR_RETURN(AtomicFileWriter file, AtomicFileWriter::Open(path));
  GgmlModelWriter w(std::move(file));
  CONVERT_RETURN_IF_ERROR(w.file_.Write(header.data(), header.size()));
  w.header_bytes_ = header.size();
  return w;
}

absl::Status GgmlModelWriter::AddTensor(absl::string_view name, GgmlFileType type,
                                        const std::vector<int64_t>& ne, const void* data,
                                        size_t nbytes) {
  CONVERT_ASSIGN_OR_RETURN(const std::string record, SerializeTensorRecordHeader(name, type, ne));
  const size_t tsize = GgmlFileTypeSize(type);
  uint64_t n = 1;
  for (int64_t d : ne) {  // each d is in 1..2^31-1 (checked above); the product may overflow
    if (n > std::numeric_limits<uint64_t>::max() / tsize / static_cast<uint64_t>(d)) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", name, "' with ne [", absl::StrJoin(ne, ", "), "] is too large"));
    }
    n *= static_cast<uint64_t>(d);
  }
  if (n * tsize != nbytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", name, "': ", nbytes, " data bytes, but ne [", absl::StrJoin(ne, ", "), "] of ",
        GgmlFileTypeName(type), " needs ", n * tsize));
  }
  CONVERT_RETURN_IF_ERROR(file_.Write(record.data(), record.size()));
  CONVERT_RETURN_IF_ERROR(file_.Write(data, nbytes));
  ++n_tensors_;
  tensor_data_bytes_ += nbytes;
  return absl::OkStatus();
}

absl::Status GgmlModelWriter::Finish() { return file_.Commit(); }

}  // namespace ggml_whisper::convert
