// BpeTrainer: incremental BPE training (the Trainer of Algorithm::kBpe), on any units.
//
// Semantics (the contract every BPE trainer in tokenmill and the reference trainer in tests/
// share):
//  - Each word is a sequence of tokens, initially its units' symbols (bytes). The count of a
//    pair (a, b) is the sum over words of (word count) x (number of adjacent positions holding
//    a then b), so in "aaa" the pair (a, a) counts twice.
//  - Each step merges the pair with the highest count; ties go to the pair smaller by (bytes of
//    a, bytes of b) compared lexicographically (or, with hf_compat, by (id of a, id of b)).
//    In every word the pair is replaced left to right, without overlap.
//  - A merge whose bytes already name a token reuses that id (as Hugging Face does) and does
//    not grow the vocabulary; the merge is still recorded and training continues until the
//    vocabulary reaches vocab_size ids. Special tokens are not part of this lookup: a merge
//    spelling a special token's text forms an ordinary token. In practice reuse does not
//    arise: merges apply everywhere, left to right, so a string that becomes a token always
//    gets there through the same merges (context can only swallow its edge, never re-split
//    it); no reuse was seen on thousands of random corpora (tests/train_test.cc) nor in Hugging
//    Face's output on the shared corpora. The rule is kept as a safeguard.
//  - Ids: special tokens first when special_tokens_at is kStart, then the alphabet (the units'
//    Alphabet(): all 256 bytes in byte order, or with hf_compat the bytes that occur in the
//    words ordered by their GPT-2 byte-level code point, as Hugging Face does), then each new
//    token in merge order, then special tokens when special_tokens_at is kEnd.
//  - Pairs whose merged token would exceed max_token_length (the units' length) are never
//    merged.
//  - Training stops at vocab_size ids, when no pair is left, or when the best count is below
//    min_frequency.
//
// The phases, one file each: alphabet and words (bpe_trainer.cc) -> initial pair counts
// (initial_pairs.cc), or for a resumed run the replay of its merges (replay.cc) and the pair
// recount (pair_recount.cc) -> the merge loop (merge_loop.cc). They share a BpeState.
#pragma once

#include "train/trainer.h"

namespace tokenmill {

class BpeTrainer : public Trainer {
 public:
  // `options` must be valid (TrainerOptions::Validate).
  explicit BpeTrainer(const TrainerOptions& options) : options_(options) {}

  // Fails when vocab_size is smaller than the alphabet plus the special tokens, when merges
  // are needed but no word holds a pair, or when `control.resume` does not fit these words.
  absl::StatusOr<TrainResult> Train(WordSource words, const TrainControl& control) override;

 private:
  TrainerOptions options_;
};

}  // namespace tokenmill
