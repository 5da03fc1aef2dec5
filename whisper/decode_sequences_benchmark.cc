// Decoder step time of B independent sequences on a real model (default models/ggml-tiny.en.bin):
// one InferenceState::DecodeSequences step of B sequences, each at its own n_past, against the
// same B tokens decoded as B separate single-sequence steps (Decode), and against DecodeBatch (B
// beams of one window, one cross-attention product), for B = 1, 2, 4, 8, 16 and 40. Up to 8
// sequences each have their own window; beyond, the B sequences share 8 windows in runs of
// consecutive sequences (B = 40: 8 windows x 5 beams, a beam-5 step of `--batch-size 8`). Every
// product of the step is one matvec-mode product over its B columns (whisper/decoder.h).
// The three are measured interleaved, round after round, in one run, and each figure is the
// median over the rounds, so a busy machine shifts all three alike; the ratios are printed, of
// wall time and of process CPU time (CLOCK_PROCESS_CPUTIME_ID: with 1 thread, the time the step
// really ran, whatever else the machine runs; with 2, it includes the barrier spins).
//   bazel run -c opt //whisper:decode_sequences_benchmark -- [n_threads=2] [rounds=40] [profile=0]
//       [model=models/ggml-tiny.en.bin] [max_b=40]
// profile=1 then prints, per op, the nodes and thread-0 busy and barrier-wait time of one step of
// max_b sequences and of max_b beams (cpu/graph_compute.h ggml_cpu_profile).
// The mel of each window is constant (-0.5 + 0.01 w): the cost does not depend on the values.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cpu/graph_compute.h"
#include "ggml/ggml.h"
#include "testdata/paths.h"
#include "whisper/model.h"
#include "whisper/state.h"

