/* whisper_ggml.h: this runtime's extensions to whisper.cpp's C API (whisper.h), named
 * whisper_ggml_*: faster-whisper 1.2.1's VAD rules, the decoding rule set (whisper.cpp's or
 * OpenAI's), per-window results (avg_logprob, compression_ratio, temperature, seek, language),
 * DTW control, alignment-head presets, model-file and grammar checks, compute types. whisper.h
 * includes this file, so a program includes whisper.h only; the whisper_full_params fields of the
 * extensions (ggml_*) are in whisper.h's struct. Same conventions as whisper.h: C99 and C++,
 * errors as negative codes or NULL with one message to the log callback (whisper_log_set), times
 * in centiseconds, samples 16 kHz mono float PCM. */
#ifndef WHISPER_GGML_H
#define WHISPER_GGML_H

#include "whisper.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Speech stretches by faster-whisper 1.2.1's rules (extension): its vad.py get_speech_timestamps
 * with VadOptions (threshold, neg_threshold, min_speech_duration_ms, max_speech_duration_s,
 * min_silence_duration_ms, speech_pad_ms; params.samples_overlap is not used), on the Silero VAD v6
 * probabilities of `samples` (16 kHz mono) computed by vctx as whisper_vad_detect_speech does.
 * Unlike whisper.cpp's rules (whisper_vad_segments_from_samples) the audio ends at n_samples, not
 * at the last whole window, and close stretches are not merged afterwards. neg_threshold < 0 means
 * faster-whisper's None: max(threshold - 0.15, 0.01). Writes up to max_spans stretches as sample
 * indices, spans[2 i] = start and spans[2 i + 1] = end (exclusive), in order, and returns how many
 * there are (more than max_spans: call again with room for them; spans may be NULL when max_spans
 * is 0). faster-whisper's vad_filter concatenates audio[start:end] of each and restores times with
 * SpeechTimestampsMap (the Python package does the same: ggml_whisper.WhisperModel.transcribe).
 * Returns -1 with a message for a NULL vctx or samples, n_samples < 0, NULL spans with max_spans
 * > 0, or a threshold outside (0, 1). */
WHISPER_API int whisper_ggml_vad_speech_faster_whisper(struct whisper_vad_context* vctx, struct whisper_vad_params params,
                                                       float neg_threshold, const float* samples, int n_samples,
                                                       int64_t* spans, int max_spans);

/* ---- Extension of this runtime (not in whisper.cpp) -------------------------------------------
 * Which decoding rules whisper_full follows on every state of ctx:
 *   WHISPER_GGML_DECODING_WHISPER_CPP (the default): whisper.cpp 1.8.5's, so results equal
 *     whisper.cpp's for the same model (the window after the audio holds the log-mel of its 30 s
 *     zero padding; beam search samples beam_size candidates per beam; windows start while
 *     100 ms remain; the audio ends at whisper_n_len frames; the encoder's and decoder's GELU is
 *     whisper.cpp's tanh approximation).
 *   WHISPER_GGML_DECODING_OPENAI: OpenAI's transcribe.py and decoding.py, as faster-whisper (0.0
 *     after the audio as pad_or_trim; beam search keeps the top beam_size by log-probability;
 *     segments clamped to the audio; the audio ends at n_samples / 160 frames; an attempt whose
 *     text's zlib compression ratio exceeds 2.4 falls back to the next temperature, beside
 *     entropy_thold; the GELU is the model's exact erf form, as CTranslate2's), so results equal
 *     faster-whisper's for the same weights. The CLI's default.
 * Returns 0, or -1 for a NULL ctx or an unknown value. Takes effect at the next whisper_full
 * (and whisper_encode / whisper_decode, language detection), not on a whisper_ggml_batch made
 * before (see there). */
enum whisper_ggml_decoding {
  WHISPER_GGML_DECODING_WHISPER_CPP = 0,
  WHISPER_GGML_DECODING_OPENAI = 1,
};
WHISPER_API int whisper_ggml_set_decoding(struct whisper_context* ctx, enum whisper_ggml_decoding decoding);

/* whisper_ggml_set_int8_attention (extension): the encoder's self-attention in int8 (q, k, the
 * softmax's p and v in blocks of 32, products on AVX512-VNNI; whisper/encoder.h Int8Attention).
 * mode -1 (auto, the default): int8 when the attention weights are quantized (Q8_0, Q5_0, Q4_0,
 * ...), unless the environment variable WHISPER_INT8_ATTENTION is "0"; F16/F32 models keep f32.
 * 0: f32 attention (as CTranslate2's int8, faster-whisper's compute_type="int8"). 1: int8 for any
 * weights. CPUs without AVX512-VNNI run f32 attention in every mode. Returns 0, or -1 for a NULL
 * ctx or another mode. Takes effect at the next whisper_full / whisper_encode of each state (the
 * encoder graph is rebuilt), not on a whisper_ggml_batch made before. whisper-cli:
 * --int8-attention auto|on|off. */
