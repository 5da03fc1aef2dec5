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
// -p/--profile (ours: after the timings, each timed phase's time per op and per thread, inside
// the op and waiting at the barrier after it, from cpu/graph_compute.h's ggml_cpu_profile: run
// with -t 1 and -t 2 to see which ops do not halve), -h/--help.
// Exit status: 0, 1 on a model or compute error, 2 on a usage error.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "apps/common/bazel_run.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "cpu/graph_compute.h"
#include "ggml/ggml.h"
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
  bool profile = false;
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
      "                                    2 - ggml_mul_mat\n"
      "  -p,       --profile     [%-7s] -w 0: time per op and thread of each timed phase\n\n",
      argv0, std::min(4u, std::max(1u, std::thread::hardware_concurrency())),
      "models/ggml-tiny.en.bin", 0, "false");
}

// Returns 0 on success, 2 (after printing why) on a usage error, -1 for --help.
int Parse(int argc, char** argv, Params* p) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") return -1;
    if (arg == "-p" || arg == "--profile") {
      p->profile = true;
      continue;
    }
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
  // With --profile: the graph time of each phase (encode, decode, batchd, prompt).
  ggml_cpu_profile* profiles = nullptr;
};

// Points the state's profile at phase `i`'s, when profiling.
void ProfilePhase(InferenceState& state, const Timings& t, int i) {
  if (t.profiles != nullptr) state.set_profile(&t.profiles[i]);
}

// One whisper_decode: n_tokens zeros (token id 0, as whisper-bench's memset) at n_past.
absl::Status TimedDecode(InferenceState& state, const std::vector<int32_t>& tokens, int n_tokens,
                         int n_past, Timings* t) {
  ProfilePhase(state, *t, n_tokens == 1 ? 1 : (n_tokens < 16 ? 2 : 3));
  const auto t0 = Clock::now();
  absl::Status s = state.Decode(0, tokens.data(), n_tokens, n_past);
  const double ms = Ms(t0, Clock::now());
  Bucket& b = n_tokens == 1 ? t->decode : (n_tokens < 16 ? t->batchd : t->prompt);
  b.ms += ms;
  b.n += n_tokens == 1 ? 1 : n_tokens;
  return s;
}

