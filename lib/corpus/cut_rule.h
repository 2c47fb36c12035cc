// CutRule: where a stream of input bytes may be cut into batches (and large files into shards)
// without changing what is counted.
//
//  - kLine: after every '\n'. Documents are lines (text) or records (JSON lines), so a cut
//    there never splits a document.
//  - kBetweenWords: (--doc-mode=file) at p where byte p-1 is an ASCII letter, byte p is ' '
//    and byte p+1 an ASCII letter. Every preset pre-tokenizer ends a piece between a letter
//    and a following space (no preset alternative matches a letter followed by a space), and no
//    preset pattern looks behind, so pre-tokenizing the two sides separately gives the same
//    pieces as the whole. Used only when no special token contains a space.
//  - kBetweenWordsAndLines: kBetweenWords, and also at p where byte p-1 is '\n', the character
//    before it is no whitespace (an ASCII byte 0x21-0x7E, or a 3-byte character from U+3001 to
//    U+9FFF: CJK punctuation, kana, ideographs) and the character at p starts a word (an ASCII
//    letter, or a 3-byte character from U+4000 to U+9FFF: CJK ideographs; never whitespace,
//    '/' or a quote). Text without spaces between words (Chinese, Japanese) has no word cuts, so
//    a file of it was one batch. In every preset the '\n' ends a piece there (gpt2's
//    `\s+(?!\S)` and `\s+` take "\n" alone when no whitespace precedes it, cl100k's `\s*[\r\n]+`
//    and its punctuation's `[\r\n]*` stop at the letter, o200k's `[\r\n/]*` too as the letter is
//    no '/'), no piece starts with a '\n' that a letter follows (the optional prefixes exclude
//    \r\n), and the normalizers map characters one by one ('\n' composes with nothing). Used
//    when, besides kBetweenWords' conditions, no special token contains a '\n'.
//  - kNever: the document is kept whole (file mode with a custom pattern or spaced specials).
//
// Contract: a cut position p satisfies 0 < p <= size; FindCut and LastCut only report p whose
// deciding bytes (p-1; for kBetweenWords p and p+1; for line cuts p-4 to p+2) lie inside `data`.
#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>

#include "common/utf8.h"

namespace tokenmill {

enum class CutKind { kLine, kBetweenWords, kBetweenWordsAndLines, kNever };

class CutRule {
 public:
  static constexpr size_t npos = std::string_view::npos;

  explicit CutRule(CutKind kind) : kind_(kind) {}
  CutKind kind() const { return kind_; }

  // The first cut p with p >= from (and p >= 1), or npos.
  size_t FindCut(std::string_view data, size_t from) const {
    if (from == 0) from = 1;
    switch (kind_) {
      case CutKind::kLine: {
        if (from > data.size()) return npos;
        const void* hit = std::memchr(data.data() + from - 1, '\n', data.size() - (from - 1));
        return hit == nullptr ? npos : static_cast<const char*>(hit) - data.data() + 1;
      }
      case CutKind::kBetweenWords:
      case CutKind::kBetweenWordsAndLines:
        for (size_t p = from; p + 1 < data.size(); ++p) {
          if (IsCut(data, p)) return p;
        }
        return npos;
      case CutKind::kNever: return npos;
    }
    return npos;
  }

  // The last cut p (p >= 1), or npos.
  size_t LastCut(std::string_view data) const {
    switch (kind_) {
      case CutKind::kLine: {
        size_t newline = data.rfind('\n');
        return newline == std::string_view::npos ? npos : newline + 1;
      }
      case CutKind::kBetweenWords:
      case CutKind::kBetweenWordsAndLines:
        for (size_t p = data.size() < 2 ? 0 : data.size() - 2; p >= 1; --p) {
          if (IsCut(data, p)) return p;
        }
        return npos;
      case CutKind::kNever: return npos;
    }
    return npos;
  }

  // How many bytes before a cut decide it (from p - lookbehind()).
  size_t lookbehind() const { return kind_ == CutKind::kBetweenWordsAndLines ? 4 : 1; }

  // How many bytes past a cut FindCut needs to have seen before it can report it.
  size_t lookahead() const {
    switch (kind_) {
      case CutKind::kBetweenWords: return 2;
      case CutKind::kBetweenWordsAndLines: return 3;
      default: return 0;
    }
  }

 private:
  static bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
  static bool IsWordCut(std::string_view d, size_t p) {
    return d[p] == ' ' && IsAsciiLetter(d[p - 1]) && IsAsciiLetter(d[p + 1]);
  }
  // p < d.size() - 1 (FindCut's and LastCut's loops).
  static bool IsLineCut(std::string_view d, size_t p) {
    if (p < 2 || d[p - 1] != '\n') return false;
    const auto* s = reinterpret_cast<const unsigned char*>(d.data());
    const CodePoint next = DecodeCodePoint(s, d.size(), p);
    if (!IsAsciiLetter(d[p]) && !(next.cp >= 0x4000 && next.cp <= 0x9FFF)) return false;
    if (d[p - 2] >= 0x21 && d[p - 2] <= 0x7E) return true;
    if (p < 4) return false;
    const CodePoint before = DecodeCodePoint(s, d.size(), p - 4);  // a 3-byte character?
    return before.len == 3 && before.cp >= 0x3001 && before.cp <= 0x9FFF;
  }
  bool IsCut(std::string_view d, size_t p) const {
    return IsWordCut(d, p) || (kind_ == CutKind::kBetweenWordsAndLines && IsLineCut(d, p));
  }

  CutKind kind_;
};

}  // namespace tokenmill
