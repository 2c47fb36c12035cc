// WordCounts (packed short words, arena-backed long words, hash partitions) and the counting
// cache in front of it, against a std::map reference on random words of every length class.
#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>

#include "count/word_count_cache.h"
#include "count/word_counts.h"
#include "gtest/gtest.h"

namespace tokenmill {
namespace {

std::string RandomWord(std::mt19937& rng) {
  static const size_t kLengths[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 40};
  size_t n = kLengths[rng() % std::size(kLengths)];
  std::string w;
  for (size_t i = 0; i < n; ++i) w.push_back(static_cast<char>(rng() % 4 == 0 ? rng() % 256 : 'a' + rng() % 3));
  return w;
}

TEST(WordCounts, MatchesAMapThroughAddCacheAndMerge) {
  std::mt19937 rng(5);
  std::map<std::string, uint64_t> reference;
  WordCounts direct, cached, merged_parts[3];
  {
    WordCountCache cache(&cached);
    for (int i = 0; i < 20000; ++i) {
      std::string w = RandomWord(rng);
      if (w.empty()) continue;  // pre-tokenizers never give empty pieces
      ++reference[w];
      direct.Add(w);
      cache.Add(w);
      merged_parts[i % 3].Add(w);
    }
  }  // the cache flushes into `cached` here
  WordCounts merged;
  merged.MergeFrom(merged_parts[0]);                 // copy
  merged.MergeFrom(std::move(merged_parts[1]));      // move, parallel by partition
  merged.MergeFrom(std::move(merged_parts[2]));
  // AddAll: the reference's words, each split into two entries where it can be (repeats add),
  // into a table that holds some words already.
  WordCounts bulk;
  std::vector<std::pair<std::string_view, uint64_t>> entries;
  for (const auto& [word, count] : reference) {
    if (word.size() % 5 == 0) {
      bulk.Add(word, count);
    } else if (count > 1) {
      entries.emplace_back(word, 1);
      entries.emplace_back(word, count - 1);
    } else {
      entries.emplace_back(word, count);
    }
  }
  std::shuffle(entries.begin(), entries.end(), rng);
  bulk.AddAll(entries);
  for (const WordCounts* counts : {&direct, &cached, &merged, &bulk}) {
    EXPECT_EQ(counts->unique_words(), reference.size());
    auto sorted = counts->Sorted();
    ASSERT_EQ(sorted.size(), reference.size());
    size_t i = 0;
    uint64_t total = 0;
    for (const auto& [word, count] : reference) {
      EXPECT_EQ(sorted[i].first, word);
      EXPECT_EQ(sorted[i].second, count);
      EXPECT_EQ(counts->Get(word), count);
      total += count;
      ++i;
    }
    EXPECT_EQ(counts->total_words(), total);
  }
  EXPECT_TRUE(direct == cached);
  EXPECT_TRUE(direct == merged);
  EXPECT_TRUE(direct == bulk);
  WordCounts copy = direct;
  EXPECT_TRUE(copy == direct);
  copy.Add("one more word");
  EXPECT_FALSE(copy == direct);
  EXPECT_EQ(direct.Get("never seen"), 0u);
  EXPECT_EQ(direct.Get(std::string_view("zz\0zzzzzz", 9)), 0u);
}

TEST(WordCounts, SortedOrdersWordsSharingLongPrefixesByTheirBytes) {
  // Sorted() compares the first 16 bytes as integers (zero-padded) before the rest: words that
  // share those bytes, end inside them, or hold zero bytes there must still sort as bytes do.
  std::mt19937 rng(11);
  std::set<std::string> words;  // std::string orders bytes as unsigned chars, as Sorted() must
  const std::string stem = "shared-prefix-16";
  while (words.size() < 3000) {
    std::string w = stem.substr(0, rng() % (stem.size() + 2));
    for (size_t extra = rng() % 6; extra > 0; --extra) {
      static const char kBytes[] = {'\0', 'a', 'z', '\xff'};
      w.push_back(kBytes[rng() % 4]);
    }
    if (!w.empty()) words.insert(w);
  }
  WordCounts counts;
  for (const std::string& w : words) counts.Add(w, w.size() + 1);
  auto sorted = counts.Sorted();
  ASSERT_EQ(sorted.size(), words.size());
  size_t i = 0;
  for (const std::string& w : words) {
    ASSERT_EQ(sorted[i].first, w) << "at " << i;
    EXPECT_EQ(sorted[i].second, w.size() + 1);
    ++i;
  }
}

TEST(WordCounts, ShortWordsWithZeroBytesAreDistinct) {
  WordCounts counts;
  counts.Add(std::string_view("a\0", 2));
  counts.Add(std::string_view("a", 1));
  counts.Add(std::string_view("\0a", 2), 5);
  EXPECT_EQ(counts.unique_words(), 3u);
  EXPECT_EQ(counts.Get(std::string_view("a\0", 2)), 1u);
  EXPECT_EQ(counts.Get(std::string_view("\0a", 2)), 5u);
  auto sorted = counts.Sorted();
  ASSERT_EQ(sorted.size(), 3u);
  EXPECT_EQ(sorted[0].first, std::string_view("\0a", 2));
  EXPECT_EQ(sorted[1].first, "a");
  EXPECT_EQ(sorted[2].first, std::string_view("a\0", 2));
}

TEST(WordCounts, AMovedFromTableIsAValidEmptyTable) {
  WordCounts a;
  a.Add("hello", 3);
  a.Add("hi", 2);
  WordCounts b = std::move(a);
  EXPECT_EQ(b.Get("hello"), 3u);
  EXPECT_EQ(a.unique_words(), 0u);  // NOLINT(bugprone-use-after-move): the contract under test
  EXPECT_EQ(a.total_words(), 0u);
  EXPECT_EQ(a, WordCounts());
  WordCounts copy = a;
  copy.Add("again", 1);
  a.Add("again", 1);
  EXPECT_EQ(a, copy);
  WordCounts c;
  c = std::move(b);
  EXPECT_EQ(c.Get("hi"), 2u);
  b.Add("x", 1);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(b.Get("x"), 1u);
  EXPECT_EQ(b.unique_words(), 1u);
}

}  // namespace
}  // namespace tokenmill
