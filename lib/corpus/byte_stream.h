// ByteStream: the bytes of one input, decompressed on the fly (zstd frames, gzip members, or
// plain), read front to back by one thread. Memory is a fixed buffer per stream.
//
// Contract: Read() returns up to `capacity` bytes (0 only at the end of the input). A stream
// that ends inside a zstd frame or gzip member, or holds corrupt data, fails with a message
// naming the file, the compressed byte offset reached and the decompressed bytes produced.
// Every byte that decompresses before the fault is returned first, and the error comes on the
// next call, so what a damaged input yields does not depend on the read sizes.
// Stdin's compression is recognised from its first bytes.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "corpus/input_files.h"

namespace tokenmill {

class ByteStream {
 public:
  static absl::StatusOr<std::unique_ptr<ByteStream>> Open(const InputFile& input);
  virtual ~ByteStream() = default;

  virtual absl::StatusOr<size_t> Read(char* out, size_t capacity) = 0;

  // Bytes consumed from the file itself so far (compressed bytes for compressed inputs).
  virtual uint64_t disk_bytes() const = 0;
};

}  // namespace tokenmill
