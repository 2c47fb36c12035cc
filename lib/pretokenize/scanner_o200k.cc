// The o200k pattern (GPT-4o), as PCRE runs it. With U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}],
// W = [\p{Ll}\p{Lm}\p{Lo}\p{M}], P = [^\r\n\p{L}\p{N}], C = (?i:'s|'t|'re|'ve|'m|'ll|'d):
//   P?U*W+C?|P?U+W*C?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
// Note that P contains the marks (\p{M}) and whitespace, so `P?` may take a mark that U or W
// would also take; the scanner tries the choices in PCRE's backtracking order.
#include "pretokenize/preset_scanners.h"
#include "pretokenize/scanner_util.h"

namespace tokenmill {
namespace {

using scanner::IsOther;
using scanner::Text;

// End of the run of W = [\p{Ll}\p{Lm}\p{Lo}\p{M}] from i (ASCII: [a-z]).
size_t RunLower(const Text& t, size_t i) {
  while (i < t.n) {
    const unsigned char b = t.s[i];
    if (b < 0x80) {
      if (!scanner::IsAsciiLower(b)) return i;
      i = scanner::AsciiRunEnd<0, 'a'>(t.s, t.n, i + 1);
    } else {
      const DecodedChar c = DecodeNonAscii(t.s + i, t.s + t.n);
      if (!(c.cls & kClassLower)) return i;
      i += c.len;
    }
  }
  return i;
}

// End of the run of U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] from i (ASCII: [A-Z]).
size_t RunUpper(const Text& t, size_t i) {
  while (i < t.n) {
    const unsigned char b = t.s[i];
    if (b < 0x80) {
      if (!scanner::IsAsciiUpper(b)) return i;
      i = scanner::AsciiRunEnd<0, 'A'>(t.s, t.n, i + 1);
    } else {
      const DecodedChar c = DecodeNonAscii(t.s + i, t.s + t.n);
      if (!(c.cls & kClassUpper)) return i;
      i += c.len;
    }
  }
  return i;
}

// End of `U*W+` at q, or 0 if it does not match. Greedy U* backs off until W+ can match: if the
// character after the U run is in W, W+ runs on from there; otherwise W+ takes the last
// character of the U run that is also in W (and nothing after it, which is not in W). ASCII
// capitals are in U only, so an ASCII stretch of the U run never holds that character.
size_t UpperThenLower(const Text& t, size_t q) {
  size_t i = q;
  size_t after_last_w = 0;
  while (i < t.n) {
    const unsigned char b = t.s[i];
    if (b < 0x80) {
      if (scanner::IsAsciiUpper(b)) {
        i = scanner::AsciiRunEnd<0, 'A'>(t.s, t.n, i + 1);
        continue;
      }
      if (scanner::IsAsciiLower(b)) return RunLower(t, i);
      break;
    }
    const DecodedChar c = DecodeNonAscii(t.s + i, t.s + t.n);
    if (!(c.cls & kClassUpper)) {
      if (c.cls & kClassLower) return RunLower(t, i);
      break;
    }
    i += c.len;
    if (c.cls & kClassLower) after_last_w = i;
  }
  return after_last_w;
}

// End of `U+W*` at q, or 0 if it does not match.
size_t UpperRunThenLower(const Text& t, size_t q) {
  const size_t a = RunUpper(t, q);
  if (a == q) return 0;
  return RunLower(t, a);
}

// C? after a letter run ending at e.
size_t WithContraction(const Text& t, size_t e) {
  const size_t c = t.Contraction(e, /*caseless=*/true);
  return c != 0 ? c : e;
}

// The branches after the letters' and digits': ` ?[^\s\p{L}\p{N}]+[\r\n/]*`, then
// `\s*[\r\n]+|\s+(?!\S)|\s+`, for a piece at p whose first character (class cls0, first byte
// b0) ends at q.
size_t O200kOtherOrSpaceEnd(const Text& t, size_t p, uint8_t cls0, unsigned char b0, size_t q) {
  if (IsOther(cls0)) return t.RunBytes(t.RunOther(p), "\r\n/");
  if (b0 == ' ' && q < t.n && IsOther(t.At(q).cls)) return t.RunBytes(t.RunOther(q), "\r\n/");
  const Text::SpaceRun run = t.ScanSpace(p);
  if (run.after_newline != 0) return run.after_newline;
  return t.SpaceRunEnd(p, run);
}

// The end of [A-Z]*[a-z]* from an ASCII letter at x, or 0 when that run ends at a non-ASCII
// byte (a letter or mark there may belong to U or W). Ending at an ASCII byte, it is what both
// U*W+ and U+W* at x give: ASCII capitals are in U only, small letters in W only, so W+ takes
// the small letters after the capitals, or (none there) U+ takes the capitals.
size_t AsciiCaseRunEnd(const Text& t, size_t x) {
  size_t e;
#if defined(__SSE2__)
  if (x + 16 <= t.n) {
    // Most words end within 16 bytes: both runs from one load, the capitals' bits and the
    // small letters' bits of the 16 bytes.
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t.s + x));
    auto in_range = [&](char first) {  // bytes b with b - first < 26, unsigned
      const __m128i d = _mm_xor_si128(_mm_sub_epi8(v, _mm_set1_epi8(first)), _mm_set1_epi8(-128));
      return static_cast<unsigned>(_mm_movemask_epi8(_mm_cmplt_epi8(d, _mm_set1_epi8(26 - 128))));
    };
    const unsigned upper = in_range('A'), lower = in_range('a');
    const unsigned u = static_cast<unsigned>(__builtin_ctz(~upper));  // 16: all capitals
    const unsigned after = ~lower & (0xFFFFFFFFu << u) & 0xFFFFu;     // no small letter, from u
    if (after != 0) {
      e = x + static_cast<size_t>(__builtin_ctz(after));
    } else {
      e = scanner::AsciiRunEnd<0, 'a'>(
          t.s, t.n, u < 16 ? x + 16 : scanner::AsciiRunEnd<0, 'A'>(t.s, t.n, x + 16));
    }
    return e == t.n || t.s[e] < 0x80 ? e : 0;
  }
#endif
  e = scanner::AsciiRunEnd<0, 'a'>(t.s, t.n, scanner::AsciiRunEnd<0, 'A'>(t.s, t.n, x));
  return e == t.n || t.s[e] < 0x80 ? e : 0;
}

