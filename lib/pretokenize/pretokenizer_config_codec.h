// PreTokenizerConfig as an option value (common/option_fields.h): stored as the preset and the
// pattern, then, when any other field differs from its default, those fields as one record
// (EncodeTextSettings: files written before them decode to the defaults); shown as the preset's
// name, or "custom:" and the pattern, and the other fields that are set.
#pragma once

#include "common/option_fields.h"
#include "pretokenize/pretokenizer_config.h"

namespace tokenmill {

// The fields past preset and pattern, as one record (empty when all are the defaults).
inline std::string EncodeTextSettings(const PreTokenizerConfig& v) {
  std::string out;
  if (v.SplitOnly()) return out;
  BinaryWriter w(&out);
  w.Varint(static_cast<uint64_t>(v.normalizer.form));
  w.Varint(v.normalizer.lowercase);
  w.Varint(v.split_digits);
  w.Varint(v.metaspace_prefix);
  return out;
}
inline bool DecodeTextSettings(std::string_view record, PreTokenizerConfig* v) {
  BinaryReader r(record);
  uint64_t form, lowercase, split_digits, prefix;
  if (!r.Varint(&form) || !r.Varint(&lowercase) || !r.Varint(&split_digits) ||
      !r.Varint(&prefix) || form > static_cast<uint64_t>(NormalForm::kNfkc) || lowercase > 1 ||
      split_digits > 1 || prefix > 1) {
    return false;
  }
  v->normalizer.form = static_cast<NormalForm>(form);
  v->normalizer.lowercase = lowercase != 0;
  v->split_digits = split_digits != 0;
  v->metaspace_prefix = prefix != 0;
  return true;
}
// "nfkc lowercase split_digits no_metaspace_prefix": the settings past the split, as words.
inline std::string DescribeTextSettings(const PreTokenizerConfig& v) {
  std::string out;
  auto add = [&](std::string_view word) { StrAppend(&out, out.empty() ? "" : " ", word); };
  if (v.normalizer.form != NormalForm::kNone) add(NormalFormName(v.normalizer.form));
  if (v.normalizer.lowercase) add("lowercase");
  if (v.split_digits) add("split_digits");
  if (!v.metaspace_prefix) add("no_metaspace_prefix");
  return out;
}

template <>
struct ValueCodec<PreTokenizerConfig> {
  static void Encode(const PreTokenizerConfig& v, BinaryWriter& w) {
    w.Bytes(v.preset);
    w.Bytes(v.pattern);
    if (!v.SplitOnly()) w.Bytes(EncodeTextSettings(v));
  }
  static bool Decode(BinaryReader& r, PreTokenizerConfig* v) {
    std::string_view preset, pattern;
    if (!r.Bytes(&preset) || !r.Bytes(&pattern)) return false;
    v->preset.assign(preset);
    v->pattern.assign(pattern);
    if (!r.done()) {
      std::string_view record;
      if (!r.Bytes(&record) || !DecodeTextSettings(record, v)) return false;
    }
    return true;
  }
  static std::vector<std::string> Values(const PreTokenizerConfig& v) {
    std::string split = v.preset == "custom" ? StrCat("custom:", v.pattern) : v.preset;
    std::string settings = DescribeTextSettings(v);
    return {settings.empty() ? split : StrCat(split, " ", settings)};
  }
  // A preset's name.
  static absl::Status Parse(std::string_view text, PreTokenizerConfig* v) {
    v->preset.assign(text);
    v->pattern.clear();
    return absl::OkStatus();
  }
};

}  // namespace tokenmill
