#include "pretokenize/normalizer.h"

#include <unicode/bytestream.h>
#include <unicode/casemap.h>
#include <unicode/normalizer2.h>
#include <unicode/stringpiece.h>
#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "common/strings.h"
#include "common/utf8.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// Performance notes (bench/normalize_bench.cc, RESULTS.md "Normalization"):
// - ICU's normalizeUTF8 works on UTF-8 directly (no UTF-16 copy) and copies the spans that pass
//   its quick check unchanged; utf8proc decodes every code point into UTF-32 and composes it
//   back: 2.2-3.4x slower on poetry, 7-22x on brown.
// - ASCII is in every normal form and lowercases byte by byte, so the ASCII run at the start of
//   a text (less its last byte, which a combining mark after it could change) skips ICU, and
//   lowercasing runs ICU only on the non-ASCII runs.
// - Ill-formed UTF-8: ICU's normalizeUTF8 and utf8ToLower copy each ill-formed sequence
//   unchanged and treat it as a boundary (nothing combines or reorders across it); tests/
//   normalizer_test.cc checks this against a reference that cuts the text at those bytes
//   itself, so no validation pass is needed here.
// - ICU takes lengths as int32_t: longer texts go to it in pieces of at most kMaxIcuBytes, cut
//   where the cut changes nothing (before an ASCII byte, or before a code point that has a
//   normalization boundary before it; lowercasing, per code point, cuts before any lead byte).
// - BERT's steps run one after another, each over the whole text into a per-thread buffer
//   (clean_text and handle_chinese_chars share one pass): strip_accents needs ICU's NFD of the
//   whole text before it can drop marks. ASCII needs no NFD, so all-ASCII text skips ICU there.

namespace tokenmill {
namespace {

constexpr size_t kMaxIcuBytes = size_t{1} << 30;

[[noreturn]] void IcuFailed(const char* what, UErrorCode status) {
  std::fprintf(stderr, "tokenmill: ICU %s failed: %s\n", what, u_errorName(status));
  std::abort();
}

// Index of the first byte >= 0x80 in s[i, n), or n.
size_t AsciiEnd(const unsigned char* s, size_t n, size_t i) {
#if defined(__SSE2__)
  while (i + 16 <= n) {
    const unsigned mask = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(mask));
    i += 16;
  }
#endif
  while (i < n && s[i] < 0x80) ++i;
  return i;
}

// Index of the first byte < 0x80 in s[i, n), or n.
size_t NonAsciiEnd(const unsigned char* s, size_t n, size_t i) {
#if defined(__SSE2__)
  while (i + 16 <= n) {
    const unsigned ascii = ~static_cast<unsigned>(_mm_movemask_epi8(
                               _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)))) &
                           0xFFFFu;
    if (ascii != 0) return i + static_cast<size_t>(__builtin_ctz(ascii));
    i += 16;
  }
#endif
  while (i < n && s[i] >= 0x80) ++i;
  return i;
}

void AppendAsciiLowercase(const unsigned char* s, size_t n, std::string& out) {
  const size_t start = out.size();
  out.resize(start + n);
  char* dst = out.data() + start;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = s[i];
    dst[i] = static_cast<char>(c + (static_cast<unsigned char>(c - 'A') < 26 ? 0x20 : 0));
  }
}

// A byte position at most `limit` (< text.size()) that starts no continuation byte.
size_t LeadByteAtOrBefore(std::string_view text, size_t limit) {
  for (int back = 0; back < 3 && (static_cast<unsigned char>(text[limit]) & 0xC0) == 0x80; ++back) {
    --limit;
  }
  return limit;
}

// Lowercases text that holds no U+03A3 and is at most kMaxIcuBytes long.
void IcuLowercase(std::string_view text, std::string& out) {
  UErrorCode status = U_ZERO_ERROR;
  icu::StringByteSink<std::string> sink(&out);
  icu::CaseMap::utf8ToLower("", 0, icu::StringPiece(text.data(), static_cast<int32_t>(text.size())),
                            sink, nullptr, status);
  if (U_FAILURE(status)) IcuFailed("lowercasing", status);
}

// Lowercases `text` through ICU, code point by code point: "Σ" (CE A3, which can only be U+03A3
// since CE never continues a sequence) becomes "σ" here, never ICU's final "ς".
void IcuLowercaseNoFinalSigma(std::string_view text, std::string& out) {
  while (!text.empty()) {
    size_t end = text.find("\xCE\xA3");
    const bool sigma = end != std::string_view::npos;
    if (!sigma) end = text.size();
    if (end > kMaxIcuBytes) {
      end = LeadByteAtOrBefore(text, kMaxIcuBytes);
      IcuLowercase(text.substr(0, end), out);
      text.remove_prefix(end);
      continue;
    }
    IcuLowercase(text.substr(0, end), out);
    if (!sigma) return;
    out += "\xCF\x83";
    text.remove_prefix(end + 2);
  }
}

