// MUL_MAT throughput through the real executor, per weight type, next to OpenBLAS sgemm.
//
// Every row runs a one-node graph dst = ggml_mul_mat(a, b) with ggml_graph_compute: a of
// ggml_type F32, F16, Q8_0, Q5_0, Q5_1, Q4_0 or Q4_1 with ne = [K, M], b F32 ne = [K, N], dst F32
// ne = [M, N]. The graph is planned once, its work buffer allocated once, and it runs on one
// persistent ggml_threadpool per thread count (shared by all rows), so a row's time includes what
// the executor does per call: converting b to a's vec_dot type (Q8_0/Q8_1 blocks for quantized
// a) and the pool's start and barrier, exactly as in a Whisper forward pass. Counter GFLOP/s =
// 2 * M * N * K per call over wall time.
//
// Shapes (Whisper tiny encoder, n_state 384, n_audio_ctx 1500; the tiny vocabulary of 51864):
//   attn    a [384, 384]   x b [384, 1500]    Q/K/V/out projections
//   fc1     a [384, 1536]  x b [384, 1500]    MLP up
//   fc2     a [1536, 384]  x b [1536, 1500]   MLP down
//   logits  a [384, 51864] x b [384, 1]       token embedding^T x one decoder state
//   N = 64 .. 2048: a [N, N] x b [N, N], as whisper.cpp's `whisper-bench -w 2` (the figures of
//                   ../shared/reference/perf_anchors.md).
// Rows:
//   FmaPeak/threads:<1|2>                 the FP32 FMA peak of the target the kernels dispatch
//                                         to, this run (12 accumulators, as perf_anchors.md
//                                         measures it), on any architecture
//   MulMat/<type>/<shape>/threads:<1|2>   shape attn_384x384x1500, ..., square_64, ...
//   OpenBLAS/F32/<shape>/threads:<1|2>    cblas_sgemm on the same F32 data with
//                                         openblas_set_num_threads to match; run last so that
//                                         OpenBLAS's spinning workers cannot take a core from
//                                         our rows.
// After the rows, markdown tables of GFLOP/s (type x shape, per thread count; the best of the
// repetitions when --benchmark_repetitions > 1) are printed with the OpenBLAS column,
// F32 / OpenBLAS, and the best type's fraction of the measured peak.
// The benchmark context records the dispatched Highway target and the OpenBLAS build.
//
//   bazel run //cpu:mul_mat_types_benchmark
//   OPENBLAS_CORETYPE=SkylakeX bazel run ...   OpenBLAS's AVX-512 sgemm on CPUs newer than the
//                                              OpenBLAS build (see openblas_config in the context)
//   GGML_CPU_TARGET=AVX2 bazel run //cpu:mul_mat_types_benchmark -- --benchmark_filter=square
//
// Each row runs for at least 0.2 s (--benchmark_min_time overrides it); about 75 s in all. On a
// shared machine, spread repetitions over the run; the tables then show each row's best:
//   ... -- --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true
//          --benchmark_min_time=0.1
#include <cblas.h>
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "cpu/graph_compute.h"
#include "cpu/threadpool.h"
#include "ggml/fp16.h"
#include "ggml/ggml.h"
#include "ggml/graph.h"
#include "ggml/ops.h"
#include "ggml/types.h"
#include "hwy/targets.h"
#include "kernels/dispatch.h"
#include "kernels/quant_traits.h"

