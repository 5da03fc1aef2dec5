// `sox talk.flac -t raw -r 16000 -c 1 -b 16 -e signed - | bazel run //whisper:stream -- -m MODEL`:
// whisper.cpp's whisper-stream on this runtime (see stream_transcriber.h for the model of work and the
// differences). Input: raw 16 kHz mono signed 16-bit little-endian PCM on stdin, read by a thread
// of its own as it arrives; a pipe or a file losslessly (the reader waits for the transcriber),
// other stdin and -rt in real time (the oldest audio is dropped when the transcriber is behind;
// see ReadsLossless). At the end of the input the open window is transcribed and committed, a
// line "audio: N samples (S s) read, N processed, N dropped (M ms)" goes to stderr, and the program exits 0.
// SIGINT/SIGTERM end the input the same way.
// Exit codes: 0 done, 1 a model or I/O error, 2 a usage error.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "apps/common/bazel_run.h"
#include "sndfile.h"
#include "apps/stream/audio_buffer.h"
#include "apps/stream/stream_params.h"
#include "apps/stream/stream_transcriber.h"
#ifdef GGML_WHISPER_STREAM_SDL2
#include "apps/stream/sdl_capture.h"
#endif
#include "apps/common/request_rules.h"
#include "whisper/whisper.h"

namespace whisper::stream {
namespace {

void Log(ggml_log_level level, const char* text, void*) {
  if (level == GGML_LOG_LEVEL_DEBUG || text == nullptr) return;
  std::fputs(text, stderr);
}

// Reads s16le PCM from `fd` until EOF, an error or `buf` closed (a signal), converts it to float
// (x / 32768, as the CLI's decoder does) and pushes it (waiting there for room when `buf` blocks);
// writes what was pushed to `save` too when set. Closes `buf` at the end.
void ReadPcm(int fd, AudioBuffer* buf, SNDFILE* save) {
  unsigned char bytes[8192 + 1];
  float samples[4096];
  short pcm[4096];
  size_t carry = 0;  // a byte of a sample split across reads
  for (;;) {
    const ssize_t r = read(fd, bytes + carry, 8192);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      std::fprintf(stderr, "error: reading <stdin>: %s\n", std::strerror(errno));
      break;
    }
    if (r == 0) break;
    const size_t have = carry + static_cast<size_t>(r);
    const size_t n = have / 2;
    for (size_t i = 0; i < n; ++i) {
      const int16_t v = static_cast<int16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8));
      pcm[i] = v;
      samples[i] = static_cast<float>(v) / 32768.0f;
    }
    carry = have % 2;
    if (carry != 0) bytes[0] = bytes[have - 1];
    const int stored = buf->Push(samples, static_cast<int>(n));
    if (save != nullptr) sf_write_short(save, pcm, static_cast<sf_count_t>(stored));
    if (stored < static_cast<int>(n)) {  // closed by a signal: the input ends here
      carry = 0;
      break;
    }
  }
  if (carry != 0) std::fprintf(stderr, "warning: <stdin> ended inside a sample (odd byte count): last byte ignored\n");
  if (save != nullptr) sf_close(save);
  buf->Close();
}

// The buffer between the input and the transcriber (--length ms), lossless (blocking) or real
// time (dropping) as ReadsLossless decides for stdin as it is; says which on stderr.
AudioBuffer* NewInputBuffer(const StreamParams& p) {
  struct stat in_stat {};
  const unsigned stdin_mode = fstat(STDIN_FILENO, &in_stat) == 0 ? in_stat.st_mode : 0u;
  const bool lossless = ReadsLossless(p, stdin_mode);
  if (p.input == "-") {
    const char* kind = S_ISFIFO(stdin_mode)   ? "a pipe"
                       : S_ISREG(stdin_mode)  ? "a file"
                       : S_ISSOCK(stdin_mode) ? "a socket"
                                              : "a device";
    std::fprintf(stderr, "input: <stdin> (%s): %s\n", kind,
                 lossless ? "lossless, reading waits while transcription is behind (-rt: live input)"
                          : "real time, the oldest audio is dropped while transcription is behind");
  }
  return new AudioBuffer(CaptureCapacity(p),
                         lossless ? AudioBuffer::Overflow::kBlock : AudioBuffer::Overflow::kDropOldest);
}

