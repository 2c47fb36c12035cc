#include "count/counts_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_decompressBound
#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/binary_io.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "oneapi/tbb/parallel_for.h"
#include "pretokenize/pretokenizer_config_codec.h"
#include "pretokenize/presets.h"

namespace tokenmill {
namespace {

constexpr char kMagic[8] = {'T', 'M', 'C', 'O', 'U', 'N', 'T', 'S'};
constexpr size_t kPrefixBytes = sizeof(kMagic) + 4 + 4;  // magic, version, header size
constexpr int kZstdLevel = 3;

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void PutString(std::string& out, std::string_view s) {
  PutU32(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

// Reads fields front to back; any read past the end marks the reader bad.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool ok() const { return ok_; }
  size_t position() const { return pos_; }
  bool done() const { return pos_ == data_.size(); }

  uint32_t U32() { return static_cast<uint32_t>(Fixed(4)); }
  uint64_t U64() { return Fixed(8); }
  std::string_view Bytes(size_t n) {
    if (!ok_ || data_.size() - pos_ < n) {
      ok_ = false;
      return {};
    }
    std::string_view s = data_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::string String() { return std::string(Bytes(U32())); }
  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (!ok_ || pos_ >= data_.size()) break;
      auto byte = static_cast<unsigned char>(data_[pos_++]);
      v |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) return v;
    }
    ok_ = false;
    return 0;
  }

 private:
  uint64_t Fixed(int n) {
    std::string_view b = Bytes(static_cast<size_t>(n));
    uint64_t v = 0;
    for (int i = 0; i < static_cast<int>(b.size()); ++i) {
      v |= static_cast<uint64_t>(static_cast<unsigned char>(b[static_cast<size_t>(i)])) << (8 * i);
    }
    return v;
  }
  std::string_view data_;
  size_t pos_ = 0;
  bool ok_ = true;
};

std::string EncodeHeader(const CountsFileHeader& h) {
  std::string out;
  PutString(out, h.tool);
  PutString(out, h.pretokenizer.preset);
  PutString(out, h.pattern);
  PutU32(out, static_cast<uint32_t>(h.special_tokens.size()));
  for (const std::string& s : h.special_tokens) PutString(out, s);
  PutString(out, h.doc_mode);
  PutString(out, h.text_field);
  const CountTotals& t = h.totals;
  for (uint64_t v : {t.files, t.documents, t.bytes, t.words, t.unique_words, t.invalid_utf8,
                     t.nul_bytes, t.skipped_records}) {
    PutU64(out, v);
  }
  // Version 2: the pre-tokenizer's settings past preset and pattern, when any is set (version 3:
  // with tagged fields among them).
  if (!h.pretokenizer.SplitOnly()) PutString(out, EncodeTextSettings(h.pretokenizer));
  return out;
}

absl::Status Corrupt(const std::string& path, std::string_view what) {
  return absl::DataLossError(StrCat("'", path, "' is not a valid word-count file: ", what));
}

absl::StatusOr<CountsFileHeader> DecodeHeader(const std::string& path, std::string_view prefix,
                                              size_t* header_end) {
  Reader r(prefix);
  std::string_view magic = r.Bytes(sizeof(kMagic));
  if (!r.ok() || magic != std::string_view(kMagic, sizeof(kMagic))) {
    return absl::InvalidArgumentError(StrCat("'", path, "' is not a tokenmill word-count file (no TMCOUNTS magic)"));
  }
  CountsFileHeader h;
  h.version = r.U32();
  if (r.ok() && h.version > kCountsFormatVersion) {
    return absl::InvalidArgumentError(StrCat("'", path, "' has word-count format version ", h.version,
                                             "; this tokenmill reads up to version ",
                                             kCountsFormatVersion));
  }
  uint32_t header_size = r.U32();
  std::string_view header = r.Bytes(header_size);
  if (!r.ok()) return Corrupt(path, "truncated header");
  *header_end = r.position();
  Reader f(header);
  h.tool = f.String();
  h.pretokenizer.preset = f.String();
  h.pattern = f.String();
  if (h.pretokenizer.preset == "custom") h.pretokenizer.pattern = h.pattern;
  uint32_t specials = f.U32();
  for (uint32_t i = 0; i < specials && f.ok(); ++i) h.special_tokens.push_back(f.String());
  h.doc_mode = f.String();
  h.text_field = f.String();
  CountTotals& t = h.totals;
  for (uint64_t* v : {&t.files, &t.documents, &t.bytes, &t.words, &t.unique_words,
                      &t.invalid_utf8, &t.nul_bytes, &t.skipped_records}) {
    *v = f.U64();
  }
  if (f.ok() && !f.done() && h.version >= 2) {
    if (!DecodeTextSettings(f.String(), &h.pretokenizer)) return Corrupt(path, "malformed settings");
  }
  if (!f.ok() || !f.done()) return Corrupt(path, "malformed header");
  return h;
}

std::string EscapeWord(std::string_view word) {
  std::string out;
  for (unsigned char c : word) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c == '\\') out += "\\\\";
    else if (c < 0x20 || c == 0x7F) out += absl::StrFormat("\\x%02x", c);
    else out.push_back(static_cast<char>(c));
  }
  return out;
}

}  // namespace

