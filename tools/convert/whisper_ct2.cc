#include "tools/convert/whisper_ct2.h"

#include <string.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ggml/fp16.h"
#include "tools/convert/status_macros.h"

namespace ggml_whisper::convert {
namespace {

// Reverses a PyTorch shape into ggml's ne order.
std::vector<int64_t> Reversed(std::vector<int64_t> shape) {
  std::reverse(shape.begin(), shape.end());
  return shape;
}

// Collects GgmlTensorPlans, checking each source shape.
class Planner {
 public:
  Planner(const Ct2Model& model, GgmlFileType weight_type)
      : model_(model), weight_type_(weight_type) {}

  // The whole variable `src` (PyTorch shape `shape`) as ggml tensor `name`, reshaped to
  // `torch_shape` if given (same element count).
  absl::Status Whole(const std::string& name, const std::string& src,
                     const std::vector<int64_t>& shape,
                     const std::vector<int64_t>& torch_shape = {}) {
    CONVERT_ASSIGN_OR_RETURN(const Ct2Variable* v, model_.Get(src, shape));
    const std::vector<int64_t> out_shape = torch_shape.empty() ? shape : torch_shape;
    Add(name, out_shape, v, 0, shape[0]);
    return absl::OkStatus();
  }

  // Rows [part * rows, (part + 1) * rows) of `src`, PyTorch shape `shape` (the fused one).
  absl::Status Part(const std::string& name, const std::string& src,
                    const std::vector<int64_t>& shape, int part, int64_t rows) {
    CONVERT_ASSIGN_OR_RETURN(const Ct2Variable* v, model_.Get(src, shape));
    std::vector<int64_t> out_shape = shape;
    out_shape[0] = rows;
    Add(name, out_shape, v, part * rows, rows);
    return absl::OkStatus();
  }

  // Linear layer `ct2` (weight [out, in], bias [out]) as `name`.{weight,bias}.
  absl::Status Linear(const std::string& name, const std::string& ct2, int64_t out, int64_t in) {
    CONVERT_RETURN_IF_ERROR(Whole(name + ".weight", ct2 + "/weight", {out, in}));
    return Whole(name + ".bias", ct2 + "/bias", {out});
  }

  // Part `part` (of equal row blocks of size d) of a fused linear layer: Q/K/V or K/V.
  absl::Status FusedLinear(const std::string& name, const std::string& ct2, int parts, int part,
                           int64_t d, bool with_bias) {
    CONVERT_RETURN_IF_ERROR(Part(name + ".weight", ct2 + "/weight", {parts * d, d}, part, d));
    if (!with_bias) return absl::OkStatus();
    return Part(name + ".bias", ct2 + "/bias", {parts * d}, part, d);
  }

  absl::Status LayerNorm(const std::string& name, const std::string& ct2, int64_t d) {
    CONVERT_RETURN_IF_ERROR(Whole(name + ".weight", ct2 + "/gamma", {d}));
    return Whole(name + ".bias", ct2 + "/beta", {d});
  }

  // OpenAI's MultiHeadAttention (query, key without bias, value, out) from a self-attention
  // block whose linear_0 is [Q; K; V].
  absl::Status SelfAttention(const std::string& name, const std::string& ct2, int64_t d) {
    CONVERT_RETURN_IF_ERROR(FusedLinear(name + ".query", ct2 + "/linear_0", 3, 0, d, true));
    CONVERT_RETURN_IF_ERROR(FusedLinear(name + ".key", ct2 + "/linear_0", 3, 1, d, false));
    CONVERT_RETURN_IF_ERROR(FusedLinear(name + ".value", ct2 + "/linear_0", 3, 2, d, true));
    return Linear(name + ".out", ct2 + "/linear_1", d, d);
  }

  // Cross-attention: linear_0 = Q, linear_1 = [K; V], linear_2 = out.
  absl::Status CrossAttention(const std::string& name, const std::string& ct2, int64_t d) {
    CONVERT_RETURN_IF_ERROR(Linear(name + ".query", ct2 + "/linear_0", d, d));
    CONVERT_RETURN_IF_ERROR(FusedLinear(name + ".key", ct2 + "/linear_1", 2, 0, d, false));
    CONVERT_RETURN_IF_ERROR(FusedLinear(name + ".value", ct2 + "/linear_1", 2, 1, d, true));
    return Linear(name + ".out", ct2 + "/linear_2", d, d);
  }

