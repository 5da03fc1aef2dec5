// Per-target fused attention for one head (see kernels/flash_attn.h): the K/V packing, the online
// softmax of a score block, and the loop over query tiles and key blocks. The two products are
// mul_mat's register micro-kernel (kernels/matmul-inl.h). Textual header.
#if defined(GGML_WHISPER_KERNELS_FLASH_ATTN_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GGML_WHISPER_KERNELS_FLASH_ATTN_INL_H_
#undef GGML_WHISPER_KERNELS_FLASH_ATTN_INL_H_
#else
#define GGML_WHISPER_KERNELS_FLASH_ATTN_INL_H_
#endif

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "hwy/highway.h"
#include "kernels/flash_attn.h"
#include "kernels/matmul-inl.h"
#include "kernels/softmax-inl.h"
#include "kernels/vec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Keys per online-softmax step: kKeyPanels K panels of MR keys (64 on AVX2, 128 on AVX-512).
// One step computes the scores of its keys for the query tile, then the softmax bookkeeping per
// query (two horizontal reductions, the running max and sum, the output rescale), then P.V: the
// wider the step, the less of that per-step work per score (with one panel per step it took
// about a third of the time) and the deeper the P.V micro-kernel calls. 4 keeps the score tile
// (kNR x 4 MR floats: 1.5 KB on AVX2, 6 KB on AVX-512) in L1.
constexpr size_t kKeyPanels = 4;

// The scratch of one call, in floats, carved in this order (the panels first, so that they keep
// the vector alignment of the base that the micro-kernel's aligned loads need):
//   kp  K panels:  ceil(n_kv / MR) panels of d_k x MR   (kp[panel][c][i] = k[panel * MR + i][c])
//   vp  V panels:  ceil(d_v / MR) panels of n_kvp x MR  (vp[panel][j][i] = v[j][panel * MR + i])
//   o   output tile, kNR rows of d_vp (running, unnormalized)
//   s   score / probability tile, kNR rows of KB = kKeyPanels * MR
//   qs  the scaled query tile, kNR rows of d_k (also the row buffer while packing)
// with MR = 2 vectors, n_kvp and d_vp rounded up to MR. Padding is zero.
struct FlashAttnLayout {
  size_t MR, KB, n_kvp, d_vp;
  size_t kp, vp, o, s, qs, total;  // offsets and size in floats
};

template <class D>
HWY_INLINE FlashAttnLayout FlashAttnLayoutFor(D d, size_t d_k, size_t d_v, size_t n_kv) {
  FlashAttnLayout l;
  l.MR = 2 * hn::Lanes(d);
  l.KB = kKeyPanels * l.MR;
  l.n_kvp = (n_kv + l.MR - 1) / l.MR * l.MR;
  l.d_vp = (d_v + l.MR - 1) / l.MR * l.MR;
  l.kp = 0;
  l.vp = l.kp + l.n_kvp * d_k;
  l.o = l.vp + l.d_vp * l.n_kvp;
  l.s = l.o + kNR * l.d_vp;
  l.qs = l.s + kNR * l.KB;
  l.total = l.qs + kNR * HWY_MAX(d_k, d_v);
  return l;
}

// Row j of k or v as f32: f16 rows are widened into `tmp`.
template <class D>
HWY_INLINE const float* RowAsF32(D d, const ggml_fp16_t* f16, const float* f32, size_t ld, size_t j, size_t n,
                                 float* HWY_RESTRICT tmp) {
  if (f32 != nullptr) return f32 + j * ld;
  F16ToF32Row(d, n, f16 + j * ld, tmp);
  return tmp;
}

