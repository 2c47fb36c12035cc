// The CLI's spelling of the library's option names: the library names options as its options
// structs do (vocab_size, special_tokens), marked in its messages with backquotes
// (common/option_error.h); the CLI names them as flags (--vocab-size, --special-token). This
// is the one table between the two; errors and other library text are shown through it.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace tokenmill::cli {

// The flag ("vocab-size", without dashes) of option `option`, or "" when the CLI has none.
std::string FlagOf(std::string_view option);
// The library options (one, or none) that flag `flag` sets.
std::vector<std::string> OptionsOfFlag(std::string_view flag);

// `text` (a library message) with the option names it marks (`vocab_size`) shown as flags
// ("--vocab-size"), or as bare names where the CLI has no flag for them.
std::string ShowFlags(std::string_view text);

// Prints "tokenmill <command>: error: <message>" with the options the error names shown as
// flags, and returns the exit code it deserves: 2 for an invalid option (usage), else 1.
int ReportError(std::string_view command, const absl::Status& status);

}  // namespace tokenmill::cli
