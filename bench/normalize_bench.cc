// Normalization speed (issue 20): ICU 72 against utf8proc 2.8 (both Unicode 15.0) on the same
// lines, one thread, for NFC, NFKC and NFKC + lowercase, each library through its fastest API
// that gives the right answer:
//   ICU: Normalizer2::normalizeUTF8 (works on UTF-8 directly and copies the quick-check-yes
//        spans unchanged), then CaseMap::utf8ToLower (root locale) on the normalized text.
//   utf8proc: utf8proc_decompose_custom into a reused code point buffer, utf8proc_normalize_utf32
//        (what utf8proc_map does, less its malloc per call), then utf8proc_tolower per code point
//        (+ U+0130 → "i̇", the one unconditional full lowercase mapping that is not simple): the
//        tests' oracle (tests/reference/utf8proc_normalizer.h) on well-formed text.
// Lowercasing here is per code point (Hugging Face's Lowercase: char::to_lowercase), so ICU's
// final-sigma context is cut off by lowercasing U+03A3 alone.
// Inputs: brown (whole, 6 MB) and the first 32 MB of poetry, cut at a line end; every line
// (with its newline) is one call. Arguments: corpus, form (0 NFC, 1 NFKC, 2 NFKC + lowercase).
// BM_NormalizeLibrariesAgree runs both once and counts the lines whose outputs differ.
// BM_Normalizer runs the product (lib/pretokenize/normalizer.h) on the same lines.
// Rerun: build/tokenmill_bench --benchmark_filter=Normalize --benchmark_repetitions=5
//        --benchmark_report_aggregates_only=true   (RESULTS.md: "Normalization").
#include <benchmark/benchmark.h>
#include <unicode/bytestream.h>
#include <unicode/casemap.h>
#include <unicode/normalizer2.h>
#include <unicode/stringpiece.h>

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench_corpus.h"
#include "pretokenize/normalizer.h"
#include "reference/utf8proc_normalizer.h"

namespace tokenmill {
namespace {

constexpr const char* kCorpora[] = {"brown", "poetry"};
constexpr const char* kForms[] = {"nfc", "nfkc", "nfkc+lower"};
constexpr size_t kSliceBytes = 32u << 20;

struct Lines {
  std::vector<std::string_view> lines;
  size_t bytes = 0;
};

// The corpus's first kSliceBytes (cut after a newline), as lines with their newlines.
const Lines& CorpusLines(int corpus) {
  static Lines cache[2];
  Lines& lines = cache[corpus];
  if (!lines.lines.empty()) return lines;
  std::string_view text = bench::BenchCorpus(kCorpora[corpus]);
  if (text.size() > kSliceBytes) {
    size_t end = text.rfind('\n', kSliceBytes);
    text = text.substr(0, end == std::string_view::npos ? kSliceBytes : end + 1);
  }
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string_view::npos ? text.size() : end + 1;
    lines.lines.push_back(text.substr(start, end - start));
    start = end;
  }
  lines.bytes = text.size();
  return lines;
}

NormalizerConfig ConfigOf(int form) {
  NormalizerConfig config;
  config.form = form == 0 ? NormalForm::kNfc : NormalForm::kNfkc;
  config.lowercase = form == 2;
  return config;
}

class IcuSide {
 public:
  explicit IcuSide(int form) : lowercase_(form == 2) {
    UErrorCode status = U_ZERO_ERROR;
    normalizer_ = form == 0 ? icu::Normalizer2::getNFCInstance(status)
                            : icu::Normalizer2::getNFKCInstance(status);
    if (U_FAILURE(status)) normalizer_ = nullptr;
  }
  bool ok() const { return normalizer_ != nullptr; }

  void Run(std::string_view line, std::string& out) {
    UErrorCode status = U_ZERO_ERROR;
    if (!lowercase_) {
      icu::StringByteSink<std::string> sink(&out);
      normalizer_->normalizeUTF8(0, icu::StringPiece(line.data(), line.size()), sink, nullptr, status);
      return;
    }
    scratch_.clear();
    icu::StringByteSink<std::string> scratch_sink(&scratch_);
    normalizer_->normalizeUTF8(0, icu::StringPiece(line.data(), line.size()), scratch_sink, nullptr,
                               status);
    // Lowercase per code point: U+03A3 (CE A3) alone, everything between through ICU.
    std::string_view rest = scratch_;
    icu::StringByteSink<std::string> sink(&out);
    for (size_t sigma; (sigma = rest.find("\xCE\xA3")) != std::string_view::npos;) {
      icu::CaseMap::utf8ToLower("", 0, icu::StringPiece(rest.data(), sigma), sink, nullptr, status);
      out += "\xCF\x83";
      rest.remove_prefix(sigma + 2);
    }
    icu::CaseMap::utf8ToLower("", 0, icu::StringPiece(rest.data(), rest.size()), sink, nullptr, status);
  }

