// The product BPE trainer (lib/train/bpe/) against the reference trainer, the documented
// options, the resume/interrupt hooks and thread-count independence.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/option_error.h"
#include "count/word_counts.h"
#include "reference/reference_trainer.h"
#include "reference/trained_bpe.h"
#include "train/trainer.h"

namespace tokenmill {
namespace {

using ::testing::HasSubstr;
using testing::ReferenceMerge;
using testing::ReferenceOptions;
using testing::ReferenceTrain;
using Words = TestWords;

// The ids the contract in bpe_trainer.h gives, checked independently of the trainer: specials
// where special_tokens_at says, the alphabet, then each new token once in merge order.
void ExpectIdsFollowContract(const Words& words, const TrainerOptions& options,
                             const TrainResult& result) {
  const BpeModel& model = Bpe(result);
  ASSERT_TRUE(model.Validate().ok()) << model.Validate();
  std::vector<std::string> expected;
  if (options.special_tokens_at == SpecialTokensAt::kStart) {
    expected = options.special_tokens;
  }
  std::vector<int> alphabet;
  if (options.hf_compat) {
    bool seen[256] = {};
    for (const auto& [w, c] : words) {
      for (unsigned char b : w) seen[b] = true;
    }
    // Byte-level code points: printable Latin-1 map to themselves and sort first among equals
    // of their range; the others map above 255 in byte order.
    auto printable = [](int x) {
      return (x >= 33 && x <= 126) || (x >= 161 && x <= 172) || (x >= 174 && x <= 255);
    };
    for (int b = 0; b < 256; ++b) {
      if ((seen[b] || options.hf_all_bytes) && printable(b)) alphabet.push_back(b);
    }
    for (int b = 0; b < 256; ++b) {
      if ((seen[b] || options.hf_all_bytes) && !printable(b)) alphabet.push_back(b);
    }
  } else {
    for (int b = 0; b < 256; ++b) alphabet.push_back(b);
  }
  for (int b : alphabet) expected.emplace_back(1, static_cast<char>(b));
  for (const Merge& m : model.merges) {
    std::string s = model.tokens[m.left] + model.tokens[m.right];
    if (std::find(expected.begin() + static_cast<ptrdiff_t>(
                      options.special_tokens_at == SpecialTokensAt::kStart
                          ? options.special_tokens.size() : 0),
                  expected.end(), s) == expected.end()) {
      expected.push_back(s);
    }
  }
  if (options.special_tokens_at == SpecialTokensAt::kEnd) {
    expected.insert(expected.end(), options.special_tokens.begin(), options.special_tokens.end());
  }
  EXPECT_EQ(model.tokens, expected);
  EXPECT_LE(model.VocabSize(), options.vocab_size);
}

// Returns how many merges reused an existing token's id.
size_t ExpectMatchesReference(const Words& words, const TrainerOptions& options,
                              const std::string& label) {
  SCOPED_TRACE(label);
  absl::StatusOr<TrainResult> result = Train(WordSource::Borrow(ToCounts(words)), options);
  std::vector<ReferenceMerge> expected = ReferenceTrain(words, ToReference(options));
  if (!result.ok()) {
    // The only failure allowed here: merges were needed but no word holds a pair.
    EXPECT_THAT(std::string(result.status().message()), HasSubstr("no pair to merge"));
    EXPECT_TRUE(expected.empty());
    return 0;
  }
  std::vector<ReferenceMerge> actual = ProductMerges(*result);
  EXPECT_EQ(actual, expected) << "product:\n" << Describe(actual) << "reference:\n"
                              << Describe(expected);
  ExpectIdsFollowContract(words, options, *result);
  std::set<TokenId> formed;
  for (const Merge& m : Bpe(*result).merges) formed.insert(m.result);
  return Bpe(*result).merges.size() - formed.size();
}

// ---- random corpora ----------------------------------------------------------------------

enum class CorpusKind { kRepeats, kMixedScripts, kChinese, kBytes };

std::string RandomWord(CorpusKind kind, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  std::string w;
  switch (kind) {
    case CorpusKind::kRepeats: {  // "aaaa", "abab", "aab": overlapping pairs
      const char* letters = "aab";
      size_t len = 1 + pick(24);
      if (pick(3) == 0) {
        w.assign(len, letters[pick(3)]);
      } else {
        for (size_t i = 0; i < len; ++i) w.push_back(letters[pick(3)]);
      }
      break;
    }
    case CorpusKind::kMixedScripts: {
      static const std::vector<std::string> pieces = {
          "a", "e", "t", "th", " ", "\n", "\xc3\xa9", "\xd0\xb4", "\xd0\xb0", "\xce\xbb",
          "\xe4\xb8\xad", "\xe6\x96\x87", "\xf0\x9f\x98\x80", "\xff", "\x80", "\t", "0", "1"};
      size_t len = 1 + pick(8);
      for (size_t i = 0; i < len; ++i) w += pieces[pick(pieces.size())];
      break;
    }
    case CorpusKind::kChinese: {
      static const std::vector<std::string> chars = {
          "\xe7\x9a\x84", "\xe4\xb8\x80", "\xe6\x98\xaf", "\xe4\xb8\x8d", "\xe4\xba\x86",
          "\xe4\xba\xba", "\xe6\x88\x91", "\xe5\x9c\xa8", "\xe6\x9c\x89", "\xe4\xbb\x96",
          "\xe8\xbf\x99", "\xe4\xb8\xad", "\xe5\xa4\xa7", "\xe6\x9d\xa5", "\xef\xbc\x8c"};
      size_t len = 1 + pick(7);
      for (size_t i = 0; i < len; ++i) w += chars[pick(chars.size())];
      break;
    }
    case CorpusKind::kBytes: {
      size_t len = 1 + pick(10);
      for (size_t i = 0; i < len; ++i) w.push_back(static_cast<char>(pick(6) * 47));
      break;
    }
  }
  return w;
}

Words RandomWords(CorpusKind kind, size_t n, std::mt19937_64& rng) {
  Words words;
  for (size_t i = 0; i < n; ++i) {
    // Two draws in sequence (operands of % are unsequenced: each build could pick its order).
    const uint64_t draw = rng();
    const uint64_t count = 1 + draw % (rng() % 4 == 0 ? 1000 : 5);
    words.emplace_back(RandomWord(kind, rng), count);
  }
  return words;
}

TEST(TrainBpe, EqualsReferenceOnRandomCorpora) {
  std::mt19937_64 rng(20240611);
  int trained = 0;
  size_t reused = 0;
  for (int i = 0; i < 240; ++i) {
    CorpusKind kind = static_cast<CorpusKind>(i % 4);
    Words words = RandomWords(kind, 10 + rng() % 90, rng);
    TrainerOptions options;
    options.hf_compat = rng() % 2 == 0;
    options.hf_all_bytes = options.hf_compat && i % 3 == 0;
    options.threads = 1 + static_cast<int>(rng() % 2);
    size_t specials = rng() % 3;
    for (size_t s = 0; s < specials; ++s) options.special_tokens.push_back("<s" + std::to_string(s) + ">");
    options.special_tokens_at = rng() % 2 ? SpecialTokensAt::kStart : SpecialTokensAt::kEnd;
    if (rng() % 3 == 0) options.max_token_length = 2 + rng() % 6;
    if (rng() % 3 == 0) options.min_frequency = 1 + rng() % 40;
    size_t alphabet = 256;
    if (options.hf_compat && !options.hf_all_bytes) {
      bool seen[256] = {};
      alphabet = 0;
      for (const auto& [w, c] : words) {
        for (unsigned char b : w) alphabet += !seen[b], seen[b] = true;
      }
    }
    options.vocab_size = alphabet + specials + rng() % (i % 5 == 0 ? 400 : 120);
    reused += ExpectMatchesReference(words, options,
                           "corpus " + std::to_string(i) + " kind " + std::to_string(i % 4) +
                               " vocab " + std::to_string(options.vocab_size) + " hf " +
                               std::to_string(options.hf_compat) + " all_bytes " +
                               std::to_string(options.hf_all_bytes) + " max_len " +
                               std::to_string(options.max_token_length) + " min_freq " +
                               std::to_string(options.min_frequency));
    ++trained;
  }
  EXPECT_GE(trained, 200);
  // Id reuse is implemented (as in Hugging Face) but never seen: see bpe_trainer.h.
  EXPECT_EQ(reused, 0u);
}

// Id reuse (bpe_trainer.h, README "Training semantics"): a merge whose bytes already name a
// token keeps that id. Corpora built to give it every chance: many small ones over 2-3 letters,
// words of a few letters sharing prefixes and suffixes (so pairs like (ab)(c) and (a)(bc) would
// both be candidates), with special tokens, in both tie-break modes, trained until no pair is
// left. The product must equal the reference trainer (which implements reuse on its own, by
// the token's bytes) merge for merge, and reuse ids exactly where the reference does.
//
// Neither ever reuses an id here, and none can: if a pair (X, Y) is adjacent in a word at step
// j, no token has ever crossed the edges of that occurrence of XY, so (merges replace pairs left
// to right, and what lies outside the occurrence can only take its edge symbols) its
// segmentation at every step equals that of the string XY trained alone. Had XY become a token
// at an earlier step k through another pair, the string alone would be one token from step k
// on, not X, Y at step j. So reuse would need a replayed or foreign merge list; the count below
// is checked to stay equal to the reference's (0), not to be positive.
TEST(TrainBpe, EqualsReferenceOnTinyAlphabetsWhereReuseCouldArise) {
  std::mt19937_64 rng(515);
  size_t trained = 0, merges = 0, product_reused = 0, reference_reused = 0;
  for (int i = 0; i < 600; ++i) {
    const std::string alphabet = i % 3 == 0 ? "ab" : "abc";
    // Words from a few stems joined with a few affixes: "abc", "ab"+"c", "a"+"bc", ...
    std::vector<std::string> stems;
    for (int k = 0; k < 4; ++k) {
      std::string stem;
      for (size_t n = 1 + rng() % 3; n > 0; --n) stem.push_back(alphabet[rng() % alphabet.size()]);
      stems.push_back(stem);
    }
    Words words;
    for (size_t n = 2 + rng() % 10; n > 0; --n) {
      std::string w = stems[rng() % stems.size()];
      for (size_t parts = rng() % 3; parts > 0; --parts) w += stems[rng() % stems.size()];
      words.emplace_back(w, 1 + rng() % 6);
    }
    for (bool hf : {false, true}) {
      TrainerOptions options;
      options.hf_compat = hf;
      if (i % 2 == 0) options.special_tokens = {"ab", "<s>"};  // one spells a possible merge
      options.special_tokens_at = i % 4 < 2 ? SpecialTokensAt::kStart : SpecialTokensAt::kEnd;
      if (i % 5 == 0) options.max_token_length = 2 + rng() % 3;
      const size_t base = hf ? alphabet.size() : 256;
      options.vocab_size = base + options.special_tokens.size() + 40;  // more than the pairs
      const std::string label = "corpus " + std::to_string(i) + (hf ? " hf" : "");
      const size_t reused = ExpectMatchesReference(words, options, label);
      product_reused += reused;
      const std::vector<ReferenceMerge> expected = ReferenceTrain(words, ToReference(options));
      std::set<std::string> formed;
      for (const ReferenceMerge& m : expected) formed.insert(m.left + m.right);
      reference_reused += expected.size() - formed.size();
      EXPECT_EQ(reused, expected.size() - formed.size()) << label;
      merges += expected.size();
      ++trained;
    }
  }
  EXPECT_EQ(trained, 1200u);
  EXPECT_GT(merges, 5000u);  // the corpora are trained out, not stopped after a merge or two
  EXPECT_EQ(product_reused, reference_reused);
  EXPECT_EQ(reference_reused, 0u);
}

// Large counts (beyond 32 bits) must not overflow.
TEST(TrainBpe, EqualsReferenceWithCountsBeyond32Bits) {
  Words words = {{"abab", uint64_t{3} << 40}, {"bab", (uint64_t{1} << 41) + 7}, {"aab", 5}};
  TrainerOptions options;
  options.vocab_size = 262;
  ExpectMatchesReference(words, options, "large counts");
  // Resumed after each merge, the pair counts are rebuilt from the rewritten words, where a
  // pair's count in one word ("abab": (a, b) twice, 2^41 x 3) needs more than 32 bits too.
  WordCounts counts = ToCounts(words);
  absl::StatusOr<TrainResult> full = Train(WordSource::Borrow(counts), options);
  ASSERT_TRUE(full.ok()) << full.status();
  for (size_t stop = 1; stop < Bpe(*full).merges.size(); ++stop) {
    TrainControl interrupt;
    interrupt.after_step = [&](const TrainEvent& event) { return event.steps_done < stop; };
    absl::StatusOr<TrainResult> partial = Train(WordSource::Borrow(counts), options, interrupt);
    ASSERT_TRUE(partial.ok()) << partial.status();
    absl::StatusOr<TrainResult> resumed = Train(WordSource::Borrow(counts), options, ResumeOf(*partial, true));
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    EXPECT_EQ(Bpe(*resumed), Bpe(*full)) << "resumed after " << stop;
    EXPECT_EQ(resumed->merge_counts, full->merge_counts) << "resumed after " << stop;
  }
}

// A pair list long enough that merges run in parallel batches (more than 4 x 2048 distinct
// words hold "xy"; see kParallelMinWords in lib/train/bpe/merge_loop.cc), checked against the reference.
TEST(TrainBpe, EqualsReferenceWhenMergesRunInBatches) {
  std::mt19937_64 rng(7);
  Words words;
  for (int i = 0; i < 20000; ++i) {
    std::string w = "xy";
    for (int v = i; v > 0; v /= 5) w.push_back("abcde"[v % 5]);
    if (i % 3 == 0) w += "xy";
    words.emplace_back(w, 1 + rng() % 3);
  }
  for (bool hf : {false, true}) {
    for (int threads : {1, 2}) {
      TrainerOptions options;
      options.hf_compat = hf;
      options.threads = threads;
      options.vocab_size = (hf ? 7 : 256) + 12;
      ExpectMatchesReference(words, options, hf ? "batches, hf" : "batches");
    }
  }
}

// ---- golden merges ----------------------------------------------------------------------

// Produced by ReferenceTrain on this corpus (and re-checked below, so the golden list and the
// oracle cannot drift apart). The ties at counts 5 and 2 go by bytes ("ab" < "r"), or with
// hf_compat by ids ('r' is an alphabet id, "ab" a later one).
const Words kGoldenCorpus = {{"abracadabra", 2}, {" cadabra", 1}, {"aaaa", 1}, {"rab", 2},
                              {" c", 3}, {"bc", 2}};

TEST(TrainBpe, GoldenMergesOnATinyCorpusWithTies) {
  struct Case {
    bool hf;
    std::vector<ReferenceMerge> merges;
  };
  const std::vector<Case> cases = {
      {false,
       {{"a", "b", 7}, {"ab", "r", 5}, {"abr", "a", 5}, {" ", "c", 4}, {"a", "a", 3},
        {"a", "d", 3}, {"ad", "abra", 3}, {"abra", "c", 2}, {"abrac", "adabra", 2}}},
      {true,
       {{"a", "b", 7}, {"r", "a", 5}, {"ab", "ra", 5}, {" ", "c", 4}, {"a", "a", 3},
        {"a", "d", 3}, {"ad", "abra", 3}, {"b", "c", 2}, {"c", "adabra", 2}}},
  };
  for (const Case& c : cases) {
    TrainerOptions options;
    options.hf_compat = c.hf;
    options.vocab_size = (c.hf ? 6 : 256) + 9;
    EXPECT_EQ(ReferenceTrain(kGoldenCorpus, ToReference(options)), c.merges)
        << Describe(ReferenceTrain(kGoldenCorpus, ToReference(options)));
    absl::StatusOr<TrainResult> result = Train(WordSource::Borrow(ToCounts(kGoldenCorpus)), options);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(ProductMerges(*result), c.merges) << Describe(ProductMerges(*result));
  }
}

// ---- determinism ------------------------------------------------------------------------

Words ManyWords(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Words words;
  for (size_t i = 0; i < n; ++i) {
    words.emplace_back(RandomWord(static_cast<CorpusKind>(i % 4), rng) + std::to_string(i % 97),
                       1 + rng() % 20);
  }
  return words;
}

TEST(TrainBpe, SameOutputWithOneTwoAndEightThreads) {
  WordCounts counts = ToCounts(ManyWords(40000, 11));
  for (bool hf : {false, true}) {
    std::vector<TrainResult> results;
    for (int threads : {1, 2, 8}) {
      TrainerOptions options;
      options.hf_compat = hf;
      options.vocab_size = 1500;
      options.threads = threads;
      absl::StatusOr<TrainResult> result = Train(WordSource::Borrow(counts), options);
      ASSERT_TRUE(result.ok()) << result.status();
      results.push_back(*std::move(result));
    }
    for (size_t i = 1; i < results.size(); ++i) {
      EXPECT_EQ(Bpe(results[i]), Bpe(results[0])) << "threads differ, hf " << hf;
      EXPECT_EQ(results[i].merge_counts, results[0].merge_counts);
    }
    EXPECT_EQ(Bpe(results[0]).VocabSize(), 1500u);
    // Handing the counts over (they are freed early) gives the same model.
    TrainerOptions options;
    options.hf_compat = hf;
    options.vocab_size = 1500;
    WordCounts copy = counts;
    absl::StatusOr<TrainResult> moved = Train(WordSource::TakeOver(copy), options);
    ASSERT_TRUE(moved.ok()) << moved.status();
    EXPECT_EQ(Bpe(*moved), Bpe(results[0]));
  }
}

// ---- options ----------------------------------------------------------------------------

TEST(TrainBpe, MaxTokenLengthBoundsEveryToken) {
  Words words = {{"aaaaaaaaaaaaaaaa", 10}, {"abcabcabcabc", 7}, {"\xe4\xb8\xad\xe6\x96\x87", 9}};
  for (size_t limit : {2u, 3u, 5u}) {
    TrainerOptions options;
    options.vocab_size = 300;
    options.max_token_length = limit;
    absl::StatusOr<TrainResult> result = Train(WordSource::Borrow(ToCounts(words)), options);
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_FALSE(Bpe(*result).merges.empty());
    size_t longest = 0;
    for (const std::string& t : Bpe(*result).tokens) longest = std::max(longest, t.size());
    EXPECT_EQ(longest, limit);  // the corpus allows tokens of every length up to the limit
    EXPECT_THAT(result->stop_reason, HasSubstr("no pair is left"));
  }
}

TEST(TrainBpe, MinFrequencyStopsAtTheFirstRarerPair) {
  Words words = {{"ab", 10}, {"cd", 5}, {"ef", 4}, {"gh", 1}};
  TrainerOptions options;
  options.vocab_size = 300;
  options.min_frequency = 5;
  absl::StatusOr<TrainResult> result = Train(WordSource::Borrow(ToCounts(words)), options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->merge_counts, (std::vector<uint64_t>{10, 5}));
  EXPECT_THAT(result->stop_reason, HasSubstr("occurs 4 times, below `min_frequency` 5"));
  EXPECT_THAT(result->stop_reason, HasSubstr("stopped at vocab size 258 of the 300"));
}

TEST(TrainBpe, SpecialTokensTakeIdsAtStartOrEnd) {
  Words words = {{"abab", 3}};
  for (SpecialTokensAt at : {SpecialTokensAt::kStart, SpecialTokensAt::kEnd}) {
    TrainerOptions options;
    options.vocab_size = 260;
    options.special_tokens = {"<|a|>", "<|b|>"};
    options.special_tokens_at = at;
    absl::StatusOr<TrainResult> result = Train(WordSource::Borrow(ToCounts(words)), options);
    ASSERT_TRUE(result.ok()) << result.status();
    const BpeModel& model = Bpe(*result);
    EXPECT_EQ(model.VocabSize(), 260u);
    TokenId first = at == SpecialTokensAt::kStart ? 0 : 258;
    EXPECT_EQ(model.specials, (std::vector<SpecialToken>{{"<|a|>", first}, {"<|b|>", first + 1}}));
    EXPECT_EQ(model.merges.size(), 2u);  // "ab", then "abab"
  }
}

// ---- bad input --------------------------------------------------------------------------

TEST(TrainBpe, VocabSmallerThanAlphabetPlusSpecialsIsAnError) {
  TrainerOptions options;
  options.vocab_size = 257;
  options.special_tokens = {"<a>", "<b>"};
  absl::StatusOr<TrainResult> result = Train(WordSource::Borrow(ToCounts({{"ab", 1}})), options);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("`vocab_size` 257 is smaller than the 256 byte tokens plus 2 special"));
  options.hf_compat = true;
  options.vocab_size = 3;  // alphabet {a, b} + 2 specials = 4
  result = Train(WordSource::Borrow(ToCounts({{"ab", 1}})), options);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("`vocab_size` 3 is smaller than the alphabet (2 byte tokens) plus 2"));
}

