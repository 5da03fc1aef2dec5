// Compares a converted model with one of the shared header-only files
// (../shared/data/header-only-ggml-tiny{.en,}.bin). Those files were written by an old converter
// that replaced the bytes of every token holding only part of a multi-byte UTF-8 character with
// U+FFFD (../shared/data/README.md); the converter now stores every token's raw bytes, as
// whisper.cpp's models/convert-pt-to-ggml.py does. So the files must match byte for byte except
// those tokens, and each of those must be exactly the old converter's replacement of the new
// bytes (Python's bytes.decode("utf-8", "replace").encode(), which whisper::RepairUtf8 follows).
#ifndef GGML_WHISPER_TOOLS_CONVERT_LEGACY_HEADER_TEST_UTIL_H_
#define GGML_WHISPER_TOOLS_CONVERT_LEGACY_HEADER_TEST_UTIL_H_

#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tools/convert/ggml_file.h"
#include "apps/common/utf8.h"

namespace ggml_whisper::convert {

struct LegacyVocabDiff {
  int n_tokens = 0;        // tokens compared (both files store the same number)
  int n_replaced = 0;      // tokens whose bytes differ
  int n_old_with_fffd = 0; // tokens of the old file holding U+FFFD (EF BF BD), replaced or genuine
};

// Checks, with gtest failures naming the token id: both vocabularies have the same size; every
// token is byte-identical, or else the new token is not valid UTF-8 alone and the old one is
// whisper::RepairUtf8 of it. Returns the counts for the caller to pin.
inline LegacyVocabDiff CompareWithLegacyVocab(const std::vector<std::string>& converted,
                                              const std::vector<std::string>& legacy) {
  LegacyVocabDiff d;
  EXPECT_EQ(converted.size(), legacy.size());
  d.n_tokens = static_cast<int>(std::min(converted.size(), legacy.size()));
  for (int id = 0; id < d.n_tokens; ++id) {
    const std::string& now = converted[id];
    const std::string& old = legacy[id];
    if (old.find("\xEF\xBF\xBD") != std::string::npos) ++d.n_old_with_fffd;
    if (now == old) continue;
    ++d.n_replaced;
    EXPECT_NE(whisper::RepairUtf8(now), now) << "token " << id << " differs but is valid UTF-8";
    EXPECT_EQ(whisper::RepairUtf8(now), old)
        << "token " << id << ": the old file's bytes are not the replacement of the new ones";
  }
  return d;
}

// The byte offset of the vocabulary count in a ggml model file: magic, 11 hparams, n_mel and
// n_fft, then n_mel x n_fft float32 filters (whisper.cpp's whisper_model_load order).
inline size_t VocabularyOffset(const GgmlModelFile& f) {
  return 4 + 11 * 4 + 2 * 4 + static_cast<size_t>(f.mel.n_mel) * f.mel.n_fft * 4;
}

}  // namespace ggml_whisper::convert

#endif  // GGML_WHISPER_TOOLS_CONVERT_LEGACY_HEADER_TEST_UTIL_H_