  // mlp.0 (d -> 4d), mlp.2 (4d -> d), mlp_ln; whisper.cpp fixes the MLP width at 4 x n_state.
  absl::Status Mlp(const std::string& block, const std::string& ct2, int64_t d) {
    CONVERT_RETURN_IF_ERROR(Linear(block + ".mlp.0", ct2 + "/ffn/linear_0", 4 * d, d));
    CONVERT_RETURN_IF_ERROR(Linear(block + ".mlp.2", ct2 + "/ffn/linear_1", d, 4 * d));
    return LayerNorm(block + ".mlp_ln", ct2 + "/ffn/layer_norm", d);
  }

  std::vector<GgmlTensorPlan> Take() { return std::move(plans_); }

 private:
  void Add(const std::string& name, const std::vector<int64_t>& torch_shape, const Ct2Variable* v,
           int64_t row_begin, int64_t row_count) {
    const Ct2Variable* scale =
        v->dtype == Ct2DType::kInt8 ? model_.Find(absl::StrCat(v->name, "_scale")) : nullptr;
    plans_.push_back(GgmlTensorPlan{name, GgmlTypeFor(name, torch_shape.size(), weight_type_),
                                    Reversed(torch_shape), v, row_begin, row_count, scale});
  }

  const Ct2Model& model_;
  GgmlFileType weight_type_;
  std::vector<GgmlTensorPlan> plans_;
};

int CountLayers(const Ct2Model& model, const std::string& prefix) {
  int n = 0;
  while (model.Find(absl::StrCat(prefix, n, "/self_attention/linear_0/weight")) != nullptr) ++n;
  return n;
}

absl::StatusOr<int32_t> Dim(const Ct2Model& model, absl::string_view name, size_t rank,
                            size_t axis) {
  const Ct2Variable* v = model.Find(name);
  if (v == nullptr) {
    return absl::NotFoundError(absl::StrCat(model.source(), ": no variable '", name, "'"));
  }
  if (v->shape.size() != rank || v->shape[axis] < 1 || v->shape[axis] > INT32_MAX) {
    return absl::InvalidArgumentError(absl::StrCat(model.source(), ": variable '", name,
                                                   "' has shape ", ShapeToString(v->shape),
                                                   ", expected rank ", rank));
  }
  return static_cast<int32_t>(v->shape[axis]);
}

absl::StatusOr<int32_t> Heads(const Ct2Model& model, absl::string_view name, int32_t width) {
  CONVERT_ASSIGN_OR_RETURN(const int64_t heads, model.GetIntScalar(name));
  if (heads < 1 || width % heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat(model.source(), ": ", name, " = ", heads,
                                                   " does not divide the width ", width));
  }
  return static_cast<int32_t>(heads);
}

}  // namespace

absl::StatusOr<WhisperHparams> WhisperHparamsFromCt2(const Ct2Model& model, int32_t ftype) {
  if (model.spec_name() != "WhisperSpec") {
    return absl::InvalidArgumentError(
        absl::StrCat(model.source(), ": spec '", model.spec_name(), "', expected 'WhisperSpec'"));
  }
  WhisperHparams h;
  h.ftype = ftype;
  const char* kTokEmb = "decoder/embeddings/weight";
  const char* kEncPos = "encoder/position_encodings/encodings";
  const char* kDecPos = "decoder/position_encodings/encodings";
  CONVERT_ASSIGN_OR_RETURN(h.n_vocab, Dim(model, kTokEmb, 2, 0));
  CONVERT_ASSIGN_OR_RETURN(h.n_text_state, Dim(model, kTokEmb, 2, 1));
  CONVERT_ASSIGN_OR_RETURN(h.n_audio_ctx, Dim(model, kEncPos, 2, 0));
  CONVERT_ASSIGN_OR_RETURN(h.n_audio_state, Dim(model, kEncPos, 2, 1));
  CONVERT_ASSIGN_OR_RETURN(h.n_text_ctx, Dim(model, kDecPos, 2, 0));
  CONVERT_ASSIGN_OR_RETURN(h.n_mels, Dim(model, "encoder/conv1/weight", 3, 1));
  CONVERT_ASSIGN_OR_RETURN(h.n_audio_head, Heads(model, "encoder/num_heads", h.n_audio_state));
  CONVERT_ASSIGN_OR_RETURN(h.n_text_head, Heads(model, "decoder/num_heads", h.n_text_state));
  h.n_audio_layer = CountLayers(model, "encoder/layer_");
  h.n_text_layer = CountLayers(model, "decoder/layer_");
  if (h.n_audio_layer == 0 || h.n_text_layer == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        model.source(), ": found ", h.n_audio_layer, " encoder and ", h.n_text_layer,
        " decoder layers (variables <encoder|decoder>/layer_N/self_attention/linear_0/weight)"));
  }
  return h;
}

