// The normalization oracle (tests and benchmarks only): NormalizerConfig's meaning
// (pretokenize/normalizer.h) built on utf8proc instead of ICU, sharing no code with
// lib/pretokenize/normalizer.cc, so that a bug in the product or in ICU's use there cannot hide in
// its oracle. utf8proc 2.8 and ICU 72 both implement Unicode 15.0.
//   normal form: utf8proc_decompose_custom + utf8proc_normalize_utf32 (UTF8PROC_STABLE |
//     UTF8PROC_COMPOSE, | UTF8PROC_COMPAT for NFKC), what utf8proc_NFC/NFKC do;
//   lowercase: utf8proc_tolower per code point (the simple mapping), plus U+0130 → U+0069 U+0307,
//     the one unconditional full lowercase mapping of SpecialCasing.txt that differs from it;
//   ill-formed UTF-8: found with the oracles' own decoder (utf8_reference.h), each such byte
//     copied, the well-formed text between normalized on its own;
//   utf8proc 2.8's one known composition bug (an LV syllable + U+11A7) worked around by cutting
//     the text before each U+11A7, which changes no correct result (utf8proc_normalizer.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pretokenize/pretokenizer_config.h"

namespace tokenmill::testing {

class Utf8procNormalizer {
 public:
  explicit Utf8procNormalizer(const NormalizerConfig& config);

  // Appends `text` (any bytes) normalized to `out`.
  void Normalize(std::string_view text, std::string& out);
  std::string Normalize(std::string_view text) {
    std::string out;
    Normalize(text, out);
    return out;
  }

  // Appends well-formed UTF-8 `text` normalized to `out`; false (nothing appended) when utf8proc
  // refuses it as ill-formed. The fast way, for benchmarks on text known to be valid.
  bool NormalizeWellFormed(std::string_view text, std::string& out);

 private:
  NormalizerConfig config_;
  int options_;
  std::vector<int32_t> buffer_;
};

}  // namespace tokenmill::testing