// The checks on the input that need no model: notes on ignored flags, --input sdl in a build
// without SDL2, stdin a terminal. The exit code after printing the error, or nullopt when fine.
std::optional<int> CheckInput(const StreamParams& p) {
  for (const std::string& f : p.ignored_flags) std::fprintf(stderr, "note: %s ignored: this is a CPU runtime\n", f.c_str());
#ifndef GGML_WHISPER_STREAM_SDL2
  if (p.input == "sdl") {
    std::fprintf(stderr,
                 "error: --input sdl / -c: this build has no SDL2 capture (build with --define=stream_sdl2=1); pipe "
                 "raw PCM into stdin instead\n");
    return 2;
  }
#endif
  if (p.input == "-" && isatty(STDIN_FILENO)) {
    std::fprintf(stderr, "error: stdin is a terminal: pipe raw 16 kHz mono s16le PCM into it (see --help)\n");
    return 2;
  }
  return std::nullopt;
}

// Loads -m with a state into *ctx and *state, then checks -l and applies faster-whisper's
// language rule (as the CLI, the server and the Python package do) to `p`, printing its notes.
// The exit code (1: the loader logged why; 2: unknown -l), or nullopt when fine.
std::optional<int> LoadModel(StreamParams* p, whisper_context** ctx, whisper_state** state) {
  whisper_context_params cparams = whisper_context_default_params();
  cparams.use_gpu = false;
  cparams.flash_attn = p->flash_attn;
  char note[256] = "";
  if (whisper_ggml_set_compute_type(&cparams, p->compute_type.c_str(), note, sizeof(note)) > 0) {
    std::fprintf(stderr, "warning: --compute-type: %s\n", note);  // a substitute (bfloat16)
  }
  *ctx = whisper_init_from_file_with_params_no_state(p->model.c_str(), cparams);
  if (*ctx == nullptr) return 1;  // the loader logged why
  *state = whisper_init_state(*ctx);
  if (*state == nullptr) return 1;
  if (p->language != "auto" && whisper_lang_id(p->language.c_str()) < 0) {
    std::fprintf(stderr, "error: -l: unknown language '%s'\n", p->language.c_str());
    return 2;
  }
  const whisper::LanguageDecision language =
      whisper::DecideLanguage(whisper_is_multilingual(*ctx) != 0, p->language, p->translate);
  for (const whisper::LanguageDecision::Note& note : language.notes) {
    const bool info = note.level == whisper::LanguageDecision::Level::kInfo;
    std::fprintf(stderr, "%s: %s\n", info ? "note" : "warning", note.message.c_str());
  }
  p->language = language.language;
  p->translate = language.translate;
  return std::nullopt;
}

// Opens -f's text file into *text_file and, with -sa, YYYYmmddHHMMSS.wav into *save (each left
// null when not asked for). False after printing the error.
bool OpenOutputs(const StreamParams& p, FILE** text_file, SNDFILE** save) {
  if (!p.fname_out.empty()) {
    *text_file = std::fopen(p.fname_out.c_str(), "w");
    if (*text_file == nullptr) {
      std::fprintf(stderr, "error: -f: cannot open '%s': %s\n", p.fname_out.c_str(), std::strerror(errno));
      return false;
    }
  }
  if (p.save_audio) {
    char name[64];
    const time_t now = time(nullptr);
    std::strftime(name, sizeof(name), "%Y%m%d%H%M%S.wav", std::localtime(&now));
    SF_INFO info{};
    info.samplerate = WHISPER_SAMPLE_RATE;
    info.channels = 1;
    info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
    *save = sf_open(name, SFM_WRITE, &info);
    if (*save == nullptr) {
      std::fprintf(stderr, "error: -sa: cannot write '%s': %s\n", name, sf_strerror(nullptr));
      return false;
    }
    std::fprintf(stderr, "saving audio to '%s'\n", name);
  }
  return true;
}

// Warm-up: one transcription of 1 s of silence makes the state's buffers, so the first step is
// as fast as the others. False when it fails.
bool WarmUp(whisper_context* ctx, whisper_state* state, const StreamParams& p) {
  const std::vector<float> silence(WHISPER_SAMPLE_RATE, 0.0f);
  whisper_full_params w = whisper_full_default_params(WHISPER_SAMPLING_GREEDY);
  w.n_threads = p.n_threads;
  w.print_progress = false;
  return whisper_full_with_state(ctx, state, w, silence.data(), static_cast<int>(silence.size())) == 0;
}

// whisper-stream's "processing ..." line on stderr (and VAD mode's, for --step <= 0).
void PrintProcessing(const StreamParams& p) {
  const bool vad = p.step_ms <= 0;
  std::fprintf(stderr,
               "processing %d samples (step = %.1f sec / len = %.1f sec / keep = %.1f sec), %d threads, lang = %s, "
               "task = %s, timestamps = %d ...\n",
               std::max(0, p.step_ms) * 16, std::max(0, p.step_ms) / 1000.0, p.length_ms / 1000.0, p.keep_ms / 1000.0,
               p.n_threads, p.language.c_str(), p.translate ? "translate" : "transcribe", vad ? 1 : 0);
  if (vad) std::fprintf(stderr, "using VAD, will transcribe on speech activity\n");
}

