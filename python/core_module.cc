// ggml_whisper._core: the C++ half of the Python package (python/ggml_whisper/__init__.py holds the
// faster-whisper-shaped API on top). Built on whisper.h only, plus the audio decoder the CLI uses.
//
//   Model(path, decoding, dtw, compute_type)  one whisper_context (whisper_init_from_file_with_params;
//                                        a CTranslate2 folder: converted in memory, see LoadContext)
//   decode_audio_file(path)            -> (float32 ndarray, ne = [n_samples] at 16 kHz, the truncation
//                                        warning or "") (LoadAudio16kMono; path: str or bytes)
//   decode_audio_bytes(data, name)     -> the same from an in-memory file image
//   Model.detect_language(audio)       -> (lang_id, [p per language]) (whisper_lang_auto_detect)
//   Model.transcribe(audio, options)   -> Transcription: whisper_full on its own whisper_state, on a
//                                        worker thread; next() blocks until the next segment
//   decide_language(multilingual, language, translate)
//                                      -> (language, translate, [("info"|"warning", message)]):
//                                        the CLI's and server's rule (apps/common/request_rules.h)
//   MAX_THREADS                        the CLI's -t limit (request_rules.h kMaxThreads)
//   MAX_FLOAT_SAMPLE                   the largest sample magnitude audio files may hold (audio.h)
//   MAX_DECODERS                       the largest beam_size and best_of (WHISPER_GGML_MAX_DECODERS)
//
// The GIL is released around every call into the library and while waiting for a segment, so
// several Python threads transcribe on one Model at once (one whisper_state each). Errors raise:
// FileNotFoundError (missing file), ValueError (bad input, with the library's message naming the
// file, field and value), RuntimeError (the run failed); the interpreter never aborts.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "apps/common/audio.h"
#include "apps/common/request_rules.h"
#include "tools/convert/ct2_folder.h"
#include "whisper/whisper.h"

namespace py = pybind11;

