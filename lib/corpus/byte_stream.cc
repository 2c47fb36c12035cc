#include "corpus/byte_stream.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <isa-l/igzip_lib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common/status_macros.h"
#include "common/stop_request.h"
#include "common/strings.h"

namespace tokenmill {
namespace {

constexpr size_t kDiskBuffer = size_t{1} << 20;

// Raw bytes of a file or stdin, with the first bytes peeked for magic detection.
class FdSource {
 public:
  FdSource(std::string path, int fd) : path_(std::move(path)), fd_(fd) {
    struct stat st;
    may_wait_ = ::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode);
  }
  ~FdSource() {
    if (fd_ >= 0 && fd_ != STDIN_FILENO) ::close(fd_);
  }
  FdSource(const FdSource&) = delete;
  FdSource& operator=(const FdSource&) = delete;

  const std::string& path() const { return path_; }
  uint64_t consumed() const { return consumed_; }

  // Reads up to `capacity` bytes; 0 at end of file.
  absl::StatusOr<size_t> Read(char* out, size_t capacity) {
    if (!peeked_.empty()) {
      size_t n = std::min(capacity, peeked_.size());
      std::memcpy(out, peeked_.data(), n);
      peeked_.erase(0, n);
      consumed_ += n;
      return n;
    }
    while (true) {
      if (absl::Status ready = WaitReadable(); !ready.ok()) return ready;
      ssize_t n = ::read(fd_, out, capacity);
      if (n >= 0) {
        consumed_ += static_cast<uint64_t>(n);
        return static_cast<size_t>(n);
      }
      if (errno != EINTR) {
        return absl::FailedPreconditionError(StrCat("cannot read '", path_, "' at byte ",
                                                     consumed_, ": ", std::strerror(errno)));
      }
    }
  }

  // Reads up to 4 bytes ahead without consuming them.
  absl::StatusOr<std::string_view> Peek() {
    char buffer[4];
    while (peeked_.size() < 4) {
      if (absl::Status ready = WaitReadable(); !ready.ok()) return ready;
      ssize_t n = ::read(fd_, buffer, 4 - peeked_.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        return absl::FailedPreconditionError(
            StrCat("cannot read '", path_, "': ", std::strerror(errno)));
      }
      if (n == 0) break;
      peeked_.append(buffer, static_cast<size_t>(n));
    }
    return std::string_view(peeked_);
  }

 private:
  // A pipe or a terminal (stdin) may have no bytes for as long as its writer likes, and a signal
  // need not interrupt the thread blocked in read() (any thread may take it): such a source is
  // read only once poll() says it has bytes (or has ended), looking for a stop request
  // (common/stop_request.h) every 100 ms meanwhile. After a stop request, bytes that keep
  // coming are still read (a count of a flowing pipe finishes, as one of a file does); a wait
  // of a second without any ends the read with Cancelled. Regular files are read at once.
  absl::Status WaitReadable() {
    if (!may_wait_) return absl::OkStatus();
    pollfd fds{fd_, POLLIN, 0};
    int idle_after_stop_ms = 0;
    while (true) {
      const bool stopping = StopRequested();
      if (stopping && idle_after_stop_ms >= 1000) {
        return absl::CancelledError(StrCat("stopped while waiting for input on ",
                                           path_ == "-" ? std::string("stdin") : StrCat("'", path_, "'")));
      }
      const int ready = ::poll(&fds, 1, 100);
      if (ready > 0) return absl::OkStatus();  // bytes, the end, or an error read() reports
      if (ready < 0 && errno != EINTR) return absl::OkStatus();  // read() says what went wrong
      if (stopping) idle_after_stop_ms += 100;  // (an EINTR counts as a wait too)
    }
  }

  std::string path_;
  int fd_;
  bool may_wait_ = false;
  std::string peeked_;
  uint64_t consumed_ = 0;
};

class PlainStream : public ByteStream {
 public:
  explicit PlainStream(std::unique_ptr<FdSource> source) : source_(std::move(source)) {}
  absl::StatusOr<size_t> Read(char* out, size_t capacity) override { return source_->Read(out, capacity); }
  uint64_t disk_bytes() const override { return source_->consumed(); }

