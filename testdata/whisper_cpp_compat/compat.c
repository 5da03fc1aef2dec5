/* Compatibility program: a C99 client of whisper.cpp's C API (whisper.h, 1.8.x).
 *
 * Built once against whisper.cpp itself and once against //whisper:whisper (ours); for the same
 * model and audio both builds must print byte-identical output (tools/whisper_cpp/test_compat.sh).
 * Everything printed is therefore deterministic: ids, strings, centisecond times and counts, no
 * floats (probabilities differ between engines), no timings, and whisper's log goes nowhere.
 *
 * Usage: compat MODEL WAV [n_threads [flash_attn]]
 *   WAV: RIFF, PCM 16 bit, mono, 16 kHz; n_threads: default 2; flash_attn: 0 or 1, default
 *   whisper_context_default_params()'s (whisper.cpp computes attention in F16 with it on, which
 *   moves probabilities by about 1%: near-ties then fall the other way on long audio).
 * Exit status: 0 ok, 1 error (message on stderr), 2 usage.
 *
 * Only "whisper.h" and the C standard library are used.
 */
#include "whisper.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- WAV reading ------------------------------------------------------------------------- */

static unsigned long le16(const unsigned char *p) {
  return (unsigned long)p[0] | ((unsigned long)p[1] << 8);
}

static unsigned long le32(const unsigned char *p) {
  return le16(p) | (le16(p + 2) << 16);
}

/* Reads all of `path` into a malloc'ed buffer. Returns NULL (message printed) on failure. */
static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf = NULL;
  size_t cap = 0, n = 0;
  if (f == NULL) {
    fprintf(stderr, "compat: %s: cannot open: %s\n", path, strerror(errno));
    return NULL;
  }
  for (;;) {
    if (n == cap) {
      size_t new_cap = cap ? 2 * cap : 65536;
      unsigned char *p = (unsigned char *)realloc(buf, new_cap);
      if (p == NULL) {
        fprintf(stderr, "compat: %s: out of memory\n", path);
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = p;
      cap = new_cap;
    }
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break; /* EOF or error */
  }
  if (ferror(f)) {
    fprintf(stderr, "compat: %s: read error\n", path);
    free(buf);
    fclose(f);
    return NULL;
  }
  fclose(f);
  *size = n;
  return buf;
}

#define WAV_FAIL(...)                      \
  do {                                     \
    fprintf(stderr, "compat: %s: ", path); \
    fprintf(stderr, __VA_ARGS__);          \
    fputc('\n', stderr);                   \
    free(buf);                             \
    return NULL;                           \
  } while (0)

/* Parses a RIFF/WAVE file holding 16-bit PCM, mono, 16 kHz: walks the chunks (unknown ones are
 * skipped, odd sizes are followed by a pad byte), checks "fmt " and converts "data" to floats
 * in [-1, 1) (sample / 32768). Returns a malloc'ed array of *n_samples floats, or NULL with a
 * message naming the file and the offending field. */
