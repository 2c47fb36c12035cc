// The pre-tokenizer presets: names and their regular expressions (PCRE syntax and semantics,
// matched over UTF-8 text with Unicode properties), exactly as OpenAI publishes them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tokenmill {

struct PreTokenizerPreset {
  std::string_view name;
  std::string_view pattern;
  std::string_view description;
};

// GPT-2, r50k_base, p50k_base.
inline constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// GPT-4 (cl100k_base); also Llama 3.
inline constexpr std::string_view kCl100kPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// GPT-4o (o200k_base).
inline constexpr std::string_view kO200kPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Qwen2: cl100k with single digits.
inline constexpr std::string_view kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

inline constexpr PreTokenizerPreset kPreTokenizerPresets[] = {
    {"gpt2", kGpt2Pattern, "GPT-2 / r50k / p50k"},
    {"cl100k", kCl100kPattern, "GPT-4 cl100k_base, Llama 3"},
    {"o200k", kO200kPattern, "GPT-4o o200k_base"},
    {"qwen2", kQwen2Pattern, "Qwen2: cl100k with single digits"},
};

// The splits that are no OpenAI pattern (split_modes.h), usable wherever a preset is.
inline constexpr PreTokenizerPreset kSplitModes[] = {
    {"metaspace", "", "SentencePiece: spaces become \u2581, which starts each piece"},
    {"whitespace", R"(\w+|[^\w\s]+)",
     "Hugging Face's Whitespace: word runs and other runs, whitespace dropped"},
    {"bert", "", "BERT's: whitespace dropped, each punctuation character alone"},
    {"none", "", "no split: each text (a line) is one piece"},
};
inline bool IsSplitMode(std::string_view name) {
  for (const PreTokenizerPreset& p : kSplitModes) {
    if (p.name == name) return true;
  }
  return false;
}

struct PreTokenizerConfig;
// Turns on the normalization steps that config->preset comes with: "bert" brings BERT's
// clean_text and handle_chinese_chars (pretokenizer_config.h); lowercasing and strip_accents
// stay the caller's to choose. Other presets bring none.
void ApplyPresetNormalizer(PreTokenizerConfig* config);

// The presets' names in list order, then the split modes', for flags, help texts and errors.
std::vector<std::string> PresetNames();
// The same joined with ", " (e.g. "gpt2, cl100k, o200k, qwen2, metaspace, whitespace, bert,
// none").
std::string PresetNameList();

// The pattern of preset `name`, or an empty view if there is no such preset.
inline std::string_view PresetPattern(std::string_view name) {
  for (const PreTokenizerPreset& p : kPreTokenizerPresets) {
    if (p.name == name) return p.pattern;
  }
  return {};
}

}  // namespace tokenmill
