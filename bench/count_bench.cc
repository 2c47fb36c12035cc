// Counting throughput (bytes of text per second, wall time): the whole counting stage (read,
// cut into batches, pre-tokenize, hash into per-thread tables, merge) on 1 and 2 threads,
// from the decompressed text (sharded plain file) and from the shared .zst (one decompressing
// stream handing out batches), next to the pre-tokenizer alone on the same lines, one thread.
// The targets: 2 threads >= 1.8x of 1 thread; 1-thread counting within 25% of
// BM_PreTokenizeLines. Compare figures from the same run only (the machine is shared).
#include <benchmark/benchmark.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/hash/hash.h"
#include "bench_corpus.h"
#include "count/count_corpus.h"
#include "count/word_count_cache.h"
#include "count/word_counts.h"
#include "pretokenize/pretokenizer.h"

namespace tokenmill {
namespace {

// The corpus decompressed into a file under /tmp (written once per process).
std::string PlainFile(const char* corpus) {
  std::string path = std::string("/tmp/tokenmill_count_bench_") + corpus + ".txt";
  static std::string written;
  if (written != path) {
    const std::string& text = bench::BenchCorpus(corpus);
    std::ofstream(path, std::ios::binary).write(text.data(), static_cast<std::streamsize>(text.size()));
    written = path;
  }
  return path;
}

void BM_PreTokenizeLines(benchmark::State& state, const char* corpus) {
  const std::string& text = bench::BenchCorpus(corpus);
  auto pretokenizer = PreTokenizer::Create(PreTokenizerConfig{}).value();
  for (auto _ : state) {
    size_t pieces = 0;
    std::string_view all(text);
    for (size_t start = 0; start < all.size();) {
      size_t newline = all.find('\n', start);
      size_t end = newline == std::string_view::npos ? all.size() : newline + 1;
      pretokenizer->Split(all.substr(start, end - start), [&](std::string_view) { ++pieces; });
      start = end;
    }
    benchmark::DoNotOptimize(pieces);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

// What counting costs beyond the split, with the split taken away: the corpus's pieces (split
// once, line by line, outside the timing) go through
//   0: the hash alone (absl's, as WordCounts uses);
//   1: the hash and one counter increment in an array of 2 x (distinct words) rounded up to a
//      power of two, indexed by the hash (no key stored or compared: cheaper than any exact
//      table, a floor for hash-based counting);
//   2: WordCounts::Add (the exact table, no cache in front);
//   3: WordCountCache::Add over a WordCounts (what counting does per piece);
//   4: as 1, with the hashes computed 16 pieces ahead and their counters prefetched, so that
//      the cache misses overlap (the floor at the best memory-level parallelism).
// Set against BM_PreTokenizeLines: the target (counting within 25% of the
// pre-tokenizer) leaves a third of the split's time for everything else.
void BM_CountPiecesOnly(benchmark::State& state, const char* corpus) {
  const std::string& text = bench::BenchCorpus(corpus);
  auto pretokenizer = PreTokenizer::Create(PreTokenizerConfig{}).value();
  std::vector<uint32_t> ends;  // piece i is text[ends[i - 1], ends[i])
  for (size_t start = 0; start < text.size();) {
    size_t newline = text.find('\n', start);
    size_t end = newline == std::string::npos ? text.size() : newline + 1;
    size_t at = start;
    pretokenizer->Split(std::string_view(text).substr(start, end - start), [&](std::string_view piece) {
      at += piece.size();
      ends.push_back(static_cast<uint32_t>(at));
    });
    start = end;
  }
  auto for_each_piece = [&](auto&& f) {
    uint32_t begin = 0;
    for (uint32_t end : ends) {
      f(std::string_view(text.data() + begin, end - begin));
      begin = end;
    }
  };
  size_t unique;
  {
    WordCounts counts;
    for_each_piece([&](std::string_view piece) { counts.Add(piece); });
    unique = counts.unique_words();
  }
  const int mode = static_cast<int>(state.range(0));
  size_t slots = 1;
  while (slots < 2 * unique) slots *= 2;
  for (auto _ : state) {
    if (mode == 0) {
      size_t sum = 0;
      for_each_piece([&](std::string_view piece) { sum += absl::Hash<std::string_view>{}(piece); });
      benchmark::DoNotOptimize(sum);
    } else if (mode == 1) {
      std::vector<uint64_t> counters(slots, 0);
      for_each_piece([&](std::string_view piece) {
        ++counters[absl::Hash<std::string_view>{}(piece) & (slots - 1)];
      });
      benchmark::DoNotOptimize(counters.data());
    } else if (mode == 4) {
      std::vector<uint64_t> counters(slots, 0);
      constexpr size_t kAhead = 16;
      size_t ring[kAhead];
      size_t i = 0;
      uint32_t begin = 0;
      for (uint32_t end : ends) {
        const size_t slot = absl::Hash<std::string_view>{}(std::string_view(text.data() + begin, end - begin)) & (slots - 1);
        __builtin_prefetch(&counters[slot], 1);
        if (i >= kAhead) ++counters[ring[i % kAhead]];
        ring[i % kAhead] = slot;
        ++i;
        begin = end;
      }
      for (size_t k = i > kAhead ? i - kAhead : 0; k < i; ++k) ++counters[ring[k % kAhead]];
      benchmark::DoNotOptimize(counters.data());
    } else if (mode == 2) {
      WordCounts counts;
      for_each_piece([&](std::string_view piece) { counts.Add(piece); });
      benchmark::DoNotOptimize(counts.unique_words());
    } else {
      WordCounts counts;
      {
        WordCountCache cache(&counts);
        for_each_piece([&](std::string_view piece) { cache.Add(piece); });
      }
      benchmark::DoNotOptimize(counts.unique_words());
    }
  }
  state.counters["pieces"] = static_cast<double>(ends.size());
  state.counters["distinct"] = static_cast<double>(unique);
  state.counters["ns_per_piece"] = benchmark::Counter(
      static_cast<double>(ends.size()), benchmark::Counter::kIsIterationInvariantRate |
                                            benchmark::Counter::kInvert);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

void RunCount(benchmark::State& state, const std::string& path, size_t text_bytes) {
  CountCorpusOptions options;
  options.inputs = {path};
  options.threads = static_cast<int>(state.range(0));
  options.progress = ProgressFormat::kNone;
  uint64_t unique = 0;
  for (auto _ : state) {
    absl::StatusOr<CorpusCounts> counts = CountCorpus(options);
    if (!counts.ok()) {
      state.SkipWithError(std::string(counts.status().message()).c_str());
      return;
    }
    unique = counts->words.unique_words();
  }
  state.counters["unique_words"] = static_cast<double>(unique);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text_bytes));
}

void BM_CountPlain(benchmark::State& state, const char* corpus) {
  RunCount(state, PlainFile(corpus), bench::BenchCorpus(corpus).size());
}

void BM_CountZstd(benchmark::State& state, const char* corpus) {
  RunCount(state, bench::BenchCorpusPath(corpus), bench::BenchCorpus(corpus).size());
}

BENCHMARK_CAPTURE(BM_PreTokenizeLines, linux_c_100m, "linux_c_100m")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_CountPlain, linux_c_100m, "linux_c_100m")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_CountZstd, linux_c_100m, "linux_c_100m")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_PreTokenizeLines, poetry, "poetry")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_CountPlain, poetry, "poetry")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_CountZstd, poetry, "poetry")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_CountPiecesOnly, linux_c_100m, "linux_c_100m")->DenseRange(0, 4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_CountPiecesOnly, poetry, "poetry")->DenseRange(0, 4)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace tokenmill
