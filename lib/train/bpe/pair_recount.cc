#include "train/bpe/pair_recount.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/enumerable_thread_specific.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/parallel_invoke.h"
#include "train/parallel_chunks.h"

namespace tokenmill {
namespace {

// Words per chunk: each chunk has a histogram over the whole vocabulary, which costs more than
// the chunk's words below this (linux_c_100m, 174 k words: 43 chunks of 4096 words spent 8 ms
// on 10 MB of histograms). At most kMaxChunks chunks.
constexpr size_t kChunkWords = 16384;
constexpr size_t kMaxChunks = 64;

// Calls fn(left, right, occurrences) once for each distinct mergeable pair of `s`, in order of
// first occurrence (so that nothing depends on a hash order).
template <typename Fn>
void ForEachDistinctPair(std::span<const TokenId> s, const BpeState::MergeableCheck& mergeable,
                         absl::flat_hash_map<PairKey, uint32_t>& seen, Fn&& fn) {
  constexpr size_t kShort = 32;  // up to this length, look around instead of hashing
  if (s.size() <= kShort) {
    for (size_t k = 0; k + 1 < s.size(); ++k) {
      if (!mergeable(s[k], s[k + 1])) continue;
      bool first = true;
      for (size_t j = 0; j < k && first; ++j) first = !(s[j] == s[k] && s[j + 1] == s[k + 1]);
      if (!first) continue;
      uint32_t occurrences = 1;
      for (size_t j = k + 1; j + 1 < s.size(); ++j) {
        occurrences += s[j] == s[k] && s[j + 1] == s[k + 1];
      }
      fn(s[k], s[k + 1], occurrences);
    }
    return;
  }
  seen.clear();
  for (size_t k = 0; k + 1 < s.size(); ++k) {
    if (mergeable(s[k], s[k + 1])) ++seen[MakePairKey(s[k], s[k + 1])];
  }
  for (size_t k = 0; k + 1 < s.size(); ++k) {
    auto it = seen.find(MakePairKey(s[k], s[k + 1]));
    if (it == seen.end() || it->second == 0) continue;
    fn(s[k], s[k + 1], it->second);
    it->second = 0;
  }
}

class PairRecount {
 public:
  explicit PairRecount(BpeState& state)
      : state_(state),
        refs_(state.words.refs()),
        vocab_(state.model.tokens.size()),
        mergeable_(state.Mergeable()),
        // Chunks' per-token histograms cost chunks x vocab x 8 bytes: about 32 MB at most
        // (fewer chunks for a large vocabulary).
        chunks_{refs_.size(),
                std::clamp<size_t>(std::min((refs_.size() + kChunkWords - 1) / kChunkWords,
                                            (size_t{4} << 20) / vocab_),
                                   1, kMaxChunks)},
        thread_dense_([this] { return Dense{std::vector<uint64_t>(vocab_, 0),
                                            std::vector<uint64_t>(vocab_, 0), {}, {}}; }) {}

  // Passes 1 and 2: every (pair, word) entry, grouped by left token.
  void GroupByLeft();
  // The floor below which pairs are left out, for `remaining` merges to come.
  uint64_t Floor(size_t remaining);
  // Pass 3: per left token, the kept pairs (count >= keep_from) with their counts, and their
  // word lists in (right, word) order in one block; then the pair index and the queue.
  void Install(uint64_t keep_from);

 private:
  // 12 bytes, not 16: the count rarely needs 64 bits (see kLargeCount).
  struct Entry {
    TokenId right;
    WordRef word;
    uint32_t count;  // word count x occurrences in the word, or kLargeCount
  };
  // Marks a count of 2^32 - 1 or more, which is taken from the word itself when summed.
  static constexpr uint32_t kLargeCount = std::numeric_limits<uint32_t>::max();
  static constexpr uint64_t kDropped = std::numeric_limits<uint64_t>::max();
  // A thread's dense arrays over right tokens, for one left token's group at a time.
  struct Dense {
    std::vector<uint64_t> count;
    std::vector<uint64_t> next;  // words of the pair, then where its next word goes
    std::vector<TokenId> touched;
    std::vector<TokenId> dropped;
    std::vector<uint64_t> tiers = std::vector<uint64_t>(64, 0);  // pairs per power-of-two count
  };

