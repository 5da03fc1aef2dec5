#include "apps/server/server_params.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace whisper::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<ServerParams> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "whisper-server");
  return ParseServerParams(static_cast<int>(args.size()), args.data());
}

std::string Error(std::vector<const char*> args) {
  absl::StatusOr<ServerParams> p = Parse(args);
  if (p.ok()) {
    ADD_FAILURE() << "parse succeeded";
    return "";
  }
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(p.status().message());
}

TEST(ServerParams, DefaultsAreWhisperServers) {
  absl::StatusOr<ServerParams> p = Parse({});
  ASSERT_TRUE(p.ok()) << p.status();
  // examples/server/server.cpp 1.8.5: hostname 127.0.0.1, port 8080, /inference, timeouts 600 s,
  // beam_size -1 (greedy), best_of 2.
  EXPECT_EQ(p->host, "127.0.0.1");
  EXPECT_EQ(p->port, 8080);
  EXPECT_EQ(p->inference_path, "/inference");
  EXPECT_EQ(p->request_path, "");
  EXPECT_EQ(p->read_timeout_s, 600);
  EXPECT_EQ(p->write_timeout_s, 600);
  EXPECT_EQ(p->decode.beam_size, 1);
  EXPECT_EQ(p->decode.best_of, 2);
  EXPECT_EQ(p->parallel, 1);
  EXPECT_TRUE(p->batching);  // --parallel >= 2 shares a decoder batch unless --no-batching
  EXPECT_FALSE(Parse({"--no-batching"})->batching);
  EXPECT_EQ(p->decode.n_threads, 0);
  EXPECT_EQ(p->models_dir, "");  // POST /load is off
  EXPECT_EQ(p->max_audio_seconds, 3600);
  EXPECT_EQ(Parse({"--max-audio-seconds", "0"})->max_audio_seconds, 0);  // no limit
}

