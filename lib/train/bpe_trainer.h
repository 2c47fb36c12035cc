// Training a byte-level BPE model from word counts.
//
// Semantics (the contract every trainer in tokenmill and the reference trainer in tests/
// share):
//  - Each word is a sequence of tokens, initially its bytes. The count of a pair (a, b) is the
//    sum over words of (word count) x (number of adjacent positions holding a then b), so in
//    "aaa" the pair (a, a) counts twice.
//  - Each step merges the pair with the highest count; ties go to the pair smaller by (bytes of
//    a, bytes of b) compared lexicographically (or, with hf_compat, by (id of a, id of b)).
//    In every word the pair is replaced left to right, without overlap.
//  - A merge whose bytes already name a token reuses that id (as Hugging Face does) and does
//    not grow the vocabulary; the merge is still recorded.
//  - Pairs whose merged token would exceed max_token_length bytes are never merged.
//  - Training stops at vocab_size ids, when no pair is left, or when the best count is below
//    min_frequency.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "count/word_counts.h"
#include "model/bpe_model.h"
#include "train/trainer_options.h"

namespace tokenmill {

struct TrainResult {
  BpeModel model;
  std::vector<uint64_t> merge_counts;  // the pair count of each merge when it was chosen
  std::string stop_reason;             // why training stopped, in words
  bool interrupted = false;            // TrainControl::after_merge asked to stop
};

// One learned merge, as reported to TrainControl::after_merge.
struct MergeEvent {
  size_t merges_done = 0;  // including this one
  std::string_view left, right;  // the merged tokens' bytes
  uint64_t count = 0;            // the pair's count when chosen
  TokenId id = 0;                // the id of the token it forms
};

// Hooks that let a caller observe, interrupt and resume training; checkpoints and progress
// reporting are built on them. All optional.
struct TrainControl {
  // Merges learned by an earlier run on the same counts with the same result-changing options,
  // in order, as (left bytes, right bytes). They are replayed (not re-searched) before training
  // continues, so that the final model is identical to one uninterrupted run.
  std::vector<std::pair<std::string, std::string>> resume_merges;
  // Called after each merge (replayed ones included). Returning false stops training at once;
  // the result then holds the merges so far and `interrupted` is set.
  std::function<bool(const MergeEvent&)> after_merge;
};

absl::StatusOr<TrainResult> TrainBpe(const WordCounts& counts, const TrainerOptions& options,
                                     const TrainControl& control = {});

}  // namespace tokenmill
