// Inputs for the microbenchmarks: the shared corpora (../shared/corpora/NAME.txt.zst) when
// present, else the bundled sample (tests/data/sample.txt). Setting TOKENMILL_BENCH_FILE to a
// path makes every corpus benchmark read that file instead.
#pragma once

#include <string>
#include <string_view>

namespace tokenmill::bench {

// The text of corpus `name` ("brown", "linux_docs", "linux_c_100m", "poetry", or "sample"),
// decompressed and cached for the life of the process. Aborts with a message if it cannot be
// read (benchmarks are not run by users on bad input).
const std::string& BenchCorpus(std::string_view name);

// Which file BenchCorpus(name) reads, for labelling results.
std::string BenchCorpusPath(std::string_view name);

}  // namespace tokenmill::bench
