// apps/common/gbnf_parser.h against element arrays derived by hand from whisper.cpp 1.8.5's
// examples/grammar-parser.cpp rules (symbol ids in order of first mention, generated rules
// "<rule>_<id>" for groups and repetitions, the S* / S+ / S? rewrites).
#include "apps/common/gbnf_parser.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace whisper {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

struct El {
  whisper_gretype type;
  uint32_t value;
};
bool operator==(const whisper_grammar_element& a, const El& b) { return a.type == b.type && a.value == b.value; }

constexpr whisper_gretype kEnd = WHISPER_GRETYPE_END, kAlt = WHISPER_GRETYPE_ALT, kRef = WHISPER_GRETYPE_RULE_REF,
                          kChar = WHISPER_GRETYPE_CHAR, kNot = WHISPER_GRETYPE_CHAR_NOT,
                          kUpper = WHISPER_GRETYPE_CHAR_RNG_UPPER, kCharAlt = WHISPER_GRETYPE_CHAR_ALT;

// The elements of a literal string.
std::vector<El> Str(const std::string& s) {
  std::vector<El> out;
  for (unsigned char c : s) out.push_back({kChar, c});
  return out;
}
std::vector<El> Cat(std::initializer_list<std::vector<El>> parts) {
  std::vector<El> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

void ExpectRule(const GbnfGrammar& g, size_t id, const std::vector<El>& want) {
  ASSERT_LT(id, g.rules.size());
  const auto& got = g.rules[id];
  ASSERT_EQ(got.size(), want.size()) << "rule " << id;
  for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(got[i] == want[i]) << "rule " << id << " element " << i;
}

TEST(GbnfParserTest, AlternativesAndRange) {
  absl::StatusOr<GbnfGrammar> g = ParseGbnf("root ::= \"ab\" | [a-c]\n");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->symbol_ids, ElementsAre(Pair("root", 0u)));
  ExpectRule(*g, 0, {{kChar, 'a'}, {kChar, 'b'}, {kAlt, 0}, {kChar, 'a'}, {kUpper, 'c'}, {kEnd, 0}});
}

// whisper.cpp's grammars/colors.gbnf (without its comments).
TEST(GbnfParserTest, ColorsGrammar) {
  absl::StatusOr<GbnfGrammar> g = ParseGbnf(
      "root   ::= init color \".\"\n"
      "prompt ::= init \".\"\n"
      "\n"
      "# leading space is very important!\n"
      "init ::= \" red, green, blue\"\n"
      "\n"
      "color ::= \", \" (\"red\" | \"green\" | \"blue\")\n");
  ASSERT_TRUE(g.ok()) << g.status();
  // root 0; init 1 and color 2 (mentioned in root); prompt 3; the group in color: color_4.
  EXPECT_THAT(g->symbol_ids,
              ElementsAre(Pair("color", 2u), Pair("color_4", 4u), Pair("init", 1u), Pair("prompt", 3u), Pair("root", 0u)));
  ExpectRule(*g, 0, {{kRef, 1}, {kRef, 2}, {kChar, '.'}, {kEnd, 0}});
  ExpectRule(*g, 1, Cat({Str(" red, green, blue"), {{kEnd, 0}}}));
  ExpectRule(*g, 2, {{kChar, ','}, {kChar, ' '}, {kRef, 4}, {kEnd, 0}});
  ExpectRule(*g, 3, {{kRef, 1}, {kChar, '.'}, {kEnd, 0}});
  ExpectRule(*g, 4, Cat({Str("red"), {{kAlt, 0}}, Str("green"), {{kAlt, 0}}, Str("blue"), {{kEnd, 0}}}));
  EXPECT_EQ(g->RuleId("prompt"), 3);
  EXPECT_EQ(g->RuleId("nope"), -1);
  const std::vector<const whisper_grammar_element*> c = g->CRules();
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c[2], g->rules[2].data());
}

TEST(GbnfParserTest, RepetitionRewrites) {
  absl::StatusOr<GbnfGrammar> g = ParseGbnf("root ::= [0-9]+ \"x\"? y*\ny ::= \"y\"");
  ASSERT_TRUE(g.ok()) << g.status();
  // root 0; [0-9]+ -> root_1 ::= [0-9] root_1 | [0-9]; "x"? -> root_2 ::= "x" |; y 3;
  // y* -> root_4 ::= y root_4 |.
  EXPECT_THAT(g->symbol_ids, ElementsAre(Pair("root", 0u), Pair("root_1", 1u), Pair("root_2", 2u),
                                         Pair("root_4", 4u), Pair("y", 3u)));
  ExpectRule(*g, 0, {{kRef, 1}, {kRef, 2}, {kRef, 4}, {kEnd, 0}});
  ExpectRule(*g, 1, {{kChar, '0'}, {kUpper, '9'}, {kRef, 1}, {kAlt, 0}, {kChar, '0'}, {kUpper, '9'}, {kEnd, 0}});
  ExpectRule(*g, 2, {{kChar, 'x'}, {kAlt, 0}, {kEnd, 0}});
  ExpectRule(*g, 3, {{kChar, 'y'}, {kEnd, 0}});
  ExpectRule(*g, 4, {{kRef, 3}, {kRef, 4}, {kAlt, 0}, {kEnd, 0}});
}