TEST(TrainBpe, VocabLargerThanTheCorpusSuppliesStopsWithAValidModel) {
  TrainerOptions options;
  options.vocab_size = 1000;
  absl::StatusOr<TrainResult> result = Train(WordSource::Borrow(ToCounts({{"hello", 2}, {"help", 1}})), options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(Bpe(*result).Validate().ok());
  EXPECT_EQ(Bpe(*result).VocabSize(), 256u + 5u);  // he, hel, hell/help..., see the reference
  EXPECT_EQ(ProductMerges(*result),
            ReferenceTrain({{"hello", 2}, {"help", 1}}, ToReference(options)));
  EXPECT_THAT(result->stop_reason,
              HasSubstr("no pair is left to merge; stopped at vocab size 261 of the 1000"));
}

TEST(TrainBpe, CorpusWithoutPairsIsAnError) {
  TrainerOptions options;
  options.vocab_size = 300;
  absl::StatusOr<TrainResult> result = Train(WordSource::Borrow(ToCounts({{"a", 5}, {" ", 2}})), options);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("no pair to merge"));
  options.vocab_size = 256;  // nothing to learn: not an error
  EXPECT_TRUE(Train(WordSource::Borrow(ToCounts({{"a", 5}})), options).ok());
}

TEST(TrainBpe, ConflictingOptionsAreErrors) {
  TrainerOptions options;
  options.max_token_length = 1;
  EXPECT_THAT(std::string(options.Validate().message()), HasSubstr("`max_token_length` 1"));
  options = {};
  options.special_tokens = {"<a>", "<a>"};
  EXPECT_THAT(std::string(options.Validate().message()), HasSubstr("given twice"));
  options = {};
  options.threads = -1;
  EXPECT_THAT(std::string(options.Validate().message()), HasSubstr("`threads` must be 0"));
  // Errors name the option by its library name, for front ends to show their own way.
  EXPECT_TRUE(IsOptionError(options.Validate()));
  EXPECT_EQ(OptionNamesOf(options.Validate()), std::vector<std::string>{"threads"});
}

