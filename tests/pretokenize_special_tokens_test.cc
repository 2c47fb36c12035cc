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
