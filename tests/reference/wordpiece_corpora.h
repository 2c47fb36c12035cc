// Random word tables for the WordPiece tests (reference_wordpiece_test.cc,
// wordpiece_train_test.cc): small corpora of repeated letters, mixed scripts, Chinese, emoji,
// invalid UTF-8, and '#' (whose merges can spell a "##" token: the reuse rule), with counts
// mostly small (ties) and sometimes large.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace tokenmill::testing {

enum class WordPieceCorpusKind { kRepeats, kMixedScripts, kChinese, kEmoji, kInvalid, kHashes };
inline constexpr int kWordPieceCorpusKinds = 6;

inline std::string RandomWordPieceWord(WordPieceCorpusKind kind, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto from = [&](const std::vector<std::string>& pieces, size_t max_len) {
    std::string w;
    for (size_t len = 1 + pick(max_len); len > 0; --len) w += pieces[pick(pieces.size())];
    return w;
  };
  switch (kind) {
    case WordPieceCorpusKind::kRepeats: {  // "aaaa", "ééé", "abab": overlapping pairs
      static const std::vector<std::string> letters = {"a", "a", "b", "\xc3\xa9"};
      if (pick(3) == 0) {
        const std::string& c = letters[pick(letters.size())];
        std::string w;
        for (size_t len = 1 + pick(12); len > 0; --len) w += c;
        return w;
      }
      return from(letters, 10);
    }
    case WordPieceCorpusKind::kMixedScripts: {
      static const std::vector<std::string> pieces = {
          "a", "e", "t", "h", "s", "\xc3\xa9", "\xc3\xbc", "\xd0\xb4", "\xd0\xb0", "\xce\xbb",
          "\xd8\xb9", "\xe0\xa4\x95", "\xe4\xb8\xad", "0", "1"};
      return from(pieces, 8);
    }
    case WordPieceCorpusKind::kChinese: {
      static const std::vector<std::string> chars = {
          "\xe7\x9a\x84", "\xe4\xb8\x80", "\xe6\x98\xaf", "\xe4\xb8\x8d", "\xe4\xba\x86",
          "\xe4\xba\xba", "\xe6\x88\x91", "\xe5\x9c\xa8", "\xe6\x9c\x89", "\xe5\xad\xa6",
          "\xe4\xb9\xa0"};
      return from(chars, 6);
    }
    case WordPieceCorpusKind::kEmoji: {  // 4-byte characters, ZWJ, variation selector
      static const std::vector<std::string> pieces = {
          "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x82", "\xf0\x9f\x91\xa9", "\xe2\x80\x8d",
          "\xf0\x9f\x91\xa7", "\xf0\x9f\x8f\xbd", "\xe2\x9d\xa4", "\xef\xb8\x8f", "x"};
      return from(pieces, 6);
    }
    case WordPieceCorpusKind::kInvalid: {  // characters among bytes that are no UTF-8
      static const std::vector<std::string> pieces = {
          "a", "b", "\xc3\xa9", "\xe4\xb8\xad", "\xff", "\x80", "\xc3", "\xe4\xb8", "\xc0\xaf",
          "\xed\xa0\x80", std::string(1, '\0')};
      return from(pieces, 8);
    }
    case WordPieceCorpusKind::kHashes: {  // "##a", "a#b": tokens spelled like prefixed ones
      static const std::vector<std::string> pieces = {"#", "#", "##", "a", "b"};
      return from(pieces, 6);
    }
  }
  return "";
}

// `n` words of `kind`; counts 1-5, a quarter of them up to 1000.
inline std::vector<std::pair<std::string, uint64_t>> RandomWordPieceWords(WordPieceCorpusKind kind,
                                                                         size_t n,
                                                                         std::mt19937_64& rng) {
  std::vector<std::pair<std::string, uint64_t>> words;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t count = 1 + rng() % (rng() % 4 == 0 ? 1000 : 5);
    words.emplace_back(RandomWordPieceWord(kind, rng), count);
  }
  return words;
}

}  // namespace tokenmill::testing