 private:
  std::unique_ptr<FdSource> source_;
};

// What the zstd and gzip streams share: the compressed input, and the rule that the bytes
// decoded before a fault are returned first and the fault (pending_) on the next Read.
class DecodingStream : public ByteStream {
 protected:
  explicit DecodingStream(std::unique_ptr<FdSource> source)
      : source_(std::move(source)), in_buffer_(kDiskBuffer) {}

  // Once the decoder can go no further with the input it has: reads the next compressed bytes
  // into in_buffer_ and returns how many, 0 when the file has just ended (call the decoder once
  // more: it may still hold output). nullopt to stop: at the end, with an error in pending_ if
  // the data ends inside an open `unit` of `format`, or after a read error (in pending_).
  std::optional<size_t> NextInput(bool open, std::string_view format, std::string_view unit) {
    if (source_ended_) {
      if (open) {
        pending_ = absl::DataLossError(StrCat(
            "'", source_->path(), "' is truncated: the ", format, " data ends at compressed byte ",
            source_->consumed(), " (", produced_, " bytes decompressed) inside a ", unit));
      }
      return std::nullopt;
    }
    absl::StatusOr<size_t> n = source_->Read(in_buffer_.data(), in_buffer_.size());
    if (!n.ok()) {
      pending_ = n.status();
      return std::nullopt;
    }
    if (*n == 0) {
      source_ended_ = true;
    } else {
      input_base_ = source_->consumed() - *n;
    }
    return *n;
  }
  // The result of a Read that produced `n` bytes.
  absl::StatusOr<size_t> Yield(size_t n) {
    produced_ += n;
    if (n == 0 && !pending_.ok()) return pending_;
    return n;
  }

  std::unique_ptr<FdSource> source_;
  std::vector<char> in_buffer_;
  uint64_t input_base_ = 0;  // file offset of in_buffer_'s first byte
  uint64_t produced_ = 0;    // bytes returned so far
  bool source_ended_ = false;
  absl::Status pending_;  // a fault found after some bytes were decoded
};

class ZstdStream : public DecodingStream {
 public:
  explicit ZstdStream(std::unique_ptr<FdSource> source)
      : DecodingStream(std::move(source)), dctx_(ZSTD_createDCtx()) {}
  ~ZstdStream() override { ZSTD_freeDCtx(dctx_); }

  absl::StatusOr<size_t> Read(char* out, size_t capacity) override {
    if (!pending_.ok()) return pending_;
    ZSTD_outBuffer output{out, capacity, 0};
    // A failing ZSTD_decompressStream call reports none of the bytes it wrote, so each call is
    // kept to at most one block: it is fed only what the decoder asks for next (the rest of a
    // block and the next block's header), and nothing while decoded bytes may still wait to
    // be flushed. Then the bytes yielded before a fault do not depend on the read sizes.
    while (true) {
      size_t feed = flush_pending_ ? 0 : std::min(hint_, input_.size - input_.pos);
      ZSTD_inBuffer slice{input_.src, input_.pos + feed, input_.pos};
      size_t output_before = output.pos;
      size_t rc = ZSTD_decompressStream(dctx_, &output, &slice);
      if (ZSTD_isError(rc)) {
        pending_ = absl::DataLossError(StrCat("'", source_->path(), "' holds corrupt zstd data near compressed byte ",
                                              input_base_ + input_.pos, " (", produced_ + output.pos,
                                              " bytes decompressed): ", ZSTD_getErrorName(rc)));
        break;
      }
      bool consumed = slice.pos != input_.pos;
      input_.pos = slice.pos;
      // A call that neither consumed nor produced says nothing about the frame.
      if (consumed || output.pos != output_before) {
        frame_open_ = rc != 0;
        hint_ = rc != 0 ? rc : 1;  // a new frame: its header's size is known after a byte
      }
      bool was_flush = flush_pending_;
      flush_pending_ = output.pos == output.size;
      if (output.pos != 0) break;
      if (was_flush || input_.pos < input_.size) continue;
      std::optional<size_t> n = NextInput(frame_open_, "zstd", "frame");
      if (!n.has_value()) break;
      if (*n > 0) input_ = ZSTD_inBuffer{in_buffer_.data(), *n, 0};
    }
    return Yield(output.pos);
  }
  uint64_t disk_bytes() const override { return input_base_ + input_.pos; }

