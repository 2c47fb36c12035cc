#include "reference/pcre2_splitter.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "reference/utf8_reference.h"

namespace tokenmill::testing {
namespace {

class Pcre2PreTokenizer final : public PreTokenizer {
 public:
  explicit Pcre2PreTokenizer(pcre2_code* code) : code_(code) {
    // No limit may cut a match short: a 100 MB run of spaces backtracks 10^8 steps in
    // \s*[\r\n]+ before \s+(?!\S) takes it.
    context_ = pcre2_match_context_create(nullptr);
    pcre2_set_match_limit(context_, UINT32_MAX);
    pcre2_set_depth_limit(context_, UINT32_MAX);
    pcre2_set_heap_limit(context_, UINT32_MAX);
    jit_stack_ = pcre2_jit_stack_create(32 << 10, 512 << 20, nullptr);
    pcre2_jit_stack_assign(context_, nullptr, jit_stack_);
  }
  ~Pcre2PreTokenizer() override {
    pcre2_jit_stack_free(jit_stack_);
    pcre2_match_context_free(context_);
    pcre2_code_free(code_);
  }

  void Split(std::string_view text,
             absl::FunctionRef<void(std::string_view)> on_piece) const override {
    pcre2_match_data* match = pcre2_match_data_create_from_pattern(code_, nullptr);
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    // Text no match covers: each invalid byte is a piece, each stretch of valid UTF-8 too.
    auto uncovered = [&](size_t from, size_t to) {
      const std::string_view span = text.substr(0, to);
      size_t valid_start = from;
      for (size_t i = from; i < to;) {
        const size_t length = DecodeUtf8At(span, i).length;
        if (length == 0) {
          if (valid_start < i) on_piece(text.substr(valid_start, i - valid_start));
          on_piece(text.substr(i, 1));
          valid_start = i + 1;
        }
        i += length == 0 ? 1 : length;
      }
      if (valid_start < to) on_piece(text.substr(valid_start, to - valid_start));
    };
    size_t pos = 0;
    while (pos < text.size()) {
      // An empty string is never a piece (PCRE2_NOTEMPTY), as tokenmill's custom patterns say.
      const int rc = pcre2_match(code_, subject, text.size(), pos, PCRE2_NOTEMPTY, match, context_);
      if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {  // the oracle cannot answer: fail loudly
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(rc, message, sizeof(message));
        std::fprintf(stderr, "PCRE2 oracle: match error at byte %zu: %s\n", pos,
                     reinterpret_cast<const char*>(message));
        std::abort();
      }
      if (rc < 0) {
        uncovered(pos, text.size());
        break;
      }
      const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
      const size_t start = ovector[0];
      size_t end = ovector[1];
      uncovered(pos, start);
      if (end == start) end = start + 1;  // only \K can still make an empty match: one byte
      on_piece(text.substr(start, end - start));
      pos = end;
    }
    pcre2_match_data_free(match);
  }

 private:
  pcre2_code* code_;
  pcre2_match_context* context_;
  pcre2_jit_stack* jit_stack_;  // shared: the oracle is used from one thread at a time
};

}  // namespace

absl::StatusOr<std::unique_ptr<PreTokenizer>> MakePcre2PreTokenizer(std::string_view pattern) {
  int error_code;
  PCRE2_SIZE error_offset;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error_code,
                                   &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof(message));
    return absl::InvalidArgumentError(absl::StrCat("PCRE2: invalid pattern at offset ", error_offset,
                                             ": ", reinterpret_cast<const char*>(message)));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  return std::make_unique<Pcre2PreTokenizer>(code);
}

}  // namespace tokenmill::testing
