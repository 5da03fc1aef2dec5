// The C API's program helpers (whisper.h, "Program helpers"): -dtw preset names, the model-file
// check before loading, faster-whisper's compute_type names, and whisper.cpp's timestamp form.
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

namespace {

void CopyMessage(const std::string& text, char* msg, size_t msg_size) {
  if (msg == nullptr || msg_size == 0) return;
  const size_t n = std::min(text.size(), msg_size - 1);
  std::memcpy(msg, text.data(), n);
  msg[n] = '\0';
}

// faster-whisper 1.2.1's compute types (CTranslate2's), in its documentation's order, and the
// ggml_type each one converts the weights to (-1: the file's).
struct ComputeType {
  const char* name;
  int weight_type;
};
constexpr ComputeType kComputeTypes[] = {
    {"default", -1},
    {"auto", -1},
    {"int8", GGML_TYPE_Q8_0},
    {"int8_float32", GGML_TYPE_Q8_0},
    {"int8_float16", GGML_TYPE_Q8_0},
    {"int8_bfloat16", GGML_TYPE_Q8_0},
    {"float16", GGML_TYPE_F16},
    {"bfloat16", GGML_TYPE_F16},  // no BF16 type in this runtime: F16, with a note
    {"float32", GGML_TYPE_F32},
};

std::string ComputeTypeNames() {
  std::string s;
  for (const ComputeType& c : kComputeTypes) s += std::string(s.empty() ? "" : ", ") + c.name;
  return s;
}

}  // namespace

extern "C" {

int whisper_ggml_set_compute_type(struct whisper_context_params* params, const char* compute_type, char* msg,
                                  size_t msg_size) {
  if (compute_type == nullptr || params == nullptr) {
    CopyMessage("whisper_ggml_set_compute_type: params or compute_type is NULL", msg, msg_size);
    return -1;
  }
  const std::string name = compute_type;
  for (const ComputeType& c : kComputeTypes) {
    if (name != c.name) continue;
    params->ggml_convert_weights = c.weight_type >= 0;
    if (c.weight_type >= 0) params->ggml_weight_type = c.weight_type;
    if (name == "bfloat16") {
      CopyMessage("compute_type 'bfloat16': this runtime has no bfloat16 kernels; the weights are converted to "
                  "float16 (f16) instead",
                  msg, msg_size);
      return 1;
    }
    return 0;
  }
  const std::string why = name == "int16" ? " (16-bit integer weights have no ggml type this runtime multiplies)" : "";
  CopyMessage(absl::StrFormat("compute_type '%s' is not supported%s: expected one of %s", name, why,
                              ComputeTypeNames()),
              msg, msg_size);
  return -1;
}

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
  CopyMessage(std::string(st.message()), msg, msg_size);
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
