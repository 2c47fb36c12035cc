// Unigram training (TrainerOptions::algorithm = kUnigram): the product against the slow
// reference trainer (tests/reference/reference_unigram.h, whose header is the contract):
//  - the seeds (unigram::MakeSeedPieces) on random tiny corpora and on slices of the shared
//    corpora, with small seed_size values (the top-k cut, its ties);
//  - the lattice (unigram::RunEStep, Viterbi, ViterbiCounts) under chosen, often tied, scores;
//  - whole training on random tiny corpora under many option combinations, on long words and
//    on small slices of the shared corpora: the same tokens in the same order, the scores within
//    1e-6 (the contract lets a fixed-point expected count differ by one 2^-24 unit; none has
//    differed at all so far, and the counts of differences are printed), the same pieces after
//    every round and the same log-likelihood of every E-step; dropped characters' scores bit for
//    bit;
//  - the log-likelihood across a round's E-steps: never lower with the maximum-likelihood
//    M-step (in clean steps), lower in the smallest known case with the digamma one;
//  - the same model with 1, 2 and 4 threads; resuming from any round's state gives the
//    uninterrupted model; a foreign, damaged or impossible state is an error or (a flipped score
//    bit: the state has no checksum) a valid model; invalid options are refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/binary_io.h"
#include "common/option_error.h"
#include "count/count_text.h"
#include "count/word_counts.h"
#include "model/unigram/unigram_model.h"
#include "pretokenize/pretokenizer.h"
#include "pretokenize/pretokenizer_config.h"
#include "pretokenize/text_prep.h"
#include "reference/reference_unigram.h"
#include "reference/shared_corpus.h"
#include "train/trainer.h"
#include "train/trainer_options.h"
#include "train/unigram/piece_lattice.h"
#include "train/unigram/seed_pieces.h"
#include "train/unigram/unigram_words.h"
#include "train/word_source.h"