// ---- interrupt and resume ------------------------------------------------------------------

TEST(TrainBpe, ResumingFromThePartialMergesGivesTheUninterruptedResult) {
  WordCounts counts = ToCounts(ManyWords(3000, 5));
  for (bool hf : {false, true}) {
    TrainerOptions options;
    options.hf_compat = hf;
    options.vocab_size = 900;
    options.special_tokens = {"<eot>"};
    absl::StatusOr<TrainResult> full = Train(WordSource::Borrow(counts), options);
    ASSERT_TRUE(full.ok()) << full.status();
    for (size_t stop_after : {size_t{1}, size_t{57}, Bpe(*full).merges.size() - 1}) {
      TrainControl interrupt;
      size_t seen = 0;
      interrupt.after_step = [&](const TrainEvent& event) {
        EXPECT_EQ(event.steps_done, ++seen);
        return event.steps_done < stop_after;
      };
      absl::StatusOr<TrainResult> partial = Train(WordSource::Borrow(counts), options, interrupt);
      ASSERT_TRUE(partial.ok()) << partial.status();
      EXPECT_TRUE(partial->interrupted);
      ASSERT_EQ(Bpe(*partial).merges.size(), stop_after);
      EXPECT_TRUE(Bpe(*partial).Validate().ok());

      TrainControl resume = ResumeOf(*partial, false);
      size_t replayed_events = 0;
      resume.after_step = [&](const TrainEvent&) { return ++replayed_events > 0; };
      absl::StatusOr<TrainResult> resumed = Train(WordSource::Borrow(counts), options, resume);
      ASSERT_TRUE(resumed.ok()) << resumed.status();
      EXPECT_FALSE(resumed->interrupted);
      EXPECT_EQ(Bpe(*resumed), Bpe(*full)) << "stop after " << stop_after << " hf " << hf;
      EXPECT_EQ(resumed->merge_counts, full->merge_counts);
      EXPECT_EQ(replayed_events, Bpe(*full).merges.size());
    }
  }
}

