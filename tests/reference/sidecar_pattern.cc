#include "reference/sidecar_pattern.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "reference/pcre2_splitter.h"
#include "reference/utf8_reference.h"

namespace tokenmill::testing {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads the JSON string starting at json[*at] (the opening quote), decoding its escapes
// (RFC 8259 section 7, surrogate pairs included); moves *at past the closing quote.
absl::StatusOr<std::string> ReadJsonString(std::string_view json, size_t* at) {
  size_t i = *at + 1;
  std::string out;
  auto hex4 = [&](size_t from, uint32_t* value) {
    if (json.size() - from < 4) return false;
    *value = 0;
    for (size_t k = 0; k < 4; ++k) {
      const int d = HexDigit(json[from + k]);
      if (d < 0) return false;
      *value = *value * 16 + static_cast<uint32_t>(d);
    }
    return true;
  };
  while (i < json.size()) {
    const char c = json[i];
    if (c == '"') {
      *at = i + 1;
      return out;
    }
    if (c != '\\') {
      out.push_back(c);
      ++i;
      continue;
    }
    if (i + 1 >= json.size()) break;
    const char e = json[i + 1];
    i += 2;
    switch (e) {
      case '"': out.push_back('"'); break;
      case '\\': out.push_back('\\'); break;
      case '/': out.push_back('/'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        uint32_t cp;
        if (!hex4(i, &cp)) return absl::InvalidArgumentError("bad \\u escape");
        i += 4;
        if (cp >= 0xD800 && cp < 0xDC00) {
          uint32_t low;
          if (json.substr(i, 2) != "\\u" || !hex4(i + 2, &low) || low < 0xDC00 || low >= 0xE000) {
            return absl::InvalidArgumentError("unpaired surrogate escape");
          }
          i += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
          return absl::InvalidArgumentError("unpaired surrogate escape");
        }
        AppendUtf8(cp, out);
        break;
      }
      default:
        return absl::InvalidArgumentError(absl::StrCat("bad escape \\", std::string(1, e)));
    }
  }
  return absl::InvalidArgumentError("unterminated string");
}

// The string value of top-level field `key` of the JSON object `json`: the first occurrence
// of "key" followed by a colon (the sidecars hold it once, before any nested object).
absl::StatusOr<std::string> StringField(std::string_view json, std::string_view key) {
  const std::string quoted = "\"" + std::string(key) + "\"";
  size_t at = json.find(quoted);
  if (at == std::string_view::npos) return absl::NotFoundError(absl::StrCat("no field ", quoted));
  at += quoted.size();
  auto skip_space = [&] {
    while (at < json.size() && (json[at] == ' ' || json[at] == '\n' || json[at] == '\r' ||
                                json[at] == '\t')) {
      ++at;
    }
  };
  skip_space();
  if (at >= json.size() || json[at] != ':') return absl::InvalidArgumentError("no colon");
  ++at;
  skip_space();
  if (at >= json.size() || json[at] != '"') {
    return absl::InvalidArgumentError(absl::StrCat("field ", quoted, " is not a string"));
  }
  return ReadJsonString(json, &at);
}

}  // namespace

std::string TestVocabDir() { return std::string(TOKENMILL_VOCAB_DIR) + "/"; }

absl::StatusOr<std::string> SidecarPath(std::string_view preset) {
  if (preset == "gpt2") return TestVocabDir() + "gpt2.json";
  if (preset == "cl100k") return TestVocabDir() + "cl100k_base.json";
  if (preset == "o200k") return TestVocabDir() + "o200k_base.json";
  if (preset == "qwen2") return std::string(TOKENMILL_REFERENCE_DATA_DIR) + "/qwen2.json";
  return absl::NotFoundError("no sidecar for preset '" + std::string(preset) + "'");
}

absl::StatusOr<std::string> SidecarPattern(std::string_view preset) {
  absl::StatusOr<std::string> path = SidecarPath(preset);
  if (!path.ok()) return path.status();
  std::ifstream in(*path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", *path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  absl::StatusOr<std::string> pattern = StringField(buffer.str(), "pattern");
  if (!pattern.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(*path, ": ", pattern.status().message()));
  }
  return pattern;
}

absl::StatusOr<std::unique_ptr<PreTokenizer>> MakePcre2PresetPreTokenizer(std::string_view preset) {
  absl::StatusOr<std::string> pattern = SidecarPattern(preset);
  if (!pattern.ok()) return pattern.status();
  return MakePcre2PreTokenizer(*pattern);
}

}  // namespace tokenmill::testing