bool IsCountsFile(const std::string& path) {
  if (path == "-") return false;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char magic[sizeof(kMagic)];
  ssize_t n = ::pread(fd, magic, sizeof(magic), 0);
  ::close(fd);
  return n == static_cast<ssize_t>(sizeof(magic)) && std::memcmp(magic, kMagic, sizeof(magic)) == 0;
}

namespace {

// The body: [varint size][bytes][varint count] per word, in byte order, written in parallel
// into a buffer of its exact size (appending grew poetry's 66 MB by doubling: 0.26 s). The
// sorted list is freed on return, before compression needs its buffers.
std::string SerializeBody(const WordCounts& words) {
  const std::vector<std::pair<std::string_view, uint64_t>> sorted = words.Sorted();
  constexpr size_t kChunk = size_t{1} << 16;
  const size_t chunks = (sorted.size() + kChunk - 1) / kChunk;
  std::vector<size_t> chunk_at(chunks + 1, 0);
  tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
    size_t bytes = 0;
    for (size_t i = c * kChunk; i < std::min(sorted.size(), (c + 1) * kChunk); ++i) {
      bytes += VarintSize(sorted[i].first.size()) + sorted[i].first.size() +
               VarintSize(sorted[i].second);
    }
    chunk_at[c + 1] = bytes;
  });
  for (size_t c = 0; c < chunks; ++c) chunk_at[c + 1] += chunk_at[c];
  std::string body(chunk_at[chunks], '\0');
  tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
    char* out = body.data() + chunk_at[c];
    for (size_t i = c * kChunk; i < std::min(sorted.size(), (c + 1) * kChunk); ++i) {
      out = EncodeVarint(sorted[i].first.size(), out);
      std::memcpy(out, sorted[i].first.data(), sorted[i].first.size());
      out += sorted[i].first.size();
      out = EncodeVarint(sorted[i].second, out);
    }
  });
  return body;
}

}  // namespace

