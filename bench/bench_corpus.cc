#include "bench_corpus.h"

#include <zstd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "common/file_util.h"

namespace tokenmill::bench {

std::string BenchCorpusPath(std::string_view name) {
  if (const char* file = std::getenv("TOKENMILL_BENCH_FILE"); file != nullptr && *file != '\0') {
    return file;
  }
  std::string shared = std::string(TOKENMILL_SHARED_DIR) + "/corpora/" + std::string(name) + ".txt.zst";
  if (name != "sample" && std::filesystem::exists(shared)) return shared;
  return std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/sample.txt";
}

const std::string& BenchCorpus(std::string_view name) {
  static std::mutex mutex;
  static std::map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(mutex);
  std::string path = BenchCorpusPath(name);
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;
  absl::StatusOr<std::string> data = ReadFile(path);
  if (!data.ok()) {
    std::fprintf(stderr, "benchmark input %s: %s\n", path.c_str(), std::string(data.status().message()).c_str());
    std::exit(1);
  }
  std::string text = *std::move(data);
  if (path.ends_with(".zst")) {
    std::string out;
    ZSTD_DStream* stream = ZSTD_createDStream();
    ZSTD_inBuffer in{text.data(), text.size(), 0};
    std::string buffer(ZSTD_DStreamOutSize(), '\0');
    while (in.pos < in.size) {
      ZSTD_outBuffer o{buffer.data(), buffer.size(), 0};
      size_t rc = ZSTD_decompressStream(stream, &o, &in);
      if (ZSTD_isError(rc)) {
        std::fprintf(stderr, "benchmark input %s: %s\n", path.c_str(), ZSTD_getErrorName(rc));
        std::exit(1);
      }
      out.append(buffer.data(), o.pos);
    }
    ZSTD_freeDStream(stream);
    text = std::move(out);
  }
  return cache.emplace(path, std::move(text)).first->second;
}

}  // namespace tokenmill::bench
