#include "common/file_util.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/huge_pages.h"
#include "common/strings.h"

namespace tokenmill {
namespace {

// The temporary files being written, for RemoveTemporariesNow(): fixed slots, so that a signal
// handler can read them without locks or allocation. A slot is 0 (free), 1 (being filled) or
// 2 (holds a path).
constexpr size_t kTemporarySlots = 16;
constexpr size_t kMaxTemporaryPath = 4096;
struct TemporarySlot {
  std::atomic<int> state{0};
  char path[kMaxTemporaryPath];
};
TemporarySlot g_temporaries[kTemporarySlots];

// The slot now naming `path`, or -1 (no free slot, or a path too long: then only a later run's
// RemoveStaleTemporaries removes the file after a hard exit).
int RegisterTemporary(const std::string& path) {
  if (path.size() >= kMaxTemporaryPath) return -1;
  for (size_t i = 0; i < kTemporarySlots; ++i) {
    int expected = 0;
    if (!g_temporaries[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_temporaries[i].path, path.c_str(), path.size() + 1);
    g_temporaries[i].state.store(2, std::memory_order_release);
    return static_cast<int>(i);
  }
  return -1;
}

void UnregisterTemporary(int slot) {
  if (slot >= 0) g_temporaries[slot].state.store(0, std::memory_order_release);
}

// Registers a temporary file for the life of the object.
class TemporaryRegistration {
 public:
  explicit TemporaryRegistration(const std::string& path) : slot_(RegisterTemporary(path)) {}
  ~TemporaryRegistration() { UnregisterTemporary(slot_); }
  TemporaryRegistration(const TemporaryRegistration&) = delete;
  TemporaryRegistration& operator=(const TemporaryRegistration&) = delete;

 private:
  int slot_;
};

}  // namespace

void RemoveTemporariesNow() {
  for (TemporarySlot& slot : g_temporaries) {
    if (slot.state.load(std::memory_order_acquire) == 2) ::unlink(slot.path);
  }
}

namespace {

absl::Status ErrnoError(std::string_view what, const std::string& path, int err) {
  return absl::Status(err == ENOENT ? absl::StatusCode::kNotFound
                                    : absl::StatusCode::kFailedPrecondition,
                      StrCat(what, " '", path, "': ", std::strerror(err)));
}

std::string ParentDir(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// Why the temporary file beside `path` could not be made (mkstemp failed with `err`). ENOENT
// also comes from a folder that exists but makes no files (/proc).
absl::Status TemporaryFileError(const std::string& path, int err) {
  const std::string dir = ParentDir(path);
  struct stat st;
  if (err == ENOENT && ::stat(dir.c_str(), &st) != 0) {
    return ErrnoError("output folder does not exist:", dir, err);
  }
  return ErrnoError(StrCat("cannot create a temporary file in '", dir, "' for"), path, err);
}

}  // namespace

SharedBytes::SharedBytes(std::string bytes) {
  auto owned = std::make_shared<const std::string>(std::move(bytes));
  bytes_ = *owned;
  owner_ = std::move(owned);
}

namespace {

struct Mapping {
  void* data = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (data != nullptr) ::munmap(data, size);
  }
};

}  // namespace

std::optional<SharedBytes> MapDescriptor(int fd, size_t size) {
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (data == MAP_FAILED) return std::nullopt;
  auto mapping = std::make_shared<Mapping>();
  mapping->data = data;
  mapping->size = size;
  return SharedBytes(std::move(mapping), std::string_view(static_cast<const char*>(data), size));
}

absl::StatusOr<SharedBytes> MapFile(const std::string& path) {
  absl::Status readable = CheckReadableFile(path);
  if (!readable.ok()) return readable;
  int fd = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open", path, errno);
  struct stat st;
  if (fd != STDIN_FILENO && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    if (std::optional<SharedBytes> mapped = MapDescriptor(fd, static_cast<size_t>(st.st_size))) {
      ::close(fd);
      return *std::move(mapped);
    }
  }
  // Read from the same descriptor: a named pipe opened a second time would wait for another
  // writer, and its first writer's bytes after the first close would be lost.
  absl::StatusOr<std::string> read = ReadOpenFile(fd, path);
  if (!read.ok()) return read.status();
  return SharedBytes(*std::move(read));
}

absl::Status CheckReadableFile(const std::string& path) {
  if (path == "-") return absl::OkStatus();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoError("cannot open", path, errno);
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(StrCat("'", path, "' is a directory, not a file"));
  }
  if (::access(path.c_str(), R_OK) != 0) return ErrnoError("cannot read", path, errno);
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  absl::Status readable = CheckReadableFile(path);
  if (!readable.ok()) return readable;
  int fd = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open", path, errno);
  return ReadOpenFile(fd, path);
}

absl::StatusOr<std::string> ReadOpenFile(int fd, const std::string& path) {
  // A regular file is read straight into a string of its size (a checkpoint's word table is
  // tens of MB: growing the string by doubling cost 0.05 s of copies and fresh pages); what
  // does not announce its size (stdin, pipes), or grows meanwhile, is read in chunks after it.
  std::string data;
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    data.reserve(static_cast<size_t>(st.st_size));
    AdviseHugePages(data.data(), data.capacity());
    data.resize(static_cast<size_t>(st.st_size));
  }
  size_t got = 0;
  bool more = true;  // not at the end of the file yet
  auto fail = [&](int err) {
    if (fd != STDIN_FILENO) ::close(fd);
    return ErrnoError("cannot read", path, err);
  };
  while (got < data.size()) {
    ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno);
    }
    if (n == 0) {
      more = false;
      break;
    }
    got += static_cast<size_t>(n);
  }
  data.resize(got);
  char buffer[1 << 16];
  while (more) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno);
    }
    if (n == 0) break;
    data.append(buffer, static_cast<size_t>(n));
  }
  if (fd != STDIN_FILENO) ::close(fd);
  return data;
}

