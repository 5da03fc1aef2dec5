// End-to-end: a model file whose weights hold a NaN or an infinity (a corrupt download, a bad
// conversion) is not transcribed to silently wrong text. The first non-finite encoder output or
// logits (checked at every window and decoder step, whisper/state.h) makes the model's weights be
// scanned, and the CLI exits 1 with one error line naming the file, the tensor, the value and
// its element. The corrupt copies are made here from models/ggml-tiny.en.bin, the tensor found
// with the project's model file parser (whisper/model_file.h); the element index is the one the
// test writes, so each expected message is derived independently of the code under test.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "whisper/e2e/cli_runner.h"
#include "whisper/model_file.h"

namespace whisper_e2e {
namespace {

// ggml F16 bit patterns (IEEE binary16): a quiet NaN and +infinity.
constexpr uint16_t kF16NaN = 0x7e00;
constexpr uint16_t kF16Inf = 0x7c00;

class CliNanWeightsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ModelAvailable());
    dir_ = MakeTempDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    bytes_ = ReadFileOrFail(testdata::ModelPath("ggml-tiny.en.bin"));
    ASSERT_FALSE(bytes_.empty());
  }

  // The record of tensor `name` in the model file.
  whisper::TensorRecord Record(const std::string& name) {
    const uint8_t* data = reinterpret_cast<const uint8_t*>(bytes_.data());
    absl::StatusOr<whisper::ModelFileHeader> header = whisper::ParseModelFileHeader(data, bytes_.size(), "tiny.en");
    EXPECT_TRUE(header.ok()) << header.status();
    if (!header.ok()) return {};
    absl::StatusOr<std::vector<whisper::TensorRecord>> records =
        whisper::ParseTensorRecords(data, bytes_.size(), *header, "tiny.en");
    EXPECT_TRUE(records.ok()) << records.status();
    if (!records.ok()) return {};
    for (const whisper::TensorRecord& r : *records) {
      if (r.name == name) return r;
    }
    ADD_FAILURE() << "no tensor " << name;
    return {};
  }

  // Element `i` of tensor `name` (F32 or F16 in tiny.en) set to `f32` / `f16` bits.
  void Poke(const std::string& name, int64_t i, float f32, uint16_t f16) { Poke(Record(name), i, f32, f16); }
  void Poke(const whisper::TensorRecord& r, int64_t i, float f32, uint16_t f16) {
    ASSERT_GT(r.nbytes, 0u);
    if (r.type == GGML_TYPE_F32) {
      ASSERT_LE((i + 1) * 4, static_cast<int64_t>(r.nbytes));
      std::memcpy(&bytes_[r.data_offset + i * 4], &f32, 4);
    } else {
      ASSERT_EQ(r.type, GGML_TYPE_F16) << r.name;
      ASSERT_LE((i + 1) * 2, static_cast<int64_t>(r.nbytes));
      std::memcpy(&bytes_[r.data_offset + i * 2], &f16, 2);
    }
  }

  // Writes the modified copy as <dir>/corrupt.bin and runs the CLI on jfk.wav with it.
  CliRun Run(const std::vector<std::string>& more = {}) {
    const std::string model = dir_ + "/corrupt.bin";
    WriteFileOrFail(model, bytes_);
    model_ = model;
    std::vector<std::string> args = {"-m", model, "-f", testdata::SharedData("jfk.wav"), "-t", "2", "-np"};
    args.insert(args.end(), more.begin(), more.end());
    return RunCli(args, dir_);
  }

  // Exit 1, no transcript, and the error line ends with `message`.
  static void ExpectError(const CliRun& run, const std::string& message) {
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_EQ(run.out, "");
    const std::vector<std::string> lines = Lines(run.err);
    ASSERT_FALSE(lines.empty()) << run.err;
    const std::string& last = lines.back();
    EXPECT_EQ(last.rfind("error: ", 0), 0u) << run.err;
    ASSERT_GE(last.size(), message.size()) << run.err;
    EXPECT_EQ(last.substr(last.size() - message.size()), message) << run.err;
  }

  std::string dir_;
  std::string bytes_;
  std::string model_;
};

// decoder.ln.weight (F32 [384]) element 17: the logits of the first decoder step (the prompt)
// are NaN; the file is named as a corrupt one.
TEST_F(CliNanWeightsTest, DecoderLayerNormNaN) {
  Poke("decoder.ln.weight", 17, std::numeric_limits<float>::quiet_NaN(), 0);
  const CliRun run = Run();
  ExpectError(run, "model '" + model_ +
                       "': tensor 'decoder.ln.weight' holds NaN at element 17 (expected finite weights): "
                       "the file is corrupt");
}

// The same tensor with +Inf at element 200: LayerNorm's product is infinite, the logits too.
TEST_F(CliNanWeightsTest, DecoderLayerNormInf) {
  Poke("decoder.ln.weight", 200, std::numeric_limits<float>::infinity(), 0);
  const CliRun run = Run();
  ExpectError(run, "model '" + model_ +
                       "': tensor 'decoder.ln.weight' holds +Inf at element 200 (expected finite weights): "
                       "the file is corrupt");
}

