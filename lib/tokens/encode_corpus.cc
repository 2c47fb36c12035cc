#include "tokens/encode_corpus.h"

#include <tbb/concurrent_queue.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <atomic>
#include <bit>
#include <map>
#include <memory>
#include <new>

#include "common/file_util.h"
#include "common/option_error.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "corpus/batch_reader.h"
#include "corpus/json_text.h"
#include "count/count_corpus.h"
#include "count/count_progress.h"

namespace tokenmill {
namespace {

// One batch's share of the output, made by a worker, written in order.
struct Chunk {
  BatchReader::Ticket ticket;
  size_t input = 0;
  uint64_t disk_bytes = 0;
  bool starts_document = true;  // doc_mode file: false for a file's later batches
  std::string bytes;            // the ids as the format stores them
  // Instead of `bytes` for 4-byte ids without --eot in line mode: the ids themselves, whose
  // bytes are the output (no copy into `bytes`).
  std::vector<TokenId> ids32;
  uint64_t ids = 0;
  std::vector<uint64_t> doc_tokens;  // complete documents' token counts (not doc_mode file)
  uint64_t documents = 0, text_bytes = 0, skipped = 0;
  std::string first_skipped;  // the first bad record skipped, at skipped_offset (line)
  uint64_t skipped_offset = 0, skipped_line = 0;
  // The first problem: `status` (a read error, already located) or `detail` at `offset` (a
  // text the encoder refused, a bad record), located by the writer.
  absl::Status status;
  bool failed = false;
  uint64_t offset = 0, line = 0;
  std::string detail;
  bool json = false;

