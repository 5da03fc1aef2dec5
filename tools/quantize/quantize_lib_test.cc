// QuantizeModelImage on synthetic whisper.cpp model files (whisper/synthetic_model.h): the header
// is kept byte for byte except ftype, exactly whisper.cpp's set of tensors is quantized, and each
// quantized tensor equals the reference quantizer applied to the source tensor as a whole.
#include "tools/quantize/quantize_lib.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "ggml/fp16.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/quant_ref.h"
#include "kernels/quant_types.h"
#include "whisper/model_file.h"
#include "whisper/synthetic_model.h"

namespace ggml_whisper::quantize {
namespace {

using ::testing::HasSubstr;
using whisper::TensorRecord;
using whisper::TensorRole;

struct Output {
  std::vector<uint8_t> bytes;
  absl::StatusOr<QuantizeSummary> summary;
};

Output Quantize(const std::vector<uint8_t>& in, const QuantTarget& target) {
  Output o;
  o.summary =
      QuantizeModelImage(in.data(), in.size(), "model.bin", target, [&o](const void* p, size_t n) {
        const uint8_t* b = static_cast<const uint8_t*>(p);
        o.bytes.insert(o.bytes.end(), b, b + n);
        return absl::OkStatus();
      });
  return o;
}

QuantTarget Target(const char* name) {
  absl::StatusOr<QuantTarget> t = ParseQuantTarget(name);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : QuantTarget{};
}

int NDims(const whisper::TensorSpec& s) {
  int n = 4;
  while (n > 1 && s.ne[n - 1] == 1) --n;
  return n;
}

// The whole tensor (all rows in one call: blocks never straddle rows since ne0 % 32 == 0)
// through ggml's reference quantizer for `type`.
std::vector<uint8_t> ReferenceQuantize(ggml_type type, const std::vector<float>& x) {
  using namespace ggml_cpu;  // NOLINT: the block types and their quantizers
  const int64_t k = static_cast<int64_t>(x.size());
  std::vector<uint8_t> y(ggml_row_size(type, k));
  void* out = y.data();
  switch (type) {
    case GGML_TYPE_Q4_0: quantize_row_q4_0_ref(x.data(), static_cast<block_q4_0*>(out), k); break;
    case GGML_TYPE_Q4_1: quantize_row_q4_1_ref(x.data(), static_cast<block_q4_1*>(out), k); break;
    case GGML_TYPE_Q5_0: quantize_row_q5_0_ref(x.data(), static_cast<block_q5_0*>(out), k); break;
    case GGML_TYPE_Q5_1: quantize_row_q5_1_ref(x.data(), static_cast<block_q5_1*>(out), k); break;
    case GGML_TYPE_Q8_0: quantize_row_q8_0_ref(x.data(), static_cast<block_q8_0*>(out), k); break;
    default: ADD_FAILURE() << "not a quantized type: " << type;
  }
  return y;
}

// The elements of an F32 or F16 tensor as floats.
std::vector<float> ToFloats(const uint8_t* p, ggml_type type, size_t n) {
  std::vector<float> f(n);
  for (size_t i = 0; i < n; ++i) {
    if (type == GGML_TYPE_F32) {
      memcpy(&f[i], p + 4 * i, 4);
    } else {
      ggml_fp16_t h;
      memcpy(&h, p + 2 * i, 2);
      f[i] = ggml_fp16_to_fp32(h);
    }
  }
  return f;
}

struct Parsed {
  whisper::ModelFileHeader header;
  std::vector<TensorRecord> records;  // ExpectedTensors order
};

Parsed Parse(const std::vector<uint8_t>& bytes) {
  Parsed p;
  absl::StatusOr<whisper::ModelFileHeader> h =
      whisper::ParseModelFileHeader(bytes.data(), bytes.size(), "out.bin");
  EXPECT_TRUE(h.ok()) << h.status();
  if (!h.ok()) return p;
  p.header = *h;
  absl::StatusOr<std::vector<TensorRecord>> r =
      whisper::ParseTensorRecords(bytes.data(), bytes.size(), *h, "out.bin");
  EXPECT_TRUE(r.ok()) << r.status();
  if (r.ok()) p.records = *r;
  return p;
}

TEST(ParseQuantTargetTest, NamesAndFtypeNumbers) {
  const struct {
    const char* name;
    const char* number;
    int32_t ftype;
    ggml_type type;
  } cases[] = {{"q4_0", "2", 2, GGML_TYPE_Q4_0},
               {"q4_1", "3", 3, GGML_TYPE_Q4_1},
               {"q5_0", "8", 8, GGML_TYPE_Q5_0},
               {"q5_1", "9", 9, GGML_TYPE_Q5_1},
               {"q8_0", "7", 7, GGML_TYPE_Q8_0}};
  for (const auto& c : cases) {
    for (const std::string arg :
         {std::string(c.name), std::string(c.number), absl::AsciiStrToUpper(c.name)}) {
      absl::StatusOr<QuantTarget> t = ParseQuantTarget(arg);
      ASSERT_TRUE(t.ok()) << arg << ": " << t.status();
      EXPECT_EQ(t->ftype, c.ftype) << arg;
      EXPECT_EQ(t->type, c.type) << arg;
      EXPECT_STREQ(t->name, c.name) << arg;
    }
  }
}

TEST(ParseQuantTargetTest, UnknownTypeListsTheValidOnes) {
  for (const char* arg : {"", "f16", "f32", "0", "1", "4", "6", "10", "q4_k", "q8_1", "q5"}) {
    absl::StatusOr<QuantTarget> t = ParseQuantTarget(arg);
    ASSERT_FALSE(t.ok()) << arg;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(absl::StrCat("'", arg, "'")));
    EXPECT_THAT(std::string(t.status().message()),
                HasSubstr("q4_0 (2), q4_1 (3), q5_0 (8), q5_1 (9), q8_0 (7)"));
  }
}

// whisper.cpp's rule (2-D, minus the skip list) selects exactly the tensors the loader calls
// matrices: tiny's 65 = 4 x 6 encoder + 4 x 10 decoder + the token embedding.
TEST(ShouldQuantizeTest, SelectsExactlyTheMatricesOfTiny) {
  const whisper::WhisperHparams tiny = {51864, 1500, 384, 6, 4, 448, 384, 6, 4, 80, 1, 0};
  int n = 0;
  for (const whisper::TensorSpec& s : whisper::ExpectedTensors(tiny)) {
    EXPECT_EQ(ShouldQuantize(s.name, NDims(s)), s.role == TensorRole::kMatrix) << s.name;
    n += ShouldQuantize(s.name, NDims(s)) ? 1 : 0;
  }
  EXPECT_EQ(n, 65);
  EXPECT_TRUE(ShouldQuantize("decoder.token_embedding.weight", 2));
  EXPECT_FALSE(ShouldQuantize("encoder.conv1.bias", 2));
  EXPECT_FALSE(ShouldQuantize("decoder.positional_embedding", 2));
  EXPECT_FALSE(ShouldQuantize("encoder.conv2.weight", 3));
}

// Checks `out` (quantized from `in` to `target`) field by field against `in`.
void ExpectQuantizedFrom(const std::vector<uint8_t>& in, const Output& out,
                         const QuantTarget& target) {
  ASSERT_TRUE(out.summary.ok()) << out.summary.status();
  const Parsed src = Parse(in);
  const Parsed dst = Parse(out.bytes);
  ASSERT_EQ(dst.records.size(), src.records.size());

  // Header: identical except the int32 ftype at byte 44.
  const size_t header = src.header.tensors_offset;
  ASSERT_EQ(dst.header.tensors_offset, header);
  EXPECT_TRUE(std::equal(in.begin(), in.begin() + kFtypeOffset, out.bytes.begin()));
  EXPECT_TRUE(std::equal(in.begin() + kFtypeOffset + 4, in.begin() + header,
                         out.bytes.begin() + kFtypeOffset + 4));
  int32_t stored;
  memcpy(&stored, out.bytes.data() + kFtypeOffset, 4);
  EXPECT_EQ(stored, 2000 + target.ftype);
  EXPECT_EQ(dst.header.hparams.ftype, target.ftype);
  EXPECT_EQ(dst.header.hparams.qntvr, 2);

  const std::vector<whisper::TensorSpec> specs = whisper::ExpectedTensors(src.header.hparams);
  size_t expected_size = header;
  int n_quantized = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorRecord& a = src.records[i];
    const TensorRecord& b = dst.records[i];
    SCOPED_TRACE(a.name);
    EXPECT_EQ(b.n_dims, a.n_dims);
    for (int d = 0; d < 4; ++d) EXPECT_EQ(b.ne[d], a.ne[d]);
    const uint8_t* a_data = in.data() + a.data_offset;
    const uint8_t* b_data = out.bytes.data() + b.data_offset;
    const size_t n = a.ne[0] * a.ne[1] * a.ne[2] * a.ne[3];
    std::vector<uint8_t> want;
    switch (specs[i].role) {
      case TensorRole::kMatrix:
        EXPECT_EQ(b.type, target.type);
        want = ReferenceQuantize(target.type, ToFloats(a_data, a.type, n));
        ++n_quantized;
        break;
      case TensorRole::kConv:
        EXPECT_EQ(b.type, GGML_TYPE_F16);
        for (float f : ToFloats(a_data, a.type, n)) {
          const ggml_fp16_t h = ggml_fp32_to_fp16(f);
          want.push_back(h & 0xFF);
          want.push_back(h >> 8);
        }
        break;
      case TensorRole::kF32:
        EXPECT_EQ(b.type, GGML_TYPE_F32);
        want.assign(a_data, a_data + a.nbytes);
        break;
    }
    ASSERT_EQ(b.nbytes, want.size());
    EXPECT_EQ(memcmp(b_data, want.data(), want.size()), 0);
    // n_dims, name_len, ttype, ne[n_dims], name, data.
    expected_size += 4 * (3 + a.n_dims) + a.name.size() + want.size();
  }
  EXPECT_EQ(out.bytes.size(), expected_size);
  EXPECT_EQ(out.summary->file_bytes_out, expected_size);
  EXPECT_EQ(out.summary->file_bytes_in, in.size());
  EXPECT_EQ(out.summary->header_bytes, header);
  EXPECT_EQ(out.summary->n_quantized, n_quantized);
  EXPECT_EQ(out.summary->ftype_out, 2000 + target.ftype);

