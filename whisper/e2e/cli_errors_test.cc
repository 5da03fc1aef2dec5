// End-to-end: bad input to `whisper:cli` ends the run with a non-zero exit status (1 for a model,
// audio or output-file error, 2 for a usage error; never a crash) and ONE line on stderr that
// names the offending file or flag; stdout stays empty.
#include <sys/stat.h>

#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "whisper/e2e/cli_runner.h"
#include "whisper/e2e/wav_files.h"

namespace whisper_e2e {
namespace {

// Exactly one line on stderr, "error: ..." containing every string of `mentions`.
void ExpectOneErrorLine(const CliRun& run, int exit_code, const std::vector<std::string>& mentions) {
  EXPECT_EQ(run.exit_code, exit_code) << run.err;
  EXPECT_EQ(run.out, "");
  const std::vector<std::string> lines = Lines(run.err);
  ASSERT_EQ(lines.size(), 1u) << run.err;
  EXPECT_EQ(lines[0].rfind("error: ", 0), 0u) << lines[0];
  for (const std::string& m : mentions) EXPECT_NE(lines[0].find(m), std::string::npos) << lines[0] << " lacks " << m;
}

// First `n` bytes of `src` into `dst`.
void CopyPrefix(const std::string& src, const std::string& dst, size_t n) {
  std::string bytes = ReadFileOrFail(src);
  ASSERT_GE(bytes.size(), n) << src;
  bytes.resize(n);
  WriteFileOrFail(dst, bytes);
}

class CliErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir(::testing::UnitTest::GetInstance()->current_test_info()->name()); }
  // A model error shows before anything else is printed: no -np needed for one line.
  CliRun RunWithModel(const std::string& model) {
    return RunCli({"-m", model, "-f", testdata::SharedData("jfk.wav"), "-t", "2"}, dir_);
  }
  std::string dir_;
};

// `ulimit -v`: at 300 MB tiny.en transcribes jfk.wav; at 150 MB the model's weights (73.5 MiB)
// cannot be allocated and the one error line says so and names the file. Sanitizer runtimes
// reserve terabytes of shadow memory, so the check runs only in plain builds.
TEST_F(CliErrorsTest, AddressSpaceLimit) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "RLIMIT_AS and sanitizer shadow memory do not mix";
#endif
  ASSERT_TRUE(ModelAvailable());
  const std::vector<std::string> args = {"-m", testdata::ModelPath("ggml-tiny.en.bin"), "-f",
                                         testdata::SharedData("jfk.wav"), "-t", "2", "-np"};
  const CliRun ok = RunCli(args, dir_, {}, "", int64_t{300} << 20);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("ask not what your country can do for you"), std::string::npos) << ok.out;
  const CliRun oom = RunCli(args, dir_, {}, "", int64_t{150} << 20);
  ExpectOneErrorLine(oom, 1, {"ggml-tiny.en.bin", "cannot allocate the weight buffer", "MiB"});
}

TEST_F(CliErrorsTest, MissingModel) {
  const std::string model = dir_ + "/no-such-model.bin";
  ExpectOneErrorLine(RunWithModel(model), 1, {model, "No such file"});
}

// A directory is taken as a CTranslate2 folder (converted in memory): this one has no model.bin.
TEST_F(CliErrorsTest, ModelIsADirectory) {
  ExpectOneErrorLine(RunWithModel(dir_), 1, {"cannot load the CTranslate2 model folder", dir_ + "/model.bin does not exist",
                                            "expected a CTranslate2 Whisper model folder"});
}

TEST_F(CliErrorsTest, WrongMagic) {  // a WAV file given as the model: "RIFF"
  const std::string model = dir_ + "/riff.bin";
  CopyPrefix(testdata::SharedData("jfk.wav"), model, 4096);
  ExpectOneErrorLine(RunWithModel(model), 1, {model, "bad magic 0x46464952", "expected 0x67676d6c"});
}

TEST_F(CliErrorsTest, HeaderOnlyModel) {
  const std::string model = testdata::SharedData("header-only-ggml-tiny.en.bin");
  ExpectOneErrorLine(RunWithModel(model), 1, {model, "no tensors", "167 tensors expected"});
}

TEST_F(CliErrorsTest, UnknownFtype) {  // hparams.ftype (the 11th int32 after the magic) = 99
  const std::string model = dir_ + "/ftype99.bin";
  std::string bytes = ReadFileOrFail(testdata::SharedData("header-only-ggml-tiny.en.bin"));
  ASSERT_GT(bytes.size(), 48u);
  bytes[44] = 99;  // little-endian 1 -> 99
  WriteFileOrFail(model, bytes);
  ExpectOneErrorLine(RunWithModel(model), 1, {model, "hparams.ftype is 99"});
}

