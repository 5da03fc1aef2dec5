#include "whisper/decode_scheduler.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"

namespace whisper {

// ---- SlotBackend ----------------------------------------------------------------------------

absl::Status SlotBackend::Encode(const float* mel, int n_frames, int seek, int audio_ctx, int n_frames_valid) {
  struct Args {
    SlotBackend* self;
    const float* mel;
    int n_frames, seek, audio_ctx, n_frames_valid;
  } a{this, mel, n_frames, seek, audio_ctx, n_frames_valid};
  return sched_->Exclusive(
      [](void* p) {
        const Args& a = *static_cast<Args*>(p);
        return a.self->sched_->state_->EncodeWindow(a.self->slot_, a.mel, a.n_frames, a.seek, a.audio_ctx,
                                                    a.n_frames_valid);
      },
      &a, "encoder");
}

absl::Status SlotBackend::Decode(int decoder, const Token* tokens, int n_tokens, int n_past) {
  if (decoder < 0 || decoder >= n_decoders_) {
    return absl::InvalidArgumentError(
        absl::StrFormat("SlotBackend::Decode: decoder %d is not in [0, %d)", decoder, n_decoders_));
  }
  if (n_tokens == 1 && tokens != nullptr) return DecodeBatch(&decoder, tokens, 1, n_past);
  struct Args {
    SlotBackend* self;
    int decoder;
    const Token* tokens;
    int n_tokens, n_past;
  } a{this, decoder, tokens, n_tokens, n_past};
  return sched_->Exclusive(
      [](void* p) {
        const Args& a = *static_cast<Args*>(p);
        return a.self->sched_->state_->Decode(a.self->base_ + a.decoder, a.tokens, a.n_tokens, a.n_past,
                                              a.self->slot_);
      },
      &a, "prompt pass");
}

absl::Status SlotBackend::DecodeBatch(const int* decoders, const Token* tokens, int n, int n_past) {
  if (decoders == nullptr || tokens == nullptr || n < 1 || n > n_decoders_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "SlotBackend::DecodeBatch: %d decoders (need 1..%d)%s", n, n_decoders_,
        decoders == nullptr || tokens == nullptr ? " and non-null arrays" : ""));
  }
  SequenceStep* steps = sched_->slot_steps_[slot_].data();
  for (int b = 0; b < n; ++b) {
    if (decoders[b] < 0 || decoders[b] >= n_decoders_) {
      return absl::InvalidArgumentError(
          absl::StrFormat("SlotBackend::DecodeBatch: decoders[%d] = %d is not in [0, %d)", b, decoders[b], n_decoders_));
    }
    steps[b] = SequenceStep{base_ + decoders[b], slot_, tokens[b], n_past};
  }
  return sched_->Step(slot_, steps, n);
}

const float* SlotBackend::logits(int decoder) const {
  if (decoder < 0 || decoder >= n_decoders_) return nullptr;
  return sched_->state_->logits(base_ + decoder);
}

void SlotBackend::CopyKv(int src, int dst, int begin, int end) {
  if (src < 0 || src >= n_decoders_ || dst < 0 || dst >= n_decoders_) return;
  sched_->state_->CopyKvRange(base_ + src, base_ + dst, begin, end);
}

absl::StatusOr<ModelBackend::AlignmentLogits> SlotBackend::Align(const Token* tokens, int n_tokens,
                                                                 int logits_from) {
  struct Args {
    SlotBackend* self;
    const Token* tokens;
    int n_tokens, logits_from;
    AlignmentLogits out;
  } a{this, tokens, n_tokens, logits_from, {}};
  absl::Status st = sched_->Exclusive(
      [](void* p) {
        Args& a = *static_cast<Args*>(p);
        SlotBackend& s = *a.self;
        InferenceState& state = *s.sched_->state_;
        absl::StatusOr<const float*> qk = state.Align(a.tokens, a.n_tokens, a.logits_from, s.slot_, s.base_);
        if (!qk.ok()) return qk.status();
        // The state's output is overwritten by the next Align of any slot: copy it out.
        const int n_ctx = state.n_audio_ctx(s.slot_);
        const int n_heads = state.n_alignment_heads();
        const size_t n_qk = static_cast<size_t>(n_ctx) * a.n_tokens * n_heads;
        if (s.align_qk_.size() < n_qk) s.align_qk_.resize(n_qk);
        std::memcpy(s.align_qk_.data(), *qk, sizeof(float) * n_qk);
        a.out.qk = s.align_qk_.data();
        a.out.n_heads = n_heads;
        a.out.n_audio_ctx = n_ctx;
        a.out.n_vocab = state.model().hparams().n_vocab;
        if (a.logits_from >= 0 && state.align_logits() != nullptr) {
          const size_t n_l = static_cast<size_t>(a.out.n_vocab) * (a.n_tokens - a.logits_from);
          if (s.align_logits_.size() < n_l) s.align_logits_.resize(n_l);
          std::memcpy(s.align_logits_.data(), state.align_logits(), sizeof(float) * n_l);
          a.out.logits = s.align_logits_.data();
        }
        return absl::OkStatus();
      },
      &a, "alignment pass");
  if (!st.ok()) return st;
  return a.out;
}