  // Record order and the per-tensor report follow the input file.
  std::vector<const TensorRecord*> by_offset;
  for (const TensorRecord& r : src.records) by_offset.push_back(&r);
  std::sort(by_offset.begin(), by_offset.end(),
            [](auto* x, auto* y) { return x->data_offset < y->data_offset; });
  ASSERT_EQ(out.summary->tensors.size(), by_offset.size());
  for (size_t i = 0; i < by_offset.size(); ++i) {
    EXPECT_EQ(out.summary->tensors[i].name, by_offset[i]->name);
    EXPECT_EQ(out.summary->tensors[i].bytes_in, by_offset[i]->nbytes);
  }
}

TEST(QuantizeModelImageTest, F16ModelToEveryType) {
  const whisper::SyntheticModel m = whisper::MakeSyntheticModel({});
  for (const char* name : {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0"}) {
    SCOPED_TRACE(name);
    const QuantTarget target = Target(name);
    ExpectQuantizedFrom(m.bytes, Quantize(m.bytes, target), target);
  }
}

// An F32 (ftype 0) source: matrices are quantized from the f32 values, the conv kernels are
// rounded to F16 (the type every quantized file has), the rest is copied.
TEST(QuantizeModelImageTest, F32ModelToEveryType) {
  whisper::SyntheticModelOptions o;
  o.hparams.ftype = 0;
  o.matrix_type = GGML_TYPE_F32;
  o.seed = 7;
  const whisper::SyntheticModel m = whisper::MakeSyntheticModel(o);
  for (const char* name : {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0"}) {
    SCOPED_TRACE(name);
    const QuantTarget target = Target(name);
    ExpectQuantizedFrom(m.bytes, Quantize(m.bytes, target), target);
  }
}

TEST(QuantizeModelImageTest, ReportLineAndTotals) {
  const whisper::SyntheticModel m = whisper::MakeSyntheticModel({});
  const QuantTarget target = Target("q8_0");
  const Output out = Quantize(m.bytes, target);
  ASSERT_TRUE(out.summary.ok()) << out.summary.status();
  const TensorReport* te = nullptr;
  for (const TensorReport& t : out.summary->tensors) {
    if (t.name == "decoder.token_embedding.weight") te = &t;
  }
  ASSERT_NE(te, nullptr);
  // [32, 51864] F16 = 3,319,296 B -> q8_0: 51864 rows x 34 B = 1,763,376 B.
  EXPECT_EQ(te->bytes_in, 3319296u);
  EXPECT_EQ(te->bytes_out, 1763376u);
  EXPECT_EQ(FormatTensorReport(*te),
            "                  decoder.token_embedding.weight - [   32, 51864,     1], type =    "
            "f16 ->   q8_0, size =    3.166 MB ->    1.682 MB");
  const std::string totals = FormatSummary(*out.summary, target);
  EXPECT_THAT(totals, HasSubstr("| ftype = 2007 (q8_0)"));
  EXPECT_THAT(totals, HasSubstr(absl::StrCat(out.summary->tensor_bytes_out, " bytes; 17 of ",
                                             out.summary->tensors.size(), " tensors quantized")));
}

// Input errors are reported before anything reaches the sink.
absl::Status RunExpectingNoOutput(const std::vector<uint8_t>& in, size_t size,
                                  const char* target = "q5_0") {
  bool called = false;
  absl::StatusOr<QuantizeSummary> s = QuantizeModelImage(
      in.data(), size, "model.bin", Target(target), [&called](const void*, size_t) {
        called = true;
        return absl::OkStatus();
      });
  EXPECT_FALSE(called);
  EXPECT_FALSE(s.ok());
  return s.status();
}

TEST(QuantizeModelImageTest, HeaderOnlyFileHasNoTensors) {
  whisper::SyntheticModelOptions o;
  o.write_tensors = false;
  const whisper::SyntheticModel m = whisper::MakeSyntheticModel(o);
  const absl::Status s = RunExpectingNoOutput(m.bytes, m.bytes.size());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("model.bin: no tensors"));
}

TEST(QuantizeModelImageTest, TruncatedInputNamesTheField) {
  const whisper::SyntheticModel m = whisper::MakeSyntheticModel({});
  int checked = 0;
  for (const whisper::FieldMark& f : m.fields) {
    const bool pick = f.name == "magic" || f.name == "hparams.n_mels" ||
                      f.name == "hparams.ftype" || f.name == "mel_filters.data" ||
                      f.name == "vocab token 3 bytes" ||
                      f.name == "tensor 'decoder.token_embedding.weight' data" ||
                      f.name == "tensor 'decoder.ln.bias' ne[0]";
    if (!pick) continue;
    ++checked;
    const absl::Status s = RunExpectingNoOutput(m.bytes, f.offset + 1);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << f.name << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("truncated")) << f.name;
    const std::string field =
        f.name.rfind("tensor ", 0) == 0 ? f.name.substr(f.name.rfind(' ') + 1) : f.name;
    EXPECT_THAT(std::string(s.message()), HasSubstr(field)) << f.name;
    if (f.name.rfind("tensor ", 0) == 0 && field == "data") {  // the name is known by then
      EXPECT_THAT(std::string(s.message()), HasSubstr(f.name.substr(7, f.name.rfind('\'') - 6)));
    }
  }
  EXPECT_EQ(checked, 7);
}