TEST_F(CliErrorsTest, TruncatedModel) {
  ASSERT_TRUE(ModelAvailable());
  const std::string model = dir_ + "/truncated.bin";
  CopyPrefix(testdata::ModelPath("ggml-tiny.en.bin"), model, 1000000);
  ExpectOneErrorLine(RunWithModel(model), 1, {model, "truncated", "encoder.positional_embedding"});
}

class CliAudioErrorsTest : public CliErrorsTest {
 protected:
  void SetUp() override {
    CliErrorsTest::SetUp();
    ASSERT_TRUE(ModelAvailable());
  }
  // -np: the transcript and the error are all a run prints.
  CliRun RunWithAudio(const std::string& audio, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"-m", testdata::ModelPath("ggml-tiny.en.bin"), "-f", audio, "-t", "2", "-np"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunCli(args, dir_);
  }
};

TEST_F(CliAudioErrorsTest, MissingAudio) {
  const std::string audio = dir_ + "/no-such.wav";
  ExpectOneErrorLine(RunWithAudio(audio), 1, {audio, "not found"});
}

TEST_F(CliAudioErrorsTest, TextFileAsAudio) {
  const std::string audio = dir_ + "/notes.wav";
  WriteFileOrFail(audio, "this is not audio\n");
  ExpectOneErrorLine(RunWithAudio(audio), 1, {audio, "not a readable audio file"});
}

TEST_F(CliAudioErrorsTest, EmptyWav) {  // a valid WAV header, 0 frames
  const std::string audio = dir_ + "/empty.wav";
  WritePcm16Wav(audio, {});
  ASSERT_EQ(ReadFileOrFail(audio).size(), 44u);
  ExpectOneErrorLine(RunWithAudio(audio), 1, {audio, "no audio"});
}

TEST_F(CliAudioErrorsTest, DirectoryAsAudio) { ExpectOneErrorLine(RunWithAudio(dir_), 1, {dir_, "directory"}); }

TEST_F(CliAudioErrorsTest, ShorterThan100Ms) {  // whisper.cpp's minimum input
  const std::string audio = dir_ + "/50ms.wav";
  WritePcm16Wav(audio, std::vector<int16_t>(800, 100));
  ExpectOneErrorLine(RunWithAudio(audio), 1, {audio, "800 samples", "100 ms"});
}

// 0.5 s of zeros, -sns (faster-whisper's default suppress_tokens [-1]): no segment, as in
// faster-whisper 1.2.1 (without -sns both say " [BLANK_AUDIO]"); then -otxt fails.
TEST_F(CliAudioErrorsTest, UnwritableOutputFile) {
  const std::string audio = dir_ + "/half.wav";
  WritePcm16Wav(audio, std::vector<int16_t>(8000, 0));
  ExpectOneErrorLine(RunWithAudio(audio, {"-sns", "-otxt", "-of", dir_ + "/no-such-dir/out"}), 1,
                     {dir_ + "/no-such-dir/out.txt", "No such file"});
}

// A bad file among good ones: its line, exit 1, and the other files are still processed.
// A 32-bit float WAV (format 3) with a NaN: rejected, naming the sample, instead of a garbage
// transcript.
TEST_F(CliAudioErrorsTest, NonFiniteSamples) {
  const uint32_t n = 16000, bytes = 4 * n;
  std::string wav = "RIFF";
  auto u32 = [&](uint32_t v) { wav.append(reinterpret_cast<const char*>(&v), 4); };
  auto u16 = [&](uint16_t v) { wav.append(reinterpret_cast<const char*>(&v), 2); };
  u32(36 + bytes);
  wav += "WAVEfmt ";
  u32(16);
  u16(3);  // IEEE float
  u16(1);
  u32(16000);
  u32(16000 * 4);
  u16(4);
  u16(32);
  wav += "data";
  u32(bytes);
  std::vector<float> samples(n, 0.1f);
  samples[1234] = std::numeric_limits<float>::quiet_NaN();
  wav.append(reinterpret_cast<const char*>(samples.data()), bytes);
  const std::string audio = dir_ + "/nan.wav";
  WriteFileOrFail(audio, wav);
  ExpectOneErrorLine(RunWithAudio(audio), 1, {audio, "sample 1234", "not a finite number"});
}

