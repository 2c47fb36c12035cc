#include "corpus/batch_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <new>

#include "common/strings.h"

namespace tokenmill {
namespace {

constexpr size_t kExtendStep = size_t{1} << 20;
// in_input_order: unfilled tickets that keep a stream reading all the time (one thread reads
// while the next waits its turn); beyond them a thread goes to a later stream (GiveAhead).
constexpr int kBusyStream = 2;

absl::Status ReadErrnoError(const std::string& path, uint64_t offset) {
  return absl::FailedPreconditionError(
      StrCat("cannot read '", path, "' at byte ", offset, ": ", std::strerror(errno)));
}

// Appends up to `n` bytes of `fd` at `offset` to `out`; returns how many (0 at end of file).
absl::StatusOr<size_t> PreadAppend(int fd, const std::string& path, uint64_t offset, size_t n,
                                   std::string& out) {
  size_t old_size = out.size();
  out.resize(old_size + n);
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, out.data() + old_size + got, n - got,
                        static_cast<off_t>(offset + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      out.resize(old_size);
      return ReadErrnoError(path, offset + got);
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  out.resize(old_size + got);
  return got;
}

uint64_t CountNewlines(std::string_view s) {
  uint64_t n = 0;
  const char* p = s.data();
  const char* end = p + s.size();
  while (p < end) {
    const void* hit = std::memchr(p, '\n', static_cast<size_t>(end - p));
    if (hit == nullptr) break;
    ++n;
    p = static_cast<const char*>(hit) + 1;
  }
  return n;
}

class FileCloser {
 public:
  explicit FileCloser(int fd) : fd_(fd) {}
  ~FileCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileCloser(const FileCloser&) = delete;
  FileCloser& operator=(const FileCloser&) = delete;

 private:
  int fd_;
};

}  // namespace

struct BatchReader::Stream {
  size_t input = 0;
  std::mutex mu;
  std::unique_ptr<ByteStream> source;  // opened on first use
  std::string carry;                   // bytes read past the last cut
  uint64_t offset = 0;                 // offset of carry's first byte
  uint64_t line = 1;                   // line number of carry's first byte
  uint64_t disk_seen = 0;              // disk bytes accounted to batches so far
  bool ended = false;                  // the turn's (StreamTurn)
  bool started = false;                // a ticket was handed out (NextTicket only)
  std::atomic<bool> done{false};       // no more batches (for NextTicket)
  std::atomic<int> outstanding{0};     // tickets handed out and not yet filled
  // in_input_order: the next ticket number to hand out (NextTicket only) and to fill. `busy`:
  // a ticket holds the turn (StreamTurn). Both under mu; `turn` tells waiting fills they moved.
  // The source, carry, offset, line, disk_seen and ended belong to the turn's holder.
  uint64_t next_seq = 0;
  uint64_t filled_seq = 0;
  bool busy = false;
  std::condition_variable turn;