namespace {

// The library reports errors through its log callback (whisper_log_set is process-wide). Each
// thread keeps the first error since its last Take(), so a call's message reaches the exception
// raised for it; other messages are dropped unless $GGML_WHISPER_VERBOSE is set.
thread_local std::string t_error;
bool g_verbose = false;

void LogCallback(ggml_log_level level, const char* text, void*) {
  if (level == GGML_LOG_LEVEL_ERROR && t_error.empty()) {
    t_error = text;
    while (!t_error.empty() && t_error.back() == '\n') t_error.pop_back();
    // Prefer the whisper layer's message (it names the call and file) over ggml's bare one.
  } else if (level == GGML_LOG_LEVEL_ERROR && std::strncmp(t_error.c_str(), "ggml: ", 6) == 0 &&
             std::strncmp(text, "ggml: ", 6) != 0) {
    t_error = text;
    while (!t_error.empty() && t_error.back() == '\n') t_error.pop_back();
  }
  if (g_verbose && level != GGML_LOG_LEVEL_DEBUG) std::fputs(text, stderr);
}

std::string TakeError(const std::string& fallback) {
  std::string e = t_error.empty() ? fallback : t_error;
  t_error.clear();
  return e;
}

py::array_t<float> ToArray(std::vector<float>&& samples) {
  auto* v = new std::vector<float>(std::move(samples));
  py::capsule owner(v, [](void* p) { delete static_cast<std::vector<float>*>(p); });
  return py::array_t<float>({static_cast<py::ssize_t>(v->size())}, {sizeof(float)}, v->data(), owner);
}

[[noreturn]] void RaiseAudioError(const absl::Status& s) {
  const std::string msg(s.message());
  if (s.code() == absl::StatusCode::kNotFound) {
    PyErr_SetString(PyExc_FileNotFoundError, msg.c_str());
    throw py::error_already_set();
  }
  if (s.code() == absl::StatusCode::kResourceExhausted) throw std::runtime_error(msg);
  throw py::value_error(msg);
}

// (samples, warning): the warning is the CLI's for a decode that stopped before the frames the
// header announces (a truncated WAV), "" otherwise (audio.h TruncationWarning).
using DecodedAudio = std::pair<py::array_t<float>, std::string>;

DecodedAudio DecodeAudioFile(const std::string& path) {
  absl::StatusOr<std::vector<float>> audio;
  whisper::AudioReport report;
  whisper::AudioOptions options;
  options.report = &report;
  {
    py::gil_scoped_release release;
    audio = whisper::LoadAudio16kMono(path, options);
  }
  if (!audio.ok()) RaiseAudioError(audio.status());
  return {ToArray(std::move(*audio)), whisper::TruncationWarning(report, path)};
}

DecodedAudio DecodeAudioBytes(const py::bytes& data, const std::string& name) {
  std::string_view bytes = data;  // pybind11: a view of the bytes object, valid while it lives
  absl::StatusOr<std::vector<float>> audio;
  whisper::AudioReport report;
  whisper::AudioOptions options;
  options.report = &report;
  {
    py::gil_scoped_release release;
    audio = whisper::LoadAudio16kMonoFromMemory(bytes.data(), bytes.size(), name, options);
  }
  if (!audio.ok()) RaiseAudioError(audio.status());
  return {ToArray(std::move(*audio)), whisper::TruncationWarning(report, name)};
}

// whisper_full_params fields the Python layer sets (names as in whisper.h).
struct Options {
  int strategy = WHISPER_SAMPLING_BEAM_SEARCH;
  int beam_size = 5;
  int best_of = 5;
  float temperature = 0.0f;
  float temperature_inc = 0.2f;
  std::vector<float> temperatures;  // whisper_full_params.ggml_temperatures (empty: the two above)
  float logprob_thold = -1.0f;
  float no_speech_thold = 0.6f;
  float compression_ratio_thold = 2.4f;  // whisper_full_params.ggml_compression_ratio_thold (0: off)
  // whisper_full_params.ggml_clip_timestamps (seconds; empty: the whole audio) and
  // ggml_hallucination_silence_thold (negative: off).
  std::vector<float> clip_timestamps;
  float hallucination_silence_thold = -1.0f;
  // faster-whisper's options of these names (whisper_full_params.beam_search.patience and ggml_*).
  float patience = 1.0f;
  float length_penalty = 1.0f;
  float repetition_penalty = 1.0f;
  int no_repeat_ngram_size = 0;
  int max_new_tokens = 0;  // 0: None
  float prompt_reset_on_temperature = 0.5f;
  bool no_context = false;
  bool no_timestamps = false;
  bool suppress_blank = true;
  bool suppress_nst = true;
  float max_initial_ts = 1.0f;
  // whisper_full_params.ggml_suppress_tokens (faster-whisper's suppress_tokens; -1: non-speech),
  // used unless suppress_nst; ggml_prefix, ggml_hotwords ("" = none), ggml_chunk_length.
  std::vector<whisper_token> suppress_tokens;
  std::string prefix;
  std::string hotwords;
  // whisper_full_params.ggml_prepend/append_punctuations (faster-whisper's prepend_punctuations
  // and append_punctuations, UTF-8; "" = no marks): faster-whisper's defaults.
  std::string prepend_punctuations = "\"'\xE2\x80\x9C\xC2\xBF([{-";
  std::string append_punctuations =
      "\"'.\xE3\x80\x82,\xEF\xBC\x8C!\xEF\xBC\x81?\xEF\xBC\x9F:\xEF\xBC\x9A\xE2\x80\x9D)]}\xE3\x80\x81";
  int chunk_length = 0;
  bool translate = false;
  bool multilingual = false;  // whisper_full_params.ggml_multilingual (faster-whisper's multilingual)
  std::string language = "en";
  std::string initial_prompt;
  std::vector<whisper_token> prompt_tokens;
  int n_threads = 4;
  // vad_filter (faster-whisper's VadOptions; whisper_full_params.vad): "" = off.
  std::string vad_model_path;
  whisper_vad_params vad_params = whisper_vad_default_params();
  // whisper_full_params.ggml_batch_size (BatchedInferencePipeline, ggml_whisper/batched.py): > 1
  // decodes VAD-cut chunks that many at a time; vad_model_path then finds the pauses (p.vad off).
  int batch_size = 0;
};

// One segment as the Python layer receives it.
struct SegmentOut {
  int64_t t0 = 0, t1 = 0;  // centiseconds
  std::string text;
  // Text and timestamp tokens, as faster-whisper's Segment.tokens (its opening and closing
  // timestamps included); token_logprobs: those of the text tokens (< eot) only.
  std::vector<whisper_token> tokens;
  std::vector<float> token_logprobs;
  whisper_ggml_segment_decoding window = {};  // the window's seek, temperature, avg_logprob, compression ratio
  float no_speech_prob = 0.0f;
  int lang_id = 0;  // whisper_ggml_full_get_segment_lang_id: its window's language
  // Word times (a context made with dtw): (t0, t1 centiseconds, bytes, probability) per word
  // (whisper_ggml_full_get_token_word_probability: faster-whisper's Word.probability).
  bool has_words = false;
  std::vector<std::tuple<int64_t, int64_t, std::string, float>> words;
};

struct ContextHolder {
  whisper_context* ctx = nullptr;
  ~ContextHolder() { whisper_free(ctx); }
};

class Transcription {
 public:
  Transcription(std::shared_ptr<ContextHolder> model, std::vector<float> audio, const Options& o)
      : model_(std::move(model)), audio_(std::move(audio)), options_(o) {
    state_ = whisper_init_state(model_->ctx);
    if (state_ == nullptr) throw std::runtime_error(TakeError("whisper_init_state failed"));
    worker_ = std::thread([this] { Run(); });
  }