TEST_F(CliAudioErrorsTest, FlagsCheckedBeforeAndAgainstTheModel) {
  const std::string jfk = testdata::SharedData("jfk.wav");
  ExpectOneErrorLine(RunWithAudio(jfk, {"-ac", "1501"}), 2, {"-ac 1501", "n_audio_ctx 1500"});
  ExpectOneErrorLine(RunWithAudio(jfk, {"-l", "xx"}), 2, {"-l", "unknown language 'xx'"});
  // Before anything loads, as whisper-cli checks it: the model named does not exist.
  ExpectOneErrorLine(RunCli({"-m", dir_ + "/no-such-model.bin", "-f", jfk, "-l", "xx"}, dir_), 2,
                     {"-l", "unknown language 'xx'"});
}

// --suppress-regex is compiled with the other flags: a bad one exits 2 before the model loads (the
// model named does not exist), naming the flag and std::regex's reason (it was exit 1, after the
// model loaded, from whisper_full).
TEST_F(CliAudioErrorsTest, BadSuppressRegexExitsTwoBeforeTheModelLoads) {
  const std::string jfk = testdata::SharedData("jfk.wav");
  ExpectOneErrorLine(RunCli({"-m", dir_ + "/no-such-model.bin", "-f", jfk, "--suppress-regex", "["}, dir_), 2,
                     {"--suppress-regex '['", "not a valid regular expression"});
}

// A CTranslate2 folder is converted in memory and loaded from that buffer: the load line names the
// folder (it said '<buffer>').
TEST_F(CliAudioErrorsTest, Ct2FolderIsNamedInTheLoadLine) {
  const std::string folder = testdata::ModelPath("faster-whisper-tiny.en");
  const CliRun run = RunCli({"-m", folder, "-f", testdata::SharedData("jfk.wav"), "-t", "2", "-bs", "1"}, dir_);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("loaded '" + folder + "': type tiny"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("<buffer>"), std::string::npos) << run.err;
}

// --multilingual on an English-only model: faster-whisper's warning, then one language and no
// "(en)" label before each segment (stdout as without the flag).
TEST_F(CliAudioErrorsTest, MultilingualOnEnglishOnlyModelIsTurnedOff) {
  const std::string jfk = testdata::SharedData("jfk.wav");
  const CliRun plain = RunWithAudio(jfk, {"-np"});
  const CliRun run = RunWithAudio(jfk, {"-np", "--multilingual"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("warning: The current model is English-only but the multilingual parameter is set to "
                         "True; setting to False instead."),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.out, plain.out);
  EXPECT_EQ(run.out.find("(en)"), std::string::npos) << run.out;
}

TEST_F(CliAudioErrorsTest, BadFileAmongGoodOnes) {
  const std::string bad = dir_ + "/no-such.wav", good = dir_ + "/half.wav";
  WritePcm16Wav(good, std::vector<int16_t>(8000, 0));
  // One -of per -f, in order (whisper-cli's fname_out).
  const CliRun run =
      RunWithAudio(bad, {"-sns", "-f", good, "-otxt", "-of", dir_ + "/bad_out", "-of", dir_ + "/out"});
  ExpectOneErrorLine(run, 1, {bad});
  EXPECT_EQ(ReadFileOrFail(dir_ + "/out.txt"), "");  // written for the good file (no segments, -sns)
}

// Without -np the error is still one line among the model and timing reports.
TEST_F(CliAudioErrorsTest, OneErrorLineAmongReports) {
  const std::string audio = dir_ + "/no-such.wav";
  const CliRun run = RunCli({"-m", testdata::ModelPath("ggml-tiny.en.bin"), "-f", audio, "-t", "2"}, dir_);
  EXPECT_EQ(run.exit_code, 1);
  int errors = 0;
  for (const std::string& line : Lines(run.err)) {
    if (line.find("error:") != std::string::npos) {  // not "error" alone: a checkout path may hold it
      ++errors;
      EXPECT_EQ(line, "error: " + audio + ": audio file not found");
    }
  }
  EXPECT_EQ(errors, 1) << run.err;
  EXPECT_NE(run.err.find("whisper_model_load: "), std::string::npos) << run.err;
}

// Files of the wrong kind, an -ot past the end and empty audio: one table, one error line each,
// exit 1, naming the file, what it is and what was expected (issue 36). Inputs are built in the
// test (byte layouts from the formats' specs), except the real models under models/.
struct KindCaseRun {
  std::vector<std::string> args;      // after "-t 2"
  std::vector<std::string> mentions;  // all in the one error line
  std::string stdin_path;             // "" = none
};

struct KindCase {
  const char* name;
  // -np: set where the main model loads before the error (its report lines are not checked).
  // Without it the single stderr line proves the error came before the model loaded.
  bool quiet;
  KindCaseRun (*make)(const std::string& dir);
};

void PrintTo(const KindCase& c, std::ostream* os) { *os << c.name; }

std::string Le32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }

