#include "corpus/text_stats.h"

#include <cstring>

#include "simdjson.h"

namespace tokenmill {

uint64_t CountInvalidUtf8(std::string_view text) {
  if (simdjson::validate_utf8(text.data(), text.size())) return 0;
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size(), i = 0;
  uint64_t invalid = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      ++invalid;  // 0x80..0xC1, 0xF5..0xFF: never valid as a lead byte
      ++i;
      continue;
    }
    size_t j = i + 1;
    bool ok = true;
    for (size_t k = 0; k < need; ++k, ++j) {
      unsigned char b = j < n ? s[j] : 0;
      unsigned char min = k == 0 ? lo : 0x80, max = k == 0 ? hi : 0xBF;
      if (j >= n || b < min || b > max) {
        ok = false;
        break;
      }
    }
    if (!ok) ++invalid;  // the maximal subpart [i, j) is one replacement
    i = j;
  }
  return invalid;
}

uint64_t CountNulBytes(std::string_view text) {
  uint64_t count = 0;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    const void* hit = std::memchr(p, 0, static_cast<size_t>(end - p));
    if (hit == nullptr) break;
    ++count;
    p = static_cast<const char*>(hit) + 1;
  }
  return count;
}

}  // namespace tokenmill
