#include "whisper/silero_vad.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cpu/graph_compute.h"
#include "kernels/activations.h"
#include "kernels/matmul.h"
#include "kernels/vec.h"
#include "ggml/ops.h"
#include "whisper/model_kind.h"

namespace whisper {
namespace {

constexpr int kPad = 128;                                     // reflect padding on each side
constexpr int kInput = SileroVad::kContext + SileroVad::kWindow;  // 576
constexpr int kPadded = kInput + 2 * kPad;                        // 832
constexpr int kConvIn[4] = {129, 128, 64, 64};
constexpr int kConvOut[4] = {128, 64, 64, 128};
constexpr int kConvStride[4] = {1, 2, 2, 1};
// Fewer windows than this at the end of Run go through the one-window graph, more through the
// block graph with its other columns zero (silero_vad_benchmark: a 64-window block's front end
// costs about what 10 to 12 single windows do).
constexpr int kMinBlock = 12;

// Little-endian reads from the file's bytes with the field named in errors.
class Reader {
 public:
  Reader(const std::string& path, const std::string& bytes) : path_(path), bytes_(bytes) {}
  absl::StatusOr<int32_t> I32(const std::string& field) {
    if (bytes_.size() - pos_ < 4) return Truncated(field, 4);
    int32_t v;
    std::memcpy(&v, bytes_.data() + pos_, 4);
    pos_ += 4;
    return v;
  }
  absl::StatusOr<std::string> Bytes(const std::string& field, size_t n) {
    if (bytes_.size() - pos_ < n) return Truncated(field, n);
    std::string s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  bool done() const { return pos_ == bytes_.size(); }
  absl::Status Invalid(const std::string& field, const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": ", field, ": ", what));
  }

