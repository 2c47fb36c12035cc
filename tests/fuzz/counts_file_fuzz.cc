// Fuzzes word-count (.tmc) file reading: ReadCountsFileHeader, ReadCountsFile and
// DescribeCountsFile on any bytes (through an in-memory file: the reader takes a path).
// Input: one mode byte, then the file. Mode bit 0 set: the trailing CRC-32 is recomputed so
// that mutations reach the header, sizes and body instead of stopping at the checksum.
// Properties: an error or a result, never a crash; errors name the file; an accepted file's
// totals match what was added.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "count/counts_file.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenmill;
  static fuzz::MemFile* file = new fuzz::MemFile;
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) && bytes.size() >= 4) {
    fuzz::PutU32(bytes, bytes.size() - 4,
                 fuzz::Crc32(std::string_view(bytes).substr(0, bytes.size() - 4)));
  }
  const std::string& path = file->Set(bytes);

  auto header = ReadCountsFileHeader(path);
  if (!header.ok() && header.status().message().find(path) == std::string_view::npos) {
    fuzz::Fail("header error does not name the file:", header.status().message());
  }
  WordCounts words;
  auto full = ReadCountsFile(path, &words);
  if (!full.ok()) {
    if (full.status().message().find(path) == std::string_view::npos) {
      fuzz::Fail("error does not name the file:", full.status().message());
    }
    return 0;
  }
  if (!header.ok()) fuzz::Fail("the whole file reads but its header does not");
  if (!(*header == *full)) fuzz::Fail("ReadCountsFileHeader and ReadCountsFile disagree");
  if (words.unique_words() != full->totals.unique_words ||
      words.total_words() != full->totals.words) {
    fuzz::Fail("an accepted file's totals do not match its words");
  }
  std::string description;
  if (!DescribeCountsFile(path, 5, &description).ok()) fuzz::Fail("Describe fails on a good file");
  return 0;
}
