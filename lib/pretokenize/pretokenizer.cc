// PreTokenizer::Create: the presets run on hand-written scanners (preset_scanners.h); custom
// patterns on the interim PCRE2 engine below.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <string>

#include "common/strings.h"
#include "pretokenize/preset_scanners.h"
#include "pretokenize/presets.h"
#include "pretokenize/pretokenizer.h"

namespace tokenmill {
namespace {

// Interim engine for custom patterns: PCRE2 (UTF + UCP + JIT, invalid UTF-8 allowed). Each byte
// that no match covers (invalid UTF-8) becomes a piece of its own.
class Pcre2PreTokenizer final : public PreTokenizer {
 public:
  explicit Pcre2PreTokenizer(pcre2_code* code) : code_(code) {}
  ~Pcre2PreTokenizer() override { pcre2_code_free(code_); }

  void Split(std::string_view text,
             absl::FunctionRef<void(std::string_view)> on_piece) const override {
    pcre2_match_data* match = pcre2_match_data_create_from_pattern(code_, nullptr);
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    size_t pos = 0;
    auto uncovered = [&](size_t from, size_t to) {
      for (size_t i = from; i < to; ++i) on_piece(text.substr(i, 1));
    };
    while (pos < text.size()) {
      int rc = pcre2_match(code_, subject, text.size(), pos, 0, match, nullptr);
      if (rc < 0) {
        uncovered(pos, text.size());
        break;
      }
      PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
      size_t start = ovector[0], end = ovector[1];
      uncovered(pos, start);
      if (end == start) end = start + 1;
      on_piece(text.substr(start, end - start));
      pos = end;
    }
    pcre2_match_data_free(match);
  }

 private:
  pcre2_code* code_;
};

absl::StatusOr<std::unique_ptr<PreTokenizer>> MakeCustom(std::string_view pattern) {
  int error_code;
  PCRE2_SIZE error_offset;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error_code,
                                   &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof(message));
    return absl::InvalidArgumentError(StrCat("invalid pattern at offset ", error_offset, ": ",
                                             reinterpret_cast<const char*>(message)));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  return std::make_unique<Pcre2PreTokenizer>(code);
}

}  // namespace

absl::StatusOr<std::unique_ptr<PreTokenizer>> PreTokenizer::Create(
    const PreTokenizerConfig& config) {
  if (config.preset == "gpt2") return MakeGpt2Scanner();
  if (config.preset == "cl100k") return MakeCl100kScanner(3);
  if (config.preset == "qwen2") return MakeCl100kScanner(1);
  if (config.preset == "o200k") return MakeO200kScanner();
  if (config.preset == "custom") {
    if (config.pattern.empty()) return absl::InvalidArgumentError("the custom pattern is empty");
    return MakeCustom(config.pattern);
  }
  return absl::InvalidArgumentError(StrCat("unknown pre-tokenizer preset '", config.preset,
                                           "' (known: gpt2, cl100k, o200k, qwen2, custom)"));
}

}  // namespace tokenmill
