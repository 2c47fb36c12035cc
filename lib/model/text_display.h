// Showing token bytes to people (explain, inspect): valid UTF-8 stays as it is, except that
// control characters and the backslash are escaped (\n, \t, \r, \\, \xNN), as are bytes that
// are not valid UTF-8 (a token may hold part of a character).
// Also: lossy UTF-8 repair for `decode --lossy`.
#pragma once

#include <string>
#include <string_view>

#include "common/utf8.h"

namespace tokenmill {

std::string DisplayBytes(std::string_view bytes);

// Replaces each maximal invalid UTF-8 subsequence with U+FFFD (the WHATWG / Unicode "maximal
// subpart" rule, as TextDecoder and Python's errors="replace" do); valid text is unchanged.
std::string ReplaceInvalidUtf8(std::string_view bytes);


}  // namespace tokenmill
