// The GPT-2 pattern (r50k, p50k), as PCRE runs it:
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
#include "pretokenize/preset_scanners.h"
#include "pretokenize/scanner_util.h"

namespace tokenmill {
namespace {

using scanner::IsOther;
using scanner::Text;

size_t Gpt2PieceEnd(const Text& t, size_t p) {
  // The most frequent pieces first: "word" and " word" (ASCII start).
  const unsigned char b0 = t.s[p];
  if (scanner::IsAsciiLetter(b0)) return t.RunLetters(p + 1);
  if (b0 == ' ' && p + 1 < t.n && scanner::IsAsciiLetter(t.s[p + 1])) return t.RunLetters(p + 2);
  const DecodedChar c0 = t.At(p);
  if (c0.cls & kClassInvalid) return p + 1;
  if (size_t e = t.Contraction(p, /*caseless=*/false)) return e;
  size_t q = p;
  uint8_t cls = c0.cls;
  if (t.s[p] == ' ' && p + 1 < t.n) {  // ` ?` before a letter, digit or other character
    const DecodedChar c1 = t.At(p + 1);
    if (!(c1.cls & (kClassSpace | kClassInvalid))) {
      q = p + 1;
      cls = c1.cls;
    }
  }
  if (cls & kClassL) return t.RunLetters(q);
  if (cls & kClassN) return t.RunAny(q, kClassN);
  if (IsOther(cls)) return t.RunOther(q);
  return t.SpaceRunEnd(p, t.ScanSpace(p));
}

class Gpt2Scanner final : public PreTokenizer {
 public:
  void Split(std::string_view text,
             absl::FunctionRef<void(std::string_view)> on_piece) const override {
    scanner::SplitWith(text, on_piece, Gpt2PieceEnd);
  }
};

}  // namespace

std::unique_ptr<PreTokenizer> MakeGpt2Scanner() { return std::make_unique<Gpt2Scanner>(); }

}  // namespace tokenmill
