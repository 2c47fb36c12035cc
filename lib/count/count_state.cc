#include "count/count_state.h"

#include <algorithm>

#include "common/status_macros.h"
#include "common/strings.h"
#include "corpus/text_stats.h"
#include "count/counts_file.h"

namespace tokenmill {

absl::StatusOr<CountTools> CountTools::Create(const CountCorpusOptions& options) {
  CountTools tools;
  TM_ASSIGN_OR_RETURN(tools.pretokenizer, PreTokenizer::Create(options.pretokenizer));
  TM_ASSIGN_OR_RETURN(tools.prep, TextPrep::Create(options.pretokenizer));
  if (!options.special_tokens.empty()) {
    TM_ASSIGN_OR_RETURN(tools.specials, SpecialTokenMatcher::Create(options.special_tokens));
  }
  return tools;
}

void CountState::AddTextTotals(std::string_view text) {
  bytes += text.size();
  nul_bytes += CountNulBytes(text);
  invalid_utf8 += CountInvalidUtf8(text);
}

void MergeCountStates(std::span<CountState* const> states, tbb::task_arena& arena,
                      CorpusCounts& out) {
  std::vector<CountState*> by_size(states.begin(), states.end());
  for (CountState* s : by_size) s->cache.Flush();
  std::sort(by_size.begin(), by_size.end(), [](const CountState* a, const CountState* b) {
    return a->words.unique_words() > b->words.unique_words();
  });
  arena.execute([&] {
    for (CountState* s : by_size) {
      if (s == by_size.front()) {
        out.words = std::move(s->words);
      } else {
        out.words.MergeFrom(std::move(s->words));
      }
      out.documents += s->documents;
      out.bytes += s->bytes;
      out.invalid_utf8 += s->invalid_utf8;
      out.nul_bytes += s->nul_bytes;
    }
  });
}

absl::Status FinishCount(const std::vector<std::string>& counts_files, CorpusCounts& out) {
  for (const std::string& path : counts_files) {
    TM_ASSIGN_OR_RETURN(CountsFileHeader header, ReadCountsFile(path, &out.words));
    const CountTotals& t = header.totals;
    out.files += t.files;
    out.documents += t.documents;
    out.bytes += t.bytes;
    out.invalid_utf8 += t.invalid_utf8;
    out.nul_bytes += t.nul_bytes;
    out.skipped_records += t.skipped_records;
  }
  if (out.words.unique_words() == 0) {
    // Documents handed over (CountDocuments) come from no file.
    std::string files = out.files > 0 ? StrCat(out.files, " input file(s) with ") : "";
    return absl::InvalidArgumentError(StrCat(
        "the corpus is empty: ", files, out.documents, " document(s) hold no text to count",
        out.skipped_records > 0 ? " (all records were skipped)" : ""));
  }
  return absl::OkStatus();
}

}  // namespace tokenmill