// ---- DecodeScheduler --------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<DecodeScheduler>> DecodeScheduler::Create(InferenceState* state, int n_slots) {
  if (state == nullptr) return absl::InvalidArgumentError("DecodeScheduler: state is null");
  if (n_slots < 1 || n_slots > state->n_windows() || state->n_decoders() < n_slots) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "DecodeScheduler: n_slots = %d: need 1 .. n_windows (%d), and at least one decoder (of %d) per slot", n_slots,
        state->n_windows(), state->n_decoders()));
  }
  return std::unique_ptr<DecodeScheduler>(new DecodeScheduler(state, n_slots));
}

DecodeScheduler::DecodeScheduler(InferenceState* state, int n_slots)
    : state_(state), per_slot_(state->n_decoders() / n_slots) {
  slot_steps_.assign(n_slots, std::vector<SequenceStep>(per_slot_));
  slot_n_steps_.assign(n_slots, 0);
  slot_pending_.assign(n_slots, 0);
  slot_done_.assign(n_slots, 0);
  slot_status_.assign(n_slots, absl::OkStatus());
  batch_.resize(static_cast<size_t>(per_slot_) * n_slots);
  batch_slots_.resize(n_slots);
  slot_held_.assign(n_slots, 0);
  ended_jobs_.reserve(n_slots);
  ended_status_.reserve(n_slots);
  for (int s = 0; s < n_slots; ++s) {
    auto b = std::make_unique<SlotBackend>();
    b->sched_ = this;
    b->slot_ = s;
    b->n_decoders_ = per_slot_;
    b->base_ = s * per_slot_;
    slots_.push_back(std::move(b));
  }
  for (int s = 0; s < n_slots; ++s) workers_.emplace_back([this, s] { WorkerLoop(s); });
}

DecodeScheduler::~DecodeScheduler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutdown_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

absl::Status DecodeScheduler::Run(int n_jobs, JobFn fn, void* arg, DoneFn done) {
  if (n_jobs < 0 || fn == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("DecodeScheduler::Run: n_jobs = %d%s (need >= 0 and a job function)", n_jobs,
                        fn == nullptr ? ", fn null" : ""));
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (n_callers_ > 0 || n_callers_waiting_ > 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "DecodeScheduler::Run: %d RunOne jobs hold slots and %d wait (one mode at a time)", n_callers_,
        n_callers_waiting_));
  }
  n_jobs_ = n_jobs;
  next_job_ = 0;
  n_active_ = 0;
  fn_ = fn;
  arg_ = arg;
  first_error_ = absl::OkStatus();
  ended_jobs_.clear();
  ended_status_.clear();
  ++run_id_;
  work_cv_.notify_all();
  // Every job either starts and ends, or is never started after a failure.
  for (;;) {
    done_cv_.wait(lock, [&] { return !ended_jobs_.empty() || (next_job_ >= n_jobs_ && n_active_ == 0); });
    while (!ended_jobs_.empty()) {
      // Report outside the lock, in the order the jobs ended.
      const int job = ended_jobs_.front();
      const absl::Status st = ended_status_.front();
      ended_jobs_.erase(ended_jobs_.begin());
      ended_status_.erase(ended_status_.begin());
      if (done != nullptr) {
        lock.unlock();
        done(arg, job, st);
        lock.lock();
      }
    }
    if (next_job_ >= n_jobs_ && n_active_ == 0 && ended_jobs_.empty()) break;
  }
  fn_ = nullptr;
  return first_error_;
}

