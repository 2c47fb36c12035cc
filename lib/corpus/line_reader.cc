#include "corpus/line_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "common/strings.h"
#include "common/file_util.h"

namespace tokenmill {

absl::Status ForEachLine(const std::string& path,
                         absl::FunctionRef<void(std::string_view)> on_document) {
  absl::Status readable = CheckReadableFile(path);
  if (!readable.ok()) return readable;
  int fd = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(StrCat("cannot open '", path, "': ", std::strerror(errno)));
  std::string pending;  // an unfinished line carried between reads
  std::string buffer(1 << 20, '\0');
  absl::Status status;
  while (true) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      status = absl::FailedPreconditionError(
          StrCat("cannot read '", path, "': ", std::strerror(errno)));
      break;
    }
    if (n == 0) break;
    std::string_view chunk(buffer.data(), static_cast<size_t>(n));
    size_t start = 0;
    while (true) {
      size_t newline = chunk.find('\n', start);
      if (newline == std::string_view::npos) break;
      std::string_view line = chunk.substr(start, newline + 1 - start);
      if (pending.empty()) {
        on_document(line);
      } else {
        pending.append(line);
        on_document(pending);
        pending.clear();
      }
      start = newline + 1;
    }
    pending.append(chunk.substr(start));
  }
  if (status.ok() && !pending.empty()) on_document(pending);
  if (fd != STDIN_FILENO) ::close(fd);
  return status;
}

}  // namespace tokenmill
