// AddSpecialTokens (model/add_special_tokens.h) on every model type: byte-level BPE (trained
// here, and OpenAI's gpt2 and cl100k_base, whose ids have gaps), character-level BPE with byte
// fallback, WordPiece and Unigram, each trained here on the start of tests/data/sample.txt.
// The new tokens get the ids after the whole vocabulary in the order given; a text holding them
// encodes to their ids, never split, and the text between them to exactly the ids the model
// gave that text before; decoding gives the text back; tokenizer.json (and .tiktoken for
// byte-level BPE) out and back gives an equal model. Tokens already special keep their ids, a
// repeated one is added once; empty, non-UTF-8 and regular tokens (by their bytes or by their
// text in tokenizer.json) are refused, naming the token and the id.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "count/count_text.h"
#include "count/word_counts.h"
#include "model/add_special_tokens.h"
#include "model/bpe/bpe_model.h"
#include "model/encoder.h"
#include "model/hf_json.h"
#include "model/model_file.h"
#include "model/tiktoken_file.h"
#include "model/unigram/unigram_model.h"
#include "model/wordpiece/wordpiece_model.h"
#include "pretokenize/presets.h"
#include "pretokenize/pretokenizer.h"
#include "pretokenize/text_prep.h"
#include "reference/checked.h"
#include "reference/cli_runner.h"
#include "reference/sidecar_pattern.h"
#include "train/trainer.h"

namespace tokenmill {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::OkOrFail;
using Tokens = std::vector<std::string>;

// The start of sample.txt (English), whole lines.
std::string TrainingText() {
  std::ifstream in(std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/sample.txt", std::ios::binary);
  std::string text(20000, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(text.rfind('\n') + 1);
  return text;
}

// A model trained through the library as `train` does: each line counted (prepared and split as
// options.pretokenizer says), then trained.
std::unique_ptr<Model> TrainModel(const TrainerOptions& options) {
  auto pretokenizer = OkOrFail(PreTokenizer::Create(options.pretokenizer), "pre-tokenizer");
  auto prep = OkOrFail(TextPrep::Create(options.pretokenizer), "text prep");
  const std::string text = TrainingText();
  WordCounts counts;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    CountDocument(std::string_view(text).substr(start, end - start), *pretokenizer, nullptr,
                  counts, prep.get());
    start = end;
  }
  TrainResult result = OkOrFail(Train(WordSource::Borrow(counts), options), "training");
  EXPECT_TRUE(result.model->Validate().ok()) << result.model->Validate();
  return std::move(result.model);
}

TrainerOptions ByteBpeOptions() {
  TrainerOptions options;
  options.vocab_size = 600;
  options.pretokenizer = PreTokenizerConfig("gpt2");
  options.special_tokens = {"<|endoftext|>"};
  return options;
}

TrainerOptions CharBpeOptions() {
  TrainerOptions options;
  options.units = UnitKind::kChar;
  options.vocab_size = 700;
  options.byte_fallback = true;
  options.pretokenizer = PreTokenizerConfig("metaspace");
  options.special_tokens = {"<s>", "</s>"};
  options.special_tokens_at = SpecialTokensAt::kStart;
  return options;
}

TrainerOptions WordPieceOptions() {
  TrainerOptions options;
  options.algorithm = Algorithm::kWordPiece;
  options.units = UnitKind::kChar;
  options.continuing_subword_prefix = "##";
  options.byte_fallback = false;
  options.unknown_token = "[UNK]";
  options.special_tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  options.special_tokens_at = SpecialTokensAt::kStart;
  options.pretokenizer = PreTokenizerConfig("bert");
  ApplyPresetNormalizer(&options.pretokenizer);
  options.vocab_size = 400;
  return options;
}

TrainerOptions UnigramOptions() {
  TrainerOptions options;
  options.algorithm = Algorithm::kUnigram;
  options.units = UnitKind::kChar;
  options.special_tokens_at = SpecialTokensAt::kStart;
  options.special_tokens = {"<s>"};
  options.byte_fallback = true;
  options.vocab_size = 500;
  options.pretokenizer = PreTokenizerConfig("metaspace");
  options.pretokenizer.normalizer.form = NormalForm::kNfkc;
  return options;
}

std::unique_ptr<Encoder> MakeEncoder(const Model& model) {
  return OkOrFail(Encoder::Create(std::unique_ptr<const Model>(model.Clone())), "encoder");
}

// Whether `a` and `b` are the same model (each type's operator==).
bool SameModel(const Model& a, const Model& b) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case ModelType::kBpe: return *AsBpe(a) == *AsBpe(b);
    case ModelType::kWordPiece: return *AsWordPiece(a) == *AsWordPiece(b);
    case ModelType::kUnigram: return *AsUnigram(a) == *AsUnigram(b);
  }
  return false;
}