std::string Write(const std::string& path, const std::string& bytes) {
  WriteFileOrFail(path, bytes);
  return path;
}

const std::string& Jfk() {
  static const std::string* jfk = new std::string(testdata::SharedData("jfk.wav"));
  return *jfk;
}

class CliFileKindTest : public ::testing::TestWithParam<KindCase> {};

TEST_P(CliFileKindTest, NamesTheFileWhatItIsAndWhatWasExpected) {
  ASSERT_TRUE(ModelAvailable());
  const std::string dir = MakeTempDir(std::string("kind_") + GetParam().name);
  const KindCaseRun c = GetParam().make(dir);
  std::vector<std::string> args = {"-t", "2"};
  if (GetParam().quiet) args.push_back("-np");
  args.insert(args.end(), c.args.begin(), c.args.end());
  ExpectOneErrorLine(RunCli(args, dir, {}, c.stdin_path), 1, c.mentions);
}

const std::string kWhisperExpected = "expected a whisper.cpp ggml Whisper model (legacy format, magic 0x67676d6c";
const std::string kVadExpected = "expected a Silero VAD model";

INSTANTIATE_TEST_SUITE_P(
    Kinds, CliFileKindTest,
    ::testing::Values(
        KindCase{"vad_model_as_model", false,
                 [](const std::string&) {
                   const std::string vad = testdata::ModelPath("ggml-silero-v6.bin");
                   return KindCaseRun{{"-m", vad, "-f", Jfk()},
                                      {vad + ": a Silero VAD model", "pass it as -vm with --vad", kWhisperExpected}};
                 }},
        // Checked before the main model loads (whisper-cli 1.8.5: inside whisper_full, then aborts).
        KindCase{"whisper_model_as_vad_model", false,
                 [](const std::string&) {
                   const std::string m = testdata::ModelPath("ggml-tiny.en.bin");
                   return KindCaseRun{{"-m", m, "-f", Jfk(), "--vad", "-vm", m},
                                      {m + ": a whisper.cpp ggml Whisper model, not a Silero VAD model",
                                       "pass it as -m", kVadExpected, "models/ggml-silero-v6.bin"}};
                 }},
        KindCase{"empty_vad_model", false,
                 [](const std::string& dir) {
                   const std::string vad = Write(dir + "/empty-vad.bin", "");
                   return KindCaseRun{{"-m", testdata::ModelPath("ggml-tiny.en.bin"), "-f", Jfk(), "--vad", "-vm", vad},
                                      {vad + ": empty file (0 bytes)", kVadExpected}};
                 }},
        // GGUF: "GGUF", uint32 version 3, uint64 tensor count, uint64 metadata count (ggml/docs/gguf.md).
        KindCase{"gguf", false,
                 [](const std::string& dir) {
                   const std::string m = Write(dir + "/model.gguf", "GGUF" + Le32(3) + std::string(16, '\0'));
                   return KindCaseRun{{"-m", m, "-f", Jfk()},
                                      {m + ": a GGUF file", "ggml's newer format", "which this loader does not read",
                                       kWhisperExpected}};
                 }},
        // CTranslate2: uint32 version 6, uint16 12, "WhisperSpec\0", uint32 revision 3, uint32 count.
        KindCase{"ctranslate2_header", false,
                 [](const std::string& dir) {
                   const std::string ct2 = dir + "/faster-whisper-base";
                   EXPECT_EQ(mkdir(ct2.c_str(), 0755), 0) << ct2;
                   const std::string m = Write(ct2 + "/model.bin", Le32(6) + std::string("\x0c\x00", 2) +
                                                                       std::string("WhisperSpec\0", 12) + Le32(3) +
                                                                       Le32(148));
                   return KindCaseRun{{"-m", m, "-f", Jfk()},
                                      {m + ": a CTranslate2 model", kWhisperExpected,
                                       "bazel run -c opt //tools:convert -- --model_dir=" + ct2 +
                                           " --mel_filters=" + dir + "/mel_filters.npz --out=" + dir +
                                           "/ggml-base.bin"}};
                 }},
        KindCase{"ctranslate2_real", false,
                 [](const std::string&) {
                   const std::string m = testdata::ModelPath("faster-whisper-tiny.en/model.bin");
                   return KindCaseRun{{"-m", m, "-f", Jfk()},
                                      {m + ": a CTranslate2 model", "--model_dir=" +
                                       testdata::ModelPath("faster-whisper-tiny.en") + " "}};
                 }},
        KindCase{"printable_magic", false,
                 [](const std::string& dir) {
                   const std::string m = Write(dir + "/passwd", "root:x:0:0:root:/root:/bin/bash\n");
                   return KindCaseRun{{"-m", m, "-f", Jfk()},
                                      {m + ": bad magic 0x746f6f72 (\"root\") at offset 0",
                                       "expected 0x67676d6c (\"ggml\")"}};
                 }},
        KindCase{"unprintable_magic", false,
                 [](const std::string& dir) {
                   const std::string m = Write(dir + "/a.out", "\x7f" "ELF" + Le32(0x00010102));
                   return KindCaseRun{{"-m", m, "-f", Jfk()},
                                      {m + ": bad magic 0x464c457f at offset 0", "expected 0x67676d6c (\"ggml\")"}};
                 }},
        KindCase{"empty_model", false,
                 [](const std::string& dir) {
                   const std::string m = Write(dir + "/empty.bin", "");
                   return KindCaseRun{{"-m", m, "-f", Jfk()}, {m + ": empty file (0 bytes)", kWhisperExpected}};
                 }},
        // whisper-cli 1.8.5: "input is too short - -9010 ms < 100 ms", no output, exit 0.
        KindCase{"offset_past_the_end", true,
                 [](const std::string&) {
                   return KindCaseRun{{"-m", testdata::ModelPath("ggml-tiny.en.bin"), "-f", Jfk(), "-ot", "20000"},
                                      {Jfk(), "-ot", "offset 20000 ms is at or past the end of the audio", "11.000 s"}};
                 }},
        KindCase{"offset_leaves_under_100_ms", true,
                 [](const std::string&) {
                   return KindCaseRun{{"-m", testdata::ModelPath("ggml-tiny.en.bin"), "-f", Jfk(), "-ot", "10950"},
                                      {Jfk(), "-ot 10950 ms leaves 50 ms of the 11000 ms audio, less than 100 ms"}};
                 }},
        KindCase{"empty_audio_file", true,
                 [](const std::string& dir) {
                   const std::string a = Write(dir + "/empty.wav", "");
                   return KindCaseRun{{"-m", testdata::ModelPath("ggml-tiny.en.bin"), "-f", a},
                                      {a + ": empty file (0 bytes), expected audio"}};
                 }},
        KindCase{"empty_stdin", true,
                 [](const std::string& dir) {
                   const std::string a = Write(dir + "/empty.wav", "");
                   return KindCaseRun{{"-m", testdata::ModelPath("ggml-tiny.en.bin"), "-f", "-"},
                                      {"<stdin>: empty file (0 bytes), expected audio"}, a};
                 }}),
    [](const ::testing::TestParamInfo<KindCase>& info) { return std::string(info.param.name); });