template <class D>
HWY_INLINE void PackKV(D d, const FlashAttnKV& kv, const FlashAttnLayout& l, float* HWY_RESTRICT w) {
  const size_t MR = l.MR, d_k = kv.d_k, d_v = kv.d_v;
  float* HWY_RESTRICT kp = w + l.kp;
  float* HWY_RESTRICT vp = w + l.vp;
  float* HWY_RESTRICT tmp = w + l.qs;
  for (size_t j = 0; j < kv.n_kv; ++j) {
    const float* kr = RowAsF32(d, kv.k_f16, kv.k_f32, kv.ldk, j, d_k, tmp);
    float* HWY_RESTRICT dst = kp + (j / MR) * d_k * MR + j % MR;
    for (size_t c = 0; c < d_k; ++c) dst[c * MR] = kr[c];
    const float* vr = RowAsF32(d, kv.v_f16, kv.v_f32, kv.ldv, j, d_v, tmp);
    for (size_t p = 0; p * MR < d_v; ++p) {
      const size_t n = HWY_MIN(MR, d_v - p * MR);
      float* HWY_RESTRICT vd = vp + p * l.n_kvp * MR + j * MR;
      memcpy(vd, vr + p * MR, n * sizeof(float));
      for (size_t i = n; i < MR; ++i) vd[i] = 0.0f;
    }
  }
  for (size_t j = kv.n_kv; j < l.n_kvp; ++j) {  // padded keys: zero K columns and V rows
    float* HWY_RESTRICT dst = kp + (j / MR) * d_k * MR + j % MR;
    for (size_t c = 0; c < d_k; ++c) dst[c * MR] = 0.0f;
    for (size_t p = 0; p * MR < d_v; ++p) memset(vp + p * l.n_kvp * MR + j * MR, 0, MR * sizeof(float));
  }
}

// Online softmax of one query's score row s[0..nb) over the keys [j0, j0 + kr) of the step
// (kr <= nb; nb a multiple of the vector length, the row's capacity in use): caps the scores
// (softcap != 0: s = softcap * tanh(s), the scale already divided by softcap), adds the mask
// times mask_scale (ALiBi's slope),
// folds the step into the running max `m` and sum `sum`, writes the step's probabilities
// exp(s - m_new) over s (0 past kr) and returns the factor by which the row's earlier output
// must be scaled (exp(m_old - m_new); 1 if nothing changed).
template <class D>
HWY_INLINE float SoftmaxBlock(D d, float* HWY_RESTRICT s, size_t kr, size_t nb, const float* mask_f32,
                              const ggml_fp16_t* mask_f16, float mask_scale, float softcap, float* m,
                              float* sum) {
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
    for (size_t i = 0; i < nb; i += N) hn::StoreU(hn::Zero(d), d, s + i);
    *m = NAN;
    *sum = NAN;  // stays NaN through later steps; FlashAttnHead writes NaN for it
    return 1.0f;
  }
  const float bmax = hn::GetLane(hn::MaxOfLanes(d, vmax));
  const float m_new = HWY_MAX(*m, bmax);
  if (!(m_new > -INFINITY)) {  // every score so far is -inf: nothing to add
    for (size_t i = 0; i < nb; i += N) hn::StoreU(hn::Zero(d), d, s + i);
    return 1.0f;
  }
  const auto vm = hn::Set(d, m_new);
  auto vsum = hn::Zero(d);
  for (size_t i = 0; i < nb; i += N) {
    const auto p = ExpShifted(d, hn::LoadU(d, s + i), vm);
    hn::StoreU(p, d, s + i);
    vsum = hn::Add(vsum, p);
  }
  const float alpha = *m == m_new ? 1.0f : (*m - m_new < -87.0f ? 0.0f : expf(*m - m_new));
  *sum = *sum * alpha + hn::GetLane(hn::SumOfLanes(d, vsum));
  *m = m_new;
  return alpha;
}

