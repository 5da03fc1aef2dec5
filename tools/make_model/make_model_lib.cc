#include "tools/make_model/make_model_lib.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace whisper {
namespace {

struct Shape {
  const char* name;
  int32_t state, heads, layers;
};

// whisper.cpp src/whisper.cpp L1523-1547 (model type from n_audio_layer) and the OpenAI
// checkpoints' ModelDimensions.
constexpr Shape kShapes[] = {
    {"tiny", 384, 6, 4}, {"base", 512, 8, 6}, {"small", 768, 12, 12}, {"medium", 1024, 16, 24}, {"large", 1280, 20, 32},
};

struct TypeName {
  const char* name;
  int32_t ftype;  // ggml_ftype
  ggml_type type;
};

constexpr TypeName kTypes[] = {
    {"f32", 0, GGML_TYPE_F32},   {"f16", 1, GGML_TYPE_F16},   {"q4_0", 2, GGML_TYPE_Q4_0}, {"q4_1", 3, GGML_TYPE_Q4_1},
    {"q5_0", 8, GGML_TYPE_Q5_0}, {"q5_1", 9, GGML_TYPE_Q5_1}, {"q8_0", 7, GGML_TYPE_Q8_0},
};

}  // namespace

absl::StatusOr<WhisperHparams> ShapeHparams(absl::string_view shape) {
  for (const Shape& s : kShapes) {
    if (shape != s.name) continue;
    WhisperHparams h;
    h.n_vocab = 51865;
    h.n_audio_ctx = 1500;
    h.n_audio_state = s.state;
    h.n_audio_head = s.heads;
    h.n_audio_layer = s.layers;
    h.n_text_ctx = 448;
    h.n_text_state = s.state;
    h.n_text_head = s.heads;
    h.n_text_layer = s.layers;
    h.n_mels = 80;
    h.ftype = 1;
    h.qntvr = 0;
    return h;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown model shape '", shape, "' (expected tiny, base, small, medium or large)"));
}

absl::StatusOr<SyntheticModelOptions> ShapeModelOptions(absl::string_view shape, absl::string_view type,
                                                        uint32_t seed) {
  absl::StatusOr<WhisperHparams> h = ShapeHparams(shape);
  if (!h.ok()) return h.status();
  const std::string t = absl::AsciiStrToLower(type);
  for (const TypeName& tn : kTypes) {
    if (t != tn.name) continue;
    SyntheticModelOptions o;
    o.hparams = *h;
    o.hparams.ftype = tn.ftype;
    o.hparams.qntvr = tn.ftype >= 2 ? 2 : 0;  // GGML_QNT_VERSION, as whisper.cpp's quantize writes
    o.matrix_type = tn.type;
    o.seed = seed;
    return o;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown weight type '", type, "' (expected f32, f16, q4_0, q4_1, q5_0, q5_1 or q8_0)"));
}

}  // namespace whisper
