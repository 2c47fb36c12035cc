#include "count/count_corpus.h"

#include "common/file_util.h"
#include "common/status_macros.h"
#include "corpus/line_reader.h"
#include "count/count_text.h"

namespace tokenmill {

absl::StatusOr<CorpusCounts> CountCorpus(const CountCorpusOptions& options) {
  for (const std::string& input : options.inputs) TM_RETURN_IF_ERROR(CheckReadableFile(input));
  TM_ASSIGN_OR_RETURN(std::unique_ptr<PreTokenizer> pretokenizer,
                      PreTokenizer::Create(options.pretokenizer));
  std::unique_ptr<SpecialTokenMatcher> specials;
  if (!options.special_tokens.empty()) {
    TM_ASSIGN_OR_RETURN(specials, SpecialTokenMatcher::Create(options.special_tokens));
  }
  CorpusCounts result;
  for (const std::string& input : options.inputs) {
    TM_RETURN_IF_ERROR(ForEachLine(input, [&](std::string_view line) {
      ++result.documents;
      result.bytes += line.size();
      CountDocument(line, *pretokenizer, specials.get(), result.words);
    }));
  }
  return result;
}

}  // namespace tokenmill
