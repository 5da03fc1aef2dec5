#include "apps/stream/stream_transcriber.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "apps/common/output.h"

namespace whisper::stream {
namespace {

constexpr int kRate = WHISPER_SAMPLE_RATE;
constexpr int kMinSamples = kRate / 10;  // whisper_full needs 100 ms
constexpr int kVadCheckMs = 2000;       // whisper-stream: check the last 2 s ...
constexpr int kVadLastMs = 1000;        // ... for a quiet last second

int Samples(int ms) { return static_cast<int>(static_cast<int64_t>(ms) * kRate / 1000); }

}  // namespace

bool VadSimple(float* pcm, int n, int sample_rate, int last_ms, float vad_thold, float freq_thold) {
  const int n_last = static_cast<int>(static_cast<int64_t>(sample_rate) * last_ms / 1000);
  if (n <= 0 || n_last >= n) return false;
  if (freq_thold > 0.0f) {
    // y[i] = a * (y[i-1] + x[i] - x[i-1]), a = dt / (RC + dt), RC = 1 / (2 pi fc).
    const float rc = 1.0f / (2.0f * static_cast<float>(M_PI) * freq_thold);
    const float dt = 1.0f / static_cast<float>(sample_rate);
    const float alpha = dt / (rc + dt);
    float x_prev = pcm[0];
    float y = pcm[0];
    for (int i = 1; i < n; ++i) {
      const float x = pcm[i];
      y = alpha * (y + x - x_prev);
      x_prev = x;
      pcm[i] = y;
    }
  }
  double energy_all = 0, energy_last = 0;
  for (int i = 0; i < n; ++i) {
    energy_all += std::fabs(pcm[i]);
    if (i >= n - n_last) energy_last += std::fabs(pcm[i]);
  }
  energy_all /= n;
  energy_last /= n_last;
  // Strictly below (whisper.cpp: <=), so digital silence (0 <= 0) is not the end of speech.
  return energy_last < vad_thold * energy_all;
}

int CaptureCapacity(const StreamParams& p) { return Samples(p.length_ms); }

StreamTranscriber::StreamTranscriber(whisper_context* ctx, whisper_state* state, const StreamParams& p, AudioBuffer* in,
                         FILE* out, FILE* text_file)
    : ctx_(ctx), state_(state), p_(p), in_(in), out_(out), text_file_(text_file) {
  n_step_ = Samples(p.step_ms);
  n_len_ = Samples(p.length_ms);
  n_keep_ = Samples(p.keep_ms);
  n_new_line_ = p.step_ms > 0 ? std::max(1, p.length_ms / p.step_ms - 1) : 1;
  new_.resize(static_cast<size_t>(in->capacity()));
  // Room for a late step's audio (at most the capture capacity, --length ms) beside a full
  // window's carry (see SlidingStep).
  window_.resize(static_cast<size_t>(n_keep_ + 2 * n_len_));
  old_.resize(static_cast<size_t>(n_keep_ + 2 * n_len_));
  scratch_.resize(static_cast<size_t>(Samples(kVadCheckMs)));
  prompt_.reserve(static_cast<size_t>(std::max(1, whisper_n_text_ctx(ctx))));
  pieces_.reserve(static_cast<size_t>(std::max(1, whisper_n_text_ctx(ctx))));
}

absl::Status StreamTranscriber::Transcribe(const float* x, int n, bool vad_mode) {
  whisper_full_params w =
      whisper_full_default_params(p_.beam_size > 1 ? WHISPER_SAMPLING_BEAM_SEARCH : WHISPER_SAMPLING_GREEDY);
  w.print_progress = false;
  w.print_special = p_.print_special;
  w.print_realtime = false;
  w.print_timestamps = vad_mode;
  // whisper-stream: one segment per window in the sliding mode (no second pass from the last
  // timestamp, which re-encodes the window's tail); its timestamp tokens split it into pieces.
  w.single_segment = !vad_mode;
  w.translate = p_.translate;
  w.max_tokens = p_.max_tokens;
  w.language = p_.language.c_str();
  w.n_threads = p_.n_threads;
  if (p_.beam_size > 1) w.beam_search.beam_size = p_.beam_size;
  w.audio_ctx = p_.audio_ctx;
  if (p_.no_fallback) w.temperature_inc = 0.0f;
  const bool context = p_.keep_context && !vad_mode;  // whisper-stream: no context with VAD
  w.prompt_tokens = context && !prompt_.empty() ? prompt_.data() : nullptr;
  w.prompt_n_tokens = context ? static_cast<int>(prompt_.size()) : 0;
  const int rc = whisper_full_with_state(ctx_, state_, w, x, n);
  if (rc != 0) return absl::InternalError(absl::StrCat("whisper_full_with_state failed (", rc, ")"));
  return absl::OkStatus();
}

void StreamTranscriber::SplitPieces() {
  pieces_.clear();
  const whisper_token eot = whisper_token_eot(ctx_), beg = whisper_token_beg(ctx_);
  const int n_segments = whisper_full_n_segments_from_state(state_);
  for (int i = 0; i < n_segments; ++i) {
    Piece cur{i, 0, 0, 0};
    bool has_text = false;
    const int n_tokens = whisper_full_n_tokens_from_state(state_, i);
    for (int j = 0; j < n_tokens; ++j) {
      const whisper_token t = whisper_full_get_token_id_from_state(state_, i, j);
      if (t >= beg) {  // a timestamp closes the text before it
        if (has_text && pieces_.size() < pieces_.capacity()) {
          cur.tok_end = j;
          cur.t1 = static_cast<int64_t>(t - beg) * (kRate / 50);  // 20 ms per timestamp step
          pieces_.push_back(cur);
        }
        cur = Piece{i, j + 1, j + 1, 0};
        has_text = false;
      } else if (t < eot) {
        has_text = true;
      }
    }
    if (has_text && pieces_.size() < pieces_.capacity()) {  // text the window's end cut off
      cur.tok_end = n_tokens;
      cur.t1 = std::min<int64_t>(whisper_full_get_segment_t1_from_state(state_, i) * (kRate / 100), window_n_);
      pieces_.push_back(cur);
    }
  }
}

void StreamTranscriber::PrintPieces(int begin, int end, FILE* f) {
  const whisper_token eot = whisper_token_eot(ctx_);
  for (int k = begin; k < end; ++k) {
    const Piece& piece = pieces_[k];
    for (int j = piece.tok_begin; j < piece.tok_end; ++j) {
      if (whisper_full_get_token_id_from_state(state_, piece.seg, j) < eot) {
        std::fputs(whisper_full_get_token_text_from_state(ctx_, state_, piece.seg, j), f);
      }
    }
  }
}

void StreamTranscriber::ClearLine() {
  std::fputs("\33[2K\r", out_);
  std::fprintf(out_, "%100s", "");
  std::fputs("\33[2K\r", out_);
}

void StreamTranscriber::Commit(int n_pieces, int carry_from) {
  n_pieces = std::min(n_pieces, n_current_);
  if (n_pieces > n_committed_) {
    ClearLine();
    PrintPieces(n_committed_, n_pieces, out_);
    std::fputs("\n", out_);
    if (text_file_ != nullptr) {
      PrintPieces(n_committed_, n_pieces, text_file_);
      std::fputs("\n", text_file_);
      std::fflush(text_file_);
    }
    ++n_commits_;
    if (p_.keep_context) {
      prompt_.clear();
      const whisper_token eot = whisper_token_eot(ctx_);
      const size_t max_prompt = prompt_.capacity() / 2;
      for (int k = n_committed_; k < n_pieces; ++k) {
        for (int j = pieces_[k].tok_begin; j < pieces_[k].tok_end; ++j) {
          const whisper_token t = whisper_full_get_token_id_from_state(state_, pieces_[k].seg, j);
          if (t < eot && prompt_.size() < max_prompt) prompt_.push_back(t);  // text tokens only
        }
      }
    }
    n_committed_ = n_pieces;
  }
  // The audio after the committed text opens the next window.
  carry_from = std::max(0, std::min(carry_from, window_n_));
  std::memmove(old_.data(), window_.data() + carry_from, sizeof(float) * static_cast<size_t>(window_n_ - carry_from));
  old_n_ = window_n_ - carry_from;
  // The rest of this window's text stays on screen as the running line until the next step
  // transcribes its audio again.
  line_open_ = n_committed_ < n_current_;
  if (line_open_) PrintPieces(n_committed_, n_current_, out_);
  std::fflush(out_);
}

absl::StatusOr<bool> StreamTranscriber::Step() { return p_.step_ms > 0 ? SlidingStep() : VadStep(); }

absl::StatusOr<bool> StreamTranscriber::SlidingStep() {
  const int64_t dropped_before = dropped_;
  // A source that waits for us (a pipe, a file) is taken in steps of exactly --step ms, as a live
  // one on a machine that keeps up; a live one, everything that arrived (a late step catches up).
  const int n_new = in_->Take(n_step_, Paced() ? n_step_ : 0, new_.data(), &dropped_);
  if (dropped_ > dropped_before) {
    std::fprintf(stderr, "\nwarning: cannot process audio fast enough, dropped %.0f ms of audio\n",
                 (dropped_ - dropped_before) * 1000.0 / kRate);
  }
  consumed_ += n_new;
  const bool end = in_->closed() && in_->pending() == 0;
  if (n_new == 0) {
    if (end && line_open_) Commit(n_current_, window_n_);
    return !end;
  }
  // A step that ran longer than --step ms (a busy machine) brings more new audio than the window
  // has room for beside the audio it carries. Then the finished pieces of the last
  // transcription are committed first (the audio from the last one's start stays), and the window
  // may grow past --keep + --length ms, up to the size of its buffer; only if even that overflows
  // is all of the text committed with --keep ms carried. Carried audio whose text was not
  // committed never leaves the window untranscribed.
  const int max_window = static_cast<int>(window_.size());
  if (old_n_ + n_new > n_keep_ + n_len_ && n_current_ - n_committed_ >= 2) {
    Commit(n_current_ - 1, static_cast<int>(std::min<int64_t>(pieces_[n_current_ - 2].t1, window_n_)));
    ++n_overflow_commits_;
  }
  if (old_n_ + n_new > max_window && n_current_ > n_committed_) {
    Commit(n_current_, window_n_ - std::min(n_keep_, std::max(0, max_window - n_new)));
    ++n_overflow_commits_;
  }
  // The window: the end of the previous step's audio, then the new audio (whisper-stream's
  // n_samples_take).
  const int n_take = std::min(old_n_, std::max(0, max_window - n_new));
  const int n_fresh = std::min(n_new, max_window);
  std::memmove(window_.data(), old_.data() + (old_n_ - n_take), sizeof(float) * static_cast<size_t>(n_take));
  std::memcpy(window_.data() + n_take, new_.data() + (n_new - n_fresh), sizeof(float) * static_cast<size_t>(n_fresh));
  window_n_ = n_take + n_fresh;
  std::memcpy(old_.data(), window_.data(), sizeof(float) * static_cast<size_t>(window_n_));
  old_n_ = window_n_;

  int n_pieces = 0;
  n_current_ = 0;
  n_committed_ = 0;
  if (window_n_ >= kMinSamples) {
    absl::Status st = Transcribe(window_.data(), window_n_, /*vad_mode=*/false);
    if (!st.ok()) return st;
    // whisper-stream's running line: clear it, then print the window's text.
    ClearLine();
    SplitPieces();
    n_pieces = static_cast<int>(pieces_.size());
    n_current_ = n_pieces;
    PrintPieces(0, n_pieces, out_);
    std::fflush(out_);
    line_open_ = n_pieces > 0;
  }
  ++n_iter_;
  const bool full = window_n_ + n_step_ > n_keep_ + n_len_;  // the next step would overflow it
  const bool close = n_iter_ % n_new_line_ == 0 || full;
  if (end || (full && n_pieces < 2) || n_pieces == 0) {
    Commit(n_pieces, window_n_ - n_keep_);  // all of it; --keep ms carried
  } else if (close && n_pieces >= 2) {
    // Commit the pieces before the last, which the next audio may still change; the audio from
    // the end of the last committed one opens the next window.
    Commit(n_pieces - 1, static_cast<int>(std::min<int64_t>(pieces_[n_pieces - 2].t1, window_n_)));
  }
  return !end;
}

absl::StatusOr<bool> StreamTranscriber::VadStep() {
  const int n_check = Samples(kVadCheckMs);
  const int64_t dropped_before = dropped_;
  const int n_new = in_->Take(n_check, Paced() ? n_check : 0, new_.data(), &dropped_);
  if (dropped_ > dropped_before) {
    std::fprintf(stderr, "\nwarning: cannot process audio fast enough, dropped %.0f ms of audio\n",
                 (dropped_ - dropped_before) * 1000.0 / kRate);
  }
  consumed_ += n_new;
  const bool end = in_->closed() && in_->pending() == 0;
  // Append to the audio not transcribed yet, keeping the newest --length ms.
  const int cap = n_len_;
  const int fresh = std::min(n_new, cap);
  const int keep = std::min(window_n_, cap - fresh);
  std::memmove(window_.data(), window_.data() + (window_n_ - keep), sizeof(float) * static_cast<size_t>(keep));
  std::memcpy(window_.data() + keep, new_.data() + (n_new - fresh), sizeof(float) * static_cast<size_t>(fresh));
  window_n_ = keep + fresh;

  bool speech_ended = false;
  if (window_n_ >= n_check) {
    std::memcpy(scratch_.data(), window_.data() + (window_n_ - n_check), sizeof(float) * static_cast<size_t>(n_check));
    speech_ended = VadSimple(scratch_.data(), n_check, kRate, kVadLastMs, p_.vad_thold, p_.freq_thold);
  }
  // Transcribe when speech ended, when the window is full (bounded latency), or at the end of the
  // input unless what is left is digital silence.
  bool silent = true;
  for (int i = 0; i < window_n_ && silent; ++i) silent = window_[i] == 0.0f;
  if ((speech_ended || window_n_ >= cap || end) && window_n_ >= kMinSamples && !silent) {
    absl::Status st = Transcribe(window_.data(), window_n_, /*vad_mode=*/true);
    if (!st.ok()) return st;
    const int64_t t1_ms = consumed_ * 1000 / kRate;
    const int64_t t0_ms = std::max<int64_t>(0, t1_ms - static_cast<int64_t>(window_n_) * 1000 / kRate);
    std::fprintf(out_, "\n### Transcription %d START | t0 = %d ms | t1 = %d ms\n\n", n_iter_, static_cast<int>(t0_ms),
                 static_cast<int>(t1_ms));
    const int n = whisper_full_n_segments_from_state(state_);
    for (int i = 0; i < n; ++i) {
      const char* text = whisper_full_get_segment_text_from_state(state_, i);
      char t0[32], t1[32];
      std::fprintf(out_, "[%s --> %s]  %s\n",
                   whisper_ggml_format_timestamp(whisper_full_get_segment_t0_from_state(state_, i), 0, t0, sizeof(t0)),
                   whisper_ggml_format_timestamp(whisper_full_get_segment_t1_from_state(state_, i), 0, t1, sizeof(t1)), text);
      if (text_file_ != nullptr) std::fprintf(text_file_, "%s\n", text);
    }
    if (text_file_ != nullptr) std::fflush(text_file_);
    std::fprintf(out_, "\n### Transcription %d END\n", n_iter_);
    std::fflush(out_);
    ++n_iter_;
    ++n_commits_;
    window_n_ = 0;
  }
  return !end;
}

}  // namespace whisper::stream