// ASCII runs at least this long are lowercased here; shorter ones (the punctuation NFKC makes of
// full-width forms in Chinese text) go to ICU with the text around them, one call instead of many.
constexpr size_t kAsciiRunByHand = 16;

void AppendLowercase(std::string_view text, std::string& out) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t pending = 0;  // start of the text not yet lowercased
  size_t i = 0;
  while ((i = NonAsciiEnd(s, n, i)) < n) {
    const size_t ascii_end = AsciiEnd(s, n, i);
    if (ascii_end - i >= kAsciiRunByHand) {
      IcuLowercaseNoFinalSigma(text.substr(pending, i - pending), out);
      AppendAsciiLowercase(s + i, ascii_end - i, out);
      pending = ascii_end;
    }
    i = ascii_end;
  }
  IcuLowercaseNoFinalSigma(text.substr(pending), out);
}

// Where to cut text longer than kMaxIcuBytes for normalization: the last position at or before
// kMaxIcuBytes with a boundary before it (an ASCII byte, an ill-formed byte, a code point
// hasBoundaryBefore). Without one in the whole first GiB (a GiB of combining marks), before a
// code point there: the only place where the result can differ from ICU's on the whole text.
size_t NormalizationCut(const icu::Normalizer2& form, std::string_view text) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  for (size_t cut = kMaxIcuBytes; cut > 0; --cut) {
    if (s[cut] < 0x80) return cut;
    if ((s[cut] & 0xC0) == 0x80) continue;
    int32_t i = 0;
    UChar32 c;
    U8_NEXT(s + cut, i, static_cast<int32_t>(std::min<size_t>(4, text.size() - cut)), c);
    if (c < 0 || form.hasBoundaryBefore(c)) return cut;
  }
  return LeadByteAtOrBefore(text, kMaxIcuBytes);
}

// The normal form `form` of `text` (well-formed or not) appended to `out`.
void AppendNormalForm(const icu::Normalizer2& form, std::string_view text, std::string& out) {
  while (!text.empty()) {
    const size_t piece = text.size() > kMaxIcuBytes ? NormalizationCut(form, text) : text.size();
    UErrorCode status = U_ZERO_ERROR;
    icu::StringByteSink<std::string> sink(&out);
    form.normalizeUTF8(0, icu::StringPiece(text.data(), static_cast<int32_t>(piece)), sink,
                       nullptr, status);
    if (U_FAILURE(status)) IcuFailed("normalization", status);
    text.remove_prefix(piece);
  }
}

// How many bytes at the start of `text` are in every form and need no normalization: its
// ASCII prefix, less the prefix's last byte when more text follows (a combining mark after it
// could combine with it).
size_t PrefixInEveryForm(std::string_view text) {
  const size_t ascii_end =
      AsciiEnd(reinterpret_cast<const unsigned char*>(text.data()), text.size(), 0);
  if (ascii_end == text.size()) return ascii_end;
  return ascii_end == 0 ? 0 : ascii_end - 1;
}

// Hugging Face's is_chinese_char (normalizers/bert.rs), range for range.
bool IsBertChineseChar(UChar32 c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// Hugging Face's is_control for a code point past ASCII: Cc, Cf or Co.
bool IsBertControl(UChar32 c) {
  return (U_GET_GC_MASK(c) & (U_GC_CC_MASK | U_GC_CF_MASK | U_GC_CO_MASK)) != 0;
}

// BertNormalizer's clean_text and handle_chinese_chars (as `clean` and `chinese` say) in one
// pass: each takes one code point and gives zero or more, so doing both per code point is doing
// one after the other. Invalid bytes are copied.
void AppendCleanedText(std::string_view text, bool clean, bool chinese, std::string& out) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  out.reserve(out.size() + n);
  for (size_t i = 0; i < n;) {
    if (s[i] < 0x80) {  // ASCII: only controls change ("\t", "\n", "\r" are whitespace)
      const unsigned char b = s[i++];
      if (clean && (b < 0x20 || b == 0x7F)) {
        if (b == '\t' || b == '\n' || b == '\r') out.push_back(' ');
      } else {
        out.push_back(static_cast<char>(b));
      }
      continue;
    }
    const CodePoint c = DecodeCodePoint(s, n, i);
    const std::string_view bytes = text.substr(i, c.len);
    i += c.len;
    if (c.cp < 0) {
      out.append(bytes);
      continue;
    }
    if (clean) {
      if (c.cp == 0xFFFD || IsBertControl(c.cp)) continue;
      if (u_isUWhiteSpace(c.cp)) {
        out.push_back(' ');
        continue;
      }
    }
    if (chinese && IsBertChineseChar(c.cp)) {
      out.push_back(' ');
      out.append(bytes);
      out.push_back(' ');
      continue;
    }
    out.append(bytes);
  }
}

