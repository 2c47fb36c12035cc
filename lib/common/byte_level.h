// GPT-2's byte-level alphabet: a bijection between the 256 byte values and 256 printable
// Unicode characters, so that any byte string can be written as text in tokenizer.json.
// Bytes that are printable Latin-1 ('!'..'~', '¡'..'¬', '®'..'ÿ') map to themselves; the other
// 68 map, in increasing byte order, to U+0100, U+0101, ...  (bytes_to_unicode() in GPT-2's
// encoder.py, and Hugging Face's ByteLevel pre-tokenizer.)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tokenmill {

// The code point that stands for `byte`.
char32_t ByteToCodePoint(uint8_t byte);

// The byte that `code_point` stands for, or -1 if it is not one of the 256 characters.
int CodePointToByte(char32_t code_point);

// Writes each byte of `bytes` as its byte-level character, UTF-8 encoded.
std::string BytesToByteLevel(std::string_view bytes);

// The inverse of BytesToByteLevel. Fails on invalid UTF-8 or a character outside the alphabet.
absl::StatusOr<std::string> ByteLevelToBytes(std::string_view text);
// ByteLevelToBytes appending to `out`, without the error's words: false where it fails (`out`
// then ends with the bytes of the characters before the first bad one).
bool AppendByteLevelBytes(std::string_view text, std::string& out);

// Appends the UTF-8 encoding of `code_point` (must be a valid scalar value) to `out`.
void AppendUtf8(char32_t code_point, std::string& out);

}  // namespace tokenmill