absl::Status DecodeScheduler::RunOne(JobFn fn, void* arg, int job) {
  if (fn == nullptr) return absl::InvalidArgumentError("DecodeScheduler::RunOne: fn is null (need a job function)");
  std::unique_lock<std::mutex> lock(mu_);
  if (fn_ != nullptr) {
    return absl::FailedPreconditionError("DecodeScheduler::RunOne: a Run is in progress (its workers hold the slots)");
  }
  ++n_callers_waiting_;
  int slot = -1;
  slot_cv_.wait(lock, [&] {
    for (int s = 0; s < n_slots() && slot < 0; ++s) {
      if (!slot_held_[s]) slot = s;
    }
    return slot >= 0;
  });
  --n_callers_waiting_;
  slot_held_[slot] = 1;
  ++n_callers_;
  ++n_running_;  // from here a step waits for this job's step (or its wait for the state)
  lock.unlock();
  const absl::Status st = fn(arg, job, *slots_[slot]);
  lock.lock();
  --n_running_;
  --n_callers_;
  slot_held_[slot] = 0;
  cv_.notify_all();  // a running job fewer: the others' step may go
  slot_cv_.notify_one();
  return st;
}

int DecodeScheduler::n_callers_running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return n_callers_;
}

int DecodeScheduler::n_callers_waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return n_callers_waiting_;
}

void DecodeScheduler::StepCounts(int64_t* n_steps, int64_t* n_sequences) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (n_steps != nullptr) *n_steps = n_steps_;
  if (n_sequences != nullptr) *n_sequences = n_step_sequences_;
}

void DecodeScheduler::WorkerLoop(int slot) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return shutdown_ || (fn_ != nullptr && next_job_ < n_jobs_); });
    if (shutdown_) return;
    const int job = next_job_++;
    ++n_active_;
    ++n_running_;
    JobFn fn = fn_;
    void* arg = arg_;
    lock.unlock();
    const absl::Status st = fn(arg, job, *slots_[slot]);
    lock.lock();
    --n_running_;
    --n_active_;
    if (!st.ok() && first_error_.ok()) {
      first_error_ = st;
      next_job_ = n_jobs_;  // start no more
    }
    ended_jobs_.push_back(job);
    ended_status_.push_back(st);
    cv_.notify_all();  // a running job fewer: a step may go
    done_cv_.notify_all();
  }
}

absl::Status DecodeScheduler::Step(int slot, const SequenceStep* steps, int n) {
  std::unique_lock<std::mutex> lock(mu_);
  (void)steps;  // the slot's own array (slot_steps_[slot]), filled by SlotBackend
  slot_n_steps_[slot] = n;
  slot_pending_[slot] = 1;
  slot_done_[slot] = 0;
  --n_running_;
  for (;;) {
    if (slot_done_[slot]) {
      slot_done_[slot] = 0;
      return slot_status_[slot];
    }
    if (!MaybeLeadStep(lock)) cv_.wait(lock);
  }
}

bool DecodeScheduler::MaybeLeadStep(std::unique_lock<std::mutex>& lock) {
  if (busy_ || n_running_ > 0 || n_excl_waiting_ > 0) return false;
  int n = 0, n_slots_in = 0;
  for (int s = 0; s < n_slots(); ++s) {
    if (!slot_pending_[s]) continue;
    // A slot's sequences stay together: beams of one window share their cross-attention product.
    std::copy(slot_steps_[s].begin(), slot_steps_[s].begin() + slot_n_steps_[s], batch_.begin() + n);
    n += slot_n_steps_[s];
    batch_slots_[n_slots_in++] = s;
    slot_pending_[s] = 0;
  }
  if (n_slots_in == 0) return false;
  busy_ = true;
  lock.unlock();
  absl::Status st = Aborted() ? absl::CancelledError("aborted by the abort callback before a decoder step")
                              : state_->DecodeSequences(batch_.data(), n);
  lock.lock();
  busy_ = false;
  ++n_steps_;
  n_step_sequences_ += n;
  for (int i = 0; i < n_slots_in; ++i) {
    const int s = batch_slots_[i];
    slot_status_[s] = st;
    slot_done_[s] = 1;
    ++n_running_;  // its job goes on
  }
  cv_.notify_all();
  return true;
}

absl::Status DecodeScheduler::Exclusive(absl::Status (*fn)(void* arg), void* arg, const char* what) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t ticket = next_ticket_++;
  ++n_excl_waiting_;
  --n_running_;
  cv_.notify_all();
  cv_.wait(lock, [&] { return !busy_ && serve_ticket_ == ticket; });
  --n_excl_waiting_;
  ++serve_ticket_;
  ++n_running_;
  busy_ = true;
  lock.unlock();
  absl::Status st = Aborted() ? absl::CancelledError(absl::StrFormat("aborted by the abort callback before the %s", what))
                              : fn(arg);
  lock.lock();
  busy_ = false;
  cv_.notify_all();  // the next exclusive call, or a step once this job waits again
  return st;
}

}  // namespace whisper
