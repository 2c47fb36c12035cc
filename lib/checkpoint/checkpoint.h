// Checkpoints: everything an interrupted training run needs to continue to the identical
// result without re-reading the corpus. The file layout is in format.h; reader.cc parses it,
// writer.cc writes it. What the stored options mean, when a checkpoint is written and how a
// run resumes from one is lib/driver's.
//
// Writing is atomic (temporary file in the same folder, fsync, rename, fsync of the folder):
// CKPT.words is complete before the first CKPT of a run that names it, so the previous
// checkpoint of the run stays valid until the new one is complete. Reading fails with a
// message that names the file and what is wrong: a damaged or foreign file is never read as a
// checkpoint.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "checkpoint/format.h"
#include "common/file_util.h"
#include "count/word_counts.h"
#include "model/model.h"

namespace tokenmill {

inline constexpr uint32_t kCheckpointFormatVersion = checkpoint_format::kVersion;

// One corpus file as it was when counted.
struct CorpusFileStamp {
  std::string path;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const CorpusFileStamp&) const = default;
};

struct Checkpoint {
  // What is trained.
  ModelType model_type = ModelType::kBpe;
  // The run's options (format 5): each options struct's fields, as common/option_fields.h
  // encodes them (lib/driver says which struct is which and decodes them).
  std::string trainer_options, corpus_options, run_options;
  // Formats 1-4 instead: the train command's settings as (flag name, value) pairs, in flag
  // order, as tokenmill 0.1.0 stored them (lib/driver converts them).
  std::vector<std::pair<std::string, std::string>> legacy_settings;
  std::vector<CorpusFileStamp> corpus_files;
  uint64_t documents = 0;
  uint64_t corpus_bytes = 0;
  WordCounts words;        // the word table (empty when read as a list)
  WordList word_list;      // the word table, when read with WordTableAs::kList
  uint64_t unique_words = 0, total_words = 0;  // the table's totals (filled in when read)
  std::vector<std::pair<std::string, std::string>> merges;  // (left bytes, right bytes) in order
  // The pair count of each merge when it was chosen, parallel to `merges` (0: not known, as in
  // checkpoints of format version 1 and 2, where this is empty). Resuming checks them against
  // the words and needs them only for merges of a token with itself (lib/train/bpe/replay.h).
  std::vector<uint64_t> merge_counts;
  // The merges as stored (CheckpointWriter::AppendMerge's form, one after another, with 0 for
  // the counts that formats 1 and 2 lack) and how many they are: filled in by ParseCheckpoint
  // beside `merges`, so that a resumed run writes them again without serializing them anew,
  // and may move `merges` away. A writer that is given a count of 0 uses `merges` instead.
  std::string merges_raw;
  uint64_t merges_raw_count = 0;
  // A round-based trainer's state after its last step (TrainEvent::state, in the trainer's own
  // format), or empty.
  std::string trainer_state;
  bool finished = false;  // training had stopped by itself (target reached or no pairs left)
  int64_t created_unix_seconds = 0;

  // Filled in by ReadCheckpoint.
  uint64_t word_table_hash = 0;
  SharedBytes words_frame;  // the word table as stored (compressed), for writing it again
  std::optional<uint32_t> words_frame_crc;  // its CRC-32, when checked on reading (table files)
  std::string words_file;   // the file it was read from ("" when inline)
  uint32_t format_version = kCheckpointFormatVersion;
  uint64_t file_size = 0;
  uint64_t words_file_size = 0;
};

// Where the word table of the checkpoint at `checkpoint_path` is written: CKPT.words.
std::string WordTablePath(const std::string& checkpoint_path);

// Serialises checkpoints. The word table does not change during a run, so a training run gives
// it to the writer once (SetWordTable), which compresses it and reuses the frame for every
// later checkpoint: the table itself is then no longer needed and may be freed.
class CheckpointWriter {
 public:
  // `threads`: zstd worker threads for compressing a large table (0: one).
  explicit CheckpointWriter(int threads = 0) : threads_(threads) {}

  // Compresses `words`; every later checkpoint holds this table.
  absl::Status SetWordTable(const WordCounts& words);
  // The first half of SetWordTable: copies the table into a byte string, after which `words`
  // may go away; the next write compresses it (the slow part, which a training run does in the
  // background while the trainer goes on without the table).
  void SerializeWordTable(const WordCounts& words);
  // Adopts the word table of a checkpoint read back (Checkpoint::words_frame and
  // word_table_hash, and the table's totals), so that a resumed run writes it again without
  // recompressing; `stored_at` is the file it was read from (Checkpoint::words_file), which
  // is not written again when checkpoints go to the same place. `crc`: the frame's CRC-32 if
  // known (Checkpoint::words_frame_crc), else it is computed.
  void AdoptWordTable(SharedBytes frame, uint64_t hash, uint64_t unique_words,
                      uint64_t total_words, std::string stored_at = "",
                      std::optional<uint32_t> crc = std::nullopt);

