#include "train_checkpointing.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <ctime>
#include <unistd.h>

#include "common/strings.h"

namespace tokenmill::cli {
namespace {

std::atomic<int> g_signal{0};

extern "C" void HandleInterrupt(int sig) {
  int expected = 0;
  if (!g_signal.compare_exchange_strong(expected, sig)) {
    // Second signal: leave now; the last complete checkpoint is on disk (writes are atomic).
    static const char kMessage[] = "\ntokenmill: second interrupt, exiting at once\n";
    ssize_t ignored = ::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
    (void)ignored;
    _exit(128 + sig);
  }
}

double NowSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

// A run killed (SIGKILL, power loss) while writing leaves its temporary file behind
// (WriteFileAtomically names them PATH.tmp.XXXXXX); the next writer of PATH removes them.
void RemoveStaleTemporaries(const std::string& path) {
  std::filesystem::path target(path);
  std::filesystem::path dir = target.parent_path().empty() ? "." : target.parent_path();
  std::string prefix = target.filename().string() + ".tmp.";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().starts_with(prefix) && entry.is_regular_file(ec)) {
      std::filesystem::remove(entry.path(), ec);
    }
  }
}


void AddCheckpointFlags(FlagSet& flags, CheckpointCommandOptions* options) {
  flags.AddString("checkpoint", &options->checkpoint,
                  "checkpoint file (\"none\": no checkpoints; default: OUTPUT.ckpt)");
  flags.AddUint64("checkpoint-every", &options->checkpoint_every,
                  "also write a checkpoint every N merges (0: only after counting, at the end and on Ctrl-C)");
  flags.AddDouble("checkpoint-interval", &options->checkpoint_interval,
                  "also write a checkpoint when this many seconds passed since the last (0: off)");
  flags.AddString("resume", &options->resume,
                  "continue an interrupted run from this checkpoint (a larger --vocab-size extends a finished one)");
  flags.AddBool("ignore-corpus-change", &options->ignore_corpus_change,
                "resume even if the corpus files changed since the checkpoint");
}

bool IsHarmlessSetting(std::string_view name) {
  static constexpr std::string_view kHarmless[] = {
      "threads", "progress", "verbose", "quiet", "output", "format", "checkpoint",
      "checkpoint-every", "checkpoint-interval", "resume", "ignore-corpus-change"};
  for (std::string_view h : kHarmless) {
    if (h == name) return true;
  }
  return false;
}

std::string CheckpointPath(const CheckpointCommandOptions& options, const std::string& output) {
  if (options.checkpoint == "none") return "";
  if (!options.checkpoint.empty()) return options.checkpoint;
  // An output that is a device or a pipe (/dev/stdout, /dev/full) has no folder of its own to
  // hold OUTPUT.ckpt: no checkpoint unless --checkpoint names one.
  std::error_code ec;
  auto status = std::filesystem::status(output, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    return "";
  }
  return output + ".ckpt";
}