 private:
  absl::Status Truncated(const std::string& field, size_t n) const {
    return absl::DataLossError(absl::StrFormat("%s: truncated at byte %zu: %s needs %zu more bytes, %zu left",
                                               path_, pos_, field, n, bytes_.size() - pos_));
  }
  const std::string& path_;
  const std::string& bytes_;
  size_t pos_ = 0;
};

#define VAD_ASSIGN(lhs, expr)            \
  auto lhs##_or = (expr);                \
  if (!lhs##_or.ok()) return lhs##_or.status(); \
  auto lhs = *lhs##_or

// The header after the kind check: magic, model type, version (6.x.y) and the architecture,
// field by field (tools/convert/convert_vad.py's layout).
absl::Status ReadHeader(Reader& r) {
  VAD_ASSIGN(magic, r.I32("magic"));
  if (magic != 0x67676d6c) {
    return r.Invalid("magic", absl::StrFormat("0x%08x, expected 0x67676d6c (a ggml Silero VAD file from "
                                              "tools/convert/convert_vad.py)", static_cast<uint32_t>(magic)));
  }
  VAD_ASSIGN(type_len, r.I32("model type length"));
  if (type_len < 0 || type_len > 64) return r.Invalid("model type length", absl::StrCat(type_len, ", expected 10"));
  VAD_ASSIGN(type, r.Bytes("model type", static_cast<size_t>(type_len)));
  if (type != "silero-16k") return r.Invalid("model type", absl::StrCat("'", type, "', expected 'silero-16k'"));
  int32_t version[3];
  for (int i = 0; i < 3; ++i) {
    VAD_ASSIGN(v, r.I32("version"));
    version[i] = v;
  }
  if (version[0] != 6) {
    return r.Invalid("version", absl::StrFormat("%d.%d.%d: only Silero VAD v6 (faster-whisper's, framed with "
                                                "128 samples of reflect padding) is supported",
                                                version[0], version[1], version[2]));
  }
  const struct {
    const char* field;
    int32_t want;
  } kHparams[] = {{"window size", SileroVad::kWindow}, {"context size", SileroVad::kContext},
                  {"encoder layers", 4},    {"encoder 0 in", 129},      {"encoder 0 out", 128},
                  {"encoder 0 kernel", 3},  {"encoder 1 in", 128},      {"encoder 1 out", 64},
                  {"encoder 1 kernel", 3},  {"encoder 2 in", 64},       {"encoder 2 out", 64},
                  {"encoder 2 kernel", 3},  {"encoder 3 in", 64},       {"encoder 3 out", 128},
                  {"encoder 3 kernel", 3},  {"lstm input", 128},        {"lstm hidden", SileroVad::kHidden},
                  {"final conv in", 128},   {"final conv out", 1}};
  for (const auto& h : kHparams) {
    VAD_ASSIGN(v, r.I32(h.field));
    if (v != h.want) return r.Invalid(h.field, absl::StrCat(v, ", expected ", h.want, " (Silero v6)"));
  }
  return absl::OkStatus();
}

// Expected tensors by name: their ne and where the loaded tensor goes.
using TensorSlots = std::map<std::string, std::pair<std::vector<int64_t>, ggml_tensor**>>;

// Bytes of a context holding every tensor of `slots` (F32).
size_t WeightBytes(const TensorSlots& slots) {
  size_t total = 0;
  for (const auto& [name, spec] : slots) {
    int64_t n = 1;
    for (int64_t d : spec.first) n *= d;
    total += GGML_PAD(static_cast<size_t>(n) * sizeof(float), GGML_MEM_ALIGN) + ggml_tensor_overhead();
  }
  return total;
}

// "a, b, c" of a shape, for errors.
std::string JoinNe(const std::vector<int64_t>& ne) {
  std::string out;
  for (int64_t d : ne) absl::StrAppend(&out, out.empty() ? "" : ", ", d);
  return out;
}

// One tensor record (n_dims, name length, ftype, ne, name, F32 data) into a new tensor of
// `weights`, stored in its slot. Errors name the field: an unknown or repeated name, ftype not 0,
// ne other than the slot's (size-1 dimensions aside), truncation.
absl::Status ReadTensor(Reader& r, const std::string& path, ggml_context* weights, TensorSlots& slots) {
  VAD_ASSIGN(n_dims, r.I32("tensor n_dims"));
  VAD_ASSIGN(name_len, r.I32("tensor name length"));
  VAD_ASSIGN(ftype, r.I32("tensor ftype"));
  if (n_dims < 0 || n_dims > 4) return r.Invalid("tensor n_dims", absl::StrCat(n_dims, ", expected 0..4"));
  if (name_len < 1 || name_len > 256) {
    return r.Invalid("tensor name length", absl::StrCat(name_len, ", expected 1..256"));
  }
  std::vector<int64_t> ne;
  for (int i = 0; i < n_dims; ++i) {
    VAD_ASSIGN(d, r.I32("tensor ne"));
    ne.push_back(d);
  }
  VAD_ASSIGN(name, r.Bytes("tensor name", static_cast<size_t>(name_len)));
  auto it = slots.find(name);
  if (it == slots.end()) return r.Invalid("tensor name", absl::StrCat("'", name, "' is not a Silero v6 tensor"));
  if (*it->second.second != nullptr) return r.Invalid(name, "appears twice");
  if (ftype != 0) {
    return r.Invalid(name, absl::StrCat("ftype ", ftype, ", expected 0 (F32; tools/convert/convert_vad.py)"));
  }
  // whisper.cpp's converter drops size-1 dimensions of squeezed tensors: compare without them.
  std::vector<int64_t> a = ne, b = it->second.first;
  auto squeeze = [](std::vector<int64_t>* v) {
    std::vector<int64_t> out;
    for (int64_t d : *v) {
      if (d != 1) out.push_back(d);
    }
    *v = out;
  };
  squeeze(&a);
  squeeze(&b);
  if (a != b) {
    return r.Invalid(name, absl::StrCat("ne [", JoinNe(ne), "], expected [", JoinNe(it->second.first), "]"));
  }
  const std::vector<int64_t>& shape = it->second.first;
  ggml_tensor* t = ggml_new_tensor(weights, GGML_TYPE_F32, static_cast<int>(shape.size()), shape.data());
  if (t == nullptr) return absl::InternalError(absl::StrCat(path, ": ", ggml_last_error()));
  ggml_set_name(t, name.c_str());
  VAD_ASSIGN(data, r.Bytes(name + " data", ggml_nbytes(t)));
  std::memcpy(t->data, data.data(), data.size());
  *it->second.second = t;
  return absl::OkStatus();
}

}  // namespace

SileroVad::~SileroVad() {
  ggml_threadpool_free(pool_);
  ggml_free(one_.ctx);
  ggml_free(block_.ctx);
  ggml_free(weights_);
}

absl::StatusOr<std::unique_ptr<SileroVad>> SileroVad::Load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError(absl::StrCat(path, ": cannot open the VAD model file"));
  // The kind first, from the head: a Whisper model given as the VAD model is refused without
  // reading its tens of MB.
  std::string head(kModelSniffBytes, '\0');
  f.read(&head[0], static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(f.gcount()));
  absl::Status kind = CheckModelFileKind(path, reinterpret_cast<const uint8_t*>(head.data()), head.size(),
                                         ModelFileKind::kSileroVad, ModelFileDetail::kKindOnly);
  if (!kind.ok()) return kind;
  const std::string bytes = head + std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return LoadFromBytes(path, bytes);
}

