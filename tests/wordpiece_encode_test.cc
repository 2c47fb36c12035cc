// Encoding and decoding with WordPiece models (model/wordpiece/wordpiece_model.h): the product's
// piece encoder against the reference encoder (tests/reference/reference_wordpiece.h: BERT's
// greedy longest-match-first, as Hugging Face's WordPiece::tokenize) on random words over random
// vocabularies, including words over max_input_chars_per_word, unknown characters, invalid
// bytes and words matched only in part (the whole word is then [UNK]); whole texts through the
// Encoder against the reference on each pre-tokenized piece; decoding against the reference
// decoder (Hugging Face's WordPiece decoder, with and without cleanup); and the round trip
// decode(encode(x)) == the pieces joined by spaces, on a model the product trained, for text
// without unknown characters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "count/word_counts.h"
#include "model/encoder.h"
#include "model/wordpiece/wordpiece_model.h"
#include "pretokenize/pretokenizer.h"
#include "reference/reference_wordpiece.h"
#include "reference/trained_bpe.h"
#include "train/trainer.h"

namespace tokenmill {
namespace {

using testing::ReferenceWordPieceDecode;
using testing::ReferenceWordPieceEncode;
using testing::WordPieceReferenceVocab;
using Words = TestWords;

// The characters of the random vocabularies and words: ASCII, accented, Cyrillic, CJK, emoji
// (not \w: a piece of its own under the whitespace split), a digit.
const std::vector<std::string> kChars = {"a",        "b",        "c",
                                         "e",        "\xc3\xa9", "\xd0\xb4",
                                         "\xe4\xb8\xad", "\xe6\x96\x87", "\xf0\x9f\x98\x80",
                                         "1"};
// In no vocabulary: unknown characters (z, 龘) and bytes that are no UTF-8.
const std::vector<std::string> kUnknown = {"z", "\xe9\xbe\x98", "\xff", "\xc3"};

struct RandomVocab {
  WordPieceModel model;
  WordPieceReferenceVocab reference;
  std::vector<std::string> complete;  // characters with both a plain and a prefixed token
};

// Specials first ([UNK] among them), then single characters (each form left out now and then,
// so that words stop matching part way), then random longer pieces, in shuffled id order.
RandomVocab MakeVocab(std::mt19937_64& rng) {
  RandomVocab v;
  const std::string prefix = rng() % 4 == 0 ? "@@" : "##";
  std::vector<std::string> specials = {"[PAD]", "[UNK]", "[CLS]"};
  std::shuffle(specials.begin(), specials.end(), rng);
  std::set<std::string> seen(specials.begin(), specials.end());
  std::vector<std::string> regular;
  auto add = [&](const std::string& token) {
    if (seen.insert(token).second) regular.push_back(token);
  };
  for (const std::string& c : kChars) {
    const bool plain = rng() % 8 != 0, prefixed = rng() % 8 != 0;
    if (plain) add(c);
    if (prefixed) add(prefix + c);
    if (plain && prefixed) v.complete.push_back(c);
  }
  for (size_t n = 10 + rng() % 60; n > 0; --n) {
    std::string token = rng() % 2 == 0 ? prefix : "";
    for (size_t len = 2 + rng() % 5; len > 0; --len) token += kChars[rng() % kChars.size()];
    add(token);
  }
  std::shuffle(regular.begin(), regular.end(), rng);
  v.model.tokens = specials;
  v.model.tokens.insert(v.model.tokens.end(), regular.begin(), regular.end());
  for (size_t i = 0; i < specials.size(); ++i) {
    v.model.specials.push_back({specials[i], static_cast<TokenId>(i)});
  }
  v.model.unk_token = "[UNK]";
  v.model.prefix = prefix;
  static const size_t kMaxChars[] = {100, 100, 100, 6, 1};
  v.model.max_input_chars_per_word = kMaxChars[rng() % 5];
  v.model.pretokenizer = PreTokenizerConfig("whitespace");
  v.model.cleanup = rng() % 2 == 0;
  for (size_t id = specials.size(); id < v.model.tokens.size(); ++id) {
    v.reference.ids[v.model.tokens[id]] = static_cast<uint32_t>(id);
  }
  v.reference.unknown_id = static_cast<uint32_t>(
      std::find(specials.begin(), specials.end(), "[UNK]") - specials.begin());
  v.reference.prefix = prefix;
  v.reference.max_input_chars_per_word = v.model.max_input_chars_per_word;
  return v;
}

// A random word: mostly vocabulary characters, sometimes an unknown one; now and then one of
// about max_input_chars_per_word characters (just under, at, just over, far over).
std::string RandomWord(const RandomVocab& v, std::mt19937_64& rng) {
  std::string word;
  if (rng() % 8 == 0 && !v.complete.empty()) {
    const size_t max = v.model.max_input_chars_per_word;
    static const int kOffsets[] = {-1, 0, 1, 50};
    const int n = std::max(1, static_cast<int>(max) + kOffsets[rng() % 4]);
    for (int i = 0; i < n; ++i) word += v.complete[rng() % v.complete.size()];
    return word;
  }
  for (size_t len = 1 + rng() % 10; len > 0; --len) {
    word += rng() % 25 == 0 ? kUnknown[rng() % kUnknown.size()] : kChars[rng() % kChars.size()];
  }
  return word;
}

std::unique_ptr<Encoder> MakeEncoder(const WordPieceModel& model) {
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Create(model);
  EXPECT_TRUE(encoder.ok()) << encoder.status();
  return encoder.ok() ? *std::move(encoder) : nullptr;
}

std::string Ids(const std::vector<TokenId>& ids, const WordPieceModel& model) {
  std::string out;
  for (TokenId id : ids) {
    out += "[" + (id < model.tokens.size() ? model.tokens[id] : "?") + "]";
  }
  return out;
}

size_t Characters(std::string_view s) {
  // Counted as the contract counts: a well-formed sequence or one stray byte each. Only used
  // on valid UTF-8 here, where counting non-continuation bytes is exact.
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

TEST(WordPieceEncode, EachWordEqualsTheReferenceEncoder) {
  std::mt19937_64 rng(2101);
  int words = 0, unknown = 0, partly_matched = 0, too_long = 0, pieces = 0;
  for (int vocab = 0; vocab < 200; ++vocab) {
    const RandomVocab v = MakeVocab(rng);
    ASSERT_TRUE(v.model.Validate().ok()) << v.model.Validate();
    std::unique_ptr<Encoder> encoder = MakeEncoder(v.model);
    ASSERT_NE(encoder, nullptr);
    for (int i = 0; i < 60; ++i) {
      const std::string word = RandomWord(v, rng);
      const std::vector<uint32_t> expected = ReferenceWordPieceEncode(word, v.reference);
      std::vector<TokenId> actual;
      encoder->EncodePiece(word, actual);
      EXPECT_EQ(actual, std::vector<TokenId>(expected.begin(), expected.end()))
          << "vocab " << vocab << " word '" << word << "' prefix " << v.model.prefix
          << " max chars " << v.model.max_input_chars_per_word << ": product "
          << Ids(actual, v.model) << " reference "
          << Ids(std::vector<TokenId>(expected.begin(), expected.end()), v.model);
      ++words;
      pieces += expected.size() > 1;
      if (expected != std::vector<uint32_t>{v.reference.unknown_id}) continue;
      ++unknown;
      if (Characters(word) > v.model.max_input_chars_per_word) {
        ++too_long;
      } else {
        // Matched in part: some stretch from the start is a token, yet the word is [UNK].
        for (size_t end = 1; end <= word.size(); ++end) {
          if (v.reference.ids.count(word.substr(0, end)) > 0) {
            ++partly_matched;
            break;
          }
        }
      }
    }
  }
  EXPECT_EQ(words, 200 * 60);
  EXPECT_GE(pieces, 1500);        // words of several pieces
  EXPECT_GE(unknown, 1000);       // and words that are [UNK]:
  EXPECT_GE(too_long, 300);       //   longer than max_input_chars_per_word
  EXPECT_GE(partly_matched, 300); //   matched part way only
}

// A fixed case each: BERT's example, whole-word [UNK] after a partial match, the length limit
// in characters, an empty vocabulary match.
TEST(WordPieceEncode, HandWorkedWords) {
  WordPieceModel model;
  model.tokens = {"[UNK]", "un", "##aff", "##able", "a", "##a", "ab", "##\xc3\xa9", "\xc3\xa9"};
  model.specials = {{"[UNK]", 0}};
  model.unk_token = "[UNK]";
  model.max_input_chars_per_word = 3;
  model.pretokenizer = PreTokenizerConfig("whitespace");
  std::unique_ptr<Encoder> encoder = MakeEncoder(model);
  ASSERT_NE(encoder, nullptr);
  auto encode = [&](std::string_view word) {
    std::vector<TokenId> ids;
    encoder->EncodePiece(word, ids);
    return ids;
  };
  using ::testing::ElementsAre;
  EXPECT_THAT(encode("un"), ElementsAre(1));
  EXPECT_THAT(encode("aa"), ElementsAre(4, 5));
  EXPECT_THAT(encode("abx"), ElementsAre(0));   // ab matched, then nothing: all [UNK]
  EXPECT_THAT(encode("aaaa"), ElementsAre(0));  // 4 characters > 3
  const std::string e = "\xc3\xa9";
  EXPECT_THAT(encode(e + e + e), ElementsAre(8, 7, 7));  // 6 bytes, 3 characters
  model.max_input_chars_per_word = 100;
  encoder = MakeEncoder(model);
  ASSERT_NE(encoder, nullptr);
  EXPECT_THAT(encode("unaffable"), ElementsAre(1, 2, 3));
  EXPECT_THAT(*encoder->Encode("unaffable aa"), ElementsAre(1, 2, 3, 4, 5));
  EXPECT_EQ(*encoder->Decode({1, 2, 3, 4, 5}), "unaffable aa");
  EXPECT_THAT(*encoder->Encode("unaffablex"), ElementsAre(0));
  EXPECT_THAT(*encoder->Encode("a\xff"), ElementsAre(4, 0));  // the stray byte is a piece
}

// Whole texts: the Encoder's ids equal the reference's on each piece of the model's
// pre-tokenizer, and decoding equals the reference decoder (cleanup as the model says).
TEST(WordPieceEncode, TextsEqualTheReferenceOnEachPieceAndDecodeAsTheReference) {
  std::mt19937_64 rng(2102);
  static const std::vector<std::string> kSeparators = {" ", " ", "  ", "\n", ", ", " . ", "\t"};
  absl::StatusOr<std::unique_ptr<PreTokenizer>> split =
      PreTokenizer::Create(PreTokenizerConfig("whitespace"));
  ASSERT_TRUE(split.ok()) << split.status();
  int texts = 0;
  for (int vocab = 0; vocab < 60; ++vocab) {
    RandomVocab v = MakeVocab(rng);
    // "," and "." as tokens, so that the cleanup has something to do.
    for (const char* p : {",", "."}) {
      v.reference.ids[p] = static_cast<uint32_t>(v.model.tokens.size());
      v.model.tokens.push_back(p);
    }
    std::unique_ptr<Encoder> encoder = MakeEncoder(v.model);
    ASSERT_NE(encoder, nullptr);
    for (int i = 0; i < 40; ++i) {
      std::string text;
      for (size_t n = 1 + rng() % 8; n > 0; --n) {
        if (!text.empty()) text += kSeparators[rng() % kSeparators.size()];
        text += RandomWord(v, rng);
      }
      std::vector<TokenId> expected;
      (*split)->Split(text, [&](std::string_view piece) {
        for (uint32_t id : ReferenceWordPieceEncode(piece, v.reference)) expected.push_back(id);
      });
      absl::StatusOr<std::vector<TokenId>> ids = encoder->Encode(text);
      ASSERT_TRUE(ids.ok()) << ids.status();
      EXPECT_EQ(*ids, expected) << "text '" << text << "': product " << Ids(*ids, v.model)
                                << " reference " << Ids(expected, v.model);
      std::vector<std::string> tokens;
      for (TokenId id : *ids) tokens.push_back(v.model.tokens[id]);
      absl::StatusOr<std::string> decoded = encoder->Decode(*ids);
      ASSERT_TRUE(decoded.ok()) << decoded.status();
      EXPECT_EQ(*decoded, ReferenceWordPieceDecode(tokens, v.model.prefix, v.model.cleanup))
          << "cleanup " << v.model.cleanup << " tokens " << Ids(*ids, v.model);
      ++texts;
    }
  }
  EXPECT_EQ(texts, 60 * 40);
}

// ---- round trip on a trained model -------------------------------------------------------------

// Letters only (\w: each word is one piece of the whitespace split), no '#'.
const std::vector<std::string> kLetters = {"a", "b", "e", "n", "s", "t", "\xc3\xa9", "\xc3\xbc",
                                           "\xd0\xb4", "\xe4\xb8\xad", "\xe6\x96\x87", "7"};

// Every word a trained model saw is encodable (its characters are tokens in both forms where
// they occurred), so a text of training words, joined by spaces, decodes to itself: the pieces
// joined by the decoder's spaces. Both scorings; also against the reference encoder.
TEST(WordPieceEncode, RoundTripOnATrainedModel) {
  std::mt19937_64 rng(2103);
  Words words;
  for (int i = 0; i < 400; ++i) {
    std::string w;
    for (size_t len = 1 + rng() % 9; len > 0; --len) w += kLetters[rng() % kLetters.size()];
    words.emplace_back(w, 1 + rng() % 30);
  }
  const WordCounts counts = ToCounts(words);
  for (WordPieceScore score : {WordPieceScore::kLikelihood, WordPieceScore::kFrequency}) {
    TrainerOptions options;
    options.algorithm = Algorithm::kWordPiece;
    options.wordpiece_score = score;
    options.units = UnitKind::kChar;
    options.continuing_subword_prefix = "##";
    options.byte_fallback = false;
    options.character_coverage = 1.0;
    options.unknown_token = "[UNK]";
    options.special_tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
    options.special_tokens_at = SpecialTokensAt::kStart;
    options.pretokenizer = PreTokenizerConfig("whitespace");
    options.vocab_size = 200;
    options.threads = 2;
    absl::StatusOr<TrainResult> trained = Train(WordSource::Borrow(counts), options);
    ASSERT_TRUE(trained.ok()) << trained.status();
    const auto* trained_model = dynamic_cast<const WordPieceModel*>(trained->model.get());
    ASSERT_NE(trained_model, nullptr);
    WordPieceModel model = *trained_model;
    model.cleanup = false;
    EXPECT_EQ(model.pretokenizer, options.pretokenizer);
    std::unique_ptr<Encoder> encoder = MakeEncoder(model);
    ASSERT_NE(encoder, nullptr);
    WordPieceReferenceVocab reference;
    for (size_t id = 0; id < model.tokens.size(); ++id) {
      if (id >= options.special_tokens.size()) reference.ids[model.tokens[id]] = static_cast<uint32_t>(id);
    }
    reference.unknown_id = 1;
    for (int i = 0; i < 500; ++i) {
      std::string text;
      std::vector<uint32_t> expected;
      for (size_t n = 1 + rng() % 12; n > 0; --n) {
        const std::string& w = words[rng() % words.size()].first;
        text += (text.empty() ? "" : " ") + w;
        for (uint32_t id : ReferenceWordPieceEncode(w, reference)) expected.push_back(id);
      }
      absl::StatusOr<std::vector<TokenId>> ids = encoder->Encode(text);
      ASSERT_TRUE(ids.ok()) << ids.status();
      EXPECT_EQ(*ids, std::vector<TokenId>(expected.begin(), expected.end())) << text;
      EXPECT_EQ(std::count(ids->begin(), ids->end(), TokenId{1}), 0) << text;
      absl::StatusOr<std::string> back = encoder->Decode(*ids);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(*back, text) << Ids(*ids, model);
    }
  }
}

}  // namespace
}  // namespace tokenmill
