// ProgressFormat: how a long stage (counting, training) reports progress on stderr, like
// ProgressFormat in Hugging Face tokenizers' utils/progress.rs: a one-line bar redrawn in place
// for terminals, JSON lines for machines, or nothing. The one type every stage and the CLI use.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"

namespace tokenmill {

enum class ProgressFormat {
  kAuto,  // a bar when stderr is a terminal, else nothing (ResolveProgressFormat)
  kNone,
  kBar,
  kJson,
};

// "auto", "none", "bar", "json".
std::string_view ProgressFormatName(ProgressFormat format);
// The inverse of ProgressFormatName; other names are an error naming the option `progress`.
absl::StatusOr<ProgressFormat> ParseProgressFormat(std::string_view name);
// kAuto as it applies now (looks at whether stderr is a terminal); the others as they are.
ProgressFormat ResolveProgressFormat(ProgressFormat format);

}  // namespace tokenmill
