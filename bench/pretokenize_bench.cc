// Pre-tokenization speed: tokenmill's preset scanners against PCRE2-JIT running the original
// pattern (UTF + UCP, look-ahead included) on the same corpus, one thread, in one run. Each
// benchmark counts pieces so that neither side can skip work. Arguments: corpus, preset.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "bench_corpus.h"
#include "pretokenize/custom_pattern.h"
#include "pretokenize/presets.h"
#include "pretokenize/pretokenizer.h"
#include "reference/pcre2_splitter.h"
#include "reference/sidecar_pattern.h"

namespace tokenmill {
namespace {

constexpr const char* kCorpora[] = {"linux_docs", "poetry", "brown", "linux_c_100m"};
constexpr const char* kPresets[] = {"gpt2", "cl100k", "o200k", "qwen2"};

void RunSplit(benchmark::State& state, const PreTokenizer& pretokenizer, const std::string& text) {
  size_t pieces = 0;
  for (auto _ : state) {
    pieces = 0;
    pretokenizer.Split(text, [&](std::string_view) { ++pieces; });
    benchmark::DoNotOptimize(pieces);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["pieces"] = static_cast<double>(pieces);
}

void BM_PreTokenize(benchmark::State& state) {
  const std::string& text = bench::BenchCorpus(kCorpora[state.range(0)]);
  PreTokenizerConfig config;
  config.preset = kPresets[state.range(1)];
  absl::StatusOr<std::unique_ptr<PreTokenizer>> pretokenizer = PreTokenizer::Create(config);
  if (!pretokenizer.ok()) {
    state.SkipWithError("cannot create the pre-tokenizer");
    return;
  }
  state.SetLabel(std::string(kCorpora[state.range(0)]) + "/" + kPresets[state.range(1)]);
  RunSplit(state, **pretokenizer, text);
}

void BM_PreTokenizePcre2Jit(benchmark::State& state) {
  const std::string& text = bench::BenchCorpus(kCorpora[state.range(0)]);
  absl::StatusOr<std::unique_ptr<PreTokenizer>> pcre2 =
      testing::MakePcre2PresetPreTokenizer(kPresets[state.range(1)]);
  if (!pcre2.ok()) {
    state.SkipWithError("cannot compile the pattern");
    return;
  }
  state.SetLabel(std::string(kCorpora[state.range(0)]) + "/" + kPresets[state.range(1)]);
  RunSplit(state, **pcre2, text);
}

// A custom pattern (custom_pattern.h, PCRE2 with JIT, as --pattern runs) holding a preset's
// pattern, for comparison with the preset's scanner.
void BM_PreTokenizeCustomPattern(benchmark::State& state) {
  const std::string& text = bench::BenchCorpus(kCorpora[state.range(0)]);
  absl::StatusOr<std::unique_ptr<PreTokenizer>> custom =
      CompileCustomPattern(PresetPattern(kPresets[state.range(1)]));
  if (!custom.ok()) {
    state.SkipWithError("cannot compile the pattern");
    return;
  }
  state.SetLabel(std::string(kCorpora[state.range(0)]) + "/" + kPresets[state.range(1)]);
  RunSplit(state, **custom, text);
}

// (corpus index, preset index) pairs: linux_docs and poetry for every preset, brown and
// linux_c_100m for gpt2 and cl100k.
void PresetArgs(benchmark::internal::Benchmark* b) {
  for (int corpus : {0, 1}) {
    for (int preset : {0, 1, 2, 3}) b->Args({corpus, preset});
  }
  for (int corpus : {2, 3}) {
    for (int preset : {0, 1}) b->Args({corpus, preset});
  }
}

BENCHMARK(BM_PreTokenize)->Apply(PresetArgs)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PreTokenizePcre2Jit)->Apply(PresetArgs)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PreTokenizeCustomPattern)->Apply(PresetArgs)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tokenmill