 private:
  ZSTD_DCtx* dctx_;
  ZSTD_inBuffer input_{nullptr, 0, 0};
  bool frame_open_ = false;
  bool flush_pending_ = false;  // the last call filled the output: the decoder may hold more
  size_t hint_ = 1;             // input bytes the decoder wants next
};

// gzip through ISA-L's inflate (Debian's libisal) rather than zlib's: 88 MB of poetry in 8
// members took 0.17 s of `igzip -d` against 0.56 s of `gzip -d` (zlib through Python: 190-220
// MB/s), and `tokenmill encode` of the 8 .gz files with cl100k_base went from 800 to 665 ms at
// 1 thread and 515 to 429 ms at 2 (medians of 9, alternating; bench/RESULTS.md). Each member's
// header is read by isal_read_gzip_header (below), its data CRC and length checked (ISAL_GZIP).
class GzipStream : public DecodingStream {
 public:
  explicit GzipStream(std::unique_ptr<FdSource> source) : DecodingStream(std::move(source)) {
    std::memset(&state_, 0, sizeof(state_));
    std::memset(&header_, 0, sizeof(header_));
    StartMember();
  }
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;

  absl::StatusOr<size_t> Read(char* out, size_t capacity) override {
    if (!pending_.ok()) return pending_;
    state_.next_out = reinterpret_cast<uint8_t*>(out);
    state_.avail_out = static_cast<uint32_t>(std::min<size_t>(capacity, 1u << 30));
    const size_t start_out = state_.avail_out;
    // As for zstd: inflate what is held before reading more, so the bytes yielded before an
    // error do not depend on the read sizes.
    while (true) {
      if (member_open_) {
        // The header by isal_read_gzip_header into a header kept between calls, not by
        // isal_inflate: that one parses into a header of its own each call, so a header split
        // over two reads (a pipe's first read is 4 bytes; a member's end falls anywhere) lost
        // its flags and its running CRC (ISA-L 2.30 left the flags uninitialized: intel/isa-l
        // 0e6bc4a; #224 says to give it a whole header at a time).
        int rc = ISAL_DECOMP_OK;
        if (!state_.wrapper_flag) {
          rc = isal_read_gzip_header(&state_, &header_);
          if (rc > 0) rc = ISAL_DECOMP_OK;  // more bytes needed: all taken
          if (rc == ISAL_DECOMP_OK && state_.wrapper_flag && (header_.flags & 0xe0) != 0) {
            rc = kReservedFlags;  // refused, as zlib and gzip refuse them
          }
        }
        if (rc == ISAL_DECOMP_OK && state_.wrapper_flag) rc = isal_inflate(&state_);
        if (rc != ISAL_DECOMP_OK) {
          pending_ = Corrupt(start_out, InflateError(rc));
          break;
        }
        if (state_.block_state == ISAL_BLOCK_FINISH) {
          member_open_ = false;
          member_ended_ = true;
        }
        if (state_.avail_out != start_out) break;
        if (state_.avail_in != 0) continue;
      } else if (state_.avail_in != 0) {
        // Zero bytes after a member are padding (a tape's or a block device's): passed over, as
        // Python's gzip module does (gzip -d does so at the end of a file, and stops at a member
        // after zeros with "trailing garbage ignored").
        while (member_ended_ && state_.avail_in != 0 && *state_.next_in == 0) {
          ++state_.next_in;
          --state_.avail_in;
        }
        if (state_.avail_in == 0) continue;  // (reads on: what follows the zeros decides)
        // A new member starts (gzip files may be concatenations of members). Bytes that are
        // not one (no magic) are refused here: ISA-L would wait for a whole header, and call
        // a few bytes of garbage at the end a truncated member.
        if (state_.next_in[0] != 0x1f || (state_.avail_in > 1 && state_.next_in[1] != 0x8b)) {
          pending_ = Corrupt(start_out, "incorrect header check");
          break;
        }
        StartMember();
        member_open_ = true;
        continue;
      }
      std::optional<size_t> n = NextInput(member_open_, "gzip", "member");
      if (!n.has_value()) break;
      if (*n > 0) {
        state_.next_in = reinterpret_cast<uint8_t*>(in_buffer_.data());
        state_.avail_in = static_cast<uint32_t>(*n);
        in_size_ = *n;
      }
    }
    return Yield(start_out - state_.avail_out);
  }
  uint64_t disk_bytes() const override { return input_base_ + (in_size_ - state_.avail_in); }

