// Building blocks of the hand-written preset scanners (scanner_*.cc): each scanner finds, at a
// piece start, where PCRE would end the match of its preset's pattern (leftmost-first
// alternation, greedy quantifiers), using these run and look-ahead helpers.
//
// A position is a byte offset into the text; a character is one decoded UTF-8 sequence or one
// invalid byte (class kClassInvalid, which no class of a pattern contains: it ends every run, and
// look-ahead sees it like the end of the text, as PCRE2 does with PCRE2_MATCH_INVALID_UTF).
#pragma once

#include <cstddef>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/functional/function_ref.h"
#include "pretokenize/unicode_classes.h"

namespace tokenmill::scanner {

// Any class bit that takes a character out of [^\s\p{L}\p{N}].
inline constexpr uint8_t kNotOther = kClassL | kClassN | kClassSpace | kClassInvalid;

inline bool IsOther(uint8_t cls) { return (cls & kNotOther) == 0; }

// End of the run in s[i..n) of ASCII bytes b with ((b | kFold) - kBase) < 26, i.e. [A-Za-z]
// (kFold 0x20, kBase 'a'), [a-z] (0, 'a') or [A-Z] (0, 'A'); 16 bytes at a time with SSE2.
template <unsigned char kFold, unsigned char kBase>
inline size_t AsciiRunEnd(const unsigned char* s, size_t n, size_t i) {
#if defined(__SSE2__)
  while (i + 16 <= n) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i t = _mm_sub_epi8(_mm_or_si128(v, _mm_set1_epi8(static_cast<char>(kFold))),
                                   _mm_set1_epi8(static_cast<char>(kBase)));
    // t < 26 as unsigned bytes: compare signed after flipping the top bit.
    const __m128i in_run =
        _mm_cmplt_epi8(_mm_xor_si128(t, _mm_set1_epi8(-128)), _mm_set1_epi8(26 - 128));
    const unsigned stop = ~static_cast<unsigned>(_mm_movemask_epi8(in_run)) & 0xFFFFu;
    if (stop != 0) return i + static_cast<size_t>(__builtin_ctz(stop));
    i += 16;
  }
#endif
  while (i < n && static_cast<unsigned char>((s[i] | kFold) - kBase) < 26) ++i;
  return i;
}

inline size_t AsciiLetterRunEnd(const unsigned char* s, size_t n, size_t i) {
  return AsciiRunEnd<0x20, 'a'>(s, n, i);
}

inline bool IsAsciiLetter(unsigned char b) {
  return static_cast<unsigned char>((b | 0x20) - 'a') < 26;
}
inline bool IsAsciiUpper(unsigned char b) { return static_cast<unsigned char>(b - 'A') < 26; }
inline bool IsAsciiLower(unsigned char b) { return static_cast<unsigned char>(b - 'a') < 26; }

struct Text {
  const unsigned char* s;
  size_t n;

  DecodedChar At(size_t i) const { return DecodeAt(s, n, i); }

  // End of the longest run from i of characters whose class has a bit of `mask`.
  size_t RunAny(size_t i, uint8_t mask) const {
    while (i < n) {
      const unsigned char b = s[i];
      if (b < 0x80) {
        if (!(AsciiClass(b) & mask)) break;
        ++i;
      } else {
        DecodedChar c = DecodeNonAscii(s + i, s + n);
        if (!(c.cls & mask)) break;
        i += c.len;
      }
    }
    return i;
  }

  // End of the longest run of \p{L} from i.
  size_t RunLetters(size_t i) const {
    while (i < n) {
      const unsigned char b = s[i];
      if (b < 0x80) {
        if (static_cast<unsigned char>((b | 0x20) - 'a') >= 26) return i;
        i = AsciiLetterRunEnd(s, n, i + 1);
      } else if ((b & 0xF0) == 0xE0 && n - i >= 3 && IsThreeByteLetter(s + i)) {
        i += 3;  // CJK and most other scripts' letters
      } else {
        const DecodedChar c = DecodeNonAscii(s + i, s + n);
        if (!(c.cls & kClassL)) return i;
        i += c.len;
      }
    }
    return i;
  }

