// Encoding speed (issue 7): whole-file, single-thread encoding with OpenAI's vocabularies
// against PCRE2-JIT merely splitting the same text with the same pattern (the bare regex that
// tiktoken and Hugging Face run before any BPE), in one run; batch encoding of the corpus's
// lines on 1 and 2 threads; and a tokenizer trained by tokenmill (TOKENMILL_BENCH_TOKENIZER=
// tokenizer.json or .tiktoken; skipped when unset), for the comparison with Hugging Face.
//
// Arguments: corpus index (kCorpora), encoding index (kEncodings); batch: also threads.
// Counters: bytes/s (MB/s) and tokens/s. The piece cache persists across iterations, as it
// does across the documents of a real job.
#include <benchmark/benchmark.h>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "bench_corpus.h"
#include "model/encoder.h"
#include "model/model_file.h"
#include "reference/pcre2_splitter.h"
#include "reference/sidecar_pattern.h"

namespace tokenmill {
namespace {

constexpr const char* kCorpora[] = {"linux_docs", "poetry", "brown", "linux_c_100m"};
constexpr const char* kEncodings[] = {"cl100k_base", "o200k_base", "gpt2"};
constexpr const char* kPresetOf[] = {"cl100k", "o200k", "gpt2"};

// Loads once per process; aborts the benchmark (not the process) when missing.
const Encoder* LoadEncoder(const std::string& path) {
  static auto* cache = new std::map<std::string, std::unique_ptr<Encoder>>;
  auto& slot = (*cache)[path];
  if (slot == nullptr) {
    absl::StatusOr<BpeModel> model = LoadBpeModel(path);
    if (!model.ok()) return nullptr;
    absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Create(*std::move(model));
    if (!encoder.ok()) return nullptr;
    slot = *std::move(encoder);
  }
  return slot.get();
}

const Encoder* OpenAiEncoder(int64_t index) {
  return LoadEncoder(testing::TestVocabDir() + kEncodings[index] + ".tiktoken");
}

void ReportThroughput(benchmark::State& state, size_t bytes, size_t tokens) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(state.iterations() * tokens),
                                                  benchmark::Counter::kIsRate);
  state.counters["tokens"] = static_cast<double>(tokens);
}

std::vector<std::string_view> Lines(const std::string& text) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    lines.push_back(std::string_view(text).substr(start, end - start));
    start = end;
  }
  return lines;
}

void EncodeWhole(benchmark::State& state, const Encoder* encoder, const std::string& text) {
  if (encoder == nullptr) {
    state.SkipWithError("cannot load the tokenizer");
    return;
  }
  size_t tokens = 0;
  for (auto _ : state) {
    absl::StatusOr<std::vector<TokenId>> ids = encoder->Encode(text, SpecialPolicy::kAsText);
    tokens = ids->size();
    benchmark::DoNotOptimize(ids->data());
  }
  ReportThroughput(state, text.size(), tokens);
}

// Whole-file encoding, one thread.
void BM_EncodeWhole(benchmark::State& state) {
  const std::string& text = bench::BenchCorpus(kCorpora[state.range(0)]);
  state.SetLabel(std::string(kCorpora[state.range(0)]) + "/" + kEncodings[state.range(1)]);
  EncodeWhole(state, OpenAiEncoder(state.range(1)), text);
}