 private:
  // A fresh inflate for the next member, keeping the buffers (init resets them).
  void StartMember() {
    uint8_t* next_in = state_.next_in;
    const uint32_t avail_in = state_.avail_in;
    uint8_t* next_out = state_.next_out;
    const uint32_t avail_out = state_.avail_out;
    isal_inflate_init(&state_);
    state_.crc_flag = ISAL_GZIP;  // with wrapper_flag set by the header: the trailer checked
    std::memset(&header_, 0, sizeof(header_));
    isal_gzip_header_init(&header_);  // no buffers: name, comment and extra are passed over
    state_.next_in = next_in;
    state_.avail_in = avail_in;
    state_.next_out = next_out;
    state_.avail_out = avail_out;
  }
  // The fault found where the input stands, `start_out` being the output room this Read began
  // with (what it decoded before the fault counts).
  absl::Status Corrupt(size_t start_out, std::string_view what) const {
    return absl::DataLossError(StrCat("'", source_->path(), "' holds corrupt gzip data near compressed byte ",
                                      disk_bytes(), " (", produced_ + (start_out - state_.avail_out),
                                      " bytes decompressed): ", what));
  }
  // zlib's words for what ISA-L found (the messages users search for).
  static std::string_view InflateError(int rc) {
    switch (rc) {
      case ISAL_INVALID_BLOCK: return "invalid block type or lengths";
      case ISAL_INVALID_SYMBOL: return "invalid code";
      case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
      case ISAL_INVALID_WRAPPER: return "incorrect header check";
      case ISAL_UNSUPPORTED_METHOD: return "unknown compression method";
      case ISAL_INCORRECT_CHECKSUM: return "incorrect data check";
      case kReservedFlags: return "unknown header flags set";
      default: return "inflate failed";
    }
  }

  static constexpr int kReservedFlags = -100;  // (not one of ISA-L's codes)
  inflate_state state_;
  isal_gzip_header header_;
  size_t in_size_ = 0;
  bool member_open_ = false;
  bool member_ended_ = false;  // a member has ended: zeros may follow
};

}  // namespace

absl::StatusOr<std::unique_ptr<ByteStream>> ByteStream::Open(const InputFile& input) {
  // A named pipe's open() waits for its writer, out of reach of a stop request: every path is
  // opened without waiting (which changes nothing for a regular file), then read in blocking
  // mode, a pipe once poll() says so (FdSource::WaitReadable; Linux reports no hang-up before a
  // writer has come).
  int fd = input.is_stdin() ? STDIN_FILENO : ::open(input.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        StrCat("cannot open '", input.path, "': ", std::strerror(errno)));
  }
  if (!input.is_stdin()) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
      const int err = errno;
      ::close(fd);
      return absl::FailedPreconditionError(StrCat("cannot read '", input.path, "': ", std::strerror(err)));
    }
  }
  auto source = std::make_unique<FdSource>(input.path, fd);
  Compression compression = input.compression;
  if (compression == Compression::kDetectWhenRead) {
    absl::StatusOr<std::string_view> magic = source->Peek();
    if (!magic.ok()) return magic.status();
    // (A named pipe called x.gz is held to its name, as a regular file x.gz is.)
    TM_ASSIGN_OR_RETURN(compression,
                        CompressionOfInput(input.path, input.named,
                                           reinterpret_cast<const unsigned char*>(magic->data()),
                                           magic->size()));
  }
  switch (compression) {
    case Compression::kZstd: return std::unique_ptr<ByteStream>(new ZstdStream(std::move(source)));
    case Compression::kGzip: return std::unique_ptr<ByteStream>(new GzipStream(std::move(source)));
    default: return std::unique_ptr<ByteStream>(new PlainStream(std::move(source)));
  }
}

}  // namespace tokenmill
