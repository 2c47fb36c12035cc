// Custom patterns (custom_pattern.h) against the PCRE2 oracle: the preset patterns themselves
// run through the custom matcher, and patterns that use lazy quantifiers, look-ahead, classes,
// ranges, caseless groups, counted repeats and gaps no match covers. Unsupported constructs give
// an error that names the offset and the construct.
#include "pretokenize/custom_pattern.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

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

TEST(CustomPattern, UnsupportedConstructsAreErrorsThatNameThem) {
  const std::pair<std::string_view, std::string_view> kCases[] = {
      {R"(\d+)", "\\d"},
      {R"(\w+)", "\\w"},
      {R"((?<=a)b)", "look-behind"},
      {R"((?>ab)c)", "atomic"},
      {R"(a++)", "possessive"},
      {R"((ab)+)", "only the quantifier '?'"},
      {R"(^a)", "anchors"},
      {R"(a$)", "anchors"},
      {R"(\p{Han})", "\\p{Han}"},
      {R"(\p{Lu}+)", "\\p{Lu}"},
      {R"((?i:é))", "non-ASCII cased"},
      {R"(a*)", "empty string"},
      {R"((?=a))", "empty string"},
      {R"((ab)", "missing ')'"},
      {R"(ab))", "unmatched ')'"},
      {R"([ab)", "missing ']'"},
      {R"(*a)", "nothing to repeat"},
      {R"(a{2,1})", "quantifier"},
      {R"([[:alpha:]])", "POSIX"},
      {R"(\1)", "\\1"},
  };
  for (const auto& [pattern, what] : kCases) {
    absl::StatusOr<std::unique_ptr<PreTokenizer>> p = CompileCustomPattern(pattern);
    ASSERT_FALSE(p.ok()) << pattern;
    EXPECT_THAT(std::string(p.status().message()), ::testing::HasSubstr(what)) << pattern;
    EXPECT_THAT(std::string(p.status().message()), ::testing::HasSubstr("offset")) << pattern;
  }
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

// A long run must not make the matcher recurse or allocate per character.
TEST(CustomPattern, LongRunsNeedNoStack) {
  auto p = CompileCustomPattern(R"(\s*[\r\n]+|\s+(?!\S)|\s+|\S+?(?=\s)|\S+)");
  ASSERT_TRUE(p.ok()) << p.status();
  const std::string spaces(8 << 20, ' ');
  EXPECT_EQ(SplitToVector(**p, spaces).size(), 1u);
  const std::string word(8 << 20, 'x');
  EXPECT_EQ(SplitToVector(**p, word + " ").size(), 2u);
}

}  // namespace
}  // namespace tokenmill
