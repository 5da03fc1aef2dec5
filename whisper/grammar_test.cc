// whisper/grammar.h against hand-derived results: small grammars written as element arrays (the
// binary form whisper.cpp's examples/grammar-parser.cpp produces), tokens accepted and rejected
// worked out by hand from whisper.cpp 1.8.5's rules (src/whisper.cpp whisper_grammar_*).
#include "whisper/grammar.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/alloc_counter.h"

namespace whisper {
namespace {

using ::testing::HasSubstr;
using T = GrammarType;

GrammarElement E(T t, uint32_t v = 0) { return GrammarElement{t, v}; }
GrammarElement C(char c) { return GrammarElement{T::kChar, static_cast<uint32_t>(static_cast<unsigned char>(c))}; }

// Rules as vectors; Init reads them through pointers.
struct Rules {
  std::vector<std::vector<GrammarElement>> rules;
  std::vector<const GrammarElement*> ptrs;
  absl::Status Build(Grammar* g, size_t start = 0) {
    ptrs.clear();
    for (const auto& r : rules) ptrs.push_back(r.data());
    return g->Init(ptrs.data(), ptrs.size(), start);
  }
};

// A vocabulary of `texts`; eot is one past the last text token, then a special name.
struct Vocab {
  std::vector<std::string> texts;
  GrammarVocab v;
  explicit Vocab(std::vector<std::string> t) : texts(std::move(t)) {
    const Token eot = static_cast<Token>(texts.size());
    texts.push_back("[_EOT_]");
    texts.push_back("[_BEG_]");
    v.Build(texts, eot);
  }
  Token id(const std::string& s) const {
    for (size_t i = 0; i < texts.size(); ++i) {
      if (texts[i] == s) return static_cast<Token>(i);
    }
    ADD_FAILURE() << "no token " << s;
    return -1;
  }
};

TEST(DecodeUtf8Test, WholePartialAndInvalid) {
  std::vector<uint32_t> cps;
  PartialUtf8 p = DecodeUtf8("ab", PartialUtf8{}, &cps);
  EXPECT_EQ(cps, (std::vector<uint32_t>{'a', 'b'}));
  EXPECT_EQ(p.n_remain, 0);
  // U+20AC is E2 82 AC: after E2 82, value (0xE2 & 0x1F) << 6 | 0x02 = 130, one byte to come.
  cps.clear();
  p = DecodeUtf8("\xe2\x82", PartialUtf8{}, &cps);
  EXPECT_TRUE(cps.empty());
  EXPECT_EQ(p.value, 130u);
  EXPECT_EQ(p.n_remain, 1);
  p = DecodeUtf8("\xac!", p, &cps);
  EXPECT_EQ(cps, (std::vector<uint32_t>{0x20AC, '!'}));
  // A continuation byte cannot start a character: no code points at all, n_remain -1.
  cps.clear();
  p = DecodeUtf8("a\x80", PartialUtf8{}, &cps);
  EXPECT_TRUE(cps.empty());
  EXPECT_EQ(p.n_remain, -1);
  // Nor can a non-continuation byte continue one.
  p = DecodeUtf8("a", PartialUtf8{130, 1}, &cps);
  EXPECT_TRUE(cps.empty());
  EXPECT_EQ(p.n_remain, -1);
}

// root ::= "ab" | "c"
Rules AbOrC() { return Rules{{{C('a'), C('b'), E(T::kAlt), C('c'), E(T::kEnd)}}, {}}; }

TEST(GrammarTest, InitialStacksOnePerAlternative) {
  Grammar g;
  Rules r = AbOrC();
  ASSERT_TRUE(r.Build(&g).ok());
  GrammarState s;
  g.Start(&s);
  ASSERT_EQ(s.stacks.size(), 2u);
  EXPECT_EQ(s.stacks.pos, (std::vector<uint32_t>{0, 3}));  // the 'a' and the 'c'
}

TEST(GrammarTest, PenalizesWhatNoStackAccepts) {
  Grammar g;
  Rules r = AbOrC();
  ASSERT_TRUE(r.Build(&g).ok());
  Vocab voc({"a", "b", "c", "ab", "abc", "x", ""});
  GrammarState s;
  g.Start(&s);
  GrammarScratch scratch;
  std::vector<float> logits(voc.texts.size(), 1.0f);
  g.Penalize(s, voc.v, 100.0f, logits.data(), &scratch);
  // "a" and "ab" are prefixes of "ab", "c" is whole; "abc" goes past the end (an empty stack
  // accepts only the end of a token); "" is no candidate; specials are never penalized.
  const std::vector<float> want = {1, -99, 1, 1, -99, -99, 1, 1, 1};
  EXPECT_EQ(logits, want);
}

TEST(GrammarTest, AcceptAdvancesAndRejectedTokenEndsTheGrammar) {
  Grammar g;
  Rules r = AbOrC();
  ASSERT_TRUE(r.Build(&g).ok());
  Vocab voc({"a", "b", "c", "x", "[_"});
  GrammarState s;
  GrammarScratch scratch;
  g.Start(&s);
  g.AcceptToken(voc.v, voc.id("a"), &s, &scratch);
  ASSERT_EQ(s.stacks.size(), 1u);
  EXPECT_EQ(s.stacks.pos, (std::vector<uint32_t>{1}));  // at the 'b'
  EXPECT_TRUE(g.Rejects(s, voc.v, voc.id("a"), &scratch));
  EXPECT_FALSE(g.Rejects(s, voc.v, voc.id("b"), &scratch));
  // "[_" (a text token of GPT-2's vocabulary) and specials are skipped by accept, as whisper.cpp.
  g.AcceptToken(voc.v, voc.id("[_"), &s, &scratch);
  g.AcceptToken(voc.v, voc.id("[_EOT_]"), &s, &scratch);
  EXPECT_EQ(s.stacks.pos, (std::vector<uint32_t>{1}));
  g.AcceptToken(voc.v, voc.id("b"), &s, &scratch);
  ASSERT_EQ(s.stacks.size(), 1u);  // one empty stack: complete
  EXPECT_TRUE(s.stacks.pos.empty());
  g.AcceptToken(voc.v, voc.id("x"), &s, &scratch);
  EXPECT_TRUE(s.stacks.empty());  // no stack took 'x': the grammar no longer constrains
  std::vector<float> logits(voc.texts.size(), 0.0f);
  g.Penalize(s, voc.v, 100.0f, logits.data(), &scratch);
  EXPECT_EQ(logits, std::vector<float>(voc.texts.size(), 0.0f));
}

TEST(GrammarTest, RangesRepetitionAndInverseSets) {
  // root ::= [a-c]+ [^x]  as the parser writes it: root ::= root_1 [^x];
  // root_1 ::= [a-c] root_1 | [a-c]
  Rules r{{{E(T::kRuleRef, 1), E(T::kCharNot, 'x'), E(T::kEnd)},
           {C('a'), E(T::kCharRngUpper, 'c'), E(T::kRuleRef, 1), E(T::kAlt), C('a'), E(T::kCharRngUpper, 'c'),
            E(T::kEnd)}},
          {}};
  Grammar g;
  ASSERT_TRUE(r.Build(&g).ok());
  Vocab voc({"abc", "cab", "d", "ax", "az", "abcd", "x"});
  GrammarState s;
  GrammarScratch scratch;
  g.Start(&s);
  EXPECT_FALSE(g.Rejects(s, voc.v, voc.id("abc"), &scratch));
  EXPECT_FALSE(g.Rejects(s, voc.v, voc.id("cab"), &scratch));
  EXPECT_TRUE(g.Rejects(s, voc.v, voc.id("d"), &scratch));   // needs one of a-c first
  EXPECT_TRUE(g.Rejects(s, voc.v, voc.id("ax"), &scratch));  // [^x]
  EXPECT_FALSE(g.Rejects(s, voc.v, voc.id("az"), &scratch));
  EXPECT_FALSE(g.Rejects(s, voc.v, voc.id("abcd"), &scratch));  // 'd' as [^x], then complete
  EXPECT_TRUE(g.Rejects(s, voc.v, voc.id("x"), &scratch));
  g.AcceptToken(voc.v, voc.id("abc"), &s, &scratch);
  EXPECT_FALSE(g.Rejects(s, voc.v, voc.id("d"), &scratch));
  EXPECT_TRUE(g.Rejects(s, voc.v, voc.id("x"), &scratch));
  g.AcceptToken(voc.v, voc.id("d"), &s, &scratch);
  ASSERT_EQ(s.stacks.size(), 1u);
  EXPECT_TRUE(s.stacks.pos.empty());
}

TEST(GrammarTest, CharacterSplitAcrossTokens) {
  // root ::= "€!" (U+20AC: E2 82 AC)
  Rules r{{{E(T::kChar, 0x20AC), C('!'), E(T::kEnd)}}, {}};
  Grammar g;
  ASSERT_TRUE(r.Build(&g).ok());
  Vocab voc({"\xe2\x82", "\xe2\x81", "\xac", "\xad", "\xe2\x82\xac!", "!"});
  GrammarState s;
  GrammarScratch scratch;
  g.Start(&s);
  // E2 82 can still become U+2080..U+20BF, which holds U+20AC; E2 81 only U+2040..U+207F.
  EXPECT_FALSE(g.Rejects(s, voc.v, voc.id("\xe2\x82"), &scratch));
  EXPECT_TRUE(g.Rejects(s, voc.v, voc.id("\xe2\x81"), &scratch));
  EXPECT_FALSE(g.Rejects(s, voc.v, voc.id("\xe2\x82\xac!"), &scratch));
  EXPECT_TRUE(g.Rejects(s, voc.v, voc.id("\xac"), &scratch));  // a continuation byte alone: invalid
  g.AcceptToken(voc.v, voc.id("\xe2\x82"), &s, &scratch);
  EXPECT_EQ(s.partial.n_remain, 1);
  EXPECT_EQ(s.stacks.pos, (std::vector<uint32_t>{0}));  // still before the euro sign
  EXPECT_FALSE(g.Rejects(s, voc.v, voc.id("\xac"), &scratch));  // completes U+20AC
  EXPECT_TRUE(g.Rejects(s, voc.v, voc.id("\xad"), &scratch));   // U+20AD
  EXPECT_TRUE(g.Rejects(s, voc.v, voc.id("!"), &scratch));      // not a continuation byte
  g.AcceptToken(voc.v, voc.id("\xac"), &s, &scratch);
  EXPECT_EQ(s.partial.n_remain, 0);
  EXPECT_EQ(s.stacks.pos, (std::vector<uint32_t>{1}));
}

TEST(GrammarTest, StateCopiesAreIndependent) {
  Grammar g;
  Rules r = AbOrC();
  ASSERT_TRUE(r.Build(&g).ok());
  Vocab voc({"a", "c"});
  GrammarState s, t;
  GrammarScratch scratch;
  g.Start(&s);
  t = s;  // a beam adopting another's sequence
  g.AcceptToken(voc.v, voc.id("c"), &t, &scratch);
  EXPECT_EQ(s.stacks.size(), 2u);
  EXPECT_EQ(t.stacks.size(), 1u);
  EXPECT_FALSE(g.Rejects(s, voc.v, voc.id("a"), &scratch));
  EXPECT_TRUE(g.Rejects(t, voc.v, voc.id("a"), &scratch));
}

TEST(GrammarTest, NoAllocationPerStepAfterWarmUp) {
  if (!ggml_testing::AllocCounter::Supported()) GTEST_SKIP() << "allocation counting unsupported here";
  Rules r{{{E(T::kRuleRef, 1), E(T::kEnd)},
           {C('a'), E(T::kCharRngUpper, 'z'), E(T::kRuleRef, 1), E(T::kAlt), E(T::kEnd)}},
          {}};
  Grammar g;
  ASSERT_TRUE(r.Build(&g).ok());
  Vocab voc({"ab", "cd", "q", "1", "xyz"});
  GrammarState s, beam;
  GrammarScratch scratch;
  std::vector<float> logits(voc.texts.size());
  auto step = [&] {
    g.Start(&s);
    for (int i = 0; i < 3; ++i) {
      g.Penalize(s, voc.v, 10.0f, logits.data(), &scratch);
      beam = s;
      g.AcceptToken(voc.v, voc.id("xyz"), &beam, &scratch);
      s = beam;
    }
  };
  step();
  ggml_testing::AllocCounter::Start();
  step();
  EXPECT_EQ(ggml_testing::AllocCounter::Stop(), 0);
}

TEST(GrammarTest, InitErrorsNameRuleAndElement) {
  Grammar g;
  Rules bad_ref{{{E(T::kRuleRef, 5), E(T::kEnd)}}, {}};
  absl::Status st = bad_ref.Build(&g);
  EXPECT_THAT(std::string(st.message()), HasSubstr("rule 0 element 0: WHISPER_GRETYPE_RULE_REF to rule 5"));
  Rules dangling{{{C('a'), E(T::kAlt), E(T::kCharRngUpper, 'z'), E(T::kEnd)}}, {}};
  st = dangling.Build(&g);
  EXPECT_THAT(std::string(st.message()), HasSubstr("rule 0 element 2: WHISPER_GRETYPE_CHAR_RNG_UPPER"));
  Rules bad_type{{{E(static_cast<T>(9)), E(T::kEnd)}}, {}};
  EXPECT_THAT(std::string(bad_type.Build(&g).message()), HasSubstr("type 9"));
  // root ::= opt root "x"; opt ::= "y" |  (opt can be empty, so root reaches root first)
  Rules left{{{E(T::kRuleRef, 1), E(T::kRuleRef, 0), C('x'), E(T::kEnd)}, {C('y'), E(T::kAlt), E(T::kEnd)}}, {}};
  EXPECT_THAT(std::string(left.Build(&g).message()), HasSubstr("rule 0 is left-recursive"));
  // Not left-recursive: root ::= "y" root | ""
  Rules right{{{C('y'), E(T::kRuleRef, 0), E(T::kAlt), E(T::kEnd)}}, {}};
  EXPECT_TRUE(right.Build(&g).ok());
  Rules ok = AbOrC();
  EXPECT_THAT(std::string(ok.Build(&g, 1).message()), HasSubstr("start rule 1"));
  EXPECT_TRUE(g.empty());
}

TEST(GrammarTest, AmbiguousGrammarIsAnErrorNotAHang) {
  // r_i ::= r_{i+1} | r_{i+1} for i < 30, r_30 ::= "z": one distinct stack, but whisper.cpp's
  // expansion visits 2^30 paths. Init stops at its budget and says so.
  Rules r;
  for (uint32_t i = 0; i < 30; ++i) r.rules.push_back({E(T::kRuleRef, i + 1), E(T::kAlt), E(T::kRuleRef, i + 1), E(T::kEnd)});
  r.rules.push_back({C('z'), E(T::kEnd)});
  Grammar g;
  EXPECT_THAT(std::string(r.Build(&g).message()), HasSubstr("ambiguous grammar"));
  // 10 levels (1024 paths) are fine.
  r.rules.erase(r.rules.begin(), r.rules.begin() + 20);
  for (uint32_t i = 0; i < 10; ++i) r.rules[i] = {E(T::kRuleRef, i + 1), E(T::kAlt), E(T::kRuleRef, i + 1), E(T::kEnd)};
  EXPECT_TRUE(r.Build(&g).ok());
}

// a ::= "a" a | "a"; r_1 ::= a r_1 | a; r_i ::= r_{i-1} r_i | r_{i-1}; root ::= r_k (the fuzzer's
// [...]++++ nesting): every level either leaves its continuation on the stack or not, so the
// start rule expands to 2^(k+1) distinct stacks, each with "a" on top.
Rules NestedPlus(uint32_t k) {
  Rules r;
  r.rules.push_back({E(T::kRuleRef, 1), E(T::kEnd)});                                  // root ::= a
  r.rules.push_back({C('a'), E(T::kRuleRef, 1), E(T::kAlt), C('a'), E(T::kEnd)});      // rule 1: a
  for (uint32_t i = 2; i <= k + 1; ++i) {
    r.rules.push_back({E(T::kRuleRef, i - 1), E(T::kRuleRef, i), E(T::kAlt), E(T::kRuleRef, i - 1), E(T::kEnd)});
  }
  r.rules[0] = {E(T::kRuleRef, k + 1), E(T::kEnd)};
  return r;
}

TEST(GrammarTest, ManyDistinctStacksUpToTheLimit) {
  Grammar g;
  Rules r = NestedPlus(11);  // 2^12 = 4096 = kMaxGrammarStacks stacks: still fine
  ASSERT_TRUE(r.Build(&g).ok());
  GrammarState s;
  g.Start(&s);
  EXPECT_EQ(s.stacks.size(), kMaxGrammarStacks);
  EXPECT_FALSE(s.truncated);
  Vocab voc({"a", "b"});
  GrammarScratch scratch;
  EXPECT_FALSE(g.Rejects(s, voc.v, voc.id("a"), &scratch));
  EXPECT_TRUE(g.Rejects(s, voc.v, voc.id("b"), &scratch));
  Rules over = NestedPlus(12);  // 8192: an error
  EXPECT_THAT(std::string(over.Build(&g).message()), HasSubstr("ambiguous grammar"));
  // 90 levels (the fuzzer's input, once a 10 s timeout): 2^91 paths, cut at the step budget.
  Rules deep = NestedPlus(90);
  EXPECT_THAT(std::string(deep.Build(&g).message()), HasSubstr("ambiguous grammar"));
}

// r_0 ::= r_1, ..., r_{n-1} ::= "a": the start rule reaches a character through n nested rules.
// 60000 overflowed the stack (Advance recurses once per rule); more than 2048 is an error.
TEST(GrammarTest, RuleChainsNestAtMost2048Deep) {
  const auto chain = [](uint32_t n) {
    Rules r;
    for (uint32_t i = 0; i + 1 < n; ++i) r.rules.push_back({E(T::kRuleRef, i + 1), E(T::kEnd)});
    r.rules.push_back({C('a'), E(T::kEnd)});
    return r;
  };
  Grammar g;
  Rules ok = chain(2000);
  EXPECT_TRUE(ok.Build(&g).ok());
  for (uint32_t n : {2100u, 8000u}) {
    Rules deep = chain(n);
    EXPECT_THAT(std::string(deep.Build(&g).message()), HasSubstr("more than 2048 rules nested")) << n;
  }
}

}  // namespace
}  // namespace whisper