  ~Transcription() { Close(); }

  // The next segment, or None at the end. Raises ValueError if whisper_full refused its
  // parameters (-1: e.g. a window's prompt + max_new_tokens past n_text_ctx, faster-whisper's
  // ValueError from its iterator), RuntimeError for any other failure.
  py::object Next() {
    SegmentOut seg;
    bool have = false;
    {
      py::gil_scoped_release release;
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return !queue_.empty() || done_; });
      if (!queue_.empty()) {
        seg = std::move(queue_.front());
        queue_.pop_front();
        have = true;
      }
    }
    if (!have) {
      if (ret_ == -1 && !aborted_) throw py::value_error(error_);
      if (ret_ != 0 && !aborted_) throw std::runtime_error(error_);
      return py::none();
    }
    py::object words = py::none();
    if (seg.has_words) {
      py::list list;
      for (const auto& [t0, t1, text, p] : seg.words) list.append(py::make_tuple(t0, t1, py::bytes(text), p));
      words = std::move(list);
    }
    const whisper_ggml_segment_decoding& w = seg.window;
    return py::make_tuple(seg.t0, seg.t1, py::bytes(seg.text), seg.tokens, seg.token_logprobs, seg.no_speech_prob,
                          words, std::string(whisper_lang_str(seg.lang_id)),
                          py::make_tuple(w.seek, w.temperature, w.avg_logprob, w.compression_ratio));
  }

  // Stops the run (abort callback) and waits for the worker; safe to call twice.
  void Close() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) return;
      closed_ = true;
    }
    stop_.store(true);
    if (worker_.joinable()) {
      if (PyGILState_Check()) {
        py::gil_scoped_release release;
        worker_.join();
      } else {
        worker_.join();
      }
    }
    whisper_free_state(state_);
    state_ = nullptr;
  }

 private:
  static void OnSegment(whisper_context* ctx, whisper_state* state, int n_new, void* user) {
    auto* self = static_cast<Transcription*>(user);
    const int n = whisper_full_n_segments_from_state(state);
    const whisper_token eot = whisper_token_eot(ctx);
    for (int i = n - n_new; i < n; ++i) {
      SegmentOut s;
      s.t0 = whisper_full_get_segment_t0_from_state(state, i);
      s.t1 = whisper_full_get_segment_t1_from_state(state, i);
      s.text = whisper_full_get_segment_text_from_state(state, i);
      s.no_speech_prob = whisper_full_get_segment_no_speech_prob_from_state(state, i);
      s.lang_id = whisper_ggml_full_get_segment_lang_id_from_state(state, i);
      whisper_ggml_full_get_segment_decoding_from_state(state, i, &s.window);
      if (s.window.opening_timestamp >= 0) s.tokens.push_back(s.window.opening_timestamp);
      const whisper_token beg = whisper_token_beg(ctx);
      const int nt = whisper_full_n_tokens_from_state(state, i);
      s.has_words = nt > 0 && whisper_ggml_full_get_token_word_start_from_state(state, i, 0) >= 0;
      for (int j = 0; j < nt; ++j) {
        const whisper_token_data d = whisper_full_get_token_data_from_state(state, i, j);
        if (d.id >= beg) s.tokens.push_back(d.id);
        if (d.id >= eot) continue;
        s.tokens.push_back(d.id);
        s.token_logprobs.push_back(d.plog);
        if (!s.has_words) continue;
        // A word: its first token's t0 to its last token's t1 (in the input's time with VAD:
        // whisper.cpp 1.9.3's getters); probability: the alignment pass's, as faster-whisper's.
        const int64_t t0 = whisper_full_get_token_t0_from_state(state, i, j);
        const int64_t t1 = whisper_full_get_token_t1_from_state(state, i, j);
        if (whisper_ggml_full_get_token_word_start_from_state(state, i, j) == 1 || s.words.empty()) {
          s.words.emplace_back(t0, t1, std::string(),
                               whisper_ggml_full_get_token_word_probability_from_state(state, i, j));
        }
        auto& w = s.words.back();
        std::get<1>(w) = std::max(std::get<1>(w), t1);
        std::get<2>(w) += whisper_token_to_str(ctx, d.id);
      }
      std::lock_guard<std::mutex> lock(self->mu_);
      self->queue_.push_back(std::move(s));
    }
    self->cv_.notify_all();
  }

  static bool OnAbort(void* user) { return static_cast<Transcription*>(user)->stop_.load(); }

  void Run() {
    const Options& o = options_;
    whisper_full_params p = whisper_full_default_params(static_cast<whisper_sampling_strategy>(o.strategy));
    p.n_threads = o.n_threads;
    p.beam_search.beam_size = o.beam_size;
    p.greedy.best_of = o.best_of;
    p.temperature = o.temperature;
    p.temperature_inc = o.temperature_inc;
    p.ggml_temperatures = o.temperatures.empty() ? nullptr : o.temperatures.data();
    p.ggml_n_temperatures = static_cast<int>(o.temperatures.size());
    p.logprob_thold = o.logprob_thold;
    p.no_speech_thold = o.no_speech_thold;
    p.ggml_compression_ratio_thold = o.compression_ratio_thold;
    p.ggml_clip_timestamps = o.clip_timestamps.empty() ? nullptr : o.clip_timestamps.data();
    p.ggml_n_clip_timestamps = static_cast<int>(o.clip_timestamps.size());
    p.ggml_hallucination_silence_thold = o.hallucination_silence_thold;
    p.beam_search.patience = o.patience;
    p.ggml_length_penalty = o.length_penalty;
    p.ggml_repetition_penalty = o.repetition_penalty;
    p.ggml_no_repeat_ngram_size = o.no_repeat_ngram_size;
    p.ggml_max_new_tokens = o.max_new_tokens;
    p.ggml_prompt_reset_on_temperature = o.prompt_reset_on_temperature;
    p.no_context = o.no_context;
    p.no_timestamps = o.no_timestamps;
    p.suppress_blank = o.suppress_blank;
    p.suppress_nst = o.suppress_nst;
    p.max_initial_ts = o.max_initial_ts;
    if (!o.suppress_nst) {
      p.ggml_suppress_tokens = o.suppress_tokens.data();  // may be NULL with 0: then none
      p.ggml_n_suppress_tokens = static_cast<int>(o.suppress_tokens.size());
      static const whisper_token kNone = 0;
      if (p.ggml_suppress_tokens == nullptr) p.ggml_suppress_tokens = &kNone;  // faster-whisper's []
    }
    p.ggml_prefix = o.prefix.empty() ? nullptr : o.prefix.c_str();
    p.ggml_hotwords = o.hotwords.empty() ? nullptr : o.hotwords.c_str();
    p.ggml_prepend_punctuations = o.prepend_punctuations.c_str();
    p.ggml_append_punctuations = o.append_punctuations.c_str();
    p.ggml_chunk_length = o.chunk_length;
    p.translate = o.translate;
    p.ggml_multilingual = o.multilingual;
    p.language = o.language.c_str();
    p.detect_language = false;
    p.initial_prompt = o.initial_prompt.empty() ? nullptr : o.initial_prompt.c_str();
    if (!o.prompt_tokens.empty()) {
      p.prompt_tokens = o.prompt_tokens.data();
      p.prompt_n_tokens = static_cast<int>(o.prompt_tokens.size());
    }
    if (!o.vad_model_path.empty()) {
      p.vad = true;
      p.vad_model_path = o.vad_model_path.c_str();
      p.vad_params = o.vad_params;
    }
    p.ggml_batch_size = o.batch_size;
    if (o.batch_size > 1) p.vad = false;  // batched: all the audio, cut at the pauses VAD finds
    p.print_progress = false;
    p.print_realtime = false;
    p.print_timestamps = false;
    p.new_segment_callback = &Transcription::OnSegment;
    p.new_segment_callback_user_data = this;
    p.abort_callback = &Transcription::OnAbort;
    p.abort_callback_user_data = this;
    const int ret = whisper_full_with_state(model_->ctx, state_, p, audio_.data(), static_cast<int>(audio_.size()));
    std::lock_guard<std::mutex> lock(mu_);
    ret_ = ret;
    aborted_ = stop_.load();
    if (ret != 0) error_ = TakeError("whisper_full_with_state failed (" + std::to_string(ret) + ")");
    done_ = true;
    cv_.notify_all();
  }

  std::shared_ptr<ContextHolder> model_;  // the context outlives its states
  std::vector<float> audio_;
  Options options_;
  whisper_state* state_ = nullptr;
  std::thread worker_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<SegmentOut> queue_;
  bool done_ = false;
  bool closed_ = false;
  bool aborted_ = false;
  int ret_ = 0;
  std::string error_;
  std::atomic<bool> stop_{false};
};

