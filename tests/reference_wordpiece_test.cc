// The reference WordPiece trainer, encoder and decoder (tests/reference/reference_wordpiece.h)
// on tiny corpora worked out by hand: what the contract in that header says, case by case, so
// that the oracle the product is compared against is itself checked against arithmetic.
//
// Unless a case says otherwise: the default special tokens [PAD] [UNK] [CLS] [SEP] [MASK] take
// ids 0-4, the prefix is "##", coverage 1.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "reference/reference_trainer.h"
#include "reference/reference_wordpiece.h"
#include "reference/wordpiece_corpora.h"

namespace tokenmill::testing {
namespace {

using Words = std::vector<std::pair<std::string, uint64_t>>;
using Merges = std::vector<WordPieceReferenceMerge>;

const std::vector<std::string> kSpecials = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};

// The specials followed by `tokens`.
std::vector<std::string> Vocab(const std::vector<std::string>& tokens) {
  std::vector<std::string> vocab = kSpecials;
  vocab.insert(vocab.end(), tokens.begin(), tokens.end());
  return vocab;
}

WordPieceReferenceOptions Options(WordPieceScoring scoring, size_t vocab_size = 1000) {
  WordPieceReferenceOptions options;
  options.scoring = scoring;
  options.vocab_size = vocab_size;
  return options;
}

constexpr WordPieceScoring kLikelihood = WordPieceScoring::kLikelihood;
constexpr WordPieceScoring kFrequency = WordPieceScoring::kFrequency;

// "ab" x4, "ac" x2, "xy" x1. Alphabet: a b c x y (ids 5-9), then the variants ##b ##c ##y
// (10-12). Token counts a 6, ##b 4, ##c 2, x 1, ##y 1.
// Likelihood: (a,##b) 4/(6*4) = 1/6, (a,##c) 2/(6*2) = 1/6, (x,##y) 1/(1*1) = 1: xy first;
// then the tie 1/6 = 1/6 goes to ("a","##b") < ("a","##c"): ab; then a 2, ##c 2: ac.
// Frequency: ab (4), ac (2), xy (1).
const Words kLikelihoodVsFrequency = {{"ab", 4}, {"ac", 2}, {"xy", 1}};

TEST(ReferenceWordPiece, LikelihoodAndFrequencyPickDifferentPairs) {
  const std::vector<std::string> alphabet = {"a", "b", "c", "x", "y", "##b", "##c", "##y"};
  WordPieceReferenceResult likelihood =
      ReferenceWordPieceTrain(kLikelihoodVsFrequency, Options(kLikelihood));
  EXPECT_EQ(likelihood.initial_size, 13u);
  EXPECT_EQ(likelihood.unknown_id, 1u);
  EXPECT_EQ(likelihood.merges, (Merges{{"x", "##y", 1}, {"a", "##b", 4}, {"a", "##c", 2}}));
  std::vector<std::string> expected = alphabet;
  expected.insert(expected.end(), {"xy", "ab", "ac"});
  EXPECT_EQ(likelihood.vocab, Vocab(expected));

  WordPieceReferenceResult frequency =
      ReferenceWordPieceTrain(kLikelihoodVsFrequency, Options(kFrequency));
  EXPECT_EQ(frequency.merges, (Merges{{"a", "##b", 4}, {"a", "##c", 2}, {"x", "##y", 1}}));
  expected = alphabet;
  expected.insert(expected.end(), {"ab", "ac", "xy"});
  EXPECT_EQ(frequency.vocab, Vocab(expected));

  // vocab_size 14: one merge each, and they differ.
  EXPECT_EQ(ReferenceWordPieceTrain(kLikelihoodVsFrequency, Options(kLikelihood, 14)).vocab.back(),
            "xy");
  EXPECT_EQ(ReferenceWordPieceTrain(kLikelihoodVsFrequency, Options(kFrequency, 14)).vocab.back(),
            "ab");
}

// "ab" x2, "xab" x2. Alphabet a b x (5-7), ##a ##b (8-9); pairs (a,##b) 2, (x,##a) 2,
// (##a,##b) 2: three-way ties in count.
//  - frequency, byte ties: "##a" < "a" < "x" ('#' is 0x23): ##ab; then (a,##b) 2 and
//    (x,##ab) 2: ab; then xab.
//  - frequency, hf_compat id ties: (5,9) < (7,8) < (8,9): ab; then (x,##a) (7,8) before
//    (##a,##b) (8,9): xa; then xab.
//  - likelihood: counts a 2, x 2, ##a 2, ##b 4: (x,##a) 2/4 beats 2/8 twice: xa; then
//    (a,##b) 2/8 and (xa,##b) 2/8 tie, "a" < "xa": ab; then xab.
TEST(ReferenceWordPiece, TiesGoByBytesOrWithHfCompatById) {
  const Words words = {{"ab", 2}, {"xab", 2}};
  const std::vector<std::string> alphabet = {"a", "b", "x", "##a", "##b"};
  auto with = [&](std::vector<std::string> merged) {
    std::vector<std::string> v = alphabet;
    v.insert(v.end(), merged.begin(), merged.end());
    return Vocab(v);
  };
  WordPieceReferenceResult bytes = ReferenceWordPieceTrain(words, Options(kFrequency));
  EXPECT_EQ(bytes.merges, (Merges{{"##a", "##b", 2}, {"a", "##b", 2}, {"x", "##ab", 2}}));
  EXPECT_EQ(bytes.vocab, with({"##ab", "ab", "xab"}));

  WordPieceReferenceOptions hf = Options(kFrequency);
  hf.hf_compat = true;
  WordPieceReferenceResult ids = ReferenceWordPieceTrain(words, hf);
  EXPECT_EQ(ids.merges, (Merges{{"a", "##b", 2}, {"x", "##a", 2}, {"xa", "##b", 2}}));
  EXPECT_EQ(ids.vocab, with({"ab", "xa", "xab"}));

  WordPieceReferenceResult likelihood = ReferenceWordPieceTrain(words, Options(kLikelihood));
  EXPECT_EQ(likelihood.merges, (Merges{{"x", "##a", 2}, {"a", "##b", 2}, {"xa", "##b", 2}}));
  EXPECT_EQ(likelihood.vocab, with({"xa", "ab", "xab"}));
}

// "aaaa" x1: [a ##a ##a ##a]; (a,##a) 1, (##a,##a) 2 (overlapping positions both count).
//  - frequency: ##aa (2), leaving [a ##aa ##a] (left to right, no overlap); then (a,##aa) 1 and
//    (##aa,##a) 1 tie, "##aa" < "a": ##aaa; then aaaa.
//  - likelihood: c(a) 1, c(##a) 3: (a,##a) 1/3 > (##a,##a) 2/9: aa; [aa ##a ##a]: (aa,##a)
//    1/2 > (##a,##a) 1/4: aaa; then aaaa.
TEST(ReferenceWordPiece, RepeatedLettersCountOverlappingPairsAndMergeLeftToRight) {
  const Words words = {{"aaaa", 1}};
  WordPieceReferenceResult frequency = ReferenceWordPieceTrain(words, Options(kFrequency));
  EXPECT_EQ(frequency.merges, (Merges{{"##a", "##a", 2}, {"##aa", "##a", 1}, {"a", "##aaa", 1}}));
  EXPECT_EQ(frequency.vocab, Vocab({"a", "##a", "##aa", "##aaa", "aaaa"}));
  WordPieceReferenceResult likelihood = ReferenceWordPieceTrain(words, Options(kLikelihood));
  EXPECT_EQ(likelihood.merges, (Merges{{"a", "##a", 1}, {"aa", "##a", 1}, {"aaa", "##a", 1}}));
  EXPECT_EQ(likelihood.vocab, Vocab({"a", "##a", "aa", "aaa", "aaaa"}));
}

// "##a" x3, "ba" x1. Characters # 6, a 4, b 1: plain # a b (5-7); variants ### (the second
// '#') and ##a (8-9), by code point. Words [# ### ##a] x3, [b ##a].
//  - frequency: (#,###) 3 and (###,##a) 3 tie, "#" < "###": "#" + "#" = "##" (id 10); then
//    (##,##a) 3: "##" + "a" = "##a", which is id 9 already: reused, the vocabulary stays at 11;
//    then (b,##a) 1: ba (id 11).
//  - likelihood: (#,###) 3/9 > 3/12, 1/4: "##"; then (##,##a) 3/12 and (b,##a) 1/4 tie, "##" <
//    "b": the reused ##a; then ba. The same merges.
TEST(ReferenceWordPiece, AMergeSpellingAnExistingTokenReusesItsId) {
  const Words words = {{"##a", 3}, {"ba", 1}};
  const Merges expected = {{"#", "###", 3}, {"##", "##a", 3}, {"b", "##a", 1}};
  for (WordPieceScoring scoring : {kFrequency, kLikelihood}) {
    WordPieceReferenceResult result = ReferenceWordPieceTrain(words, Options(scoring));
    EXPECT_EQ(result.initial_size, 10u);
    EXPECT_EQ(result.merges, expected);
    EXPECT_EQ(result.vocab, Vocab({"#", "a", "b", "###", "##a", "##", "ba"}));
    // vocab_size counts ids, not merges: 11 stops after the first merge, 12 needs all three.
    EXPECT_EQ(ReferenceWordPieceTrain(words, Options(scoring, 11)).merges.size(), 1u);
    EXPECT_EQ(ReferenceWordPieceTrain(words, Options(scoring, 12)).merges, expected);
  }
  // max_token_length 2: "##" (1 + 1) forms; (##,##a) would be 3 long (the reused ##a keeps its
  // length 1 afterwards, but is not formed here); (b,##a) is 2.
  WordPieceReferenceOptions limited = Options(kFrequency);
  limited.max_token_length = 2;
  EXPECT_EQ(ReferenceWordPieceTrain(words, limited).merges,
            (Merges{{"#", "###", 3}, {"b", "##a", 1}}));
}

// min_frequency makes pairs below it ineligible (for likelihood a filter, not a stop): on
// kLikelihoodVsFrequency with 2, likelihood skips xy (1) and takes ab, ac; frequency with 3
// takes ab and stops.
TEST(ReferenceWordPiece, MinFrequencyLeavesRarePairsOut) {
  WordPieceReferenceOptions likelihood = Options(kLikelihood);
  likelihood.min_frequency = 2;
  EXPECT_EQ(ReferenceWordPieceTrain(kLikelihoodVsFrequency, likelihood).merges,
            (Merges{{"a", "##b", 4}, {"a", "##c", 2}}));
  WordPieceReferenceOptions frequency = Options(kFrequency);
  frequency.min_frequency = 3;
  EXPECT_EQ(ReferenceWordPieceTrain(kLikelihoodVsFrequency, frequency).merges,
            (Merges{{"a", "##b", 4}}));
  // 0 and 1 both mean "at least once".
  frequency.min_frequency = 0;
  const Merges all = ReferenceWordPieceTrain(kLikelihoodVsFrequency, frequency).merges;
  frequency.min_frequency = 1;
  EXPECT_EQ(ReferenceWordPieceTrain(kLikelihoodVsFrequency, frequency).merges, all);
  EXPECT_EQ(all.size(), 3u);
}

// "abcd" x1: plain a b c d, variants ##b ##c ##d; every pair count and score is 1, so bytes
// decide: "##b" < "##c" < "a": ##bc, then (##bc,##d) before (a,##bc): ##bcd, then abcd.
// Lengths count characters without the prefix: ##bc is 2, ##bcd 3, abcd 4.
// With hf_compat ids (a 5, ##b 9, ##c 10, ##d 11): ab, then (##c,##d) (10,11) before (ab,##c)
// (12,10): ##cd, then abcd.
TEST(ReferenceWordPiece, MaxTokenLengthCountsCharactersWithoutThePrefix) {
  const Words words = {{"abcd", 1}};
  for (WordPieceScoring scoring : {kFrequency, kLikelihood}) {
    WordPieceReferenceOptions options = Options(scoring);
    EXPECT_EQ(ReferenceWordPieceTrain(words, options).merges,
              (Merges{{"##b", "##c", 1}, {"##bc", "##d", 1}, {"a", "##bcd", 1}}));
    options.max_token_length = 3;
    EXPECT_EQ(ReferenceWordPieceTrain(words, options).merges,
              (Merges{{"##b", "##c", 1}, {"##bc", "##d", 1}}));
    options.max_token_length = 2;  // "##bc" is 4 bytes but 2 long
    EXPECT_EQ(ReferenceWordPieceTrain(words, options).merges, (Merges{{"##b", "##c", 1}}));
    options.max_token_length = 1;
    EXPECT_TRUE(ReferenceWordPieceTrain(words, options).merges.empty());
  }
  WordPieceReferenceOptions hf = Options(kFrequency);
  hf.hf_compat = true;
  EXPECT_EQ(ReferenceWordPieceTrain(words, hf).merges,
            (Merges{{"a", "##b", 1}, {"##c", "##d", 1}, {"ab", "##cd", 1}}));
}

// "azb" x3, "ab" x1, "zab" x1; characters a 5, b 5, z 4. limit_alphabet 2 (or coverage 0.6:
// a at 0/14, b at 5/14 < 0.6, then 10/14 >= 0.6) keeps a, b: z is [UNK]. Variants: ##a (in
// "zab": after the dropped z, the a keeps its prefix) and ##b.
//  - words [a UNK ##b] x3, [a ##b], [UNK ##a ##b]: (a,##b) 1, (##a,##b) 1; "##a" < "a": ##ab,
//    then ab. Likelihood: (##a,##b) 1/(1*5) > (a,##b) 1/(4*5): the same.
//  - hf_compat drops z instead: [a ##b] x3 + 1, [##a ##b]: ab (4), then ##ab (1).
TEST(ReferenceWordPiece, UnknownCharactersNeverMergeOrWithHfCompatAreDropped) {
  const Words words = {{"azb", 3}, {"ab", 1}, {"zab", 1}};
  const std::vector<std::string> alphabet = {"a", "b", "##a", "##b"};
  for (bool by_coverage : {false, true}) {
    for (WordPieceScoring scoring : {kFrequency, kLikelihood}) {
      WordPieceReferenceOptions options = Options(scoring);
      if (by_coverage) {
        options.character_coverage = 0.6;
      } else {
        options.limit_alphabet = 2;
      }
      WordPieceReferenceResult result = ReferenceWordPieceTrain(words, options);
      EXPECT_EQ(result.merges, (Merges{{"##a", "##b", 1}, {"a", "##b", 1}}));
      EXPECT_EQ(result.vocab, Vocab({"a", "b", "##a", "##b", "##ab", "ab"}));
    }
  }
  WordPieceReferenceOptions hf = Options(kFrequency);
  hf.hf_compat = true;
  hf.limit_alphabet = 2;
  WordPieceReferenceResult dropped = ReferenceWordPieceTrain(words, hf);
  EXPECT_EQ(dropped.merges, (Merges{{"a", "##b", 4}, {"##a", "##b", 1}}));
  EXPECT_EQ(dropped.vocab, Vocab({"a", "b", "##a", "##b", "ab", "##ab"}));
  // hf_compat does not apply the coverage: z stays (a 5, b 6, z 7, ##a 8, ##b 9, ##z 10), and
  // the best pairs are (a,##z) 3 (5,10) and (##z,##b) 3 (10,9): az.
  hf.limit_alphabet = 0;
  hf.character_coverage = 0.6;
  WordPieceReferenceResult all = ReferenceWordPieceTrain(words, hf);
  EXPECT_EQ(all.initial_size, 5u + 6u);
  ASSERT_FALSE(all.merges.empty());
  EXPECT_EQ(all.merges[0], (WordPieceReferenceMerge{"a", "##z", 3}));
}

// An invalid byte is no character: it is [UNK] (blocking its neighbours), or dropped with
// hf_compat. "a\xffb" x2, "ab" x1: [a UNK ##b] x2 leaves (a,##b) 1; dropped, (a,##b) 3.
TEST(ReferenceWordPiece, InvalidBytesAreUnknown) {
  const Words words = {{"a\xff" "b", 2}, {"ab", 1}};
  WordPieceReferenceResult result = ReferenceWordPieceTrain(words, Options(kFrequency));
  EXPECT_EQ(result.vocab, Vocab({"a", "b", "##b", "ab"}));
  EXPECT_EQ(result.merges, (Merges{{"a", "##b", 1}}));
  WordPieceReferenceOptions hf = Options(kFrequency);
  hf.hf_compat = true;
  EXPECT_EQ(ReferenceWordPieceTrain(words, hf).merges, (Merges{{"a", "##b", 3}}));
}

// The unknown token keeps its place among the specials, whatever the list.
TEST(ReferenceWordPiece, SpecialTokensComeFirstInListOrder) {
  WordPieceReferenceOptions options = Options(kFrequency);
  options.special_tokens = {"[CLS]", "[UNK]"};
  WordPieceReferenceResult result = ReferenceWordPieceTrain({{"ab", 1}}, options);
  EXPECT_EQ(result.unknown_id, 1u);
  EXPECT_EQ(result.vocab, (std::vector<std::string>{"[CLS]", "[UNK]", "a", "b", "##b", "ab"}));
  options.special_tokens = {"[UNK]"};
  options.prefix = "@@";
  result = ReferenceWordPieceTrain({{"ab", 1}}, options);
  EXPECT_EQ(result.unknown_id, 0u);
  EXPECT_EQ(result.vocab, (std::vector<std::string>{"[UNK]", "a", "b", "@@b", "ab"}));
}

// The likelihood comparison is exact where doubles are not. With N = 2^40, "ab" x1, "a" x N-1,
// "\xff" "b" x N-1 ([UNK ##b]: ##b without a pair), "cd" x1, "c" x N, "\xff" "d" x N-2:
// c(a) = c(##b) = N, c(c) = N+1, c(##d) = N-1; score(a,##b) = 1/2^80 < score(c,##d) =
// 1/(2^80 - 1). In doubles (N+1)(N-1) rounds to 2^80, a tie that the bytes would give to ab.
// Frequency: 1 = 1, a tie: ab first.
TEST(ReferenceWordPiece, LikelihoodIsComparedExactly) {
  const uint64_t n = uint64_t{1} << 40;
  const Words words = {{"ab", 1}, {"a", n - 1}, {"\xff" "b", n - 1},
                       {"cd", 1}, {"c", n},     {"\xff" "d", n - 2}};
  EXPECT_EQ(ReferenceWordPieceTrain(words, Options(kLikelihood)).merges,
            (Merges{{"c", "##d", 1}, {"a", "##b", 1}}));
  EXPECT_EQ(ReferenceWordPieceTrain(words, Options(kFrequency)).merges,
            (Merges{{"a", "##b", 1}, {"c", "##d", 1}}));
  // Counts whose cross products pass 2^128: (a,##b) 2^61 / (2^61 * 2^61) against (c,##d)
  // 2^61 / ((2^61 + 1) * 2^61): ab is better, by one part in 2^61.
  const uint64_t big = uint64_t{1} << 61;
  const Words huge = {{"ab", big}, {"cd", big}, {"c", 1}};
  EXPECT_EQ(ReferenceWordPieceTrain(huge, Options(kLikelihood)).merges,
            (Merges{{"a", "##b", big}, {"c", "##d", big}}));
}

TEST(ReferenceWordPiece, EmptyCorpusAndSingleCharacterWordsHaveNoMerges) {
  EXPECT_TRUE(ReferenceWordPieceTrain({}, Options(kLikelihood)).merges.empty());
  WordPieceReferenceResult result =
      ReferenceWordPieceTrain({{"a", 3}, {"b", 1}, {"", 2}}, Options(kLikelihood));
  EXPECT_TRUE(result.merges.empty());
  EXPECT_EQ(result.vocab, Vocab({"a", "b"}));  // no variant: no character after the first
}

// Frequency scoring is character-level BPE with the "##" prefix and an unknown token: the
// reference BPE trainer (reference_trainer.h, written separately) must agree on random corpora,
// under every alphabet option and with hf_compat. Its unknown token is an id of its own after
// the specials (here [UNK] is one of them), so it is given one special token fewer.
TEST(ReferenceWordPiece, FrequencyScoringEqualsTheReferenceBpeTrainerWithThePrefix) {
  std::mt19937_64 rng(2121);
  int with_merges = 0;
  for (int i = 0; i < 300; ++i) {
    const auto kind = static_cast<WordPieceCorpusKind>(i % kWordPieceCorpusKinds);
    const Words words = RandomWordPieceWords(kind, 5 + rng() % 60, rng);
    WordPieceReferenceOptions options = Options(kFrequency);
    options.hf_compat = rng() % 2 == 0;
    static const double kCoverages[] = {1.0, 1.0, 0.95, 0.8};
    options.character_coverage = kCoverages[rng() % 4];
    if (rng() % 3 == 0) options.limit_alphabet = 1 + rng() % 6;
    if (rng() % 3 == 0) options.max_token_length = 2 + rng() % 4;
    if (rng() % 3 == 0) options.min_frequency = rng() % 30;
    const size_t initial = ReferenceWordPieceTrain(words, Options(kFrequency, 0)).initial_size;
    options.vocab_size = initial + rng() % 60;
    const WordPieceReferenceResult wordpiece = ReferenceWordPieceTrain(words, options);

    ReferenceOptions bpe;
    bpe.chars = true;
    bpe.byte_fallback = false;
    bpe.prefix = options.prefix;
    bpe.hf_compat = options.hf_compat;
    bpe.character_coverage = options.character_coverage;
    bpe.limit_alphabet = options.limit_alphabet;
    bpe.max_token_length = options.max_token_length;
    bpe.min_frequency = options.min_frequency;
    bpe.num_special_tokens = options.hf_compat ? 5 : 4;
    bpe.vocab_size = options.vocab_size;
    std::vector<WordPieceReferenceMerge> expected;
    for (const ReferenceMerge& m : ReferenceTrain(words, bpe)) {
      expected.push_back({m.left, m.right, m.count});
    }
    EXPECT_EQ(wordpiece.merges, expected)
        << "corpus " << i << " hf " << options.hf_compat << " coverage "
        << options.character_coverage << " limit " << options.limit_alphabet << " max_len "
        << options.max_token_length << " min_freq " << options.min_frequency << " vocab "
        << options.vocab_size;
    with_merges += !expected.empty();
  }
  EXPECT_GE(with_merges, 200);
}

// ---- the encoder and decoder ----------------------------------------------------------------

WordPieceReferenceVocab EncoderVocab(const std::vector<std::string>& tokens, size_t max_chars = 100) {
  WordPieceReferenceVocab vocab;
  for (size_t i = 0; i < tokens.size(); ++i) vocab.ids[tokens[i]] = static_cast<uint32_t>(i);
  vocab.unknown_id = 0;
  vocab.max_input_chars_per_word = max_chars;
  return vocab;
}

TEST(ReferenceWordPieceEncode, LongestMatchFirstWithThePrefixAfterTheStart) {
  //                                              0        1     2        3         4    5
  const WordPieceReferenceVocab v = EncoderVocab({"[UNK]", "un", "##aff", "##able", "a", "##a",
                                                  // 6     7     8      9      10
                                                  "##ff", "ab", "abc", "##c", "##d"});
  using Ids = std::vector<uint32_t>;
  EXPECT_EQ(ReferenceWordPieceEncode("unaffable", v), (Ids{1, 2, 3}));  // BERT's example
  EXPECT_EQ(ReferenceWordPieceEncode("abcd", v), (Ids{8, 10}));        // abc, not ab
  EXPECT_EQ(ReferenceWordPieceEncode("abd", v), (Ids{7, 10}));
  EXPECT_EQ(ReferenceWordPieceEncode("aa", v), (Ids{4, 5}));
  EXPECT_EQ(ReferenceWordPieceEncode("", v), (Ids{}));
  // Matched up to a point, then nothing: the whole word is one [UNK].
  EXPECT_EQ(ReferenceWordPieceEncode("unaffx", v), (Ids{0}));
  EXPECT_EQ(ReferenceWordPieceEncode("x", v), (Ids{0}));
  // A word that starts as a prefixed token is that token (the prefix is added only after the
  // start, and the word's own "##" matches it): Hugging Face does the same.
  EXPECT_EQ(ReferenceWordPieceEncode("##a", v), (Ids{5}));
  // An invalid byte is in no token.
  EXPECT_EQ(ReferenceWordPieceEncode("a\xff", v), (Ids{0}));
  EXPECT_EQ(ReferenceWordPieceEncode("\xff", v), (Ids{0}));
}

// Greedy, not the best segmentation: "abc" over {a, ab, ##bc} takes ab, then finds no ##c.
TEST(ReferenceWordPieceEncode, GreedyEvenWhereAnotherSegmentationExists) {
  const WordPieceReferenceVocab v = EncoderVocab({"[UNK]", "a", "ab", "##bc"});
  EXPECT_EQ(ReferenceWordPieceEncode("abc", v), (std::vector<uint32_t>{0}));
}

// max_input_chars_per_word counts characters (Hugging Face: sequence.chars().count()).
TEST(ReferenceWordPieceEncode, OverlongWordsAreUnknownCountingCharacters) {
  const std::string e = "\xc3\xa9";  // é
  const WordPieceReferenceVocab v = EncoderVocab({"[UNK]", e, "##" + e}, 3);
  EXPECT_EQ(ReferenceWordPieceEncode(e + e + e, v), (std::vector<uint32_t>{1, 2, 2}));  // 6 bytes
  EXPECT_EQ(ReferenceWordPieceEncode(e + e + e + e, v), (std::vector<uint32_t>{0}));
  const WordPieceReferenceVocab wide = EncoderVocab({"[UNK]", "a", "##a"});
  EXPECT_EQ(ReferenceWordPieceEncode(std::string(100, 'a'), wide).size(), 100u);
  EXPECT_EQ(ReferenceWordPieceEncode(std::string(101, 'a'), wide), (std::vector<uint32_t>{0}));
}

TEST(ReferenceWordPieceDecode, PrefixedTokensAreGluedOthersSpaced) {
  EXPECT_EQ(ReferenceWordPieceDecode({"un", "##aff", "##able", "is"}, "##"), "unaffable is");
  EXPECT_EQ(ReferenceWordPieceDecode({}, "##"), "");
  // Hugging Face's own test: the first token keeps its prefix.
  EXPECT_EQ(ReferenceWordPieceDecode({"##uelo", "Ara", "##\xc3\xba" "j", "##o", "No", "##guera"},
                                     "##"),
            "##uelo Ara\xc3\xba" "jo Noguera");
  // Cleanup (Hugging Face's default), per token: a "," or "n't" token loses its space;
  // "do" "not" are two tokens, so " do not" never matches.
  EXPECT_EQ(ReferenceWordPieceDecode({"I", "do", "n't", "know", ",", "do", "not", "."}, "##", true),
            "I don't know, do not.");
  EXPECT_EQ(ReferenceWordPieceDecode({"I", "do", "n't", "know", ",", "do", "not", "."}, "##"),
            "I do n't know , do not .");
}

TEST(ReferenceWordPieceDeathTest, HfCompatNeedsFrequencyScoringAndUnknownMustBeSpecial) {
  WordPieceReferenceOptions options = Options(kLikelihood);
  options.hf_compat = true;
  EXPECT_DEATH(ReferenceWordPieceTrain({{"ab", 1}}, options), "frequency");
  options = Options(kLikelihood);
  options.special_tokens = {"[PAD]"};
  EXPECT_DEATH(ReferenceWordPieceTrain({{"ab", 1}}, options), "unknown token");
}

}  // namespace
}  // namespace tokenmill::testing