WHISPER_API int whisper_ggml_set_int8_attention(struct whisper_context* ctx, int mode);

/* Word timestamps (extension): with dtw_token_timestamps and WHISPER_GGML_DECODING_OPENAI,
 * whisper_full times words as faster-whisper's word_timestamps=True does (cross-attention DTW,
 * OpenAI's timing.py): a word's text tokens run from its first token's t0 to its last token's t1
 * (centiseconds), and segment t0/t1 move to their words. Returns 1 when token i_token of segment
 * i_segment starts a word, 0 when it does not (a later token of a word, or a timestamp), -1 when
 * the segment has no word times or an index is out of range. */
WHISPER_API int whisper_ggml_full_get_token_word_start_from_state(struct whisper_state* state, int i_segment,
                                                                  int i_token);
WHISPER_API int whisper_ggml_full_get_token_word_start(struct whisper_context* ctx, int i_segment, int i_token);

/* Word probability (extension): with word times (above), the probability of the word that text
 * token i_token of segment i_segment is part of, as faster-whisper 1.2.1's Word.probability:
 * the mean, over the word's own tokens (not punctuation merged into it), of each token's
 * probability in the alignment pass (CTranslate2's Whisper align text_token_probs: the softmax
 * over the text vocabulary [0, whisper_token_eot) of the logits before the token, with
 * <|notimestamps|> and the window's text tokens as the prompt; transcribe.py find_alignment).
 * Every token of a word gives the same value. The alignment pass then computes the logits of
 * every text position: n_vocab floats each, about 46 MB more for a window of 224 tokens of a
 * 51864-token vocabulary, allocated once per state. Returns -1 for a timestamp or special token,
 * a segment without word times (whisper.cpp's rules, no dtw_token_timestamps, or
 * whisper_ggml_state_set_dtw 0), and an index out of range (logged). */
WHISPER_API float whisper_ggml_full_get_token_word_probability_from_state(struct whisper_state* state, int i_segment,
                                                                          int i_token);
WHISPER_API float whisper_ggml_full_get_token_word_probability(struct whisper_context* ctx, int i_segment,
                                                               int i_token);

/* Segment scores (extension), what whisper-server's and OpenAI's verbose_json segments report:
 * - avg_logprob: the mean natural-log probability (whisper_token_data.plog) of the segment's text
 *   tokens (ids below whisper_token_eot); 0 when it has none. whisper.cpp 1.8.5's
 *   examples/server/server.cpp sums the same tokens but divides by all of them, timestamps
 *   included.
 * - compression_ratio: OpenAI Whisper's compression ratio (openai/whisper utils.py
 *   compression_ratio: UTF-8 bytes / zlib.compress bytes at level 6) of the segment's text with
 *   leading and trailing ASCII whitespace removed; 0 for empty text.
 * Both return 0 (and log) for a NULL state or a segment index out of range, -1 if zlib fails. The
 * compression ratio uses a deflate buffer (about 270 KB) kept in the state after the first call:
 * do not call it on one state from two threads at once. */
WHISPER_API float whisper_ggml_full_get_segment_avg_logprob_from_state(struct whisper_state* state, int i_segment);
WHISPER_API float whisper_ggml_full_get_segment_avg_logprob(struct whisper_context* ctx, int i_segment);
WHISPER_API float whisper_ggml_full_get_segment_compression_ratio_from_state(struct whisper_state* state,
                                                                              int i_segment);
WHISPER_API float whisper_ggml_full_get_segment_compression_ratio(struct whisper_context* ctx, int i_segment);

