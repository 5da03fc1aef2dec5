// Grammar-constrained sampling: whisper.cpp 1.8.5's GBNF pushdown automaton (src/whisper.cpp,
// "Grammar - ported from llama.cpp": whisper_grammar_init, whisper_grammar_advance_stack,
// whisper_grammar_accept, whisper_grammar_reject_candidates, whisper_suppress_invalid_grammar,
// whisper_grammar_accept_token), on rules in whisper.h's binary form (whisper_grammar_element:
// the text parser is the programs', apps/common/gbnf_parser.h, as whisper.cpp keeps its parser
// in examples/grammar-parser.cpp).
//
// A grammar is a list of rules; a rule is a sequence of elements ending in kEnd, its alternatives
// separated by kAlt. A parse state is a set of pushdown stacks of element positions, each stack's
// top a character element (kChar or kCharNot, possibly followed by kCharRngUpper / kCharAlt
// elements); an empty stack means the start rule is complete. Each step, every text token whose
// bytes no stack can consume (whisper.cpp's candidates: ids below eot with a non-empty text) has
// `penalty` subtracted from its logit; after a token is sampled, every stack advances over its
// code points. Same semantics as whisper.cpp, and three differences that change no result:
//   - stacks are kept without duplicates (whisper.cpp may hold the same stack twice; the set of
//     tokens rejected is the same);
//   - rules are checked when the grammar is built (Grammar::Init): whisper.cpp asserts, reads out
//     of bounds or recurses without end on a bad reference, a dangling range element or a
//     left-recursive rule; here those are errors;
//   - an expansion that would make more than kMaxGrammarStacks stacks (an ambiguous grammar, whose
//     stacks grow exponentially in whisper.cpp) keeps the first kMaxGrammarStacks: an error at
//     Init, a silent cut during decoding (GrammarState::truncated says so).
// Memory: the scratch and state vectors keep their capacity, so after the first steps (warm-up)
// no step allocates.
#ifndef GGML_WHISPER_WHISPER_GRAMMAR_H_
#define GGML_WHISPER_WHISPER_GRAMMAR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "whisper/tokens.h"

namespace whisper {

// whisper.h's enum whisper_gretype, value for value.
enum class GrammarType : uint32_t {
  kEnd = 0,           // end of a rule
  kAlt = 1,           // start of another alternative of the rule
  kRuleRef = 2,       // a reference to rule `value`
  kChar = 3,          // a character (code point `value`), or the start of a set / range
  kCharNot = 4,       // an inverse set [^...]: its first character
  kCharRngUpper = 5,  // the inclusive upper end of a range whose lower end precedes it
  kCharAlt = 6,       // another character of the set
};

struct GrammarElement {
  GrammarType type;
  uint32_t value;
};

// The most stacks one parse state holds (see the header comment).
inline constexpr size_t kMaxGrammarStacks = 4096;

// An incomplete UTF-8 sequence at the end of the decoded text (whisper.cpp whisper_partial_utf8):
// the bits so far and the bytes still to come; n_remain = -1 marks an invalid sequence.
struct PartialUtf8 {
  uint32_t value = 0;
  int n_remain = 0;
};

// whisper.cpp's decode_utf8: the code points of the NUL-terminated `src` continuing `start`,
// appended to *out (none at all when an invalid sequence is found: then n_remain = -1), and the
// partial sequence at the end. Lead bytes 10xxxxxx are invalid; continuation bytes after a lead
// byte are taken without checking their top bits, as whisper.cpp does.
PartialUtf8 DecodeUtf8(const char* src, PartialUtf8 start, std::vector<uint32_t>* out);

// A set of pushdown stacks: element positions (indices into Grammar's elements), stacks one
// after the other, bottom first, without duplicates. An open-addressing index by content makes
// adding a stack O(its length) however many the set holds (a linear scan made an ambiguous
// grammar's 2^20 expansion steps cost 2^20 x 4096 comparisons).
struct GrammarStacks {
  std::vector<uint32_t> pos;
  std::vector<uint32_t> end;  // end[i]: one past stack i's top in pos
  std::vector<uint32_t> slots;    // the index: stack i + 1 per used slot, 0 free; power-of-two size
  std::vector<uint32_t> slot_of;  // [size()]: stack i's slot
  size_t size() const { return end.size(); }
  bool empty() const { return end.empty(); }
  uint32_t begin_of(size_t i) const { return i == 0 ? 0 : end[i - 1]; }
  // Appends stack[0, n) unless the set holds it already (false then, and when it holds `limit`
  // stacks: *full is set). Allocates only while the vectors grow past their capacity.
  bool Add(const uint32_t* stack, size_t n, size_t limit, bool* full);
  void clear() {
    for (uint32_t s : slot_of) slots[s] = 0;
    slot_of.clear();
    pos.clear();
    end.clear();
  }
};

// What one sequence's grammar tracks (whisper.cpp whisper_grammar minus its rules). Copied when a
// beam adopts another's sequence; copy-assignment reuses capacity.
struct GrammarState {
  GrammarStacks stacks;  // empty: the grammar rejected a sampled token and constrains no more
  PartialUtf8 partial;   // the bytes of a character split across tokens
  bool truncated = false;  // an expansion hit kMaxGrammarStacks
};

// The vocabulary as the grammar sees it: each token's text up to its first NUL byte (whisper.cpp
// reads id_to_token with c_str()), its code points decoded from a fresh start, and the
// candidates: ids below eot whose text is not empty (whisper_suppress_invalid_grammar).
class GrammarVocab {
 public:
  // texts[id] for id in [0, texts.size()) are the tokens' bytes (whisper_token_to_str's), eot the
  // first special id.
  void Build(const std::vector<std::string>& texts, Token eot);
  bool built() const { return !off_.empty(); }
  int n_tokens() const { return static_cast<int>(text_off_.size()) - 1; }
  const char* text(Token id) const { return text_.data() + text_off_[id]; }
  const std::vector<Token>& candidates() const { return candidates_; }