namespace tokenmill {
namespace {

using testing::ReferenceUnigramTrain;
using testing::UnigramPieces;
using testing::UnigramReferenceOptions;
using testing::UnigramReferenceResult;
using testing::UnigramReferenceRound;
using Words = std::vector<std::pair<std::string, uint64_t>>;

// ---- corpora ------------------------------------------------------------------------------------

// kSymmetric: words over "ab" with their mirror images (a and b swapped, reversed, both), at
// the same count, so that pieces come in groups of equal counts and scores: exact ties in
// Viterbi ([a][bab] against [aba][b]), in pruning's losses and in the final order.
enum class Kind { kAscii, kRepeats, kMetaspace, kCjk, kScripts, kInvalid, kRare, kSymmetric, kMixed };
constexpr int kKinds = 9;

const char* KindName(Kind kind) {
  static const char* const kNames[] = {"ascii",   "repeats", "metaspace", "cjk",      "scripts",
                                       "invalid", "rare",    "symmetric", "mixed"};
  return kNames[static_cast<int>(kind)];
}

std::string RandomWord(Kind kind, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto from = [&](const std::vector<std::string>& units, size_t max_len) {
    std::string w;
    for (size_t len = 1 + pick(max_len); len > 0; --len) w += units[pick(units.size())];
    return w;
  };
  switch (kind) {
    case Kind::kAscii: {
      static const std::vector<std::string> letters = {"a", "b", "c", "d", "e"};
      return from(letters, 8);
    }
    case Kind::kRepeats: {  // "aaaa", "ababab", "éé": overlapping occurrences
      static const std::vector<std::string> units = {"a", "b", "ab", "ba", "\xc3\xa9", "aab"};
      if (pick(2) == 0) {
        const std::string& u = units[pick(units.size())];
        std::string w;
        for (size_t len = 1 + pick(7); len > 0; --len) w += u;
        return w;
      }
      return from({"a", "a", "b", "\xc3\xa9"}, 9);
    }
    case Kind::kMetaspace: {  // "▁" first (a piece may start with it), sometimes inside
      static const std::vector<std::string> letters = {"a", "b", "c", "t", "h", "e"};
      std::string w = pick(5) == 0 ? "" : "\xe2\x96\x81";
      w += from(letters, 6);
      if (pick(6) == 0) w += "\xe2\x96\x81" + from(letters, 3);
      if (pick(10) == 0) w = "\xe2\x96\x81";
      return w;
    }
    case Kind::kCjk: {  // Han, Hiragana, Katakana and U+30FC (one script), CJK punctuation
      static const std::vector<std::string> chars = {
          "\xe7\x9a\x84", "\xe4\xb8\x80", "\xe6\x98\xaf", "\xe5\xad\xa6", "\xe4\xb9\xa0",
          "\xe3\x81\xb2", "\xe3\x82\xab", "\xe3\x83\xbc", "\xe6\xbc\xa2", "\xe3\x80\x82",
          "\xef\xbc\x8c"};
      return from(chars, 6);
    }
    case Kind::kScripts: {  // Latin, Common (digits, '.', '-'), Greek, Cyrillic, Inherited
      static const std::vector<std::string> units = {
          "a", "b", "a", "1", "2", "1", ".", "-", "\xce\xb1", "\xce\xb2", "\xd0\xb4",
          "e\xcc\x81", "\xcc\x81", "\xe2\x96\x81"};
      return from(units, 6);
    }
    case Kind::kInvalid: {  // characters among bytes that begin no well-formed sequence
      static const std::vector<std::string> units = {
          "a", "b", "a", "b", "\xc3\xa9", "\xe4\xb8\xad", "\xff", "\x80", "\xc3", "\xed\xa0\x80",
          "\xc0\xaf"};
      return from(units, 7);
    }
    case Kind::kRare: {  // two common letters, rare characters a coverage below 1 drops
      static const std::vector<std::string> common = {"a", "b", "a", "b", "c"};
      static const std::vector<std::string> rare = {"x",        "y",           "z",
                                                    "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80"};
      std::string w = from(common, 6);
      if (pick(3) == 0) w.insert(pick(w.size() + 1), rare[pick(rare.size())]);
      return w;
    }
    case Kind::kSymmetric:
      return from({"a", "b"}, 8);
    case Kind::kMixed:
      return RandomWord(static_cast<Kind>(pick(kKinds - 1)), rng);
  }
  return "a";
}

// `n` words of `kind` with counts 1-5, a quarter of them up to 200 (equal words are summed).
Words RandomWords(Kind kind, size_t n, std::mt19937_64& rng) {
  std::map<std::string, uint64_t> summed;
  for (size_t i = 0; i < n; ++i) {
    // Two draws in sequence (operands of % are unsequenced: each build could pick its order).
    const uint64_t draw = rng();
    const uint64_t count = 1 + draw % (rng() % 4 == 0 ? 200 : 5);
    const std::string w = RandomWord(kind, rng);
    summed[w] += count;
    if (kind == Kind::kSymmetric) {
      std::string swapped = w;
      for (char& c : swapped) c = c == 'a' ? 'b' : 'a';
      summed[swapped] += count;
      summed[std::string(w.rbegin(), w.rend())] += count;
      summed[std::string(swapped.rbegin(), swapped.rend())] += count;
    }
  }
  return Words(summed.begin(), summed.end());
}

WordCounts ToCounts(const Words& words) {
  WordCounts counts;
  for (const auto& [w, c] : words) counts.Add(w, c);
  return counts;
}

Words ToWords(const WordCounts& counts) {
  WordSource source = WordSource::Borrow(counts);
  Words words;
  for (const auto& [w, c] : source.Entries()) words.emplace_back(std::string(w), c);
  return words;
}

// The first ~`bytes` of shared corpus `name` (whole lines), counted as `tokenmill train
// --algorithm unigram` counts by default: NFKC, the metaspace split with its "▁" prefix, each
// line (with its newline) a document. Empty when the corpus is missing.
WordCounts CountSharedSlice(const std::string& name, size_t bytes) {
  std::string text = testing::ReadSharedCorpus(name, bytes);
  if (text.size() > bytes) text.resize(bytes);
  const size_t last_line = text.rfind('\n');
  text.resize(last_line == std::string::npos ? 0 : last_line + 1);
  WordCounts counts;
  if (text.empty()) return counts;
  PreTokenizerConfig config("metaspace");
  config.normalizer.form = NormalForm::kNfkc;
  std::unique_ptr<PreTokenizer> pretokenizer = PreTokenizer::Create(config).value();
  std::unique_ptr<TextPrep> prep = TextPrep::Create(config).value();
  const std::string_view all(text);
  for (size_t start = 0; start < all.size();) {
    const size_t end = all.find('\n', start) + 1;
    CountDocument(all.substr(start, end - start), *pretokenizer, nullptr, counts, prep.get());
    start = end;
  }
  return counts;
}

// ---- the product ----------------------------------------------------------------------------

// The product's options for the reference's. Its special tokens are the reference's list (which
// holds "<unk>"); with `drop_unknown`, less a leading "<unk>", which the product then adds first
// itself (the unknown token not listed).
TrainerOptions ProductOptions(const UnigramReferenceOptions& ref, int threads,
                              bool drop_unknown = false) {
  TrainerOptions o;
  o.algorithm = Algorithm::kUnigram;
  o.units = UnitKind::kChar;
  o.special_tokens_at = SpecialTokensAt::kStart;
  o.vocab_size = ref.vocab_size;
  o.seed_size = ref.seed_size;
  o.max_piece_length = ref.max_piece_length;
  o.sub_iterations = static_cast<size_t>(ref.sub_iterations);
  o.shrinking_factor = ref.shrinking_factor;
  o.character_coverage = ref.character_coverage;
  o.limit_alphabet = ref.limit_alphabet;
  o.split_by_script = ref.split_by_script;
  o.byte_fallback = ref.byte_fallback;
  o.unigram_ml_m_step = ref.ml_m_step;
  o.unknown_token = "<unk>";
  o.special_tokens = ref.special_tokens;
  if (drop_unknown && !o.special_tokens.empty() && o.special_tokens[0] == "<unk>") {
    o.special_tokens.erase(o.special_tokens.begin());
  }
  o.threads = threads;
  return o;
}

// A round's state (TrainEvent::state) read back: what the trainer serializes (unigram_trainer.cc,
// SerializeState): "TMUNIGRAM1", rounds, final, vocab_size, the log-likelihood's bits, the pieces
// (bytes, score bits).
struct RoundState {
  uint64_t rounds = 0, vocab_size = 0;
  bool final = false;
  double log_likelihood = 0;
  UnigramPieces pieces;
};
std::optional<RoundState> ReadState(std::string_view data) {
  constexpr std::string_view kMagic = "TMUNIGRAM1";
  if (!data.starts_with(kMagic)) return std::nullopt;
  BinaryReader r(data.substr(kMagic.size()));
  RoundState s;
  uint64_t final = 0, ll = 0, n = 0;
  if (!r.Varint(&s.rounds) || !r.Varint(&final) || !r.Varint(&s.vocab_size) || !r.Fixed64(&ll) ||
      !r.Varint(&n)) {
    return std::nullopt;
  }
  s.final = final == 1;
  s.log_likelihood = std::bit_cast<double>(ll);
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view text;
    uint64_t score = 0;
    if (!r.Bytes(&text) || !r.Fixed64(&score)) return std::nullopt;
    s.pieces.emplace_back(std::string(text), std::bit_cast<double>(score));
  }
  if (!r.done()) return std::nullopt;
  return s;
}

// The inverse of ReadState, for states made up by the tests.
std::string WriteState(const RoundState& s) {
  std::string out = "TMUNIGRAM1";
  BinaryWriter w(&out);
  w.Varint(s.rounds);
  w.Varint(s.final ? 1 : 0);
  w.Varint(s.vocab_size);
  w.Fixed64(std::bit_cast<uint64_t>(s.log_likelihood));
  w.Varint(s.pieces.size());
  for (const auto& [text, score] : s.pieces) {
    w.Bytes(text);
    w.Fixed64(std::bit_cast<uint64_t>(score));
  }
  return out;
}

// A product run: its result and what after_step saw.
struct ProductRun {
  absl::StatusOr<TrainResult> result = absl::UnknownError("not run");
  std::vector<std::string> states;  // each searched (not replayed) round's state, in order
  std::vector<std::vector<double>> log_likelihoods;  // parallel: each E-step's
  std::vector<size_t> steps_done, pieces;            // parallel
  size_t replayed = 0;                               // replayed events
  std::optional<size_t> replayed_steps;              // the replayed event's steps_done
};

// Trains; `stop_at` > 0: after_step returns false once steps_done reaches it; `resume`: a state.
ProductRun RunProduct(const WordCounts& counts, const TrainerOptions& options, size_t stop_at = 0,
                      const std::string& resume = "") {
  ProductRun run;
  TrainControl control;
  control.resume.state = resume;
  control.after_step = [&run, stop_at](const TrainEvent& e) {
    if (e.replayed) {
      ++run.replayed;
      run.replayed_steps = e.steps_done;
      return stop_at == 0 || e.steps_done < stop_at;
    }
    run.states.emplace_back(e.state);
    run.log_likelihoods.emplace_back(e.log_likelihoods.begin(), e.log_likelihoods.end());
    run.steps_done.push_back(e.steps_done);
    run.pieces.push_back(e.pieces);
    return stop_at == 0 || e.steps_done < stop_at;
  };
  run.result = Train(WordSource::Borrow(counts), options, control);
  return run;
}

const UnigramModel* Model(const ProductRun& run) {
  if (!run.result.ok() || run.result->model == nullptr) return nullptr;
  return AsUnigram(*run.result->model);
}

// Tokens and scores bit for bit (UnigramModel::operator== compares scores with ==).
void ExpectSameModel(const UnigramModel& a, const UnigramModel& b, const std::string& what) {
  EXPECT_TRUE(a == b) << what;
  ASSERT_EQ(a.tokens, b.tokens) << what;
  ASSERT_EQ(a.scores.size(), b.scores.size()) << what;
  size_t differ = 0;
  std::string first;
  for (size_t i = 0; i < a.scores.size(); ++i) {
    if (std::bit_cast<uint64_t>(a.scores[i]) == std::bit_cast<uint64_t>(b.scores[i])) continue;
    if (differ++ == 0) {
      first = "token " + std::to_string(i) + " '" + a.tokens[i] + "': " +
              std::to_string(a.scores[i]) + " vs " + std::to_string(b.scores[i]);
    }
  }
  EXPECT_EQ(differ, 0u) << what << ": scores differ in their bits, first " << first;
}

std::string Show(const std::vector<std::string>& tokens, size_t from) {
  std::string out;
  for (size_t i = from; i < tokens.size(); ++i) out += "[" + tokens[i] + "]";
  return out;
}
std::string Show(const UnigramPieces& pieces) {
  std::string out;
  for (const auto& [text, score] : pieces) out += "[" + text + " " + std::to_string(score) + "]";
  return out;
}
std::string Show(const Words& words) {
  std::string out;
  for (const auto& [w, c] : words) out += "{\"" + w + "\" " + std::to_string(c) + "}";
  return out;
}

std::string Label(const UnigramReferenceOptions& o) {
  std::string specials;
  for (const std::string& s : o.special_tokens) specials += s + " ";
  return "vocab " + std::to_string(o.vocab_size) + " seed_size " + std::to_string(o.seed_size) +
         " max_piece_length " + std::to_string(o.max_piece_length) + " sub_iterations " +
         std::to_string(o.sub_iterations) + " shrinking " + std::to_string(o.shrinking_factor) +
         " coverage " + std::to_string(o.character_coverage) + " limit_alphabet " +
         std::to_string(o.limit_alphabet) + " split_by_script " +
         std::to_string(o.split_by_script) + " byte_fallback " + std::to_string(o.byte_fallback) +
         " ml " + std::to_string(o.ml_m_step) + " specials " + specials;
}

// How far the product's numbers are from the reference's (exact differences counted).
struct Differences {
  size_t scores = 0, scores_differ = 0;
  double worst_score = 0;
  size_t log_likelihoods = 0, log_likelihoods_differ = 0;
  double worst_log_likelihood = 0;
  size_t runs = 0, rounds = 0, pruned_runs[3] = {0, 0, 0};  // 0, 1, 2+ prunings
  size_t refused_small_vocab = 0;  // vocab_size below the alphabet: refused, as it should be
  void Score(double got, double want) {
    ++scores;
    scores_differ += got != want;
    worst_score = std::max(worst_score, std::abs(got - want));
  }
  void LogLikelihood(double got, double want) {
    ++log_likelihoods;
    log_likelihoods_differ += got != want;
    worst_log_likelihood = std::max(worst_log_likelihood, std::abs(got - want));
  }
  void Print(const char* what) const {
    std::printf(
        "%s: %zu runs (%zu without pruning, %zu with one, %zu with more), %zu rounds; scores: "
        "%zu of %zu differ at all, worst %.3g; E-step log-likelihoods: %zu of %zu differ, worst "
        "%.3g\n",
        what, runs, pruned_runs[0], pruned_runs[1], pruned_runs[2], rounds, scores_differ, scores,
        worst_score, log_likelihoods_differ, log_likelihoods, worst_log_likelihood);
  }
};

// ---- 1. seeds -------------------------------------------------------------------------------

// The reference's alphabet and seeds alone (sub_iterations 0 and a vocabulary no round prunes
// towards: no EM, no pruning).
UnigramReferenceResult ReferenceSeeds(const Words& words, UnigramReferenceOptions options) {
  options.sub_iterations = 0;
  options.vocab_size = size_t{1} << 40;
  return ReferenceUnigramTrain(words, options);
}

// The product's seeds (ReadWords, PieceRules, MakeSeedPieces) equal the reference's: the
// alphabet in its order, the seeds in order, their initial scores within 1e-12 relative.
// Returns the number of substring seeds.
size_t ExpectSameSeeds(const Words& words, const UnigramReferenceOptions& ref_options,
                       Differences& d) {
  SCOPED_TRACE(Label(ref_options));
  const UnigramReferenceResult expected = ReferenceSeeds(words, ref_options);
  const TrainerOptions options = ProductOptions(ref_options, 0);
  const WordCounts counts = ToCounts(words);
  WordSource source = WordSource::Borrow(counts);
  const unigram::UnigramWords product_words = unigram::ReadWords(source.Entries(), options);
  EXPECT_EQ(product_words.chars, expected.alphabet);
  const unigram::PieceRules rules(product_words, options.split_by_script);
  const std::vector<unigram::ScoredPiece> seeds = unigram::MakeSeedPieces(
      product_words, rules, options.seed_size, options.max_piece_length);
  std::vector<std::string> texts, expected_texts;
  for (const unigram::ScoredPiece& s : seeds) texts.push_back(product_words.Text(s.symbols));
  for (const auto& [text, score] : expected.seeds) expected_texts.push_back(text);
  EXPECT_EQ(texts, expected_texts) << "product:   " << Show(texts, 0)
                                   << "\nreference: " << Show(expected_texts, 0);
  if (texts == expected_texts) {
    for (size_t i = 0; i < seeds.size(); ++i) {
      const double want = expected.seeds[i].second;
      EXPECT_NEAR(seeds[i].score, want, 1e-12 * std::abs(want)) << "seed " << i << " " << texts[i];
      d.Score(seeds[i].score, want);
    }
  }
  return expected.seeds.size() - expected.alphabet.size();
}

UnigramReferenceOptions RandomSeedOptions(std::mt19937_64& rng) {
  UnigramReferenceOptions o;
  static const double kCoverages[] = {1.0, 1.0, 1.0, 0.98, 0.9, 0.7};
  o.character_coverage = kCoverages[rng() % 6];
  if (rng() % 6 == 0) o.limit_alphabet = 1 + rng() % 5;
  o.split_by_script = rng() % 3 != 0;
  static const size_t kLengths[] = {16, 16, 2, 3, 4, 64};
  o.max_piece_length = kLengths[rng() % 6];
  if (rng() % 3 == 0) o.seed_size = 1 + rng() % 6;  // the top-k cut, ties in weight
  return o;
}

TEST(UnigramTrain, SeedsEqualReferenceOnRandomCorpora) {
  std::mt19937_64 rng(20260701);
  size_t substrings = 0, cut = 0;
  Differences d;
  for (int i = 0; i < 210; ++i) {
    const Kind kind = static_cast<Kind>(i % kKinds);
    Words words = RandomWords(kind, 4 + rng() % 40, rng);
    // Some with counts of 2^48 and more, where weights (up to 2^61 here, no overflow) and their
    // sum are no longer exact as doubles (the contract sums them as integers).
    if (i % 10 == 9) {
      for (auto& [w, c] : words) c = ((c % 8 + 1) << 48) + rng() % 1000;
    }
    SCOPED_TRACE(std::string("corpus ") + std::to_string(i) + " " + KindName(kind) + " " +
                 Show(words));
    const UnigramReferenceOptions options = RandomSeedOptions(rng);
    const size_t n = ExpectSameSeeds(words, options, d);
    substrings += n;
    cut += options.seed_size < 1000 && n == options.seed_size;
  }
  std::printf("random corpora: %zu substring seeds, %zu cut at seed_size; initial scores: %zu of "
              "%zu differ at all, worst %.3g\n",
              substrings, cut, d.scores_differ, d.scores, d.worst_score);
  EXPECT_GT(substrings, 2000u);
  EXPECT_GT(cut, 30u);
}

// Each seed's site (MakeSeedPieces' `sites`) spells it, and the lattices of the pieces' own
// texts cut out of the words' lattices at those sites (what training's first pruning does)
// equal the ones walked through the trie (what a resumed run does), occurrence for occurrence,
// with pieces dead since the words' lattices were made, as at a pruning.
TEST(UnigramTrain, PieceTextLatticesCutAtSeedSitesEqualWalkedOnes) {
  std::mt19937_64 rng(20261204);
  size_t rows = 0, occurrences = 0;
  auto check = [&](const Words& words, const UnigramReferenceOptions& ref_options) {
    const TrainerOptions options = ProductOptions(ref_options, 0);
    const WordCounts counts = ToCounts(words);
    WordSource source = WordSource::Borrow(counts);
    const unigram::UnigramWords product_words = unigram::ReadWords(source.Entries(), options);
    const unigram::PieceRules rules(product_words, options.split_by_script);
    std::vector<unigram::PieceSite> sites;
    const std::vector<unigram::ScoredPiece> seeds = unigram::MakeSeedPieces(
        product_words, rules, options.seed_size, options.max_piece_length, nullptr, &sites);
    ASSERT_EQ(sites.size(), seeds.size());
    for (size_t i = product_words.chars.size(); i < seeds.size(); ++i) {
      const std::span<const uint32_t> word = product_words.Word(sites[i].word);
      ASSERT_LE(sites[i].start + seeds[i].symbols.size(), word.size()) << "seed " << i;
      EXPECT_TRUE(std::equal(seeds[i].symbols.begin(), seeds[i].symbols.end(),
                             word.begin() + sites[i].start))
          << "seed " << i << " " << product_words.Text(seeds[i].symbols);
    }
    unigram::PieceSet set(seeds, product_words.chars.size());
    const unigram::Lattices lattices(product_words, set, uint64_t{1} << 24);
    ASSERT_TRUE(lattices.cached());
    for (size_t i = 0; i < seeds.size(); ++i) {
      if (rng() % 3 == 0) set.alive[i] = 0;
    }
    set.Refresh();
    unigram::UnigramWords texts;
    texts.begin.assign(1, 0);
    std::vector<unigram::PieceSite> where;
    for (size_t i = 0; i < seeds.size(); ++i) {
      if (!set.alive[i] || seeds[i].symbols.size() == 1) continue;
      texts.symbols.insert(texts.symbols.end(), seeds[i].symbols.begin(), seeds[i].symbols.end());
      texts.begin.push_back(texts.symbols.size());
      texts.counts.push_back(1);
      where.push_back(sites[i]);
    }
    const unigram::Lattices walked(texts, set, uint64_t{1} << 24);
    const unigram::Lattices cut(texts, lattices, where, set, uint64_t{1} << 24);
    ASSERT_TRUE(walked.cached());
    ASSERT_TRUE(cut.cached());
    for (size_t r = 0; r < texts.size(); ++r) {
      const auto a = walked.Of(r), b = cut.Of(r);
      ASSERT_EQ(a.size(), b.size()) << "text " << product_words.Text(texts.Word(r));
      for (size_t k = 0; k < a.size(); ++k) {
        EXPECT_EQ(std::tie(a[k].piece, a[k].start, a[k].length),
                  std::tie(b[k].piece, b[k].start, b[k].length))
            << "text " << product_words.Text(texts.Word(r)) << " occurrence " << k;
      }
      ++rows;
      occurrences += a.size();
    }
  };
  for (int i = 0; i < 120; ++i) {
    const Kind kind = static_cast<Kind>(i % kKinds);
    const Words words = RandomWords(kind, 4 + rng() % 40, rng);
    SCOPED_TRACE(std::string("corpus ") + std::to_string(i) + " " + KindName(kind) + " " + Show(words));
    check(words, RandomSeedOptions(rng));
  }
  for (const char* name : {"brown", "poetry"}) {
    const WordCounts counts = CountSharedSlice(name, 200000);
    if (counts.unique_words() == 0) GTEST_SKIP() << "shared corpus " << name << " not found";
    SCOPED_TRACE(name);
    UnigramReferenceOptions options;
    options.character_coverage = 0.9995;
    check(ToWords(counts), options);
  }
  std::printf("%zu piece texts, %zu occurrences compared\n", rows, occurrences);
  EXPECT_GT(rows, 20000u);
}

// Real text: 300 KB of brown (English) and of poetry (Chinese, whose metaspace words are whole
// lines), whole and cut to small seed sizes, where MakeSeedPieces's partial selection (it keeps
// 2 * seed_size + 1024 candidates between cuts) is exercised.
TEST(UnigramTrain, SeedsEqualReferenceOnSharedCorpusSlices) {
  for (const auto& [name, bytes] : {std::pair<const char*, size_t>{"brown", 300000},
                                    std::pair<const char*, size_t>{"poetry", 300000}}) {
    const WordCounts counts = CountSharedSlice(name, bytes);
    if (counts.unique_words() == 0) GTEST_SKIP() << "shared corpus " << name << " not found";
    const Words words = ToWords(counts);
    SCOPED_TRACE(name);
    Differences d;
    for (const size_t seed_size : {size_t{1000000}, size_t{5000}, size_t{100}, size_t{7}}) {
      UnigramReferenceOptions options;
      options.seed_size = seed_size;
      options.character_coverage = seed_size == 100 ? 0.9995 : 1.0;
      options.split_by_script = seed_size != 7;
      const size_t n = ExpectSameSeeds(words, options, d);
      if (seed_size < 1000000) {
        EXPECT_EQ(n, seed_size);
      } else {
        EXPECT_GT(n, 5000u) << "substring seeds";
      }
    }
    std::printf("%s: initial scores: %zu of %zu differ at all\n", name, d.scores_differ, d.scores);
  }
}

// ---- the lattice: E-step and Viterbi under given pieces ---------------------------------------

// Words and pieces with chosen scores as the product reads them, for the lattice tests: the
// words under the reference's options with every character kept, the pieces' symbols, and the
// words in the product's order (for the reference's E-step).
struct GivenPieces {
  GivenPieces(const Words& given_words, const std::vector<std::pair<std::string, double>>& listed)
      : counts(ToCounts(given_words)), source(WordSource::Borrow(counts)) {
    TrainerOptions options = ProductOptions(UnigramReferenceOptions(), 1);
    options.character_coverage = 1.0;
    words = unigram::ReadWords(source.Entries(), options);
    for (const auto& [text, s] : listed) pieces.push_back({words.Symbols(text), s});
    for (size_t w = 0; w < words.size(); ++w) {
      in_order.emplace_back(std::string(source.Entries()[w].first), source.Entries()[w].second);
    }
  }
  const WordCounts counts;
  WordSource source;
  unigram::UnigramWords words;
  std::vector<unigram::ScoredPiece> pieces;
  std::vector<std::pair<std::string, uint64_t>> in_order;
};

// Training's scores come from EM, so that exact ties between paths are rare there (one of the
// 600 random runs below notices a Viterbi that lets the later edge win a tie). Here the
// product's lattice (unigram::RunEStep, Viterbi, ViterbiCounts) runs under pieces with chosen
// scores, exact binary ones that tie often half the time, against the reference's E-step and
// dynamic programmes (themselves checked against listing every path in
// reference_unigram_test.cc): cached lattices and walked ones, and pieces that died after the
// lattices were cached (the M-step's case).
TEST(UnigramTrain, LatticeEqualsReferenceUnderGivenPieces) {
  std::mt19937_64 rng(1234);
  const double tied[] = {-0.5, -1.0, -2.0};
  std::uniform_real_distribution<double> uniform(-6.0, -0.1);
  const std::string letters = "abcde";
  size_t paths = 0, ties = 0, alternatives = 0, counts_compared = 0, counts_differ = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const bool exact = trial % 2 == 0;
    auto score = [&](size_t length) {
      if (!exact) return uniform(rng);
      return rng() % 3 != 0 ? -static_cast<double>(length) : tied[rng() % 3];
    };
    // Words over "abcde" ("abcde" itself once, so that every letter is in the alphabet).
    std::map<std::string, uint64_t> summed = {{letters, 1}};
    for (size_t i = 0, n = 2 + rng() % 8; i < n; ++i) {
      std::string w;
      for (size_t k = 0, len = 1 + rng() % 8; k < len; ++k) w += letters[rng() % 4];
      summed[w] += 1 + rng() % 5;
    }
    const Words words(summed.begin(), summed.end());
    // Pieces: most letters ("e" never: an unknown edge wherever it occurs), substrings of 2-4.
    std::map<std::string, double> chosen;
    for (char c : letters.substr(0, 4)) {
      if (rng() % 5 != 0) chosen[std::string(1, c)] = score(1);
    }
    for (size_t i = 0, n = rng() % 14; i < n; ++i) {
      std::string piece;
      for (size_t k = 0, len = 2 + rng() % 3; k < len; ++k) piece += letters[rng() % 4];
      chosen[piece] = score(piece.size());
    }
    if (chosen.empty()) continue;
    std::vector<std::pair<std::string, double>> listed(chosen.begin(), chosen.end());
    std::shuffle(listed.begin(), listed.end(), rng);

    const GivenPieces given(words, listed);
    const unigram::UnigramWords& product_words = given.words;
    const std::vector<unigram::ScoredPiece>& pieces = given.pieces;
    const std::vector<std::pair<std::string, uint64_t>>& in_order = given.in_order;
    unigram::PieceSet set(pieces, product_words.chars.size());
    const bool cache = trial % 4 < 2;
    const unigram::Lattices lattices(product_words, set, cache ? uint64_t{1} << 20 : 0);
    ASSERT_EQ(lattices.cached(), cache);
    // A third of the time some pieces die after the lattices were cached.
    if (trial % 3 == 0) {
      for (size_t i = 0; i < pieces.size(); ++i) {
        if (rng() % 4 == 0 && set.alive_count() > 1) set.alive[i] = 0;
      }
      set.Refresh();
    }
    UnigramPieces living;  // the reference's pieces: the living ones, in order
    std::map<std::string, double> living_map;
    std::vector<size_t> product_index;  // of living[k]
    std::map<std::string, size_t> index_of;  // a living piece's product index
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (!set.alive[i]) continue;
      living.push_back(listed[i]);
      living_map.insert(listed[i]);
      product_index.push_back(i);
      index_of[listed[i].first] = i;
    }
    double min_score = std::numeric_limits<double>::infinity();
    for (const auto& [text, s] : living) min_score = std::min(min_score, s);
    const double unk = min_score - 10;
    SCOPED_TRACE("trial " + std::to_string(trial) + " words " + Show(words) + " pieces " +
                 Show(living));

