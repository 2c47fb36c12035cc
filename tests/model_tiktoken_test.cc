// The .tiktoken reader and writer: OpenAI's files load, what is written reads back, and every
// malformed input is an error that names the file and the line or field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>

#include "common/file_util.h"
#include "common/strings.h"
#include "model/base64.h"
#include "model/bpe/bpe_encoder.h"
#include "model/bpe/lookup_tables.h"
#include "model/encoder.h"
#include "model/model_file.h"
#include "model/bpe/rank_merges.h"
#include "model/tiktoken_file.h"
#include "model/wordpiece/wordpiece_model.h"
#include "reference/cli_runner.h"
#include "reference/checked.h"
#include "reference/sidecar_pattern.h"

namespace tokenmill {
namespace {

using ::testing::HasSubstr;

const std::string kVocabDir = testing::TestVocabDir();

TEST(Base64, RoundTripsEveryLengthAndRejectsBadText) {
  std::string bytes;
  for (int i = 0; i < 40; ++i) {
    std::string encoded;
    AppendBase64(bytes, encoded);
    EXPECT_EQ(encoded.size() % 4, 0u);
    EXPECT_EQ(DecodeBase64(encoded), bytes);
    bytes.push_back(static_cast<char>(i * 37 + 200));
  }
  std::string hello;
  AppendBase64("hello", hello);
  EXPECT_EQ(hello, "aGVsbG8=");  // RFC 4648 alphabet, as `base64` prints it
  for (const char* bad : {"a", "aGVsbG8", "aGV*bG8=", "a=Vs", "aG==bG8=", "aGVsbG==="}) {
    EXPECT_FALSE(DecodeBase64(bad).has_value()) << bad;
  }
}

// A byte-complete ranks file: the 256 bytes in byte order at ranks 0..255, then `extra`.
std::string ByteRanks(const std::vector<std::string>& extra = {}) {
  std::string text;
  TokenId rank = 0;
  auto add = [&](std::string_view bytes) {
    AppendBase64(bytes, text);
    StrAppend(&text, " ", rank++, "\n");
  };
  for (int b = 0; b < 256; ++b) add(std::string(1, static_cast<char>(b)));
  for (const std::string& e : extra) add(e);
  return text;
}

constexpr std::string_view kSidecar =
    R"({"name": "t", "pattern": "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", "special_tokens": {"<|end|>": 260}})";

TEST(FromTiktoken, ReadsRanksSpecialsAndPatternAndDerivesMerges) {
  auto model = FromTiktoken(ByteRanks({"ab", "abc", "bc"}), "t.tiktoken", kSidecar, "t.json");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->tokens.size(), 261u);
  EXPECT_EQ(model->tokens[256], "ab");
  EXPECT_EQ(model->tokens[259], "");  // the gap between ranks and the special
  EXPECT_EQ(model->tokens[260], "<|end|>");
  EXPECT_EQ(model->pretokenizer.preset, "gpt2");
  EXPECT_EQ(model->priority, MergePriority::kTokenRank);
  EXPECT_TRUE(model->ignore_merges);
  // Implied: every split of every token into two tokens, in rank order.
  EXPECT_TRUE(model->rank_merges_implied);
  EXPECT_TRUE(model->merges.empty());
  std::vector<Merge> expected = {{'a', 'b', 256}, {'a', 258, 257}, {256, 'c', 257}, {'b', 'c', 258}};
  EXPECT_EQ(MergeList(*model), expected);
}

struct BadRanks {
  std::string ranks;
  std::string message;
};

TEST(FromTiktoken, MalformedRanksNameTheLine) {
  std::string good = ByteRanks();
  std::vector<BadRanks> cases = {
      {good + "YW*= 256\n", "t.tiktoken:257: bad base64 'YW*='"},
      {good + "YWI= 255\n", "t.tiktoken:257: rank 255 is already given on line 256"},
      {good + "YWI= 257\n", "t.tiktoken:257: rank 257 leaves a gap: no line has rank 256"},
      {good + "YQ== 256\n", "t.tiktoken:257: token 'a' is already given on line 98"},
      {good + "YWI=256\n", "t.tiktoken:257: expected '<base64 token> <rank>'"},
      {good + "YWI= -3\n", "t.tiktoken:257: '-3' is not a rank"},
      {good + "YWI= 260\n", "t.tiktoken:257: rank 260 is the id of special token '<|end|>'"},
      {good + " 256\n", "t.tiktoken:257: the token is empty"},
      {good.substr(good.find('\n') + 1), "t.tiktoken:1: rank 1 leaves a gap: no line has rank 0"},
      {"", "t.tiktoken: no ranks"},
  };
  for (const BadRanks& c : cases) {
    auto model = FromTiktoken(c.ranks, "t.tiktoken", kSidecar, "t.json");
    ASSERT_FALSE(model.ok()) << c.message;
    EXPECT_THAT(std::string(model.status().message()), HasSubstr(c.message));
  }
}

// A special token at a low id moves the ranks after it up by one: with no newline after the
// last line, the last rank then equals the file's line count. The parallel reading sized its
// tokens by the lines (and the specials' ids) alone and wrote that last rank past the end
// (found by the tiktoken fuzzer under AddressSanitizer).
TEST(FromTiktoken, ASpecialAtALowIdAndNoFinalNewlineLoadTheLastRank) {
  std::string ranks;
  for (int b = 0; b < 256; ++b) {
    AppendBase64(std::string(1, static_cast<char>(b)), ranks);
    StrAppend(&ranks, " ", b + 1, b < 255 ? "\n" : "");
  }
  constexpr std::string_view kLowSpecial =
      R"({"name": "t", "pattern": "\\s+", "special_tokens": {"<|s|>": 0}})";
  auto model = FromTiktoken(ranks, "t.tiktoken", kLowSpecial, "t.json");
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(model->tokens.size(), 257u);
  EXPECT_EQ(model->tokens[1], std::string(1, '\0'));
  EXPECT_EQ(model->tokens[256], std::string(1, '\xff'));
}

// Files of many blocks, the way the reader decodes them in parallel: lines in any order load
// to their ranks, and of several problems the one reported is the first in the file.
TEST(FromTiktoken, ALargeFileInAnyLineOrderLoadsAndReportsItsFirstProblem) {
  // Ranks 0..255 the bytes, then 60,000 tokens "<n>." (distinct, 2 to 6 bytes): 12 blocks of
  // 64 KB.
  std::vector<std::string> token_of_rank;
  for (int b = 0; b < 256; ++b) token_of_rank.push_back(std::string(1, static_cast<char>(b)));
  for (int n = 0; n < 60000; ++n) token_of_rank.push_back(StrCat(n, "."));
  std::vector<std::string> lines;
  for (TokenId rank = 0; rank < token_of_rank.size(); ++rank) {
    std::string line;
    AppendBase64(token_of_rank[rank], line);
    StrAppend(&line, " ", rank, "\n");
    lines.push_back(std::move(line));
  }
  std::mt19937 random(7);
  std::shuffle(lines.begin(), lines.end(), random);
  auto join = [](const std::vector<std::string>& v) {
    std::string text;
    for (const std::string& line : v) text += line;
    return text;
  };
  ASSERT_GT(join(lines).size(), 12u * 65536);
  auto model = FromTiktoken(join(lines), "t.tiktoken", R"({"pattern": "\\s+"})", "t.json");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->tokens, token_of_rank);
  // Sorted, the same model.
  std::vector<std::string> sorted(lines.size());
  for (const std::string& line : lines) {
    sorted[std::stoul(line.substr(line.find(' ') + 1))] = line;
  }
  auto in_order = FromTiktoken(join(sorted), "t.tiktoken", R"({"pattern": "\\s+"})", "t.json");
  ASSERT_TRUE(in_order.ok()) << in_order.status();
  EXPECT_TRUE(*in_order == *model);

