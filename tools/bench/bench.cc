// `bazel run -c opt //tools:bench -- -m models/ggml-tiny.en.bin -t 2`: whisper.cpp's whisper-bench
// (examples/bench/bench.cpp, whisper_bench_full) on this runtime. It feeds the encoder an empty
// (all-zero) mel, warms up twice (each time: one encode, one 256-token prompt, one single-token
// decode at n_past 256), then times
//   1 encode, 256 single-token decodes at n_past 0..255, 64 five-token batches and 16 prompts of
//   256 tokens (all at n_past 0),
// and prints whisper_print_timings-style lines; then the FMA peak measured on as many threads
// and the timed encode's fraction of it (tools/bench/roofline.h). As in whisper.cpp, decode counts runs while
// batchd and prompt count tokens, so their "per run" figures are per token; decodes of fewer than
// 16 tokens but more than one are "batchd", 16 or more are "prompt" (whisper.cpp L2974-2983).
//
// Flags: -m/--model FILE (default models/ggml-tiny.en.bin), -t/--threads N (default
// min(4, hardware threads)), -w/--what N (0: the encoder and decoder timings above; 1:
// whisper_bench_memcpy; 2: whisper_bench_ggml_mul_mat, both from whisper.h, no model loaded),
// -h/--help.
// Exit status: 0, 1 on a model or compute error, 2 on a usage error.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "kernels/dispatch.h"
#include "tools/bench/roofline.h"
#include "whisper/model.h"
#include "whisper/state.h"
#include "whisper/whisper.h"

namespace whisper {
namespace {

using Clock = std::chrono::steady_clock;

struct Params {
  std::string model = "models/ggml-tiny.en.bin";
  int n_threads = 0;
  int what = 0;
};

void Usage(const char* argv0) {
  std::fprintf(
      stderr,
      "\nusage: %s [options]\n\noptions:\n"
      "  -h,       --help        show this help message and exit\n"
      "  -t N,     --threads N   [%-7d] number of threads to use during computation\n"
      "  -m FNAME, --model FNAME [%-7s] model path\n"
      "  -w N,     --what N      [%-7d] what to benchmark:\n"
      "                                    0 - whisper encoder and decoder\n"
      "                                    1 - memcpy\n"
      "                                    2 - ggml_mul_mat\n\n",
      argv0, std::min(4u, std::max(1u, std::thread::hardware_concurrency())),
      "models/ggml-tiny.en.bin", 0);
}

// Returns 0 on success, 2 (after printing why) on a usage error, -1 for --help.
int Parse(int argc, char** argv, Params* p) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") return -1;
    const bool takes_value = arg == "-m" || arg == "--model" || arg == "-t" || arg == "--threads" ||
                             arg == "-w" || arg == "--what";
    if (!takes_value) {
      std::fprintf(stderr, "error: unknown argument: %s\n", arg.c_str());
      return 2;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "error: %s needs a value\n", arg.c_str());
      return 2;
    }
    const std::string value = argv[++i];
    if (arg == "-m" || arg == "--model") {
      p->model = value;
    } else if (arg == "-t" || arg == "--threads") {
      if (!absl::SimpleAtoi(value, &p->n_threads) || p->n_threads < 1) {
        std::fprintf(stderr, "error: -t takes a thread count >= 1, got '%s'\n", value.c_str());
        return 2;
      }
    } else if (!absl::SimpleAtoi(value, &p->what) || p->what < 0 || p->what > 2) {
      std::fprintf(stderr, "error: unknown benchmark: -w %s (0 encoder and decoder, 1 memcpy, 2 ggml_mul_mat)\n",
                   value.c_str());
      return 2;
    }
  }
  return 0;
}

