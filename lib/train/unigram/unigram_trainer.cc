#include "train/unigram/unigram_trainer.h"

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "common/binary_io.h"
#include "common/option_error.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "model/unigram/unigram_model.h"
#include "train/unigram/piece_lattice.h"
#include "train/unigram/seed_pieces.h"
#include "train/unigram/unigram_words.h"

namespace tokenmill {
namespace {

using unigram::EStep;
using unigram::PieceSet;
using unigram::PieceTrie;
using unigram::ScoredPiece;
using unigram::UnigramWords;

// SentencePiece's digamma (unigram_model_trainer.cc).
double Digamma(double x) {
  double result = 0;
  for (; x < 7; ++x) result -= 1 / x;
  x -= 1.0 / 2.0;
  const double xx = 1.0 / x;
  const double xx2 = xx * xx;
  const double xx4 = xx2 * xx2;
  result += std::log(x) + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4 +
            (31.0 / 8064.0) * xx4 * xx2 - (127.0 / 30720.0) * xx4 * xx4;
  return result;
}

// The trainer's state after a round, as checkpoints keep it (TrainEvent::state).
struct RoundState {
  uint64_t rounds = 0;        // rounds done
  bool final = false;         // the last round's EM left few enough pieces: only the final cut is left
  uint64_t vocab_size = 0;    // the target the rounds pruned towards
  double log_likelihood = 0;  // of the last E-step
  std::vector<ScoredPiece> pieces;
};

constexpr std::string_view kStateMagic = "TMUNIGRAM1";
constexpr double kLowestStateScore = -1e6;

std::string SerializeState(const RoundState& state, const UnigramWords& words) {
  std::string out(kStateMagic);
  BinaryWriter w(&out);
  w.Varint(state.rounds);
  w.Varint(state.final ? 1 : 0);
  w.Varint(state.vocab_size);
  w.Fixed64(std::bit_cast<uint64_t>(state.log_likelihood));
  w.Varint(state.pieces.size());
  for (const ScoredPiece& p : state.pieces) {
    w.Bytes(words.Text(p.symbols));
    w.Fixed64(std::bit_cast<uint64_t>(p.score));
  }
  return out;
}

absl::StatusOr<RoundState> ParseState(std::string_view data, const UnigramWords& words) {
  auto bad = [](std::string_view what) {
    return absl::InvalidArgumentError(StrCat("the checkpoint's Unigram state ", what));
  };
  if (!data.starts_with(kStateMagic)) return bad("is not one (wrong magic bytes)");
  BinaryReader r(data.substr(kStateMagic.size()));
  RoundState state;
  uint64_t final = 0, ll = 0, n = 0;
  if (!r.Varint(&state.rounds) || !r.Varint(&final) || !r.Varint(&state.vocab_size) ||
      !r.Fixed64(&ll) || !r.Varint(&n) || final > 1) {
    return bad("is damaged (its header)");
  }
  state.final = final == 1;
  state.log_likelihood = std::bit_cast<double>(ll);
  // A round always leaves a piece (training fails before it would drop the last one).
  if (n == 0 || n > r.remaining()) return bad("is damaged (its piece count)");
  state.pieces.reserve(n);
  absl::flat_hash_set<std::string_view> seen;
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view text;
    uint64_t score = 0;
    if (!r.Bytes(&text) || !r.Fixed64(&score)) return bad(StrCat("is damaged (piece ", i, ")"));
    ScoredPiece p;
    p.symbols = words.Symbols(text);
    if (p.symbols.empty()) {
      return bad(StrCat("has the piece '", text, "', which is not made of these words' alphabet"));
    }
    if (!seen.insert(text).second) {
      return bad(StrCat("is damaged (the piece '", text, "' is listed twice)"));
    }
    p.score = std::bit_cast<double>(score);
    // A log-probability a run reaches: at most 0, and far above -1e6 (SentencePiece's scores
    // stay above about -50). Outside, a sum over a word overflows or turns NaN.
    if (!(p.score <= 0 && p.score >= kLowestStateScore)) {
      return bad(StrCat("is damaged (the piece '", text, "' has the score ", p.score,
                        ", no log-probability a run gives)"));
    }
    state.pieces.push_back(std::move(p));
  }
  if (!r.done()) return bad("is damaged (bytes after its pieces)");
  return state;
}

}  // namespace

