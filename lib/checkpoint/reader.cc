// Reading checkpoints (layout: format.h), the current format and formats 1-4.
#include <filesystem>
#include <latch>
#include <memory>
#include <thread>

#include "absl/strings/str_format.h"
#include "checkpoint/checkpoint.h"
#include "checkpoint/frames.h"
#include "checkpoint/header.h"
#include "common/binary_io.h"
#include "common/file_util.h"
#include "common/huge_pages.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace tokenmill {
namespace {

using namespace checkpoint_format;    // NOLINT: the tags read as the format's words
using namespace checkpoint_internal;  // NOLINT

// The magic, the version, the header (checksummed); `body` is where the frames start.
struct Envelope {
  uint32_t version = 0;
  std::string_view header;
  size_t body = 0;
};

absl::StatusOr<Envelope> ParseEnvelope(std::string_view data, std::string_view source) {
  if (!data.starts_with(kMagic)) {
    if (data.starts_with("\x28\xb5\x2f\xfd")) {
      return Corrupt(source, "it is a plain zstd file, not a checkpoint");
    }
    return Corrupt(source, "wrong magic bytes (is this a counts file or a tokenizer? checkpoints are written by tokenmill train)");
  }
  Envelope envelope;
  BinaryReader r(data);
  std::string_view raw;
  uint32_t header_size = 0, header_crc = 0;
  r.Raw(kMagic.size(), &raw);
  if (!r.Fixed32(&envelope.version)) return Corrupt(source, "truncated before the format version");
  if (envelope.version > kVersion) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: checkpoint format version %d is newer than this tokenmill reads (%d); use a newer tokenmill",
        source, envelope.version, kVersion));
  }
  if (envelope.version == 0) return Corrupt(source, "format version 0");
  if (!r.Fixed32(&header_size) || !r.Raw(header_size, &envelope.header)) {
    return Corrupt(source, "truncated inside the header");
  }
  const size_t header_end = r.offset();
  if (!r.Fixed32(&header_crc)) return Corrupt(source, "truncated before the header checksum");
  if (Crc32(data.substr(0, header_end)) != header_crc) {
    return Corrupt(source, "the header checksum does not match (the file is damaged)");
  }
  envelope.body = r.offset();
  return envelope;
}