namespace whisper {
namespace {

// The checks before Advance are linear in the rules: n_i ::= n_{i+1}, ..., n_last ::= "" (each
// link nullable only once the next one is known: a fixpoint of passes over the rules needed one
// pass per link, 12 s for 60000), then root ::= n_0 root "x", left-recursive through the whole
// chain, and the same root over a chain ending in "y", which is not. 60000 links: the quadratic
// checks took 12 s (minutes under ASan); linear ones take milliseconds.
TEST(GrammarTest, NullableChainsAreCheckedInLinearTime) {
  const auto chain = [](uint32_t n, bool empty_end) {
    Rules r;
    r.rules.push_back({E(T::kRuleRef, 1), E(T::kRuleRef, 0), C('x'), E(T::kEnd)});  // rule 0: root
    for (uint32_t i = 1; i < n; ++i) r.rules.push_back({E(T::kRuleRef, i + 1), E(T::kEnd)});
    if (empty_end) {
      r.rules.push_back({E(T::kAlt), E(T::kEnd)});  // n_last ::= ""
    } else {
      r.rules.push_back({C('y'), E(T::kEnd)});
    }
    return r;
  };
  Grammar g;
  Rules left = chain(60000, true);
  EXPECT_THAT(std::string(left.Build(&g).message()), HasSubstr("rule 0 is left-recursive"));
  Rules fine = chain(1500, false);  // nests 1500 deep: within Advance's 2048
  EXPECT_TRUE(fine.Build(&g).ok());
  Rules deep = chain(60000, false);
  EXPECT_THAT(std::string(deep.Build(&g).message()), HasSubstr("more than 2048 rules nested"));
}

}  // namespace
}  // namespace whisper
