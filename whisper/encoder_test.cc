// Blocked attention (BlockedAttention, kEncoderQueryBlock in encoder.h, kDecoderQueryBlock in
// decoder.h): the same bytes as one [n_kv, n_q, n_head] score product whenever every block has
// >= 16 queries, in the encoder graph and alone; and the compute buffer the graph allocator
// measures for tiny.en's 30 s window with and without blocks; flash attention (the default)
// against the blocked path.
#include "whisper/encoder.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "alloc/gallocr.h"
#include "cpu/graph_compute.h"
#include "ggml/fp16.h"
#include "ggml/ops.h"
#include "gtest/gtest.h"
#include "kernels/quant_gemm.h"
#include "testdata/paths.h"
#include "whisper/model.h"
#include "whisper/synthetic_model.h"

namespace whisper {
namespace {

struct ContextDeleter {
  void operator()(ggml_context* c) const { ggml_free(c); }
};
using ContextPtr = std::unique_ptr<ggml_context, ContextDeleter>;
struct GallocrDeleter {
  void operator()(ggml_gallocr* g) const { ggml_gallocr_free(g); }
};
using GallocrPtr = std::unique_ptr<ggml_gallocr, GallocrDeleter>;

struct EncoderRun {
  size_t buffer_bytes = 0;  // ggml_gallocr_get_buffer_size after reserving the graph
  std::vector<float> out;   // [S, n_ctx], when computed
};

// Builds the encoder graph of `model` for n_ctx positions with `opt`, reserves it, and,
// if `mel` ([n_mels][2 n_ctx]) is given, computes it on one thread.
EncoderRun RunEncoder(const WhisperModel& model, int n_ctx, const EncoderOptions& opt, const std::vector<float>* mel) {
  const WhisperHparams& h = model.hparams();
  EncoderRun run;
  const size_t embd_bytes = sizeof(float) * h.n_audio_state * h.n_audio_ctx;
  ContextPtr data(ggml_init({ggml_tensor_overhead() + embd_bytes + 64, nullptr, false}));
  const int graph_size = EncoderGraphSize(h, opt);
  ContextPtr meta(ggml_init({2 * graph_size * ggml_tensor_overhead() + ggml_graph_overhead_custom(graph_size) + 1024,
                             nullptr, true}));
  EXPECT_NE(data, nullptr);
  EXPECT_NE(meta, nullptr);
  if (data == nullptr || meta == nullptr) return run;
  ggml_tensor* embd = ggml_new_tensor_2d(data.get(), GGML_TYPE_F32, h.n_audio_state, h.n_audio_ctx);
  absl::StatusOr<EncoderGraph> g = BuildEncoderGraph(meta.get(), model, n_ctx, embd, opt);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return run;
  GallocrPtr galloc(ggml_gallocr_new());
  EXPECT_TRUE(ggml_gallocr_reserve(galloc.get(), g->graph)) << ggml_last_error();
  run.buffer_bytes = ggml_gallocr_get_buffer_size(galloc.get(), 0);
  if (mel == nullptr) return run;
  EXPECT_TRUE(ggml_gallocr_alloc_graph(galloc.get(), g->graph)) << ggml_last_error();
  std::memcpy(g->mel->data, mel->data(), ggml_nbytes(g->mel));
  ggml_cplan plan = ggml_graph_plan(g->graph, 1, nullptr);
  std::vector<uint8_t> work(plan.work_size);
  plan.work_data = work.empty() ? nullptr : work.data();
  EXPECT_EQ(ggml_graph_compute(g->graph, &plan), GGML_STATUS_SUCCESS) << ggml_last_error();
  const float* out = static_cast<const float*>(embd->data);
  run.out.assign(out, out + static_cast<size_t>(h.n_audio_state) * n_ctx);
  return run;
}

std::vector<float> RandomMel(int n_mels, int n_frames) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.5f);
  std::vector<float> mel(static_cast<size_t>(n_mels) * n_frames);
  for (float& v : mel) v = u(rng);
  return mel;
}

EncoderOptions Blocked(int query_block) { return EncoderOptions{false, query_block}; }

// A synthetic model (random weights) with 4 heads of 16 and 2 layers over up to 300 positions.
std::unique_ptr<WhisperModel> SmallModel() {
  SyntheticModelOptions o;
  o.hparams.n_audio_ctx = 300;
  o.hparams.n_audio_state = 64;
  o.hparams.n_audio_head = 4;
  o.hparams.n_audio_layer = 2;
  o.hparams.n_text_state = 64;  // the loader requires n_text_state == n_audio_state
  const std::string path = WriteTempFile("encoder_test.bin", MakeSyntheticModel(o).bytes);
  absl::StatusOr<std::unique_ptr<WhisperModel>> model = WhisperModel::Load(path);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? std::move(*model) : nullptr;
}