// Version 5: tagged records.
absl::Status ParseTaggedHeader(std::string_view header, std::string_view source,
                               Checkpoint& checkpoint, Layout& layout) {
  BinaryReader h(header);
  uint64_t seen = 0;  // bit t: tag t was read
  while (!h.done()) {
    uint64_t tag = 0, value = 0, mtime = 0;
    std::string_view bytes;
    bool ok = h.Varint(&tag);
    if (ok && tag < 64) {
      if ((seen >> tag & 1) != 0 && tag != kCorpusFile) {
        return Corrupt(source, StrCat("its header gives field ", tag, " twice"));
      }
      seen |= uint64_t{1} << tag;
    }
    switch (ok ? tag : 0) {
      case kModelType:
        ok = h.Varint(&value);
        if (ok && value != static_cast<uint64_t>(ModelType::kBpe) &&
            value != static_cast<uint64_t>(ModelType::kUnigram)) {
          return Corrupt(source, StrCat("it trains model type ", value,
                                        ", which this tokenmill does not know"));
        }
        checkpoint.model_type = static_cast<ModelType>(value);
        break;
      case kTrainerState: {
        ok = h.Bytes(&bytes);
        if (!ok) break;
        TM_ASSIGN_OR_RETURN(checkpoint.trainer_state,
                            Decompress(bytes, source, "the trainer's state"));
        break;
      }
      case kTrainerOptions:
      case kCorpusOptions:
      case kRunOptions:
        ok = h.Bytes(&bytes);
        (tag == kTrainerOptions  ? checkpoint.trainer_options
         : tag == kCorpusOptions ? checkpoint.corpus_options
                                 : checkpoint.run_options)
            .assign(bytes);
        break;
      case kCorpusFile: {
        CorpusFileStamp f;
        ok = h.Bytes(&bytes) && h.Varint(&f.size) && h.Fixed64(&mtime);
        f.path.assign(bytes);
        f.mtime_ns = static_cast<int64_t>(mtime);
        checkpoint.corpus_files.push_back(std::move(f));
        break;
      }
      case kDocuments: ok = h.Varint(&checkpoint.documents); break;
      case kCorpusBytes: ok = h.Varint(&checkpoint.corpus_bytes); break;
      case kUniqueWords: ok = h.Varint(&layout.unique_words); break;
      case kTotalWords: ok = h.Varint(&layout.total_words); break;
      case kWordTableHash: ok = h.Fixed64(&checkpoint.word_table_hash); break;
      case kMergeCount: ok = h.Varint(&layout.merge_count); break;
      case kFinished:
        ok = h.Varint(&value) && value <= 1;
        checkpoint.finished = value == 1;
        break;
      case kCreated:
        ok = h.Fixed64(&value);
        checkpoint.created_unix_seconds = static_cast<int64_t>(value);
        break;
      case kWordsFrameSize: ok = h.Varint(&layout.words_frame_size); break;
      case kMergesFrameSize: ok = h.Varint(&layout.merges_frame_size); break;
      case kTableFile:
        ok = h.Bytes(&layout.table_name) && !layout.table_name.empty() &&
             layout.table_name.find('/') == std::string_view::npos && h.Fixed32(&layout.table_crc);
        layout.inline_table = false;
        break;
      default:
        if (!ok) break;
        return Corrupt(source, StrCat("its header holds field ", tag,
                                      ", which this tokenmill does not know"));
    }
    if (!ok) return Corrupt(source, "malformed header");
  }
  for (HeaderTag required : {kModelType, kTrainerOptions, kCorpusOptions, kRunOptions,
                             kUniqueWords, kTotalWords, kWordTableHash, kMergeCount,
                             kWordsFrameSize, kMergesFrameSize}) {
    if ((seen >> required & 1) == 0) {
      return Corrupt(source, StrCat("its header lacks field ", static_cast<int>(required)));
    }
  }
  return absl::OkStatus();
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
  if (version != kTableVersion) {
    return bad(StrCat("table file format version ", version, ", this tokenmill reads ",
                      kTableVersion));
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

// The frames after the header, checked against the body checksum.
struct Body {
  std::string_view words_frame, merges_frame;  // words_frame: inline tables only
};

absl::StatusOr<Body> ParseBody(std::string_view data, size_t start, const Layout& layout,
                               std::string_view source) {
  BinaryReader r(data.substr(start));
  Body body;
  uint32_t body_crc;
  if ((layout.inline_table && !r.Raw(layout.words_frame_size, &body.words_frame)) ||
      !r.Raw(layout.merges_frame_size, &body.merges_frame) || !r.Fixed32(&body_crc)) {
    return Corrupt(source, absl::StrFormat("truncated: %d bytes, the header promises more", data.size()));
  }
  if (!r.done()) return Corrupt(source, "unexpected bytes after the end");
  if (Crc32(data.substr(start, r.offset() - 4)) != body_crc) {
    return Corrupt(source, "the body checksum does not match (the file is damaged)");
  }
  return body;
}

// The merges of the merges frame(s), as stored and parsed.
struct ParsedMerges {
  std::vector<std::pair<std::string, std::string>> merges;
  std::vector<uint64_t> counts;
  std::string raw;
  absl::Status status;
};

ParsedMerges DecodeMerges(std::string_view frames, uint64_t merge_count, uint32_t version,
                          std::string_view source) {
  ParsedMerges parsed;
  auto malformed = [&] {
    parsed.status = Corrupt(source, "the merge list is malformed");
    return std::move(parsed);
  };
  // Since format 4: frames of the merges; before: one frame of their number and the merges.
  absl::StatusOr<std::string> merges = version >= 4 ? DecompressFrames(frames, source, "merges")
                                                    : Decompress(frames, source, "merges");
  if (!merges.ok()) {
    parsed.status = merges.status();
    return parsed;
  }
  BinaryReader mr(*merges);
  uint64_t n = merge_count;
  if ((version < 4 && (!mr.Varint(&n) || n != merge_count)) || n > merges->size()) return malformed();
  const size_t first = mr.offset();
  parsed.merges.reserve(n);
  parsed.counts.reserve(version >= 3 ? n : 0);
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view left, right;
    uint64_t count = 0;
    if (!mr.Bytes(&left) || !mr.Bytes(&right) || left.empty() || right.empty() ||
        (version >= 3 && !mr.Varint(&count))) {
      return malformed();
    }
    parsed.merges.emplace_back(left, right);
    if (version >= 3) parsed.counts.push_back(count);
  }
  if (!mr.done()) return malformed();
  if (version >= 3) {  // stored as the writer appends them: keep the bytes after the count
    parsed.raw = *std::move(merges);
    parsed.raw.erase(0, first);
  } else {  // with counts of 0 (none were stored)
    parsed.raw = CheckpointWriter::SerializeMerges(parsed.merges, {});
  }
  return parsed;
}

// The decompressed word table into checkpoint.words or word_list.
absl::Status DecodeWordTable(std::string words, const Layout& layout, WordTableAs as,
                             std::string_view source, Checkpoint& checkpoint) {
  // The bytes stay where the list's views point (the string behind the pointer never moves).
  auto table = std::make_shared<const std::string>(std::move(words));
  // The table's hash (FNV-1a of its bytes) is its identity: the writer computes it, and the
  // header of a table file must repeat the checkpoint's (TableFrame). It is not recomputed
  // here: the bytes are already checked twice, by the CRC-32 of the compressed frame and by
  // the zstd frame's own checksum of its content (XXH64, verified while decompressing), and
  // FNV-1a is one serial multiply per byte (poetry's 66 MB table: 0.09 s, the longest step
  // of reading a checkpoint).
  std::vector<std::pair<std::string_view, uint64_t>> entries;
  uint64_t n = 0, total = 0;
  bool well_formed = [&] {
    BinaryReader wr(*table);
    if (!wr.Varint(&n) || n != layout.unique_words || n > table->size()) return false;
    entries.reserve(n);
    AdviseHugePages(entries.data(), entries.capacity() * sizeof(entries[0]));
    entries.resize(n);
    for (uint64_t i = 0; i < n; ++i) {
      if (!wr.Bytes(&entries[i].first) || !wr.Varint(&entries[i].second)) return false;
      total += entries[i].second;
    }
    return wr.done() && total == layout.total_words;
  }();
  if (!well_formed) return Corrupt(source, "the word table is malformed");
  if (as == WordTableAs::kList) {
    checkpoint.word_list = {std::move(table), std::move(entries)};
  } else {
    checkpoint.words.AddAll(entries);
    if (checkpoint.words.unique_words() != layout.unique_words) {
      return Corrupt(source, "the word table is malformed");  // a word listed twice
    }
  }
  checkpoint.unique_words = layout.unique_words;
  checkpoint.total_words = layout.total_words;
  return absl::OkStatus();
}

// A table kept in a file of its own: its bytes, checked against the header (not its CRC).
absl::StatusOr<std::string_view> ReadTableFile(const TableFileReader& read_table_file,
                                               const Layout& layout, std::string_view source,
                                               SharedBytes& table_data, Checkpoint& checkpoint) {
  if (read_table_file == nullptr) {
    return Corrupt(source, StrCat("its word table is in the file ", layout.table_name,
                                  ", which was not given"));
  }
  absl::StatusOr<SharedBytes> read = read_table_file(std::string(layout.table_name));
  if (!read.ok()) {
    return absl::Status(read.status().code(),
                        StrCat(source, ": cannot read its word table (checkpoints are two files, "
                                       "CKPT and CKPT.words; keep them together): ",
                               Message(read.status())));
  }
  table_data = *std::move(read);
  checkpoint.words_file_size = table_data.size();
  return TableFrame(table_data, layout.table_name, source, checkpoint.word_table_hash,
                    layout.words_frame_size, layout.table_crc);
}

}  // namespace

