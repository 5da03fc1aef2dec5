// GBNF grammar text -> whisper.h's binary grammar rules (whisper_grammar_element arrays), as
// whisper.cpp 1.8.5's examples/grammar-parser.cpp (grammar_parser::parse) writes them: the same
// rules, element for element, and the same symbol ids (a rule's id is the order of its first
// mention; a group "( ... )" or a repetition "*", "+", "?" becomes a generated rule named
// "<rule>_<id>"). Like whisper.cpp's parser, this one lives with the programs, not the library
// (whisper/grammar.h runs the rules).
//
// GBNF: rules `name ::= alternatives`, one per line (a rule may continue on the next line inside
// parentheses or after '|'); names are letters, digits and '-'; items are "literal strings",
// [character classes] with ranges a-z and [^...] for inverse classes, rule names, ( groups ), and
// the repetitions * + ?; '#' starts a comment to the end of the line. Escapes in strings and
// classes: \xHH, \uHHHH, \UHHHHHHHH, \t, \r, \n, \\, \", \[, \]. Text after a NUL byte is ignored
// (whisper-cli reads the grammar as a C string).
//
// Differences from whisper.cpp's parser: errors name the line and column (1-based; columns count
// bytes) and what was expected (whisper.cpp prints "expecting ... at <rest of the text>" and
// returns no rules); a rule used but never defined is an error (whisper.cpp accepts it and then
// crashes or reads out of bounds when sampling), as is a grammar without rules.
#ifndef GGML_WHISPER_APPS_COMMON_GBNF_PARSER_H_
#define GGML_WHISPER_APPS_COMMON_GBNF_PARSER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "whisper/whisper.h"

namespace whisper {

struct GbnfGrammar {
  std::map<std::string, uint32_t> symbol_ids;              // rule name -> rule index
  std::vector<std::vector<whisper_grammar_element>> rules;  // [rule index], each ending in END
  // Pointers to each rule's elements, for whisper_full_params.grammar_rules (valid while this
  // grammar is neither changed nor destroyed).
  std::vector<const whisper_grammar_element*> CRules() const;
  // The index of rule `name`, or -1 when there is no such rule.
  int64_t RuleId(const std::string& name) const;
};

// Parses GBNF `text`. Errors (InvalidArgument): "line L, column C: expected ..." for a syntax error;
// "rule 'x' (first used at line L, column C) is not defined"; "no rules" for a grammar without any;
// "line L, column C: a NUL byte" for text holding one (whisper-cli would silently stop there).
absl::StatusOr<GbnfGrammar> ParseGbnf(absl::string_view text);

// The rules as GBNF text, one line per rule (whisper.cpp's grammar_parser::print_grammar, which
// whisper-cli prints to stderr before transcribing).
std::string FormatGbnf(const GbnfGrammar& grammar);

}  // namespace whisper

#endif  // GGML_WHISPER_APPS_COMMON_GBNF_PARSER_H_
