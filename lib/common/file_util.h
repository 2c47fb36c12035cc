// Small, checked file-system helpers. Every error names the path and the reason.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tokenmill {

// Reads a whole regular file. Fails (naming the path) when it is missing, a directory or
// unreadable.
absl::StatusOr<std::string> ReadFile(const std::string& path);
// The rest of the open descriptor `fd` of `path` ("-": stdin), which it closes (not stdin's):
// for a caller that opened and looked at a file itself, where opening it again would not give
// the same bytes (a named pipe).
absl::StatusOr<std::string> ReadOpenFile(int fd, const std::string& path);

// Bytes that keep their owner alive (a string, or a file mapped into memory); copies share
// them, and Sub() views part of them without copying.
class SharedBytes {
 public:
  SharedBytes() = default;
  explicit SharedBytes(std::string bytes);
  SharedBytes(std::shared_ptr<const void> owner, std::string_view bytes)
      : owner_(std::move(owner)), bytes_(bytes) {}
  std::string_view view() const { return bytes_; }
  operator std::string_view() const { return bytes_; }
  size_t size() const { return bytes_.size(); }
  bool empty() const { return bytes_.empty(); }
  SharedBytes Sub(size_t offset, size_t size) const { return {owner_, bytes_.substr(offset, size)}; }
  // What keeps the bytes valid, for an object made of them to share (SharedArray).
  const std::shared_ptr<const void>& owner() const { return owner_; }

 private:
  std::shared_ptr<const void> owner_;
  std::string_view bytes_;
};

// A whole regular file as SharedBytes: mapped read-only (no copy, and no new memory of ours:
// the pages are the page cache's), or read with ReadFile where it cannot be mapped. Errors
// as ReadFile's. The file must not change while the bytes are in use.
absl::StatusOr<SharedBytes> MapFile(const std::string& path);
// The first `size` bytes (more than 0) of the regular file open as `fd`, mapped read-only as
// MapFile maps (the descriptor may be closed afterwards); none when mmap fails. For a caller
// that opened and checked the file itself.
std::optional<SharedBytes> MapDescriptor(int fd, size_t size);

// Checks that `path` names a readable regular file (or "-" for stdin) without reading it.
absl::Status CheckReadableFile(const std::string& path);

// `path` made absolute, with symbolic links and "." / ".." resolved as far as it exists (the
// path unchanged if that fails): two paths naming one file give the same string.
std::string CanonicalPath(const std::string& path);

// Checks, before any long work starts, that a file can later be created at `path`: its folder
// (that of the file its links lead to) exists and is writable, and `path` itself is not a
// folder; a path written in place (a descriptor's name, a device) passes.
absl::Status CheckWritableOutput(const std::string& path);

// Writes `contents` to `path` atomically: a temporary file in the same folder is written,
// fsynced and renamed over `path`, then the folder is fsynced. On any failure the temporary
// file is removed and an existing file at `path` is left as it was. A path that is a symbolic
// link has the file it leads to replaced (the temporary beside that file; the link kept). A
// path that names a descriptor (/dev/stdout, /dev/fd/N, /proc/self/fd/N, or a link to one) is
// written through a copy of it, and one that is not a regular file (a device such as /dev/full,
// a FIFO) is written in place: neither is replaced.
absl::Status WriteFileAtomically(const std::string& path, std::string_view contents);
// The same with the contents given as consecutive pieces (written in order, never joined in
// memory: a large body need not be copied next to its header).
absl::Status WriteFileAtomically(const std::string& path, std::span<const std::string_view> pieces);

// A file written as a stream and published whole: bytes go to PATH.tmp.tokenmill-XXXXXX beside
// PATH (beside the file PATH's links lead to, which is the one replaced),
// Close() closes it and Publish() renames it over PATH (a writer of two files closes both,
// where a full disk shows, before renaming either, so that a failure replaces neither);
// destroying the writer unpublished (an error, a stop) removes the temporary file, so PATH is never left half-written and an
// existing PATH stays as it was. Not fsynced (a large output would wait for the disk): a
// power loss may lose it, an interrupted run never leaves part of it. "-" writes to stdout, a
// path that names a descriptor as WriteFileAtomically's goes through it, and an existing path
// that is not a regular file (a device, a FIFO) is written in place; none can be taken back.
class StreamingFile {
 public:
  // `mode`: the file's permissions, instead of those a replaced file has (or the umask's).
  static absl::StatusOr<std::unique_ptr<StreamingFile>> Create(const std::string& path,
                                                               std::optional<mode_t> mode = {});
  ~StreamingFile();
  StreamingFile(const StreamingFile&) = delete;
  StreamingFile& operator=(const StreamingFile&) = delete;

  absl::Status Write(std::string_view bytes);
  // Overwrites bytes already written at `offset` (a header whose size is known at the end);
  // only for a temporary (regular) file.
  absl::Status WriteAt(uint64_t offset, std::string_view bytes);
  bool seekable() const { return !in_place_; }
  absl::Status Close();
  absl::Status Publish();
  const std::string& path() const { return path_; }

 private:
  StreamingFile() = default;
  std::string path_, tmp_;
  std::string target_;       // what Publish renames tmp_ onto: path_, or its links' file
  int lock_fd_ = -1;         // holds tmp_'s flock until the rename (RemoveStaleTemporaries)
  int temporary_slot_ = -1;  // tmp_ for RemoveTemporariesNow
  int fd_ = -1;
  bool in_place_ = false;
  bool committed_ = false;
};

// A file without a name, for bytes a run keeps aside for a while (encode's inputs read ahead
// of their turn): made in `folder` with O_TMPFILE (or, where the file system has none, made and
// unlinked at once), so nothing is left behind however the process ends, and its space is
// freed when it is destroyed.
class ScratchFile {
 public:
  static absl::StatusOr<std::unique_ptr<ScratchFile>> Create(const std::string& folder);
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  absl::Status Append(std::string_view bytes);
  uint64_t size() const { return size_; }
  // Reads `n` bytes at `offset` (below size()) into `out`.
  absl::Status Read(uint64_t offset, size_t n, char* out) const;

 private:
  ScratchFile() = default;
  std::string folder_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Open files. RaiseOpenFileLimit sets the soft limit to the hard one (the command-line tool
// does at start; the library leaves the process's limits alone). SpareDescriptors is how many
// more files this process may have open now: the soft limit less those open (SIZE_MAX when
// there is no limit).
void RaiseOpenFileLimit();
size_t SpareDescriptors();

// Where a run writing `output` keeps scratch files: the output's folder (its file system is the
// one the output must fit on), or for stdout and devices $TMPDIR (else /tmp).
std::string ScratchFolderFor(const std::string& output);

// Unlinks the temporary files being written now (StreamingFile's and WriteFileAtomically's),
// for a process that must exit at once from a signal handler: async-signal-safe.
void RemoveTemporariesNow();

// A run killed (SIGKILL, power loss) while writing PATH atomically leaves its temporary file
// PATH.tmp.tokenmill-XXXXXX behind; this removes such files (beside the file PATH's links lead
// to), but not one that a live run holds locked (each holds its temporary's flock from its
// making to its rename). Call it before writing PATH again.
void RemoveStaleTemporaries(const std::string& path);

}  // namespace tokenmill