// The FMA peak loop, compiled for every Highway target and dispatched like the kernels.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/mul_mat_types_benchmark.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// perf_anchors.md's method: 12 independent accumulators (enough to cover FMA latency x pipes),
// each updated by one vector FMA per step: 2 * Lanes * 12 FLOP per step. The accumulators are
// named variables, not an array: GCC keeps an array in memory (and SVE vectors cannot be array
// elements), and the loop would then measure store-to-load forwarding instead of the FMA units.
// Returns a value derived from every accumulator; *lanes = Lanes of the vectors used.
float FmaPeakLoop(int64_t steps, size_t* lanes) {
  const hn::ScalableTag<float> d;
  *lanes = hn::Lanes(d);
  auto a0 = hn::Set(d, 0.0f), a1 = hn::Set(d, 0.1f), a2 = hn::Set(d, 0.2f), a3 = hn::Set(d, 0.3f);
  auto a4 = hn::Set(d, 0.4f), a5 = hn::Set(d, 0.5f), a6 = hn::Set(d, 0.6f), a7 = hn::Set(d, 0.7f);
  auto a8 = hn::Set(d, 0.8f), a9 = hn::Set(d, 0.9f), a10 = hn::Set(d, 1.0f), a11 = hn::Set(d, 1.1f);
  const auto mul = hn::Set(d, 0.9999999f), add = hn::Set(d, 1e-7f);
  for (int64_t i = 0; i < steps; ++i) {
    a0 = hn::MulAdd(a0, mul, add), a1 = hn::MulAdd(a1, mul, add);
    a2 = hn::MulAdd(a2, mul, add), a3 = hn::MulAdd(a3, mul, add);
    a4 = hn::MulAdd(a4, mul, add), a5 = hn::MulAdd(a5, mul, add);
    a6 = hn::MulAdd(a6, mul, add), a7 = hn::MulAdd(a7, mul, add);
    a8 = hn::MulAdd(a8, mul, add), a9 = hn::MulAdd(a9, mul, add);
    a10 = hn::MulAdd(a10, mul, add), a11 = hn::MulAdd(a11, mul, add);
  }
  const auto sum = hn::Add(hn::Add(hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)),
                                   hn::Add(hn::Add(a4, a5), hn::Add(a6, a7))),
                           hn::Add(hn::Add(a8, a9), hn::Add(a10, a11)));
  return hn::GetLane(hn::SumOfLanes(d, sum));
}

}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ggml_cpu {
HWY_EXPORT(FmaPeakLoop);
}  // namespace ggml_cpu

namespace {

struct Shape {
  const char* name;  // table label; rows use RowName
  int64_t k, m, n;   // a ne = [k, m], b ne = [k, n], dst ne = [m, n]
  bool square;
};

// "attn_384x384x1500", "square_64", ...
std::string RowName(const Shape& s) { return std::string(s.square ? "square_" : "") + s.name; }

const Shape kShapes[] = {
    {"attn_384x384x1500", 384, 384, 1500, false},
    {"fc1_1536x384x1500", 384, 1536, 1500, false},
    {"fc2_384x1536x1500", 1536, 384, 1500, false},
    {"logits_51864x384x1", 384, 51864, 1, false},
    {"64", 64, 64, 64, true},
    {"128", 128, 128, 128, true},
    {"256", 256, 256, 256, true},
    {"512", 512, 512, 512, true},
    {"1024", 1024, 1024, 1024, true},
    {"2048", 2048, 2048, 2048, true},
};
constexpr int kNumShapes = sizeof(kShapes) / sizeof(kShapes[0]);

// perf_anchors.md's column order.
const ggml_type kTypes[] = {GGML_TYPE_F32,  GGML_TYPE_F16,  GGML_TYPE_Q8_0, GGML_TYPE_Q5_0,
                            GGML_TYPE_Q5_1, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1};
constexpr int kNumTypes = sizeof(kTypes) / sizeof(kTypes[0]);
constexpr int kBlas = kNumTypes;  // column index of the OpenBLAS rows
constexpr int kPeakShape = -1;    // "shape" of the FMA peak rows (column 0)
const int kThreadCounts[] = {1, 2};

// "F32", "Q4_0", ...: ggml_type_name in upper case, as perf_anchors.md writes the types.
std::string TypeName(ggml_type type) {
  std::string name = ggml_type_name(type);
  for (char& c : name) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
  return name;
}

double Flops(const Shape& s) { return 2.0 * static_cast<double>(s.m) * s.n * s.k; }

// Row `row` of a deterministic pseudo-random matrix, values uniform in [-0.5, 0.5).
void FillRow(uint32_t seed, int64_t row, float* out, int64_t n) {
  uint32_t s = seed * 2654435761u + static_cast<uint32_t>(row) * 40503u + 1u;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    out[i] = static_cast<float>(s >> 8) / 16777216.0f - 0.5f;
  }
}

