#include "whisper/model_file.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testdata/paths.h"
#include "whisper/synthetic_model.h"

namespace whisper {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

// Parses header and records of `bytes`; the first error, or OK.
absl::Status ParseAll(const std::vector<uint8_t>& bytes, size_t size) {
  absl::StatusOr<ModelFileHeader> header = ParseModelFileHeader(bytes.data(), size, "model.bin");
  if (!header.ok()) return header.status();
  return ParseTensorRecords(bytes.data(), size, *header, "model.bin").status();
}

TEST(ModelFileTest, HeaderOnlyTinyEnParsesAndIsRejectedForLoading) {
  const std::string path = testdata::SharedData("header-only-ggml-tiny.en.bin");
  const std::vector<uint8_t> bytes = ReadAll(path);
  ASSERT_EQ(bytes.size(), 586836u) << path;
  absl::StatusOr<ModelFileHeader> header = ParseModelFileHeader(bytes.data(), bytes.size(), path);
  ASSERT_TRUE(header.ok()) << header.status();
  const WhisperHparams& h = header->hparams;
  const int32_t got[] = {h.n_vocab,     h.n_audio_ctx,  h.n_audio_state, h.n_audio_head,
                         h.n_audio_layer, h.n_text_ctx, h.n_text_state,  h.n_text_head,
                         h.n_text_layer, h.n_mels,      h.ftype,         h.qntvr};
  const int32_t want[] = {51864, 1500, 384, 6, 4, 448, 384, 6, 4, 80, 1, 0};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(got[i], want[i]) << "hparam " << i;
  EXPECT_EQ(header->n_mel, 80);
  EXPECT_EQ(header->n_fft, 201);
  EXPECT_EQ(header->mel_filters.size(), 80u * 201u);
  ASSERT_EQ(header->tokens.size(), 50257u);
  EXPECT_EQ(header->tokens[50256], "<|endoftext|>");
  EXPECT_EQ(header->tokens[0], "!");  // GPT-2's first byte-level token
  EXPECT_EQ(header->tensors_offset, bytes.size());
  // Filter row 0 read a second way: the 201 floats right after magic + 11 hparams + n_mel + n_fft.
  float f0[201];
  memcpy(f0, bytes.data() + 4 + 44 + 8, sizeof(f0));
  for (int i = 0; i < 201; ++i) EXPECT_EQ(header->mel_filters[i], f0[i]);

  absl::Status s = ParseTensorRecords(bytes.data(), bytes.size(), *header, path).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("no tensors: file has header, mel filters and vocabulary only"));
  EXPECT_THAT(s.message(), HasSubstr(path));
}

TEST(ModelFileTest, HeaderOnlyMultilingualTiny) {
  const std::string path = testdata::SharedData("header-only-ggml-tiny.bin");
  const std::vector<uint8_t> bytes = ReadAll(path);
  ASSERT_EQ(bytes.size(), 575451u) << path;
  absl::StatusOr<ModelFileHeader> header = ParseModelFileHeader(bytes.data(), bytes.size(), path);
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->hparams.n_vocab, 51865);
  EXPECT_EQ(header->tokens.size(), 50257u);
  EXPECT_EQ(header->tensors_offset, bytes.size());
}

TEST(ModelFileTest, ExpectedTensorsOfTinyMatchWhisperCppCounts) {
  WhisperHparams h = {51864, 1500, 384, 6, 4, 448, 384, 6, 4, 80, 1, 0};
  const std::vector<TensorSpec> specs = ExpectedTensors(h);
  ASSERT_EQ(specs.size(), 167u);
  // F16 payload of tiny.en as whisper.cpp's converter writes it: matrices and conv kernels F16,
  // the rest F32 (the facts file computes 77,110,272 bytes).
  size_t bytes = 0;
  for (const TensorSpec& s : specs) {
    const ggml_type t = s.role == TensorRole::kF32 ? GGML_TYPE_F32 : GGML_TYPE_F16;
    bytes += ggml_row_size(t, s.ne[0]) * s.ne[1] * s.ne[2] * s.ne[3];
  }
  EXPECT_EQ(bytes, 77110272u);
  EXPECT_EQ(specs[1].name, "encoder.conv1.weight");
  EXPECT_EQ(specs[1].ne[0], 3);
  EXPECT_EQ(specs[1].ne[1], 80);
  EXPECT_EQ(specs[1].ne[2], 384);
}

