// The checkpoint reader's header parsers (reader.cc: the current format's tagged header;
// legacy_header.cc: formats 1-4), and what a header says about the rest of the file.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "checkpoint/checkpoint.h"

namespace tokenmill::checkpoint_internal {

// What the header says about the rest of the file.
struct Layout {
  uint64_t unique_words = 0, total_words = 0, merge_count = 0;
  uint64_t words_frame_size = 0, merges_frame_size = 0;
  bool inline_table = true;
  std::string_view table_name;
  uint32_t table_crc = 0;
};

// Versions 1-4: settings, corpus files, counters, frame sizes, and (2-4) the table's place.
absl::Status ParseLegacyHeader(std::string_view header, uint32_t version, std::string_view source,
                               Checkpoint& checkpoint, Layout& layout);

}  // namespace tokenmill::checkpoint_internal
