// kernels/flash_attn's int8 mode (FlashAttnKV::int8) on every target against two references:
//   - a scalar emulation of the definition in flash_attn.h (the same quantizers, exact integer
//     dot products, the softmax in double over all keys at once), which the kernel must match to
//     float rounding plus rare rounding-tie flips of a probability code;
//   - the double-precision attention of the unquantized operands, within the quantization error.
// Head widths of 1..4 blocks, value widths around the 16-channel panels (1, 33, 64, 80), key
// counts around the 32-key blocks and 128-key steps, query tiles with tails, f16 and f32 K/V,
// f32 and f16 masks with -inf entries and an all -inf row, softcap and ALiBi's slope, large
// logits, blocks of keys whose p underflows to ~1e-37; query splits give the same bits; d_k not a
// multiple of 32 is an error.
#include <math.h>

#include <algorithm>
#include <vector>

#include "ggml/fp16.h"
#include "gtest/gtest.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/flash_attn.h"
#include "kernels/test_util.h"

namespace ggml_cpu {
namespace {

HWY_BEFORE_TEST(FlashAttnInt8Test);

struct Case {
  size_t d_k, d_v, n_kv, n_q;
  bool f16_kv;
  int mask;  // 0 none, 1 f32, 2 f16
  float scale;
  float mask_scale = 1.0f;
  float softcap = 0.0f;
  float q_range = 1.0f;  // q uniform in [-q_range, q_range)
};

struct Operands {
  size_t ldq, ldk, ldv, ldm, ldo;
  std::vector<float> q, k32, v32, m32, out;
  std::vector<ggml_fp16_t> k16, v16, m16;

  explicit Operands(const Case& c) {
    ldq = c.d_k + 3;
    ldk = c.d_k + 1;
    ldv = c.d_v + 2;
    ldm = c.n_kv + 5;
    ldo = c.d_v + 4;
    q = test::RandomRow(c.n_q * ldq, 11 + static_cast<uint32_t>(c.d_k), -c.q_range, c.q_range);
    k32 = test::RandomRow(c.n_kv * ldk, 12 + static_cast<uint32_t>(c.n_kv));
    v32 = test::RandomRow(c.n_kv * ldv, 13 + static_cast<uint32_t>(c.d_v));
    m32 = test::RandomRow(c.n_q * ldm, 14, -2.0f, 2.0f);
    for (size_t i = 0; i < m32.size(); i += 3) m32[i] = -INFINITY;
    if (c.n_q > 2) {
      for (size_t j = 0; j < c.n_kv; ++j) m32[2 * ldm + j] = -INFINITY;  // query 2 sees nothing
    }
    if (c.f16_kv || c.mask == 2) {
      for (float& x : k32) x = ggml_fp16_to_fp32(ggml_fp32_to_fp16(x));
      for (float& x : v32) x = ggml_fp16_to_fp32(ggml_fp32_to_fp16(x));
      for (float& x : m32) x = ggml_fp16_to_fp32(ggml_fp32_to_fp16(x));
      for (float x : k32) k16.push_back(ggml_fp32_to_fp16(x));
      for (float x : v32) v16.push_back(ggml_fp32_to_fp16(x));
      for (float x : m32) m16.push_back(ggml_fp32_to_fp16(x));
    }
    out.assign(c.n_q * ldo, -7.0f);
  }

  FlashAttnKV KV(const Case& c) const {
    FlashAttnKV kv;
    kv.d_k = c.d_k;
    kv.d_v = c.d_v;
    kv.n_kv = c.n_kv;
    if (c.f16_kv) {
      kv.k_f16 = k16.data();
      kv.v_f16 = v16.data();
    } else {
      kv.k_f32 = k32.data();
      kv.v_f32 = v32.data();
    }
    kv.ldk = ldk;
    kv.ldv = ldv;
    kv.scale = c.scale;
    kv.mask_scale = c.mask_scale;
    kv.softcap = c.softcap;
    kv.int8 = true;
    return kv;
  }

