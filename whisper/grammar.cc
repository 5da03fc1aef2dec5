#include "whisper/grammar.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"

namespace whisper {
namespace {

// Expansions (Advance calls) one advance may take before it stops (see GrammarState::truncated):
// a chain of n optional items can otherwise take 2^n.
// 2^18 is 64x what the 4096 stacks themselves need, and keeps a worst case (a chain of nested
// repetitions) near 0.1 s under ASan.
constexpr size_t kMaxExpansions = size_t{1} << 18;
// Rule references Advance follows one inside another (its recursion depth): a chain of 60000
// rules, each starting with the next, overflowed the stack. Also a truncation.
constexpr int kMaxAdvanceDepth = 2048;

bool IsCharElement(GrammarType t) {
  return t == GrammarType::kChar || t == GrammarType::kCharNot || t == GrammarType::kCharAlt ||
         t == GrammarType::kCharRngUpper;
}

}  // namespace

PartialUtf8 DecodeUtf8(const char* src, PartialUtf8 start, std::vector<uint32_t>* out) {
  static const int kLookup[16] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 3, 4};
  const size_t base = out->size();
  const char* pos = src;
  uint32_t value = start.value;
  int n_remain = start.n_remain;
  // Continue the previous token's character.
  while (*pos != 0 && n_remain > 0) {
    const uint8_t b = static_cast<uint8_t>(*pos);
    if ((b >> 6) != 2) {
      out->resize(base);
      return PartialUtf8{0, -1};
    }
    value = (value << 6) + (b & 0x3F);
    ++pos;
    --n_remain;
  }
  if (start.n_remain > 0 && n_remain == 0) out->push_back(value);
  while (*pos != 0) {
    const uint8_t first = static_cast<uint8_t>(*pos);
    n_remain = kLookup[first >> 4] - 1;
    if (n_remain < 0) {
      out->resize(base);
      return PartialUtf8{0, n_remain};
    }
    const uint8_t mask = static_cast<uint8_t>((1 << (7 - n_remain)) - 1);
    value = first & mask;
    ++pos;
    while (*pos != 0 && n_remain > 0) {
      value = (value << 6) + (static_cast<uint8_t>(*pos) & 0x3F);
      ++pos;
      --n_remain;
    }
    if (n_remain == 0) out->push_back(value);
  }
  return PartialUtf8{value, n_remain};
}

void GrammarVocab::Build(const std::vector<std::string>& texts, Token eot) {
  const size_t n = texts.size();
  text_.clear();
  text_off_.assign(1, 0);
  cps_.clear();
  off_.assign(n + 1, 0);
  partial_.assign(n, PartialUtf8{});
  candidates_.clear();
  max_cps_ = 0;
  for (size_t id = 0; id < n; ++id) {
    const char* c = texts[id].c_str();  // whisper.cpp reads up to the first NUL
    text_.insert(text_.end(), c, c + std::strlen(c) + 1);
    text_off_.push_back(static_cast<uint32_t>(text_.size()));
    off_[id] = static_cast<uint32_t>(cps_.size());
    partial_[id] = DecodeUtf8(c, PartialUtf8{}, &cps_);
    max_cps_ = std::max(max_cps_, static_cast<int>(cps_.size() - off_[id]));
    cps_.push_back(0);  // the terminator the search stops at, as whisper.cpp's
    if (static_cast<Token>(id) < eot && !texts[id].empty()) candidates_.push_back(static_cast<Token>(id));
  }
  off_[n] = static_cast<uint32_t>(cps_.size());
}

// A candidate's code points (0-terminated; a decoded 0 ends them too, as in whisper.cpp) and the
// partial character after them.
struct Grammar::View {
  const uint32_t* cps;
  const uint32_t* off;
  const PartialUtf8* partial;
  const uint32_t* text_off;  // with `fresh`: an empty text keeps the state's partial character
  bool fresh;
  PartialUtf8 start;
  uint32_t cp(Token t, int depth) const { return cps[off[t] + depth]; }
  PartialUtf8 part(Token t) const { return fresh && text_off[t + 1] - text_off[t] == 1 ? start : partial[t]; }
};

size_t Grammar::rule_size(size_t i) const {
  const size_t end = i + 1 < rule_start_.size() ? rule_start_[i + 1] : elems_.size();
  return end - rule_start_[i];
}

