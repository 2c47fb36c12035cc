#include "reference/pcre2_differential.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cstdio>
#include <cstdlib>

#include "pretokenize/unicode_classes.h"  // CodePointClass: the product's tables, under test
#include "reference/utf8_reference.h"

namespace tokenmill::testing {
namespace {

std::vector<bool> ComputeDisagreements() {
  struct ClassPattern {
    const char* pattern;
    uint8_t bit;
  };
  const ClassPattern kPatterns[] = {
      {R"(\s)", kClassSpace},
      {R"(\p{L})", kClassL},
      {R"(\p{N})", kClassN},
      {R"([\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])", kClassUpper},
      {R"([\p{Ll}\p{Lm}\p{Lo}\p{M}])", kClassLower},
  };
  std::vector<bool> differs(0x110000, false);
  for (const ClassPattern& p : kPatterns) {
    int error_code;
    PCRE2_SIZE error_offset;
    pcre2_code* code =
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(p.pattern), PCRE2_ZERO_TERMINATED,
                      PCRE2_UTF | PCRE2_UCP | PCRE2_ANCHORED, &error_code, &error_offset, nullptr);
    if (code == nullptr) {
      std::fprintf(stderr, "cannot compile %s\n", p.pattern);
      std::abort();
    }
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    pcre2_match_data* match = pcre2_match_data_create_from_pattern(code, nullptr);
    std::string buffer;
    for (uint32_t cp = 0; cp < 0x110000; ++cp) {
      if (cp >= 0xD800 && cp < 0xE000) continue;
      buffer.clear();
      AppendUtf8(cp, buffer);
      const bool pcre2_has = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(buffer.data()),
                                         buffer.size(), 0, 0, match, nullptr) > 0;
      const bool ours = (CodePointClass(cp) & p.bit) != 0;
      if (pcre2_has != ours) differs[cp] = true;
    }
    pcre2_match_data_free(match);
    pcre2_code_free(code);
  }
  return differs;
}

uint32_t Pick(std::mt19937_64& rng, std::initializer_list<uint32_t> cps) {
  return cps.begin()[rng() % cps.size()];
}

std::string_view PickString(std::mt19937_64& rng, std::initializer_list<std::string_view> s) {
  return s.begin()[rng() % s.size()];
}

}  // namespace

std::vector<std::string_view> SplitToVector(const PreTokenizer& pretokenizer,
                                            std::string_view text) {
  std::vector<std::string_view> pieces;
  pretokenizer.Split(text, [&](std::string_view piece) { pieces.push_back(piece); });
  return pieces;
}

const std::vector<bool>& Pcre2ClassDisagreements() {
  static const std::vector<bool>* differs = new std::vector<bool>(ComputeDisagreements());
  return *differs;
}

bool ContainsDisagreement(std::string_view text) {
  const std::vector<bool>& differs = Pcre2ClassDisagreements();
  size_t i = 0;
  while (i < text.size()) {
    const Utf8Sequence c = DecodeUtf8At(text, i);
    if (c.length == 0) {  // an invalid byte: no code point
      ++i;
      continue;
    }
    if (differs[c.code_point]) return true;
    i += c.length;
  }
  return false;
}

