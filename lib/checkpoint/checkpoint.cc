#include "checkpoint/checkpoint.h"

#include <sys/stat.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <latch>
#include <new>
#include <thread>

#include "absl/strings/str_format.h"
#include "common/binary_io.h"
#include "common/file_util.h"
#include "common/huge_pages.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace tokenmill {
namespace {

constexpr std::string_view kMagic = "TMCKPT\r\n";
constexpr std::string_view kTableMagic = "TMWRDS\r\n";
constexpr uint32_t kTableFormatVersion = 1;

uint32_t Crc32(std::string_view data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (!data.empty()) {
    uInt chunk = static_cast<uInt>(std::min<size_t>(data.size(), 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data()), chunk);
    data.remove_prefix(chunk);
  }
  return static_cast<uint32_t>(crc);
}

uint64_t Fnv1a64(std::string_view data) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

absl::StatusOr<std::string> Compress(std::string_view data, int threads, int level) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  if (threads > 1) ZSTD_CCtx_setParameter(cctx, ZSTD_c_nbWorkers, threads);
  std::string out(ZSTD_compressBound(data.size()), '\0');
  size_t n = ZSTD_compress2(cctx, out.data(), out.size(), data.data(), data.size());
  ZSTD_freeCCtx(cctx);
  if (ZSTD_isError(n)) return absl::InternalError(StrCat("zstd: ", ZSTD_getErrorName(n)));
  out.resize(n);
  out.shrink_to_fit();  // the bound is about the input's size; keep only what is used
  return out;
}

// The words in the table's own order: training does not depend on word order, and sorting
// 3.35 M words (poetry) cost more than compressing them.
std::string SerializeWords(const WordCounts& words) {
  // Sized first: appending poetry's 66 MB grew the string by doubling, while the trainer waits.
  size_t bytes = VarintSize(words.unique_words());
  words.ForEach([&](std::string_view word, uint64_t count) {
    bytes += VarintSize(word.size()) + word.size() + VarintSize(count);
  });
  std::string out;
  out.reserve(bytes);
  BinaryWriter w(&out);
  w.Varint(words.unique_words());
  words.ForEach([&](std::string_view word, uint64_t count) {
    w.Bytes(word);
    w.Varint(count);
  });
  return out;
}

}  // namespace

std::string SettingValue(const Checkpoint& checkpoint, std::string_view name) {
  for (const auto& [key, value] : checkpoint.settings) {
    if (key == name) return value;
  }
  return "";
}

std::string WordTablePath(const std::string& checkpoint_path) { return checkpoint_path + ".words"; }

bool LooksLikeCheckpoint(std::string_view data) { return data.starts_with(kMagic); }

bool IsCheckpointFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  char head[kMagic.size()];
  size_t n = std::fread(head, 1, sizeof(head), f);
  std::fclose(f);
  return LooksLikeCheckpoint(std::string_view(head, n));
}

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

absl::StatusOr<CheckpointWriter::Parts> CheckpointWriter::BuildParts(
    const Checkpoint& checkpoint, std::string_view merges_raw, uint64_t merge_count,
    std::string_view words_name) {
  if (!pinned_) {
    const WordCounts& words = checkpoint.words;
    if (!has_frame_ || cached_from_ != &words || unique_words_ != words.unique_words() ||
        total_words_ != words.total_words()) {
      TM_RETURN_IF_ERROR(CacheTable(words));
    }
  } else if (!has_frame_) {
    TM_RETURN_IF_ERROR(CompressWordTable());  // serialized, not compressed yet
  }
  // The merges frames: those of the last write while the merges extend its merges, and one
  // more for the merges added since.
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
  const std::string_view merges_frame = merges_frames_;

  std::string header;
  BinaryWriter h(&header);
  h.Varint(checkpoint.settings.size());
  for (const auto& [key, value] : checkpoint.settings) {
    h.Bytes(key);
    h.Bytes(value);
  }
  h.Varint(checkpoint.corpus_files.size());
  for (const CorpusFileStamp& f : checkpoint.corpus_files) {
    h.Bytes(f.path);
    h.Varint(f.size);
    h.Fixed64(static_cast<uint64_t>(f.mtime_ns));
  }
  h.Varint(checkpoint.documents);
  h.Varint(checkpoint.corpus_bytes);
  h.Varint(unique_words_);
  h.Varint(total_words_);
  h.Fixed64(words_hash_);
  h.Varint(merge_count);
  h.Varint(checkpoint.finished ? 1 : 0);
  h.Fixed64(static_cast<uint64_t>(checkpoint.created_unix_seconds != 0
                                      ? checkpoint.created_unix_seconds
                                      : static_cast<int64_t>(std::time(nullptr))));
  h.Varint(words_frame_.size());
  h.Varint(merges_frame.size());
  const bool inline_table = words_name.empty();
  h.Varint(inline_table ? 0 : 1);  // where the table is (version 2)
  if (!inline_table) {
    h.Bytes(words_name);
    h.Fixed32(words_crc_);
  }

  Parts parts;
  BinaryWriter w(&parts.head);
  w.Raw(kMagic);
  w.Fixed32(kCheckpointFormatVersion);
  w.Fixed32(static_cast<uint32_t>(header.size()));
  w.Raw(header);
  w.Fixed32(Crc32(parts.head));
  // The body checksum runs over the words frame (when inline) and then the merges frame.
  uLong body_crc = inline_table ? crc32_combine(words_crc_, Crc32(merges_frame),
                                                static_cast<z_off_t>(merges_frame.size()))
                                : Crc32(merges_frame);
  parts.tail = std::string(merges_frame);
  BinaryWriter t(&parts.tail);
  t.Fixed32(static_cast<uint32_t>(body_crc));
  return parts;
}

