// Byte-level statistics of the text that is counted: invalid UTF-8 sequences and NUL bytes.
// Both kinds of bytes are counted losslessly (byte-level BPE has a token for every byte); these
// numbers only report them.
#pragma once

#include <cstdint>
#include <string_view>

namespace tokenmill {

// Number of invalid UTF-8 sequences, counted as a decoder that replaces each maximal invalid
// subpart with U+FFFD would (Unicode 15, section 3.9, "U+FFFD Substitution of Maximal
// Subparts"). Fast when the text is valid.
uint64_t CountInvalidUtf8(std::string_view text);

// Number of 0x00 bytes.
uint64_t CountNulBytes(std::string_view text);

}  // namespace tokenmill
