// A loaded model for the server: one whisper_context shared by `parallel` whisper_states, and
// admission control in front of them. A request leases a state for its transcription; when all
// are busy it waits in a bounded queue, and past the queue it is refused at once (the server
// answers 503), so a burst of clients neither grows memory nor hangs.
//
// Continuous batching (BatchOptions, issue 38 part 3): the states may share one decoder batch
// (whisper_ggml_batch, whisper/whisper_ggml.h) of `parallel` slots, so the transcriptions in flight
// read every decoder weight once per step for all of them: a request joins the running batch at
// its first step and leaves it when its window loop ends; each gives the reply it gives alone.
//
// States are made when the model is loaded, so a request never pays for one, and each keeps its
// buffers between requests (whisper.h: after the first whisper_full on a state, the next makes
// no heap allocation in the compute path).
#ifndef GGML_WHISPER_APPS_SERVER_STATE_POOL_H_
#define GGML_WHISPER_APPS_SERVER_STATE_POOL_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "whisper/whisper.h"

namespace whisper::server {

// The decoder batch the states share. decoders_per_slot 0: none (each state decodes on its own
// buffers, as whisper-server would with one state per request). Else each of the `parallel`
// slots holds that many decoders (a request needing more, e.g. a larger beam than the server's
// default, runs on its own state) and the batch's graphs run on n_threads threads.
struct BatchOptions {
  int decoders_per_slot = 0;
  int n_threads = 1;
};

// Decoders a request with these decoding arguments needs (whisper/decoding.h DecodersNeeded, for
// either decoding rule set): beam search double-buffers max(beam_size, best_of) beams; greedy
// decoding with temperature fallback samples best_of.
int DecodersForRequest(int beam_size, int best_of);

class LoadedModel {
 public:
  // Loads the ggml model file at `path` (whisper_init_from_file_with_params), or the CTranslate2
  // folder at `path` (faster-whisper's models/faster-whisper-NAME, converted in memory by
  // tools/convert/ct2_folder.h's Ct2FolderToGgmlImage as the CLI's -m does; its errors name the
  // folder's file and field, with the folder's path first), and makes
  // `parallel` states (whisper_init_state) over it. `decoding` is applied with
  // whisper_ggml_set_decoding. With warmup_threads > 0, each state then transcribes 1 s of
  // silence (greedy, that many threads), so its buffers are in memory before the first request
  // and the first request is as fast as the others.
  // Errors: InvalidArgument when parallel < 1 or queue < 0; NotFound / InvalidArgument with the
  // loader's message (naming the file and field) when the model cannot be loaded;
  // ResourceExhausted when a state cannot be made.
  // Word timestamps (cross-attention DTW, whisper/dtw.h): with `dtw` a -dtw preset name (as
  // whisper-server's -dtw), every request gets DTW token times; with "" the preset is chosen
  // from the model's shape (AlignmentHeadsPresetForDims) and a request turns DTW on only when it
  // asks for words (whisper_ggml_state_set_dtw), so other requests transcribe exactly as the CLI
  // does. A shape no preset fits has no word times. The model is read twice in that case (once
  // to learn its shape). `flash_attn` is whisper_context_params.flash_attn (-fa / -nfa).
  // `compute_type` is faster-whisper's name (--compute-type, whisper_ggml_set_compute_type): the
  // weights are converted at load, for /load's models too; InvalidArgument naming it if unknown.
  // `int8_attention`: whisper_ggml_set_int8_attention's mode (--int8-attention; -1 auto).
  // `batch`: the shared decoder batch (with parallel >= 2 only); ResourceExhausted when it cannot
  // be made (whisper_ggml_batch_init's message).
  static absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const std::string& path, int parallel, int queue,
                                                          whisper_ggml_decoding decoding, int warmup_threads = 0,
                                                          const std::string& dtw = "", bool flash_attn = true,
                                                          const std::string& compute_type = "default",
                                                          const BatchOptions& batch = BatchOptions(),
                                                          int int8_attention = -1);
  ~LoadedModel();
  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;

  // A state held for one transcription; returns it to the pool when destroyed.
  class Lease {
   public:
    Lease(Lease&& other) noexcept : pool_(other.pool_), state_(other.state_) { other.pool_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    whisper_state* state() const { return state_; }

   private:
    friend class LoadedModel;
    Lease(LoadedModel* pool, whisper_state* state) : pool_(pool), state_(state) {}
    LoadedModel* pool_;
    whisper_state* state_;
  };

  // A free state, after waiting for one if all are busy. Errors: ResourceExhausted, at once,
  // when all states are busy and `queue` requests already wait (the message gives both counts).
  absl::StatusOr<Lease> Acquire();

  whisper_context* ctx() const { return ctx_; }
  const std::string& path() const { return path_; }
  int parallel() const { return static_cast<int>(states_.size()); }
  // Whether requests can have word times, and whether every request gets them (explicit -dtw).
  bool words_available() const { return words_available_; }
  bool dtw_every_request() const { return dtw_every_request_; }
  // Requests holding a state, and requests waiting for one (for /health and tests).
  int busy() const;
  int waiting() const;
  // The shared decoder batch (null without one), for tests and reports.
  whisper_ggml_batch* batch() const { return batch_; }

 private:
  LoadedModel() = default;
  void Release(whisper_state* state);

  std::string path_;
  whisper_context* ctx_ = nullptr;
  std::vector<whisper_state*> states_;  // all states, freed before batch_ and ctx_
  whisper_ggml_batch* batch_ = nullptr;  // shared by states_ (null: none), freed before ctx_
  int queue_ = 0;
  bool words_available_ = false;
  bool dtw_every_request_ = false;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<whisper_state*> free_;  // guarded by mu_
  int waiting_ = 0;                   // guarded by mu_
};

}  // namespace whisper::server

#endif  // GGML_WHISPER_APPS_SERVER_STATE_POOL_H_