TEST(ModelFileTest, SyntheticModelRecordsPointAtTheWrittenData) {
  const SyntheticModel m = MakeSyntheticModel({});
  absl::StatusOr<ModelFileHeader> header =
      ParseModelFileHeader(m.bytes.data(), m.bytes.size(), "synthetic");
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->tensors_offset, m.tensors_offset);
  EXPECT_EQ(header->tokens.size(), 6u);
  EXPECT_EQ(header->tokens[5], "tok5");
  absl::StatusOr<std::vector<TensorRecord>> records =
      ParseTensorRecords(m.bytes.data(), m.bytes.size(), *header, "synthetic");
  ASSERT_TRUE(records.ok()) << records.status();
  const std::vector<TensorSpec> specs = ExpectedTensors(header->hparams);
  ASSERT_EQ(records->size(), 7u + 15u + 4u + 24u);
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorRecord& r = (*records)[i];
    EXPECT_EQ(r.name, specs[i].name);
    // The writer marked "tensor '<name>' data" where the bytes start.
    const std::string field = absl::StrCat("tensor '", r.name, "' data");
    size_t marked = 0;
    for (const FieldMark& f : m.fields) {
      if (f.name == field) marked = f.offset;
    }
    EXPECT_EQ(r.data_offset, marked) << r.name;
    const ggml_type want_type = specs[i].role == TensorRole::kF32 ? GGML_TYPE_F32 : GGML_TYPE_F16;
    EXPECT_EQ(r.type, want_type) << r.name;
  }
  EXPECT_EQ(records->back().data_offset + records->back().nbytes, m.bytes.size());
}

TEST(ModelFileTest, QuantizedMatricesAreAccepted) {
  for (ggml_type t : {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
                      GGML_TYPE_Q8_0, GGML_TYPE_F32}) {
    SyntheticModelOptions o;
    o.matrix_type = t;
    o.hparams.ftype = t == GGML_TYPE_F32 ? 0 : 1;
    const SyntheticModel m = MakeSyntheticModel(o);
    EXPECT_TRUE(ParseAll(m.bytes, m.bytes.size()).ok()) << ggml_type_name(t);
  }
}

// Truncating the file at the start of any field (and one byte into it) names that field and the
// offset, except at a record boundary, where the first absent tensor is reported missing.
TEST(ModelFileTest, TruncatedAtEveryFieldNamesTheField) {
  const SyntheticModel m = MakeSyntheticModel({});
  // magic, 11 hparams, n_mel, n_fft, filters, n_tokens, 6 x (length, bytes); per tensor
  // n_dims, name_len, ttype, ne[n_dims], name, data.
  size_t n_fields = 1 + 11 + 3 + 1 + 2 * 6;
  for (const TensorSpec& s : ExpectedTensors(SyntheticModelOptions().hparams)) {
    int n_dims = 4;
    while (n_dims > 1 && s.ne[n_dims - 1] == 1) --n_dims;
    n_fields += 5 + n_dims;
  }
  ASSERT_EQ(m.fields.size(), n_fields);
  for (const FieldMark& f : m.fields) {
    for (size_t cut : {f.offset, f.offset + 1}) {
      absl::Status s = ParseAll(m.bytes, cut);
      ASSERT_FALSE(s.ok()) << "cut at " << cut << " (" << f.name << ")";
      const bool record_start = f.name.find("' n_dims") != std::string::npos;
      if (cut == 0) {  // an empty file is named as such (model_kind.h)
        EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
        EXPECT_THAT(s.message(), HasSubstr("empty file (0 bytes)"));
      } else if (cut == m.tensors_offset) {
        EXPECT_THAT(s.message(), HasSubstr("no tensors")) << f.name;
      } else if (record_start && cut == f.offset) {
        const std::string name = f.name.substr(8, f.name.find('\'', 8) - 8);  // "tensor '<name>'"
        EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("missing tensor '", name, "'")));
      } else {
        EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
        EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("truncated at offset ", f.offset)));
        // The field's own name: "hparams.n_mels", "vocab token 3 length", or for a tensor record
        // its last word ("n_dims", "ne[1]", "name", "data").
        const std::string tail = f.name.substr(f.name.rfind(' ') + 1);
        EXPECT_THAT(s.message(), HasSubstr(f.name.rfind("tensor", 0) == 0 ? tail : f.name));
      }
    }
  }
}