// PCRE2-JIT splitting the same text with the encoding's pattern, nothing else.
void BM_SplitOnlyPcre2Jit(benchmark::State& state) {
  const std::string& text = bench::BenchCorpus(kCorpora[state.range(0)]);
  state.SetLabel(std::string(kCorpora[state.range(0)]) + "/" + kEncodings[state.range(1)]);
  absl::StatusOr<std::unique_ptr<PreTokenizer>> pcre2 =
      testing::MakePcre2PresetPreTokenizer(kPresetOf[state.range(1)]);
  if (!pcre2.ok()) {
    state.SkipWithError("cannot compile the pattern");
    return;
  }
  size_t pieces = 0;
  for (auto _ : state) {
    pieces = 0;
    (*pcre2)->Split(text, [&](std::string_view) { ++pieces; });
    benchmark::DoNotOptimize(pieces);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["pieces"] = static_cast<double>(pieces);
}

// The corpus's lines as documents, EncodeBatch on an arena of range(2) threads.
void BM_EncodeBatch(benchmark::State& state) {
  const std::string& text = bench::BenchCorpus(kCorpora[state.range(0)]);
  const Encoder* encoder = OpenAiEncoder(state.range(1));
  int threads = static_cast<int>(state.range(2));
  state.SetLabel(std::string(kCorpora[state.range(0)]) + "/" + kEncodings[state.range(1)] + "/" +
                 std::to_string(threads) + " threads");
  if (encoder == nullptr) {
    state.SkipWithError("cannot load the tokenizer");
    return;
  }
  std::vector<std::string_view> docs = Lines(text);
  tbb::task_arena arena(threads);
  size_t tokens = 0;
  for (auto _ : state) {
    arena.execute([&] {
      absl::StatusOr<EncodedBatch> ids = encoder->EncodeBatch(docs, SpecialPolicy::kAsText);
      tokens = ids->ids.size();
    });
  }
  ReportThroughput(state, text.size(), tokens);
}

// BM_EncodeBatch with cold caches, as a process encoding a corpus once sees them: each
// iteration encodes with a new Encoder (built, untimed, from the vocabulary loaded once).
// scripts/encode_bench.sh compares `tokenmill encode` with this.
void BM_EncodeBatchCold(benchmark::State& state) {
  const std::string& text = bench::BenchCorpus(kCorpora[state.range(0)]);
  const int threads = static_cast<int>(state.range(2));
  state.SetLabel(std::string(kCorpora[state.range(0)]) + "/" + kEncodings[state.range(1)] + "/" +
                 std::to_string(threads) + " threads, cold caches");
  static auto* models = new std::map<int64_t, BpeModel>;
  if (!models->contains(state.range(1))) {
    absl::StatusOr<BpeModel> model =
        LoadBpeModel(testing::TestVocabDir() + kEncodings[state.range(1)] + ".tiktoken");
    if (!model.ok()) {
      state.SkipWithError("cannot load the tokenizer");
      return;
    }
    models->emplace(state.range(1), *std::move(model));
  }
  const BpeModel& model = models->at(state.range(1));
  std::vector<std::string_view> docs = Lines(text);
  tbb::task_arena arena(threads);
  size_t tokens = 0;
  for (auto _ : state) {
    state.PauseTiming();
    absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Create(BpeModel(model));
    if (!encoder.ok()) {
      state.SkipWithError("cannot build the encoder");
      return;
    }
    state.ResumeTiming();
    arena.execute([&] {
      absl::StatusOr<EncodedBatch> ids = (*encoder)->EncodeBatch(docs, SpecialPolicy::kAsText);
      tokens = ids->ids.size();
    });
    state.PauseTiming();
    encoder->reset();
    state.ResumeTiming();
  }
  ReportThroughput(state, text.size(), tokens);
}

// The lines as `tokenmill encode` hands them to the encoder: slices of whole lines (about
// 4 MB, its default shard size), in parallel, each encoded by one Encoder::EncodeLines call
// into a buffer of its own; cold caches as in BM_EncodeBatchCold. scripts/encode_bench.sh
// compares `tokenmill encode` with this too.
void BM_EncodeLinesCold(benchmark::State& state) {
  const std::string& text = bench::BenchCorpus(kCorpora[state.range(0)]);
  const int threads = static_cast<int>(state.range(2));
  state.SetLabel(std::string(kCorpora[state.range(0)]) + "/" + kEncodings[state.range(1)] + "/" +
                 std::to_string(threads) + " threads, cold caches");
  absl::StatusOr<BpeModel> model =
      LoadBpeModel(testing::TestVocabDir() + kEncodings[state.range(1)] + ".tiktoken");
  if (!model.ok()) {
    state.SkipWithError("cannot load the tokenizer");
    return;
  }
  constexpr size_t kSlice = size_t{4} << 20;
  std::vector<std::string_view> slices;
  for (size_t start = 0; start < text.size();) {
    size_t end = std::min(text.size(), start + kSlice);
    const size_t newline = text.find('\n', end);
    end = newline == std::string::npos ? text.size() : newline + 1;
    slices.push_back(std::string_view(text).substr(start, end - start));
    start = end;
  }
  struct Out {
    std::vector<TokenId> ids;
    std::vector<size_t> ends;
  };
  std::vector<Out> outs(slices.size());
  tbb::task_arena arena(threads);
  size_t tokens = 0;
  for (auto _ : state) {
    state.PauseTiming();
    absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Create(BpeModel(*model));
    if (!encoder.ok()) {
      state.SkipWithError("cannot build the encoder");
      return;
    }
    for (Out& o : outs) {
      std::vector<TokenId>().swap(o.ids);  // fresh buffers, as a fresh process has
      std::vector<size_t>().swap(o.ends);
    }
    state.ResumeTiming();
    arena.execute([&] {
      tbb::parallel_for(size_t{0}, slices.size(), [&](size_t i) {
        absl::Status s = (*encoder)->EncodeLines(slices[i], SpecialPolicy::kAsText, outs[i].ids,
                                                 outs[i].ends);
        if (!s.ok()) std::abort();
      });
    });
    state.PauseTiming();
    tokens = 0;
    for (const Out& o : outs) tokens += o.ids.size();
    encoder->reset();
    state.ResumeTiming();
  }
  ReportThroughput(state, text.size(), tokens);
}

// A tokenizer of the user's (e.g. one tokenmill trained with vocab 30000), whole-file.
void BM_EncodeWholeTrained(benchmark::State& state) {
  const char* path = std::getenv("TOKENMILL_BENCH_TOKENIZER");
  if (path == nullptr) {
    state.SkipWithError("set TOKENMILL_BENCH_TOKENIZER to a tokenizer file");
    return;
  }
  const std::string& text = bench::BenchCorpus(kCorpora[state.range(0)]);
  state.SetLabel(std::string(kCorpora[state.range(0)]) + "/" + path);
  EncodeWhole(state, LoadEncoder(path), text);
}

void CorpusEncodingArgs(benchmark::internal::Benchmark* b) {
  for (int corpus : {0, 1}) b->Args({corpus, 0});
  for (int corpus : {0, 1}) b->Args({corpus, 1});
  b->Args({0, 2});
}

BENCHMARK(BM_EncodeWhole)->Apply(CorpusEncodingArgs)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SplitOnlyPcre2Jit)->Apply(CorpusEncodingArgs)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_EncodeBatch)
    ->Args({0, 0, 1})->Args({0, 0, 2})->Args({1, 0, 1})->Args({1, 0, 2})
    // scripts/encode_bench.sh's in-process figures: o200k, and linux_c_100m (corpus 3)
    ->Args({0, 1, 2})->Args({1, 1, 2})->Args({3, 0, 2})->Args({3, 1, 2})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_EncodeBatchCold)
    ->Args({0, 0, 2})->Args({0, 1, 2})->Args({1, 0, 2})->Args({1, 1, 2})->Args({3, 0, 2})
    ->Args({3, 1, 2})->Args({0, 0, 1})->Args({1, 0, 1})->Args({3, 0, 1})
    // 1 thread with o200k too: encode_bench.sh's in-process 2 / 1 threads, every row
    ->Args({0, 1, 1})->Args({1, 1, 1})->Args({3, 1, 1})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_EncodeLinesCold)
    ->Args({0, 0, 2})->Args({0, 1, 2})->Args({1, 0, 2})->Args({1, 1, 2})->Args({3, 0, 2})
    ->Args({3, 1, 2})->Args({0, 0, 1})->Args({0, 1, 1})->Args({1, 0, 1})->Args({1, 1, 1})
    ->Args({3, 0, 1})->Args({3, 1, 1})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_EncodeWholeTrained)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace tokenmill