// The context of `path`: a whisper.cpp ggml file (whisper_init_from_file_with_params), or a
// CTranslate2 Whisper folder (faster-whisper's WhisperModel("models/faster-whisper-tiny.en")):
// converted in memory by Ct2FolderToGgmlImage (tools/convert/ct2_folder.h, which says why not to a
// file) and loaded from that buffer with the same params, so compute_type converts its weights
// as a file's. Nothing is written to disk. Called without the GIL. nullptr with *error set (the
// folder's problem, naming the file and the field; *not_found for a missing folder or model.bin),
// or with the loader's message pending (TakeError) when the context cannot be made.
whisper_context* LoadContext(const std::string& path, const whisper_context_params& cp, std::string* error,
                             bool* not_found) {
  if (!ggml_whisper::convert::IsDirectory(path)) return whisper_init_from_file_with_params(path.c_str(), cp);
  absl::StatusOr<std::vector<uint8_t>> image = ggml_whisper::convert::Ct2FolderToGgmlImage(path);
  if (!image.ok()) {
    *error = std::string(image.status().message());
    *not_found = image.status().code() == absl::StatusCode::kNotFound;
    return nullptr;
  }
  return whisper_ggml_init(nullptr, image->data(), image->size(), path.c_str(), cp, 0);  // messages name the folder
}