TEST(ModelFileTest, WrongMagic) {
  SyntheticModel m = MakeSyntheticModel({});
  m.bytes[0] = 'x';
  absl::Status s = ParseAll(m.bytes, m.bytes.size());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("bad magic at offset 0, expected 0x67676d6c"));  // no bytes shown
}

// The wrong kind of file is named (model_kind.h), before any hparam is read.
TEST(ModelFileTest, OtherKindsOfFile) {
  std::string vad = "lmgg";
  const int32_t len = 10;
  vad.append(reinterpret_cast<const char*>(&len), 4);
  vad += "silero-16k" + std::string(200, '\0');
  absl::StatusOr<ModelFileHeader> h =
      ParseModelFileHeader(reinterpret_cast<const uint8_t*>(vad.data()), vad.size(), "vad.bin");
  EXPECT_THAT(h.status().message(), HasSubstr("vad.bin: a Silero VAD model"));
  const std::string gguf = "GGUF" + std::string(60, '\0');
  h = ParseModelFileHeader(reinterpret_cast<const uint8_t*>(gguf.data()), gguf.size(), "m.gguf");
  EXPECT_THAT(h.status().message(), HasSubstr("m.gguf: a GGUF file"));
  h = ParseModelFileHeader(nullptr, 0, "empty.bin");
  EXPECT_EQ(h.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(h.status().message(), HasSubstr("empty.bin: empty file (0 bytes)"));
}

// Overwrites the int32 field named `field` of a fresh synthetic file.
std::vector<uint8_t> WithField(const std::string& field, int32_t value) {
  SyntheticModel m = MakeSyntheticModel({});
  for (const FieldMark& f : m.fields) {
    if (f.name == field) memcpy(m.bytes.data() + f.offset, &value, 4);
  }
  return m.bytes;
}

TEST(ModelFileTest, BadHparamsNameFieldAndExpectation) {
  const struct {
    const char* field;
    int32_t value;
    const char* message;
  } cases[] = {
      {"hparams.ftype", 4, "hparams.ftype is 4"},
      {"hparams.ftype", 10, "expected ggml_ftype 0 (f32)"},
      {"hparams.ftype", 2005, "qntvr 2, ggml_ftype 5"},
      {"hparams.ftype", -1, "hparams.ftype is -1"},
      {"hparams.n_mels", 64, "hparams.n_mels is 64, expected 80 or 128"},
      {"hparams.n_vocab", 50000, "hparams.n_vocab is 50000, expected 51864"},
      {"hparams.n_audio_head", 0, "hparams.n_audio_head is 0, expected a positive value"},
      {"hparams.n_text_layer", -3, "hparams.n_text_layer is -3"},
      {"hparams.n_text_head", 3, "n_text_state 32 is not a multiple of n_text_head 3"},
      {"hparams.n_text_state", 64, "expected n_audio_state 32"},
      {"mel_filters.n_fft", 200, "mel_filters.n_fft is 200, expected 201"},
      {"mel_filters.n_mel", 128, "mel_filters.n_mel is 128, expected hparams.n_mels 80"},
      {"vocab.n_tokens", 60000, "vocab.n_tokens is 60000"},
      {"vocab token 2 length", 1 << 20, "vocab token 2 length is 1048576"},
  };
  for (const auto& c : cases) {
    const std::vector<uint8_t> bytes = WithField(c.field, c.value);
    absl::Status s = ParseAll(bytes, bytes.size());
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.field << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr(c.message)) << c.field;
    EXPECT_THAT(s.message(), HasSubstr("model.bin")) << c.field;
  }
}

