// Fuzzes custom pre-tokenizer patterns (--pattern, custom_pattern.h). Input: a pattern (up to the
// first NUL byte, at most 64 bytes), then the text. Properties: any pattern either compiles or
// is refused with a message naming the offset; a compiled one splits any bytes into non-empty
// pieces that concatenate to the text, and each piece that holds an invalid UTF-8 byte is that
// byte alone (no match covers one). A small match limit keeps patterns that backtrack
// exponentially from hanging the run (the product's default has no practical limit).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "pieces_check.h"
#include "pretokenize/custom_pattern.h"
#include "reference/pcre2_differential.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenmill;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  if (nul == std::string_view::npos || nul > 64) return 0;
  const std::string_view pattern = input.substr(0, nul);
  const std::string_view text = input.substr(nul + 1);
  absl::StatusOr<std::unique_ptr<PreTokenizer>> p = CompileCustomPattern(pattern, 100000);
  if (!p.ok()) {
    const std::string message(p.status().message());
    if (message.find("at offset ") == std::string::npos) {
      fuzz::Fail("a refused pattern's message names no offset", message);
    }
    return 0;
  }
  fuzz::CheckPiecesCoverText(testing::SplitToVector(**p, text), text);
  return 0;
}