  // Problems far apart: the first in the file is named, wherever the others are.
  auto rank_on = [&](size_t index) { return lines[index].substr(lines[index].find(' ') + 1); };
  std::vector<std::string> bad = lines;
  bad[50000] = "YW*= 7\n";             // line 50001: bad base64
  bad[4000] = "YWJj" + rank_on(4000);  // line 4001: no space
  bad[30000] = "YWJj " + rank_on(100);  // line 30001: line 101's rank again
  auto error = FromTiktoken(join(bad), "t.tiktoken", R"({"pattern": "\\s+"})", "t.json");
  ASSERT_FALSE(error.ok());
  EXPECT_THAT(std::string(error.status().message()),
              HasSubstr("t.tiktoken:4001: expected '<base64 token> <rank>'"));
  bad[4000] = lines[4000];
  error = FromTiktoken(join(bad), "t.tiktoken", R"({"pattern": "\\s+"})", "t.json");
  ASSERT_FALSE(error.ok());
  std::string repeated = rank_on(100);
  repeated.pop_back();  // the newline
  EXPECT_THAT(std::string(error.status().message()),
              HasSubstr(StrCat("t.tiktoken:30001: rank ", repeated,
                               " is already given on line 101")));
  // A rank given on line 101 and again on line 59001, which another thread may read first:
  // line 59001 is named, as reading in order names it.
  bad = lines;
  bad[100] = "YWJj " + rank_on(59000);
  error = FromTiktoken(join(bad), "t.tiktoken", R"({"pattern": "\\s+"})", "t.json");
  ASSERT_FALSE(error.ok());
  repeated = rank_on(59000);
  repeated.pop_back();
  EXPECT_THAT(std::string(error.status().message()),
              HasSubstr(StrCat("t.tiktoken:59001: rank ", repeated,
                               " is already given on line 101")));
}

