#include "count/count_corpus.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>

#include "common/option_error.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "corpus/batch_reader.h"
#include "corpus/input_files.h"
#include "corpus/json_text.h"
#include "count/count_progress.h"
#include "count/count_state.h"
#include "oneapi/tbb/enumerable_thread_specific.h"
#include "oneapi/tbb/global_control.h"
#include "oneapi/tbb/info.h"
#include "oneapi/tbb/parallel_pipeline.h"
#include "oneapi/tbb/task_arena.h"

namespace tokenmill {
namespace {

// A problem found in one batch, located by (input, offset) so that the first one in input
// order wins whatever the thread timing.
struct Located {
  size_t input = 0;
  uint64_t offset = 0;
  uint64_t line = 0;  // 0: not known yet
  std::string detail;
  absl::Status status;  // set for I/O and decompression errors (already located)
  bool Before(const Located& other) const {
    return std::tie(input, offset) < std::tie(other.input, other.offset);
  }
};

// A counting thread's table and totals, and what reading files adds to them.
struct ThreadState : CountState {
  uint64_t skipped = 0;
  std::optional<Located> first_skipped;
  std::unique_ptr<JsonTextExtractor> json;
  Batch batch;
};

class CorpusCounter {
 public:
  CorpusCounter(const CountCorpusOptions& options, const CountTools& tools, BatchReader& reader)
      : options_(options), tools_(tools), reader_(reader) {}

  // Runs the pipeline on `threads` threads and merges the result into `out`.
  absl::Status Run(int threads, ProgressFormat progress_format, CorpusCounts& out);

 private:
  // Whether a problem already found precedes everything `ticket` could hold: then the ticket
  // is not read, and the first problem in input order is the one reported, whatever the
  // thread timing.
  bool AfterProblem(const BatchReader::Ticket& ticket);
  void ProcessTicket(const BatchReader::Ticket& ticket);
  // Counts one batch; returns a located problem that stops the run (a bad record).
  std::optional<Located> CountBatch(ThreadState& state, const Batch& batch);
  void Report(Located problem);
  absl::Status Describe(Located problem) const;

