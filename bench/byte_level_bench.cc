// Byte-level text conversion, used when writing and reading tokenizer.json.
#include <benchmark/benchmark.h>

#include "bench_corpus.h"
#include "common/byte_level.h"

namespace tokenmill {
namespace {

void BM_BytesToByteLevel(benchmark::State& state) {
  const std::string& text = bench::BenchCorpus("sample");
  for (auto _ : state) benchmark::DoNotOptimize(BytesToByteLevel(text));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_BytesToByteLevel);

}  // namespace
}  // namespace tokenmill