    // E-step: each piece's fixed-point expected count (the contract allows one unit of 2^-24
    // of difference from how p is computed) and the log-likelihood (one unit a word).
    const testing::UnigramEStepResult want = testing::ReferenceUnigramEStep(in_order, living);
    const unigram::EStep got = unigram::RunEStep(product_words, set, lattices);
    for (size_t k = 0; k < living.size(); ++k) {
      const int64_t g = got.expected[product_index[k]], e = want.fixed_expected[k];
      EXPECT_LE(std::abs(g - e), 1) << "piece " << living[k].first << ": " << g << " vs " << e;
      ++counts_compared;
      counts_differ += g != e;
    }
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (!set.alive[i]) {
        EXPECT_EQ(got.expected[i], 0) << "a dead piece " << listed[i].first;
      }
    }
    const __int128 ll_diff = got.log_likelihood - want.fixed_log_likelihood;
    EXPECT_LE(static_cast<double>(ll_diff < 0 ? -ll_diff : ll_diff),
              static_cast<double>(product_words.size()));

    // Viterbi of every word (pruning's counts) and of every piece, with and without its own
    // edge (pruning's alternative, which takes no unknown edge).
    auto texts = [&](std::span<const uint32_t> text, const std::vector<uint32_t>& path) {
      std::vector<std::string> out;
      size_t at = 0;
      for (uint32_t i : path) {
        const size_t length = i == unigram::PieceTrie::kNone ? 1 : pieces[i].symbols.size();
        out.push_back(i == unigram::PieceTrie::kNone
                          ? "?" + product_words.Text(text.subspan(at, 1))
                          : listed[i].first);
        at += length;
      }
      return out;
    };
    auto reference_texts = [](const testing::UnigramSegmentation& s) {
      std::vector<std::string> out;
      for (size_t k = 0; k < s.pieces.size(); ++k) out.push_back((s.unknown[k] ? "?" : "") + s.pieces[k]);
      return out;
    };
    std::vector<uint64_t> freq(pieces.size(), 0);
    for (size_t w = 0; w < product_words.size(); ++w) {
      const std::string& word = in_order[w].first;
      const std::span<const uint32_t> text = product_words.Word(w);
      const testing::UnigramSegmentation best = testing::ReferenceUnigramViterbi(word, living_map, unk);
      EXPECT_EQ(texts(text, unigram::Viterbi(text, set)), reference_texts(best)) << word;
      ++paths;
      const std::vector<testing::UnigramSegmentation> two =
          testing::ReferenceBestSegmentations(word, living_map, unk, 2);
      ties += two.size() == 2 && two[0].score == two[1].score;
      for (size_t k = 0; k < best.pieces.size(); ++k) {
        if (!best.unknown[k]) freq[index_of.at(best.pieces[k])] += in_order[w].second;
      }
      const std::optional<testing::UnigramSegmentation> alt =
          testing::ReferenceUnigramAlternative(word, living_map);
      const std::vector<uint32_t> product_alt = unigram::Viterbi(text, set, /*skip_whole=*/true);
      EXPECT_EQ(product_alt.empty(), !alt.has_value()) << word;
      if (alt && !product_alt.empty()) {
        EXPECT_EQ(texts(text, product_alt), reference_texts(*alt)) << word;
        ++alternatives;
      }
    }
    EXPECT_EQ(unigram::ViterbiCounts(product_words, set, lattices), freq);
    for (size_t k = 0; k < living.size(); ++k) {
      const std::vector<uint32_t>& symbols = pieces[product_index[k]].symbols;
      const testing::UnigramSegmentation best =
          testing::ReferenceUnigramViterbi(living[k].first, living_map, unk);
      EXPECT_EQ(texts(symbols, unigram::Viterbi(symbols, set)), reference_texts(best))
          << "piece " << living[k].first;
      const std::optional<testing::UnigramSegmentation> alt =
          testing::ReferenceUnigramAlternative(living[k].first, living_map);
      const std::vector<uint32_t> product_alt = unigram::Viterbi(symbols, set, true);
      EXPECT_EQ(product_alt.empty(), !alt.has_value()) << "piece " << living[k].first;
      if (alt && !product_alt.empty()) {
        EXPECT_EQ(texts(symbols, product_alt), reference_texts(*alt)) << "piece " << living[k].first;
        ++alternatives;
      }
    }
  }
  std::printf("lattices: %zu word paths (%zu with a tie for the best), %zu alternatives; "
              "expected counts: %zu of %zu differ (by one unit)\n",
              paths, ties, alternatives, counts_differ, counts_compared);
  EXPECT_GT(ties, 200u);
  EXPECT_GT(alternatives, 2000u);
}