// Blocks of at most 256 split 300 into 150 + 150 and 257 into 129 + 128; at most 40, into 8 and 7
// blocks of 36 to 38. Every block has >= 16 positions (kernels/matmul.h's packed path, as the
// unblocked product), so the bytes must be equal.
TEST(EncoderTest, BlockedAttentionIsBitIdenticalToOneBlock) {
  const std::unique_ptr<WhisperModel> model = SmallModel();
  ASSERT_NE(model, nullptr);
  for (int n_ctx : {300, 257, 40, 20}) {
    const std::vector<float> mel = RandomMel(model->hparams().n_mels, 2 * n_ctx);
    const EncoderRun one = RunEncoder(*model, n_ctx, Blocked(n_ctx), &mel);
    ASSERT_EQ(one.out.size(), static_cast<size_t>(64) * n_ctx);
    for (int block : {kEncoderQueryBlock, 40}) {
      const EncoderRun blocked = RunEncoder(*model, n_ctx, Blocked(block), &mel);
      ASSERT_EQ(blocked.out.size(), one.out.size());
      EXPECT_EQ(std::memcmp(blocked.out.data(), one.out.data(), sizeof(float) * one.out.size()), 0)
          << "n_ctx " << n_ctx << ", query block " << block;
    }
  }
}

// The flash path (the default) against the blocked one, whose products are kernels/matmul.h's
// and whose softmax is kernels/softmax.h's: the same attention in another order of f32
// operations, through two layers and the final LayerNorm (outputs of magnitude ~1).
TEST(EncoderTest, FlashAttentionMatchesBlockedAttention) {
  const std::unique_ptr<WhisperModel> model = SmallModel();
  ASSERT_NE(model, nullptr);
  for (int n_ctx : {300, 37, 1}) {
    const std::vector<float> mel = RandomMel(model->hparams().n_mels, 2 * n_ctx);
    const EncoderRun flash = RunEncoder(*model, n_ctx, EncoderOptions(), &mel);
    const EncoderRun blocked = RunEncoder(*model, n_ctx, Blocked(kEncoderQueryBlock), &mel);
    ASSERT_EQ(flash.out.size(), static_cast<size_t>(64) * n_ctx);
    ASSERT_EQ(blocked.out.size(), flash.out.size());
    double max_err = 0, max_abs = 0;
    for (size_t i = 0; i < flash.out.size(); ++i) {
      max_err = std::max(max_err, std::fabs(double(flash.out[i]) - blocked.out[i]));
      max_abs = std::max(max_abs, std::fabs(double(blocked.out[i])));
    }
    EXPECT_LT(max_err, 1e-4 * max_abs) << "n_ctx " << n_ctx << ": max |flash - blocked| " << max_err;
    EXPECT_GT(max_abs, 0.5) << "outputs are LayerNorm'd: some must be of order 1";
  }
}

// BlockedAttention alone, as the decoder's cross-attention uses it (blocks of at most
// kDecoderQueryBlock = 64 tokens): Q a permuted view of q [S, n_q], K [d, n_kv, n_head] and
// V [n_kv, d, n_head] F16. Equal blocks of >= 16 queries give the bytes of one block.
std::vector<float> RunBlockedAttention(int n_q, int query_block) {
  const int d = 16, n_head = 3, n_kv = 150;
  ContextPtr ctx(ggml_init({64 << 20, nullptr, false}));
  EXPECT_NE(ctx, nullptr);
  if (ctx == nullptr) return {};
  ggml_tensor* q = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, d * n_head, n_q);
  ggml_tensor* k = ggml_new_tensor_3d(ctx.get(), GGML_TYPE_F16, d, n_kv, n_head);
  ggml_tensor* v = ggml_new_tensor_3d(ctx.get(), GGML_TYPE_F16, n_kv, d, n_head);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t i = 0; i < ggml_nelements(q); ++i) static_cast<float*>(q->data)[i] = u(rng);
  for (ggml_tensor* t : {k, v}) {
    for (int64_t i = 0; i < ggml_nelements(t); ++i) static_cast<ggml_fp16_t*>(t->data)[i] = ggml_fp32_to_fp16(u(rng));
  }
  ggml_tensor* Q = ggml_permute(ctx.get(), ggml_reshape_3d(ctx.get(), q, d, n_head, n_q), 0, 2, 1, 3);
  ggml_tensor* out = BlockedAttention(ctx.get(), Q, k, v, 0.5f, query_block);
  EXPECT_NE(out, nullptr) << ggml_last_error();
  if (out == nullptr) return {};
  EXPECT_EQ(out->ne[0], d * n_head);
  EXPECT_EQ(out->ne[1], n_q);
  ggml_cgraph* graph = ggml_new_graph(ctx.get());
  EXPECT_TRUE(ggml_build_forward_expand(graph, out)) << ggml_last_error();
  ggml_cplan plan = ggml_graph_plan(graph, 1, nullptr);
  std::vector<uint8_t> work(plan.work_size);
  plan.work_data = work.empty() ? nullptr : work.data();
  EXPECT_EQ(ggml_graph_compute(graph, &plan), GGML_STATUS_SUCCESS) << ggml_last_error();
  const float* o = static_cast<const float*>(out->data);
  return std::vector<float>(o, o + ggml_nelements(out));
}