class Model {
 public:
  // dtw: "" or a -dtw preset name (whisper_ggml_alignment_heads_preset_from_name): DTW token timestamps, and under OpenAI's rules
  // word times in every segment.
  // compute_type: faster-whisper's name (whisper_ggml_set_compute_type): ValueError naming it and
  // listing the accepted names when unknown; bfloat16's substitution note is in compute_type_note.
  Model(const std::string& path, const std::string& decoding, const std::string& dtw,
        const std::string& compute_type)
      : holder_(std::make_shared<ContextHolder>()) {
    if (decoding != "openai" && decoding != "whisper.cpp") {
      throw py::value_error("decoding is '" + decoding + "', expected 'openai' or 'whisper.cpp'");
    }
    whisper_context_params cp = whisper_context_default_params();
    char msg[256] = "";
    const int ct = whisper_ggml_set_compute_type(&cp, compute_type.c_str(), msg, sizeof(msg));
    if (ct < 0) throw py::value_error(msg);
    if (ct > 0) compute_type_note_ = msg;
    if (!dtw.empty()) {
      const whisper_alignment_heads_preset preset = whisper_ggml_alignment_heads_preset_from_name(dtw.c_str());
      if (preset == WHISPER_AHEADS_NONE) throw py::value_error("dtw preset '" + dtw + "' is unknown");
      cp.dtw_token_timestamps = true;
      cp.dtw_aheads_preset = preset;
    }
    t_error.clear();
    std::string folder_error;
    bool not_found = false;
    {
      py::gil_scoped_release release;
      holder_->ctx = LoadContext(path, cp, &folder_error, &not_found);
    }
    if (!folder_error.empty()) {
      PyErr_SetString(not_found ? PyExc_FileNotFoundError : PyExc_ValueError,
                      ("cannot load the CTranslate2 model folder '" + path + "': " + folder_error).c_str());
      throw py::error_already_set();
    }
    if (holder_->ctx == nullptr) {
      const std::string msg = TakeError("cannot load the model '" + path + "'");
      if (msg.find("No such file") != std::string::npos || msg.find("does not exist") != std::string::npos) {
        PyErr_SetString(PyExc_FileNotFoundError, msg.c_str());
        throw py::error_already_set();
      }
      throw py::value_error(msg);
    }
    whisper_ggml_set_decoding(holder_->ctx, decoding == "openai" ? WHISPER_GGML_DECODING_OPENAI
                                                                  : WHISPER_GGML_DECODING_WHISPER_CPP);
  }

  bool multilingual() const { return whisper_is_multilingual(holder_->ctx) != 0; }
  const std::string& compute_type_note() const { return compute_type_note_; }
  // Languages the model has tokens for (ids 0 .. n - 1 of whisper.cpp's table): the tokens between
  // <|startoftranscript|> and <|translate|> (99 for base, 100 for large-v3); 1 (en) if English-only.
  int n_languages() const {
    if (!multilingual()) return 1;
    return whisper_token_translate(holder_->ctx) - whisper_token_sot(holder_->ctx) - 1;
  }
  // (n_vocab, n_audio_layer, n_text_layer): enough to name the model for its alignment heads.
  py::tuple Dims() const {
    return py::make_tuple(whisper_model_n_vocab(holder_->ctx), whisper_model_n_audio_layer(holder_->ctx),
                          whisper_model_n_text_layer(holder_->ctx));
  }