absl::StatusOr<UnigramStateSummary> SummarizeUnigramState(std::string_view data) {
  if (!data.starts_with(kStateMagic)) {
    return absl::InvalidArgumentError("not a Unigram trainer state (wrong magic bytes)");
  }
  BinaryReader r(data.substr(kStateMagic.size()));
  UnigramStateSummary s;
  uint64_t final = 0, ll = 0;
  if (!r.Varint(&s.rounds) || !r.Varint(&final) || !r.Varint(&s.vocab_size) || !r.Fixed64(&ll) ||
      !r.Varint(&s.pieces) || final > 1) {
    return absl::InvalidArgumentError("a damaged Unigram trainer state (its header)");
  }
  s.final = final == 1;
  s.log_likelihood = std::bit_cast<double>(ll);
  return s;
}

namespace {

// The M-step (SentencePiece's Bayesian one, or with `maximum_likelihood` the plain one), in
// place: the living pieces below 0.5 expected occurrences die, the others get their new scores.
void MStep(PieceSet& set, const EStep& e, bool maximum_likelihood) {
  __int128 total = 0;
  for (size_t i = 0; i < set.pieces.size(); ++i) {
    if (!set.alive[i]) continue;
    const double expected = static_cast<double>(e.expected[i]) / unigram::kFixedScale;
    if (expected < 0.5) {
      set.alive[i] = 0;
      continue;
    }
    set.pieces[i].score = expected;
    total += e.expected[i];
  }
  const double sum = static_cast<double>(total) / unigram::kFixedScale;
  const double log_sum = maximum_likelihood ? std::log(sum) : Digamma(sum);
  for (size_t i = 0; i < set.pieces.size(); ++i) {
    if (!set.alive[i]) continue;
    double& score = set.pieces[i].score;
    score = (maximum_likelihood ? std::log(score) : Digamma(score)) - log_sum;
  }
  set.Refresh();
}

// The occurrences the lattices cache (8 bytes each, so 1 GB at most): beyond this, each pass
// walks the trie again. Cached, a pass costs a lookup per occurrence instead of a trie walk
// per position.
constexpr uint64_t kMaxCachedOccurrences = uint64_t{128} << 20;

// The lattices of the pieces' own texts, which pruning segments every round: the trie walked
// at the first pruning, for the pieces alive then (later rounds' pieces are a subset of
// them), and filtered as pieces go, like the words' (Lattices::Remap). Walking the trie for
// every piece every round was 15% of brown's training.
struct PieceTexts {
  UnigramWords texts;                         // row r's characters are texts.Word(r)
  std::optional<unigram::Lattices> lattices;  // over texts
  std::vector<uint32_t> row;                  // by piece index: its row, or PieceTrie::kNone

