// Counting a whole corpus: read every input's documents (in parallel, see corpus/batch_reader.h),
// cut out special tokens, pre-tokenize and count the pieces; add the tables of word-count files.
// This is the one entry point the train and count commands call. CountDocuments counts the
// same way the documents a caller hands over (a Python iterator) instead of files.
//
// Contract:
//  - The result does not depend on the thread count, shard size or batch size.
//  - Memory: the unique-word table (one per worker thread until merged) plus about two batches
//    per thread, whatever the corpus size.
//  - Errors say what and where: a missing/unreadable input, a folder or glob with no files, a
//    truncated or corrupt .zst/.gz (file and byte offset), a malformed JSON line or a record
//    without the text field (file:line; with skip_bad_records they are counted instead), a
//    counts file made with another pre-tokenizer or other special tokens, an empty corpus.
//  - Invalid UTF-8 and NUL bytes are counted like any other bytes and reported in the totals.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/option_fields.h"
#include "common/progress_format.h"
#include "corpus/cut_rule.h"
#include "corpus/input_files.h"
#include "count/counts_file.h"
#include "count/word_counts.h"
#include "pretokenize/pretokenizer_config.h"

namespace tokenmill {

struct CountCorpusOptions {
  // Files, folders (recursive), globs; "-" is stdin. A word-count file (tokenmill count
  // --output) given here is recognised by its magic and summed like `counts_files`.
  std::vector<std::string> inputs;
  std::vector<std::string> counts_files;  // word-count files to add
  PreTokenizerConfig pretokenizer;
  std::vector<std::string> special_tokens;  // cut out, never counted
  int threads = 0;                          // 0: all cores
  std::string doc_mode = "line";            // line: each line with its '\n'; file: whole files
  std::string text_field = "text";          // JSON lines: top-level key, or a /JSON/pointer
  std::string input_format = "auto";        // auto (by extension) | text | jsonl
  std::vector<std::string> include;         // globs for files found in folders
  std::vector<std::string> exclude;
  bool skip_bad_records = false;  // count and report malformed JSON records instead of failing
  ProgressFormat progress = ProgressFormat::kAuto;  // on stderr
  size_t shard_bytes = size_t{4} << 20;  // uncompressed files are read in shards this big
  size_t batch_bytes = size_t{2} << 20;  // compressed inputs are handed out in batches this big

  // Every field, with its stable tag and effect (common/option_fields.h). The words counted
  // depend neither on threads nor on the shard and batch sizes.
  static std::span<const OptionField<CountCorpusOptions>> Fields();
};

struct CorpusCounts {
  WordCounts words;
  uint64_t documents = 0;
  uint64_t bytes = 0;
  uint64_t files = 0;
  uint64_t invalid_utf8 = 0;     // invalid UTF-8 sequences in the counted text
  uint64_t nul_bytes = 0;        // NUL bytes in the counted text
  uint64_t skipped_records = 0;  // bad JSON records skipped (skip_bad_records)
  std::string first_skipped;     // "file:line: what" of the first skipped record

  CountTotals Totals() const;
};

// Checks the option values alone (a failure is an OptionError naming the option).
absl::Status ValidateCountCorpusFlags(const CountCorpusOptions& options);

// A corpus checked and resolved, ready to count: the options, the input files (folders and
// globs expanded, in reading order) and the word-count files to add (found compatible).
struct CorpusPlan {
  CountCorpusOptions options;
  std::vector<InputFile> inputs;
  std::vector<std::string> counts_files;
  // Every file that will be read: the inputs, then the word-count files.
  std::vector<std::string> Paths() const;
};
// Checks the options and that every input exists, without reading the corpus.
absl::StatusOr<CorpusPlan> PlanCorpus(const CountCorpusOptions& options);

// Counts a planned corpus (the options and inputs are not checked again).
absl::StatusOr<CorpusCounts> CountCorpus(CorpusPlan plan);
// PlanCorpus, then CountCorpus of the plan.
absl::StatusOr<CorpusCounts> CountCorpus(const CountCorpusOptions& options);

// Documents a caller hands over (a Python iterator): `text` holds them one after another,
// `ends[i]` is the end offset of document i in `text` (non-decreasing, the last one
// text.size(); an empty document is one end equal to the one before).
struct DocumentBatch {
  std::string text;
  std::vector<size_t> ends;
  void clear() { text.clear(); ends.clear(); }
};
// Fills `batch` (given cleared) with the next documents and returns true, or returns false at
// the end (the batch may then still hold a last few documents: they are counted). An error
// status stops counting; CountDocuments returns that status unchanged (the binding uses it for
// KeyboardInterrupt and the iterator's own exceptions).
using DocumentSource = std::function<absl::StatusOr<bool>(DocumentBatch&)>;

// Checks the options for counting documents handed over, as PlanCorpus does, but `inputs` must
// be empty (an OptionError naming it); the word-count files are checked and planned.
absl::StatusOr<CorpusPlan> PlanDocuments(const CountCorpusOptions& options);
// Counts the documents `source` hands over, as CountCorpus counts a corpus: each document is
// counted whole, as CountCorpus counts one document (special tokens cut out, prepared,
// pre-tokenized; `doc_mode` and the options of reading files do not apply), with the same totals
// (documents, empty ones too, bytes, invalid UTF-8, NUL bytes; `files` holds only the word-count
// files' own). `source` is called ONLY on the thread that called CountDocuments, one call at a
// time; meanwhile ThreadCount(options.threads) other threads count the batches already handed over.
// At most 2 batches per counting thread wait (a bounded queue: the caller's thread blocks, not in
// `source`, while it is full), so memory is bounded whatever the stream's length: no more than 3
// batches per counting thread, plus the one being filled, exist at once (emptied ones are handed to
// `source` again). The word-count files are added after, like CountCorpus. The result does not
// depend on the thread count or on how the documents are cut into batches. The progress
// (options.progress) shows bytes and documents counted (no total). A batch whose ends do not fit
// its text is an InvalidArgument error. Every counting thread is joined before it returns, on every
// path (an exception `source` throws too).
absl::StatusOr<CorpusCounts> CountDocuments(const DocumentSource& source,
                                            const CountCorpusOptions& options);
// The same for a plan of PlanDocuments (the options are not checked again). `counted`, for
// tests: called on a counting thread after each batch is counted, before it is reused.
absl::StatusOr<CorpusCounts> CountDocuments(
    const DocumentSource& source, CorpusPlan plan,
    const std::function<void(const DocumentBatch&)>& counted = nullptr);

// Where the documents of `input` may be cut into batches (corpus/cut_rule.h) so that every
// piece the pre-tokenizer makes is whole: JSON lines and line documents at line ends, whole
// files between words, or never (a custom pattern, the metaspace prefix, no split, a special
// token holding a space). Encoding a corpus cuts it the same way.
CutRule CutRuleFor(const InputFile& input, const CountCorpusOptions& options);

// The threads a `threads` option asks for: itself when positive (at most 8 per core, and at
// least 64 allowed), else all cores (at least 1).
int ThreadCount(int requested);

// The header a counts file of `counts` made with `options` carries.
CountsFileHeader MakeCountsFileHeader(const CountCorpusOptions& options, const CorpusCounts& counts);

}  // namespace tokenmill