  // (lang_id, probabilities of every language) of the first 30 s, on a state of its own.
  py::tuple DetectLanguage(const py::array_t<float, py::array::c_style | py::array::forcecast>& audio,
                           int n_threads) {
    // faster-whisper 1.2.1 detects on any audio: fewer samples than a hop (160) make no frame (the
    // window is all padding, a mel of zeros: one zero frame here, as the encoder pads with zeros),
    // and up to the 201 whisper_pcm_to_mel needs, zeros are appended (the same frame count).
    std::vector<float> padded;
    const float* samples = audio.data();
    int n = static_cast<int>(audio.size());
    if (n >= WHISPER_HOP_LENGTH && n <= WHISPER_N_FFT / 2) {
      padded.assign(samples, samples + n);
      padded.resize(WHISPER_N_FFT / 2 + 1, 0.0f);
      samples = padded.data();
      n = static_cast<int>(padded.size());
    }
    const std::vector<float> zero_frame(static_cast<size_t>(whisper_model_n_mels(holder_->ctx)), 0.0f);
    std::vector<float> probs(static_cast<size_t>(whisper_lang_max_id() + 1));
    int id = -1;
    std::string error;
    {
      py::gil_scoped_release release;
      whisper_state* st = whisper_init_state(holder_->ctx);
      if (st == nullptr) {
        error = TakeError("whisper_init_state failed");
      } else {
        const int mel = n < WHISPER_HOP_LENGTH
                            ? whisper_set_mel_with_state(holder_->ctx, st, zero_frame.data(), 1,
                                                         static_cast<int>(zero_frame.size()))
                            : whisper_pcm_to_mel_with_state(holder_->ctx, st, samples, n, n_threads);
        if (mel != 0) {
          error = TakeError("whisper_pcm_to_mel_with_state failed");
        } else {
          id = whisper_lang_auto_detect_with_state(holder_->ctx, st, 0, n_threads, probs.data());
          if (id < 0) error = TakeError("whisper_lang_auto_detect_with_state failed");
        }
        whisper_free_state(st);
      }
    }
    if (!error.empty()) throw std::runtime_error(error);
    return py::make_tuple(id, probs);
  }

  std::unique_ptr<Transcription> Transcribe(const py::array_t<float, py::array::c_style | py::array::forcecast>& audio,
                                            const Options& options) {
    if (audio.ndim() != 1) {
      throw py::value_error("audio has " + std::to_string(audio.ndim()) +
                            " dimensions, expected 1 (mono float32 samples at 16 kHz)");
    }
    std::vector<float> samples(audio.data(), audio.data() + audio.size());
    t_error.clear();
    py::gil_scoped_release release;
    return std::make_unique<Transcription>(holder_, std::move(samples), options);
  }

  std::string TokenText(int id) const {
    if (id < 0 || id >= whisper_n_vocab(holder_->ctx)) throw py::value_error("token id out of range");
    return whisper_token_to_str(holder_->ctx, id);
  }

  std::vector<whisper_token> Tokenize(const std::string& text) const {
    std::vector<whisper_token> out(text.size() + 8);
    const int n = whisper_tokenize(holder_->ctx, text.c_str(), out.data(), static_cast<int>(out.size()));
    if (n < 0) throw std::runtime_error(TakeError("whisper_tokenize failed"));
    out.resize(static_cast<size_t>(n));
    return out;
  }

 private:
  std::shared_ptr<ContextHolder> holder_;
  std::string compute_type_note_;
};

}  // namespace

