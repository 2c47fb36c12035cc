#include "model/units.h"

#include <algorithm>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "common/byte_level.h"
#include "common/utf8.h"
#include "common/strings.h"
#include "model/json_writer.h"
#include "pretokenize/presets.h"
#include "pretokenize/text_prep.h"

namespace tokenmill {
namespace {

std::string HfSequence(std::string_view field, const std::vector<std::string>& parts) {
  std::string out = StrCat(R"({"type":"Sequence",")", field, R"(":[)");
  for (size_t i = 0; i < parts.size(); ++i) StrAppend(&out, i ? "," : "", parts[i]);
  out += "]}";
  return out;
}

std::string HfMetaspace(const PreTokenizerConfig& config) {
  return StrCat(R"({"type":"Metaspace","replacement":"▁","prepend_scheme":")",
                config.metaspace_prefix ? "always" : "never", R"(","split":true})");
}

// The pre-tokenizers that split as `config` does (before any ByteLevel), in order.
std::vector<std::string> HfSplitParts(const PreTokenizerConfig& config) {
  std::vector<std::string> parts;
  if (config.preset == "metaspace") {
    parts.push_back(HfMetaspace(config));
  } else if (config.preset == "whitespace") {
    parts.push_back(R"({"type":"Whitespace"})");
  } else if (config.preset == "bert") {
    parts.push_back(R"({"type":"BertPreTokenizer"})");
  } else if (config.preset != "none") {
    std::string split = R"({"type":"Split","pattern":{"Regex":)";
    AppendJsonString(EffectivePattern(config), split);
    split += R"(},"behavior":"Isolated","invert":false})";
    parts.push_back(std::move(split));
  }
  if (config.split_digits) parts.push_back(R"({"type":"Digits","individual_digits":true})");
  return parts;
}

class ByteSplitter : public SymbolSplitter {
 public:
  ByteSplitter(std::span<const std::string> alphabet, uint32_t first_id) {
    std::fill(std::begin(id_), std::end(id_), 0);
    for (size_t i = 0; i < alphabet.size(); ++i) {
      id_[static_cast<unsigned char>(alphabet[i][0])] = first_id + static_cast<uint32_t>(i);
    }
  }
  // (A byte the alphabet lacks would be a word the trainer never sees: hf_compat alphabets
  // hold every byte that occurs.)
  size_t Split(std::string_view word, uint32_t* out) const override {
    for (unsigned char c : word) *out++ = id_[c];
    return word.size();
  }

 private:
  uint32_t id_[256];
};

class ByteUnits : public Units {
 public:
  UnitKind kind() const override { return UnitKind::kByte; }

  Alphabet MakeAlphabet(std::span<const std::pair<std::string_view, uint64_t>> words,
                        const AlphabetOptions& options) const override {
    std::vector<int> bytes;
    if (options.hf_compat) {
      bool seen[256] = {};
      for (const auto& [word, count] : words) {
        for (unsigned char c : word) seen[c] = true;
      }
      for (int b = 0; b < 256; ++b) {
        if (seen[b] || options.every_symbol) bytes.push_back(b);
      }
      std::sort(bytes.begin(), bytes.end(),
                [](int x, int y) { return ByteToCodePoint(x) < ByteToCodePoint(y); });
    } else {
      for (int b = 0; b < 256; ++b) bytes.push_back(b);
    }
    Alphabet alphabet;
    alphabet.symbols.reserve(bytes.size());
    for (int b : bytes) alphabet.symbols.emplace_back(1, static_cast<char>(b));
    return alphabet;
  }

  std::unique_ptr<SymbolSplitter> Splitter(const Alphabet& alphabet,
                                           uint32_t first_id) const override {
    return std::make_unique<ByteSplitter>(alphabet.symbols, first_id);
  }

  std::string Join(std::string_view left, std::string_view right) const override {
    return StrCat(left, right);
  }
  size_t Length(std::string_view token) const override { return token.size(); }

