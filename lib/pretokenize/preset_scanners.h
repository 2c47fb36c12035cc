// Hand-written scanners for the preset patterns (presets.h). Each reproduces exactly the pieces
// that PCRE2 (PCRE2_UTF | PCRE2_UCP) finds by repeated matching of the preset's pattern, with
// the character classes of unicode_classes.h, and treats each invalid UTF-8 byte as a piece of
// its own that no match crosses (see pretokenizer.h).
#pragma once

#include <memory>

#include "pretokenize/pretokenizer.h"

namespace tokenmill {

std::unique_ptr<PreTokenizer> MakeGpt2Scanner();
// cl100k (max_digits 3) and qwen2 (max_digits 1).
std::unique_ptr<PreTokenizer> MakeCl100kScanner(int max_digits);
std::unique_ptr<PreTokenizer> MakeO200kScanner();

}  // namespace tokenmill
