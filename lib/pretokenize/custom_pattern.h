// Custom pre-tokenizer patterns (--pattern): a small backtracking matcher with PCRE's semantics
// (leftmost-first alternation, greedy or lazy quantifiers, look-ahead) over tokenmill's Unicode
// class tables, for the subset of PCRE syntax listed in pretokenizer.h ("Custom patterns").
// Anything outside the subset is rejected by CompileCustomPattern with the offset and the
// construct, never approximated.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "pretokenize/pretokenizer.h"

namespace tokenmill {

absl::StatusOr<std::unique_ptr<PreTokenizer>> CompileCustomPattern(std::string_view pattern);

}  // namespace tokenmill
