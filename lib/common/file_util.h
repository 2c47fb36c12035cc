// Small, checked file-system helpers. Every error names the path and the reason.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tokenmill {

// Reads a whole regular file. Fails (naming the path) when it is missing, a directory or
// unreadable.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// Checks that `path` names a readable regular file (or "-" for stdin) without reading it.
absl::Status CheckReadableFile(const std::string& path);

// Checks, before any long work starts, that a file can later be created at `path`: its folder
// exists and is writable, and `path` itself is not a folder.
absl::Status CheckWritableOutput(const std::string& path);

// Writes `contents` to `path` atomically: a temporary file in the same folder is written,
// fsynced and renamed over `path`, then the folder is fsynced. On any failure the temporary
// file is removed and an existing file at `path` is left as it was. An existing path that is
// not a regular file (a device such as /dev/stdout or /dev/full, a FIFO) is written in place.
absl::Status WriteFileAtomically(const std::string& path, std::string_view contents);
// The same with the contents given as consecutive pieces (written in order, never joined in
// memory: a large body need not be copied next to its header).
absl::Status WriteFileAtomically(const std::string& path, std::span<const std::string_view> pieces);

}  // namespace tokenmill
