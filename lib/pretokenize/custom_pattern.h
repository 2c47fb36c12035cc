// Custom pre-tokenizer patterns (--pattern): any pattern PCRE2 accepts, run by PCRE2 itself
// (Debian's libpcre2-8, JIT-compiled unless the pattern calls a subroutine or recurses, where
// the JIT cannot see a call that loops), with PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF.
// PCRE2 defines what such a pattern means, so the split is exact by definition: full PCRE
// syntax, look-ahead and look-behind, \d \w \b, every Unicode property and script (\p{P},
// \p{Han}, ...). Its Unicode tables are those of the libpcre2 linked (Debian 12's 10.42: Unicode
// 14.0; Pcre2UnicodeVersion() says which), not the presets' (unicode_classes.h).
//
// The pieces are the matches found by repeated searching, each search starting where the
// previous match ended, as tiktoken and Hugging Face split; an empty string is never a match
// (PCRE2_NOTEMPTY: for `a*` the search goes on to the next "a"). Text that no match covers
// becomes pieces as pretokenizer.h says (each maximal stretch of valid UTF-8 one piece, each
// invalid byte one).
//
// A match that PCRE2 cannot finish within its limits (a JIT stack of 64 MB per thread, then
// the interpreter's 256 MB heap), or stops as a recursion that would loop, leaves the next
// character uncovered (still pieces, nothing lost), is counted by CustomPatternMatchFailures(),
// and the search goes on after that character.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pretokenize/pretokenizer.h"

namespace tokenmill {

// Fails with PCRE2's message and the offset in the pattern where it failed. `match_limit` is
// PCRE2's limit on the steps of one search: the default is PCRE2's largest, so no legitimate
// match is cut short however long the text (a pattern that backtracks exponentially takes as
// long as it takes, as in PCRE2 itself); the fuzz target sets a small one.
absl::StatusOr<std::unique_ptr<PreTokenizer>> CompileCustomPattern(
    std::string_view pattern, uint32_t match_limit = UINT32_MAX);

// "10.42 2022-12-11, Unicode 14.0.0": the PCRE2 library custom patterns run on.
std::string Pcre2Version();

// Searches, in this process so far, that stopped at a PCRE2 limit (see above).
uint64_t CustomPatternMatchFailures();

}  // namespace tokenmill