// `text` cut at the special tokens `specials` (at each position the longest that matches, as
// the Encoder's contract says), written here without the product's matcher: the ordinary
// stretches and, for each special occurrence, its index in `specials`.
struct Segment {
  std::string text;  // an ordinary stretch, or "" for a special
  int special = -1;
};
std::vector<Segment> CutAtSpecials(std::string_view text, const std::vector<std::string>& specials) {
  std::vector<Segment> segments;
  std::string ordinary;
  for (size_t i = 0; i < text.size();) {
    int best = -1;
    for (size_t s = 0; s < specials.size(); ++s) {
      if (text.substr(i).starts_with(specials[s]) &&
          (best < 0 || specials[s].size() > specials[best].size())) {
        best = static_cast<int>(s);
      }
    }
    if (best < 0) {
      ordinary += text[i++];
      continue;
    }
    if (!ordinary.empty()) segments.push_back({std::move(ordinary), -1});
    ordinary.clear();
    segments.push_back({"", best});
    i += specials[best].size();
  }
  if (!ordinary.empty()) segments.push_back({std::move(ordinary), -1});
  return segments;
}

// Texts with the new tokens and the model's own specials between words, each ordinary stretch
// after a special starting with a space, so that every model's decoder gives them back (the
// metaspace's prefix space, WordPiece's spaces between words).
std::vector<std::string> SpacedTexts(const std::string& a, const std::string& b,
                                     const std::string& old_special) {
  return {
      a,
      StrCat(a, " the man said"),
      StrCat("the man ", a, " said ", b, " and then ", old_special, " it was"),
      StrCat(a, " ", b, " in ", b, " ", a),
      StrCat("there was ", a, " ", a, " time"),
  };
}
// Texts the byte-level models give back byte for byte: the tokens inside words, next to
// newlines and at the ends.
std::vector<std::string> GluedTexts(const std::string& a, const std::string& b) {
  return {StrCat("word", a, "word"), StrCat(a, "\n", b, "\n\n"), StrCat("  ", b, "x", a, "  "),
          StrCat("caf\xc3\xa9", a, "\xe4\xb8\xad", b, "!"), StrCat(a, b, " in ", b, a)};
}

