// WordPiece training (TrainerOptions::algorithm = kWordPiece): the product trainer against the
// reference WordPiece trainer (tests/reference/reference_wordpiece.h, whose header is the
// contract) on random corpora of repeated letters, mixed scripts, Chinese, emoji, invalid UTF-8
// and '#', in both scoring modes and under the alphabet, length and frequency options and
// hf_compat; the same model with 1 and 4 threads; resuming from the merges of an interrupted
// run; and golden cases worked out by hand (reference_wordpiece_test.cc works them through).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "count/word_counts.h"
#include "model/wordpiece/wordpiece_model.h"
#include "reference/reference_wordpiece.h"
#include "reference/trained_bpe.h"
#include "reference/wordpiece_corpora.h"
#include "train/trainer.h"

namespace tokenmill {
namespace {

using testing::ReferenceWordPieceTrain;
using testing::WordPieceReferenceMerge;
using testing::WordPieceReferenceOptions;
using testing::WordPieceReferenceResult;
using testing::WordPieceScoring;
using Words = TestWords;
using Merges = std::vector<WordPieceReferenceMerge>;

TrainerOptions ProductOptions(const WordPieceReferenceOptions& ref, int threads) {
  TrainerOptions o;
  o.algorithm = Algorithm::kWordPiece;
  o.wordpiece_score = ref.scoring == WordPieceScoring::kLikelihood ? WordPieceScore::kLikelihood
                                                                   : WordPieceScore::kFrequency;
  o.units = UnitKind::kChar;
  o.continuing_subword_prefix = ref.prefix;
  o.byte_fallback = false;
  o.unknown_token = ref.unknown_token;
  o.special_tokens = ref.special_tokens;
  o.special_tokens_at = SpecialTokensAt::kStart;
  o.vocab_size = ref.vocab_size;
  o.min_frequency = ref.min_frequency;
  o.max_token_length = ref.max_token_length;
  o.character_coverage = ref.character_coverage;
  o.limit_alphabet = ref.limit_alphabet;
  o.hf_compat = ref.hf_compat;
  o.threads = threads;
  return o;
}

// A product run: its result, and every merge after_step saw (replayed ones included).
struct ProductRun {
  absl::StatusOr<TrainResult> result;
  Merges merges;
};

// Trains with `control`, recording the merges; `stop_after` > 0 stops after that many steps.
ProductRun RunProduct(const WordCounts& counts, const TrainerOptions& options,
                      TrainControl control = {}, size_t stop_after = 0) {
  ProductRun run;
  control.after_step = [&run, stop_after](const TrainEvent& event) {
    if (event.merge != nullptr) {
      run.merges.push_back({std::string(event.merge->left), std::string(event.merge->right),
                            event.merge->count});
    }
    return stop_after == 0 || event.steps_done < stop_after;
  };
  run.result = Train(WordSource::Borrow(counts), options, control);
  return run;
}

std::vector<std::string> Vocabulary(const TrainResult& result) {
  const std::span<const std::string> tokens = result.model->token_bytes();
  return std::vector<std::string>(tokens.begin(), tokens.end());
}

// The run's merges with result.merge_counts as their counts (what a replayed merge reports
// may not know its count).
Merges MergesWithResultCounts(const ProductRun& run) {
  Merges merges = run.merges;
  for (size_t i = 0; i < merges.size() && i < run.result->merge_counts.size(); ++i) {
    merges[i].count = run.result->merge_counts[i];
  }
  return merges;
}

std::string Show(const std::vector<std::string>& vocab, size_t from) {
  std::string out;
  for (size_t i = from; i < vocab.size(); ++i) out += "[" + vocab[i] + "]";
  return out;
}
std::string Show(const Merges& merges) {
  std::string out;
  for (const WordPieceReferenceMerge& m : merges) {
    out += "'" + m.left + "' + '" + m.right + "' (" + std::to_string(m.count) + ")\n";
  }
  return out;
}

std::string Label(const WordPieceReferenceOptions& o) {
  return std::string(o.scoring == WordPieceScoring::kLikelihood ? "likelihood" : "frequency") +
         " vocab " + std::to_string(o.vocab_size) + " hf " + std::to_string(o.hf_compat) +
         " coverage " + std::to_string(o.character_coverage) + " limit_alphabet " +
         std::to_string(o.limit_alphabet) + " max_len " + std::to_string(o.max_token_length) +
         " min_freq " + std::to_string(o.min_frequency) + " specials " +
         std::to_string(o.special_tokens.size());
}

// The product equals the reference: vocabulary in id order, merges (counts too), and the
// model's WordPiece fields. Returns the reference's result.
WordPieceReferenceResult ExpectMatchesReference(const Words& words,
                                                const WordPieceReferenceOptions& options,
                                                const std::vector<int>& threads = {1, 4}) {
  SCOPED_TRACE(Label(options));
  const WordPieceReferenceResult expected = ReferenceWordPieceTrain(words, options);
  const WordCounts counts = ToCounts(words);
  for (int t : threads) {
    SCOPED_TRACE("threads " + std::to_string(t));
    const ProductRun run = RunProduct(counts, ProductOptions(options, t));
    if (!run.result.ok()) {
      // The one failure allowed: merges were needed and no word holds a pair.
      EXPECT_TRUE(IsNothingToLearn(run.result.status())) << run.result.status();
      EXPECT_TRUE(expected.merges.empty()) << Show(expected.merges);
      continue;
    }
    const TrainResult& result = *run.result;
    EXPECT_NE(result.model, nullptr);
    if (result.model == nullptr) continue;
    EXPECT_TRUE(result.model->Validate().ok()) << result.model->Validate();
    const std::vector<std::string> vocab = Vocabulary(result);
    EXPECT_EQ(vocab, expected.vocab) << "product:   " << Show(vocab, expected.initial_size)
                                     << "\nreference: "
                                     << Show(expected.vocab, expected.initial_size);
    EXPECT_EQ(run.merges, expected.merges) << "product:\n" << Show(run.merges) << "reference:\n"
                                           << Show(expected.merges);
    EXPECT_EQ(MergesWithResultCounts(run), expected.merges);
    EXPECT_EQ(result.merge_counts.size(), expected.merges.size());
    EXPECT_FALSE(result.interrupted);
    const auto* model = dynamic_cast<const WordPieceModel*>(result.model.get());
    EXPECT_NE(model, nullptr) << "not a WordPieceModel";
    if (model == nullptr) continue;
    EXPECT_EQ(model->tokens, expected.vocab);
    EXPECT_EQ(model->unk_token, options.unknown_token);
    EXPECT_EQ(model->unknown(), std::optional<TokenId>(expected.unknown_id));
    EXPECT_EQ(model->prefix, options.prefix);
    EXPECT_EQ(model->max_input_chars_per_word, 100u);
    std::vector<SpecialToken> specials;
    for (size_t i = 0; i < options.special_tokens.size(); ++i) {
      specials.push_back({options.special_tokens[i], static_cast<TokenId>(i)});
    }
    EXPECT_EQ(model->specials, specials);
  }
  return expected;
}

const std::vector<std::vector<std::string>> kSpecialLists = {
    {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}, {"[UNK]"}, {"[CLS]", "[SEP]", "[UNK]"}};

// Random options on `words` (scoring given); vocab_size from the reference's alphabet.
WordPieceReferenceOptions RandomOptions(const Words& words, WordPieceScoring scoring, int i,
                                        std::mt19937_64& rng) {
  WordPieceReferenceOptions options;
  options.scoring = scoring;
  options.hf_compat = scoring == WordPieceScoring::kFrequency && rng() % 3 == 0;
  static const double kCoverages[] = {1.0, 1.0, 1.0, 0.9995, 0.95, 0.8, 0.5};
  options.character_coverage = kCoverages[rng() % 7];
  if (rng() % 4 == 0) options.limit_alphabet = 1 + rng() % 8;
  if (rng() % 4 == 0) options.max_token_length = 2 + rng() % 5;
  if (rng() % 4 == 0) options.min_frequency = 1 + rng() % 40;
  options.special_tokens = kSpecialLists[rng() % kSpecialLists.size()];
  WordPieceReferenceOptions sizing = options;
  sizing.vocab_size = 0;
  const size_t initial = ReferenceWordPieceTrain(words, sizing).initial_size;
  // Small room mostly (ties and exhaustion), sometimes enough to run out of pairs.
  options.vocab_size = initial + rng() % (i % 5 == 0 ? 300 : 40);
  return options;
}

TEST(WordPieceTrain, EqualsReferenceOnRandomCorpora) {
  std::mt19937_64 rng(20260621);
  int corpora = 0, with_merges[2] = {0, 0}, differ = 0;
  for (int i = 0; i < 240; ++i) {
    const auto kind = static_cast<testing::WordPieceCorpusKind>(i % testing::kWordPieceCorpusKinds);
    const Words words = testing::RandomWordPieceWords(kind, 8 + rng() % 80, rng);
    SCOPED_TRACE("corpus " + std::to_string(i) + " kind " + std::to_string(static_cast<int>(kind)));
    Merges merges[2];
    for (WordPieceScoring scoring : {WordPieceScoring::kLikelihood, WordPieceScoring::kFrequency}) {
      const int s = scoring == WordPieceScoring::kLikelihood ? 0 : 1;
      merges[s] = ExpectMatchesReference(words, RandomOptions(words, scoring, i, rng)).merges;
      with_merges[s] += !merges[s].empty();
    }
    differ += merges[0] != merges[1];
    ++corpora;
  }
  EXPECT_GE(corpora, 200);
  EXPECT_GE(with_merges[0], 200);  // trained, not refused
  EXPECT_GE(with_merges[1], 200);
  EXPECT_GE(differ, 100);  // the two scorings mostly learn different merges
}

// Every alphabet and limit option, both scorings and hf_compat, on a few larger corpora.
TEST(WordPieceTrain, EqualsReferenceForEveryOptionCombination) {
  std::mt19937_64 rng(2121);
  std::vector<Words> corpora;
  for (int k = 0; k < testing::kWordPieceCorpusKinds; ++k) {
    corpora.push_back(
        testing::RandomWordPieceWords(static_cast<testing::WordPieceCorpusKind>(k), 150, rng));
  }
  for (const Words& words : corpora) {
    for (int mode = 0; mode < 3; ++mode) {  // likelihood, frequency, frequency + hf_compat
      for (double coverage : {1.0, 0.9}) {
        for (size_t limit : {size_t{0}, size_t{4}}) {
          for (size_t max_len : {size_t{0}, size_t{3}}) {
            for (uint64_t min_freq : {uint64_t{0}, uint64_t{5}}) {
              WordPieceReferenceOptions options;
              options.scoring = mode == 0 ? WordPieceScoring::kLikelihood
                                          : WordPieceScoring::kFrequency;
              options.hf_compat = mode == 2;
              options.character_coverage = coverage;
              options.limit_alphabet = limit;
              options.max_token_length = max_len;
              options.min_frequency = min_freq;
              options.vocab_size = 0;
              options.vocab_size = ReferenceWordPieceTrain(words, options).initial_size + 60;
              ExpectMatchesReference(words, options, {2});
            }
          }
        }
      }
    }
  }
}

// ---- golden cases (reference_wordpiece_test.cc works them out) ------------------------------

WordPieceReferenceOptions Golden(WordPieceScoring scoring, size_t vocab_size = 1000) {
  WordPieceReferenceOptions options;
  options.scoring = scoring;
  options.vocab_size = vocab_size;
  return options;
}

TEST(WordPieceTrain, GoldenLikelihoodAndFrequencyPickDifferentPairs) {
  const Words words = {{"ab", 4}, {"ac", 2}, {"xy", 1}};
  EXPECT_EQ(ExpectMatchesReference(words, Golden(WordPieceScoring::kLikelihood)).merges,
            (Merges{{"x", "##y", 1}, {"a", "##b", 4}, {"a", "##c", 2}}));
  EXPECT_EQ(ExpectMatchesReference(words, Golden(WordPieceScoring::kFrequency)).merges,
            (Merges{{"a", "##b", 4}, {"a", "##c", 2}, {"x", "##y", 1}}));
}

TEST(WordPieceTrain, GoldenTiesByBytesOrByIdWithHfCompat) {
  const Words words = {{"ab", 2}, {"xab", 2}};
  EXPECT_EQ(ExpectMatchesReference(words, Golden(WordPieceScoring::kFrequency)).merges,
            (Merges{{"##a", "##b", 2}, {"a", "##b", 2}, {"x", "##ab", 2}}));
  WordPieceReferenceOptions hf = Golden(WordPieceScoring::kFrequency);
  hf.hf_compat = true;
  EXPECT_EQ(ExpectMatchesReference(words, hf).merges,
            (Merges{{"a", "##b", 2}, {"x", "##a", 2}, {"xa", "##b", 2}}));
  EXPECT_EQ(ExpectMatchesReference(words, Golden(WordPieceScoring::kLikelihood)).merges,
            (Merges{{"x", "##a", 2}, {"a", "##b", 2}, {"xa", "##b", 2}}));
}

// The merge (##, ##a) spells "##a", the prefixed character's token: its id is reused and the
// vocabulary does not grow (12 ids need three merges).
TEST(WordPieceTrain, GoldenReuseOfAnExistingToken) {
  const Words words = {{"##a", 3}, {"ba", 1}};
  for (WordPieceScoring scoring : {WordPieceScoring::kFrequency, WordPieceScoring::kLikelihood}) {
    const WordPieceReferenceResult result = ExpectMatchesReference(words, Golden(scoring, 12));
    EXPECT_EQ(result.merges, (Merges{{"#", "###", 3}, {"##", "##a", 3}, {"b", "##a", 1}}));
    EXPECT_EQ(result.vocab.size(), 12u);
  }
}

// A near-tie that doubles cannot tell apart: 1/2^80 against 1/(2^80 - 1).
TEST(WordPieceTrain, GoldenLikelihoodIsComparedExactly) {
  const uint64_t n = uint64_t{1} << 40;
  const Words words = {{"ab", 1}, {"a", n - 1}, {"\xff" "b", n - 1},
                       {"cd", 1}, {"c", n},     {"\xff" "d", n - 2}};
  EXPECT_EQ(ExpectMatchesReference(words, Golden(WordPieceScoring::kLikelihood)).merges,
            (Merges{{"c", "##d", 1}, {"a", "##b", 1}}));
}

// Unknown characters block their neighbours; with hf_compat they are dropped.
TEST(WordPieceTrain, GoldenUnknownCharactersAndHfDropping) {
  const Words words = {{"azb", 3}, {"ab", 1}, {"zab", 1}, {"a\xff" "b", 1}};
  WordPieceReferenceOptions options = Golden(WordPieceScoring::kFrequency);
  options.limit_alphabet = 2;
  EXPECT_EQ(ExpectMatchesReference(words, options).merges,
            (Merges{{"##a", "##b", 1}, {"a", "##b", 1}}));
  options.hf_compat = true;
  EXPECT_EQ(ExpectMatchesReference(words, options).merges,
            (Merges{{"a", "##b", 5}, {"##a", "##b", 1}}));
}

// ---- determinism and resume --------------------------------------------------------------------

Words ManyWords(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Words words;
  for (size_t i = 0; i < n; ++i) {
    const auto kind = static_cast<testing::WordPieceCorpusKind>(i % testing::kWordPieceCorpusKinds);
    words.emplace_back(testing::RandomWordPieceWord(kind, rng) + std::to_string(i % 89),
                       1 + rng() % 20);
  }
  return words;
}

// A corpus large enough for the parallel paths: 1, 2 and 4 threads give the same model, and
// (on a smaller one) the reference's.
TEST(WordPieceTrain, SameModelWithOneTwoAndFourThreads) {
  const WordCounts counts = ToCounts(ManyWords(30000, 3));
  for (WordPieceScoring scoring : {WordPieceScoring::kLikelihood, WordPieceScoring::kFrequency}) {
    std::vector<ProductRun> runs;
    for (int threads : {1, 2, 4}) {
      WordPieceReferenceOptions options = Golden(scoring, 1500);
      options.character_coverage = 0.995;
      runs.push_back(RunProduct(counts, ProductOptions(options, threads)));
      ASSERT_TRUE(runs.back().result.ok()) << runs.back().result.status();
    }
    for (size_t i = 1; i < runs.size(); ++i) {
      EXPECT_EQ(Vocabulary(*runs[i].result), Vocabulary(*runs[0].result));
      EXPECT_EQ(runs[i].merges, runs[0].merges);
      EXPECT_EQ(runs[i].result->merge_counts, runs[0].result->merge_counts);
    }
    EXPECT_EQ(Vocabulary(*runs[0].result).size(), 1500u);
  }
  const Words words = ManyWords(1500, 4);
  for (WordPieceScoring scoring : {WordPieceScoring::kLikelihood, WordPieceScoring::kFrequency}) {
    WordPieceReferenceOptions options = Golden(scoring, 0);
    options.vocab_size = ReferenceWordPieceTrain(words, options).initial_size + 150;
    ExpectMatchesReference(words, options, {1, 4});
  }
}

// Stopped by after_step after k steps, then resumed from the merges it saw (with and without
// their counts), training ends where one uninterrupted run does.
TEST(WordPieceTrain, ResumingFromTheMergesOfAnInterruptedRunGivesTheUninterruptedModel) {
  std::mt19937_64 rng(777);
  int resumed_runs = 0;
  for (int i = 0; i < 80; ++i) {
    const auto kind = static_cast<testing::WordPieceCorpusKind>(i % testing::kWordPieceCorpusKinds);
    const Words words = testing::RandomWordPieceWords(kind, 20 + rng() % 150, rng);
    const WordCounts counts = ToCounts(words);
    const WordPieceScoring scoring =
        i % 2 == 0 ? WordPieceScoring::kLikelihood : WordPieceScoring::kFrequency;
    const WordPieceReferenceOptions ref = RandomOptions(words, scoring, i, rng);
    SCOPED_TRACE("corpus " + std::to_string(i) + " " + Label(ref));
    const TrainerOptions options = ProductOptions(ref, 1);
    const ProductRun full = RunProduct(counts, options);
    if (!full.result.ok() || full.merges.size() < 2) continue;
    const size_t stop_after = 1 + rng() % (full.merges.size() - 1);
    const ProductRun partial = RunProduct(counts, options, {}, stop_after);
    ASSERT_TRUE(partial.result.ok()) << partial.result.status();
    EXPECT_TRUE(partial.result->interrupted);
    ASSERT_EQ(partial.merges.size(), stop_after);
    EXPECT_EQ(MergesWithResultCounts(partial),
              Merges(full.merges.begin(), full.merges.begin() + static_cast<ptrdiff_t>(stop_after)));
    for (bool with_counts : {false, true}) {
      SCOPED_TRACE(with_counts ? "with counts" : "without counts");
      TrainControl resume;
      for (const WordPieceReferenceMerge& m : partial.merges) {
        resume.resume.merges.emplace_back(m.left, m.right);
        if (with_counts) resume.resume.merge_counts.push_back(m.count);
      }
      TrainerOptions resume_options = options;
      resume_options.threads = 1 + static_cast<int>(rng() % 4);
      const ProductRun resumed = RunProduct(counts, resume_options, resume);
      ASSERT_TRUE(resumed.result.ok()) << resumed.result.status();
      EXPECT_EQ(Vocabulary(*resumed.result), Vocabulary(*full.result)) << "stopped after " << stop_after;
      EXPECT_EQ(MergesWithResultCounts(resumed), MergesWithResultCounts(full));
      EXPECT_EQ(resumed.result->merge_counts, full.result->merge_counts);
      EXPECT_EQ(resumed.result->stop_reason, full.result->stop_reason);
    }
    ++resumed_runs;
  }
  EXPECT_GE(resumed_runs, 50);
}

}  // namespace
}  // namespace tokenmill
