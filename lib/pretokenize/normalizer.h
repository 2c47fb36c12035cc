// Normalizer: what NormalizerConfig (pretokenizer_config.h) does to text before it is counted or
// encoded: the normal form (NFC or NFKC), then BERT's steps, then lowercasing. Built on ICU
// (Unicode 15.0 in Debian 12's ICU 72), chosen over utf8proc for speed: bench/RESULTS.md,
// "Normalization".
//
// Semantics, as Hugging Face's Sequence[NFKC, Lowercase] (or Sequence[NFKC, BertNormalizer])
// gives them:
// - The normal form is Unicode's (UAX #15): ICU's Normalizer2 NFC or NFKC instance.
// - Lowercasing is the full Unicode lowercase mapping of each code point on its own
//   (UnicodeData.txt plus SpecialCasing.txt's unconditional mappings), Rust's char::to_lowercase,
//   which Hugging Face's Lowercase normalizer applies character by character: "İ" (U+0130)
//   becomes "i̇" (U+0069 U+0307), and "Σ" (U+03A3) is always "σ" (U+03C3), never the final
//   "ς" that Rust's str::to_lowercase or ICU's own context-sensitive lowercasing give at the end
//   of a word. No language-specific rules (Turkish, Lithuanian). The result of lowercasing is not
//   normalized again (as in Hugging Face).
// - BERT's steps (Hugging Face's BertNormalizer, normalizers/bert.rs), after the normal form and
//   before lowercasing, each over code points with Hugging Face's definitions:
//   - clean_text: NUL, U+FFFD and every control character go, whitespace becomes ' '. Control
//     means general category Cc, Cf or Co (the unicode_categories crate's is_other: not Cn,
//     not Cs) except "\t", "\n" and "\r"; whitespace means those three or White_Space. A
//     character that is both (U+000B, U+000C, U+0085, U+001C..U+001F) is a control: it goes.
//   - handle_chinese_chars: a ' ' before and after each code point of BERT's CJK ranges
//     (U+3400..4DBF, 4E00..9FFF, F900..FAFF, 20000..2A6DF, 2A700..2B81F, 2B920..2CEAF,
//     2F800..2FA1F: Hugging Face's is_chinese_char, which skips U+2B820..2B91F), assigned or not.
//   - strip_accents: NFD, then every code point of general category Mn goes. The text stays
//     decomposed: "한" (U+D55C) comes out as its jamo U+1112 U+1161 U+11AB.
//   Categories, White_Space and NFD are ICU's (Unicode 15.0); Hugging Face's categories are
//   Unicode 8.0's (the unicode_categories crate) and its NFD is Unicode 9.0's, so for characters
//   assigned or recategorized since, the two differ (tests/data/bert_hf_differences.txt).
// - Invalid UTF-8: each byte that is not part of a well-formed UTF-8 sequence (the rule of
//   pretokenizer.h) is copied unchanged, in place, so that byte fallback later sees it, and
//   normalization does not combine or reorder across it: the valid text on either side comes
//   out as if it stood alone.
// - Text already in the form (and lowercase, when asked) comes out byte-identical; for
//   config.identity() Normalize only appends.
//
// Normalize() is const and safe to call from many threads at once on one Normalizer. Beyond
// growing `out` it allocates only per-thread scratch buffers that are reused from call to call.
#pragma once

#include <unicode/uversion.h>

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pretokenize/pretokenizer_config.h"

U_NAMESPACE_BEGIN
class Normalizer2;
U_NAMESPACE_END

namespace tokenmill {

class Normalizer {
 public:
  // Fails only when ICU cannot give the form (the message says which).
  static absl::StatusOr<std::unique_ptr<Normalizer>> Create(const NormalizerConfig& config);

  // Appends `text`, normalized, to `out`.
  void Normalize(std::string_view text, std::string& out) const;

  const NormalizerConfig& config() const { return config_; }

 private:
  Normalizer(const NormalizerConfig& config, const icu::Normalizer2* form,
             const icu::Normalizer2* nfd)
      : config_(config), form_(form), nfd_(nfd) {}

  // Normalize() when a BERT step is on: each step in turn.
  void NormalizeWithBertSteps(std::string_view text, std::string& out) const;

  NormalizerConfig config_;
  const icu::Normalizer2* form_;  // ICU's singleton; null for NormalForm::kNone
  const icu::Normalizer2* nfd_;   // ICU's NFD singleton for strip_accents, else null
};

}  // namespace tokenmill
