// The library's resumable training run (lib/driver), without the CLI: training through the
// library API, stopped, resumed from its checkpoint, ends as one uninterrupted run; the stored
// options and the rule for what a resume may change; checkpoints of formats 2-4; runs on
// documents handed over (TrainingRun::Start with a DocumentSource).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/info.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "common/file_util.h"
#include "common/option_error.h"
#include "driver/stored_options.h"
#include "driver/training_run.h"
#include "model/model_file.h"
#include "reference/cli_runner.h"
#include "reference/shared_corpus.h"

namespace tokenmill {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

const std::string kSample = std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/sample.txt";

std::string ReadAll(const std::string& path) {
  absl::StatusOr<std::string> data = ReadFile(path);
  EXPECT_TRUE(data.ok()) << data.status();
  return data.ok() ? *data : "";
}

TrainingRunOptions SampleOptions(const std::string& output, bool hf_compat) {
  TrainingRunOptions options;
  options.corpus.inputs = {kSample};
  options.corpus.progress = ProgressFormat::kNone;
  options.trainer.vocab_size = 1200;
  options.trainer.hf_compat = hf_compat;
  if (hf_compat) {
    options.corpus.special_tokens = {"<|endoftext|>"};
    options.trainer.special_tokens_at = SpecialTokensAt::kStart;
  }
  options.output = output;
  return options;
}

absl::StatusOr<RunOutcome> RunToTheEnd(TrainingRunOptions options) {
  absl::StatusOr<TrainingRun> run = TrainingRun::Start(std::move(options));
  if (!run.ok()) return run.status();
  return run->Run();
}

// The legacy checkpoints' corpus (tests/data/README.md) in `dir`, and a new run on it with
// `options` to vocab 460, written to dir/fresh.json.
void NewRunOnTheLegacyCorpus(const TempDir& dir, TrainingRunOptions options) {
  std::string corpus = ReadAll(kSample).substr(0, 20000) + "aaaa aaaaaaa aaa ---- ==== ====== zzzz\n";
  options.corpus.inputs = {dir.Write("c.txt", corpus)};
  options.corpus.progress = ProgressFormat::kNone;
  options.trainer.vocab_size = 460;
  options.output = dir.File("fresh.json");
  options.checkpoint = "none";
  ASSERT_TRUE(RunToTheEnd(options).ok());
}

// Copies checkpoint `name` of tests/data/checkpoint_vN/ (and its table file) into `dir`: a
// resumed run writes its checkpoints there.
void CopyCheckpoint(int version, const std::string& name, const TempDir& dir) {
  const std::string source = std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/checkpoint_v" +
                             std::to_string(version) + "/" + name;
  std::filesystem::copy(source, dir.File(name));
  std::filesystem::copy(source + ".words", dir.File(name + ".words"));
}

TEST(TrainingRun, StoppedAndResumedEndsAsOneUninterruptedRun) {
  for (bool hf_compat : {false, true}) {
    SCOPED_TRACE(hf_compat ? "hf_compat" : "native");
    TempDir dir;
    TrainingRunOptions whole = SampleOptions(dir.File("whole.json"), hf_compat);
    whole.checkpoint = "none";
    absl::StatusOr<RunOutcome> uninterrupted = RunToTheEnd(whole);
    ASSERT_TRUE(uninterrupted.ok()) << uninterrupted.status();
    EXPECT_EQ(uninterrupted->result.model->VocabSize(), 1200u);

    // Stopped after 300 merges: the checkpoint holds them and no tokenizer is written.
    TrainingRunOptions options = SampleOptions(dir.File("run.json"), hf_compat);
    options.checkpoint_every = 100;
    absl::StatusOr<TrainingRun> run = TrainingRun::Start(options);
    ASSERT_TRUE(run.ok()) << run.status();
    size_t steps = 0;
    RunHooks hooks;
    hooks.on_step = [&](const TrainEvent& event) { steps = event.steps_done; };
    hooks.stop_requested = [&] { return steps >= 300; };
    absl::StatusOr<RunOutcome> stopped = run->Run(hooks);
    ASSERT_TRUE(stopped.ok()) << stopped.status();
    EXPECT_TRUE(stopped->interrupted);
    EXPECT_EQ(stopped->checkpoint_path, dir.File("run.json.ckpt"));
    EXPECT_EQ(stopped->checkpoint_merges, 300u);
    EXPECT_FALSE(std::filesystem::exists(dir.File("run.json")));
    absl::StatusOr<Checkpoint> checkpoint = ReadCheckpoint(dir.File("run.json.ckpt"));
    ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
    EXPECT_EQ(checkpoint->merges.size(), 300u);
    EXPECT_FALSE(checkpoint->finished);

    // Resumed with nothing given: every option comes from the checkpoint.
    absl::StatusOr<TrainingRun> resumed =
        TrainingRun::Resume(dir.File("run.json.ckpt"), TrainingRunOptions(), {}, false);
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    EXPECT_TRUE(resumed->resumed());
    EXPECT_EQ(resumed->resumed_merges(), 300u);
    EXPECT_EQ(resumed->options().trainer.vocab_size, 1200u);
    EXPECT_EQ(resumed->options().trainer.hf_compat, hf_compat);
    EXPECT_EQ(resumed->options().output, dir.File("run.json"));
    EXPECT_EQ(resumed->options().checkpoint_every, 100u);
    size_t replayed = 0;
    RunHooks count_replayed;
    count_replayed.on_step = [&](const TrainEvent& event) { replayed += event.replayed; };
    absl::StatusOr<RunOutcome> finished = resumed->Run(count_replayed);
    ASSERT_TRUE(finished.ok()) << finished.status();
    EXPECT_FALSE(finished->interrupted);
    EXPECT_EQ(replayed, 300u);
    EXPECT_EQ(ReadAll(dir.File("run.json")), ReadAll(dir.File("whole.json")));
    absl::StatusOr<Checkpoint> last = ReadCheckpoint(dir.File("run.json.ckpt"));
    ASSERT_TRUE(last.ok()) << last.status();
    EXPECT_TRUE(last->finished);
    EXPECT_EQ(last->merge_counts, uninterrupted->result.merge_counts);
  }
}

// A run that fails after counting keeps its checkpoint unless nothing can be learned from the
// words: with --hf-compat a vocab_size below the alphabet is found only after counting, and a
// resume with a larger one succeeds from the counts (hours of counting on a big corpus).
TEST(TrainingRun, AFailedRunKeepsItsCheckpointUnlessNothingCanBeLearned) {
  TempDir dir;
  TrainingRunOptions options = SampleOptions(dir.File("small.json"), /*hf_compat=*/true);
  options.trainer.vocab_size = 20;
  absl::StatusOr<RunOutcome> failed = RunToTheEnd(options);
  ASSERT_FALSE(failed.ok());
  EXPECT_FALSE(IsNothingToLearn(failed.status())) << failed.status();
  EXPECT_FALSE(std::filesystem::exists(dir.File("small.json")));
  ASSERT_TRUE(std::filesystem::exists(dir.File("small.json.ckpt")));
  TrainingRunOptions larger;
  larger.trainer.vocab_size = 1200;
  absl::StatusOr<TrainingRun> resumed =
      TrainingRun::Resume(dir.File("small.json.ckpt"), larger, {"vocab_size"}, false);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  absl::StatusOr<RunOutcome> done = resumed->Run();
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->result.model->VocabSize(), 1200u);