absl::StatusOr<std::unique_ptr<SileroVad>> SileroVad::LoadFromBytes(const std::string& path,
                                                                    const std::string& bytes) {
  Reader r(path, bytes);
  // The wrong kind of file (empty, a Whisper model, GGUF, CTranslate2, other) is named as such.
  absl::Status kind = CheckModelFileKind(path, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                                         ModelFileKind::kSileroVad, ModelFileDetail::kKindOnly);
  if (!kind.ok()) return kind;
  absl::Status st = ReadHeader(r);
  if (!st.ok()) return st;

  std::unique_ptr<SileroVad> vad(new SileroVad());
  // Expected tensors and their ne.
  TensorSlots want = {
      {"_model.stft.forward_basis_buffer", {{256, 1, 258}, &vad->basis_}},
      {"_model.decoder.rnn.weight_ih", {{128, 512}, &vad->w_ih_}},
      {"_model.decoder.rnn.weight_hh", {{128, 512}, &vad->w_hh_}},
      {"_model.decoder.rnn.bias_ih", {{512}, &vad->b_ih_}},
      {"_model.decoder.rnn.bias_hh", {{512}, &vad->b_hh_}},
      {"_model.decoder.decoder.2.weight", {{128}, &vad->out_w_}},
      {"_model.decoder.decoder.2.bias", {{1}, &vad->out_b_}},
  };
  for (int i = 0; i < 4; ++i) {
    want[absl::StrCat("_model.encoder.", i, ".reparam_conv.weight")] = {{3, kConvIn[i], kConvOut[i]},
                                                                          &vad->conv_w_[i]};
    want[absl::StrCat("_model.encoder.", i, ".reparam_conv.bias")] = {{kConvOut[i]}, &vad->conv_b_[i]};
  }
  const ggml_init_params params = {WeightBytes(want) + 1024, nullptr, false};
  vad->weights_ = ggml_init(params);
  if (vad->weights_ == nullptr) return absl::ResourceExhaustedError(absl::StrCat(path, ": ", ggml_last_error()));

  while (!r.done()) {
    st = ReadTensor(r, path, vad->weights_, want);
    if (!st.ok()) return st;
  }
  for (const auto& [name, spec] : want) {
    if (*spec.second == nullptr) return r.Invalid(name, "missing");
  }
  st = vad->BuildGraphs();
  if (!st.ok()) return st;
  return vad;
}

absl::Status SileroVad::BuildGraphs() {
  absl::Status st = BuildFrontEnd(1, &one_);
  if (st.ok()) st = BuildFrontEnd(kBlock, &block_);
  if (!st.ok()) return st;
  size_t work = ggml_cpu::MulMatWorkSize();  // Cell's products
  for (ggml_cgraph* g : {one_.graph, block_.graph}) {
    work = std::max(work, ggml_graph_plan(g, 1, nullptr).work_size);
  }
  work_.resize(work);
  Reset();
  return absl::OkStatus();
}