bool Grammar::MatchChar(uint32_t pos, uint32_t chr, uint32_t* after) const {
  const bool positive = elems_[pos].type == GrammarType::kChar;
  bool found = false;
  do {
    if (elems_[pos + 1].type == GrammarType::kCharRngUpper) {
      found = found || (elems_[pos].value <= chr && chr <= elems_[pos + 1].value);
      pos += 2;
    } else {
      found = found || elems_[pos].value == chr;
      pos += 1;
    }
  } while (elems_[pos].type == GrammarType::kCharAlt);
  *after = pos;
  return found == positive;
}

bool Grammar::MatchPartial(uint32_t pos, PartialUtf8 partial) const {
  const bool positive = elems_[pos].type == GrammarType::kChar;
  const int n_remain = partial.n_remain;
  // An invalid sequence, or a 7-bit character split across 2 bytes (overlong).
  if (n_remain < 0 || (n_remain == 1 && partial.value < 2)) return false;
  uint32_t low = partial.value << (n_remain * 6);
  const uint32_t high = low | ((1u << (n_remain * 6)) - 1);
  if (low == 0) {
    if (n_remain == 2) low = 1u << 11;
    if (n_remain == 3) low = 1u << 16;
  }
  do {
    if (elems_[pos + 1].type == GrammarType::kCharRngUpper) {
      if (elems_[pos].value <= high && low <= elems_[pos + 1].value) return positive;
      pos += 2;
    } else {
      if (low <= elems_[pos].value && elems_[pos].value <= high) return positive;
      pos += 1;
    }
  } while (elems_[pos].type == GrammarType::kCharAlt);
  return !positive;
}

namespace {

uint64_t HashStack(const uint32_t* stack, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;  // FNV-1a-style mixing with a 64-bit odd multiplier
  for (size_t i = 0; i < n; ++i) h = (h ^ stack[i]) * 0x100000001B3ull;
  return h ^ (h >> 29);
}

}  // namespace

bool GrammarStacks::Add(const uint32_t* stack, size_t n, size_t limit, bool* full) {
  if (slots.size() < 2 * (size() + 1)) {  // keep the load under 1/2: rehash into twice the slots
    std::fill(slots.begin(), slots.end(), 0u);
    slots.resize(std::max<size_t>(64, 2 * slots.size()), 0u);
    for (size_t i = 0; i < size(); ++i) {
      size_t s = HashStack(pos.data() + begin_of(i), end[i] - begin_of(i)) & (slots.size() - 1);
      while (slots[s] != 0) s = (s + 1) & (slots.size() - 1);
      slots[s] = static_cast<uint32_t>(i + 1);
      slot_of[i] = static_cast<uint32_t>(s);
    }
  }
  size_t s = HashStack(stack, n) & (slots.size() - 1);
  for (; slots[s] != 0; s = (s + 1) & (slots.size() - 1)) {
    const size_t i = slots[s] - 1, b = begin_of(i);
    if (end[i] - b == n && std::equal(stack, stack + n, pos.begin() + b)) return false;
  }
  if (size() >= limit) {
    *full = true;
    return false;
  }
  pos.insert(pos.end(), stack, stack + n);
  end.push_back(static_cast<uint32_t>(pos.size()));
  slots[s] = static_cast<uint32_t>(size());
  slot_of.push_back(static_cast<uint32_t>(s));
  return true;
}

namespace {

// Appends `stack` to *out unless it holds it already or is full.
void AddUnique(const std::vector<uint32_t>& stack, GrammarStacks* out, bool* truncated) {
  out->Add(stack.data(), stack.size(), kMaxGrammarStacks, truncated);
}

}  // namespace

void Grammar::Advance(GrammarScratch* s, GrammarStacks* out, bool* truncated) const {
  std::vector<uint32_t>& work = s->work;
  if (++s->expansions > kMaxExpansions || s->depth >= kMaxAdvanceDepth) {
    *truncated = true;
    return;
  }
  if (work.empty()) {
    AddUnique(work, out, truncated);
    return;
  }
  const uint32_t pos = work.back();
  const GrammarElement& e = elems_[pos];
  if (e.type != GrammarType::kRuleRef) {
    // kChar or kCharNot: Init's checks leave no other element on top of a stack.
    AddUnique(work, out, truncated);
    return;
  }
  work.pop_back();
  uint32_t sub = rule_start_[e.value];
  ++s->depth;
  for (;;) {  // each alternative of the rule
    const size_t mark = work.size();
    if (!IsEnd(pos + 1)) work.push_back(pos + 1);
    if (!IsEnd(sub)) work.push_back(sub);
    Advance(s, out, truncated);
    work.resize(mark);
    while (!IsEnd(sub)) ++sub;
    if (elems_[sub].type != GrammarType::kAlt) break;
    ++sub;
  }
  --s->depth;
  work.push_back(pos);
}