  // Nothing to learn (every word one byte): the failed run leaves no checkpoint.
  TrainingRunOptions single;
  single.corpus.inputs = {dir.Write("one_byte_words.txt", "a b c\nb a\n")};
  single.corpus.progress = ProgressFormat::kNone;
  single.corpus.pretokenizer = {"custom", "\\S|\\s"};
  single.trainer.vocab_size = 300;
  single.output = dir.File("single.json");
  absl::StatusOr<RunOutcome> nothing = RunToTheEnd(single);
  ASSERT_FALSE(nothing.ok());
  EXPECT_TRUE(IsNothingToLearn(nothing.status())) << nothing.status();
  EXPECT_FALSE(std::filesystem::exists(dir.File("single.json.ckpt")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("single.json.ckpt.words")));
}

TEST(TrainingRun, AResumeMayExtendAndChangeWhatDoesNotChangeTheResult) {
  TempDir dir;
  absl::StatusOr<RunOutcome> first = RunToTheEnd(SampleOptions(dir.File("t.json"), false));
  ASSERT_TRUE(first.ok()) << first.status();
  TrainingRunOptions direct = SampleOptions(dir.File("direct.json"), false);
  direct.trainer.vocab_size = 1400;
  direct.checkpoint = "none";
  ASSERT_TRUE(RunToTheEnd(direct).ok());

  TrainingRunOptions given;
  given.trainer.vocab_size = 1400;
  given.corpus.threads = 1;
  given.output = dir.File("extended.json");
  const std::vector<std::string> set = {"vocab_size", "threads", "output"};
  absl::StatusOr<TrainingRun> resumed =
      TrainingRun::Resume(dir.File("t.json.ckpt"), given, set, false);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->options().trainer.threads, 1);  // the corpus's, harmonized
  EXPECT_EQ(resumed->options().checkpoint, "");      // not set: the checkpoint's
  ASSERT_TRUE(resumed->Run().ok());
  EXPECT_EQ(ReadAll(dir.File("extended.json")), ReadAll(dir.File("direct.json")));

  // An option that changes the result is refused by name, with both values.
  given.trainer.min_frequency = 3;
  absl::StatusOr<TrainingRun> refused =
      TrainingRun::Resume(dir.File("t.json.ckpt"), given, {"min_frequency"}, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(IsOptionError(refused.status()));
  EXPECT_EQ(OptionNamesOf(refused.status()), std::vector<std::string>{"min_frequency"});
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("`min_frequency` is '3' but the checkpoint was trained with '0'"));
  // The same value is no change.
  given.trainer.min_frequency = 0;
  EXPECT_TRUE(TrainingRun::Resume(dir.File("t.json.ckpt"), given, {"min_frequency"}, false).ok());
  // Inputs cannot be given: the checkpoint holds the corpus.
  given.corpus.inputs = {kSample};
  absl::StatusOr<TrainingRun> with_inputs =
      TrainingRun::Resume(dir.File("t.json.ckpt"), given, {"inputs"}, false);
  ASSERT_FALSE(with_inputs.ok());
  EXPECT_THAT(std::string(with_inputs.status().message()), HasSubstr("give no input files"));
}