TEST(GbnfParserTest, EscapesInverseClassesUtf8AndLayout) {
  // Comments, a group continued on the next line, CRLF line ends, escapes, UTF-8 (é is C3 A9).
  absl::StatusOr<GbnfGrammar> g =
      ParseGbnf("# top\r\nroot ::= [^\\n\"a-c] \"\\x41\\u00e9\\t\" ( \"\xc3\xa9\"\r\n | \"\\[\" ) # end\r\n");
  ASSERT_TRUE(g.ok()) << g.status();
  ExpectRule(*g, 0,
             {{kNot, '\n'}, {kCharAlt, '"'}, {kCharAlt, 'a'}, {kUpper, 'c'}, {kChar, 0x41}, {kChar, 0xE9},
              {kChar, '\t'}, {kRef, 1}, {kEnd, 0}});
  ExpectRule(*g, 1, {{kChar, 0xE9}, {kAlt, 0}, {kChar, '['}, {kEnd, 0}});
}

TEST(GbnfParserTest, ErrorsNameLineColumnAndWhatWasExpected) {
  const auto err = [](const char* text) {
    absl::StatusOr<GbnfGrammar> g = ParseGbnf(text);
    EXPECT_FALSE(g.ok()) << text;
    return g.ok() ? std::string() : std::string(g.status().message());
  };
  EXPECT_EQ(err("root ::= \"a\"\nfoo = \"b\""),
            "line 2, column 5: expected '::=' after the rule name 'foo' (found '= \"b\"')");
  EXPECT_THAT(err("root ::= \"abc"), HasSubstr("line 1, column 10: expected a closing '\"' for this string"));
  EXPECT_THAT(err("root ::= ( \"a\""),
              HasSubstr("line 1, column 15: expected ')' to close the group at line 1, column 10 (found the end"));
  EXPECT_THAT(err("root ::= *"), HasSubstr("line 1, column 10: expected an item before '*'"));
  EXPECT_THAT(err("root ::= \"\\q\""), HasSubstr("line 1, column 11: expected an escape"));
  EXPECT_THAT(err("root ::= \"\\x4\""), HasSubstr("line 1, column 14: expected 2 hex digits after \\x"));
  EXPECT_THAT(err("root ::= [a-"), HasSubstr("line 1, column 10: expected a closing ']'"));
  EXPECT_THAT(err("root ::= \"a\" }"), HasSubstr("line 1, column 14: expected an item, '|', or the end of the line"));
  EXPECT_THAT(err("\n\n  ::= \"a\""), HasSubstr("line 3, column 3: expected a rule name"));
  EXPECT_EQ(err("root ::= x\n"), "rule 'x' (first used at line 1, column 10) is not defined");
  EXPECT_THAT(err(""), HasSubstr("no rules"));
  EXPECT_THAT(err("# only a comment\n"), HasSubstr("no rules"));
}

// 20000 nested groups (a 40 KB file) overflowed the recursive parser's stack; 1000 still parse.
TEST(GbnfParserTest, GroupsNestAtMost1000Deep) {
  const auto nested = [](int n) {
    return "root ::= " + std::string(n, '(') + "\"a\"" + std::string(n, ')');
  };
  EXPECT_TRUE(ParseGbnf(nested(1000)).ok());
  for (int n : {1001, 20000}) {
    absl::StatusOr<GbnfGrammar> g = ParseGbnf(nested(n));
    ASSERT_FALSE(g.ok());
    EXPECT_THAT(std::string(g.status().message()), HasSubstr("line 1, column 1010: groups nested more than 1000 deep"));
  }
}

// whisper-cli would parse "root ::= \"a\"" and drop the rest silently; a NUL is an error at its place.
TEST(GbnfParserTest, NulByteIsAnErrorAtItsPlace) {
  const std::string text("root ::= \"a\"\n\0garbage", 22);
  absl::StatusOr<GbnfGrammar> g = ParseGbnf(text);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(std::string(g.status().message()), "line 2, column 1: a NUL byte (0x00); expected GBNF text");
}

TEST(GbnfParserTest, FormatsAsWhisperCppPrintsIt) {
  absl::StatusOr<GbnfGrammar> g = ParseGbnf("root ::= [a-c] \"x\" | [^\\n] other\nother ::= \"\xc3\xa9\"\n");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(FormatGbnf(*g), "root ::= [a-c] [x] | [^<U+000A>] other \nother ::= [<U+00E9>] \n");
}

}  // namespace
}  // namespace whisper
