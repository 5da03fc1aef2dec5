#include "whisper/cli_params.h"

#include <vector>

#include "gtest/gtest.h"

namespace whisper {
namespace {

absl::StatusOr<CliParams> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "whisper-cli");
  return ParseCliParams(static_cast<int>(args.size()), args.data());
}

TEST(CliParams, DefaultsMatchWhisperCli) {
  auto p = Parse({});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->beam_size, 5);
  EXPECT_EQ(p->best_of, 5);
  EXPECT_FLOAT_EQ(p->entropy_thold, 2.4f);
  EXPECT_FLOAT_EQ(p->logprob_thold, -1.0f);
  EXPECT_FLOAT_EQ(p->temperature_inc, 0.2f);
  EXPECT_EQ(p->language, "en");
  EXPECT_EQ(p->model, "models/ggml-tiny.en.bin");
  EXPECT_TRUE(p->files.empty());
}

TEST(CliParams, ShortAndLongFormsAndBareFiles) {
  auto p = Parse({"-m", "m.bin", "-f", "a.wav", "b.wav", "--beam-size", "3", "-bo", "2", "-otxt", "--output-srt",
                  "-ot", "500", "--duration", "1000", "-nf", "-l", "auto", "--prompt", "hello", "-t", "2"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->model, "m.bin");
  EXPECT_EQ(p->files, (std::vector<std::string>{"a.wav", "b.wav"}));
  EXPECT_EQ(p->beam_size, 3);
  EXPECT_EQ(p->best_of, 2);
  EXPECT_TRUE(p->output_txt);
  EXPECT_TRUE(p->output_srt);
  EXPECT_FALSE(p->output_vtt);
  EXPECT_EQ(p->offset_t_ms, 500);
  EXPECT_EQ(p->duration_ms, 1000);
  EXPECT_EQ(p->temperature_inc, 0.0f);
  EXPECT_EQ(p->language, "auto");
  EXPECT_EQ(p->prompt, "hello");
  EXPECT_EQ(p->n_threads, 2);
}

TEST(CliParams, ErrorsNameTheFlag) {
  auto bad = Parse({"-xyz"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("-xyz"), std::string::npos);
  auto missing = Parse({"-m"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("-m needs"), std::string::npos);
  auto malformed = Parse({"-t", "two"});
  ASSERT_FALSE(malformed.ok());
  EXPECT_NE(malformed.status().message().find("'two'"), std::string::npos);
  EXPECT_FALSE(Parse({"-bs", "0"}).ok());
  EXPECT_FALSE(Parse({"-tp", "1.5"}).ok());
  EXPECT_FALSE(Parse({"-ot", "-5"}).ok());
}

TEST(CliParams, OutputJsonFullImpliesOutputJson) {
  auto p = Parse({"-ojf"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->output_json);
  EXPECT_TRUE(p->output_json_full);
  auto q = Parse({"--output-json"});
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_TRUE(q->output_json);
  EXPECT_FALSE(q->output_json_full);
  auto r = Parse({"--output-json-full"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->output_json_full);
}

TEST(CliParams, UsageListsEveryFlag) {
  const std::string u = CliUsage("whisper-cli");
  for (const char* f : {"--threads", "--offset-t", "--beam-size", "-otxt", "--output-json", "--output-json-full", "--no-fallback", "--prompt"}) {
    EXPECT_NE(u.find(f), std::string::npos) << f;
  }
}

}  // namespace
}  // namespace whisper