// ---- runs on documents handed over ----------------------------------------------------------

// Hands the lines of `text` (each with its '\n') over, `per_batch` at a time; the last batch
// comes with `false`. `fail_at`: that call returns `error` instead (0: none).
DocumentSource LinesSource(const std::string& text, size_t per_batch, size_t fail_at = 0,
                           absl::Status error = absl::OkStatus()) {
  auto next = std::make_shared<size_t>(0);
  auto calls = std::make_shared<size_t>(0);
  return [&text, per_batch, fail_at, error, next, calls](DocumentBatch& batch) -> absl::StatusOr<bool> {
    if (++*calls == fail_at) return error;
    while (*next < text.size() && batch.ends.size() < per_batch) {
      size_t newline = text.find('\n', *next);
      size_t end = newline == std::string::npos ? text.size() : newline + 1;
      batch.text.append(text, *next, end - *next);
      batch.ends.push_back(batch.text.size());
      *next = end;
    }
    return *next < text.size();
  };
}

// Brown's first `bytes` (about), or "" when the shared corpus is missing.
std::string BrownSlice(size_t bytes) {
  std::string text = testing::ReadSharedCorpus("brown", bytes);
  return text.substr(0, std::min(text.size(), bytes));
}

TrainingRunOptions BrownOptions(const std::string& output, Algorithm algorithm) {
  TrainingRunOptions options;
  options.corpus.progress = ProgressFormat::kNone;
  options.corpus.threads = 2;
  options.trainer.algorithm = algorithm;
  options.trainer.vocab_size = 2000;
  if (algorithm == Algorithm::kUnigram) {
    options.trainer.units = UnitKind::kChar;
    options.trainer.special_tokens_at = SpecialTokensAt::kStart;
    options.trainer.vocab_size = 1000;
    options.corpus.pretokenizer.preset = "metaspace";
  }
  options.output = output;
  return options;
}