// `text` without its nonspacing marks (Mn); invalid bytes are copied.
void AppendWithoutMarks(std::string_view text, std::string& out) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  out.reserve(out.size() + n);
  size_t kept = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < n;) {
    i = AsciiEnd(s, n, i);
    if (i == n) break;
    const CodePoint c = DecodeCodePoint(s, n, i);
    if (c.cp >= 0 && (U_GET_GC_MASK(c.cp) & U_GC_MN_MASK) != 0) {
      out.append(text.substr(kept, i - kept));
      kept = i + c.len;
    }
    i += c.len;
  }
  out.append(text.substr(kept));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Normalizer>> Normalizer::Create(const NormalizerConfig& config) {
  const icu::Normalizer2* form = nullptr;
  if (config.form != NormalForm::kNone) {
    UErrorCode status = U_ZERO_ERROR;
    switch (config.form) {
      case NormalForm::kNfc:
        form = icu::Normalizer2::getNFCInstance(status);
        break;
      case NormalForm::kNfkc:
        form = icu::Normalizer2::getNFKCInstance(status);
        break;
      default:
        return absl::InvalidArgumentError(
            StrCat("unknown normal form ", static_cast<int>(config.form)));
    }
    if (U_FAILURE(status) || form == nullptr) {
      return absl::InternalError(StrCat("ICU cannot give the normal form ",
                                              NormalFormName(config.form), ": ",
                                              u_errorName(status)));
    }
  }
  const icu::Normalizer2* nfd = nullptr;
  if (config.strip_accents) {
    UErrorCode status = U_ZERO_ERROR;
    nfd = icu::Normalizer2::getNFDInstance(status);
    if (U_FAILURE(status) || nfd == nullptr) {
      return absl::InternalError(
          StrCat("ICU cannot give NFD (for strip_accents): ", u_errorName(status)));
    }
  }
  return std::unique_ptr<Normalizer>(new Normalizer(config, form, nfd));
}

void Normalizer::NormalizeWithBertSteps(std::string_view text, std::string& out) const {
  const NormalizerConfig& c = config_;
  const bool form = form_ != nullptr, clean = c.clean_text || c.handle_chinese_chars;
  thread_local std::string buffers[2];
  int next = 0;
  // Runs one step on `text`: into `out` when it is the last, else into the next buffer, which
  // `text` then views.
  auto step = [&](bool last, auto&& append) {
    if (last) {
      append(text, out);
      return;
    }
    std::string& into = buffers[next];
    next ^= 1;
    into.clear();
    append(text, into);
    text = into;
  };
  if (form) {
    step(!clean && !c.strip_accents && !c.lowercase, [&](std::string_view t, std::string& o) {
      const size_t prefix = PrefixInEveryForm(t);
      o.append(t.substr(0, prefix));
      AppendNormalForm(*form_, t.substr(prefix), o);
    });
  }
  if (clean) {
    step(!c.strip_accents && !c.lowercase, [&](std::string_view t, std::string& o) {
      AppendCleanedText(t, c.clean_text, c.handle_chinese_chars, o);
    });
  }
  if (c.strip_accents) {
    step(!c.lowercase, [&](std::string_view t, std::string& o) {
      if (AsciiEnd(reinterpret_cast<const unsigned char*>(t.data()), t.size(), 0) == t.size()) {
        o.append(t);
        return;
      }
      thread_local std::string decomposed;
      decomposed.clear();
      AppendNormalForm(*nfd_, t, decomposed);
      AppendWithoutMarks(decomposed, o);
      if (decomposed.capacity() > (size_t{64} << 20)) std::string().swap(decomposed);
    });
  }
  if (c.lowercase) step(true, [](std::string_view t, std::string& o) { AppendLowercase(t, o); });
  for (std::string& buffer : buffers) {
    if (buffer.capacity() > (size_t{64} << 20)) std::string().swap(buffer);
  }
}

void Normalizer::Normalize(std::string_view text, std::string& out) const {
  if (config_.bert()) {
    NormalizeWithBertSteps(text, out);
    return;
  }
  if (form_ == nullptr) {
    if (config_.lowercase) {
      AppendLowercase(text, out);
    } else {
      out.append(text);
    }
    return;
  }
  const size_t prefix = PrefixInEveryForm(text);
  if (!config_.lowercase) {
    out.append(text.substr(0, prefix));
    AppendNormalForm(*form_, text.substr(prefix), out);
    return;
  }
  AppendLowercase(text.substr(0, prefix), out);
  if (prefix == text.size()) return;
  thread_local std::string normalized;
  normalized.clear();
  AppendNormalForm(*form_, text.substr(prefix), normalized);
  AppendLowercase(normalized, out);
  if (normalized.capacity() > (size_t{64} << 20)) std::string().swap(normalized);
}

}  // namespace tokenmill