std::string RandomPreTokenizerText(std::mt19937_64& rng, bool invalid_utf8) {
  std::string out;
  const int atoms = static_cast<int>(rng() % 24);
  for (int a = 0; a < atoms; ++a) {
    const int kind = static_cast<int>(rng() % (invalid_utf8 ? 16 : 14));
    switch (kind) {
      case 0:  // ASCII letters
        for (int k = 1 + rng() % 6; k > 0; --k) {
          out.push_back(static_cast<char>((rng() % 2 ? 'a' : 'A') + rng() % 26));
        }
        break;
      case 1:  // ASCII digits
        for (int k = 1 + rng() % 7; k > 0; --k) out.push_back(static_cast<char>('0' + rng() % 10));
        break;
      case 2:  // ASCII punctuation
        out.push_back(PickString(rng, {"'", "/", ".", ",", "!", "-", "(", ")", "\"", "_", "#",
                                       "//", "...", "'''", "<|", "|>"})[0]);
        break;
      case 3:
      case 4:  // spaces and the ASCII whitespace kinds, often in runs
        for (int k = 1 + rng() % 4; k > 0; --k) {
          out.append(PickString(rng, {" ", " ", " ", "\t", "\n", "\v", "\f", "\r", "\r\n"}));
        }
        break;
      case 5:  // non-ASCII whitespace
        AppendUtf8(Pick(rng, {0x85, 0xA0, 0x1680, 0x2000, 0x2007, 0x200A, 0x2028, 0x2029, 0x202F,
                              0x205F, 0x3000}),
                   out);
        break;
      case 6:  // contractions in all cases
        out.append(PickString(rng, {"'s", "'S", "'t", "'T", "'re", "'RE", "'rE", "'Re", "'ve",
                                    "'VE", "'m", "'M", "'ll", "'Ll", "'lL", "'LL", "'d", "'D",
                                    "'\u017F", "'x", "'"}));
        break;
      case 7:  // letters of every case category
        AppendUtf8(Pick(rng, {0xC9, 0x3A3, 0x410, 0x1E9E,            // Lu
                              0xE9, 0x3C3, 0xDF, 0x17F, 0x430,       // Ll
                              0x1C5, 0x1C8, 0x1F88,                  // Lt
                              0x2B0, 0x30FC, 0xA67F,                 // Lm
                              0x5D0, 0x627, 0xE01, 0x3042, 0xAC00}),  // Lo
                   out);
        break;
      case 8:  // combining marks (Mn, Mc, Me) and variation selectors
        AppendUtf8(Pick(rng, {0x301, 0x308, 0x0903, 0x093F, 0x20DD, 0x488, 0xFE0F, 0x200D}), out);
        break;
      case 9:  // CJK and kana
        for (int k = 1 + rng() % 4; k > 0; --k) {
          AppendUtf8(Pick(rng, {0x4E00 + static_cast<uint32_t>(rng() % 0x5000), 0x3002, 0xFF0C,
                                0x3001, 0x30AB}),
                     out);
        }
        break;
      case 10:  // emoji, with ZWJ sequences and skin tones
        out.append(PickString(rng, {"\U0001F468\u200D\U0001F469\u200D\U0001F467",
                                    "\U0001F44D\U0001F3FD", "\u2764\uFE0F", "\U0001F600",
                                    "\U0001F1E9\U0001F1EA"}));
        break;
      case 11:  // non-ASCII digits: Arabic-Indic, fullwidth, Devanagari, superscript, Roman
        for (int k = 1 + rng() % 4; k > 0; --k) {
          AppendUtf8(Pick(rng, {0x660 + static_cast<uint32_t>(rng() % 10),
                                0xFF10 + static_cast<uint32_t>(rng() % 10), 0x966, 0xB2, 0x216B,
                                0x2460}),
                     out);
        }
        break;
      case 12:
      case 13: {  // any code point PCRE2 and tokenmill agree on
        const std::vector<bool>& differs = Pcre2ClassDisagreements();
        uint32_t cp;
        do {
          cp = rng() % 4 == 0 ? static_cast<uint32_t>(rng() % 0x110000)
                              : static_cast<uint32_t>(rng() % 0x3000);
        } while ((cp >= 0xD800 && cp < 0xE000) || differs[cp]);
        AppendUtf8(cp, out);
        break;
      }
      case 14:  // NUL and invalid UTF-8 of every kind
        out.append(PickString(rng, {std::string_view("\0", 1), "\x80", "\xBF", "\xC0\xAF",
                                    "\xC1\xBF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xED\xBF\xBF",
                                    "\xF0\x80\x80\xAF", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80",
                                    "\xFE", "\xFF", "\xC3", "\xE2\x82", "\xF0\x9F\x98"}));
        break;
      default:  // a truncated sequence right at the end of the text
        if (a + 1 == atoms) out.append(PickString(rng, {"\xC3", "\xE2\x82", "\xF0\x9F\x98"}));
        break;
    }
  }
  return out;
}

std::string EscapeForMessage(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02X", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace tokenmill::testing
