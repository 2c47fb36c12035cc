// Token ids as text, the way `tokenmill encode` writes them and `tokenmill decode` reads them:
// decimal ids separated by spaces (tabs, carriage returns and newlines also separate).
#pragma once

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "model/model.h"

namespace tokenmill {

// Appends the ids of `line` to `ids`. Fails, naming the field, on anything that is not a
// decimal number below 2^32 (signs, hex, other characters, overflow); `ids` then holds the ids
// before it.
absl::Status ParseIdLine(std::string_view line, std::vector<TokenId>* ids);

}  // namespace tokenmill
