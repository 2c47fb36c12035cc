// PreTokenizerConfig: how text becomes the pieces ("words") a model sees, as data (models,
// counts files, checkpoints and options all carry one): normalization first (normalizer.h),
// then the split (pretokenizer.h), then, optionally, digits cut apart.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace tokenmill {

// Unicode normalization forms, numbered for files: a number is never reused.
enum class NormalForm : uint8_t {
  kNone = 0,  // text as it is
  kNfc = 1,
  kNfkc = 2,
};
// "none", "nfc", "nfkc".
std::string_view NormalFormName(NormalForm form);
// The form named `name` (one of NormalFormName's); false when there is none.
bool ParseNormalForm(std::string_view name, NormalForm* form);

// What normalization does to text before it is split, in this order: the normal form, then
// BERT's steps (Hugging Face's BertNormalizer, in its order), then lowercasing: Hugging Face's
// Sequence[NFKC, Lowercase], or Sequence[NFKC, BertNormalizer] when a BERT step is on
// (normalizer.h says what each step does).
// (The fields are not in that order: {form, lowercase} initializers predate the BERT steps.)
struct NormalizerConfig {
  NormalForm form = NormalForm::kNone;
  bool lowercase = false;
  // BertNormalizer's clean_text: NUL, U+FFFD and control characters go, whitespace becomes ' '.
  bool clean_text = false;
  // BertNormalizer's handle_chinese_chars: a space on either side of each CJK ideograph.
  bool handle_chinese_chars = false;
  // BertNormalizer's strip_accents: canonical decomposition (NFD), then every nonspacing mark
  // (Mn) goes; the text stays decomposed.
  bool strip_accents = false;
  // Whether a step of BertNormalizer's own (not lowercasing, which both normalizers have) is on.
  bool bert() const { return clean_text || handle_chinese_chars || strip_accents; }
  bool identity() const { return form == NormalForm::kNone && !bert() && !lowercase; }
  bool operator==(const NormalizerConfig&) const = default;
};

// `preset` is one of the names of kPreTokenizerPresets (presets.h), or "custom" with `pattern`
// set, or one of the splits of kSplitModes (presets.h: "metaspace", "whitespace", "bert",
// "none").
struct PreTokenizerConfig {
  PreTokenizerConfig() = default;
  // A split alone (the other settings at their defaults).
  PreTokenizerConfig(std::string split_preset, std::string split_pattern = "")
      : preset(std::move(split_preset)), pattern(std::move(split_pattern)) {}

  std::string preset = "gpt2";
  std::string pattern;  // only for preset == "custom"
  NormalizerConfig normalizer;
  // After the split, every decimal digit (\p{Nd}) is a piece of its own (Llama, Qwen).
  bool split_digits = false;
  // preset "metaspace": a "▁" goes before each text that does not start with one (SentencePiece's
  // dummy prefix; Hugging Face's prepend_scheme "always").
  bool metaspace_prefix = true;
  bool operator==(const PreTokenizerConfig&) const = default;
  // Whether only the preset/pattern differ from the defaults (what files before these fields
  // could hold).
  bool SplitOnly() const {
    return normalizer.identity() && !split_digits && metaspace_prefix;
  }
};

// The pattern text `config` stands for: the preset's own, or the custom one ("" for the split
// modes that are no pattern: metaspace, none).
std::string EffectivePattern(const PreTokenizerConfig& config);

}  // namespace tokenmill
