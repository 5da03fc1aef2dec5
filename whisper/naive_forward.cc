#include "whisper/naive_forward.h"

#include <algorithm>
#include <cmath>

#include "ggml/fp16.h"

namespace whisper {
namespace {

using Vec = std::vector<double>;

double At(const ggml_tensor* t, int64_t i0, int64_t i1 = 0, int64_t i2 = 0) {
  return ggml_get_f32_nd(t, i0, i1, i2, 0);
}

double F16(double x) { return ggml_fp16_to_fp32(ggml_fp32_to_fp16(static_cast<float>(x))); }

// y = W x (+ b); W ne = [n_in, n_out].
Vec Linear(const ggml_tensor* w, const ggml_tensor* b, const Vec& x) {
  Vec y(w->ne[1]);
  for (int64_t o = 0; o < w->ne[1]; ++o) {
    double s = b != nullptr ? At(b, o) : 0.0;
    for (int64_t i = 0; i < w->ne[0]; ++i) s += At(w, i, o) * x[i];
    y[o] = s;
  }
  return y;
}

Vec LayerNorm(const Vec& x, const ggml_tensor* w, const ggml_tensor* b) {
  double mean = 0.0, var = 0.0;
  for (double v : x) mean += v;
  mean /= x.size();
  for (double v : x) var += (v - mean) * (v - mean);
  var /= x.size();
  const double inv = 1.0 / std::sqrt(var + kLayerNormEps);
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] - mean) * inv * At(w, i) + At(b, i);
  return y;
}

// OpenAI's nn.GELU(): 0.5 x (1 + erf(x / sqrt(2))); or whisper.cpp's tanh approximation.
double GeluOf(double x, Gelu form) {
  if (form == Gelu::kErf) return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

// Multi-head attention of queries q[i] over keys k[j] / values v[j] (j < n_keys(i)); scores are
// q.k * scale. Returns the concatenated heads per query.
std::vector<Vec> Attend(const std::vector<Vec>& q, const std::vector<Vec>& k,
                        const std::vector<Vec>& v, int n_head, double scale, bool causal,
                        int n_past) {
  const int S = static_cast<int>(q[0].size());
  const int d = S / n_head;
  std::vector<Vec> out(q.size(), Vec(S, 0.0));
  for (size_t i = 0; i < q.size(); ++i) {
    const size_t n_keys = causal ? n_past + i + 1 : k.size();
    for (int h = 0; h < n_head; ++h) {
      Vec p(n_keys);
      double mx = -INFINITY;
      for (size_t j = 0; j < n_keys; ++j) {
        double s = 0.0;
        for (int e = h * d; e < (h + 1) * d; ++e) s += q[i][e] * k[j][e];
        p[j] = s * scale;
        mx = std::max(mx, p[j]);
      }
      double sum = 0.0;
      for (double& x : p) sum += (x = std::exp(x - mx));
      for (size_t j = 0; j < n_keys; ++j) {
        for (int e = h * d; e < (h + 1) * d; ++e) out[i][e] += p[j] / sum * v[j][e];
      }
    }
  }
  return out;
}

// x += MLP(LN(x)) for each row.
void Mlp(const MlpWeights& w, Gelu form, std::vector<Vec>* x) {
  for (Vec& row : *x) {
    Vec hdn = Linear(w.fc1_w, w.fc1_b, LayerNorm(row, w.ln_w, w.ln_b));
    for (double& v : hdn) v = GeluOf(v, form);
    const Vec y = Linear(w.fc2_w, w.fc2_b, hdn);
    for (size_t c = 0; c < row.size(); ++c) row[c] += y[c];
  }
}

// Conv1d with kernel 3, padding 1: in [IC][L] -> GELU(out + b) [OC][L_out].
std::vector<Vec> ConvGelu(const ggml_tensor* w, const ggml_tensor* b, const std::vector<Vec>& in,
                          int stride, Gelu form) {
  const int64_t L = in[0].size();
  const int64_t L_out = (L + 2 - 3) / stride + 1;
  std::vector<Vec> out(w->ne[2], Vec(L_out));
  for (int64_t oc = 0; oc < w->ne[2]; ++oc) {
    for (int64_t t = 0; t < L_out; ++t) {
      double s = At(b, 0, oc);
      for (int64_t ic = 0; ic < w->ne[1]; ++ic) {
        for (int64_t k = 0; k < 3; ++k) {
          const int64_t src = t * stride + k - 1;
          if (src >= 0 && src < L) s += At(w, k, ic, oc) * in[ic][src];
        }
      }
      out[oc][t] = GeluOf(s, form);
    }
  }
  return out;
}

}  // namespace