  // The one-file form (table inline): with the table given to SetWordTable if any, else with
  // checkpoint.words (whose frame is then kept for the next call while the table stays the
  // same object with the same totals). Always the current format: legacy_settings are not
  // written.
  absl::StatusOr<std::string> Serialize(const Checkpoint& checkpoint);
  // Atomic writes of WordTablePath(path), when this writer has not written the table there
  // yet, and then of `path` (the table's frame is written from where it is held, not copied).
  absl::Status Write(const Checkpoint& checkpoint, const std::string& path);
  // The same with the merges given already serialized (checkpoint.merges is ignored): a run
  // that records merges one by one appends each with AppendMerge, so that a snapshot of them
  // is one copy of bytes, not of a string pair per merge. When `merges_raw` extends the merges
  // of this writer's previous write, only the new ones are compressed.
  absl::Status Write(const Checkpoint& checkpoint, std::string_view merges_raw,
                     uint64_t merge_count, const std::string& path);
  static void AppendMerge(std::string* merges_raw, std::string_view left, std::string_view right,
                          uint64_t count);
  // The merges as AppendMerge writes them, each with counts[i] (0 past the end of `counts`).
  static std::string SerializeMerges(std::span<const std::pair<std::string, std::string>> merges,
                                     std::span<const uint64_t> counts);

 private:
  // The file is head + words frame (inline tables only) + tail (the merges frame and the body
  // checksum). `words_name`: the table file's name, "" for an inline table.
  struct Parts {
    std::string head, tail;
  };
  absl::StatusOr<Parts> BuildParts(const Checkpoint& checkpoint, std::string_view merges_raw,
                                   uint64_t merge_count, std::string_view words_name);
  // Makes sure the writer holds a compressed table (checkpoint.words, unless pinned).
  absl::Status PrepareTable(const WordCounts& words);
  // The merges frames for `merges_raw`, compressing only what extends the last write's.
  absl::StatusOr<std::string_view> MergesFrames(std::string_view merges_raw);
  std::string Header(const Checkpoint& checkpoint, std::string_view state_frame,
                     uint64_t merge_count, uint64_t merges_size,
                     std::string_view words_name) const;
  absl::Status CacheTable(const WordCounts& words);
  // Compresses what SerializeWordTable copied.
  absl::Status CompressWordTable();
  // Writes the table file at `path` unless this writer wrote (or read) it there already.
  absl::Status WriteTableFile(const std::string& path);

  int threads_;
  bool pinned_ = false;  // SetWordTable was called
  const WordCounts* cached_from_ = nullptr;
  uint64_t unique_words_ = 0, total_words_ = 0;
  std::string words_raw_;  // SerializeWordTable's output until CompressWordTable
  SharedBytes words_frame_;
  uint32_t words_crc_ = 0;  // CRC-32 of words_frame_
  uint64_t words_hash_ = 0;
  bool has_frame_ = false;
  std::string table_written_to_;  // the table file that holds words_frame_ ("": none yet)
  // The merges of the last write, serialized, and their frames (one per write that added
  // merges). Linux_c_100m with a checkpoint every 1000 merges recompressed the whole list 30
  // times; now each write compresses about 1000 merges.
  std::string merges_raw_;
  std::string merges_frames_;
};

// Parses checkpoint bytes; `source` names them in error messages. A table kept in a file of
// its own is read with `read_table_file(name)` (name as stored in the header); without one,
// such a checkpoint is an error.
// `as`: read the word table into Checkpoint::words (a WordCounts), or into word_list (no
// hashing: about four times faster on poetry's 3.35 M words, for a run that only resumes).
using TableFileReader = std::function<absl::StatusOr<SharedBytes>(const std::string& name)>;
enum class WordTableAs { kCounts, kList };
absl::StatusOr<Checkpoint> ParseCheckpoint(std::string_view data, std::string_view source,
                                           const TableFileReader& read_table_file = nullptr,
                                           WordTableAs as = WordTableAs::kCounts);
// Reads the checkpoint at `path` and its table file (in the same folder).
absl::StatusOr<Checkpoint> ReadCheckpoint(const std::string& path,
                                          WordTableAs as = WordTableAs::kCounts);

// True when `data` starts with the checkpoint magic bytes.
bool LooksLikeCheckpoint(std::string_view data);
// True when the file at `path` starts with the checkpoint magic bytes.
bool IsCheckpointFile(const std::string& path);

// Stamps (size, modification time) of the given files, for the corpus fingerprint.
absl::StatusOr<std::vector<CorpusFileStamp>> StampFiles(const std::vector<std::string>& paths);

}  // namespace tokenmill
