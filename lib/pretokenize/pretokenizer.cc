// Interim engine: the preset patterns run by PCRE2 (UTF + UCP + JIT, invalid UTF-8 allowed).
// Bytes that no match covers (invalid UTF-8) become pieces of their own so that pieces always
// concatenate to the input.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <string>

#include "common/strings.h"
#include "pretokenize/presets.h"
#include "pretokenize/pretokenizer.h"

namespace tokenmill {
namespace {

class Pcre2PreTokenizer final : public PreTokenizer {
 public:
  explicit Pcre2PreTokenizer(pcre2_code* code) : code_(code) {}
  ~Pcre2PreTokenizer() override { pcre2_code_free(code_); }

  void Split(std::string_view text,
             absl::FunctionRef<void(std::string_view)> on_piece) const override {
    pcre2_match_data* match = pcre2_match_data_create_from_pattern(code_, nullptr);
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    size_t pos = 0;
    while (pos < text.size()) {
      int rc = pcre2_match(code_, subject, text.size(), pos, 0, match, nullptr);
      if (rc < 0) {
        on_piece(text.substr(pos));
        break;
      }
      PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
      size_t start = ovector[0], end = ovector[1];
      if (start > pos) on_piece(text.substr(pos, start - pos));
      if (end == start) {  // cannot happen for the presets; guard against custom patterns
        end = start + 1;
      }
      on_piece(text.substr(start, end - start));
      pos = end;
    }
    pcre2_match_data_free(match);
  }

 private:
  pcre2_code* code_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<PreTokenizer>> PreTokenizer::Create(
    const PreTokenizerConfig& config) {
  std::string_view pattern =
      config.preset == "custom" ? std::string_view(config.pattern) : PresetPattern(config.preset);
  if (pattern.empty()) {
    return absl::InvalidArgumentError(StrCat(
        "unknown pre-tokenizer preset '", config.preset, "' (known: gpt2, cl100k, o200k, qwen2)"));
  }
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

}  // namespace tokenmill
