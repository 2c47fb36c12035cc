// Word-count files (.tmc): the result of `tokenmill count`, a table of words and counts that
// `tokenmill train --counts` sums, so counting can run on many machines.
//
// Layout (integers little-endian):
//   "TMCOUNTS"                 8-byte magic
//   u32 format version         kCountsFormatVersion
//   u32 H, then H header bytes  fields below, strings as u32 length + bytes
//   u64 raw body size, u64 B, then B bytes: one zstd frame (with its content checksum) of the
//                              entries in byte order of the words: varint length, bytes,
//                              varint count
//   u32 CRC-32 (zlib) of every byte before it
// Header fields: tool version; pre-tokenizer preset and the pattern it stands for; special
// tokens; document mode; text field (JSON lines); totals (files, documents, bytes, words,
// unique words, invalid UTF-8 sequences, NUL bytes, skipped records).
//
// Contract: Write* produces the same bytes for the same table whatever order words were added
// in. Read* fails with a message naming the file on a bad magic, a newer format version, a
// truncated or corrupt file (checksum) or inconsistent totals.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "count/word_counts.h"
#include "pretokenize/pretokenizer_config.h"

namespace tokenmill {

// 1: preset and pattern; 2: the text settings past them; 3: tagged ones among those.
inline constexpr uint32_t kCountsFormatVersion = 3;

struct CountTotals {
  uint64_t files = 0;
  uint64_t documents = 0;
  uint64_t bytes = 0;  // bytes of the documents (the text that was pre-tokenized)
  uint64_t words = 0;
  uint64_t unique_words = 0;
  uint64_t invalid_utf8 = 0;
  uint64_t nul_bytes = 0;
  uint64_t skipped_records = 0;
  bool operator==(const CountTotals&) const = default;
};

struct CountsFileHeader {
  uint32_t version = kCountsFormatVersion;
  std::string tool;  // e.g. "tokenmill 0.1.0"
  PreTokenizerConfig pretokenizer;
  std::string pattern;  // the pattern the pre-tokenizer applies (the preset's own, or custom)
  std::vector<std::string> special_tokens;
  std::string doc_mode;  // line | file
  std::string text_field;
  CountTotals totals;
  bool operator==(const CountsFileHeader&) const = default;
};

// True if `path` is a readable regular file that starts with the counts-file magic.
bool IsCountsFile(const std::string& path);

// Writes header + table atomically. header.totals.words/unique_words are taken from `words`.
// `threads`: zstd workers for the compression; the file's bytes do not depend on it.
absl::Status WriteCountsFile(const std::string& path, CountsFileHeader header,
                             const WordCounts& words, int threads = 1);

// Reads only the header (cheap: checks magic and version, not the checksum).
absl::StatusOr<CountsFileHeader> ReadCountsFileHeader(const std::string& path);

// Reads a whole counts file, verifying the checksum and totals, and adds its words to `words`.
absl::StatusOr<CountsFileHeader> ReadCountsFile(const std::string& path, WordCounts* words);

// Human-readable description: the header and the `top` most frequent words.
absl::Status DescribeCountsFile(const std::string& path, size_t top, std::string* out);

}  // namespace tokenmill