  // With `sites` (by piece index: where the piece occurs in the words, whose lattices
  // `words` were made with all of these pieces alive), the lattices are cut out of the words'
  // instead of walking the trie again.
  void Build(const PieceSet& set, std::span<const unigram::PieceSite> sites,
             const unigram::Lattices& words) {
    texts.begin.assign(1, 0);
    row.assign(set.pieces.size(), PieceTrie::kNone);
    std::vector<unigram::PieceSite> where;
    const bool cut = !sites.empty() && words.cached();
    for (size_t i = 0; i < set.pieces.size(); ++i) {
      const std::vector<uint32_t>& symbols = set.pieces[i].symbols;
      if (!set.alive[i] || symbols.size() == 1) continue;
      row[i] = static_cast<uint32_t>(texts.counts.size());
      texts.symbols.insert(texts.symbols.end(), symbols.begin(), symbols.end());
      texts.begin.push_back(texts.symbols.size());
      texts.counts.push_back(1);
      if (cut) where.push_back(sites[i]);
    }
    if (cut) {
      lattices.emplace(texts, words, where, set, kMaxCachedOccurrences);
    } else {
      lattices.emplace(texts, set, kMaxCachedOccurrences);
    }
  }
  // After pruning: piece kept[j] is piece j now (new_index its inverse).
  void Keep(std::span<const uint32_t> kept, std::span<const uint32_t> new_index) {
    lattices->Remap(new_index);
    std::vector<uint32_t> next(kept.size());
    for (size_t j = 0; j < kept.size(); ++j) next[j] = row[kept[j]];
    row = std::move(next);
  }
};

// Pruning (unigram_trainer.h): the pieces kept, as indices into set.pieces, in their new order.
std::vector<uint32_t> Prune(const UnigramWords& words, const PieceSet& set,
                            const unigram::Lattices& lattices, PieceTexts& piece_texts,
                            std::span<const unigram::PieceSite> sites, size_t desired,
                            double shrinking_factor) {
  const std::vector<ScoredPiece>& pieces = set.pieces;
  const size_t n = pieces.size();
  std::vector<uint8_t> removable(n, 0);
  std::vector<std::vector<uint32_t>> alternatives(n);
  if (!piece_texts.lattices) piece_texts.Build(set, sites, lattices);
  const unigram::Lattices& own = *piece_texts.lattices;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 256), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t i = r.begin(); i != r.end(); ++i) {
      // A character is its own only segmentation, and has no alternative (no unknown edges).
      if (!set.alive[i] || pieces[i].symbols.size() == 1) continue;
      unigram::PieceSegmentations seg =
          own.cached() ? unigram::SegmentPiece(own.Of(piece_texts.row[i]), pieces[i].symbols.size(), set)
                       : unigram::SegmentPiece(pieces[i].symbols, set);
      if (seg.best.size() != 1 || seg.best[0] != i) {
        removable[i] = 1;
        continue;
      }
      alternatives[i] = std::move(seg.alternative);
    }
  });
  const std::vector<uint64_t> freq = unigram::ViterbiCounts(words, set, lattices);
  double total = 0;
  for (uint64_t f : freq) total += static_cast<double>(f);
  const double log_total = std::log(total);
  const double word_total = static_cast<double>(words.total_count);
  std::vector<uint32_t> next;
  std::vector<std::pair<double, uint32_t>> candidates;  // (loss, piece)
  for (size_t i = 0; i < n; ++i) {
    if (!set.alive[i] || freq[i] == 0 || removable[i]) continue;
    if (alternatives[i].empty()) {
      next.push_back(static_cast<uint32_t>(i));
      continue;
    }
    const double f = static_cast<double>(freq[i]);
    const double F = f / word_total;
    const double logprob_piece = std::log(f) - log_total;
    const double logsum_alt =
        std::log(total + f * (static_cast<double>(alternatives[i].size()) - 1));
    double logprob_alt = 0;
    for (uint32_t a : alternatives[i]) {
      logprob_alt += std::log(static_cast<double>(freq[a]) + f) - logsum_alt;
    }
    candidates.emplace_back(F * (logprob_piece - logprob_alt), static_cast<uint32_t>(i));
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  const size_t target = std::max(
      desired, static_cast<size_t>(shrinking_factor * static_cast<double>(set.alive_count())));
  for (const auto& [loss, i] : candidates) {
    if (next.size() >= target) break;
    next.push_back(i);
  }
  return next;
}