// The running input: the SDL2 microphone when it feeds the buffer (SDL2 builds).
struct Input {
#ifdef GGML_WHISPER_STREAM_SDL2
  std::unique_ptr<SdlCapture> mic;
#endif
};

// Starts feeding `buf`: the microphone with --input sdl (SDL2 builds), else a detached thread
// reading stdin (ReadPcm, saving to `save`); then a detached thread that closes `buf` at
// SIGINT/SIGTERM (`stop`, blocked). False after printing the microphone's error.
bool StartInput(const StreamParams& p, AudioBuffer* buf, SNDFILE* save, const sigset_t& stop, Input* input) {
#ifdef GGML_WHISPER_STREAM_SDL2
  if (p.input == "sdl") {
    absl::StatusOr<std::unique_ptr<SdlCapture>> c = SdlCapture::Open(p.capture_id, buf);
    if (!c.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(c.status().message()).c_str());
      return false;
    }
    input->mic = *std::move(c);
    if (save != nullptr) std::fprintf(stderr, "note: -sa saves stdin input only\n");
  } else {
    std::thread(ReadPcm, STDIN_FILENO, buf, save).detach();
  }
#else
  (void)p;
  (void)input;
  std::thread(ReadPcm, STDIN_FILENO, buf, save).detach();
#endif
  std::thread([buf, stop] {
    int sig = 0;
    sigwait(&stop, &sig);
    buf->Close();
  }).detach();
  return true;
}

// Runs `t` step by step to the end of the input. 0, or 1 after printing a step's error.
int TranscribeToEnd(StreamTranscriber& t) {
  std::printf("[Start speaking]\n");
  std::fflush(stdout);
  int code = 0;
  for (;;) {
    absl::StatusOr<bool> more = t.Step();
    if (!more.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(more.status().message()).c_str());
      code = 1;
      break;
    }
    if (!*more) break;
  }
  std::fflush(stdout);
  return code;
}

int Run(int argc, char** argv) {
  absl::StatusOr<StreamParams> parsed = ParseStreamParams(argc, argv);
  if (!parsed.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(parsed.status().message()).c_str());
    return 2;
  }
  StreamParams p = *std::move(parsed);
  if (p.help) {
    std::fprintf(stderr, "%s", StreamUsage(argv[0]).c_str());
    return 0;
  }
  if (const std::optional<int> code = CheckInput(p)) return *code;
  if (p.n_threads == 0) p.n_threads = std::max(1, std::min(4, static_cast<int>(std::thread::hardware_concurrency())));
  whisper_log_set(Log, nullptr);

  // SIGINT/SIGTERM end the input (a thread of their own takes them).
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  whisper_context* ctx = nullptr;
  whisper_state* state = nullptr;
  if (const std::optional<int> code = LoadModel(&p, &ctx, &state)) return *code;
  FILE* text_file = nullptr;
  SNDFILE* save = nullptr;
  if (!OpenOutputs(p, &text_file, &save)) return 1;
  if (!WarmUp(ctx, state, p)) return 1;
  PrintProcessing(p);

  // Leaked on purpose: the reader may still block in read() when main returns.
  AudioBuffer* buf = NewInputBuffer(p);
  Input input;
  if (!StartInput(p, buf, save, stop, &input)) return 1;
  StreamTranscriber t(ctx, state, p, buf, stdout, text_file);
  const int code = TranscribeToEnd(t);
  // The reader has closed the buffer (the input ended) or a signal did; total_pushed is final
  // once it is closed and empty, which is how the loop ended.
  std::fprintf(stderr, "audio: %lld samples (%.2f s) read, %lld processed, %lld dropped (%.0f ms)\n",
               static_cast<long long>(buf->total_pushed()), buf->total_pushed() / static_cast<double>(WHISPER_SAMPLE_RATE),
               static_cast<long long>(t.consumed_samples()), static_cast<long long>(t.dropped_samples()),
               t.dropped_samples() * 1000.0 / WHISPER_SAMPLE_RATE);
  if (text_file != nullptr) std::fclose(text_file);
  whisper_free_state(state);
  whisper_free(ctx);
  return code;
}

}  // namespace
}  // namespace whisper::stream

int main(int argc, char** argv) {
  // `bazel run` starts binaries in their runfiles tree; relative paths mean the user's directory.
  if (const absl::Status st = whisper::ChdirToBuildWorkingDirectory(); !st.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  return whisper::stream::Run(argc, argv);
}