std::vector<double> NaiveEncode(const WhisperModel& model, const std::vector<float>& window,
                                int n_ctx, Gelu gelu) {
  const WhisperHparams& h = model.hparams();
  const WhisperWeights& w = model.weights();
  const int S = h.n_audio_state;
  std::vector<Vec> mel(h.n_mels, Vec(2 * n_ctx));
  for (int m = 0; m < h.n_mels; ++m) {
    for (int t = 0; t < 2 * n_ctx; ++t) mel[m][t] = window[m * 2 * n_ctx + t];
  }
  const std::vector<Vec> c2 = ConvGelu(w.conv2_w, w.conv2_b, ConvGelu(w.conv1_w, w.conv1_b, mel, 1, gelu), 2, gelu);
  std::vector<Vec> x(n_ctx, Vec(S));
  for (int t = 0; t < n_ctx; ++t) {
    for (int c = 0; c < S; ++c) x[t][c] = c2[c][t] + At(w.e_pe, c, t);
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(S / h.n_audio_head));
  for (const EncoderLayerWeights& lw : w.encoder) {
    std::vector<Vec> q(n_ctx), k(n_ctx), v(n_ctx);
    for (int t = 0; t < n_ctx; ++t) {
      const Vec ln = LayerNorm(x[t], lw.attn.ln_w, lw.attn.ln_b);
      q[t] = Linear(lw.attn.q_w, lw.attn.q_b, ln);
      k[t] = Linear(lw.attn.k_w, nullptr, ln);
      v[t] = Linear(lw.attn.v_w, lw.attn.v_b, ln);
      for (double& e : k[t]) e = F16(e);
      for (double& e : v[t]) e = F16(e);
    }
    const std::vector<Vec> a = Attend(q, k, v, h.n_audio_head, scale, false, 0);
    for (int t = 0; t < n_ctx; ++t) {
      const Vec o = Linear(lw.attn.o_w, lw.attn.o_b, a[t]);
      for (int c = 0; c < S; ++c) x[t][c] += o[c];
    }
    Mlp(lw.mlp, gelu, &x);
  }
  Vec out;
  out.reserve(static_cast<size_t>(n_ctx) * S);
  for (int t = 0; t < n_ctx; ++t) {
    const Vec y = LayerNorm(x[t], w.e_ln_w, w.e_ln_b);
    out.insert(out.end(), y.begin(), y.end());
  }
  return out;
}

std::vector<double> NaiveDecode(const WhisperModel& model, const std::vector<double>& enc, int n_ctx,
                                const std::vector<int32_t>& tokens, Gelu gelu) {
  const WhisperHparams& h = model.hparams();
  const WhisperWeights& w = model.weights();
  const int S = h.n_text_state;
  const int n = static_cast<int>(tokens.size());
  const double qk_scale = std::pow(static_cast<double>(S / h.n_text_head), -0.25);
  std::vector<Vec> e(n_ctx);
  for (int t = 0; t < n_ctx; ++t) e[t] = Vec(enc.begin() + t * S, enc.begin() + (t + 1) * S);

  std::vector<Vec> x(n, Vec(S));
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < S; ++c) x[i][c] = At(w.d_te, c, tokens[i]) + At(w.d_pe, c, i);
  }
  for (const DecoderLayerWeights& lw : w.decoder) {
    // Self-attention: Q and K scaled by d^-0.25, K and V through the F16 cache.
    std::vector<Vec> q(n), k(n), v(n);
    for (int i = 0; i < n; ++i) {
      const Vec ln = LayerNorm(x[i], lw.attn.ln_w, lw.attn.ln_b);
      q[i] = Linear(lw.attn.q_w, lw.attn.q_b, ln);
      k[i] = Linear(lw.attn.k_w, nullptr, ln);
      v[i] = Linear(lw.attn.v_w, lw.attn.v_b, ln);
      for (double& z : q[i]) z = static_cast<float>(z * qk_scale);
      for (double& z : k[i]) z = F16(z * qk_scale);
      for (double& z : v[i]) z = F16(z);
    }
    std::vector<Vec> a = Attend(q, k, v, h.n_text_head, 1.0, true, 0);
    for (int i = 0; i < n; ++i) {
      const Vec o = Linear(lw.attn.o_w, lw.attn.o_b, a[i]);
      for (int c = 0; c < S; ++c) x[i][c] += o[c];
    }
    // Cross-attention: K pre-scaled (F16 cache), softmax scale d^-0.25.
    std::vector<Vec> ck(n_ctx), cv(n_ctx);
    for (int t = 0; t < n_ctx; ++t) {
      ck[t] = Linear(lw.cross.k_w, nullptr, e[t]);
      cv[t] = Linear(lw.cross.v_w, lw.cross.v_b, e[t]);
      for (double& z : ck[t]) z = F16(z * qk_scale);
      for (double& z : cv[t]) z = F16(z);
    }
    for (int i = 0; i < n; ++i) q[i] = Linear(lw.cross.q_w, lw.cross.q_b, LayerNorm(x[i], lw.cross.ln_w, lw.cross.ln_b));
    a = Attend(q, ck, cv, h.n_text_head, qk_scale, false, 0);
    for (int i = 0; i < n; ++i) {
      const Vec o = Linear(lw.cross.o_w, lw.cross.o_b, a[i]);
      for (int c = 0; c < S; ++c) x[i][c] += o[c];
    }
    Mlp(lw.mlp, gelu, &x);
  }
  const Vec y = LayerNorm(x[n - 1], w.d_ln_w, w.d_ln_b);
  Vec logits(h.n_vocab);
  for (int64_t t = 0; t < h.n_vocab; ++t) {
    double s = 0.0;
    for (int c = 0; c < S; ++c) s += At(w.d_te, c, t) * y[c];
    logits[t] = s;
  }
  return logits;
}

}  // namespace whisper
