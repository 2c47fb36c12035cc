// Writing checkpoints (layout: format.h).
#include <zlib.h>

#include <ctime>
#include <filesystem>

#include "checkpoint/checkpoint.h"
#include "checkpoint/frames.h"
#include "common/binary_io.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace tokenmill {

using namespace checkpoint_format;    // NOLINT: the tags read as the format's words
using namespace checkpoint_internal;  // NOLINT

void CheckpointWriter::SerializeWordTable(const WordCounts& words) {
  words_raw_ = SerializeWords(words);
  unique_words_ = words.unique_words();
  total_words_ = words.total_words();
  cached_from_ = nullptr;  // the table may go away now
  has_frame_ = false;
  pinned_ = true;
}

absl::Status CheckpointWriter::CompressWordTable() {
  words_hash_ = Fnv1a64(words_raw_);
  // Several zstd workers only pay off on a large table; each costs buffers of its own.
  constexpr size_t kMultiThreadBytes = size_t{32} << 20;
  // Level 1: poetry's 66 MB table in 0.22 s to 48.7 MB, where level 3 took 0.57 s for 42.5 MB
  // (one core), while training runs beside it.
  TM_ASSIGN_OR_RETURN(std::string frame, Compress(words_raw_,
                                                  words_raw_.size() >= kMultiThreadBytes ? threads_ : 0, 1));
  words_frame_ = SharedBytes(std::move(frame));
  std::string().swap(words_raw_);
  words_crc_ = Crc32(words_frame_);
  has_frame_ = true;
  table_written_to_.clear();
  return absl::OkStatus();
}

absl::Status CheckpointWriter::CacheTable(const WordCounts& words) {
  SerializeWordTable(words);
  TM_RETURN_IF_ERROR(CompressWordTable());
  pinned_ = false;
  cached_from_ = &words;
  return absl::OkStatus();
}

absl::Status CheckpointWriter::SetWordTable(const WordCounts& words) {
  SerializeWordTable(words);
  return CompressWordTable();
}

void CheckpointWriter::AdoptWordTable(SharedBytes frame, uint64_t hash, uint64_t unique_words,
                                      uint64_t total_words, std::string stored_at,
                                      std::optional<uint32_t> crc) {
  table_written_to_ = std::move(stored_at);
  words_frame_ = std::move(frame);
  words_crc_ = crc.has_value() ? *crc : Crc32(words_frame_);
  words_hash_ = hash;
  unique_words_ = unique_words;
  total_words_ = total_words;
  cached_from_ = nullptr;
  has_frame_ = true;
  pinned_ = true;
}

void CheckpointWriter::AppendMerge(std::string* merges_raw, std::string_view left,
                                   std::string_view right, uint64_t count) {
  BinaryWriter w(merges_raw);
  w.Bytes(left);
  w.Bytes(right);
  w.Varint(count);
}

std::string CheckpointWriter::SerializeMerges(
    std::span<const std::pair<std::string, std::string>> merges,
    std::span<const uint64_t> counts) {
  std::string out;
  for (size_t i = 0; i < merges.size(); ++i) {
    AppendMerge(&out, merges[i].first, merges[i].second, i < counts.size() ? counts[i] : 0);
  }
  return out;
}

