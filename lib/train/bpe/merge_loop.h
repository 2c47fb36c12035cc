// The merge loop of BPE training (and WordPiece's): pops the best pair from the lazy max-heap
// (by count, merge_queue.h, or by WordPiece's likelihood score, score_queue.h), rewrites only the
// words that hold it (in parallel batches when they are many) and applies the neighbouring
// pairs' count changes, reduced in batch order so that the result never depends on the thread
// count (merge_deltas.h).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "oneapi/tbb/enumerable_thread_specific.h"
#include "train/bpe/bpe_state.h"
#include "train/bpe/merge_deltas.h"

namespace tokenmill {

class MergeLoop {
 public:
  explicit MergeLoop(BpeState& state) : state_(state) {}

  // Merges until TargetTokens(), no pair left, min_frequency or a stop asked for by
  // after_step (state.stop_reason says which). Fails only when no merge at all can be learned.
  absl::Status Run();

 private:
  // Merges pair `p` = (a, b) into t in every word holding it and updates the pair counts and
  // the queue.
  void ApplyMerge(PairKey p, TokenId a, TokenId b, TokenId t);
  // Merges the current pair in `words`; risen entries go to batch_risen_[batch].
  void RunBatch(std::span<const WordRef> words, size_t batch);
  // Sums the threads' changes and applies them to the pair table, the queue and the new pairs'
  // word lists.
  void ReduceMerge(size_t batches);
  // Rebuilds the pair table and the queue with every pair, after a partial count.
  void TrackAllPairs();

  BpeState& state_;
  // The merge in progress, per-thread sums, per-batch risen words, and the reduction's dense
  // arrays by slot.
  MergeSlots slots_;
  TokenId merge_a_ = 0, merge_b_ = 0, merge_t_ = 0;
  uint32_t merge_stamp_ = 0;
  tbb::enumerable_thread_specific<MergeDeltas> thread_deltas_;
  std::vector<std::vector<RisenWord>> batch_risen_;
  std::vector<uint64_t> batch_replaced_;  // per batch: replacements of the pair, by word count
  struct SlotState {
    int64_t sum = 0;
    uint32_t seen = 0;   // the merge stamp that last touched the slot
    uint32_t words = 0;  // risen words, then where the slot's next word goes in the block
  };
  std::vector<SlotState> slot_;
  std::vector<uint32_t> touched_;
};

}  // namespace tokenmill
