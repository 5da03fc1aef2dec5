// The cost of creating a tensor in a context arena (ggml_new_tensor_1d, the arena reset once
// per batch) against malloc + free of the same bytes (the tensor struct plus its data, the
// struct zeroed as ggml zeroes it). The batch mixes sizes from 16 B to 64 KiB of data, like a
// graph's mix of biases, activations and scratch tensors.
//
//   bazel run -c opt //ggml:context_benchmark
//
// BM_ContextVsMalloc times both on the same batch and reports
// `malloc_over_context` = (malloc + free time) / (arena time).
#include <stdlib.h>
#include <string.h>

#include <chrono>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "ggml/ggml.h"

namespace {

constexpr int kBatch = 256;

// F32 element counts for one batch: log-uniform between 4 and 16384 elements, fixed seed.
const std::vector<int64_t>& BatchSizes() {
  static const std::vector<int64_t> sizes = [] {
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> log2(2, 14);
    std::vector<int64_t> s(kBatch);
    for (int64_t& ne : s) ne = int64_t{1} << log2(rng);
    return s;
  }();
  return sizes;
}

size_t ArenaBytesForBatch() {
  size_t total = 0;
  for (int64_t ne : BatchSizes()) total += ggml_tensor_overhead() + GGML_PAD(ne * sizeof(float), GGML_MEM_ALIGN);
  return total;
}

// One batch in the arena; returns false if any creation failed (it never should).
bool ArenaBatch(ggml_context* ctx) {
  bool ok = true;
  for (int64_t ne : BatchSizes()) {
    ggml_tensor* t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, ne);
    benchmark::DoNotOptimize(t);
    ok &= t != nullptr;
  }
  ggml_reset(ctx);
  return ok;
}

void MallocBatch(std::vector<void*>& ptrs) {
  const std::vector<int64_t>& sizes = BatchSizes();
  for (int i = 0; i < kBatch; ++i) {
    ptrs[i] = malloc(sizeof(ggml_tensor) + sizes[i] * sizeof(float));
    if (ptrs[i] != nullptr) memset(ptrs[i], 0, sizeof(ggml_tensor));
    benchmark::DoNotOptimize(ptrs[i]);
  }
  benchmark::ClobberMemory();
  for (int i = 0; i < kBatch; ++i) free(ptrs[i]);
}

void BM_ContextNewTensor1d(benchmark::State& state) {
  ggml_context* ctx = ggml_init({ArenaBytesForBatch(), nullptr, false});
  if (ctx == nullptr) {
    state.SkipWithError(ggml_last_error());
    return;
  }
  for (auto _ : state) {
    if (!ArenaBatch(ctx)) {
      state.SkipWithError(ggml_last_error());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  ggml_free(ctx);
}
BENCHMARK(BM_ContextNewTensor1d);

void BM_MallocFree(benchmark::State& state) {
  std::vector<void*> ptrs(kBatch);
  for (auto _ : state) MallocBatch(ptrs);
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_MallocFree);

// Both on the same batches, interleaved so that they see the same machine state. The reported
// time is the arena's; the counter is the ratio.
void BM_ContextVsMalloc(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  ggml_context* ctx = ggml_init({ArenaBytesForBatch(), nullptr, false});
  if (ctx == nullptr) {
    state.SkipWithError(ggml_last_error());
    return;
  }
  std::vector<void*> ptrs(kBatch);
  double arena_seconds = 0.0;
  double malloc_seconds = 0.0;
  for (auto _ : state) {
    const Clock::time_point t0 = Clock::now();
    const bool ok = ArenaBatch(ctx);
    const Clock::time_point t1 = Clock::now();
    MallocBatch(ptrs);
    const Clock::time_point t2 = Clock::now();
    if (!ok) {
      state.SkipWithError(ggml_last_error());
      break;
    }
    const double arena = std::chrono::duration<double>(t1 - t0).count();
    arena_seconds += arena;
    malloc_seconds += std::chrono::duration<double>(t2 - t1).count();
    state.SetIterationTime(arena);
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.counters["malloc_over_context"] = arena_seconds > 0 ? malloc_seconds / arena_seconds : 0.0;
  ggml_free(ctx);
}
BENCHMARK(BM_ContextVsMalloc)->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
