// Continuous batching in the server (state_pool.h BatchOptions, issue 38 part 3): requests of
// every kind run at once on states that share one decoder batch, and each reply is byte for byte
// the reply of the same request served alone by a model without the batch (whose replies the
// other server tests check against faster-whisper and whisper-server); a bad request among them
// gets its error and breaks nothing; the batch's steps did hold several requests' sequences.
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "apps/server/inference.h"
#include "apps/server/log_capture.h"
#include "apps/server/state_pool.h"

namespace whisper::server {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Request {
  Api api;
  std::vector<std::pair<std::string, std::string>> fields;
  const std::string* audio;  // null: no file field
};

Form MakeForm(const Request& r) {
  Form f;
  if (r.audio != nullptr) f.emplace("file", FormValue{*r.audio, "clip.wav", true});
  for (const auto& [k, v] : r.fields) f.emplace(k, FormValue{v, "", false});
  return f;
}

std::unique_ptr<LoadedModel> LoadModel(const std::string& file, int parallel, const BatchOptions& batch) {
  absl::StatusOr<std::unique_ptr<LoadedModel>> m =
      LoadedModel::Load(testdata::ModelPath(file), parallel, 16, WHISPER_GGML_DECODING_OPENAI, 1, "", true, "default",
                        batch);
  EXPECT_TRUE(m.ok()) << m.status() << "\n" << testdata::MissingModelHint(testdata::ModelPath(file));
  return m.ok() ? std::move(*m) : nullptr;
}

// Serves `requests` one at a time on `alone` (no batch), then all at once on `batched`; every
// batched reply must equal its alone reply. Returns the alone replies.
std::vector<Reply> ExpectSameReplies(const std::vector<Request>& requests, const std::vector<std::string>& args,
                                     LoadedModel& alone, LoadedModel& batched) {
  std::vector<Reply> want;
  for (const Request& r : requests) want.push_back(HandleTranscription(r.api, MakeForm(r), args, alone));
  const int n = static_cast<int>(requests.size());
  std::vector<Reply> got(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      const Request& r = requests[i % n];
      got[i] = HandleTranscription(r.api, MakeForm(r), args, batched);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(got[i].status, want[i % n].status) << "request " << i % n << ": " << got[i].body;
    EXPECT_EQ(got[i].body, want[i % n].body) << "request " << i % n;
    EXPECT_EQ(got[i].warnings, want[i % n].warnings) << "request " << i % n;
  }
  return want;
}

// tiny.en, 4 slots of 2 decoders (the server's default greedy best-of 2): 11 kinds of request
// at once (so some wait for a slot). Beam search (10 decoders) runs on its own state beside the batch; word
// timestamps (DTW alignment passes), VAD, diarize, prompts, temperatures, every response format,
// and two bad requests (a field out of range, audio that is not audio) answered 400.
TEST(InferenceBatch, EveryRequestKindGivesItsAloneReply) {
  InstallLogCapture(/*quiet=*/true);
  const std::string jfk = ReadFile(testdata::SharedData("jfk.wav"));
  const std::string not_audio(4000, 'x');
  ASSERT_GT(jfk.size(), 300000u);
  std::unique_ptr<LoadedModel> alone = LoadModel("ggml-tiny.en.bin", 1, BatchOptions());
  std::unique_ptr<LoadedModel> batched = LoadModel("ggml-tiny.en.bin", 4, BatchOptions{DecodersForRequest(1, 2), 2});
  ASSERT_TRUE(alone && batched);
  ASSERT_NE(batched->batch(), nullptr);
  const std::vector<std::string> args = {"-bs", "1", "-bo", "2", "-t", "1", "-vm",
                                         testdata::ModelPath("ggml-silero-v6.bin")};
  const Api ws = Api::kWhisperServer, oa = Api::kOpenAiTranscription;
  const std::vector<Request> requests = {
      {ws, {{"response_format", "json"}}, &jfk},
      {ws, {{"response_format", "verbose_json"}}, &jfk},
      {oa, {{"response_format", "verbose_json"}, {"timestamp_granularities[]", "word"}}, &jfk},
      {ws, {{"prompt", "Ask not what your country"}, {"response_format", "srt"}}, &jfk},
      {ws, {{"temperature", "0.6"}, {"response_format", "vtt"}}, &jfk},
      {ws, {{"beam_size", "5"}, {"response_format", "text"}}, &jfk},
      {ws, {{"vad", "true"}, {"response_format", "text"}}, &jfk},
      {ws, {{"diarize", "true"}, {"language", "de"}, {"response_format", "text"}}, &jfk},
      {oa, {{"response_format", "srt"}, {"max_len", "20"}}, &jfk},
      {ws, {{"temperature", "7"}}, &jfk},
      {ws, {{"response_format", "text"}}, &not_audio},
  };
  const std::vector<Reply> want = ExpectSameReplies(requests, args, *alone, *batched);
  // The alone replies are what the other tests check; here only that they are real transcripts.
  EXPECT_THAT(want[0].body, HasSubstr("ask not what your country can do for you"));
  EXPECT_EQ(want[9].status, 400);
  EXPECT_EQ(want[10].status, 400);
  int64_t n_steps = 0, n_sequences = 0;
  ASSERT_EQ(whisper_ggml_batch_stats(batched->batch(), &n_steps, &n_sequences), 0);
  EXPECT_GT(n_steps, 0);
  EXPECT_GT(n_sequences, n_steps) << "no step held two requests' sequences";
  EXPECT_EQ(batched->busy(), 0);
  EXPECT_EQ(batched->waiting(), 0);
}

// The threading case (small enough for TSan, tools/test.sh): three greedy requests at once on a
// batch of 2 slots (one waits for a slot) give the reply of the request alone.
TEST(InferenceBatch, ThreeGreedyRequestsAtOnce) {
  InstallLogCapture(/*quiet=*/true);
  const std::string jfk = ReadFile(testdata::SharedData("jfk.wav"));
  std::unique_ptr<LoadedModel> alone = LoadModel("ggml-tiny.en.bin", 1, BatchOptions());
  std::unique_ptr<LoadedModel> batched = LoadModel("ggml-tiny.en.bin", 2, BatchOptions{2, 1});
  ASSERT_TRUE(alone && batched);
  const Request r{Api::kWhisperServer, {{"response_format", "text"}}, &jfk};
  const std::vector<Reply> want =
      ExpectSameReplies({r, r, r}, {"-bs", "1", "-bo", "2", "-t", "1"}, *alone, *batched);
  EXPECT_THAT(want[0].body, HasSubstr("ask not what your country can do for you"));
}

// Whisper base (multilingual): the Mandarin clip with the language detected and word timestamps,
// jfk.wav, and a translation, at once on 2 slots; each reply is its alone reply.
TEST(InferenceBatch, MultilingualBaseGivesItsAloneReplies) {
  InstallLogCapture(/*quiet=*/true);
  if (!std::ifstream(testdata::ModelPath("ggml-base.bin")).good()) {
    GTEST_SKIP() << testdata::MissingModelHint(testdata::ModelPath("ggml-base.bin"));
  }
  const std::string zh = ReadFile(testdata::SharedData("zh_aishell_BAC009S0764W0121.wav"));
  const std::string jfk = ReadFile(testdata::SharedData("jfk.wav"));
  std::unique_ptr<LoadedModel> alone = LoadModel("ggml-base.bin", 1, BatchOptions());
  std::unique_ptr<LoadedModel> batched = LoadModel("ggml-base.bin", 2, BatchOptions{DecodersForRequest(1, 2), 2});
  ASSERT_TRUE(alone && batched);
  const std::vector<std::string> args = {"-bs", "1", "-bo", "2", "-t", "1"};
  const Api oa = Api::kOpenAiTranscription;
  const std::vector<Request> requests = {
      {oa, {{"response_format", "verbose_json"}, {"timestamp_granularities[]", "word"}}, &zh},
      {oa, {{"response_format", "text"}}, &jfk},
      {Api::kOpenAiTranslation, {{"response_format", "text"}, {"language", "zh"}}, &zh},
  };
  const std::vector<Reply> want = ExpectSameReplies(requests, args, *alone, *batched);
  EXPECT_THAT(want[0].body, HasSubstr("\"language\":\"chinese\""));
}

// whisper_ggml_batch's C API refuses bad arguments (whisper/whisper_ggml.h): NULL context, slots
// outside 1 .. 64, no decoders, more than 128 decoders in all, threads < 1; a state of another
// context; NULL batch or state; a call under other decoding rules than the batch's.
TEST(InferenceBatch, CApiErrors) {
  InstallLogCapture(/*quiet=*/true);
  std::unique_ptr<LoadedModel> a = LoadModel("ggml-tiny.en.bin", 1, BatchOptions());
  std::unique_ptr<LoadedModel> b = LoadModel("ggml-tiny.en.bin", 2, BatchOptions{2, 1});
  ASSERT_TRUE(a && b && b->batch() != nullptr);
  EXPECT_EQ(whisper_ggml_batch_init(nullptr, 2, 2, 1), nullptr);
  const int bad[][3] = {{0, 2, 1}, {65, 1, 1}, {2, 0, 1}, {64, 3, 1}, {2, 2, 0}};
  for (const auto& x : bad) {
    EXPECT_EQ(whisper_ggml_batch_init(a->ctx(), x[0], x[1], x[2]), nullptr) << x[0] << " " << x[1] << " " << x[2];
  }
  whisper_state* other = whisper_init_state(a->ctx());
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(whisper_ggml_state_set_batch(other, b->batch()), -1);  // b's batch is for b's context
  EXPECT_EQ(whisper_ggml_state_set_batch(other, nullptr), 0);
  EXPECT_EQ(whisper_ggml_state_set_batch(nullptr, nullptr), -1);
  whisper_free_state(other);
  // The batch's graphs have the GELU of the decoding rules at its init (OpenAI's: erf); a call
  // under whisper.cpp's rules (tanh) on it fails, and works again under OpenAI's.
  whisper_state* on_batch = whisper_init_state(b->ctx());
  ASSERT_NE(on_batch, nullptr);
  ASSERT_EQ(whisper_ggml_state_set_batch(on_batch, b->batch()), 0);
  const std::vector<float> second(16000, 0.0f);
  whisper_full_params p = whisper_full_default_params(WHISPER_SAMPLING_GREEDY);
  p.n_threads = 1;
  p.print_progress = false;
  p.greedy.best_of = 1;  // one decoder: the call runs on the batch (per slot: 1)
  ASSERT_EQ(whisper_ggml_set_decoding(b->ctx(), WHISPER_GGML_DECODING_WHISPER_CPP), 0);
  EXPECT_NE(whisper_full_with_state(b->ctx(), on_batch, p, second.data(), 16000), 0);
  ASSERT_EQ(whisper_ggml_set_decoding(b->ctx(), WHISPER_GGML_DECODING_OPENAI), 0);
  EXPECT_EQ(whisper_full_with_state(b->ctx(), on_batch, p, second.data(), 16000), 0);
  EXPECT_EQ(whisper_ggml_state_set_batch(on_batch, nullptr), 0);
  whisper_free_state(on_batch);
  int64_t steps = -1;
  EXPECT_EQ(whisper_ggml_batch_stats(nullptr, &steps, nullptr), -1);
  EXPECT_EQ(whisper_ggml_batch_stats(b->batch(), &steps, nullptr), 0);
  EXPECT_GE(steps, 0);
}

}  // namespace
}  // namespace whisper::server