  // No more batches: the file is closed and the stream hands out no more tickets (turn held).
  void End() {
    ended = true;
    done.store(true, std::memory_order_release);
    source.reset();
    std::string().swap(carry);
  }
};

BatchReader::BatchReader(std::vector<InputFile> inputs, std::vector<CutRule> cut_rules,
                         BatchReaderOptions options)
    : inputs_(std::move(inputs)), cut_rules_(std::move(cut_rules)), options_(options) {
  options_.shard_bytes = std::max<size_t>(options_.shard_bytes, 1);
  options_.batch_bytes = std::max<size_t>(options_.batch_bytes, 1);
  options_.min_shards = std::max<size_t>(options_.min_shards, 1);
  // stdin and compressed inputs are read front to back as streams; other files in shards.
  auto is_stream = [](const InputFile& input) {
    return input.is_stdin() || input.compression != Compression::kNone;
  };
  uint64_t cuttable = 0;  // bytes of the files cut into shards
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (!is_stream(inputs_[i]) && cut_rules_[i].kind() != CutKind::kNever) cuttable += inputs_[i].size;
  }
  stream_of_input_.assign(inputs_.size(), nullptr);
  uint64_t planned = 0;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const InputFile& input = inputs_[i];
    total_disk_bytes_ += input.size;
    if (is_stream(input)) {
      auto stream = std::make_unique<Stream>();
      stream->input = i;
      stream_of_input_[i] = stream.get();
      streams_.push_back(std::move(stream));
      continue;
    }
    // A file that may not be cut is one shard; an empty file yields no shard at all.
    if (cut_rules_[i].kind() == CutKind::kNever) {
      if (input.size > 0) shards_.push_back(Ticket{i, 0, input.size, false});
      continue;
    }
    for (uint64_t start = 0; start < input.size;) {
      // The last shards shrink (min_shards, batch_reader.h).
      const uint64_t step = std::clamp<uint64_t>((cuttable - planned) / options_.min_shards,
                                                 std::min(kMinShardBytes, options_.shard_bytes),
                                                 options_.shard_bytes);
      const uint64_t end = std::min(input.size, start + step);
      shards_.push_back(Ticket{i, start, end, false});
      planned += end - start;
      start = end;
    }
  }
}

BatchReader::~BatchReader() = default;

bool BatchReader::NextTicket(Ticket* ticket) {
  // Keep every open stream busy first (they are the serial parts), open more streams while
  // fewer than max_open_streams are open, then hand out shards, then let idle threads queue up
  // behind the open stream with the fewest waiting tickets.
  auto give = [&](Stream* stream) {
    stream->started = true;
    stream->outstanding.fetch_add(1, std::memory_order_acq_rel);
    *ticket = Ticket{stream->input, 0, 0, true, stream->next_seq++, false};
    return true;
  };
  if (options_.in_input_order) {
    // shards_ lists each file's shards in order, the files in input order.
    for (; next_input_ < inputs_.size(); ++next_input_) {
      if (Stream* stream = stream_of_input_[next_input_]; stream != nullptr) {
        if (stream->done.load(std::memory_order_acquire)) continue;
        // Two unfilled tickets keep a stream busy (one reading, one next); a third thread would
        // only wait: it reads a later compressed input meanwhile, if there is one.
        if (stream->outstanding.load(std::memory_order_acquire) >= kBusyStream &&
            GiveAhead(next_input_, ticket)) {
          return true;
        }
        return give(stream);
      }
      if (next_shard_ < shards_.size() && shards_[next_shard_].input == next_input_) {
        *ticket = shards_[next_shard_++];
        return true;
      }
    }
    return false;
  }
  Stream* least = nullptr;
  Stream* unstarted = nullptr;
  size_t open = 0;
  for (auto& stream : streams_) {
    if (!stream->started) {
      if (unstarted == nullptr) unstarted = stream.get();
      continue;
    }
    if (stream->done.load(std::memory_order_acquire)) continue;
    ++open;
    int waiting = stream->outstanding.load(std::memory_order_acquire);
    if (waiting == 0) return give(stream.get());
    if (least == nullptr || waiting < least->outstanding.load(std::memory_order_acquire)) {
      least = stream.get();
    }
  }
  if (unstarted != nullptr && open < options_.max_open_streams) return give(unstarted);
  if (next_shard_ < shards_.size()) {
    *ticket = shards_[next_shard_++];
    return true;
  }
  if (least != nullptr) return give(least);
  if (unstarted != nullptr) return give(unstarted);
  return false;
}

