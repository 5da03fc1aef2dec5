// Command-line flags of `whisper:cli`: every flag whisper.cpp 1.8.5's whisper-cli accepts
// (examples/cli/cli.cpp, whisper_params / whisper_params_parse / whisper_print_usage), spelled and
// defaulted the same, so scripts written for whisper-cli keep working. whisper-cli's flags have
// short multi-letter forms with one dash (-otxt, -bs) and long forms with inner dashes
// (--offset-t), which Abseil flags cannot name, so a small table-driven parser reads them.
//
// Differences from whisper-cli, on purpose:
//   - An unknown flag, a missing or malformed value and an out-of-range value are errors
//     (whisper-cli prints usage and exits 0 for an unknown flag, and std::stoi accepts "12abc"):
//     a typo should not look like success.
//   - The model defaults to models/ggml-tiny.en.bin (whisper-cli: models/ggml-base.en.bin).
//   - `-t 0` (the default) means min(4, hardware threads), whisper-cli's default.
//   - GPU and OpenVINO flags are accepted and listed in `ignored_flags` (this runtime is CPU-only).
//   - Flags of features this runtime does not implement are accepted and listed in
//     `unimplemented_flags`; the CLI exits 2 when that list is not empty.
//   - `--version` and `--list-languages` are this runtime's own (whisper-cli 1.8.5 has neither;
//     its `-ls` is `--log-score`).
//   - WHISPER_ARG_DEVICE (whisper-cli's environment default for -dev) is not read.
#ifndef GGML_WHISPER_APPS_COMMON_CLI_PARAMS_H_
#define GGML_WHISPER_APPS_COMMON_CLI_PARAMS_H_

#include <cfloat>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "whisper/whisper.h"

namespace whisper {

// --vad's model when -vm is not given (tools/get_vad_model.sh makes it).
inline constexpr const char* kDefaultVadModel = "models/ggml-silero-v6.bin";

struct CliParams {
  // --- computation ---
  int n_threads = 0;     // -t: threads; 0 = min(4, hardware threads), whisper-cli's default
  int n_processors = 1;  // -p: whisper_full_parallel's processors (the audio is split in N parts)
  int offset_t_ms = 0;   // -ot: start of the audio to transcribe, in ms
  int offset_n = 0;      // -on: segment index offset (first SRT/VTT cue number minus one)
  int duration_ms = 0;   // -d: audio to transcribe from the offset, in ms; 0 = to the end
  int max_context = -1;  // -mc: past text tokens in the prompt; negative = all (16384), 0 = none
  int max_len = 0;       // -ml: maximum segment length in characters; 0 = no limit
  bool split_on_word = false;  // -sow: -ml splits at word boundaries instead of tokens
  int best_of = 5;       // -bo: candidates sampled per window when temperature > 0
  int beam_size = 5;     // -bs: beam width; 1 = greedy
  int audio_ctx = 0;     // -ac: encoder audio context (positions); 0 = the model's n_audio_ctx

  // --- decoding thresholds and temperature fallback ---
  float word_thold = 0.01f;       // -wt: token timestamp probability threshold (thold_pt)
  // --compression-ratio-threshold: faster-whisper's compression_ratio_threshold under OpenAI's rules
  // (whisper_full_params.ggml_compression_ratio_thold; 0: off).
  float compression_ratio_threshold = 2.4f;
  // --clip-timestamps: faster-whisper's clip_timestamps, seconds start,end,start,end,... (an odd
  // count ends at the audio's end; whisper_full_params.ggml_clip_timestamps); empty: the whole
  // audio ("0", faster-whisper's default, is the same).
  std::vector<float> clip_timestamps;
  // --hallucination-silence-threshold: faster-whisper's hallucination_silence_threshold in seconds,
  // with -dtw under OpenAI's rules (whisper_full_params.ggml_hallucination_silence_thold; -1: off).
  float hallucination_silence_threshold = -1.0f;
  // faster-whisper 1.2.1's transcribe options of the same names (whisper_full_params.ggml_* and
  // beam_search.patience; whisper.h documents each): --patience (openai rules, beam search),
  // --length-penalty (openai rules: sum logprob / length^N), --repetition-penalty,
  // --no-repeat-ngram-size, --max-new-tokens (0: none), --prompt-reset-on-temperature.
  float patience = 1.0f;
  float length_penalty = 1.0f;
  float repetition_penalty = 1.0f;
  int no_repeat_ngram_size = 0;
  int max_new_tokens = 0;
  float prompt_reset_on_temperature = 0.5f;
  // faster-whisper 1.2.1's prompt and window options (whisper_full_params.ggml_prefix,
  // ggml_hotwords, ggml_suppress_tokens, max_initial_ts, ggml_chunk_length): --prefix, --hotwords,
  // --suppress-tokens (comma-separated ids, -1 = the non-speech set; has_suppress_tokens: given),
  // --max-initial-timestamp (seconds), --chunk-length (seconds per window, 1..30; 0 = 30).
  std::string prefix;
  std::string hotwords;
  bool has_suppress_tokens = false;
  std::vector<int> suppress_tokens;
  float max_initial_timestamp = 1.0f;
  int chunk_length = 0;
  // faster-whisper 1.2.1's prepend_punctuations and append_punctuations
  // (whisper_full_params.ggml_prepend/append_punctuations: UTF-8, each a set of marks merged into
  // the next / previous word by -dtw word timestamps under the openai rules; "" merges none):
  // --prepend-punctuations, --append-punctuations.
  std::string prepend_punctuations = "\"'\xE2\x80\x9C\xC2\xBF([{-";  // "'“¿([{-
  std::string append_punctuations =
      "\"'.\xE3\x80\x82,\xEF\xBC\x8C!\xEF\xBC\x81?\xEF\xBC\x9F:\xEF\xBC\x9A\xE2\x80\x9D)]}\xE3\x80\x81";  // "'.。,，!！?？:：”)]}、
  // --batch-size N (whisper_full_params.ggml_batch_size): N > 1 transcribes chunks of at most 30 s,
  // cut at the pauses VAD finds (the -vm model) or the --clip-timestamps clips, N at a time; 0/1: sequential.
  int batch_size = 0;
  float entropy_thold = 2.40f;    // -et: a window whose entropy is below this failed (repetition)
  float logprob_thold = -1.00f;   // -lpt: a window whose mean log probability is below this failed
  float no_speech_thold = 0.60f;  // -nth: no-speech probability above which a window is silence
  float temperature = 0.0f;       // -tp: initial sampling temperature, in [0, 1]
  float temperature_inc = 0.2f;   // -tpi: temperature step of the fallback
  bool no_fallback = false;       // -nf: no fallback (whisper-cli passes temperature_inc 0 then)
  // --temperatures: faster-whisper's temperature as a list, tried in order (any finite values;
  // whisper_full_params.ggml_temperatures); empty: -tp and -tpi (and -nf) decide.
  std::vector<float> temperatures;