struct FlagCase {
  const char* name;
  std::vector<std::string> args;
  std::vector<std::string> mentions;
};

void PrintTo(const FlagCase& c, std::ostream* os) { *os << c.name; }

class CliFlagErrorsTest : public ::testing::TestWithParam<FlagCase> {};

TEST_P(CliFlagErrorsTest, ExitTwoWithOneLine) {
  // Flags are checked before the model is opened: no model needed, none named.
  ExpectOneErrorLine(RunCli(GetParam().args), 2, GetParam().mentions);
}

INSTANTIATE_TEST_SUITE_P(
    Flags, CliFlagErrorsTest,
    ::testing::Values(FlagCase{"unknown", {"-f", "a.wav", "--bogus"}, {"'--bogus'"}},
                      FlagCase{"missing_value", {"-f", "a.wav", "-bs"}, {"-bs needs a value"}},
                      FlagCase{"malformed_int", {"-bs", "five", "-f", "a.wav"}, {"-bs", "'five'"}},
                      FlagCase{"malformed_float", {"-tp", "hot", "-f", "a.wav"}, {"-tp", "'hot'"}},
                      FlagCase{"beam_out_of_range", {"-bs", "0", "-f", "a.wav"}, {"-bs 0 is out of range [1, 32]"}},
                      FlagCase{"negative_threads", {"-t", "-1", "-f", "a.wav"}, {"-t"}},
                      FlagCase{"no_input", {"-t", "2"}, {"no input files"}}),
    [](const ::testing::TestParamInfo<FlagCase>& info) { return std::string(info.param.name); });

TEST(CliHelpTest, HelpExitsZeroWithUsage) {
  const CliRun run = RunCli({"-h"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.err.find("usage: "), std::string::npos);
  EXPECT_NE(run.err.find("--output-json-full"), std::string::npos);
}

}  // namespace
}  // namespace whisper_e2e