bool BatchReader::GiveAhead(size_t current, Ticket* ticket) {
  // The next few inputs after `current`, in order: a compressed file that is not busy (opening
  // one while fewer than max_open_streams are open), else the next shard of a plain file
  // (shards_ is in input order, so it belongs to the first file with shards left). Never stdin,
  // a pipe or a device: its writer may be waiting for the current input to be read (one
  // producer filling two pipes in turn), and a read of it can wait forever. At most
  // 2 x max_open_streams inputs ahead, so that their outputs kept aside stay few.
  if (!options_.read_ahead) return false;
  size_t open = 1;  // the current input's stream
  const size_t window_end = std::min(inputs_.size(), current + 1 + 2 * options_.max_open_streams);
  for (size_t i = current + 1; i < window_end; ++i) {
    Stream* stream = stream_of_input_[i];
    if (stream == nullptr) {
      if (next_shard_ < shards_.size() && shards_[next_shard_].input == i) {
        *ticket = shards_[next_shard_++];
        ticket->ahead = true;
        return true;
      }
      continue;
    }
    if (inputs_[i].read_once || inputs_[i].is_stdin()) break;  // nothing after it either
    if (stream->done.load(std::memory_order_acquire)) continue;
    if (!stream->started && open >= options_.max_open_streams) continue;
    ++open;
    if (stream->outstanding.load(std::memory_order_acquire) >= kBusyStream) continue;
    stream->started = true;
    stream->outstanding.fetch_add(1, std::memory_order_acq_rel);
    *ticket = Ticket{i, 0, 0, true, stream->next_seq++, true};
    return true;
  }
  return false;
}

// A stream ticket's turn (in input order: its seq; otherwise whichever ticket comes when the
// stream is free), held from Take() to the end of the scope, and then passed on to the next
// ticket whatever happened meanwhile: a later ticket's Fill waits for it, and a turn that never
// comes would hang the run (oneTBB's pipeline, cancelled by an exception, waits for every filter
// it started). The stream's mutex is held only to take and pass the turn, not while the holder
// reads: a ticket waiting for its turn waits on the condition variable, where a signal reaches
// it. (Blocked on the mutex instead, behind a read of an idle stdin, the main thread under
// ThreadSanitizer took the SIGINT that ends such a read and never ran its handler: TSan defers
// a signal that arrives in pthread_mutex_lock until the lock is taken.)
class BatchReader::StreamTurn {
 public:
  StreamTurn(const BatchReader& reader, Stream& stream, const Ticket& ticket)
      : reader_(reader), stream_(stream), seq_(ticket.seq) {}
  // Waits for the turn; false when the reader's `cancelled` said to stop waiting first.
  bool Take() {
    std::unique_lock<std::mutex> lock(stream_.mu);
    const bool in_order = reader_.options_.in_input_order;
    while (stream_.busy || (in_order && stream_.filled_seq != seq_)) {
      if (reader_.options_.cancelled && reader_.options_.cancelled()) return false;
      stream_.turn.wait_for(lock, std::chrono::milliseconds(50));
    }
    stream_.busy = true;
    held_ = true;
    return true;
  }
  ~StreamTurn() {
    if (held_) {
      {
        std::lock_guard<std::mutex> lock(stream_.mu);
        stream_.busy = false;
        ++stream_.filled_seq;
      }
      stream_.turn.notify_all();
    }
    stream_.outstanding.fetch_sub(1, std::memory_order_acq_rel);
  }

 private:
  const BatchReader& reader_;
  Stream& stream_;
  const uint64_t seq_;
  bool held_ = false;
};

