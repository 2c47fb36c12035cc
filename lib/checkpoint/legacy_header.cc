// Reading the fixed headers of checkpoint formats 1-4 (format.h).
#include "checkpoint/frames.h"
#include "checkpoint/header.h"
#include "common/binary_io.h"

namespace tokenmill::checkpoint_internal {

absl::Status ParseLegacyHeader(std::string_view header, uint32_t version, std::string_view source,
                               Checkpoint& checkpoint, Layout& layout) {
  BinaryReader h(header);
  auto bad_header = [&] { return Corrupt(source, "malformed header"); };
  uint64_t n = 0;
  if (!h.Varint(&n) || n > header.size()) return bad_header();
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view key, value;
    if (!h.Bytes(&key) || !h.Bytes(&value)) return bad_header();
    checkpoint.legacy_settings.emplace_back(key, value);
  }
  if (!h.Varint(&n) || n > header.size()) return bad_header();
  for (uint64_t i = 0; i < n; ++i) {
    CorpusFileStamp f;
    std::string_view path;
    uint64_t mtime;
    if (!h.Bytes(&path) || !h.Varint(&f.size) || !h.Fixed64(&mtime)) return bad_header();
    f.path = std::string(path);
    f.mtime_ns = static_cast<int64_t>(mtime);
    checkpoint.corpus_files.push_back(std::move(f));
  }
  uint64_t finished, created;
  if (!h.Varint(&checkpoint.documents) || !h.Varint(&checkpoint.corpus_bytes) ||
      !h.Varint(&layout.unique_words) || !h.Varint(&layout.total_words) ||
      !h.Fixed64(&checkpoint.word_table_hash) || !h.Varint(&layout.merge_count) ||
      !h.Varint(&finished) || !h.Fixed64(&created) || !h.Varint(&layout.words_frame_size) ||
      !h.Varint(&layout.merges_frame_size)) {
    return bad_header();
  }
  uint64_t table_location = 0;  // version 1: always inline
  if (version >= 2) {
    if (!h.Varint(&table_location) || table_location > 1) return bad_header();
    if (table_location == 1 && (!h.Bytes(&layout.table_name) || layout.table_name.empty() ||
                                layout.table_name.find('/') != std::string_view::npos ||
                                !h.Fixed32(&layout.table_crc))) {
      return bad_header();
    }
  }
  if (!h.done()) return bad_header();
  layout.inline_table = table_location == 0;
  checkpoint.finished = finished != 0;
  checkpoint.created_unix_seconds = static_cast<int64_t>(created);
  return absl::OkStatus();
}

}  // namespace tokenmill::checkpoint_internal
