#include "model/units.h"

#include <algorithm>

#include "common/byte_level.h"
#include "common/strings.h"
#include "model/json_writer.h"
#include "pretokenize/presets.h"

namespace tokenmill {
namespace {

class ByteSplitter : public SymbolSplitter {
 public:
  ByteSplitter(std::span<const std::string> alphabet, uint32_t first_id) {
    std::fill(std::begin(id_), std::end(id_), 0);
    for (size_t i = 0; i < alphabet.size(); ++i) {
      id_[static_cast<unsigned char>(alphabet[i][0])] = first_id + static_cast<uint32_t>(i);
    }
  }
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

  std::vector<std::string> Alphabet(std::span<const std::pair<std::string_view, uint64_t>> words,
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
    std::vector<std::string> alphabet;
    alphabet.reserve(bytes.size());
    for (int b : bytes) alphabet.emplace_back(1, static_cast<char>(b));
    return alphabet;
  }

  std::unique_ptr<SymbolSplitter> Splitter(std::span<const std::string> alphabet,
                                           uint32_t first_id) const override {
    return std::make_unique<ByteSplitter>(alphabet, first_id);
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

  std::string HfPreTokenizer(const PreTokenizerConfig& config) const override {
    if (config.preset == "gpt2") {
      return R"({"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true})";
    }
    std::string out = R"({"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":)";
    AppendJsonString(EffectivePattern(config), out);
    out += R"(},"behavior":"Isolated","invert":false},)";
    out += R"({"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":false}]})";
    return out;
  }
  std::string_view HfDecoder() const override {
    return R"({"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true})";
  }
  bool byte_fallback() const override { return false; }
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
  }
  return "?";
}

const Units& UnitsOf(UnitKind kind) {
  static const ByteUnits byte_units;
  switch (kind) {
    case UnitKind::kByte: return byte_units;
  }
  return byte_units;
}

}  // namespace tokenmill
