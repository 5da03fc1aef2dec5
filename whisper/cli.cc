// `bazel run //whisper:cli -- -m models/ggml-tiny.en.bin -f speech.wav`: whisper.cpp's whisper-cli
// on this runtime. Prints system info, the timestamped transcript, timings and memory; writes
// the requested output files. Exit codes: 0 success, 1 a model or audio error, 2 a usage error.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kernels/dispatch.h"
#include "whisper/audio.h"
#include "whisper/cli_params.h"
#include "whisper/mel.h"
#include "whisper/model.h"
#include "whisper/output.h"
#include "whisper/state.h"
#include "whisper/tokenizer.h"
#include "whisper/transcribe.h"

namespace whisper {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Lets the window loop drive a WhisperState.
class StateBackend : public ModelBackend {
 public:
  explicit StateBackend(WhisperState* state) : state_(state) {}
  absl::Status Encode(const float* mel, int n_frames, int seek, int audio_ctx, int n_valid) override {
    return state_->Encode(mel, n_frames, seek, audio_ctx, n_valid);
  }
  absl::Status Decode(int d, const Token* tokens, int n, int n_past) override {
    return state_->Decode(d, tokens, n, n_past);
  }
  const float* logits(int d) const override { return state_->logits(d); }
  void CopyKv(int src, int dst, int n) override { state_->CopyKv(src, dst, n); }
  int n_decoders() const override { return state_->n_decoders(); }

