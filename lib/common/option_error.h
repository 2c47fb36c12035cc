// Errors about options. The library names options by its own names (vocab_size,
// special_tokens, ...: the fields of the options structs), never by a front end's spelling of
// them, and marks each name in its text with backquotes (`vocab_size`), which no path or
// value in a message is taken for: a front end shows them its own way (the CLI as
// --vocab-size, ...). An error whose message mentions options also carries their names as a
// payload, and an error in the options themselves (OptionError) is marked as such, so that a
// front end can tell it from a failure of the work (the CLI's exit code 2, not 1).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace tokenmill {

// An invalid option value: an InvalidArgument error whose message mentions the options `names`.
absl::Status OptionError(std::string_view message, std::initializer_list<std::string_view> names);

// `status`, recording that its message mentions the options `names` (say, as a hint).
absl::Status MentioningOptions(absl::Status status, std::initializer_list<std::string_view> names);

// The option names an error mentions (none for other errors).
std::vector<std::string> OptionNamesOf(const absl::Status& status);
// Whether it is an OptionError.
bool IsOptionError(const absl::Status& status);

}  // namespace tokenmill