absl::Status WriteCountsFile(const std::string& path, CountsFileHeader header,
                             const WordCounts& words, int threads) {
  // Version 1 when nothing past preset and pattern is set, 2 when no tagged text setting is:
  // older tokenmills read those (and would ignore tagged settings, so refuse version 3).
  header.version = header.pretokenizer.SplitOnly()                  ? 1
                   : !HasTaggedTextSettings(header.pretokenizer) ? 2
                                                                    : kCountsFormatVersion;
  header.totals.words = words.total_words();
  header.totals.unique_words = words.unique_words();
  const std::string body = SerializeBody(words);
  // Streaming compression with at least one worker: its output is the same whatever the
  // number of workers (one-shot ZSTD_compress2 with workers need not be; zstd issue 2327).
  std::string compressed(ZSTD_compressBound(body.size()), '\0');
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, kZstdLevel);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_nbWorkers, std::max(1, threads));
  ZSTD_CCtx_setPledgedSrcSize(cctx, body.size());  // the frame states its size (readers check it)
  ZSTD_inBuffer in{body.data(), body.size(), 0};
  ZSTD_outBuffer out{compressed.data(), compressed.size(), 0};
  size_t n = ZSTD_compressStream2(cctx, &out, &in, ZSTD_e_continue);
  while (!ZSTD_isError(n)) {
    n = ZSTD_compressStream2(cctx, &out, &in, ZSTD_e_end);
    if (n == 0) break;
  }
  ZSTD_freeCCtx(cctx);
  if (ZSTD_isError(n)) {
    return absl::InternalError(StrCat("zstd compression failed: ", ZSTD_getErrorName(n)));
  }
  compressed.resize(out.pos);

  std::string file(kMagic, sizeof(kMagic));
  PutU32(file, header.version);
  std::string encoded = EncodeHeader(header);
  PutU32(file, static_cast<uint32_t>(encoded.size()));
  file += encoded;
  PutU64(file, body.size());
  PutU64(file, compressed.size());
  file += compressed;
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32_z(crc, reinterpret_cast<const Bytef*>(file.data()), file.size());
  PutU32(file, static_cast<uint32_t>(crc));
  return WriteFileAtomically(path, file);
}

absl::StatusOr<CountsFileHeader> ReadCountsFileHeader(const std::string& path) {
  TM_RETURN_IF_ERROR(CheckReadableFile(path));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::FailedPreconditionError(StrCat("cannot open '", path, "'"));
  std::string prefix(kPrefixBytes, '\0');
  ssize_t n = ::pread(fd, prefix.data(), prefix.size(), 0);
  if (n < static_cast<ssize_t>(kPrefixBytes)) {
    ::close(fd);
    prefix.resize(n < 0 ? 0 : static_cast<size_t>(n));
    size_t ignored;
    absl::StatusOr<CountsFileHeader> h = DecodeHeader(path, prefix, &ignored);
    return h.ok() ? Corrupt(path, "truncated header") : h.status();
  }
  uint32_t header_size = 0;
  for (int i = 0; i < 4; ++i) {
    header_size |= static_cast<uint32_t>(static_cast<unsigned char>(prefix[12 + i])) << (8 * i);
  }
  // A corrupt size must not make us allocate up to 4 GiB: the header lies inside the file.
  struct stat st;
  if (::fstat(fd, &st) != 0 || kPrefixBytes + uint64_t{header_size} > static_cast<uint64_t>(st.st_size)) {
    ::close(fd);
    size_t ignored;
    absl::StatusOr<CountsFileHeader> h = DecodeHeader(path, prefix, &ignored);
    return h.ok() ? Corrupt(path, "truncated header") : h.status();
  }
  prefix.resize(kPrefixBytes + header_size);
  n = ::pread(fd, prefix.data() + kPrefixBytes, header_size, kPrefixBytes);
  ::close(fd);
  prefix.resize(kPrefixBytes + static_cast<size_t>(std::max<ssize_t>(n, 0)));
  size_t header_end;
  return DecodeHeader(path, prefix, &header_end);
}

