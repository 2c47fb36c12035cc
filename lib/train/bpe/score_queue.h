// ScoreQueue: the mergeable pairs ordered by WordPiece's likelihood score, highest first, for
// the merge loop (merge_loop.cc) in place of MergeQueue's order by count.
//
// Contract:
//  - score(a, b) = count(a, b) / (count(a) * count(b)), with pair counts as in bpe_trainer.h
//    and count(t) the occurrences of token t in the words' current symbols (by word count).
//    Scores are compared exactly (cross-multiplied in 192 bits: any 64-bit counts); equal scores go to the pair smaller by (left token's bytes, right token's
//    bytes), as MergeQueue's byte ties. Only pairs counted at least max(min_count, 1) times
//    are candidates.
//  - The caller keeps the token counts (the queue holds them: Fill and Compact, then
//    CountMerge and RescoreMerged per merge) and pushes every pair whose count rises (Push), as
//    for MergeQueue.
//
// How (measured in bench/RESULTS.md, "WordPiece"):
//  - A merge a + b -> t lowers count(a) and count(b), so it raises the score of every pair
//    that holds a or b, pairs the merge's word visits never touch. RescoreMerged places each of
//    them again, scored with the new counts (each token's pair list, `pairs_of_`, holds them).
//  - An entry is keyed by the exact score it had when placed. Scores only fall between
//    placements (a pair count that falls; a reused token whose count rises), so every key is an
//    upper bound of its pair's score, and a popped entry whose (pair count, left count, right
//    count) are still the current ones is the exact best: the classic lazy heap. A popped stale
//    entry is pushed again with its current score.
//  - Most rescored pairs score far below the best and would never reach the top before
//    training ends; they wait outside the heap, parked in buckets of an eighth of an octave of
//    score (below half the last best score), and enter the heap, rescored, only when their
//    bucket's upper edge reaches the heap's best entry. linux_docs, bert preset, vocab 30000:
//    3.5 M pushes for 27 k merges and a heap of a million entries without parking; merges
//    0.36 s -> 0.18 s and peak memory 102 MB -> 30 MB with it, the same vocabulary.
//  - Stale entries and repeats are dropped by rebuilding heap and buckets from the pair table
//    when they outgrow it (Compact: a pass over the table; sorting the entries to drop repeats
//    took a tenth of the run).
//  - The alternatives: a full rescoring of every pair at each merge (the reference trainer's
//    way), and keys bounded by floors below the token counts (re-pushing a token's pairs only
//    when its count halves), which pops every entry whose bound reaches the best score: with
//    the many exact ties of likelihood scores (pairs of hapax tokens all score 1) that is
//    quadratic in the ties.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "train/bpe/pair_index.h"

namespace tokenmill {

class ScoreQueue {
 public:
  // `tokens` (the bytes of every id) must outlive the queue; it may grow. The heap and the
  // buckets are rebuilt when their entries exceed max(min_rebuild, rebuild_factor x the pairs
  // at the last rebuild) (tests make that small, so that rebuilds happen often).
  ScoreQueue(const std::vector<std::string>& tokens, uint64_t min_count,
             double rebuild_factor = 2.0, size_t min_rebuild = size_t{1} << 16)
      : tokens_(tokens),
        min_count_(min_count < 1 ? 1 : min_count),
        rebuild_factor_(rebuild_factor),
        min_rebuild_(min_rebuild) {}

  // Starts over with these token counts (by id) and every pair of `pairs`.
  void Fill(std::vector<uint64_t> token_counts, const PairIndex& pairs);
  // A pair's count rose to `count`; `appeared`: from zero.
  void Push(PairKey key, uint64_t count, bool appeared);
  // A merge a + b -> t replaced the pair `replaced` times (by word count): the token counts
  // change. Call before the merge's pair counts are applied (Push scores with these counts),
  // and RescoreMerged after.
  void CountMerge(TokenId a, TokenId b, TokenId t, uint64_t replaced);
  // Pushes every pair that holds the last merge's a or b again, with its new score.
  void RescoreMerged(const PairIndex& pairs);
  // Sets *best to the candidate with the highest score and removes it; false when there is
  // none.
  bool PopBest(const PairIndex& pairs, PairKey* best);


 private:
  // A pair scored with (its count, its left token's count, its right token's count).
  struct Entry {
    double value;  // count / (left * right), for a quick comparison
    uint64_t count, left, right;
    PairKey pair;
  };
  Entry Scored(PairKey key, uint64_t count) const;
  // Whether x goes after y (x is "less" in the max-heap): lower exact score, or an equal one
  // and a later tie.
  bool After(const Entry& x, const Entry& y) const;
  void PushEntry(const Entry& e);
  // Rebuilds the heap and the parked pairs from every pair of `pairs`, scored now.
  void Compact(const PairIndex& pairs);
  // Pushes `e`, or parks its pair when it scores below heap_floor_.
  void Place(const Entry& e);
  // Moves the parked pairs that may score as high as the heap's best into the heap.
  void Unpark(const PairIndex& pairs);
  static size_t BucketOf(double value);
  static double UpperEdge(size_t bucket);
  void AddPairOf(TokenId t, PairKey key);
  // Pushes every live pair of t again with its current score; drops dead ones from the list.
  void Rescore(const PairIndex& pairs, TokenId t);

  const std::vector<std::string>& tokens_;
  uint64_t min_count_;
  std::vector<uint64_t> counts_;
  std::vector<std::vector<PairKey>> pairs_of_;  // each token's pairs; may hold dead ones
  TokenId merged_a_ = 0, merged_b_ = 0;
  std::vector<Entry> heap_;
  // Pairs scoring well below the best wait outside the heap, by score: parked_[k] holds pairs
  // of score below UpperEdge(k) (when parked; a score that rises places the pair again), the
  // buckets an eighth of an octave each (a double's exponent and first 3 mantissa bits). A pair is parked when it scores below heap_floor_ (half the
  // last best), and unparked when its bucket could reach the heap's best.
  static constexpr size_t kBucketsPerOctave = 8;
  static constexpr size_t kBuckets = 64 * kBucketsPerOctave;
  std::vector<PairKey> parked_[kBuckets];
  size_t num_parked_ = 0;
  size_t top_bucket_ = kBuckets;  // the first non-empty bucket, or kBuckets
  double heap_floor_ = 0;
  double rebuild_factor_;
  size_t min_rebuild_;
  size_t compact_at_ = 0;
};

}  // namespace tokenmill