// The E-step's three ways through a word (piece_lattice.h): on probabilities when no path can
// underflow (n * -lowest edge score < kLinearLimit), on probabilities for a longer word whose
// total probability comes out at least exp(-kLinearLimit), and in logs for a long improbable
// word. Words of 3-30, 60-250 and 900-2500 characters give all three; every piece's
// fixed-point expected count against the reference's log-space E-step (one unit of 2^-24 a
// word the piece occurs in), cached lattices and walked ones.
TEST(UnigramTrain, EStepOnLongWordsEqualsReferenceOnEveryPath) {
  std::mt19937_64 rng(777);
  std::uniform_real_distribution<double> uniform(-7.0, -0.5);
  const std::string letters = "abcd";
  size_t regime[3] = {0, 0, 0};  // surely linear, linear after the check, logs
  for (int trial = 0; trial < 40; ++trial) {
    std::map<std::string, uint64_t> summed = {{letters, 1}};
    for (size_t i = 0; i < 6; ++i) {
      static const size_t kLow[] = {3, 60, 900}, kHigh[] = {30, 250, 2500};
      const size_t kind = i % 3;
      const size_t len = kLow[kind] + rng() % (kHigh[kind] - kLow[kind]);
      std::string w;
      while (w.size() < len) w += letters[rng() % 4];
      summed[w] += 1 + rng() % 5;
    }
    const Words words(summed.begin(), summed.end());
    std::map<std::string, double> chosen;
    for (char c : letters) chosen[std::string(1, c)] = uniform(rng);
    for (size_t i = 0; i < 20; ++i) {
      std::string piece;
      for (size_t k = 0, len = 2 + rng() % 4; k < len; ++k) piece += letters[rng() % 4];
      chosen[piece] = uniform(rng);
    }
    std::vector<std::pair<std::string, double>> listed(chosen.begin(), chosen.end());

    const GivenPieces given(words, listed);
    const unigram::UnigramWords& product_words = given.words;
    const std::vector<unigram::ScoredPiece>& pieces = given.pieces;
    const std::vector<std::pair<std::string, uint64_t>>& in_order = given.in_order;
    const unigram::PieceSet set(pieces, product_words.chars.size());
    const bool cache = trial % 2 == 0;
    const unigram::Lattices lattices(product_words, set, cache ? uint64_t{1} << 24 : 0);
    ASSERT_EQ(lattices.cached(), cache);
    SCOPED_TRACE("trial " + std::to_string(trial));
    const testing::UnigramEStepResult want = testing::ReferenceUnigramEStep(in_order, listed);
    ASSERT_EQ(want.log_z.size(), product_words.size());
    for (size_t w = 0; w < product_words.size(); ++w) {
      const double n = static_cast<double>(product_words.Word(w).size());
      if (n * -set.min_edge_score < unigram::kLinearLimit) {
        ++regime[0];
      } else {
        ++regime[want.log_z[w] >= -unigram::kLinearLimit ? 1 : 2];
      }
    }
    const unigram::EStep got = unigram::RunEStep(product_words, set, lattices);
    for (size_t k = 0; k < listed.size(); ++k) {
      const int64_t g = got.expected[k], e = want.fixed_expected[k];
      EXPECT_LE(std::abs(g - e), static_cast<int64_t>(product_words.size()))
          << "piece " << listed[k].first << ": " << g << " vs " << e;
    }
    const __int128 ll_diff = got.log_likelihood - want.fixed_log_likelihood;
    EXPECT_LE(static_cast<double>(ll_diff < 0 ? -ll_diff : ll_diff),
              static_cast<double>(product_words.size()));
  }
  std::printf("E-step paths: %zu words surely linear, %zu linear after the check, %zu in logs\n",
              regime[0], regime[1], regime[2]);
  EXPECT_GE(regime[0], 40u);
  EXPECT_GE(regime[1], 40u);
  EXPECT_GE(regime[2], 40u);
}

// ---- 2. whole training ----------------------------------------------------------------------

constexpr double kScoreTolerance = 1e-6;
double LogLikelihoodTolerance(double ll) { return 1e-6 + 1e-9 * std::abs(ll); }

// Pieces (text, score) equal the reference's: same texts in the same order, scores within
// kScoreTolerance. Returns whether the texts matched.
bool ExpectSamePieces(const UnigramPieces& got, const UnigramPieces& want, Differences& d,
                      const std::string& what) {
  std::vector<std::string> got_texts, want_texts;
  for (const auto& p : got) got_texts.push_back(p.first);
  for (const auto& p : want) want_texts.push_back(p.first);
  EXPECT_EQ(got_texts, want_texts) << what << "\nproduct:   " << Show(got)
                                   << "\nreference: " << Show(want);
  if (got_texts != want_texts) return false;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i].second, want[i].second, kScoreTolerance) << what << " piece " << got[i].first;
    d.Score(got[i].second, want[i].second);
  }
  return true;
}

struct Compared {
  UnigramReferenceResult expected;
  ProductRun run;
};

