// Minimal helpers for writing JSON text.
#pragma once

#include <string>
#include <string_view>

namespace tokenmill {

// Appends `value` as a JSON string literal (quotes included). Bytes >= 0x80 are copied as they
// are, so `value` should be valid UTF-8 for the output to be valid JSON.
void AppendJsonString(std::string_view value, std::string& out);

}  // namespace tokenmill