absl::StatusOr<std::string> CheckpointWriter::Serialize(const Checkpoint& checkpoint) {
  TM_ASSIGN_OR_RETURN(Parts parts, BuildParts(checkpoint, SerializeMerges(checkpoint.merges, checkpoint.merge_counts),
                                              checkpoint.merges.size(), ""));
  return StrCat(parts.head, words_frame_.view(), parts.tail);
}

absl::Status CheckpointWriter::Write(const Checkpoint& checkpoint, const std::string& path) {
  return Write(checkpoint, SerializeMerges(checkpoint.merges, checkpoint.merge_counts), checkpoint.merges.size(), path);
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
  h.Fixed32(kTableFormatVersion);
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

namespace {

absl::Status Corrupt(std::string_view source, std::string_view what) {
  return absl::DataLossError(StrCat(source, ": not a valid tokenmill checkpoint: ", what));
}

absl::StatusOr<std::string> Decompress(std::string_view frame, std::string_view source,
                                       std::string_view what) {
  unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) {
    return Corrupt(source, StrCat("the ", what, " frame is damaged"));
  }
  if (size > frame.size() * 4096ull + (64ull << 20)) {
    return Corrupt(source, StrCat("the ", what, " frame claims an implausible size"));
  }
  std::string out;
  try {
    out.reserve(static_cast<size_t>(size));
    AdviseHugePages(out.data(), out.capacity());
    out.resize(static_cast<size_t>(size));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(StrCat(source, ": not enough memory for the ", what));
  }
  size_t n = ZSTD_decompress(out.data(), out.size(), frame.data(), frame.size());
  if (ZSTD_isError(n) || n != size) {
    return Corrupt(source, StrCat("the ", what, " frame is damaged (", ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong size", ")"));
  }
  return out;
}

// Frames one after another (format 4's merges), decompressed one after another; none: "".
absl::StatusOr<std::string> DecompressFrames(std::string_view frames, std::string_view source,
                                             std::string_view what) {
  std::string out;
  while (!frames.empty()) {
    const size_t size = ZSTD_findFrameCompressedSize(frames.data(), frames.size());
    if (ZSTD_isError(size)) return Corrupt(source, StrCat("the ", what, " frames are damaged"));
    TM_ASSIGN_OR_RETURN(std::string part, Decompress(frames.substr(0, size), source, what));
    out += part;
    frames.remove_prefix(size);
  }
  return out;
}

absl::Status NotTheTable(std::string_view source, std::string_view checkpoint,
                         std::string_view what) {
  return absl::DataLossError(
      StrCat(source, ": not the word table of checkpoint ", checkpoint, ": ", what));
}

constexpr std::string_view kTableDamaged = "the checksum does not match (the file is damaged)";

// Checks a table file's bytes against what the checkpoint's header says of it, except the
// frame's CRC (the caller computes it beside the decompression); returns the frame.
absl::StatusOr<std::string_view> TableFrame(std::string_view data, std::string_view source,
                                            std::string_view checkpoint, uint64_t hash,
                                            uint64_t frame_size, uint32_t frame_crc) {
  auto bad = [&](std::string_view what) { return NotTheTable(source, checkpoint, what); };
  BinaryReader r(data);
  std::string_view magic, frame;
  uint32_t version = 0, crc = 0;
  uint64_t stored_hash = 0;
  if (!r.Raw(kTableMagic.size(), &magic) || magic != kTableMagic) {
    return bad("wrong magic bytes (a checkpoint's word table file starts with TMWRDS)");
  }
  if (!r.Fixed32(&version) || !r.Fixed64(&stored_hash)) return bad("truncated in its header");
  if (version != kTableFormatVersion) {
    return bad(StrCat("table file format version ", version, ", this tokenmill reads ",
                      kTableFormatVersion));
  }
  if (stored_hash != hash) {
    return bad("it holds another table (its hash differs: a later run with the same checkpoint "
               "path replaced it, or the files were mixed up)");
  }
  if (!r.Raw(frame_size, &frame) || !r.Fixed32(&crc)) {
    return bad(absl::StrFormat("truncated: %d bytes, the checkpoint promises %d", data.size(),
                               kTableMagic.size() + 16 + frame_size));
  }
  if (!r.done()) return bad("unexpected bytes after the end");
  if (crc != frame_crc) return bad(kTableDamaged);
  return frame;
}

}  // namespace

absl::StatusOr<Checkpoint> ParseCheckpoint(std::string_view data, std::string_view source,
                                           const TableFileReader& read_table_file,
                                           WordTableAs as) {
  if (!data.starts_with(kMagic)) {
    if (data.starts_with("\x28\xb5\x2f\xfd")) {
      return Corrupt(source, "it is a plain zstd file, not a checkpoint");
    }
    return Corrupt(source, "wrong magic bytes (is this a counts file or a tokenizer? checkpoints are written by tokenmill train)");
  }
  Checkpoint checkpoint;
  checkpoint.file_size = data.size();
  BinaryReader r(data);
  std::string_view raw;
  uint32_t version = 0, header_size = 0, header_crc = 0;
  r.Raw(kMagic.size(), &raw);
  if (!r.Fixed32(&version)) return Corrupt(source, "truncated before the format version");
  if (version > kCheckpointFormatVersion) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: checkpoint format version %d is newer than this tokenmill reads (%d); use a newer tokenmill",
        source, version, kCheckpointFormatVersion));
  }
  if (version == 0) return Corrupt(source, "format version 0");
  checkpoint.format_version = version;
  std::string_view header;
  if (!r.Fixed32(&header_size) || !r.Raw(header_size, &header)) {
    return Corrupt(source, "truncated inside the header");
  }
  size_t header_end = r.offset();
  if (!r.Fixed32(&header_crc)) return Corrupt(source, "truncated before the header checksum");
  if (Crc32(data.substr(0, header_end)) != header_crc) {
    return Corrupt(source, "the header checksum does not match (the file is damaged)");
  }

  BinaryReader h(header);
  auto bad_header = [&] { return Corrupt(source, "malformed header"); };
  uint64_t n = 0;
  if (!h.Varint(&n) || n > header.size()) return bad_header();
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view key, value;
    if (!h.Bytes(&key) || !h.Bytes(&value)) return bad_header();
    checkpoint.settings.emplace_back(key, value);
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
  uint64_t unique_words, total_words, merge_count, finished, created, words_frame_size,
      merges_frame_size;
  if (!h.Varint(&checkpoint.documents) || !h.Varint(&checkpoint.corpus_bytes) ||
      !h.Varint(&unique_words) || !h.Varint(&total_words) ||
      !h.Fixed64(&checkpoint.word_table_hash) || !h.Varint(&merge_count) ||
      !h.Varint(&finished) || !h.Fixed64(&created) || !h.Varint(&words_frame_size) ||
      !h.Varint(&merges_frame_size)) {
    return bad_header();
  }
  uint64_t table_location = 0;  // version 1: always inline
  std::string_view table_name;
  uint32_t table_crc = 0;
  if (version >= 2) {
    if (!h.Varint(&table_location) || table_location > 1) return bad_header();
    if (table_location == 1 && (!h.Bytes(&table_name) || table_name.empty() ||
                                table_name.find('/') != std::string_view::npos ||
                                !h.Fixed32(&table_crc))) {
      return bad_header();
    }
  }
  if (!h.done()) return bad_header();
  checkpoint.finished = finished != 0;
  checkpoint.created_unix_seconds = static_cast<int64_t>(created);

  size_t body_start = r.offset();
  const bool inline_table = table_location == 0;
  std::string_view words_frame, merges_frame;
  uint32_t body_crc;
  if ((inline_table && !r.Raw(words_frame_size, &words_frame)) ||
      !r.Raw(merges_frame_size, &merges_frame) || !r.Fixed32(&body_crc)) {
    return Corrupt(source, absl::StrFormat("truncated: %d bytes, the header promises more", data.size()));
  }
  if (!r.done()) return Corrupt(source, "unexpected bytes after the end");
  if (Crc32(data.substr(body_start, r.offset() - 4 - body_start)) != body_crc) {
    return Corrupt(source, "the body checksum does not match (the file is damaged)");
  }

  SharedBytes table_data;  // the table file's bytes, when the table is not inline
  if (!inline_table) {
    if (read_table_file == nullptr) {
      return Corrupt(source, StrCat("its word table is in the file ", table_name,
                                    ", which was not given"));
    }
    absl::StatusOr<SharedBytes> read = read_table_file(std::string(table_name));
    if (!read.ok()) {
      return absl::Status(read.status().code(),
                          StrCat(source, ": cannot read its word table (checkpoints are two files, "
                                         "CKPT and CKPT.words; keep them together): ",
                                 Message(read.status())));
    }
    table_data = *std::move(read);
    checkpoint.words_file_size = table_data.size();
    TM_ASSIGN_OR_RETURN(words_frame, TableFrame(table_data, table_name, source,
                                                checkpoint.word_table_hash, words_frame_size,
                                                table_crc));
  }

  // While the word table is decompressed, a second thread checks the table file's frame
  // against its CRC (poetry's 49 MB frame: 0.05 s), then decompresses and parses the merges
  // (linux_c_100m at 30k merges: 3.4 ms of the 9 ms of reading). The CRC's verdict comes
  // first, then the table's errors, then the merges'.
  uint32_t frame_crc = table_crc;
  std::latch crc_checked(1);
  struct ParsedMerges {
    std::vector<std::pair<std::string, std::string>> merges;
    std::vector<uint64_t> counts;
    std::string raw;
    absl::Status status;
  } parsed;
  std::jthread helper([&, merges_frame, merge_count, version, source] {
    if (!inline_table) frame_crc = Crc32(words_frame);
    crc_checked.count_down();
    auto malformed = [&] { return Corrupt(source, "the merge list is malformed"); };
    // Format 4: frames of the merges; before: one frame of their number and the merges.
    absl::StatusOr<std::string> merges = version >= 4
                                             ? DecompressFrames(merges_frame, source, "merges")
                                             : Decompress(merges_frame, source, "merges");
    if (!merges.ok()) {
      parsed.status = merges.status();
      return;
    }
    BinaryReader mr(*merges);
    uint64_t n = merge_count;
    if ((version < 4 && (!mr.Varint(&n) || n != merge_count)) || n > merges->size()) {
      parsed.status = malformed();
      return;
    }
    const size_t first = mr.offset();
    parsed.merges.reserve(n);
    parsed.counts.reserve(version >= 3 ? n : 0);
    for (uint64_t i = 0; i < n; ++i) {
      std::string_view left, right;
      uint64_t count = 0;
      if (!mr.Bytes(&left) || !mr.Bytes(&right) || left.empty() || right.empty() ||
          (version >= 3 && !mr.Varint(&count))) {
        parsed.status = malformed();
        return;
      }
      parsed.merges.emplace_back(left, right);
      if (version >= 3) parsed.counts.push_back(count);
    }
    if (!mr.done()) {
      parsed.status = malformed();
      return;
    }
    if (version >= 3) {  // stored as the writer appends them: keep the bytes after the count
      parsed.raw = *std::move(merges);
      parsed.raw.erase(0, first);
    } else {  // with counts of 0 (none were stored)
      parsed.raw = CheckpointWriter::SerializeMerges(parsed.merges, {});
    }
  });

  absl::StatusOr<std::string> decompressed = Decompress(words_frame, source, "word table");
  crc_checked.wait();
  if (frame_crc != table_crc) return NotTheTable(table_name, source, kTableDamaged);
  TM_ASSIGN_OR_RETURN(std::string words, std::move(decompressed));
  if (inline_table) {
    checkpoint.words_frame = SharedBytes(std::string(words_frame));
  } else {  // the frame, in place in the table file's bytes (no copy of tens of MB)
    const size_t at = static_cast<size_t>(words_frame.data() - table_data.view().data());
    checkpoint.words_frame = table_data.Sub(at, words_frame.size());
    checkpoint.words_frame_crc = table_crc;  // checked above
  }
  // The bytes stay where the list's views point (the string behind the pointer never moves).
  auto table = std::make_shared<const std::string>(std::move(words));
  // The table's hash (FNV-1a of its bytes) is its identity: the writer computes it, and the
  // header of a table file must repeat the checkpoint's (TableFrame). It is not recomputed
  // here: the bytes are already checked twice, by the CRC-32 of the compressed frame and by
  // the zstd frame's own checksum of its content (XXH64, verified while decompressing), and
  // FNV-1a is one serial multiply per byte (poetry's 66 MB table: 0.09 s, the longest step
  // of reading a checkpoint).
  std::vector<std::pair<std::string_view, uint64_t>> entries;
  uint64_t total = 0;
  bool well_formed = [&] {
    BinaryReader wr(*table);
    if (!wr.Varint(&n) || n != unique_words || n > table->size()) return false;
    entries.reserve(n);
    AdviseHugePages(entries.data(), entries.capacity() * sizeof(entries[0]));
    entries.resize(n);
    for (uint64_t i = 0; i < n; ++i) {
      if (!wr.Bytes(&entries[i].first) || !wr.Varint(&entries[i].second)) return false;
      total += entries[i].second;
    }
    return wr.done() && total == total_words;
  }();
  if (!well_formed) return Corrupt(source, "the word table is malformed");
  if (as == WordTableAs::kList) {
    checkpoint.word_list = {std::move(table), std::move(entries)};
  } else {
    checkpoint.words.AddAll(entries);
    if (checkpoint.words.unique_words() != unique_words) {
      return Corrupt(source, "the word table is malformed");  // a word listed twice
    }
  }
  checkpoint.unique_words = unique_words;
  checkpoint.total_words = total_words;

  helper.join();
  TM_RETURN_IF_ERROR(parsed.status);
  checkpoint.merges = std::move(parsed.merges);
  checkpoint.merge_counts = std::move(parsed.counts);
  checkpoint.merges_raw = std::move(parsed.raw);
  checkpoint.merges_raw_count = checkpoint.merges.size();
  return checkpoint;
}