std::string CanonicalPath(const std::string& path) {
  std::error_code error;
  // Made absolute first: weakly_canonical leaves a relative path whose first part does not
  // exist relative ("q.u32" against "./q.u32", which it resolves through ".").
  const std::filesystem::path absolute = std::filesystem::absolute(path, error);
  if (error) return path;
  std::filesystem::path canonical = std::filesystem::weakly_canonical(absolute, error);
  return error ? path : canonical.string();
}

absl::Status CheckWritableOutput(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("the output path is empty");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        StrCat("output '", path, "' is a directory; give a file name"));
  }
  std::string dir = ParentDir(path);
  if (::stat(dir.c_str(), &st) != 0) return ErrnoError("output folder does not exist:", dir, errno);
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(StrCat("output folder '", dir, "' is not a folder"));
  }
  if (::access(dir.c_str(), W_OK) != 0) return ErrnoError("cannot write in folder", dir, errno);
  return absl::OkStatus();
}

namespace {

// Writes into an existing non-regular file (a device such as /dev/stdout or /dev/full, a FIFO):
// there is nothing to replace atomically, and renaming over it would destroy it.
// Writes every piece to `fd`; 0 or the errno of the failed write.
int WriteAll(int fd, std::span<const std::string_view> pieces) {
  for (std::string_view piece : pieces) {
    size_t written = 0;
    while (written < piece.size()) {
      ssize_t n = ::write(fd, piece.data() + written, piece.size() - written);
      if (n < 0) {
        if (errno == EINTR) continue;
        return errno;
      }
      written += static_cast<size_t>(n);
    }
  }
  return 0;
}

// The descriptor an output path names: 1 for /dev/stdout, 2 for /dev/stderr, N for /dev/fd/N
// or /proc/self/fd/N; -1 for any other path. Such an output is written through the descriptor
// (a copy of it), never replaced: it is a symbolic link to what the descriptor holds (a pipe,
// or the file a shell redirected to), which a rename would replace with a file of its own.
int DescriptorNamed(std::string_view path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (std::string_view folder : {"/dev/fd/", "/proc/self/fd/"}) {
    if (!path.starts_with(folder)) continue;
    const std::string_view digits = path.substr(folder.size());
    int n = 0;
    if (digits.empty() || digits.size() > 6) return -1;
    for (char c : digits) {
      if (c < '0' || c > '9') return -1;
      n = n * 10 + (c - '0');
    }
    return n;
  }
  return -1;
}

// The file a rename onto `path` must replace: the target of a symbolic link (the link stays,
// pointing to the new file), else `path` itself.
std::string ReplacedFile(const std::string& path) {
  std::filesystem::path file = path;
  struct stat st;
  // Followed link by link (a chain of at most 40, as the kernel's): weakly_canonical leaves a
  // link to a file not made yet as it is.
  for (int links = 0; links < 40 && ::lstat(file.c_str(), &st) == 0 && S_ISLNK(st.st_mode); ++links) {
    std::error_code error;
    const std::filesystem::path to = std::filesystem::read_symlink(file, error);
    if (error) return path;
    file = to.is_absolute() ? to : file.parent_path() / to;
  }
  return file == path ? path : CanonicalPath(file.string());
}

// A temporary file from `tmp_template` (mkstemp's), locked (flock) while it is open: how
// RemoveStaleTemporaries tells a live run's temporary from one a killed run left.
int MakeTemporary(std::string& tmp_template) {
  const int fd = ::mkstemp(tmp_template.data());
  if (fd >= 0) ::flock(fd, LOCK_EX | LOCK_NB);  // new file: no one else holds it
  return fd;
}

// `path` opened for writing where it is, or a copy of the descriptor it names.
int OpenInPlace(const std::string& path) {
  if (int n = DescriptorNamed(path); n >= 0) return ::fcntl(n, F_DUPFD_CLOEXEC, 0);
  return ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
}

absl::Status WriteInPlace(const std::string& path, std::span<const std::string_view> pieces) {
  int fd = OpenInPlace(path);
  if (fd < 0) return ErrnoError("cannot open", path, errno);
  if (int err = WriteAll(fd, pieces); err != 0) {
    ::close(fd);
    return ErrnoError("cannot write", path, err);
  }
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
    int err = errno;
    ::close(fd);
    return ErrnoError("cannot flush", path, err);
  }
  if (::close(fd) != 0) return ErrnoError("cannot close", path, errno);
  return absl::OkStatus();
}

}  // namespace