// conv1d (im2col + mul_mat) of x [L, IC, n] with layer i's kernel, + bias, relu: [OL, OC, n]
// (ggml_conv_1d's final reshape is right only for n = 1: its product is [OL n, OC]; the bias and
// relu are applied there, then the permute puts windows last).
static ggml_tensor* EncoderConv(ggml_context* ctx, ggml_tensor* w, ggml_tensor* b, ggml_tensor* x, int stride) {
  ggml_tensor* cols = ggml_im2col_1d(ctx, w, x, stride, 1, 1, GGML_TYPE_F32);  // [IC K, OL, n]
  if (cols == nullptr) return nullptr;
  const int64_t ol = cols->ne[1], n = cols->ne[2], oc = w->ne[2];
  ggml_tensor* y = ggml_mul_mat(ctx, ggml_reshape_2d(ctx, cols, cols->ne[0], ol * n),
                                ggml_reshape_2d(ctx, w, w->ne[0] * w->ne[1], oc));  // [OL n, OC]
  y = ggml_relu(ctx, ggml_add(ctx, y, ggml_reshape_2d(ctx, b, 1, oc)));
  if (y == nullptr) return nullptr;
  return ggml_cont(ctx, ggml_permute(ctx, ggml_reshape_3d(ctx, y, ol, n, oc), 0, 2, 1, 3));  // [OL, OC, n]
}

absl::Status SileroVad::BuildFrontEnd(int n, FrontEnd* fe) {
  fe->n = n;
  // ggml_used_mem after the build: 136 KB for 1 window, 3.3 MB for 64 (52 KB a window).
  const ggml_init_params params = {size_t{1} * 1024 * 1024 + size_t(n) * 64 * 1024, nullptr, false};
  fe->ctx = ggml_init(params);
  if (fe->ctx == nullptr) return absl::ResourceExhaustedError(ggml_last_error());
  ggml_context* ctx = fe->ctx;
  fe->in = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, kPadded, n);
  if (fe->in == nullptr) return absl::InternalError(ggml_last_error());

  // STFT: [832, 1, n] * basis [256, 1, 258] stride 128 gives 5 frames, of which the model keeps
  // frames 1..4: so the input from sample 128 on (704 samples: frames 0..3 of it), product [4 n,
  // 258]. Each kept value is the same dot product as in the 5-frame product, summed in the same
  // order (the product's packed path: one FMA chain per element over the 256 taps).
  const size_t es = sizeof(float);
  constexpr int kStftHop = 128;
  ggml_tensor* frames =
      ggml_view_3d(ctx, fe->in, kPadded - kStftHop, 1, n, fe->in->nb[1], fe->in->nb[1], kStftHop * es);
  ggml_tensor* cols = ggml_im2col_1d(ctx, basis_, frames, kStftHop, 0, 1, GGML_TYPE_F32);
  if (cols == nullptr) return absl::InternalError(ggml_last_error());
  ggml_tensor* stft = ggml_mul_mat(ctx, ggml_reshape_2d(ctx, cols, cols->ne[0], cols->ne[1] * n),
                                   ggml_reshape_2d(ctx, basis_, basis_->ne[0], basis_->ne[2]));
  if (stft == nullptr || cols->ne[1] != 4) return absl::InternalError("VAD graph: the STFT does not give 4 frames");
  ggml_tensor* re = ggml_view_3d(ctx, stft, 4, n, 129, 4 * es, stft->nb[1], 0);
  ggml_tensor* im = ggml_view_3d(ctx, stft, 4, n, 129, 4 * es, stft->nb[1], stft->nb[1] * 129);
  ggml_tensor* x = ggml_sqrt(ctx, ggml_add(ctx, ggml_sqr(ctx, re), ggml_sqr(ctx, im)));  // [4, n, 129]
  x = ggml_cont(ctx, ggml_permute(ctx, x, 0, 2, 1, 3));                                // [4, 129, n]
  for (int i = 0; i < 4 && x != nullptr; ++i) x = EncoderConv(ctx, conv_w_[i], conv_b_[i], x, kConvStride[i]);
  if (x == nullptr || x->ne[0] != 1) return absl::InternalError("VAD graph: the encoder does not end in one frame");
  x = ggml_reshape_2d(ctx, x, kHidden, n);  // [1, 128, n] -> [128, n]
  fe->pre = ggml_add(ctx, ggml_mul_mat(ctx, w_ih_, x), ggml_reshape_2d(ctx, b_ih_, 512, 1));  // [512, n]
  if (fe->pre == nullptr) return absl::InternalError(ggml_last_error());
  fe->graph = ggml_new_graph(ctx);
  if (fe->graph == nullptr || !ggml_build_forward_expand(fe->graph, fe->pre)) {
    return absl::InternalError(ggml_last_error());
  }
  return absl::OkStatus();
}

