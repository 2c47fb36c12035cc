#include "reference/utf8proc_normalizer.h"

#include <utf8proc.h>

#include "reference/utf8_reference.h"

namespace tokenmill::testing {

Utf8procNormalizer::Utf8procNormalizer(const NormalizerConfig& config)
    : config_(config), options_(0), buffer_(1024) {
  if (config.form != NormalForm::kNone) options_ = UTF8PROC_STABLE | UTF8PROC_COMPOSE;
  if (config.form == NormalForm::kNfkc) options_ |= UTF8PROC_COMPAT;
}

bool Utf8procNormalizer::NormalizeWellFormed(std::string_view text, std::string& out) {
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  const auto size = static_cast<utf8proc_ssize_t>(text.size());
  const auto options = static_cast<utf8proc_option_t>(options_);
  utf8proc_ssize_t n = utf8proc_decompose_custom(
      bytes, size, buffer_.data(), static_cast<utf8proc_ssize_t>(buffer_.size()), options,
      nullptr, nullptr);
  if (n > static_cast<utf8proc_ssize_t>(buffer_.size())) {
    buffer_.resize(static_cast<size_t>(n));
    n = utf8proc_decompose_custom(bytes, size, buffer_.data(), n, options, nullptr, nullptr);
  }
  if (n < 0) return false;
  if (config_.form != NormalForm::kNone) {
    n = utf8proc_normalize_utf32(buffer_.data(), n, options);
    if (n < 0) return false;
  }
  utf8proc_uint8_t encoded[4];
  for (utf8proc_ssize_t i = 0; i < n; ++i) {
    utf8proc_int32_t c = buffer_[static_cast<size_t>(i)];
    if (config_.lowercase) {
      if (c == 0x130) {
        out += "i\xCC\x87";
        continue;
      }
      c = utf8proc_tolower(c);
    }
    out.append(reinterpret_cast<const char*>(encoded),
               static_cast<size_t>(utf8proc_encode_char(c, encoded)));
  }
  return true;
}

void Utf8procNormalizer::Normalize(std::string_view text, std::string& out) {
  size_t i = 0;
  while (i < text.size()) {
    size_t end = i;
    bool invalid = false;
    while (end < text.size()) {
      const Utf8Sequence seq = DecodeUtf8At(text, end);
      if (seq.length == 0) {
        invalid = true;
        break;
      }
      // utf8proc 2.8 composes an LV syllable with U+11A7, which is no trailing consonant
      // (UAX #15: T is U+11A8..U+11C2), and drops it (JuliaStrings/utf8proc#317, fixed after
      // 2.8.0). U+11A7 is a starter that combines with nothing, so cutting the text before it
      // changes no correct result.
      if (seq.code_point == 0x11A7 && end > i && config_.form != NormalForm::kNone) break;
      end += seq.length;
    }
    if (end > i && !NormalizeWellFormed(text.substr(i, end - i), out)) {
      out += "<utf8proc refused well-formed text>";
    }
    if (invalid) out += text[end++];
    i = end;
  }
}

}  // namespace tokenmill::testing