// Resuming replays the merges word by word (not through the merge loop) and rebuilds the
// pair counts from the rewritten words: on random corpora of every kind (long repeats with
// overlapping pairs, mixed scripts, Chinese, raw bytes) and random options, a run interrupted
// at a random merge and resumed gives exactly the uninterrupted run's model and merge counts.
TEST(TrainBpe, ResumingAtRandomPointsOfRandomCorporaGivesTheUninterruptedResult) {
  std::mt19937_64 rng(20261129);
  int resumed_runs = 0;
  for (int i = 0; i < 160; ++i) {
    CorpusKind kind = static_cast<CorpusKind>(i % 4);
    Words words = RandomWords(kind, 10 + rng() % 200, rng);
    WordCounts counts = ToCounts(words);
    TrainerOptions options;
    options.hf_compat = rng() % 2 == 0;
    options.threads = 1 + static_cast<int>(rng() % 2);
    if (rng() % 2) options.special_tokens = {"<s>"};
    options.special_tokens_at = rng() % 2 ? SpecialTokensAt::kStart : SpecialTokensAt::kEnd;
    if (rng() % 3 == 0) options.max_token_length = 2 + rng() % 6;
    if (rng() % 3 == 0) options.min_frequency = 1 + rng() % 20;
    options.vocab_size = 256 + options.special_tokens.size() + 1 + rng() % 300;
    SCOPED_TRACE("corpus " + std::to_string(i) + " kind " + std::to_string(i % 4) + " vocab " +
                 std::to_string(options.vocab_size) + " hf " + std::to_string(options.hf_compat) +
                 " max_len " + std::to_string(options.max_token_length) + " min_freq " +
                 std::to_string(options.min_frequency));
    absl::StatusOr<TrainResult> full = Train(WordSource::Borrow(counts), options);
    if (!full.ok() || Bpe(*full).merges.empty()) continue;
    const size_t stop_after = 1 + rng() % Bpe(*full).merges.size();
    TrainControl interrupt;
    interrupt.after_step = [&](const TrainEvent& event) {
      return event.steps_done < stop_after;
    };
    absl::StatusOr<TrainResult> partial = Train(WordSource::Borrow(counts), options, interrupt);
    ASSERT_TRUE(partial.ok()) << partial.status();
    TrainControl resume = ResumeOf(*partial, false);
    // Without the checkpoint's merge counts, a merge of a token with itself sends the replay
    // word by word; with them (or with no such merge) it goes by encoding. The pair table
    // leaves out the pairs below a floor: the trainer's own, or a forced one (a high floor
    // makes the trainer recount every pair when the best kept pair falls below it).
    const uint64_t forced_floor = uint64_t{1} << (rng() % 2 ? 1 + rng() % 6 : 62);
    for (int variant = 0; variant < 3; ++variant) {
      const bool with_counts = variant != 0;
      SCOPED_TRACE(with_counts ? "with counts" : "without counts");
      TrainerOptions resume_options = options;
      resume_options.resume_pair_floor = variant == 2 ? forced_floor : 0;
      SCOPED_TRACE("pair floor " + std::to_string(resume_options.resume_pair_floor));
      resume.resume.merge_counts.clear();
      if (with_counts) resume.resume.merge_counts = partial->merge_counts;
      std::vector<uint64_t> event_counts;
      resume.after_step = [&](const TrainEvent& event) {
        event_counts.push_back(event.merge->count);
        return true;
      };
      resume_options.threads = 1 + static_cast<int>(rng() % 2);
      absl::StatusOr<TrainResult> resumed = Train(WordSource::Borrow(counts), resume_options, resume);
      ASSERT_TRUE(resumed.ok()) << resumed.status();
      EXPECT_EQ(Bpe(*resumed), Bpe(*full)) << "stopped after " << stop_after;
      EXPECT_EQ(resumed->merge_counts, full->merge_counts);
      EXPECT_EQ(event_counts, full->merge_counts);
      EXPECT_EQ(resumed->stop_reason, full->stop_reason);
    }
    ++resumed_runs;
  }
  EXPECT_GE(resumed_runs, 120);
}

