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
//  - kNever: the document is kept whole (file mode with a custom pattern or spaced specials).
//
// Contract: a cut position p satisfies 0 < p <= size; FindCut and LastCut only report p whose
// deciding bytes (p-1, and for kBetweenWords p and p+1) lie inside `data`.
#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>

namespace tokenmill {

enum class CutKind { kLine, kBetweenWords, kNever };

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
        for (size_t p = from; p + 1 < data.size(); ++p) {
          if (IsWordCut(data, p)) return p;
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
        for (size_t p = data.size() < 2 ? 0 : data.size() - 2; p >= 1; --p) {
          if (IsWordCut(data, p)) return p;
        }
        return npos;
      case CutKind::kNever: return npos;
    }
    return npos;
  }

  // How many bytes past a cut FindCut needs to have seen before it can report it.
  size_t lookahead() const { return kind_ == CutKind::kBetweenWords ? 2 : 0; }

 private:
  static bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
  static bool IsWordCut(std::string_view d, size_t p) {
    return d[p] == ' ' && IsAsciiLetter(d[p - 1]) && IsAsciiLetter(d[p + 1]);
  }

  CutKind kind_;
};

}  // namespace tokenmill