// The LSTM cell and the output for one window, on the calling thread: the ops the step graph of
// ggml_add / ggml_mul_mat / ggml_sigmoid / ggml_tanh / ggml_mul / ggml_relu ran (ops as in the
// comment at the top of silero_vad.h), called directly with the shapes and operand order that
// graph gave its kernels (cpu/graph_compute_ops.cc ForwardAddMul / ForwardUnary, one row each;
// cpu/graph_compute_matmul.cc ForwardMulMat on 1 thread: one MulMatF32 call over all rows), so
// the probabilities are the graph's bit for bit, without its per-node dispatch (16 nodes per
// 32 ms window; silero_vad_benchmark Run, 1 thread, 60 s: 57.7-59.4 ms CPU against 60.5-61.4).
absl::Status SileroVad::Cell(const float* pre, float* prob) {
  constexpr int H = kHidden;
  float* mm = cell_;           // [4 H] W_hh h, then the gates' pre-activations
  float* t = cell_ + 4 * H;    // [4 H] W_hh h + b_hh, then the activated gates
  float* u = cell_ + 8 * H;    // [2 H] products
  const size_t ws = work_.size();
  absl::Status st = ggml_cpu::MulMatF32(H, static_cast<const float*>(w_hh_->data), H, h_, H, mm, 4 * H, 0, 4 * H, 0,
                                        1, work_.data(), ws);
  if (!st.ok()) return absl::InternalError(absl::StrCat("VAD LSTM: ", st.message()));
  ggml_cpu::AddF32(4 * H, mm, static_cast<const float*>(b_hh_->data), t);
  ggml_cpu::AddF32(4 * H, pre, t, mm);  // gates i, f, g, o
  ggml_cpu::SigmoidF32(H, mm, t);
  ggml_cpu::SigmoidF32(H, mm + H, t + H);
  ggml_cpu::TanhF32(H, mm + 2 * H, t + 2 * H);
  ggml_cpu::SigmoidF32(H, mm + 3 * H, t + 3 * H);
  ggml_cpu::MulF32(H, t + H, c_, u);          // f c
  ggml_cpu::MulF32(H, t, t + 2 * H, u + H);   // i g
  ggml_cpu::AddF32(H, u, u + H, c_);          // c = f c + i g
  ggml_cpu::TanhF32(H, c_, u);
  ggml_cpu::MulF32(H, t + 3 * H, u, h_);      // h = o tanh(c)
  ggml_cpu::ReluF32(H, h_, u);
  float o = 0.0f, ob = 0.0f;
  st = ggml_cpu::MulMatF32(H, static_cast<const float*>(out_w_->data), H, u, H, &o, 1, 0, 1, 0, 1, work_.data(), ws);
  if (!st.ok()) return absl::InternalError(absl::StrCat("VAD output: ", st.message()));
  ggml_cpu::AddF32(1, &o, static_cast<const float*>(out_b_->data), &ob);
  ggml_cpu::SigmoidF32(1, &ob, prob);
  return absl::OkStatus();
}

void SileroVad::Reset() {
  std::memset(h_, 0, sizeof(h_));
  std::memset(c_, 0, sizeof(c_));
  std::memset(context_, 0, sizeof(context_));
}

