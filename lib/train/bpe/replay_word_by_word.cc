// Replaying a resumed run's merges word by word (replay.h), where encoding does not replay
// them exactly.
#include <algorithm>
#include <span>
#include <vector>

#include "model/bpe/lookup_tables.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/enumerable_thread_specific.h"
#include "oneapi/tbb/parallel_for.h"
#include "train/bpe/replay.h"

namespace tokenmill {
namespace {

constexpr uint32_t kNoRank = PairTable::kNone;

// The merge list by pair: the first rank of each pair (the encoder's pair table; for pairs of
// two ids below `dense_ids`, the alphabet every word starts from, a flat table in front of it)
// and, for the rare pair listed twice, the next rank of the same pair.
class ReplayRanks {
 public:
  ReplayRanks(std::span<const Merge> merges, size_t dense_ids)
      : dense_ids_(dense_ids <= kMaxDenseIds ? static_cast<TokenId>(dense_ids) : 0),
        dense_(size_t{dense_ids_} * dense_ids_, kNoRank),
        next_(merges.size(), kNoRank) {
    first_.Build(merges, MergePriority::kMergeIndex);  // keeps the first rank
    std::vector<uint32_t> last(merges.size(), kNoRank);  // the chain's end, by first rank
    for (uint32_t i = 0; i < merges.size(); ++i) {
      const TokenId left = merges[i].left, right = merges[i].right;
      const uint32_t first = first_.Find(left, right).priority;
      if (first != i) next_[last[first]] = i;
      last[first] = i;
      if (first == i && left < dense_ids_ && right < dense_ids_) {
        dense_[size_t{left} * dense_ids_ + right] = i;
      }
    }
  }
  // The first rank >= `from` of pair (left, right), or kNoRank.
  uint32_t Rank(TokenId left, TokenId right, uint32_t from) const {
    uint32_t rank = left < dense_ids_ && right < dense_ids_
                        ? dense_[size_t{left} * dense_ids_ + right]
                        : first_.Find(left, right).priority;
    while (rank < from) rank = next_[rank];
    return rank;
  }

 private:
  static constexpr size_t kMaxDenseIds = 1024;
  TokenId dense_ids_;
  std::vector<uint32_t> dense_;
  PairTable first_;
  std::vector<uint32_t> next_;
};

// Rewrites one word (`s`, `n` symbols) under `merges`; adds each applied merge's pair count to
// `counts`; returns the new length. `rank` is scratch space of at least n entries.
uint32_t ReplayWord(TokenId* s, uint32_t n, uint64_t word_count, std::span<const Merge> merges,
                    const ReplayRanks& ranks, std::vector<uint32_t>& rank,
                    std::vector<uint64_t>& counts) {
  if (n < 2) return n;
  if (rank.size() < n) rank.resize(n);
  uint32_t best = kNoRank;
  for (uint32_t k = 0; k + 1 < n; ++k) {
    rank[k] = ranks.Rank(s[k], s[k + 1], 0);
    best = std::min(best, rank[k]);
  }
  // One pass per merge: replace, count the pair's occurrences (overlapping ones too, as pair
  // counts do), set the new pairs' ranks and find the next merge.
  while (best != kNoRank) {
    const TokenId t = merges[best].result;
    uint64_t occurrences = 0;
    uint32_t next_best = kNoRank;
    // `fresh`: the previous output symbol is a new token. The rank of the pair ending at output
    // position `out` is carried over when both symbols were neighbours before, else looked up
    // (from best + 1: merges up to best are past). In-place writes stay behind the reads.
    uint32_t out = 0, i = 0;
    bool prev_fresh = false;
    uint32_t prev_src = 0;  // old index of the previous output symbol
    while (i < n) {
      const bool merge_here = i + 1 < n && rank[i] == best;
      if (merge_here) occurrences += 1 + (i + 2 < n && rank[i + 1] == best);
      const TokenId symbol = merge_here ? t : s[i];
      if (out > 0) {
        const bool carried = !merge_here && !prev_fresh && prev_src + 1 == i;
        const uint32_t r = carried ? rank[prev_src] : ranks.Rank(s[out - 1], symbol, best + 1);
        rank[out - 1] = r;
        next_best = std::min(next_best, r);
      }
      s[out] = symbol;
      prev_fresh = merge_here;
      prev_src = i;
      ++out;
      i += merge_here ? 2 : 1;
    }
    counts[best] += word_count * occurrences;
    n = out;
    best = next_best;
  }
  return n;
}

}  // namespace

void Replay::RewriteWordByWord() {
  std::span<const Merge> merges = Merges();
  const ReplayRanks ranks(merges, state_.first_alphabet_id + state_.alphabet_size);
  struct Scratch {
    std::vector<uint32_t> rank;
    std::vector<uint64_t> counts;
  };
  tbb::enumerable_thread_specific<Scratch> scratch(
      [&] { return Scratch{{}, std::vector<uint64_t>(merges.size(), 0)}; });
  WordStore& words = state_.words;
  std::span<const WordRef> refs = words.refs();
  state_.arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, refs.size(), 1024),
                      [&](const tbb::blocked_range<size_t>& range) {
      Scratch& local = scratch.local();
      for (size_t i = range.begin(); i < range.end(); ++i) {
        const WordRef w = refs[i];
        const uint32_t n = static_cast<uint32_t>(words.symbols(w).size());
        words.set_length(w, ReplayWord(words.mutable_symbols(w), n, words.count(w), merges,
                                       ranks, local.rank, local.counts));
      }
    });
  });
  counts_.assign(merges.size(), 0);
  for (const Scratch& local : scratch) {
    for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += local.counts[i];
  }
}

}  // namespace tokenmill
