// Shared by the tokenizer.json reader and the model types' sections of it.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "common/strings.h"

namespace tokenmill {

// "<source>: field '<field>' <what>".
inline absl::Status HfJsonFieldError(std::string_view source, std::string_view field,
                                     std::string_view what) {
  return absl::InvalidArgumentError(StrCat(source, ": field '", field, "' ", what));
}

}  // namespace tokenmill
