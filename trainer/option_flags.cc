#include "option_flags.h"

#include <algorithm>

#include "common/option_error.h"
#include "common/strings.h"
#include "flags.h"
#include "commands.h"

namespace tokenmill::cli {
namespace {

struct Spelling {
  std::string_view option;
  std::string_view flag;
};

// Options whose flag is not the name with '-' for '_'.
constexpr Spelling kExceptions[] = {
    {"pretokenizer", "preset"},
    {"special_tokens", "special-token"},
    {"counts_files", "counts"},
    {"inputs", ""},  // positional
    {"units", "unit"},
    {"marked_symbol_order", "hf-symbol-order"},
};

// Every option a CLI command sets, by its library name.
constexpr std::string_view kOptions[] = {
    "vocab_size", "output", "format", "pretokenizer", "special_tokens", "threads",
    "counts_files", "doc_mode", "text_field", "input_format", "include", "exclude",
    "skip_bad_records", "progress", "shard_bytes", "batch_bytes", "special_tokens_at",
    "min_frequency", "max_token_length", "hf_compat", "hf_all_bytes", "checkpoint", "checkpoint_every",
    "checkpoint_interval", "ignore_corpus_change", "inputs", "algorithm", "units",
    "character_coverage", "limit_alphabet", "byte_fallback", "unknown_bytes",
    "continuing_subword_prefix", "end_of_word_suffix", "wordpiece_score",
    "max_input_chars_per_word", "marked_symbol_order", "seed_size", "max_piece_length",
    "sub_iterations", "shrinking_factor", "split_by_script",
};

}  // namespace

std::string FlagOf(std::string_view option) {
  for (const Spelling& s : kExceptions) {
    if (s.option == option) return std::string(s.flag);
  }
  std::string flag(option);
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

std::vector<std::string> OptionsOfFlag(std::string_view flag) {
  // --pattern sets the custom pre-tokenizer; the text settings are the pre-tokenizer's too.
  if (flag == "pattern" || flag == "normalize" || flag == "lowercase" ||
      flag == "strip-accents" || flag == "split-digits" || flag == "metaspace-prefix") {
    return {"pretokenizer"};
  }
  for (std::string_view option : kOptions) {
    if (FlagOf(option) == flag) return {std::string(option)};
  }
  return {};
}

std::string ShowFlags(std::string_view text) {
  // Library text marks option names with backquotes (`vocab_size`).
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t open = text.find('`', at);
    const size_t close = open == std::string_view::npos ? open : text.find('`', open + 1);
    if (close == std::string_view::npos) break;
    const std::string_view name = text.substr(open + 1, close - open - 1);
    const bool is_name = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
    out.append(text.substr(at, open - at));
    if (is_name) {
      const std::string flag = FlagOf(name);
      out += flag.empty() ? std::string(name) : "--" + flag;
      at = close + 1;
    } else {  // not a name: the backquote is text
      out += '`';
      at = open + 1;
    }
  }
  out.append(text.substr(std::min(at, text.size())));
  return out;
}

void PrintError(std::string_view command, const absl::Status& status) {
  PrintError(command, ShowFlags(Message(status)));
}

int ReportError(std::string_view command, const absl::Status& status) {
  PrintError(command, status);
  return IsOptionError(status) ? kExitUsage : kExitFailure;
}

}  // namespace tokenmill::cli
