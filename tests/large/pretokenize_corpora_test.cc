// Acceptance tests of the preset scanners against the PCRE2 oracle at full size: every shared
// corpus in full for each preset, 10^6 generated strings per preset, and 100 MB lines without a
// newline (memory must not grow with the line beyond the line itself).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "pretokenize/pretokenizer.h"
#include "reference/pcre2_differential.h"
#include "reference/shared_corpus.h"
#include "reference/checked.h"
#include "reference/pcre2_splitter.h"
#include "reference/sidecar_pattern.h"

namespace tokenmill {
namespace {

using testing::EscapeForMessage;

std::unique_ptr<PreTokenizer> Preset(std::string_view name) {
  PreTokenizerConfig config;
  config.preset = std::string(name);
  return testing::OkOrFail(PreTokenizer::Create(config), name);
}

std::unique_ptr<PreTokenizer> Oracle(std::string_view name) {
  return testing::OkOrFail(testing::MakePcre2PresetPreTokenizer(name), name);
}

// Piece end offsets.
std::vector<uint32_t> Ends(const PreTokenizer& p, std::string_view text) {
  std::vector<uint32_t> ends;
  p.Split(text, [&](std::string_view piece) {
    ends.push_back(static_cast<uint32_t>(piece.data() + piece.size() - text.data()));
  });
  return ends;
}

struct CorpusCase {
  std::string corpus;
  std::string preset;
};

class CorpusTest : public ::testing::TestWithParam<CorpusCase> {};

std::vector<CorpusCase> AllCorpusCases() {
  std::vector<CorpusCase> cases;
  for (const char* corpus : {"brown", "linux_docs", "linux_c_100m", "poetry"}) {
    for (const char* preset : {"gpt2", "cl100k", "o200k", "qwen2"}) cases.push_back({corpus, preset});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(SharedCorpora, CorpusTest, ::testing::ValuesIn(AllCorpusCases()),
                         [](const auto& info) { return info.param.corpus + "_" + info.param.preset; });

// Zero differences on the whole corpus, split as one text. The corpora contain no code point on
// which PCRE2 and tokenmill's tables disagree (checked first), so no exclusion applies.
TEST_P(CorpusTest, SplitsLikePcre2InFull) {
  const std::string text = testing::ReadSharedCorpus(GetParam().corpus);
  if (text.empty()) GTEST_SKIP() << "corpus " << GetParam().corpus << " not found";
  ASSERT_FALSE(testing::ContainsDisagreement(text));
  const std::vector<uint32_t> ours = Ends(*Preset(GetParam().preset), text);
  const std::vector<uint32_t> expected = Ends(*Oracle(GetParam().preset), text);
  size_t i = 0;
  while (i < ours.size() && i < expected.size() && ours[i] == expected[i]) ++i;
  if (i < ours.size() || i < expected.size()) {
    const size_t start = i == 0 ? 0 : expected[i - 1];
    FAIL() << "piece " << i << " at byte " << start << " differs: ours ends at "
           << (i < ours.size() ? ours[i] : 0) << ", PCRE2's at "
           << (i < expected.size() ? expected[i] : 0) << "; text there: \""
           << EscapeForMessage(std::string_view(text).substr(start, 60)) << "\"";
  }
  EXPECT_EQ(ours.size(), expected.size());
}

class PresetTest : public ::testing::TestWithParam<std::string_view> {};
INSTANTIATE_TEST_SUITE_P(AllPresets, PresetTest,
                         ::testing::Values("gpt2", "cl100k", "o200k", "qwen2"),
                         [](const auto& info) { return std::string(info.param); });

// 10^6 generated strings (half of them with NUL and invalid UTF-8 mixed in).
TEST_P(PresetTest, SplitsLikePcre2OnAMillionGeneratedStrings) {
  const auto ours = Preset(GetParam());
  const auto oracle = Oracle(GetParam());
  std::mt19937_64 rng(0x70726574);
  int failures = 0;
  for (int i = 0; i < 1000000 && failures < 5; ++i) {
    const std::string text = testing::RandomPreTokenizerText(rng, /*invalid_utf8=*/i % 2 == 1);
    if (testing::SplitToVector(*ours, text) != testing::SplitToVector(*oracle, text)) {
      ADD_FAILURE() << "differs from PCRE2 on \"" << EscapeForMessage(text) << "\"";
      ++failures;
    }
  }
}

long PeakRssKb() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// A 100 MB line without a newline, of each kind that makes one piece or many: the split is
// exact (same as PCRE2, compared piece by piece without storing them) and needs no memory
// beyond the line.
TEST_P(PresetTest, HundredMegabyteLineWithoutNewline) {
  const size_t kSize = 100 << 20;
  const auto ours = Preset(GetParam());
  const auto oracle = Oracle(GetParam());
  const std::string kUnits[] = {"a", " ", "word ", "x  \t", "\xE4\xB8\xAD", "12345 ", "!?"};
  for (const std::string& unit : kUnits) {
    std::string line;
    line.reserve(kSize + unit.size());
    while (line.size() < kSize) line += unit;
    const long rss_before = PeakRssKb();
    size_t pieces = 0, covered = 0;
    ours->Split(line, [&](std::string_view piece) {
      ++pieces;
      if (piece.data() == line.data() + covered) covered += piece.size();
    });
    const long growth_kb = PeakRssKb() - rss_before;
    EXPECT_EQ(covered, line.size()) << "unit \"" << EscapeForMessage(unit) << "\"";
    EXPECT_LT(growth_kb, 1024) << "unit \"" << EscapeForMessage(unit) << "\"";
    // Compare with PCRE2 by walking both piece streams: PCRE2's ends go in a ring checked
    // against ours as they arrive (both are produced in order).
    std::vector<uint32_t> expected_ends;
    expected_ends.reserve(pieces);
    oracle->Split(line, [&](std::string_view piece) {
      expected_ends.push_back(static_cast<uint32_t>(piece.data() + piece.size() - line.data()));
    });
    size_t i = 0;
    bool same = expected_ends.size() == pieces;
    ours->Split(line, [&](std::string_view piece) {
      const auto end = static_cast<uint32_t>(piece.data() + piece.size() - line.data());
      if (i >= expected_ends.size() || expected_ends[i] != end) same = false;
      ++i;
    });
    EXPECT_TRUE(same) << "unit \"" << EscapeForMessage(unit) << "\"";
  }
}

}  // namespace
}  // namespace tokenmill
