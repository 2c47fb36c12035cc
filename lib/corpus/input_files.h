// Resolving the inputs of a counting run: files, folders (walked recursively, filtered by
// --include/--exclude globs, hidden entries left out as a glob leaves them out; symbolic links
// to folders are not followed), shell-style globs (a `**` component: any number of folders, as
// bash's globstar) and "-" (stdin), each with its format recognised from magic bytes (zstd,
// gzip) and extension (.jsonl/.json/.ndjson, also under .zst/.gz).
//
// Contract: ResolveInputs either returns every input file, in a deterministic order (arguments
// in order; a folder's files and a glob's matches sorted by path; a `**` glob's, per folder its
// part before the `**` matches, those in sorted order), or fails before any work is
// done with a message naming the argument: a missing or unreadable file, a folder or glob with
// no matching files, a file whose extension promises compression its bytes do not have, a
// stream (stdin, a named pipe) given twice, by any names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tokenmill {

enum class Compression { kNone, kZstd, kGzip, kDetectWhenRead };
enum class RecordFormat { kText, kJsonLines };

struct InputFile {
  std::string path;  // "-" for stdin
  uint64_t size = 0;  // bytes on disk; 0 for stdin (unknown)
  Compression compression = Compression::kNone;
  // The compression the name promises (.zst, .gz), which a stream (kDetectWhenRead) must turn
  // out to have when read, as a regular file must when resolved.
  Compression named = Compression::kNone;
  RecordFormat format = RecordFormat::kText;
  bool read_once = false;  // stdin, a named pipe, a terminal: its bytes can be read only once
  bool is_stdin() const { return path == "-"; }
  // "stdin", or the path: how messages name the input.
  std::string display_name() const { return is_stdin() ? std::string("stdin") : path; }
};

struct InputSelection {
  std::vector<std::string> include;  // globs a file found in a folder must match (any of)
  std::vector<std::string> exclude;  // globs that drop a file found in a folder
  std::string format = "auto";       // auto (by extension) | text | jsonl
};

// Expands `arguments` into input files. `format` other than auto applies to every input.
absl::StatusOr<std::vector<InputFile>> ResolveInputs(const std::vector<std::string>& arguments,
                                                     const InputSelection& selection);

// The compression announced by the first bytes of a stream (kNone if neither magic; a zstd
// skippable frame counts as zstd).
Compression CompressionFromMagic(const unsigned char* bytes, size_t size);

// The name of a compression tokenmill does not read ("xz", "bzip2", "lz4") that the first bytes
// announce, or "": such an input is refused rather than read as text.
std::string_view UnreadCompressionFromMagic(const unsigned char* bytes, size_t size);
// The compression of input `path` ("-": stdin) by its first `size` bytes, for a file when
// inputs are resolved and for a stream when it is read: refused when they announce one
// tokenmill does not read, or are not the magic of the compression the name promises (`named`).
absl::StatusOr<Compression> CompressionOfInput(const std::string& path, Compression named,
                                               const unsigned char* bytes, size_t size);

// "zstd", "gzip" or "none".
const char* CompressionName(Compression compression);

}  // namespace tokenmill
