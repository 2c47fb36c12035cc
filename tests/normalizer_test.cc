// Normalizer (pretokenize/normalizer.h, on ICU) against known examples and against the utf8proc
// oracle (reference/utf8proc_normalizer.h), which shares no code with it: generated strings with
// combining marks, Hangul, compatibility forms, Greek sigma, U+0130 and invalid UTF-8 mixed in,
// and the bundled sample text. The shared corpora in full: tests/large/normalize_corpora_test.cc.
#include "pretokenize/normalizer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "reference/checked.h"
#include "reference/pcre2_differential.h"
#include "reference/utf8_reference.h"
#include "reference/utf8proc_normalizer.h"

namespace tokenmill {
namespace {

using testing::EscapeForMessage;

NormalizerConfig Config(NormalForm form, bool lowercase) {
  NormalizerConfig config;
  config.form = form;
  config.lowercase = lowercase;
  return config;
}

const NormalizerConfig kNfc = Config(NormalForm::kNfc, false);
const NormalizerConfig kNfkc = Config(NormalForm::kNfkc, false);
const NormalizerConfig kLower = Config(NormalForm::kNone, true);
const NormalizerConfig kNfcLower = Config(NormalForm::kNfc, true);
const NormalizerConfig kNfkcLower = Config(NormalForm::kNfkc, true);
// Every configuration that changes text.
const NormalizerConfig kAllConfigs[] = {kNfc, kNfkc, kLower, kNfcLower, kNfkcLower};

std::string Name(const NormalizerConfig& config) {
  return std::string(NormalFormName(config.form)) + (config.lowercase ? "+lowercase" : "");
}

std::string Normalized(const NormalizerConfig& config, std::string_view text) {
  std::unique_ptr<Normalizer> normalizer =
      testing::OkOrFail(Normalizer::Create(config), Name(config));
  std::string out;
  normalizer->Normalize(text, out);
  return out;
}

TEST(NormalFormNames, RoundTrip) {
  for (NormalForm form : {NormalForm::kNone, NormalForm::kNfc, NormalForm::kNfkc}) {
    NormalForm parsed = NormalForm::kNone;
    ASSERT_TRUE(ParseNormalForm(NormalFormName(form), &parsed)) << NormalFormName(form);
    EXPECT_EQ(parsed, form);
  }
  EXPECT_EQ(NormalFormName(NormalForm::kNfkc), "nfkc");
  NormalForm parsed;
  EXPECT_FALSE(ParseNormalForm("NFKC", &parsed));
  EXPECT_FALSE(ParseNormalForm("nfd", &parsed));
}

TEST(Normalizer, CreateGivesEveryFormAndKeepsTheConfig) {
  for (const NormalizerConfig& config : kAllConfigs) {
    std::unique_ptr<Normalizer> normalizer =
        testing::OkOrFail(Normalizer::Create(config), Name(config));
    EXPECT_EQ(normalizer->config(), config);
  }
  NormalizerConfig bad;
  bad.form = static_cast<NormalForm>(7);
  EXPECT_FALSE(Normalizer::Create(bad).ok());
}

struct Example {
  NormalizerConfig config;
  std::string_view text;
  std::string_view expected;
};

// Written by hand from the Unicode data files (UnicodeData.txt decompositions, SpecialCasing.txt).
const Example kExamples[] = {
    // Compatibility forms change under NFKC only.
    {kNfc, "\uFB01", "\uFB01"},              // ﬁ
    {kNfkc, "\uFB01", "fi"},
    {kNfc, "\uFF21\uFF42", "\uFF21\uFF42"},  // full-width Ａｂ
    {kNfkc, "\uFF21\uFF42", "Ab"},
    {kNfkcLower, "\uFF21\uFF42", "ab"},
    {kNfc, "\u2460", "\u2460"},              // ①
    {kNfkc, "\u2460", "1"},
    {kNfkc, "x\u00B2", "x2"},                // superscript two
    {kNfkc, "\u3000", " "},                  // ideographic space
    // Canonical composition under both.
    {kNfc, "e\u0301", "\u00E9"},
    {kNfkc, "e\u0301", "\u00E9"},
    {kNfc, "\u00E9", "\u00E9"},
    {kNfc, "\u1100\u1161\u11A8", "\uAC01"},  // Hangul jamo to 각
    {kNfc, "\uD37C\u11A7", "\uD37C\u11A7"},    // U+11A7 is no trailing consonant (utf8proc 2.8 drops it)
    {kNfc, "a\u0301\u0323", "\u1EA1\u0301"},  // reordered (dot below first), then composed
    {kNfc, "\u2126", "\u03A9"},              // OHM SIGN to Omega (a singleton)
    {kNfc, "\u212B", "\u00C5"},              // ANGSTROM SIGN
    {kNfc, "\u0344", "\u0308\u0301"},        // composition exclusion
    // Lowercasing: the full mapping per code point.
    {kLower, "HeLLo, WORLD 123", "hello, world 123"},
    {kLower, "\u0130", "i\u0307"},           // İ: "i̇" (SpecialCasing.txt, unconditional)
    {kLower, "I", "i"},                      // no Turkish rule
    {kLower, "\u039F\u0394\u039F\u03A3", "\u03BF\u03B4\u03BF\u03C3"},  // ΟΔΟΣ: "οδοσ", not ς
    {kLower, "\u03A3\u0391 \u03A3", "\u03C3\u03B1 \u03C3"},
    {kLower, "\u00DF\u1E9E", "\u00DF\u00DF"},  // ß stays (lowercase is not case folding)
    {kLower, "\u01C5\u01C4", "\u01C6\u01C6"},  // ǅ Ǆ: ǆ
    {kLower, "\u023A", "\u2C65"},              // Ⱥ: two bytes to three
    {kLower, "\u2C2F", "\u2C5F"},              // Glagolitic, Unicode 14
    {kLower, "\U00010400", "\U00010428"},      // Deseret
    {kNfkcLower, "\u2160", "i"},               // Ⅰ: NFKC to I, then i
    {kNfcLower, "\u2160", "\u2170"},           // NFC keeps Ⅰ, lowercase gives ⅰ
    {kNfcLower, "\u212A", "k"},                // KELVIN SIGN: NFC to K, then k
    {kNfkcLower, "\u0130", "i\u0307"},         // lowercase is not normalized again
    // Chinese, already in every form.
    {kNfkcLower, "\u6625\u7720\u4E0D\u89BA\u66C9", "\u6625\u7720\u4E0D\u89BA\u66C9"},
    {kNfkc, "\uFF0C\u3002", ",\u3002"},        // full-width comma to ASCII; 。 stays
};

TEST(Normalizer, KnownExamples) {
  for (const Example& e : kExamples) {
    EXPECT_EQ(Normalized(e.config, e.text), e.expected)
        << Name(e.config) << " of \"" << EscapeForMessage(e.text) << "\"";
  }
}

TEST(Normalizer, KnownExamplesAgreeWithTheOracle) {
  for (const Example& e : kExamples) {
    EXPECT_EQ(testing::Utf8procNormalizer(e.config).Normalize(e.text), e.expected)
        << "utf8proc: " << Name(e.config) << " of \"" << EscapeForMessage(e.text) << "\"";
  }
}

TEST(Normalizer, IdentityAppendsTheTextUnchanged) {
  const std::string text = "A\u00C5e\u0301\xFF\uFB01";
  std::unique_ptr<Normalizer> normalizer =
      testing::OkOrFail(Normalizer::Create(NormalizerConfig{}), "identity");
  std::string out = "before:";
  normalizer->Normalize(text, out);
  EXPECT_EQ(out, "before:" + text);
}

TEST(Normalizer, AppendsAfterWhatOutHolds) {
  for (const NormalizerConfig& config : kAllConfigs) {
    std::unique_ptr<Normalizer> normalizer =
        testing::OkOrFail(Normalizer::Create(config), Name(config));
    std::string out = "KEEP\u00C5";
    normalizer->Normalize("\u0301X", out);
    EXPECT_EQ(out.substr(0, 6), "KEEP\u00C5") << Name(config);  // nothing combines with `out`
  }
}

// Invalid UTF-8 stays in place, byte for byte, and nothing combines across it.
TEST(Normalizer, InvalidBytesAreKeptInPlace) {
  const Example cases[] = {
      {kNfkcLower, "a\xFF" "B", "a\xFF" "b"},
      {kNfkc, "\uFB01\xFF\uFB01", "fi\xFF" "fi"},
      {kNfc, "e\xFF\u0301", "e\xFF\u0301"},                 // no composition across the byte
      {kNfc, "e\u0301\xC0\xAF", "\u00E9\xC0\xAF"},          // overlong "/"
      {kNfkcLower, "\xED\xA0\x80\u00C9", "\xED\xA0\x80\u00E9"},  // a surrogate's bytes
      {kNfkc, "\xF4\x90\x80\x80\u2460", "\xF4\x90\x80\x80" "1"},  // above U+10FFFF
      {kNfc, "\x80\x80" "A\u030A", "\x80\x80\u00C5"},       // lone continuation bytes
      {kLower, "\u03A3\xFF\u03A3", "\u03C3\xFF\u03C3"},
      {kNfkcLower, "ABC\xE2\x82", "abc\xE2\x82"},           // sequence cut short by the end
      {kNfkcLower, "\uFF21\xF0\x9F\x98", "a\xF0\x9F\x98"},
      {kNfc, "a\u0323\xE2\x82\u0301", "\u1EA1\xE2\x82\u0301"},  // no reordering across it
  };
  for (const Example& e : cases) {
    EXPECT_EQ(Normalized(e.config, e.text), e.expected)
        << Name(e.config) << " of \"" << EscapeForMessage(e.text) << "\"";
    EXPECT_EQ(testing::Utf8procNormalizer(e.config).Normalize(e.text), e.expected)
        << "utf8proc: " << Name(e.config) << " of \"" << EscapeForMessage(e.text) << "\"";
  }
}

// Random text from pools that exercise normalization and case: ASCII, Latin-1, combining marks,
// Hangul jamo and syllables, compatibility forms, Greek, U+0130, CJK, any code point at all, and
// (when `invalid`) bytes that are not UTF-8.
std::string RandomText(std::mt19937& rng, size_t length, bool invalid) {
  static const std::vector<uint32_t> kSpecial = {
      0x130, 0x131, 0x3A3, 0x3C2, 0x3C3, 0x390, 0x1E9E, 0xDF, 0x212A, 0x2126, 0x212B, 0x1C5,
      0x345, 0x344, 0x340, 0x341, 0x343, 0xF900, 0x2F800, 0x1D15E, 0xFDFA, 0x3300, 0x1F1,
      0xFB01, 0xFB03, 0x2460, 0x2474, 0x2160, 0xB2, 0xBD, 0x3000, 0xA0, 0x1E9B, 0x307, 0x323};
  auto pick = [&](uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
  };
  std::string out;
  for (size_t i = 0; i < length; ++i) {
    uint32_t cp;
    switch (pick(0, invalid ? 11 : 10)) {
      case 0: case 1: cp = pick(0x20, 0x7E); break;
      case 2: cp = pick(0xA0, 0x24F); break;
      case 3: case 4: cp = pick(0x300, 0x36F); break;           // combining marks
      case 5: cp = pick(0x370, 0x3FF); break;                   // Greek
      case 6: cp = pick(0, 1) ? pick(0x1100, 0x11FF) : pick(0xAC00, 0xD7A3); break;  // Hangul
      case 7: cp = pick(0, 1) ? pick(0xFF00, 0xFFEF) : pick(0x2150, 0x24FF); break;  // compat
      case 8: cp = kSpecial[pick(0, static_cast<uint32_t>(kSpecial.size() - 1))]; break;
      case 9: cp = pick(0, 1) ? pick(0x4E00, 0x9FFF) : pick(0x1E00, 0x1FFF); break;
      case 10:
        do cp = pick(0, 0x10FFFF); while (cp >= 0xD800 && cp <= 0xDFFF);
        break;
      default: {
        static const std::string_view kBad[] = {"\xFF", "\x80", "\xC0\xAF", "\xE2\x82",
                                                "\xED\xA0\x80", "\xF0\x9F\x98", "\xF4\x90\x80\x80",
                                                "\xC3", "\xCE"};
        out += kBad[pick(0, 8)];
        continue;
      }
    }
    testing::AppendUtf8(cp, out);
  }
  return out;
}

TEST(Normalizer, AgreesWithUtf8procOnGeneratedStrings) {
  std::mt19937 rng(20);
  for (const NormalizerConfig& config : kAllConfigs) {
    std::unique_ptr<Normalizer> normalizer =
        testing::OkOrFail(Normalizer::Create(config), Name(config));
    testing::Utf8procNormalizer oracle(config);
    int failures = 0;
    for (int i = 0; i < 40000 && failures < 5; ++i) {
      const std::string text = RandomText(rng, 1 + rng() % 24, i % 2 == 1);
      std::string ours;
      normalizer->Normalize(text, ours);
      const std::string expected = oracle.Normalize(text);
      if (ours != expected) {
        ++failures;
        ADD_FAILURE() << Name(config) << " of \"" << EscapeForMessage(text) << "\": \""
                      << EscapeForMessage(ours) << "\", utf8proc \"" << EscapeForMessage(expected)
                      << "\"";
      }
    }
  }
}

// Long texts too: the ASCII prefix skip and the lowercasing runs cut text at many places.
TEST(Normalizer, AgreesWithUtf8procOnLongMixedText) {
  std::mt19937 rng(2020);
  for (const NormalizerConfig& config : kAllConfigs) {
    std::unique_ptr<Normalizer> normalizer =
        testing::OkOrFail(Normalizer::Create(config), Name(config));
    testing::Utf8procNormalizer oracle(config);
    for (int i = 0; i < 50; ++i) {
      std::string text(rng() % 64, 'Q');
      for (int k = 0; k < 20; ++k) {
        text += RandomText(rng, rng() % 8, k % 3 == 0);
        text += std::string(rng() % 40, k % 2 ? 'x' : 'Y');
      }
      std::string ours;
      normalizer->Normalize(text, ours);
      ASSERT_EQ(ours, oracle.Normalize(text)) << Name(config) << " of \"" << EscapeForMessage(text)
                                              << "\"";
    }
  }
}

// Text already in the form (the output of a first pass, without lowercasing, which is not
// normalized again) comes out byte-identical.
TEST(Normalizer, NormalizedTextComesOutUnchanged) {
  std::mt19937 rng(7);
  for (const NormalizerConfig& config : {kNfc, kNfkc, kLower}) {
    std::unique_ptr<Normalizer> normalizer =
        testing::OkOrFail(Normalizer::Create(config), Name(config));
    for (int i = 0; i < 20000; ++i) {
      std::string once;
      normalizer->Normalize(RandomText(rng, 1 + rng() % 24, i % 2 == 1), once);
      std::string twice;
      normalizer->Normalize(once, twice);
      ASSERT_EQ(twice, once) << Name(config) << " of \"" << EscapeForMessage(once) << "\"";
    }
  }
}

TEST(Normalizer, AgreesWithUtf8procOnTheSampleText) {
  const std::string text =
      testing::ReadFileOrFail(std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/sample.txt");
  ASSERT_FALSE(text.empty());
  for (const NormalizerConfig& config : kAllConfigs) {
    EXPECT_EQ(Normalized(config, text), testing::Utf8procNormalizer(config).Normalize(text))
        << Name(config);
  }
}

// One Normalizer, four threads, the same texts: the same output as one thread.
TEST(Normalizer, ThreadsGiveTheSameOutput) {
  std::mt19937 rng(4);
  std::vector<std::string> texts;
  for (int i = 0; i < 2000; ++i) texts.push_back(RandomText(rng, 1 + rng() % 40, i % 2 == 1));
  std::unique_ptr<Normalizer> normalizer =
      testing::OkOrFail(Normalizer::Create(kNfkcLower), "nfkc+lowercase");
  std::string expected;
  for (const std::string& t : texts) normalizer->Normalize(t, expected);
  std::vector<std::string> outputs(4);
  std::vector<std::thread> threads;
  for (std::string& out : outputs) {
    threads.emplace_back([&] {
      for (const std::string& t : texts) normalizer->Normalize(t, out);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& out : outputs) EXPECT_EQ(out, expected);
}

}  // namespace
}  // namespace tokenmill
