// tokenizer.json reading: malformed files are errors naming the file and the field; and the
// formats convert into each other without changing a single id:
// tokenizer.json -> .tiktoken -> tokenizer.json, and OpenAI's .tiktoken -> tokenizer.json -> .tiktoken.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "common/byte_level.h"
#include "common/file_util.h"
#include "count/count_text.h"
#include "model/encoder.h"
#include "model/bpe/bpe_hf_json.h"
#include "model/hf_json.h"
#include "model/json_writer.h"
#include "model/model_file.h"
#include "reference/cli_runner.h"
#include "reference/trained_bpe.h"
#include "train/trainer.h"
#include "reference/checked.h"
#include "reference/sidecar_pattern.h"

namespace tokenmill {
namespace {

using ::testing::HasSubstr;

// A small valid tokenizer.json whose parts can be replaced.
struct JsonParts {
  std::string added = R"([{"id": 257, "content": "<|end|>", "special": true}])";
  std::string pre = R"({"type": "ByteLevel", "use_regex": true})";
  std::string type = R"("BPE")";
  std::string extra_vocab = R"(, "ab": 256, "<|end|>": 257)";
  std::string merges = R"([["a", "b"]])";
  std::string Json() const {
    std::string vocab;
    for (int b = 0; b < 256; ++b) {
      vocab += b == 0 ? "" : ", ";
      AppendJsonString(BytesToByteLevel(std::string(1, static_cast<char>(b))), vocab);
      StrAppend(&vocab, ": ", b);
    }
    return StrCat(R"({"added_tokens": )", added, R"(, "pre_tokenizer": )", pre,
                  R"(, "model": {"type": )", type, R"(, "vocab": {)", vocab, extra_vocab,
                  R"(}, "merges": )", merges, "}}");
  }
};

TEST(FromHfJson, ReadsTheSmallFile) {
  auto model = BpeModelFromHfJson(JsonParts().Json(), "t.json");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->tokens[256], "ab");
  EXPECT_EQ(model->merges, (std::vector<Merge>{{'a', 'b', 256}}));
  EXPECT_EQ(model->specials, (std::vector<SpecialToken>{{"<|end|>", 257}}));
}

TEST(FromHfJson, MalformedFilesNameTheField) {
  struct Case {
    std::string json;
    std::string message;
  };
  auto with = [](auto change) {
    JsonParts parts;
    change(parts);
    return parts.Json();
  };
  std::vector<Case> cases = {
      {"{", "t.json: not valid JSON"},
      {R"({"pre_tokenizer": null})", "t.json: field 'model' is missing"},
      {with([](JsonParts& p) { p.type = "7"; }), "field 'model.type' is not a string"},
      {with([](JsonParts& p) { p.type = R"("WordLevel")"; }), "field 'model.type' is \"WordLevel\"; tokenmill reads \"BPE\", \"WordPiece\" and \"Unigram\""},
      {with([](JsonParts& p) { p.merges = R"({"a": 1})"; }), "field 'model.merges' is missing or not an array"},
      {with([](JsonParts& p) { p.merges = R"([["a", "b"], 5])"; }), "field 'model.merges[1]' is neither"},
      {with([](JsonParts& p) { p.merges = R"(["a b", "ab"])"; }), "field 'model.merges[1]' is not \"left right\""},
      {with([](JsonParts& p) { p.merges = R"([["a", "b"], ["ab", "zz"]])"; }),
       "field 'model.merges[1]' refers to a token not in the vocab ('ab' or 'zz')"},
      {with([](JsonParts& p) { p.merges = R"([["b", "a"]])"; }), "field 'model.merges[0]' forms 'ba', which is not in the vocab"},
      {with([](JsonParts& p) { p.extra_vocab = R"(, "ab": "x")"; }), "field 'model.vocab[\"ab\"]' is not a token id"},
      {with([](JsonParts& p) { p.extra_vocab = R"(, "ab": 3)"; }), "field 'model.vocab[\"ab\"]' reuses id 3"},
      {with([](JsonParts& p) { p.added = R"({"id": 1})"; }), "field 'added_tokens' is not an array"},
      {with([](JsonParts& p) { p.added = R"([{"id": "x", "content": "<|end|>"}])"; }), "field 'added_tokens[0].id' is missing or not an id"},
      {with([](JsonParts& p) { p.added = R"([{"id": 257, "content": 3}])"; }), "field 'added_tokens[0].content' is missing, not a string or empty"},
      {with([](JsonParts& p) { p.pre = R"({"type": "Punctuation"})"; }), "field 'pre_tokenizer.type' is 'Punctuation'"},
      {with([](JsonParts& p) { p.pre = R"({"type": "Metaspace", "prepend_scheme": "first"})"; }),
       "field 'pre_tokenizer.prepend_scheme' is 'first'"},
      {with([](JsonParts& p) { p.pre = R"({"type": "Digits", "individual_digits": false})"; }),
       "field 'pre_tokenizer' is Digits without individual_digits"},
      {with([](JsonParts& p) {
         p.pre = R"({"type": "Sequence", "pretokenizers": [{"type": "Whitespace"}, {"type": "Metaspace"}]})";
       }),
       "field 'pre_tokenizer.pretokenizers[]' has a second splitting step ('Metaspace')"},
      {with([](JsonParts& p) { p.pre = R"({"type": "ByteLevel", "use_regex": "yes"})"; }), "field 'pre_tokenizer.use_regex' is not a boolean"},
  };
  for (const Case& c : cases) {
    auto model = BpeModelFromHfJson(c.json, "t.json");
    ASSERT_FALSE(model.ok()) << c.message;
    EXPECT_THAT(std::string(model.status().message()), HasSubstr(c.message));
  }
}

BpeModel TrainedModel(const std::string& preset) {
  std::ifstream in(std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/sample.txt", std::ios::binary);
  std::string text(100000, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  auto pretokenizer = PreTokenizer::Create({preset, ""});
  WordCounts counts;
  CountDocument(text, **pretokenizer, nullptr, counts);
  TrainerOptions options;
  options.vocab_size = 1000;
  options.special_tokens = {"<|endoftext|>", "<|pad|>"};
  auto result = Train(WordSource::Borrow(counts), options);
  EXPECT_TRUE(result.ok()) << result.status();
  Bpe(*result).pretokenizer = {preset, ""};
  return Bpe(*result);
}

std::vector<TokenId> EncodeAll(const BpeModel& model, const std::string& text) {
  auto encoder = Encoder::Create(model);
  EXPECT_TRUE(encoder.ok()) << encoder.status();
  auto ids = (*encoder)->Encode(text);
  EXPECT_TRUE(ids.ok());
  return *ids;
}

class FormatRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(FormatRoundTrip, JsonToTiktokenToJsonKeepsEveryId) {
  testing::TempDir dir;
  std::string text = testing::ReadFileOrFail(std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/sample.txt") +
                     "<|endoftext|>x<|pad|>";
  BpeModel trained = TrainedModel(GetParam());
  ASSERT_TRUE(SaveModel(trained, dir.File("a.json")).ok());
  auto json = LoadBpeModel(dir.File("a.json"));
  ASSERT_TRUE(json.ok()) << json.status();
  ASSERT_TRUE(SaveModel(*json, dir.File("b.tiktoken")).ok());
  auto tiktoken = LoadBpeModel(dir.File("b.tiktoken"));
  ASSERT_TRUE(tiktoken.ok()) << tiktoken.status();
  ASSERT_TRUE(SaveModel(*tiktoken, dir.File("c.json")).ok());
  auto json_again = LoadBpeModel(dir.File("c.json"));
  ASSERT_TRUE(json_again.ok()) << json_again.status();
  EXPECT_EQ(tiktoken->tokens, json->tokens);
  EXPECT_EQ(tiktoken->specials, json->specials);
  std::vector<TokenId> expected = EncodeAll(*json, text);
  EXPECT_EQ(EncodeAll(*tiktoken, text), expected);
  EXPECT_EQ(EncodeAll(*json_again, text), expected);
}

INSTANTIATE_TEST_SUITE_P(Presets, FormatRoundTrip, ::testing::Values("gpt2", "cl100k", "o200k"));

TEST(FormatRoundTrip, OpenAiTiktokenToJsonAndBack) {
  testing::TempDir dir;
  std::string vocab = testing::TestVocabDir() + "gpt2.tiktoken";
  auto original = LoadBpeModel(vocab);
  ASSERT_TRUE(original.ok());
  ASSERT_TRUE(SaveModel(*original, dir.File("gpt2.json")).ok());
  auto json = LoadBpeModel(dir.File("gpt2.json"));
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_TRUE(json->ignore_merges);
  ASSERT_TRUE(SaveModel(*json, dir.File("gpt2.tiktoken")).ok());
  EXPECT_EQ(testing::ReadFileOrFail(dir.File("gpt2.tiktoken")), testing::ReadFileOrFail(vocab));
  std::string text = testing::ReadFileOrFail(std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/tiktoken_expected/inputs.txt");
  EXPECT_EQ(EncodeAll(*json, text), EncodeAll(*original, text));
}

}  // namespace
}  // namespace tokenmill
