// The layout of checkpoint files, shared by the reader (reader.cc) and the writer (writer.cc),
// as leveldb's db/log_format.h is by its log reader and writer.
//
// A checkpoint that training writes is two files: CKPT (what was trained and how, the corpus
// fingerprint, the steps so far: small, rewritten at every checkpoint) and CKPT.words (the
// word-count table: tens of MB, written once per run, since it never changes during one).
// Rewriting the table every 1000 merges cost 1.8 s of system time on poetry (31 writes of 33 MB).
//
// CKPT (all integers little-endian):
//   "TMCKPT\r\n"                      8 magic bytes
//   fixed32 format version            kVersion; versions 1-4 are still read
//   fixed32 header size, header bytes (below)
//   fixed32 CRC-32 of everything above
//   words frame                       inline tables only. zstd (with its content checksum)
// (A round-based trainer's state, Unigram's pieces and scores, is the header's kTrainerState
// record; such checkpoints hold no merges.)
//   merges frames                     zstd frames (each with its content checksum) whose contents,
//                                     one after another, are the merges so far, each as (left
//                                     bytes, right bytes, its pair count when chosen or 0): a
//                                     run's writer compresses only the merges new since its last
//                                     checkpoint, as a frame of its own
//   fixed32 CRC-32 of the frame(s) above
// The header (version 5) is a sequence of records, each a varint tag (HeaderTag) and a value
// whose encoding the tag gives (varint, fixed32/64, or varint length + bytes). A reader fails
// on a tag it does not know (a newer writer's) and on a missing required one; a tag that is
// retired is never used again. The options are each options struct's fields as
// common/option_fields.h encodes them.
// Versions 1-4 had a fixed header instead: the train command's settings as (flag name, value)
// pairs, the corpus files, the counters and frame sizes, and (2-4) where the table is; version
// 2 added the table file, 3 the merge counts, 4 the merges in frames of their own.
//
// CKPT.words:
//   "TMWRDS\r\n"                      8 magic bytes
//   fixed32 format version (kTableVersion), fixed64 the table's hash (as in CKPT's header)
//   words frame                       zstd: the word-count table (a varint count, then each word
//                                     as length-prefixed bytes and its varint count)
//   fixed32 CRC-32 of the frame
// Nothing may follow. Readers check magic, version, every CRC, the frames' checksums, every
// length, and the word table's hash (which also tells whether CKPT.words belongs to CKPT).
#pragma once

#include <cstdint>
#include <string_view>

namespace tokenmill::checkpoint_format {

inline constexpr std::string_view kMagic = "TMCKPT\r\n";
inline constexpr std::string_view kTableMagic = "TMWRDS\r\n";
inline constexpr uint32_t kVersion = 5;
inline constexpr uint32_t kTableVersion = 1;

// The header's records (version 5). Required unless marked optional.
enum HeaderTag : uint32_t {
  kModelType = 1,        // varint: ModelType
  kTrainerOptions = 2,   // bytes: TrainerOptions' fields
  kCorpusOptions = 3,    // bytes: CountCorpusOptions' fields
  kRunOptions = 4,       // bytes: the training run's own fields (lib/driver)
  kCorpusFile = 5,       // optional, repeated: bytes path, varint size, fixed64 mtime in ns
  kDocuments = 6,        // varint
  kCorpusBytes = 7,      // varint
  kUniqueWords = 8,      // varint
  kTotalWords = 9,       // varint
  kWordTableHash = 10,   // fixed64: FNV-1a of the serialized table
  kMergeCount = 11,      // varint: the merges in the merges frames
  kFinished = 12,        // varint 0/1: training had stopped by itself
  kCreated = 13,         // fixed64: Unix seconds
  kWordsFrameSize = 14,  // varint: the table frame's size (inline or in the table file)
  kMergesFrameSize = 15, // varint: the merges frames' total size
  kTableFile = 16,       // optional: bytes name (no '/'), fixed32 CRC-32 of its frame; absent:
                         // the table is inline
  kTrainerState = 17,    // optional: bytes, a zstd frame of the state a round-based trainer
                         // (Unigram) reported after its last step (TrainEvent::state)
};

}  // namespace tokenmill::checkpoint_format
