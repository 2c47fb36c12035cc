// Normalizer: what NormalizerConfig (pretokenizer_config.h) does to text before it is counted or
// encoded: the normal form (NFC or NFKC), then lowercasing. Built on ICU (Unicode 15.0 in
// Debian 12's ICU 72), chosen over utf8proc for speed: bench/RESULTS.md, "Normalization".
//
// Semantics, as Hugging Face's Sequence[NFKC, Lowercase] gives them:
// - The normal form is Unicode's (UAX #15): ICU's Normalizer2 NFC or NFKC instance.
// - Lowercasing is the full Unicode lowercase mapping of each code point on its own
//   (UnicodeData.txt plus SpecialCasing.txt's unconditional mappings), Rust's char::to_lowercase,
//   which Hugging Face's Lowercase normalizer applies character by character: "İ" (U+0130)
//   becomes "i̇" (U+0069 U+0307), and "Σ" (U+03A3) is always "σ" (U+03C3), never the final
//   "ς" that Rust's str::to_lowercase or ICU's own context-sensitive lowercasing give at the end
//   of a word. No language-specific rules (Turkish, Lithuanian). The result of lowercasing is not
//   normalized again (as in Hugging Face).
// - Invalid UTF-8: each byte that is not part of a well-formed UTF-8 sequence (the rule of
//   pretokenizer.h) is copied unchanged, in place, so that byte fallback later sees it, and
//   normalization does not combine or reorder across it: the valid text on either side comes
//   out as if it stood alone.
// - Text already in the form (and lowercase, when asked) comes out byte-identical; for
//   config.identity() Normalize only appends.
//
// Normalize() is const and safe to call from many threads at once on one Normalizer. Beyond
// growing `out` it allocates only a per-thread scratch buffer that is reused from call to call.
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
  Normalizer(const NormalizerConfig& config, const icu::Normalizer2* form)
      : config_(config), form_(form) {}

  // The normal form of `text` (well-formed or not) appended to `out`.
  void AppendNormalForm(std::string_view text, std::string& out) const;

  NormalizerConfig config_;
  const icu::Normalizer2* form_;  // ICU's singleton; null for NormalForm::kNone
};

}  // namespace tokenmill
