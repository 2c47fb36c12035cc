#include "checkpoint/frames.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <new>

#include "common/binary_io.h"
#include "common/huge_pages.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace tokenmill::checkpoint_internal {

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

}  // namespace tokenmill::checkpoint_internal
