// The regression gate's timed benchmarks (tools/gate/gate.py runs them for the baseline and the
// tree, interleaved): the workloads of tools/gate/gate_graphs.h on one thread, through
// ggml_graph_compute, on the target GGML_CPU_TARGET allows (the context line `simd_target` names
// it). Kept short (a few ms per iteration) so that many repetitions fit in the gate's budget.
//
//   bazel run -c opt //tools/gate:gate_benchmark -- --benchmark_repetitions=3
//
// Counter GFLOPs: 2 * multiply-adds per CPU second (0 for Softmax). Iterations are sized by CPU
// time, the measure the gate compares (one thread; see tools/gate/gate.py).
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "benchmark/benchmark.h"
#include "kernels/dispatch.h"
#include "tools/gate/gate_graphs.h"

namespace gate {
namespace {

struct Case {
  Workload workload;
  int64_t n_ctx;
};

// n_ctx per workload: a few ms per iteration on one AVX-512 core.
constexpr Case kCases[] = {
    {Workload::kMulMatF16, 256},
    {Workload::kMulMatQ8_0, 64},
    {Workload::kSoftmax, 256},
    {Workload::kEncoderLayer, 128},
};

// Test only (tools/gate/gate.py --simulate-slowdown): GGML_GATE_TEST_EXTRA_WORK=f in [0, 1]
// makes each iteration compute 1 + f times on average (one extra Compute whenever the owed
// fraction reaches 1), a known slowdown of the tree's side without touching the library. Unset
// or unparsable: 0.
double ExtraWork() {
  const char* env = std::getenv("GGML_GATE_TEST_EXTRA_WORK");
  if (env == nullptr) return 0.0;
  char* end = nullptr;
  const double f = std::strtod(env, &end);
  if (end == env || !(f > 0.0)) return 0.0;
  return f > 1.0 ? 1.0 : f;
}

void BM_Gate(benchmark::State& state, Case c) {
  absl::StatusOr<std::unique_ptr<GateGraph>> g = GateGraph::Create(c.workload, c.n_ctx, 1);
  if (!g.ok()) return state.SkipWithError(g.status().ToString().c_str());
  absl::Status s = (*g)->Compute();  // warm up: first-touch of the work buffer and outputs
  if (!s.ok()) return state.SkipWithError(s.ToString().c_str());
  const double extra = ExtraWork();
  double owed = 0.0;
  for (auto _ : state) {
    s = (*g)->Compute();
    owed += extra;
    if (owed >= 1.0 && s.ok()) {  // test-only slowdown, see ExtraWork()
      owed -= 1.0;
      s = (*g)->Compute();
    }
    if (!s.ok()) return state.SkipWithError(s.ToString().c_str());
  }
  state.counters["GFLOPs"] = benchmark::Counter(WorkloadFlops(c.workload, c.n_ctx) * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(ggml_cpu_target_name());
}

}  // namespace
}  // namespace gate

int main(int argc, char** argv) {
  for (const gate::Case& c : gate::kCases) {
    const std::string name =
        std::string(gate::WorkloadName(c.workload)) + "/n_ctx:" + std::to_string(c.n_ctx);
    benchmark::RegisterBenchmark(name.c_str(), gate::BM_Gate, c)->Unit(benchmark::kMicrosecond);
  }
  benchmark::AddCustomContext("simd_target", ggml_cpu_target_name());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
