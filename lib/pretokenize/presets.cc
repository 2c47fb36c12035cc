#include "pretokenize/presets.h"

#include "common/strings.h"
#include "pretokenize/pretokenizer_config.h"

namespace tokenmill {

std::vector<std::string> PresetNames() {
  std::vector<std::string> names;
  for (const PreTokenizerPreset& p : kPreTokenizerPresets) names.emplace_back(p.name);
  return names;
}

std::string PresetNameList() {
  std::string list;
  for (const PreTokenizerPreset& p : kPreTokenizerPresets) {
    StrAppend(&list, list.empty() ? "" : ", ", p.name);
  }
  return list;
}

std::string EffectivePattern(const PreTokenizerConfig& config) {
  if (config.preset == "custom") return config.pattern;
  return std::string(PresetPattern(config.preset));
}

}  // namespace tokenmill
