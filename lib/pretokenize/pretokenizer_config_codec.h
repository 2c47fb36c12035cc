// PreTokenizerConfig as an option value (common/option_fields.h): stored as the preset and the
// pattern; shown as the preset's name, or "custom:" and the pattern.
#pragma once

#include "common/option_fields.h"
#include "pretokenize/pretokenizer_config.h"

namespace tokenmill {

template <>
struct ValueCodec<PreTokenizerConfig> {
  static void Encode(const PreTokenizerConfig& v, BinaryWriter& w) {
    w.Bytes(v.preset);
    w.Bytes(v.pattern);
  }
  static bool Decode(BinaryReader& r, PreTokenizerConfig* v) {
    std::string_view preset, pattern;
    if (!r.Bytes(&preset) || !r.Bytes(&pattern)) return false;
    v->preset.assign(preset);
    v->pattern.assign(pattern);
    return true;
  }
  static std::vector<std::string> Values(const PreTokenizerConfig& v) {
    return {v.preset == "custom" ? StrCat("custom:", v.pattern) : v.preset};
  }
  // A preset's name.
  static absl::Status Parse(std::string_view text, PreTokenizerConfig* v) {
    v->preset.assign(text);
    v->pattern.clear();
    return absl::OkStatus();
  }
};

}  // namespace tokenmill
