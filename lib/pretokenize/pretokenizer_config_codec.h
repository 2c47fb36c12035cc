// PreTokenizerConfig as an option value (common/option_fields.h): stored as the preset and the
// pattern, then, when any other field differs from its default, those fields as one record
// (EncodeTextSettings: files written before them decode to the defaults); shown as the preset's
// name, or "custom:" and the pattern, and the other fields that are set.
#pragma once

#include "common/option_fields.h"
#include "pretokenize/pretokenizer_config.h"

namespace tokenmill {

// The record's tagged fields, each a varint tag and a varint value, written only when the
// field is set; they follow the four untagged ones (form, lowercase, split_digits,
// metaspace_prefix), which records before them end with. A number is never reused.
enum TextSettingTag : uint64_t {
  kCleanText = 1,           // NormalizerConfig::clean_text, 1
  kHandleChineseChars = 2,  // NormalizerConfig::handle_chinese_chars, 1
  kStripAccents = 3,        // NormalizerConfig::strip_accents, 1
};

// Whether `v` sets a field that only the tagged part of the record holds.
inline bool HasTaggedTextSettings(const PreTokenizerConfig& v) { return v.normalizer.bert(); }

// The fields past preset and pattern, as one record (empty when all are the defaults).
inline std::string EncodeTextSettings(const PreTokenizerConfig& v) {
  std::string out;
  if (v.SplitOnly()) return out;
  BinaryWriter w(&out);
  w.Varint(static_cast<uint64_t>(v.normalizer.form));
  w.Varint(v.normalizer.lowercase);
  w.Varint(v.split_digits);
  w.Varint(v.metaspace_prefix);
  auto tagged = [&](TextSettingTag tag, bool set) {
    if (!set) return;
    w.Varint(tag);
    w.Varint(1);
  };
  tagged(kCleanText, v.normalizer.clean_text);
  tagged(kHandleChineseChars, v.normalizer.handle_chinese_chars);
  tagged(kStripAccents, v.normalizer.strip_accents);
  return out;
}
// Fails on a malformed record, an unknown tag, a tag given twice or a value other than 0/1.
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
  v->normalizer.clean_text = v->normalizer.handle_chinese_chars = v->normalizer.strip_accents =
      false;
  uint64_t seen = 0;  // bit `tag` for each tag read
  while (!r.done()) {
    uint64_t tag, value;
    if (!r.Varint(&tag) || !r.Varint(&value) || value > 1 || tag >= 64 ||
        (seen >> tag & 1) != 0) {
      return false;
    }
    seen |= uint64_t{1} << tag;
    switch (tag) {
      case kCleanText:
        v->normalizer.clean_text = value != 0;
        break;
      case kHandleChineseChars:
        v->normalizer.handle_chinese_chars = value != 0;
        break;
      case kStripAccents:
        v->normalizer.strip_accents = value != 0;
        break;
      default:
        return false;
    }
  }
  return true;
}
// "nfkc clean_text handle_chinese_chars strip_accents lowercase split_digits
// no_metaspace_prefix": the settings past the split, as words, the normalizer's in its order.
inline std::string DescribeTextSettings(const PreTokenizerConfig& v) {
  std::string out;
  auto add = [&](std::string_view word) { StrAppend(&out, out.empty() ? "" : " ", word); };
  if (v.normalizer.form != NormalForm::kNone) add(NormalFormName(v.normalizer.form));
  if (v.normalizer.clean_text) add("clean_text");
  if (v.normalizer.handle_chinese_chars) add("handle_chinese_chars");
  if (v.normalizer.strip_accents) add("strip_accents");
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
