// MergeQueue and PairIndex against a brute-force queue: every pop must be the pair of highest
// current count (ties by bytes or by ids), while counts fall, rise and new pairs appear as in
// training, including when Fill leaves the lower count tiers waiting.
#include "train/bpe/merge_queue.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "train/bpe/pair_index.h"

namespace tokenmill {
namespace {

struct Case {
  bool id_ties;
  size_t min_heap;
};

class MergeQueueTest : public ::testing::TestWithParam<Case> {};

TEST_P(MergeQueueTest, PopsTheBestPairAsCountsChange) {
  const Case c = GetParam();
  std::mt19937_64 rng(c.min_heap * 2 + c.id_ties);
  // Distinct tokens of 1-3 letters, in an order unrelated to their bytes; a third of them after
  // 6-9 bytes of a common prefix, so that many share their first 8 bytes, and letters include
  // a zero byte (which the ranks' 8-byte prefixes pad with).
  std::vector<std::string> tokens;
  std::map<std::string, bool> seen;
  while (tokens.size() < 60) {
    std::string t(1 + rng() % 3, 'a');
    for (char& ch : t) ch = "\0abc"[rng() % 4];
    if (rng() % 3 == 0) t = std::string(6 + rng() % 4, 'a') + t;
    if (seen.emplace(t, true).second) tokens.push_back(t);
  }
  // Counts skewed toward small values (as on real corpora), with many ties.
  // (Draws in sequence: operands of | and a call's arguments are unsequenced, so each build
  // could pick its own order and so its own data.)
  auto random_count = [&] {
    const uint64_t shift = rng() % 12;
    return uint64_t{1} << shift | (rng() % 3);
  };
  auto random_key = [&] {
    const size_t left = rng() % tokens.size();
    return MakePairKey(left, rng() % tokens.size());
  };
  std::map<PairKey, uint64_t> truth;
  while (truth.size() < 2000) {
    const uint64_t count = random_count();
    truth[random_key()] = count;
  }
  std::vector<PairKey> keys;
  std::vector<uint64_t> counts;
  PairIndex index;
  for (const auto& [key, count] : truth) {
    keys.push_back(key);
    counts.push_back(count);
    index.AddCount(key, static_cast<int64_t>(count));
  }
  MergeQueue queue(tokens, c.id_ties, c.min_heap);
  queue.Fill(keys, counts);
  auto before = [&](PairKey x, PairKey y) {  // x is popped before y at equal counts
    if (c.id_ties) return x < y;
    if (PairLeft(x) != PairLeft(y)) return tokens[PairLeft(x)] < tokens[PairLeft(y)];
    return tokens[PairRight(x)] < tokens[PairRight(y)];
  };
  size_t pops = 0;
  while (!truth.empty()) {
    PairKey expected = 0;
    uint64_t best = 0;
    for (const auto& [key, count] : truth) {
      if (count > best || (count == best && before(key, expected))) expected = key, best = count;
    }
    PairKey got;
    ASSERT_TRUE(queue.PopBest(index, &got)) << "pop " << pops;
    ASSERT_EQ(got, expected) << "pop " << pops << ": count " << index.count(got) << ", expected "
                             << best;
    ++pops;
    index.AddCount(got, -static_cast<int64_t>(best));
    truth.erase(got);
    // As a merge does: some pairs fall (possibly to zero), some rise, a few are new.
    for (int k = 0; k < 3 && !truth.empty(); ++k) {
      auto it = std::next(truth.begin(), rng() % truth.size());
      const uint64_t drop = 1 + rng() % it->second;
      index.AddCount(it->first, -static_cast<int64_t>(drop));
      if ((it->second -= drop) == 0) truth.erase(it);
    }
    if (rng() % 4 == 0) {
      const PairKey key = random_key();
      const uint64_t rise = random_count();
      truth[key] += rise;
      queue.Push(index.AddCount(key, static_cast<int64_t>(rise)), key);
    }
  }
  PairKey none;
  EXPECT_FALSE(queue.PopBest(index, &none));
  EXPECT_GT(pops, 1000u);
}

INSTANTIATE_TEST_SUITE_P(Tiers, MergeQueueTest,
                         ::testing::Values(Case{false, MergeQueue::kMinHeap}, Case{false, 1},
                                           Case{false, 100}, Case{true, MergeQueue::kMinHeap},
                                           Case{true, 1}, Case{true, 100}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.id_ties ? "IdTies" : "ByteTies") +
                                  "MinHeap" + std::to_string(info.param.min_heap);
                         });

TEST(PairIndex, BuildGivesEveryPairItsCountAndWords) {
  std::mt19937_64 rng(7);
  constexpr TokenId kLefts = 3000;
  std::map<PairKey, uint64_t> truth;
  while (truth.size() < 5000) {
    const uint64_t count = 1 + rng() % 50;
    const TokenId left = rng() % kLefts;
    truth[MakePairKey(left, rng() % kLefts)] = count;
  }
  // Grouped by left token (increasing right, as a map iterates); some pairs have no words.
  std::vector<std::vector<RightPair>> groups(kLefts);
  std::vector<uint64_t> ends(kLefts, 0), first(truth.size()), last(truth.size());
  std::vector<PairKey> keys;
  uint64_t at = 0;
  for (TokenId l = 0; l < kLefts; ++l) {
    for (auto it = truth.lower_bound(MakePairKey(l, 0));
         it != truth.end() && PairLeft(it->first) == l; ++it) {
      first[keys.size()] = at;
      groups[l].push_back({PairRight(it->first), it->second, at});
      at += PairRight(it->first) % 3;
      last[keys.size()] = at;
      keys.push_back(it->first);
    }
    ends[l] = at;
  }
  HugeArray<WordRef> words(at);
  for (uint64_t i = 0; i < at; ++i) words[i] = static_cast<WordRef>(i);
  PairIndex index;
  index.Build(std::move(words), PairsByLeft{groups, ends});
  EXPECT_EQ(index.size(), truth.size());
  // Pairs of tokens Build never saw go to a shard too.
  index.AddCount(MakePairKey(kLefts + 5, 7), 3);
  EXPECT_EQ(index.count(MakePairKey(kLefts + 5, 7)), 3u);
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(index.count(keys[i]), truth[keys[i]]);
    std::span<const WordRef> got = index.TakeWords(keys[i]);
    ASSERT_EQ(got.size(), last[i] - first[i]);
    for (size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got[k], first[i] + k);
    EXPECT_EQ(index.count(keys[i]), 0u);
  }
  EXPECT_EQ(index.size(), 1u);
}

}  // namespace
}  // namespace tokenmill
