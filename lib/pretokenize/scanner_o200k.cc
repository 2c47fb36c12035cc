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

size_t O200kPieceEnd(const Text& t, size_t p) {
  const DecodedChar c0 = t.At(p);
  if (c0.cls & kClassInvalid) return p + 1;
  const unsigned char b0 = t.s[p];
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
  // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
  if (IsOther(c0.cls)) return t.RunBytes(t.RunOther(p), "\r\n/");
  if (b0 == ' ' && q < t.n && IsOther(t.At(q).cls)) return t.RunBytes(t.RunOther(q), "\r\n/");
  // \s*[\r\n]+|\s+(?!\S)|\s+
  const Text::SpaceRun run = t.ScanSpace(p);
  if (run.after_newline != 0) return run.after_newline;
  return t.SpaceRunEnd(p, run);
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
