// The flags that say which corpus to read and how to pre-tokenize it, shared by every command
// that reads a corpus (train and count). Bound to CountCorpusOptions, whose fields hold the
// defaults.
#pragma once

#include "count/count_corpus.h"
#include "flags.h"

namespace tokenmill::cli {

void AddCorpusFlags(FlagSet& flags, CountCorpusOptions* options);
// The reading flags alone (AddCorpusFlags adds them too): --doc-mode, --text-field,
// --input-format, --include, --exclude, --skip-bad-records, --progress, --shard-bytes,
// --batch-bytes; `encode` reads a corpus with them.
void AddReadingFlags(FlagSet& flags, CountCorpusOptions* options);
// The flags of the text settings past the split (normalization, digits, the metaspace prefix),
// which AddCorpusFlags adds too.
void AddTextFlags(FlagSet& flags, PreTokenizerConfig* config);

// After parsing, in every command that has --preset and --pattern (train, count, pretokenize):
// --pattern selects the custom pre-tokenizer (and conflicts with --preset), and the preset
// brings its normalization steps (ApplyPresetNormalizer: --preset bert, BERT's normalizer).
absl::Status FinishPreTokenizerFlags(const FlagSet& flags, PreTokenizerConfig* config);

// The notes of a summary about what counting found, on stderr, as train and count print them:
// invalid UTF-8 sequences and NUL bytes (counted as bytes), skipped records and the first one.
void PrintCorpusNotes(uint64_t invalid_utf8, uint64_t nul_bytes, uint64_t skipped_records,
                      const std::string& first_skipped);

}  // namespace tokenmill::cli