TEST(ServerParams, ModelsDir) {
  absl::StatusOr<ServerParams> p = Parse({"--models-dir", "models"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->models_dir, "models");
  EXPECT_THAT(Error({"--models-dir", ""}), HasSubstr("--models-dir: expected a folder, got ''"));
  EXPECT_THAT(Error({"--models-dir"}), HasSubstr("--models-dir: missing value"));
}

TEST(ServerParams, ServerAndDecodingFlags) {
  absl::StatusOr<ServerParams> p =
      Parse({"--host", "0.0.0.0", "--port", "0", "-m", "x.bin", "-t", "3", "-bs", "5", "--parallel", "2", "--queue",
             "0", "--max-body-size", "2048", "--request-path", "/api", "--inference-path", "/run", "-l", "de"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->host, "0.0.0.0");
  EXPECT_EQ(p->port, 0);
  EXPECT_EQ(p->decode.model, "x.bin");
  EXPECT_EQ(p->decode.n_threads, 3);
  EXPECT_EQ(p->decode.beam_size, 5);  // the user's flag overrides the server default
  EXPECT_EQ(p->decode.language, "de");
  EXPECT_EQ(p->parallel, 2);
  EXPECT_EQ(p->queue, 0);
  EXPECT_EQ(p->max_body_size, 2048u);
  EXPECT_EQ(p->request_path, "/api");
  EXPECT_EQ(p->inference_path, "/run");
  // Requests are parsed on top of decode_args: it must reproduce `decode`.
  std::vector<const char*> argv = {"x"};
  for (const std::string& a : p->decode_args) argv.push_back(a.c_str());
  absl::StatusOr<CliParams> again = ParseCliParams(static_cast<int>(argv.size()), argv.data());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->beam_size, 5);
  EXPECT_EQ(again->best_of, 2);
  EXPECT_EQ(again->n_threads, 3);
}

TEST(ServerParams, Errors) {
  EXPECT_THAT(Error({"--port", "65536"}), HasSubstr("--port: expected an integer in [0, 65535], got 65536"));
  EXPECT_THAT(Error({"--port", "80x"}), HasSubstr("--port: expected an integer in [0, 65535], got '80x'"));
  EXPECT_THAT(Error({"--port"}), HasSubstr("--port: missing value"));
  EXPECT_THAT(Error({"--parallel", "0"}), HasSubstr("--parallel: expected an integer in [1, 64]"));
  EXPECT_THAT(Error({"--max-body-size", "10"}), HasSubstr("--max-body-size: expected an integer in [1024, 4294967296]"));
  EXPECT_THAT(Error({"--max-audio-seconds", "-1"}),
              HasSubstr("--max-audio-seconds: expected an integer in [0, 1000000], got -1"));
  EXPECT_THAT(Error({"--request-path", "api"}), HasSubstr("--request-path: expected a path starting with '/'"));
  EXPECT_THAT(Error({"--inference-path", ""}), HasSubstr("--inference-path"));
  EXPECT_THAT(Error({"--host", ""}), HasSubstr("--host"));
  EXPECT_THAT(Error({"-f", "a.wav"}), HasSubstr("-f/--file: not a server flag"));
  EXPECT_THAT(Error({"a.wav"}), HasSubstr("-f/--file: not a server flag"));
  EXPECT_THAT(Error({"-otxt"}), HasSubstr("-otxt: not a server flag"));
  EXPECT_THAT(Error({"-owts"}), HasSubstr("-owts: not a server flag"));
  // whisper-server 1.8.5 refuses the pair at startup ("cannot use both --diarize and --tinydiarize").
  EXPECT_THAT(Error({"-di", "-tdrz"}), HasSubstr("cannot use both -di/--diarize and -tdrz/--tinydiarize"));
  EXPECT_THAT(Error({"-p", "2"}), HasSubstr("--parallel"));
  EXPECT_THAT(Error({"--bogus"}), HasSubstr("unknown argument '--bogus'"));
  EXPECT_THAT(Error({"-bs", "99"}), HasSubstr("-bs 99 is out of range"));
}

// whisper-server 1.8.5's -di/--diarize and -tdrz/--tinydiarize: defaults of every request's
// diarize and tinydiarize fields.
TEST(ServerParams, DiarizationFlagsAreRequestDefaults) {
  for (const char* flag : {"-di", "--diarize"}) {
    absl::StatusOr<ServerParams> p = Parse({flag});
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_TRUE(p->decode.diarize);
    EXPECT_FALSE(p->decode.tinydiarize);
  }
  for (const char* flag : {"-tdrz", "--tinydiarize"}) {
    absl::StatusOr<ServerParams> p = Parse({flag});
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_TRUE(p->decode.tinydiarize);
    EXPECT_FALSE(p->decode.diarize);
    EXPECT_TRUE(ToWhisperFullParams(p->decode).tdrz_enable);
  }
  absl::StatusOr<ServerParams> p = Parse({});
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->decode.diarize);
  EXPECT_FALSE(ToWhisperFullParams(p->decode).tdrz_enable);
}

TEST(ServerParams, HelpStopsParsing) {
  absl::StatusOr<ServerParams> p = Parse({"-h", "--port", "bad"});
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->help);
  const std::string usage = ServerUsage("whisper-server");
  EXPECT_THAT(usage, HasSubstr("--parallel N"));
  EXPECT_THAT(usage, HasSubstr("--no-batching"));
  EXPECT_THAT(usage, HasSubstr("/v1/audio/transcriptions"));
  EXPECT_THAT(usage, HasSubstr("--models-dir DIR"));
  EXPECT_THAT(usage, HasSubstr("without it /load is disabled"));
  EXPECT_THAT(usage, HasSubstr("-di labels every reply's segments"));
  EXPECT_THAT(usage, Not(HasSubstr("not implemented")));
}

}  // namespace
}  // namespace whisper::server
