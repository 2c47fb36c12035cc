// decode(encode(x)) == x for any bytes, and a saved tokenizer loads back to the same model and
// the same encodings.
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "count/count_text.h"
#include "model/encoder.h"
#include "model/hf_json.h"
#include "model/model_file.h"
#include "reference/cli_runner.h"
#include "reference/trained_bpe.h"
#include "train/trainer.h"

namespace tokenmill {
namespace {

const std::string kSpecial = "<|endoftext|>";

BpeModel TrainSmallModel(const std::string& preset) {
  std::ifstream in(std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/sample.txt", std::ios::binary);
  std::string text(80000, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  PreTokenizerConfig config{preset, ""};
  auto pretokenizer = PreTokenizer::Create(config);
  EXPECT_TRUE(pretokenizer.ok());
  WordCounts counts;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    CountDocument(std::string_view(text).substr(start, end - start), **pretokenizer, nullptr, counts);
    start = end;
  }
  TrainerOptions options;
  options.vocab_size = 500;
  options.special_tokens = {kSpecial};
  auto result = Train(WordSource::Borrow(counts), options);
  EXPECT_TRUE(result.ok());
  Bpe(*result).pretokenizer = config;
  return Bpe(*result);
}

std::vector<std::string> TrickyTexts() {
  std::vector<std::string> texts = {
      "", " ", "\n", "   \t\n\r\n  ", "\n\n\n", "hello world\n", kSpecial, kSpecial + kSpecial,
      "before" + kSpecial + "after", "<|endoftext", "|>", "\xff", "\xc3", "\xe4\xbd",
      "\xed\xa0\x80", "\xc0\xaf", std::string("a\0b", 3), "中文字符和English混合 123 4567\n",
      "emoji 👩‍👩‍👧 and ZWJ", "e\xcc\x81 combining", "  leading and trailing  ",
  };
  std::mt19937 rng(12345);
  for (int i = 0; i < 300; ++i) {
    std::string s(rng() % 64, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 256);  // arbitrary bytes, mostly invalid UTF-8
    if (i % 3 == 0) s += kSpecial;
    texts.push_back(s);
  }
  return texts;
}

class RoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(RoundTrip, DecodeOfEncodeIsIdentityOnAnyBytes) {
  auto encoder = Encoder::Create(TrainSmallModel(GetParam()));
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  for (const std::string& text : TrickyTexts()) {
    for (SpecialPolicy policy : {SpecialPolicy::kAllow, SpecialPolicy::kAsText}) {
      auto ids = (*encoder)->Encode(text, policy);
      ASSERT_TRUE(ids.ok()) << ids.status();
      auto back = (*encoder)->Decode(*ids);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(*back, text);
    }
  }
}

TEST_P(RoundTrip, SpecialTokensBecomeTheirIdsOnlyWhenAllowed) {
  BpeModel model = TrainSmallModel(GetParam());
  TokenId special_id = model.specials.at(0).id;
  auto encoder = Encoder::Create(model);
  ASSERT_TRUE(encoder.ok());
  auto allowed = (*encoder)->Encode("a" + kSpecial + "b", SpecialPolicy::kAllow);
  ASSERT_TRUE(allowed.ok());
  EXPECT_EQ(std::count(allowed->begin(), allowed->end(), special_id), 1);
  auto as_text = (*encoder)->Encode("a" + kSpecial + "b", SpecialPolicy::kAsText);
  ASSERT_TRUE(as_text.ok());
  EXPECT_EQ(std::count(as_text->begin(), as_text->end(), special_id), 0);
  EXPECT_FALSE((*encoder)->Encode("a" + kSpecial + "b", SpecialPolicy::kDisallow).ok());
}

TEST_P(RoundTrip, SaveThenLoadGivesTheSameModelAndEncodings) {
  BpeModel model = TrainSmallModel(GetParam());
  testing::TempDir dir;
  std::string path = dir.File("tokenizer.json");
  ASSERT_TRUE(SaveHfJson(model, path).ok());
  auto loaded = LoadBpeModel(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->tokens, model.tokens);
  EXPECT_EQ(loaded->merges, model.merges);
  EXPECT_EQ(loaded->specials, model.specials);
  EXPECT_EQ(loaded->pretokenizer, model.pretokenizer);
  auto original = Encoder::Create(model);
  auto reloaded = Encoder::Create(*loaded);
  ASSERT_TRUE(original.ok() && reloaded.ok());
  for (const std::string& text : TrickyTexts()) {
    EXPECT_EQ(*(*original)->Encode(text), *(*reloaded)->Encode(text));
  }
}

INSTANTIATE_TEST_SUITE_P(Presets, RoundTrip, ::testing::Values("gpt2", "cl100k", "o200k", "qwen2"));

}  // namespace
}  // namespace tokenmill