// The product (threads given) equals the reference on `words`: the final tokens in id order,
// the pieces' scores, the special and byte-fallback ids, and every round: its pieces after it
// and each E-step's log-likelihood.
Compared ExpectMatchesReference(const Words& words, const UnigramReferenceOptions& ref_options,
                                Differences& d, int threads = 1, bool drop_unknown = false) {
  SCOPED_TRACE(Label(ref_options));
  Compared out;
  out.expected = ReferenceUnigramTrain(words, ref_options);
  const UnigramReferenceResult& expected = out.expected;
  const WordCounts counts = ToCounts(words);
  out.run = RunProduct(counts, ProductOptions(ref_options, threads, drop_unknown));
  const ProductRun& run = out.run;
  if (expected.alphabet.empty()) {  // no character at all (every byte invalid, say)
    EXPECT_TRUE(IsNothingToLearn(run.result.status())) << run.result.status();
    return out;
  }
  // Every character is a piece: a vocabulary too small for the alphabet is refused (an option
  // error) exactly when the reference, which keeps them all, ends above vocab_size.
  if (expected.tokens.size() > ref_options.vocab_size) {
    EXPECT_TRUE(IsOptionError(run.result.status())) << run.result.status();
    EXPECT_THAT(std::string(run.result.status().message()),
                ::testing::HasSubstr("is smaller than the alphabet's"));
    ++d.refused_small_vocab;
    return out;
  }
  EXPECT_TRUE(run.result.ok()) << run.result.status();
  const UnigramModel* model = Model(run);
  EXPECT_NE(model, nullptr);
  if (model == nullptr) return out;
  EXPECT_TRUE(model->Validate().ok()) << model->Validate();
  EXPECT_FALSE(run.result->interrupted);
  ++d.runs;
  size_t prunings = 0;
  for (const UnigramReferenceRound& r : expected.rounds) prunings += r.pruned;
  ++d.pruned_runs[std::min<size_t>(prunings, 2)];

  // The rounds.
  EXPECT_EQ(run.states.size(), expected.rounds.size());
  const size_t rounds = std::min(run.states.size(), expected.rounds.size());
  for (size_t k = 0; k < rounds; ++k) {
    const std::string what = "round " + std::to_string(k + 1);
    const UnigramReferenceRound& want = expected.rounds[k];
    ++d.rounds;
    EXPECT_EQ(run.steps_done[k], k + 1);
    const std::optional<RoundState> state = ReadState(run.states[k]);
    EXPECT_TRUE(state.has_value()) << what << ": the state does not read back";
    if (!state) continue;
    EXPECT_EQ(state->rounds, k + 1);
    EXPECT_EQ(state->final, k + 1 == expected.rounds.size()) << what;
    EXPECT_EQ(state->vocab_size, ref_options.vocab_size);
    EXPECT_EQ(run.pieces[k], want.pieces.size()) << what;
    const bool same = ExpectSamePieces(state->pieces, want.pieces, d, what);
    const std::vector<double>& lls = run.log_likelihoods[k];
    EXPECT_EQ(lls.size(), want.log_likelihoods.size()) << what;
    for (size_t e = 0; e < std::min(lls.size(), want.log_likelihoods.size()); ++e) {
      EXPECT_NEAR(lls[e], want.log_likelihoods[e], LogLikelihoodTolerance(want.log_likelihoods[e]))
          << what << " E-step " << e;
      d.LogLikelihood(lls[e], want.log_likelihoods[e]);
    }
    if (!same) break;  // later rounds follow from this one
  }

  // The final vocabulary.
  EXPECT_EQ(model->tokens, expected.tokens)
      << "product:   " << Show(model->tokens, expected.first_piece_id)
      << "\nreference: " << Show(expected.tokens, expected.first_piece_id);
  if (model->tokens == expected.tokens) {
    for (size_t i = expected.first_piece_id; i < model->tokens.size(); ++i) {
      EXPECT_NEAR(model->scores[i], expected.scores[i], kScoreTolerance)
          << "token " << i << " " << model->tokens[i];
      d.Score(model->scores[i], expected.scores[i]);
    }
  }
  std::vector<SpecialToken> specials;
  for (size_t i = 0; i < ref_options.special_tokens.size(); ++i) {
    specials.push_back({ref_options.special_tokens[i], static_cast<TokenId>(i)});
  }
  EXPECT_EQ(model->specials, specials);
  const auto unk = std::find(ref_options.special_tokens.begin(), ref_options.special_tokens.end(),
                             std::string("<unk>"));
  EXPECT_EQ(model->unk_id, static_cast<TokenId>(unk - ref_options.special_tokens.begin()));
  if (ref_options.byte_fallback) {
    EXPECT_EQ(model->byte_fallback.size(), 256u);
    for (size_t b = 0; b < model->byte_fallback.size(); ++b) {
      EXPECT_EQ(model->byte_fallback[b], specials.size() + b);
    }
  } else {
    EXPECT_TRUE(model->byte_fallback.empty());
  }
  return out;
}

const std::vector<std::vector<std::string>> kSpecialLists = {
    {"<unk>"}, {"<unk>", "<s>", "</s>"}, {"<pad>", "<unk>", "<mask>"}, {"<s>", "</s>", "<unk>"}};

// Options for `words`, `size` choosing the vocabulary: 0 the whole seed vocabulary (no
// pruning), 1 most of it, 2 a third, 3 the least that Validate and the seeds allow.
UnigramReferenceOptions RandomTrainOptions(const Words& words, int size, std::mt19937_64& rng) {
  UnigramReferenceOptions o;
  o.sub_iterations = 1 + static_cast<int>(rng() % 2);
  o.shrinking_factor = rng() % 2 == 0 ? 0.5 : 0.75;
  static const double kCoverages[] = {1.0, 1.0, 1.0, 0.98, 0.9};
  o.character_coverage = kCoverages[rng() % 5];
  o.split_by_script = rng() % 3 != 0;
  o.byte_fallback = rng() % 5 == 0;
  static const size_t kLengths[] = {16, 16, 16, 3, 2};
  o.max_piece_length = kLengths[rng() % 5];
  if (rng() % 8 == 0) o.seed_size = 3 + rng() % 8;
  if (rng() % 10 == 0) o.limit_alphabet = 2 + rng() % 4;
  o.special_tokens = kSpecialLists[rng() % kSpecialLists.size()];
  const UnigramReferenceResult seeded = ReferenceSeeds(words, o);
  const size_t seeds = seeded.seeds.size();
  const size_t fixed = o.special_tokens.size() + (o.byte_fallback ? 256 : 0);
  const double share[] = {1.0, 0.8, 0.35, 0.0};
  // At least the alphabet (every character is a piece; a smaller vocab_size is refused), and
  // now and then one below it, to see the refusal.
  const size_t least = std::max<size_t>(seeded.alphabet.size(), 1);
  o.vocab_size = fixed + std::max<size_t>(
                             least, static_cast<size_t>(share[size] * static_cast<double>(seeds)));
  if (size == 3 && rng() % 6 == 0 && least > 1) o.vocab_size = fixed + least - 1;
  return o;
}

TEST(UnigramTrain, EqualsReferenceOnRandomCorpora) {
  std::mt19937_64 rng(424242);
  Differences d;
  for (int i = 0; i < 150; ++i) {
    const Kind kind = static_cast<Kind>(i % kKinds);
    const Words words = RandomWords(kind, 5 + rng() % 40, rng);
    SCOPED_TRACE(std::string("corpus ") + std::to_string(i) + " " + KindName(kind) + " " +
                 Show(words));
    for (int size = 0; size < 4; ++size) {
      UnigramReferenceOptions options = RandomTrainOptions(words, size, rng);
      if (size == 1 && i % 3 == 0) options.ml_m_step = true;
      // The product prepending "<unk>" itself (not listed) gives the same ids.
      const bool drop_unknown = options.special_tokens[0] == "<unk>" && rng() % 2 == 0;
      ExpectMatchesReference(words, options, d, 1, drop_unknown);
    }
  }
  d.Print("random corpora");
  EXPECT_GE(d.pruned_runs[0], 150u);
  EXPECT_GE(d.pruned_runs[1], 60u);
  // (Vocabularies start at the alphabet's size: fewer runs prune twice than when the smallest
  // were below it; those are now refused, and some are.)
  EXPECT_GE(d.pruned_runs[2], 60u);
  EXPECT_GE(d.refused_small_vocab, 5u);
}

// Byte fallback's 256 ids count towards vocab_size (and so towards the 1.1 * vocab_size a round
// prunes down to): pruning with byte fallback needs a few hundred seeds.
TEST(UnigramTrain, EqualsReferenceWithByteFallbackAndPruning) {
  std::mt19937_64 rng(5150);
  Differences d;
  // Kinds with a few hundred seeds and more (scripts and invalid have too few).
  const Kind kinds[] = {Kind::kAscii, Kind::kRepeats, Kind::kMetaspace, Kind::kCjk,
                        Kind::kRare,  Kind::kMixed,   Kind::kAscii,     Kind::kCjk};
  for (int i = 0; i < 8; ++i) {
    const Kind kind = kinds[i];
    const Words words = RandomWords(kind, 1500, rng);
    SCOPED_TRACE(std::string("corpus ") + std::to_string(i) + " " + KindName(kind));
    UnigramReferenceOptions options;
    options.byte_fallback = true;
    options.sub_iterations = 1 + i % 2;
    options.shrinking_factor = i % 4 < 2 ? 0.5 : 0.75;
    options.character_coverage = i % 3 == 0 ? 0.95 : 1.0;
    options.split_by_script = i % 4 != 3;
    options.special_tokens = kSpecialLists[i % kSpecialLists.size()];
    const size_t seeds = ReferenceSeeds(words, options).seeds.size();
    options.vocab_size = 256 + options.special_tokens.size() + seeds / 8;
    ExpectMatchesReference(words, options, d, 1 + i % 2);
  }
  d.Print("byte fallback");
  EXPECT_GE(d.pruned_runs[1] + d.pruned_runs[2], 6u);
  EXPECT_GE(d.pruned_runs[2], 4u);
}

// Long words: a word of n characters whose n * -(lowest edge score) reaches 600 runs its
// forward-backward in logs unless its total probability is at least exp(-600) (piece_lattice.h,
// kLinearLimit; EStepOnLongWordsEqualsReferenceOnEveryPath takes each way), shorter ones on
// probabilities; the tiny corpora above never get there. Random words of 30-150 letters, and slices of the shared
// corpora (poetry's metaspace words are whole lines).
Words LongWords(size_t n, std::mt19937_64& rng) {
  std::map<std::string, uint64_t> summed;
  const std::string letters = "abcdef";
  for (size_t i = 0; i < n; ++i) {
    std::string w = "\xe2\x96\x81";
    const size_t length = 30 + rng() % 120;
    // Runs of a few motifs, so that long pieces recur.
    static const char* const kMotifs[] = {"abc", "abd", "ef", "a", "cab", "fed"};
    while (w.size() < length) w += rng() % 3 == 0 ? std::string(1, letters[rng() % 6]) : kMotifs[rng() % 6];
    summed[w] += 1 + rng() % 4;
  }
  return Words(summed.begin(), summed.end());
}