TEST(EncoderTest, BlockedAttentionAloneIsBitIdenticalToOneBlock) {
  for (int n_q : {448, 100, 65, 20}) {
    const std::vector<float> one = RunBlockedAttention(n_q, n_q);
    const std::vector<float> blocked = RunBlockedAttention(n_q, 64);
    ASSERT_EQ(one.size(), static_cast<size_t>(48) * n_q);
    ASSERT_EQ(blocked.size(), one.size());
    EXPECT_EQ(std::memcmp(blocked.data(), one.data(), sizeof(float) * one.size()), 0) << "n_q " << n_q;
  }
}

TEST(EncoderTest, RejectsBadQueryBlock) {
  SyntheticModelOptions o;
  const std::string path = WriteTempFile("encoder_test_small.bin", MakeSyntheticModel(o).bytes);
  absl::StatusOr<std::unique_ptr<WhisperModel>> model = WhisperModel::Load(path);
  ASSERT_TRUE(model.ok()) << model.status();
  ContextPtr meta(ggml_init({1 << 20, nullptr, true}));
  ContextPtr data(ggml_init({1 << 20, nullptr, false}));
  ggml_tensor* embd = ggml_new_tensor_2d(data.get(), GGML_TYPE_F32, 32, 16);
  absl::StatusOr<EncoderGraph> g = BuildEncoderGraph(meta.get(), **model, 16, embd, Blocked(0));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(g.status().message()).find("query_block 0"), std::string::npos) << g.status();
}

// tiny.en's full window (1500 positions, 6 heads): unblocked, the score tensor alone is
// 1500 * 1500 * 6 * 4 B = 54,000,000 B; in 6 blocks of 250, one block's is 9,000,000 B
// (plus the concatenated attention output, [384, <= 1500] F32, up to 2.3 MB, twice while the next
// block is appended); flash attention has no score tensor, so its buffer is set by the MLP:
// fc1's output [1536, 1500] F32 (9.2 MB) beside the residual and the GELU, in place.
// #12's target is an encoder compute buffer of at most 30 MB.
TEST(EncoderTest, TinyEnComputeBufferShrinks) {
  const std::string path = testdata::ModelPath("ggml-tiny.en.bin");
  struct stat st;
  if (stat(path.c_str(), &st) != 0) GTEST_FAIL() << testdata::MissingModelHint(path);
  absl::StatusOr<std::unique_ptr<WhisperModel>> model = WhisperModel::Load(path);
  ASSERT_TRUE(model.ok()) << model.status();
  const int n_ctx = (*model)->hparams().n_audio_ctx;
  ASSERT_EQ(n_ctx, 1500);
  const size_t one = RunEncoder(**model, n_ctx, Blocked(n_ctx), nullptr).buffer_bytes;
  const size_t blocked = RunEncoder(**model, n_ctx, Blocked(kEncoderQueryBlock), nullptr).buffer_bytes;
  const size_t flash = RunEncoder(**model, n_ctx, EncoderOptions(), nullptr).buffer_bytes;
  std::printf(
      "encoder compute buffer, tiny.en, 1500 positions: one block %.2f MB, blocks of %d %.2f MB, flash %.2f MB\n",
      one / 1e6, kEncoderQueryBlock, blocked / 1e6, flash / 1e6);
  EXPECT_GT(one, 54000000u);
  EXPECT_LE(blocked, 30000000u);
  EXPECT_LT(flash, blocked - 5000000u);  // no score block (9 MB), no concatenation
  EXPECT_GT(flash, 1536u * 1500u * 4u);             // fc1's output is live
}

