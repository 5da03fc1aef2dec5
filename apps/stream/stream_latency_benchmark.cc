// How long after a word is spoken //whisper:stream first shows it: each clip of
// testdata/stream_word_times.json (faster-whisper's word end times, tools/reference/word_timestamps.py)
// is fed to the program at real-time pace, the terminal's text is rebuilt after every piece of
// stdout, aligned word by word to the reference (Levenshtein), and a reference word's latency is
// the time of the first piece after which it shows (and not before the word starts: an earlier
// match is the alignment pairing another occurrence), minus its end time. Prints the median and the
// maximum per clip, how many words showed within --step + 1 s, and the same latency for any text at
// the word's place (a word first shown wrong counts there), which separates the display delay
// from the model's later corrections. Last, the runtime's own delay: for each --step boundary k
// (k x step of audio fed), the time until the next screen update, which is step k's transcription
// when no step runs late (then every word is on screen, as the model hears it, at most --step plus
// this delay after its end).
//
//   bazel run //apps/stream:stream_latency_benchmark -- [--step 3000] [--threads 2] [-- stream flags]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "testdata/paths.h"
#include "apps/common/audio.h"
#include "apps/stream/stream_harness.h"
#include "apps/stream/wer.h"

namespace whisper::stream {
namespace {

// Reference indices of `ref` paired with a word of `hyp` in a minimum-edit alignment of `hyp` to
// a prefix of `ref`: exactly
// (the same word) or, with substitutions = true, also by a substitution (some word shows there).
std::vector<int> MatchedReferenceWords(const std::vector<std::string>& ref, const std::vector<std::string>& hyp,
                                       bool substitutions) {
  const size_t n = ref.size(), m = hyp.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (ref[i - 1] == hyp[j - 1] ? 0 : 1)});
    }
  }
  // The text shown so far covers a prefix of the reference: end the alignment at the reference
  // prefix it fits best (free deletion of the reference's tail), or a tie at the tail would pair
  // the last shown words with the reference's last words.
  size_t end = 0;
  for (size_t i = 1; i <= n; ++i) {
    if (d[i][m] < d[end][m]) end = i;
  }
  std::vector<int> matched;
  for (size_t i = end, j = m; i > 0 && j > 0;) {
    if (ref[i - 1] == hyp[j - 1] && d[i][j] == d[i - 1][j - 1]) {
      matched.push_back(static_cast<int>(i - 1));
      --i, --j;
    } else if (d[i][j] == d[i - 1][j - 1] + 1) {
      if (substitutions) matched.push_back(static_cast<int>(i - 1));
      --i, --j;
    } else if (d[i][j] == d[i - 1][j] + 1) {
      --i;
    } else {
      --j;
    }
  }
  return matched;
}

// The command line: the stream binary, the reference file, --step and --threads, and the stream
// flags after `--`.
struct BenchArgs {
  std::string binary = "apps/stream/stream";  // in the runfiles of `bazel run`
  std::string times_path;
  std::string step = "3000", threads = "2";
  std::vector<std::string> extra;
};

// Parses argv into `a`. The exit code (2) after printing the error, or nullopt when fine.
std::optional<int> ParseArgs(int argc, char** argv, BenchArgs* a) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--binary" && i + 1 < argc) a->binary = argv[++i];
    else if (arg == "--word_times" && i + 1 < argc) a->times_path = argv[++i];
    else if (arg == "--step" && i + 1 < argc) a->step = argv[++i];
    else if (arg == "--threads" && i + 1 < argc) a->threads = argv[++i];
    else if (arg == "--") { for (++i; i < argc; ++i) a->extra.push_back(argv[i]); }
    else { std::fprintf(stderr, "unknown argument '%s'\n", arg.c_str()); return 2; }
  }
  return std::nullopt;
}

// A clip's reference words (normalized, so one reference word may give several), each with the
// start and end time of the word it came from, in seconds.
struct Reference {
  std::vector<std::string> words;
  std::vector<double> end, start;
};

