#include "train/bpe/score_queue.h"

#include <algorithm>
#include <bit>

namespace tokenmill {

ScoreQueue::Entry ScoreQueue::Scored(PairKey key, uint64_t count) const {
  const uint64_t left = counts_[PairLeft(key)], right = counts_[PairRight(key)];
  return {.value = static_cast<double>(count) /
                   (static_cast<double>(left) * static_cast<double>(right)),
          .count = count,
          .left = left,
          .right = right,
          .pair = key};
}

namespace {

// a * b * c exactly: three 64-bit factors need 192 bits.
struct Product192 {
  unsigned __int128 high;  // bits 64..191
  uint64_t low;            // bits 0..63
  auto operator<=>(const Product192&) const = default;
};
Product192 Multiply(uint64_t a, uint64_t b, uint64_t c) {
  using U128 = unsigned __int128;
  const U128 ab = U128{a} * b;
  const U128 low = static_cast<U128>(static_cast<uint64_t>(ab)) * c;
  const U128 high = (ab >> 64) * c + (low >> 64);
  return {high, static_cast<uint64_t>(low)};
}

}  // namespace

bool ScoreQueue::After(const Entry& x, const Entry& y) const {
  // Doubles decide when they are clearly apart (their relative error is a few ulps); the
  // exact products (192 bits) otherwise.
  if (x.value < y.value * (1 - 1e-12)) return true;
  if (x.value > y.value * (1 + 1e-12)) return false;
  const Product192 xs = Multiply(x.count, y.left, y.right), ys = Multiply(y.count, x.left, x.right);
  if (xs != ys) return xs < ys;
  // Equal scores: the pair smaller by (left bytes, right bytes) goes first.
  return x.pair != y.pair && PairBytesBefore(tokens_, y.pair, x.pair);
}

namespace {

// A positive double's sign, exponent and first three mantissa bits: increasing with the value,
// 8 steps an octave.
uint64_t Coarse(double value) { return std::bit_cast<uint64_t>(value) >> 49; }

}  // namespace

size_t ScoreQueue::BucketOf(double value) {
  // Scores are at most 1 (count(ab) <= count(a), count(b)). Rounded up a little, so that the
  // bucket's upper edge is above the exact score.
  static const uint64_t kOne = Coarse(1.0);
  const uint64_t coarse = Coarse(value * (1 + 1e-12));
  if (coarse >= kOne) return 0;
  return std::min<size_t>(kBuckets - 1, kOne - coarse);
}

double ScoreQueue::UpperEdge(size_t bucket) {
  // The least double above every value of the bucket (bucket 0: scores up to 1 and a little).
  static const uint64_t kOne = Coarse(1.0);
  return std::bit_cast<double>((kOne - bucket + 1) << 49);
}

void ScoreQueue::PushEntry(const Entry& e) {
  heap_.push_back(e);
  std::push_heap(heap_.begin(), heap_.end(),
                 [this](const Entry& x, const Entry& y) { return After(x, y); });
}

void ScoreQueue::Fill(std::vector<uint64_t> token_counts, const PairIndex& pairs) {
  counts_ = std::move(token_counts);
  pairs_of_.assign(counts_.size(), {});
  pairs.ForEach([&](PairKey key, uint64_t) {
    AddPairOf(PairLeft(key), key);
    if (PairRight(key) != PairLeft(key)) AddPairOf(PairRight(key), key);
  });
  Compact(pairs);
}

void ScoreQueue::Place(const Entry& e) {
  if (e.value >= heap_floor_) {
    PushEntry(e);
    return;
  }
  const size_t b = BucketOf(e.value);
  parked_[b].push_back(e.pair);
  ++num_parked_;
  top_bucket_ = std::min(top_bucket_, b);
}

void ScoreQueue::AddPairOf(TokenId t, PairKey key) {
  if (pairs_of_.size() <= t) pairs_of_.resize(t + 1);
  pairs_of_[t].push_back(key);
}

void ScoreQueue::Push(PairKey key, uint64_t count, bool appeared) {
  if (appeared) {
    AddPairOf(PairLeft(key), key);
    if (PairRight(key) != PairLeft(key)) AddPairOf(PairRight(key), key);
  }
  if (count >= min_count_) Place(Scored(key, count));
}

void ScoreQueue::CountMerge(TokenId a, TokenId b, TokenId t, uint64_t replaced) {
  if (counts_.size() <= t) counts_.resize(t + 1, 0);
  counts_[a] -= replaced;
  counts_[b] -= replaced;  // twice from a when a == b: "aa" uses two
  counts_[t] += replaced;
  merged_a_ = a, merged_b_ = b;
}

void ScoreQueue::Rescore(const PairIndex& pairs, TokenId t) {
  if (t >= pairs_of_.size()) return;
  std::vector<PairKey>& list = pairs_of_[t];
  // Dead pairs leave the list here. A pair that dies and appears again before that is listed
  // twice and placed twice: rare, and harmless (sorting the lists to drop repeats took 30% of
  // the merge loop).
  size_t kept = 0;
  for (PairKey key : list) {
    const uint64_t count = pairs.count(key);
    if (count == 0) continue;
    list[kept++] = key;
    if (count >= min_count_) Place(Scored(key, count));
  }
  list.resize(kept);
}

void ScoreQueue::RescoreMerged(const PairIndex& pairs) {
  Rescore(pairs, merged_a_);
  if (merged_b_ != merged_a_) Rescore(pairs, merged_b_);
  if (heap_.size() + num_parked_ > compact_at_) Compact(pairs);
}

void ScoreQueue::Compact(const PairIndex& pairs) {
  // Every candidate pair once, scored now: a pass over the pair table, not a sort of the
  // entries (sorting them to drop repeats took a tenth of a linux_docs run). The heap takes
  // the pairs within an octave of the best; the others are parked.
  std::vector<Entry> all;
  double best = 0;
  pairs.ForEach([&](PairKey key, uint64_t count) {
    if (count < min_count_) return;
    all.push_back(Scored(key, count));
    best = std::max(best, all.back().value);
  });
  heap_.clear();
  for (std::vector<PairKey>& bucket : parked_) bucket.clear();
  num_parked_ = 0;
  top_bucket_ = kBuckets;
  heap_floor_ = best / 2;
  for (const Entry& e : all) {
    if (e.value >= heap_floor_) {
      heap_.push_back(e);
    } else {
      Place(e);
    }
  }
  std::make_heap(heap_.begin(), heap_.end(),
                 [this](const Entry& x, const Entry& y) { return After(x, y); });
  compact_at_ = std::max(min_rebuild_, static_cast<size_t>(rebuild_factor_ * all.size()));
}

void ScoreQueue::Unpark(const PairIndex& pairs) {
  // While the best parked bucket might hold a pair scoring at least the heap's best entry,
  // its pairs go to the heap, scored now (dead and repeated ones are dropped there).
  while (top_bucket_ < kBuckets &&
         (heap_.empty() || UpperEdge(top_bucket_) >= heap_.front().value)) {
    std::vector<PairKey> bucket;
    bucket.swap(parked_[top_bucket_]);
    num_parked_ -= bucket.size();
    for (PairKey key : bucket) {
      const uint64_t count = pairs.count(key);
      if (count >= min_count_) PushEntry(Scored(key, count));
    }
    while (top_bucket_ < kBuckets && parked_[top_bucket_].empty()) ++top_bucket_;
  }
}

bool ScoreQueue::PopBest(const PairIndex& pairs, PairKey* best) {
  auto after = [this](const Entry& x, const Entry& y) { return After(x, y); };
  while (true) {
    Unpark(pairs);
    if (heap_.empty()) return false;
    std::pop_heap(heap_.begin(), heap_.end(), after);
    const Entry top = heap_.back();
    heap_.pop_back();
    const uint64_t count = pairs.count(top.pair);
    if (count < min_count_) continue;  // gone, or too rare (placed again if it rises)
    if (count == top.count && counts_[PairLeft(top.pair)] == top.left &&
        counts_[PairRight(top.pair)] == top.right) {
      // Exact: every heap entry is at most this, every parked pair below the heap's best.
      *best = top.pair;
      heap_floor_ = top.value / 2;
      return true;
    }
    PushEntry(Scored(top.pair, count));
  }
}

}  // namespace tokenmill