  // Back to a fresh chunk's state, keeping the buffers' memory.
  void Reset() {
    ticket = {};
    input = 0;
    disk_bytes = 0;
    starts_document = true;
    bytes.clear();
    ids32.clear();
    ids = 0;
    doc_tokens.clear();
    documents = text_bytes = skipped = 0;
    first_skipped.clear();
    skipped_offset = skipped_line = 0;
    status = absl::OkStatus();
    failed = false;
    offset = line = 0;
    detail.clear();
    json = false;
  }
};

struct Scratch {
  Batch batch;
  std::vector<TokenId> ids;
  std::vector<size_t> ends;  // EncodeLines' line ends in `ids`
  std::vector<TokenId> line_ids;  // a line's ids with --eot, text output
  std::unique_ptr<JsonTextExtractor> json;
  std::vector<uint64_t> id_counts;
};

// A document being written in doc_mode file (a file's batches, in order).
struct OpenDocument {
  bool open = false;
  bool has_ids = false;
  uint64_t tokens = 0;
};

// An input read ahead of its turn (BatchReader::Ticket::ahead): its ids go to a scratch file,
// appended to the output once the inputs before it are written.
struct Spill {
  std::unique_ptr<ScratchFile> file;  // made at its first bytes
  uint64_t ids = 0;
  std::vector<uint64_t> doc_tokens;  // with an index
  OpenDocument document;
  absl::Status failure;  // its first problem, reported when its turn comes
};

}  // namespace

CountCorpusOptions EncodeReadingDefaults() {
  CountCorpusOptions reading;
  reading.shard_bytes = size_t{1} << 20;
  return reading;
}

absl::StatusOr<EncodeCorpusResult> EncodeCorpus(const Encoder& encoder,
                                                const EncodeCorpusOptions& options,
                                                const std::function<bool()>& stop_requested) {
  const Model& model = encoder.model();
  const size_t id_bound = model.token_bytes().size();
  TM_RETURN_IF_ERROR(CheckTokenFileFormat(options.format, id_bound, !options.index.empty()));
  if (options.eot && *options.eot >= id_bound) {
    return OptionError(StrCat("`eot` id ", *options.eot, " is no token of this vocabulary (ids below ",
                              id_bound, ")"),
                       {"eot"});
  }
  // The corpus, planned as for counting with the model's own text settings (the cut rules
  // follow its pre-tokenizer and special tokens).
  CountCorpusOptions corpus = options.reading;
  corpus.special_tokens.clear();
  corpus.pretokenizer = model.pre_tokenizer();
  for (const SpecialToken& s : model.special_tokens()) corpus.special_tokens.push_back(s.content);
  TM_ASSIGN_OR_RETURN(CorpusPlan plan, PlanCorpus(corpus));
  if (!plan.counts_files.empty()) {
    return absl::InvalidArgumentError(StrCat("'", plan.counts_files[0],
                                             "' is a word-count file, which holds no text to encode"));
  }
  if (options.index == "-") {  // it would follow the ids on stdout, one stream
    return OptionError("`index` '-': the index goes to a file of its own, not stdout: give its path",
                       {"index"});
  }
  // An output or index that is one of the inputs would replace that text with ids (the input
  // is read in full before the output is renamed into place, so the run "succeeds").
  for (const auto& [name, path] : {std::pair<std::string_view, const std::string*>{"output", &options.output},
                                   {"index", &options.index}}) {
    if (path->empty() || *path == "-") continue;
    const std::string target = CanonicalPath(*path);
    for (const InputFile& input : plan.inputs) {
      if (!input.is_stdin() && CanonicalPath(input.path) == target) {
        return OptionError(StrCat("`", name, "` '", *path, "' is also an input: writing it would replace that text"),
                           {name});
      }
    }
  }
  if (!options.output.empty() && options.output != "-") RemoveStaleTemporaries(options.output);
  if (!options.index.empty()) RemoveStaleTemporaries(options.index);
  TM_ASSIGN_OR_RETURN(TokenFileWriter writer,
                      TokenFileWriter::Create(options.output.empty() ? "-" : options.output,
                                              options.format, id_bound));
  std::optional<MegatronIndexWriter> index;
  if (!options.index.empty()) {
    TM_RETURN_IF_ERROR(CheckWritableOutput(options.index));
    index.emplace(options.index, options.format, id_bound);
  }

  const int threads = ThreadCount(options.threads);
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                  static_cast<size_t>(threads));
  std::vector<CutRule> rules;
  for (const InputFile& input : plan.inputs) rules.push_back(CutRuleFor(input, corpus));
  BatchReaderOptions reader_options;
  reader_options.shard_bytes = corpus.shard_bytes;
  reader_options.batch_bytes = corpus.batch_bytes;
  reader_options.padding = kJsonPadding;
  reader_options.max_open_streams = static_cast<size_t>(threads);
  reader_options.min_shards = static_cast<size_t>(threads) * 4;
  reader_options.in_input_order = true;  // the writer writes in ticket order (spilling `ahead`)
  // An exception leaving a filter (none should: see `process`) cancels the pipeline, which then
  // drops tickets it holds; a later ticket of the same stream must not wait for them.
  tbb::task_group_context pipeline_context;
  reader_options.cancelled = [&pipeline_context] {
    return pipeline_context.is_group_execution_cancelled();
  };
  // Inputs read ahead wait in scratch files: where none can be made (an unwritable $TMPDIR for
  // stdout), nothing is read ahead, as before there was any reading ahead. (Two threads never
  // read ahead anyway: a thread asks for work only when it holds none unfilled, so the current
  // stream never has two tickets unfilled when one is asked for.)
  const std::string scratch_folder = ScratchFolderFor(options.output.empty() ? "-" : options.output);
  // Reading ahead holds up to 6 files open per thread: a stream, the scratch files of the
  // inputs read ahead (2) and of the batches in flight (2), and a shard being read. Where the
  // limit on open files does not allow that (a soft limit of 1024 and over 160 threads; the
  // command-line tool raises it to the hard limit), nothing is read ahead either.
  constexpr size_t kFilesPerThread = 6, kOtherFiles = 32;
  reader_options.read_ahead =
      threads > 2 && plan.inputs.size() > 1 &&
      SpareDescriptors() >= kFilesPerThread * static_cast<size_t>(threads) + kOtherFiles &&
      ScratchFile::Create(scratch_folder).ok();
  BatchReader reader(plan.inputs, std::move(rules), reader_options);
  const bool file_mode = corpus.doc_mode == "file";
  const TokenFileFormat format = options.format;
  const size_t id_width = IdWidth(format, id_bound);
  std::vector<TokenId> eot_ids;
  if (options.eot) eot_ids.push_back(*options.eot);