  // The exact count of a kLargeCount entry of left token l: its word's count times the pair's
  // occurrences in it.
  uint64_t LargeCount(size_t l, const Entry& entry) const {
    std::span<const TokenId> s = state_.words.symbols(entry.word);
    uint64_t occurrences = 0;
    for (size_t k = 0; k + 1 < s.size(); ++k) occurrences += s[k] == l && s[k + 1] == entry.right;
    return state_.words.count(entry.word) * occurrences;
  }
  // Sums left token l's entries by right token into d.count (d.next: their words).
  void CountGroup(Dense& d, size_t l) const {
    d.touched.clear();
    for (uint64_t e = group_[l]; e < group_[l + 1]; ++e) {
      const Entry& entry = entries_[e];
      if (d.next[entry.right]++ == 0) d.touched.push_back(entry.right);
      d.count[entry.right] += entry.count != kLargeCount ? entry.count : LargeCount(l, entry);
    }
  }
  // Pass 3 for left token l: keeps the pairs counted at least keep_from, writes their words
  // to `flat` from the group's start, and returns them in right order.
  std::vector<RightPair> SplitGroup(Dense& d, size_t l, uint64_t keep_from,
                                    HugeArray<WordRef>& flat, uint64_t& end) const;

  BpeState& state_;
  std::span<const WordRef> refs_;
  size_t vocab_;
  BpeState::MergeableCheck mergeable_;
  Chunks chunks_;
  HugeArray<Entry> entries_;
  std::vector<uint64_t> group_;  // left token l's entries: [group_[l], group_[l + 1])
  tbb::enumerable_thread_specific<Dense> thread_dense_;
};

void PairRecount::GroupByLeft() {
  tbb::enumerable_thread_specific<absl::flat_hash_map<PairKey, uint32_t>> thread_seen;
  // Pass 1: per chunk, how many (pair, word) entries each left token has.
  std::vector<std::vector<uint64_t>> cursor(chunks_.count);
  state_.arena.execute([&] {
    tbb::parallel_for(size_t{0}, chunks_.count, [&](size_t c) {
      std::vector<uint64_t>& hist = cursor[c];
      hist.assign(vocab_, 0);
      auto& seen = thread_seen.local();
      for (size_t i = chunks_.Begin(c); i < chunks_.Begin(c + 1); ++i) {
        ForEachDistinctPair(state_.words.symbols(refs_[i]), mergeable_, seen,
                            [&](TokenId left, TokenId, uint32_t) { ++hist[left]; });
      }
    });
  });
  group_ = CountingSortOffsets(cursor, vocab_, /*relative=*/false);
  // Pass 2: scatter the entries into their groups.
  entries_ = HugeArray<Entry>(group_.back());
  state_.arena.execute([&] {
    tbb::parallel_for(size_t{0}, chunks_.count, [&](size_t c) {
      std::vector<uint64_t>& next = cursor[c];
      auto& seen = thread_seen.local();
      for (size_t i = chunks_.Begin(c); i < chunks_.Begin(c + 1); ++i) {
        const uint64_t count = state_.words.count(refs_[i]);
        ForEachDistinctPair(state_.words.symbols(refs_[i]), mergeable_, seen,
                            [&](TokenId left, TokenId right, uint32_t occurrences) {
          const uint64_t c = count * occurrences;
          entries_[next[left]++] = {right, refs_[i],
                                    c < kLargeCount ? static_cast<uint32_t>(c) : kLargeCount};
        });
      }
    });
  });
}

uint64_t PairRecount::Floor(size_t remaining) {
  // The counts' distribution.
  state_.arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, vocab_, 64),
                      [&](const tbb::blocked_range<size_t>& range) {
      Dense& d = thread_dense_.local();
      for (size_t l = range.begin(); l < range.end(); ++l) {
        CountGroup(d, l);
        for (TokenId right : d.touched) {
          ++d.tiers[std::bit_width(d.count[right]) - 1];
          d.count[right] = d.next[right] = 0;
        }
      }
    });
  });
  std::vector<uint64_t> tiers(64, 0);
  for (const Dense& d : thread_dense_) {
    for (size_t t = 0; t < 64; ++t) tiers[t] += d.tiers[t];
  }
  uint64_t above = 0;
  int tier = 63;
  for (; tier > 0; --tier) {
    above += tiers[tier];
    if (above >= 8 * remaining) break;
  }
  if (state_.options.resume_pair_floor != 0) return state_.options.resume_pair_floor;
  return tier <= 1 ? 1 : uint64_t{1} << (tier - 1);
}

