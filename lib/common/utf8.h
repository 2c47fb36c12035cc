// UTF-8 validity, byte by byte, by the Unicode "maximal subpart" rule (what TextDecoder and
// Python's errors="replace" do): shared by the corpus statistics and the display of tokens.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tokenmill {

// Length of the valid UTF-8 sequence starting at bytes[0] (bytes must not be empty), or 0 if
// it is not valid there. Also reports, via `maximal_subpart`, how many bytes form the invalid
// prefix to replace (1 for a byte that cannot start a sequence).
size_t ValidUtf8Length(std::string_view bytes, size_t* maximal_subpart);

// A character decoded from UTF-8: its code point, or -1 for a byte that does not begin a
// well-formed sequence (an overlong form, a surrogate, above U+10FFFF, cut short: len is 1).
struct CodePoint {
  int32_t cp;
  uint32_t len;
};

// The character starting at s[i] (i < n).
inline CodePoint DecodeCodePoint(const unsigned char* s, size_t n, size_t i) {
  const unsigned b0 = s[i];
  if (b0 < 0x80) return {static_cast<int32_t>(b0), 1};
  constexpr CodePoint kInvalid = {-1, 1};
  const size_t avail = n - i;
  auto cont = [&](size_t k) { return k < avail && (s[i + k] & 0xC0) == 0x80; };
  if (b0 < 0xC2) return kInvalid;
  if (b0 < 0xE0) {
    if (!cont(1)) return kInvalid;
    return {static_cast<int32_t>(((b0 & 0x1F) << 6) | (s[i + 1] & 0x3F)), 2};
  }
  if (b0 < 0xF0) {
    if (!cont(1) || !cont(2)) return kInvalid;
    const uint32_t cp = ((b0 & 0x0F) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu);
    if (cp < 0x800 || (cp >= 0xD800 && cp < 0xE000)) return kInvalid;
    return {static_cast<int32_t>(cp), 3};
  }
  if (b0 < 0xF5) {
    if (!cont(1) || !cont(2) || !cont(3)) return kInvalid;
    const uint32_t cp = ((b0 & 0x07) << 18) | ((s[i + 1] & 0x3Fu) << 12) |
                        ((s[i + 2] & 0x3Fu) << 6) | (s[i + 3] & 0x3Fu);
    if (cp < 0x10000 || cp > 0x10FFFF) return kInvalid;
    return {static_cast<int32_t>(cp), 4};
  }
  return kInvalid;
}

}  // namespace tokenmill