  const CountCorpusOptions& options_;
  const CountTools& tools_;
  BatchReader& reader_;
  bool file_mode_ = false;
  CountProgress* progress_ = nullptr;
  tbb::enumerable_thread_specific<ThreadState> states_;
  std::atomic<bool> failed_{false};
  std::mutex error_mu_;
  std::optional<Located> error_;
};

absl::Status CorpusCounter::Run(int threads, ProgressFormat progress_format, CorpusCounts& out) {
  file_mode_ = options_.doc_mode == "file";
  CountProgress progress(progress_format, reader_.total_disk_bytes());
  progress_ = &progress;
  tbb::task_arena arena(threads);
  arena.execute([&] {
    tbb::parallel_pipeline(
        static_cast<size_t>(threads) * 2,
        tbb::make_filter<void, BatchReader::Ticket>(
            tbb::filter_mode::serial_in_order,
            [&](tbb::flow_control& control) {
              BatchReader::Ticket ticket;
              while (reader_.NextTicket(&ticket)) {
                if (!AfterProblem(ticket)) return ticket;
                reader_.Abandon(ticket);
              }
              control.stop();
              return ticket;
            }) &
            tbb::make_filter<BatchReader::Ticket, void>(
                tbb::filter_mode::parallel,
                [&](const BatchReader::Ticket& ticket) { ProcessTicket(ticket); }));
  });
  if (error_.has_value()) return Describe(*error_);

  std::vector<CountState*> states;
  std::optional<Located> first_skipped;
  for (ThreadState& s : states_) {
    states.push_back(&s);
    out.skipped_records += s.skipped;
    if (s.first_skipped && (!first_skipped || s.first_skipped->Before(*first_skipped))) {
      first_skipped = s.first_skipped;
    }
  }
  MergeCountStates(states, arena, out);
  states_.clear();
  if (first_skipped) out.first_skipped = Message(Describe(*first_skipped));
  progress.Finish(out.words.unique_words());
  return absl::OkStatus();
}

bool CorpusCounter::AfterProblem(const BatchReader::Ticket& ticket) {
  if (!failed_.load(std::memory_order_acquire)) return false;
  std::lock_guard<std::mutex> lock(error_mu_);
  if (error_->input != ticket.input) return error_->input < ticket.input;
  // A stream's next batch follows every batch already filled, the one with the problem too.
  return ticket.stream || ticket.start >= error_->offset;
}

void CorpusCounter::ProcessTicket(const BatchReader::Ticket& ticket) {
  if (AfterProblem(ticket)) {
    reader_.Abandon(ticket);
    return;
  }
  ThreadState& state = states_.local();
  Batch& batch = state.batch;
  absl::Status status = reader_.Fill(ticket, &batch);
  if (!status.ok()) {
    // The documents read before a stream's fault come first: a bad record among them is the
    // problem to report, as it would be with smaller batches.
    if (std::optional<Located> problem = CountBatch(state, batch)) Report(std::move(*problem));
    Located problem;
    problem.input = ticket.input;
    problem.offset = ticket.stream ? batch.offset + batch.end : ticket.start;
    problem.status = status;
    Report(std::move(problem));
    return;
  }
  uint64_t documents_before = state.documents;
  size_t unique_before = state.words.unique_words();
  if (std::optional<Located> problem = CountBatch(state, batch)) {
    Report(std::move(*problem));
    return;
  }
  progress_->AddBatch(batch.disk_bytes, state.documents - documents_before,
                      static_cast<int64_t>(state.words.unique_words() - unique_before));
}

std::optional<Located> CorpusCounter::CountBatch(ThreadState& state, const Batch& batch) {
  std::string_view text = batch.text();
  if (text.empty()) return std::nullopt;
  const InputFile& input = reader_.inputs()[batch.input];
  if (input.format == RecordFormat::kJsonLines) {
    if (state.json == nullptr) state.json = std::make_unique<JsonTextExtractor>(options_.text_field);
    uint64_t line = batch.first_line;
    for (size_t start = 0; start < text.size();) {
      size_t newline = text.find('\n', start);
      size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
      std::string_view record = text.substr(start, end - start);
      std::string_view document;
      JsonTextExtractor::Problem problem;
      std::string detail;
      if (!IsBlankLine(record)) {
        if (state.json->Extract(record, &document, &problem, &detail)) {
          state.CountWholeDocument(tools_, document);
        } else {
          Located located{batch.input, batch.offset + start, line, std::move(detail), absl::OkStatus()};
          if (!options_.skip_bad_records) return located;
          ++state.skipped;
          if (!state.first_skipped || located.Before(*state.first_skipped)) {
            state.first_skipped = std::move(located);
          }
        }
      }
      if (line != 0) ++line;
      start = end;
    }
    return std::nullopt;
  }
  state.AddTextTotals(text);
  if (file_mode_) {
    // A batch of a file is a stretch between two cuts the pre-tokenizer would make anyway.
    if (batch.offset == 0) ++state.documents;
    state.CountPieces(tools_, text);
    return std::nullopt;
  }
  for (size_t start = 0; start < text.size();) {
    size_t newline = text.find('\n', start);
    size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    ++state.documents;
    state.CountPieces(tools_, text.substr(start, end - start));
    start = end;
  }
  return std::nullopt;
}

void CorpusCounter::Report(Located problem) {
  std::lock_guard<std::mutex> lock(error_mu_);
  if (!error_ || problem.Before(*error_)) error_ = std::move(problem);
  failed_.store(true, std::memory_order_release);
}

absl::Status CorpusCounter::Describe(Located problem) const {
  if (!problem.status.ok()) return problem.status;
  std::string where = reader_.inputs()[problem.input].display_name();
  uint64_t line = problem.line;
  if (line == 0) {
    absl::StatusOr<uint64_t> found = reader_.LineNumberAt(problem.input, problem.offset);
    if (found.ok()) line = *found;
  }
  if (line != 0) {
    StrAppend(&where, ":", line);
  } else {
    StrAppend(&where, " at byte ", problem.offset);
  }
  std::string hint = options_.skip_bad_records ? "" : " (`skip_bad_records` skips such records)";
  return MentioningOptions(absl::InvalidArgumentError(StrCat(where, ": ", problem.detail, hint)),
                           {"text_field", "skip_bad_records"});
}


}  // namespace

CutRule CutRuleFor(const InputFile& input, const CountCorpusOptions& options) {
  if (input.format == RecordFormat::kJsonLines || options.doc_mode == "line") {
    return CutRule(CutKind::kLine);
  }
  auto special_holds = [&](char c) {
    return std::any_of(options.special_tokens.begin(), options.special_tokens.end(),
                       [c](const std::string& s) { return s.find(c) != std::string::npos; });
  };
  const bool spaced_special = special_holds(' ');
  // A custom pattern may cut anywhere; the metaspace prefix and no split need the whole
  // document.
  const std::string& preset = options.pretokenizer.preset;
  if (preset == "custom" || preset == "metaspace" || preset == "none" || spaced_special) {
    return CutRule(CutKind::kNever);
  }
  return CutRule(special_holds('\n') ? CutKind::kBetweenWords : CutKind::kBetweenWordsAndLines);
}

int ThreadCount(int requested) {
  const int cores = std::max(1, tbb::info::default_concurrency());
  // Far more threads than cores only costs: `--threads 100000` on 2 cores made an encode of 24 MB
  // take a minute and 900 MB (a thread, a shard and a pipeline token each).
  return requested > 0 ? std::min(requested, std::max(64, 8 * cores)) : cores;
}

CountTotals CorpusCounts::Totals() const {
  CountTotals t;
  t.files = files;
  t.documents = documents;
  t.bytes = bytes;
  t.words = words.total_words();
  t.unique_words = words.unique_words();
  t.invalid_utf8 = invalid_utf8;
  t.nul_bytes = nul_bytes;
  t.skipped_records = skipped_records;
  return t;
}

absl::StatusOr<CorpusCounts> CountCorpus(const CountCorpusOptions& options) {
  TM_ASSIGN_OR_RETURN(CorpusPlan plan, PlanCorpus(options));
  return CountCorpus(std::move(plan));
}

absl::StatusOr<CorpusCounts> CountCorpus(CorpusPlan plan) {
  const CountCorpusOptions& options = plan.options;
  const ProgressFormat progress = options.progress;
  TM_ASSIGN_OR_RETURN(CountTools tools, CountTools::Create(options));
  std::vector<InputFile> inputs = std::move(plan.inputs);
  CorpusCounts result;
  result.files = inputs.size();
  if (!inputs.empty()) {
    int threads = ThreadCount(options.threads);
    // Allow more threads than cores when asked for (tests run 8 threads on small machines).
    tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                    static_cast<size_t>(threads));
    std::vector<CutRule> rules;
    for (const InputFile& input : inputs) rules.push_back(CutRuleFor(input, options));
    BatchReaderOptions reader_options;
    reader_options.shard_bytes = options.shard_bytes;
    reader_options.batch_bytes = options.batch_bytes;
    reader_options.padding = kJsonPadding;
    reader_options.max_open_streams = static_cast<size_t>(threads);
    reader_options.min_shards = static_cast<size_t>(threads) * 4;
    BatchReader reader(std::move(inputs), std::move(rules), reader_options);
    CorpusCounter counter(options, tools, reader);
    TM_RETURN_IF_ERROR(counter.Run(threads, progress, result));
  }
  TM_RETURN_IF_ERROR(FinishCount(plan.counts_files, result));
  return result;
}

}  // namespace tokenmill