 private:
  const icu::Normalizer2* normalizer_ = nullptr;
  bool lowercase_;
  std::string scratch_;
};

// utf8proc on text known to be well-formed (the oracle's fast path; the corpora are valid).
class Utf8procSide {
 public:
  explicit Utf8procSide(int form) : normalizer_(ConfigOf(form)) {}
  bool Run(std::string_view line, std::string& out) {
    return normalizer_.NormalizeWellFormed(line, out);
  }

 private:
  testing::Utf8procNormalizer normalizer_;
};

template <typename Side>
void RunLines(benchmark::State& state, Side& side) {
  const Lines& lines = CorpusLines(static_cast<int>(state.range(0)));
  std::string out;
  out.reserve(lines.bytes * 2);
  for (auto _ : state) {
    out.clear();
    for (std::string_view line : lines.lines) side.Run(line, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * lines.bytes));
  state.counters["out_bytes"] = static_cast<double>(out.size());
  state.SetLabel(std::string(kCorpora[state.range(0)]) + "/" + kForms[state.range(1)]);
}

void BM_NormalizeIcu(benchmark::State& state) {
  IcuSide icu(static_cast<int>(state.range(1)));
  if (!icu.ok()) {
    state.SkipWithError("ICU has no such normalizer");
    return;
  }
  RunLines(state, icu);
}

void BM_NormalizeUtf8proc(benchmark::State& state) {
  Utf8procSide utf8proc(static_cast<int>(state.range(1)));
  RunLines(state, utf8proc);
}

void BM_Normalizer(benchmark::State& state) {
  absl::StatusOr<std::unique_ptr<Normalizer>> normalizer =
      Normalizer::Create(ConfigOf(static_cast<int>(state.range(1))));
  if (!normalizer.ok()) {
    state.SkipWithError(std::string(normalizer.status().message()).c_str());
    return;
  }
  struct ProductSide {
    const Normalizer& normalizer;
    void Run(std::string_view line, std::string& out) { normalizer.Normalize(line, out); }
  } product{**normalizer};
  RunLines(state, product);
}

// Both libraries once over the slice: counters "lines" and "differing"; the first differences
// go to stderr.
void BM_NormalizeLibrariesAgree(benchmark::State& state) {
  const Lines& lines = CorpusLines(static_cast<int>(state.range(0)));
  IcuSide icu(static_cast<int>(state.range(1)));
  Utf8procSide utf8proc(static_cast<int>(state.range(1)));
  size_t differing = 0, refused = 0;
  for (auto _ : state) {
    differing = refused = 0;
    std::string a, b;
    for (std::string_view line : lines.lines) {
      a.clear();
      b.clear();
      icu.Run(line, a);
      if (!utf8proc.Run(line, b)) {
        ++refused;
        continue;
      }
      if (a != b && ++differing <= 3) {
        std::fprintf(stderr, "%s/%s differ on %.*s  icu: %s  utf8proc: %s\n",
                     kCorpora[state.range(0)], kForms[state.range(1)],
                     static_cast<int>(line.size()), line.data(), a.c_str(), b.c_str());
      }
    }
  }
  state.counters["lines"] = static_cast<double>(lines.lines.size());
  state.counters["differing"] = static_cast<double>(differing);
  state.counters["refused"] = static_cast<double>(refused);
  state.SetLabel(std::string(kCorpora[state.range(0)]) + "/" + kForms[state.range(1)]);
}

void CorpusFormArgs(benchmark::internal::Benchmark* b) {
  for (int corpus : {0, 1}) {
    for (int form : {0, 1, 2}) b->Args({corpus, form});
  }
}

// One pass over the input per run; --benchmark_repetitions=5 gives the median of 5.
BENCHMARK(BM_NormalizeIcu)->Apply(CorpusFormArgs)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NormalizeUtf8proc)->Apply(CorpusFormArgs)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Normalizer)->Apply(CorpusFormArgs)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NormalizeLibrariesAgree)->Apply(CorpusFormArgs)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tokenmill
