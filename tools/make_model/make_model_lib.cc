#include "tools/make_model/make_model_lib.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/convert/whisper_ct2.h"

namespace whisper {
namespace {

struct Shape {
  const char* name;
  int32_t state, heads, audio_layers, text_layers, n_mels, n_vocab;
};

// The `dims` stored in OpenAI's released checkpoints (whisper/model.py ModelDimensions); whisper.cpp
// src/whisper.cpp L1523-1547 names the model type from n_audio_layer and n_vocab.
constexpr Shape kShapes[] = {
    {"tiny", 384, 6, 4, 4, 80, 51865},
    {"base", 512, 8, 6, 6, 80, 51865},
    {"small", 768, 12, 12, 12, 80, 51865},
    {"medium", 1024, 16, 24, 24, 80, 51865},
    {"large", 1280, 20, 32, 32, 80, 51865},
    {"large-v3", 1280, 20, 32, 32, 128, 51866},
    {"large-v3-turbo", 1280, 20, 32, 4, 128, 51866},
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

std::vector<std::string> Gpt2ByteTokens() {
  std::vector<std::string> tokens;
  auto printable = [](int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE; };
  for (int pass = 0; pass < 2; ++pass) {
    for (int b = 0; b < 256; ++b) {
      if (printable(b) == (pass == 0)) tokens.emplace_back(1, static_cast<char>(b));
    }
  }
  return tokens;
}

std::vector<std::string> ShapeNames() {
  std::vector<std::string> names;
  for (const Shape& s : kShapes) names.push_back(s.name);
  return names;
}

absl::StatusOr<WhisperHparams> ShapeHparams(absl::string_view shape) {
  for (const Shape& s : kShapes) {
    if (shape != s.name) continue;
    WhisperHparams h;
    h.n_vocab = s.n_vocab;
    h.n_audio_ctx = 1500;
    h.n_audio_state = s.state;
    h.n_audio_head = s.heads;
    h.n_audio_layer = s.audio_layers;
    h.n_text_ctx = 448;
    h.n_text_state = s.state;
    h.n_text_head = s.heads;
    h.n_text_layer = s.text_layers;
    h.n_mels = s.n_mels;
    h.ftype = 1;
    h.qntvr = 0;
    return h;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown model shape '", shape, "' (expected one of ", absl::StrJoin(ShapeNames(), ", "), ")"));
}

absl::StatusOr<std::vector<float>> ShapeMelFilters(const std::string& npz_path, int n_mels) {
  absl::StatusOr<ggml_whisper::convert::MelFilters> mel = ggml_whisper::convert::MelFiltersFromNpz(npz_path, n_mels);
  if (!mel.ok()) return mel.status();
  if (mel->n_fft != 201) {
    return absl::InvalidArgumentError(absl::StrCat(npz_path, ":mel_", n_mels, " has ", mel->n_fft,
                                                   " frequency bins per filter, expected 201 (n_fft 400)"));
  }
  return std::move(mel->data);
}

absl::StatusOr<SyntheticModelOptions> ShapeModelOptions(absl::string_view shape, absl::string_view type,
                                                        uint32_t seed, std::vector<float> mel_filters) {
  absl::StatusOr<WhisperHparams> h = ShapeHparams(shape);
  if (!h.ok()) return h.status();
  if (!mel_filters.empty() && mel_filters.size() != static_cast<size_t>(h->n_mels) * 201) {
    return absl::InvalidArgumentError(absl::StrCat("mel filters: ", mel_filters.size(), " values, expected ",
                                                   h->n_mels, " x 201 for shape '", shape, "'"));
  }
  const std::string t = absl::AsciiStrToLower(type);
  for (const TypeName& tn : kTypes) {
    if (t != tn.name) continue;
    SyntheticModelOptions o;
    o.hparams = *h;
    o.hparams.ftype = tn.ftype;
    o.hparams.qntvr = tn.ftype >= 2 ? 2 : 0;  // GGML_QNT_VERSION, as whisper.cpp's quantize writes
    o.matrix_type = tn.type;
    o.seed = seed;
    o.mel_filters = std::move(mel_filters);
    o.tokens = Gpt2ByteTokens();
    return o;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown weight type '", type, "' (expected f32, f16, q4_0, q4_1, q5_0, q5_1 or q8_0)"));
}

}  // namespace whisper
