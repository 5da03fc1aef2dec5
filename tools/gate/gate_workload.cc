// The regression gate's deterministic signal: a fixed small workload (every workload of
// tools/gate/gate_graphs.h at n_ctx 32, one thread, computed twice) whose instruction count
// tools/gate/gate.py measures with
//
//   GGML_CPU_TARGET=AVX2 valgrind --tool=callgrind --toggle-collect=gate_workload_run \
//       bazel-bin/tools/gate/gate_workload
//
// Only gate_workload_run() is counted: graph construction, input filling, process start-up and
// the dynamic loader are not. The target must be pinned (GGML_CPU_TARGET) because the count
// depends on it; valgrind 3.19 does not emulate AVX-512, so AVX2 is the highest target both a
// native and a callgrind run dispatch to. Prints the target and one checksum per workload
// (identical between runs of one build). Exit status: 0, or 1 if a graph cannot be built or
// computed (the message names it).
#include <cstdio>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "kernels/dispatch.h"
#include "tools/gate/gate_graphs.h"

namespace {

constexpr int64_t kNCtx = 32;
constexpr int kRuns = 2;

}  // namespace

// The counted region (callgrind --toggle-collect matches this unmangled name).
extern "C" __attribute__((noinline)) int gate_workload_run(gate::GateGraph* const* graphs, int n) {
  for (int run = 0; run < kRuns; ++run) {
    for (int i = 0; i < n; ++i) {
      if (!graphs[i]->Compute().ok()) return i;
    }
  }
  return n;
}

int main() {
  const gate::Workload all[] = {gate::Workload::kMulMatF16, gate::Workload::kMulMatQ8_0,
                                gate::Workload::kSoftmax, gate::Workload::kEncoderLayer};
  std::printf("simd_target %s\n", ggml_cpu_target_name());  // applies GGML_CPU_TARGET first
  std::vector<std::unique_ptr<gate::GateGraph>> owned;
  std::vector<gate::GateGraph*> graphs;
  for (gate::Workload w : all) {
    absl::StatusOr<std::unique_ptr<gate::GateGraph>> g = gate::GateGraph::Create(w, kNCtx, 1);
    if (!g.ok()) {
      std::fprintf(stderr, "gate_workload: %s\n", g.status().ToString().c_str());
      return 1;
    }
    graphs.push_back(g->get());
    owned.push_back(std::move(*g));
  }
  const int n = static_cast<int>(graphs.size());
  const int done = gate_workload_run(graphs.data(), n);
  if (done != n) {
    std::fprintf(stderr, "gate_workload: %s failed: %s\n", gate::WorkloadName(all[done]),
                 graphs[done]->Compute().ToString().c_str());
    return 1;
  }
  for (int i = 0; i < n; ++i) {
    std::printf("%s checksum %.6e\n", gate::WorkloadName(all[i]), graphs[i]->OutputChecksum());
  }
  return 0;
}