// `threads` far beyond the cores is capped for the whole run (corpus reading and trainer), as
// for counting and encoding: 100,000 threads on 2 cores were a thread, a stack and a shard each.
TEST(TrainingRun, ThreadsFarBeyondTheCoresAreCapped) {
  const int cap = std::max(64, 8 * tbb::info::default_concurrency());
  for (const auto& [asked, expected] : std::vector<std::pair<int, int>>{{0, 0}, {3, 3}, {cap, cap}, {100000, cap}}) {
    TrainingRunOptions options;
    options.corpus.threads = asked;
    options.Harmonize();
    EXPECT_EQ(options.corpus.threads, expected) << asked;
    EXPECT_EQ(options.trainer.threads, expected) << asked;
  }
}

// The lines of brown handed over train the tokenizer.json the file trains, byte for byte (BPE
// and Unigram); the counts are checkpointed after counting, with no corpus file.
TEST(TrainingRun, DocumentsHandedOverTrainWhatTheirFileTrains) {
  for (Algorithm algorithm : {Algorithm::kBpe, Algorithm::kUnigram}) {
    SCOPED_TRACE(std::string(AlgorithmName(algorithm)));
    const std::string brown = BrownSlice(algorithm == Algorithm::kBpe ? 1000000 : 300000);
    if (brown.empty()) GTEST_SKIP() << "shared corpus brown not found";
    TempDir dir;
    TrainingRunOptions from_file = BrownOptions(dir.File("file.json"), algorithm);
    from_file.corpus.inputs = {dir.Write("brown.txt", brown)};
    from_file.checkpoint = "none";
    absl::StatusOr<RunOutcome> file_run = RunToTheEnd(from_file);
    ASSERT_TRUE(file_run.ok()) << file_run.status();

    TrainingRunOptions handed = BrownOptions(dir.File("documents.json"), algorithm);
    absl::StatusOr<TrainingRun> run = TrainingRun::Start(handed, LinesSource(brown, 100));
    ASSERT_TRUE(run.ok()) << run.status();
    absl::StatusOr<RunOutcome> outcome = run->Run();
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    EXPECT_EQ(ReadAll(dir.File("documents.json")), ReadAll(dir.File("file.json")));
    EXPECT_EQ(outcome->documents, file_run->documents);
    EXPECT_EQ(outcome->corpus_bytes, brown.size());
    EXPECT_EQ(outcome->unique_words, file_run->unique_words);
    EXPECT_GT(outcome->documents, 2000u);
    // One checkpoint after counting, one at the end.
    EXPECT_EQ(outcome->checkpoints_written, 2u);
    absl::StatusOr<Checkpoint> checkpoint = ReadCheckpoint(dir.File("documents.json.ckpt"));
    ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
    EXPECT_TRUE(checkpoint->corpus_files.empty());
    EXPECT_EQ(checkpoint->documents, file_run->documents);
    EXPECT_TRUE(checkpoint->finished);
  }
}