absl::Status SileroVad::SetThreads(int n_threads) {
  if (n_threads < 1 || n_threads > 64) {
    return absl::InvalidArgumentError(absl::StrCat("VAD: n_threads ", n_threads, " is not in [1, 64]"));
  }
  if (n_threads == n_threads_) return absl::OkStatus();
  ggml_threadpool_free(pool_);
  pool_ = nullptr;
  n_threads_ = 1;
  if (n_threads > 1) {
    pool_ = ggml_threadpool_new(n_threads);
    if (pool_ == nullptr) return absl::ResourceExhaustedError(absl::StrCat("VAD: ", ggml_last_error()));
    work_.resize(std::max(work_.size(), ggml_graph_plan(block_.graph, n_threads, pool_).work_size));
  }
  n_threads_ = n_threads;
  return absl::OkStatus();
}

absl::Status SileroVad::Compute(ggml_cgraph* graph, int n_threads) {
  ggml_cplan plan = ggml_graph_plan(graph, n_threads, n_threads > 1 ? pool_ : nullptr);
  plan.work_data = work_.empty() ? nullptr : work_.data();
  if (ggml_graph_compute(graph, &plan) != GGML_STATUS_SUCCESS) {
    return absl::InternalError(absl::StrCat("VAD graph: ", ggml_last_error()));
  }
  return absl::OkStatus();
}

absl::Status SileroVad::RunBlock(FrontEnd& fe, const float* samples, int count, float* probs) {
  // Columns past count (a partial last block) are zeros; their results are not used.
  std::memset(static_cast<float*>(fe.in->data) + static_cast<size_t>(count) * kPadded, 0,
              sizeof(float) * kPadded * static_cast<size_t>(fe.n - count));
  for (int w = 0; w < count; ++w) {
    float* in = static_cast<float*>(fe.in->data) + static_cast<size_t>(w) * kPadded;
    float* body = in + kPad;  // [context (64), window (512)]
    const float* window = samples + static_cast<size_t>(w) * kWindow;
    std::memcpy(body, w == 0 ? context_ : window - kContext, sizeof(context_));
    std::memcpy(body + kContext, window, sizeof(float) * kWindow);
    for (int i = 1; i <= kPad; ++i) {
      in[kPad - i] = body[i];  // reflect, excluding the edge sample
      in[kPad + kInput - 1 + i] = body[kInput - 1 - i];
    }
  }
  std::memcpy(context_, samples + static_cast<size_t>(count) * kWindow - kContext, sizeof(context_));
  absl::Status st = Compute(fe.graph, fe.n == 1 ? 1 : n_threads_);
  for (int w = 0; w < count && st.ok(); ++w) {
    st = Cell(static_cast<const float*>(fe.pre->data) + static_cast<size_t>(w) * 4 * kHidden, probs + w);
  }
  return st;
}

absl::Status SileroVad::Run(const float* samples, int n_windows, float* probs) {
  if ((samples == nullptr || probs == nullptr) && n_windows > 0) {
    return absl::InvalidArgumentError("VAD: samples or probs is null");
  }
  if (n_windows < 0) return absl::InvalidArgumentError(absl::StrCat("VAD: n_windows ", n_windows, " < 0"));
  int w = 0;
  while (w < n_windows) {
    // A partial block costs about as much as a full one: below kMinBlock windows one at a time.
    const int count = std::min(kBlock, n_windows - w);
    const bool block = count >= kMinBlock;
    absl::Status st = RunBlock(block ? block_ : one_, samples + static_cast<size_t>(w) * kWindow, block ? count : 1,
                               probs + w);
    if (!st.ok()) return st;
    w += block ? count : 1;
  }
  return absl::OkStatus();
}

absl::StatusOr<float> SileroVad::Next(const float* samples) {
  if (samples == nullptr) return absl::InvalidArgumentError("VAD: samples is null");
  float p = 0.0f;
  absl::Status st = RunBlock(one_, samples, 1, &p);
  if (!st.ok()) return st;
  return p;
}

}  // namespace whisper
