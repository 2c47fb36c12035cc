#include "pretokenize/split_modes.h"

#include <unicode/uchar.h>

#include <array>

#include "common/utf8.h"
#include "pretokenize/custom_pattern.h"
#include "pretokenize/text_prep.h"
#include "pretokenize/unicode_classes.h"

namespace tokenmill {
namespace {

// Calls on_piece for each stretch of text between invalid bytes, cut by `cut_before(i)` (a
// piece starts at i), and for each invalid byte alone.
template <typename CutBefore>
void SplitValid(std::string_view text, absl::FunctionRef<void(std::string_view)> on_piece,
                CutBefore cut_before) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t start = 0;
  for (size_t i = 0; i < n;) {
    const DecodedChar c = DecodeAt(s, n, i);
    if (c.cls == kClassInvalid) {
      if (i > start) on_piece(text.substr(start, i - start));
      on_piece(text.substr(i, 1));
      start = ++i;
      continue;
    }
    if (i > start && cut_before(s, n, i)) {
      on_piece(text.substr(start, i - start));
      start = i;
    }
    i += c.len;
  }
  if (n > start) on_piece(text.substr(start));
}

class MetaspaceSplitter final : public PreTokenizer {
 public:
  void Split(std::string_view text,
             absl::FunctionRef<void(std::string_view piece)> on_piece) const override {
    SplitValid(text, on_piece, [](const unsigned char* s, size_t n, size_t i) {
      return std::string_view(reinterpret_cast<const char*>(s + i), n - i).starts_with(kMetaspace);
    });
  }
};

class NoSplitter final : public PreTokenizer {
 public:
  void Split(std::string_view text,
             absl::FunctionRef<void(std::string_view piece)> on_piece) const override {
    SplitValid(text, on_piece, [](const unsigned char*, size_t, size_t) { return false; });
  }
};

// Whether the piece is only White_Space characters.
bool AllSpace(std::string_view piece) {
  const auto* s = reinterpret_cast<const unsigned char*>(piece.data());
  for (size_t i = 0; i < piece.size();) {
    const DecodedChar c = DecodeAt(s, piece.size(), i);
    if ((c.cls & kClassSpace) == 0 || c.cls == kClassInvalid) return false;
    i += c.len;
  }
  return true;
}

class WhitespaceSplitter final : public PreTokenizer {
 public:
  explicit WhitespaceSplitter(std::unique_ptr<PreTokenizer> pattern)
      : pattern_(std::move(pattern)) {}
  void Split(std::string_view text,
             absl::FunctionRef<void(std::string_view piece)> on_piece) const override {
    // The pattern matches every non-space character, so what it leaves uncovered (pieces too,
    // custom_pattern.h) is whitespace, and invalid bytes, which are kept.
    pattern_->Split(text, [&](std::string_view piece) {
      if (!AllSpace(piece)) on_piece(piece);
    });
  }

 private:
  std::unique_ptr<PreTokenizer> pattern_;
};

enum class BertKind : uint8_t { kWord, kSpace, kPunctuation };

constexpr std::array<BertKind, 128> kAsciiBertKind = [] {
  std::array<BertKind, 128> kinds{};
  for (int b = 0; b < 128; ++b) {
    const bool space = b == ' ' || (b >= '\t' && b <= '\r');
    const bool alnum = (b >= '0' && b <= '9') || (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z');
    kinds[b] = space ? BertKind::kSpace
               : (b > ' ' && b < 0x7F && !alnum) ? BertKind::kPunctuation
                                                 : BertKind::kWord;
  }
  return kinds;
}();

// An invalid byte (cp < 0) is a piece alone, as punctuation is.
BertKind BertKindOf(int32_t cp) {
  if (cp < 0) return BertKind::kPunctuation;
  if (cp < 0x80) return kAsciiBertKind[cp];
  if (u_isUWhiteSpace(cp)) return BertKind::kSpace;
  return (U_GET_GC_MASK(cp) & U_GC_P_MASK) != 0 ? BertKind::kPunctuation : BertKind::kWord;
}

class BertSplitter final : public PreTokenizer {
 public:
  void Split(std::string_view text,
             absl::FunctionRef<void(std::string_view piece)> on_piece) const override {
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    size_t start = 0;  // where the current run of word characters began
    for (size_t i = 0; i < n;) {
      const CodePoint c = DecodeCodePoint(s, n, i);
      const BertKind kind = BertKindOf(c.cp);
      if (kind != BertKind::kWord) {
        if (i > start) on_piece(text.substr(start, i - start));
        if (kind == BertKind::kPunctuation) on_piece(text.substr(i, c.len));
        start = i + c.len;
      }
      i += c.len;
    }
    if (n > start) on_piece(text.substr(start));
  }
};

class DigitSplitter final : public PreTokenizer {
 public:
  explicit DigitSplitter(std::unique_ptr<PreTokenizer> inner) : inner_(std::move(inner)) {}
  void Split(std::string_view text,
             absl::FunctionRef<void(std::string_view piece)> on_piece) const override {
    inner_->Split(text, [&](std::string_view piece) {
      const auto* s = reinterpret_cast<const unsigned char*>(piece.data());
      const size_t n = piece.size();
      size_t start = 0;
      for (size_t i = 0; i < n;) {
        const DecodedChar c = DecodeAt(s, n, i);
        if (c.cls != kClassInvalid && (c.cls & kClassN) != 0) {
          if (i > start) on_piece(piece.substr(start, i - start));
          on_piece(piece.substr(i, c.len));
          start = i + c.len;
        }
        i += c.len;
      }
      if (n > start) on_piece(piece.substr(start));
    });
  }

 private:
  std::unique_ptr<PreTokenizer> inner_;
};

}  // namespace

std::unique_ptr<PreTokenizer> MakeMetaspaceSplitter() {
  return std::make_unique<MetaspaceSplitter>();
}

std::unique_ptr<PreTokenizer> MakeBertSplitter() { return std::make_unique<BertSplitter>(); }

std::unique_ptr<PreTokenizer> MakeNoSplitter() { return std::make_unique<NoSplitter>(); }

absl::StatusOr<std::unique_ptr<PreTokenizer>> MakeWhitespaceSplitter() {
  // Rust's \w: Alphabetic, marks, decimal digits, connector punctuation, joiners; \s:
  // White_Space. (PCRE2's own \w is narrower: letters, numbers and "_".)
  constexpr std::string_view kWord =
      R"([\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}])";
  constexpr std::string_view kOther =
      R"([^\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}\p{White_Space}])";
  std::string pattern = std::string(kWord) + "+|" + std::string(kOther) + "+";
  absl::StatusOr<std::unique_ptr<PreTokenizer>> compiled = CompileCustomPattern(pattern);
  if (!compiled.ok()) return compiled.status();
  return std::unique_ptr<PreTokenizer>(std::make_unique<WhitespaceSplitter>(*std::move(compiled)));
}

std::unique_ptr<PreTokenizer> MakeDigitSplitter(std::unique_ptr<PreTokenizer> inner) {
  return std::make_unique<DigitSplitter>(std::move(inner));
}

}  // namespace tokenmill
