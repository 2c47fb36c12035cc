// tokenizer.json reading: malformed files are errors naming the file and the field; and the
// formats convert into each other without changing a single id:
// tokenizer.json -> .tiktoken -> tokenizer.json, and OpenAI's .tiktoken -> tokenizer.json -> .tiktoken.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <tbb/task_arena.h>

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

// A merge with an empty half refers to no token, whatever the vocabulary: the table the merges
// are looked up in (TokenTable) could match the empty string with an empty slot, id 0, where its
// filter bit is set by chance (one vocabulary in about fifteen; several of these 64 are such).
TEST(FromHfJson, AMergeWithAnEmptyHalfRefersToNoToken) {
  for (int k = 0; k < 64; ++k) {
    JsonParts p;
    p.extra_vocab = R"(, "ab": 256, "<|end|>": 257)";
    for (int t = 0; t < 40; ++t) StrAppend(&p.extra_vocab, ", \"t", k, "_", t, "\": ", 258 + t);
    for (const char* merges : {R"([["a", "b"], ["a", ""]])", R"([["a", "b"], "a "])",
                               R"([["a", "b"], ["", "b"]])"}) {
      p.merges = merges;
      auto model = BpeModelFromHfJson(p.Json(), "t.json");
      ASSERT_FALSE(model.ok()) << k << " " << merges;
      EXPECT_THAT(std::string(model.status().message()),
                  HasSubstr("'model.merges[1]' refers to a token not in the vocab"))
          << k << " " << merges;
    }
  }
}

// A long merge list is read in parallel blocks (bpe_hf_json.cc): its merges are those written, in
// order, and of several bad merges far apart the error names the lowest-ranked, as a serial read
// does, whatever block or group each falls in.
TEST(FromHfJson, ALongMergeListIsReadInOrderAndItsFirstBadMergeNamed) {
  auto original = LoadBpeModel(testing::TestVocabDir() + "gpt2.tiktoken");
  ASSERT_TRUE(original.ok()) << original.status();
  const std::string json = ToHfJson(*original);
  const std::vector<Merge> want = MergeList(*original);
  ASSERT_GT(want.size(), 50000u);
  {
    auto read = BpeModelFromHfJson(json, "gpt2.json");
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_TRUE(read->merges == want);
  }
  // The file with merge `rank`'s entry replaced: entries are written one per line.
  const size_t list = json.find("\"merges\": [");
  ASSERT_NE(list, std::string::npos);
  auto replaced = [&](std::string text, const std::vector<std::pair<size_t, std::string>>& edits) {
    for (auto it = edits.rbegin(); it != edits.rend(); ++it) {
      size_t at = text.find('\n', list);
      for (size_t i = 0; i < it->first; ++i) at = text.find('\n', at + 1);
      const size_t begin = text.find('[', at);
      const size_t end = text.find_first_of(",\n", text.find(']', begin));
      text.replace(begin, end - begin, it->second);
    }
    return text;
  };
  const std::string unknown = R"(["\u0120the", "zzqqzzqq"])";
  const std::string no_token = R"(["\u0120the", "\u0120the"])";
  const std::string not_a_pair = R"("\u0120the")";
  const std::string not_byte_level = R"(["\u0120the", "\u4e00"])";
  struct Case {
    std::vector<std::pair<size_t, std::string>> edits;  // in rank order
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{{20001, no_token}, {40000, unknown}}, "'model.merges[20001]' forms"},
           {{{40000, unknown}}, "'model.merges[40000]' refers to a token not in the vocab"},
           {{{4095, not_a_pair}, {4096, unknown}}, "'model.merges[4095]' is not \"left right\""},
           {{{4097, unknown}, {4098, not_a_pair}}, "'model.merges[4097]' refers"},
           {{{33, not_byte_level}, {49000, not_a_pair}}, "'model.merges[33]' is not byte-level"},
           {{{0, unknown}, {1, unknown}}, "'model.merges[0]' refers"},
           // An empty half is no token (TokenTable::Find could match it with an empty slot).
           {{{100, R"(["\u0120the", ""])"}, {101, unknown}}, "'model.merges[100]' refers"},
           {{{102, R"(["", "\u0120the"])"}, {30000, unknown}}, "'model.merges[102]' refers"},
           {{{103, R"("\u0120the ")"}, {104, unknown}}, "'model.merges[103]' refers"},
           {{{want.size() - 1, no_token}}, StrCat("'model.merges[", want.size() - 1, "]' forms")},
           // Where the range is first split: the halves go to different threads.
           {{{want.size() / 4, no_token}, {want.size() * 3 / 4, unknown}},
            StrCat("'model.merges[", want.size() / 4, "]' forms")},
           {{{want.size() / 2 - 1, unknown}, {want.size() / 2 + 1, not_a_pair}},
            StrCat("'model.merges[", want.size() / 2 - 1, "]' refers")},
       }) {
    const std::string text = replaced(json, c.edits);
    // Eight threads, so that the blocks are shared out (on two cores one thread may take them
    // all, in order).
    tbb::task_arena arena(8);
    for (int run = 0; run < 3; ++run) {
      absl::Status status =
          arena.execute([&] { return BpeModelFromHfJson(text, "gpt2.json").status(); });
      ASSERT_FALSE(status.ok()) << c.message;
      EXPECT_THAT(std::string(status.message()), HasSubstr(c.message));
    }
  }
}

}  // namespace
}  // namespace tokenmill
