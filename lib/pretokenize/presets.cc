#include "pretokenize/presets.h"

#include "common/strings.h"
#include "pretokenize/pretokenizer_config.h"

namespace tokenmill {

std::vector<std::string> PresetNames() {
  std::vector<std::string> names;
  for (const PreTokenizerPreset& p : kPreTokenizerPresets) names.emplace_back(p.name);
  for (const PreTokenizerPreset& p : kSplitModes) names.emplace_back(p.name);
  return names;
}

std::string PresetNameList() {
  std::string list;
  for (const std::string& name : PresetNames()) StrAppend(&list, list.empty() ? "" : ", ", name);
  return list;
}

void ApplyPresetNormalizer(PreTokenizerConfig* config) {
  if (config->preset != "bert") return;
  config->normalizer.clean_text = true;
  config->normalizer.handle_chinese_chars = true;
}

std::string EffectivePattern(const PreTokenizerConfig& config) {
  if (config.preset == "custom") return config.pattern;
  for (const PreTokenizerPreset& p : kSplitModes) {
    if (p.name == config.preset) return std::string(p.pattern);
  }
  return std::string(PresetPattern(config.preset));
}

}  // namespace tokenmill