// Seconds of speech Silero VAD finds in `audio` (whisper_vad_segments_from_samples with `params`):
// faster-whisper's TranscriptionInfo.duration_after_vad. Raises RuntimeError with the loader's
// message when the model cannot be loaded.
// faster-whisper 1.2.1's get_speech_timestamps (whisper_ggml_vad_speech_faster_whisper): the speech
// chunks of `audio` as (start, end) sample indices. neg_threshold < 0 is faster-whisper's None.
std::vector<std::pair<int64_t, int64_t>> SpeechChunks(const std::string& vad_model_path,
                                                      const py::array_t<float, py::array::c_style | py::array::forcecast>& audio,
                                                      const whisper_vad_params& params, float neg_threshold,
                                                      int n_threads) {
  if (audio.ndim() != 1) throw py::value_error("audio must be 1-D float32 samples at 16 kHz");
  t_error.clear();
  py::gil_scoped_release release;
  whisper_vad_context_params cp = whisper_vad_default_context_params();
  cp.n_threads = n_threads;
  whisper_vad_context* vctx = whisper_vad_init_from_file_with_params(vad_model_path.c_str(), cp);
  if (vctx == nullptr) throw std::runtime_error(TakeError("cannot load VAD model '" + vad_model_path + "'"));
  const int n = static_cast<int>(audio.size());
  std::vector<int64_t> spans;
  int found = whisper_ggml_vad_speech_faster_whisper(vctx, params, neg_threshold, audio.data(), n, nullptr, 0);
  if (found > 0) {
    spans.resize(2 * static_cast<size_t>(found));
    found = whisper_ggml_vad_speech_faster_whisper(vctx, params, neg_threshold, audio.data(), n, spans.data(), found);
  }
  const std::string error = found < 0 ? TakeError("whisper_ggml_vad_speech_faster_whisper failed") : "";
  whisper_vad_free(vctx);
  if (!error.empty()) throw std::runtime_error(error);
  std::vector<std::pair<int64_t, int64_t>> chunks;
  for (int i = 0; i < found; ++i) chunks.emplace_back(spans[2 * i], spans[2 * i + 1]);
  return chunks;
}