// Adds `added` to `original` and checks the contract on `texts` (and, with `decodes`, that
// each decodes back to itself): the new ids after the vocabulary, each occurrence its id, the
// stretches between encoded as the original model encodes them alone.
void CheckAdded(const Model& original, const std::vector<std::string>& added,
                const std::vector<std::string>& texts, bool decodes) {
  // A model read from .tiktoken (merges by token rank) reads back from tokenizer.json with its
  // merges listed in order instead: the same ids, not the same BpeModel.
  const BpeModel* bpe = AsBpe(original);
  const bool json_keeps_model = bpe == nullptr || bpe->priority == MergePriority::kMergeIndex;
  const size_t size = original.token_bytes().size();
  AddedSpecialTokens result = OkOrFail(AddSpecialTokens(original, added), "adding");
  ASSERT_EQ(result.ids.size(), added.size());
  for (size_t i = 0; i < added.size(); ++i) EXPECT_EQ(result.ids[i], size + i) << added[i];
  EXPECT_EQ(result.added, added.size());
  const Model& model = *result.model;
  EXPECT_EQ(model.type(), original.type());
  EXPECT_EQ(model.token_bytes().size(), size + added.size());
  EXPECT_EQ(model.VocabSize(), original.VocabSize() + added.size());
  EXPECT_TRUE(model.Validate().ok()) << model.Validate();
  std::vector<std::string> specials;
  std::vector<TokenId> special_ids;
  for (const SpecialToken& s : model.special_tokens()) {
    specials.push_back(s.content);
    special_ids.push_back(s.id);
  }
  // Everything but the new tokens is as it was.
  ASSERT_EQ(specials.size(), original.special_tokens().size() + added.size());
  for (size_t i = 0; i < original.special_tokens().size(); ++i) {
    EXPECT_EQ(model.special_tokens()[i], original.special_tokens()[i]);
  }
  for (size_t id = 0; id < size; ++id) EXPECT_EQ(model.token_bytes()[id], original.token_bytes()[id]);
  const std::unique_ptr<Encoder> before = MakeEncoder(original);
  const std::unique_ptr<Encoder> after = MakeEncoder(model);
  for (const std::string& text : texts) {
    std::vector<TokenId> expected;
    for (const Segment& segment : CutAtSpecials(text, specials)) {
      if (segment.special >= 0) {
        expected.push_back(special_ids[segment.special]);
      } else {
        std::vector<TokenId> ids = OkOrFail(before->Encode(segment.text), "encoding before");
        expected.insert(expected.end(), ids.begin(), ids.end());
      }
    }
    const std::vector<TokenId> ids = OkOrFail(after->Encode(text), "encoding after");
    EXPECT_EQ(ids, expected) << "'" << text << "'";
    for (size_t i = 0; i < added.size(); ++i) {
      EXPECT_EQ(OkOrFail(after->Decode({result.ids[i]}), "decoding one"), added[i]);
    }
    if (decodes) {
      EXPECT_EQ(OkOrFail(after->Decode(ids), "decoding"), text);
    }
    // Disallowed, a text with a new token is an error; as text, it is split like any text.
    if (text.find(added[0]) != std::string::npos) {
      EXPECT_FALSE(after->Encode(text, SpecialPolicy::kDisallow).ok()) << text;
      const std::vector<TokenId> as_text =
          OkOrFail(after->Encode(text, SpecialPolicy::kAsText), "encoding as text");
      EXPECT_THAT(as_text, ::testing::Not(::testing::Contains(result.ids[0])));
    }
  }
  // tokenizer.json out and back: the same model.
  testing::TempDir dir;
  ASSERT_TRUE(SaveHfJson(model, dir.File("t.json")).ok());
  std::unique_ptr<Model> loaded = OkOrFail(LoadHfJson(dir.File("t.json")), "reading back");
  if (json_keeps_model) {
    EXPECT_TRUE(SameModel(*loaded, model));
  }
  const std::unique_ptr<Encoder> reloaded = MakeEncoder(*loaded);
  for (const std::string& text : texts) {
    EXPECT_EQ(OkOrFail(reloaded->Encode(text), "encoding read back"),
              OkOrFail(after->Encode(text), "encoding after"));
  }
}