// A document run stopped right after counting, and again after 300 merges, resumes (from a
// checkpoint with no corpus files, the documents never asked for again) to the model one
// uninterrupted run on the file gives.
TEST(TrainingRun, AStoppedDocumentRunResumesToWhatTheFileTrains) {
  const std::string brown = BrownSlice(1000000);
  if (brown.empty()) GTEST_SKIP() << "shared corpus brown not found";
  TempDir dir;
  TrainingRunOptions from_file = BrownOptions(dir.File("file.json"), Algorithm::kBpe);
  from_file.corpus.inputs = {dir.Write("brown.txt", brown)};
  from_file.checkpoint = "none";
  ASSERT_TRUE(RunToTheEnd(from_file).ok());

  for (size_t stop_after : {size_t{0}, size_t{300}}) {
    SCOPED_TRACE("stopped after " + std::to_string(stop_after) + " merges");
    const std::string output = dir.File("documents" + std::to_string(stop_after) + ".json");
    absl::StatusOr<TrainingRun> run =
        TrainingRun::Start(BrownOptions(output, Algorithm::kBpe), LinesSource(brown, 1000));
    ASSERT_TRUE(run.ok()) << run.status();
    size_t steps = 0;
    RunHooks hooks;
    hooks.on_step = [&](const TrainEvent& event) { steps = event.steps_done; };
    hooks.stop_requested = [&] { return steps >= stop_after; };
    absl::StatusOr<RunOutcome> stopped = run->Run(hooks);
    ASSERT_TRUE(stopped.ok()) << stopped.status();
    EXPECT_TRUE(stopped->interrupted);
    EXPECT_EQ(stopped->checkpoint_merges, stop_after);
    EXPECT_FALSE(std::filesystem::exists(output));

    absl::StatusOr<TrainingRun> resumed =
        TrainingRun::Resume(output + ".ckpt", TrainingRunOptions(), {}, false);
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    EXPECT_TRUE(resumed->warnings().empty());
    EXPECT_TRUE(resumed->options().corpus.inputs.empty());
    EXPECT_EQ(resumed->resumed_merges(), stop_after);
    absl::StatusOr<RunOutcome> finished = resumed->Run();
    ASSERT_TRUE(finished.ok()) << finished.status();
    EXPECT_FALSE(finished->interrupted);
    EXPECT_EQ(ReadAll(output), ReadAll(dir.File("file.json")));
  }
}

// A source that fails (the binding's KeyboardInterrupt, the iterator's exception) fails the
// run with its status as it was, and leaves neither a model nor a checkpoint: a partial corpus
// must never be resumed.
TEST(TrainingRun, ASourceErrorLeavesNoModelAndNoCheckpoint) {
  TempDir dir;
  const std::string text = ReadAll(kSample);
  absl::Status interrupted = absl::CancelledError("KeyboardInterrupt");
  interrupted.SetPayload("tokenmill.test/python", absl::Cord("exception object"));
  for (size_t fail_at : {size_t{1}, size_t{5}}) {
    TrainingRunOptions options = SampleOptions(dir.File("failed.json"), false);
    options.corpus.inputs.clear();
    absl::StatusOr<TrainingRun> run =
        TrainingRun::Start(options, LinesSource(text, 10, fail_at, interrupted));
    ASSERT_TRUE(run.ok()) << run.status();
    absl::StatusOr<RunOutcome> outcome = run->Run();
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.status(), interrupted);
    EXPECT_FALSE(std::filesystem::exists(dir.File("failed.json")));
    EXPECT_FALSE(std::filesystem::exists(dir.File("failed.json.ckpt")));
    EXPECT_FALSE(std::filesystem::exists(dir.File("failed.json.ckpt.words")));
  }
}

TEST(TrainingRun, DocumentsWithInputsAreAnOptionErrorOnInputs) {
  TempDir dir;
  const std::string text = "some text\n";
  absl::StatusOr<TrainingRun> run =
      TrainingRun::Start(SampleOptions(dir.File("t.json"), false), LinesSource(text, 1));
  ASSERT_FALSE(run.ok());
  EXPECT_TRUE(IsOptionError(run.status()));
  EXPECT_EQ(OptionNamesOf(run.status()), std::vector<std::string>{"inputs"});
  // The other checks are Start's: a bad option, an output that cannot be written.
  TrainingRunOptions options = SampleOptions(dir.File("missing/t.json"), false);
  options.corpus.inputs.clear();
  EXPECT_FALSE(TrainingRun::Start(options, LinesSource(text, 1)).ok());
  options.output = dir.File("t.json");
  options.trainer.vocab_size = 0;
  absl::StatusOr<TrainingRun> bad = TrainingRun::Start(options, LinesSource(text, 1));
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(IsOptionError(bad.status())) << bad.status();
}

