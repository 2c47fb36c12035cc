// What the two ways of counting share (CountCorpus reading files, CountDocuments counting the
// documents a caller hands over, both in count_corpus.h): the tools that count a document, a
// counting thread's table and totals, the merge of the threads' tables, and the end of every
// count (word-count files added, an empty corpus refused). Internal to count/.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "count/count_corpus.h"
#include "count/count_text.h"
#include "count/word_count_cache.h"
#include "count/word_counts.h"
#include "oneapi/tbb/task_arena.h"
#include "pretokenize/pretokenizer.h"
#include "pretokenize/special_tokens.h"
#include "pretokenize/text_prep.h"

namespace tokenmill {

// What counting a document needs, made from the options once and shared (read-only) by every
// counting thread.
struct CountTools {
  std::unique_ptr<PreTokenizer> pretokenizer;
  std::unique_ptr<TextPrep> prep;
  std::unique_ptr<SpecialTokenMatcher> specials;  // null without special tokens

  static absl::StatusOr<CountTools> Create(const CountCorpusOptions& options);
};

// One counting thread's words and totals. Not thread-safe: one per thread.
struct CountState {
  CountState() = default;
  CountState(const CountState&) = delete;
  CountState& operator=(const CountState&) = delete;

  // Adds `text`'s bytes, invalid UTF-8 sequences and NUL bytes to the totals. The three add up
  // over stretches cut at a line end (no UTF-8 sequence holds a '\n'), so a batch of lines is
  // measured at once; documents of their own are measured each on its own.
  void AddTextTotals(std::string_view text);
  // Counts `document`'s pieces into the table (special tokens cut out, each stretch prepared
  // and pre-tokenized: count_text.h).
  void CountPieces(const CountTools& tools, std::string_view document) {
    CountDocument(document, *tools.pretokenizer, tools.specials.get(), cache, tools.prep.get());
  }
  // A document on its own: one more document, its totals and its pieces.
  void CountWholeDocument(const CountTools& tools, std::string_view document) {
    ++documents;
    AddTextTotals(document);
    CountPieces(tools, document);
  }

  WordCounts words;
  WordCountCache cache{&words};  // flushed into `words` before they are read
  uint64_t documents = 0, bytes = 0, invalid_utf8 = 0, nul_bytes = 0;
};

// Adds every state's words and totals to `out` (whose words must be empty): the largest table
// is taken over and the others merged into it, partition by partition in parallel on `arena`.
// The states' tables are left empty.
void MergeCountStates(std::span<CountState* const> states, tbb::task_arena& arena,
                      CorpusCounts& out);

// The end of every count: adds the tables and totals of the word-count files `counts_files`
// (checked compatible by the plan) to `out`, and refuses a corpus with no word.
absl::Status FinishCount(const std::vector<std::string>& counts_files, CorpusCounts& out);

}  // namespace tokenmill
