#include "common/option_fields.h"

#include "absl/strings/numbers.h"

namespace tokenmill {

absl::Status ValueCodec<double>::Parse(std::string_view text, double* v) {
  if (absl::SimpleAtod(ToAbsl(text), v)) return absl::OkStatus();
  return absl::InvalidArgumentError(StrCat("'", text, "' is not a number"));
}

}  // namespace tokenmill