absl::Status BatchReader::Fill(const Ticket& ticket, Batch* batch) {
  batch->input = ticket.input;
  batch->buffer.clear();
  batch->begin = batch->end = 0;
  batch->offset = 0;
  batch->first_line = 0;
  batch->disk_bytes = 0;
  if (!ticket.stream) {
    try {
      return FillShard(ticket, batch);
    } catch (const std::bad_alloc&) {
      // The buffer ran from `base` (FillShard); past the shard's end it looked for the cut.
      const size_t lookbehind = cut_rules_[ticket.input].lookbehind();
      const uint64_t base = ticket.start < lookbehind ? 0 : ticket.start - lookbehind;
      const uint64_t held = batch->buffer.size(), to_end = ticket.end - base;
      return OutOfMemory(ticket.input, ticket.start, held > to_end ? held - to_end : 0, batch);
    }
  }
  Stream* stream = ticket.input < stream_of_input_.size() ? stream_of_input_[ticket.input] : nullptr;
  if (stream == nullptr) return absl::InternalError("ticket for an unknown stream");
  StreamTurn turn(*this, *stream, ticket);
  if (!turn.Take()) return absl::CancelledError("reading was cancelled");
  const uint64_t offset = stream->offset;  // (FillStream moves it before it is done)
  try {
    return FillStream(*stream, batch);
  } catch (const std::bad_alloc&) {
    // The stream cannot go on (a batch's text may be lost): it ends here. Its buffer held
    // the text from the last cut on (past batch_bytes, none found in it).
    stream->End();
    const size_t held = batch->buffer.size();
    return OutOfMemory(ticket.input, offset, held >= options_.batch_bytes ? held : 0, batch);
  } catch (...) {
    stream->End();
    throw;
  }
}

absl::Status BatchReader::OutOfMemory(size_t input, uint64_t offset, uint64_t uncut, Batch* batch) {
  const size_t held = batch->buffer.size();
  std::string().swap(batch->buffer);  // give it back: the caller goes on, to report this
  batch->begin = batch->end = 0;
  batch->offset = offset;
  // (Past batch_bytes, or a shard's end, a buffer grows only while it finds no cut.)
  const bool long_document = uncut >= kExtendStep;
  return absl::ResourceExhaustedError(StrCat(
      "out of memory reading '", inputs_[input].display_name(), "' from byte ", offset, " (",
      held, " bytes of text held",
      long_document ? StrCat(", the last ", uncut, " with no place where a document ends and it could be cut")
                    : std::string(),
      ")"));
}

void BatchReader::Abandon(const Ticket& ticket) {
  if (!ticket.stream) return;
  Stream* stream = ticket.input < stream_of_input_.size() ? stream_of_input_[ticket.input] : nullptr;
  if (stream == nullptr) return;
  StreamTurn turn(*this, *stream, ticket);
  if (turn.Take()) stream->End();
}

absl::Status BatchReader::FillShard(const Ticket& ticket, Batch* batch) {
  const InputFile& input = inputs_[ticket.input];
  const CutRule& rule = cut_rules_[ticket.input];
  int fd = ::open(input.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        StrCat("cannot open '", input.path, "': ", std::strerror(errno)));
  }
  FileCloser closer(fd);
  batch->disk_bytes = ticket.end - ticket.start;
  std::string& buffer = batch->buffer;
  // The buffer starts the rule's lookbehind() bytes before the shard, so that the cut where the
  // shard's first batch begins is decided on the same bytes as where the shard before ends; it
  // reaches lookahead() bytes past the end for the same reason at the other side.
  uint64_t base = ticket.start < rule.lookbehind() ? 0 : ticket.start - rule.lookbehind();
  absl::StatusOr<size_t> got =
      PreadAppend(fd, input.path, base, ticket.end - base + rule.lookahead(), buffer);
  if (!got.ok()) return got.status();
  size_t begin = 0;
  if (ticket.start != 0) {
    begin = rule.FindCut(buffer, static_cast<size_t>(ticket.start - base));
    if (begin == CutRule::npos || base + begin >= ticket.end) {
      buffer.clear();  // no batch starts inside this shard
      return absl::OkStatus();
    }
  }
  size_t from = static_cast<size_t>(ticket.end - base);
  size_t end = rule.FindCut(buffer, from);
  while (end == CutRule::npos) {
    size_t scanned = buffer.size();
    absl::StatusOr<size_t> more = PreadAppend(fd, input.path, base + buffer.size(), kExtendStep, buffer);
    if (!more.ok()) return more.status();
    if (*more == 0) {
      end = buffer.size();
      break;
    }
    end = rule.FindCut(buffer, std::max(from, scanned > rule.lookahead() ? scanned - rule.lookahead() : 0));
  }
  // Bytes past `end` were only read to see the cut; keep them as padding when there is room.
  buffer.resize(std::max(buffer.size(), end + options_.padding));
  batch->begin = begin;
  batch->end = end;
  batch->offset = base + begin;
  return absl::OkStatus();
}

