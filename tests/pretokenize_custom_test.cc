// Custom patterns (custom_pattern.h, PCRE2) against the PCRE2 oracle of tests/reference (its
// own loop over PCRE2's matches and its own cutting of uncovered text): the preset patterns
// themselves, patterns that use lazy quantifiers, look-around, classes, ranges, caseless
// groups, counted repeats and gaps no match covers, and the patterns users bring (\w, \d,
// \p{P}, \p{S}, \p{Han}). Invalid patterns give PCRE2's message with the offset.
#include "pretokenize/custom_pattern.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "pretokenize/presets.h"
#include "reference/pcre2_differential.h"
#include "reference/checked.h"
#include "reference/pcre2_splitter.h"
#include "reference/sidecar_pattern.h"

namespace tokenmill {
namespace {

using testing::EscapeForMessage;
using testing::SplitToVector;

// CompileCustomPattern(pattern) against PCRE2 running `oracle_pattern` (by default the same).
void ExpectSameAsPcre2(std::string_view pattern, int strings, std::string_view oracle_pattern = {}) {
  absl::StatusOr<std::unique_ptr<PreTokenizer>> ours = CompileCustomPattern(pattern);
  ASSERT_TRUE(ours.ok()) << pattern << ": " << ours.status();
  auto oracle = testing::MakePcre2PreTokenizer(oracle_pattern.empty() ? pattern : oracle_pattern);
  ASSERT_TRUE(oracle.ok()) << oracle.status();
  std::mt19937_64 rng(std::hash<std::string_view>()(pattern));
  int failures = 0;
  for (int i = 0; i < strings && failures < 3; ++i) {
    const std::string text = testing::RandomPreTokenizerText(rng, /*invalid_utf8=*/i % 2 == 1);
    if (SplitToVector(**ours, text) != SplitToVector(**oracle, text)) {
      ADD_FAILURE() << "pattern " << pattern << " differs from PCRE2 on \""
                    << EscapeForMessage(text) << "\"";
      ++failures;
    }
  }
}

// The product's preset patterns, compiled as custom patterns, against PCRE2 running the
// patterns of the vocabularies' sidecars.
TEST(CustomPattern, PresetPatternsMatchPcre2) {
  for (const PreTokenizerPreset& preset : kPreTokenizerPresets) {
    const std::string sidecar = testing::OkOrFail(testing::SidecarPattern(preset.name), preset.name);
    ExpectSameAsPcre2(preset.pattern, 4000, sidecar);
  }
}

TEST(CustomPattern, OtherPatternsMatchPcre2) {
  const std::string_view kPatterns[] = {
      R"(\p{L}+)",                     // gaps: everything else is uncovered text
      R"(\p{L}+?|\s+?|.)",             // lazy quantifiers
      R"([a-z]{2,3}|\p{N}{2}|[^a-z\s]+|\s)",
      R"((?i:[a-c]+?|s|k)|\S|\s+(?=\S)|\s)",
      R"(\p{L}+(?=\s)|\p{L}+|\s+(?!\p{L})|\s+|\P{L})",
      R"([\p{Lu}\p{Lt}]+|[\p{Lm}\p{Lo}\p{M}]+|\p{Ll}+|\p{M}|(?:'s|'t)?\p{N}|[^\n]|\n)",
      R"(\x41+|\x{4E2D}|[\x{3000}-\x{303F}]+|[.\-/\\]+|\t|\r\n|\n|\s|\S)",
      R"( ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)",
  };
  for (std::string_view pattern : kPatterns) ExpectSameAsPcre2(pattern, 3000);
}

// The patterns users bring, refused by the hand-written matcher this replaced: the textbook
// GPT-2-style pattern with \w and \d, DeepSeek-style \p{P}/\p{S}, BLOOM-style and CJK-script
// ones, look-behind, possessive and atomic forms.
TEST(CustomPattern, PatternsUsersBringMatchPcre2) {
  const std::string_view kPatterns[] = {
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\w+| ?\d+| ?[^\s\w\d]+|\s+(?!\S)|\s+)",
      R"(\p{N}{1,3}|[一-龥\x{3040}-ゟ゠-ヿ]+|[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|)"
      R"([^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
      // BLOOM's ` ?[^(\s|[.,!?…。，、।۔،])]+` nests a class, which Oniguruma allows and PCRE
      // does not (an unmatched ')'); what it means, in PCRE:
      R"( ?[^\s.,!?…。，、।۔،]+)",
      R"(\p{Han}+|\p{Hiragana}+|\p{Katakana}+|\p{Latin}+|\d|\s+|\S)",
      R"((?<=\d)\d{3}|\d+|(?<![a-z])[A-Z]+|\w+|\W)",
      R"(\b\w+\b|\s++|(?>[^\s\w]+)|\s)",
  };
  for (std::string_view pattern : kPatterns) ExpectSameAsPcre2(pattern, 3000);
}

TEST(CustomPattern, InvalidPatternsAreErrorsWithTheOffset) {
  const std::pair<std::string_view, std::string_view> kCases[] = {
      {R"((ab)", "offset 3: missing closing parenthesis"},
      {R"([ab)", "offset 3: missing terminating ] for character class"},
      {R"(*a)", "offset 0: quantifier does not follow a repeatable item"},
      {R"(a{2,1})", "offset 5: numbers out of order in {} quantifier"},
      {R"(\p{Nope})", "offset 8: unknown property after \\P or \\p"},
      {R"(a(?<=a+)b)", "lookbehind assertion is not fixed length"},
  };
  for (const auto& [pattern, what] : kCases) {
    absl::StatusOr<std::unique_ptr<PreTokenizer>> p = CompileCustomPattern(pattern);
    ASSERT_FALSE(p.ok()) << pattern;
    EXPECT_THAT(std::string(p.status().message()), ::testing::HasSubstr(what)) << pattern;
    EXPECT_THAT(std::string(p.status().message()), ::testing::HasSubstr("offset")) << pattern;
  }
}

// Many threads split with one compiled pattern at once (each has its own match data).
TEST(CustomPattern, OnePatternSplitsOnManyThreads) {
  auto p = CompileCustomPattern(R"( ?\w+| ?\d+| ?[^\s\w]+|\s+)");
  ASSERT_TRUE(p.ok()) << p.status();
  auto oracle = testing::MakePcre2PreTokenizer(R"( ?\w+| ?\d+| ?[^\s\w]+|\s+)");
  ASSERT_TRUE(oracle.ok());
  std::mt19937_64 rng(7);
  std::vector<std::string> texts;
  for (int i = 0; i < 64; ++i) texts.push_back(testing::RandomPreTokenizerText(rng, i % 2 == 1));
  std::vector<std::vector<std::string_view>> expected;
  for (const std::string& t : texts) expected.push_back(SplitToVector(**oracle, t));
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 20; ++round) {
        for (size_t i = 0; i < texts.size(); ++i) {
          if (SplitToVector(**p, texts[i]) != expected[i]) ++mismatches;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// An empty string is never a piece: a pattern that can match one finds the next non-empty match.
TEST(CustomPattern, EmptyMatchesAreNeverPieces) {
  auto p = CompileCustomPattern("a*");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(SplitToVector(**p, "bbaab\xff" "a"),
            (std::vector<std::string_view>{"bb", "aa", "b", "\xff", "a"}));
  auto look = CompileCustomPattern("(?=a)|b");
  ASSERT_TRUE(look.ok()) << look.status();
  EXPECT_EQ(SplitToVector(**look, "aabab"), (std::vector<std::string_view>{"aa", "b", "a", "b"}));
}

TEST(CustomPattern, Pcre2VersionNamesTheUnicodeVersion) {
  EXPECT_THAT(Pcre2Version(), ::testing::HasSubstr("Unicode "));
}

TEST(CustomPattern, PresetPatternGivenAsCustomUsesTheScanner) {
  PreTokenizerConfig config;
  config.preset = "custom";
  config.pattern = std::string(kO200kPattern);
  absl::StatusOr<std::unique_ptr<PreTokenizer>> p = PreTokenizer::Create(config);
  ASSERT_TRUE(p.ok());
  auto oracle = testing::MakePcre2PresetPreTokenizer("o200k");
  ASSERT_TRUE(oracle.ok()) << oracle.status();
  const std::string text = "Hello WORLD's 123456 \u00e9t\u00e9\n\n  x";
  EXPECT_EQ(SplitToVector(**p, text), SplitToVector(**oracle, text));
}

// A long run is matched whole: no PCRE2 limit cuts it (nor a JIT stack that grows with it).
TEST(CustomPattern, LongRunsAreMatchedWhole) {
  auto p = CompileCustomPattern(R"(\s*[\r\n]+|\s+(?!\S)|\s+|\S+?(?=\s)|\S+)");
  ASSERT_TRUE(p.ok()) << p.status();
  const std::string spaces(8 << 20, ' ');
  EXPECT_EQ(SplitToVector(**p, spaces).size(), 1u);
  const std::string word(8 << 20, 'x');
  EXPECT_EQ(SplitToVector(**p, word + " ").size(), 2u);
  EXPECT_EQ(CustomPatternMatchFailures(), 0u);
}

// A subroutine call or recursion that cannot advance ends each search at once, in every syntax
// PCRE2 has for one. Under PCRE2's JIT such a search recursed until its limits ran out, with a
// cost growing as the square of the depth: hours per position at the default limit (the fuzz
// target found `a*|(?R)` taking 4 s per position at a limit of 100,000). Each pattern runs in a
// child process that an alarm kills after 60 s; without the loop, 1,000 positions take
// milliseconds. Nothing is lost: the pieces still make up the text.
TEST(CustomPattern, SubroutineCallsThatCannotAdvanceEndAtOnce) {
  const std::string text = std::string(1000, '5') + "aa5";
  for (const char* pattern :
       {"a*|(?R)", "a*|(?0)", "(a*|(?1))", "(?<n>a*|(?&n))", "(?P<n>a*|(?P>n))", "(a*|\\g<1>)",
        "(a*|\\g'1')", "(a*|(?-1))", "(?+1)(a*|(?-1))", "(?(DEFINE)(?<n>a*|(?&n)))(?&n)"}) {
    SCOPED_TRACE(pattern);
    auto p = CompileCustomPattern(pattern);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EXIT(
        {
          alarm(60);
          std::string joined;
          for (std::string_view piece : SplitToVector(**p, text)) joined += piece;
          std::_Exit(joined == text ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "");
  }
}

// Patterns that recurse and do advance give PCRE2's matches, as the oracle finds them.
TEST(CustomPattern, RecursivePatternsMatchPcre2) {
  ExpectSameAsPcre2(R"(\((?:[^()]|(?R))*\)|[^()]+)", 200);
  ExpectSameAsPcre2(R"((?<b>\[(?:[^][]|(?&b))*\])|\w+|\s+)", 200);
  ExpectSameAsPcre2(R"((\p{L})(?1)?|\d(?:(?-1))*)", 200);
  auto p = CompileCustomPattern(R"(\((?:[^()]|(?R))*\)|[^()]+)");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(SplitToVector(**p, "x(a(b)c)((d)"),
            (std::vector<std::string_view>{"x", "(a(b)c)", "(", "(d)"}));
}

}  // namespace
}  // namespace tokenmill