TEST(FromTiktoken, AMissingByteIsAnError) {
  std::string ranks;
  for (int b = 0; b < 255; ++b) {
    AppendBase64(std::string(1, static_cast<char>(b)), ranks);
    StrAppend(&ranks, " ", b, "\n");
  }
  auto model = FromTiktoken(ranks, "t.tiktoken", kSidecar, "t.json");
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(std::string(model.status().message()), HasSubstr("no rank for the single byte \\xff"));
}

TEST(FromTiktoken, MalformedSidecarNamesTheField) {
  std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"special_tokens": {}})", "t.json: field 'pattern' is missing"},
      {R"({"pattern": 7})", "t.json: field 'pattern' is not a string"},
      {R"({"pattern": "\\s+", "special_tokens": []})", "t.json: field 'special_tokens' is not an object"},
      {R"({"pattern": "\\s+", "special_tokens": {"<x>": "a"}})", "field 'special_tokens[\"<x>\"]' is not a token id"},
      {R"({"pattern": "\\s+", "n_ranks": 3})", "field 'n_ranks' is 3 but t.tiktoken has 256 ranks"},
      {R"({"pattern": "\\s+", "special_tokens": {"<x>": 300, "<y>": 300}})", "reuses id 300"},
      // 256 ranks and one special define 257 tokens: ids from 2 x 257 + 1024 on are refused.
      {R"({"pattern": "\\s+", "special_tokens": {"<x>": 4000000000}})",
       "t.json: field 'special_tokens[\"<x>\"]' has id 4000000000, far beyond the 257 tokens the two files define"},
      {R"({"pattern": "\\s+", "special_tokens": {"<x>": 1538}})", "far beyond the 257 tokens"},
      {R"({"pattern": )", "t.json: not valid JSON"},
  };
  for (const auto& [sidecar, message] : cases) {
    auto model = FromTiktoken(ByteRanks(), "t.tiktoken", sidecar, "t.json");
    ASSERT_FALSE(model.ok()) << message;
    EXPECT_THAT(std::string(model.status().message()), HasSubstr(message));
  }
  // The last id below the bound loads, the ids between the ranks and it left as gaps.
  auto model = FromTiktoken(ByteRanks(), "t.tiktoken", R"({"pattern": "\\s+", "special_tokens": {"<x>": 1537}})", "t.json");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->tokens.size(), 1538u);
  EXPECT_EQ(model->tokens[1537], "<x>");
}