  // --- task ---
  bool debug_mode = false;       // -debug: accepted; a no-op in whisper.cpp 1.8.5 and here
  bool translate = false;        // -tr: translate to English (multilingual models)
  bool detect_language = false;  // -dl: print the detected language and exit
  bool diarize = false;          // -di: stereo diarization (the louder channel per segment)
  bool tinydiarize = false;      // -tdrz: tinydiarize speaker turns (whisper_full_params.tdrz_enable)
  std::string language = "en";   // -l: language code, lowercased; "auto" = detect
  // --multilingual: faster-whisper's multilingual=True, a language detected per 30 s window
  // (whisper_full_params.ggml_multilingual); stdout shows each segment's as "(xx) " before its text.
  bool multilingual = false;
  std::string prompt;            // --prompt: initial prompt text
  bool carry_initial_prompt = false;  // --carry-initial-prompt: prompt opens every window
  std::string model = "models/ggml-tiny.en.bin";  // -m: model file
  // -f FNAME (repeatable) and bare arguments, in order. "-" is standard input.
  std::vector<std::string> files;

  // --- output files (one per input, named <output name><extension>) ---
  bool output_txt = false;        // -otxt: .txt
  bool output_vtt = false;        // -ovtt: .vtt
  bool output_srt = false;        // -osrt: .srt
  bool output_lrc = false;        // -olrc: .lrc
  bool output_words = false;      // -owts: karaoke video script .wts (output.h FormatWts)
  // -fp: font for the -owts video (only used by -owts)
  std::string font_path = "/System/Library/Fonts/Supplemental/Courier New Bold.ttf";
  bool output_csv = false;        // -ocsv: .csv
  bool output_json = false;       // -oj: .json
  bool output_json_full = false;  // -ojf: -oj plus each segment's tokens (sets output_json too)
  bool log_score = false;         // -ls/--log-score: <of>.score.txt, each token and its probability
  // -of FNAME (repeatable): output name without extension for the input file at the same index
  // of `files` (whisper-cli fname_out); inputs past the end use their own path. "-" writes the
  // (single) output format to stdout. More -of than inputs is a parse error.
  std::vector<std::string> output_files;

  // --- console output ---
  bool no_prints = false;         // -np: print nothing but the results
  bool print_special = false;     // -ps: special tokens are part of the printed text
  bool print_colors = false;      // -pc: color tokens by probability
  bool print_confidence = false;  // --print-confidence: tokens inverse (p < 0.33), underlined (< 0.66), dim
  bool print_progress = false;    // -pp: progress on stderr
  bool no_timestamps = false;     // -nt: no timestamps (printed or decoded)

  // --- token suppression, grammar, token-level timestamps ---
  bool suppress_nst = false;      // -sns: suppress non-speech tokens
  std::string suppress_regex;     // --suppress-regex: suppress tokens whose text matches it
  std::string grammar;            // --grammar: GBNF grammar file (or text when no such file exists)
  std::string grammar_rule;       // --grammar-rule: top-level rule (only used with --grammar)
  float grammar_penalty = 100.0f;  // --grammar-penalty: logit scale (only used with --grammar)
  std::string dtw;                // -dtw: alignment-heads preset of DTW token timestamps ("" = off)