void Grammar::AdvanceAfter(const GrammarStacks& from, size_t i, uint32_t after, GrammarScratch* s,
                           GrammarStacks* out, bool* truncated) const {
  s->work.assign(from.pos.begin() + from.begin_of(i), from.pos.begin() + from.end[i] - 1);
  if (!IsEnd(after)) s->work.push_back(after);
  s->expansions = 0;
  Advance(s, out, truncated);
}

void Grammar::AcceptChar(uint32_t chr, GrammarState* state, GrammarScratch* s) const {
  s->next.clear();
  const GrammarStacks& stacks = state->stacks;
  for (size_t i = 0; i < stacks.size(); ++i) {
    if (stacks.end[i] == stacks.begin_of(i)) continue;  // complete: nothing more to accept
    uint32_t after = 0;
    if (MatchChar(stacks.pos[stacks.end[i] - 1], chr, &after)) {
      AdvanceAfter(stacks, i, after, s, &s->next, &state->truncated);
    }
  }
  std::swap(state->stacks, s->next);
}

void Grammar::AcceptToken(const GrammarVocab& vocab, Token id, GrammarState* state, GrammarScratch* s) const {
  if (state->stacks.empty() || id < 0 || id >= vocab.n_tokens()) return;
  const char* text = vocab.text(id);
  if (text[0] == '[' && text[1] == '_') return;  // whisper.cpp skips "[_..." (special tokens' names)
  s->token_cps.clear();
  const PartialUtf8 partial = DecodeUtf8(text, state->partial, &s->token_cps);
  for (uint32_t chr : s->token_cps) AcceptChar(chr, state, s);
  state->partial = partial;
}

// whisper_grammar_reject_candidates(_for_stack), as a search that marks the accepted candidates:
// a candidate is rejected when every stack rejects it; a stack accepts it when its code point at
// `depth` matches the stack's top and some stack the top's successor advances to accepts the
// rest, or when its code points are used up and what is left (a partial character) can still
// match.
void Grammar::AcceptLevel(const GrammarStacks& stacks, const Token* cands, size_t n, int depth, const View& v,
                          GrammarScratch* s) const {
  uint8_t* accepted = s->accepted.data();
  GrammarScratch::Level& next = s->levels[depth + 1];  // levels is sized before the search
  for (size_t i = 0; i < stacks.size(); ++i) {
    const uint32_t b = stacks.begin_of(i), e = stacks.end[i];
    if (b == e) {  // a complete parse accepts only the end of a token
      for (size_t k = 0; k < n; ++k) {
        const Token t = cands[k];
        if (!accepted[t] && v.cp(t, depth) == 0 && v.part(t).n_remain == 0) accepted[t] = 1;
      }
      continue;
    }
    const uint32_t top = stacks.pos[e - 1];
    next.cands.clear();
    uint32_t after = 0;
    for (size_t k = 0; k < n; ++k) {
      const Token t = cands[k];
      if (accepted[t]) continue;
      const uint32_t chr = v.cp(t, depth);
      if (chr == 0) {
        const PartialUtf8 p = v.part(t);
        if (p.n_remain == 0 || MatchPartial(top, p)) accepted[t] = 1;
      } else if (MatchChar(top, chr, &after)) {
        next.cands.push_back(t);
      }
    }
    if (next.cands.empty()) continue;
    MatchChar(top, 0, &after);
    next.stacks.clear();
    bool truncated = false;
    AdvanceAfter(stacks, i, after, s, &next.stacks, &truncated);
    AcceptLevel(next.stacks, next.cands.data(), next.cands.size(), depth + 1, v, s);
  }
}

void Grammar::Search(const GrammarState& state, const GrammarVocab& vocab, const Token* cands, size_t n,
                     GrammarScratch* s) const {
  s->accepted.assign(static_cast<size_t>(vocab.n_tokens()), 0);
  // A partial character adds at most one code point to a token's.
  const size_t depth = static_cast<size_t>(vocab.max_cps_) + 3;
  if (s->levels.size() < depth) s->levels.resize(depth);
  View v{vocab.cps_.data(), vocab.off_.data(), vocab.partial_.data(), vocab.text_off_.data(), true, state.partial};
  if (state.partial.n_remain > 0) {
    // Each candidate's code points continue the state's partial character.
    s->cps.clear();
    s->off.resize(vocab.off_.size());
    s->partial.resize(vocab.partial_.size());
    for (size_t k = 0; k < n; ++k) {
      const Token t = cands[k];
      s->off[t] = static_cast<uint32_t>(s->cps.size());
      s->partial[t] = DecodeUtf8(vocab.text(t), state.partial, &s->cps);
      s->cps.push_back(0);
    }
    v = View{s->cps.data(), s->off.data(), s->partial.data(), vocab.text_off_.data(), false, state.partial};
  }
  AcceptLevel(state.stacks, cands, n, 0, v, s);
}