static float *read_wav(const char *path, int *n_samples) {
  size_t size = 0, pos, end;
  int have_fmt = 0;
  unsigned char *buf = read_file(path, &size);
  if (buf == NULL) return NULL;

  if (size < 12) WAV_FAIL("truncated: %lu bytes, a RIFF header needs 12", (unsigned long)size);
  if (memcmp(buf, "RIFF", 4) != 0) WAV_FAIL("not a RIFF file (chunk id is not \"RIFF\")");
  if (memcmp(buf + 8, "WAVE", 4) != 0) WAV_FAIL("not a WAVE file (RIFF form type is not \"WAVE\")");
  end = 8 + (size_t)le32(buf + 4); /* the RIFF size counts from byte 8 */
  if (end > size) {
    WAV_FAIL("truncated: RIFF size field says %lu bytes, the file has %lu",
             (unsigned long)end, (unsigned long)size);
  }

  for (pos = 12;;) {
    const unsigned char *id, *body;
    size_t chunk_size;
    if (pos == end) WAV_FAIL(have_fmt ? "no \"data\" chunk" : "no \"fmt \" chunk");
    if (end - pos < 8) WAV_FAIL("truncated: chunk header at byte %lu", (unsigned long)pos);
    id = buf + pos;
    chunk_size = (size_t)le32(buf + pos + 4);
    body = buf + pos + 8;
    if (chunk_size > end - pos - 8) {
      WAV_FAIL("truncated: chunk \"%.4s\" at byte %lu has size %lu, only %lu bytes follow",
               (const char *)id, (unsigned long)pos, (unsigned long)chunk_size,
               (unsigned long)(end - pos - 8));
    }

    if (memcmp(id, "fmt ", 4) == 0) {
      unsigned long format, channels, rate, align, bits;
      if (chunk_size < 16) WAV_FAIL("\"fmt \" chunk has %lu bytes, needs 16", (unsigned long)chunk_size);
      format = le16(body);
      channels = le16(body + 2);
      rate = le32(body + 4);
      align = le16(body + 12);
      bits = le16(body + 14);
      /* WAVE_FORMAT_EXTENSIBLE: the real format is the first 2 bytes of the SubFormat GUID. */
      if (format == 0xFFFE && chunk_size >= 40) format = le16(body + 24);
      if (format != 1) WAV_FAIL("fmt audio format is %lu, not PCM (1)", format);
      if (bits != 16) WAV_FAIL("fmt bits per sample is %lu, not 16", bits);
      if (channels != 1) WAV_FAIL("fmt channels is %lu, not 1 (mono)", channels);
      if (rate != 16000) WAV_FAIL("fmt sample rate is %lu Hz, not 16000", rate);
      if (align != 2) WAV_FAIL("fmt block align is %lu, not 2", align);
      have_fmt = 1;
    } else if (memcmp(id, "data", 4) == 0) {
      float *pcm;
      size_t i, n = chunk_size / 2;
      if (!have_fmt) WAV_FAIL("\"data\" chunk before the \"fmt \" chunk");
      if (chunk_size % 2 != 0) WAV_FAIL("data size %lu is not a multiple of 2", (unsigned long)chunk_size);
      if (n == 0) WAV_FAIL("data chunk is empty");
      if (n > (size_t)INT_MAX) WAV_FAIL("data chunk too large");
      pcm = (float *)malloc(n * sizeof(float));
      if (pcm == NULL) WAV_FAIL("out of memory");
      for (i = 0; i < n; ++i) {
        unsigned long u = le16(body + 2 * i);
        long s = u >= 0x8000 ? (long)u - 0x10000 : (long)u; /* two's complement int16 */
        pcm[i] = (float)s / 32768.0f;
      }
      free(buf);
      *n_samples = (int)n;
      return pcm;
    }
    /* Anything else (LIST, fact, ...) is skipped. A chunk of odd size is followed by a pad byte;
     * some writers omit it on the last chunk, so a missing pad at the very end is accepted. */
    pos += 8 + chunk_size;
    if (chunk_size % 2 != 0 && pos < end) ++pos;
  }
}

/* ---- printing ---------------------------------------------------------------------------- */

/* Prints `s` in double quotes; bytes outside printable ASCII (such as the halves of a UTF-8
 * character split across tokens), '"' and '\' are escaped, so the output is plain ASCII. */
static void print_quoted(const char *s) {
  const unsigned char *p;
  putchar('"');
  if (s == NULL) {
    fputs("(null)", stdout);
  } else {
    for (p = (const unsigned char *)s; *p; ++p) {
      if (*p == '"' || *p == '\\') printf("\\%c", *p);
      else if (*p < 0x20 || *p >= 0x7f) printf("\\x%02x", *p);
      else putchar(*p);
    }
  }
  putchar('"');
}

static void log_nothing(enum ggml_log_level level, const char *text, void *user_data) {
  (void)level;
  (void)text;
  (void)user_data;
}

struct segment_counts {
  int calls; /* times the new-segment callback ran */
  int n_new; /* sum of its n_new arguments */
};

