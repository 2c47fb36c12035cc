// The cl100k pattern (GPT-4, Llama 3) and qwen2's (the same with \p{N} for \p{N}{1,3}), as PCRE
// runs it:
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
//   \s*[\r\n]+|\s+(?!\S)|\s+
#include "pretokenize/preset_scanners.h"
#include "pretokenize/scanner_util.h"

namespace tokenmill {
namespace {

using scanner::IsOther;
using scanner::Text;

template <int kMaxDigits>
size_t Cl100kPieceEnd(const Text& t, size_t p) {
  // The most frequent pieces first: "word" and " word" (ASCII start).
  const unsigned char b0 = t.s[p];
  if (scanner::IsAsciiLetter(b0)) return t.RunLetters(p + 1);
  if (b0 == ' ' && p + 1 < t.n && scanner::IsAsciiLetter(t.s[p + 1])) return t.RunLetters(p + 2);
  const DecodedChar c0 = t.At(p);
  if (c0.cls & kClassInvalid) return p + 1;
  if (size_t e = t.Contraction(p, /*caseless=*/true)) return e;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (c0.cls & kClassL) return t.RunLetters(p + c0.len);
  const bool is_newline = b0 == '\r' || b0 == '\n';
  if (!(c0.cls & kClassN) && !is_newline) {
    const size_t q = p + c0.len;
    if (q < t.n && (t.At(q).cls & kClassL)) return t.RunLetters(q);
  }
  // \p{N}{1,3}
  if (c0.cls & kClassN) return t.RunDigits(p, kMaxDigits);
  // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
  if (IsOther(c0.cls)) return t.RunBytes(t.RunOther(p), "\r\n");
  if (b0 == ' ' && p + 1 < t.n && IsOther(t.At(p + 1).cls)) {
    return t.RunBytes(t.RunOther(p + 1), "\r\n");
  }
  // \s*[\r\n]+|\s+(?!\S)|\s+
  const Text::SpaceRun run = t.ScanSpace(p);
  if (run.after_newline != 0) return run.after_newline;
  return t.SpaceRunEnd(p, run);
}

template <int kMaxDigits>
class Cl100kScanner final : public PreTokenizer {
 public:
  void Split(std::string_view text,
             absl::FunctionRef<void(std::string_view)> on_piece) const override {
    scanner::SplitWith(text, on_piece, Cl100kPieceEnd<kMaxDigits>);
  }
};

}  // namespace

std::unique_ptr<PreTokenizer> MakeCl100kScanner(int max_digits) {
  if (max_digits == 1) return std::make_unique<Cl100kScanner<1>>();
  return std::make_unique<Cl100kScanner<3>>();
}

}  // namespace tokenmill