  tbb::enumerable_thread_specific<Scratch> scratch([&] {
    Scratch s;
    if (options.stats) s.id_counts.assign(id_bound, 0);
    return s;
  });
  // Encodes one document (or, doc_mode file, a batch of one) into the chunk; false on a
  // refusal (recorded in the chunk).
  auto encode = [&](Scratch& s, Chunk& chunk, std::string_view text, uint64_t offset,
                    uint64_t line, bool whole_document) {
    s.ids.clear();
    absl::Status status = encoder.EncodeTo(text, options.specials, s.ids);
    if (!status.ok()) {
      chunk.failed = true;
      chunk.offset = offset;
      chunk.line = line;
      chunk.detail = std::string(status.message());
      return false;
    }
    if (whole_document) s.ids.insert(s.ids.end(), eot_ids.begin(), eot_ids.end());
    if (options.stats) {
      for (TokenId id : s.ids) ++s.id_counts[id];
    }
    chunk.ids += s.ids.size();
    if (format == TokenFileFormat::kText && !whole_document) {
      // A piece of a file's document: ids only; the writer joins pieces and ends the line.
      for (size_t i = 0; i < s.ids.size(); ++i) {
        if (i > 0) chunk.bytes.push_back(' ');
        StrAppend(&chunk.bytes, s.ids[i]);
      }
    } else {
      AppendIdBytes(format, id_bound, s.ids, chunk.bytes);
    }
    if (whole_document) chunk.doc_tokens.push_back(s.ids.size());
    return true;
  };
  // Encodes the lines of `text`, each a document, with one call to the encoder (a call per
  // line was about a sixth of linux_c_100m's encode). False when a line is refused: nothing
  // is then added to the chunk, and the caller goes line by line to locate the refusal.
  auto encode_lines = [&](Scratch& s, Chunk& chunk, std::string_view text) {
    s.ids.clear();
    s.ends.clear();
    if (!encoder.EncodeLines(text, options.specials, s.ids, s.ends).ok()) return false;
    chunk.documents += s.ends.size();
    chunk.ids += s.ids.size() + eot_ids.size() * s.ends.size();
    if (options.stats) {
      for (TokenId id : s.ids) ++s.id_counts[id];
      for (TokenId id : eot_ids) s.id_counts[id] += s.ends.size();
    }
    size_t begin = 0;
    for (size_t end : s.ends) {
      chunk.doc_tokens.push_back(end - begin + eot_ids.size());
      begin = end;
    }
    if (eot_ids.empty() && format != TokenFileFormat::kText) {
      if (id_width == 4 && chunk.ids32.empty()) {
        s.ids.swap(chunk.ids32);  // the chunk's old buffer, emptied, becomes the scratch
      } else {
        AppendIdBytes(format, id_bound, s.ids, chunk.bytes);
      }
      return true;
    }
    begin = 0;
    for (size_t end : s.ends) {
      const std::span<const TokenId> line(s.ids.data() + begin, end - begin);
      if (format == TokenFileFormat::kText) {
        // The eot on the document's own line.
        s.line_ids.assign(line.begin(), line.end());
        s.line_ids.insert(s.line_ids.end(), eot_ids.begin(), eot_ids.end());
        AppendIdBytes(format, id_bound, s.line_ids, chunk.bytes);
      } else {
        AppendIdBytes(format, id_bound, line, chunk.bytes);
        AppendIdBytes(format, id_bound, eot_ids, chunk.bytes);
      }
      begin = end;
    }
    return true;
  };
  // Encodes the documents of a batch into its chunk, stopping at a refusal (recorded in it).
  auto encode_text = [&](std::unique_ptr<Chunk> chunk, Scratch& s,
                         const Batch& batch) -> std::unique_ptr<Chunk> {
    const std::string_view text = batch.text();
    const InputFile& input = reader.inputs()[batch.input];
    chunk->json = input.format == RecordFormat::kJsonLines;
    uint64_t line = batch.first_line;
    if (chunk->json) {
      if (s.json == nullptr) s.json = std::make_unique<JsonTextExtractor>(corpus.text_field);
      for (size_t start = 0; start < text.size();) {
        const size_t newline = text.find('\n', start);
        const size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
        const std::string_view record = text.substr(start, end - start);
        if (!IsBlankLine(record)) {
          std::string_view document;
          JsonTextExtractor::Problem problem;
          std::string detail;
          if (s.json->Extract(record, &document, &problem, &detail)) {
            ++chunk->documents;
            chunk->text_bytes += document.size();
            if (!encode(s, *chunk, document, batch.offset + start, line, true)) return chunk;
          } else if (corpus.skip_bad_records) {
            if (++chunk->skipped == 1) {
              chunk->first_skipped = detail;
              chunk->skipped_offset = batch.offset + start;
              chunk->skipped_line = line;
            }
          } else {
            chunk->failed = true;
            chunk->offset = batch.offset + start;
            chunk->line = line;
            chunk->detail = StrCat(detail, " (`skip_bad_records` skips such records)");
            return chunk;
          }
        }
        if (line != 0) ++line;
        start = end;
      }
      return chunk;
    }
    chunk->text_bytes = text.size();
    if (file_mode) {
      // (A shard in which no batch starts is empty, at offset 0 too.)
      chunk->starts_document = batch.offset == 0 && !text.empty();
      if (chunk->starts_document) chunk->documents = 1;
      if (!encode(s, *chunk, text, batch.offset, line, false)) {
        // The refusal's byte is counted from the batch's start: name its line instead, found
        // by encoding the batch line by line (kept as it is if no single line is refused).
        for (size_t start = 0; start < text.size();) {
          const size_t newline = text.find('\n', start);
          const size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
          s.ids.clear();
          absl::Status status = encoder.EncodeTo(text.substr(start, end - start), options.specials, s.ids);
          if (!status.ok()) {
            chunk->offset = batch.offset + start;
            chunk->line = line;
            chunk->detail = std::string(status.message());
            break;
          }
          if (line != 0) ++line;
          start = end;
        }
      }
      return chunk;
    }
    if (encode_lines(s, *chunk, text)) return chunk;
    for (size_t start = 0; start < text.size();) {
      const size_t newline = text.find('\n', start);
      const size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
      ++chunk->documents;
      if (!encode(s, *chunk, text.substr(start, end - start), batch.offset + start, line, true)) {
        return chunk;
      }
      if (line != 0) ++line;
      start = end;
    }
    return chunk;
  };
  auto process = [&](std::unique_ptr<Chunk> chunk) {
    Scratch& s = scratch.local();
    Batch& batch = s.batch;
    absl::Status read = reader.Fill(chunk->ticket, &batch);
    chunk->input = batch.input;
    chunk->disk_bytes = batch.disk_bytes;
    // A batch whose reading failed still holds the whole documents read before the fault
    // (BatchReader::Fill): they are encoded first, so that a refusal among them, which comes
    // earlier in the input, is the one reported (as counting does), whatever the batch size.
    // Memory running out here is this chunk's error (no exception leaves a filter: oneTBB
    // would drop the tickets in flight, whose streams' later tickets then wait forever).
    const BatchReader::Ticket ticket = chunk->ticket;
    try {
      chunk = encode_text(std::move(chunk), s, batch);
    } catch (const std::bad_alloc&) {
      // (The chunk, taken by encode_text, is gone with its buffers.)
      std::vector<TokenId>().swap(s.ids);
      chunk = std::make_unique<Chunk>();
      chunk->ticket = ticket;
      chunk->input = batch.input;
      chunk->failed = true;
      chunk->status = absl::ResourceExhaustedError(
          StrCat("out of memory encoding '", reader.inputs()[batch.input].display_name(),
                 "' from byte ", batch.offset));
      return chunk;
    }
    if (!read.ok() && !chunk->failed) {
      chunk->status = read;
      chunk->failed = true;
    }
    return chunk;
  };

