// Helpers for the graph executor tests: random tensors, value snapshots, and the harness that
// runs a graph with 1, 2, 3 and 8 threads (checking the results are bit-identical) and then with
// the reference evaluator (cpu/ref_ops.h).
#ifndef GGML_WHISPER_CPU_GRAPH_COMPUTE_TEST_UTIL_H_
#define GGML_WHISPER_CPU_GRAPH_COMPUTE_TEST_UTIL_H_

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <random>
#include <string>
#include <vector>

#include "cpu/graph_compute.h"
#include "cpu/ref_ops.h"
#include "cpu/threadpool.h"
#include "ggml/ggml.h"
#include "ggml/graph.h"
#include "gtest/gtest.h"
#include "kernels/quant_traits.h"

namespace ggml_cpu {
namespace test {

// The thread counts every graph runs with; the first is the baseline for bit-identity.
inline const std::vector<int>& ThreadCounts() {
  static const std::vector<int> kCounts = {1, 2, 3, 8};
  return kCounts;
}

// A tensor of `type` and shape ne (contiguous) with values uniform in [lo, hi), deterministic in
// seed. Quantized types are filled by quantizing such floats (from_float of quant_traits).
inline ggml_tensor* RandomTensor(ggml_context* ctx, ggml_type type, std::vector<int64_t> ne, uint32_t seed,
                                 float lo = -1.0f, float hi = 1.0f) {
  ne.resize(4, 1);
  ggml_tensor* t = ggml_new_tensor(ctx, type, 4, ne.data());
  EXPECT_NE(t, nullptr) << ggml_last_error();
  if (t == nullptr) return nullptr;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> row(static_cast<size_t>(ne[0]));
  for (int64_t r = 0; r < ggml_nrows(t); ++r) {
    for (float& v : row) v = dist(rng);
    char* dst = static_cast<char*>(t->data) + r * t->nb[1];
    if (type == GGML_TYPE_F32) {
      memcpy(dst, row.data(), row.size() * sizeof(float));
    } else if (type == GGML_TYPE_F16) {
      for (size_t i = 0; i < row.size(); ++i) reinterpret_cast<ggml_fp16_t*>(dst)[i] = ggml_fp32_to_fp16(row[i]);
    } else {
      GetQuantTypeTraits(type)->from_float(row.data(), dst, ne[0]);
    }
  }
  ggml_format_name(t, "rand%u", seed);
  return t;
}

// The elements of t (F32, F16 or I32, any strides) in ggml order, as floats.
inline std::vector<float> Values(const ggml_tensor* t) {
  std::vector<float> v;
  v.reserve(static_cast<size_t>(ggml_nelements(t)));
  for (int64_t i3 = 0; i3 < t->ne[3]; ++i3)
    for (int64_t i2 = 0; i2 < t->ne[2]; ++i2)
      for (int64_t i1 = 0; i1 < t->ne[1]; ++i1)
        for (int64_t i0 = 0; i0 < t->ne[0]; ++i0) v.push_back(ggml_get_f32_nd(t, i0, i1, i2, i3));
  return v;
}

// The bit patterns of Values(t), so NaN and -0 compare exactly.
inline std::vector<uint32_t> Bits(const ggml_tensor* t) {
  const std::vector<float> v = Values(t);
  std::vector<uint32_t> bits(v.size());
  memcpy(bits.data(), v.data(), v.size() * sizeof(float));
  return bits;
}

// A persistent pool of the largest thread count and a reusable work buffer.
class Executor {
 public:
  Executor() : pool_(ggml_threadpool_new(8)) { EXPECT_NE(pool_, nullptr) << ggml_last_error(); }
  ~Executor() { ggml_threadpool_free(pool_); }
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Plans (work buffer grown as needed, outside the compute) and computes with nth threads.
  ggml_status Run(ggml_cgraph* graph, int nth) {
    ggml_cplan plan = ggml_graph_plan(graph, nth, pool_);
    if (work_.size() < plan.work_size) work_.resize(plan.work_size);
    plan.work_data = work_.data();
    return ggml_graph_compute(graph, &plan);
  }
  ggml_threadpool* pool() { return pool_; }
  std::vector<uint8_t>& work() { return work_; }

 private:
  ggml_threadpool* pool_;
  std::vector<uint8_t> work_;
};

// What RunAndReference returns: the executor's values of `out` and the reference's.
struct Outcome {
  std::vector<float> exec;
  std::vector<float> ref;
};

// Computes the graph of `out` with every thread count (asserting bit-identical results), then
// recomputes the whole graph with ggml_ref_graph_compute (overwriting every node).
inline Outcome RunAndReference(Executor* ex, ggml_context* ctx, ggml_tensor* out, const std::string& what) {
  Outcome o;
  EXPECT_NE(out, nullptr) << what << ": " << ggml_last_error();
  if (out == nullptr) return o;
  ggml_cgraph* graph = ggml_new_graph(ctx);
  EXPECT_TRUE(graph != nullptr && ggml_build_forward_expand(graph, out)) << ggml_last_error();
  std::vector<uint32_t> baseline;
  for (int nth : ThreadCounts()) {
    EXPECT_EQ(ex->Run(graph, nth), GGML_STATUS_SUCCESS) << what << " nth " << nth << ": " << ggml_last_error();
    if (nth == ThreadCounts()[0]) {
      baseline = Bits(out);
      o.exec = Values(out);
    } else {
      EXPECT_EQ(Bits(out), baseline) << what << ": " << nth << " threads differ from 1 thread";
    }
  }
  EXPECT_TRUE(ggml_ref_graph_compute(graph)) << what << ": " << ggml_last_error();
  o.ref = Values(out);
  return o;
}

// EXPECTs |exec - ref| <= abs_tol + rel_tol * |ref| element-wise (NaN must match NaN); reports
// the first few failures and the largest error.
inline void ExpectClose(const Outcome& o, double abs_tol, double rel_tol, const std::string& what) {
  ASSERT_EQ(o.exec.size(), o.ref.size()) << what;
  int failures = 0;
  double max_err = 0.0;
  for (size_t i = 0; i < o.ref.size(); ++i) {
    const double e = o.exec[i], r = o.ref[i];
    if (isnan(r) || isnan(e)) {
      EXPECT_TRUE(isnan(r) && isnan(e)) << what << " [" << i << "]: exec " << e << " ref " << r;
      continue;
    }
    if (isinf(r) || isinf(e)) {
      EXPECT_EQ(e, r) << what << " [" << i << "]";
      continue;
    }
    const double err = fabs(e - r);
    max_err = std::max(max_err, err);
    if (err > abs_tol + rel_tol * fabs(r) && failures++ < 5) {
      ADD_FAILURE() << what << " [" << i << "]: exec " << e << " ref " << r << " err " << err;
    }
  }
  EXPECT_EQ(failures, 0) << what << ": max error " << max_err;
}

// EXPECTs exec == ref bit for bit (ops with no rounding choice: copies, adds, masks, ...).
inline void ExpectExact(const Outcome& o, const std::string& what) {
  ASSERT_EQ(o.exec.size(), o.ref.size()) << what;
  for (size_t i = 0; i < o.ref.size(); ++i) {
    uint32_t e, r;
    memcpy(&e, &o.exec[i], 4);
    memcpy(&r, &o.ref[i], 4);
    ASSERT_EQ(e, r) << what << " [" << i << "]: exec " << o.exec[i] << " ref " << o.ref[i];
  }
}

}  // namespace test
}  // namespace ggml_cpu

#endif  // GGML_WHISPER_CPU_GRAPH_COMPUTE_TEST_UTIL_H_