template <class D>
HWY_INLINE void FlashAttnHead(D d, const FlashAttnKV& kv, const FlashAttnQueries& qs, float* HWY_RESTRICT w) {
  const size_t N = hn::Lanes(d);
  const FlashAttnLayout l = FlashAttnLayoutFor(d, kv.d_k, kv.d_v, kv.n_kv);
  const size_t MR = l.MR, KB = l.KB, d_k = kv.d_k, d_v = kv.d_v;
  PackKV(d, kv, l, w);
  float* HWY_RESTRICT o = w + l.o;
  float* HWY_RESTRICT s = w + l.s;
  float* HWY_RESTRICT q = w + l.qs;
  float m[kNR], sum[kNR], alpha[kNR];
  const float q_scale = kv.softcap != 0.0f ? kv.scale / kv.softcap : kv.scale;  // ggml's order
  for (size_t i0 = 0; i0 < qs.n_q; i0 += kNR) {
    const size_t nr = HWY_MIN(kNR, qs.n_q - i0);
    // The tile's queries, scaled; missing rows are zero (the micro-kernel reads all kNR rows).
    for (size_t r = 0; r < kNR; ++r) {
      if (r < nr) {
        const float* src = qs.q + (i0 + r) * qs.ldq;
        for (size_t c = 0; c < d_k; ++c) q[r * d_k + c] = src[c] * q_scale;
      } else {
        memset(q + r * d_k, 0, d_k * sizeof(float));
      }
      m[r] = -INFINITY;
      sum[r] = 0.0f;
    }
    memset(o, 0, kNR * l.d_vp * sizeof(float));
    memset(s, 0, kNR * KB * sizeof(float));
    for (size_t j0 = 0; j0 < kv.n_kv; j0 += KB) {
      const size_t kr = HWY_MIN(KB, kv.n_kv - j0);
      const size_t nb = (kr + MR - 1) / MR * MR;  // the step's keys, padded to whole panels
      // S[r][i] = q_r . k_{j0+i} for the tile's rows, one K panel at a time.
      for (size_t pb = 0; pb < nb; pb += MR) {
        MicroKernel<true>(d, d_k, w + l.kp + (j0 + pb) * d_k, q, d_k, s + pb, KB, MR, nr, false);
      }
      bool rescale = false;
      for (size_t r = 0; r < nr; ++r) {
        const size_t mrow = (i0 + r) * qs.ld_mask + j0;
        alpha[r] = SoftmaxBlock(d, s + r * KB, kr, nb, qs.mask_f32 != nullptr ? qs.mask_f32 + mrow : nullptr,
                                qs.mask_f16 != nullptr ? qs.mask_f16 + mrow : nullptr, kv.mask_scale, kv.softcap,
                                &m[r], &sum[r]);
        rescale |= alpha[r] != 1.0f;
      }
      if (rescale) {
        for (size_t r = 0; r < nr; ++r) {
          if (alpha[r] == 1.0f) continue;
          const auto va = hn::Set(d, alpha[r]);
          float* HWY_RESTRICT orow = o + r * l.d_vp;
          for (size_t e = 0; e < l.d_vp; e += N) hn::StoreU(hn::Mul(hn::LoadU(d, orow + e), va), d, orow + e);
        }
      }
      // O[r][panel] += sum_i P[r][i] v_{j0+i}[panel], one panel of MR output columns at a time.
      for (size_t p = 0; p * MR < d_v; ++p) {
        MicroKernel<true>(d, kr, w + l.vp + p * l.n_kvp * MR + j0 * MR, s, KB, o + p * MR, l.d_vp, MR, nr, true);
      }
    }
    for (size_t r = 0; r < nr; ++r) {
      float* HWY_RESTRICT dst = qs.out + (i0 + r) * qs.ld_out;
      const float inv = sum[r] > 0.0f ? 1.0f / sum[r] : (sum[r] != sum[r] ? NAN : 0.0f);  // NaN: a NaN score
      const float* HWY_RESTRICT orow = o + r * l.d_vp;
      for (size_t e = 0; e < d_v; ++e) dst[e] = orow[e] * inv;
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#endif  // include guard