Reference ReadReference(const nlohmann::json& clip) {
  Reference r;
  for (const nlohmann::json& w : clip["words"]) {
    for (const std::string& x : NormalizedWords(w["word"].get<std::string>())) {
      r.words.push_back(x);
      r.end.push_back(w["end"].get<double>());
      r.start.push_back(w["start"].get<double>());
    }
  }
  return r;
}

// For each reference word, the time of the first stdout piece after which the screen shows it
// (`first`), or any word at its place (`any`); -1 when never, and never before the word starts.
void FirstShown(const PacedRun& run, const Reference& ref, std::vector<double>* first, std::vector<double>* any) {
  first->assign(ref.words.size(), -1.0);
  any->assign(ref.words.size(), -1.0);
  for (size_t k = 1; k <= run.out.size(); ++k) {
    const std::vector<std::string> hyp = NormalizedWords(VisibleText(run.out, k));
    const double t = run.out[k - 1].t;
    for (int i : MatchedReferenceWords(ref.words, hyp, false)) {
      // A word cannot show before it is spoken: such a match aligned another occurrence.
      if ((*first)[i] < 0 && t >= ref.start[i]) (*first)[i] = t;
    }
    for (int i : MatchedReferenceWords(ref.words, hyp, true)) {
      if ((*any)[i] < 0 && t >= ref.start[i]) (*any)[i] = t;
    }
  }
}

// STREAM_LATENCY_SCREENS=1: the last line of the screen after each stdout piece (=2: the whole
// screen).
void PrintScreens(const PacedRun& run) {
  if (std::getenv("STREAM_LATENCY_SCREENS") == nullptr) return;
  for (size_t k = 1; k <= run.out.size(); ++k) {
    const std::string screen = VisibleText(run.out, k);
    const size_t nl = screen.rfind('\n');
    const bool full = std::string(std::getenv("STREAM_LATENCY_SCREENS")) == "2";
    std::printf("  %6.2f s | %s\n", run.out[k - 1].t,
                nl == std::string::npos || full ? screen.c_str() : screen.c_str() + nl + 1);
  }
}

// The clip's word latencies (first display, and any text at the word's place): median, maximum,
// how many within --step + 1 s; with STREAM_LATENCY_VERBOSE each word's.
void PrintWordLatency(const std::string& name, double audio_s, const std::string& step, const Reference& ref,
                      const std::vector<double>& first, const std::vector<double>& any) {
  std::vector<double> any_lat;
  for (size_t i = 0; i < any.size(); ++i) {
    if (any[i] >= 0) any_lat.push_back(any[i] - ref.end[i]);
  }
  std::sort(any_lat.begin(), any_lat.end());
  std::vector<double> lat;
  for (size_t i = 0; i < first.size(); ++i) {
    if (first[i] >= 0) lat.push_back(first[i] - ref.end[i]);
  }
  std::sort(lat.begin(), lat.end());
  const double median = lat.empty() ? 0 : lat[lat.size() / 2];
  const double max = lat.empty() ? 0 : lat.back();
  const double bound = std::atof(step.c_str()) / 1000.0 + 1.0;
  const size_t within = static_cast<size_t>(std::count_if(lat.begin(), lat.end(), [bound](double x) { return x <= bound; }));
  std::printf("%-18s %5.1f s audio: %zu of %zu words shown, latency median %.2f s, max %.2f s, %zu within step + 1 s\n",
              name.c_str(), audio_s, lat.size(), ref.words.size(), median, max, within);
  if (!any_lat.empty()) {
    std::printf("%-18s text at the word's place (right or not): median %.2f s, max %.2f s\n", "",
                any_lat[any_lat.size() / 2], any_lat.back());
  }
  if (std::getenv("STREAM_LATENCY_VERBOSE") != nullptr) {
    for (size_t i = 0; i < first.size(); ++i) {
      std::printf("  %-14s end %6.2f s  shown %6.2f s  latency %5.2f s  any text %5.2f s\n", ref.words[i].c_str(),
                  ref.end[i], first[i], first[i] < 0 ? -1.0 : first[i] - ref.end[i],
                  any[i] < 0 ? -1.0 : any[i] - ref.end[i]);
    }
  }
}

