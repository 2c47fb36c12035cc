// Token files: what data loaders read after a corpus is encoded (encode_corpus.h writes them,
// `tokenmill decode` and `inspect` read them).
//
// Formats (ids little-endian, documents one after another in input order):
//  - text: one line of space-separated decimal ids per document (`tokenmill encode`'s output);
//  - u16: raw uint16 ids (nanoGPT's train.bin); refused for a vocabulary over 65,536 ids;
//  - u32: raw uint32 ids;
//  - npy: a NumPy .npy file (format 1.0) holding one 1-D array: '<u2' when every id of the
//    vocabulary fits 16 bits, else '<u4'. Its header is written with room for any length
//    (128 bytes) and its shape filled in at the end.
// Index (`--index`, with u16 and u32): Megatron-LM's MMapIndexedDataset .idx layout, so that
// PATH.bin + PATH.idx load as Megatron's IndexedDataset(PATH): the 9 bytes "MMIDIDX\0\0",
// version uint64 1, dtype code uint8 (8: uint16, 4: int32 for u32 files), sequence count
// uint64 N, document count uint64 N + 1, then int32 sizes[N] (tokens per document),
// int64 pointers[N] (byte offset of each document in the token file) and int64
// doc_idx[N + 1] = 0, 1, ..., N (each document one sequence).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/file_util.h"
#include "model/model.h"

namespace tokenmill {

enum class TokenFileFormat { kText, kU16, kU32, kNpy };

// "text", "u16", "u32", "npy".
std::string_view TokenFileFormatName(TokenFileFormat format);
absl::StatusOr<TokenFileFormat> ParseTokenFileFormat(std::string_view name);

// Bytes per id in the file (text: 0).
size_t IdWidth(TokenFileFormat format, size_t id_bound);

// Checks that `format` can hold ids below `id_bound` (u16: at most 65,536 ids), naming the
// vocabulary's size; and that an index goes with u16 or u32.
absl::Status CheckTokenFileFormat(TokenFileFormat format, size_t id_bound, bool with_index);

// Appends ids as the format stores them (text: one document's line, with its '\n').
void AppendIdBytes(TokenFileFormat format, size_t id_bound, std::span<const TokenId> ids,
                   std::string& out);

// Writes a token file as a stream and publishes it whole (StreamingFile): npy's header first
// and its shape at Close().
class TokenFileWriter {
 public:
  static absl::StatusOr<TokenFileWriter> Create(const std::string& path, TokenFileFormat format,
                                                size_t id_bound);
  // Bytes from AppendIdBytes of `ids` ids.
  absl::Status Write(std::string_view bytes, uint64_t ids);
  // Close(): the npy header written, the file closed; Publish(): renamed over the path.
  absl::Status Close();
  absl::Status Publish() { return file_->Publish(); }
  uint64_t ids_written() const { return ids_; }

 private:
  std::unique_ptr<StreamingFile> file_;
  TokenFileFormat format_ = TokenFileFormat::kU32;
  size_t id_bound_ = 0;
  uint64_t ids_ = 0;
};

// The documents' token counts, written as a Megatron .idx to a temporary file by Close() and
// renamed over the path by Publish().
class MegatronIndexWriter {
 public:
  MegatronIndexWriter(std::string path, TokenFileFormat format, size_t id_bound)
      : path_(std::move(path)), width_(IdWidth(format, id_bound)) {}
  void AddDocument(uint64_t tokens) { sizes_.push_back(tokens); }
  absl::Status Close();
  absl::Status Publish();

 private:
  std::string path_;
  size_t width_;
  std::vector<uint64_t> sizes_;
  std::unique_ptr<StreamingFile> file_;
};

// A token file read back.
struct TokenFileContents {
  TokenFileFormat format = TokenFileFormat::kU32;
  std::vector<TokenId> ids;
  // text files: each line's end in `ids` (one document per line); else empty.
  std::vector<size_t> line_ends;
};
// Reads `path` in `format` (npy: its header must hold a 1-D '<u2' or '<u4' array; raw files
// a whole number of ids). Errors name the file and what is wrong. (MappedTokenFile for binary
// files that may be large.)
absl::StatusOr<TokenFileContents> ReadTokenFile(const std::string& path, TokenFileFormat format);
// A binary token file (u16, u32, npy) mapped rather than read: its ids are converted where they
// are needed, so that decode and inspect take little memory for a file of any size. Open()
// checks what ReadTokenFile checks.
class MappedTokenFile {
 public:
  static absl::StatusOr<MappedTokenFile> Open(const std::string& path, TokenFileFormat format);
  size_t size() const { return count_; }
  TokenId operator[](size_t i) const;
  // Appends ids [begin, end) to `out`.
  void AppendIds(size_t begin, size_t end, std::vector<TokenId>& out) const;

 private:
  SharedBytes bytes_;
  const char* ids_ = nullptr;  // the first id's bytes (after an npy header)
  size_t count_ = 0;
  size_t width_ = 4;
};

// Whether `file`, read as u16 ids, looks like a file of u32 ids: a binary token file says nothing
// of its ids' width but its name, and u32 ids read as u16 decode to other text without an error.
// The tell: every second value is then a u32 id's high half, at most `high_bound` ((ids - 1) >>
// 16 for a vocabulary of `ids`: 0 below 65,537). Looks at the file's first 65,536 values; false
// when it has fewer than 16 or an odd count.
bool LooksLikeU32ReadAsU16(const MappedTokenFile& file, TokenId high_bound);

// The format of a token file: npy by its magic, else by the extension (.u16, .u32, .txt) or
// `given`; an error when neither tells.
absl::StatusOr<TokenFileFormat> DetectTokenFileFormat(const std::string& path,
                                                      std::optional<TokenFileFormat> given);

// A Megatron .idx read back: each document's token count and byte offset.
struct MegatronIndex {
  uint8_t dtype_code = 0;
  std::vector<int32_t> sizes;
  std::vector<int64_t> pointers;
  std::vector<int64_t> doc_idx;
};
absl::StatusOr<MegatronIndex> ReadMegatronIndex(const std::string& path);

}  // namespace tokenmill
