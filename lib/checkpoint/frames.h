// The reader's and the writer's shared pieces: checksums, zstd frames and the word table's
// serialization (format.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "count/word_counts.h"

namespace tokenmill::checkpoint_internal {

uint32_t Crc32(std::string_view data);
// The word table's identity (FNV-1a 64 of its serialization).
uint64_t Fnv1a64(std::string_view data);

// One zstd frame with its content checksum; `threads` > 1 uses that many workers.
absl::StatusOr<std::string> Compress(std::string_view data, int threads, int level);
// One frame's content; errors name `source` and `what` the frame holds.
absl::StatusOr<std::string> Decompress(std::string_view frame, std::string_view source,
                                       std::string_view what);
// Frames one after another, decompressed one after another; none: "".
absl::StatusOr<std::string> DecompressFrames(std::string_view frames, std::string_view source,
                                             std::string_view what);

// "<source>: not a valid tokenmill checkpoint: <what>" (DataLoss).
absl::Status Corrupt(std::string_view source, std::string_view what);

// The word table as stored: its words in the table's own order (training does not depend on
// word order, and sorting 3.35 M words (poetry) cost more than compressing them).
std::string SerializeWords(const WordCounts& words);

}  // namespace tokenmill::checkpoint_internal
