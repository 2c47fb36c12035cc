// Counting one document: special tokens are cut out (and not counted), each stretch of the rest
// is prepared (text_prep.h: normalization, the metaspace; `prep` null: as it is), then
// pre-tokenized, and each piece is added to a WordCounts table.
#pragma once

#include <string_view>

#include "count/word_count_cache.h"
#include "count/word_counts.h"
#include "pretokenize/pretokenizer.h"
#include "pretokenize/special_tokens.h"
#include "pretokenize/text_prep.h"

namespace tokenmill {

// `specials` may be null (no special tokens).
void CountDocument(std::string_view document, const PreTokenizer& pretokenizer,
                   const SpecialTokenMatcher* specials, WordCounts& counts,
                   const TextPrep* prep = nullptr);
// The same, counting through a cache (the parallel counting hot path).
void CountDocument(std::string_view document, const PreTokenizer& pretokenizer,
                   const SpecialTokenMatcher* specials, WordCountCache& counts,
                   const TextPrep* prep = nullptr);

}  // namespace tokenmill