TEST(ModelFileTest, QuantizedFtypeWithVersionIsAccepted) {
  SyntheticModelOptions o;
  o.hparams.ftype = 7;  // MOSTLY_Q8_0
  o.hparams.qntvr = 2;  // stored as 2007, as whisper.cpp's quantize writes
  o.matrix_type = GGML_TYPE_Q8_0;
  const SyntheticModel m = MakeSyntheticModel(o);
  absl::StatusOr<ModelFileHeader> header =
      ParseModelFileHeader(m.bytes.data(), m.bytes.size(), "q8");
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->hparams.ftype, 7);
  EXPECT_EQ(header->hparams.qntvr, 2);
  EXPECT_TRUE(ParseAll(m.bytes, m.bytes.size()).ok());
}

size_t FieldOffset(const SyntheticModel& m, const std::string& name) {
  for (const FieldMark& f : m.fields) {
    if (f.name == name) return f.offset;
  }
  ADD_FAILURE() << "no field " << name;
  return 0;
}

TEST(ModelFileTest, MissingTensor) {
  const SyntheticModel m = MakeSyntheticModel({});
  // Cut the record of encoder.conv2.bias out of the middle of the file.
  const size_t begin = FieldOffset(m, "tensor 'encoder.conv2.bias' n_dims");
  const size_t end = FieldOffset(m, "tensor 'encoder.ln_post.weight' n_dims");
  std::vector<uint8_t> bytes(m.bytes.begin(), m.bytes.begin() + begin);
  bytes.insert(bytes.end(), m.bytes.begin() + end, m.bytes.end());
  absl::Status s = ParseAll(bytes, bytes.size());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("missing tensor 'encoder.conv2.bias'"));
  EXPECT_THAT(s.message(), HasSubstr("49 of the 50 tensors"));
}

TEST(ModelFileTest, DuplicateTensor) {
  SyntheticModel m = MakeSyntheticModel({});
  const size_t begin = FieldOffset(m, "tensor 'encoder.conv1.bias' n_dims");
  const size_t end = FieldOffset(m, "tensor 'encoder.conv2.weight' n_dims");
  std::vector<uint8_t> record(m.bytes.begin() + begin, m.bytes.begin() + end);
  m.bytes.insert(m.bytes.end(), record.begin(), record.end());
  absl::Status s = ParseAll(m.bytes, m.bytes.size());
  EXPECT_THAT(s.message(), HasSubstr("duplicate tensor 'encoder.conv1.bias'"));
}

TEST(ModelFileTest, MisshapedTensor) {
  SyntheticModel m = MakeSyntheticModel({});
  const int32_t bad = 31;
  memcpy(m.bytes.data() + FieldOffset(m, "tensor 'decoder.blocks.0.mlp.0.weight' ne[0]"), &bad, 4);
  absl::Status s = ParseAll(m.bytes, m.bytes.size());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("tensor 'decoder.blocks.0.mlp.0.weight'"));
  EXPECT_THAT(s.message(), HasSubstr("has shape ne = [31, 128], expected [32, 128]"));
}

TEST(ModelFileTest, UnknownTensorName) {
  SyntheticModel m = MakeSyntheticModel({});
  // "encoder.ln_post.bias" -> "encoder.ln_post.bia_".
  const size_t name = FieldOffset(m, "tensor 'encoder.ln_post.bias' name");
  m.bytes[name + strlen("encoder.ln_post.bia")] = '_';
  absl::Status s = ParseAll(m.bytes, m.bytes.size());
  EXPECT_THAT(s.message(), HasSubstr("unknown tensor 'encoder.ln_post.bia_'"));
}

TEST(ModelFileTest, WrongTensorTypes) {
  const struct {
    const char* field;
    int32_t ttype;
    const char* message;
  } cases[] = {
      {"tensor 'encoder.conv1.bias' ttype", 1, "has type 1 (f16), expected f32"},
      {"tensor 'encoder.conv1.weight' ttype", 0, "has type 0 (f32), expected f16"},
      {"tensor 'decoder.token_embedding.weight' ttype", 9,
       "expected one of f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0"},
      {"tensor 'encoder.positional_embedding' ttype", 99, "has type 99 (unknown)"},
  };
  for (const auto& c : cases) {
    SyntheticModel m = MakeSyntheticModel({});
    memcpy(m.bytes.data() + FieldOffset(m, c.field), &c.ttype, 4);
    absl::Status s = ParseAll(m.bytes, m.bytes.size());
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_THAT(s.message(), HasSubstr(c.message)) << c.field;
  }
}

