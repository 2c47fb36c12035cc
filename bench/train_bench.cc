// BPE training from word counts (the counting stage is excluded: the corpus is counted once per
// process, untimed). Each run reports the whole Train call as its time, and as counters the
// time of each phase (words, initial pairs, merges: the merge loop alone), merges learned and
// merges per second, so the merge loop's growth with vocabulary size can be read directly
// (BM_TrainVocab: 10k, 30k, 100k) and the 2-thread speed-up against 1 thread (BM_Train).
// One iteration per run (a run takes seconds); add --benchmark_repetitions=3 for medians.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>

#include "bench_corpus.h"
#include "count/count_text.h"
#include "count/word_counts.h"
#include "pretokenize/pretokenizer.h"
#include "reference/trained_bpe.h"
#include "train/trainer.h"

namespace tokenmill {
namespace {

// The word counts of a corpus (GPT-2 pre-tokenizer, lines as documents), counted once.
const WordCounts& CorpusCounts(const char* corpus) {
  static std::map<std::string, std::unique_ptr<WordCounts>> cache;
  std::unique_ptr<WordCounts>& counts = cache[corpus];
  if (counts == nullptr) {
    counts = std::make_unique<WordCounts>();
    const std::string& text = bench::BenchCorpus(corpus);
    auto pretokenizer = PreTokenizer::Create(PreTokenizerConfig{}).value();
    std::string_view all(text);
    for (size_t start = 0; start < all.size();) {
      size_t newline = all.find('\n', start);
      size_t end = newline == std::string_view::npos ? all.size() : newline + 1;
      CountDocument(all.substr(start, end - start), *pretokenizer, nullptr, *counts);
      start = end;
    }
  }
  return *counts;
}

// range(0): vocab size; range(1): threads.
void RunTrain(benchmark::State& state, const char* corpus) {
  const WordCounts& counts = CorpusCounts(corpus);
  TrainerOptions options;
  options.vocab_size = static_cast<size_t>(state.range(0));
  options.threads = static_cast<int>(state.range(1));
  options.hf_compat = true;
  absl::StatusOr<TrainResult> result;
  for (auto _ : state) {
    result = Train(WordSource::Borrow(counts), options);
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      return;
    }
  }
  for (const auto& [phase, seconds] : result->phase_seconds) {
    std::string name = phase + "_s";
    for (char& c : name) c = c == ' ' ? '_' : c;
    state.counters[name] = seconds;
    if (phase == "merges") {
      state.counters["merges_per_s"] = static_cast<double>(Bpe(*result).merges.size()) / seconds;
    }
  }
  state.counters["merges"] = static_cast<double>(Bpe(*result).merges.size());
  state.counters["unique_words"] = static_cast<double>(counts.unique_words());
}

void BM_Train(benchmark::State& state, const char* corpus) { RunTrain(state, corpus); }
void BM_TrainVocab(benchmark::State& state, const char* corpus) { RunTrain(state, corpus); }

#define TRAIN_BENCH(corpus)                                                      \
  BENCHMARK_CAPTURE(BM_Train, corpus, #corpus)                                   \
      ->ArgNames({"vocab", "threads"})                                           \
      ->Args({30000, 1})                                                         \
      ->Args({30000, 2})                                                         \
      ->Iterations(1)                                                            \
      ->Unit(benchmark::kSecond)                                                 \
      ->UseRealTime()
TRAIN_BENCH(brown);
TRAIN_BENCH(linux_docs);
TRAIN_BENCH(linux_c_100m);
TRAIN_BENCH(poetry);

#define TRAIN_VOCAB_BENCH(corpus)                                                \
  BENCHMARK_CAPTURE(BM_TrainVocab, corpus, #corpus)                              \
      ->ArgNames({"vocab", "threads"})                                           \
      ->Args({10000, 2})                                                         \
      ->Args({30000, 2})                                                         \
      ->Args({100000, 2})                                                        \
      ->Iterations(1)                                                            \
      ->Unit(benchmark::kSecond)                                                 \
      ->UseRealTime()
TRAIN_VOCAB_BENCH(linux_c_100m);
TRAIN_VOCAB_BENCH(poetry);

}  // namespace
}  // namespace tokenmill
