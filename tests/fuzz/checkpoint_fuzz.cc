// Fuzzes checkpoint parsing (ParseCheckpoint). Input: one mode byte, then:
//  mode 0: the file's bytes as they are;
//  mode 1: the file's bytes with both CRC-32s recomputed (header CRC after the header whose
//          size is at offset 12; body CRC in the last 4 bytes), so mutations reach the header
//          fields, the frame sizes and the zstd frames;
//  mode 2: the description of a checkpoint (option fields, files, words, merges) that is
//          serialized (CheckpointWriter), then optionally one byte is flipped, and parsed;
//  mode 3: a checkpoint whose table is in a file of its own: fixed32 n, n bytes of the table
//          file, then the checkpoint file's bytes (CRCs recomputed as in mode 1).
// Properties: an error naming the source or a checkpoint, never a crash; an unflipped
// serialization parses back to the same checkpoint; DescribeCheckpoint (which decodes the
// stored options, or converts a legacy checkpoint's settings) works on any result.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "checkpoint/checkpoint.h"
#include "common/file_util.h"
#include "common/strings.h"
#include "driver/describe.h"
#include "driver/stored_options.h"
#include "fuzz_util.h"

namespace tokenmill {
namespace {

void FixCrcs(std::string& bytes) {
  if (bytes.size() < 16) return;
  uint64_t header_end = 16 + uint64_t{fuzz::GetU32(bytes, 12)};
  if (header_end + 4 > bytes.size()) return;
  fuzz::PutU32(bytes, header_end, fuzz::Crc32(std::string_view(bytes).substr(0, header_end)));
  size_t body_start = header_end + 4;
  if (bytes.size() < body_start + 4) return;
  fuzz::PutU32(bytes, bytes.size() - 4,
               fuzz::Crc32(std::string_view(bytes).substr(body_start, bytes.size() - 4 - body_start)));
}

void CheckParse(std::string_view bytes, const std::string* table_file = nullptr) {
  TableFileReader reader;
  if (table_file != nullptr) {
    reader = [table_file](const std::string&) -> absl::StatusOr<SharedBytes> {
      return SharedBytes(*table_file);
    };
  }
  absl::StatusOr<Checkpoint> parsed = ParseCheckpoint(bytes, "fuzz.ckpt", reader);
  if (!parsed.ok()) {
    if (parsed.status().message().find("fuzz.ckpt") == std::string_view::npos) {
      fuzz::Fail("the error does not name the source:", parsed.status().message());
    }
    return;
  }
  DescribeCheckpoint(*parsed);
}

void RoundTrip(FuzzedDataProvider& in) {
  Checkpoint c;
  c.trainer_options = in.ConsumeRandomLengthString(48);
  c.corpus_options = in.ConsumeRandomLengthString(48);
  c.run_options = in.ConsumeRandomLengthString(48);
  for (int i = in.ConsumeIntegralInRange(0, 3); i > 0; --i) {
    c.corpus_files.push_back({in.ConsumeRandomLengthString(32), in.ConsumeIntegral<uint64_t>(),
                              in.ConsumeIntegral<int64_t>()});
  }
  c.documents = in.ConsumeIntegral<uint64_t>();
  c.corpus_bytes = in.ConsumeIntegral<uint64_t>();
  for (int i = in.ConsumeIntegralInRange(0, 20); i > 0; --i) {
    std::string word = in.ConsumeRandomLengthString(12);
    if (!word.empty()) c.words.Add(word, in.ConsumeIntegralInRange<uint64_t>(1, 1u << 20));
  }
  for (int i = in.ConsumeIntegralInRange(0, 20); i > 0; --i) {
    std::string left = in.ConsumeRandomLengthString(8), right = in.ConsumeRandomLengthString(8);
    if (!left.empty() && !right.empty()) c.merges.emplace_back(left, right);
  }
  c.finished = in.ConsumeBool();
  c.created_unix_seconds = in.ConsumeIntegralInRange<int64_t>(1, INT64_MAX);
  bool flip = in.ConsumeBool();
  size_t flip_at = in.ConsumeIntegral<size_t>();
  uint8_t flip_mask = in.ConsumeIntegralInRange<uint8_t>(1, 255);

  CheckpointWriter writer;
  absl::StatusOr<std::string> bytes = writer.Serialize(c);
  if (!bytes.ok()) fuzz::Fail("Serialize failed:", bytes.status().message());
  if (flip) {
    (*bytes)[flip_at % bytes->size()] ^= static_cast<char>(flip_mask);
    CheckParse(*bytes);
    return;
  }
  absl::StatusOr<Checkpoint> parsed = ParseCheckpoint(*bytes, "fuzz.ckpt");
  if (!parsed.ok()) fuzz::Fail("a serialized checkpoint does not parse:", parsed.status().message());
  if (parsed->trainer_options != c.trainer_options ||
      parsed->corpus_options != c.corpus_options || parsed->run_options != c.run_options ||
      parsed->corpus_files != c.corpus_files ||
      parsed->documents != c.documents || parsed->corpus_bytes != c.corpus_bytes ||
      !(parsed->words == c.words) || parsed->merges != c.merges ||
      parsed->finished != c.finished || parsed->created_unix_seconds != c.created_unix_seconds) {
    fuzz::Fail("checkpoint round trip changed the contents");
  }
}

// TOKENMILL_FUZZ_WRITE_SEEDS=DIR: writes the seed corpus (a small checkpoint of the current
// format for modes 0 and 1, a description for mode 2) to DIR and exits.
void WriteSeeds(const std::string& dir) {
  Checkpoint c;
  TrainingRunOptions options;
  options.trainer.vocab_size = 300;
  options.corpus.special_tokens = {"<|endoftext|>"};
  options.Harmonize();
  StoreOptions(options, c);
  c.corpus_files = {{"corpus.txt", 1234, 1700000000123456789}};
  c.documents = 2;
  c.corpus_bytes = 30;
  for (const char* word : {"hello", " world", " hello", "the", " cat", " sat", "\n"}) c.words.Add(word, 3);
  c.merges = {{"h", "e"}, {"l", "l"}, {"he", "ll"}, {" ", "w"}};
  c.created_unix_seconds = 1700000000;
  auto write_seed = [&](const std::string& name, const std::string& seed) {
    if (!WriteFileAtomically(dir + "/" + name, seed).ok()) fuzz::Fail("cannot write a seed");
  };
  CheckpointWriter writer;
  absl::StatusOr<std::string> bytes = writer.Serialize(c);
  if (!bytes.ok()) fuzz::Fail("Serialize failed");
  // Named by the format version: the seeds of earlier formats stay, for their readers.
  const std::string v = StrCat("_v", kCheckpointFormatVersion);
  for (char mode : {'\0', '\1'}) write_seed(StrCat("small", v, "_", char('0' + mode)), mode + *bytes);
  // Mode 3: the same checkpoint as two files.
  std::string two = dir + "/two_files.ckpt";
  if (!writer.Write(c, two).ok()) fuzz::Fail("cannot write the two-file seed");
  std::string seed = "\3";
  absl::StatusOr<std::string> table = ReadFile(WordTablePath(two)), main = ReadFile(two);
  if (!table.ok() || !main.ok()) fuzz::Fail("cannot read the two-file seed back");
  std::string n(4, '\0');
  fuzz::PutU32(n, 0, static_cast<uint32_t>(table->size()));
  seed += n + *table + *main;
  std::remove(two.c_str());
  std::remove(WordTablePath(two).c_str());
  write_seed(StrCat("two_files", v), seed);
  std::string description = "\2";  // mode 2, then arbitrary description bytes
  for (int i = 0; i < 96; ++i) description.push_back(static_cast<char>((i * 37 + 11) & 0xFF));
  write_seed("description", description);
  std::exit(0);
}

}  // namespace
}  // namespace tokenmill

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("TOKENMILL_FUZZ_WRITE_SEEDS")) tokenmill::WriteSeeds(dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenmill;
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: CheckParse(bytes); break;
    case 1: FixCrcs(bytes); CheckParse(bytes); break;
    case 2: {
      FuzzedDataProvider in(data + 1, size - 1);
      RoundTrip(in);
      break;
    }
    case 3: {
      if (bytes.size() < 4) break;
      size_t n = std::min<size_t>(fuzz::GetU32(bytes, 0), bytes.size() - 4);
      std::string table = bytes.substr(4, n), main = bytes.substr(4 + n);
      FixCrcs(main);
      CheckParse(main, &table);
      break;
    }
  }
  return 0;
}