GgmlFileType GgmlTypeFor(absl::string_view name, size_t n_dims, GgmlFileType weight_type) {
  if (n_dims < 2 || name == "encoder.conv1.bias" || name == "encoder.conv2.bias" ||
      name == "encoder.positional_embedding" || name == "decoder.positional_embedding") {
    return GgmlFileType::kF32;
  }
  return weight_type;
}

absl::StatusOr<std::vector<GgmlTensorPlan>> PlanWhisperTensors(const Ct2Model& model,
                                                               const WhisperHparams& h,
                                                               GgmlFileType weight_type) {
  Planner p(model, weight_type);
  const int64_t da = h.n_audio_state;
  const int64_t dt = h.n_text_state;

  CONVERT_RETURN_IF_ERROR(p.Whole("encoder.positional_embedding",
                                  "encoder/position_encodings/encodings", {h.n_audio_ctx, da}));
  CONVERT_RETURN_IF_ERROR(
      p.Whole("encoder.conv1.weight", "encoder/conv1/weight", {da, h.n_mels, 3}));
  CONVERT_RETURN_IF_ERROR(p.Whole("encoder.conv1.bias", "encoder/conv1/bias", {da}, {da, 1}));
  CONVERT_RETURN_IF_ERROR(p.Whole("encoder.conv2.weight", "encoder/conv2/weight", {da, da, 3}));
  CONVERT_RETURN_IF_ERROR(p.Whole("encoder.conv2.bias", "encoder/conv2/bias", {da}, {da, 1}));
  for (int i = 0; i < h.n_audio_layer; ++i) {
    const std::string block = absl::StrCat("encoder.blocks.", i);
    const std::string ct2 = absl::StrCat("encoder/layer_", i);
    CONVERT_RETURN_IF_ERROR(p.SelfAttention(block + ".attn", ct2 + "/self_attention", da));
    CONVERT_RETURN_IF_ERROR(
        p.LayerNorm(block + ".attn_ln", ct2 + "/self_attention/layer_norm", da));
    CONVERT_RETURN_IF_ERROR(p.Mlp(block, ct2, da));
  }
  CONVERT_RETURN_IF_ERROR(p.LayerNorm("encoder.ln_post", "encoder/layer_norm", da));

  CONVERT_RETURN_IF_ERROR(p.Whole("decoder.positional_embedding",
                                  "decoder/position_encodings/encodings", {h.n_text_ctx, dt}));
  CONVERT_RETURN_IF_ERROR(
      p.Whole("decoder.token_embedding.weight", "decoder/embeddings/weight", {h.n_vocab, dt}));
  for (int i = 0; i < h.n_text_layer; ++i) {
    const std::string block = absl::StrCat("decoder.blocks.", i);
    const std::string ct2 = absl::StrCat("decoder/layer_", i);
    CONVERT_RETURN_IF_ERROR(p.SelfAttention(block + ".attn", ct2 + "/self_attention", dt));
    CONVERT_RETURN_IF_ERROR(
        p.LayerNorm(block + ".attn_ln", ct2 + "/self_attention/layer_norm", dt));
    CONVERT_RETURN_IF_ERROR(p.CrossAttention(block + ".cross_attn", ct2 + "/attention", dt));
    CONVERT_RETURN_IF_ERROR(
        p.LayerNorm(block + ".cross_attn_ln", ct2 + "/attention/layer_norm", dt));
    CONVERT_RETURN_IF_ERROR(p.Mlp(block, ct2, dt));
  }
  CONVERT_RETURN_IF_ERROR(p.LayerNorm("decoder.ln", "decoder/layer_norm", dt));

  // whisper.cpp has no output projection: logits use the token embedding.
  const Ct2Variable* proj = model.Find("decoder/projection/weight");
  const Ct2Variable* emb = model.Find("decoder/embeddings/weight");
  if (proj != nullptr && proj != emb &&
      (proj->dtype != emb->dtype || proj->nbytes != emb->nbytes ||
       memcmp(proj->data, emb->data, emb->nbytes) != 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(model.source(),
                     ": decoder/projection/weight differs from "
                     "decoder/embeddings/weight; whisper.cpp's format needs the "
                     "output projection tied to the token embedding"));
  }
  return p.Take();
}

