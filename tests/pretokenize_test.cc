// The preset scanners against the PCRE2 oracle (tests/reference/pcre2_splitter.h): the original
// patterns with UTF + UCP and look-ahead. Expected pieces always come from PCRE2, never typed in.
#include "pretokenize/pretokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "pretokenize/presets.h"
#include "reference/checked.h"
#include "reference/pcre2_differential.h"
#include "reference/pcre2_splitter.h"
#include "reference/sidecar_pattern.h"

namespace tokenmill {
namespace {

using testing::EscapeForMessage;
using testing::SplitToVector;

struct Engines {
  std::unique_ptr<PreTokenizer> scanner;
  std::unique_ptr<PreTokenizer> oracle;
};

Engines MakeEngines(std::string_view preset) {
  PreTokenizerConfig config;
  config.preset = std::string(preset);
  absl::StatusOr<std::unique_ptr<PreTokenizer>> scanner = PreTokenizer::Create(config);
  absl::StatusOr<std::unique_ptr<PreTokenizer>> oracle =
      testing::MakePcre2PresetPreTokenizer(preset);
  return {testing::OkOrFail(std::move(scanner), "the preset scanner"),
          testing::OkOrFail(std::move(oracle), "the PCRE2 oracle")};
}

// Compares the two engines on `text`; returns false (after one failure message) if they differ.
bool SameSplit(const Engines& e, std::string_view text) {
  std::vector<std::string_view> ours = SplitToVector(*e.scanner, text);
  std::vector<std::string_view> expected = SplitToVector(*e.oracle, text);
  if (ours == expected) return true;
  size_t i = 0;
  while (i < ours.size() && i < expected.size() && ours[i] == expected[i]) ++i;
  ADD_FAILURE() << "text \"" << EscapeForMessage(text) << "\": piece " << i << " is \""
                << (i < ours.size() ? EscapeForMessage(ours[i]) : "<none>") << "\", PCRE2 says \""
                << (i < expected.size() ? EscapeForMessage(expected[i]) : "<none>") << "\"";
  return false;
}

// The product's preset patterns are those the vocabularies' sidecars publish (the oracle's
// patterns; tests/reference/sidecar_pattern.h), byte for byte.
TEST(PresetPatterns, AreTheSidecarsPatterns) {
  for (const PreTokenizerPreset& preset : kPreTokenizerPresets) {
    EXPECT_EQ(preset.pattern, testing::OkOrFail(testing::SidecarPattern(preset.name), preset.name))
        << preset.name;
  }
  EXPECT_EQ(std::size(kPreTokenizerPresets), 4u);  // gpt2, cl100k, o200k, qwen2: all checked
}

class PresetTest : public ::testing::TestWithParam<std::string_view> {};

INSTANTIATE_TEST_SUITE_P(AllPresets, PresetTest,
                         ::testing::Values("gpt2", "cl100k", "o200k", "qwen2"),
                         [](const auto& info) { return std::string(info.param); });

// Cases chosen for the patterns' corners; the expected pieces come from PCRE2.
TEST_P(PresetTest, MatchesPcre2OnCornerCases) {
  const Engines e = MakeEngines(GetParam());
  const std::string_view kCases[] = {
      "", "a", " ", "  ", "   a", "hello world", "Hello  World  ", "\n\n\n", " \n \n x", "a \n",
      "x\r\n\r\ny", "  \t\n  y", "\t\tx", "foo'sBAR's I'LL we'Re 'S 'ſ '", "''s", "'ll've",
      "don't", "ABCdef GHIjkl", "ǅungla ǈ ᾈ", "ʰa ʰ ー中文", "café", "e\u0301\u0301", " \u0301x",
      "!\u0301", "\u0301", "a\u0301B\u0301c", "ABC'S", "Σσς", "12345678", "١٢٣٤٥ ０１２３",
      "²³ Ⅻ", "a/b//c\n/d", "!!\n/\n", "x\u00A0\u00A0y", "x\u3000y", "x\u2028\u2029y",
      "x\u0085y \u0085\u0085z", "\u0085\n", "👨\u200D👩\u200D👧 👍🏽!", "<|endoftext|>",
      "a\v\fb", "  \r", "3.14159 $100", "中文，标点。", "\u200Dabc", "\u200D\u200Dabc",
      "\xF0\x9F\x98", "a\xE2\x82", std::string_view("a\0b \0 \0\0", 9), "\x80\x80x \xC0\xAF y",
      "ab\xED\xA0\x80" "cd", "  \xFF  \xFFx", "'\xC5", "1\xC2\xB2\xFF" "3",
  };
  for (std::string_view text : kCases) SameSplit(e, text);
}

// The CI-sized differential run: 10^4 generated strings, valid UTF-8, plus 10^4 that mix in NUL
// and invalid UTF-8 (the oracle makes each byte PCRE2 cannot match a piece of its own).
TEST_P(PresetTest, MatchesPcre2OnGeneratedStrings) {
  const Engines e = MakeEngines(GetParam());
  std::mt19937_64 rng(20240601);
  int failures = 0;
  for (int i = 0; i < 20000 && failures < 5; ++i) {
    const std::string text = testing::RandomPreTokenizerText(rng, /*invalid_utf8=*/i % 2 == 1);
    if (!SameSplit(e, text)) ++failures;
  }
}

TEST_P(PresetTest, PiecesConcatenateToTheInputAndAreNonEmpty) {
  const Engines e = MakeEngines(GetParam());
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const std::string text = testing::RandomPreTokenizerText(rng, /*invalid_utf8=*/true);
    std::string joined;
    for (std::string_view piece : SplitToVector(*e.scanner, text)) {
      ASSERT_FALSE(piece.empty());
      joined.append(piece);
    }
    ASSERT_EQ(joined, text);
  }
}

// The invalid UTF-8 rule of pretokenizer.h: every byte that is not part of a well-formed
// sequence is a piece by itself; the valid text around it splits as if it ended/started there.
TEST_P(PresetTest, EachInvalidByteIsAPieceOfItsOwn) {
  const Engines e = MakeEngines(GetParam());
  const std::string_view kInvalid[] = {"\x80", "\xBF", "\xC0\xAF", "\xC1\xBF", "\xE0\x80\xAF",
                                       "\xED\xA0\x80", "\xF0\x80\x80\xAF", "\xF4\x90\x80\x80",
                                       "\xF8\x88\x80\x80\x80", "\xFE", "\xFF"};
  for (std::string_view bad : kInvalid) {
    for (std::string_view around : {"", "a", " ", "  ", "1", "!"}) {
      const std::string text = std::string(around) + std::string(bad) + std::string(around);
      std::vector<std::string_view> pieces = SplitToVector(*e.scanner, text);
      std::vector<std::string_view> before = SplitToVector(*e.scanner, around);
      // The pieces are: those of `around`, each bad byte alone, those of `around` again.
      std::vector<std::string_view> expected = before;
      for (size_t i = 0; i < bad.size(); ++i) expected.push_back(bad.substr(i, 1));
      expected.insert(expected.end(), before.begin(), before.end());
      ASSERT_EQ(pieces.size(), expected.size()) << EscapeForMessage(text);
      for (size_t i = 0; i < pieces.size(); ++i) {
        EXPECT_EQ(pieces[i], expected[i]) << EscapeForMessage(text);
      }
      SameSplit(e, text);
    }
  }
}

// Sequences cut short by the end of the buffer: the text is a view into a longer string whose
// next bytes would complete the character, so the scanner must not read past the view.
TEST_P(PresetTest, TruncatedSequenceAtTheEndOfTheBuffer) {
  const Engines e = MakeEngines(GetParam());
  const std::string full = "ab \xE4\xB8\xAD\xF0\x9F\x98\x80";
  for (size_t cut = 0; cut <= full.size(); ++cut) {
    const std::string_view text = std::string_view(full).substr(0, cut);
    SameSplit(e, text);
  }
}

TEST(PreTokenizer, UnknownPresetIsAnError) {
  PreTokenizerConfig config;
  config.preset = "gpt5";
  absl::StatusOr<std::unique_ptr<PreTokenizer>> p = PreTokenizer::Create(config);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()), ::testing::HasSubstr("gpt5"));
}

}  // namespace
}  // namespace tokenmill