// Resuming with a smaller vocabulary than the checkpoint reached replays only the merges that
// fit, like training to that size; a larger one extends the run.
TEST(TrainBpe, ResumingWithAnotherVocabSizeStopsOrExtendsLikeTraining) {
  WordCounts counts = ToCounts(ManyWords(2000, 9));
  TrainerOptions options;
  options.vocab_size = 700;
  absl::StatusOr<TrainResult> middle = Train(WordSource::Borrow(counts), options);
  ASSERT_TRUE(middle.ok()) << middle.status();
  TrainControl resume = ResumeOf(*middle, false);
  for (size_t vocab : {size_t{400}, size_t{700}, size_t{900}}) {
    TrainerOptions other = options;
    other.vocab_size = vocab;
    absl::StatusOr<TrainResult> direct = Train(WordSource::Borrow(counts), other);
    absl::StatusOr<TrainResult> resumed = Train(WordSource::Borrow(counts), other, resume);
    ASSERT_TRUE(direct.ok() && resumed.ok());
    EXPECT_EQ(Bpe(*resumed), Bpe(*direct)) << "vocab " << vocab;
    EXPECT_EQ(resumed->merge_counts, direct->merge_counts) << "vocab " << vocab;
  }
}

// A resume whose min_frequency is above one of the restored merges' counts (the library lets
// a caller do that; the CLI refuses it) stops there, as training with it would, saying the same.
TEST(TrainBpe, ResumingWithAHigherMinFrequencyStopsWhereTrainingWould) {
  WordCounts counts = ToCounts(ManyWords(2000, 9));
  TrainerOptions options;
  options.vocab_size = 700;
  options.special_tokens = {"<e>"};
  absl::StatusOr<TrainResult> full = Train(WordSource::Borrow(counts), options);
  ASSERT_TRUE(full.ok()) << full.status();
  for (bool with_counts : {false, true}) {
    TrainerOptions stricter = options;
    stricter.min_frequency = full->merge_counts[full->merge_counts.size() / 2];
    absl::StatusOr<TrainResult> direct = Train(WordSource::Borrow(counts), stricter);
    absl::StatusOr<TrainResult> resumed =
        Train(WordSource::Borrow(counts), stricter, ResumeOf(*full, with_counts));
    ASSERT_TRUE(direct.ok() && resumed.ok()) << resumed.status();
    ASSERT_LT(Bpe(*direct).merges.size(), Bpe(*full).merges.size());
    EXPECT_EQ(Bpe(*resumed), Bpe(*direct)) << "with counts " << with_counts;
    EXPECT_EQ(resumed->merge_counts, direct->merge_counts);
    EXPECT_THAT(direct->stop_reason, HasSubstr("below `min_frequency`"));
    EXPECT_EQ(resumed->stop_reason, direct->stop_reason);
  }
}