void Grammar::Penalize(const GrammarState& state, const GrammarVocab& vocab, float penalty, float* logits,
                       GrammarScratch* s) const {
  if (state.stacks.empty() || elems_.empty()) return;
  const std::vector<Token>& cands = vocab.candidates();
  Search(state, vocab, cands.data(), cands.size(), s);
  for (Token t : cands) {
    if (!s->accepted[t]) logits[t] -= penalty;
  }
}

bool Grammar::Rejects(const GrammarState& state, const GrammarVocab& vocab, Token id, GrammarScratch* s) const {
  if (state.stacks.empty() || elems_.empty() || id < 0 || id >= vocab.n_tokens()) return false;
  Search(state, vocab, &id, 1, s);
  return s->accepted[id] == 0;
}

absl::Status Grammar::CheckElements(const GrammarElement* const* rules, size_t n_rules) const {
  for (size_t r = 0; r < n_rules; ++r) {
    if (rules[r] == nullptr) return absl::InvalidArgumentError(absl::StrFormat("rule %d is NULL", r));
    GrammarType prev = GrammarType::kAlt;  // what starts an alternative
    for (size_t j = 0;; ++j) {
      const GrammarElement e = rules[r][j];
      const auto where = [&](const char* what) {
        return absl::InvalidArgumentError(absl::StrFormat("rule %d element %d: %s", r, j, what));
      };
      if (static_cast<uint32_t>(e.type) > static_cast<uint32_t>(GrammarType::kCharAlt)) {
        return where(absl::StrFormat("type %u is not a whisper_gretype (0 .. 6)", static_cast<uint32_t>(e.type)).c_str());
      }
      if (e.type == GrammarType::kEnd) break;
      if (e.type == GrammarType::kRuleRef && e.value >= n_rules) {
        return where(absl::StrFormat("WHISPER_GRETYPE_RULE_REF to rule %u, but there are %d rules", e.value, n_rules)
                         .c_str());
      }
      if (e.type == GrammarType::kCharRngUpper && prev != GrammarType::kChar && prev != GrammarType::kCharNot &&
          prev != GrammarType::kCharAlt) {
        return where("WHISPER_GRETYPE_CHAR_RNG_UPPER must follow a CHAR, CHAR_NOT or CHAR_ALT element");
      }
      if (e.type == GrammarType::kCharAlt && !IsCharElement(prev)) {
        return where("WHISPER_GRETYPE_CHAR_ALT must follow a character element");
      }
      prev = e.type;
    }
  }
  return absl::OkStatus();
}

// Rules that can match the empty string: an alternative is nullable when all its elements are
// references to nullable rules. A worklist over the references (each counted down once, when the
// rule it names becomes nullable) makes this linear in the elements; a fixpoint of passes over all
// rules took one pass per link of a chain (quadratic: 12 s for 60000 chained rules).
std::vector<uint8_t> Grammar::NullableRules() const {
  const size_t n = rule_start_.size();
  std::vector<uint8_t> nullable(n, 0);
  std::vector<uint32_t> alt_rule, pending;          // per alternative: its rule, refs not yet nullable
  std::vector<std::vector<uint32_t>> users(n);      // per rule: alternatives referring to it
  std::vector<uint32_t> todo;
  for (size_t r = 0; r < n; ++r) {
    uint32_t refs = 0;
    bool refs_only = true;
    for (uint32_t p = rule_start_[r];; ++p) {
      const GrammarElement& e = elems_[p];
      if (IsEnd(p)) {
        const uint32_t alt = static_cast<uint32_t>(alt_rule.size());
        alt_rule.push_back(static_cast<uint32_t>(r));
        pending.push_back(refs_only ? refs : UINT32_MAX);  // UINT32_MAX: never nullable
        if (refs_only && refs == 0 && !nullable[r]) nullable[r] = 1, todo.push_back(static_cast<uint32_t>(r));
        if (refs_only) {
          for (uint32_t q = p - refs; q < p; ++q) users[elems_[q].value].push_back(alt);
        }
        if (e.type == GrammarType::kEnd) break;
        refs = 0;
        refs_only = true;
        continue;
      }
      if (e.type == GrammarType::kRuleRef && refs_only) {
        ++refs;
      } else {
        refs_only = false;
      }
    }
  }
  while (!todo.empty()) {
    const uint32_t x = todo.back();
    todo.pop_back();
    for (uint32_t alt : users[x]) {
      if (--pending[alt] == 0 && !nullable[alt_rule[alt]]) {
        nullable[alt_rule[alt]] = 1;
        todo.push_back(alt_rule[alt]);
      }
    }
  }
  return nullable;
}