// The decoder's positional embedding (F32 ne = [384, 448]) with NaN in row 10, element
// 384 * 10 + 3: the prompt's logits are finite, those of the step at position 10 are not (the
// transcript of jfk.wav is longer than 10 tokens). Greedy and beam search (the batched steps) both
// stop there.
TEST_F(CliNanWeightsTest, DecoderPositionTenNaN) {
  Poke("decoder.positional_embedding", 384 * 10 + 3, std::numeric_limits<float>::quiet_NaN(), 0);
  const std::string message = "': tensor 'decoder.positional_embedding' holds NaN at element 3843 (expected finite "
                              "weights): the file is corrupt";
  const CliRun greedy = Run();
  ExpectError(greedy, "model '" + model_ + message);
  const CliRun beam = Run({"-bs", "5"});
  ExpectError(beam, "model '" + model_ + message);
}

// An F16 encoder matrix (layer 0's first MLP projection, ne = [384, 1536]) with NaN at element
// 17 (row 0): channel 0 of the MLP is NaN at every position, so is the residual stream after it
// and the encoder output of the first window, caught before any decoder step.
TEST_F(CliNanWeightsTest, EncoderMlpNaN) {
  Poke("encoder.blocks.0.mlp.0.weight", 17, 0.0f, kF16NaN);
  const CliRun run = Run();
  ExpectError(run, "model '" + model_ +
                       "': tensor 'encoder.blocks.0.mlp.0.weight' holds NaN at element 17 (expected finite "
                       "weights): the file is corrupt");
}

// +Inf in the same F16 matrix at element 384 * 3 + 5 (row 3, column 5).
TEST_F(CliNanWeightsTest, EncoderMlpInf) {
  Poke("encoder.blocks.0.mlp.0.weight", 384 * 3 + 5, 0.0f, kF16Inf);
  const CliRun run = Run();
  ExpectError(run, "model '" + model_ +
                       "': tensor 'encoder.blocks.0.mlp.0.weight' holds +Inf at element 1157 (expected finite "
                       "weights): the file is corrupt");
}

// A NaN in an attention query projection (F16 ne = [384, 384], element 384 * 2 + 9: row 2, so
// head 0's queries are NaN at every position): the scores of that head are NaN, and the softmax
// kernels (kernels/softmax.h, kernels/flash_attn.h) make such a row NaN. They gave it zeros, as
// a fully masked row, so the output stayed finite but wrong and the file was never named. The
// decoder's self-attention (the row softmax), its cross-attention, and the encoder's attention
// (flash attention, the default -fa; the row softmax with -nfa).
TEST_F(CliNanWeightsTest, AttentionQueryNaN) {
  for (const std::string name : {"decoder.blocks.0.attn.query.weight", "decoder.blocks.3.cross_attn.query.weight",
                                 "encoder.blocks.1.attn.query.weight"}) {
    SCOPED_TRACE(name);
    const std::string clean = bytes_;
    Poke(name, 384 * 2 + 9, 0.0f, kF16NaN);
    const std::string message = "': tensor '" + name + "' holds NaN at element 777 (expected finite weights): the file "
                                "is corrupt";
    const CliRun run = Run();  // sets model_
    ExpectError(run, "model '" + model_ + message);
    if (name.rfind("encoder.", 0) == 0) {
      const CliRun blocked = Run({"-nfa"});
      ExpectError(blocked, "model '" + model_ + message);
    }
    bytes_ = clean;
  }
}

// Finite weights whose product overflows: every element of decoder.ln.weight 3e38 (finite,
// below FLT_MAX 3.4e38). The normalized hidden state has unit variance, so some product is
// beyond FLT_MAX: the logits are not finite while every weight is. The error then names the
// computed value, and says the weights are finite.
TEST_F(CliNanWeightsTest, FiniteWeightsOverflow) {
  const whisper::TensorRecord ln = Record("decoder.ln.weight");
  for (int i = 0; i < 384; ++i) Poke(ln, i, 3e38f, 0);
  const CliRun run = Run();
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("Decode: the logits of decoder 0 at position 0: NaN at index 0 (expected finite values)"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("every weight of model '" + model_ + "' is finite, so the computation produced it"),
            std::string::npos)
      << run.err;
}

// The same for the encoder: every element of encoder.ln_post.weight (F32 [384]) 3e38, so the
// encoder output of the first window overflows while the weights are finite.
TEST_F(CliNanWeightsTest, FiniteWeightsEncoderOverflow) {
  const whisper::TensorRecord ln = Record("encoder.ln_post.weight");
  for (int i = 0; i < 384; ++i) Poke(ln, i, 3e38f, 0);
  const CliRun run = Run();
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("Encode: the encoder output of window 0 (seek 0, position "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("every weight of model '" + model_ + "' is finite, so the computation produced it"),
            std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace whisper_e2e