// Chinese words where training forms "partial" tokens (a character joined to the first bytes
// of the next, here 寂 + e5 af, since many characters after 寂 start with e5 af): resuming,
// which starts such words from their characters' own encodings where it is exact, must still
// give the uninterrupted run's model at every interruption point.
TEST(TrainBpe, ResumingChineseWithTokensThatJoinPartsOfCharacters) {
  const std::string ji = "\xe5\xaf\x82";  // 寂
  const std::string mo = "\xe5\xaf\x9e";  // 寞
  const std::vector<std::string> next = {"\xe5\xaf\x84", "\xe5\xaf\x86", "\xe5\xaf\x8c",
                                         "\xe5\xaf\x92", mo, "\xe5\xaf\xa6"};
  // Characters frequent enough to become tokens of their own (the replay starts from
  // characters only when the vocabulary has several).
  const std::vector<std::string> others = {
      "\xe7\x9a\x84", "\xe4\xb8\x80", "\xe6\x98\xaf", "\xe4\xb8\x8d", "\xe4\xba\x86",
      "\xe4\xba\xba", "\xe6\x88\x91", "\xe5\x9c\xa8", "\xe6\x9c\x89", "\xe4\xbb\x96"};
  // 寂 is followed by many characters that start with e5 af, so 寂 + e5 af forms before 寞
  // (e5 af 9e) does; 寞 is common enough to become a token later. In 寂寞, BPE then takes
  // 寂 + e5 af first, which starting from the characters 寂, 寞 would not.
  Words words;
  for (size_t i = 0; i < next.size(); ++i) words.emplace_back(ji + next[i], 24);
  for (size_t i = 0; i < others.size(); ++i) {
    words.emplace_back(others[i] + others[(i + 3) % others.size()], 60);
    words.emplace_back(others[i] + mo, 8);
  }
  WordCounts counts = ToCounts(words);
  TrainerOptions options;
  options.vocab_size = 256 + 60;
  absl::StatusOr<TrainResult> full = Train(WordSource::Borrow(counts), options);
  ASSERT_TRUE(full.ok()) << full.status();
  // The corpus does what it is meant to: 寂 + e5 af is merged before 寞.
  size_t partial_rank = 0, mo_rank = 0;
  for (size_t i = 0; i < Bpe(*full).merges.size(); ++i) {
    const std::string& t = Bpe(*full).tokens[Bpe(*full).merges[i].result];
    if (t == ji + "\xe5\xaf") partial_rank = i + 1;
    if (t == mo) mo_rank = i + 1;
  }
  ASSERT_GT(partial_rank, 0u);
  ASSERT_GT(mo_rank, partial_rank);
  for (size_t stop_after = 1; stop_after < Bpe(*full).merges.size(); ++stop_after) {
    TrainControl interrupt;
    interrupt.after_step = [&](const TrainEvent& e) { return e.steps_done < stop_after; };
    absl::StatusOr<TrainResult> partial = Train(WordSource::Borrow(counts), options, interrupt);
    ASSERT_TRUE(partial.ok()) << partial.status();
    TrainControl resume = ResumeOf(*partial, true);
    absl::StatusOr<TrainResult> resumed = Train(WordSource::Borrow(counts), options, resume);
    ASSERT_TRUE(resumed.ok()) << "stop after " << stop_after << ": " << resumed.status();
    EXPECT_EQ(Bpe(*resumed), Bpe(*full)) << "stop after " << stop_after;
    EXPECT_EQ(resumed->merge_counts, full->merge_counts) << "stop after " << stop_after;
  }
}

