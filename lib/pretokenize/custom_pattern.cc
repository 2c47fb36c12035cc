// Custom patterns on PCRE2: compiled once (JIT when the platform has it and the pattern calls no
// subroutine), matched from many threads with per-thread match data, match context and JIT stack.
#include "pretokenize/custom_pattern.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <atomic>
#include <cstdint>

#include "common/strings.h"
#include "pretokenize/unicode_classes.h"

namespace tokenmill {
namespace {

std::atomic<uint64_t> match_failures{0};

std::string ErrorText(int code) {
  PCRE2_UCHAR message[256];
  if (pcre2_get_error_message(code, message, sizeof(message)) < 0) return StrCat("error ", code);
  return reinterpret_cast<const char*>(message);
}

// What one thread needs to match any compiled pattern: an ovector of one pair is enough, as
// only the whole match is used.
struct ThreadMatcher {
  ThreadMatcher() {
    data = pcre2_match_data_create(1, nullptr);
    context = pcre2_match_context_create(nullptr);
    // The match limit is the pattern's, set before each search. No depth limit: only memory
    // bounds a search.
    pcre2_set_depth_limit(context, UINT32_MAX);
    pcre2_set_heap_limit(context, 256 << 10);  // KiB: the interpreter's backtracking memory
    stack = pcre2_jit_stack_create(32 << 10, 64 << 20, nullptr);
    if (stack != nullptr) pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~ThreadMatcher() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
  pcre2_match_data* data;
  pcre2_match_context* context;
  pcre2_jit_stack* stack;
};

ThreadMatcher& ThisThreadsMatcher() {
  thread_local ThreadMatcher matcher;
  return matcher;
}

class Pcre2PatternPreTokenizer final : public PreTokenizer {
 public:
  Pcre2PatternPreTokenizer(pcre2_code* code, bool jit, uint32_t match_limit)
      : code_(code), jit_(jit), match_limit_(match_limit) {}
  ~Pcre2PatternPreTokenizer() override { pcre2_code_free(code_); }

  void Split(std::string_view text,
             absl::FunctionRef<void(std::string_view)> on_piece) const override {
    ThreadMatcher& m = ThisThreadsMatcher();
    pcre2_set_match_limit(m.context, match_limit_);
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    // Text [from, to) that no match covers: each invalid byte a piece, each stretch of valid
    // UTF-8 between them a piece.
    auto uncovered = [&](size_t from, size_t to) {
      size_t valid_start = from;
      for (size_t i = from; i < to;) {
        const DecodedChar c = DecodeAt(bytes, to, i);
        if (c.cls & kClassInvalid) {
          if (valid_start < i) on_piece(text.substr(valid_start, i - valid_start));
          on_piece(text.substr(i, 1));
          valid_start = i + 1;
        }
        i += c.len;
      }
      if (valid_start < to) on_piece(text.substr(valid_start, to - valid_start));
    };
    size_t pos = 0;
    while (pos < n) {
      int rc = jit_ ? pcre2_jit_match(code_, subject, n, pos, PCRE2_NOTEMPTY, m.data, m.context)
                    : pcre2_match(code_, subject, n, pos, PCRE2_NOTEMPTY, m.data, m.context);
      if (rc < 0 && rc != PCRE2_ERROR_NOMATCH && jit_) {  // e.g. the JIT stack ran out
        rc = pcre2_match(code_, subject, n, pos, PCRE2_NOTEMPTY | PCRE2_NO_JIT, m.data, m.context);
      }
      if (rc == PCRE2_ERROR_NOMATCH) break;
      if (rc < 0) {  // a limit: the next character stays uncovered, the search goes on after it
        match_failures.fetch_add(1, std::memory_order_relaxed);
        const size_t next = pos + DecodeAt(bytes, n, pos).len;
        uncovered(pos, next);
        pos = next;
        continue;
      }
      const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(m.data);
      const size_t start = ovector[0], end = ovector[1];
      if (end <= start) {  // \K could make one empty: the character stays uncovered
        const size_t next = start < n ? start + DecodeAt(bytes, n, start).len : n;
        uncovered(pos, next);
        pos = next;
        continue;
      }
      uncovered(pos, start);
      on_piece(text.substr(start, end - start));
      pos = end;
    }
    uncovered(pos, n);
  }

 private:
  pcre2_code* code_;
  bool jit_;
  uint32_t match_limit_;
};

// Whether `pattern` may call a group as a subroutine (recursion included): (?R) (?0) (?1) (?+1)
// (?-1) (?&name) (?P>name) \g<..> \g'..'. PCRE2 10.42's JIT gives such a call that cannot
// advance no loop check: `a*|(?R)` on "5" recurses until its match limit or 64 MB stack runs
// out, at a cost that grows with the square of the depth (4 s at a limit of 100,000; hours at
// the default), at every position a search starts from. The interpreter sees the loop at once.
// Looked for in the text, escapes and classes not told apart: a false find only costs the JIT.
bool MayCallASubroutine(std::string_view pattern) {
  auto digit = [&](size_t i) {
    return i < pattern.size() && pattern[i] >= '0' && pattern[i] <= '9';
  };
  for (size_t i = 0; i + 2 < pattern.size(); ++i) {
    const char a = pattern[i], b = pattern[i + 1], c = pattern[i + 2];
    if (a == '\\' && b == 'g' && (c == '<' || c == '\'')) return true;
    if (a != '(' || b != '?') continue;
    if (c == 'R' || c == '&' || digit(i + 2)) return true;
    if ((c == '+' || c == '-') && digit(i + 3)) return true;
    if (c == 'P' && i + 3 < pattern.size() && pattern[i + 3] == '>') return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PreTokenizer>> CompileCustomPattern(std::string_view pattern,
                                                                   uint32_t match_limit) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(
      reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
      PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF | PCRE2_NEVER_BACKSLASH_C, &error_code,
      &error_offset, nullptr);
  if (code == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("PCRE2 refuses the pattern at offset ", error_offset, ": ", ErrorText(error_code)));
  }
  const bool jit =
      !MayCallASubroutine(pattern) && pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  return std::make_unique<Pcre2PatternPreTokenizer>(code, jit, match_limit);
}

std::string Pcre2Version() {
  char version[64] = {}, unicode[32] = {};
  pcre2_config(PCRE2_CONFIG_VERSION, version);
  pcre2_config(PCRE2_CONFIG_UNICODE_VERSION, unicode);
  return StrCat(version, ", Unicode ", unicode);
}

uint64_t CustomPatternMatchFailures() { return match_failures.load(std::memory_order_relaxed); }

}  // namespace tokenmill
