// Fuzzes JSON-lines reading: the sharded batch reader (plain, zstd, gzip or zstd cut short,
// decompressed on the fly) and the simdjson record extraction, and on some inputs the whole
// counting path (CountCorpus --input-format=jsonl).
// Input: one mode byte (bit 0: skip bad records; bit 1: JSON pointer field "/meta/text"
// instead of "text"; bits 2-3: plain | zstd | gzip | zstd cut short; bits 4-7: shard and batch
// size, 15 also runs CountCorpus), then the file's (uncompressed) bytes.
// Properties: a result or an error, never a crash, and never a read past a record's padding
// (ASan); the batches concatenate to exactly the file's bytes and end at line ends
// (batch_reader.h); a compressed stream cut short is an error, never a shorter corpus, though
// the whole lines before the fault still come; CountCorpus errors name the file and its result
// (the first problem in the input, when there are several) does not depend on the shard size.
#include <zlib.h>
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "corpus/batch_reader.h"
#include "corpus/input_files.h"
#include "corpus/json_text.h"
#include "count/count_corpus.h"
#include "fuzz_util.h"

namespace tokenmill {
namespace {

std::string Zstd(std::string_view data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  size_t n = ZSTD_compress2(cctx, out.data(), out.size(), data.data(), data.size());
  ZSTD_freeCCtx(cctx);
  if (ZSTD_isError(n)) fuzz::Fail("zstd compression failed");
  out.resize(n);
  return out;
}

std::string Gzip(std::string_view data) {
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) fuzz::Fail("deflateInit2");
  std::string out(deflateBound(&z, data.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) fuzz::Fail("deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

bool SameResult(const absl::StatusOr<CorpusCounts>& a, const absl::StatusOr<CorpusCounts>& b) {
  if (a.ok() != b.ok()) return false;
  if (!a.ok()) {
    // How many bytes a truncated or corrupt stream had yielded depends on the read sizes (zstd
    // buffers partial blocks); the rest of the message must agree.
    auto stable = [](absl::string_view m) {
      size_t count = m.find(" bytes decompressed");
      return count == absl::string_view::npos ? m : m.substr(0, m.rfind('(', count));
    };
    return a.status().code() == b.status().code() &&
           stable(a.status().message()) == stable(b.status().message());
  }
  return a->words == b->words && a->Totals() == b->Totals() && a->first_skipped == b->first_skipped;
}

}  // namespace
}  // namespace tokenmill

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenmill;
  static fuzz::MemFile* file = new fuzz::MemFile;
  if (size == 0 || size > 4096) return 0;
  const uint8_t mode = data[0];
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string bytes;
  bool cut_short = false;
  switch ((mode >> 2) & 3) {
    case 0: bytes = std::string(text); break;
    case 1: bytes = Zstd(text); break;
    case 2: bytes = Gzip(text); break;
    case 3:
      bytes = Zstd(text);
      bytes.resize(bytes.size() / 2);
      cut_short = true;
      break;
  }
  const std::string& path = file->Set(bytes);
  // What the reader yields is `text`, unless a raw input begins like a gzip or zstd stream: the
  // reader goes by the magic bytes, not the name, and decompresses it (what it yields then is
  // no part of `text`, and the checks against `text` do not apply).
  const bool yields_text =
      ((mode >> 2) & 3) != 0 ||
      CompressionFromMagic(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()) ==
          Compression::kNone;
  // Few shards per input: each shard without a line end reads ahead 1 MiB (slow under ASan).
  const size_t step = 16 + (mode >> 4) * 256;

