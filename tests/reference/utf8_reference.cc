#include "reference/utf8_reference.h"

namespace tokenmill::testing {

Utf8Sequence DecodeUtf8At(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return {b0, 1};
  // Table 3-7: the lead byte fixes the length and the range of the second byte; every later
  // byte is 80..BF.
  size_t length;
  unsigned char second_lo = 0x80, second_hi = 0xBF;
  uint32_t cp;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2, cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3, cp = b0 & 0x0F;
    if (b0 == 0xE0) second_lo = 0xA0;  // no overlong forms
    if (b0 == 0xED) second_hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4, cp = b0 & 0x07;
    if (b0 == 0xF0) second_lo = 0x90;  // no overlong forms
    if (b0 == 0xF4) second_hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return {};  // 80..C1, F5..FF
  }
  if (text.size() - i < length) return {};
  for (size_t k = 1; k < length; ++k) {
    const unsigned char b = byte(i + k);
    const unsigned char lo = k == 1 ? second_lo : 0x80;
    const unsigned char hi = k == 1 ? second_hi : 0xBF;
    if (b < lo || b > hi) return {};
    cp = (cp << 6) | (b & 0x3F);
  }
  return {cp, length};
}

void AppendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace tokenmill::testing