// Fills the 2-D tensor t (contiguous rows of ne0 elements) with FillRow data converted to its
// type. False for a type this benchmark does not handle.
bool Fill(ggml_tensor* t, uint32_t seed) {
  const int64_t ne0 = t->ne[0];
  std::vector<float> row(ne0);
  const ggml_cpu::QuantTypeTraits* q = ggml_cpu::GetQuantTypeTraits(t->type);
  for (int64_t i1 = 0; i1 < t->ne[1]; ++i1) {
    FillRow(seed, i1, row.data(), ne0);
    char* dst = static_cast<char*>(t->data) + i1 * t->nb[1];
    if (t->type == GGML_TYPE_F32) {
      memcpy(dst, row.data(), ne0 * sizeof(float));
    } else if (t->type == GGML_TYPE_F16) {
      ggml_fp16_t* d = reinterpret_cast<ggml_fp16_t*>(dst);
      for (int64_t i0 = 0; i0 < ne0; ++i0) d[i0] = ggml_fp32_to_fp16(row[i0]);
    } else if (q != nullptr) {
      q->from_float(row.data(), dst, ne0);
    } else {
      return false;
    }
  }
  return true;
}

// One persistent pool per thread count, created at the first row that needs it, freed in main.
std::map<int, ggml_threadpool*>& Pools() {
  static std::map<int, ggml_threadpool*> pools;
  return pools;
}

ggml_threadpool* Pool(int nth) {
  ggml_threadpool*& p = Pools()[nth];
  if (p == nullptr) p = ggml_threadpool_new(nth);
  return p;
}

// Context, one-node graph, plan and work buffer of one MulMat row.
class MulMatGraph {
 public:
  MulMatGraph(ggml_type type, const Shape& s) {
    const size_t mem = ggml_row_size(type, s.k) * s.m + sizeof(float) * (s.k * s.n + s.m * s.n) +
                       3 * ggml_tensor_overhead() + ggml_graph_overhead_custom(8) + (1 << 16);
    ctx_ = ggml_init({mem, nullptr, false});
    if (ctx_ == nullptr) return;
    ggml_tensor* a = ggml_new_tensor_2d(ctx_, type, s.k, s.m);
    ggml_tensor* b = ggml_new_tensor_2d(ctx_, GGML_TYPE_F32, s.k, s.n);
    if (a == nullptr || b == nullptr || !Fill(a, 1) || !Fill(b, 2)) return;
    ggml_tensor* dst = ggml_mul_mat(ctx_, a, b);
    graph_ = ggml_new_graph_custom(ctx_, 8);
    if (dst == nullptr || graph_ == nullptr || !ggml_build_forward_expand(graph_, dst)) {
      graph_ = nullptr;
    }
  }
  ~MulMatGraph() { ggml_free(ctx_); }
  MulMatGraph(const MulMatGraph&) = delete;
  MulMatGraph& operator=(const MulMatGraph&) = delete;

  // Plans for nth threads and allocates the work buffer; false with ggml_last_error() set.
  bool Plan(int nth) {
    if (graph_ == nullptr) return false;
    ggml_threadpool* tp = Pool(nth);
    if (tp == nullptr) return false;
    plan_ = ggml_graph_plan(graph_, nth, tp);
    work_.resize(plan_.work_size);
    plan_.work_data = work_.empty() ? nullptr : work_.data();
    return true;
  }
  bool Compute() { return ggml_graph_compute(graph_, &plan_) == GGML_STATUS_SUCCESS; }

 private:
  ggml_context* ctx_ = nullptr;
  ggml_cgraph* graph_ = nullptr;
  ggml_cplan plan_{};
  std::vector<uint8_t> work_;
};

void SetGflops(benchmark::State& state, const Shape& s) {
  state.counters["GFLOP/s"] = benchmark::Counter(
      Flops(s) * 1e-9 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_MulMat(benchmark::State& state, ggml_type type, Shape s, int nth) {
  MulMatGraph g(type, s);
  if (!g.Plan(nth) || !g.Compute()) {  // the first compute also warms caches and the pool
    state.SkipWithError(ggml_last_error());
    return;
  }
  for (auto _ : state) {
    if (!g.Compute()) {
      state.SkipWithError(ggml_last_error());
      return;
    }
  }
  SetGflops(state, s);
}

// cblas_sgemm on the same F32 data: row-major C[n][m] = B[n][:] . A[m][:], i.e. dst^T = b^T a
// in ggml terms (both operands read along K, as mul_mat does).
void BM_OpenBlas(benchmark::State& state, Shape s, int nth) {
  std::vector<float> a(s.k * s.m), b(s.k * s.n), c(s.m * s.n);
  for (int64_t i = 0; i < s.m; ++i) FillRow(1, i, &a[i * s.k], s.k);
  for (int64_t i = 0; i < s.n; ++i) FillRow(2, i, &b[i * s.k], s.k);
  openblas_set_num_threads(nth);
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  auto call = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, m, k, 1.0f, b.data(), k, a.data(), k,
                0.0f, c.data(), m);
  };
  call();  // warm up (OpenBLAS starts its threads lazily)
  for (auto _ : state) {
    call();
    benchmark::DoNotOptimize(c.data());
  }
  SetGflops(state, s);
  // OpenBLAS's workers keep spinning for ~2^28 cycles after a call; let them go idle before the
  // next row (which, with --benchmark_enable_random_interleaving, may be one of ours).
  if (nth > 1) std::this_thread::sleep_for(std::chrono::milliseconds(150));
}