// The final cut and the model.
std::unique_ptr<UnigramModel> Finalize(const UnigramWords& words,
                                       const std::vector<ScoredPiece>& pieces,
                                       const TrainerOptions& options,
                                       const std::vector<std::string>& specials) {
  auto model = std::make_unique<UnigramModel>();
  model->pretokenizer = options.pretokenizer;
  for (const std::string& s : specials) {
    model->specials.push_back({s, static_cast<TokenId>(model->tokens.size())});
    if (s == options.unknown_token) model->unk_id = static_cast<TokenId>(model->tokens.size());
    model->tokens.push_back(s);
    model->scores.push_back(0);
  }
  if (options.byte_fallback) {
    for (int b = 0; b < 256; ++b) {
      model->byte_fallback.push_back(static_cast<TokenId>(model->tokens.size()));
      model->tokens.emplace_back(1, static_cast<char>(b));
      model->scores.push_back(kUnigramByteFallbackScore);
    }
  }
  const size_t budget = options.vocab_size - model->tokens.size();
  // Every character, then the best of the rest.
  double min_score = std::numeric_limits<double>::infinity();
  for (const ScoredPiece& p : pieces) min_score = std::min(min_score, p.score);
  std::vector<std::optional<double>> char_score(words.chars.size());
  for (const ScoredPiece& p : pieces) {
    if (p.symbols.size() == 1) char_score[p.symbols[0]] = p.score;
  }
  std::vector<std::pair<std::string, double>> chosen;
  size_t dropped = 0;  // the k of "lowest + 0.0001 k": a product, not 0.0001 added up k times
  for (size_t c = 0; c < words.chars.size(); ++c) {
    const uint32_t id = static_cast<uint32_t>(c);
    double score;
    if (char_score[c]) {
      score = *char_score[c];
    } else {
      score = min_score + 0.0001 * static_cast<double>(dropped++);
    }
    chosen.emplace_back(words.Text({&id, 1}), score);
  }
  // The other pieces' texts (in parallel), then their order by score (sorting indices: no
  // strings moved; texts are distinct, so the order is the one order).
  std::vector<std::string> texts(pieces.size());
  tbb::parallel_for(tbb::blocked_range<size_t>(0, pieces.size(), 1024), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t i = r.begin(); i != r.end(); ++i) {
      if (pieces[i].symbols.size() > 1) texts[i] = words.Text(pieces[i].symbols);
    }
  });
  std::vector<uint32_t> rest;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].symbols.size() > 1) rest.push_back(static_cast<uint32_t>(i));
  }
  tbb::parallel_sort(rest.begin(), rest.end(), [&](uint32_t a, uint32_t b) {
    return pieces[a].score != pieces[b].score ? pieces[a].score > pieces[b].score : texts[a] < texts[b];
  });
  for (uint32_t i : rest) {
    if (chosen.size() >= budget) break;
    chosen.emplace_back(std::move(texts[i]), pieces[i].score);
  }
  tbb::parallel_for(tbb::blocked_range<size_t>(0, chosen.size(), 1024), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t k = r.begin(); k != r.end(); ++k) chosen[k].second = UnigramFileScore(chosen[k].second);
  });
  std::vector<uint32_t> order(chosen.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<uint32_t>(k);
  tbb::parallel_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return chosen[a].second != chosen[b].second ? chosen[a].second > chosen[b].second
                                                : chosen[a].first < chosen[b].first;
  });
  model->tokens.reserve(model->tokens.size() + order.size());
  model->scores.reserve(model->scores.size() + order.size());
  for (uint32_t k : order) {
    model->tokens.push_back(std::move(chosen[k].first));
    model->scores.push_back(chosen[k].second);
  }
  return model;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