// kInt8AttentionAuto: int8 when the attention weights are quantized, unless
// WHISPER_INT8_ATTENTION is "0"; On and Off ignore both.
TEST(EncoderTest, Int8AttentionIsTheDefaultForQuantizedWeights) {
  ContextPtr ctx(ggml_init({16 * ggml_tensor_overhead(), nullptr, true}));
  ASSERT_NE(ctx, nullptr);
  AttentionWeights f16, q8;
  f16.q_w = f16.k_w = f16.v_w = f16.o_w = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F16, 64, 64);
  q8 = f16;
  q8.k_w = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_Q8_0, 64, 64);
  ASSERT_EQ(unsetenv("WHISPER_INT8_ATTENTION"), 0);
  EXPECT_FALSE(UseInt8Attention(kInt8AttentionAuto, f16));
  EXPECT_TRUE(UseInt8Attention(kInt8AttentionAuto, q8));
  EXPECT_TRUE(UseInt8Attention(kInt8AttentionOn, f16));
  EXPECT_FALSE(UseInt8Attention(kInt8AttentionOff, q8));
  ASSERT_EQ(setenv("WHISPER_INT8_ATTENTION", "0", 1), 0);
  EXPECT_FALSE(UseInt8Attention(kInt8AttentionAuto, f16));
  EXPECT_FALSE(UseInt8Attention(kInt8AttentionAuto, q8));
  EXPECT_TRUE(UseInt8Attention(kInt8AttentionOn, q8));
  for (const char* other : {"1", "yes", "", "00"}) {
    ASSERT_EQ(setenv("WHISPER_INT8_ATTENTION", other, 1), 0);
    EXPECT_TRUE(UseInt8Attention(kInt8AttentionAuto, q8)) << "'" << other << "'";
    EXPECT_FALSE(UseInt8Attention(kInt8AttentionAuto, f16)) << "'" << other << "'";
  }
  ASSERT_EQ(unsetenv("WHISPER_INT8_ATTENTION"), 0);
}

// tiny.en's encoder (F16 weights) on a random mel with the attention forced to int8 against the
// f32 attention: where the CPU has AVX512-VNNI (QuantGemmFast) the outputs differ, by the
// quantization of q, k, p and v only (LayerNorm'd outputs of order 1: the RMS of the difference
// is 0.50% of the outputs' RMS over 300 positions and 0.42% over 750 on AVX3_DL, max 0.051 and
// 0.057; the bounds leave 3x and 4x); elsewhere the node keeps f32 and the bytes are equal. 300
// positions gave NaN (before that 1.58% RMS with one output 0.9 off): layer 0 head 2 has score
// gaps of ~29, and a block of p ~85 below its row's max overflowed the int8 kernel's
// 255 / max p (kernels/flash_attn_int8_test's BlocksFarBelowTheMaxWeighNothing).
TEST(EncoderTest, TinyEnInt8AttentionStaysClose) {
  const std::string path = testdata::ModelPath("ggml-tiny.en.bin");
  struct stat st;
  if (stat(path.c_str(), &st) != 0) GTEST_FAIL() << testdata::MissingModelHint(path);
  absl::StatusOr<std::unique_ptr<WhisperModel>> model = WhisperModel::Load(path);
  ASSERT_TRUE(model.ok()) << model.status();
  for (int n_ctx : {300, 750}) {
    const std::vector<float> mel = RandomMel((*model)->hparams().n_mels, 2 * n_ctx);
    EncoderOptions f32, int8;
    f32.int8_attention = kInt8AttentionOff;
    int8.int8_attention = kInt8AttentionOn;
    const EncoderRun a = RunEncoder(**model, n_ctx, f32, &mel);
    const EncoderRun b = RunEncoder(**model, n_ctx, int8, &mel);
    ASSERT_EQ(a.out.size(), b.out.size());
    ASSERT_EQ(a.out.size(), static_cast<size_t>(384) * n_ctx);
    double diff2 = 0, norm2 = 0, worst = 0;
    for (size_t i = 0; i < a.out.size(); ++i) {
      const double d = double(b.out[i]) - a.out[i];
      diff2 += d * d;
      norm2 += double(a.out[i]) * a.out[i];
      worst = std::isnan(d) ? INFINITY : std::max(worst, std::fabs(d));
    }
    const double rel = std::sqrt(diff2 / norm2);
    std::printf("tiny.en encoder, %d positions, int8 vs f32 attention: RMS of the difference %.4f of the output's, "
                "max |diff| %.4f\n",
                n_ctx, rel, worst);
    if (ggml_cpu::QuantGemmFast()) {
      EXPECT_GT(rel, 0.0) << n_ctx;
      EXPECT_LT(rel, 0.015) << n_ctx;
      EXPECT_LT(worst, 0.25) << n_ctx;
    } else {
      EXPECT_EQ(rel, 0.0) << n_ctx;
    }
  }
}

}  // namespace
}  // namespace whisper