absl::StatusOr<Checkpoint> ParseCheckpoint(std::string_view data, std::string_view source,
                                           const TableFileReader& read_table_file,
                                           WordTableAs as) {
  TM_ASSIGN_OR_RETURN(Envelope envelope, ParseEnvelope(data, source));
  Checkpoint checkpoint;
  checkpoint.file_size = data.size();
  checkpoint.format_version = envelope.version;
  Layout layout;
  TM_RETURN_IF_ERROR(envelope.version >= 5
                         ? ParseTaggedHeader(envelope.header, source, checkpoint, layout)
                         : ParseLegacyHeader(envelope.header, envelope.version, source,
                                             checkpoint, layout));
  TM_ASSIGN_OR_RETURN(Body body, ParseBody(data, envelope.body, layout, source));
  SharedBytes table_data;  // the table file's bytes, when the table is not inline
  std::string_view words_frame = body.words_frame;
  if (!layout.inline_table) {
    TM_ASSIGN_OR_RETURN(words_frame,
                        ReadTableFile(read_table_file, layout, source, table_data, checkpoint));
  }
  // While the word table is decompressed, a second thread checks the table file's frame
  // against its CRC (poetry's 49 MB frame: 0.05 s), then decompresses and parses the merges
  // (linux_c_100m at 30k merges: 3.4 ms of the 9 ms of reading). The CRC's verdict comes
  // first, then the table's errors, then the merges'.
  uint32_t frame_crc = layout.table_crc;
  std::latch crc_checked(1);
  ParsedMerges parsed;
  std::jthread helper([&] {
    if (!layout.inline_table) frame_crc = Crc32(words_frame);
    crc_checked.count_down();
    parsed = DecodeMerges(body.merges_frame, layout.merge_count, envelope.version, source);
  });
  absl::StatusOr<std::string> decompressed = Decompress(words_frame, source, "word table");
  crc_checked.wait();
  if (frame_crc != layout.table_crc) return NotTheTable(layout.table_name, source, kTableDamaged);
  TM_ASSIGN_OR_RETURN(std::string words, std::move(decompressed));
  if (layout.inline_table) {
    checkpoint.words_frame = SharedBytes(std::string(words_frame));
  } else {  // the frame, in place in the table file's bytes (no copy of tens of MB)
    const size_t at = static_cast<size_t>(words_frame.data() - table_data.view().data());
    checkpoint.words_frame = table_data.Sub(at, words_frame.size());
    checkpoint.words_frame_crc = layout.table_crc;  // checked above
  }
  TM_RETURN_IF_ERROR(DecodeWordTable(std::move(words), layout, as, source, checkpoint));
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

}  // namespace tokenmill