  FlashAttnQueries Queries(const Case& c, size_t i0, size_t i1) {
    FlashAttnQueries qs;
    qs.n_q = i1 - i0;
    qs.q = q.data() + i0 * ldq;
    qs.ldq = ldq;
    if (c.mask == 1) qs.mask_f32 = m32.data() + i0 * ldm;
    if (c.mask == 2) qs.mask_f16 = m16.data() + i0 * ldm;
    qs.ld_mask = ldm;
    qs.out = out.data() + i0 * ldo;
    qs.ld_out = ldo;
    return qs;
  }
};

// flash_attn.h's Quant of n values x[i * stride] (each times mul, in float): codes and d; `top` is
// 127 (q, k, v: signed codes) or 255 (p >= 0: unsigned codes). A block whose max|x| is below
// 2^-100 is all zero codes with d = 0 (top / max|x| overflows f32 below ~2^-120).
float Quant(const float* x, size_t stride, size_t n, float mul, int* codes, float top = 127.0f) {
  float amax = 0.0f;
  for (size_t i = 0; i < n; ++i) amax = std::max(amax, fabsf(x[i * stride] * mul));
  if (!(amax >= 0x1p-100f)) amax = 0.0f;
  const float inv = amax > 0.0f ? top / amax : 0.0f;
  for (size_t i = 0; i < n; ++i) codes[i] = static_cast<int>(nearbyintf((x[i * stride] * mul) * inv));
  return amax / top;
}

// Query i's output by the int8 definition (quantized = true) or exactly (false), in double.
std::vector<double> Reference(const Case& c, const Operands& o, size_t i, bool quantized) {
  const float q_scale = c.softcap != 0.0f ? c.scale / c.softcap : c.scale;
  std::vector<double> s(c.n_kv);
  double mx = -INFINITY;
  int qc[32], kc[32];
  for (size_t j = 0; j < c.n_kv; ++j) {
    double dot = 0;
    for (size_t b = 0; b < c.d_k; b += 32) {
      const float* qr = o.q.data() + i * o.ldq + b;
      const float* kr = o.k32.data() + j * o.ldk + b;
      if (quantized) {
        const float dq = Quant(qr, 1, 32, q_scale, qc), dk = Quant(kr, 1, 32, 1.0f, kc);
        int64_t isum = 0;
        for (int e = 0; e < 32; ++e) isum += qc[e] * kc[e];
        dot += double(isum) * double(dk * dq);
      } else {
        for (int e = 0; e < 32; ++e) dot += double(qr[e] * q_scale) * kr[e];
      }
    }
    s[j] = c.softcap != 0.0f ? c.softcap * tanh(dot) : dot;
    s[j] += c.mask != 0 ? double(c.mask_scale) * o.m32[i * o.ldm + j] : 0.0;
    mx = fmax(mx, s[j]);
  }
  std::vector<double> out(c.d_v, 0.0);
  if (mx == -INFINITY) return out;
  const size_t n32 = (c.n_kv + 31) / 32 * 32;
  std::vector<float> p(n32, 0.0f);
  for (size_t j = 0; j < c.n_kv; ++j) p[j] = static_cast<float>(exp(s[j] - mx));
  std::vector<float> vcol(32);
  double sum = 0;
  for (size_t j0 = 0; j0 < n32; j0 += 32) {
    int pc[32], vc[32];
    const float dp = quantized ? Quant(p.data() + j0, 1, 32, 1.0f, pc, 255.0f) : 0.0f;
    for (size_t jj = 0; jj < 32; ++jj) sum += quantized ? double(dp) * pc[jj] : p[j0 + jj];
    for (size_t e = 0; e < c.d_v; ++e) {
      for (size_t jj = 0; jj < 32; ++jj) vcol[jj] = j0 + jj < c.n_kv ? o.v32[(j0 + jj) * o.ldv + e] : 0.0f;
      if (quantized) {
        const float dv = Quant(vcol.data(), 1, 32, 1.0f, vc);
        int64_t isum = 0;
        for (size_t jj = 0; jj < 32; ++jj) isum += int64_t{pc[jj]} * vc[jj];
        out[e] += double(isum) * double(dv * dp);
      } else {
        for (size_t jj = 0; jj < 32; ++jj) out[e] += double(p[j0 + jj]) * vcol[jj];
      }
    }
  }
  for (double& x : out) x /= sum;
  return out;
}

// Largest deviation from each reference over the case's outputs; checks the gaps and splits.
// `edit`, if given, changes the random f32 operands before the run (f16_kv false).
void RunCase(const Case& c, double tol_emulated, double tol_exact, void (*edit)(const Case&, Operands*) = nullptr) {
  SCOPED_TRACE(::testing::Message() << "d_k=" << c.d_k << " d_v=" << c.d_v << " n_kv=" << c.n_kv << " n_q=" << c.n_q
                                    << " f16=" << c.f16_kv << " mask=" << c.mask << " scale=" << c.scale
                                    << " softcap=" << c.softcap);
  Operands o(c);
  if (edit != nullptr) edit(c, &o);
  std::vector<uint8_t> work(FlashAttnWorkSize(c.d_k, c.d_v, c.n_kv) + 1);
  ASSERT_TRUE(FlashAttn(o.KV(c), o.Queries(c, 0, c.n_q), work.data() + 1, work.size() - 1).ok());
  const std::vector<float> whole = o.out;
  double worst_emulated = 0, worst_exact = 0;
  for (size_t i = 0; i < c.n_q; ++i) {
    const std::vector<double> emulated = Reference(c, o, i, true), exact = Reference(c, o, i, false);
    for (size_t e = 0; e < c.d_v; ++e) {
      const double got = o.out[i * o.ldo + e];
      ASSERT_TRUE(std::isfinite(got)) << "query " << i << " column " << e;
      worst_emulated = std::max(worst_emulated, fabs(got - emulated[e]));
      worst_exact = std::max(worst_exact, fabs(got - exact[e]));
    }
    for (size_t e = c.d_v; e < o.ldo; ++e) ASSERT_EQ(o.out[i * o.ldo + e], -7.0f) << "gap written";
  }
  EXPECT_LE(worst_emulated, tol_emulated);
  EXPECT_LE(worst_exact, tol_exact);
  o.out.assign(o.out.size(), -7.0f);
  const size_t split = c.n_q / 2 + 1;
  ASSERT_TRUE(FlashAttn(o.KV(c), o.Queries(c, 0, std::min(split, c.n_q)), work.data(), work.size()).ok());
  if (split < c.n_q) ASSERT_TRUE(FlashAttn(o.KV(c), o.Queries(c, split, c.n_q), work.data(), work.size()).ok());
  for (size_t i = 0; i < o.out.size(); ++i) ASSERT_EQ(o.out[i], whole[i]) << "split changed element " << i;
}

TEST_P(FlashAttnInt8Test, MatchesReferences) {
  test::ExpectDispatchedTo(GetParam());
  for (size_t d_k : {32, 64, 96, 128}) {
    for (size_t n_kv : {1, 33, 128, 129, 300}) {
      for (int mask = 0; mask < 3; ++mask) {
        const bool f16 = (d_k / 32 + n_kv + mask) % 2 == 0;
        const size_t d_v = d_k == 96 ? 33 : d_k == 128 ? 80 : d_k == 32 ? 1 : 64;
        RunCase({d_k, d_v, n_kv, 13, f16, mask, 1.0f / sqrtf(float(d_k))}, 2e-3, 0.03);
        RunCase({d_k, d_v, n_kv, 25, !f16, mask, 0.5f, 1.0f, 0.0f, 2.0f}, 2e-3, 0.05);
      }
    }
  }
}

TEST_P(FlashAttnInt8Test, AlibiSlopeSoftcapAndLargeLogits) {
  test::ExpectDispatchedTo(GetParam());
  for (int mask = 1; mask < 3; ++mask) {
    Case c{64, 40, 200, 17, mask == 2, mask, 1.0f / 8.0f};
    c.mask_scale = 0.0625f;
    RunCase(c, 2e-3, 0.03);
    c.scale = 4.0f;  // scores up to ~|64 x 4 x 1/3|: the cap at 5 bites
    c.softcap = 5.0f;
    RunCase(c, 2e-3, 0.05);
  }
  // Scores up to +-64 * 10: without the running max exp would overflow; sharp attention, where
  // one key's weight dominates a block and the quantization of its neighbours shows most.
  // Scores are quantized relative to their block maxima: here off by up to ~0.3, so p by ~30%.
  RunCase({64, 64, 300, 9, true, 0, 10.0f}, 5e-3, 0.1);
}

// A sharp head (Whisper tiny.en's encoder, layer 0 head 2, has score gaps of ~29 on a random mel):
// keys 0..31 score in [-2, 0], later keys about 85 below the max, so their p = e^-85 ~ 1e-37 is
// a block maximum for which 255 / max overflowed f32 to inf: codes inf or NaN (0 x inf for the
// padded or underflowed keys) made the row NaN (seen as NaN / 0.9-off outputs of tiny.en's
// encoder over 300 positions). Such a block must weigh (nearly) nothing, as in exact attention.
void FarBelowTheMax(const Case& c, Operands* o) {
  for (size_t i = 0; i < c.n_q; ++i) {
    for (size_t e = 0; e < c.d_k; ++e) o->q[i * o->ldq + e] = e == 0 ? 1.0f + 0.01f * i : 0.0f;
  }
  for (size_t j = 0; j < c.n_kv; ++j) {
    float* k = o->k32.data() + j * o->ldk;
    for (size_t e = 1; e < c.d_k; ++e) k[e] = 0.0f;
    // Scores: 0 for key 0, [-2, 0) for keys 1..31, -84..-86 for keys 32..63, -200 from 64 on.
    k[0] = j == 0 ? 0.0f : j < 32 ? -2.0f * j / 32 : j < 64 ? -84.0f - 2.0f * (j - 32) / 32 : -200.0f;
  }
}

TEST_P(FlashAttnInt8Test, BlocksFarBelowTheMaxWeighNothing) {
  test::ExpectDispatchedTo(GetParam());
  for (size_t n_kv : {40, 64, 100, 300}) RunCase({32, 64, n_kv, 5, false, 0, 1.0f}, 2e-3, 0.03, FarBelowTheMax);
}

TEST_P(FlashAttnInt8Test, WhisperEncoderHeadShape) {
  test::ExpectDispatchedTo(GetParam());
  RunCase({64, 64, 1500, 29, true, 0, 0.125f, 1.0f, 0.0f, 3.0f}, 2e-3, 0.02);
}

TEST_P(FlashAttnInt8Test, HeadWidthNotAMultipleOf32) {
  test::ExpectDispatchedTo(GetParam());
  const Case c{48, 48, 10, 3, false, 0, 1.0f};
  Operands o(c);
  std::vector<uint8_t> work(FlashAttnWorkSize(c.d_k, c.d_v, c.n_kv));
  const absl::Status s = FlashAttn(o.KV(c), o.Queries(c, 0, c.n_q), work.data(), work.size());
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("int8 needs d_k a multiple of 32, got d_k=48"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace ggml_cpu
