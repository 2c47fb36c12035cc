// The generated Unicode class tables (lib/pretokenize/unicode_tables.cc) against PCRE2 10.42,
// code point by code point, and the few places where tokenmill deliberately differs from PCRE2.
#include "pretokenize/unicode_classes.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <gtest/gtest.h>

#include <string>

#include "reference/pcre2_differential.h"
#include "reference/utf8_reference.h"

namespace tokenmill {
namespace {

// PCRE2 10.42 knows Unicode 14; our tables are newer. A disagreement is allowed only where
// PCRE2 says the code point is unassigned (\p{Cn}), i.e. it was assigned after Unicode 14, and
// at U+180E MONGOLIAN VOWEL SEPARATOR: PCRE2 lists it in \s (its fixed \h list), but it is not
// White_Space since Unicode 6.3, and Rust's regex (tiktoken) uses White_Space for \s. There
// tiktoken is the target, so U+180E is a [^\s\p{L}\p{N}] character for tokenmill.
// (U+0085 NEXT LINE is \s for both PCRE2 and Rust's regex; nothing to except there.)
TEST(UnicodeTables, AgreeWithPcre2ExceptNewCodePointsAndU180E) {
  int error_code;
  PCRE2_SIZE error_offset;
  pcre2_code* unassigned = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(R"(\p{Cn})"),
                                         PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP,
                                         &error_code, &error_offset, nullptr);
  ASSERT_NE(unassigned, nullptr);
  pcre2_match_data* match = pcre2_match_data_create_from_pattern(unassigned, nullptr);
  const std::vector<bool>& differs = testing::Pcre2ClassDisagreements();
  int new_code_points = 0;
  for (uint32_t cp = 0; cp < 0x110000; ++cp) {
    if (!differs[cp]) continue;
    if (cp == 0x180E) continue;
    std::u32string one(1, static_cast<char32_t>(cp));
    std::string utf8;
    // Encode by hand (cp is never a surrogate here: those cannot be asked).
    if (cp < 0x800) {
      utf8 = {static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
    } else if (cp < 0x10000) {
      utf8 = {static_cast<char>(0xE0 | (cp >> 12)), static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
              static_cast<char>(0x80 | (cp & 0x3F))};
    } else {
      utf8 = {static_cast<char>(0xF0 | (cp >> 18)), static_cast<char>(0x80 | ((cp >> 12) & 0x3F)),
              static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), static_cast<char>(0x80 | (cp & 0x3F))};
    }
    const bool pcre2_unassigned =
        pcre2_match(unassigned, reinterpret_cast<PCRE2_SPTR>(utf8.data()), utf8.size(), 0, 0,
                    match, nullptr) > 0;
    EXPECT_TRUE(pcre2_unassigned) << "U+" << std::hex << cp
                                  << " is assigned in PCRE2 but classed differently";
    ++new_code_points;
  }
  EXPECT_TRUE(differs[0x180E]);
  EXPECT_FALSE(differs[0x85]);
  EXPECT_EQ(CodePointClass(0x180E), 0);
  EXPECT_EQ(CodePointClass(0x85), kClassSpace);
  // Unicode 15.0 assigned 4,489 code points; most of them are letters (CJK Extension H etc.).
  EXPECT_GT(new_code_points, 4000);
  EXPECT_LT(new_code_points, 4489);
  pcre2_match_data_free(match);
  pcre2_code_free(unassigned);
}

TEST(UnicodeTables, StateTheirVersion) { EXPECT_STREQ(UnicodeTablesVersion(), "15.0.0"); }

// The one-bit test for 3-byte letters agrees with the full decoder on every sequence of a lead
// byte e0..ef and two continuation bytes (overlong forms and surrogates included).
TEST(UnicodeTables, ThreeByteLetterBitsAgreeWithTheDecoder) {
  size_t letters = 0;
  for (unsigned b0 = 0xE0; b0 <= 0xEF; ++b0) {
    for (unsigned b1 = 0x80; b1 <= 0xBF; ++b1) {
      for (unsigned b2 = 0x80; b2 <= 0xBF; ++b2) {
        const unsigned char s[3] = {static_cast<unsigned char>(b0), static_cast<unsigned char>(b1),
                                    static_cast<unsigned char>(b2)};
        const DecodedChar c = DecodeNonAscii(s, s + 3);
        const bool letter = c.len == 3 && (c.cls & kClassL) != 0;
        ASSERT_EQ(IsThreeByteLetter(s), letter) << std::hex << b0 << " " << b1 << " " << b2;
        letters += letter;
      }
    }
  }
  EXPECT_GT(letters, 40000u);  // CJK ideographs, Hangul syllables, ...
}

// Every byte sequence of up to two bytes after a lead byte decodes as PCRE2 validates it.
TEST(UnicodeTables, DecoderRejectsExactlyWhatPcre2Rejects) {
  const unsigned char kLeads[] = {0x00, 0x41, 0x7F, 0x80, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
                                  0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5,
                                  0xF7, 0xF8, 0xFB, 0xFC, 0xFE, 0xFF};
  for (unsigned char lead : kLeads) {
    for (int b1 = 0; b1 < 256; ++b1) {
      for (unsigned char tail : {0x80, 0xBF, 0x41}) {
        const unsigned char text[4] = {lead, static_cast<unsigned char>(b1), tail, tail};
        const size_t n = 4;
        const DecodedChar c = DecodeAt(text, n, 0);
        // PCRE2's own check of the sequence alone: valid iff pcre2_compile accepts it as a
        // literal pattern in UTF mode.
        int error_code;
        PCRE2_SIZE error_offset;
        const size_t len = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
        pcre2_code* code = pcre2_compile(text, len, PCRE2_UTF | PCRE2_LITERAL, &error_code,
                                         &error_offset, nullptr);
        const bool pcre2_valid = code != nullptr;
        pcre2_code_free(code);
        const bool ours_valid = !(c.cls & kClassInvalid) && c.len == len;
        EXPECT_EQ(ours_valid, pcre2_valid) << std::hex << int(lead) << " " << b1 << " " << int(tail);
      }
    }
  }
}

// The oracles' own decoder (tests/reference/utf8_reference.h) against PCRE2's validity check,
// on every lead byte followed by every second byte; and it decodes every code point's encoding
// back to that code point.
TEST(UnicodeTables, OracleDecoderAcceptsExactlyWhatPcre2Accepts) {
  for (int lead = 0; lead < 256; ++lead) {
    for (int b1 = 0; b1 < 256; ++b1) {
      for (unsigned char tail : {0x80, 0xBF, 0x41}) {
        const unsigned char text[4] = {static_cast<unsigned char>(lead),
                                       static_cast<unsigned char>(b1), tail, tail};
        const size_t len = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
        int error_code;
        PCRE2_SIZE error_offset;
        pcre2_code* code = pcre2_compile(text, len, PCRE2_UTF | PCRE2_LITERAL, &error_code,
                                         &error_offset, nullptr);
        const bool pcre2_valid = code != nullptr;
        pcre2_code_free(code);
        const testing::Utf8Sequence c = testing::DecodeUtf8At(
            std::string_view(reinterpret_cast<const char*>(text), 4), 0);
        EXPECT_EQ(c.length == len, pcre2_valid) << std::hex << lead << " " << b1 << " " << int(tail);
        EXPECT_TRUE(c.length == 0 || c.length == len);
      }
    }
  }
  for (uint32_t cp = 0; cp < 0x110000; ++cp) {
    if (cp >= 0xD800 && cp < 0xE000) continue;
    std::string utf8;
    testing::AppendUtf8(cp, utf8);
    const testing::Utf8Sequence c = testing::DecodeUtf8At(utf8, 0);
    ASSERT_EQ(c.code_point, cp);
    ASSERT_EQ(c.length, utf8.size());
    ASSERT_EQ(testing::DecodeUtf8At(utf8.substr(0, utf8.size() - 1) + "x", 0).length,
              utf8.size() == 1 ? 1u : 0u) << std::hex << cp;  // cut short: invalid
  }
}

}  // namespace
}  // namespace tokenmill
