// FLASH_ATTN_EXT in the graph executor (semantics: ggml/ops.h ggml_flash_attn_ext; kernel:
// kernels/flash_attn.h). The query rows of all heads and batches, in (i3, head, query) order, are
// split evenly across threads; each thread calls the kernel once per head it touches, with that
// head's run of queries, so each thread packs a head's K/V at most once. Every output row is
// computed by one thread from its own query tile, so results do not depend on n_threads.
// A node marked with ggml_flash_attn_ext_set_int8 runs the kernel's int8 products
// (FlashAttnKV::int8) where QuantGemmFast() (AVX512-VNNI) and d_k % 32 == 0; f32 otherwise.
#include <stdint.h>

#include <algorithm>
#include <string>

#include "cpu/graph_compute_ops.h"
#include "ggml/ops.h"
#include "kernels/flash_attn.h"
#include "kernels/quant_gemm.h"

namespace ggml_cpu {
namespace exec {
namespace {

constexpr uintptr_t kAlign = 64;

bool IsFloatType(ggml_type t) { return t == GGML_TYPE_F32 || t == GGML_TYPE_F16; }

// nb[0] is the element size and nb[1] a whole number of elements: rows the kernel can stride over.
bool RowsAddressable(const ggml_tensor* t) {
  const size_t es = ggml_type_size(t->type);
  return t->nb[0] == es && t->nb[1] % es == 0 && t->nb[2] % es == 0 && t->nb[3] % es == 0;
}

size_t ThreadBytes(const ggml_tensor* node) {
  const ggml_tensor* k = node->src[1];
  const ggml_tensor* v = node->src[2];
  const size_t bytes = FlashAttnWorkSize(static_cast<size_t>(k->ne[0]), static_cast<size_t>(v->ne[0]),
                                         static_cast<size_t>(k->ne[1]));
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

}  // namespace

bool CheckFlashAttn(const ggml_tensor* node, CheckMessage* msg) {
  const ggml_tensor* q = node->src[0];
  const ggml_tensor* k = node->src[1];
  const ggml_tensor* v = node->src[2];
  const ggml_tensor* mask = node->src[3];
  if (ggml_get_op_params_f32(node, 1) > 0.0f && mask == nullptr) return msg->Fail("max_bias (ALiBi) needs a mask");
  if (q->type != GGML_TYPE_F32 || node->type != GGML_TYPE_F32) return msg->Fail("q and the result must be F32");
  if (!IsFloatType(k->type) || v->type != k->type) return msg->Fail("k and v must both be F16 or both F32");
  if (k->ne[0] != q->ne[0] || v->ne[1] != k->ne[1] || v->ne[2] != k->ne[2] || v->ne[3] != k->ne[3] ||
      k->ne[2] < 1 || q->ne[2] % k->ne[2] != 0 || k->ne[3] != q->ne[3] || k->ne[1] < 1) {
    return msg->Fail("shapes of q, k and v do not fit (see ggml_flash_attn_ext)");
  }
  if (node->ne[0] != v->ne[0] || node->ne[1] != q->ne[2] || node->ne[2] != q->ne[1] || node->ne[3] != q->ne[3]) {
    return msg->Fail("result must be [d_v, n_head, n_q, ne3]");
  }
  if (!RowsAddressable(q) || !RowsAddressable(k) || !RowsAddressable(v) || !RowsAddressable(node)) {
    return msg->Fail("q, k, v and the result need contiguous rows (nb0 = element size)");
  }
  if (mask != nullptr) {
    if (!IsFloatType(mask->type) || mask->ne[0] != k->ne[1] || mask->ne[1] < q->ne[1] || mask->ne[2] != 1 ||
        mask->ne[3] != 1 || !RowsAddressable(mask)) {
      return msg->Fail("mask must be F16 or F32 [n_kv, >= n_q] with contiguous rows");
    }
    if (node->data != nullptr && mask->data == nullptr) return msg->Fail("mask (src[3]) has no data");
  }
  return true;
}

size_t FlashAttnWorkSizeFor(const ggml_tensor* node, int nth) {
  return static_cast<size_t>(nth) * ThreadBytes(node) + kAlign;
}

void ForwardFlashAttn(const ComputeParams& p, ggml_tensor* dst) {
  const ggml_tensor* q = dst->src[0];
  const ggml_tensor* k = dst->src[1];
  const ggml_tensor* v = dst->src[2];
  const ggml_tensor* mask = dst->src[3];
  const size_t thread_bytes = ThreadBytes(dst);
  uint8_t* base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(p.wdata) + kAlign - 1) & ~(kAlign - 1));
  uint8_t* work = base + static_cast<size_t>(p.ith) * thread_bytes;
  const int64_t n_q = q->ne[1], n_head = q->ne[2], group = q->ne[2] / k->ne[2];
  const size_t es_kv = ggml_type_size(k->type);
  const size_t es_mask = mask != nullptr ? ggml_type_size(mask->type) : 1;
  const bool int8 = ggml_flash_attn_ext_get_int8(dst) && q->ne[0] % 32 == 0 && QuantGemmFast();
  int64_t begin, end;
  SplitRange(n_q * n_head * q->ne[3], p.ith, p.nth, &begin, &end);
  while (begin < end) {
    const int64_t i = begin % n_q, h = (begin / n_q) % n_head, i3 = begin / (n_q * n_head);
    const int64_t run = std::min(end - begin, n_q - i);  // this head's queries in our range
    const int64_t hk = h / group;
    FlashAttnKV kv;
    kv.d_k = static_cast<size_t>(q->ne[0]);
    kv.d_v = static_cast<size_t>(v->ne[0]);
    kv.n_kv = static_cast<size_t>(k->ne[1]);
    const char* kp = static_cast<const char*>(k->data) + hk * k->nb[2] + i3 * k->nb[3];
    const char* vp = static_cast<const char*>(v->data) + hk * v->nb[2] + i3 * v->nb[3];
    if (k->type == GGML_TYPE_F16) {
      kv.k_f16 = reinterpret_cast<const ggml_fp16_t*>(kp);
      kv.v_f16 = reinterpret_cast<const ggml_fp16_t*>(vp);
    } else {
      kv.k_f32 = reinterpret_cast<const float*>(kp);
      kv.v_f32 = reinterpret_cast<const float*>(vp);
    }
    kv.ldk = k->nb[1] / es_kv;
    kv.ldv = v->nb[1] / es_kv;
    kv.scale = ggml_get_op_params_f32(dst, 0);
    kv.mask_scale = ggml_alibi_slope(ggml_get_op_params_f32(dst, 1), n_head, h);
    kv.softcap = ggml_get_op_params_f32(dst, 2);
    kv.int8 = int8;
    FlashAttnQueries qs;
    qs.n_q = static_cast<size_t>(run);
    qs.q = reinterpret_cast<const float*>(static_cast<const char*>(q->data) + i * q->nb[1] + h * q->nb[2] +
                                          i3 * q->nb[3]);
    qs.ldq = q->nb[1] / sizeof(float);
    if (mask != nullptr) {
      const char* mp = static_cast<const char*>(mask->data) + i * mask->nb[1];
      if (mask->type == GGML_TYPE_F16) {
        qs.mask_f16 = reinterpret_cast<const ggml_fp16_t*>(mp);
      } else {
        qs.mask_f32 = reinterpret_cast<const float*>(mp);
      }
      qs.ld_mask = mask->nb[1] / es_mask;
    }
    // result[:, h, i, i3]: a query's row for head h; consecutive queries are nb[2] apart.
    qs.out = reinterpret_cast<float*>(static_cast<char*>(dst->data) + h * dst->nb[1] + i * dst->nb[2] +
                                      i3 * dst->nb[3]);
    qs.ld_out = dst->nb[2] / sizeof(float);
    const absl::Status s = FlashAttn(kv, qs, work, thread_bytes);
    if (!s.ok()) {
      ReportError(p, dst, "%s", std::string(s.message()).c_str());
      return;
    }
    begin += run;
  }
}

}  // namespace exec
}  // namespace ggml_cpu