  EncodeCorpusResult result;
  CountProgress progress(corpus.progress, reader.total_disk_bytes(), CountProgress::Stage::kEncode);
  absl::Status failure;
  std::atomic<bool> stop{false};
  std::atomic<bool> stopped{false};
  std::atomic<bool> out_of_memory{false};  // a chunk could not be made
  tbb::concurrent_queue<std::unique_ptr<Chunk>> pool;
  // The input whose ids go straight to the output; later inputs' chunks read ahead are spilled
  // (by input) until every input before them is written.
  size_t current = 0;
  OpenDocument output_document;
  std::map<size_t, Spill> spills;  // by input (the few read ahead)
  size_t first_skipped_input = SIZE_MAX;
  std::string tail;
  // The ids of one input go to the output (spill null) or to its spill.
  auto sink_write = [&](Spill* spill, std::string_view bytes, uint64_t ids) -> absl::Status {
    if (spill == nullptr) return writer.Write(bytes, ids);
    if (spill->file == nullptr) {
      TM_ASSIGN_OR_RETURN(spill->file, ScratchFile::Create(scratch_folder));
    }
    spill->ids += ids;
    return spill->file->Append(bytes);
  };
  auto sink_document = [&](Spill* spill, uint64_t tokens) {
    if (!index) return;
    if (spill == nullptr) {
      index->AddDocument(tokens);
    } else {
      spill->doc_tokens.push_back(tokens);
    }
  };
  // doc_mode file: ends the sink's open document (a file's) with the eot.
  auto close_document = [&](Spill* spill) -> absl::Status {
    OpenDocument& doc = spill == nullptr ? output_document : spill->document;
    if (!doc.open) return absl::OkStatus();
    tail.clear();
    if (format == TokenFileFormat::kText) {
      for (TokenId id : eot_ids) {
        if (doc.has_ids) tail.push_back(' ');
        StrAppend(&tail, id);
        doc.has_ids = true;
      }
      tail.push_back('\n');
    } else {
      AppendIdBytes(format, id_bound, eot_ids, tail);
    }
    if (options.stats) {
      for (TokenId id : eot_ids) ++scratch.local().id_counts[id];
    }
    doc.tokens += eot_ids.size();
    result.tokens += eot_ids.size();
    sink_document(spill, doc.tokens);
    doc.open = false;
    return sink_write(spill, tail, eot_ids.size());
  };
  // Every input up to `to` is now the output's turn: the ones before it are written, so each
  // spilled input after `current` is appended (its problem, if it had one, is the run's now).
  auto advance = [&](size_t to) -> absl::Status {
    std::string block;
    // (Every spilled input is after `current`.)
    for (auto it = spills.begin(); it != spills.end() && it->first <= to;) {
      Spill& spill = it->second;
      TM_RETURN_IF_ERROR(spill.failure);
      TM_RETURN_IF_ERROR(close_document(nullptr));
      if (spill.file != nullptr) {
        constexpr size_t kBlock = size_t{4} << 20;
        const uint64_t size = spill.file->size();
        result.spilled_bytes += size;
        for (uint64_t at = 0; at < size; at += kBlock) {
          const size_t n = static_cast<size_t>(std::min<uint64_t>(kBlock, size - at));
          block.resize(n);
          TM_RETURN_IF_ERROR(spill.file->Read(at, n, block.data()));
          TM_RETURN_IF_ERROR(writer.Write(block, at + n == size ? spill.ids : 0));
        }
      }
      for (uint64_t n : spill.doc_tokens) index->AddDocument(n);
      output_document = spill.document;
      it = spills.erase(it);
    }
    current = std::max(current, to);
    return absl::OkStatus();
  };
  // The line of byte `offset` of an input: `known` (a stream's batches count their lines), else
  // found by rereading the input; 0 where it cannot be reread.
  auto line_of = [&](size_t input, uint64_t offset, uint64_t known) -> uint64_t {
    if (known != 0) return known;
    absl::StatusOr<uint64_t> found = reader.LineNumberAt(input, offset);
    return found.ok() ? *found : 0;
  };
  // The chunk's problem, located (FILE:LINE where the line is known or found).
  auto located = [&](const Chunk& chunk) -> absl::Status {
    if (!chunk.status.ok()) return chunk.status;
    const uint64_t line = line_of(chunk.input, chunk.offset, chunk.line);
    const std::string name = reader.inputs()[chunk.input].display_name();
    std::string where = line != 0 ? StrCat(name, ":", line) : StrCat(name, " at byte ", chunk.offset);
    absl::Status error = absl::InvalidArgumentError(StrCat(where, ": ", chunk.detail));
    return chunk.json ? MentioningOptions(error, {"text_field", "skip_bad_records"}) : error;
  };
  auto write_chunk = [&](Chunk& chunk, Spill* spill) -> absl::Status {
    OpenDocument& doc = spill == nullptr ? output_document : spill->document;
    // The open document (a file's) ends where the next file starts, and before a JSON-lines
    // batch, whose records are documents of their own.
    if (file_mode && (chunk.json || chunk.starts_document)) {
      TM_RETURN_IF_ERROR(close_document(spill));
      if (!chunk.json) doc = OpenDocument{true, false, 0};
    }
    if (!chunk.ids32.empty()) {
      static_assert(std::endian::native == std::endian::little);
      TM_RETURN_IF_ERROR(sink_write(spill,
                                    std::string_view(reinterpret_cast<const char*>(chunk.ids32.data()),
                                                     chunk.ids32.size() * sizeof(TokenId)),
                                    chunk.ids));
    }
    if (!chunk.bytes.empty()) {
      if (file_mode && !chunk.json && format == TokenFileFormat::kText && doc.has_ids) {
        TM_RETURN_IF_ERROR(sink_write(spill, " ", 0));
      }
      TM_RETURN_IF_ERROR(sink_write(spill, chunk.bytes, chunk.ids));
      if (chunk.ids > 0) doc.has_ids = true;
    }
    if (doc.open) doc.tokens += chunk.ids;
    for (uint64_t n : chunk.doc_tokens) sink_document(spill, n);
    return absl::OkStatus();
  };
  auto write = [&](std::unique_ptr<Chunk>& chunk) {
    if (!failure.ok() || stopped.load() || out_of_memory.load()) return;
    const size_t input = chunk->input;
    // A chunk not read ahead: every input before its own is done.
    if (!chunk->ticket.ahead && input > current) failure = advance(input);
    Spill* spill = nullptr;
    if (failure.ok() && input != current) {
      spill = &spills[input];
      if (!spill->failure.ok()) return;  // the rest of an input that has failed
    }
    if (failure.ok()) {
      // A scratch file that cannot be written (a full disk) fails the input read ahead, in its
      // turn: an earlier input's problem comes first.
      absl::Status written = write_chunk(*chunk, spill);
      if (spill != nullptr) {
        spill->failure = written;
      } else {
        failure = written;
      }
    }
    result.tokens += chunk->ids;
    result.documents += chunk->documents;
    result.bytes += chunk->text_bytes;
    if (chunk->skipped > 0 && input < first_skipped_input) {
      first_skipped_input = input;
      const uint64_t line = line_of(input, chunk->skipped_offset, chunk->skipped_line);
      result.first_skipped = StrCat(reader.inputs()[input].display_name(), ":", line, ": ",
                                    chunk->first_skipped);
    }
    result.skipped_records += chunk->skipped;
    progress.AddBatch(chunk->disk_bytes, chunk->documents, static_cast<int64_t>(chunk->ids));
    if (chunk->failed && failure.ok()) {
      // An input read ahead fails when its turn comes: an input before it may fail first.
      if (spill != nullptr) {
        if (spill->failure.ok()) spill->failure = located(*chunk);
      } else {
        failure = located(*chunk);
      }
    }
    if (!failure.ok()) stop = true;
  };

