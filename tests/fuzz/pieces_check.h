// What every fuzz target that splits text checks of the pieces (pretokenizer.h's contract).
#pragma once

#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "reference/pcre2_differential.h"

namespace tokenmill::fuzz {

// The pieces are non-empty and concatenate to exactly `text`.
inline void CheckPiecesCoverText(const std::vector<std::string_view>& pieces, std::string_view text) {
  size_t at = 0;
  for (std::string_view piece : pieces) {
    if (piece.empty()) Fail("empty piece");
    if (piece.size() > text.size() - at || text.substr(at, piece.size()) != piece) {
      Fail("pieces do not concatenate to the text at", testing::EscapeForMessage(text));
    }
    at += piece.size();
  }
  if (at != text.size()) Fail("pieces do not cover the text", testing::EscapeForMessage(text));
}

}  // namespace tokenmill::fuzz