absl::Status TimedEncode(InferenceState& state, const std::vector<float>& mel, int n_frames,
                         Timings* t) {
  ProfilePhase(state, *t, 0);
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

// One phase's profile: per op (most time first) the nodes run, each thread's time inside the op
// and waiting at the barrier after it; then the totals, the time the threads spent waiting, and
// the phase's time outside graph computation (graph building and placement).
void PrintProfile(const char* name, const Bucket& b, const ggml_cpu_profile& prof, int n_threads) {
  const int nth = std::min(n_threads, GGML_CPU_PROFILE_MAX_THREADS);
  auto ms = [](int64_t ns) { return static_cast<double>(ns) * 1e-6; };
  std::vector<int> ops;
  for (int op = 0; op < GGML_OP_COUNT; ++op) {
    if (prof.n_nodes[op] > 0) ops.push_back(op);
  }
  auto thread0 = [&](int op) { return prof.busy_ns[op][0] + prof.wait_ns[op][0]; };
  std::sort(ops.begin(), ops.end(), [&](int a, int b) { return thread0(a) > thread0(b); });
  std::fprintf(stderr, "\nprofile %s: %d run(s), %lld graph computations, %.2f ms in them, %.2f ms outside\n",
               name, b.n, static_cast<long long>(prof.n_computes), ms(prof.wall_ns), b.ms - ms(prof.wall_ns));
  std::fprintf(stderr, "  %-15s %8s %7s", "op", "nodes", "share");
  for (int ith = 0; ith < nth; ++ith) std::fprintf(stderr, "   busy[%d] ms   wait[%d] ms", ith, ith);
  std::fprintf(stderr, "\n");
  int64_t busy[GGML_CPU_PROFILE_MAX_THREADS] = {}, wait[GGML_CPU_PROFILE_MAX_THREADS] = {};
  for (int op : ops) {
    std::fprintf(stderr, "  %-15s %8lld %6.1f%%", ggml_op_name(static_cast<ggml_op>(op)),
                 static_cast<long long>(prof.n_nodes[op]),
                 prof.wall_ns > 0 ? 100.0 * static_cast<double>(thread0(op)) / static_cast<double>(prof.wall_ns) : 0.0);
    for (int ith = 0; ith < nth; ++ith) {
      std::fprintf(stderr, " %12.2f %12.2f", ms(prof.busy_ns[op][ith]), ms(prof.wait_ns[op][ith]));
      busy[ith] += prof.busy_ns[op][ith];
      wait[ith] += prof.wait_ns[op][ith];
    }
    std::fprintf(stderr, "\n");
  }
  std::fprintf(stderr, "  %-15s %8s %7s", "all", "", "");
  int64_t waited = 0;
  for (int ith = 0; ith < nth; ++ith) {
    std::fprintf(stderr, " %12.2f %12.2f", ms(busy[ith]), ms(wait[ith]));
    waited += wait[ith];
  }
  std::fprintf(stderr, "\n  waiting at barriers: %.2f thread-ms, %.1f%% of %d threads x %.2f ms\n", ms(waited),
               prof.wall_ns > 0 ? 100.0 * static_cast<double>(waited) / (static_cast<double>(prof.wall_ns) * nth) : 0.0,
               nth, ms(prof.wall_ns));
}

// whisper.cpp's bench sequence on a zero mel (whisper_set_mel(ctx, nullptr, 0, n_mels)): two
// warm-up rounds (encoder, a 256-token prompt, one token), then the timed runs into *t: one
// encoder window, 256 single-token decodes, 64 five-token batches, 16 prompts of 256 tokens.
// *run_ms: the timed runs' wall time. Errors: the first failing Encode or Decode's.
absl::Status RunBenchSequence(InferenceState& state, const WhisperHparams& hp, Timings* t, double* run_ms) {
  const int n_frames = 2 * hp.n_audio_ctx;
  const std::vector<float> mel(static_cast<size_t>(hp.n_mels) * n_frames, 0.0f);
  const std::vector<int32_t> tokens(512, 0);
  Timings warm;
  absl::Status s;
  for (int i = 0; i < 2 && s.ok(); ++i) {  // heat encoder, prompt and text generation, twice
    s = TimedEncode(state, mel, n_frames, &warm);
    if (s.ok()) s = TimedDecode(state, tokens, 256, 0, &warm);
    if (s.ok()) s = TimedDecode(state, tokens, 1, 256, &warm);
  }
  const auto t_run = Clock::now();
  if (s.ok()) s = TimedEncode(state, mel, n_frames, t);
  for (int i = 0; i < 256 && s.ok(); ++i) s = TimedDecode(state, tokens, 1, i, t);
  for (int i = 0; i < 64 && s.ok(); ++i) s = TimedDecode(state, tokens, 5, 0, t);
  for (int i = 0; i < 16 && s.ok(); ++i) s = TimedDecode(state, tokens, 256, 0, t);
  state.set_profile(nullptr);
  *run_ms = Ms(t_run, Clock::now());
  return s;
}

// whisper_print_timings' lines, the encoder's share of the FMA peak and, with -p, each phase's
// profile.
void PrintReport(const Params& p, const WhisperHparams& hp, const Timings& t,
                 const std::vector<ggml_cpu_profile>& profiles, double t_load_ms, double t_total_ms) {
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
  if (p.profile) {
    const char* names[] = {"encode", "decode", "batchd", "prompt"};
    const Bucket* buckets[] = {&t.encode, &t.decode, &t.batchd, &t.prompt};
    for (int i = 0; i < 4; ++i) PrintProfile(names[i], *buckets[i], profiles[i], p.n_threads);
  }
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
  auto state_or = InferenceState::Create(model, 1, p.n_threads);
  if (!state_or.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(state_or.status().message()).c_str());
    return 1;
  }
  InferenceState& state = **state_or;
  const WhisperHparams& hp = model.hparams();
  std::fprintf(stderr, "whisper_model_load: %s: type %s, %s, %d tensors, model buffer %.2f MB\n",
               model.path().c_str(), model.type_name(), FtypeName(hp.ftype), model.n_tensors(),
               model.weights_buffer_size() / 1e6);
  std::fprintf(stderr,
               "system_info: n_threads = %d / %u | SIMD = %s (Highway, dispatched at run time)\n\n",
               p.n_threads, std::thread::hardware_concurrency(), ggml_cpu_target_name());

  Timings t;
  std::vector<ggml_cpu_profile> profiles(p.profile ? 4 : 0);
  for (ggml_cpu_profile& prof : profiles) std::memset(&prof, 0, sizeof(prof));
  if (p.profile) t.profiles = profiles.data();
  double run_ms = 0.0;
  const absl::Status s = RunBenchSequence(state, hp, &t, &run_ms);
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  PrintReport(p, hp, t, profiles, t_load_ms, t_load_ms + run_ms);
  return 0;
}

}  // namespace
}  // namespace whisper

int main(int argc, char** argv) {
  // `bazel run` starts binaries in their runfiles tree; relative paths on the command line mean
  // the directory the user ran bazel from.
  if (const absl::Status st = whisper::ChdirToBuildWorkingDirectory(); !st.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  return whisper::Run(argc, argv);
}