std::vector<RightPair> PairRecount::SplitGroup(Dense& d, size_t l, uint64_t keep_from,
                                               HugeArray<WordRef>& flat, uint64_t& end) const {
  end = group_[l];
  if (group_[l] == group_[l + 1]) return {};
  CountGroup(d, l);
  d.dropped.clear();
  size_t kept = 0;
  for (TokenId right : d.touched) {
    if (d.count[right] >= keep_from) {
      d.touched[kept++] = right;
    } else {
      d.dropped.push_back(right);
      d.next[right] = kDropped;
    }
  }
  d.touched.resize(kept);
  std::sort(d.touched.begin(), d.touched.end());
  std::vector<RightPair> out;
  out.reserve(d.touched.size());
  uint64_t at = group_[l];
  for (TokenId right : d.touched) {
    out.push_back({right, d.count[right], at});
    const uint64_t words = d.next[right];
    d.next[right] = at;
    at += words;
  }
  end = at;
  if (!d.touched.empty()) {
    for (uint64_t e = group_[l]; e < group_[l + 1]; ++e) {
      uint64_t& next = d.next[entries_[e].right];
      if (next != kDropped) flat[next++] = entries_[e].word;
    }
  }
  for (TokenId right : d.touched) d.count[right] = d.next[right] = 0;
  for (TokenId right : d.dropped) d.count[right] = d.next[right] = 0;
  return out;
}

void PairRecount::Install(uint64_t keep_from) {
  std::vector<std::vector<RightPair>> group_pairs(vocab_);
  std::vector<uint64_t> group_end(vocab_, 0);
  HugeArray<WordRef> flat(group_.back());
  state_.arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, vocab_, 64),
                      [&](const tbb::blocked_range<size_t>& range) {
      Dense& d = thread_dense_.local();
      for (size_t l = range.begin(); l < range.end(); ++l) {
        group_pairs[l] = SplitGroup(d, l, keep_from, flat, group_end[l]);
      }
    });
  });
  entries_ = HugeArray<Entry>();  // frees them
  // The index's shards are filled in parallel from the groups, beside the queue (which heaps
  // only the pairs of the highest counts; merge_queue.h).
  const PairsByLeft pairs{group_pairs, group_end};
  state_.arena.execute([&] {
    tbb::parallel_invoke([&] { state_.pairs.Build(std::move(flat), pairs); },
                         [&] {
                           if (!state_.scored) state_.queue.Fill(pairs);
                         });
  });
}

}  // namespace

void CountPairsOfWords(BpeState& state, bool track_all) {
  const size_t remaining = state.RemainingMerges();
  if (!track_all && remaining == 0) {
    state.untracked_below = std::numeric_limits<uint64_t>::max();
    state.pairs.set_partial(true);
    return;
  }
  PairRecount recount(state);
  recount.GroupByLeft();
  const uint64_t keep_from = track_all ? 1 : recount.Floor(remaining);
  state.untracked_below = keep_from;
  state.pairs.set_partial(keep_from > 1);
  recount.Install(keep_from);
}

}  // namespace tokenmill