  std::bitset<256> UnencodableBytes(std::span<const std::string> tokens,
                                    const std::vector<bool>& is_special) const override {
    return BytesWithoutToken(tokens, is_special);
  }

  std::string TokenToText(std::string_view bytes) const override { return BytesToByteLevel(bytes); }
  absl::StatusOr<std::string> TextToToken(std::string_view text) const override {
    return ByteLevelToBytes(text);
  }
  bool AppendTextAsToken(std::string_view text, std::string& out) const override {
    return AppendByteLevelBytes(text, out);
  }

  std::string HfPreTokenizer(const PreTokenizerConfig& config) const override {
    if (config.preset == "gpt2" && !config.split_digits) {
      return R"({"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true})";
    }
    std::vector<std::string> parts = HfSplitParts(config);
    parts.push_back(
        R"({"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":false})");
    return HfSequence("pretokenizers", parts);
  }
  std::string HfDecoder(const PreTokenizerConfig& config, bool, std::string_view,
                        std::string_view) const override {
    std::string byte_level =
        R"({"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true})";
    if (config.preset != "metaspace") return byte_level;
    return HfSequence("decoders", {byte_level, HfMetaspace(config)});
  }
};

class CharSplitter : public SymbolSplitter {
 public:
  CharSplitter(const Alphabet& alphabet, uint32_t first_id)
      : prefix_(!alphabet.continuing_prefix.empty()), suffix_(!alphabet.end_suffix.empty()) {
    uint32_t max_cp = 0;
    for (const auto& [cp, variant] : alphabet.chars) max_cp = std::max(max_cp, cp);
    for (auto& table : id_) table.assign(alphabet.chars.empty() ? 0 : size_t{max_cp} + 1, kNone);
    for (size_t k = 0; k < alphabet.chars.size(); ++k) {
      const auto [cp, variant] = alphabet.chars[k];
      id_[variant][cp] = first_id + static_cast<uint32_t>(alphabet.first_char() + k);
    }
    if (alphabet.unknown) unknown_ = first_id;
    if (alphabet.unknown_id != kNone) unknown_ = alphabet.unknown_id;
    if (alphabet.byte_fallback) bytes_ = first_id + (alphabet.unknown ? 1 : 0);
  }

  size_t Split(std::string_view word, uint32_t* out) const override {
    const auto* s = reinterpret_cast<const unsigned char*>(word.data());
    const size_t n = word.size();
    uint32_t* start = out;
    for (size_t i = 0; i < n;) {
      const CodePoint c = DecodeCodePoint(s, n, i);
      const std::vector<uint32_t>& table = id_[CharVariantAt(i == 0, i + c.len >= n, prefix_, suffix_)];
      if (c.cp >= 0 && static_cast<size_t>(c.cp) < table.size() && table[c.cp] != kNone) {
        *out++ = table[c.cp];
      } else if (bytes_ != kNone) {
        for (size_t k = 0; k < c.len; ++k) *out++ = bytes_ + s[i + k];
      } else if (unknown_ != kNone) {
        *out++ = unknown_;
      }
      i += c.len;
    }
    return static_cast<size_t>(out - start);
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> id_[4];  // by CharVariant, then code point
  bool prefix_, suffix_;
  uint32_t unknown_ = kNone;
  uint32_t bytes_ = kNone;  // the fallback token of byte 0
};

class CharUnits : public Units {
 public:
  UnitKind kind() const override { return UnitKind::kChar; }

