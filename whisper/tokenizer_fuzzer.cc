// Fuzz target: the prompt tokenizer (whisper/tokenizer.h) on arbitrary text, with tiny.en's
// vocabulary read once from a model file: $WHISPER_FUZZ_VOCAB if set, else the header-only
// tiny.en file of the shared data folder (testdata::SharedData, $GGML_WHISPER_SHARED).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "testdata/paths.h"
#include "whisper/model_file.h"
#include "whisper/tokenizer.h"

namespace {
std::vector<std::string>* g_vocab = nullptr;
whisper::Tokenizer* g_tokenizer = nullptr;

[[noreturn]] void Die(const std::string& msg) {
  fprintf(stderr, "tokenizer_fuzzer: %s\n", msg.c_str());
  abort();
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* env = getenv("WHISPER_FUZZ_VOCAB");
  const std::string path =
      env != nullptr && *env != '\0' ? std::string(env) : testdata::SharedData("header-only-ggml-tiny.en.bin");
  std::ifstream in(path, std::ios::binary);
  if (!in) Die("cannot open the vocabulary model '" + path + "' (set WHISPER_FUZZ_VOCAB or GGML_WHISPER_SHARED)");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  absl::StatusOr<whisper::ModelFileHeader> header = whisper::ParseModelFileHeader(bytes.data(), bytes.size(), path);
  if (!header.ok()) Die(std::string(header.status().message()));
  g_vocab = new std::vector<std::string>(std::move(header->tokens));
  g_tokenizer = new whisper::Tokenizer(*g_vocab);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);

  // The split's pieces concatenate to the text.
  std::string joined;
  for (const std::string& piece : whisper::Tokenizer::Split(text)) {
    if (piece.empty()) Die("empty piece");
    joined += piece;
  }
  if (joined != text) Die("the pieces do not concatenate to the text");

  // Every byte is either in a token or skipped; every id is a stored vocabulary entry.
  int n_skipped = 0;
  const std::vector<whisper::Token> tokens = g_tokenizer->EncodeSkipping(text, &n_skipped);
  size_t token_bytes = 0;
  for (whisper::Token t : tokens) {
    if (t < 0 || static_cast<size_t>(t) >= g_vocab->size()) Die("token id out of range");
    token_bytes += (*g_vocab)[t].size();
  }
  if (n_skipped < 0 || token_bytes + static_cast<size_t>(n_skipped) != text.size()) {
    Die("token bytes + skipped bytes != text bytes");
  }

  absl::StatusOr<std::vector<whisper::Token>> strict = g_tokenizer->Encode(text);
  if (strict.ok() != (n_skipped == 0)) Die("Encode and EncodeSkipping disagree");
  if (strict.ok() && *strict != tokens) Die("Encode and EncodeSkipping give different tokens");

  const whisper::Token found = g_tokenizer->Find(text);
  if (found != -1 && (found < 0 || static_cast<size_t>(found) >= g_vocab->size() || (*g_vocab)[found] != text)) {
    Die("Find returned a token that is not the text");
  }
  return 0;
}
