// PreTokenizer::Create: the presets run on hand-written scanners (preset_scanners.h); custom
// patterns on the backtracking matcher of custom_pattern.h, except that a custom pattern equal
// to a preset's pattern gets that preset's scanner.
#include "pretokenize/pretokenizer.h"

#include "common/strings.h"
#include "pretokenize/custom_pattern.h"
#include "pretokenize/preset_scanners.h"
#include "pretokenize/presets.h"
#include "pretokenize/split_modes.h"

namespace tokenmill {
namespace {

std::unique_ptr<PreTokenizer> MakePresetScanner(std::string_view preset) {
  if (preset == "gpt2") return MakeGpt2Scanner();
  if (preset == "cl100k") return MakeCl100kScanner(3);
  if (preset == "qwen2") return MakeCl100kScanner(1);
  if (preset == "o200k") return MakeO200kScanner();
  return nullptr;
}

absl::StatusOr<std::unique_ptr<PreTokenizer>> CreateSplit(const PreTokenizerConfig& config) {
  if (config.preset == "metaspace") return MakeMetaspaceSplitter();
  if (config.preset == "whitespace") return MakeWhitespaceSplitter();
  if (config.preset == "bert") return MakeBertSplitter();
  if (config.preset == "none") return MakeNoSplitter();
  if (config.preset == "custom") {
    if (config.pattern.empty()) return absl::InvalidArgumentError("the custom pattern is empty");
    for (const PreTokenizerPreset& preset : kPreTokenizerPresets) {
      if (preset.pattern == config.pattern) return MakePresetScanner(preset.name);
    }
    return CompileCustomPattern(config.pattern);
  }
  if (std::unique_ptr<PreTokenizer> scanner = MakePresetScanner(config.preset)) return scanner;
  return absl::InvalidArgumentError(StrCat("unknown pre-tokenizer preset '", config.preset,
                                           "' (known: ", PresetNameList(), ", custom)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<PreTokenizer>> PreTokenizer::Create(
    const PreTokenizerConfig& config) {
  absl::StatusOr<std::unique_ptr<PreTokenizer>> split = CreateSplit(config);
  if (!split.ok() || !config.split_digits) return split;
  return MakeDigitSplitter(*std::move(split));
}

}  // namespace tokenmill
