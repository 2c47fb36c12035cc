#include "count/count_text.h"

namespace tokenmill {
namespace {

template <typename Counts>
void CountPieces(std::string_view document, const PreTokenizer& pretokenizer,
                 const SpecialTokenMatcher* specials, Counts& counts, const TextPrep* prep) {
  auto count_plain = [&](std::string_view text) {
    if (prep != nullptr && !prep->identity()) {
      thread_local std::string prepared;
      prep->Prepare(text, prepared);
      text = prepared;
    }
    pretokenizer.Split(text, [&](std::string_view piece) { counts.Add(piece); });
  };
  if (specials == nullptr) {
    count_plain(document);
    return;
  }
  specials->Split(document, [&](std::string_view segment, int special_index) {
    if (special_index < 0) count_plain(segment);
  });
}

}  // namespace

void CountDocument(std::string_view document, const PreTokenizer& pretokenizer,
                   const SpecialTokenMatcher* specials, WordCounts& counts,
                   const TextPrep* prep) {
  CountPieces(document, pretokenizer, specials, counts, prep);
}

void CountDocument(std::string_view document, const PreTokenizer& pretokenizer,
                   const SpecialTokenMatcher* specials, WordCountCache& counts,
                   const TextPrep* prep) {
  CountPieces(document, pretokenizer, specials, counts, prep);
}

}  // namespace tokenmill
