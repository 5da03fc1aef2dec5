// Many windows decoded together over one InferenceState: each in-flight window runs the unchanged
// sequential code (WindowDecoder::Run, or a whole Transcriber over a clip) on a worker thread of
// its own, against a SlotBackend that maps its decoders to a slice of the state's decoders and its
// window to one of the state's window slots. Every one-token step a window submits (Decode of one
// token, DecodeBatch) waits until every window in flight has submitted its step, or is waiting for
// the state, or has finished; then one InferenceState::DecodeSequences runs them all, so every
// weight matrix is read once per step for all windows (continuous batching: when a window's job
// ends, the worker takes the next job, whose window joins at the next step). The state's other
// calls (Encode, a prompt pass of several tokens, Align) run one at a time, in the order asked,
// never during a step. Since DecodeSequences gives each sequence the bytes its single step gives
// (whisper/decoder.h), each job's result is the one it gets alone, whatever the batch.
//
// Threads: n_slots workers, made once by Create and joined by the destructor. Run() hands jobs
// [0, n_jobs) to free workers in index order. Logit filters (DecoderBackend::ParallelFor) run on
// the calling worker, so the windows filter in parallel with each other.
//
// Memory: each slot's step array (state->n_decoders() / n_slots entries) and the batch's step
// array (n_decoders) are sized in Create; a step allocates nothing (mutex and condition variables
// only), nor does the state's step (tested with //testing:alloc_counter). Align copies the
// alignment heads' output into the slot's buffers, which grow on first use only.
//
// The server's continuous batching (requests in flight, issue 38 part 3) can use it as it is: a
// job is any function of a SlotBackend.
#ifndef GGML_WHISPER_WHISPER_DECODE_SCHEDULER_H_
#define GGML_WHISPER_WHISPER_DECODE_SCHEDULER_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "whisper/state.h"
#include "whisper/tokens.h"
#include "whisper/transcribe.h"

namespace whisper {

class DecodeScheduler;

// The backend a job sees: decoders [0, n_decoders()) are the state's decoders
// [slot * n_decoders(), (slot + 1) * n_decoders()), and "the window" is the state's window `slot`.
// Only the job running on this slot may call it (one call at a time).
class SlotBackend : public ModelBackend {
 public:
  // EncodeWindow(slot, ...) on the state, alone (InferenceState::Encode's arguments and errors);
  // Cancelled when the scheduler's abort callback says so.
  absl::Status Encode(const float* mel, int n_frames, int seek, int audio_ctx, int n_frames_valid) override;
  // n_tokens == 1: a step batched with the other windows' (DecodeSequences); else the prompt
  // pass, alone (InferenceState::Decode with this slot's window). Errors: InvalidArgument for a
  // decoder outside [0, n_decoders()); the state's; Cancelled on abort.
  absl::Status Decode(int decoder, const Token* tokens, int n_tokens, int n_past) override;
  // One step of n of this slot's decoders, batched with the other windows' steps. Errors:
  // InvalidArgument for n not in [1, n_decoders()] or a decoder out of range; the state's.
  absl::Status DecodeBatch(const int* decoders, const Token* tokens, int n, int n_past) override;
  const float* logits(int decoder) const override;
  // InferenceState::CopyKvRange between two of this slot's decoders (out of range: no-op). It
  // touches only their caches, so it runs without waiting for the state.
  void CopyKv(int src, int dst, int begin, int end) override;
  int n_decoders() const override { return n_decoders_; }
  // The alignment pass on this slot's window and its decoder 0 (overwritten), alone; the result
  // is copied into this slot's buffers (valid until the slot's next Align).
  absl::StatusOr<AlignmentLogits> Align(const Token* tokens, int n_tokens, int logits_from = -1) override;

  int slot() const { return slot_; }

 private:
  friend class DecodeScheduler;
  DecodeScheduler* sched_ = nullptr;
  int slot_ = 0;
  int n_decoders_ = 0;
  int base_ = 0;  // first state decoder of the slot
  std::vector<float> align_qk_;
  std::vector<float> align_logits_;
};

class DecodeScheduler {
 public:
  // A job: run on slot `backend` for job index `job`; its status is Run's when it fails.
  using JobFn = absl::Status (*)(void* arg, int job, SlotBackend& backend);
  // Called on Run's thread after job `job` ended with `status`, in the order jobs end.
  using DoneFn = void (*)(void* arg, int job, const absl::Status& status);

  // A scheduler of n_slots windows over `state` (not owned; it must outlive the scheduler, and
  // nothing else may use it meanwhile): slot s decodes with the state's decoders [s * D, (s + 1) *
  // D), D = state->n_decoders() / n_slots, and attends to its window s. Starts n_slots worker
  // threads. Errors: InvalidArgument for a null state, n_slots not in [1, state->n_windows()], or
  // fewer decoders than slots.
  static absl::StatusOr<std::unique_ptr<DecodeScheduler>> Create(InferenceState* state, int n_slots);
  ~DecodeScheduler();
  DecodeScheduler(const DecodeScheduler&) = delete;
  DecodeScheduler& operator=(const DecodeScheduler&) = delete;