size_t O200kPieceEnd(const Text& t, size_t p) {
  // ASCII first, where the pattern's choices are decided without trying them in turn: a
  // letter run ("word", "Word", "WORD"), after a prefix character (" word", "(Word"), digits,
  // and pieces that cannot hold a letter (the next byte is ASCII and no letter).
  const unsigned char b0 = t.s[p];
  if (b0 < 0x80) {
    if (scanner::IsAsciiLetter(b0)) {
      if (const size_t e = AsciiCaseRunEnd(t, p)) return WithContraction(t, e);
    } else if (static_cast<unsigned char>(b0 - '0') < 10) {
      return t.RunDigits(p, 3);
    } else if (p + 1 == t.n || t.s[p + 1] < 0x80) {
      // P = [^\r\n\p{L}\p{N}]: any other ASCII byte but \r and \n.
      if (p + 1 < t.n && scanner::IsAsciiLetter(t.s[p + 1]) && b0 != '\r' && b0 != '\n') {
        if (const size_t e = AsciiCaseRunEnd(t, p + 1)) return WithContraction(t, e);
      } else {
        return O200kOtherOrSpaceEnd(t, p, AsciiClass(b0), b0, p + 1);
      }
    }
  }
  const DecodedChar c0 = t.At(p);
  if (c0.cls & kClassInvalid) return p + 1;
  const bool can_prefix = !(c0.cls & (kClassL | kClassN)) && b0 != '\r' && b0 != '\n';
  const size_t q = p + c0.len;
  // P?U*W+C?
  if (can_prefix && q < t.n) {
    if (size_t e = UpperThenLower(t, q)) return WithContraction(t, e);
  }
  if (size_t e = UpperThenLower(t, p)) return WithContraction(t, e);
  // P?U+W*C?
  if (can_prefix && q < t.n) {
    if (size_t e = UpperRunThenLower(t, q)) return WithContraction(t, e);
  }
  if (size_t e = UpperRunThenLower(t, p)) return WithContraction(t, e);
  // \p{N}{1,3}
  if (c0.cls & kClassN) return t.RunDigits(p, 3);
  return O200kOtherOrSpaceEnd(t, p, c0.cls, b0, q);
}

class O200kScanner final : public PreTokenizer {
 public:
  void Split(std::string_view text,
             absl::FunctionRef<void(std::string_view)> on_piece) const override {
    scanner::SplitWith(text, on_piece, O200kPieceEnd);
  }
};

}  // namespace

std::unique_ptr<PreTokenizer> MakeO200kScanner() { return std::make_unique<O200kScanner>(); }

}  // namespace tokenmill