// The update delay after each step boundary (see the top of this file): median, maximum and how
// many came after the next boundary; with STREAM_LATENCY_VERBOSE each boundary's.
void PrintStepUpdates(const PacedRun& run, const std::string& step, double audio_s) {
  const double step_s = std::atof(step.c_str()) / 1000.0;
  std::vector<double> update;
  int late = 0;
  for (int k = 1; step_s > 0 && k * step_s <= audio_s; ++k) {
    for (const StdoutPiece& piece : run.out) {
      if (piece.t >= k * step_s) {
        update.push_back(piece.t - k * step_s);
        if (std::getenv("STREAM_LATENCY_VERBOSE") != nullptr) {
          std::printf("  step boundary %6.2f s: update %.2f s later\n", k * step_s, piece.t - k * step_s);
        }
        if (piece.t >= (k + 1) * step_s) ++late;
        break;
      }
    }
  }
  std::sort(update.begin(), update.end());
  if (!update.empty()) {
    std::printf("%-18s update after each step boundary: %zu steps, median %.2f s, max %.2f s, %d late\n", "",
                update.size(), update[update.size() / 2], update.back(), late);
  }
}

// Feeds one clip of the reference file to the stream program in real time (-rt) and prints its
// latencies. 0, or 1 after printing why the clip could not be measured.
int MeasureClip(const nlohmann::json& clip, const BenchArgs& a) {
  const std::string name = clip["audio"].get<std::string>();
  absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(testdata::SharedData(name));
  if (!audio.ok()) {
    std::fprintf(stderr, "%s\n", std::string(audio.status().message()).c_str());
    return 1;
  }
  audio->resize(std::min<size_t>(audio->size(), static_cast<size_t>(clip["seconds"].get<double>() * 16000 + 0.5)));
  const Reference ref = ReadReference(clip);
  // -rt: a live speaker (a late step takes all the audio that arrived, as from a microphone).
  std::vector<std::string> args = {"-m", testdata::ModelPath("ggml-tiny.en.bin"), "-t", a.threads, "--step", a.step, "-rt"};
  args.insert(args.end(), a.extra.begin(), a.extra.end());
  absl::StatusOr<PacedRun> run = RunPaced(a.binary, args, *audio, 1.0, "");
  if (!run.ok() || run->exit_code != 0) {
    std::fprintf(stderr, "%s: the stream program failed\n", name.c_str());
    return 1;
  }
  std::vector<double> first, any;
  FirstShown(*run, ref, &first, &any);
  PrintScreens(*run);
  PrintWordLatency(name, audio->size() / 16000.0, a.step, ref, first, any);
  PrintStepUpdates(*run, a.step, audio->size() / 16000.0);
  return 0;
}

int Run(int argc, char** argv) {
  BenchArgs a;
  const std::string root = testdata::RepoRoot().empty() ? "." : testdata::RepoRoot();
  a.times_path = root + "/testdata/stream_word_times.json";
  if (const std::optional<int> code = ParseArgs(argc, argv, &a)) return *code;
  std::ifstream in(a.times_path);
  const nlohmann::json ref = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (ref.is_discarded()) {
    std::fprintf(stderr, "cannot read %s\n", a.times_path.c_str());
    return 1;
  }
  std::printf("stream latency: --step %s ms, -t %s; word end (faster-whisper) to first display\n", a.step.c_str(),
              a.threads.c_str());
  for (const nlohmann::json& clip : ref["clips"]) {
    if (const int code = MeasureClip(clip, a); code != 0) return code;
  }
  return 0;
}

}  // namespace
}  // namespace whisper::stream

int main(int argc, char** argv) { return whisper::stream::Run(argc, argv); }