absl::Status BatchReader::FillStream(Stream& stream, Batch* batch) {
  if (stream.ended) return absl::OkStatus();
  const InputFile& input = inputs_[stream.input];
  const CutRule& rule = cut_rules_[stream.input];
  if (stream.source == nullptr) {
    absl::StatusOr<std::unique_ptr<ByteStream>> opened = ByteStream::Open(input);
    if (!opened.ok()) {
      stream.End();
      return opened.status();
    }
    stream.source = std::move(*opened);
  }
  std::string& buffer = batch->buffer;
  buffer.swap(stream.carry);
  stream.carry.clear();
  size_t cut = CutRule::npos;
  bool at_end = false;
  absl::Status fault;
  size_t search_from = 0;  // cuts before this were looked for already
  while (true) {
    size_t want = buffer.size() < options_.batch_bytes ? options_.batch_bytes - buffer.size()
                                                        : kExtendStep;
    size_t old_size = buffer.size();
    buffer.resize(old_size + want);
    absl::StatusOr<size_t> got = stream.source->Read(buffer.data() + old_size, want);
    if (!got.ok()) {
      // The whole documents read before the fault still make a batch, so that a problem in
      // them is found and reported before this error whatever the batch size.
      buffer.resize(old_size);
      cut = rule.LastCut(buffer);
      if (cut == CutRule::npos) cut = 0;
      fault = got.status();
      break;
    }
    buffer.resize(old_size + *got);
    if (*got == 0) {
      at_end = true;
      break;
    }
    if (buffer.size() < options_.batch_bytes) continue;
    size_t found = rule.LastCut(std::string_view(buffer).substr(search_from));
    if (found != CutRule::npos) {
      cut = search_from + found;
      break;
    }
    const size_t around = rule.lookahead() + rule.lookbehind();
    search_from = buffer.size() > around ? buffer.size() - around : 0;
  }
  size_t end = at_end ? buffer.size() : cut;
  stream.carry.assign(buffer, end, std::string::npos);
  batch->begin = 0;
  batch->end = end;
  batch->offset = stream.offset;
  batch->first_line = stream.line;
  // Every batch's first line number, whatever the format: errors in a stream's later batches
  // name their line (a stream cannot be reread to find it).
  stream.line += CountNewlines(std::string_view(buffer.data(), end));
  stream.offset += end;
  uint64_t disk = stream.source->disk_bytes();
  batch->disk_bytes = disk - stream.disk_seen;
  stream.disk_seen = disk;
  buffer.resize(std::max(buffer.size(), end + options_.padding));
  if (at_end || !fault.ok()) stream.End();
  return fault;
}

absl::StatusOr<uint64_t> BatchReader::LineNumberAt(size_t input_index, uint64_t offset) const {
  const InputFile& input = inputs_[input_index];
  if (input.is_stdin()) return absl::UnavailableError("stdin cannot be reread");
  if (input.read_once) {
    return absl::UnavailableError(StrCat("'", input.path, "' (a stream: a pipe or a device) cannot be reread"));
  }
  absl::StatusOr<std::unique_ptr<ByteStream>> opened = ByteStream::Open(input);
  if (!opened.ok()) return opened.status();
  std::string buffer(kExtendStep, '\0');
  uint64_t line = 1, position = 0;
  while (position < offset) {
    absl::StatusOr<size_t> got = (*opened)->Read(buffer.data(), buffer.size());
    if (!got.ok()) return got.status();
    if (*got == 0) break;
    size_t use = static_cast<size_t>(std::min<uint64_t>(*got, offset - position));
    line += CountNewlines(std::string_view(buffer.data(), use));
    position += use;
  }
  return line;
}

}  // namespace tokenmill