  tbb::task_arena arena(threads);
  arena.execute([&] {
    tbb::parallel_pipeline(
        static_cast<size_t>(threads) * 2,
        tbb::make_filter<void, std::unique_ptr<Chunk>>(
            tbb::filter_mode::serial_in_order,
            [&](tbb::flow_control& control) -> std::unique_ptr<Chunk> {
              // Chunks are reused (their buffers keep their capacity): a new one per batch
              // cost a page fault per 4 KB of every batch's ids.
              std::unique_ptr<Chunk> chunk;
              if (!pool.try_pop(chunk)) {
                try {
                  chunk = std::make_unique<Chunk>();
                } catch (const std::bad_alloc&) {
                  out_of_memory = true;
                  stop = true;
                  control.stop();
                  return chunk;
                }
              }
              if (stop.load(std::memory_order_relaxed)) {
                control.stop();
                return chunk;
              }
              if (stop_requested && stop_requested()) {
                stopped = true;
                stop = true;
                control.stop();
                return chunk;
              }
              if (!reader.NextTicket(&chunk->ticket)) control.stop();
              return chunk;
            }) &
            tbb::make_filter<std::unique_ptr<Chunk>, std::unique_ptr<Chunk>>(
                tbb::filter_mode::parallel,
                [&](std::unique_ptr<Chunk> chunk) {
                  if (stop.load(std::memory_order_relaxed)) {
                    reader.Abandon(chunk->ticket);
                    return chunk;
                  }
                  return process(std::move(chunk));
                }) &
            tbb::make_filter<std::unique_ptr<Chunk>, void>(
                tbb::filter_mode::serial_in_order,
                [&](std::unique_ptr<Chunk> chunk) {
                  try {
                    write(chunk);
                  } catch (const std::bad_alloc&) {
                    if (failure.ok()) {
                      failure = absl::ResourceExhaustedError("out of memory writing the output");
                    }
                    stop = true;
                  }
                  chunk->Reset();
                  pool.push(std::move(chunk));
                }),
        pipeline_context);
  });
  if (failure.ok() && out_of_memory.load()) {
    failure = absl::ResourceExhaustedError("out of memory encoding the corpus");
  }
  if (failure.ok() && !stopped.load() && !reader.inputs().empty()) {
    failure = advance(reader.inputs().size() - 1);
  }
  if (failure.ok() && !stopped.load() && file_mode) failure = close_document(nullptr);
  if (!failure.ok()) return failure;
  if (stopped.load()) return absl::CancelledError("stopped before the corpus was encoded; nothing was written");
  progress.Finish(result.tokens);
  result.eot_tokens = result.documents * eot_ids.size();  // every document ends with one
  // Both files are closed (where a full disk shows) before either replaces its path: a failure
  // leaves the previous output and index as they were.
  TM_RETURN_IF_ERROR(writer.Close());
  if (index) TM_RETURN_IF_ERROR(index->Close());
  TM_RETURN_IF_ERROR(writer.Publish());
  if (index) TM_RETURN_IF_ERROR(index->Publish());
  if (options.stats) {
    result.id_counts.assign(id_bound, 0);
    for (const Scratch& s : scratch) {
      for (size_t i = 0; i < id_bound; ++i) result.id_counts[i] += s.id_counts[i];
    }
  }
  return result;
}

}  // namespace tokenmill