TEST(UnigramTrain, EqualsReferenceOnLongWordsAndSharedSlices) {
  std::mt19937_64 rng(6060);
  Differences d;
  for (int i = 0; i < 6; ++i) {
    const Words words = LongWords(40 + rng() % 40, rng);
    SCOPED_TRACE("long words " + std::to_string(i));
    UnigramReferenceOptions options;
    options.byte_fallback = false;
    options.sub_iterations = 1 + i % 2;
    options.ml_m_step = i == 5;
    const size_t seeds = ReferenceSeeds(words, options).seeds.size();
    options.vocab_size = 1 + seeds / (i % 2 == 0 ? 5 : 40);
    ExpectMatchesReference(words, options, d, 2);
  }
  d.Print("long words");
  for (const auto& [name, bytes, vocab] :
       {std::tuple<const char*, size_t, size_t>{"brown", 60000, 1000},
        std::tuple<const char*, size_t, size_t>{"poetry", 30000, 1000}}) {
    const WordCounts counts = CountSharedSlice(name, bytes);
    if (counts.unique_words() == 0) GTEST_SKIP() << "shared corpus " << name << " not found";
    SCOPED_TRACE(name);
    UnigramReferenceOptions options;
    options.vocab_size = vocab;
    options.character_coverage = 0.9995;
    ExpectMatchesReference(ToWords(counts), options, d, 2);
  }
  d.Print("long words and slices");
  EXPECT_EQ(d.pruned_runs[0], 0u);
  EXPECT_GE(d.pruned_runs[2], 4u);
}

// Characters whose piece died get the lowest score + 0.0001 k, the k-th of them in the alphabet's
// order (k = 0, 1, ...; a product in double, says the contract). Corpora of 150 letters (U+0100
// on, Latin like "ab") that each occur only at the end of one frequent word "▁abX": the whole
// word takes their mass and their own pieces fall below 0.5 expected occurrences. Each score is
// compared bit for bit (0.0001 added up k times is not 0.0001 * k from k = 7 on: 7 * 0.0001 =
// 0.0007 but the sum is 0.0007000000000000001, which the lowest + it rounds to a different double
// about once in a hundred).
TEST(UnigramTrain, DroppedCharactersScoreTheLowestPlusKTenThousandths) {
  size_t dropped = 0, compared_scores = 0, differ = 0;
  for (uint64_t base : {30, 41, 57, 64, 99, 150}) {
    Words words = {{"\xe2\x96\x81" "ab", 3}, {"\xe2\x96\x81" "ba", 2}};
    for (uint32_t k = 0; k < 150; ++k) {
      std::string w = "\xe2\x96\x81" "ab";
      const uint32_t cp = 0x100 + k;
      w += static_cast<char>(0xC0 | (cp >> 6));
      w += static_cast<char>(0x80 | (cp & 0x3F));
      words.emplace_back(w, base + k % 7);
    }
    SCOPED_TRACE("base count " + std::to_string(base));
    UnigramReferenceOptions options;
    options.byte_fallback = false;
    options.sub_iterations = 3;
    options.vocab_size = 1 + ReferenceSeeds(words, options).seeds.size();
    Differences d;
    const Compared compared = ExpectMatchesReference(words, options, d);
    const UnigramReferenceResult& expected = compared.expected;
    std::set<std::string> left;
    for (const auto& [text, score] : expected.rounds.back().pieces) left.insert(text);
    for (size_t c = 0; c < expected.alphabet.size(); ++c) {
      dropped += left.count(expected.seeds[c].first) == 0;
    }
    const UnigramModel* model = Model(compared.run);
    if (model == nullptr || model->tokens != expected.tokens) continue;  // (failed above)
    for (size_t i = expected.first_piece_id; i < model->tokens.size(); ++i) {
      ++compared_scores;
      const bool same =
          std::bit_cast<uint64_t>(model->scores[i]) == std::bit_cast<uint64_t>(expected.scores[i]);
      differ += !same;
      EXPECT_TRUE(same) << "token " << i << " '" << model->tokens[i] << "' "
                        << absl::StrFormat("%.17g vs %.17g", model->scores[i], expected.scores[i]);
    }
  }
  std::printf("dropped characters: %zu; scores: %zu of %zu differ in their bits\n", dropped,
              differ, compared_scores);
  EXPECT_GE(dropped, 600u);
}

// ---- 3. the log-likelihood across E-steps ---------------------------------------------------

// The maximum-likelihood M-step (TrainerOptions::unigram_ml_m_step) never lowers the
// log-likelihood between two E-steps of a round when the M-step between them dropped no piece
// and neither E-step had an unknown edge (EM's guarantee; a dropped piece loses its paths'
// mass, an unknown edge is scored min - 10, no parameter of the model), up to the fixed-point
// rounding (reference_unigram_test.cc measured at most 2.4e-7 nats there; 1e-5 allowed). Which
// pairs are clean is the reference's account of the same run (the runs are checked equal).
TEST(UnigramTrain, MaximumLikelihoodEmNeverLowersTheLogLikelihood) {
  std::mt19937_64 rng(4242);
  size_t clean = 0, decreased = 0, unclean = 0;
  double worst = 0;
  Differences d;
  for (int trial = 0; trial < 200; ++trial) {
    const Words words = RandomWords(trial % 2 == 0 ? Kind::kAscii : Kind::kRepeats, 5 + rng() % 12, rng);
    UnigramReferenceOptions options;
    options.ml_m_step = true;
    options.byte_fallback = false;
    options.sub_iterations = 6;
    options.max_piece_length = 4;
    const size_t seeds = ReferenceSeeds(words, options).seeds.size();
    options.vocab_size = 1 + std::min<size_t>(seeds, 4 + rng() % 10);
    SCOPED_TRACE("trial " + std::to_string(trial) + " " + Show(words));
    const Compared compared = ExpectMatchesReference(words, options, d);
    const UnigramReferenceResult& expected = compared.expected;
    const ProductRun& run = compared.run;
    if (run.log_likelihoods.size() != expected.rounds.size()) continue;  // (a failure above)
    for (size_t k = 0; k < expected.rounds.size(); ++k) {
      const UnigramReferenceRound& round = expected.rounds[k];
      const std::vector<double>& ll = run.log_likelihoods[k];
      if (ll.size() != round.log_likelihoods.size()) continue;
      for (size_t e = 1; e < ll.size(); ++e) {
        const bool is_clean = round.e_step_pieces[e] == round.e_step_pieces[e - 1] &&
                              round.e_step_unknown_edges[e - 1] == 0 &&
                              round.e_step_unknown_edges[e] == 0;
        if (!is_clean) {
          ++unclean;
          continue;
        }
        ++clean;
        EXPECT_GE(ll[e], ll[e - 1] - 1e-5) << "round " << k + 1 << " E-step " << e;
        if (ll[e] < ll[e - 1]) {
          ++decreased;
          worst = std::max(worst, ll[e - 1] - ll[e]);
        }
      }
    }
  }
  std::printf("ml M-step: %zu clean E-step pairs, %zu decreased (worst %.3g nats: rounding); "
              "%zu unclean pairs not checked\n",
              clean, decreased, worst, unclean);
  EXPECT_GT(clean, 400u);
}

// With SentencePiece's digamma M-step the log-likelihood can fall in a clean step: the smallest
// case reference_unigram_test.cc found, {a 2, aa 2, b 6, cdcad 1, dabb 1} (seeds a b d c aa, no
// unknown edge, nothing below 0.5 after the first E-step), goes -27.7612 -> -28.5091, where the
// ML step raises it to -26.4815. vocab_size 6: the five seeds and <unk>, no pruning (the
// reference's test says 9, which the product refuses: more than the seed vocabulary).
TEST(UnigramTrain, DigammaMStepCanLowerTheLogLikelihood) {
  const Words words = {{"a", 2}, {"aa", 2}, {"b", 6}, {"cdcad", 1}, {"dabb", 1}};
  UnigramReferenceOptions options;
  options.vocab_size = 6;
  options.sub_iterations = 6;
  options.byte_fallback = false;
  Differences d;
  const Compared compared = ExpectMatchesReference(words, options, d);
  const UnigramReferenceResult& digamma = compared.expected;
  const ProductRun& run = compared.run;
  ASSERT_EQ(run.log_likelihoods.size(), 1u);
  ASSERT_EQ(digamma.rounds.size(), 1u);
  const std::vector<double>& ll = run.log_likelihoods[0];
  ASSERT_EQ(ll.size(), 6u);
  EXPECT_THAT(digamma.rounds[0].e_step_pieces, ::testing::ElementsAre(5, 5, 5, 4, 4, 4));
  EXPECT_THAT(digamma.rounds[0].e_step_unknown_edges, ::testing::ElementsAre(0, 0, 0, 0, 0, 0));
  EXPECT_NEAR(ll[0], -27.7612, 1e-4);
  EXPECT_NEAR(ll[1], -28.5091, 1e-4);
  EXPECT_LT(ll[1], ll[0]);  // a clean pair (5 pieces both times, no unknown edge) that falls
  EXPECT_LT(ll[2], ll[0]);
  for (size_t e = 0; e < ll.size(); ++e) {
    EXPECT_NEAR(ll[e], digamma.rounds[0].log_likelihoods[e], 1e-9) << e;
  }

  options.ml_m_step = true;
  const Compared ml_compared = ExpectMatchesReference(words, options, d);
  const UnigramReferenceResult& ml = ml_compared.expected;
  const ProductRun& ml_run = ml_compared.run;
  ASSERT_EQ(ml_run.log_likelihoods.size(), 1u);
  const std::vector<double>& m = ml_run.log_likelihoods[0];
  ASSERT_EQ(m.size(), 6u);
  EXPECT_EQ(m[0], ll[0]);  // the same seeds
  EXPECT_NEAR(m[1], -26.4815, 1e-4);
  for (size_t e = 1; e < m.size(); ++e) EXPECT_GT(m[e], m[e - 1]) << e;
  for (size_t e = 0; e < m.size(); ++e) EXPECT_NEAR(m[e], ml.rounds[0].log_likelihoods[e], 1e-9);
}

// ---- 4. threads -----------------------------------------------------------------------------