// A checkpoint's merge count that the words do not give is refused, whichever way the replay
// goes: for (a, b) the count must be exact, for (a, a) between the replacements and twice them.
TEST(TrainBpe, ResumeCountsThatDoNotFitTheWordsAreAnError) {
  WordCounts counts = ToCounts({{"aaab", 3}, {"ab", 5}, {"xaay", 1}});
  TrainerOptions options;
  options.vocab_size = 259;
  absl::StatusOr<TrainResult> full = Train(WordSource::Borrow(counts), options);
  ASSERT_TRUE(full.ok()) << full.status();
  ASSERT_EQ(Bpe(*full).merges.size(), 3u);
  TrainControl resume = ResumeOf(*full, true);
  absl::StatusOr<TrainResult> resumed = Train(WordSource::Borrow(counts), options, resume);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(Bpe(*resumed), Bpe(*full));
  EXPECT_EQ(resumed->merge_counts, full->merge_counts);
  for (size_t i = 0; i < full->merge_counts.size(); ++i) {
    const Merge& m = Bpe(*full).merges[i];
    // (a, a) counts may be off by less than the replacements; every other count is exact.
    const uint64_t wrong = m.left == m.right ? 3 * full->merge_counts[i] : full->merge_counts[i] + 1;
    TrainControl bad = resume;
    bad.resume.merge_counts[i] = wrong;
    absl::StatusOr<TrainResult> refused = Train(WordSource::Borrow(counts), options, bad);
    ASSERT_FALSE(refused.ok()) << "merge " << i;
    EXPECT_THAT(std::string(refused.status().message()),
                HasSubstr("the checkpoint gives merge " + std::to_string(i + 1) + " ("));
  }
}

TEST(TrainBpe, ResumeMergesThatDoNotFitTheCountsAreAnError) {
  TrainerOptions options;
  options.vocab_size = 300;
  TrainControl control;
  control.resume.merges = {{"a", "b"}, {"x", "y"}};
  absl::StatusOr<TrainResult> result = Train(WordSource::Borrow(ToCounts({{"abab", 2}})), options, control);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("merge 2 of the checkpoint ('x' + 'y') does not occur"));
}

}  // namespace
}  // namespace tokenmill
