#include "common/progress_format.h"

#include <unistd.h>

#include "common/option_error.h"
#include "common/strings.h"

namespace tokenmill {

std::string_view ProgressFormatName(ProgressFormat format) {
  switch (format) {
    case ProgressFormat::kAuto: return "auto";
    case ProgressFormat::kNone: return "none";
    case ProgressFormat::kBar: return "bar";
    case ProgressFormat::kJson: return "json";
  }
  return "?";
}

absl::StatusOr<ProgressFormat> ParseProgressFormat(std::string_view name) {
  for (ProgressFormat f : {ProgressFormat::kAuto, ProgressFormat::kNone, ProgressFormat::kBar,
                           ProgressFormat::kJson}) {
    if (ProgressFormatName(f) == name) return f;
  }
  return OptionError(StrCat("`progress` must be auto, bar, json or none, not '", name, "'"),
                     {"progress"});
}

ProgressFormat ResolveProgressFormat(ProgressFormat format) {
  if (format != ProgressFormat::kAuto) return format;
  return ::isatty(STDERR_FILENO) ? ProgressFormat::kBar : ProgressFormat::kNone;
}

}  // namespace tokenmill