  // End of the longest run from i of [^\s\p{L}\p{N}].
  size_t RunOther(size_t i) const {
    while (i < n) {
      const unsigned char b = s[i];
      if (b < 0x80) {
        if (AsciiClass(b) & kNotOther) break;
        ++i;
      } else {
        DecodedChar c = DecodeNonAscii(s + i, s + n);
        if (c.cls & kNotOther) break;
        i += c.len;
      }
    }
    return i;
  }

  // End of the longest run from i of bytes in `set` (ASCII only).
  size_t RunBytes(size_t i, std::string_view set) const {
    while (i < n && set.find(static_cast<char>(s[i])) != std::string_view::npos) ++i;
    return i;
  }

  // End of up to `max` characters of class kClassN from i.
  size_t RunDigits(size_t i, int max) const {
    for (int k = 0; k < max && i < n; ++k) {
      DecodedChar c = At(i);
      if (!(c.cls & kClassN)) break;
      i += c.len;
    }
    return i;
  }

  // Where a contraction starting at i ends: 's|'t|'re|'ve|'m|'ll|'d, or 0 if none matches.
  // Caseless as (?i:...) in PCRE2 and Rust: also 'S ... 'D and U+017F (long s, folds to s).
  size_t Contraction(size_t i, bool caseless) const {
    if (i + 1 >= n || s[i] != '\'') return 0;
    auto is = [&](size_t k, char lower) {
      return k < n && (s[k] == lower || (caseless && s[k] == lower - 'a' + 'A'));
    };
    if (is(i + 1, 's') || is(i + 1, 't') || is(i + 1, 'm') || is(i + 1, 'd')) return i + 2;
    if ((is(i + 1, 'r') || is(i + 1, 'v')) && is(i + 2, 'e')) return i + 3;
    if (is(i + 1, 'l') && is(i + 2, 'l')) return i + 3;
    if (caseless && i + 2 < n && s[i + 1] == 0xC5 && s[i + 2] == 0xBF) return i + 3;  // 'ſ
    return 0;
  }

  // The longest run of \s from `start`: where it ends, where its last character starts, and
  // the end of its last \r or \n (0 if it has none).
  struct SpaceRun {
    size_t end;
    size_t last;
    size_t after_newline;
  };
  SpaceRun ScanSpace(size_t start) const {
    SpaceRun run{start, start, 0};
    size_t i = start;
    while (i < n) {
      const unsigned char b = s[i];
      if (b < 0x80) {
        if (!(AsciiClass(b) & kClassSpace)) break;
        if (b == '\n' || b == '\r') run.after_newline = i + 1;
        run.last = i++;
      } else {
        DecodedChar c = DecodeNonAscii(s + i, s + n);
        if (!(c.cls & kClassSpace)) break;
        run.last = i;
        i += c.len;
      }
    }
    run.end = i;
    return run;
  }

  // `\s+(?!\S)|\s+` at `start`, the run of whitespace there being `run`: the whole run if
  // the text ends after it (or an invalid byte follows), else the run less its last character,
  // unless that leaves nothing.
  size_t SpaceRunEnd(size_t start, const SpaceRun& run) const {
    if (run.end == n || (At(run.end).cls & kClassInvalid)) return run.end;
    return run.last > start ? run.last : run.end;
  }
};

// Calls on_piece for each piece of `text`, using piece_end(text, start) -> end (> start).
template <typename PieceEnd>
inline void SplitWith(std::string_view text, absl::FunctionRef<void(std::string_view)> on_piece,
                      PieceEnd piece_end) {
  const Text t{reinterpret_cast<const unsigned char*>(text.data()), text.size()};
  size_t p = 0;
  while (p < t.n) {
    const size_t e = piece_end(t, p);
    on_piece(text.substr(p, e - p));
    p = e;
  }
}

}  // namespace tokenmill::scanner