 private:
  friend class Grammar;
  std::vector<char> text_;           // NUL-terminated texts
  std::vector<uint32_t> text_off_;   // [n_tokens + 1]
  std::vector<uint32_t> cps_;        // code points of every token, from a fresh start
  std::vector<uint32_t> off_;        // [n_tokens + 1] into cps_
  std::vector<PartialUtf8> partial_;  // [n_tokens]
  std::vector<Token> candidates_;
  int max_cps_ = 0;  // the most code points of one token
};

// Per-thread working memory of Grammar's steps (one per decoding lane).
struct GrammarScratch {
  struct Level {
    std::vector<Token> cands;
    GrammarStacks stacks;
  };
  std::vector<Level> levels;      // one per code point depth of the rejection search
  std::vector<uint32_t> work;     // the stack being expanded
  GrammarStacks next;             // AcceptToken's next stacks
  std::vector<uint8_t> accepted;  // [n_tokens]
  std::vector<uint32_t> cps;      // code points decoded from a partial character
  std::vector<uint32_t> off;
  std::vector<PartialUtf8> partial;
  std::vector<uint32_t> token_cps;
  size_t expansions = 0;
  int depth = 0;  // Advance's recursion depth
};

class Grammar {
 public:
  // Builds the grammar from n_rules rules (rules[i]: rule i's elements, ending at its first kEnd)
  // starting at rule start_rule, and its initial stacks (whisper_grammar_init). Errors
  // (InvalidArgument naming the rule and element index): n_rules == 0, start_rule >= n_rules, a
  // NULL rule, an unknown element type, a kRuleRef to no rule, a kCharRngUpper or kCharAlt not
  // after a character element, a left-recursive rule (one that can reach itself before consuming a
  // character: whisper.cpp recurses without end), more than kMaxGrammarStacks initial stacks.
  // Input whose rules lack their kEnd is read out of bounds, as by whisper.cpp: the caller's
  // contract.
  absl::Status Init(const GrammarElement* const* rules, size_t n_rules, size_t start_rule);
  bool empty() const { return elems_.empty(); }
  size_t n_rules() const { return rule_start_.size(); }
  size_t start_rule() const { return start_rule_; }
  // Rule i's elements, its kEnd included.
  const GrammarElement* rule(size_t i) const { return elems_.data() + rule_start_[i]; }
  size_t rule_size(size_t i) const;

  // *state = the initial state (a copy of Init's: no allocation once state has the capacity).
  void Start(GrammarState* state) const { *state = initial_; }

  // whisper_suppress_invalid_grammar: logits[id] -= penalty for every candidate of vocab that no
  // stack of `state` accepts. No-op when state has no stacks. logits: vocab.n_tokens() floats.
  void Penalize(const GrammarState& state, const GrammarVocab& vocab, float penalty, float* logits,
                GrammarScratch* scratch) const;
  // Whether candidate `id` would be penalized (for tests; same search as Penalize).
  bool Rejects(const GrammarState& state, const GrammarVocab& vocab, Token id, GrammarScratch* scratch) const;

  // whisper_grammar_accept_token: advances state over token `id`'s code points (a token whose
  // text starts with "[_", a special token's name, is skipped, as whisper.cpp does). No-op when
  // state has no stacks.
  void AcceptToken(const GrammarVocab& vocab, Token id, GrammarState* state, GrammarScratch* scratch) const;
  // Advances state over code point chr (whisper_grammar_accept).
  void AcceptChar(uint32_t chr, GrammarState* state, GrammarScratch* scratch) const;

 private:
  struct View;  // a candidate's code points and partial character (grammar.cc)
  bool IsEnd(uint32_t pos) const {
    return elems_[pos].type == GrammarType::kEnd || elems_[pos].type == GrammarType::kAlt;
  }
  // (whether chr matches the character element at pos, the position after its set).
  bool MatchChar(uint32_t pos, uint32_t chr, uint32_t* after) const;
  bool MatchPartial(uint32_t pos, PartialUtf8 partial) const;
  // whisper_grammar_advance_stack on scratch->work, the stacks reached added to *out.
  void Advance(GrammarScratch* scratch, GrammarStacks* out, bool* truncated) const;
  // Pushes stack[0 .. top) of `from` then `after` (unless it ends its alternative) on work, and
  // advances it into *out.
  void AdvanceAfter(const GrammarStacks& from, size_t i, uint32_t after, GrammarScratch* s, GrammarStacks* out,
                    bool* truncated) const;
  void AcceptLevel(const GrammarStacks& stacks, const Token* cands, size_t n, int depth, const View& view,
                   GrammarScratch* s) const;
  void Search(const GrammarState& state, const GrammarVocab& vocab, const Token* cands, size_t n,
              GrammarScratch* scratch) const;
  absl::Status CheckElements(const GrammarElement* const* rules, size_t n_rules) const;
  // Per rule: 1 when it can match the empty string. Linear in the elements.
  std::vector<uint8_t> NullableRules() const;
  absl::Status CheckLeftRecursion() const;

  std::vector<GrammarElement> elems_;  // every rule, each ending in kEnd
  std::vector<uint32_t> rule_start_;
  size_t start_rule_ = 0;
  GrammarState initial_;
};

}  // namespace whisper

#endif  // GGML_WHISPER_WHISPER_GRAMMAR_H_