/* How a segment was decoded (extension): what faster-whisper 1.2.1's Segment reports as seek,
 * temperature, avg_logprob and compression_ratio, all of them its 30 s window's (transcribe.py
 * generate_segments / generate_with_fallback: every segment of a window has the same values), and
 * the timestamp token that opened it.
 * - seek: the window's start in 10 ms mel frames of the audio that was decoded (after offset_ms;
 *   with vad, of the joined speech, as faster-whisper's with vad_filter).
 * - temperature: of the attempt kept; when every temperature failed, OpenAI's rules report the
 *   last one tried (faster-whisper's "final temperature"), whisper.cpp's the last attempt's.
 * - avg_logprob: under OpenAI's rules the attempt's summed log-probability over every sampled
 *   token, <|endoftext|> included, divided by (tokens before it + 1), faster-whisper's
 *   cum_logprob / (seq_len + 1); under whisper.cpp's, its sum over its tokens / their number.
 * - compression_ratio: of the attempt's text (tokens below whisper_token_eot, stripped of
 *   whitespace): UTF-8 bytes / zlib level-6 bytes (faster-whisper get_compression_ratio).
 * - opening_timestamp: in "<|a|> text <|b|><|b|> text <|c|>" the second <|b|>, which opens the
 *   second segment: whisper.cpp's segments (whisper_full_get_token_*) leave it out, faster-whisper's
 *   Segment.tokens start with it; -1 when the segment's first token is its opening one (the first
 *   segment of a window) or it has none (a piece split off by max_len or at a VAD gap).
 * Returns 0 and fills *out; -1 (and logs) for a NULL state/context or out, or a segment index out
 * of range. */
struct whisper_ggml_segment_decoding {
  int64_t seek;
  float temperature;
  float avg_logprob;
  float compression_ratio;
  whisper_token opening_timestamp;
};
WHISPER_API int whisper_ggml_full_get_segment_decoding_from_state(struct whisper_state* state, int i_segment,
                                                                  struct whisper_ggml_segment_decoding* out);
WHISPER_API int whisper_ggml_full_get_segment_decoding(struct whisper_context* ctx, int i_segment,
                                                       struct whisper_ggml_segment_decoding* out);

/* Language of a segment (extension): the whisper.cpp language id (0 "en" .. whisper_lang_max_id())
 * in the prompt of the window the segment was decoded from: whisper_full_lang_id's, or with
 * whisper_full_params.ggml_multilingual the window's detected one (whisper_lang_str names it);
 * 0 on English-only models. Returns -1 (and logs) for a NULL context/state or a segment index out
 * of range. */
WHISPER_API int whisper_ggml_full_get_segment_lang_id_from_state(struct whisper_state* state, int i_segment);
WHISPER_API int whisper_ggml_full_get_segment_lang_id(struct whisper_context* ctx, int i_segment);

/* DTW per state (extension): on a context made with dtw_token_timestamps, enabled = 0 skips the
 * alignment pass in this state's later whisper_full calls (t_dtw stays -1, no word times, and
 * under OpenAI's rules segment bounds and seeks are the timestamp tokens', as without dtw);
 * enabled = 1, the default, restores it. A server leasing states per request sets it per request.
 * Returns 0, or -1 for a NULL state. */
WHISPER_API int whisper_ggml_state_set_dtw(struct whisper_state* state, int enabled);

/* Program helpers (extension): what whisper-cli, whisper-server and the Python module need
 * beside the C API, so that they use nothing else of this library.
 *
 * whisper_ggml_alignment_heads_preset_from_name: the preset of whisper-cli 1.8.5's -dtw names
 * (examples/cli/cli.cpp: "tiny.en", "tiny", "base.en", "base", "small.en", "small", "medium.en",
 * "medium", "large.v1", "large.v2", "large.v3", "large.v3.turbo"), for
 * whisper_context_params.dtw_aheads_preset; WHISPER_AHEADS_NONE for NULL or any other name. */
WHISPER_API enum whisper_alignment_heads_preset whisper_ggml_alignment_heads_preset_from_name(const char* name);
/* whisper_ggml_alignment_heads_preset_for_model: the preset of the released Whisper checkpoint
 * whose shape ctx's model has (n_vocab 51864: the .en models, 51865: multilingual, 51866:
 * large-v3 and large-v3-turbo, and OpenAI's layer counts; large-v1 and large-v2 share a shape and
 * get large-v2's heads); WHISPER_AHEADS_NONE for NULL or any other shape (a fine-tune with other
 * layer counts, a synthetic model). */
WHISPER_API enum whisper_alignment_heads_preset whisper_ggml_alignment_heads_preset_for_model(
    struct whisper_context* ctx);

