// tokenmill_bench: every BM_* function in bench/*.cc. Corpus inputs: see bench_corpus.h.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
