#include "count/count_text.h"

namespace tokenmill {
namespace {

template <typename Counts>
void CountPieces(std::string_view document, const PreTokenizer& pretokenizer,
                 const SpecialTokenMatcher* specials, Counts& counts) {
  auto count_plain = [&](std::string_view text) {
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
                   const SpecialTokenMatcher* specials, WordCounts& counts) {
  CountPieces(document, pretokenizer, specials, counts);
}

void CountDocument(std::string_view document, const PreTokenizer& pretokenizer,
                   const SpecialTokenMatcher* specials, WordCountCache& counts) {
  CountPieces(document, pretokenizer, specials, counts);
}

}  // namespace tokenmill
