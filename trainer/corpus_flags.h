// The flags that say which corpus to read and how to pre-tokenize it, shared by every command
// that reads a corpus (train and count). Bound to CountCorpusOptions, whose fields hold the
// defaults.
#pragma once

#include "count/count_corpus.h"
#include "flags.h"

namespace tokenmill::cli {

void AddCorpusFlags(FlagSet& flags, CountCorpusOptions* options);

// After parsing: --pattern selects the custom pre-tokenizer (and conflicts with --preset).
absl::Status FinishCorpusFlags(const FlagSet& flags, CountCorpusOptions* options);

}  // namespace tokenmill::cli
