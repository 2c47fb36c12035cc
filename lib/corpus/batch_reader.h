// BatchReader: the sharded parallel reader. It plans the work for a list of inputs and hands
// out batches of whole documents that many threads can process at once:
//  - an uncompressed file is cut into shards of `shard_bytes`; a shard owns the batch that
//    starts at the first cut (CutRule) at or after its start and ends at the first cut at or
//    after its end, so every byte lands in exactly one batch whatever the shard size;
//  - a compressed file (or stdin) is read front to back by whichever thread holds its ticket,
//    one at a time (a mutex per stream), each read yielding about `batch_bytes` that end at a
//    cut; the rest is carried to the next batch. In input order (encoding), a stream's tickets
//    are filled in the order they were handed out, and several streams are read at once: the
//    current input's and, ahead of it, later ones' (Ticket::ahead), whose output the caller
//    keeps aside until the inputs before them are done.
// Memory: one batch per ticket in flight, plus one carry and decompression buffers per open
// stream.
//
// Contract: NextTicket() is called by one thread at a time (a serial pipeline stage); Fill() is
// thread-safe. Concatenating the batches of an input in offset order gives its bytes exactly.
// Errors name the file and the offset.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "corpus/byte_stream.h"
#include "corpus/cut_rule.h"
#include "corpus/input_files.h"

namespace tokenmill {

struct BatchReaderOptions {
  size_t shard_bytes = size_t{4} << 20;  // uncompressed files are cut into shards this big
  size_t batch_bytes = size_t{2} << 20;  // a stream read yields about this much
  size_t padding = 0;                    // readable bytes kept after every batch's text
  size_t max_open_streams = 1;           // compressed inputs read at once (when there is other work)
  // No shard is more than 1/min_shards of the cut files' bytes from its start on (nor under
  // kMinShardBytes, unless it is a file's last): a corpus smaller than min_shards x
  // shard_bytes is cut finer, and the last shards of any shrink, so that threads do not idle
  // while one finishes a big shard (brown's 5 MB in 4 MB shards left one of two counting
  // threads idle for most of the count; with 1 MiB shards, one of two threads encoding
  // linux_docs was idle at the end for 2.3 ms on average, 0.7 ms with the last ones shrinking).
  // Counting and encoding ask for 4 per thread.
  size_t min_shards = 1;
  // Hand out the work in input order (encoding writes its output in ticket order; counting does
  // not care and reads streams beside the shards): every shard or batch of an input before any
  // of the next input's, a stream's batches until it ends, except tickets marked `ahead`. While
  // the current input is a stream with two tickets not yet filled (it is read as fast as one
  // thread decompresses), a ticket goes to one of the next inputs instead, with read_ahead (a
  // compressed file, up to max_open_streams open, or a plain file's shard; never stdin, a pipe
  // or a device, nor an input after one; at most 2 x max_open_streams inputs ahead): its
  // `ahead` batches come in order for that input, but before the inputs before it are done.
  // A stream's tickets are filled in the order they were handed out (Fill waits its turn), so
  // Fill may run in parallel stages; a ticket handed out after a stream ended is filled empty.
  bool in_input_order = false;
  bool read_ahead = true;
  // In input order, a Fill or Abandon waiting for an earlier ticket of its stream polls this
  // (every 50 ms); when it returns true, Fill gives up with a Cancelled error (Abandon returns).
  // For a caller whose earlier tickets may never be filled: a oneTBB pipeline cancelled by an
  // exception drops the tickets it had not passed on yet.
  std::function<bool()> cancelled;
};
inline constexpr size_t kMinShardBytes = size_t{256} << 10;

struct Batch {
  size_t input = 0;         // index into the inputs
  uint64_t offset = 0;      // offset of text()'s first byte in the input's (decompressed) bytes
  uint64_t first_line = 0;  // 1-based line number of the first byte; 0 if unknown (shards)
  uint64_t disk_bytes = 0;  // input bytes this batch consumed from disk (for progress)
  std::string buffer;       // holds the text at [begin, end), then at least `padding` bytes
  size_t begin = 0;
  size_t end = 0;
  std::string_view text() const { return {buffer.data() + begin, end - begin}; }
};

class BatchReader {
 public:
  struct Ticket {
    size_t input = 0;
    uint64_t start = 0;  // shard range, for uncompressed files
    uint64_t end = 0;
    bool stream = false;
    // in_input_order: a stream's tickets, numbered in the order handed out (Fill's order), and
    // whether this one was handed out ahead of the input order (for an input after the one
    // whose work was being handed out).
    uint64_t seq = 0;
    bool ahead = false;
  };

  // `cut_rules[i]` says where input i may be cut.
  BatchReader(std::vector<InputFile> inputs, std::vector<CutRule> cut_rules,
              BatchReaderOptions options);
  ~BatchReader();

  const std::vector<InputFile>& inputs() const { return inputs_; }

  // The next piece of work; false when everything has been handed out.
  bool NextTicket(Ticket* ticket);

  // Reads the batch of `ticket` (an empty batch when a stream has already ended). When a
  // stream fails, the batch still holds the documents read before the fault, up to the last
  // cut (perhaps none); the fault lies at or after batch->offset + batch->end. A failed shard
  // leaves the batch empty. Running out of memory (a line of gigabytes held whole) is an
  // error too, a ResourceExhausted one naming the input and offset, with the batch empty; a
  // stream then ends.
  absl::Status Fill(const Ticket& ticket, Batch* batch);

  // Gives `ticket` up unread (its bytes are not needed); a stream's remaining bytes are
  // never read and it hands out no more tickets. (In input order it waits for the stream's
  // earlier tickets, as Fill does.)
  void Abandon(const Ticket& ticket);

  // The 1-based line number of `offset` in input `input`, by rereading it (not for stdin).
  absl::StatusOr<uint64_t> LineNumberAt(size_t input, uint64_t offset) const;

  // Total bytes on disk of all inputs (stdin counts 0).
  uint64_t total_disk_bytes() const { return total_disk_bytes_; }

 private:
  struct Stream;
  class StreamTurn;

  absl::Status FillShard(const Ticket& ticket, Batch* batch);
  // Fill's error when memory ran out reading input `input` from `offset`, the last `uncut`
  // bytes held without a cut (the batch's memory given back, the batch empty).
  absl::Status OutOfMemory(size_t input, uint64_t offset, uint64_t uncut, Batch* batch);
  absl::Status FillStream(Stream& stream, Batch* batch);  // the stream's turn held
  // in_input_order: a ticket for an input after `current` (a stream that is not busy, or the
  // next shard), marked `ahead`; false when there is none.
  bool GiveAhead(size_t current, Ticket* ticket);

  std::vector<InputFile> inputs_;
  std::vector<CutRule> cut_rules_;
  BatchReaderOptions options_;
  std::vector<Ticket> shards_;  // all shards of uncompressed files, in order
  size_t next_shard_ = 0;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<Stream*> stream_of_input_;  // by input; nullptr for a file cut into shards
  size_t next_input_ = 0;                 // in_input_order: the input being handed out
  uint64_t total_disk_bytes_ = 0;
};

}  // namespace tokenmill
