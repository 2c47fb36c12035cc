#include "model/text_display.h"

namespace tokenmill {

std::string DisplayBytes(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  size_t i = 0;
  while (i < bytes.size()) {
    size_t subpart;
    size_t len = ValidUtf8Length(bytes.substr(i), &subpart);
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (len == 1 && (c < 0x20 || c == 0x7f || c == '\\')) {
      switch (c) {
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        case '\\': out += "\\\\"; break;
        default: out += "\\x"; out += kHex[c >> 4]; out += kHex[c & 15];
      }
      ++i;
    } else if (len > 0) {
      out.append(bytes.substr(i, len));
      i += len;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    }
  }
  return out;
}

std::string ReplaceInvalidUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    size_t subpart;
    size_t len = ValidUtf8Length(bytes.substr(i), &subpart);
    if (len > 0) {
      out.append(bytes.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      i += subpart;
    }
  }
  return out;
}

}  // namespace tokenmill