namespace {

// The module's functions: audio decoding, version and system info, language codes and
// faster-whisper's language rule, MAX_THREADS.
void DefineFunctions(py::module_& m) {
  m.def("decode_audio_file", &DecodeAudioFile, py::arg("path"),
        "Decodes an audio file to mono float32 at 16 kHz (libsndfile: WAV, FLAC, OGG, MP3, ...); returns "
        "(samples, the warning for a truncated file or '').");
  m.def("decode_audio_bytes", &DecodeAudioBytes, py::arg("data"), py::arg("name"),
        "Decodes the bytes of an audio file as decode_audio_file decodes the file.");
  m.def("version", [] { return std::string(whisper_version()); });
  m.def("system_info", [] { return std::string(whisper_print_system_info()); });
  m.def("lang_str", [](int id) {
    const char* s = whisper_lang_str(id);
    return s == nullptr ? std::string() : std::string(s);
  });
  m.def("lang_id", [](const std::string& code) { return whisper_lang_id(code.c_str()); });
  m.def("lang_max_id", &whisper_lang_max_id);
  m.def(
      "decide_language",
      [](bool multilingual, const std::string& language, bool translate) {
        const whisper::LanguageDecision d = whisper::DecideLanguage(multilingual, language, translate);
        std::vector<std::pair<std::string, std::string>> notes;
        for (const whisper::LanguageDecision::Note& n : d.notes) {
          notes.emplace_back(n.level == whisper::LanguageDecision::Level::kInfo ? "info" : "warning", n.message);
        }
        return std::make_tuple(d.language, d.translate, notes);
      },
      py::arg("multilingual"), py::arg("language"), py::arg("translate"),
      "faster-whisper's rule for language and task on English-only models (apps/common/request_rules.h).");
  m.attr("MAX_THREADS") = whisper::kMaxThreads;
  m.attr("MAX_FLOAT_SAMPLE") = whisper::kMaxFloatSample;  // float files' limit, for numpy audio too
  m.attr("MAX_DECODERS") = WHISPER_GGML_MAX_DECODERS;  // the largest beam_size and best_of
  m.attr("MAX_BATCH_SIZE") = WHISPER_GGML_MAX_BATCH_SIZE;
}

// Options (whisper_full's parameters), VadParams and speech_chunks, the sampling strategies.
void DefineOptions(py::module_& m) {
  py::class_<Options>(m, "Options")
      .def(py::init<>())
      .def_readwrite("strategy", &Options::strategy)
      .def_readwrite("beam_size", &Options::beam_size)
      .def_readwrite("best_of", &Options::best_of)
      .def_readwrite("temperature", &Options::temperature)
      .def_readwrite("temperature_inc", &Options::temperature_inc)
      .def_readwrite("temperatures", &Options::temperatures)
      .def_readwrite("logprob_thold", &Options::logprob_thold)
      .def_readwrite("no_speech_thold", &Options::no_speech_thold)
      .def_readwrite("compression_ratio_thold", &Options::compression_ratio_thold)
      .def_readwrite("clip_timestamps", &Options::clip_timestamps)
      .def_readwrite("hallucination_silence_thold", &Options::hallucination_silence_thold)
      .def_readwrite("patience", &Options::patience)
      .def_readwrite("length_penalty", &Options::length_penalty)
      .def_readwrite("repetition_penalty", &Options::repetition_penalty)
      .def_readwrite("no_repeat_ngram_size", &Options::no_repeat_ngram_size)
      .def_readwrite("max_new_tokens", &Options::max_new_tokens)
      .def_readwrite("prompt_reset_on_temperature", &Options::prompt_reset_on_temperature)
      .def_readwrite("no_context", &Options::no_context)
      .def_readwrite("no_timestamps", &Options::no_timestamps)
      .def_readwrite("suppress_blank", &Options::suppress_blank)
      .def_readwrite("suppress_nst", &Options::suppress_nst)
      .def_readwrite("max_initial_ts", &Options::max_initial_ts)
      .def_readwrite("suppress_tokens", &Options::suppress_tokens)
      .def_readwrite("prefix", &Options::prefix)
      .def_readwrite("hotwords", &Options::hotwords)
      .def_readwrite("prepend_punctuations", &Options::prepend_punctuations)
      .def_readwrite("append_punctuations", &Options::append_punctuations)
      .def_readwrite("chunk_length", &Options::chunk_length)
      .def_readwrite("translate", &Options::translate)
      .def_readwrite("multilingual", &Options::multilingual)
      .def_readwrite("language", &Options::language)
      .def_readwrite("initial_prompt", &Options::initial_prompt)
      .def_readwrite("prompt_tokens", &Options::prompt_tokens)
      .def_readwrite("n_threads", &Options::n_threads)
      .def_readwrite("vad_model_path", &Options::vad_model_path)
      .def_readwrite("vad_params", &Options::vad_params)
      .def_readwrite("batch_size", &Options::batch_size);
  py::class_<whisper_vad_params>(m, "VadParams")
      .def(py::init([] { return whisper_vad_default_params(); }))
      .def_readwrite("threshold", &whisper_vad_params::threshold)
      .def_readwrite("min_speech_duration_ms", &whisper_vad_params::min_speech_duration_ms)
      .def_readwrite("min_silence_duration_ms", &whisper_vad_params::min_silence_duration_ms)
      .def_readwrite("max_speech_duration_s", &whisper_vad_params::max_speech_duration_s)
      .def_readwrite("speech_pad_ms", &whisper_vad_params::speech_pad_ms)
      .def_readwrite("samples_overlap", &whisper_vad_params::samples_overlap);
  m.def("speech_chunks", &SpeechChunks, py::arg("vad_model_path"), py::arg("audio"), py::arg("params"),
        py::arg("neg_threshold"), py::arg("n_threads"),
        "faster-whisper's get_speech_timestamps: [(start, end)] sample indices of the speech in audio "
        "(neg_threshold < 0: None).");
  m.attr("SAMPLING_GREEDY") = static_cast<int>(WHISPER_SAMPLING_GREEDY);
  m.attr("SAMPLING_BEAM_SEARCH") = static_cast<int>(WHISPER_SAMPLING_BEAM_SEARCH);
}

// The Model class and the Transcription it returns.
void DefineModel(py::module_& m) {
  py::class_<Transcription>(m, "Transcription")
      .def("next", &Transcription::Next,
           "The next segment (t0_cs, t1_cs, text_bytes, tokens, token_logprobs, no_speech_prob, words, language, "
           "(seek, temperature, avg_logprob, compression_ratio) of its window), or None at "
           "the end; blocks without the GIL until it is decoded.")
      .def("close", &Transcription::Close, "Stops the run and frees its state.");

  py::class_<Model>(m, "Model")
      .def(py::init<const std::string&, const std::string&, const std::string&, const std::string&>(),
           py::arg("path"), py::arg("decoding") = "openai", py::arg("dtw") = "", py::arg("compute_type") = "default")
      .def_property_readonly("compute_type_note", &Model::compute_type_note)
      .def_property_readonly("multilingual", &Model::multilingual)
      .def_property_readonly("n_languages", &Model::n_languages)
      .def_property_readonly("dims", &Model::Dims)
      .def("detect_language", &Model::DetectLanguage, py::arg("audio"), py::arg("n_threads"))
      .def("transcribe", &Model::Transcribe, py::arg("audio"), py::arg("options"))
      .def("token_text", &Model::TokenText)
      .def("tokenize", &Model::Tokenize);
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "ggml_whisper's C++ core (see the ggml_whisper package for the Python API)";
  g_verbose = std::getenv("GGML_WHISPER_VERBOSE") != nullptr;
  whisper_log_set(&LogCallback, nullptr);
  DefineFunctions(m);
  DefineOptions(m);
  DefineModel(m);
}
