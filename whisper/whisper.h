/* whisper.h: the C API of this runtime, with whisper.cpp 1.8.x's names, types, struct layouts,
 * defaults and semantics (whisper.cpp include/whisper.h), so a program written for whisper.cpp
 * builds against it unchanged. Compiles as C99 and as C++.
 *
 * Model: one whisper_context holds the loaded model (read-only after init, shareable); each
 * whisper_state holds what one transcription stream needs (mel, encoder output, KV caches, graph
 * allocators, a thread pool, results). Many states may use one context at the same time, each
 * from its own thread; one state is used by one thread at a time. Functions without _with_state
 * use the context's default state (made by whisper_init_from_*_with_params; the _no_state
 * variants make none, and those functions then fail).
 *
 * Errors: functions return NULL, a negative code (whisper.cpp's values where it has them), false,
 * or an empty result, and send one message naming the function, the argument or file, the field
 * and the value to the log callback (whisper_log_set; default: stderr). No input, however bad,
 * and no misuse (NULL context or state, out-of-range index, a state of another context) aborts.
 *
 * Times: int64_t times are centiseconds (10 ms) from the start of the samples given; samples are
 * float PCM, mono, 16 kHz (WHISPER_SAMPLE_RATE), nominally in [-1, 1].
 * Decoding follows whisper.cpp's rules by default, so a program gets whisper.cpp's transcript;
 * whisper_ggml_set_decoding (an extension, whisper_ggml.h) selects OpenAI's rules instead, which give
 * faster-whisper's. Differences from whisper.cpp are listed at each function. */
#ifndef WHISPER_H
#define WHISPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggml/ggml.h" /* ggml_log_callback, enum ggml_log_level, ggml_abort_callback */

#ifdef __GNUC__
#define WHISPER_DEPRECATED(func, hint) func __attribute__((deprecated(hint)))
#else
#define WHISPER_DEPRECATED(func, hint) func
#endif

#define WHISPER_API

#define WHISPER_SAMPLE_RATE 16000 /* Hz */
#define WHISPER_N_FFT 400         /* samples per STFT frame (25 ms) */
#define WHISPER_HOP_LENGTH 160    /* samples between frames (10 ms): one mel frame per centisecond */
#define WHISPER_CHUNK_SIZE 30     /* seconds per encoder window */
/* Extension: the largest beam_size and best_of whisper_full takes; larger values make it fail.
 * whisper.cpp's private WHISPER_MAX_DECODERS is 8 (it fails above); faster-whisper sets no limit.
 * Beam search keeps 2 x beam_size KV caches (n_text_ctx x n_text_layer x 2 x n_text_state F16:
 * 2.75 MB each for tiny, 5.5 MB for base). */
#define WHISPER_GGML_MAX_DECODERS 32
/* Most windows whisper_full_params.ggml_batch_size decodes together (extension). */
#define WHISPER_GGML_MAX_BATCH_SIZE 64