absl::Status ResumeSettings(const Checkpoint& checkpoint, int argc, char** argv, int first,
                            const std::function<void(FlagSet&)>& register_flags, FlagSet& flags) {
  FlagSet given("train", "", "");
  register_flags(given);
  absl::StatusOr<std::vector<std::string>> positional = given.Parse(argc, argv, first);
  if (!positional.ok()) return positional.status();
  if (!positional->empty()) {
    return absl::InvalidArgumentError(StrCat(
        "with --resume, give no input files: the checkpoint holds the counted corpus (got '",
        (*positional)[0], "')"));
  }
  auto values_of = [](const std::vector<std::pair<std::string, std::string>>& all,
                      std::string_view name) {
    std::vector<std::string> values;
    for (const auto& [key, value] : all) {
      if (key == name) values.push_back(value);
    }
    return values;
  };
  std::vector<std::pair<std::string, std::string>> given_values = given.CurrentValues();
  std::vector<std::string> overrides;  // flags to apply on top of the checkpoint's settings
  for (const auto& [name, value] : given_values) {
    if (!given.WasSet(name)) continue;
    if (std::find(overrides.begin(), overrides.end(), name) != overrides.end()) continue;
    if (IsHarmlessSetting(name) || name == "vocab-size") {
      overrides.push_back(name);
      continue;
    }
    std::vector<std::string> now = values_of(given_values, name);
    std::vector<std::string> then = values_of(checkpoint.settings, name);
    if (now != then) {
      auto join = [](const std::vector<std::string>& v) {
        std::string out;
        for (const std::string& s : v) out += (out.empty() ? "'" : ", '") + s + "'";
        return out.empty() ? std::string("none") : out;
      };
      return absl::InvalidArgumentError(StrCat(
          "--", name, " is ", join(now), " but the checkpoint was trained with ", join(then),
          "; it changes the result, so it cannot change on resume (leave it out)"));
    }
  }
  for (const auto& [name, value] : checkpoint.settings) {
    if (name == "resume") continue;
    absl::Status status = flags.Set(name, value);
    if (!status.ok()) {
      return absl::InvalidArgumentError(StrCat("the checkpoint's setting --", name, "=", value,
                                               " is not understood: ", Message(status)));
    }
  }
  for (const std::string& name : overrides) {
    for (const std::string& value : values_of(given_values, name)) {
      absl::Status status = flags.Set(name, value);
      if (!status.ok()) return status;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckCorpusUnchanged(const Checkpoint& checkpoint, bool ignore_change) {
  std::vector<std::string> paths;
  for (const CorpusFileStamp& f : checkpoint.corpus_files) paths.push_back(f.path);
  absl::StatusOr<std::vector<CorpusFileStamp>> now = StampFiles(paths);
  std::string change;
  if (!now.ok()) {
    change = std::string(Message(now.status()));
  } else {
    for (size_t i = 0; i < paths.size() && change.empty(); ++i) {
      if (!((*now)[i] == checkpoint.corpus_files[i])) {
        change = StrCat("corpus file '", paths[i], "' changed since the checkpoint (size ",
                        checkpoint.corpus_files[i].size, " -> ", (*now)[i].size,
                        ", or its modification time)");
      }
    }
  }
  if (change.empty()) return absl::OkStatus();
  if (ignore_change) {
    std::fprintf(stderr, "tokenmill train: warning: %s; resuming anyway (--ignore-corpus-change)\n",
                 change.c_str());
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(StrCat(
      change, "; the checkpoint's counts no longer describe it. Resume anyway with "
      "--ignore-corpus-change, or start a new run"));
}

InterruptGuard::InterruptGuard() {
  g_signal.store(0);
  struct sigaction action {};
  action.sa_handler = HandleInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

InterruptGuard::~InterruptGuard() {
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
}

int InterruptGuard::signal_number() { return g_signal.load(); }

TrainingCheckpointer::TrainingCheckpointer(std::string path,
                                           const CheckpointCommandOptions& options,
                                           Checkpoint base, int threads,
                                           const WordCounts* words)
    : path_(std::move(path)),
      every_(options.checkpoint_every),
      interval_(options.checkpoint_interval),
      base_(std::move(base)),
      words_(words),
      writer_(threads),
      last_write_seconds_(NowSeconds()) {
  if (base_.merges_raw_count != 0) {  // as read from a checkpoint
    merges_raw_ = std::move(base_.merges_raw);
    merge_count_ = base_.merges_raw_count;
  } else {
    merges_raw_ = CheckpointWriter::SerializeMerges(base_.merges, base_.merge_counts);
    merge_count_ = base_.merges.size();
  }
  std::vector<std::pair<std::string, std::string>>().swap(base_.merges);
  std::vector<uint64_t>().swap(base_.merge_counts);
  std::string().swap(base_.merges_raw);
  base_.merges_raw_count = 0;
  if (!base_.words_frame.empty()) {
    // Resumed: the table's compressed frame is the checkpoint's own.
    writer_.AdoptWordTable(std::move(base_.words_frame), base_.word_table_hash,
                           base_.unique_words, base_.total_words, base_.words_file,
                           base_.words_frame_crc);
    base_.words_frame = SharedBytes();
    table_serialized_ = true;
  }
}

TrainingCheckpointer::~TrainingCheckpointer() { CollectPending(); }

TrainingCheckpointer::WriteResult TrainingCheckpointer::WriteSnapshot(
    const Checkpoint& snapshot, std::string_view merges_raw, uint64_t merge_count) {
  double start = NowSeconds();
  RemoveStaleTemporaries(path_);
  RemoveStaleTemporaries(WordTablePath(path_));
  WriteResult result;
  bool serialized;
  {
    std::lock_guard<std::mutex> lock(table_mutex_);
    serialized = table_serialized_;
  }
  if (!serialized) {
    writer_.SerializeWordTable(*words_);
    {
      std::lock_guard<std::mutex> lock(table_mutex_);
      table_serialized_ = true;
    }
    table_done_.notify_all();
  }
  // The writer compresses the table on its first write (here, in the background).
  result.status = writer_.Write(snapshot, merges_raw, merge_count, path_);
  result.seconds = NowSeconds() - start;
  return result;
}

void TrainingCheckpointer::CollectPending() {
  if (!pending_.valid()) return;
  WriteResult result = pending_.get();
  ++writes_;
  write_seconds_ += result.seconds;
  if (!result.status.ok() && status_.ok()) status_ = result.status;
}

absl::Status TrainingCheckpointer::WriteNow(bool finished) {
  if (path_.empty()) return absl::OkStatus();
  CollectPending();
  if (!status_.ok()) return status_;
  base_.finished = finished;
  base_.created_unix_seconds = static_cast<int64_t>(std::time(nullptr));
  WriteResult result = WriteSnapshot(base_, merges_raw_, merge_count_);
  ++writes_;
  write_seconds_ += result.seconds;
  last_write_seconds_ = NowSeconds();
  deferred_ = false;
  return result.status;
}

void TrainingCheckpointer::ReleaseWordTable() {
  if (path_.empty() || words_ == nullptr) return;
  if (pending_.valid()) {
    // A write in flight copies the table first: wait for that part only, not for zstd or disk.
    std::unique_lock<std::mutex> lock(table_mutex_);
    table_done_.wait(lock, [this] { return table_serialized_; });
  }
  bool serialized;
  {
    std::lock_guard<std::mutex> lock(table_mutex_);
    serialized = table_serialized_;
  }
  if (!serialized) {
    CollectPending();
    writer_.SerializeWordTable(*words_);  // the next write compresses it
    std::lock_guard<std::mutex> lock(table_mutex_);
    table_serialized_ = true;
  }
  words_ = nullptr;
}

bool TrainingCheckpointer::AfterStep(const TrainEvent& event) {
  if (!path_.empty() && merge_count_ < event.steps_done && event.merge != nullptr) {
    CheckpointWriter::AppendMerge(&merges_raw_, event.merge->left, event.merge->right,
                                  event.merge->count);
    ++merge_count_;
  }
  if (InterruptGuard::signal_number() != 0) {
    absl::Status status = WriteNow(false);
    if (!status.ok() && status_.ok()) status_ = status;
    return false;
  }
  // Replayed merges are in the checkpoint already: no write falls due while they are reported.
  if (path_.empty() || event.replayed) return true;
  bool due = deferred_ || (every_ > 0 && event.steps_done % every_ == 0) ||
             (interval_ > 0 && NowSeconds() - last_write_seconds_ >= interval_);
  if (!due) return true;
  if (pending_.valid() &&
      pending_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    deferred_ = true;  // the disk is slower than the cadence: write as soon as it is free
    return true;
  }
  StartWrite();
  return status_.ok();
}

absl::Status TrainingCheckpointer::Finish() {
  CollectPending();
  return status_;
}

void TrainingCheckpointer::StartWrite(bool finished) {
  if (path_.empty()) return;
  CollectPending();
  if (!status_.ok()) return;
  deferred_ = false;
  base_.finished = finished;
  base_.created_unix_seconds = static_cast<int64_t>(std::time(nullptr));
  last_write_seconds_ = NowSeconds();
  // Everything but the word table (the writer holds it, or reads it through words_ first).
  Checkpoint snapshot;
  snapshot.settings = base_.settings;
  snapshot.corpus_files = base_.corpus_files;
  snapshot.documents = base_.documents;
  snapshot.corpus_bytes = base_.corpus_bytes;
  snapshot.finished = base_.finished;
  snapshot.created_unix_seconds = base_.created_unix_seconds;
  pending_ = std::async(std::launch::async, [this, snapshot = std::move(snapshot),
                                             merges = merges_raw_, count = merge_count_]() {
    return WriteSnapshot(snapshot, merges, count);
  });
}

}  // namespace tokenmill::cli