static void on_new_segment(struct whisper_context *ctx, struct whisper_state *state, int n_new,
                           void *user_data) {
  struct segment_counts *counts = (struct segment_counts *)user_data;
  (void)ctx;
  (void)state;
  counts->calls += 1;
  counts->n_new += n_new;
}

/* Runs whisper_full with `strategy` and prints its segments and tokens: on the context's own
 * state when `state` is NULL, else whisper_full_with_state on `state` and the _from_state
 * getters. Returns 0 or 1. */
static int transcribe(struct whisper_context *ctx, struct whisper_state *state,
                      enum whisper_sampling_strategy strategy, const char *name, int n_threads,
                      const float *pcm, int n_samples) {
  struct whisper_full_params params = whisper_full_default_params(strategy);
  struct segment_counts counts = {0, 0};
  int i, j, n_segments, rc;

  params.n_threads = n_threads;
  params.print_progress = false;
  params.print_realtime = false;
  params.print_timestamps = false;
  params.no_context = true;
  params.language = "en";
  if (strategy == WHISPER_SAMPLING_BEAM_SEARCH) params.beam_search.beam_size = 5;
  params.new_segment_callback = on_new_segment;
  params.new_segment_callback_user_data = &counts;

  printf("== %s\n", name);
  rc = state != NULL ? whisper_full_with_state(ctx, state, params, pcm, n_samples)
                     : whisper_full(ctx, params, pcm, n_samples);
  if (rc != 0) {
    fprintf(stderr, "compat: whisper_full (%s) failed (%d)\n", name, rc);
    return 1;
  }
  n_segments = state != NULL ? whisper_full_n_segments_from_state(state) : whisper_full_n_segments(ctx);
  printf("n_segments %d\n", n_segments);
  for (i = 0; i < n_segments; ++i) {
    int n_tokens = state != NULL ? whisper_full_n_tokens_from_state(state, i) : whisper_full_n_tokens(ctx, i);
    long long t0 = state != NULL ? (long long)whisper_full_get_segment_t0_from_state(state, i)
                                 : (long long)whisper_full_get_segment_t0(ctx, i);
    long long t1 = state != NULL ? (long long)whisper_full_get_segment_t1_from_state(state, i)
                                 : (long long)whisper_full_get_segment_t1(ctx, i);
    printf("segment %d t0 %lld t1 %lld text ", i, t0, t1);
    print_quoted(state != NULL ? whisper_full_get_segment_text_from_state(state, i)
                               : whisper_full_get_segment_text(ctx, i));
    printf("\n  n_tokens %d\n", n_tokens);
    for (j = 0; j < n_tokens; ++j) {
      int id = state != NULL ? (int)whisper_full_get_token_id_from_state(state, i, j)
                             : (int)whisper_full_get_token_id(ctx, i, j);
      printf("  token %d id %d text ", j, id);
      print_quoted(state != NULL ? whisper_full_get_token_text_from_state(ctx, state, i, j)
                                 : whisper_full_get_token_text(ctx, i, j));
      putchar('\n');
    }
  }
  printf("full_lang_id %d\n", state != NULL ? whisper_full_lang_id_from_state(state) : whisper_full_lang_id(ctx));
  printf("new_segment_callback calls %d n_new %d\n", counts.calls, counts.n_new);
  return 0;
}