double Ms(Clock::time_point t0, Clock::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

// Time and count per whisper.cpp timing class.
struct Bucket {
  double ms = 0.0;
  int n = 0;
};

struct Timings {
  Bucket encode, decode, batchd, prompt;
};

// One whisper_decode: n_tokens zeros (token id 0, as whisper-bench's memset) at n_past.
absl::Status TimedDecode(WhisperState& state, const std::vector<int32_t>& tokens, int n_tokens,
                         int n_past, Timings* t) {
  const auto t0 = Clock::now();
  absl::Status s = state.Decode(0, tokens.data(), n_tokens, n_past);
  const double ms = Ms(t0, Clock::now());
  Bucket& b = n_tokens == 1 ? t->decode : (n_tokens < 16 ? t->batchd : t->prompt);
  b.ms += ms;
  b.n += n_tokens == 1 ? 1 : n_tokens;
  return s;
}

absl::Status TimedEncode(WhisperState& state, const std::vector<float>& mel, int n_frames,
                         Timings* t) {
  const auto t0 = Clock::now();
  absl::Status s = state.Encode(mel.data(), n_frames, 0);
  t->encode.ms += Ms(t0, Clock::now());
  t->encode.n += 1;
  return s;
}

void PrintRuns(const char* name, const Bucket& b) {
  std::fprintf(stderr, "whisper_print_timings: %8s time = %8.2f ms / %5d runs (%8.2f ms per run)\n",
               name, b.ms, b.n, b.n > 0 ? b.ms / b.n : 0.0);
}

int Run(int argc, char** argv) {
  Params p;
  const int parsed = Parse(argc, argv, &p);
  if (parsed != 0) {
    Usage(argv[0]);
    return parsed < 0 ? 0 : 2;
  }
  if (p.n_threads == 0) {
    p.n_threads = static_cast<int>(std::min(4u, std::max(1u, std::thread::hardware_concurrency())));
  }
  if (p.what == 1) return whisper_bench_memcpy(p.n_threads) == 0 ? 0 : 1;
  if (p.what == 2) return whisper_bench_ggml_mul_mat(p.n_threads) == 0 ? 0 : 1;
  const auto t_start = Clock::now();
  auto model_or = WhisperModel::Load(p.model);
  if (!model_or.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(model_or.status().message()).c_str());
    return 1;
  }
  const WhisperModel& model = **model_or;
  const double t_load_ms = Ms(t_start, Clock::now());
  auto state_or = WhisperState::Create(model, 1, p.n_threads);
  if (!state_or.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(state_or.status().message()).c_str());
    return 1;
  }
  WhisperState& state = **state_or;
  const WhisperHparams& hp = model.hparams();
  std::fprintf(stderr, "whisper_model_load: %s: type %s, %s, %d tensors, model buffer %.2f MB\n",
               model.path().c_str(), model.type_name(), FtypeName(hp.ftype), model.n_tensors(),
               model.weights_buffer_size() / 1e6);
  std::fprintf(stderr,
               "system_info: n_threads = %d / %u | SIMD = %s (Highway, dispatched at run time)\n\n",
               p.n_threads, std::thread::hardware_concurrency(), ggml_cpu_target_name());

  const int n_frames = 2 * hp.n_audio_ctx;  // whisper_set_mel(ctx, nullptr, 0, n_mels): zeros
  const std::vector<float> mel(static_cast<size_t>(hp.n_mels) * n_frames, 0.0f);
  const std::vector<int32_t> tokens(512, 0);
  Timings warm, t;
  absl::Status s;
  for (int i = 0; i < 2 && s.ok(); ++i) {  // heat encoder, prompt and text generation, twice
    s = TimedEncode(state, mel, n_frames, &warm);
    if (s.ok()) s = TimedDecode(state, tokens, 256, 0, &warm);
    if (s.ok()) s = TimedDecode(state, tokens, 1, 256, &warm);
  }
  const auto t_run = Clock::now();
  if (s.ok()) s = TimedEncode(state, mel, n_frames, &t);
  for (int i = 0; i < 256 && s.ok(); ++i) s = TimedDecode(state, tokens, 1, i, &t);
  for (int i = 0; i < 64 && s.ok(); ++i) s = TimedDecode(state, tokens, 5, 0, &t);
  for (int i = 0; i < 16 && s.ok(); ++i) s = TimedDecode(state, tokens, 256, 0, &t);
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  const double t_total_ms = t_load_ms + Ms(t_run, Clock::now());

  std::fprintf(stderr, "whisper_print_timings:     load time = %8.2f ms\n", t_load_ms);
  std::fprintf(stderr, "whisper_print_timings:     fallbacks = %3d p / %3d h\n", 0, 0);
  std::fprintf(stderr, "whisper_print_timings:      mel time = %8.2f ms\n", 0.0);
  PrintRuns("sample", Bucket());
  PrintRuns("encode", t.encode);
  PrintRuns("decode", t.decode);
  PrintRuns("batchd", t.batchd);
  PrintRuns("prompt", t.prompt);
  std::fprintf(stderr, "whisper_print_timings:    total time = %8.2f ms\n", t_total_ms);

  // The encoder's FLOP efficiency: matmul/conv FLOPs of the timed window against the FMA peak
  // measured now on as many threads.
  const bench::FmaPeak peak = bench::MeasureFmaPeak(p.n_threads);
  const double flops = bench::EncoderFlops(hp, hp.n_audio_ctx);
  const double enc_gflops = t.encode.ms > 0 ? flops / (t.encode.ms * 1e-3) / 1e9 : 0.0;
  std::fprintf(stderr,
               "\nfma_peak: %.1f GFLOP/s on %d thread(s) (%s, %d f32 lanes, 12 FMA chains per thread)\n"
               "encoder: %.2f GFLOP per window in %.2f ms = %.1f GFLOP/s = %.1f%% of the FMA peak\n",
               peak.gflops, p.n_threads, peak.target, peak.lanes, flops / 1e9, t.encode.ms, enc_gflops,
               peak.gflops > 0 ? 100.0 * enc_gflops / peak.gflops : 0.0);
  return 0;
}

}  // namespace
}  // namespace whisper

int main(int argc, char** argv) {
  // `bazel run` starts binaries in their runfiles tree; relative paths on the command line mean
  // the directory the user ran bazel from.
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY"); dir != nullptr && chdir(dir) != 0) {
    std::fprintf(stderr, "error: cannot change to BUILD_WORKING_DIRECTORY '%s'\n", dir);
    return 1;
  }
  return whisper::Run(argc, argv);
}
