// UTF-8 validity, byte by byte, by the Unicode "maximal subpart" rule (what TextDecoder and
// Python's errors="replace" do): shared by the corpus statistics and the display of tokens.
#pragma once

#include <cstddef>
#include <string_view>

namespace tokenmill {

// Length of the valid UTF-8 sequence starting at bytes[0] (bytes must not be empty), or 0 if
// it is not valid there. Also reports, via `maximal_subpart`, how many bytes form the invalid
// prefix to replace (1 for a byte that cannot start a sequence).
size_t ValidUtf8Length(std::string_view bytes, size_t* maximal_subpart);

}  // namespace tokenmill