absl::StatusOr<TrainResult> UnigramTrainer::Train(WordSource source, const TrainControl& control) {
  std::optional<tbb::global_control> parallelism;
  if (options_.threads > 0) {
    parallelism.emplace(tbb::global_control::max_allowed_parallelism,
                        static_cast<size_t>(options_.threads));
  }
  TrainResult result;
  auto lap_start = std::chrono::steady_clock::now();
  auto lap = [&](std::string_view name) {
    result.phase_seconds.emplace_back(std::string(name), SecondsSince(lap_start));
    lap_start = std::chrono::steady_clock::now();
  };
  const UnigramWords words = unigram::ReadWords(source.Entries(), options_);
  source.Release();
  // The seed search's text holds each word's characters and an end (seed_pieces.cc), its
  // positions in 32 bits.
  if (words.symbols.size() + words.size() >= UINT32_MAX) {
    return absl::ResourceExhaustedError(StrCat(
        "the words hold ", words.symbols.size(), " characters in ", words.size(),
        " distinct words; Unigram training takes fewer than 2^32 of both together"));
  }
  if (words.chars.empty()) {
    return NothingToLearnError("the words hold no character to learn pieces from");
  }
  {
    // The expected counts are int64 sums in units of 2^-24: a piece's can reach the words'
    // count-weighted characters, which must stay below 2^63 / 2^24 (5.5e11: a corpus of about a
    // terabyte). Beyond, the sums would wrap: refuse rather than train on them.
    __int128 weighted = 0;
    for (size_t w = 0; w < words.size(); ++w) {
      weighted += static_cast<__int128>(words.counts[w]) * (words.begin[w + 1] - words.begin[w]);
    }
    if (weighted >= (static_cast<__int128>(1) << 39)) {
      return absl::ResourceExhaustedError(StrCat(
          "the words hold ", static_cast<double>(weighted),
          " characters counting repeats; Unigram training's fixed-point sums hold fewer than "
          "2^39 (5.5e11): train on a sample of the corpus"));
    }
  }
  lap("words");
  // The special tokens, the unknown token first unless listed.
  std::vector<std::string> specials = options_.special_tokens;
  if (std::find(specials.begin(), specials.end(), options_.unknown_token) == specials.end()) {
    specials.insert(specials.begin(), options_.unknown_token);
  }
  const size_t fixed = specials.size() + (options_.byte_fallback ? 256 : 0);
  const size_t budget = options_.vocab_size - fixed;
  if (words.chars.size() > budget) {
    // Every character of the alphabet is a piece (SentencePiece's rule too).
    return OptionError(
        StrCat("`vocab_size` ", options_.vocab_size, " is smaller than the alphabet's ",
               words.chars.size(), " characters plus ", fixed,
               " special and byte-fallback tokens: raise `vocab_size` to at least ",
               words.chars.size() + fixed, " or lower `character_coverage` (",
               options_.character_coverage, ")"),
        {"vocab_size", "character_coverage"});
  }
  const size_t desired = static_cast<size_t>(static_cast<double>(options_.vocab_size) * 1.1);

  RoundState state;
  state.vocab_size = options_.vocab_size;
  size_t seed_pieces = 0;
  // Where each seed occurs (a fresh run's, until the first pruning; empty on a resume).
  std::vector<unigram::PieceSite> seed_sites;
  if (!control.resume.state.empty()) {
    TM_ASSIGN_OR_RETURN(state, ParseState(control.resume.state, words));
    if (state.vocab_size != options_.vocab_size) {
      return OptionError(StrCat("this Unigram run pruned towards `vocab_size` ", state.vocab_size,
                                "; a resume cannot change it (the rounds done depend on it)"),
                         {"vocab_size"});
    }
    seed_pieces = state.pieces.size();
  } else {
    unigram::PieceRules rules(words, options_.split_by_script);
    unigram::SeedStats stats;
    state.pieces = unigram::MakeSeedPieces(words, rules, options_.seed_size,
                                           options_.max_piece_length, &stats, &seed_sites);
    seed_pieces = state.pieces.size();
    if (seed_pieces < budget) {
      return OptionError(
          StrCat("`vocab_size` ", options_.vocab_size, " is larger than the seed vocabulary: ",
                 seed_pieces, " pieces (", words.chars.size(), " characters and ",
                 seed_pieces - words.chars.size(), " substrings) plus ", fixed,
                 " special and byte-fallback tokens"),
          {"vocab_size", "seed_size"});
    }
    result.notes.push_back(StrCat("seed vocabulary: ", words.chars.size(), " characters and ",
                                  seed_pieces - words.chars.size(), " substrings (of ",
                                  stats.candidates, " candidates in ", stats.positions,
                                  " characters)"));
  }
  {
    // The piece trie (piece_lattice.h) addresses its records, 2 + 2 x children words a node,
    // in 32 bits; a node is a prefix of a piece, so 4 x (the pieces' characters + 1) bounds
    // them. The seeds are the largest piece set of the run.
    size_t characters = 0;
    for (const ScoredPiece& p : state.pieces) characters += p.symbols.size();
    if (4 * (characters + 1) >= UINT32_MAX) {
      return OptionError(
          StrCat("the ", state.pieces.size(), " seed pieces hold ", characters,
                 " characters; Unigram's piece trie takes fewer than 2^30: lower `seed_size` (",
                 options_.seed_size, ") or `max_piece_length` (", options_.max_piece_length, ")"),
          {"seed_size", "max_piece_length"});
    }
  }
  lap("seeds");
  auto planned = [&](size_t size) {
    if (size <= desired) return state.rounds + 1;
    return state.rounds + 1 +
           static_cast<size_t>(std::ceil(std::log(static_cast<double>(desired) / static_cast<double>(size)) /
                                         std::log(options_.shrinking_factor)));
  };
  if (!control.resume.state.empty() && control.after_step) {
    TrainEvent event;
    event.steps_done = state.rounds;
    event.steps_planned = planned(state.pieces.size());
    event.replayed = true;
    event.pieces = state.pieces.size();
    event.log_likelihood = state.log_likelihood;
    if (!control.after_step(event)) result.interrupted = true;
  }
  // The words' lattices: the trie walked once, for the first round; later rounds filter them.
  std::optional<unigram::Lattices> lattices;
  std::optional<unigram::PieceTrie> trie;  // the last round's, remapped to this round's pieces
  PieceTexts piece_texts;
  while (!state.final && !result.interrupted) {
    PieceSet set = trie ? PieceSet(std::move(state.pieces), *std::move(trie))
                        : PieceSet(std::move(state.pieces), words.chars.size());
    trie.reset();
    if (!lattices) lattices.emplace(words, set, kMaxCachedOccurrences);
    std::vector<double> log_likelihoods;
    for (size_t it = 0; it < options_.sub_iterations; ++it) {
      const EStep e = unigram::RunEStep(words, set, *lattices);
      state.log_likelihood = e.LogLikelihood();
      log_likelihoods.push_back(state.log_likelihood);
      MStep(set, e, options_.unigram_ml_m_step);
      if (set.alive_count() == 0) {
        return absl::InternalError("the M-step dropped every piece (no expected count reached 0.5)");
      }
    }
    if (set.alive_count() <= desired) {
      state.final = true;
      state.pieces = set.Alive();
    } else {
      // The seeds' sites hold while the pieces are the seeds: a fresh run's first pruning is
      // its first round's, whose lattices were made with every seed alive. Then they go.
      const std::vector<uint32_t> kept =
          Prune(words, set, *lattices, piece_texts, seed_sites, desired, options_.shrinking_factor);
      std::vector<unigram::PieceSite>().swap(seed_sites);
      // Nothing could go (every piece is kept): more rounds would not change the vocabulary.
      if (kept.size() == set.alive_count()) state.final = true;
      std::vector<uint32_t> new_index(set.pieces.size(), PieceTrie::kNone);
      state.pieces.clear();
      for (uint32_t i : kept) {
        new_index[i] = static_cast<uint32_t>(state.pieces.size());
        state.pieces.push_back(std::move(set.pieces[i]));
      }
      if (lattices->cached()) {
        lattices->Remap(new_index);
      } else {
        lattices.reset();
      }
      piece_texts.Keep(kept, new_index);
      set.trie.Remap(new_index);
      trie.emplace(std::move(set.trie));
    }
    ++state.rounds;
    if (control.after_step) {
      const std::string serialized = SerializeState(state, words);
      TrainEvent event;
      event.steps_done = state.rounds;
      event.steps_planned = std::max<size_t>(planned(state.pieces.size()) - (state.final ? 1 : 0),
                                             state.rounds);
      event.work = words.size() * (options_.sub_iterations + 1);
      event.state = serialized;
      event.pieces = state.pieces.size();
      event.log_likelihood = state.log_likelihood;
      event.log_likelihoods = log_likelihoods;
      if (!control.after_step(event)) result.interrupted = true;
    }
  }
  lap("em");
  result.model = Finalize(words, state.pieces, options_, specials);
  result.stop_reason =
      state.final ? StrCat("reached ", result.model->VocabSize(), " tokens after ", state.rounds,
                           " EM rounds (log-likelihood ", state.log_likelihood, ")")
                  : StrCat("interrupted after ", state.rounds, " EM rounds");
  if (result.model->VocabSize() < options_.vocab_size) {
    StrAppend(&result.stop_reason, "; fewer pieces were left than `vocab_size` asks for");
  }
  result.notes.push_back(StrCat(
      "alphabet: ", words.chars.size(), " of ", words.distinct_chars, " characters, covering ",
      words.char_occurrences - words.uncovered_occurrences, " of ", words.char_occurrences,
      " occurrences"));
  if (words.uncovered_occurrences + words.invalid_bytes > 0) {
    result.notes.push_back(StrCat(words.uncovered_occurrences,
                                  " occurrences of characters outside it and ", words.invalid_bytes,
                                  " bytes that are not UTF-8 ",
                                  options_.byte_fallback ? "become byte-fallback tokens"
                                                         : "become the unknown token"));
  }
  lap("vocabulary");
  return result;
}

}  // namespace tokenmill
