#include "common/file_util.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/huge_pages.h"
#include "common/status_macros.h"
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
  if (path != "-" && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
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
  const bool owned = path != "-";  // (a file opened as descriptor 0, stdin being closed, is ours)
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
    if (owned) ::close(fd);
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
  if (owned) ::close(fd);
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

namespace {

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
// or /proc/self/fd/N; -1 for any other path.
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

// Where an output goes (ResolveOutput).
struct OutputTarget {
  // Written where it is, nothing replaced: a descriptor's name or a link to one (a copy of the
  // descriptor is written: the name is a link to what it holds, a pipe or the file a shell
  // redirected to, which a rename would replace with a file of its own), another magic link of
  // /proc, a device or a FIFO.
  bool in_place = false;
  int descriptor = -1;  // in place through this descriptor (else the path is opened)
  // Else the regular file a rename makes or replaces: the path, or the file its links lead to
  // (the links stay, leading to the new file).
  std::string file;
};

absl::StatusOr<OutputTarget> ResolveOutput(const std::string& path) {
  OutputTarget out;
  std::filesystem::path file = path;
  // Followed link by link, as the kernel does (at most 40): weakly_canonical leaves a link to
  // a file not made yet as it is, and /proc's links do not lead to paths.
  for (int links = 0;; ++links) {
    const std::string name = file.string();
    if (int n = DescriptorNamed(name); n >= 0) {
      out.in_place = true;
      out.descriptor = n;
      return out;
    }
    if (name.starts_with("/proc/")) break;  // /proc/PID/fd/N: opened as it is, below
    struct stat st;
    if (::lstat(file.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;
    if (links == 40) return ErrnoError("cannot follow the links of", path, ELOOP);
    std::error_code error;
    const std::filesystem::path to = std::filesystem::read_symlink(file, error);
    if (error) return ErrnoError("cannot read the link", path, error.value());
    file = to.is_absolute() ? to : file.parent_path() / to;
  }
  out.file = file == path ? path : CanonicalPath(file.string());
  struct stat st;
  if (::stat(out.file.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(StrCat("output '", path, "' is a directory; give a file name"));
    }
    out.in_place = !S_ISREG(st.st_mode);
  }
  // /proc makes no files: its paths (another process's descriptors) are written where they are.
  if (out.file.starts_with("/proc/")) out.in_place = true;
  return out;
}

// `path` (resolved as `target`) opened for writing where it is.
int OpenInPlace(const std::string& path, const OutputTarget& target) {
  if (target.descriptor >= 0) return ::fcntl(target.descriptor, F_DUPFD_CLOEXEC, 0);
  return ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
}

// Temporaries are named FILE.tmp.tokenmill-XXXXXX (mkstemp's letters and digits), so that
// RemoveStaleTemporaries cannot take a user's FILE.tmp.backup for one.
constexpr std::string_view kTemporaryInfix = ".tmp.tokenmill-";

// A temporary beside `file` (its name in `tmp`), locked (flock) through a second descriptor,
// `lock`, until the caller closes it after the rename, so that a run's temporary, written or
// closed and not yet renamed, is never taken for one a killed run left (RemoveStaleTemporaries
// removes only what it can lock). -1 and errno when it cannot be made.
int MakeTemporary(const std::string& file, std::string& tmp, int& lock) {
  lock = -1;
  for (int attempt = 0; attempt < 8; ++attempt) {
    tmp = StrCat(file, kTemporaryInfix, "XXXXXX");
    const int fd = ::mkstemp(tmp.data());
    if (fd < 0) return -1;
    lock = ::open(tmp.c_str(), O_RDWR | O_CLOEXEC);  // (NFS's locks need a writable descriptor)
    if (lock < 0 && errno != ENOENT) lock = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
    if (lock < 0 && errno != ENOENT) return fd;  // not lockable here: unlocked, as before
    bool locked = false;
    if (lock >= 0) {
      locked = ::flock(lock, LOCK_EX | LOCK_NB) == 0;
      if (!locked && errno != EWOULDBLOCK) return fd;  // a file system without flock: unlocked
    }
    // Locked, and still the file of that name (the lock's descriptor, opened by name, too).
    struct stat made, named, held;
    if (locked && ::fstat(fd, &made) == 0 && ::stat(tmp.c_str(), &named) == 0 &&
        ::fstat(lock, &held) == 0 && made.st_ino == named.st_ino && made.st_dev == named.st_dev &&
        held.st_ino == made.st_ino && held.st_dev == made.st_dev) {
      return fd;
    }
    // Another run's RemoveStaleTemporaries took it between mkstemp and the lock (it holds the
    // lock, or has unlinked the name): not ours any more; a new name.
    if (lock >= 0) ::close(lock);
    lock = -1;
    ::close(fd);
  }
  errno = EEXIST;
  return -1;
}

// Writes into `path` where it is (a descriptor, a device such as /dev/full, a FIFO): there is
// nothing to replace atomically, and renaming over it would destroy it.
absl::Status WriteInPlace(const std::string& path, const OutputTarget& target,
                          std::span<const std::string_view> pieces) {
  int fd = OpenInPlace(path, target);
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

absl::Status CheckWritableOutput(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("the output path is empty");
  TM_ASSIGN_OR_RETURN(const OutputTarget target, ResolveOutput(path));
  if (target.in_place) return absl::OkStatus();  // written where it is: nothing made beside it
  struct stat st;
  // The folder the temporary and the rename need: that of the file a link leads to.
  std::string dir = ParentDir(target.file);
  if (::stat(dir.c_str(), &st) != 0) return ErrnoError("output folder does not exist:", dir, errno);
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(StrCat("output folder '", dir, "' is not a folder"));
  }
  if (::access(dir.c_str(), W_OK) != 0) return ErrnoError("cannot write in folder", dir, errno);
  return absl::OkStatus();
}

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
  TM_ASSIGN_OR_RETURN(const OutputTarget target, ResolveOutput(path));
  if (target.in_place) return WriteInPlace(path, target, pieces);
  const std::string& file = target.file;
  std::string tmp;
  int lock = -1;
  const int fd = MakeTemporary(file, tmp, lock);
  if (fd < 0) return TemporaryFileError(file, errno);
  TemporaryRegistration registration(tmp);
  auto fail = [&](std::string_view what, int err, bool open) {
    if (open) ::close(fd);
    ::unlink(tmp.c_str());
    if (lock >= 0) ::close(lock);
    return ErrnoError(what, path, err);
  };
  if (int err = WriteAll(fd, pieces); err != 0) return fail("cannot write", err, true);
  if (::fchmod(fd, OutputMode(file)) != 0) return fail("cannot set permissions of", errno, true);
  if (::fsync(fd) != 0) return fail("cannot flush", errno, true);
  if (::close(fd) != 0) return fail("cannot close", errno, false);
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    return fail("cannot rename the temporary file to", errno, false);
  }
  if (lock >= 0) ::close(lock);
  int dir_fd = ::open(ParentDir(file).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
  TM_ASSIGN_OR_RETURN(const OutputTarget target, ResolveOutput(path));
  if (target.in_place) {
    file->fd_ = OpenInPlace(path, target);
    if (file->fd_ < 0) return ErrnoError("cannot open", path, errno);
    file->in_place_ = true;
    return file;
  }
  file->target_ = target.file;
  file->fd_ = MakeTemporary(file->target_, file->tmp_, file->lock_fd_);
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

void RaiseOpenFileLimit() {
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  rlim_t want = limit.rlim_max;
  if (want == RLIM_INFINITY) {
    // The kernel refuses more than fs.nr_open.
    want = rlim_t{1} << 20;
    std::ifstream nr_open("/proc/sys/fs/nr_open");
    unsigned long long n = 0;
    if (nr_open >> n && n > 0) want = static_cast<rlim_t>(n);
  }
  if (want <= limit.rlim_cur) return;
  limit.rlim_cur = want;
  setrlimit(RLIMIT_NOFILE, &limit);  // (keeps the old limit when refused)
}

size_t SpareDescriptors() {
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
  size_t open = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++open;
  }
  if (ec || open == 0) open = 64;  // no /proc: a guess
  return limit.rlim_cur > open ? static_cast<size_t>(limit.rlim_cur) - open : 0;
}

std::string ScratchFolderFor(const std::string& output) {
  if (output != "-") {
    absl::StatusOr<OutputTarget> target = ResolveOutput(output);
    if (target.ok() && !target->in_place) return ParentDir(target->file);
  }
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir != nullptr && *tmpdir != '\0' ? std::string(tmpdir) : std::string("/tmp");
}

StreamingFile::~StreamingFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());
  if (lock_fd_ >= 0) ::close(lock_fd_);  // (after the unlink: nobody else removes it meanwhile)
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
  if (lock_fd_ >= 0) ::close(lock_fd_);  // renamed: no longer a temporary
  lock_fd_ = -1;
  UnregisterTemporary(temporary_slot_);
  temporary_slot_ = -1;
  return absl::OkStatus();
}

void RemoveStaleTemporaries(const std::string& path) {
  absl::StatusOr<OutputTarget> target = ResolveOutput(path);
  if (!target.ok() || target->in_place) return;
  const std::filesystem::path file(target->file);
  const std::filesystem::path dir = file.parent_path().empty() ? "." : file.parent_path();
  const std::string prefix = StrCat(file.filename().string(), kTemporaryInfix);
  // Only MakeTemporary's names (the prefix, then mkstemp's six letters or digits), and only
  // files no live run holds locked: another run writing the same output keeps its temporary.
  auto made_by_us = [&](const std::string& name) {
    if (name.size() != prefix.size() + 6 || !name.starts_with(prefix)) return false;
    for (size_t i = prefix.size(); i < name.size(); ++i) {
      const char c = name[i];
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return false;
    }
    return true;
  };
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!made_by_us(entry.path().filename().string())) continue;
    const char* name = entry.path().c_str();
    int fd = ::open(name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);  // (NFS: writable)
    if (fd < 0) fd = ::open(name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      ::unlink(name);
    }
    ::close(fd);
  }
}

}  // namespace tokenmill
