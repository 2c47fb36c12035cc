#include "corpus/text_stats.h"

#include <cstring>

#include "common/utf8.h"
#include "simdjson.h"

namespace tokenmill {

uint64_t CountInvalidUtf8(std::string_view text) {
  if (simdjson::validate_utf8(text.data(), text.size())) return 0;
  uint64_t invalid = 0;
  size_t i = 0;
  while (i < text.size()) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t subpart;
    size_t length = ValidUtf8Length(text.substr(i), &subpart);
    if (length == 0) ++invalid;  // the maximal subpart is one replacement
    i += length != 0 ? length : subpart;
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
