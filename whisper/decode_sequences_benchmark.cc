// Decoder step time of B independent sequences on the real tiny.en (models/ggml-tiny.en.bin):
// one InferenceState::DecodeSequences step of B sequences, each in its own window at its own
// n_past, against the same B tokens decoded as B separate single-sequence steps (Decode), and
// against DecodeBatch (B beams of one window, one cross-attention product), for B = 1, 2, 4, 8.
// The three are measured interleaved, round after round, in one run, and each figure is the
// median over the rounds, so a busy machine shifts all three alike; the ratios are printed.
//   bazel run -c opt //whisper:decode_sequences_benchmark -- [n_threads=2] [rounds=40]
// The mel of each window is constant (-0.5 + 0.01 w): the cost does not depend on the values.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

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

template <typename Fn>
double TimeMs(Fn fn) {
  const Clock::time_point t0 = Clock::now();
  if (!fn()) {
    fprintf(stderr, "step failed\n");
    exit(1);
  }
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

int Run(int n_threads, int rounds) {
  absl::StatusOr<std::unique_ptr<WhisperModel>> m = WhisperModel::Load(testdata::ModelPath("ggml-tiny.en.bin"));
  if (!m.ok()) {
    fprintf(stderr, "%s\n", testdata::MissingModelHint(testdata::ModelPath("ggml-tiny.en.bin")).c_str());
    return 1;
  }
  const WhisperModel& model = **m;
  constexpr int kMaxB = 8;
  absl::StatusOr<std::unique_ptr<InferenceState>> created =
      InferenceState::Create(model, kMaxB, n_threads, nullptr, EncoderOptions(), kMaxB);
  if (!created.ok()) {
    fprintf(stderr, "%s\n", created.status().ToString().c_str());
    return 1;
  }
  InferenceState& st = **created;
  const int n_frames = 2 * model.hparams().n_audio_ctx;
  std::vector<float> mel(static_cast<size_t>(model.hparams().n_mels) * n_frames);
  // Sequence d: window d, a prompt of 48 + 5 d tokens (mid-window positions, all different).
  std::vector<int> n_past(kMaxB);
  for (int d = 0; d < kMaxB; ++d) {
    std::fill(mel.begin(), mel.end(), -0.5f + 0.01f * d);
    n_past[d] = 48 + 5 * d;
    std::vector<int32_t> prompt(n_past[d], 220);
    prompt[0] = model.special().sot;
    if (!st.EncodeWindow(d, mel.data(), n_frames, 0).ok() || !st.Decode(d, prompt.data(), n_past[d], 0, d).ok()) {
      fprintf(stderr, "prompt failed\n");
      return 1;
    }
  }
  const int32_t token = 262;
  printf("tiny.en, %d threads, %d rounds, median ms per step (B tokens)\n", n_threads, rounds);
  printf("%3s %12s %12s %8s %12s %8s\n", "B", "separate", "sequences", "ratio", "beams(1 win)", "ratio");
  for (int B : {1, 2, 4, 8}) {
    std::vector<SequenceStep> steps(B);
    std::vector<int> decoders(B);
    std::vector<int32_t> tokens(B, token);
    for (int d = 0; d < B; ++d) {
      steps[d] = SequenceStep{d, d, token, n_past[d]};
      decoders[d] = d;
    }
    const int beam_past = n_past[0];
    std::vector<double> sep, seq, beam;
    for (int r = 0; r < rounds + 2; ++r) {  // 2 warm-up rounds
      const double a = TimeMs([&] {
        for (int d = 0; d < B; ++d) {
          if (!st.Decode(d, &token, 1, n_past[d], d).ok()) return false;
        }
        return true;
      });
      const double b = TimeMs([&] { return st.DecodeSequences(steps.data(), B).ok(); });
      const double c = TimeMs([&] { return st.DecodeBatch(decoders.data(), tokens.data(), B, beam_past).ok(); });
      if (r >= 2) {
        sep.push_back(a);
        seq.push_back(b);
        beam.push_back(c);
      }
    }
    const double ms_sep = Median(sep), ms_seq = Median(seq), ms_beam = Median(beam);
    printf("%3d %12.3f %12.3f %8.3f %12.3f %8.3f\n", B, ms_sep, ms_seq, ms_seq / ms_sep, ms_beam, ms_beam / ms_sep);
  }
  return 0;
}

}  // namespace
}  // namespace whisper

int main(int argc, char** argv) {
  const int n_threads = argc > 1 ? atoi(argv[1]) : 2;
  const int rounds = argc > 2 ? atoi(argv[2]) : 40;
  return whisper::Run(n_threads, rounds);
}
