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
//    not grow the vocabulary; the merge is still recorded and training continues until the
//    vocabulary reaches vocab_size ids. Special tokens are not part of this lookup: a merge
//    spelling a special token's text forms an ordinary token. In practice reuse does not
//    arise: merges apply everywhere, left to right, so a string that becomes a token always
//    gets there through the same merges (context can only swallow its edge, never re-split
//    it); no reuse was seen on thousands of random corpora (tests/train_test.cc) nor in Hugging
//    Face's output on the shared corpora. The rule is kept as a safeguard.
//  - Ids: special tokens first when special_tokens_at is kStart, then the alphabet (all 256
//    bytes in byte order, or with hf_compat the bytes that occur in the words ordered by their
//    GPT-2 byte-level code point, as Hugging Face does), then each new token in merge order,
//    then special tokens when special_tokens_at is kEnd.
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
#include "model/bpe/bpe_model.h"
#include "train/trainer_options.h"

namespace tokenmill {

struct TrainResult {
  BpeModel model;
  std::vector<uint64_t> merge_counts;  // the pair count of each merge when it was chosen
  std::string stop_reason;             // why training stopped, in words
  bool interrupted = false;            // TrainControl::after_merge asked to stop
  // Wall time of each phase, in order: (name, seconds).
  std::vector<std::pair<std::string, double>> phase_seconds;
};

// One learned merge, as reported to TrainControl::after_merge.
struct MergeEvent {
  size_t merges_done = 0;  // including this one
  std::string_view left, right;  // the merged tokens' bytes
  uint64_t count = 0;            // the pair's count when chosen
  TokenId id = 0;                // the id of the token it forms
  size_t merges_planned = 0;     // merges that reach vocab_size (training may stop sooner)
  bool replayed = false;         // a resume merge, not searched for
};

// Hooks that let a caller observe, interrupt and resume training; checkpoints and progress
// reporting are built on them. All optional.
struct TrainControl {
  // Merges learned by an earlier run on the same counts with the same result-changing options,
  // in order, as (left bytes, right bytes). They are replayed (not re-searched) before training
  // continues, so that the final model is identical to one uninterrupted run: each word is
  // rewritten on its own by the merges that reach it (BPE-encoded with them), in parallel, and
  // the pair counts are then rebuilt once (far cheaper than the merge loop). Replay stops, like training, at
  // vocab_size or min_frequency; a merge that does not occur in the counts makes TrainBpe
  // fail. The replayed merges are reported to after_merge (replayed = true) after the replay.
  std::vector<std::pair<std::string, std::string>> resume_merges;
  // The pair count of each resume merge when it was chosen, as the earlier run reported it
  // (0 or absent: not known). Replay computes the count of a merge of two different tokens
  // itself and checks it against this; that of a token with itself (whose occurrences may
  // overlap) it takes from here, and replays word by word, more slowly, when it is not known.
  std::vector<uint64_t> resume_counts;
  // For tests: when resuming, leave out of the pair table the pairs counted below this (0: the
  // trainer chooses, see CountPairsOfWords in bpe_trainer.cc), so that recounting every pair,
  // when a pair left out could be the best, is exercised.
  uint64_t resume_pair_floor = 0;
  // Called after each merge (replayed ones included). Returning false stops training at once;
  // the result then holds the merges so far and `interrupted` is set.
  std::function<bool(const MergeEvent&)> after_merge;
  // With TrainBpe(WordCounts&&): called just before the counts are freed (the caller may still
  // be reading them on another thread, e.g. to checkpoint them).
  std::function<void()> before_counts_freed;
};

// Trains on `counts` (words with their counts, e.g. from CountCorpus). Fails when the options
// are invalid, when vocab_size is smaller than the alphabet plus the special tokens, when
// merges are needed but no word holds a pair, or when `control.resume_merges` does not fit
// these counts. Falling short of vocab_size (no pair left, or min_frequency) is not an error:
// the result then holds a valid model of the size reached and says why in stop_reason.
// The result is the same whatever options.threads is.
absl::StatusOr<TrainResult> TrainBpe(const WordCounts& counts, const TrainerOptions& options,
                                     const TrainControl& control = {});
// The same, taking the counts over: they are emptied (freed) as soon as the trainer holds its
// own copy of the words (before the initial pair counts), which lowers peak memory. Until then,
// and when training fails before that point, `counts` is left as it was.
absl::StatusOr<TrainResult> TrainBpe(WordCounts&& counts, const TrainerOptions& options,
                                     const TrainControl& control = {});
// The same from a flat list of distinct words (e.g. a checkpoint's table), freed like `counts`
// above (control.before_counts_freed is called first).
absl::StatusOr<TrainResult> TrainBpe(WordList&& words, const TrainerOptions& options,
                                     const TrainControl& control = {});

}  // namespace tokenmill
