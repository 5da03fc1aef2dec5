// The two halves of the encoder's FLOP efficiency that //tools:bench prints: the machine's
// measured FMA peak and the encoder's FLOP count per window.
#ifndef GGML_WHISPER_TOOLS_BENCH_ROOFLINE_H_
#define GGML_WHISPER_TOOLS_BENCH_ROOFLINE_H_

#include <cstdint>

#include "whisper/model_file.h"

namespace whisper::bench {

struct FmaPeak {
  double gflops = 0.0;   // all threads together, best of the repeats
  int lanes = 0;         // f32 lanes per vector of the dispatched target
  const char* target = "";  // the dispatched Highway target (ggml_cpu_target_name)
};

// The f32 FMA throughput this CPU sustains: each of `n_threads` threads runs 12 independent
// chains of vector FMAs (enough to cover the FMA latency on 2 pipes: 4 cycles x 2 = 8 < 12)
// on the dispatched target for about `seconds`, all at once; 2 FLOPs per lane per FMA. The best
// of 3 repeats. The method of the figure (165 GFLOP/s per core on AVX-512).
// n_threads < 1 counts as 1.
FmaPeak MeasureFmaPeak(int n_threads, double seconds = 0.25);

// Multiply-add FLOPs (2 per multiply-add) of one encoder pass over n_ctx positions
// (2 * n_ctx mel frames): the conv stem (3-tap conv n_mels -> n_state over 2 n_ctx frames, then
// 3-tap stride-2 conv n_state -> n_state), and per layer the Q, K, V, out projections
// (8 n_ctx d^2), Q K^T and scores x V (4 n_ctx^2 d) and the MLP (16 n_ctx d^2); elementwise ops
// (norms, GELU, softmax, adds) are not counted. For tiny.en (n_ctx 1500, d 384, 4 layers,
// 80 mels): 36,937,728,000.
double EncoderFlops(const WhisperHparams& hp, int n_ctx);

}  // namespace whisper::bench

#endif  // GGML_WHISPER_TOOLS_BENCH_ROOFLINE_H_
