// The shared corpora (../shared/corpora/NAME.txt.zst) for the large tests (tests only).
#pragma once

#include <gtest/gtest.h>
#include <zstd.h>

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/file_util.h"

namespace tokenmill::testing {

// Corpus `name` decompressed (its first `max_bytes` bytes or a little more: decompression stops
// once that much is out); "" when the file is missing (the caller decides whether that is a
// failure), and a test failure when it does not decompress.
inline std::string ReadSharedCorpus(const std::string& name,
                                    size_t max_bytes = std::numeric_limits<size_t>::max()) {
  const std::string path = std::string(TOKENMILL_SHARED_DIR) + "/corpora/" + name + ".txt.zst";
  absl::StatusOr<std::string> compressed = ReadFile(path);
  if (!compressed.ok()) return {};
  std::string out;
  ZSTD_DStream* stream = ZSTD_createDStream();
  ZSTD_inBuffer in{compressed->data(), compressed->size(), 0};
  std::vector<char> buffer(1 << 20);
  while (in.pos < in.size && out.size() < max_bytes) {
    ZSTD_outBuffer o{buffer.data(), buffer.size(), 0};
    const size_t rc = ZSTD_decompressStream(stream, &o, &in);
    if (ZSTD_isError(rc)) {
      ADD_FAILURE() << path << ": " << ZSTD_getErrorName(rc);
      break;
    }
    out.append(buffer.data(), o.pos);
  }
  ZSTD_freeDStream(stream);
  return out;
}

}  // namespace tokenmill::testing
