// Fuzz target: the GBNF parser (apps/common/gbnf_parser.h ParseGbnf) on any bytes, then the
// library's check of what it produced (whisper_ggml_check_grammar: rule references, ranges,
// left recursion, the initial expansion), once per rule as the start rule.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "apps/common/gbnf_parser.h"
#include "whisper/whisper.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<whisper::GbnfGrammar> g = whisper::ParseGbnf(text);
  if (!g.ok()) {
    if (g.status().message().empty()) {
      fprintf(stderr, "gbnf_parser_fuzzer: error without a message\n");
      abort();
    }
    return 0;
  }
  std::vector<const whisper_grammar_element*> rules = g->CRules();
  for (const auto& rule : g->rules) {
    if (rule.empty() || rule.back().type != WHISPER_GRETYPE_END) {
      fprintf(stderr, "gbnf_parser_fuzzer: a rule without its END\n");
      abort();
    }
  }
  char msg[256];
  for (size_t start = 0; start < rules.size() && start < 8; ++start) {
    msg[0] = '\0';
    if (whisper_ggml_check_grammar(rules.data(), rules.size(), start, msg, sizeof(msg)) != 0 && msg[0] == '\0') {
      fprintf(stderr, "gbnf_parser_fuzzer: check failed without a message\n");
      abort();
    }
  }
  return 0;
}