// ---- FP32 FMA peak, measured in the same run --------------------------------------------------
// FmaPeakLoop (above) on the dispatched target: 12 accumulators x 2 * Lanes FLOP per step.
constexpr int kFmaAccumulators = 12;
constexpr int64_t kFmaSteps = 1 << 16;

struct FmaArgs {
  float sink[GGML_THREADPOOL_MAX_THREADS];
  size_t lanes[GGML_THREADPOOL_MAX_THREADS];
};

void FmaWork(void* arg, int ith, int /*nth*/) {
  FmaArgs* a = static_cast<FmaArgs*>(arg);
  a->sink[ith] = HWY_DYNAMIC_DISPATCH(ggml_cpu::FmaPeakLoop)(kFmaSteps, &a->lanes[ith]);
}

// Every thread of the pool runs the FMA loop; GFLOP/s summed over threads.
void BM_FmaPeak(benchmark::State& state, int nth) {
  ggml_threadpool* tp = Pool(nth);
  FmaArgs args{};
  for (auto _ : state) {
    if (tp == nullptr || !ggml_threadpool_run(tp, nth, FmaWork, &args)) {
      state.SkipWithError(ggml_last_error());
      return;
    }
    benchmark::DoNotOptimize(args.sink);
  }
  const double flops = 2.0 * static_cast<double>(args.lanes[0]) * kFmaAccumulators * kFmaSteps * nth;
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops * 1e-9 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// Which table cell a registered row name fills.
struct Cell {
  int column;  // index into kTypes, or kBlas
  int shape;   // index into kShapes
  int nth;
};

std::map<std::string, Cell>& CellsByName() {
  static std::map<std::string, Cell> cells;
  return cells;
}

// The console output, plus every row's GFLOP/s kept for the tables printed at the end.
class TableReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.error_occurred || r.run_type != Run::RT_Iteration) continue;
      auto cell = CellsByName().find(r.run_name.function_name);
      auto counter = r.counters.find("GFLOP/s");
      if (cell == CellsByName().end() || counter == r.counters.end()) continue;
      const Cell& c = cell->second;
      values_[{c.nth, c.shape, c.column}].push_back(counter->second.value);
    }
  }

  // Best over repetitions (on a shared machine other processes only ever slow a row down);
  // < 0 if the row did not run.
  double Get(int nth, int shape, int column) const {
    auto it = values_.find({nth, shape, column});
    if (it == values_.end() || it->second.empty()) return -1.0;
    return *std::max_element(it->second.begin(), it->second.end());
  }

  // Markdown table: one row per shape (squares or Whisper shapes), one column per type, then
  // OpenBLAS, F32 / OpenBLAS and the best type's share of the measured FMA peak of the target
  // the kernels dispatch to.
  void PrintTable(int nth, bool squares) const {
    const double peak = Get(nth, kPeakShape, 0);
    printf("\nGFLOP/s, %d thread%s, %s; %s FMA peak %.1f\n", nth, nth == 1 ? "" : "s",
           squares ? "square N x N x N (whisper-bench -w 2; compare perf_anchors.md)"
                   : "Whisper tiny shapes (M x K x N)",
           ggml_cpu_target_name(), peak);
    printf("| %s |", squares ? "N" : "shape");
    for (ggml_type t : kTypes) printf(" %s |", TypeName(t).c_str());
    printf(" OpenBLAS | F32/OpenBLAS | best/peak |\n|---|");
    for (int i = 0; i < kNumTypes + 3; ++i) printf("---|");
    printf("\n");
    for (int si = 0; si < kNumShapes; ++si) {
      if (kShapes[si].square != squares) continue;
      printf("| %s |", kShapes[si].name);
      for (int col = 0; col <= kBlas; ++col) {
        const double v = Get(nth, si, col);
        if (v < 0) {
          printf(" - |");
        } else {
          printf(" %.1f |", v);
        }
      }
      const double f32 = Get(nth, si, 0), blas = Get(nth, si, kBlas);
      if (f32 > 0 && blas > 0) {
        printf(" %.2f |", f32 / blas);
      } else {
        printf(" - |");
      }
      double best = -1.0;
      for (int col = 0; col < kNumTypes; ++col) best = std::max(best, Get(nth, si, col));
      if (best > 0 && peak > 0) {
        printf(" %.0f%% |\n", 100.0 * best / peak);
      } else {
        printf(" - |\n");
      }
    }
  }

 private:
  std::map<std::vector<int>, std::vector<double>> values_;  // {nth, shape, column} -> GFLOP/s
};