// Every field of every part, set to something other than its default, comes back.
TEST(StoredOptions, EveryFieldRoundTripsThroughACheckpoint) {
  TrainingRunOptions options;
  options.corpus.inputs = {"a.txt", "b/"};
  options.corpus.counts_files = {"c.tmc"};
  options.corpus.pretokenizer = {"custom", "[a-z]+| "};
  options.corpus.special_tokens = {"<s>", "</s>"};
  options.corpus.threads = 3;
  options.corpus.doc_mode = "file";
  options.corpus.text_field = "/body/text";
  options.corpus.input_format = "jsonl";
  options.corpus.include = {"*.txt"};
  options.corpus.exclude = {"*.log"};
  options.corpus.skip_bad_records = true;
  options.corpus.progress = ProgressFormat::kJson;
  options.corpus.shard_bytes = 12345;
  options.corpus.batch_bytes = 678;
  options.trainer.vocab_size = 777;
  options.trainer.min_frequency = 9;
  options.trainer.max_token_length = 12;
  options.trainer.special_tokens_at = SpecialTokensAt::kStart;
  options.trainer.hf_compat = true;
  options.output = "out.tiktoken";
  options.format = ModelFormat::kTiktoken;
  options.checkpoint = "x.ckpt";
  options.checkpoint_every = 50;
  options.checkpoint_interval = 2.5;
  options.Harmonize();
  Checkpoint c;
  StoreOptions(options, c);
  c.words.Add("ab", 2);
  absl::StatusOr<std::string> bytes = CheckpointWriter().Serialize(c);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<Checkpoint> parsed = ParseCheckpoint(*bytes, "mem");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<TrainingRunOptions> stored = StoredOptions(*parsed, "mem");
  ASSERT_TRUE(stored.ok()) << stored.status();
  for (const auto& field : CountCorpusOptions::Fields()) {
    EXPECT_TRUE(field.equal(stored->corpus, options.corpus)) << field.name;
    EXPECT_FALSE(field.equal(CountCorpusOptions(), options.corpus)) << field.name << " is default";
  }
  for (const auto& field : TrainerOptions::Fields()) {
    EXPECT_TRUE(field.equal(stored->trainer, options.trainer)) << field.name;
  }
  for (const auto& field : TrainingRunOptions::Fields()) {
    EXPECT_TRUE(field.equal(*stored, options)) << field.name;
    EXPECT_FALSE(field.equal(TrainingRunOptions(), options)) << field.name << " is default";
  }
}

// A field this version does not know (a newer writer's) is an error, never ignored.
TEST(StoredOptions, AnUnknownFieldIsAnError) {
  Checkpoint c;
  StoreOptions(TrainingRunOptions(), c);
  BinaryWriter w(&c.trainer_options);
  w.Varint(99);
  w.Bytes("x");
  absl::StatusOr<TrainingRunOptions> stored = StoredOptions(c, "new.ckpt");
  ASSERT_FALSE(stored.ok());
  EXPECT_THAT(std::string(stored.status().message()), HasSubstr("new.ckpt"));
  EXPECT_THAT(std::string(stored.status().message()), HasSubstr("field 99"));
}