namespace whisper {
namespace {

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Wall and process CPU time of one call, ms.
struct Times {
  double wall, cpu;
};

double CpuNowMs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

template <typename Fn>
Times TimeMs(Fn fn) {
  const Clock::time_point t0 = Clock::now();
  const double c0 = CpuNowMs();
  if (!fn()) {
    fprintf(stderr, "step failed\n");
    exit(1);
  }
  return {std::chrono::duration<double, std::milli>(Clock::now() - t0).count(), CpuNowMs() - c0};
}

// Per op: nodes, thread-0 busy and wait ms per step, over `n` steps of `step`.
template <typename Fn>
void PrintProfile(InferenceState& st, const char* name, int n, Fn step) {
  static ggml_cpu_profile prof;
  prof = ggml_cpu_profile{};
  st.set_profile(&prof);
  for (int i = 0; i < n; ++i) step();
  st.set_profile(nullptr);
  printf("%s: %.3f ms wall per step\n", name, prof.wall_ns / 1e6 / n);
  for (int op = 0; op < GGML_OP_COUNT; ++op) {
    if (prof.n_nodes[op] == 0) continue;
    printf("  %-16s %5lld nodes  busy %.3f ms  wait %.3f ms\n", ggml_op_name(static_cast<ggml_op>(op)),
           static_cast<long long>(prof.n_nodes[op] / n), prof.busy_ns[op][0] / 1e6 / n, prof.wait_ns[op][0] / 1e6 / n);
  }
}

constexpr int kMaxB = 40;
constexpr int kMaxWindows = 8;

// The window of sequence d of a step of B: its own up to kMaxWindows, else runs of B / 8 (+-1).
int WindowOf(int d, int B) { return B <= kMaxWindows ? d : d * kMaxWindows / B; }
constexpr int32_t kToken = 262;

// B sequences d = 0 .. B-1 (decoder d, window d, at n_past[d]) of `st`, measured as separate
// steps, one DecodeSequences step and one DecodeBatch step (all at n_past[0]); one table row.
// `idle` (no compute) gives the host cost of the step.
void MeasureB(InferenceState& st, InferenceState& idle, const std::vector<int>& n_past, int B, int rounds,
              bool profile) {
  std::vector<SequenceStep> steps(B);
  std::vector<int> decoders(B);
  std::vector<int32_t> tokens(B, kToken);
  for (int d = 0; d < B; ++d) {
    steps[d] = SequenceStep{d, WindowOf(d, B), kToken, n_past[d]};
    decoders[d] = d;
  }
  auto separate = [&] {
    for (int d = 0; d < B; ++d) {
      if (!st.Decode(d, &kToken, 1, n_past[d], WindowOf(d, B)).ok()) return false;
    }
    return true;
  };
  auto sequences = [&] { return st.DecodeSequences(steps.data(), B).ok(); };
  auto beams = [&] { return st.DecodeBatch(decoders.data(), tokens.data(), B, n_past[0]).ok(); };
  std::vector<double> wall[3], cpu[3];
  for (int r = 0; r < rounds + 2; ++r) {  // 2 warm-up rounds
    const Times t[3] = {TimeMs(separate), TimeMs(sequences), TimeMs(beams)};
    for (int i = 0; i < 3 && r >= 2; ++i) {
      wall[i].push_back(t[i].wall);
      cpu[i].push_back(t[i].cpu);
    }
  }
  double w[3], c[3];
  for (int i = 0; i < 3; ++i) {
    w[i] = Median(wall[i]);
    c[i] = Median(cpu[i]);
  }
  printf("%3d %10.3f %10.3f %6.3f %10.3f %6.3f | %10.3f %10.3f %6.3f %10.3f %6.3f\n", B, w[0], w[1], w[1] / w[0],
         w[2], w[2] / w[0], c[0], c[1], c[1] / c[0], c[2], c[2] / c[0]);
  // The step without its computation: graph build, placement by the allocator, copies.
  std::vector<double> host;
  for (int r = 0; r < rounds; ++r) {
    host.push_back(TimeMs([&] { return idle.DecodeSequences(steps.data(), B).ok(); }).wall);
  }
  printf("    B = %d: build + place + copy, no compute: %.3f ms\n", B, Median(host));
  if (profile) {
    PrintProfile(st, "sequences", 20, sequences);
    PrintProfile(st, "beams", 20, beams);
    PrintProfile(st, "1 sequence", 20, [&] { return st.Decode(0, &kToken, 1, n_past[0], 0).ok(); });
  }
}

// A state of kMaxB decoders and kMaxWindows windows (constant mel -0.5 + 0.01 w in window w), or
// nullptr.
std::unique_ptr<InferenceState> NewState(const WhisperModel& model, int n_threads, GraphComputeFn compute) {
  absl::StatusOr<std::unique_ptr<InferenceState>> st =
      InferenceState::Create(model, kMaxB, n_threads, compute, EncoderOptions(), kMaxWindows);
  if (!st.ok()) {
    fprintf(stderr, "%s\n", st.status().ToString().c_str());
    return nullptr;
  }
  const int n_frames = 2 * model.hparams().n_audio_ctx;
  std::vector<float> mel(static_cast<size_t>(model.hparams().n_mels) * n_frames);
  for (int w = 0; w < kMaxWindows; ++w) {
    std::fill(mel.begin(), mel.end(), -0.5f + 0.01f * w);
    if (!(*st)->EncodeWindow(w, mel.data(), n_frames, 0).ok()) return nullptr;
  }
  return std::move(*st);
}

int Run(int n_threads, int rounds, bool profile, const std::string& path, int max_b) {
  absl::StatusOr<std::unique_ptr<WhisperModel>> m = WhisperModel::Load(path);
  if (!m.ok()) {
    fprintf(stderr, "%s\n%s\n", m.status().ToString().c_str(), testdata::MissingModelHint(path).c_str());
    return 1;
  }
  const WhisperModel& model = **m;
  std::unique_ptr<InferenceState> st = NewState(model, n_threads, nullptr);
  // The same state shape with an executor that computes nothing.
  std::unique_ptr<InferenceState> idle = NewState(model, n_threads, [](ggml_cgraph*) { return true; });
  if (st == nullptr || idle == nullptr) return 1;
  // Sequence d: a prompt of 48 + 5 d tokens (mid-window positions, all different), in window
  // d % 8 (the values do not change the cost of the later steps in other windows).
  std::vector<int> n_past(kMaxB);
  for (int d = 0; d < kMaxB; ++d) {
    n_past[d] = 48 + 5 * d;
    std::vector<int32_t> prompt(n_past[d], 220);
    prompt[0] = model.special().sot;
    if (!st->Decode(d, prompt.data(), n_past[d], 0, d % kMaxWindows).ok()) return 1;
  }
  printf("%s, %d threads, %d rounds, median ms per step of B tokens: wall | process CPU time\n", path.c_str(),
         n_threads, rounds);
  printf("%3s %10s %10s %6s %10s %6s | %10s %10s %6s %10s %6s\n", "B", "separate", "sequences", "ratio", "beams",
         "ratio", "separate", "sequences", "ratio", "beams", "ratio");
  for (int B : {1, 2, 4, 8, 16, 40}) {
    if (B > max_b) break;
    MeasureB(*st, *idle, n_past, B, rounds, profile && B == max_b);
  }
  return 0;
}

}  // namespace
}  // namespace whisper

int main(int argc, char** argv) {
  const int n_threads = argc > 1 ? atoi(argv[1]) : 2;
  const int rounds = argc > 2 ? atoi(argv[2]) : 40;
  const bool profile = argc > 3 && atoi(argv[3]) != 0;
  const std::string model = argc > 4 ? argv[4] : testdata::ModelPath("ggml-tiny.en.bin");
  const int max_b = argc > 5 ? atoi(argv[5]) : whisper::kMaxB;
  if (n_threads < 1 || rounds < 1 || max_b < 1 || max_b > whisper::kMaxB) {
    fprintf(stderr, "usage: decode_sequences_benchmark [n_threads >= 1] [rounds >= 1] [profile 0|1] [model] "
                    "[max_b 1..%d]\n", whisper::kMaxB);
    return 1;
  }
  return whisper::Run(n_threads, rounds, profile, model, max_b);
}
