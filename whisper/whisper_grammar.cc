// whisper/whisper.h's grammar fields (whisper_full_params.grammar_rules, n_grammar_rules,
// i_start_rule, grammar_penalty) onto whisper/grammar.h, and whisper_ggml_check_grammar.
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "whisper/status_codes.h"
#include "whisper/whisper_impl.h"

namespace whisper {
namespace api {
namespace {

static_assert(static_cast<uint32_t>(GrammarType::kEnd) == WHISPER_GRETYPE_END &&
                  static_cast<uint32_t>(GrammarType::kAlt) == WHISPER_GRETYPE_ALT &&
                  static_cast<uint32_t>(GrammarType::kRuleRef) == WHISPER_GRETYPE_RULE_REF &&
                  static_cast<uint32_t>(GrammarType::kChar) == WHISPER_GRETYPE_CHAR &&
                  static_cast<uint32_t>(GrammarType::kCharNot) == WHISPER_GRETYPE_CHAR_NOT &&
                  static_cast<uint32_t>(GrammarType::kCharRngUpper) == WHISPER_GRETYPE_CHAR_RNG_UPPER &&
                  static_cast<uint32_t>(GrammarType::kCharAlt) == WHISPER_GRETYPE_CHAR_ALT,
              "whisper/grammar.h's GrammarType must equal whisper.h's whisper_gretype");

// The C rules, each up to and including its END, one after the other into *out (NULL rules
// are left out: Build reports them). No allocation once out has the capacity.
void Flatten(const whisper_grammar_element** rules, size_t n_rules, std::vector<GrammarElement>* out) {
  out->clear();
  for (size_t r = 0; r < n_rules; ++r) {
    if (rules[r] == nullptr) continue;
    for (const whisper_grammar_element* e = rules[r];; ++e) {
      out->push_back(GrammarElement{static_cast<GrammarType>(static_cast<uint32_t>(e->type)), e->value});
      if (e->type == WHISPER_GRETYPE_END) break;
    }
  }
}

// Grammar::Init on the C rules (copied into elems first, whose rules it reads).
absl::Status Build(const whisper_grammar_element** rules, size_t n_rules, size_t start,
                   std::vector<GrammarElement>* elems, Grammar* grammar) {
  Flatten(rules, n_rules, elems);
  std::vector<const GrammarElement*> ptrs(n_rules, nullptr);
  size_t at = 0;
  for (size_t r = 0; r < n_rules; ++r) {
    if (rules[r] == nullptr) continue;
    ptrs[r] = elems->data() + at;
    while ((*elems)[at].type != GrammarType::kEnd) ++at;
    ++at;
  }
  return grammar->Init(ptrs.data(), n_rules, start);
}

}  // namespace

absl::Status PrepareGrammar(whisper_context* ctx, whisper_state* state, const whisper_full_params& params,
                            DecodingParams* dp) {
  // whisper.cpp: a non-NULL grammar_rules sets up the grammar; n_grammar_rules = 0 then reads
  // rules[i_start_rule] of no rules. NULL grammar_rules: no grammar, whatever n_grammar_rules says.
  if (params.grammar_rules == nullptr) return absl::OkStatus();
  if (params.n_grammar_rules == 0) {
    return WithKind(absl::InvalidArgumentError(
                        "whisper_full_params.grammar_rules is set but n_grammar_rules = 0 (expected the number of "
                        "rules)"),
                    ErrorKind::kSetup);
  }
  if (!std::isfinite(params.grammar_penalty)) {
    return WithKind(absl::InvalidArgumentError(absl::StrFormat(
                        "whisper_full_params.grammar_penalty = %g: expected a finite number", params.grammar_penalty)),
                    ErrorKind::kSetup);
  }
  Flatten(params.grammar_rules, params.n_grammar_rules, &state->grammar_elems_new);
  const bool same = !state->grammar.empty() && state->grammar_start == params.i_start_rule &&
                    state->grammar.n_rules() == params.n_grammar_rules &&
                    state->grammar_elems_new.size() == state->grammar_elems.size() &&
                    std::equal(state->grammar_elems_new.begin(), state->grammar_elems_new.end(),
                               state->grammar_elems.begin(), [](const GrammarElement& a, const GrammarElement& b) {
                                 return a.type == b.type && a.value == b.value;
                               });
  if (!same) {
    const absl::Status st = Build(params.grammar_rules, params.n_grammar_rules, params.i_start_rule,
                                  &state->grammar_elems, &state->grammar);
    if (!st.ok()) {
      return WithKind(absl::InvalidArgumentError(absl::StrCat("whisper_full_params.grammar_rules (i_start_rule ",
                                                              params.i_start_rule, "): ", st.message())),
                      ErrorKind::kSetup);
    }
    state->grammar_start = params.i_start_rule;
  }
  if (!state->grammar_vocab.built()) {
    const WhisperVocab& vocab = ctx->model->vocab();
    std::vector<std::string> texts(static_cast<size_t>(vocab.n_vocab()));
    for (int id = 0; id < vocab.n_vocab(); ++id) texts[id] = vocab.token(id);
    state->grammar_vocab.Build(texts, vocab.special().eot);
  }
  dp->grammar = &state->grammar;
  dp->grammar_vocab = &state->grammar_vocab;
  dp->grammar_penalty = params.grammar_penalty;
  return absl::OkStatus();
}

}  // namespace api
}  // namespace whisper

extern "C" int whisper_ggml_check_grammar(const whisper_grammar_element** rules, size_t n_rules, size_t i_start_rule,
                                          char* msg, size_t msg_size) {
  std::vector<whisper::GrammarElement> elems;
  whisper::Grammar grammar;
  const absl::Status st = whisper::api::Build(rules, rules == nullptr ? 0 : n_rules, i_start_rule, &elems, &grammar);
  if (st.ok()) return 0;
  if (msg != nullptr && msg_size > 0) std::snprintf(msg, msg_size, "%s", std::string(st.message()).c_str());
  return -1;
}
