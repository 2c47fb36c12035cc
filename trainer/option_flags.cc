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
    {"algorithm", ""},
    {"units", ""},
};

// Every option a CLI command sets, by its library name.
constexpr std::string_view kOptions[] = {
    "vocab_size", "output", "format", "pretokenizer", "special_tokens", "threads",
    "counts_files", "doc_mode", "text_field", "input_format", "include", "exclude",
    "skip_bad_records", "progress", "shard_bytes", "batch_bytes", "special_tokens_at",
    "min_frequency", "max_token_length", "hf_compat", "checkpoint", "checkpoint_every",
    "checkpoint_interval", "ignore_corpus_change", "inputs", "algorithm", "units",
};

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

// Replaces each whole-word `name` in `text` with "--" + its flag.
void Replace(std::string& text, std::string_view name) {
  const std::string flag = FlagOf(name);
  if (flag.empty()) return;
  const std::string shown = "--" + flag;
  size_t at = 0;
  while ((at = text.find(name, at)) != std::string::npos) {
    const size_t end = at + name.size();
    if ((at > 0 && IsNameChar(text[at - 1])) || (end < text.size() && IsNameChar(text[end]))) {
      at = end;
      continue;
    }
    text.replace(at, name.size(), shown);
    at += shown.size();
  }
}

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
  for (std::string_view option : kOptions) {
    if (FlagOf(option) == flag) return {std::string(option)};
  }
  return {};
}

std::string ShowFlags(std::string_view text, std::span<const std::string> names) {
  std::string out(text);
  for (const std::string& name : names) Replace(out, name);
  for (std::string_view name : kOptions) {
    if (name.find('_') != std::string_view::npos) Replace(out, name);
  }
  return out;
}

void PrintError(std::string_view command, const absl::Status& status) {
  PrintError(command, ShowFlags(Message(status), OptionNamesOf(status)));
}

int ReportError(std::string_view command, const absl::Status& status) {
  PrintError(command, status);
  return IsOptionError(status) ? kExitUsage : kExitFailure;
}

}  // namespace tokenmill::cli