  // --- voice activity detection (Silero v6; the others only apply with --vad) ---
  bool vad = false;                           // --vad: transcribe detected speech only
  std::string vad_model;                      // -vm: VAD model file
  float vad_threshold = 0.5f;                 // -vt: speech probability threshold
  int vad_min_speech_duration_ms = 250;       // -vspd: shortest speech segment, ms
  int vad_min_silence_duration_ms = 100;      // -vsd: shortest silence that splits, ms
  float vad_max_speech_duration_s = FLT_MAX;  // -vmsd: longer speech is split, s
  int vad_speech_pad_ms = 30;                 // -vp: padding around speech, ms
  float vad_samples_overlap = 0.1f;           // -vo: overlap between segments, s

  // --- GPU / OpenVINO: parsed for compatibility, no effect on this CPU runtime ---
  bool use_gpu = true;                        // -ng clears it
  bool flash_attn = true;                     // -fa sets it, -nfa clears it
  int gpu_device = 0;                         // -dev N
  std::string openvino_encode_device = "CPU"; // -oved D

  // --- this runtime ---
  bool help = false;     // -h: usage requested (parsing stopped there)
  bool version = false;  // --version: print the version and exit (not a whisper-cli flag)
  // --list-languages: print the language codes and names and exit (not a whisper-cli flag:
  // whisper-cli 1.8.5 has no language list, and its -ls is --log-score).
  bool list_languages = false;
  // --decoding: "openai" (OpenAI's transcribe.py rules, faster-whisper's results; the default) or
  // "whisper.cpp" (whisper.cpp 1.8.5's rules and results; see whisper_ggml_set_decoding).
  std::string decoding = "openai";
  // --compute-type: faster-whisper's compute_type (default, auto, int8, int8_float32, int8_float16,
  // int8_bfloat16, float16, bfloat16, float32): the weight matrices are converted at load
  // (whisper_ggml_set_compute_type; int8* -> Q8_0). Checked by the parser.
  std::string compute_type = "default";
  // --int8-attention: the encoder's self-attention in int8: "auto" (quantized weights on
  // AVX512-VNNI, unless WHISPER_INT8_ATTENTION=0), "on" or "off" (whisper_ggml_set_int8_attention;
  // Int8AttentionMode gives its mode). Checked by the parser.
  std::string int8_attention = "auto";

  // GPU/OpenVINO-only flags given, as spelled, each once in first-seen order (for a one-line
  // "ignored on this CPU runtime" notice).
  std::vector<std::string> ignored_flags;
  // Flags of features this runtime does not implement that were given (a string flag only with a
  // non-empty value, as whisper-cli ignores an empty one), as spelled, each once in first-seen
  // order. The CLI reports them and exits 2.
  std::vector<std::string> unimplemented_flags;
  // The first of unimplemented_flags ("" if none), for a one-line error.
  std::string unimplemented;
};

// Parses argv[1..argc). As whisper-cli, a single argument "@FILE" reads the arguments from FILE,
// one per line (here: trailing '\r' removed, empty lines skipped). Parsing stops at -h/--help.
// Errors (InvalidArgument, one line naming the flag as spelled): an unknown flag, a missing or
// malformed value (with the expected kind), an out-of-range value (with the range), more -of
// than input files (with both counts), -di together with -tdrz, an unreadable response file.
absl::StatusOr<CliParams> ParseCliParams(int argc, const char* const* argv);

// whisper_full_params for these flags, as whisper-cli's main() fills them: the strategy from -bs
// (beam search when > 1), the language, thresholds, temperatures, prompt and token timestamps
// (-ojf or -ml > 0); -nf sets temperature_inc 0. String fields point into `p`, which must outlive
// the result. Callbacks are unset.
whisper_full_params ToWhisperFullParams(const CliParams& p);

// whisper_context_params for these flags, as whisper-cli's main() fills them: -dtw MODEL turns
// on DTW token timestamps with that model's alignment heads (whisper_alignment_heads_preset).
// The context parameters of p (flash attention, -dtw, --compute-type). p.compute_type was checked
// by the parser; a note about it (bfloat16 is loaded as float16) goes to *note when not NULL.
whisper_context_params ToWhisperContextParams(const CliParams& p, std::string* note = nullptr);

// whisper_ggml_set_int8_attention's mode for p.int8_attention: -1 auto, 0 off, 1 on.
int Int8AttentionMode(const CliParams& p);

// The usage text: every flag with its default; flags this runtime accepts without acting on them
// are marked "(ignored: CPU runtime)" or "(not implemented: the CLI exits 2 when set)".
std::string CliUsage(const char* argv0);

}  // namespace whisper

#endif  // GGML_WHISPER_APPS_COMMON_CLI_PARAMS_H_