/* ---- main -------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  const char *model_path, *wav_path;
  struct whisper_context_params cparams;
  struct whisper_context *ctx;
  whisper_token tokens[64];
  float *pcm;
  int n_samples = 0, n_threads = 2, n_tok, i, t, rc = 0, flash_attn = -1;

  if (argc < 3 || argc > 5) {
    fprintf(stderr, "usage: %s MODEL WAV [n_threads [flash_attn]]\n", argv[0]);
    return 2;
  }
  model_path = argv[1];
  wav_path = argv[2];
  if (argc == 5) {
    if (strcmp(argv[4], "0") != 0 && strcmp(argv[4], "1") != 0) {
      fprintf(stderr, "usage: %s MODEL WAV [n_threads [flash_attn]]: flash_attn must be 0 or 1, got \"%s\"\n",
              argv[0], argv[4]);
      return 2;
    }
    flash_attn = argv[4][0] == '1';
  }
  if (argc >= 4) {
    char *endp = NULL;
    long v;
    errno = 0;
    v = strtol(argv[3], &endp, 10);
    if (errno != 0 || endp == argv[3] || *endp != '\0' || v < 1 || v > 1024) {
      fprintf(stderr, "usage: %s MODEL WAV [n_threads]: n_threads must be 1..1024, got \"%s\"\n",
              argv[0], argv[3]);
      return 2;
    }
    n_threads = (int)v;
  }

  whisper_log_set(log_nothing, NULL);

  pcm = read_wav(wav_path, &n_samples);
  if (pcm == NULL) return 1;
  printf("audio n_samples %d\n", n_samples);

  cparams = whisper_context_default_params();
  if (flash_attn >= 0) cparams.flash_attn = flash_attn != 0;
  ctx = whisper_init_from_file_with_params(model_path, cparams);
  if (ctx == NULL) {
    fprintf(stderr, "compat: %s: whisper_init_from_file_with_params failed\n", model_path);
    free(pcm);
    return 1;
  }

  printf("n_vocab %d\n", whisper_n_vocab(ctx));
  printf("n_text_ctx %d\n", whisper_n_text_ctx(ctx));
  printf("n_audio_ctx %d\n", whisper_n_audio_ctx(ctx));
  printf("is_multilingual %d\n", whisper_is_multilingual(ctx));
  printf("model_n_mels %d\n", whisper_model_n_mels(ctx));
  printf("model_type %d\n", whisper_model_type(ctx));
  printf("token_eot %d\n", (int)whisper_token_eot(ctx));
  printf("token_sot %d\n", (int)whisper_token_sot(ctx));
  printf("token_beg %d\n", (int)whisper_token_beg(ctx));
  printf("token_not %d\n", (int)whisper_token_not(ctx));
  printf("token_nosp %d\n", (int)whisper_token_nosp(ctx));
  printf("token_prev %d\n", (int)whisper_token_prev(ctx));
  printf("token_solm %d\n", (int)whisper_token_solm(ctx));
  printf("lang_id(\"de\") %d\n", whisper_lang_id("de"));
  printf("lang_str(2) ");
  print_quoted(whisper_lang_str(2));
  printf("\nlang_max_id %d\n", whisper_lang_max_id());

  /* " hello world", and text whose pieces the vocabulary stores more than once (U+FFFD, from the
   * converter's lossy decoding: whisper.cpp's token_to_id keeps the last id of each). */
  for (t = 0; t < 2; ++t) {
    const char* text = t == 0 ? " hello world" : "\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd";
    n_tok = whisper_tokenize(ctx, text, tokens, (int)(sizeof tokens / sizeof tokens[0]));
    if (n_tok < 0) {
      fprintf(stderr, "compat: whisper_tokenize failed (%d)\n", n_tok);
      rc = 1;
      continue;
    }
    printf("tokenize(");
    print_quoted(text);
    printf(") n %d\n", n_tok);
    for (i = 0; i < n_tok; ++i) {
      printf("  %d ", (int)tokens[i]);
      print_quoted(whisper_token_to_str(ctx, tokens[i]));
      putchar('\n');
    }
  }

  /* Greedy on the context's state; beam search on a state of its own. whisper.cpp's results on a
   * state depend on what it decoded before (its KV cache is re-made, larger, when the decoder
   * count grows, which changes the attention's summation), so each strategy starts fresh. */
  if (rc == 0) rc = transcribe(ctx, NULL, WHISPER_SAMPLING_GREEDY, "greedy", n_threads, pcm, n_samples);
  if (rc == 0) {
    struct whisper_state *state = whisper_init_state(ctx);
    if (state == NULL) {
      fprintf(stderr, "compat: whisper_init_state failed\n");
      rc = 1;
    } else {
      rc = transcribe(ctx, state, WHISPER_SAMPLING_BEAM_SEARCH, "beam_search 5", n_threads, pcm, n_samples);
      whisper_free_state(state);
    }
  }

  whisper_free(ctx);
  free(pcm);
  return rc;
}