// Returns the rounds the runs took.
size_t ExpectSameForOneTwoAndFourThreads(const WordCounts& counts, TrainerOptions options,
                                         const std::string& what) {
  std::optional<ProductRun> first;
  for (int threads : {1, 2, 4}) {
    options.threads = threads;
    ProductRun run = RunProduct(counts, options);
    EXPECT_TRUE(run.result.ok()) << what << ": " << run.result.status();
    if (Model(run) == nullptr) return 0;
    EXPECT_TRUE(Model(run)->Validate().ok());
    if (!first) {
      first = std::move(run);
      continue;
    }
    const std::string label = what + ", " + std::to_string(threads) + " threads";
    ExpectSameModel(*Model(run), *Model(*first), label);
    EXPECT_EQ(run.states, first->states) << label;
    EXPECT_EQ(run.log_likelihoods, first->log_likelihoods) << label;
  }
  return first->states.size();
}

TEST(UnigramTrain, SameModelWithOneTwoAndFourThreadsOnSharedCorpora) {
  for (const auto& [name, bytes, vocab] : {std::tuple<const char*, size_t, size_t>{"brown", 2000000, 8000},
                                           std::tuple<const char*, size_t, size_t>{"poetry", 1000000, 8000}}) {
    const WordCounts counts = CountSharedSlice(name, bytes);
    if (counts.unique_words() == 0) GTEST_SKIP() << "shared corpus " << name << " not found";
    UnigramReferenceOptions ref;
    ref.vocab_size = vocab;
    ref.character_coverage = 0.9995;
    EXPECT_GE(ExpectSameForOneTwoAndFourThreads(counts, ProductOptions(ref, 0), name), 5u);
  }
}

TEST(UnigramTrain, SameModelWithOneTwoAndFourThreadsOnRandomCorpora) {
  std::mt19937_64 rng(8080);
  int several = 0;
  for (int i = 0; i < 16; ++i) {
    const Kind kind = static_cast<Kind>(i % kKinds);
    // Enough distinct words for the E-step's and the seeds' parallel loops to split.
    Words words = RandomWords(kind, 6000, rng);
    for (auto& [w, c] : words) c = 1 + rng() % 50;
    UnigramReferenceOptions ref;
    ref.byte_fallback = i % 2 == 0;
    ref.character_coverage = i % 3 == 0 ? 0.99 : 1.0;
    ref.split_by_script = i % 4 != 1;
    ref.sub_iterations = 1 + i % 2;
    ref.ml_m_step = i % 5 == 0;
    const size_t seeds = ReferenceSeeds(words, ref).seeds.size();
    ref.vocab_size = (ref.byte_fallback ? 257 : 1) + std::max<size_t>(seeds / 10, 2);
    const size_t rounds = ExpectSameForOneTwoAndFourThreads(
        ToCounts(words), ProductOptions(ref, 0),
        std::string("corpus ") + std::to_string(i) + " " + KindName(kind) + " " + Label(ref));
    several += rounds >= 2;
  }
  EXPECT_GE(several, 12) << "corpora trained in more than one round";
}

// ---- 5. resume ------------------------------------------------------------------------------

// For every round k of a run: stopped by after_step at k (its state kept), then resumed from
// that state, training ends with the uninterrupted run's model, bit for bit, and the later
// rounds' states are the uninterrupted run's.
void ExpectResumeFromEveryRound(const WordCounts& counts, const TrainerOptions& options,
                                const std::string& what, size_t min_rounds) {
  SCOPED_TRACE(what);
  const ProductRun full = RunProduct(counts, options);
  ASSERT_TRUE(full.result.ok()) << full.result.status();
  const size_t rounds = full.states.size();
  ASSERT_GE(rounds, min_rounds);
  for (size_t k = 1; k <= rounds; ++k) {
    SCOPED_TRACE("stopped after round " + std::to_string(k) + " of " + std::to_string(rounds));
    TrainerOptions stop_options = options;
    stop_options.threads = 1 + static_cast<int>(k % 2);
    const ProductRun partial = RunProduct(counts, stop_options, k);
    ASSERT_TRUE(partial.result.ok()) << partial.result.status();
    ASSERT_EQ(partial.states.size(), k);
    EXPECT_TRUE(partial.result->interrupted);  // even at the last round: after_step said stop
    EXPECT_EQ(partial.states.back(), full.states[k - 1]);  // the state does not depend on threads
    ASSERT_NE(Model(partial), nullptr);
    EXPECT_TRUE(Model(partial)->Validate().ok());
    if (k == rounds) ExpectSameModel(*Model(partial), *Model(full), "stopped after the last round");
    TrainerOptions resume_options = options;
    resume_options.threads = 1 + static_cast<int>(k % 4);
    const ProductRun resumed = RunProduct(counts, resume_options, 0, partial.states.back());
    ASSERT_TRUE(resumed.result.ok()) << resumed.result.status();
    EXPECT_EQ(resumed.replayed, 1u);
    EXPECT_EQ(resumed.replayed_steps, std::optional<size_t>(k));
    EXPECT_FALSE(resumed.result->interrupted);
    ASSERT_NE(Model(resumed), nullptr);
    ExpectSameModel(*Model(resumed), *Model(full), "resumed");
    EXPECT_EQ(resumed.states,
              std::vector<std::string>(full.states.begin() + static_cast<ptrdiff_t>(k), full.states.end()));
    EXPECT_EQ(resumed.result->stop_reason, full.result->stop_reason);
  }
}

TEST(UnigramTrain, ResumingFromAnyRoundGivesTheUninterruptedModel) {
  const WordCounts brown = CountSharedSlice("brown", 200000);
  if (brown.unique_words() == 0) GTEST_SKIP() << "shared corpus brown not found";
  UnigramReferenceOptions ref;
  ref.vocab_size = 2000;
  ExpectResumeFromEveryRound(brown, ProductOptions(ref, 2), "brown 200 KB", 5);
  ref.sub_iterations = 1;
  ref.shrinking_factor = 0.5;
  ref.byte_fallback = false;
  ref.special_tokens = {"<s>", "<unk>", "</s>"};
  ExpectResumeFromEveryRound(brown, ProductOptions(ref, 2), "brown 200 KB, no byte fallback", 3);
  std::mt19937_64 rng(999);
  for (int i = 0; i < 12; ++i) {
    const Kind kind = static_cast<Kind>(i % kKinds);
    const Words words = RandomWords(kind, 60, rng);
    UnigramReferenceOptions o;
    o.byte_fallback = false;
    o.sub_iterations = 1 + i % 2;
    o.ml_m_step = i % 3 == 0;
    const UnigramReferenceResult seeded = ReferenceSeeds(words, o);
    o.vocab_size = 1 + std::max<size_t>(seeded.alphabet.size(), seeded.seeds.size() / 6);
    ExpectResumeFromEveryRound(ToCounts(words), ProductOptions(o, 1),
                               std::string("corpus ") + std::to_string(i) + " " + KindName(kind),
                               2);
  }
}

// A state resumed under another vocab_size (the rounds done depend on it) is an option error
// naming `vocab_size`; a state from other words (a piece outside their alphabet) is an error.
TEST(UnigramTrain, ResumeRefusesAStateOfAnotherRun) {
  std::mt19937_64 rng(31);
  const Words words = RandomWords(Kind::kAscii, 80, rng);
  const WordCounts counts = ToCounts(words);
  UnigramReferenceOptions ref;
  ref.byte_fallback = false;
  ref.vocab_size = 1 + ReferenceSeeds(words, ref).seeds.size() / 5;
  const TrainerOptions options = ProductOptions(ref, 1);
  const ProductRun partial = RunProduct(counts, options, 1);
  ASSERT_TRUE(partial.result.ok()) << partial.result.status();
  ASSERT_EQ(partial.states.size(), 1u);
  for (const size_t other : {options.vocab_size - 1, options.vocab_size + 1}) {
    TrainerOptions changed = options;
    changed.vocab_size = other;
    const ProductRun resumed = RunProduct(counts, changed, 0, partial.states[0]);
    ASSERT_FALSE(resumed.result.ok()) << "resumed with vocab_size " << other;
    EXPECT_TRUE(IsOptionError(resumed.result.status())) << resumed.result.status();
    EXPECT_THAT(resumed.result.status().message(), ::testing::HasSubstr("`vocab_size`"));
    EXPECT_THAT(OptionNamesOf(resumed.result.status()), ::testing::Contains("vocab_size"));
  }
  // Other words: "x" is no character of theirs.
  const WordCounts others = ToCounts({{"xyz", 5}, {"xy", 3}, {"a", 2}});
  const ProductRun foreign = RunProduct(others, options, 0, partial.states[0]);
  EXPECT_FALSE(foreign.result.ok());
  // Not a state at all.
  const ProductRun junk = RunProduct(counts, options, 0, "not a unigram state");
  EXPECT_FALSE(junk.result.ok());
}

// A damaged state: every truncation is an error; every single-bit flip is an error or (the
// state has no checksum: checkpoint files carry one, frame by frame) a run that ends with a valid
// model, never a crash or an invalid model. Both a state with rounds still to run and the last
// round's (final: the model is made from its pieces directly).
TEST(UnigramTrain, DamagedStateIsAnErrorNotACrash) {
  std::mt19937_64 rng(77);
  const Words words = RandomWords(Kind::kMetaspace, 20, rng);
  const WordCounts counts = ToCounts(words);
  UnigramReferenceOptions ref;
  ref.byte_fallback = false;
  ref.vocab_size = 1 + ReferenceSeeds(words, ref).seeds.size() / 4;
  const TrainerOptions options = ProductOptions(ref, 1);
  const ProductRun full = RunProduct(counts, options);
  ASSERT_TRUE(full.result.ok()) << full.result.status();
  ASSERT_GE(full.states.size(), 2u);
  ASSERT_NE(Model(full), nullptr);
  for (const bool final : {false, true}) {
    const std::string state = final ? full.states.back() : full.states[0];
    SCOPED_TRACE(final ? "the last round's state" : "the first round's state");
    ASSERT_TRUE(ReadState(state).has_value());
    ASSERT_EQ(ReadState(state)->final, final);
    for (size_t n = 1; n < state.size(); ++n) {  // (an empty state is none: a fresh run)
      const ProductRun resumed = RunProduct(counts, options, 0, state.substr(0, n));
      EXPECT_FALSE(resumed.result.ok()) << "truncated to " << n << " of " << state.size();
    }
    size_t refused = 0, same = 0, other = 0;
    for (size_t i = 0; i < state.size(); ++i) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string damaged = state;
        damaged[i] = static_cast<char>(damaged[i] ^ (1 << bit));
        const ProductRun resumed = RunProduct(counts, options, 0, damaged);
        if (!resumed.result.ok()) {
          ++refused;
          continue;
        }
        const UnigramModel* model = Model(resumed);
        ASSERT_NE(model, nullptr);
        EXPECT_TRUE(model->Validate().ok())
            << "byte " << i << " bit " << bit << ": " << model->Validate();
        ++(*model == *Model(full) ? same : other);
      }
    }
    std::printf("%s state, %zu bytes: of its bit flips %zu refused, %zu accepted giving the "
                "uninterrupted model, %zu accepted giving another\n",
                final ? "final" : "first", state.size(), refused, same, other);
    EXPECT_GT(refused, 0u);
  }
}