void Register(const std::string& name, Cell cell, benchmark::internal::Benchmark* b) {
  b->UseRealTime()->Unit(benchmark::kMillisecond);
  CellsByName()[name] = cell;
}

void RegisterAll() {
  for (int nth : kThreadCounts) {
    const std::string name = "FmaPeak/threads:" + std::to_string(nth);
    Register(name, {0, kPeakShape, nth},
             benchmark::RegisterBenchmark(name.c_str(), BM_FmaPeak, nth));
  }
  for (int nth : kThreadCounts) {
    for (int si = 0; si < kNumShapes; ++si) {
      for (int ti = 0; ti < kNumTypes; ++ti) {
        const std::string name = "MulMat/" + TypeName(kTypes[ti]) + "/" + RowName(kShapes[si]) +
                                 "/threads:" + std::to_string(nth);
        Register(name, {ti, si, nth},
                 benchmark::RegisterBenchmark(name.c_str(), BM_MulMat, kTypes[ti], kShapes[si], nth));
      }
    }
  }
  for (int nth : kThreadCounts) {
    for (int si = 0; si < kNumShapes; ++si) {
      const std::string name =
          "OpenBLAS/F32/" + RowName(kShapes[si]) + "/threads:" + std::to_string(nth);
      Register(name, {kBlas, si, nth},
               benchmark::RegisterBenchmark(name.c_str(), BM_OpenBlas, kShapes[si], nth));
    }
  }
}

// True when OpenBLAS's DYNAMIC_ARCH picked a core whose sgemm is AVX2 at best (Debian's
// 0.3.21 maps CPUs it does not know, e.g. AMD family 1Ah, to Haswell).
bool OpenBlasUsesAvx2Kernels() {
  std::string core = openblas_get_corename();
  for (char& c : core) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return core == "haswell" || core == "zen" || core == "sandybridge" || core == "prescott";
}

void AddContext() {
  benchmark::AddCustomContext("ggml_cpu_target", ggml_cpu_target_name());
  std::string targets;
  for (int64_t t : ggml_cpu::CompiledAndSupportedTargets()) {
    if (!targets.empty()) targets += ",";
    targets += hwy::TargetName(t);
  }
  benchmark::AddCustomContext("ggml_cpu_targets_available", targets);
  benchmark::AddCustomContext("openblas_config", openblas_get_config());
}

}  // namespace

int main(int argc, char** argv) {
  // Default 0.2 s per row; a --benchmark_min_time given on the command line comes later and wins.
  std::vector<char*> args(argv, argv + argc);
  char min_time[] = "--benchmark_min_time=0.2";
  args.insert(args.begin() + 1, min_time);
  int n_args = static_cast<int>(args.size());
  benchmark::Initialize(&n_args, args.data());
  if (benchmark::ReportUnrecognizedArguments(n_args, args.data())) return 1;
  AddContext();
  RegisterAll();
  TableReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  for (int nth : kThreadCounts) {
    reporter.PrintTable(nth, /*squares=*/false);
    reporter.PrintTable(nth, /*squares=*/true);
  }
  printf("\nOpenBLAS kernels: %s (openblas_get_corename)\n", openblas_get_corename());
  if (strncmp(ggml_cpu_target_name(), "AVX3", 4) == 0 && OpenBlasUsesAvx2Kernels()) {
    printf("note: OpenBLAS runs AVX2 kernels on this AVX-512 CPU (its build predates the CPU);\n"
           "      OPENBLAS_CORETYPE=SkylakeX in the environment selects its AVX-512 sgemm.\n");
  }
  benchmark::Shutdown();
  for (auto& p : Pools()) ggml_threadpool_free(p.second);
  return 0;
}
#endif  // HWY_ONCE
