#include "checkpoint/checkpoint.h"

#include <sys/stat.h>

#include <cstdio>

#include "common/strings.h"

namespace tokenmill {

std::string WordTablePath(const std::string& checkpoint_path) { return checkpoint_path + ".words"; }

bool LooksLikeCheckpoint(std::string_view data) {
  return data.starts_with(checkpoint_format::kMagic);
}

bool IsCheckpointFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  char head[checkpoint_format::kMagic.size()];
  size_t n = std::fread(head, 1, sizeof(head), f);
  std::fclose(f);
  return LooksLikeCheckpoint(std::string_view(head, n));
}

absl::StatusOr<std::vector<CorpusFileStamp>> StampFiles(const std::vector<std::string>& paths) {
  std::vector<CorpusFileStamp> stamps;
  for (const std::string& path : paths) {
    CorpusFileStamp stamp;
    stamp.path = path;
    if (path != "-") {
      struct stat st;
      if (::stat(path.c_str(), &st) != 0) {
        return absl::NotFoundError(StrCat("cannot stat corpus file '", path, "'"));
      }
      stamp.size = static_cast<uint64_t>(st.st_size);
      stamp.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    }
    stamps.push_back(std::move(stamp));
  }
  return stamps;
}

}  // namespace tokenmill