namespace {

// Element i of a float32/float16/bfloat16 array as float (exact for all three).
float LoadFloat(Ct2DType dtype, const uint8_t* data, int64_t i) {
  if (dtype == Ct2DType::kFloat32) {
    float f;
    memcpy(&f, data + 4 * i, 4);
    return f;
  }
  uint16_t bits;
  memcpy(&bits, data + 2 * i, 2);
  if (dtype == Ct2DType::kFloat16) return ggml_fp16_to_fp32(bits);
  const uint32_t f32_bits = static_cast<uint32_t>(bits) << 16;  // bfloat16
  float f;
  memcpy(&f, &f32_bits, 4);
  return f;
}

bool IsFloatType(Ct2DType dtype) {
  return dtype == Ct2DType::kFloat32 || dtype == Ct2DType::kFloat16 ||
         dtype == Ct2DType::kBFloat16;
}

// OK when `v` can be read: a float type, or int8 with a float scale of shape [rows].
absl::Status CheckSource(const Ct2Variable& v, const Ct2Variable* scale, int64_t rows) {
  if (IsFloatType(v.dtype)) return absl::OkStatus();
  if (v.dtype != Ct2DType::kInt8) {
    return absl::UnimplementedError(absl::StrCat(
        "variable '", v.name, "' is ", Ct2DTypeName(v.dtype), ", expected float32, float16, "
        "bfloat16 or int8 (CTranslate2's int16 quantization is not supported)"));
  }
  if (scale == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("variable '", v.name, "' is int8 but '", v.name,
                                                   "_scale' (its per-row scales) is missing"));
  }
  if (!IsFloatType(scale->dtype) || scale->shape != std::vector<int64_t>{rows}) {
    return absl::InvalidArgumentError(absl::StrCat(
        "variable '", scale->name, "' is ", Ct2DTypeName(scale->dtype), " ",
        ShapeToString(scale->shape), ", expected a float [", rows, "] (one scale per row of '",
        v.name, "')"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<uint8_t>> MaterializeTensor(const GgmlTensorPlan& plan) {
  const Ct2Variable& v = *plan.src;
  const int64_t rows = v.shape.empty() ? 1 : v.shape[0];
  CONVERT_RETURN_IF_ERROR(CheckSource(v, plan.scale, rows));
  const int64_t row_elems = rows > 0 ? v.nelements() / rows : 0;
  const int64_t n = plan.row_count * row_elems;
  int64_t ne_product = 1;
  for (int64_t d : plan.ne) ne_product *= d;
  if (plan.row_begin < 0 || plan.row_count < 0 || plan.row_begin + plan.row_count > rows ||
      ne_product != n || GgmlFileTypeSize(plan.type) == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", plan.name, "': rows [", plan.row_begin, ", ", plan.row_begin + plan.row_count,
        ") of '", v.name, "' ", ShapeToString(v.shape), " do not fill ne ", ShapeToString(plan.ne),
        " of ggml_type ", static_cast<int32_t>(plan.type)));
  }
  const uint8_t* src = v.data + plan.row_begin * row_elems * Ct2DTypeSize(v.dtype);
  std::vector<uint8_t> out(n * GgmlFileTypeSize(plan.type));

  // Source element i (of the planned rows) as float; an int8 row's scale is read once per row.
  int64_t scale_row = -1;
  float scale = 1.0f;
  auto load = [&](int64_t i) -> float {
    if (v.dtype != Ct2DType::kInt8) return LoadFloat(v.dtype, src, i);
    if (i / row_elems != scale_row) {
      scale_row = i / row_elems;
      scale = LoadFloat(plan.scale->dtype, plan.scale->data, plan.row_begin + scale_row);
    }
    return static_cast<float>(static_cast<int8_t>(src[i])) / scale;
  };

  if (plan.type == GgmlFileType::kF16 && v.dtype == Ct2DType::kFloat16) {
    memcpy(out.data(), src, out.size());  // bit-exact
  } else if (plan.type == GgmlFileType::kF16) {
    for (int64_t i = 0; i < n; ++i) {
      const ggml_fp16_t h = ggml_fp32_to_fp16(load(i));
      memcpy(out.data() + 2 * i, &h, 2);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const float f = load(i);
      memcpy(out.data() + 4 * i, &f, 4);
    }
  }
  return out;
}

absl::StatusOr<MelFilters> MelFiltersFromNpz(const std::string& npz_path, int32_t n_mels) {
  const std::string key = absl::StrCat("mel_", n_mels);
  CONVERT_ASSIGN_OR_RETURN(NpyArrayF32 a, ReadNpzF32(npz_path, key));
  if (a.shape.size() != 2 || a.shape[0] != n_mels || a.shape[1] < 1 || a.shape[1] > INT32_MAX) {
    return absl::InvalidArgumentError(absl::StrCat(npz_path, ":", key, " has shape ",
                                                   ShapeToString(a.shape), ", expected [", n_mels,
                                                   ", n_fft]"));
  }
  MelFilters mel;
  mel.n_mel = n_mels;
  mel.n_fft = static_cast<int32_t>(a.shape[1]);
  mel.data = std::move(a.data);
  for (float& x : mel.data) {
    if (x == 0.0f) x = 0.0f;  // -0.0 -> +0.0
  }
  return mel;
}

}  // namespace ggml_whisper::convert