absl::Status Grammar::CheckLeftRecursion() const {
  const size_t n = rule_start_.size();
  const std::vector<uint8_t> nullable = NullableRules();
  // Rules each rule can expand to before consuming a character; a cycle among the rules reachable
  // from the start rule would make Advance recurse without end.
  std::vector<std::vector<uint32_t>> left(n), any(n);
  for (size_t r = 0; r < n; ++r) {
    bool at_left = true;
    for (uint32_t p = rule_start_[r];; ++p) {
      const GrammarElement& e = elems_[p];
      if (IsEnd(p)) {
        if (e.type == GrammarType::kEnd) break;
        at_left = true;
        continue;
      }
      if (e.type != GrammarType::kRuleRef) {
        at_left = false;
        continue;
      }
      any[r].push_back(e.value);
      if (at_left) left[r].push_back(e.value);
      at_left = at_left && nullable[e.value];
    }
  }
  std::vector<uint8_t> reach(n, 0);
  std::vector<uint32_t> todo = {static_cast<uint32_t>(start_rule_)};
  reach[start_rule_] = 1;
  while (!todo.empty()) {
    const uint32_t r = todo.back();
    todo.pop_back();
    for (uint32_t x : any[r]) {
      if (!reach[x]) reach[x] = 1, todo.push_back(x);
    }
  }
  // A cycle of left edges among the reachable rules: one depth-first search over them (0: not
  // visited, 1: on the current path, 2: done), linear in rules and edges. The rule an edge of the
  // path returns to is left-recursive. Rules reached from a reachable rule are reachable.
  std::vector<uint8_t> color(n, 0);
  std::vector<std::pair<uint32_t, uint32_t>> path;  // (rule, next left edge to follow)
  for (size_t root = 0; root < n; ++root) {
    if (!reach[root] || color[root] != 0) continue;
    color[root] = 1;
    path.assign(1, {static_cast<uint32_t>(root), 0});
    while (!path.empty()) {
      auto& [r, next] = path.back();
      if (next == left[r].size()) {
        color[r] = 2;
        path.pop_back();
        continue;
      }
      const uint32_t x = left[r][next++];
      if (color[x] == 1) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "rule %d is left-recursive (it can reach itself before matching a character)", x));
      }
      if (color[x] == 0) {
        color[x] = 1;
        path.push_back({x, 0});
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Grammar::Init(const GrammarElement* const* rules, size_t n_rules, size_t start_rule) {
  elems_.clear();
  rule_start_.clear();
  initial_ = GrammarState();
  if (rules == nullptr || n_rules == 0) return absl::InvalidArgumentError("no rules (n_rules = 0 or rules NULL)");
  if (start_rule >= n_rules) {
    return absl::InvalidArgumentError(absl::StrFormat("start rule %d is not one of the %d rules", start_rule, n_rules));
  }
  absl::Status st = CheckElements(rules, n_rules);
  if (st.ok()) {
    for (size_t r = 0; r < n_rules; ++r) {
      rule_start_.push_back(static_cast<uint32_t>(elems_.size()));
      const GrammarElement* e = rules[r];
      while (e->type != GrammarType::kEnd) elems_.push_back(*e++);
      elems_.push_back(GrammarElement{GrammarType::kEnd, 0});
    }
    start_rule_ = start_rule;
    st = CheckLeftRecursion();
  }
  if (st.ok()) {
    // One stack per alternative of the start rule, advanced to its first characters.
    GrammarScratch s;
    s.expansions = 0;
    for (uint32_t pos = rule_start_[start_rule];;) {
      s.work.clear();
      if (!IsEnd(pos)) s.work.push_back(pos);
      Advance(&s, &initial_.stacks, &initial_.truncated);
      while (!IsEnd(pos)) ++pos;
      if (elems_[pos].type != GrammarType::kAlt) break;
      ++pos;
    }
    if (initial_.truncated) {
      st = absl::InvalidArgumentError(absl::StrFormat(
          "the start rule expands to more than %d parse stacks or %d steps (an ambiguous grammar), or "
          "through more than %d rules nested one in another",
          kMaxGrammarStacks, kMaxExpansions, kMaxAdvanceDepth));
    }
  }
  if (!st.ok()) {
    elems_.clear();
    rule_start_.clear();
    initial_ = GrammarState();
  }
  return st;
}

}  // namespace whisper