// States no run writes, each a resume must refuse rather than train from (a final state's pieces
// become the model directly): a score that is not finite, a piece listed twice, no pieces.
TEST(UnigramTrain, ResumeRefusesAnImpossibleState) {
  std::mt19937_64 rng(78);
  const Words words = RandomWords(Kind::kAscii, 30, rng);
  const WordCounts counts = ToCounts(words);
  UnigramReferenceOptions ref;
  ref.byte_fallback = false;
  ref.vocab_size = 1 + ReferenceSeeds(words, ref).seeds.size() / 4;
  const TrainerOptions options = ProductOptions(ref, 1);
  const ProductRun full = RunProduct(counts, options);
  ASSERT_TRUE(full.result.ok()) << full.result.status();
  ASSERT_GE(full.states.size(), 2u);
  for (const bool final : {false, true}) {
    const std::string& written = final ? full.states.back() : full.states[0];
    const std::optional<RoundState> state = ReadState(written);
    ASSERT_TRUE(state.has_value());
    ASSERT_EQ(WriteState(*state), written);  // the tests' writer is the trainer's format
    ASSERT_GE(state->pieces.size(), 2u);
    ASSERT_EQ(state->pieces[0].first.size(), 1u);  // a character first, a substring last
    ASSERT_GT(state->pieces.back().first.size(), 1u);
    // The same state, written again, resumes to the uninterrupted model.
    const ProductRun resumed = RunProduct(counts, options, 0, WriteState(*state));
    ASSERT_TRUE(resumed.result.ok()) << resumed.result.status();
    ExpectSameModel(*Model(resumed), *Model(full), "resumed from a rewritten state");
    struct Change {
      const char* what;
      std::function<void(RoundState&)> apply;
    };
    const Change changes[] = {
        {"a NaN score",
         [](RoundState& s) { s.pieces[1].second = std::numeric_limits<double>::quiet_NaN(); }},
        {"an infinite score",
         [](RoundState& s) { s.pieces[0].second = std::numeric_limits<double>::infinity(); }},
        {"a score of -infinity",
         [](RoundState& s) { s.pieces[1].second = -std::numeric_limits<double>::infinity(); }},
        {"a character listed twice", [](RoundState& s) { s.pieces.push_back(s.pieces[0]); }},
        {"a longer piece listed twice",
         [](RoundState& s) { s.pieces.insert(s.pieces.begin(), s.pieces.back()); }},
        {"no pieces", [](RoundState& s) { s.pieces.clear(); }},
    };
    for (const Change& c : changes) {
      SCOPED_TRACE(std::string(final ? "final state, " : "first state, ") + c.what);
      RoundState changed = *state;
      c.apply(changed);
      const ProductRun run = RunProduct(counts, options, 0, WriteState(changed));
      EXPECT_FALSE(run.result.ok())
          << "trained, to a model that "
          << (Model(run) == nullptr ? std::string("is missing")
                                    : Model(run)->Validate().ok()
                                          ? std::string("is valid")
                                          : std::string(Model(run)->Validate().message()));
    }
  }
}

// ---- 6. invalid options ---------------------------------------------------------------------

TrainerOptions ValidUnigramOptions() {
  TrainerOptions o;
  o.algorithm = Algorithm::kUnigram;
  o.units = UnitKind::kChar;
  o.special_tokens_at = SpecialTokensAt::kStart;
  o.vocab_size = 300;
  return o;
}

TEST(UnigramTrain, ValidateRefusesBadOptions) {
  ASSERT_TRUE(ValidUnigramOptions().Validate().ok()) << ValidUnigramOptions().Validate();
  struct Case {
    const char* what;
    void (*change)(TrainerOptions&);
    const char* option;  // the option name the error must carry
  };
  const Case cases[] = {
      {"shrinking_factor 0", [](TrainerOptions& o) { o.shrinking_factor = 0; }, "shrinking_factor"},
      {"shrinking_factor 1", [](TrainerOptions& o) { o.shrinking_factor = 1; }, "shrinking_factor"},
      {"shrinking_factor 1.5", [](TrainerOptions& o) { o.shrinking_factor = 1.5; },
       "shrinking_factor"},
      {"shrinking_factor -0.5", [](TrainerOptions& o) { o.shrinking_factor = -0.5; },
       "shrinking_factor"},
      {"shrinking_factor NaN",
       [](TrainerOptions& o) { o.shrinking_factor = std::numeric_limits<double>::quiet_NaN(); },
       "shrinking_factor"},
      {"sub_iterations 0", [](TrainerOptions& o) { o.sub_iterations = 0; }, "sub_iterations"},
      {"max_piece_length 0", [](TrainerOptions& o) { o.max_piece_length = 0; }, "max_piece_length"},
      {"max_piece_length 65", [](TrainerOptions& o) { o.max_piece_length = 65; },
       "max_piece_length"},
      {"seed_size 0", [](TrainerOptions& o) { o.seed_size = 0; }, "seed_size"},
      {"units byte", [](TrainerOptions& o) { o.units = UnitKind::kByte; }, "units"},
      {"min_frequency 2", [](TrainerOptions& o) { o.min_frequency = 2; }, "min_frequency"},
      {"max_token_length 4", [](TrainerOptions& o) { o.max_token_length = 4; },
       "max_token_length"},
      {"hf_compat", [](TrainerOptions& o) { o.hf_compat = true; }, "hf_compat"},
      {"special tokens at the end",
       [](TrainerOptions& o) { o.special_tokens_at = SpecialTokensAt::kEnd; }, "special_tokens_at"},
      {"a continuing_subword_prefix",
       [](TrainerOptions& o) { o.continuing_subword_prefix = "##"; }, "continuing_subword_prefix"},
      {"vocab_size of the byte tokens and <unk> only", [](TrainerOptions& o) { o.vocab_size = 257; },
       "vocab_size"},
      {"vocab_size 1 without byte fallback",
       [](TrainerOptions& o) {
         o.byte_fallback = false;
         o.vocab_size = 1;
       },
       "vocab_size"},
  };
  for (const Case& c : cases) {
    TrainerOptions o = ValidUnigramOptions();
    c.change(o);
    const absl::Status status = o.Validate();
    EXPECT_FALSE(status.ok()) << c.what;
    EXPECT_TRUE(IsOptionError(status)) << c.what << ": " << status;
    EXPECT_THAT(OptionNamesOf(status), ::testing::Contains(c.option)) << c.what << ": " << status;
    // Train refuses them the same way, before reading a word.
    const WordCounts counts = ToCounts({{"ab", 3}, {"abc", 2}});
    const absl::StatusOr<TrainResult> trained = Train(WordSource::Borrow(counts), o);
    EXPECT_FALSE(trained.ok()) << c.what;
    EXPECT_TRUE(IsOptionError(trained.status())) << c.what << ": " << trained.status();
  }
  // min_frequency 0 and 1 mean "never stop early": allowed.
  TrainerOptions o = ValidUnigramOptions();
  o.min_frequency = 1;
  EXPECT_TRUE(o.Validate().ok()) << o.Validate();
}

// A vocab_size beyond the seed vocabulary (its characters and substrings, the special and byte
// tokens) is an option error naming `vocab_size`; the largest one it allows trains.
TEST(UnigramTrain, VocabSizeLargerThanTheSeedVocabularyIsAnOptionError) {
  const Words words = {{"ab", 3}, {"abc", 2}, {"b", 1}};  // seeds a b c ab abc bc
  const WordCounts counts = ToCounts(words);
  UnigramReferenceOptions ref;
  const size_t seeds = ReferenceSeeds(words, ref).seeds.size();
  ASSERT_EQ(seeds, 6u);
  for (const bool byte_fallback : {true, false}) {
    ref.byte_fallback = byte_fallback;
    const size_t largest = seeds + 1 + (byte_fallback ? 256 : 0);
    ref.vocab_size = largest + 1;
    const absl::StatusOr<TrainResult> refused =
        Train(WordSource::Borrow(counts), ProductOptions(ref, 1));
    ASSERT_FALSE(refused.ok());
    EXPECT_TRUE(IsOptionError(refused.status())) << refused.status();
    EXPECT_THAT(refused.status().message(), ::testing::HasSubstr("`vocab_size`"));
    EXPECT_THAT(OptionNamesOf(refused.status()), ::testing::Contains("vocab_size"));
    ref.vocab_size = largest;
    Differences d;
    ExpectMatchesReference(words, ref, d);
  }
}

}  // namespace
}  // namespace tokenmill

namespace tokenmill {
namespace {

// The E-step's fixed-point sums (int64, units of 2^-24) hold a piece's expected count below
// 2^39: words with more count-weighted characters are refused up front. (Before the check, the
// sums wrapped: a count of 3 * 2^38 trained to a model with a piece scored about 0, 2^44 failed
// in the M-step, 2^50 gave another wrong model.)
TEST(UnigramTrain, CountsBeyondTheFixedPointSumsAreRefusedNotWrapped) {
  UnigramReferenceOptions ref;
  ref.vocab_size = 6;
  ref.byte_fallback = false;
  for (int shift : {30, 36, 38, 44, 50}) {
    SCOPED_TRACE("shift " + std::to_string(shift));
    const uint64_t unit = uint64_t{1} << shift;
    const Words words = {{"\u2581ab", 3 * unit}, {"\u2581abc", 2 * unit}, {"\u2581bc", 5 * unit},
                         {"\u2581ca", unit},     {"cab", 7}};
    const ProductRun run = RunProduct(ToCounts(words), ProductOptions(ref, 1));
    uint64_t weighted = 0;
    for (const auto& [w, c] : words) weighted += c * (w.size() == 3 ? 3 : w.size() - 2);
    if (weighted >= (uint64_t{1} << 39)) {
      EXPECT_EQ(run.result.status().code(), absl::StatusCode::kResourceExhausted)
          << run.result.status();
    } else {
      ASSERT_TRUE(run.result.ok()) << run.result.status();
      EXPECT_TRUE(AsUnigram(*run.result->model)->Validate().ok());
    }
  }
}

}  // namespace
}  // namespace tokenmill