  // The reader and the extractor, on this thread.
  InputSelection selection;
  selection.format = "jsonl";
  absl::StatusOr<std::vector<InputFile>> inputs = ResolveInputs({path}, selection);
  if (!inputs.ok()) {
    // Bytes that begin like xz, bzip2 or lz4 data are refused, not read as text.
    if (!UnreadCompressionFromMagic(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()).empty()) return 0;
    fuzz::Fail("ResolveInputs fails on a readable file:", inputs.status().message());
  }
  BatchReaderOptions reader_options;
  reader_options.shard_bytes = step;
  reader_options.batch_bytes = step;
  reader_options.padding = kJsonPadding;
  BatchReader reader(*std::move(inputs), {CutRule(CutKind::kLine)}, reader_options);
  JsonTextExtractor extractor((mode & 2) != 0 ? "/meta/text" : "text");
  std::string joined;
  bool read_error = false;
  BatchReader::Ticket ticket;
  Batch batch;
  while (!read_error && reader.NextTicket(&ticket)) {
    absl::Status status = reader.Fill(ticket, &batch);
    if (!status.ok()) {
      if (status.message().find(path) == absl::string_view::npos) {
        fuzz::Fail("a read error does not name the file:", status.message());
      }
      read_error = true;
      // The whole lines read before the fault still come, and only whole lines.
      if (!batch.text().empty() && batch.text().back() != '\n') fuzz::Fail("a failed read yields part of a line");
    }
    if (!batch.text().empty() && batch.offset != joined.size()) fuzz::Fail("a batch does not start where the last ended");
    std::string_view batch_text = batch.text();
    if (!batch_text.empty() && batch.buffer.size() < batch.end + kJsonPadding) fuzz::Fail("a batch lacks its padding");
    joined.append(batch_text);
    for (size_t start = 0; start < batch_text.size();) {
      size_t newline = batch_text.find('\n', start);
      size_t end = newline == std::string_view::npos ? batch_text.size() : newline + 1;
      std::string_view record = batch_text.substr(start, end - start), document;
      JsonTextExtractor::Problem problem;
      std::string detail;
      if (!IsBlankLine(record) && !extractor.Extract(record, &document, &problem, &detail) &&
          (problem == JsonTextExtractor::Problem::kNone || detail.empty())) {
        fuzz::Fail("a failed extraction says nothing");
      }
      start = end;
    }
    if (yields_text && !batch_text.empty() && batch_text.back() != '\n' &&
        batch.offset + batch_text.size() != text.size()) {
      fuzz::Fail("a batch ends inside a line");
    }
  }
  if (cut_short && !read_error) fuzz::Fail("a truncated zstd stream was read without an error");
  if (yields_text && !read_error && joined != text) fuzz::Fail("the batches do not concatenate to the input");
  if (yields_text && read_error && text.substr(0, joined.size()) != joined) {
    fuzz::Fail("a failed read yields bytes the input lacks");
  }
  if ((mode >> 4) != 15) return 0;

  // The whole counting path, with one thread (thread hand-offs make it slow to fuzz).
  CountCorpusOptions options;
  options.inputs = {path};
  options.input_format = "jsonl";
  options.threads = 1;
  options.progress = ProgressFormat::kNone;
  options.skip_bad_records = (mode & 1) != 0;
  options.text_field = (mode & 2) != 0 ? "/meta/text" : "text";
  absl::StatusOr<CorpusCounts> whole = CountCorpus(options);
  if (!whole.ok() && whole.status().message().find(path) == absl::string_view::npos &&
      whole.status().message().find("the corpus is empty") == absl::string_view::npos) {
    fuzz::Fail("the error names neither the file nor an empty corpus:", whole.status().message());
  }
  if (cut_short && whole.ok()) fuzz::Fail("a truncated zstd stream was counted without an error");
  options.shard_bytes = 3;
  options.batch_bytes = 3;
  absl::StatusOr<CorpusCounts> sharded = CountCorpus(options);
  if (!SameResult(whole, sharded)) {
    std::string detail = whole.ok() ? "" : std::string(whole.status().message());
    detail += " vs ";
    detail += sharded.ok() ? "" : std::string(sharded.status().message());
    fuzz::Fail("the result depends on the shard size:", std::string_view(detail));
  }
  return 0;
}