absl::Status CheckpointWriter::PrepareTable(const WordCounts& words) {
  if (!pinned_) {
    if (!has_frame_ || cached_from_ != &words || unique_words_ != words.unique_words() ||
        total_words_ != words.total_words()) {
      TM_RETURN_IF_ERROR(CacheTable(words));
    }
  } else if (!has_frame_) {
    TM_RETURN_IF_ERROR(CompressWordTable());  // serialized, not compressed yet
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string_view> CheckpointWriter::MergesFrames(std::string_view merges_raw) {
  // The frames of the last write while the merges extend its merges, and one more for the
  // merges added since.
  if (!merges_raw.starts_with(merges_raw_)) {
    merges_raw_.clear();
    merges_frames_.clear();
  }
  if (merges_raw.size() > merges_raw_.size()) {
    TM_ASSIGN_OR_RETURN(std::string frame,
                        Compress(merges_raw.substr(merges_raw_.size()), 0, 3));
    merges_frames_ += frame;
    merges_raw_.append(merges_raw.substr(merges_raw_.size()));
  }
  return std::string_view(merges_frames_);
}

std::string CheckpointWriter::Header(const Checkpoint& checkpoint, std::string_view state_frame,
                                     uint64_t merge_count,
                                     uint64_t merges_size, std::string_view words_name) const {
  std::string header;
  BinaryWriter h(&header);
  auto varint = [&](HeaderTag tag, uint64_t value) {
    h.Varint(tag);
    h.Varint(value);
  };
  auto bytes = [&](HeaderTag tag, std::string_view value) {
    h.Varint(tag);
    h.Bytes(value);
  };
  varint(kModelType, static_cast<uint64_t>(checkpoint.model_type));
  bytes(kTrainerOptions, checkpoint.trainer_options);
  bytes(kCorpusOptions, checkpoint.corpus_options);
  bytes(kRunOptions, checkpoint.run_options);
  for (const CorpusFileStamp& f : checkpoint.corpus_files) {
    h.Varint(kCorpusFile);
    h.Bytes(f.path);
    h.Varint(f.size);
    h.Fixed64(static_cast<uint64_t>(f.mtime_ns));
  }
  varint(kDocuments, checkpoint.documents);
  varint(kCorpusBytes, checkpoint.corpus_bytes);
  varint(kUniqueWords, unique_words_);
  varint(kTotalWords, total_words_);
  h.Varint(kWordTableHash);
  h.Fixed64(words_hash_);
  varint(kMergeCount, merge_count);
  varint(kFinished, checkpoint.finished ? 1 : 0);
  h.Varint(kCreated);
  h.Fixed64(static_cast<uint64_t>(checkpoint.created_unix_seconds != 0
                                      ? checkpoint.created_unix_seconds
                                      : static_cast<int64_t>(std::time(nullptr))));
  varint(kWordsFrameSize, words_frame_.size());
  varint(kMergesFrameSize, merges_size);
  if (!words_name.empty()) {
    h.Varint(kTableFile);
    h.Bytes(words_name);
    h.Fixed32(words_crc_);
  }
  if (!state_frame.empty()) bytes(kTrainerState, state_frame);
  return header;
}

absl::StatusOr<CheckpointWriter::Parts> CheckpointWriter::BuildParts(
    const Checkpoint& checkpoint, std::string_view merges_raw, uint64_t merge_count,
    std::string_view words_name) {
  TM_RETURN_IF_ERROR(PrepareTable(checkpoint.words));
  TM_ASSIGN_OR_RETURN(std::string_view merges_frame, MergesFrames(merges_raw));
  std::string state_frame;
  if (!checkpoint.trainer_state.empty()) {
    TM_ASSIGN_OR_RETURN(state_frame, Compress(checkpoint.trainer_state, threads_, 3));
  }
  const std::string header =
      Header(checkpoint, state_frame, merge_count, merges_frame.size(), words_name);
  Parts parts;
  BinaryWriter w(&parts.head);
  w.Raw(kMagic);
  w.Fixed32(kVersion);
  w.Fixed32(static_cast<uint32_t>(header.size()));
  w.Raw(header);
  w.Fixed32(Crc32(parts.head));
  // The body checksum runs over the words frame (when inline) and then the merges frames.
  const bool inline_table = words_name.empty();
  uLong body_crc = inline_table ? crc32_combine(words_crc_, Crc32(merges_frame),
                                                static_cast<z_off_t>(merges_frame.size()))
                                : Crc32(merges_frame);
  parts.tail = std::string(merges_frame);
  BinaryWriter(&parts.tail).Fixed32(static_cast<uint32_t>(body_crc));
  return parts;
}

absl::StatusOr<std::string> CheckpointWriter::Serialize(const Checkpoint& checkpoint) {
  TM_ASSIGN_OR_RETURN(Parts parts,
                      BuildParts(checkpoint, SerializeMerges(checkpoint.merges, checkpoint.merge_counts),
                                 checkpoint.merges.size(), ""));
  return StrCat(parts.head, words_frame_.view(), parts.tail);
}

absl::Status CheckpointWriter::Write(const Checkpoint& checkpoint, const std::string& path) {
  return Write(checkpoint, SerializeMerges(checkpoint.merges, checkpoint.merge_counts),
               checkpoint.merges.size(), path);
}

absl::Status CheckpointWriter::WriteTableFile(const std::string& path) {
  if (!table_written_to_.empty()) {
    std::error_code ec;
    if (table_written_to_ == path || std::filesystem::equivalent(table_written_to_, path, ec)) {
      return absl::OkStatus();
    }
  }
  std::string head, tail;
  BinaryWriter h(&head);
  h.Raw(kTableMagic);
  h.Fixed32(kTableVersion);
  h.Fixed64(words_hash_);
  BinaryWriter(&tail).Fixed32(words_crc_);
  const std::string_view pieces[] = {head, words_frame_.view(), tail};
  TM_RETURN_IF_ERROR(WriteFileAtomically(path, pieces));
  table_written_to_ = path;
  return absl::OkStatus();
}

absl::Status CheckpointWriter::Write(const Checkpoint& checkpoint, std::string_view merges_raw,
                                     uint64_t merge_count, const std::string& path) {
  const std::string table_path = WordTablePath(path);
  absl::StatusOr<Parts> parts =
      BuildParts(checkpoint, merges_raw, merge_count,
                 std::filesystem::path(table_path).filename().string());
  absl::Status status = parts.status();
  if (status.ok()) status = WriteTableFile(table_path);
  if (status.ok()) {
    const std::string_view pieces[] = {parts->head, parts->tail};
    status = WriteFileAtomically(path, pieces);
  }
  if (!status.ok()) {
    return absl::Status(status.code(), StrCat("checkpoint not written (the previous one, if any, is intact): ",
                                              Message(status)));
  }
  return absl::OkStatus();
}

}  // namespace tokenmill
