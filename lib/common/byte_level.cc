#include "common/byte_level.h"

#include <array>

#include "absl/strings/str_format.h"

namespace tokenmill {
namespace {

struct ByteLevelTables {
  std::array<char32_t, 256> byte_to_cp{};
  std::array<int16_t, 324> cp_to_byte{};  // every mapped code point is below 256 + 68

  ByteLevelTables() {
    cp_to_byte.fill(-1);
    int next_extra = 0;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      char32_t cp = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + next_extra++);
      byte_to_cp[b] = cp;
      cp_to_byte[cp] = static_cast<int16_t>(b);
    }
  }
};

const ByteLevelTables& Tables() {
  static const ByteLevelTables tables;
  return tables;
}

}  // namespace

char32_t ByteToCodePoint(uint8_t byte) { return Tables().byte_to_cp[byte]; }

int CodePointToByte(char32_t code_point) {
  if (code_point >= Tables().cp_to_byte.size()) return -1;
  return Tables().cp_to_byte[code_point];
}

void AppendUtf8(char32_t cp, std::string& out) {
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

std::string BytesToByteLevel(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) AppendUtf8(ByteToCodePoint(b), out);
  return out;
}

namespace {

// The byte-level character at text[i]: its length and the byte it stands for, or byte -1 where
// it is no character of the alphabet (len 0: not a one- or two-byte UTF-8 sequence).
struct ByteLevelChar {
  int byte;
  size_t len;
  char32_t cp;
};
inline ByteLevelChar ByteLevelCharAt(std::string_view text, size_t i, const ByteLevelTables& t) {
  const auto lead = static_cast<unsigned char>(text[i]);
  char32_t cp;
  size_t len;
  if (lead < 0x80) {
    cp = lead;
    len = 1;
  } else if ((lead & 0xE0) == 0xC0 && i + 1 < text.size() &&
             (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80) {
    cp = ((lead & 0x1F) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3F);
    len = 2;
  } else {
    return {-1, 0, 0};
  }
  return {cp < t.cp_to_byte.size() ? t.cp_to_byte[cp] : -1, len, cp};
}

}  // namespace

bool AppendByteLevelBytes(std::string_view text, std::string& out) {
  const ByteLevelTables& t = Tables();
  for (size_t i = 0; i < text.size();) {
    const ByteLevelChar c = ByteLevelCharAt(text, i, t);
    if (c.byte < 0) return false;
    out.push_back(static_cast<char>(c.byte));
    i += c.len;
  }
  return true;
}

absl::StatusOr<std::string> ByteLevelToBytes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  if (AppendByteLevelBytes(text, out)) return out;
  const ByteLevelTables& t = Tables();
  for (size_t i = 0;; i += ByteLevelCharAt(text, i, t).len) {
    const ByteLevelChar c = ByteLevelCharAt(text, i, t);
    if (c.len == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "byte %d of %d in a byte-level token is not a character of the byte-level alphabet",
          i, text.size()));
    }
    if (c.byte < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("U+%04X is not a character of the byte-level alphabet", c.cp));
    }
  }
}

}  // namespace tokenmill