/* whisper_ggml_init: one entry for the programs' loads. The model is the file at `path` (as
 * whisper_init_from_file_with_params), or when path is NULL the image at buffer (buffer_size
 * bytes, as whisper_init_from_buffer_with_params; the image may be freed once this returns), named
 * `name` in the load line and in every message about it (e.g. the CTranslate2 folder it was
 * converted from; NULL: "<buffer>", whisper.cpp's name). flags: WHISPER_GGML_INIT_NO_STATE makes
 * no default state (the _no_state inits); WHISPER_GGML_INIT_HEADS_FOR_SHAPE, when
 * params.dtw_token_timestamps is off, turns it on with the alignment heads preset of the model's
 * shape (whisper_ggml_alignment_heads_preset_for_model, read from the header of the one load) and
 * leaves it off for a shape with none; whisper_ggml_alignment_heads_preset_for_model(ctx) then
 * says which. NULL with a message (as the inits) for a NULL path and buffer, unknown flags, or a
 * model that cannot load. */
enum whisper_ggml_init_flags {
  WHISPER_GGML_INIT_NO_STATE = 1,
  WHISPER_GGML_INIT_HEADS_FOR_SHAPE = 2,
};
WHISPER_API struct whisper_context* whisper_ggml_init(const char* path, void* buffer, size_t buffer_size,
                                                      const char* name, struct whisper_context_params params,
                                                      int flags);

/* whisper_ggml_check_model_file: whether the file at `path` is, by its first 64 bytes, a model of
 * the kind `expected` (whisper.cpp's ggml Whisper model, or a Silero VAD model in the same ggml
 * layout), before a long load or long work ends in a loader error. Returns 0 when it is, and when
 * the file cannot be opened or read or has 1..3 bytes (the loader reports those); 1 when it is
 * another kind: an empty file, a GGUF file, a CTranslate2 model.bin (with the command that converts
 * it), the other ggml kind, or an unrecognised file (its first 4 bytes in hex and ASCII), and then
 * the message, naming `path`, the kind found and the kind expected, is written to msg (truncated
 * to msg_size - 1 bytes, NUL-terminated; nothing is written when msg is NULL or msg_size is 0);
 * -1 for a NULL path or an unknown `expected`. */
enum whisper_ggml_model_file_kind {
  WHISPER_GGML_MODEL_FILE_WHISPER = 0,
  WHISPER_GGML_MODEL_FILE_SILERO_VAD = 1,
};
WHISPER_API int whisper_ggml_check_model_file(const char* path, enum whisper_ggml_model_file_kind expected, char* msg,
                                              size_t msg_size);

/* whisper_ggml_set_compute_type: sets params->ggml_convert_weights and ggml_weight_type for
 * faster-whisper 1.2.1's (CTranslate2's) compute_type name: "default" and "auto" -> no conversion
 * (the file's types); "int8", "int8_float32", "int8_float16", "int8_bfloat16" -> GGML_TYPE_Q8_0
 * (8-bit weights, one fp16 scale per 32; activations stay F32 here); "float16" -> GGML_TYPE_F16;
 * "float32" -> GGML_TYPE_F32; "bfloat16" -> GGML_TYPE_F16, as this runtime has no BF16 type.
 * Returns 0, or 1 when the type is a substitute (bfloat16), with a note in msg; -1 for a NULL
 * params or compute_type, and for "int16" (no ggml weight type) or any other name, with a message
 * naming the value and listing the accepted names (params unchanged). msg as
 * whisper_ggml_check_model_file (truncated to msg_size - 1 bytes, NUL-terminated; nothing
 * written when msg is NULL or msg_size is 0). */
WHISPER_API int whisper_ggml_set_compute_type(struct whisper_context_params* params, const char* compute_type,
                                              char* msg, size_t msg_size);

/* whisper_ggml_format_timestamp: t (centiseconds) as whisper.cpp's to_timestamp writes it,
 * "hh:mm:ss.mmm" ("hh:mm:ss,mmm" when comma != 0, SRT's form); negative t is 0, and t past
 * INT64_MAX / 10 is clamped there (whisper.cpp overflows). Writes at most size bytes, NUL included
 * (snprintf's truncation), to buf and returns buf; 32 bytes always suffice. */
WHISPER_API const char* whisper_ggml_format_timestamp(int64_t t, int comma, char* buf, size_t size);

/* whisper_ggml_check_grammar: whether whisper_full would take these grammar rules
 * (whisper_full_params.grammar_rules, n_grammar_rules, i_start_rule), so a program can report a
 * bad grammar before it loads a model. Returns 0 when they are fine; -1 when they are not, with
 * the reason in msg (truncated to msg_size - 1 bytes, NUL-terminated; nothing written when msg is
 * NULL or msg_size is 0) naming the rule and element index: no rules, i_start_rule out of range,
 * a NULL rule, an element type outside whisper_gretype, a RULE_REF to no rule, a CHAR_RNG_UPPER or
 * CHAR_ALT not after a character element, a left-recursive rule reachable from the start rule
 * (one that can reach itself before matching a character), or a start rule that expands to more
 * than 4096 parse stacks or 2^18 expansion steps (an ambiguous grammar). Each rule must end in
 * WHISPER_GRETYPE_END (it is read up to there). */