struct Case {
  const char* name;
  TrainerOptions (*options)();
  std::string old_special;  // one of the trained model's specials
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class AddSpecialTokensTrained : public ::testing::TestWithParam<Case> {};

TEST_P(AddSpecialTokensTrained, NewIdsAfterTheVocabularyNeverSplitEncodingElseUnchanged) {
  const std::unique_ptr<Model> original = TrainModel(GetParam().options());
  const std::vector<std::string> added = {"<|im_start|>", "<|im_end|>"};
  std::vector<std::string> texts = SpacedTexts(added[0], added[1], GetParam().old_special);
  CheckAdded(*original, added, texts, /*decodes=*/true);
  const bool byte_level = original->type() == ModelType::kBpe &&
                          original->units().kind() == UnitKind::kByte;
  CheckAdded(*original, added, GluedTexts(added[0], added[1]), /*decodes=*/byte_level);
}

// Tokens that hold one another and the model's special: at each position the longest wins.
TEST_P(AddSpecialTokensTrained, OverlappingTokensMatchLongestFirst) {
  const std::unique_ptr<Model> original = TrainModel(GetParam().options());
  const std::string old = GetParam().old_special;
  const std::vector<std::string> added = {"<|im", "<|im_start|>", old + "x", "the man"};
  CheckAdded(*original, added,
             {"<|im_start|><|im", StrCat("a<|im_start ", old, old, "x ", old),
              "then the man and the mandolin"},
             /*decodes=*/false);
}

INSTANTIATE_TEST_SUITE_P(
    Models, AddSpecialTokensTrained,
    ::testing::Values(Case{"ByteBpe", ByteBpeOptions, "<|endoftext|>"},
                      Case{"CharBpe", CharBpeOptions, "</s>"},
                      Case{"WordPiece", WordPieceOptions, "[SEP]"},
                      Case{"Unigram", UnigramOptions, "<s>"}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// OpenAI's vocabularies: gpt2's special is its last id; cl100k_base leaves gaps before and
// between its specials (100256, 100261-100275), and the new ids come after the last (100276),
// as Hugging Face numbers them. .tiktoken out and back gives the same model.
TEST(AddSpecialTokens, OpenAiVocabulariesTakeTheIdsAfterTheLastAndRoundTripThroughTiktoken) {
  for (const char* name : {"gpt2", "cl100k_base"}) {
    SCOPED_TRACE(name);
    const BpeModel original =
        testing::LoadBpeModelOrFail(testing::TestVocabDir() + name + ".tiktoken");
    const std::vector<std::string> added = {"<|im_start|>", "<|im_end|>"};
    CheckAdded(original, added, GluedTexts(added[0], added[1]), /*decodes=*/true);
    CheckAdded(original, added, SpacedTexts(added[0], added[1], "<|endoftext|>"), true);
    AddedSpecialTokens result = OkOrFail(AddSpecialTokens(original, added), "adding");
    EXPECT_THAT(result.ids, ElementsAre(original.tokens.size(), original.tokens.size() + 1));
    const std::vector<TokenId> expected =
        std::string_view(name) == "gpt2" ? std::vector<TokenId>{50257, 50258}
                                         : std::vector<TokenId>{100277, 100278};
    EXPECT_EQ(result.ids, expected);
    testing::TempDir dir;
    ASSERT_TRUE(SaveTiktoken(*result.model, dir.File("t.tiktoken")).ok());
    const BpeModel loaded = OkOrFail(LoadTiktoken(dir.File("t.tiktoken")), "reading back");
    EXPECT_TRUE(loaded == *AsBpe(*result.model));
  }
}

TEST(AddSpecialTokens, AlreadySpecialKeepsItsIdAndARepeatIsAddedOnce) {
  const std::unique_ptr<Model> original = TrainModel(ByteBpeOptions());
  const size_t size = original->token_bytes().size();
  const TokenId eot = original->special_tokens()[0].id;
  const std::vector<std::string> tokens = {"<a>", "<|endoftext|>", "<a>", "<b>", "<b>"};
  AddedSpecialTokens result = OkOrFail(AddSpecialTokens(*original, tokens), "adding");
  EXPECT_THAT(result.ids, ElementsAre(size, eot, size, size + 1, size + 1));
  EXPECT_EQ(result.added, 2u);
  EXPECT_EQ(result.model->token_bytes().size(), size + 2);
  // Nothing new: the same model.
  const std::vector<std::string> old = {"<|endoftext|>", "<|endoftext|>"};
  result = OkOrFail(AddSpecialTokens(*original, old), "adding");
  EXPECT_THAT(result.ids, ElementsAre(eot, eot));
  EXPECT_EQ(result.added, 0u);
  EXPECT_TRUE(SameModel(*result.model, *original));
  // Nothing at all: the same model too.
  result = OkOrFail(AddSpecialTokens(*original, {}), "adding none");
  EXPECT_TRUE(result.ids.empty());
  EXPECT_TRUE(SameModel(*result.model, *original));
  // Added again to the result: already special.
  result = OkOrFail(AddSpecialTokens(*original, tokens), "adding");
  AddedSpecialTokens again = OkOrFail(AddSpecialTokens(*result.model, tokens), "adding again");
  EXPECT_EQ(again.ids, result.ids);
  EXPECT_EQ(again.added, 0u);
}

// A new Unigram special takes the score of the model's first special (0: trained here), so
// the lowest score (whence the unknown edge's) stays; without specials, the highest score.
TEST(AddSpecialTokens, UnigramScoreIsTheFirstSpecialsOrTheHighest) {
  const std::unique_ptr<Model> original = TrainModel(UnigramOptions());
  const UnigramModel& unigram = *AsUnigram(*original);
  AddedSpecialTokens result = OkOrFail(AddSpecialTokens(*original, Tokens{"<x>"}), "adding");
  const UnigramModel& added = *AsUnigram(*result.model);
  ASSERT_EQ(added.scores.size(), unigram.scores.size() + 1);
  EXPECT_EQ(added.scores.back(), unigram.scores[unigram.specials[0].id]);
  EXPECT_EQ(added.scores.back(), 0.0);
  EXPECT_EQ(*std::min_element(added.scores.begin(), added.scores.end()),
            *std::min_element(unigram.scores.begin(), unigram.scores.end()));
  UnigramModel bare;
  bare.tokens = {"a", "b", "ab"};
  bare.scores = {-1.5, -2.5, -3};
  bare.unk_id = kNoUnknownToken;
  result = OkOrFail(AddSpecialTokens(bare, Tokens{"<x>"}), "adding to a model without specials");
  EXPECT_THAT(AsUnigram(*result.model)->scores, ElementsAre(-1.5, -2.5, -3, -1.5));
}

TEST(AddSpecialTokens, RefusesEmptyNonUtf8AndRegularTokensNamingThem) {
  const BpeModel gpt2 = testing::LoadBpeModelOrFail(testing::TestVocabDir() + "gpt2.tiktoken");
  auto error = [](const Model& model, std::vector<std::string> tokens) {
    absl::StatusOr<AddedSpecialTokens> result = AddSpecialTokens(model, tokens);
    EXPECT_FALSE(result.ok());
    if (result.ok()) return std::string();
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(result.status().message());
  };
  EXPECT_EQ(error(gpt2, {"<a>", ""}), "special token 2 of 2 is empty; a special token needs a byte at least");
  EXPECT_THAT(error(gpt2, {"\xff<a>"}), HasSubstr("'\\xff<a>' is not UTF-8"));
  // By its bytes: " the" (id 262), which Hugging Face adds at a new id since its vocabulary
  // names the token "Ġthe"; "the" (id 1169), which it names "the" and reuses.
  ASSERT_EQ(gpt2.tokens[262], " the");
  EXPECT_EQ(error(gpt2, {"<a>", " the"}),
            "special token ' the' is already regular token id 262; tokenmill does not make a "
            "regular token special (Hugging Face, which looks tokens up by their tokenizer.json "
            "text, would add it at a new id, and no text would encode to id 262 again)");
  ASSERT_EQ(gpt2.tokens[1169], "the");
  EXPECT_EQ(error(gpt2, {"the"}),
            "special token 'the' is already regular token id 1169; tokenmill does not make a "
            "regular token special (Hugging Face would reuse id 1169)");
  // By tokenizer.json's text: "Ġthe" is " the", "Ċ" is the byte "\n" (whose own bytes no
  // token has).
  EXPECT_THAT(error(gpt2, {"\xc4\xa0the"}),
              HasSubstr("'\xc4\xa0the' is how tokenizer.json writes token id 262 (bytes ' the'); "
                        "tokenmill does not make a regular token special (Hugging Face would "
                        "reuse id 262)"));
  const StringMap<TokenId> index = gpt2.TokenIndex();
  ASSERT_FALSE(index.contains("\xc4\x8a"));
  EXPECT_THAT(error(gpt2, {"\xc4\x8a"}),
              HasSubstr(StrCat("writes token id ", index.at("\n"), " (bytes '\\n')")));
  // Byte fallback names, in a character-level BPE and a Unigram model.
  for (TrainerOptions (*options)() : {CharBpeOptions, UnigramOptions}) {
    const std::unique_ptr<Model> model = TrainModel(options());
    const TokenId a = model->byte_fallback_ids()['A'];
    EXPECT_THAT(error(*model, {"<0x41>"}),
                HasSubstr(StrCat("'<0x41>' is how tokenizer.json writes token id ", a, " (bytes 'A')")));
    // A byte-fallback token's one byte is no regular token: "\x01" may be special.
    EXPECT_TRUE(AddSpecialTokens(*model, Tokens{"\x01"}).ok());
  }
  // WordPiece: a regular token, and one that is the unknown token's text but special.
  const std::unique_ptr<Model> wordpiece = TrainModel(WordPieceOptions());
  const TokenId last = static_cast<TokenId>(wordpiece->token_bytes().size() - 1);
  const std::string word = wordpiece->token_bytes()[last];
  ASSERT_FALSE(wordpiece->special_tokens().back().id == last);
  EXPECT_EQ(error(*wordpiece, {word}),
            StrCat("special token '", word, "' is already regular token id ", last,
                   "; tokenmill does not make a regular token special (Hugging Face would reuse "
                   "id ", last, ")"));
  EXPECT_TRUE(AddSpecialTokens(*wordpiece, Tokens{"[UNK]"}).ok());
}

}  // namespace
}  // namespace tokenmill
