// Helpers shared by the fuzz targets (tests/fuzz/*_fuzz.cc).
#pragma once

#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"

namespace tokenmill::fuzz {

// Stops the run with a message: libFuzzer records the input as a crash.
[[noreturn]] inline void Fail(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "FUZZ PROPERTY VIOLATED: %s %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}
// Debian's Abseil has its own string_view (Status::message() returns one).
[[noreturn]] inline void Fail(const char* what, absl::string_view detail) {
  Fail(what, std::string_view(detail.data(), detail.size()));
}
[[noreturn]] inline void Fail(const char* what, const std::string& detail) {
  Fail(what, std::string_view(detail));
}

// An in-memory file (memfd) with a path, for parsers that take a path rather than bytes.
class MemFile {
 public:
  MemFile() : fd_(::memfd_create("tokenmill-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) Fail("memfd_create failed");
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { ::close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  // Replaces the contents; returns the path to open.
  const std::string& Set(std::string_view data) {
    if (::ftruncate(fd_, 0) != 0) Fail("ftruncate failed");
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::pwrite(fd_, data.data() + done, data.size() - done, static_cast<off_t>(done));
      if (n <= 0) Fail("pwrite failed");
      done += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  int fd_;
  std::string path_;
};

inline uint32_t Crc32(std::string_view data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  return static_cast<uint32_t>(
      crc32_z(crc, reinterpret_cast<const Bytef*>(data.data()), data.size()));
}

inline uint32_t GetU32(std::string_view data, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    v |= static_cast<uint32_t>(static_cast<unsigned char>(data[at + static_cast<size_t>(i)])) << (8 * i);
  }
  return v;
}

inline void PutU32(std::string& data, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) data[at + static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

}  // namespace tokenmill::fuzz
