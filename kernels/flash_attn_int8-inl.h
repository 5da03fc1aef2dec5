// Per-target int8 attention for one head (FlashAttnKV::int8; the definition is in
// kernels/flash_attn.h): Q, K, P and V quantized in blocks of 32 with f32 scales. Q.K on
// QuantGemm's micro-kernel (kernels/quant_gemm-inl.h: K as its packed weights, unsigned codes with
// the correction term), P.V on PVTile below (the probabilities' codes, 0..255, as vpdpbusd's
// unsigned operand and V's signed, so no correction); both vpdpbusd on AVX3_DL and exact scalar
// or int32-lane code elsewhere. Between them a fused online-softmax step (SoftmaxQuantRow: a
// polynomial exp, each 32-key block quantized as it is written). Textual header, included by
// kernels/flash_attn.cc after flash_attn-inl.h. Measured (//kernels:flash_attn_benchmark, one
// 1500 x 1500 head of d 64, AVX3_DL, thread time on a loaded VM): 3.8-4.0 ms against the f32
// kernel's 6.8-7.2 ms; about half of it is the softmax step and the tiles' per-block scaling,
// not the vpdpbusd themselves.
//
// Scratch (bytes, each part 64-aligned), with n_kv32 = n_kv rounded up to 32 and d_v16 = d_v
// rounded up to 16:
//   kp   K panels: n_kv32 / 16 panels of 16 keys, each d_k / 32 blocks of 576 bytes (QuantGemm's
//        packed-a layout with the keys as rows: code + 128 of key r, channels 4q..4q+3 at byte
//        64 q + 4 r; then the 16 keys' scales as f32); padded keys: code 0, scale 0
//   vp   V^T panels: d_v16 / 16 panels of 16 channels, each n_kv32 / 32 blocks of 576 bytes (the
//        same layout with the channels as rows and 32 keys per block, but the codes as signed
//        bytes: the probabilities' codes (0..255) are the unsigned operand of vpdpbusd here, so
//        the product needs no correction term)
//   qb   the query tile, kTileQ rows of d_k / 32 QuantGemmBlockB
//   pb   the probabilities of one step, kTileQ rows of kStep / 32 QuantGemmBlockB
//   s    scores / probabilities, kTileQ rows of kStep f32
//   o    running output, kTileQ rows of d_v16 f32;  pv  one step's P.V, the same
//   vs   running normalizer per query, kTileQ rows of 16 f32 (lane sums, reduced once per tile)
//   vf   32 rows of d_v16 f32 (a V block widened), then a row buffer of max(d_k, d_v) f32
//   vc   32 rows of d_v16 bytes (a V block's codes)
#if defined(GGML_WHISPER_KERNELS_FLASH_ATTN_INT8_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GGML_WHISPER_KERNELS_FLASH_ATTN_INT8_INL_H_
#undef GGML_WHISPER_KERNELS_FLASH_ATTN_INT8_INL_H_
#else
#define GGML_WHISPER_KERNELS_FLASH_ATTN_INT8_INL_H_
#endif

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/highway.h"
#include "kernels/flash_attn-inl.h"
#include "kernels/flash_attn.h"
#include "kernels/quant_gemm-inl.h"
#include "kernels/quant_gemm.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {
namespace fa8 {
namespace hn = hwy::HWY_NAMESPACE;

constexpr size_t kBlock = 32;        // elements per quantization block
constexpr size_t kStep = 128;        // keys per online-softmax step (FlashAttnInt8Geometry)
constexpr size_t kTileQ = 12;        // queries per tile
constexpr size_t kStepBlocks = kStep / kBlock;
constexpr size_t kPB = kQuantGemmPanelBlockBytes;  // 576
constexpr size_t kYB = sizeof(QuantGemmBlockB);    // 40
using DF = hn::CappedTag<float, 16>;  // at most 16 lanes: 32-element blocks are whole vectors
// A block whose largest magnitude is below this quantizes to zero codes with d = 0: 127 or 255
// divided by a max below ~2^-120 overflows f32 to inf, and inf codes (NaN for the block's zeros)
// made the row's output NaN; p blocks this far below the running max (scores ~70 below it, as a
// sharp head of Whisper's encoder has) weigh under 2^-95 of the row's largest key.
constexpr float kQuantMinMax = 0x1p-100f;

// The scratch layout above, for one call's shapes.
struct Layout8 {
  size_t n_kv32, d_v16, kblocks, kpstride, vpstride;
  size_t kp, vp, qb, pb, s, o, pv, vs, vf, vc, total;  // byte offsets and size
};

HWY_INLINE size_t Align64(size_t n) { return (n + 63) / 64 * 64; }

HWY_INLINE Layout8 Layout8For(size_t d_k, size_t d_v, size_t n_kv) {
  Layout8 l;
  l.n_kv32 = (n_kv + kBlock - 1) / kBlock * kBlock;
  l.d_v16 = (d_v + 15) / 16 * 16;
  l.kblocks = d_k / kBlock;
  l.kpstride = l.kblocks * kPB;
  l.vpstride = l.n_kv32 / kBlock * kPB;
  size_t at = 0;
  auto take = [&at](size_t bytes) {
    const size_t off = at;
    at += Align64(bytes);
    return off;
  };
  l.kp = take(l.n_kv32 / 16 * l.kpstride);
  l.vp = take(l.d_v16 / 16 * l.vpstride);
  l.qb = take(kTileQ * l.kblocks * kYB);
  l.pb = take(kTileQ * kStepBlocks * kYB);
  l.s = take(kTileQ * kStep * sizeof(float));
  l.o = take(kTileQ * l.d_v16 * sizeof(float));
  l.pv = take(kTileQ * l.d_v16 * sizeof(float));
  l.vs = take(kTileQ * 16 * sizeof(float));
  l.vf = take((kBlock * l.d_v16 + HWY_MAX(d_k, d_v)) * sizeof(float));
  l.vc = take(kBlock * l.d_v16);
  l.total = at;
  return l;
}

// 32 floats x (times `mul`) quantized: d = max|x mul| / 127, code = round-to-nearest-even of
// x mul * (127 / max|x mul|) (0 when the max is 0), as int8 into `codes`; returns d, and the
// codes' sum in *sum.
HWY_INLINE float Quantize32(const float* HWY_RESTRICT x, float mul, int8_t* HWY_RESTRICT codes, int32_t* sum) {
  const DF d;
  const hn::Rebind<int32_t, DF> di;
  const hn::Rebind<int8_t, DF> d8;
  const size_t N = hn::Lanes(d);
  const auto vmul = hn::Set(d, mul);
  auto vmax = hn::Zero(d);
  auto vnan = hn::IsNaN(vmax);
  for (size_t i = 0; i < kBlock; i += N) {
    const auto a = hn::Abs(hn::Mul(hn::LoadU(d, x + i), vmul));
    vmax = hn::Max(vmax, a);
    vnan = hn::Or(vnan, hn::IsNaN(a));
  }
  if (!hn::AllFalse(d, vnan)) {  // a NaN (a corrupt weight): d NaN, so every product with it is NaN
    memset(codes, 0, kBlock);
    *sum = 0;
    return NAN;
  }
  float amax = hn::GetLane(hn::MaxOfLanes(d, vmax));
  if (amax < kQuantMinMax) amax = 0.0f;
  const auto vinv = hn::Set(d, amax > 0.0f ? 127.0f / amax : 0.0f);
  auto vsum = hn::Zero(di);
  for (size_t i = 0; i < kBlock; i += N) {
    const auto c = hn::NearestInt(hn::Mul(hn::Mul(hn::LoadU(d, x + i), vmul), vinv));
    vsum = hn::Add(vsum, c);
    hn::StoreU(hn::DemoteTo(d8, c), d8, codes + i);
  }
  *sum = hn::GetLane(hn::SumOfLanes(di, vsum));
  return amax / 127.0f;
}

// One QuantGemmBlockB from 32 floats times `mul`; returns its d times its codes' sum.
HWY_INLINE float QuantizeBlockB(const float* HWY_RESTRICT x, float mul, uint8_t* HWY_RESTRICT out) {
  QuantGemmBlockB y;
  int32_t sum;
  y.d = Quantize32(x, mul, y.qs, &sum);
  y.corr = -128 * sum;
  memcpy(out, &y, sizeof(y));
  return y.d * static_cast<float>(sum);
}

// Row r (0..15) of a 576-byte panel block: 32 codes (+128) in quads 64 q + 4 r, then the scale.
HWY_INLINE void PutPanelRow(uint8_t* HWY_RESTRICT blk, size_t r, const int8_t* codes, float scale) {
  for (size_t q = 0; q < 8; ++q) {
    uint32_t word;
    memcpy(&word, codes + 4 * q, 4);
    word ^= 0x80808080u;  // code + 128 in every byte
    memcpy(blk + 64 * q + 4 * r, &word, 4);
  }
  memcpy(blk + 512 + 4 * r, &scale, sizeof(scale));
}

HWY_INLINE void PackK8(const FlashAttnKV& kv, const Layout8& l, uint8_t* HWY_RESTRICT w) {
  const DF d;
  float* HWY_RESTRICT tmp = reinterpret_cast<float*>(w + l.vf) + kBlock * l.d_v16;
  int8_t codes[kBlock];
  for (size_t j = 0; j < l.n_kv32; ++j) {
    uint8_t* HWY_RESTRICT panel = w + l.kp + (j / 16) * l.kpstride;
    const float* row = j < kv.n_kv ? RowAsF32(d, kv.k_f16, kv.k_f32, kv.ldk, j, kv.d_k, tmp) : nullptr;
    for (size_t b = 0; b < l.kblocks; ++b) {
      float scale = 0.0f;
      int32_t sum;
      if (row != nullptr) {
        scale = Quantize32(row + b * kBlock, 1.0f, codes, &sum);
      } else {
        memset(codes, 0, sizeof(codes));
      }
      PutPanelRow(panel + b * kPB, j % 16, codes, scale);
    }
  }
}

// V^T by blocks of 32 keys: the block widened into vf (zero rows and columns past n_kv and d_v),
// each channel's max over the 32 keys, codes into vc, then scattered into the panels.
HWY_INLINE void PackV8(const FlashAttnKV& kv, const Layout8& l, uint8_t* HWY_RESTRICT w) {
  const DF d;
  const hn::Rebind<int8_t, DF> d8;
  const size_t N = hn::Lanes(d), dv16 = l.d_v16;
  float* HWY_RESTRICT vf = reinterpret_cast<float*>(w + l.vf);
  float* HWY_RESTRICT tmp = vf + kBlock * dv16;
  int8_t* HWY_RESTRICT vc = reinterpret_cast<int8_t*>(w + l.vc);
  for (size_t b = 0; b < l.n_kv32 / kBlock; ++b) {
    for (size_t jj = 0; jj < kBlock; ++jj) {
      const size_t j = b * kBlock + jj;
      float* HWY_RESTRICT dst = vf + jj * dv16;
      if (j < kv.n_kv) {
        memcpy(dst, RowAsF32(d, kv.v_f16, kv.v_f32, kv.ldv, j, kv.d_v, tmp), kv.d_v * sizeof(float));
        memset(dst + kv.d_v, 0, (dv16 - kv.d_v) * sizeof(float));
      } else {
        memset(dst, 0, dv16 * sizeof(float));
      }
    }
    for (size_t c = 0; c < dv16; c += N) {
      auto vmax = hn::Zero(d);
      auto vnan = hn::IsNaN(vmax);
      for (size_t jj = 0; jj < kBlock; ++jj) {
        const auto a = hn::Abs(hn::LoadU(d, vf + jj * dv16 + c));
        vmax = hn::Max(vmax, a);
        vnan = hn::Or(vnan, hn::IsNaN(a));
      }
      const auto inv = hn::IfThenElseZero(hn::Ge(vmax, hn::Set(d, kQuantMinMax)), hn::Div(hn::Set(d, 127.0f), vmax));
      uint8_t* HWY_RESTRICT blk = w + l.vp + (c / 16) * l.vpstride + b * kPB;
      // A channel holding a NaN gets a NaN scale, so its output is NaN (the codes cannot hold it).
      hn::StoreU(hn::IfThenElse(vnan, hn::Set(d, NAN), hn::Div(vmax, hn::Set(d, 127.0f))), d,
                 reinterpret_cast<float*>(blk + 512) + c % 16);
      for (size_t jj = 0; jj < kBlock; ++jj) {
        const auto code = hn::NearestInt(hn::Mul(hn::LoadU(d, vf + jj * dv16 + c), inv));
        hn::StoreU(hn::DemoteTo(d8, code), d8, vc + jj * dv16 + c);
      }
    }
    for (size_t c = 0; c < dv16; ++c) {
      uint8_t* HWY_RESTRICT blk = w + l.vp + (c / 16) * l.vpstride + b * kPB + 4 * (c % 16);
      for (size_t jj = 0; jj < kBlock; ++jj) blk[64 * (jj / 4) + jj % 4] = static_cast<uint8_t>(vc[jj * dv16 + c]);
    }
  }
}

// The tile's queries times q_scale, quantized; rows past nr are zero blocks.
HWY_INLINE void QuantizeQueries(const FlashAttnQueries& qs, size_t i0, size_t nr, float q_scale, const Layout8& l,
                                uint8_t* HWY_RESTRICT qb) {
  memset(qb, 0, kTileQ * l.kblocks * kYB);
  for (size_t r = 0; r < nr; ++r) {
    const float* src = qs.q + (i0 + r) * qs.ldq;
    for (size_t b = 0; b < l.kblocks; ++b) QuantizeBlockB(src + b * kBlock, q_scale, qb + (r * l.kblocks + b) * kYB);
  }
}

// exp(t) for t <= 0 in f32 to ~2e-7 relative (2^(t log2 e) = 2^n 2^f, |f| <= 1/2, 2^f by a degree-6
// Taylor polynomial in f ln 2); exactly 0 where t < -87 (including -inf), like ExpShifted. About
// half the operations of hn::Exp, which matters here: one exp per score, against 2 x d / 64
// vpdpbusd per score for the two products.
template <class D>
HWY_INLINE hn::Vec<D> ExpNonPositive(D d, hn::Vec<D> t) {
  const hn::RebindToSigned<D> di;
  const auto tiny = hn::Lt(t, hn::Set(d, -87.0f));
  const auto x = hn::Mul(hn::IfThenZeroElse(tiny, t), hn::Set(d, 1.44269504088896341f));
  const auto n = hn::Round(x);
  const auto f = hn::Mul(hn::Sub(x, n), hn::Set(d, 0.693147180559945309f));  // |f| <= ln2 / 2
  auto poly = hn::MulAdd(hn::Set(d, 1.0f / 720), f, hn::Set(d, 1.0f / 120));
  poly = hn::MulAdd(poly, f, hn::Set(d, 1.0f / 24));
  poly = hn::MulAdd(poly, f, hn::Set(d, 1.0f / 6));
  poly = hn::MulAdd(poly, f, hn::Set(d, 0.5f));
  poly = hn::MulAdd(poly, f, hn::Set(d, 1.0f));
  poly = hn::MulAdd(poly, f, hn::Set(d, 1.0f));
  const auto scaled = hn::Add(hn::BitCast(di, poly), hn::ShiftLeft<23>(hn::ConvertTo(di, n)));  // n >= -126
  return hn::IfThenZeroElse(tiny, hn::BitCast(d, scaled));
}

// One query's step, fused: the scores s[0..kr) (row capacity nb, a multiple of 32) capped and
// masked as SoftmaxBlock does, the running max m updated, p = exp(s - m) per 32-key block written
// over s and quantized into the row's QuantGemmBlockB blocks at `pb` (d = max / 255 and the codes
// 0..255 as unsigned bytes in qs; corr is not used). The row's normalizer, kept as lane sums in
// vsum[0..16), is rescaled and gets the step's quantized sum (d times the codes, per block).
// Returns the factor for the earlier output (exp(m_old - m_new)).
HWY_INLINE float SoftmaxQuantRow(float* HWY_RESTRICT s, size_t kr, size_t nb, const float* mask_f32,
                                 const ggml_fp16_t* mask_f16, float mask_scale, float softcap, float* m,
                                 uint8_t* HWY_RESTRICT pb, float* HWY_RESTRICT vsum) {
  const DF d;
  const hn::Rebind<int32_t, DF> di;
  const hn::Rebind<uint8_t, DF> du8;
  const size_t N = hn::Lanes(d);
  if (softcap != 0.0f) {
    const auto vc = hn::Set(d, softcap);
    for (size_t i = 0; i < nb; i += N) hn::StoreU(hn::Mul(vc, hn::Tanh(d, hn::LoadU(d, s + i))), d, s + i);
  }
  if (mask_f32 != nullptr || mask_f16 != nullptr) {
    for (size_t i = 0; i < kr; ++i) {
      s[i] += mask_scale * (mask_f32 != nullptr ? mask_f32[i] : ggml_fp16_to_fp32(mask_f16[i]));
    }
  }
  if (kr < nb) {  // padded keys take no part
    const auto ninf = hn::Set(d, -INFINITY);
    const size_t i0 = kr / N * N;
    hn::StoreU(hn::IfThenElse(hn::FirstN(d, kr - i0), hn::LoadU(d, s + i0), ninf), d, s + i0);
    for (size_t i = i0 + N; i < nb; i += N) hn::StoreU(ninf, d, s + i);
  }
  auto vmax = hn::LoadU(d, s);
  auto vnan = hn::IsNaN(vmax);
  for (size_t i = N; i < nb; i += N) {
    const auto v = hn::LoadU(d, s + i);
    vmax = hn::Max(vmax, v);
    vnan = hn::Or(vnan, hn::IsNaN(v));
  }
  if (!hn::AllFalse(d, vnan)) {  // a NaN score (a corrupt weight): the row's output will be NaN
    memset(pb, 0, nb / kBlock * kYB);
    *m = NAN;
    hn::StoreU(hn::Set(d, NAN), d, vsum);  // the normalizer stays NaN through later steps
    return 1.0f;
  }
  const float m_new = HWY_MAX(*m, hn::GetLane(hn::MaxOfLanes(d, vmax)));
  if (!(m_new > -INFINITY)) {  // every score so far is -inf: nothing to add
    memset(pb, 0, nb / kBlock * kYB);
    return 1.0f;
  }
  const float alpha = *m == m_new ? 1.0f : (*m - m_new < -87.0f ? 0.0f : expf(*m - m_new));
  *m = m_new;
  const auto vm = hn::Set(d, m_new);
  auto acc = hn::Mul(hn::LoadU(d, vsum), hn::Set(d, alpha));
  for (size_t b = 0; b < nb; b += kBlock) {
    auto bmax = hn::Zero(d);
    for (size_t i = b; i < b + kBlock; i += N) {
      const auto p = ExpNonPositive(d, hn::Sub(hn::LoadU(d, s + i), vm));
      hn::StoreU(p, d, s + i);
      bmax = hn::Max(bmax, p);
    }
    float amax = hn::GetLane(hn::MaxOfLanes(d, bmax));
    if (amax < kQuantMinMax) amax = 0.0f;  // the block's p are all 0 or weigh nothing
    const auto vinv = hn::Set(d, amax > 0.0f ? 255.0f / amax : 0.0f);
    const auto vd = hn::Set(d, amax / 255.0f);
    QuantGemmBlockB* y = reinterpret_cast<QuantGemmBlockB*>(pb + b / kBlock * kYB);
    for (size_t i = 0; i < kBlock; i += N) {
      const auto cf = hn::Round(hn::Mul(hn::LoadU(d, s + b + i), vinv));  // ties to even, as NearestInt
      acc = hn::MulAdd(cf, vd, acc);
      hn::StoreU(hn::DemoteTo(du8, hn::ConvertTo(di, cf)), du8, reinterpret_cast<uint8_t*>(y->qs) + i);
    }
    y->d = amax / 255.0f;
  }
  hn::StoreU(acc, d, vsum);
  return alpha;
}

// c rows (queries) x `units` rows of a panel group: out[col * ldo + unit] of the product of the
// packed panels (pstride apart) and the column blocks (ystride apart), nb blocks deep.
HWY_INLINE void Product(size_t units, size_t cols, size_t nb, const uint8_t* w, size_t pstride, const uint8_t* y,
                        size_t ystride, float* out, size_t ldo) {
  const size_t panels = units / 16;
  for (size_t p = 0; p < panels; p += qgemm::kMaxPanels) {
    const size_t np = HWY_MIN(qgemm::kMaxPanels, panels - p);
    for (size_t c = 0; c < cols; c += qgemm::kMaxCols) {
      const size_t nc = HWY_MIN(qgemm::kMaxCols, cols - c);
      qgemm::TilePanels<true>(np, nc, nb, w + p * pstride, pstride, y + c * ystride, ystride, out + c * ldo + p * 16,
                              ldo);
    }
  }
}

// P.V's micro-kernel: out[c * ldo + 16 r + lane] = sum over nb blocks of isum * (dv * dp) for kR
// panels of 16 channels (signed codes) and kC query columns (QuantGemmBlockB: d and the codes,
// 0..255, stored in qs as unsigned bytes). isum is the exact int32 dot product of the 32 codes.
#if HWY_ARCH_X86 && HWY_TARGET == HWY_AVX3_DL
constexpr size_t kPVCols = 6;
constexpr size_t kPVPanels = 2;

template <size_t kR, size_t kC>
HWY_INLINE void PVTile(size_t nb, const uint8_t* w, size_t pstride, const uint8_t* y, size_t ystride, float* out,
                       size_t ldo) {
  const hn::Full512<int32_t> di;
  const hn::Full512<uint8_t> du8;
  const hn::Full512<float> df;
  hn::Vec512<float> sum[kR][kC];
  HWY_UNROLL(8)
  for (size_t r = 0; r < kR; ++r) {
    HWY_UNROLL(8)
    for (size_t c = 0; c < kC; ++c) sum[r][c] = hn::Zero(df);
  }
  for (size_t i = 0; i < nb; ++i) {
    const uint8_t* wi = w + i * kPB;
    const uint8_t* yi = y + i * kYB;
    hn::Vec512<int32_t> acc[kR][kC];
    HWY_UNROLL(8)
    for (size_t r = 0; r < kR; ++r) {
      HWY_UNROLL(8)
      for (size_t c = 0; c < kC; ++c) acc[r][c] = hn::Zero(di);
    }
    HWY_UNROLL(8)
    for (size_t q = 0; q < 8; ++q) {
      hn::Vec512<int32_t> wq[kR];
      HWY_UNROLL(8)
      for (size_t r = 0; r < kR; ++r) wq[r] = hn::BitCast(di, hn::LoadU(du8, wi + r * pstride + 64 * q));
      HWY_UNROLL(8)
      for (size_t c = 0; c < kC; ++c) {
        const auto pq = hn::BitCast(
            du8, hn::Set(di, qgemm::LoadI32(yi + c * ystride + offsetof(QuantGemmBlockB, qs) + 4 * q)));
        HWY_UNROLL(8)
        for (size_t r = 0; r < kR; ++r) acc[r][c] = qgemm::Dpbusd(acc[r][c], pq, wq[r]);
      }
    }
    HWY_UNROLL(8)
    for (size_t r = 0; r < kR; ++r) {
      const auto dx = hn::LoadU(df, reinterpret_cast<const float*>(wi + r * pstride + 512));
      HWY_UNROLL(8)
      for (size_t c = 0; c < kC; ++c) {
        float dyf;
        memcpy(&dyf, yi + c * ystride, sizeof(dyf));
        sum[r][c] = hn::Add(sum[r][c], hn::Mul(hn::ConvertTo(df, acc[r][c]), hn::Mul(dx, hn::Set(df, dyf))));
      }
    }
  }
  HWY_UNROLL(8)
  for (size_t c = 0; c < kC; ++c) {
    HWY_UNROLL(8)
    for (size_t r = 0; r < kR; ++r) hn::StoreU(sum[r][c], df, out + c * ldo + r * 16);
  }
}

#else  // portable: one panel, one column, scalar (the graph uses int8 attention on AVX3_DL only)

constexpr size_t kPVCols = 1;
constexpr size_t kPVPanels = 1;

template <size_t kR, size_t kC>
HWY_INLINE void PVTile(size_t nb, const uint8_t* w, size_t pstride, const uint8_t* y, size_t ystride, float* out,
                       size_t ldo) {
  static_assert(kR == 1 && kC == 1, "one panel, one column");
  (void)pstride;
  (void)ystride;
  (void)ldo;
  float sum[16] = {0};
  for (size_t i = 0; i < nb; ++i) {
    const uint8_t* wi = w + i * kPB;
    QuantGemmBlockB yb;
    memcpy(&yb, y + i * kYB, sizeof(yb));
    for (size_t r = 0; r < 16; ++r) {
      int32_t isum = 0;
      for (size_t k = 0; k < 32; ++k) {
        isum += static_cast<int8_t>(wi[64 * (k / 4) + 4 * r + k % 4]) * static_cast<uint8_t>(yb.qs[k]);
      }
      float dx;
      memcpy(&dx, wi + 512 + 4 * r, sizeof(dx));
      sum[r] += static_cast<float>(isum) * (dx * yb.d);
    }
  }
  memcpy(out, sum, sizeof(sum));
}

#endif  // HWY_ARCH_X86 && HWY_TARGET == HWY_AVX3_DL

template <size_t kR, size_t kC = kPVCols>
HWY_INLINE void PVTileCols(size_t cols, size_t nb, const uint8_t* w, size_t pstride, const uint8_t* y,
                           size_t ystride, float* out, size_t ldo) {
  if constexpr (kC > 1) {
    if (cols < kC) return PVTileCols<kR, kC - 1>(cols, nb, w, pstride, y, ystride, out, ldo);
  }
  PVTile<kR, kC>(nb, w, pstride, y, ystride, out, ldo);
}

// P.V for `units` channels (a multiple of 16) and `cols` queries, as Product.
HWY_INLINE void ProductPV(size_t units, size_t cols, size_t nb, const uint8_t* w, size_t pstride, const uint8_t* y,
                          size_t ystride, float* out, size_t ldo) {
  const size_t panels = units / 16;
  for (size_t p = 0; p < panels; p += kPVPanels) {
    const size_t np = HWY_MIN(kPVPanels, panels - p);
    for (size_t c = 0; c < cols; c += kPVCols) {
      const size_t nc = HWY_MIN(kPVCols, cols - c);
      if (np == kPVPanels) {
        PVTileCols<kPVPanels>(nc, nb, w + p * pstride, pstride, y + c * ystride, ystride, out + c * ldo + p * 16, ldo);
      } else {
        PVTileCols<1>(nc, nb, w + p * pstride, pstride, y + c * ystride, ystride, out + c * ldo + p * 16, ldo);
      }
    }
  }
}

HWY_INLINE void FlashAttnHeadInt8(const FlashAttnKV& kv, const FlashAttnQueries& qs, uint8_t* HWY_RESTRICT w) {
  const DF d;
  const size_t N = hn::Lanes(d);
  const Layout8 l = Layout8For(kv.d_k, kv.d_v, kv.n_kv);
  PackK8(kv, l, w);
  PackV8(kv, l, w);
  float* HWY_RESTRICT s = reinterpret_cast<float*>(w + l.s);
  float* HWY_RESTRICT o = reinterpret_cast<float*>(w + l.o);
  float* HWY_RESTRICT pv = reinterpret_cast<float*>(w + l.pv);
  uint8_t* HWY_RESTRICT qb = w + l.qb;
  uint8_t* HWY_RESTRICT pb = w + l.pb;
  const size_t qstride = l.kblocks * kYB, pstride = kStepBlocks * kYB, dv16 = l.d_v16;
  float* HWY_RESTRICT vs = reinterpret_cast<float*>(w + l.vs);
  float m[kTileQ], alpha[kTileQ];
  const float q_scale = kv.softcap != 0.0f ? kv.scale / kv.softcap : kv.scale;
  for (size_t i0 = 0; i0 < qs.n_q; i0 += kTileQ) {
    const size_t nr = HWY_MIN(kTileQ, qs.n_q - i0);
    QuantizeQueries(qs, i0, nr, q_scale, l, qb);
    memset(pb, 0, kTileQ * pstride);
    memset(o, 0, kTileQ * dv16 * sizeof(float));
    memset(vs, 0, kTileQ * 16 * sizeof(float));
    for (size_t r = 0; r < kTileQ; ++r) m[r] = -INFINITY;
    for (size_t j0 = 0; j0 < kv.n_kv; j0 += kStep) {
      const size_t kr = HWY_MIN(kStep, kv.n_kv - j0);
      const size_t nb = (kr + kBlock - 1) / kBlock * kBlock;
      // S[r][i] = the quantized q_r . k_{j0+i}.
      Product(nb, nr, l.kblocks, w + l.kp + j0 / 16 * l.kpstride, l.kpstride, qb, qstride, s, kStep);
      bool rescale = false;
      for (size_t r = 0; r < nr; ++r) {
        const size_t mrow = (i0 + r) * qs.ld_mask + j0;
        alpha[r] = SoftmaxQuantRow(s + r * kStep, kr, nb, qs.mask_f32 != nullptr ? qs.mask_f32 + mrow : nullptr,
                                   qs.mask_f16 != nullptr ? qs.mask_f16 + mrow : nullptr, kv.mask_scale, kv.softcap,
                                   &m[r], pb + r * pstride, vs + r * 16);
        rescale |= alpha[r] != 1.0f;
      }
      if (rescale) {
        for (size_t r = 0; r < nr; ++r) {
          if (alpha[r] == 1.0f) continue;
          const auto va = hn::Set(d, alpha[r]);
          float* HWY_RESTRICT orow = o + r * dv16;
          for (size_t e = 0; e < dv16; e += N) hn::StoreU(hn::Mul(hn::LoadU(d, orow + e), va), d, orow + e);
        }
      }
      // PV[r][c] = sum over the step's keys of the quantized p and v^T; O += PV.
      ProductPV(dv16, nr, nb / kBlock, w + l.vp + j0 / kBlock * kPB, l.vpstride, pb, pstride, pv, dv16);
      for (size_t r = 0; r < nr; ++r) {
        for (size_t e = 0; e < dv16; e += N) {
          hn::StoreU(hn::Add(hn::LoadU(d, o + r * dv16 + e), hn::LoadU(d, pv + r * dv16 + e)), d, o + r * dv16 + e);
        }
      }
    }
    for (size_t r = 0; r < nr; ++r) {
      float* HWY_RESTRICT dst = qs.out + (i0 + r) * qs.ld_out;
      const float sum = hn::GetLane(hn::SumOfLanes(d, hn::LoadU(d, vs + r * 16)));  // the quantized p's sum
      const float inv = sum > 0.0f ? 1.0f / sum : (sum != sum ? NAN : 0.0f);  // NaN: a NaN score
      for (size_t e = 0; e < kv.d_v; ++e) dst[e] = o[r * dv16 + e] * inv;
    }
  }
}

}  // namespace fa8
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#endif  // include guard
