// Counting throughput (bytes of text per second, wall time): the whole counting stage (read,
// cut into batches, pre-tokenize, hash into per-thread tables, merge) on 1 and 2 threads,
// from the decompressed text (sharded plain file) and from the shared .zst (one decompressing
// stream handing out batches), next to the pre-tokenizer alone on the same lines, one thread.
// The targets: 2 threads >= 1.8x of 1 thread; 1-thread counting within 25% of
// BM_PreTokenizeLines. Compare figures from the same run only (the machine is shared).
#include <benchmark/benchmark.h>

#include <fstream>
#include <string>

#include "bench_corpus.h"
#include "count/count_corpus.h"
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

void RunCount(benchmark::State& state, const std::string& path, size_t text_bytes) {
  CountCorpusOptions options;
  options.inputs = {path};
  options.threads = static_cast<int>(state.range(0));
  options.progress = "none";
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

}  // namespace
}  // namespace tokenmill
