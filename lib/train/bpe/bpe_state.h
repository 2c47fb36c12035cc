// BpeState: what the phases of BPE training share (bpe_trainer.h lists them): the model being
// built (its tokens and merges, with each merge's count), the words as symbol sequences, the
// pair table and the merge queue. Each phase is a function or class of its own file that reads
// and updates it; only the phases of one training run touch one state, from one thread between
// their parallel loops (run in `arena`).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/bpe/bpe_model.h"
#include "model/units.h"
#include "oneapi/tbb/task_arena.h"
#include "train/bpe/merge_queue.h"
#include "train/bpe/pair_index.h"
#include "train/bpe/score_queue.h"
#include "train/bpe/token_index.h"
#include "train/bpe/word_store.h"
#include "train/trainer.h"

namespace tokenmill {

struct BpeState {
  BpeState(const TrainerOptions& options, const TrainControl& control)
      : options(options),
        control(control),
        units(UnitsOf(options.units)),
        arena(options.threads > 0 ? options.threads : tbb::task_arena::automatic),
        token_index(model.tokens),
        queue(model.tokens, options.hf_compat) {
    if (options.algorithm == Algorithm::kWordPiece &&
        options.wordpiece_score == WordPieceScore::kLikelihood) {
      scored = std::make_unique<ScoreQueue>(model.tokens, options.min_frequency);
    }
    model.unit_kind = options.units;
    model.pretokenizer = options.pretokenizer;
  }

  // A token with these bytes and `length` (Mergeable's: a symbol of the alphabet is 1, a merged
  // token its parts' sum), at the next id; not indexed (specials) unless `indexed`.
  TokenId AddToken(std::string bytes, bool indexed, uint64_t length);
  // The id of the token `left` + `right` forms: an existing one with those bytes (a reused id),
  // or a new one.
  TokenId TokenFor(TokenId left, TokenId right);
  // Whether a pair may be merged: the token it forms is within max_token_length. As an object
  // for hot loops (the limit and the lengths loaded once); valid until a token is added.
  // (Lengths are below 2^31 but kNeverMerges, so that "no limit" is a limit of 2^32 - 1.)
  struct MergeableCheck {
    uint64_t max_length;
    const uint32_t* length;
    bool operator()(TokenId left, TokenId right) const {
      return uint64_t{length[left]} + length[right] <= max_length;
    }
  };
  MergeableCheck Mergeable() const {
    return {options.max_token_length == 0 ? uint64_t{kNeverMerges} : options.max_token_length,
            token_length.data()};
  }
  bool Mergeable(TokenId left, TokenId right) const { return Mergeable()(left, right); }
  // The tokens the merges aim at: vocab_size less the special tokens that come at the end.
  size_t TargetTokens() const;
  // Merges still to learn before TargetTokens() (0 when reached).
  size_t RemainingMerges() const {
    return TargetTokens() > model.tokens.size() ? TargetTokens() - model.tokens.size() : 0;
  }
  // "stopped at vocab size N of the M asked for".
  std::string VocabShortfall() const;
  // Reports a merge to control.after_step; false when it asked to stop (result then says so).
  bool ReportMerge(size_t index, bool replayed);

  const TrainerOptions& options;
  const TrainControl& control;
  const Units& units;
  tbb::task_arena arena;
  BpeModel model;
  std::vector<uint64_t> merge_counts;  // the count of each merge of model.merges when chosen
  uint64_t last_merge_words = 0;       // the words the last merge of the loop rewrote
  std::vector<uint32_t> token_length;  // units.Length of each token
  TokenIndex token_index;
  Alphabet alphabet;
  TokenId first_alphabet_id = 0;
  size_t alphabet_size = 0;
  WordStore words;
  PairIndex pairs;
  MergeQueue queue;
  // WordPiece's likelihood scoring: the queue that orders pairs instead of `queue` (null when
  // pairs go by count).
  std::unique_ptr<ScoreQueue> scored;
  // With `scored`: the occurrences of each symbol in words of one symbol, which `words` does
  // not hold (token counts include them).
  std::vector<uint64_t> lone_symbol_counts;
  // Pairs below this count may be missing from `pairs` and `queue` (a resumed run's pair
  // count leaves out the pairs too rare to be merged; see pair_recount.cc).
  uint64_t untracked_below = 1;
  std::string stop_reason;
  bool interrupted = false;
};

}  // namespace tokenmill
