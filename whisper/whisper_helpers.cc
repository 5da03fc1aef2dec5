// The C API's program helpers (whisper.h, "Program helpers"): -dtw preset names, the model-file
// check before loading, and whisper.cpp's timestamp form.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "whisper/dtw.h"
#include "whisper/model_kind.h"
#include "whisper/whisper.h"

extern "C" {

enum whisper_alignment_heads_preset whisper_ggml_alignment_heads_preset_from_name(const char* name) {
  if (name == nullptr) return WHISPER_AHEADS_NONE;
  // AheadsPreset is whisper_alignment_heads_preset value for value (checked in whisper_context.cc).
  return static_cast<whisper_alignment_heads_preset>(whisper::AlignmentHeadsPresetByName(name));
}

enum whisper_alignment_heads_preset whisper_ggml_alignment_heads_preset_for_model(struct whisper_context* ctx) {
  if (ctx == nullptr) return WHISPER_AHEADS_NONE;
  return static_cast<whisper_alignment_heads_preset>(whisper::AlignmentHeadsPresetForDims(
      whisper_model_n_vocab(ctx), whisper_model_n_audio_layer(ctx), whisper_model_n_text_layer(ctx)));
}

int whisper_ggml_check_model_file(const char* path, enum whisper_ggml_model_file_kind expected, char* msg,
                                  size_t msg_size) {
  if (path == nullptr) return -1;
  whisper::ModelFileKind kind;
  switch (expected) {
    case WHISPER_GGML_MODEL_FILE_WHISPER:
      kind = whisper::ModelFileKind::kWhisperGgml;
      break;
    case WHISPER_GGML_MODEL_FILE_SILERO_VAD:
      kind = whisper::ModelFileKind::kSileroVad;
      break;
    default:
      return -1;
  }
  const absl::Status st = whisper::CheckModelFileKindAt(path, kind, whisper::ModelFileDetail::kWithBytes);
  if (st.ok()) return 0;
  if (msg != nullptr && msg_size > 0) {
    const size_t n = std::min(st.message().size(), msg_size - 1);
    std::memcpy(msg, st.message().data(), n);
    msg[n] = '\0';
  }
  return 1;
}

const char* whisper_ggml_format_timestamp(int64_t t, int comma, char* buf, size_t size) {
  constexpr int64_t kMaxCs = std::numeric_limits<int64_t>::max() / 10;
  int64_t ms = t < 0 ? 0 : (t > kMaxCs ? kMaxCs : t) * 10;
  const int64_t hr = ms / 3600000;
  ms -= hr * 3600000;
  const int64_t min = ms / 60000;
  ms -= min * 60000;
  const int64_t sec = ms / 1000;
  ms -= sec * 1000;
  if (buf != nullptr && size > 0) {
    absl::SNPrintF(buf, size, "%02d:%02d:%02d%s%03d", hr, min, sec, comma != 0 ? "," : ".", ms);
  }
  return buf;
}

}  // extern "C"
