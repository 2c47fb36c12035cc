// PreTokenizerConfig: which pre-tokenizer splits text before a model sees it, as data (models,
// counts files, checkpoints and options all carry one).
#pragma once

#include <string>

namespace tokenmill {

// `preset` is one of the names of kPreTokenizerPresets (presets.h), or "custom" with `pattern`
// set.
struct PreTokenizerConfig {
  std::string preset = "gpt2";
  std::string pattern;  // only for preset == "custom"
  bool operator==(const PreTokenizerConfig&) const = default;
};

// The pattern text `config` stands for: the preset's own, or the custom one.
std::string EffectivePattern(const PreTokenizerConfig& config);

}  // namespace tokenmill