 private:
  WhisperState* state_;
};

std::string SystemInfo(int n_threads) {
  return absl::StrFormat("n_threads = %d / %u | SIMD = %s (Highway, dispatched at run time)", n_threads,
                         std::thread::hardware_concurrency(), ggml_cpu_target_name());
}

int Fail(const absl::Status& st) {
  std::fprintf(stderr, "error: %s\n", std::string(st.message()).c_str());
  return 1;
}

int Run(int argc, char** argv) {
  absl::StatusOr<CliParams> parsed = ParseCliParams(argc, argv);
  if (!parsed.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(parsed.status().message()).c_str());
    return 2;
  }
  CliParams p = *parsed;
  if (p.help) {
    std::fprintf(stderr, "%s", CliUsage(argv[0]).c_str());
    return 0;
  }
  if (p.files.empty()) {
    std::fprintf(stderr, "error: no input files specified (use -f FILE)\n");
    return 2;
  }
  if (p.n_threads == 0) p.n_threads = std::min(4, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));

  const auto t_start = Clock::now();
  absl::StatusOr<std::unique_ptr<WhisperModel>> model_or = WhisperModel::Load(p.model);
  if (!model_or.ok()) return Fail(model_or.status());
  const WhisperModel& model = **model_or;
  const double t_load_ms = MsSince(t_start);
  const SpecialTokens& special = model.special();
  const WhisperHparams& hp = model.hparams();

  TranscribeParams tp;
  tp.offset_ms = p.offset_t_ms;
  tp.duration_ms = p.duration_ms;
  tp.audio_ctx = p.audio_ctx;
  tp.condition_on_previous_text = p.max_context != 0;
  DecodingParams& dp = tp.decoding;
  dp.beam_size = p.beam_size;
  dp.best_of = p.best_of;
  dp.temperature = p.temperature;
  dp.temperature_inc = p.temperature_inc;
  dp.entropy_thold = p.entropy_thold;
  dp.logprob_thold = p.logprob_thold;
  dp.no_speech_thold = p.no_speech_thold;
  dp.max_tokens_per_window = hp.n_text_ctx / 2 - 4;
  dp.filter.no_timestamps = p.no_timestamps;
  dp.filter.blank_token = model.vocab().id(" ");
  std::vector<std::string> stored;
  for (int i = 0; i < model.vocab().n_stored(); ++i) stored.push_back(model.vocab().token(i));
  const Tokenizer tokenizer(stored);
  std::vector<Token> non_speech;
  if (p.suppress_nst) {
    non_speech = tokenizer.NonSpeechTokens();
    dp.filter.suppress = &non_speech;
  }
  if (!p.prompt.empty()) {
    absl::StatusOr<std::vector<Token>> ids = tokenizer.Encode(" " + p.prompt);
    if (!ids.ok()) return Fail(ids.status());
    tp.initial_prompt = *ids;
  }
  if (p.audio_ctx > hp.n_audio_ctx) {
    std::fprintf(stderr, "error: -ac %d is larger than the model's n_audio_ctx %d\n", p.audio_ctx, hp.n_audio_ctx);
    return 2;
  }
  if (p.language != "auto" && LanguageId(p.language) < 0) {
    std::fprintf(stderr, "error: -l: unknown language '%s'\n", p.language.c_str());
    return 2;
  }
  if (!special.multilingual) {
    if (p.detect_language) {
      std::fprintf(stderr, "auto-detected language: en (English-only model)\n");
      return 0;
    }
    if (p.language != "en" || p.translate) {
      std::fprintf(stderr, "warning: model is English-only: language 'en', no translation\n");
    }
    p.language = "en";
    p.translate = false;
  }
  tp.translate = p.translate;

  absl::StatusOr<std::unique_ptr<WhisperState>> state_or =
      WhisperState::Create(model, DecodersNeeded(dp), p.n_threads);
  if (!state_or.ok()) return Fail(state_or.status());
  WhisperState& state = **state_or;
  StateBackend backend(&state);

  if (!p.no_prints) {
    std::fprintf(stderr, "whisper_model_load: %s: type %s, %s, n_vocab %d, %d tensors, model buffer %.2f MB\n",
                 model.path().c_str(), model.type_name(), FtypeName(hp.ftype), hp.n_vocab, model.n_tensors(),
                 model.weights_buffer_size() / 1e6);
    std::fprintf(stderr, "system_info: %s\n", SystemInfo(p.n_threads).c_str());
  }

  std::unique_ptr<MelSpectrogram> mel;
  int exit_code = 0;
  double t_mel_ms = 0.0, t_audio_ms = 0.0;
  for (const std::string& file : p.files) {
    auto t0 = Clock::now();
    absl::StatusOr<std::vector<float>> audio = LoadAudio16kMono(file);
    if (!audio.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(audio.status().message()).c_str());
      exit_code = 1;
      continue;
    }
    t_audio_ms += MsSince(t0);
    if (audio->size() < 1600) {  // whisper.cpp rejects input under 100 ms (10 frames)
      std::fprintf(stderr, "error: '%s': %zu samples is shorter than 100 ms\n", file.c_str(), audio->size());
      exit_code = 1;
      continue;
    }
    t0 = Clock::now();
    if (mel == nullptr) {
      auto m = MelSpectrogram::Create(model.mel_filters().data(), hp.n_mels, model.n_fft(), p.n_threads,
                                      static_cast<int64_t>(audio->size()));
      if (!m.ok()) return Fail(m.status());
      mel = std::move(*m);
    }
    absl::StatusOr<MelView> mv = mel->Compute(audio->data(), static_cast<int64_t>(audio->size()));
    if (!mv.ok()) return Fail(mv.status());
    t_mel_ms += MsSince(t0);

    if (special.multilingual) {
      int lang = LanguageId(p.language);
      if (p.language == "auto" || p.detect_language) {
        absl::StatusOr<int> detected = DetectLanguage(backend, special, mv->data, static_cast<int>(mv->n_len),
                                                      static_cast<int>(audio->size() / 160));
        if (!detected.ok()) return Fail(detected.status());
        lang = *detected;
        std::fprintf(stderr, "auto-detected language: %s\n", LanguageCode(lang));
        if (p.detect_language) continue;
      }
      tp.language_id = lang;
    }

    if (!p.no_prints) {
      std::fprintf(stderr, "\nprocessing '%s' (%zu samples, %.1f sec), %d threads, lang = %s, task = %s, timestamps = %d ...\n\n",
                   file.c_str(), audio->size(), audio->size() / 16000.0, p.n_threads, p.language.c_str(),
                   p.translate ? "translate" : "transcribe", p.no_timestamps ? 0 : 1);
    }
    auto token_text = [&](Token t) -> const std::string& { return model.vocab().token(t); };
    auto print_segment = [&](const Segment& s) {
      if (p.no_timestamps) {
        std::printf("%s", s.text.c_str());
      } else {
        std::printf("[%s --> %s]  %s\n", FormatTimestamp(s.t0).c_str(), FormatTimestamp(s.t1).c_str(), s.text.c_str());
      }
      std::fflush(stdout);
    };
    // Segments print as they are decoded, unless -ml re-cuts them after the transcription.
    tp.on_segment = p.max_len > 0 ? std::function<void(const Segment&)>() : print_segment;
    if (p.print_progress) {
      tp.progress = [](int pct) { std::fprintf(stderr, "whisper_print_progress_callback: progress = %3d%%\n", pct); };
    }
    std::vector<Segment> segments;
    TranscribeStats stats;
    tp.audio_duration_cs = (static_cast<int64_t>(audio->size()) + 159) / 160;
    absl::Status st = Transcribe(backend, special, hp.n_text_ctx, token_text, mv->data, static_cast<int>(mv->n_len),
                                 static_cast<int>(audio->size() / 160), tp, &segments, &stats);
    if (!st.ok()) return Fail(st);
    if (p.max_len > 0) {
      segments = WrapSegments(segments, p.max_len, p.split_on_word, token_text);
      for (const Segment& s : segments) print_segment(s);
    }
    if (p.no_timestamps) std::printf("\n");

    const std::string base = p.output_file.empty() ? file : p.output_file;
    JsonInfo info;
    info.system_info = SystemInfo(p.n_threads);
    info.model_path = p.model;
    info.model_type = model.type_name();
    info.multilingual = special.multilingual;
    info.n_vocab = hp.n_vocab;
    info.n_audio_ctx = hp.n_audio_ctx;
    info.n_audio_state = hp.n_audio_state;
    info.n_audio_head = hp.n_audio_head;
    info.n_audio_layer = hp.n_audio_layer;
    info.n_text_ctx = hp.n_text_ctx;
    info.n_text_state = hp.n_text_state;
    info.n_text_head = hp.n_text_head;
    info.n_text_layer = hp.n_text_layer;
    info.n_mels = hp.n_mels;
    info.ftype = hp.ftype;
    info.language = special.multilingual ? LanguageCode(tp.language_id) : "en";
    info.translate = p.translate;
    std::function<const std::string&(Token)> json_tokens;  // -ojf: segments list their tokens
    if (p.output_json_full) json_tokens = token_text;
    const std::pair<bool, std::pair<const char*, std::string>> outputs[] = {
        {p.output_txt, {".txt", FormatTxt(segments)}},   {p.output_vtt, {".vtt", FormatVtt(segments)}},
        {p.output_srt, {".srt", FormatSrt(segments, p.offset_n)}}, {p.output_lrc, {".lrc", FormatLrc(segments)}},
        {p.output_csv, {".csv", FormatCsv(segments)}},   {p.output_json, {".json", FormatJson(segments, info, json_tokens)}},
    };
    for (const auto& [wanted, out] : outputs) {
      if (!wanted) continue;
      const std::string path = base + out.first;
      absl::Status w = WriteFileAtomically(path, out.second);
      if (!w.ok()) return Fail(w);
      if (!p.no_prints) std::fprintf(stderr, "output: saved to '%s'\n", path.c_str());
    }
    if (!p.no_prints && stats.n_fallbacks > 0) {
      std::fprintf(stderr, "fallbacks = %d, windows = %d, no-speech windows = %d\n", stats.n_fallbacks,
                   stats.n_windows, stats.n_no_speech);
    }
  }

  if (!p.no_prints) {
    const WhisperTimings& t = state.timings();
    std::fprintf(stderr, "\nwhisper_print_timings:     load time = %8.2f ms\n", t_load_ms);
    std::fprintf(stderr, "whisper_print_timings:    audio time = %8.2f ms\n", t_audio_ms);
    std::fprintf(stderr, "whisper_print_timings:      mel time = %8.2f ms\n", t_mel_ms);
    std::fprintf(stderr, "whisper_print_timings:   encode time = %8.2f ms / %d runs (%8.2f ms per run)\n",
                 t.encode_ms, t.n_encode, t.n_encode ? t.encode_ms / t.n_encode : 0.0);
    std::fprintf(stderr, "whisper_print_timings:   decode time = %8.2f ms / %d runs (%8.2f ms per run)\n",
                 t.decode_ms, t.n_decode, t.n_decode ? t.decode_ms / t.n_decode : 0.0);
    std::fprintf(stderr, "whisper_print_timings:    total time = %8.2f ms\n", MsSince(t_start));
    std::fprintf(stderr,
                 "whisper_print_memory:  model buffer = %7.2f MB, compute buffers: encoder %7.2f MB, cross %7.2f MB, "
                 "decoder %7.2f MB, state (encoder out, cross and self KV) %7.2f MB\n",
                 model.weights_buffer_size() / 1e6, state.compute_buffer_size(Graph::kEncoder) / 1e6,
                 state.compute_buffer_size(Graph::kCross) / 1e6,
                 state.compute_buffer_size(Graph::kDecoder) / 1e6, state.kv_buffer_size() / 1e6);
  }
  return exit_code;
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