  Alphabet MakeAlphabet(std::span<const std::pair<std::string_view, uint64_t>> words,
                        const AlphabetOptions& options) const override {
    CharCounts counts = CountChars(words);
    Alphabet alphabet;
    alphabet.invalid_bytes = counts.invalid_bytes;
    alphabet.distinct_chars = counts.chars.size();
    for (const auto& [cp, count] : counts.chars) alphabet.char_occurrences += count;
    // By count, then code point.
    std::sort(counts.chars.begin(), counts.chars.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    const size_t keep =
        KeptCharacters(counts.chars, alphabet.char_occurrences,
                       options.hf_compat ? 1.0 : options.character_coverage, options.limit_alphabet);
    for (size_t i = keep; i < counts.chars.size(); ++i) {
      alphabet.uncovered_occurrences += counts.chars[i].second;
    }
    counts.chars.resize(keep);
    std::sort(counts.chars.begin(), counts.chars.end());  // by code point (Hugging Face's order)
    alphabet.unknown = options.unknown_token;
    alphabet.byte_fallback = options.byte_fallback;
    if (alphabet.unknown) alphabet.symbols.push_back(options.unknown_name);
    if (alphabet.byte_fallback) {
      for (int b = 0; b < 256; ++b) alphabet.symbols.emplace_back(1, static_cast<char>(b));
    }
    alphabet.continuing_prefix = options.continuing_prefix;
    alphabet.end_suffix = options.end_suffix;
    for (const auto& [cp, count] : counts.chars) alphabet.chars.emplace_back(cp, kPlainChar);
    if (!options.continuing_prefix.empty() || !options.end_suffix.empty()) {
      std::vector<uint32_t> kept(counts.chars.size());
      for (size_t k = 0; k < kept.size(); ++k) kept[k] = counts.chars[k].first;
      std::vector<std::pair<uint32_t, uint8_t>> variants =
          CharVariants(words, kept, !options.continuing_prefix.empty(), !options.end_suffix.empty());
      alphabet.chars.insert(alphabet.chars.end(), variants.begin(), variants.end());
    }
    auto symbol_of = [&](uint32_t cp, uint8_t variant) {
      std::string symbol = (variant & kPrefixedChar) ? options.continuing_prefix : std::string();
      AppendUtf8(static_cast<char32_t>(cp), symbol);
      if (variant & kSuffixedChar) symbol += options.end_suffix;
      return symbol;
    };
    if (!options.marked_order.empty()) {
      StringMap<size_t> rank;
      for (size_t i = 0; i < options.marked_order.size(); ++i) {
        rank.emplace(options.marked_order[i], i);
      }
      auto first_marked = alphabet.chars.begin() + static_cast<long>(counts.chars.size());
      std::stable_sort(first_marked, alphabet.chars.end(), [&](const auto& x, const auto& y) {
        auto rx = rank.find(symbol_of(x.first, x.second));
        auto ry = rank.find(symbol_of(y.first, y.second));
        const size_t kLast = options.marked_order.size();
        return (rx == rank.end() ? kLast : rx->second) < (ry == rank.end() ? kLast : ry->second);
      });
    }
    for (const auto& [cp, variant] : alphabet.chars) alphabet.symbols.push_back(symbol_of(cp, variant));
    return alphabet;
  }

  std::unique_ptr<SymbolSplitter> Splitter(const Alphabet& alphabet,
                                           uint32_t first_id) const override {
    return std::make_unique<CharSplitter>(alphabet, first_id);
  }

  std::string Join(std::string_view left, std::string_view right) const override {
    return StrCat(left, right);
  }
  size_t Length(std::string_view token) const override {
    const auto* s = reinterpret_cast<const unsigned char*>(token.data());
    size_t chars = 0;
    for (size_t i = 0; i < token.size(); ++chars) i += DecodeCodePoint(s, token.size(), i).len;
    return chars;
  }

  std::bitset<256> UnencodableBytes(std::span<const std::string>,
                                    const std::vector<bool>&) const override {
    return {};  // the piece encoder maps what it has no token for (char_bpe_encoder.h)
  }

  std::string TokenToText(std::string_view bytes) const override { return std::string(bytes); }
  absl::StatusOr<std::string> TextToToken(std::string_view text) const override {
    return std::string(text);
  }
  bool AppendTextAsToken(std::string_view text, std::string& out) const override {
    out += text;
    return true;
  }

  std::string HfPreTokenizer(const PreTokenizerConfig& config) const override {
    std::vector<std::string> parts = HfSplitParts(config);
    if (parts.empty()) return "null";
    if (parts.size() == 1) return parts[0];
    return HfSequence("pretokenizers", parts);
  }
  // Per token: the markers go (the prefix, and the suffix as a space but after the last
  // token: Hugging Face's BPEDecoder), "▁" becomes a space; then byte-fallback runs become
  // their bytes, the tokens are joined, and the prefix's space goes: Hugging Face's Llama
  // decoders. (Its Metaspace decoder would drop every "▁" of the first token, which after Fuse
  // is all of them.)
  std::string HfDecoder(const PreTokenizerConfig& config, bool byte_fallback,
                        std::string_view prefix, std::string_view suffix) const override {
    std::vector<std::string> parts;
    auto replace = [&](std::string_view pattern, std::string_view content) {
      std::string part = R"({"type":"Replace","pattern":{"String":)";
      AppendJsonString(pattern, part);
      part += R"(},"content":)";
      AppendJsonString(content, part);
      part += "}";
      parts.push_back(std::move(part));
    };
    if (!prefix.empty()) replace(prefix, "");
    if (!suffix.empty()) {
      std::string part = R"({"type":"BPEDecoder","suffix":)";
      AppendJsonString(suffix, part);
      parts.push_back(part + "}");
    }
    const bool metaspace = config.preset == "metaspace";
    if (metaspace) replace(kMetaspace, " ");
    if (byte_fallback) parts.push_back(R"({"type":"ByteFallback"})");
    parts.push_back(R"({"type":"Fuse"})");
    if (metaspace && config.metaspace_prefix) {
      parts.push_back(R"({"type":"Strip","content":" ","start":1,"stop":0})");
    }
    return HfSequence("decoders", parts);
  }

 private:
  struct CharCounts {
    std::vector<std::pair<uint32_t, uint64_t>> chars;  // code point, occurrences
    uint64_t invalid_bytes = 0;
  };
  // The variants other than plain of the characters `kept` (sorted) that the words hold, by
  // code point and kind.
  static std::vector<std::pair<uint32_t, uint8_t>> CharVariants(
      std::span<const std::pair<std::string_view, uint64_t>> words,
      const std::vector<uint32_t>& kept, bool prefix, bool suffix) {
    tbb::enumerable_thread_specific<absl::flat_hash_set<uint64_t>> locals;
    tbb::parallel_for(tbb::blocked_range<size_t>(0, words.size(), 4096),
                      [&](const tbb::blocked_range<size_t>& range) {
      absl::flat_hash_set<uint64_t>& local = locals.local();
      for (size_t w = range.begin(); w < range.end(); ++w) {
        const std::string_view word = words[w].first;
        const auto* s = reinterpret_cast<const unsigned char*>(word.data());
        for (size_t i = 0; i < word.size();) {
          const CodePoint c = DecodeCodePoint(s, word.size(), i);
          const uint8_t variant = CharVariantAt(i == 0, i + c.len >= word.size(), prefix, suffix);
          if (variant != kPlainChar && c.cp >= 0 &&
              std::binary_search(kept.begin(), kept.end(), static_cast<uint32_t>(c.cp))) {
            local.insert(uint64_t{static_cast<uint32_t>(c.cp)} << 8 | variant);
          }
          i += c.len;
        }
      }
    });
    std::vector<uint64_t> all;
    for (const auto& local : locals) all.insert(all.end(), local.begin(), local.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    std::vector<std::pair<uint32_t, uint8_t>> variants;
    for (uint64_t v : all) variants.emplace_back(static_cast<uint32_t>(v >> 8), static_cast<uint8_t>(v & 0xFF));
    return variants;
  }

  static CharCounts CountChars(std::span<const std::pair<std::string_view, uint64_t>> words) {
    struct Local {
      absl::flat_hash_map<uint32_t, uint64_t> chars;
      uint64_t ascii[128] = {};
      uint64_t invalid = 0;
    };
    tbb::enumerable_thread_specific<Local> locals;
    tbb::parallel_for(tbb::blocked_range<size_t>(0, words.size(), 4096),
                      [&](const tbb::blocked_range<size_t>& range) {
      Local& local = locals.local();
      for (size_t w = range.begin(); w < range.end(); ++w) {
        const auto [word, count] = words[w];
        const auto* s = reinterpret_cast<const unsigned char*>(word.data());
        for (size_t i = 0; i < word.size();) {
          if (s[i] < 0x80) {
            local.ascii[s[i++]] += count;
            continue;
          }
          const CodePoint c = DecodeCodePoint(s, word.size(), i);
          if (c.cp < 0) {
            local.invalid += count;
          } else {
            local.chars[static_cast<uint32_t>(c.cp)] += count;
          }
          i += c.len;
        }
      }
    });
    absl::flat_hash_map<uint32_t, uint64_t> all;
    CharCounts counts;
    uint64_t ascii[128] = {};
    for (const Local& local : locals) {
      for (const auto& [cp, count] : local.chars) all[cp] += count;
      for (int b = 0; b < 128; ++b) ascii[b] += local.ascii[b];
      counts.invalid_bytes += local.invalid;
    }
    for (uint32_t b = 0; b < 128; ++b) {
      if (ascii[b] > 0) counts.chars.emplace_back(b, ascii[b]);
    }
    for (const auto& [cp, count] : all) counts.chars.emplace_back(cp, count);
    return counts;
  }
};

}  // namespace

std::bitset<256> BytesWithoutToken(std::span<const std::string> tokens,
                                   const std::vector<bool>& is_special) {
  std::bitset<256> missing;
  missing.set();
  for (size_t id = 0; id < tokens.size(); ++id) {
    if (tokens[id].size() == 1 && (id >= is_special.size() || !is_special[id])) {
      missing.reset(static_cast<unsigned char>(tokens[id][0]));
    }
  }
  return missing;
}

std::string_view UnitKindName(UnitKind kind) {
  switch (kind) {
    case UnitKind::kByte: return "byte";
    case UnitKind::kChar: return "char";
  }
  return "?";
}

const Units& UnitsOf(UnitKind kind) {
  static const ByteUnits byte_units;
  static const CharUnits char_units;
  switch (kind) {
    case UnitKind::kByte: return byte_units;
    case UnitKind::kChar: return char_units;
  }
  return byte_units;
}

size_t KeptCharacters(std::span<const std::pair<uint32_t, uint64_t>> by_count, uint64_t total,
                      double coverage, size_t limit) {
  size_t keep = by_count.size();
  if (coverage < 1.0) {
    uint64_t covered = 0;
    keep = 0;
    for (const auto& [cp, count] : by_count) {
      if (static_cast<double>(covered) >= coverage * static_cast<double>(total)) break;
      covered += count;
      ++keep;
    }
  }
  return limit > 0 ? std::min(keep, limit) : keep;
}

std::string ByteFallbackName(unsigned char byte) { return absl::StrFormat("<0x%02X>", byte); }

int ParseByteFallbackName(std::string_view name) {
  if (name.size() != 6 || !name.starts_with("<0x") || name[5] != '>') return -1;
  int value = 0;
  for (char c : name.substr(3, 2)) {
    value <<= 4;
    if (c >= '0' && c <= '9') {
      value |= c - '0';
    } else if (c >= 'A' && c <= 'F') {
      value |= c - 'A' + 10;
    } else {
      return -1;
    }
  }
  return value;
}

}  // namespace tokenmill