absl::StatusOr<CountsFileHeader> ReadCountsFile(const std::string& path, WordCounts* words) {
  TM_ASSIGN_OR_RETURN(std::string file, ReadFile(path));
  size_t header_end = 0;
  TM_ASSIGN_OR_RETURN(CountsFileHeader header, DecodeHeader(path, file, &header_end));
  if (file.size() < header_end + 4) return Corrupt(path, "truncated (no checksum)");
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32_z(crc, reinterpret_cast<const Bytef*>(file.data()), file.size() - 4);
  Reader trailer(std::string_view(file).substr(file.size() - 4));
  if (trailer.U32() != static_cast<uint32_t>(crc)) {
    return Corrupt(path, "checksum mismatch (truncated or corrupted)");
  }
  Reader r(std::string_view(file).substr(header_end, file.size() - 4 - header_end));
  uint64_t raw_size = r.U64();
  uint64_t compressed_size = r.U64();
  std::string_view compressed = r.Bytes(compressed_size);
  if (!r.ok() || !r.done()) return Corrupt(path, "body size does not match the file size");
  // The sizes are checked against what the zstd frame can hold before any allocation, so a
  // corrupt size cannot make us allocate more than the frame would decompress to.
  unsigned long long bound = ZSTD_decompressBound(compressed.data(), compressed.size());
  if (bound == ZSTD_CONTENTSIZE_ERROR || raw_size > bound ||
      ZSTD_getFrameContentSize(compressed.data(), compressed.size()) != raw_size) {
    return Corrupt(path, "the body's size does not match its zstd frame");
  }
  std::string body(raw_size, '\0');
  size_t n = ZSTD_decompress(body.data(), body.size(), compressed.data(), compressed.size());
  if (ZSTD_isError(n) || n != raw_size) {
    return Corrupt(path, StrCat("the zstd body does not decompress: ",
                                ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong size"));
  }
  Reader entries(body);
  uint64_t unique = 0, total = 0;
  std::string_view previous;
  while (!entries.done()) {
    uint64_t size = entries.Varint();
    std::string_view word = entries.Bytes(size);
    uint64_t count = entries.Varint();
    if (!entries.ok()) return Corrupt(path, "truncated entry");
    if (unique > 0 && !(previous < word)) return Corrupt(path, "entries are not in byte order");
    if (word.empty() || count == 0) return Corrupt(path, "empty word or zero count");
    words->Add(word, count);
    previous = word;
    ++unique;
    total += count;
  }
  if (unique != header.totals.unique_words || total != header.totals.words) {
    return Corrupt(path, "the header's totals do not match its entries");
  }
  return header;
}

absl::Status DescribeCountsFile(const std::string& path, size_t top, std::string* out) {
  WordCounts words;
  TM_ASSIGN_OR_RETURN(CountsFileHeader h, ReadCountsFile(path, &words));
  const CountTotals& t = h.totals;
  StrAppend(out, "tokenmill word counts: ", path, "\n");
  StrAppend(out, "format version:          ", h.version, " (written by ", h.tool, ")\n");
  StrAppend(out, "pre-tokenizer:           ", h.pretokenizer.preset, "\n");
  StrAppend(out, "pattern:                 ", h.pattern, "\n");
  if (const std::string settings = DescribeTextSettings(h.pretokenizer); !settings.empty()) {
    StrAppend(out, "text settings:           ", settings, "\n");
  }
  std::vector<std::string> specials;
  for (const std::string& s : h.special_tokens) specials.push_back(EscapeWord(s));
  StrAppend(out, "special tokens:          ", specials.empty() ? "none" : absl::StrJoin(specials, " "), "\n");
  StrAppend(out, "document mode:           ", h.doc_mode, "\n");
  StrAppend(out, "JSON text field:         ", h.text_field, "\n");
  StrAppend(out, "input files:             ", t.files, "\n");
  StrAppend(out, "documents:               ", t.documents, "\n");
  StrAppend(out, "bytes:                   ", t.bytes, "\n");
  StrAppend(out, "words:                   ", t.words, "\n");
  StrAppend(out, "unique words:            ", t.unique_words, "\n");
  StrAppend(out, "invalid UTF-8 sequences: ", t.invalid_utf8, "\n");
  StrAppend(out, "NUL bytes:               ", t.nul_bytes, "\n");
  StrAppend(out, "skipped records:         ", t.skipped_records, "\n");
  auto sorted = words.Sorted();
  size_t shown = std::min(top, sorted.size());
  std::partial_sort(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(shown), sorted.end(),
                    [](const auto& a, const auto& b) {
                      return a.second != b.second ? a.second > b.second : a.first < b.first;
                    });
  StrAppend(out, "top ", shown, " words:\n");
  for (size_t i = 0; i < shown; ++i) {
    StrAppend(out, absl::StrFormat("%14u  ", sorted[i].second), "[", EscapeWord(sorted[i].first), "]\n");
  }
  return absl::OkStatus();
}

}  // namespace tokenmill
