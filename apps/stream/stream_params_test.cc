#include "apps/stream/stream_params.h"

#include <sys/stat.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace whisper::stream {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<StreamParams> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "whisper-stream");
  return ParseStreamParams(static_cast<int>(args.size()), args.data());
}

std::string Error(std::vector<const char*> args) {
  absl::StatusOr<StreamParams> p = Parse(args);
  if (p.ok()) {
    ADD_FAILURE() << "parse succeeded";
    return "";
  }
  return std::string(p.status().message());
}

TEST(StreamParams, WhisperStreamDefaults) {
  // examples/stream/stream.cpp 1.8.5: step 3000, length 10000, keep 200, vad_thold 0.6,
  // freq_thold 100, beam_size -1, language en.
  absl::StatusOr<StreamParams> p = Parse({});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->step_ms, 3000);
  EXPECT_EQ(p->length_ms, 10000);
  EXPECT_EQ(p->keep_ms, 200);
  EXPECT_FLOAT_EQ(p->vad_thold, 0.6f);
  EXPECT_FLOAT_EQ(p->freq_thold, 100.0f);
  EXPECT_EQ(p->beam_size, -1);
  EXPECT_EQ(p->language, "en");
  EXPECT_EQ(p->input, "-");
}

TEST(StreamParams, Flags) {
  absl::StatusOr<StreamParams> p = Parse({"--step", "500", "--length", "5000", "--keep", "100", "-kc", "-bs", "5",
                                          "-f", "out.txt", "-vth", "0.5", "-t", "2", "-ng", "-ac", "768"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->step_ms, 500);
  EXPECT_EQ(p->length_ms, 5000);
  EXPECT_EQ(p->keep_ms, 100);
  EXPECT_TRUE(p->keep_context);
  EXPECT_EQ(p->beam_size, 5);
  EXPECT_EQ(p->fname_out, "out.txt");
  EXPECT_FLOAT_EQ(p->vad_thold, 0.5f);
  EXPECT_EQ(p->n_threads, 2);
  EXPECT_EQ(p->audio_ctx, 768);
  EXPECT_EQ(p->ignored_flags, std::vector<std::string>{"-ng"});
  EXPECT_TRUE(p->flash_attn);  // whisper-stream 1.8.5's default
  // -fa / -nfa: the last one wins, as in whisper-stream.
  p = Parse({"-nfa"});
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->flash_attn);
  p = Parse({"--no-flash-attn", "--flash-attn"});
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->flash_attn);
  // --step 0: the VAD mode, where --length may be anything up to 30 s.
  p = Parse({"--step", "0", "--length", "8000"});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->step_ms, 0);
  EXPECT_EQ(p->compute_type, "default");
  p = Parse({"--compute-type", "int8_float32"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->compute_type, "int8_float32");
}

// A pipe or a file on stdin is read losslessly; a socket, a device, -rt and the microphone in real
// time (the st_mode bits are POSIX's, <sys/stat.h>).
TEST(StreamParams, ReadsLosslessFromAPipeOrAFileOnly) {
  absl::StatusOr<StreamParams> p = Parse({});
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->real_time);
  EXPECT_TRUE(ReadsLossless(*p, S_IFIFO | 0600));
  EXPECT_TRUE(ReadsLossless(*p, S_IFREG | 0644));
  EXPECT_FALSE(ReadsLossless(*p, S_IFSOCK | 0777));
  EXPECT_FALSE(ReadsLossless(*p, S_IFCHR | 0620));
  EXPECT_FALSE(ReadsLossless(*p, 0));  // fstat failed
  for (const char* flag : {"-rt", "--real-time"}) {
    p = Parse({flag});
    ASSERT_TRUE(p.ok()) << flag;
    EXPECT_TRUE(p->real_time);
    EXPECT_FALSE(ReadsLossless(*p, S_IFIFO | 0600)) << flag;
    EXPECT_FALSE(ReadsLossless(*p, S_IFREG | 0644)) << flag;
  }
  p = Parse({"--input", "sdl"});
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(ReadsLossless(*p, S_IFIFO | 0600));
  EXPECT_THAT(StreamUsage("whisper-stream"), HasSubstr("-rt, --real-time"));
}

TEST(StreamParams, Errors) {
  EXPECT_THAT(Error({"--step", "3s"}), HasSubstr("--step: expected an integer, got '3s'"));
  EXPECT_THAT(Error({"--length", "40000"}), HasSubstr("--length: 40000 is out of range [1, 30000]"));
  EXPECT_THAT(Error({"--step", "4000", "--length", "2000"}), HasSubstr("--length: 2000 ms is shorter than --step 4000 ms"));
  EXPECT_THAT(Error({"--keep", "5000"}), HasSubstr("--keep: 5000 ms is longer than --step 3000 ms"));
  EXPECT_THAT(Error({"-vth", "2"}), HasSubstr("-vth: 2 is out of range [0, 1]"));
  EXPECT_THAT(Error({"-vth", "nan"}), HasSubstr("-vth: expected a finite number"));
  EXPECT_THAT(Error({"-bs", "9"}), HasSubstr("-bs: 9 is out of range"));
  EXPECT_THAT(Error({"-m"}), HasSubstr("-m: missing value"));
  EXPECT_THAT(Error({"-tdrz"}), HasSubstr("not implemented"));
  EXPECT_THAT(Error({"--input", "alsa"}), HasSubstr("--input: expected '-' (stdin) or 'sdl'"));
  // whisper_ggml_set_compute_type's message, with the accepted names.
  EXPECT_THAT(Error({"--compute-type", "int16"}), HasSubstr("--compute-type: compute_type 'int16' is not supported"));
  EXPECT_THAT(Error({"--compute-type", "int16"}), HasSubstr("int8, int8_float32"));
  EXPECT_THAT(Error({"--compute-type"}), HasSubstr("--compute-type: missing value"));
  EXPECT_THAT(Error({"--bogus"}), HasSubstr("--bogus: unknown argument"));
  EXPECT_THAT(StreamUsage("whisper-stream"), HasSubstr("--step N"));
}

}  // namespace
}  // namespace whisper::stream
