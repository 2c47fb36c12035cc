// Differential testing of the pre-tokenizer against the PCRE2 oracle (tests only): generated
// strings, and the set of code points whose classes PCRE2 10.42 (Unicode 14, its own \s) sees
// differently from tokenmill's tables (Unicode 15, White_Space as in Rust/tiktoken).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "pretokenize/pretokenizer.h"

namespace tokenmill::testing {

// The pieces `pretokenizer` splits `text` into.
std::vector<std::string_view> SplitToVector(const PreTokenizer& pretokenizer,
                                            std::string_view text);

// True for the code points where PCRE2 (UTF + UCP) and tokenmill's tables disagree on \s, \p{L},
// \p{N}, [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] or [\p{Ll}\p{Lm}\p{Lo}\p{M}]. Computed once by asking
// PCRE2 about every code point. The PCRE2 comparisons leave these out; there the expected pieces
// come from tiktoken itself (tests/pretokenize_tiktoken_pieces_test.cc).
const std::vector<bool>& Pcre2ClassDisagreements();

// Whether `text` contains a code point of Pcre2ClassDisagreements().
bool ContainsDisagreement(std::string_view text);

// A random string that mixes what the preset patterns distinguish: ASCII letters, digits and
// punctuation, every whitespace kind, contractions in all cases ('s 'S 'Ll 'ſ), letters of every
// case category, combining marks, CJK, emoji with ZWJ, non-ASCII digits, random code points
// (none where PCRE2 and tokenmill disagree), and with `invalid_utf8` also NUL and invalid UTF-8
// (lone continuation bytes, overlongs, surrogates, truncated sequences).
std::string RandomPreTokenizerText(std::mt19937_64& rng, bool invalid_utf8);

// Escapes `text` for failure messages: printable ASCII as is, everything else as \xHH.
std::string EscapeForMessage(std::string_view text);

}  // namespace tokenmill::testing