// The mode a new output gets: the replaced file's, else what open(O_CREAT, 0666) would give
// under the process's umask (mkstemp's temporary starts at 0600).
static mode_t OutputMode(const std::string& path) {
  struct stat existing;
  if (::stat(path.c_str(), &existing) == 0 && S_ISREG(existing.st_mode)) return existing.st_mode & 07777;
  // The umask, read without setting it (umask() would change it for every thread a moment).
  static const mode_t mask = [] {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
      if (line.starts_with("Umask:")) return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
    }
    return static_cast<mode_t>(022);
  }();
  return 0666 & ~mask;
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  const std::string_view pieces[] = {contents};
  return WriteFileAtomically(path, pieces);
}

absl::Status WriteFileAtomically(const std::string& path,
                                 std::span<const std::string_view> pieces) {
  if (DescriptorNamed(path) >= 0) return WriteInPlace(path, pieces);
  const std::string target = ReplacedFile(path);
  struct stat existing;
  if (::stat(target.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    if (S_ISDIR(existing.st_mode)) {
      return absl::InvalidArgumentError(StrCat("output '", path, "' is a directory; give a file name"));
    }
    return WriteInPlace(path, pieces);
  }
  std::string dir = ParentDir(target);
  std::string tmp_template = target + ".tmp.XXXXXX";
  int fd = MakeTemporary(tmp_template);
  if (fd < 0) return TemporaryFileError(path, errno);
  TemporaryRegistration registration(tmp_template);
  const std::string& tmp = tmp_template;
  auto fail = [&](std::string_view what, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return ErrnoError(what, path, err);
  };
  if (int err = WriteAll(fd, pieces); err != 0) return fail("cannot write", err);
  if (::fchmod(fd, OutputMode(target)) != 0) return fail("cannot set permissions of", errno);
  if (::fsync(fd) != 0) return fail("cannot flush", errno);
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoError("cannot close", path, err);
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoError("cannot rename the temporary file to", path, err);
  }
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<StreamingFile>> StreamingFile::Create(const std::string& path,
                                                                    std::optional<mode_t> mode) {
  std::unique_ptr<StreamingFile> file(new StreamingFile());
  file->path_ = path;
  if (path == "-") {
    file->fd_ = ::dup(STDOUT_FILENO);
    if (file->fd_ < 0) return ErrnoError("cannot write", "stdout", errno);
    file->in_place_ = true;
    return file;
  }
  file->target_ = ReplacedFile(path);
  struct stat existing;
  if (DescriptorNamed(path) >= 0 ||
      (::stat(file->target_.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode))) {
    if (DescriptorNamed(path) < 0 && S_ISDIR(existing.st_mode)) {
      return absl::InvalidArgumentError(StrCat("output '", path, "' is a directory; give a file name"));
    }
    file->fd_ = OpenInPlace(path);
    if (file->fd_ < 0) return ErrnoError("cannot open", path, errno);
    file->in_place_ = true;
    return file;
  }
  file->tmp_ = file->target_ + ".tmp.XXXXXX";
  file->fd_ = MakeTemporary(file->tmp_);
  if (file->fd_ < 0) return TemporaryFileError(file->target_, errno);
  file->temporary_slot_ = RegisterTemporary(file->tmp_);
  if (::fchmod(file->fd_, mode.value_or(OutputMode(file->target_))) != 0) {
    return ErrnoError("cannot set permissions of", path, errno);
  }
  return file;
}

absl::StatusOr<std::unique_ptr<ScratchFile>> ScratchFile::Create(const std::string& folder) {
  std::unique_ptr<ScratchFile> file(new ScratchFile());
  file->folder_ = folder;
  file->fd_ = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (file->fd_ < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    std::string tmp = (std::filesystem::path(folder) / "tokenmill-scratch.XXXXXX").string();
    file->fd_ = ::mkstemp(tmp.data());
    if (file->fd_ >= 0) ::unlink(tmp.c_str());
  }
  if (file->fd_ < 0) {
    return ErrnoError("cannot create a scratch file (inputs read ahead of their turn) in", folder,
                      errno);
  }
  return file;
}

ScratchFile::~ScratchFile() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status ScratchFile::Append(std::string_view bytes) {
  const std::string_view pieces[] = {bytes};
  if (int err = WriteAll(fd_, pieces); err != 0) {
    return ErrnoError("cannot write a scratch file (inputs read ahead of their turn) in", folder_,
                      err);
  }
  size_ += bytes.size();
  return absl::OkStatus();
}

absl::Status ScratchFile::Read(uint64_t offset, size_t n, char* out) const {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd_, out + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      return ErrnoError("cannot read back a scratch file in", folder_, r < 0 ? errno : EIO);
    }
    got += static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

std::string ScratchFolderFor(const std::string& output) {
  struct stat st;
  if (output != "-" && (::stat(output.c_str(), &st) != 0 || S_ISREG(st.st_mode))) {
    return ParentDir(output);
  }
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir != nullptr && *tmpdir != '\0' ? std::string(tmpdir) : std::string("/tmp");
}

StreamingFile::~StreamingFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());
  UnregisterTemporary(temporary_slot_);
}

