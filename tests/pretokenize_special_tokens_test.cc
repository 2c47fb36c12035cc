// The Hyperscan special-token matcher against a naive reference (try every token at every
// position, keep the longest), on random texts over a small alphabet where tokens overlap.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "pretokenize/special_tokens.h"

namespace tokenmill {
namespace {

using Segments = std::vector<std::pair<std::string, int>>;

Segments NaiveSplit(const std::vector<std::string>& tokens, std::string_view text) {
  Segments out;
  size_t plain = 0, pos = 0;
  while (pos < text.size()) {
    int best = -1;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (text.substr(pos).starts_with(tokens[i]) &&
          (best < 0 || tokens[i].size() > tokens[best].size())) {
        best = static_cast<int>(i);
      }
    }
    if (best < 0) {
      ++pos;
      continue;
    }
    if (pos > plain) out.emplace_back(std::string(text.substr(plain, pos - plain)), -1);
    out.emplace_back(tokens[best], best);
    pos += tokens[best].size();
    plain = pos;
  }
  if (plain < text.size()) out.emplace_back(std::string(text.substr(plain)), -1);
  return out;
}

Segments MatcherSplit(const SpecialTokenMatcher& m, std::string_view text) {
  Segments out;
  m.Split(text, [&](std::string_view s, int i) { out.emplace_back(std::string(s), i); });
  return out;
}

TEST(SpecialTokens, MatchesNaiveReferenceOnOverlappingTokens) {
  const std::vector<std::string> tokens = {"<",     "<|",  "<|a|>", "a|>", "aa",
                                           "aaa",   "|",   "<|endoftext|>",
                                           std::string("\0x", 2), "\xE4\xB8\xAD"};
  auto matcher = SpecialTokenMatcher::Create(tokens);
  ASSERT_TRUE(matcher.ok()) << matcher.status();
  std::mt19937_64 rng(5);
  const std::string_view kAlphabet[] = {"<", "|", "a", ">", "b", " ", std::string_view("\0", 1),
                                        "x", "<|endoftext|>", "\xE4\xB8\xAD", "\xE4"};
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    for (int k = rng() % 30; k > 0; --k) text += kAlphabet[rng() % std::size(kAlphabet)];
    ASSERT_EQ(MatcherSplit(**matcher, text), NaiveSplit(tokens, text)) << text;
  }
}

// Tokens starting with at most four different bytes take another path (a text holding none of
// those bytes is passed through without a scan): the same reference, on texts with and without
// them.
TEST(SpecialTokens, FewFirstBytesMatchNaiveReference) {
  const std::vector<std::string> tokens = {"<|endoftext|>", "<|fim|>", "[SEP]", "[S",
                                           std::string("\0x", 2)};
  auto matcher = SpecialTokenMatcher::Create(tokens);
  ASSERT_TRUE(matcher.ok()) << matcher.status();
  std::mt19937_64 rng(7);
  const std::string_view kAlphabet[] = {"a", " ", "x", "S", "E", "P", "]", "|", ">", "b", "c",
                                        "d", "<", "[", std::string_view("\0", 1),
                                        "<|endoftext|>", "[SEP]", "<|fim|>"};
  int without = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    // Mostly letters: about a third of the texts hold none of the tokens' first bytes.
    for (int k = rng() % 12; k > 0; --k) {
      const size_t pick = rng() % 40;
      text += kAlphabet[pick < 12 ? pick : 12 + pick % (std::size(kAlphabet) - 12)];
    }
    without += text.find_first_of(std::string_view("<[\0", 3)) == std::string::npos;
    ASSERT_EQ(MatcherSplit(**matcher, text), NaiveSplit(tokens, text)) << text;
  }
  EXPECT_GT(without, 1000);
  EXPECT_LT(without, 19000);
}

TEST(SpecialTokens, ThousandTokensAndManyThreads) {
  std::vector<std::string> tokens;
  for (int i = 0; i < 1000; ++i) tokens.push_back("<|tok" + std::to_string(i) + "|>");
  auto matcher = SpecialTokenMatcher::Create(tokens);
  ASSERT_TRUE(matcher.ok());
  std::string text;
  std::mt19937_64 rng(9);
  for (int i = 0; i < 5000; ++i) text += "text " + tokens[rng() % tokens.size()] + " <|tok";
  const Segments expected = NaiveSplit(tokens, text);
  std::vector<std::thread> threads;
  // One byte per thread: std::vector<bool> would pack the four flags into one word, and the
  // threads' read-modify-write of that word is a data race (ThreadSanitizer reports it).
  std::vector<char> same(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] { same[t] = MatcherSplit(**matcher, text) == expected; });
  }
  for (std::thread& t : threads) t.join();
  for (char s : same) EXPECT_TRUE(s);
}

TEST(SpecialTokens, NoTokensPassesTextThrough) {
  auto matcher = SpecialTokenMatcher::Create({});
  ASSERT_TRUE(matcher.ok());
  EXPECT_EQ(MatcherSplit(**matcher, "abc"), (Segments{{"abc", -1}}));
  EXPECT_TRUE(MatcherSplit(**matcher, "").empty());
}

TEST(SpecialTokens, RejectsEmptyAndDuplicateTokens) {
  EXPECT_FALSE(SpecialTokenMatcher::Create({""}).ok());
  EXPECT_FALSE(SpecialTokenMatcher::Create({"<s>", "<s>"}).ok());
}

}  // namespace
}  // namespace tokenmill
