// The oracles' own UTF-8 decoder (tests only), written from the Unicode Standard's table of
// well-formed byte sequences (chapter 3, table 3-7) and sharing no code with lib/common or
// lib/pretokenize, so that a decoding bug in the product cannot hide in its oracle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tokenmill::testing {

// The well-formed sequence starting at `text[i]`: its code point and length in bytes (1-4), or
// length 0 when no well-formed sequence starts there (a lone continuation byte, C0, C1, F5-FF,
// an overlong form, a surrogate, a code point above U+10FFFF, or a sequence cut short).
struct Utf8Sequence {
  uint32_t code_point = 0;
  size_t length = 0;
};
Utf8Sequence DecodeUtf8At(std::string_view text, size_t i);

// The UTF-8 encoding of `code_point` (not a surrogate, at most U+10FFFF).
void AppendUtf8(uint32_t code_point, std::string& out);

}  // namespace tokenmill::testing