absl::StatusOr<Checkpoint> ReadCheckpoint(const std::string& path, WordTableAs as) {
  TM_ASSIGN_OR_RETURN(std::string data, ReadFile(path));
  std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::string table_path;
  TM_ASSIGN_OR_RETURN(Checkpoint checkpoint,
                      ParseCheckpoint(data, path, [&](const std::string& name) {
                        table_path = (folder / name).string();
                        return MapFile(table_path);
                      }, as));
  checkpoint.words_file = table_path;
  return checkpoint;
}

absl::StatusOr<std::vector<CorpusFileStamp>> StampFiles(const std::vector<std::string>& paths) {
  std::vector<CorpusFileStamp> stamps;
  for (const std::string& path : paths) {
    CorpusFileStamp stamp;
    stamp.path = path;
    if (path != "-") {
      struct stat st;
      if (::stat(path.c_str(), &st) != 0) {
        return absl::NotFoundError(StrCat("cannot stat corpus file '", path, "'"));
      }
      stamp.size = static_cast<uint64_t>(st.st_size);
      stamp.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    }
    stamps.push_back(std::move(stamp));
  }
  return stamps;
}

std::string DescribeCheckpoint(const Checkpoint& c) {
  std::string out = absl::StrFormat("tokenmill checkpoint, format version %d, %d bytes\n",
                                    c.format_version, c.file_size);
  if (!c.words_file.empty()) {
    absl::StrAppendFormat(&out, "word table: %s, %d bytes\n", c.words_file, c.words_file_size);
  }
  std::string target = SettingValue(c, "vocab-size");
  absl::StrAppendFormat(&out, "merges done: %d of a target vocabulary of %s%s\n", c.merges.size(),
                        target.empty() ? "?" : target, c.finished ? " (training had finished)" : "");
  out += "configuration:\n";
  for (const auto& [key, value] : c.settings) absl::StrAppendFormat(&out, "  --%s=%s\n", key, value);
  absl::StrAppendFormat(&out, "corpus: %d documents, %d bytes, %d words, %d unique words, table hash %016x\n",
                        c.documents, c.corpus_bytes, c.words.total_words(), c.words.unique_words(),
                        c.word_table_hash);
  for (const CorpusFileStamp& f : c.corpus_files) {
    absl::StrAppendFormat(&out, "  %s (%d bytes, modified %d.%09d)\n", f.path, f.size,
                          f.mtime_ns / 1000000000, f.mtime_ns % 1000000000);
  }
  return out;
}

}  // namespace tokenmill
