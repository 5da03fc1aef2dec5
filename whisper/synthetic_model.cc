#include "whisper/synthetic_model.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "ggml/fp16.h"
#include "kernels/quant_ref.h"

namespace whisper {
namespace {

class Writer {
 public:
  explicit Writer(SyntheticModel* out) : out_(out) {}

  void Mark(std::string name) { out_->fields.push_back({out_->bytes.size(), std::move(name)}); }
  void Raw(const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    out_->bytes.insert(out_->bytes.end(), b, b + n);
  }
  template <typename T>
  void Put(const std::string& field, T v) {
    Mark(field);
    Raw(&v, sizeof(v));
  }
  size_t size() const { return out_->bytes.size(); }

 private:
  SyntheticModel* out_;
};

// Row-wise conversion of `x` (rows of ne0 floats) to `type`, appended to `out`.
void Encode(ggml_type type, const std::vector<float>& x, int64_t ne0, std::vector<uint8_t>* out) {
  const int64_t nrows = static_cast<int64_t>(x.size()) / ne0;
  const size_t row_bytes = ggml_row_size(type, ne0);
  out->resize(row_bytes * nrows);
  for (int64_t r = 0; r < nrows; ++r) {
    const float* src = x.data() + r * ne0;
    uint8_t* dst = out->data() + r * row_bytes;
    switch (type) {
      case GGML_TYPE_F32:
        memcpy(dst, src, row_bytes);
        break;
      case GGML_TYPE_F16:
        for (int64_t i = 0; i < ne0; ++i) {
          const ggml_fp16_t h = ggml_fp32_to_fp16(src[i]);
          memcpy(dst + 2 * i, &h, 2);
        }
        break;
      case GGML_TYPE_Q4_0:
        ggml_cpu::quantize_row_q4_0_ref(src, reinterpret_cast<ggml_cpu::block_q4_0*>(dst), ne0);
        break;
      case GGML_TYPE_Q4_1:
        ggml_cpu::quantize_row_q4_1_ref(src, reinterpret_cast<ggml_cpu::block_q4_1*>(dst), ne0);
        break;
      case GGML_TYPE_Q5_0:
        ggml_cpu::quantize_row_q5_0_ref(src, reinterpret_cast<ggml_cpu::block_q5_0*>(dst), ne0);
        break;
      case GGML_TYPE_Q5_1:
        ggml_cpu::quantize_row_q5_1_ref(src, reinterpret_cast<ggml_cpu::block_q5_1*>(dst), ne0);
        break;
      case GGML_TYPE_Q8_0:
        ggml_cpu::quantize_row_q8_0_ref(src, reinterpret_cast<ggml_cpu::block_q8_0*>(dst), ne0);
        break;
      default:
        fprintf(stderr, "MakeSyntheticModel: unsupported type %d\n", type);
        abort();  // test helper misuse, not user input
    }
  }
}

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

}  // namespace

SyntheticModel MakeSyntheticModel(const SyntheticModelOptions& o) {
  SyntheticModel m;
  Writer w(&m);
  std::mt19937 rng(o.seed);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  const WhisperHparams& h = o.hparams;

  w.Put("magic", kGgmlFileMagic);
  const char* names[] = {"hparams.n_vocab",      "hparams.n_audio_ctx",  "hparams.n_audio_state",
                         "hparams.n_audio_head", "hparams.n_audio_layer", "hparams.n_text_ctx",
                         "hparams.n_text_state", "hparams.n_text_head",  "hparams.n_text_layer",
                         "hparams.n_mels",       "hparams.ftype"};
  const int32_t values[] = {h.n_vocab,      h.n_audio_ctx,  h.n_audio_state, h.n_audio_head,
                            h.n_audio_layer, h.n_text_ctx,   h.n_text_state,  h.n_text_head,
                            h.n_text_layer,  h.n_mels,       h.qntvr * kQntVersionFactor + h.ftype};
  for (int i = 0; i < 11; ++i) w.Put(names[i], values[i]);

  w.Put("mel_filters.n_mel", static_cast<int32_t>(h.n_mels));
  w.Put("mel_filters.n_fft", static_cast<int32_t>(201));
  w.Mark("mel_filters.data");
  if (!o.mel_filters.empty()) {
    w.Raw(o.mel_filters.data(), 4 * o.mel_filters.size());
  } else {
    for (int i = 0; i < h.n_mels * 201; ++i) {
      const float f = 0.005f * (uni(rng) + 1.0f);
      w.Raw(&f, 4);
    }
  }

  const int n_tokens = o.tokens.empty() ? o.n_stored_tokens : static_cast<int>(o.tokens.size());
  w.Put("vocab.n_tokens", static_cast<int32_t>(n_tokens));
  for (int i = 0; i < n_tokens; ++i) {
    const std::string tok = o.tokens.empty() ? absl::StrCat("tok", i) : o.tokens[i];
    w.Put(absl::StrCat("vocab token ", i, " length"), static_cast<uint32_t>(tok.size()));
    w.Mark(absl::StrCat("vocab token ", i, " bytes"));
    w.Raw(tok.data(), tok.size());
  }
  m.tensors_offset = w.size();
  if (!o.write_tensors) return m;

  std::vector<float> values_f32;
  std::vector<uint8_t> data;
  for (const TensorSpec& spec : ExpectedTensors(h)) {
    const int64_t n = spec.ne[0] * spec.ne[1] * spec.ne[2] * spec.ne[3];
    values_f32.resize(n);
    float scale = 0.1f;
    float offset = 0.0f;
    if (spec.role != TensorRole::kF32) scale = 1.0f / std::sqrt(static_cast<float>(spec.ne[0]));
    if (spec.role == TensorRole::kConv) {
      scale = 1.0f / std::sqrt(static_cast<float>(spec.ne[0] * spec.ne[1]));
    }
    if (EndsWith(spec.name, "ln.weight") || EndsWith(spec.name, "ln_post.weight")) offset = 1.0f;
    for (float& v : values_f32) v = offset + scale * uni(rng);

    ggml_type type = GGML_TYPE_F32;
    if (spec.role == TensorRole::kConv) type = FtypeConvType(h.ftype);
    if (spec.role == TensorRole::kMatrix) type = o.matrix_type;
    Encode(type, values_f32, spec.ne[0], &data);

    int n_dims = 4;
    while (n_dims > 1 && spec.ne[n_dims - 1] == 1) --n_dims;
    const std::string t = absl::StrCat("tensor '", spec.name, "' ");
    w.Put(t + "n_dims", static_cast<int32_t>(n_dims));
    w.Put(t + "name_len", static_cast<int32_t>(spec.name.size()));
    w.Put(t + "ttype", static_cast<int32_t>(type));
    for (int i = 0; i < n_dims; ++i) {
      w.Put(absl::StrCat(t, "ne[", i, "]"), static_cast<int32_t>(spec.ne[i]));
    }
    w.Mark(t + "name");
    w.Raw(spec.name.data(), spec.name.size());
    w.Mark(t + "data");
    w.Raw(data.data(), data.size());
  }
  return m;
}

std::string WriteTempFile(const std::string& name, const std::vector<uint8_t>& bytes) {
  const char* dir = getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
  FILE* f = fopen(path.c_str(), "wb");
  if (f == nullptr || (!bytes.empty() && fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size())) {
    fprintf(stderr, "WriteTempFile: cannot write %s\n", path.c_str());
    abort();
  }
  fclose(f);
  return path;
}

}  // namespace whisper
