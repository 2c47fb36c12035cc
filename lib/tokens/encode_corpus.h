// Encoding a whole corpus into a token file (token_file.h): what `tokenmill encode` runs.
//
// The corpus is read as training reads it (count/count_corpus.h: files, folders, globs,
// .zst/.gz, stdin; documents are lines with their '\n', whole files, or JSON-lines records'
// text_field) by the sharded reader (corpus/batch_reader.h), cut where the model's
// pre-tokenizer cuts anyway (CutRuleFor), so that a batch's ids are exactly the ids of its
// text within its document. Threads encode batches; a serial, in-order stage writes them
// (oneTBB's parallel_pipeline: at most two batches per thread in flight, so memory is bounded
// whatever the corpus size), so the file is the same for any thread count. Decompressing a
// stream is serial, so when threads would wait for the current compressed input, they read
// the next compressed or plain files ahead (BatchReader's `ahead` tickets; never stdin or a
// pipe): those inputs' ids are kept in unnamed scratch files beside the output (stdout or a
// device: in $TMPDIR, else /tmp; no reading ahead where none can be made) and appended when
// their turn comes, so several compressed files are decompressed at once (disk: at most the
// output's size again; a scratch file per file read ahead, which are at most 2 x threads past
// the input being handed out, plus those the pipeline's 2 x threads batches in flight hold).
//
// Contract:
//  - Documents are written in input order; `eot` (when set) follows each document; with
//    `index`, each document's token count (EOT included) goes to a Megatron .idx.
//  - Nothing is left half-written: the token file and the index appear (renamed into place)
//    only when everything was encoded; an error or a stop removes what was written (stdout and
//    devices excepted).
//  - Errors say what and where: an input that cannot be read or decompressed, a text the
//    encoder refuses (a special token with `specials` disallowed, a byte the vocabulary cannot
//    encode) as FILE:LINE, a bad JSON record (unless `skip_bad_records`), a format the
//    vocabulary does not fit (u16 over 65,536 ids), an `eot` that is no token.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "count/count_corpus.h"
#include "model/encoder.h"
#include "tokens/token_file.h"

namespace tokenmill {

// Counting's reading options with the shards encoding is fastest with: 1 MiB instead of 4. An
// encoded shard's ids (a 4 MiB shard of Chinese: 6 MB of u32) are held until written, in a
// buffer per chunk in flight (two per thread); smaller shards touch less fresh memory and
// leave less work for one thread at the end. `--shard-bytes` 4 MiB vs 1 MiB, alternating
// runs, 2 threads, medians of 7: poetry 222 vs 200 ms (cl100k_base), 317 vs 304 (o200k_base);
// linux_docs 136 vs 131, 149 vs 145; linux_c_100m 447 vs 438, 460 vs 455; 1 thread 1-3% less
// too; 512 KiB was no better (bench/RESULTS.md, "Corpus encoding").
CountCorpusOptions EncodeReadingDefaults();

struct EncodeCorpusOptions {
  // What is read and how, as counting reads it: inputs (files, folders, globs; "-" is stdin),
  // doc_mode, text_field, input_format, include, exclude, skip_bad_records, progress,
  // shard_bytes, batch_bytes. Its pretokenizer and special_tokens are not used (the model's
  // are), nor threads (below) or counts_files (an error: they hold no text).
  CountCorpusOptions reading = EncodeReadingDefaults();
  // What is written.
  std::string output = "-";  // "-": stdout
  TokenFileFormat format = TokenFileFormat::kText;
  std::string index;          // Megatron .idx path, or ""
  std::optional<TokenId> eot;  // appended after each document
  SpecialPolicy specials = SpecialPolicy::kAllow;
  int threads = 0;  // 0: all cores
  bool stats = false;  // count every id (EncodeCorpusResult::id_counts)
};

struct EncodeCorpusResult {
  uint64_t documents = 0;
  uint64_t bytes = 0;   // text bytes encoded (JSON lines: the text fields')
  uint64_t tokens = 0;  // ids written, EOTs included
  uint64_t eot_tokens = 0;  // of them, the `eot` after each document
  uint64_t skipped_records = 0;
  std::string first_skipped;       // "file:line: what"
  std::vector<uint64_t> id_counts;  // with stats: how often each id was written
  // Bytes of output kept aside in scratch files (inputs read ahead of their turn, spilled and
  // appended when it came).
  uint64_t spilled_bytes = 0;
};

// Encodes the corpus; `stop_requested` (may be null) is polled before each batch: true stops
// the run, which then returns a Cancelled error and leaves no output.
absl::StatusOr<EncodeCorpusResult> EncodeCorpus(const Encoder& encoder,
                                                const EncodeCorpusOptions& options,
                                                const std::function<bool()>& stop_requested = {});

}  // namespace tokenmill
