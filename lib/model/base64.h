// Standard base64 (RFC 4648, '+' '/' alphabet, '=' padding), as used by .tiktoken files.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tokenmill {

// Appends the base64 encoding of `bytes` (padded) to `out`.
void AppendBase64(std::string_view bytes, std::string& out);

// Decodes padded base64. Returns nothing when `text` is not valid: a length that is not a
// multiple of 4, a character outside the alphabet, or padding anywhere but at the end.
std::optional<std::string> DecodeBase64(std::string_view text);
// The same into `out` (its old bytes replaced; unspecified when this returns false).
bool DecodeBase64To(std::string_view text, std::string& out);

}  // namespace tokenmill