  // Runs jobs [0, n_jobs), each on a free slot, up to n_slots at a time, and returns when all have
  // ended. After a job fails, no new job starts (those running finish) and Run returns the first
  // failure. `done` (may be null) is called on this thread as each job ends. Errors:
  // InvalidArgument for n_jobs < 0 or a null fn; the jobs'. Not reentrant: one Run at a time.
  absl::Status Run(int n_jobs, JobFn fn, void* arg, DoneFn done = nullptr);

  // Runs one job on the calling thread, on a slot no other caller holds (after waiting for one
  // when all are held), and returns its status. For jobs that arrive over time (the server's
  // requests, issue 38 part 3: continuous batching): the job's first step joins the steps of the
  // jobs in flight at the next batched step, and when it returns its slot leaves the batch. A step
  // waits for the job only while fn runs, so a caller waiting for a slot, or doing its own work
  // before or after RunOne, holds no step back. `job` is passed to fn as is. Thread-safe: any
  // number of callers at once (each returns when its own job ends); not during a Run (whose
  // workers hold the slots), and every call must have returned before the scheduler is destroyed.
  // Errors: InvalidArgument for a null fn; FailedPrecondition during a Run; the job's.
  absl::Status RunOne(JobFn fn, void* arg, int job = 0);
  // Callers in RunOne: holding a slot, and waiting for one (for tests and load reports).
  int n_callers_running() const;
  int n_callers_waiting() const;
  // n_steps() and n_step_sequences() read under the scheduler's lock, for a scheduler in use.
  void StepCounts(int64_t* n_steps, int64_t* n_sequences) const;

  // Checked before every graph the jobs run (encoder, prompt pass, batched step, alignment):
  // true makes that call fail with Cancelled. Null: none. Called with the state held, so never
  // twice at once.
  void SetAbort(bool (*abort)(void* user), void* user) {
    abort_ = abort;
    abort_user_ = user;
  }

  int n_slots() const { return static_cast<int>(slots_.size()); }
  int decoders_per_slot() const { return per_slot_; }
  InferenceState& state() { return *state_; }
  // Steps run (DecodeSequences calls) and sequences stepped over them, since Create.
  int64_t n_steps() const { return n_steps_; }
  int64_t n_step_sequences() const { return n_step_sequences_; }

 private:
  friend class SlotBackend;
  DecodeScheduler(InferenceState* state, int n_slots);

  // Submits steps[0, n) of `slot` (state decoder ids, its window) and returns when a batched step
  // that held them has run, with its status.
  absl::Status Step(int slot, const SequenceStep* steps, int n);
  // Runs fn(arg) with the state held (no step or other exclusive call meanwhile), in the order
  // asked. Cancelled (fn not called) on abort.
  absl::Status Exclusive(absl::Status (*fn)(void* arg), void* arg, const char* what);
  // With mu_ held: runs the batched step of every pending slot when no job is running and no
  // exclusive call waits. Returns whether it ran one.
  bool MaybeLeadStep(std::unique_lock<std::mutex>& lock);
  void WorkerLoop(int slot);
  bool Aborted() const { return abort_ != nullptr && abort_(abort_user_); }

  InferenceState* state_;
  int per_slot_ = 0;
  std::vector<std::unique_ptr<SlotBackend>> slots_;
  std::vector<std::thread> workers_;

  mutable std::mutex mu_;
  std::condition_variable cv_;       // any change of the step / state bookkeeping
  std::condition_variable work_cv_;  // a new Run or shutdown, for idle workers
  std::condition_variable done_cv_;  // a job ended, for Run's thread
  bool shutdown_ = false;
  bool busy_ = false;        // the state is in use (a step or an exclusive call)
  int n_running_ = 0;        // jobs neither waiting for a step nor for the state
  int n_excl_waiting_ = 0;   // exclusive calls queued
  uint64_t next_ticket_ = 0, serve_ticket_ = 0;
  // Per slot: its submitted step (pending until a batched step takes it) and that step's status.
  std::vector<std::vector<SequenceStep>> slot_steps_;  // [n_slots][per_slot_], sized at Create
  std::vector<int> slot_n_steps_;
  std::vector<uint8_t> slot_pending_;
  std::vector<uint8_t> slot_done_;
  std::vector<absl::Status> slot_status_;
  std::vector<SequenceStep> batch_;  // [n_decoders], sized at Create
  std::vector<int> batch_slots_;     // [n_slots]

  // The current Run.
  uint64_t run_id_ = 0;
  int n_jobs_ = 0, next_job_ = 0, n_active_ = 0;
  JobFn fn_ = nullptr;
  void* arg_ = nullptr;
  absl::Status first_error_;
  std::vector<int> ended_jobs_;  // jobs ended since Run's thread last looked (reserved)
  std::vector<absl::Status> ended_status_;

  // RunOne's callers: which slots they hold ([n_slots], sized at Create), how many hold or wait.
  std::vector<uint8_t> slot_held_;
  int n_callers_ = 0, n_callers_waiting_ = 0;
  std::condition_variable slot_cv_;  // a slot held by a caller was freed

  bool (*abort_)(void*) = nullptr;
  void* abort_user_ = nullptr;
  int64_t n_steps_ = 0, n_step_sequences_ = 0;
};

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_DECODE_SCHEDULER_H_
