// tokenmill's encoder with OpenAI's vocabularies gives exactly the ids of the real tiktoken
// (npm package `tiktoken`): tests/data/tiktoken_expected/ holds tiktoken's output for a fixed
// sample (scripts/tiktoken_parity.sh --make-expected wrote it; the same script compares the
// full shared corpora).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <sstream>

#include "common/file_util.h"
#include "model/encoder.h"
#include "model/model_file.h"
#include "reference/checked.h"
#include "reference/sidecar_pattern.h"

namespace tokenmill {
namespace {

const std::string kVocabDir = testing::TestVocabDir();
const std::string kExpectedDir = std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/tiktoken_expected/";

const Encoder& OpenAiEncoder(const std::string& name) {
  // Destroyed at exit, not leaked on purpose: an Encoder keeps its per-thread piece caches in
  // TBB's enumerable_thread_specific, whose storage comes from tbbmalloc (mmap'd, which
  // LeakSanitizer does not scan), so a live Encoder's caches would be reported as leaked.
  static std::map<std::string, std::unique_ptr<Encoder>> encoders;
  auto& slot = encoders[name];
  if (slot == nullptr) {
    auto model = LoadBpeModel(kVocabDir + name + ".tiktoken");
    EXPECT_TRUE(model.ok()) << model.status();
    auto encoder = Encoder::Create(*std::move(model));
    EXPECT_TRUE(encoder.ok()) << encoder.status();
    slot = *std::move(encoder);
  }
  return *slot;
}

std::vector<std::string> LinesOf(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

std::vector<TokenId> ParseIds(const std::string& line) {
  std::vector<TokenId> ids;
  std::istringstream in(line);
  TokenId id;
  while (in >> id) ids.push_back(id);
  return ids;
}

TEST(TiktokenParity, Cl100kEncodesHelloAs15339) {
  auto ids = OpenAiEncoder("cl100k_base").Encode("hello");
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, std::vector<TokenId>{15339});
}

class TiktokenSample : public ::testing::TestWithParam<std::string> {};

TEST_P(TiktokenSample, EachLineGivesTiktokensIds) {
  const Encoder& encoder = OpenAiEncoder(GetParam());
  std::vector<std::string> inputs = LinesOf(testing::ReadFileOrFail(kExpectedDir + "inputs.txt"));
  std::vector<std::string> expected = LinesOf(testing::ReadFileOrFail(kExpectedDir + GetParam() + ".lines.ids"));
  ASSERT_EQ(inputs.size(), expected.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto ids = encoder.Encode(inputs[i]);
    ASSERT_TRUE(ids.ok()) << ids.status();
    EXPECT_EQ(*ids, ParseIds(expected[i])) << "line " << i + 1 << ": " << inputs[i];
  }
}

TEST_P(TiktokenSample, TheWholeFileGivesTiktokensIds) {
  const Encoder& encoder = OpenAiEncoder(GetParam());
  auto ids = encoder.Encode(testing::ReadFileOrFail(kExpectedDir + "inputs.txt"));
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, ParseIds(testing::ReadFileOrFail(kExpectedDir + GetParam() + ".whole.ids")));
}

TEST_P(TiktokenSample, DecodeGivesBackTheText) {
  const Encoder& encoder = OpenAiEncoder(GetParam());
  std::string text = testing::ReadFileOrFail(kExpectedDir + "inputs.txt");
  EXPECT_EQ(*encoder.Decode(*encoder.Encode(text)), text);
}

INSTANTIATE_TEST_SUITE_P(OpenAi, TiktokenSample,
                         ::testing::Values("gpt2", "cl100k_base", "o200k_base"));

TEST(TiktokenParity, SpecialTokensAllowedDisallowedOrText) {
  const Encoder& encoder = OpenAiEncoder("cl100k_base");
  std::string text = "a<|endoftext|>b";
  auto allowed = encoder.Encode(text, SpecialPolicy::kAllow);
  ASSERT_TRUE(allowed.ok());
  EXPECT_EQ(allowed->size(), 3u);
  EXPECT_EQ((*allowed)[1], 100257u);
  auto disallowed = encoder.Encode(text, SpecialPolicy::kDisallow);
  ASSERT_FALSE(disallowed.ok());
  EXPECT_NE(disallowed.status().message().find("<|endoftext|>' at byte 1"), std::string::npos);
  auto as_text = encoder.Encode(text, SpecialPolicy::kAsText);
  ASSERT_TRUE(as_text.ok());
  EXPECT_GT(as_text->size(), 3u);
  EXPECT_EQ(*encoder.Decode(*as_text), text);
}

TEST(TiktokenParity, IdsInTheGapBeforeTheSpecialsDoNotDecode) {
  const Encoder& encoder = OpenAiEncoder("cl100k_base");
  EXPECT_EQ(*encoder.Decode(std::vector<TokenId>{100257}), "<|endoftext|>");
  auto gap = encoder.Decode(std::vector<TokenId>{15339, 100256});
  ASSERT_FALSE(gap.ok());
  EXPECT_EQ(gap.status().message(), "id 100256 (position 1) is not in the vocabulary");
}

}  // namespace
}  // namespace tokenmill