absl::Status StreamingFile::Write(std::string_view bytes) {
  const std::string_view pieces[] = {bytes};
  if (int err = WriteAll(fd_, pieces); err != 0) return ErrnoError("cannot write", path_, err);
  return absl::OkStatus();
}

absl::Status StreamingFile::WriteAt(uint64_t offset, std::string_view bytes) {
  if (in_place_) return absl::FailedPreconditionError(StrCat("cannot rewrite the start of ", path_));
  while (!bytes.empty()) {
    ssize_t n = ::pwrite(fd_, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("cannot write", path_, errno);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
    offset += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

absl::Status StreamingFile::Close() {
  const int fd = fd_;
  fd_ = -1;
  if (fd >= 0 && ::close(fd) != 0) return ErrnoError("cannot close", path_, errno);
  return absl::OkStatus();
}

absl::Status StreamingFile::Publish() {
  if (!tmp_.empty()) {
    if (::rename(tmp_.c_str(), target_.c_str()) != 0) {
      return ErrnoError("cannot rename the temporary file to", path_, errno);
    }
  }
  committed_ = true;
  UnregisterTemporary(temporary_slot_);
  temporary_slot_ = -1;
  return absl::OkStatus();
}

void RemoveStaleTemporaries(const std::string& path) {
  if (DescriptorNamed(path) >= 0) return;
  std::filesystem::path target(ReplacedFile(path));
  std::filesystem::path dir = target.parent_path().empty() ? "." : target.parent_path();
  const std::string prefix = target.filename().string() + ".tmp.";
  // Only names mkstemp makes (six letters or digits after the prefix: not a user's
  // out.u32.tmp.backup), and only files no live run holds locked (MakeTemporary): another run
  // writing the same output keeps its temporary.
  auto made_by_mkstemp = [&](const std::string& name) {
    if (name.size() != prefix.size() + 6 || !name.starts_with(prefix)) return false;
    for (size_t i = prefix.size(); i < name.size(); ++i) {
      const char c = name[i];
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return false;
    }
    return true;
  };
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!made_by_mkstemp(entry.path().filename().string())) continue;
    const int fd = ::open(entry.path().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      ::unlink(entry.path().c_str());
    }
    ::close(fd);
  }
}

}  // namespace tokenmill