#ifdef __cplusplus
extern "C" {
#endif

struct whisper_context;
struct whisper_state;
struct whisper_full_params;

typedef int32_t whisper_pos;
typedef int32_t whisper_token;
typedef int32_t whisper_seq_id;

/* Alignment-head presets for DTW token timestamps (not implemented: see whisper_context_params). */
enum whisper_alignment_heads_preset {
  WHISPER_AHEADS_NONE,
  WHISPER_AHEADS_N_TOP_MOST,
  WHISPER_AHEADS_CUSTOM,
  WHISPER_AHEADS_TINY_EN,
  WHISPER_AHEADS_TINY,
  WHISPER_AHEADS_BASE_EN,
  WHISPER_AHEADS_BASE,
  WHISPER_AHEADS_SMALL_EN,
  WHISPER_AHEADS_SMALL,
  WHISPER_AHEADS_MEDIUM_EN,
  WHISPER_AHEADS_MEDIUM,
  WHISPER_AHEADS_LARGE_V1,
  WHISPER_AHEADS_LARGE_V2,
  WHISPER_AHEADS_LARGE_V3,
  WHISPER_AHEADS_LARGE_V3_TURBO,
};

typedef struct whisper_ahead {
  int n_text_layer;
  int n_head;
} whisper_ahead;

typedef struct whisper_aheads {
  size_t n_heads;
  const whisper_ahead* heads;
} whisper_aheads;

/* Context parameters. use_gpu and gpu_device are accepted and ignored (CPU runtime). flash_attn
 * chooses the encoder's self-attention: fused (FLASH_ATTN_EXT, no score tensor: tiny.en's compute
 * buffer 15.4 MB) or, when false, blocked score products (21.1 MB; whisper.cpp's non-flash
 * numerics); the decoder is the same either way. dtw_token_timestamps = true sets every text token's t_dtw
 * (whisper.cpp's -dtw: one teacher-forced decoder pass per window over its text, the alignment
 * heads of dtw_aheads_preset, OpenAI's timing.py); init fails with a message when the preset does
 * not fit the model. With WHISPER_GGML_DECODING_OPENAI it also gives word times (see
 * whisper_ggml_full_get_token_word_start). */
struct whisper_context_params {
  bool use_gpu;    /* default true (ignored) */
  bool flash_attn; /* default true */
  int gpu_device;  /* default 0 (ignored) */
  bool dtw_token_timestamps;                           /* default false */
  enum whisper_alignment_heads_preset dtw_aheads_preset; /* default WHISPER_AHEADS_NONE */
  int dtw_n_top;                                       /* default -1 */
  struct whisper_aheads dtw_aheads;                    /* default {0, NULL} */
  size_t dtw_mem_size;                                 /* default 128 MiB (unused: sized from the model) */
  /* Extension (not in whisper.cpp): faster-whisper's compute_type at load. With
   * ggml_convert_weights (default false: the file's types), the weight matrices are converted to
   * ggml_weight_type as the model is read: exactly the tensors whisper.cpp's quantize
   * (//tools/quantize) converts (every 2-D tensor but encoder.conv1/conv2.bias and the positional
   * embeddings) whose rows are whole blocks of the type, with its kernels, so GGML_TYPE_Q8_0 gives
   * the bytes `quantize ... q8_0` writes from the same F32/F16 file; the other tensors keep their
   * types, and a quantized source is dequantized first. Accepted types: GGML_TYPE_F32, _F16,
   * _Q4_0, _Q4_1, _Q5_0, _Q5_1, _Q8_0; init fails with a message naming the value otherwise.
   * whisper_ggml_set_compute_type sets both from faster-whisper's names. A zero-initialised
   * struct converts nothing. */
  bool ggml_convert_weights;      /* default false */
  /* A ggml_type value, default GGML_TYPE_F16 (used only with ggml_convert_weights). An int, not the
   * enum: a value outside the enum is then an error init reports, not undefined behaviour. */
  int ggml_weight_type;
};

/* One decoded token (see whisper_full_get_token_data). */
typedef struct whisper_token_data {
  whisper_token id;  /* token id */
  whisper_token tid; /* most probable timestamp token at this step (= id for a timestamp) */
  float p;           /* probability of id after the logit filters, in (0, 1] */
  float plog;        /* natural log of p */
  float pt;          /* probability of tid relative to all timestamps (= p for a timestamp) */
  float ptsum;       /* summed probability of all timestamp tokens */
  int64_t t0;        /* start, centiseconds; -1 unless token_timestamps */
  int64_t t1;        /* end, centiseconds; -1 unless token_timestamps */
  int64_t t_dtw;     /* DTW time at which the token ends, centiseconds; -1 without dtw_token_timestamps */
  float vlen;        /* voice-length heuristic of the text (token_timestamps) */
} whisper_token_data;

/* A byte source for whisper_init_with_params: read() returns the bytes copied (fewer only at
 * the end), eof() whether the end was reached, close() releases the source (called once). */
typedef struct whisper_model_loader {
  void* context;
  size_t (*read)(void* ctx, void* output, size_t read_size);
  bool (*eof)(void* ctx);
  void (*close)(void* ctx);
} whisper_model_loader;

/* Grammar-constrained sampling (whisper.cpp 1.8.5's GBNF rules in binary form, as
 * examples/grammar-parser.cpp writes them from GBNF text: this runtime's parser is the programs',
 * apps/common/gbnf_parser.h). A rule is an array of elements ending in WHISPER_GRETYPE_END, its
 * alternatives separated by WHISPER_GRETYPE_ALT; a character set is a CHAR (or CHAR_NOT for [^...])
 * followed by CHAR_RNG_UPPER (the upper end of a range) and CHAR_ALT (further characters)
 * elements; values are Unicode code points, or a rule index for RULE_REF. The values are
 * whisper.cpp's. See whisper_full_params.grammar_rules. */
enum whisper_gretype {
  WHISPER_GRETYPE_END = 0,
  WHISPER_GRETYPE_ALT = 1,
  WHISPER_GRETYPE_RULE_REF = 2,
  WHISPER_GRETYPE_CHAR = 3,
  WHISPER_GRETYPE_CHAR_NOT = 4,
  WHISPER_GRETYPE_CHAR_RNG_UPPER = 5,
  WHISPER_GRETYPE_CHAR_ALT = 6,
};

typedef struct whisper_grammar_element {
  enum whisper_gretype type;
  uint32_t value;
} whisper_grammar_element;

/* Voice activity detection parameters (Silero VAD v6; see whisper_vad_* below and
 * whisper_full_params.vad). Defaults: whisper_vad_default_params(). */
typedef struct whisper_vad_params {
  float threshold;             /* speech probability threshold, default 0.5 */
  int min_speech_duration_ms;  /* default 250 */
  int min_silence_duration_ms; /* default 100 */
  float max_speech_duration_s; /* default FLT_MAX */
  int speech_pad_ms;           /* default 30 */
  float samples_overlap;       /* seconds, default 0.1 */
} whisper_vad_params;

/* "1.8.5-ggml_whisper": the whisper.cpp API version this header follows, and this runtime. */
WHISPER_API const char* whisper_version(void);

/* ---- Contexts and states ---------------------------------------------------------------------
 * Load a whisper.cpp ggml model file (legacy format: magic "ggml", hparams, mel filters,
 * vocabulary, tensors; F32/F16/Q4_0/Q4_1/Q5_0/Q5_1/Q8_0), validated before any allocation, and,
 * without _no_state, a default state. Return NULL with a message naming the file, the field and
 * what was expected on any error (missing file, truncation, bad hparams, unsupported tensor type,
 * out of memory). The buffer variant copies what it needs; the buffer may be freed after. */
WHISPER_API struct whisper_context* whisper_init_from_file_with_params(const char* path_model,
                                                                       struct whisper_context_params params);
WHISPER_API struct whisper_context* whisper_init_from_buffer_with_params(void* buffer, size_t buffer_size,
                                                                         struct whisper_context_params params);
WHISPER_API struct whisper_context* whisper_init_with_params(struct whisper_model_loader* loader,
                                                             struct whisper_context_params params);
WHISPER_API struct whisper_context* whisper_init_from_file_with_params_no_state(const char* path_model,
                                                                                struct whisper_context_params params);
WHISPER_API struct whisper_context* whisper_init_from_buffer_with_params_no_state(void* buffer, size_t buffer_size,
                                                                                  struct whisper_context_params params);
WHISPER_API struct whisper_context* whisper_init_with_params_no_state(struct whisper_model_loader* loader,
                                                                      struct whisper_context_params params);

WHISPER_DEPRECATED(WHISPER_API struct whisper_context* whisper_init_from_file(const char* path_model),
                   "use whisper_init_from_file_with_params instead");
WHISPER_DEPRECATED(WHISPER_API struct whisper_context* whisper_init_from_buffer(void* buffer, size_t buffer_size),
                   "use whisper_init_from_buffer_with_params instead");
WHISPER_DEPRECATED(WHISPER_API struct whisper_context* whisper_init(struct whisper_model_loader* loader),
                   "use whisper_init_with_params instead");
WHISPER_DEPRECATED(WHISPER_API struct whisper_context* whisper_init_from_file_no_state(const char* path_model),
                   "use whisper_init_from_file_with_params_no_state instead");
WHISPER_DEPRECATED(WHISPER_API struct whisper_context* whisper_init_from_buffer_no_state(void* buffer,
                                                                                        size_t buffer_size),
                   "use whisper_init_from_buffer_with_params_no_state instead");
WHISPER_DEPRECATED(WHISPER_API struct whisper_context* whisper_init_no_state(struct whisper_model_loader* loader),
                   "use whisper_init_with_params_no_state instead");

/* A new state for ctx (which must outlive it). Its buffers are sized for one decoder here and
 * grow on the first whisper_full that needs more decoders or another thread count; after that,
 * a whisper_full with the same params makes no heap allocation in its compute path. NULL with a
 * message on a NULL ctx or out of memory. */
WHISPER_API struct whisper_state* whisper_init_state(struct whisper_context* ctx);

/* OpenVINO encoders do not exist on this runtime: return 1 with a message. */
WHISPER_API int whisper_ctx_init_openvino_encoder_with_state(struct whisper_context* ctx, struct whisper_state* state,
                                                             const char* model_path, const char* device,
                                                             const char* cache_dir);
WHISPER_API int whisper_ctx_init_openvino_encoder(struct whisper_context* ctx, const char* model_path,
                                                  const char* device, const char* cache_dir);

/* Free a context (with its default state), a state, or params from the _by_ref functions.
 * NULL is a no-op. States made by whisper_init_state must be freed before their context. */
WHISPER_API void whisper_free(struct whisper_context* ctx);
WHISPER_API void whisper_free_state(struct whisper_state* state);
WHISPER_API void whisper_free_params(struct whisper_full_params* params);
WHISPER_API void whisper_free_context_params(struct whisper_context_params* params);

/* ---- Low level: mel, encoder, decoder -------------------------------------------------------
 * whisper_pcm_to_mel: the log-mel spectrogram of n_samples samples into the state, ne =
 * [n_len, n_mels] with n_len = (n_samples + 480000) / 160 frames (the audio plus 30 s of zero
 * padding; whisper.cpp log_mel_spectrogram), n_threads workers. 0 on success; -1 for NULL
 * arguments, n_samples < 201, n_threads < 1, or out of memory.
 * whisper_set_mel: uses the caller's log-mel instead, row-major [n_mel][n_len] floats (ne =
 * [n_len, n_mel]); copied. 0, or -1 when n_mel is not the model's n_mels or n_len < 1.
 * whisper_encode: runs the encoder on the 30 s window of the state's mel starting at frame
 * `offset`. 0, or -1 (bad offset, no mel, failure).
 * whisper_decode: appends tokens[0, n_tokens) at positions [n_past, n_past + n_tokens) of
 * decoder 0's self-attention cache, attending to the last encoded window; the logits of the last
 * token are then whisper_get_logits (n_vocab floats). 0; -1 without a state or before any
 * encode; 1 when the step fails (bad token id, n_past + n_tokens > n_text_ctx), as whisper.cpp. */
WHISPER_API int whisper_pcm_to_mel(struct whisper_context* ctx, const float* samples, int n_samples, int n_threads);
WHISPER_API int whisper_pcm_to_mel_with_state(struct whisper_context* ctx, struct whisper_state* state,
                                              const float* samples, int n_samples, int n_threads);
WHISPER_API int whisper_set_mel(struct whisper_context* ctx, const float* data, int n_len, int n_mel);
WHISPER_API int whisper_set_mel_with_state(struct whisper_context* ctx, struct whisper_state* state, const float* data,
                                           int n_len, int n_mel);
WHISPER_API int whisper_encode(struct whisper_context* ctx, int offset, int n_threads);
WHISPER_API int whisper_encode_with_state(struct whisper_context* ctx, struct whisper_state* state, int offset,
                                          int n_threads);
WHISPER_API int whisper_decode(struct whisper_context* ctx, const whisper_token* tokens, int n_tokens, int n_past,
                               int n_threads);
WHISPER_API int whisper_decode_with_state(struct whisper_context* ctx, struct whisper_state* state,
                                          const whisper_token* tokens, int n_tokens, int n_past, int n_threads);

/* Text -> token ids with whisper.cpp's tokenizer (GPT-2 pre-tokenizer split, then greedy
 * longest-prefix match per piece). Returns the number of tokens written, or minus the number
 * needed when n_max_tokens is too small (nothing written), as whisper.cpp; INT_MIN for a NULL
 * ctx or text. A byte no vocabulary entry starts (tiny.en has single-byte tokens for ASCII only)
 * is skipped with a warning, as whisper.cpp skips it. Linear in the text's length. */
WHISPER_API int whisper_tokenize(struct whisper_context* ctx, const char* text, whisper_token* tokens,
                                 int n_max_tokens);
/* Number of tokens of text. */
WHISPER_API int whisper_token_count(struct whisper_context* ctx, const char* text);

/* Languages: whisper.cpp's table (ids 0 "en" .. 99 "yue"). whisper_lang_id takes a code ("de")
 * or a full name ("german"); -1 when unknown. whisper_lang_str(_full): code / full name of an
 * id, NULL when out of range. */
WHISPER_API int whisper_lang_max_id(void);
WHISPER_API int whisper_lang_id(const char* lang);
WHISPER_API const char* whisper_lang_str(int id);
WHISPER_API const char* whisper_lang_str_full(int id);

/* Detects the spoken language of the window at offset_ms of the state's mel (run
 * whisper_pcm_to_mel first): encodes it, decodes <|startoftranscript|>, softmaxes the language
 * tokens' logits. Fills lang_probs[0 .. whisper_lang_max_id()] when not NULL and returns the
 * best id. Errors as whisper.cpp: -1 offset before the start, -2 past the end of the audio, -6
 * encode failed, -7 decode failed (also: no mel, NULL arguments). On an English-only model
 * returns 0 ("en") with probability 1 and a warning. */
WHISPER_API int whisper_lang_auto_detect(struct whisper_context* ctx, int offset_ms, int n_threads, float* lang_probs);
WHISPER_API int whisper_lang_auto_detect_with_state(struct whisper_context* ctx, struct whisper_state* state,
                                                    int offset_ms, int n_threads, float* lang_probs);

/* Sizes. whisper_n_len: frames of real audio in the state's mel (whisper.cpp n_len_org; 0 before
 * any mel). The rest are the model's hparams (whisper_model_type: 0 unknown, 1 tiny, 2 base,
 * 3 small, 4 medium, 5 large). All return -1 for a NULL argument. */
WHISPER_API int whisper_n_len(struct whisper_context* ctx);
WHISPER_API int whisper_n_len_from_state(struct whisper_state* state);
WHISPER_API int whisper_n_vocab(struct whisper_context* ctx);
WHISPER_API int whisper_n_text_ctx(struct whisper_context* ctx);
WHISPER_API int whisper_n_audio_ctx(struct whisper_context* ctx);
WHISPER_API int whisper_is_multilingual(struct whisper_context* ctx);
WHISPER_API int whisper_model_n_vocab(struct whisper_context* ctx);
WHISPER_API int whisper_model_n_audio_ctx(struct whisper_context* ctx);
WHISPER_API int whisper_model_n_audio_state(struct whisper_context* ctx);
WHISPER_API int whisper_model_n_audio_head(struct whisper_context* ctx);
WHISPER_API int whisper_model_n_audio_layer(struct whisper_context* ctx);
WHISPER_API int whisper_model_n_text_ctx(struct whisper_context* ctx);
WHISPER_API int whisper_model_n_text_state(struct whisper_context* ctx);
WHISPER_API int whisper_model_n_text_head(struct whisper_context* ctx);
WHISPER_API int whisper_model_n_text_layer(struct whisper_context* ctx);
WHISPER_API int whisper_model_n_mels(struct whisper_context* ctx);
WHISPER_API int whisper_model_ftype(struct whisper_context* ctx);
WHISPER_API int whisper_model_type(struct whisper_context* ctx);

/* The n_vocab logits of the last token of the last whisper_decode (decoder 0; zeros before any),
 * or NULL for a NULL ctx/state. */
WHISPER_API float* whisper_get_logits(struct whisper_context* ctx);
WHISPER_API float* whisper_get_logits_from_state(struct whisper_state* state);

/* A token's bytes (BPE bytes, not always valid UTF-8 alone) or a special token's name
 * ("[_BEG_]", "[_TT_150]", ...); NULL for an id outside [0, n_vocab) (with a message). */
WHISPER_API const char* whisper_token_to_str(struct whisper_context* ctx, whisper_token token);
/* "tiny", "base", "small", "medium", "large" or "unknown". */
WHISPER_API const char* whisper_model_type_readable(struct whisper_context* ctx);

/* Special token ids (derived from n_vocab as whisper.cpp does); -1 for a NULL context. */
WHISPER_API whisper_token whisper_token_eot(struct whisper_context* ctx);
WHISPER_API whisper_token whisper_token_sot(struct whisper_context* ctx);
WHISPER_API whisper_token whisper_token_solm(struct whisper_context* ctx);
WHISPER_API whisper_token whisper_token_prev(struct whisper_context* ctx);
WHISPER_API whisper_token whisper_token_nosp(struct whisper_context* ctx);
WHISPER_API whisper_token whisper_token_not(struct whisper_context* ctx);
WHISPER_API whisper_token whisper_token_beg(struct whisper_context* ctx);
WHISPER_API whisper_token whisper_token_lang(struct whisper_context* ctx, int lang_id);
WHISPER_API whisper_token whisper_token_translate(struct whisper_context* ctx);
WHISPER_API whisper_token whisper_token_transcribe(struct whisper_context* ctx);

/* Milliseconds per run of the default state's sampling, encoder, decoder (single-token steps),
 * batched decoder (multi-token) and prompt steps. The pointer is owned by the context (valid until
 * the next call or whisper_free); NULL without a default state. (whisper.cpp returns a new
 * allocation the caller cannot free.) */
struct whisper_timings {
  float sample_ms;
  float encode_ms;
  float decode_ms;
  float batchd_ms;
  float prompt_ms;
};
WHISPER_API struct whisper_timings* whisper_get_timings(struct whisper_context* ctx);
/* Logs load, mel, sample, encode, decode, batchd, prompt and total times (INFO level). */
WHISPER_API void whisper_print_timings(struct whisper_context* ctx);
WHISPER_API void whisper_reset_timings(struct whisper_context* ctx);

/* "WHISPER : COREML = 0 | OPENVINO = 0 | CPU : <Highway target> = 1 | ..." for this CPU. */
WHISPER_API const char* whisper_print_system_info(void);

/* ---- Machine benchmarks (whisper.cpp's "temporary helpers exposing ggml") ------------------- */

/* memcpy bandwidth on two 1024e6-byte arrays, 20 copies per figure: after a heat-up, on one
 * thread, then split over k = 1 .. n_threads threads. Returns whisper.cpp's lines
 * ("memcpy: %7.2f GB/s (heat-up)", "( 1 thread)", "(%2d thread)", "sum:    %f"), in a buffer
 * owned by the calling thread and valid until its next call; on an error (n_threads not in
 * 1 .. 512, 2 GB not available) a one-line message instead, also sent to the log callback.
 * whisper_bench_memcpy prints the text to stderr and returns 0; on an error it returns -1 (the
 * message goes to the log callback only).
 * Source: whisper.cpp 1.8.5 src/whisper.cpp whisper_bench_memcpy_str; see whisper/whisper_bench.h. */
WHISPER_API int whisper_bench_memcpy(int n_threads);
WHISPER_API const char* whisper_bench_memcpy_str(int n_threads);

/* ggml_mul_mat GFLOPS of a [N, N] weight of each type Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, F16, F32
 * times a [N, N] F32 matrix, N = 64, 128, ..., 4096, on n_threads threads of this runtime's
 * kernels: up to 128 runs each, stopping once the runs exceed 1 s (at least 3). Returns three
 * lines per N as whisper.cpp prints them ("  64 x   64: Q4_0 %7.1f GFLOPS (%3d runs) | ..."),
 * thread-local as above; on an error a one-line message instead. whisper_bench_ggml_mul_mat
 * prints it to stderr and returns 0, or -1 on an error (logged only). Needs about 210 MB.
 * Source: whisper.cpp 1.8.5 whisper_bench_ggml_mul_mat_str; see whisper/whisper_bench.h. */
WHISPER_API int whisper_bench_ggml_mul_mat(int n_threads);
WHISPER_API const char* whisper_bench_ggml_mul_mat_str(int n_threads);

/* ---- Full transcription ---------------------------------------------------------------------- */

enum whisper_sampling_strategy {
  WHISPER_SAMPLING_GREEDY,      /* OpenAI's GreedyDecoder (best_of candidates at temperature > 0) */
  WHISPER_SAMPLING_BEAM_SEARCH, /* OpenAI's BeamSearchDecoder */
};

/* Called after each new segment: the last n_new segments of the state are new. */
typedef void (*whisper_new_segment_callback)(struct whisper_context* ctx, struct whisper_state* state, int n_new,
                                             void* user_data);
/* Progress in percent, non-decreasing, in [0, 100]; 100 is reported at the end. */
typedef void (*whisper_progress_callback)(struct whisper_context* ctx, struct whisper_state* state, int progress,
                                          void* user_data);
/* Before each encoder run; returning false stops the transcription there (whisper_full returns
 * 0 with the segments so far). */
typedef bool (*whisper_encoder_begin_callback)(struct whisper_context* ctx, struct whisper_state* state,
                                               void* user_data);
/* Per decoder and step, before the timestamp rules: tokens are those sampled so far in this
 * window, logits the n_vocab logits to change in place (set -INFINITY to forbid a token). */
typedef void (*whisper_logits_filter_callback)(struct whisper_context* ctx, struct whisper_state* state,
                                               const whisper_token_data* tokens, int n_tokens, float* logits,
                                               void* user_data);

/* Parameters of whisper_full; same fields, order and defaults as whisper.cpp 1.8.5 (see
 * whisper_full_default_params), then this runtime's extension fields (ggml_*, at the end: a
 * program that starts from whisper_full_default_params gets their defaults). debug_mode is
 * accepted (no dumps). */
struct whisper_full_params {
  enum whisper_sampling_strategy strategy;
  int n_threads;         /* default min(4, hardware threads) */
  int n_max_text_ctx;    /* most past tokens in a prompt (min with n_text_ctx / 2), default 16384 */
  int offset_ms;         /* start offset, ms */
  int duration_ms;       /* ms to process, 0 = all */
  bool translate;        /* multilingual models: translate to English */
  /* Default true. whisper.cpp's rules (the default): false starts from the past text of this
   * state's previous whisper_full (true clears it); within a call each window is always prompted
   * with the text before it, up to n_max_text_ctx tokens (0: never). OpenAI's rules
   * (whisper_ggml_set_decoding): true is condition_on_previous_text = False (the initial prompt
   * prompts the first window only); nothing carries between calls. */
  bool no_context;
  bool no_timestamps;    /* decode without timestamp tokens */
  bool single_segment;   /* one segment per 30 s window */
  bool print_special;    /* special tokens' names appear in segment text */
  bool print_progress;   /* log progress (INFO) */
  bool print_realtime;   /* print segments to stdout as they are decoded */
  bool print_timestamps; /* with print_realtime: "[t0 --> t1]  text" lines */
  bool token_timestamps; /* token t0/t1 from the timestamp probabilities */
  float thold_pt;        /* default 0.01 */
  float thold_ptsum;     /* default 0.01 */
  int max_len;           /* max segment length in characters (with token_timestamps), 0 = none */
  bool split_on_word;    /* with max_len: split only before a word */
  int max_tokens;        /* max tokens per segment, 0 = none */
  bool debug_mode;
  int audio_ctx;         /* encoder context (<= n_audio_ctx), 0 = the model's */
  bool tdrz_enable;      /* tinydiarize: <|startoflm|> is sampled like text and marks the segment's
                            speaker_turn_next (tdrz models predict it; others hardly ever do) */
  const char* suppress_regex; /* tokens whose text matches this ECMAScript regex (whole) are never
                                 sampled; an invalid regex is an error (-1) */
  const char* initial_prompt; /* first window's text prompt or NULL (OpenAI's rules: " " + stripped, BPE) */
  bool carry_initial_prompt;  /* prepend the initial prompt to every window */
  const whisper_token* prompt_tokens; /* token prompt instead of initial_prompt */
  int prompt_n_tokens;
  const char* language; /* code, NULL/""/"auto" = detect; default "en" */
  bool detect_language; /* detect, set whisper_full_lang_id, return without transcribing */
  bool suppress_blank;  /* default true */
  bool suppress_nst;    /* suppress non-speech tokens, default false */
  float temperature;     /* initial temperature, default 0 */
  float max_initial_ts;  /* seconds, default 1.0. whisper.cpp's rules: the first timestamp is at
                            most this (<= 0: no limit). OpenAI's (whisper_ggml_set_decoding):
                            faster-whisper's max_initial_timestamp, the first token is a timestamp
                            at most this (0: <|0.00|> only); negative or NaN is an error (-1) */
  float length_penalty;  /* default -1 (score = sum logprob / length) */
  float temperature_inc; /* fallback step, default 0.2; <= 0 disables fallback */
  float entropy_thold;   /* default 2.4; whisper.cpp's rules only (OpenAI's: compression ratio) */
  float logprob_thold;   /* default -1 */
  float no_speech_thold; /* default 0.6 */
  struct {
    int best_of; /* candidates sampled at temperature > 0: 5 for GREEDY, -1 for BEAM_SEARCH (then 1);
                    at most WHISPER_GGML_MAX_DECODERS */
  } greedy;
  struct {
    int beam_size; /* 5 for BEAM_SEARCH, -1 for GREEDY; at most WHISPER_GGML_MAX_DECODERS */
    float patience; /* not implemented in whisper.cpp either; ignored */
  } beam_search;
  whisper_new_segment_callback new_segment_callback;
  void* new_segment_callback_user_data;
  whisper_progress_callback progress_callback;
  void* progress_callback_user_data;
  whisper_encoder_begin_callback encoder_begin_callback;
  void* encoder_begin_callback_user_data;
  /* Checked before every graph compute (encoder, cross K/V, each decoder step): returning true
   * makes whisper_full stop and return non-zero within one decoder step. */
  ggml_abort_callback abort_callback;
  void* abort_callback_user_data;
  whisper_logits_filter_callback logits_filter_callback;
  void* logits_filter_callback_user_data;
  /* Grammar-constrained sampling, as whisper.cpp 1.8.5 (src/whisper.cpp whisper_grammar_*,
   * whisper_suppress_invalid_grammar): grammar_rules[0 .. n_grammar_rules) are the rules (each
   * ending in WHISPER_GRETYPE_END; read during the call only), decoding starts at rule
   * i_start_rule. Every decoder (and beam: a beam that takes another's sequence takes its state)
   * tracks the grammar's parse state from the start of each 30 s window and attempt; at a step
   * where text may follow (the timestamp rule did not force a timestamp), every text token (id
   * below whisper_token_eot) whose text no parse can continue with has grammar_penalty subtracted
   * from its logit (after the temperature), and the log-probabilities are recomputed; <|endoftext|>
   * and timestamps are never penalized, and tokens whose text starts with "[_" do not advance the
   * state. Once a sampled token leaves no parse (the penalty is finite), the grammar constrains
   * nothing more in that window. NULL grammar_rules: no grammar (n_grammar_rules ignored).
   * whisper_full returns -1 with a message for n_grammar_rules = 0 with grammar_rules set, a
   * non-finite grammar_penalty, i_start_rule >= n_grammar_rules, and rules
   * whisper_ggml_check_grammar refuses (whisper.cpp asserts, reads out of bounds or recurses
   * without end on those). The rules are compiled once per state and reused while they are the
   * same. whisper-cli sets strategy WHISPER_SAMPLING_BEAM_SEARCH when it uses a grammar; with
   * whisper.cpp's rules a beam_size of 1 then samples one candidate per step, as whisper.cpp. */
  const whisper_grammar_element** grammar_rules;
  size_t n_grammar_rules;
  size_t i_start_rule;
  float grammar_penalty; /* default 100 */
  bool vad;                   /* transcribe only the speech (whisper.cpp's whisper_vad; see below) */
  const char* vad_model_path; /* the Silero model (tools/get_vad_model.sh); used with vad */
  whisper_vad_params vad_params;
  /* Extension (not in whisper.cpp; default false): faster-whisper 1.2.1's multilingual=True, a
   * language per 30 s window. On a multilingual model, before each window is decoded its language
   * is detected from that window's encoder output (no second encoder run): the most probable
   * language token after <|startoftranscript|>, whatever its probability (language and
   * detect_language's threshold do not apply), goes in the window's prompt in place of the
   * transcription's language. The text before the window stays in its prompt, whatever its
   * language (faster-whisper does not reset it; with condition_on_previous_text the model then
   * often carries on in the earlier language). whisper_full_lang_id still gives the language of
   * the whole call (given, or detected once from the first window as without this field), as
   * faster-whisper's TranscriptionInfo.language; each segment's is
   * whisper_ggml_full_get_segment_lang_id. Ignored, with a warning, on an English-only model (as
   * faster-whisper). Either decoding rule set (whisper_ggml_set_decoding). */
  bool ggml_multilingual;
  /* Extension (not in whisper.cpp; default 2.4, openai/whisper's and faster-whisper 1.2.1's
   * compression_ratio_threshold): under OpenAI's rules (whisper_ggml_set_decoding) an attempt
   * whose text's zlib compression ratio is above it falls back to the next temperature, and when
   * every temperature fails the kept attempt is chosen among those at or below it. 0 turns the
   * check off (faster-whisper's None). whisper.cpp's rules do not use it (entropy_thold plays the
   * part). A negative or NaN value makes whisper_full return -1, naming the field. */
  float ggml_compression_ratio_thold;
  /* Extension (not in whisper.cpp; default NULL and 0: the whole audio, or offset_ms/duration_ms):
   * faster-whisper 1.2.1's clip_timestamps, ggml_n_clip_timestamps values in seconds from the
   * start of the input, start, end, start, end, ...; an odd count ends the last clip at the end of
   * the audio. Only the clips are transcribed, in the order given: each window starts at or after
   * its clip's start and hears nothing after the clip's end (its 30 s window is padded with
   * silence there), and when the clip is done the next window starts at the next clip's start
   * (faster-whisper's seek_clips: seek = round(t * 100) frames, ties to even; each clip begins
   * at its start, even when the previous clip's last window went past it; an end past the audio
   * is the audio's end; a clip of no length is skipped). The text of one clip prompts the next
   * (condition_on_previous_text). Language detection (language "auto") reads the window at the
   * first clip's start, as faster-whisper's. Under whisper.cpp's rules (whisper_ggml_set_decoding)
   * each clip is decoded as an offset_ms/duration_ms range, with those rules' window loop (the
   * window hears the audio after the clip's end, as whisper.cpp's duration_ms). With vad, VAD is
   * ignored, with a warning (faster-whisper: "vad_filter will be ignored if clip_timestamps is
   * used"). whisper_full returns -1, naming the field, for a negative count, a NULL array with a
   * positive count, a value that is negative, NaN or infinite, clips combined with offset_ms or
   * duration_ms, and whisper_full_parallel for clips with n_processors > 1. Not copied: the array must stay valid during whisper_full. */
  const float* ggml_clip_timestamps;
  int ggml_n_clip_timestamps;
  /* Extension (not in whisper.cpp; default -1: off, faster-whisper's None; any value >= 0, 0
   * included, is on as in faster-whisper): faster-whisper 1.2.1's
   * hallucination_silence_threshold, in seconds. Only with word timestamps (DTW:
   * whisper_context_params.dtw_token_timestamps) under OpenAI's rules, as faster-whisper applies it
   * only with word_timestamps=True; otherwise ignored with a warning. After a window's words are
   * timed, a segment whose first 8 words (punctuation left out) look anomalous (probability < 0.15
   * from the alignment pass, shorter than 0.133 s or longer than 2 s: transcribe.py
   * word_anomaly_score, is_segment_anomaly) is treated as a possible hallucination: when the
   * window's first such segment starts more than this after the window's start, the window is
   * dropped and decoded again from that segment's start; when a possible hallucination has more
   * than this of silence (or the window's edge, or another anomaly) on both sides, it and the
   * segments after it are dropped and the next window starts at its start. A NaN or infinite
   * value makes whisper_full return -1, naming the field. */
  float ggml_hallucination_silence_thold;
  /* Extensions for faster-whisper 1.2.1's transcribe options (not in whisper.cpp). Each is checked
   * by whisper_full (a bad value: -1, the field named in the log).
   * ggml_length_penalty (default 1, faster-whisper's length_penalty): under OpenAI's rules, and
   * while length_penalty (whisper.cpp's, above) is <= 0, a sequence's score is its summed
   * log-probability / length ^ ggml_length_penalty (CTranslate2's rule; 1 = / length, as before),
   * and 0 also ends beam search once the best candidate of a step completes (CTranslate2's early
   * exit). whisper.cpp's rules and length_penalty > 0 keep ((5 + length) / 6) ^ length_penalty.
   * Finite (negative favours long sequences). beam_search.patience (above) is faster-whisper's patience under OpenAI's rules:
   * beam search ends at round(beam_size * patience) finished sequences (CTranslate2's); <= 0 (-1)
   * means 1; round(beam_size * patience) must be >= 1 (CTranslate2's check). */
  float ggml_length_penalty;
  /* faster-whisper's repetition_penalty (default 1 = off; > 0): the logit x of each token of the
   * window's output so far (ggml_prefix's forced tokens, <|0.00|> included, then those sampled)
   * becomes x * p when negative, else x / p (CTranslate2). Either rule set. */
  float ggml_repetition_penalty;
  /* faster-whisper's no_repeat_ngram_size (default 0 = off; >= 0): no n-gram of this size repeats
   * within a window's output (a forced prefix included; CTranslate2's NoRepeatNgram). Either rule
   * set. */
  int ggml_no_repeat_ngram_size;
  /* faster-whisper's max_new_tokens (default 0 = None; >= 0): under OpenAI's rules at most
   * min((prompt + n) / 2, n + 1 + prefix) decoding steps per window (CTranslate2's max_length;
   * the prompt includes ggml_prefix's forced tokens, which take the first of these steps), the last
   * ending the text as complete; a window whose prompt + n exceeds the model's n_text_ctx (448)
   * makes whisper_full fail (faster-whisper's ValueError). */
  int ggml_max_new_tokens;
  /* faster-whisper's prompt_reset_on_temperature (default 0.5; not NaN): under OpenAI's rules the
   * text before a window decoded at a temperature above it (strictly, as faster-whisper) leaves the
   * next prompts. whisper.cpp's rules keep their fixed 0.5 cut-off per attempt. */
  float ggml_prompt_reset_on_temperature;
  /* Extension (not in whisper.cpp; default NULL: none): faster-whisper 1.2.1's prefix, text forced
   * at the start of the first window (transcribe.py get_prompt, with `prefix if seek == 0`): " " +
   * the text without leading and trailing ASCII whitespace is tokenized (BPE), its first n_text_ctx /
   * 2 - 1 tokens follow the sot tokens (<|startoftranscript|>, language, task, <|notimestamps|>)
   * behind <|0.00|> unless no_timestamps, in the prompt of the window that starts at frame 0 only
   * (not with an offset_ms, nor after a first window skipped as silence). The model continues after
   * it; the tokens are part of the window's first segment (probability 1) and of the next
   * window's previous text. The first token after it has no timestamp rule, as in CTranslate2.
   * Either decoding rule set. */
  const char* ggml_prefix;
  /* Extension (not in whisper.cpp; default NULL: none): faster-whisper 1.2.1's hotwords, hint
   * phrases tokenized as ggml_prefix's text; in every window's prompt after <|startofprev|> and
   * before the previous text (which keeps its own n_max_text_ctx budget), except the window that
   * has ggml_prefix (get_prompt: `if hotwords and not prefix`). Either decoding rule set. */
  const char* ggml_hotwords;
  /* Extension (not in whisper.cpp; default NULL with 0: suppress_nst decides): faster-whisper
   * 1.2.1's suppress_tokens, ggml_n_suppress_tokens ids suppressed at every step; -1 stands for
   * the model's non-speech set (faster-whisper's get_suppressed_tokens: tokenizer.non_speech_tokens
   * under OpenAI's rules, whisper.cpp's list under its rules). When set (non-NULL, n >= 0; n = 0 is
   * faster-whisper's [] ), it replaces suppress_nst. The task and control tokens faster-whisper
   * adds (<|transcribe|>, <|translate|>, <|startoftranscript|>, <|startofprev|>, <|startoflm|>,
   * <|nospeech|>) are suppressed here whatever the list, as whisper.cpp always does. An id outside
   * [-1, n_vocab) makes whisper_full return -1, naming the field and the id. suppress_regex's ids
   * are added to the list. */
  const whisper_token* ggml_suppress_tokens;
  int ggml_n_suppress_tokens;
  /* Extension (not in whisper.cpp; default 0: 30): faster-whisper 1.2.1's chunk_length, seconds of
   * audio per window (its FeatureExtractor's nb_max_frames): the encoder still reads 30 s (3000
   * frames, n_audio_ctx), of which the frames past the chunk are 0.0 (pad_or_trim), and a window
   * that ends on a single timestamp or has none moves on by the chunk. 1 .. 30; anything else makes
   * whisper_full return -1 naming the field (faster-whisper's longer chunks are cut to 30 s by
   * pad_or_trim but still skip the whole chunk: audio never heard). Either decoding rule set. */
  int ggml_chunk_length;
  /* Extension (not in whisper.cpp; default 0): batched transcription of long audio (issue 38), as
   * faster-whisper 1.2.1's BatchedInferencePipeline batches it. 0 or 1: the sequential window
   * loop. 2 .. WHISPER_GGML_MAX_BATCH_SIZE: the audio is cut into chunks. With ggml_clip_timestamps
   * each clip is a chunk (in order, its end capped to the audio, a clip of no length skipped; no
   * VAD, as faster-whisper's batched clip_timestamps; a clip longer than 30 s is kept whole and
   * seeks through its windows, where faster-whisper transcribes its first 30 s only). Else Silero
   * VAD (vad_model_path is required) finds the pauses (faster-whisper's batched VAD options:
   * min_silence_duration_ms 160, max_speech_duration_s the chunk length less 1 s,
   * vad_params.threshold), and all the audio is cut there into chunks of at most ggml_chunk_length
   * (30 s; longer only where no pause lies within it), as faster-whisper's merge_segments merges
   * stretches, except that what VAD does not call speech is kept (Silero misses the last 27 s of
   * long_speech.flac's speech). With vad = true the VAD's joined speech is cut where stretches join.
   * ggml_batch_size chunks are decoded at a time, their windows sharing every decoder step, each
   * chunk without the previous chunk's text (initial_prompt prompts its first window; its later
   * windows hear its earlier ones' text unless no_context). As in faster-whisper's pipeline, a
   * chunk of at most 30 s is encoded and decoded once (one window); unlike it, timestamps cut
   * segments (at most 30 s), the text after the last timestamp is kept (a segment to the chunk's
   * end), <|endoftext|> is not taken before the timestamps reach 1 s before the end of the chunk's
   * last VAD speech stretch or of its clip (Whisper often stops seconds early in a full window),
   * and token / DTW word timestamps work. A longer chunk runs the sequential loop over its windows.
   * Results: the usual getters (the input's times; a clip starts at frame round(t * 100));
   * new_segment_callback per chunk, in order. Not with offset_ms or duration_ms. Memory: min(batch,
   * chunks) windows' cross K/V, as many times one window's decoders (best_of; beam 5: 10) self KV
   * caches (at most 128). A bad value, or neither vad_model_path nor clips: -1 naming the field. */
  int ggml_batch_size;
  /* Extension (default NULL and 0: temperature, then + temperature_inc up to 1.0): faster-whisper's
   * temperature list, ggml_n_temperatures (>= 1) finite values tried in order until an attempt
   * passes the fallback checks (<= 0: beam search or greedy; above 0: best_of samples). NaN,
   * infinity, or a bad count is -1 naming the field. Valid during whisper_full only. Both rules. */
  const float* ggml_temperatures;
  int ggml_n_temperatures;
  /* Extension (default NULL: faster-whisper 1.2.1's sets "'“¿([{- and "'.。,，!！?？:：”)]}、):
   * its prepend_punctuations and append_punctuations, joined to the next / previous word by OpenAI's
   * merge_punctuations (DTW word timestamps under OpenAI's rules; unused otherwise). UTF-8, matched
   * by code point as Python's substring test ("" merges nothing); copied at the start of
   * whisper_full. Invalid UTF-8 makes whisper_full return -1 naming the field and the byte. */
  const char* ggml_prepend_punctuations;
  const char* ggml_append_punctuations;
};

WHISPER_API struct whisper_context_params* whisper_context_default_params_by_ref(void);
WHISPER_API struct whisper_context_params whisper_context_default_params(void);
WHISPER_API struct whisper_full_params* whisper_full_default_params_by_ref(enum whisper_sampling_strategy strategy);
WHISPER_API struct whisper_full_params whisper_full_default_params(enum whisper_sampling_strategy strategy);

/* Transcribes n_samples samples (16 kHz mono float): log-mel, optional language detection, then
 * the 30 s window loop (encode, decode with temperature fallback, segments, seek), results in the
 * state (previous results are cleared). n_samples == 0 reuses the state's mel (from
 * whisper_pcm_to_mel / whisper_set_mel). Returns 0 on success (also when less than 100 ms lies
 * between offset_ms and the end: no segments, a warning, as whisper.cpp); negative on error, as
 * whisper.cpp: -1 bad arguments (n_threads not in 1 .. 512, bad grammar rules, ...; named in the
 * message), -2 mel failed, -3 language detection
 * failed, -4 too many decoders (> 8 beams or best_of), -5 audio_ctx > n_audio_ctx, -6 encode
 * failed or aborted, -8/-9 decode failed or aborted. */
WHISPER_API int whisper_full(struct whisper_context* ctx, struct whisper_full_params params, const float* samples,
                             int n_samples);
WHISPER_API int whisper_full_with_state(struct whisper_context* ctx, struct whisper_state* state,
                                        struct whisper_full_params params, const float* samples, int n_samples);
/* Splits the samples (after offset_ms) into n_processors equal parts, transcribes each on its own
 * state and thread, and joins the segments into the default state, times shifted and made
 * non-overlapping (whisper.cpp whisper_full_parallel; quality drops near the cuts; each part
 * shorter than the decoding minimum yields no segment). Progress and new-segment callbacks come
 * from the first part; the others' segments are announced after. n_processors is at most 64
 * (-1 above). */
WHISPER_API int whisper_full_parallel(struct whisper_context* ctx, struct whisper_full_params params,
                                      const float* samples, int n_samples, int n_processors);

/* ---- Results of the last whisper_full on a state (the default state without _from_state) -----
 * An index out of range, a NULL context/state, or a missing default state give a message and
 * 0 / NULL / false / a zeroed token (id -1) / -1 for token and VAD-segment times. */
WHISPER_API int whisper_full_n_segments(struct whisper_context* ctx);
WHISPER_API int whisper_full_n_segments_from_state(struct whisper_state* state);
/* Language id used by (or detected in) the last whisper_full; 0 ("en") before any, as whisper.cpp. */
WHISPER_API int whisper_full_lang_id(struct whisper_context* ctx);
WHISPER_API int whisper_full_lang_id_from_state(struct whisper_state* state);
WHISPER_API int64_t whisper_full_get_segment_t0(struct whisper_context* ctx, int i_segment);
WHISPER_API int64_t whisper_full_get_segment_t0_from_state(struct whisper_state* state, int i_segment);
WHISPER_API int64_t whisper_full_get_segment_t1(struct whisper_context* ctx, int i_segment);
WHISPER_API int64_t whisper_full_get_segment_t1_from_state(struct whisper_state* state, int i_segment);
WHISPER_API bool whisper_full_get_segment_speaker_turn_next(struct whisper_context* ctx, int i_segment);
WHISPER_API bool whisper_full_get_segment_speaker_turn_next_from_state(struct whisper_state* state, int i_segment);
WHISPER_API const char* whisper_full_get_segment_text(struct whisper_context* ctx, int i_segment);
WHISPER_API const char* whisper_full_get_segment_text_from_state(struct whisper_state* state, int i_segment);
/* Tokens of a segment: its text tokens and the timestamp tokens among them (whisper.cpp's
 * layout: the first segment of a window starts with its opening timestamp; each ends with its
 * closing one). */
WHISPER_API int whisper_full_n_tokens(struct whisper_context* ctx, int i_segment);
WHISPER_API int whisper_full_n_tokens_from_state(struct whisper_state* state, int i_segment);
WHISPER_API const char* whisper_full_get_token_text(struct whisper_context* ctx, int i_segment, int i_token);
WHISPER_API const char* whisper_full_get_token_text_from_state(struct whisper_context* ctx,
                                                               struct whisper_state* state, int i_segment,
                                                               int i_token);
WHISPER_API whisper_token whisper_full_get_token_id(struct whisper_context* ctx, int i_segment, int i_token);
WHISPER_API whisper_token whisper_full_get_token_id_from_state(struct whisper_state* state, int i_segment,
                                                               int i_token);
WHISPER_API whisper_token_data whisper_full_get_token_data(struct whisper_context* ctx, int i_segment, int i_token);
WHISPER_API whisper_token_data whisper_full_get_token_data_from_state(struct whisper_state* state, int i_segment,
                                                                      int i_token);
WHISPER_API float whisper_full_get_token_p(struct whisper_context* ctx, int i_segment, int i_token);
WHISPER_API float whisper_full_get_token_p_from_state(struct whisper_state* state, int i_segment, int i_token);
/* Start / end of a token, centiseconds of the input (whisper.cpp 1.9.3). -1: no time (token
 * times are computed with token_timestamps, and with VAD when it removed 2 s or more somewhere)
 * or an index out of range. Without VAD, the
 * token data's t0/t1. With VAD, whisper.cpp 1.9.3's mapping from the joined speech back to the
 * input: linear inside a speech stretch; a time in the overlap + 0.1 s of silence inserted
 * between two stretches goes to the nearer of the first's end and the second's start (the first
 * at the midpoint); before the first / after the last stretch, to its edge. Unlike 1.9.3, the
 * result is then kept within the token's segment's [t0, t1] (1.9.3 can put the first token of a
 * segment that follows a removed silence at the end of the speech before it, and makes
 * t1 >= t0 + 1, a centisecond past its segment's end); here t0 <= t1. And unlike whisper.cpp,
 * where whisper_full_get_token_data's t0/t1 (and t_dtw) stay in the joined audio's time,
 * whisper_full maps the token data (t_dtw too, by the same rule), so the two getters agree. */
WHISPER_API int64_t whisper_full_get_token_t0(struct whisper_context* ctx, int i_segment, int i_token);
WHISPER_API int64_t whisper_full_get_token_t0_from_state(struct whisper_state* state, int i_segment, int i_token);
WHISPER_API int64_t whisper_full_get_token_t1(struct whisper_context* ctx, int i_segment, int i_token);
WHISPER_API int64_t whisper_full_get_token_t1_from_state(struct whisper_state* state, int i_segment, int i_token);
/* Probability of <|nospeech|> at the first step of the segment's window, in [0, 1]. */
WHISPER_API float whisper_full_get_segment_no_speech_prob(struct whisper_context* ctx, int i_segment);
WHISPER_API float whisper_full_get_segment_no_speech_prob_from_state(struct whisper_state* state, int i_segment);
/* The speech stretches the last whisper_full's VAD (params.vad) joined, in order and
 * non-overlapping, centiseconds of the input (whisper.cpp 1.9.3; whisper_vad_segments' times for
 * the same audio and vad_params, less any that clamping to the audio left empty). The count is 0
 * after a call without VAD, or whose VAD found no speech, or that failed before it. After
 * whisper_full_parallel the default state holds every part's, shifted to the input's time (each
 * part runs its own VAD; whisper.cpp runs one over the whole input). t0/t1 of an index out of
 * range: -1 with a message. */
WHISPER_API int whisper_full_n_vad_segments(struct whisper_context* ctx);
WHISPER_API int whisper_full_n_vad_segments_from_state(struct whisper_state* state);
WHISPER_API int64_t whisper_full_get_vad_segment_t0(struct whisper_context* ctx, int i);
WHISPER_API int64_t whisper_full_get_vad_segment_t0_from_state(struct whisper_state* state, int i);
WHISPER_API int64_t whisper_full_get_vad_segment_t1(struct whisper_context* ctx, int i);
WHISPER_API int64_t whisper_full_get_vad_segment_t1_from_state(struct whisper_state* state, int i);

/* ---- Voice activity detection ---------------------------------------------------------------
 * whisper.cpp 1.8.5's API on Silero VAD v6 (faster-whisper's silero_vad_v6.onnx converted by
 * tools/convert/convert_vad.py; whisper.cpp's own v5 files are refused with a message): probabilities of
 * 512-sample windows (the last zero-padded), speech segments by whisper.cpp's rules
 * (whisper_vad_params), times in centiseconds. With whisper_full_params.vad, whisper_full (and
 * _with_state) transcribes the speech joined with samples_overlap seconds of overlap and 0.1 s of
 * silence between, as whisper.cpp does, and maps segment and token times back to the audio
 * (token times as whisper_full_get_token_t0/t1 describe, in the token data too; the stretches:
 * whisper_full_get_vad_segment_t0/t1); unlike whisper.cpp, a segment never starts or ends inside
 * removed silence, and one that spans a removal of 2 s or more is split there. NULL arguments
 * give 0 / NULL / false with a message. */
struct whisper_vad_context;
struct whisper_vad_segments;
struct whisper_vad_context_params {
  int n_threads; /* default 4 */
  bool use_gpu;  /* default false */
  int gpu_device; /* default 0 */
};
WHISPER_API struct whisper_vad_params whisper_vad_default_params(void);
WHISPER_API struct whisper_vad_context_params whisper_vad_default_context_params(void);
WHISPER_API struct whisper_vad_context* whisper_vad_init_from_file_with_params(const char* path_model,
                                                                               struct whisper_vad_context_params params);
WHISPER_API struct whisper_vad_context* whisper_vad_init_with_params(struct whisper_model_loader* loader,
                                                                     struct whisper_vad_context_params params);
WHISPER_API bool whisper_vad_detect_speech(struct whisper_vad_context* vctx, const float* samples, int n_samples);
WHISPER_API bool whisper_vad_detect_speech_no_reset(struct whisper_vad_context* vctx, const float* samples,
                                                    int n_samples);
WHISPER_API void whisper_vad_reset_state(struct whisper_vad_context* vctx);
WHISPER_API int whisper_vad_n_probs(struct whisper_vad_context* vctx);
WHISPER_API float* whisper_vad_probs(struct whisper_vad_context* vctx);
WHISPER_API struct whisper_vad_segments* whisper_vad_segments_from_probs(struct whisper_vad_context* vctx,
                                                                         struct whisper_vad_params params);
WHISPER_API struct whisper_vad_segments* whisper_vad_segments_from_samples(struct whisper_vad_context* vctx,
                                                                           struct whisper_vad_params params,
                                                                           const float* samples, int n_samples);
WHISPER_API int whisper_vad_segments_n_segments(struct whisper_vad_segments* segments);
WHISPER_API float whisper_vad_segments_get_segment_t0(struct whisper_vad_segments* segments, int i_segment);
WHISPER_API float whisper_vad_segments_get_segment_t1(struct whisper_vad_segments* segments, int i_segment);
WHISPER_API void whisper_vad_free_segments(struct whisper_vad_segments* segments);
WHISPER_API void whisper_vad_free(struct whisper_vad_context* ctx);

/* Sets the log callback of this library and of the ggml layer under it (ggml's messages arrive
 * prefixed "ggml: " and newline-terminated, like whisper's). NULL restores the default (stderr;
 * DEBUG messages dropped), as whisper.cpp. To silence, pass a callback that does nothing. */
WHISPER_API void whisper_log_set(ggml_log_callback log_callback, void* user_data);

#ifdef __cplusplus
}
#endif

/* The extensions (whisper_ggml_*): faster-whisper's rules, per-window results, checks. */
#include "whisper_ggml.h"

#endif /* WHISPER_H */