TEST(QuantizeModelImageTest, RefusesAnAlreadyQuantizedModel) {
  whisper::SyntheticModelOptions o;
  o.hparams.ftype = 7;
  o.hparams.qntvr = 2;
  o.matrix_type = GGML_TYPE_Q8_0;
  const whisper::SyntheticModel m = whisper::MakeSyntheticModel(o);
  const absl::Status s = RunExpectingNoOutput(m.bytes, m.bytes.size(), "q4_0");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("hparams.ftype is 2007 (q8_0, qntvr 2)"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("f32 (0) or f16 (1)"));
}

// An f16 file whose matrices were stored quantized: the first one in file order is named
// (the synthetic writer follows ExpectedTensors, where a block's mlp.0 precedes its attention).
TEST(QuantizeModelImageTest, RefusesAQuantizedTensorInAnF16File) {
  whisper::SyntheticModelOptions o;
  o.matrix_type = GGML_TYPE_Q4_1;
  const whisper::SyntheticModel m = whisper::MakeSyntheticModel(o);
  const absl::Status s = RunExpectingNoOutput(m.bytes, m.bytes.size());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("tensor 'encoder.blocks.0.mlp.0.weight' is q4_1: only f32 and f16"));
}

TEST(QuantizeModelImageTest, RowsNotAWholeNumberOfBlocks) {
  whisper::SyntheticModelOptions o;
  o.hparams.n_audio_state = 48;  // 2 heads of 24: ne0 = 48 is not a multiple of 32
  o.hparams.n_text_state = 48;
  const whisper::SyntheticModel m = whisper::MakeSyntheticModel(o);
  const absl::Status s = RunExpectingNoOutput(m.bytes, m.bytes.size());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("tensor 'encoder.blocks.0.mlp.0.weight': ne0 = 48 is "
                        "not a multiple of the q5_0 block size 32"));
}

TEST(QuantizeModelImageTest, SinkErrorStopsAndIsReturned) {
  const whisper::SyntheticModel m = whisper::MakeSyntheticModel({});
  size_t written = 0;
  absl::StatusOr<QuantizeSummary> s =
      QuantizeModelImage(m.bytes.data(), m.bytes.size(), "model.bin", Target("q4_0"),
                         [&written](const void*, size_t n) {
                           if (written + n > 10000) return absl::DataLossError("disk full");
                           written += n;
                           return absl::OkStatus();
                         });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status(), absl::DataLossError("disk full"));
  EXPECT_LE(written, 10000u);
}

TEST(QuantizeRowRefTest, RejectsNonWeightTypes) {
  float x[32] = {};
  uint8_t y[64];
  for (ggml_type t : {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q8_1}) {
    EXPECT_EQ(QuantizeRowRef(t, x, y, 32).code(), absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace ggml_whisper::quantize
