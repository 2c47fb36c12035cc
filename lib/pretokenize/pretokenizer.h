// PreTokenizer: splits text into the pieces ("words") inside which BPE merges happen.
//
// Contract: Split() calls `on_piece` once per piece, in order; the pieces are non-empty and
// concatenate to exactly `text`, for any bytes (invalid UTF-8 included). Split() is const and
// safe to call from many threads at once on one PreTokenizer. It needs no memory that grows
// with the text.
//
// Semantics: the pieces are what PCRE finds by matching the pattern repeatedly, each match
// starting where the previous one ended (leftmost-first alternation, greedy quantifiers,
// look-ahead), as tiktoken and Hugging Face split. Character classes come from the Unicode
// tables in unicode_classes.h (Unicode 15.0; \s is White_Space, as in Rust's regex, so U+180E is
// not \s although PCRE2 says it is). The presets (presets.h) run on hand-written scanners; qwen2
// expects NFC-normalized text, as Qwen2 normalizes before splitting (not done here).
//
// Invalid UTF-8: each byte that does not begin a well-formed UTF-8 sequence (a lone
// continuation byte, an overlong form, a surrogate, a code point above U+10FFFF, a sequence cut
// short, also by the end of the text) is a piece of its own. No match crosses it: for the
// pattern it is like the end of the text, so the valid text on either side splits as if it
// stood alone. This is what PCRE2 does with PCRE2_MATCH_INVALID_UTF. NUL is an ordinary
// character ([^\s\p{L}\p{N}]).
//
// Custom patterns (preset "custom", PreTokenizerConfig::pattern) run on PCRE2 (custom_pattern.h):
// any pattern PCRE2 accepts, with PCRE2's meaning (its own Unicode tables); a custom pattern
// exactly equal to a preset's pattern selects that preset's scanner instead. Text that no match
// covers becomes pieces too: each maximal stretch of valid UTF-8 one piece, each invalid byte
// one. An empty string is never a match (PCRE2_NOTEMPTY).
#pragma once

#include <memory>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "pretokenize/pretokenizer_config.h"

namespace tokenmill {

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;

  // Builds the pre-tokenizer that `config` names. Fails with a message naming the preset or
  // the unsupported construct of a custom pattern.
  static absl::StatusOr<std::unique_ptr<PreTokenizer>> Create(const PreTokenizerConfig& config);

  virtual void Split(std::string_view text,
                     absl::FunctionRef<void(std::string_view piece)> on_piece) const = 0;
};

}  // namespace tokenmill