TEST(OpenAiVocabularies, LoadWithTheirIdsGapsAndPatterns) {
  struct Expected {
    std::string name, preset;
    size_t ranks;
    std::vector<SpecialToken> specials;
  };
  for (const Expected& e : std::vector<Expected>{
           {"gpt2", "gpt2", 50256, {{"<|endoftext|>", 50256}}},
           {"cl100k_base", "cl100k", 100256,
            {{"<|endoftext|>", 100257}, {"<|fim_prefix|>", 100258}, {"<|fim_middle|>", 100259},
             {"<|fim_suffix|>", 100260}, {"<|endofprompt|>", 100276}}},
           {"o200k_base", "o200k", 199998, {{"<|endoftext|>", 199999}, {"<|endofprompt|>", 200018}}},
       }) {
    auto model = LoadBpeModel(kVocabDir + e.name + ".tiktoken");
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_EQ(model->pretokenizer.preset, e.preset) << e.name;
    EXPECT_EQ(model->VocabSize(), e.ranks + e.specials.size()) << e.name;
    EXPECT_EQ(model->specials, e.specials) << e.name;
    // The first ranks follow GPT-2's printable-first byte order, not byte order.
    EXPECT_EQ(model->tokens[0], "!") << e.name;
    // Loading through the sidecar gives the same model.
    auto via_sidecar = LoadBpeModel(kVocabDir + e.name + ".json");
    ASSERT_TRUE(via_sidecar.ok()) << via_sidecar.status();
    EXPECT_TRUE(*via_sidecar == *model) << e.name;
  }
}

TEST(OpenAiVocabularies, WriteThenReadGivesTheSameModel) {
  auto model = LoadBpeModel(kVocabDir + "cl100k_base.tiktoken");
  ASSERT_TRUE(model.ok()) << model.status();
  testing::TempDir dir;
  std::string path = dir.File("copy.tiktoken");
  ASSERT_TRUE(SaveModel(*model, path).ok());
  auto again = LoadBpeModel(path);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(*again == *model);
  EXPECT_EQ(testing::ReadFileOrFail(path), testing::ReadFileOrFail(kVocabDir + "cl100k_base.tiktoken"));  // byte-identical
}

TEST(ToTiktoken, RefusesARankGapNoSpecialFills) {
  BpeModel model = ByteBaseModel();
  model.tokens.push_back("");
  model.tokens.push_back("ab");
  model.merges.push_back({'a', 'b', 257});
  auto text = ToTiktoken(model, "x");
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(std::string(text.status().message()), HasSubstr("id 256 is unused"));
}

TEST(ModelFile, MissingSidecarAndUnknownJsonAreClearErrors) {
  testing::TempDir dir;
  std::string ranks = dir.Write("lonely.tiktoken", ByteRanks());
  auto model = LoadBpeModel(ranks);
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(std::string(model.status().message()), HasSubstr("needs its JSON sidecar " + dir.File("lonely.json")));
  std::string other = dir.Write("other.json", R"({"hello": 1})");
  model = LoadBpeModel(other);
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(std::string(model.status().message()), HasSubstr("other.json: field 'model' is missing"));
  EXPECT_FALSE(OutputFormatOf(dir.File("x.bin")).ok());
  EXPECT_EQ(*OutputFormatOf(dir.File("vocab.txt")), ModelFormat::kVocabTxt);
}

