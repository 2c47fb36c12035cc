// ScoreQueue (lib/train/bpe/score_queue.h) against a brute-force scan of every pair, under the
// merge loop's protocol with random counts: many pairs (so that parked buckets, unparking and
// rebuilds all happen), small counts (so that exact ties are common, decided by bytes), and
// merges that lower token counts, raise and lower pair counts and add new tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "train/bpe/pair_index.h"
#include "train/bpe/score_queue.h"

namespace tokenmill {
namespace {

struct World {
  std::vector<std::string> tokens;
  std::vector<uint64_t> counts;       // token counts
  std::map<PairKey, uint64_t> pairs;  // the brute force's own copy of the pair counts
  std::vector<std::set<PairKey>> pairs_of;
};

// The best pair by the contract, scanning all: the highest count / (left * right), exactly,
// ties to the smaller (left bytes, right bytes).
PairKey BruteBest(const World& w) {
  PairKey best = 0;
  bool have = false;
  unsigned __int128 bc = 0, bd = 1;  // best score as bc / bd
  for (const auto& [key, count] : w.pairs) {
    const unsigned __int128 d =
        static_cast<unsigned __int128>(w.counts[PairLeft(key)]) * w.counts[PairRight(key)];
    const unsigned __int128 lhs = count * bd, rhs = bc * d;
    const bool better = !have || lhs > rhs ||
                        (lhs == rhs && PairBytesBefore(w.tokens, key, best));
    if (better) best = key, bc = count, bd = d, have = true;
  }
  return best;
}

void SetPair(World& w, PairIndex& index, ScoreQueue& queue, PairKey key, uint64_t count) {
  const uint64_t old = w.pairs.count(key) ? w.pairs[key] : 0;
  if (count == old) return;
  index.AddCount(key, static_cast<int64_t>(count) - static_cast<int64_t>(old));
  if (count == 0) {
    w.pairs.erase(key);
    w.pairs_of[PairLeft(key)].erase(key);
    w.pairs_of[PairRight(key)].erase(key);
  } else {
    w.pairs[key] = count;
    w.pairs_of[PairLeft(key)].insert(key);
    w.pairs_of[PairRight(key)].insert(key);
  }
  if (count > old) queue.Push(key, count, old == 0);
}

class ScoreQueueRebuilds : public ::testing::TestWithParam<double> {};

// The parameter: how far the entries may outgrow the pairs before a rebuild (1: after nearly
// every merge; 2: the product's).
TEST_P(ScoreQueueRebuilds, PopsTheExactBestUnderRandomChanges) {
  std::mt19937_64 rng(20261201);
  World w;
  const size_t kTokens = 500;
  for (size_t i = 0; i < kTokens; ++i) {
    // Distinct bytes in an order unrelated to the ids.
    w.tokens.push_back(std::to_string(rng() % 1000) + "#" + std::to_string(i));
    w.counts.push_back(1 + rng() % (i % 3 == 0 ? 4 : 400));
  }
  w.pairs_of.resize(kTokens);
  PairIndex index;
  // A pair's count is at most its tokens' (scores are at most 1, as in training).
  auto random_count = [&](TokenId l, TokenId r) {
    return 1 + rng() % std::min(w.counts[l], w.counts[r]);
  };
  ScoreQueue queue(w.tokens, /*min_count=*/1, /*rebuild_factor=*/GetParam(), /*min_rebuild=*/0);
  for (int i = 0; i < 30000; ++i) {
    const TokenId l = rng() % kTokens, r = rng() % kTokens;
    const PairKey key = MakePairKey(l, r);
    if (w.pairs.count(key)) continue;
    const uint64_t c = random_count(l, r);
    index.AddCount(key, static_cast<int64_t>(c));
    w.pairs[key] = c;
    w.pairs_of[l].insert(key);
    w.pairs_of[r].insert(key);
  }
  queue.Fill(w.counts, index);
  size_t ties = 0;
  for (int step = 0; step < 4000 && !w.pairs.empty(); ++step) {
    PairKey best;
    ASSERT_TRUE(queue.PopBest(index, &best));
    const PairKey expected = BruteBest(w);
    ASSERT_EQ(best, expected) << "step " << step;
    // Ties the bytes decided: another pair of the same score.
    for (const auto& [key, count] : w.pairs) {
      if (key != best &&
          static_cast<unsigned __int128>(count) * w.counts[PairLeft(best)] * w.counts[PairRight(best)] ==
              static_cast<unsigned __int128>(w.pairs[best]) * w.counts[PairLeft(key)] * w.counts[PairRight(key)]) {
        ++ties;
        break;
      }
    }
    // The merge: the pair goes, its tokens lose `replaced`, a new token gains it.
    const TokenId a = PairLeft(best), b = PairRight(best);
    const uint64_t replaced = std::max<uint64_t>(1, w.pairs[best] / (a == b ? 2 : 1));
    SetPair(w, index, queue, best, 0);
    const TokenId t = static_cast<TokenId>(w.tokens.size());
    w.tokens.push_back(w.tokens[a] + w.tokens[b] + "." + std::to_string(t));
    w.counts.push_back(0);
    w.pairs_of.emplace_back();
    const uint64_t take = std::min(replaced, a == b ? w.counts[a] / 2 : std::min(w.counts[a], w.counts[b]));
    w.counts[a] -= take;
    w.counts[b] -= take;
    w.counts[t] += take;
    queue.CountMerge(a, b, t, take);
    // Pair counts follow: pairs of a and b fall (some to zero), never above their tokens'.
    std::vector<PairKey> touched;
    for (TokenId x : {a, b}) touched.insert(touched.end(), w.pairs_of[x].begin(), w.pairs_of[x].end());
    for (PairKey key : touched) {
      if (!w.pairs.count(key)) continue;
      const uint64_t cap = std::min(w.counts[PairLeft(key)], w.counts[PairRight(key)]);
      uint64_t c = std::min(w.pairs[key], cap);
      if (rng() % 4 == 0) c = c / 2;
      SetPair(w, index, queue, key, c);
    }
    // New pairs with t, and some other pairs rise.
    for (int k = 0; k < 6 && w.counts[t] > 0; ++k) {
      const TokenId y = rng() % w.tokens.size();
      if (w.counts[y] == 0) continue;
      const PairKey key = rng() % 2 ? MakePairKey(t, y) : MakePairKey(y, t);
      SetPair(w, index, queue, key, random_count(PairLeft(key), PairRight(key)));
    }
    for (int k = 0; k < 3; ++k) {
      const TokenId l = rng() % w.tokens.size(), r = rng() % w.tokens.size();
      if (w.counts[l] == 0 || w.counts[r] == 0) continue;
      const PairKey key = MakePairKey(l, r);
      const uint64_t cap = std::min(w.counts[l], w.counts[r]);
      const uint64_t old = w.pairs.count(key) ? w.pairs[key] : 0;
      if (old < cap) SetPair(w, index, queue, key, old + 1 + rng() % (cap - old));
    }
    queue.RescoreMerged(index);
  }
  EXPECT_GT(ties, 100u);  // the byte tie-break was exercised
}

INSTANTIATE_TEST_SUITE_P(Factors, ScoreQueueRebuilds, ::testing::Values(1.0, 1.2, 2.0));

}  // namespace
}  // namespace tokenmill
