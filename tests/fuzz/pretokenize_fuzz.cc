// Fuzzes the preset pre-tokenizers. Input: one byte choosing the preset, then the text.
// Properties (pretokenizer.h): pieces are non-empty and concatenate to the text, for any bytes;
// and they equal the PCRE2 oracle's (tests/reference/pcre2_splitter.h), except on text holding
// a code point where PCRE2 10.42's classes and tokenmill's (tiktoken's) deliberately differ
// (Pcre2ClassDisagreements(): post-Unicode-14 code points and U+180E, see
// tests/pretokenize_unicode_test.cc).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "pieces_check.h"
#include "pretokenize/pretokenizer.h"
#include "reference/pcre2_differential.h"
#include "reference/pcre2_splitter.h"
#include "reference/sidecar_pattern.h"

namespace tokenmill {
namespace {

constexpr std::string_view kPresets[] = {"gpt2", "cl100k", "o200k", "qwen2"};

struct Engines {
  std::unique_ptr<PreTokenizer> scanner;
  std::unique_ptr<PreTokenizer> oracle;
};

const std::vector<Engines>& AllEngines() {
  static const std::vector<Engines>* engines = [] {
    auto* all = new std::vector<Engines>;
    for (std::string_view preset : kPresets) {
      PreTokenizerConfig config;
      config.preset = std::string(preset);
      auto scanner = PreTokenizer::Create(config);
      auto oracle = testing::MakePcre2PresetPreTokenizer(preset);  // the sidecars' patterns
      if (!scanner.ok() || !oracle.ok()) fuzz::Fail("cannot build the pre-tokenizers");
      all->push_back({*std::move(scanner), *std::move(oracle)});
    }
    testing::Pcre2ClassDisagreements();  // computed once, outside the timed runs
    return all;
  }();
  return *engines;
}

}  // namespace
}  // namespace tokenmill

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenmill;
  if (size == 0) return 0;
  const Engines& e = AllEngines()[data[0] % std::size(kPresets)];
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);

  std::vector<std::string_view> ours = testing::SplitToVector(*e.scanner, text);
  fuzz::CheckPiecesCoverText(ours, text);

  if (!testing::ContainsDisagreement(text)) {
    std::vector<std::string_view> expected = testing::SplitToVector(*e.oracle, text);
    if (ours != expected) {
      fuzz::Fail("split differs from PCRE2 on", testing::EscapeForMessage(text));
    }
  }
  return 0;
}
