// The PCRE2 oracle for the pre-tokenizer (tests and benchmarks only): the original pattern run by
// PCRE2 10.42 with PCRE2_UTF | PCRE2_UCP (look-ahead included, JIT-compiled), by repeated
// matching from the end of the previous match, as tiktoken and Hugging Face do.
//
// Invalid UTF-8 (PCRE2_MATCH_INVALID_UTF): no match covers an invalid byte. Text that no match
// covers is cut as tokenmill's rule says (pretokenizer.h): each invalid byte is a piece, each
// maximal stretch of valid UTF-8 between them is a piece.
//
// Not thread-safe (one JIT stack per instance); no match, depth or heap limit applies.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "pretokenize/pretokenizer.h"

namespace tokenmill::testing {

// Fails with PCRE2's message if `pattern` does not compile.
absl::StatusOr<std::unique_ptr<PreTokenizer>> MakePcre2PreTokenizer(std::string_view pattern);

}  // namespace tokenmill::testing