WHISPER_API int whisper_ggml_check_grammar(const whisper_grammar_element** rules, size_t n_rules,
                                           size_t i_start_rule, char* msg, size_t msg_size);

/* ---- Continuous batching of requests (extension, issue 38 part 3) -----------------------------
 * A decoder batch shared by the whisper_states of one context, so that transcriptions running at
 * once on several threads (a server's requests) read every decoder weight once per step for all
 * of them. whisper_ggml_batch_init makes one inference state of n_slots windows and n_slots x
 * n_decoders_per_slot decoders (InferenceState, n_threads threads; the context's flash_attn and DTW
 * alignment heads) and its scheduler (whisper/decode_scheduler.h). whisper_ggml_state_set_batch
 * attaches it to a state (NULL detaches): from then on whisper_full_with_state on that state runs
 * its window loop on a free slot of the batch (waiting for one while all n_slots are taken), so its
 * one-token decoder steps run in one graph with those of every other state's transcription in
 * flight (a transcription joins at the next step and leaves when its window loop ends); its
 * encoder, prompt and alignment passes run on the batch's state one at a time. Each
 * transcription's results are those it gives alone (DecodeSequences gives each sequence the bytes
 * of its own step), with the same options. Everything else (VAD, the log-mel, language detection,
 * whisper_lang_auto_detect_with_state) stays on the state's own buffers and params.n_threads.
 * A call runs as without the batch when it needs more decoders than n_decoders_per_slot (beam
 * search, best_of), or uses ggml_batch_size > 1. The batch's graphs use the GELU of the context's
 * decoding rules at whisper_ggml_batch_init (whisper_ggml_set_decoding: whisper.cpp's tanh form or
 * the model's erf form); a call on the batch after the context's rules changed fails (-1, with a
 * message), so set the rules first.
 * whisper_ggml_batch_init returns NULL with a message for a NULL ctx, n_slots not in 1 .. 64,
 * n_decoders_per_slot < 1, n_slots x n_decoders_per_slot > 128, n_threads outside 1 ..
 * GGML_THREADPOOL_MAX_THREADS, or a state that cannot be made. whisper_ggml_state_set_batch returns
 * 0, or -1 for a NULL state or a batch of another context; it must not be called while the state
 * transcribes. whisper_ggml_batch_free (NULL: no-op) must come after every state using the batch
 * has finished its calls and been detached or freed; the context must outlive the batch.
 * whisper_ggml_batch_stats writes the batched steps run so far and the sequences they held (either
 * pointer may be NULL); -1 for a NULL batch. */
struct whisper_ggml_batch;
WHISPER_API struct whisper_ggml_batch* whisper_ggml_batch_init(struct whisper_context* ctx, int n_slots,
                                                               int n_decoders_per_slot, int n_threads);
WHISPER_API void whisper_ggml_batch_free(struct whisper_ggml_batch* batch);
WHISPER_API int whisper_ggml_state_set_batch(struct whisper_state* state, struct whisper_ggml_batch* batch);
WHISPER_API int whisper_ggml_batch_stats(const struct whisper_ggml_batch* batch, int64_t* n_steps,
                                         int64_t* n_sequences);

/* The batched pipeline (whisper_full_params.ggml_batch_size > 1) on this state: the chunks the last
 * batched whisper_full cut (n_chunks), the windows the state's batched buffers hold (n_windows:
 * min(ggml_batch_size, chunks) of the call that built them; a later call with as many or fewer
 * chunks and the same batch size, decoders and threads reuses them) and the encoder runs the last
 * call made (n_encoder_runs: one per chunk of at most 30 s). Any pointer may be NULL. Returns 0,
 * or -1 for a NULL state/context or one that never ran batched (outputs untouched). */
WHISPER_API int whisper_ggml_batched_stats_from_state(struct whisper_state* state, int* n_chunks, int* n_windows,
                                                      int* n_encoder_runs);
WHISPER_API int whisper_ggml_batched_stats(struct whisper_context* ctx, int* n_chunks, int* n_windows,
                                           int* n_encoder_runs);

#ifdef __cplusplus
}
#endif

#endif /* WHISPER_GGML_H */