TEST(ModelFileTest, BadRecordHeader) {
  SyntheticModel m = MakeSyntheticModel({});
  const size_t at = FieldOffset(m, "tensor 'encoder.conv1.bias' n_dims");
  int32_t v = 5;
  memcpy(m.bytes.data() + at, &v, 4);
  absl::Status s = ParseAll(m.bytes, m.bytes.size());
  EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("tensor record 2 at offset ", at,
                                                  ": n_dims is 5, expected 1..4")));
  m = MakeSyntheticModel({});
  v = 100000;
  memcpy(m.bytes.data() + FieldOffset(m, "tensor 'encoder.conv1.bias' name_len"), &v, 4);
  s = ParseAll(m.bytes, m.bytes.size());
  EXPECT_THAT(s.message(), HasSubstr("name_len is 100000, expected 1..256"));
}

// Layer counts are bounded before the table of expected tensors is built (n_audio_layer =
// 2^31 - 1 would need 32 billion entries: the loader was killed for memory).
TEST(ModelFileTest, HugeLayerCountsAreRejectedBeforeAllocation) {
  const struct {
    const char* field;
    int32_t value;
    const char* message;
  } cases[] = {
      {"hparams.n_audio_layer", 2147483647, "hparams.n_audio_layer is 2147483647, expected at most 128"},
      {"hparams.n_text_layer", 129, "hparams.n_text_layer is 129, expected at most 128"},
  };
  for (const auto& c : cases) {
    const std::vector<uint8_t> bytes = WithField(c.field, c.value);
    absl::Status s = ParseAll(bytes, bytes.size());
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.field << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr(c.message)) << s;
  }
}

// A shape that equals the hparams' but whose bytes pass 2^64 is an error, not a wrapped size
// (n_audio_state = 6 * 357913941: conv2's [3, 2147483646, 2147483646] f16 kernel is 2.8e19 bytes;
// the records before it are removed).
TEST(ModelFileTest, TensorSizeOverflow) {
  SyntheticModel m = MakeSyntheticModel({});
  const int32_t state = 2147483646, head = 6;
  for (const char* f : {"hparams.n_audio_state", "hparams.n_text_state"}) {
    memcpy(m.bytes.data() + FieldOffset(m, f), &state, 4);
  }
  for (const char* f : {"hparams.n_audio_head", "hparams.n_text_head"}) {
    memcpy(m.bytes.data() + FieldOffset(m, f), &head, 4);
  }
  const size_t conv2 = FieldOffset(m, "tensor 'encoder.conv2.weight' n_dims");
  memcpy(m.bytes.data() + FieldOffset(m, "tensor 'encoder.conv2.weight' ne[1]"), &state, 4);
  memcpy(m.bytes.data() + FieldOffset(m, "tensor 'encoder.conv2.weight' ne[2]"), &state, 4);
  m.bytes.erase(m.bytes.begin() + m.tensors_offset, m.bytes.begin() + conv2);
  absl::Status s = ParseAll(m.bytes, m.bytes.size());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("tensor 'encoder.conv2.weight' (record 0")) << s;
  EXPECT_THAT(s.message(), HasSubstr("ne = [3, 2147483646, 2147483646] of f16 needs more than 2^64 bytes")) << s;
}

TEST(ModelFileTest, QuantizedRowNotWholeBlocks) {
  SyntheticModelOptions o;
  o.hparams.n_audio_state = o.hparams.n_text_state = 48;  // 48 % 32 != 0
  SyntheticModel m = MakeSyntheticModel(o);
  const int32_t q4_0 = GGML_TYPE_Q4_0;
  memcpy(m.bytes.data() + FieldOffset(m, "tensor 'encoder.blocks.0.mlp.0.weight' ttype"), &q4_0, 4);
  absl::Status s = ParseAll(m.bytes, m.bytes.size());
  EXPECT_THAT(s.message(), HasSubstr("ne0 = 48 is not a multiple of the q4_0 block size 32"));
}

}  // namespace
}  // namespace whisper
