// The flags that say which corpus to read and how to pre-tokenize it, shared by every command
// that reads a corpus (train and count). Bound to CountCorpusOptions, whose fields hold the
// defaults.
#pragma once

#include "count/count_corpus.h"
#include "flags.h"

namespace tokenmill::cli {

void AddCorpusFlags(FlagSet& flags, CountCorpusOptions* options);

// After parsing: --pattern selects the custom pre-tokenizer (and conflicts with --preset), in
// every command that has both flags (train, count, pretokenize).
absl::Status ApplyPatternFlag(const FlagSet& flags, PreTokenizerConfig* config);

// The notes of a summary about what counting found, on stderr, as train and count print them:
// invalid UTF-8 sequences and NUL bytes (counted as bytes), skipped records and the first one.
void PrintCorpusNotes(uint64_t invalid_utf8, uint64_t nul_bytes, uint64_t skipped_records,
                      const std::string& first_skipped);

}  // namespace tokenmill::cli
