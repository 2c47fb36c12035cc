#include "train/bpe/initial_pairs.h"

#include "oneapi/tbb/enumerable_thread_specific.h"
#include "oneapi/tbb/parallel_for.h"
#include "train/bpe/pair_recount.h"
#include "train/parallel_chunks.h"

namespace tokenmill {
namespace {

// Words per chunk, and the most chunks.
constexpr size_t kChunkWords = 4096;
constexpr size_t kMaxChunks = 64;

// The dense form: pair (left, right) of the alphabet is number (left - first) * a + (right -
// first) of a x a.
class DensePairs {
 public:
  explicit DensePairs(const BpeState& state)
      : words_(state.words),
        refs_(state.words.refs()),
        first_(state.first_alphabet_id),
        a_(state.alphabet_size) {}

  size_t size() const { return a_ * a_; }
  PairKey KeyOf(size_t d) const {
    return MakePairKey(static_cast<TokenId>(first_ + d / a_), static_cast<TokenId>(first_ + d % a_));
  }
  // Calls fn(pair, first) for each adjacent pair of word number i; first is true the first
  // time the pair occurs in the word (`stamps`, one per pair, remember the last word).
  template <typename Fn>
  void ForEachPair(size_t i, std::vector<uint32_t>& stamps, Fn&& fn) const {
    std::span<const TokenId> s = words_.symbols(refs_[i]);
    const uint32_t stamp = static_cast<uint32_t>(i) + 1;
    for (size_t k = 0; k + 1 < s.size(); ++k) {
      const size_t d = (s[k] - first_) * a_ + (s[k + 1] - first_);
      fn(d, stamps[d] != stamp);
      stamps[d] = stamp;
    }
  }

 private:
  const WordStore& words_;
  std::span<const WordRef> refs_;
  TokenId first_;
  size_t a_;
};

}  // namespace

namespace {

// Small, every pair of its symbols equally mergeable (their lengths are the same), and every
// symbol of the words inside it (not so when the words hold an unknown token listed among the
// special tokens, before the alphabet).
bool DenseApplies(const BpeState& state) {
  if (state.alphabet_size > kMaxDenseAlphabet) return false;
  if (state.alphabet.unknown_id != UINT32_MAX) return false;
  for (size_t k = 1; k < state.alphabet_size; ++k) {
    const TokenId id = static_cast<TokenId>(state.first_alphabet_id + k);
    if (state.token_length[id] != state.token_length[state.first_alphabet_id]) return false;
  }
  return true;
}

}  // namespace

void CountInitialPairs(BpeState& state) {
  if (!DenseApplies(state)) {
    CountPairsOfWords(state, /*track_all=*/true);
    return;
  }
  const bool mergeable =
      state.alphabet_size > 0 && state.Mergeable(state.first_alphabet_id, state.first_alphabet_id);
  const DensePairs dense(state);
  std::span<const WordRef> refs = state.words.refs();
  const Chunks chunks = Chunks::Of(refs.size(), kChunkWords, kMaxChunks);
  // Per thread: pair counts (exact sums, so thread order does not matter) and a stamp per pair
  // that lists each word once per pair.
  tbb::enumerable_thread_specific<std::vector<uint64_t>> thread_counts(
      [&] { return std::vector<uint64_t>(dense.size(), 0); });
  tbb::enumerable_thread_specific<std::vector<uint32_t>> thread_stamps(
      [&] { return std::vector<uint32_t>(dense.size(), 0); });
  // Pass 1: per chunk, how many words hold each pair.
  std::vector<std::vector<uint32_t>> cursor(chunks.count);
  state.arena.execute([&] {
    tbb::parallel_for(size_t{0}, chunks.count, [&](size_t c) {
      std::vector<uint32_t>& hist = cursor[c];
      hist.assign(dense.size(), 0);
      std::vector<uint64_t>& counts = thread_counts.local();
      std::vector<uint32_t>& stamps = thread_stamps.local();
      for (size_t i = chunks.Begin(c); i < chunks.Begin(c + 1); ++i) {
        const uint64_t count = state.words.count(refs[i]);
        dense.ForEachPair(i, stamps, [&](size_t d, bool first) {
          counts[d] += count;
          hist[d] += first;
        });
      }
    });
  });
  std::vector<uint64_t> counts(dense.size(), 0);
  for (const std::vector<uint64_t>& local : thread_counts) {
    for (size_t d = 0; d < dense.size(); ++d) counts[d] += local[d];
  }
  // Each pair's words in one flat array, in word order: each chunk's cursor starts where the
  // earlier chunks' words for that pair end.
  const std::vector<uint64_t> start = CountingSortOffsets(cursor, dense.size(), /*relative=*/true);
  HugeArray<WordRef> flat(start.back());
  // Pass 2: scatter the word indices (the stamps start over).
  for (std::vector<uint32_t>& stamps : thread_stamps) std::fill(stamps.begin(), stamps.end(), 0);
  state.arena.execute([&] {
    tbb::parallel_for(size_t{0}, chunks.count, [&](size_t c) {
      std::vector<uint32_t>& next = cursor[c];
      std::vector<uint32_t>& stamps = thread_stamps.local();
      for (size_t i = chunks.Begin(c); i < chunks.Begin(c + 1); ++i) {
        dense.ForEachPair(i, stamps, [&](size_t d, bool first) {
          if (first) flat[start[d] + next[d]++] = refs[i];
        });
      }
    });
  });
  std::vector<PairKey> keys;
  std::vector<uint64_t> offsets, key_counts;
  for (size_t d = 0; mergeable && d < dense.size(); ++d) {
    if (counts[d] == 0) continue;
    const PairKey key = dense.KeyOf(d);
    state.pairs.AddCount(key, static_cast<int64_t>(counts[d]));
    keys.push_back(key);
    key_counts.push_back(counts[d]);
    offsets.push_back(start[d]);
  }
  offsets.push_back(start.back());
  state.pairs.AddWordBlock(std::move(flat), keys, offsets);
  if (!state.scored) state.queue.Fill(keys, key_counts);
}

}  // namespace tokenmill