// Checkpoints of formats 2, 3 and 4 (tests/data/README.md), written by earlier builds with
// `train --vocab-size 400 --output t.json --checkpoint vN.ckpt c.txt`, still resume: extended
// to 460 they give what a new run on the same corpus gives.
TEST(LegacyCheckpoints, ResumeToWhatANewRunGives) {
  TempDir dir;
  NewRunOnTheLegacyCorpus(dir, TrainingRunOptions());
  for (int version : {2, 3, 4}) {
    SCOPED_TRACE("format " + std::to_string(version));
    const std::string name = "v" + std::to_string(version) + ".ckpt";
    CopyCheckpoint(version, name, dir);
    absl::StatusOr<Checkpoint> checkpoint = ReadCheckpoint(dir.File(name));
    ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
    EXPECT_EQ(checkpoint->format_version, static_cast<uint32_t>(version));
    absl::StatusOr<TrainingRunOptions> stored = StoredOptions(*checkpoint, name);
    ASSERT_TRUE(stored.ok()) << stored.status();
    EXPECT_EQ(stored->trainer.vocab_size, 400u);
    EXPECT_EQ(stored->corpus.pretokenizer.preset, "gpt2");
    EXPECT_EQ(stored->output, "t.json");
    EXPECT_EQ(stored->checkpoint, name);
    TrainingRunOptions given;
    given.trainer.vocab_size = 460;
    given.output = dir.File(name + ".json");
    given.checkpoint = dir.File(name);  // the stored path is relative to where it was written
    // So is the corpus file (c.txt): it is not found, resumed anyway.
    absl::StatusOr<TrainingRun> resumed = TrainingRun::Resume(
        dir.File(name), given, {"vocab_size", "output", "checkpoint"}, true);
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    EXPECT_EQ(resumed->warnings().size(), 1u);
    absl::StatusOr<RunOutcome> outcome = resumed->Run();
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    EXPECT_EQ(ReadAll(dir.File(name + ".json")), ReadAll(dir.File("fresh.json")));
    // Its next checkpoint is of the current format.
    absl::StatusOr<Checkpoint> next = ReadCheckpoint(dir.File(name));
    ASSERT_TRUE(next.ok()) << next.status();
    EXPECT_EQ(next->format_version, kCheckpointFormatVersion);
  }
}

// tokenmill 0.1.0 stored --special-tokens-at as given ("end" by default) before giving
// --hf-compat runs the start, so ace9bed could not resume its own --hf-compat run with special
// tokens (it refused the stored "end"). tests/data/checkpoint_v4/v4_hf.ckpt is one such run
// (`train --vocab-size 400 --hf-compat --special-token '<|e|>' --output t.json
// --checkpoint v4_hf.ckpt c.txt` at ace9bed): it resumes with the special token at the start,
// as the run had it.
TEST(LegacyCheckpoints, AnHfCompatRunWithSpecialTokensResumesWithThemAtTheStart) {
  TempDir dir;
  CopyCheckpoint(4, "v4_hf.ckpt", dir);
  absl::StatusOr<Checkpoint> checkpoint = ReadCheckpoint(dir.File("v4_hf.ckpt"));
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  absl::StatusOr<TrainingRunOptions> stored = StoredOptions(*checkpoint, "v4_hf.ckpt");
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_TRUE(stored->trainer.hf_compat);
  EXPECT_EQ(stored->trainer.special_tokens, std::vector<std::string>{"<|e|>"});
  EXPECT_EQ(stored->trainer.special_tokens_at, SpecialTokensAt::kStart);

  NewRunOnTheLegacyCorpus(dir, *stored);
  TrainingRunOptions given;
  given.trainer.vocab_size = 460;
  given.output = dir.File("resumed.json");
  given.checkpoint = dir.File("v4_hf.ckpt");
  absl::StatusOr<TrainingRun> resumed = TrainingRun::Resume(
      dir.File("v4_hf.ckpt"), given, {"vocab_size", "output", "checkpoint"}, true);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ASSERT_TRUE(resumed->Run().ok());
  EXPECT_EQ(ReadAll(dir.File("resumed.json")), ReadAll(dir.File("fresh.json")));
  absl::StatusOr<BpeModel> model = LoadBpeModel(dir.File("resumed.json"));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->specials, (std::vector<SpecialToken>{{"<|e|>", 0}}));
}

}  // namespace
}  // namespace tokenmill
