// Counting the full shared corpora: the .zst stream and the decompressed file cut into small
// shards give identical tables with 1, 2 and 8 threads, and identical counts files.
#include <zstd.h>

#include <fstream>
#include <string>

#include "common/file_util.h"
#include "count/count_corpus.h"
#include "count/counts_file.h"
#include "gtest/gtest.h"
#include "reference/checked.h"
#include "reference/cli_runner.h"

namespace tokenmill {
namespace {

std::string Decompress(const std::string& path) {
  std::string compressed = testing::ReadFileOrFail(path);
  std::string out(ZSTD_getFrameContentSize(compressed.data(), compressed.size()), '\0');
  out.resize(ZSTD_decompress(out.data(), out.size(), compressed.data(), compressed.size()));
  return out;
}

TEST(CountCorpora, SameTableAndFileForAnyThreadsAndShards) {
  testing::TempDir dir;
  for (const char* corpus : {"linux_docs", "poetry"}) {
    std::string zst = std::string(TOKENMILL_SHARED_DIR) + "/corpora/" + corpus + ".txt.zst";
    if (!std::ifstream(zst)) GTEST_SKIP() << "shared corpus " << zst << " not found";
    std::string plain = dir.Write(std::string(corpus) + ".txt", Decompress(zst));
    std::string first_file;
    int run = 0;
    for (const auto& [input, threads, shard] :
         {std::tuple{zst, 1, size_t{4} << 20}, std::tuple{plain, 2, size_t{65536}},
          std::tuple{plain, 8, size_t{1} << 20}, std::tuple{zst, 8, size_t{100000}}}) {
      CountCorpusOptions options;
      options.inputs = {input};
      options.threads = threads;
      options.shard_bytes = shard;
      options.batch_bytes = shard;
      options.progress = ProgressFormat::kNone;
      absl::StatusOr<CorpusCounts> counts = CountCorpus(options);
      ASSERT_TRUE(counts.ok()) << counts.status();
      std::string out = dir.File("run" + std::to_string(run++) + ".tmc");
      ASSERT_TRUE(WriteCountsFile(out, MakeCountsFileHeader(options, *counts), counts->words).ok());
      std::string bytes = testing::ReadFileOrFail(out);
      if (first_file.empty()) {
        first_file = bytes;
      } else {
        EXPECT_EQ(bytes, first_file) << corpus << " " << input << " threads " << threads;
      }
    }
  }
}

}  // namespace
}  // namespace tokenmill
