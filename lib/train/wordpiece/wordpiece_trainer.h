// WordPieceTrainer: WordPiece training (the Trainer of Algorithm::kWordPiece), on the BPE
// trainer's phases with character units and the continuing-subword prefix, ranked by
// likelihood (train/bpe/score_queue.h) or by frequency (Hugging Face's WordPieceTrainer).
//
// Semantics (the contract the reference trainer in tests/reference/reference_wordpiece.h
// shares), beyond bpe_trainer.h's:
//  - A word's first character is a plain symbol, each later one carries the prefix ("##");
//    a merge's token is the left part followed by the right part without its prefix. Ids:
//    the special tokens at the start (BERT's [PAD] [UNK] [CLS] [SEP] [MASK] by the CLI's
//    default), the plain characters by code point, the prefixed ones that occur, by code
//    point (or in marked_symbol_order, to reproduce a Hugging Face run), then each new token in
//    merge order.
//  - A character outside the alphabet (character_coverage, limit_alphabet) and each byte
//    that is not UTF-8 is the unknown token (options.unknown_token; a special token that
//    never merges); with hf_compat such characters are dropped from the words (Hugging
//    Face's rule).
//  - Likelihood: each step merges the pair with the highest count(ab) / (count(a) count(b)),
//    among pairs counted at least max(min_frequency, 1) times (exact rational comparison;
//    ties by bytes, as BPE's). Frequency: BPE's rule exactly.
//  - The model is the vocabulary (a WordPieceModel: encoding is greedy longest match, not the
//    merges); the merges are the steps (TrainEvent::merge), which checkpoints record and a
//    resume replays.
#pragma once

#include "train/trainer.h"

namespace tokenmill {

class WordPieceTrainer : public Trainer {
 public:
  // `options` must be valid (TrainerOptions::Validate) with algorithm kWordPiece.
  explicit WordPieceTrainer(const TrainerOptions& options) : options_(options) {}

  absl::StatusOr<TrainResult> Train(WordSource words, const TrainControl& control) override;

 private:
  TrainerOptions options_;
};

}  // namespace tokenmill
