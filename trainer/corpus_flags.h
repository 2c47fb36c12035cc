// The flags that say which corpus to read and how to pre-tokenize it, shared by every command
// that reads a corpus (train, and later count). Bound to CountCorpusOptions.
#pragma once

#include "count/count_corpus.h"
#include "flags.h"

namespace tokenmill::cli {

void AddCorpusFlags(FlagSet& flags, CountCorpusOptions* options);

}  // namespace tokenmill::cli