// LoadEncoder checks a model once: the BPE readers' own checks stand (a .tiktoken, its sidecar
// or a tokenizer.json give tiktoken's ids), and a model whose reader checks less (a WordPiece
// tokenizer.json) is still checked before an encoder is made of it.
TEST(ModelFile, LoadEncoderGivesTheIdsAndStillRefusesAnInvalidModel) {
  const std::string ranks = kVocabDir + "/cl100k_base.tiktoken";
  const std::string sidecar = kVocabDir + "/cl100k_base.json";
  testing::TempDir dir;
  auto loaded = LoadModel(ranks);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const std::string json = dir.File("cl100k_base.tokenizer.json");
  ASSERT_TRUE(SaveModelAs(**loaded, json, ModelFormat::kHfJson).ok());
  for (const std::string& path : {ranks, sidecar, json}) {
    auto encoder = LoadEncoder(path);
    ASSERT_TRUE(encoder.ok()) << path << ": " << encoder.status();
    auto ids = (*encoder)->Encode("hello");
    ASSERT_TRUE(ids.ok()) << ids.status();
    EXPECT_EQ(*ids, std::vector<TokenId>{15339}) << path;
  }
  WordPieceModel wordpiece;
  wordpiece.tokens = {"[UNK]", "a", "b", "##a"};
  wordpiece.specials = {{"[UNK]", 0}};
  wordpiece.pretokenizer = BertTextSettings();
  const std::string good = dir.File("wordpiece.json");
  ASSERT_TRUE(SaveModel(wordpiece, good).ok());
  ASSERT_TRUE(LoadEncoder(good).ok()) << LoadEncoder(good).status();
  // The same file with "b" renamed "a": the reader takes it, the model's check does not.
  std::string text = *ReadFile(good);
  ASSERT_NE(text.find("\"b\": 2"), std::string::npos);
  text.replace(text.find("\"b\": 2"), 6, "\"a\": 2");
  const std::string repeated = dir.Write("repeated.json", text);
  ASSERT_TRUE(LoadModel(repeated).ok());
  auto refused = LoadEncoder(repeated);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("tokens 1 and 2 are the same ('a')"));
}

// LoadEncoder of a .tiktoken file hands the reader's table of the tokens (built for its check of
// repeated tokens) to the encoder instead of building it again: every regular token, encoded as
// one piece, is its own id, as with an encoder that builds its own table, whether the ranks or
// the sidecar is named; and a table of another vocabulary is refused.
TEST(ModelFile, LoadEncoderOfATiktokenFileTakesTheReadersTableOfTheTokens) {
  // The tables built from the files, not read from the vocabulary cache (vocab_cache_test's).
  struct CacheOff {
    const char* old = std::getenv("TOKENMILL_CACHE_DIR");
    std::string kept = old != nullptr ? old : "";
    CacheOff() { setenv("TOKENMILL_CACHE_DIR", "off", 1); }
    ~CacheOff() {
      if (old != nullptr) {
        setenv("TOKENMILL_CACHE_DIR", kept.c_str(), 1);
      } else {
        unsetenv("TOKENMILL_CACHE_DIR");
      }
    }
  } cache_off;
  for (const char* name : {"gpt2", "cl100k_base", "o200k_base"}) {
    SCOPED_TRACE(name);
    const std::string ranks = kVocabDir + "/" + name + ".tiktoken";
    const BpeModel model = testing::LoadBpeModelOrFail(ranks);
    auto built = Encoder::Create(model);
    ASSERT_TRUE(built.ok()) << built.status();
    const std::vector<bool> special = SpecialIds(model);
    for (const std::string& path : {ranks, kVocabDir + "/" + name + ".json"}) {
      auto handed = LoadEncoder(path);
      ASSERT_TRUE(handed.ok()) << handed.status();
      std::vector<TokenId> ids, built_ids;
      for (TokenId id = 0; id < model.tokens.size(); ++id) {
        if (special[id] || model.tokens[id].empty()) continue;
        ids.clear();
        (*handed)->EncodePiece(model.tokens[id], ids);
        ASSERT_EQ(ids, std::vector<TokenId>{id}) << path;
        built_ids.clear();
        (*built)->EncodePiece(model.tokens[id], built_ids);
        ASSERT_EQ(built_ids, ids);
      }
      const std::string text = "Hello, world! 你好，世界 <|endoftext|> fn main() { x += 1; }\n";
      EXPECT_EQ(*(*handed)->Encode(text), *(*built)->Encode(text)) << path;
    }
  }
  const BpeModel gpt2 = testing::LoadBpeModelOrFail(kVocabDir + "/gpt2.tiktoken");
  const BpeModel cl100k = testing::LoadBpeModelOrFail(kVocabDir + "/cl100k_base.tiktoken");
  TokenTable other;
  other.Build(gpt2.tokens, SpecialIds(gpt2));
  auto refused = BpeEncoder::Create(cl100k, EncoderOptions{}, std::move(other));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("the token table handed to the encoder holds 50256 tokens, the model 100256"));
}

}  // namespace
}  // namespace tokenmill
