// tokenmill train: a training run of the library (lib/driver/training_run.h) from flags, with
// Ctrl-C as its stop request, progress on stderr and a summary at the end.
#include <sys/resource.h>

#include <cstdio>

#include "absl/strings/str_format.h"
#include "commands.h"
#include "common/option_error.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "corpus_flags.h"
#include "driver/training_run.h"
#include "flags.h"
#include "interrupt.h"
#include "model/model_file.h"
#include "model/wordpiece/wordpiece_files.h"
#include "model/model_stats.h"
#include "model/tiktoken_file.h"
#include "option_flags.h"
#include "pretokenize/presets.h"
#include "train/train_progress.h"
#include "train/unigram/unigram_trainer.h"

namespace tokenmill::cli {
namespace {

struct TrainCommandOptions {
  TrainingRunOptions run;
  bool verbose = false;
  uint64_t log_every = 1000;
  bool quiet = false;
  std::string resume;  // continue from this checkpoint instead of reading a corpus
  bool ignore_corpus_change = false;
  // --algorithm wordpiece without --special-token: BERT's five special tokens.
  bool bert_specials = true;
  // A Hugging Face tokenizer.json whose marked symbols' order to reproduce.
  std::string hf_symbol_order;
};

double PeakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

std::string OutputNames(const TrainingRunOptions& options) {
  if (options.format == ModelFormat::kVocabTxt) return StrCat(options.output, " (vocab.txt)");
  return options.format == ModelFormat::kTiktoken
             ? StrCat(options.output, " and ", TiktokenSidecarPath(options.output))
             : options.output;
}

void PrintSummary(const RunOutcome& outcome, const TrainingRunOptions& options) {
  const TrainResult& result = outcome.result;
  const Model& model = *result.model;
  if (model.VocabSize() < options.trainer.vocab_size) {
    std::fprintf(stderr, "tokenmill train: note: %s\n", ShowFlags(result.stop_reason).c_str());
  }
  std::fprintf(stderr, "corpus: %llu documents, %llu bytes, %llu unique words\n",
               static_cast<unsigned long long>(outcome.documents),
               static_cast<unsigned long long>(outcome.corpus_bytes),
               static_cast<unsigned long long>(outcome.unique_words));
  PrintCorpusNotes(outcome.invalid_utf8, outcome.nul_bytes, outcome.skipped_records,
                   outcome.first_skipped);
  for (const std::string& note : result.notes) std::fprintf(stderr, "%s\n", note.c_str());
  if (model.type() == ModelType::kUnigram) {
    std::fprintf(stderr, "trained: vocab size %zu (Unigram pieces with scores), %zu special tokens; %s\n",
                 model.VocabSize(), model.special_tokens().size(),
                 ShowFlags(result.stop_reason).c_str());
  } else {
    std::fprintf(stderr, "trained: vocab size %zu, %zu merges, %zu special tokens; %s\n",
                 model.VocabSize(), result.merge_counts.size(), model.special_tokens().size(),
                 ShowFlags(result.stop_reason).c_str());
  }
  // Milliseconds: a resume takes tens of them.
  std::string phases = absl::StrFormat("count %.3f s", outcome.count_seconds);
  for (const auto& [phase, seconds] : result.phase_seconds) {
    phases += absl::StrFormat(", %s %.3f s", phase, seconds);
  }
  phases += absl::StrFormat(", write %.3f s", outcome.write_seconds);
  std::fprintf(stderr, "time: %.3f s (%s); peak memory %.0f MB\n", outcome.total_seconds,
               phases.c_str(), PeakRssMb());
  std::fprintf(stderr, "longest tokens:");
  for (TokenId id : LongestTokens(model, 5)) {
    std::fprintf(stderr, " [%s]", ShowBytes(model.token_bytes()[id]).c_str());
  }
  std::fprintf(stderr, "\nwrote %s\n", OutputNames(options).c_str());
  if (!outcome.checkpoint_path.empty()) {
    std::fprintf(stderr, "checkpoint: %s (%zu written, %.2f s%s)\n",
                 outcome.checkpoint_path.c_str(), outcome.checkpoints_written,
                 outcome.checkpoint_seconds,
                 model.type() == ModelType::kUnigram
                     ? ""
                     : "; extend later with --resume and a larger --vocab-size");
  }
}

// After SIGINT/SIGTERM/SIGHUP: say where the checkpoint is and how to resume; exit 128 + signal.
int ReportInterrupted(const RunOutcome& outcome, int sig) {
  if (outcome.checkpoint_path.empty()) {
    std::fprintf(stderr, "tokenmill train: interrupted; checkpoints were off (--checkpoint=none), "
                         "nothing was saved\n");
  } else {
    const std::string steps = outcome.checkpoint_merges == 0 && outcome.checkpoint_rounds > 0
                                  ? StrCat(outcome.checkpoint_rounds, " EM rounds")
                                  : StrCat(outcome.checkpoint_merges, " merges");
    std::fprintf(stderr,
                 "tokenmill train: interrupted after %s; checkpoint written to %s\n"
                 "resume with: tokenmill train --resume %s\n",
                 steps.c_str(), outcome.checkpoint_path.c_str(), outcome.checkpoint_path.c_str());
  }
  return 128 + sig;
}

constexpr char kOutputRequired[] = "--output is required (where to write tokenizer.json)";
constexpr char kTrainUsage[] = "--vocab-size N --output tokenizer.json [flags] FILE...";
constexpr char kTrainDescription[] =
    "Trains a BPE tokenizer on the given text files (each line, with its newline, is one\n"
    "document) and writes it as a Hugging Face tokenizer.json: byte-level (GPT-2 style), or\n"
    "with --unit char on characters with byte fallback (SentencePiece/Llama style).\n"
    "--algorithm wordpiece trains BERT's WordPiece instead: merges ranked by likelihood\n"
    "(--wordpiece-score), on characters with ## before word-internal pieces, the BERT\n"
    "pre-tokenizer and [PAD] [UNK] [CLS] [SEP] [MASK] unless told otherwise; it writes\n"
    "tokenizer.json or BERT's vocab.txt (--output *.txt or --format vocab-txt).\n"
    "--algorithm unigram trains SentencePiece's Unigram language model: seed pieces from\n"
    "the words' frequent substrings, EM rounds, pruning to --vocab-size; on characters with\n"
    "byte fallback, the metaspace preset and NFKC, <unk> at id 0 unless told otherwise.\n"
    "--progress also reports the merges (bar: merges/s, ETA, the last token).\n"
    "Checkpoints (OUTPUT.ckpt by default) are written after counting, at the end, on\n"
    "Ctrl-C/SIGTERM/SIGHUP and as often as asked; `tokenmill train --resume CKPT`\n"
    "continues an interrupted run to the identical tokenizer, or extends a finished one with\n"
    "a larger --vocab-size.";

void RegisterTrainFlags(FlagSet& flags, TrainCommandOptions* options) {
  TrainingRunOptions& run = options->run;
  flags.AddEnum("algorithm", &run.trainer.algorithm,
                {{"bpe", Algorithm::kBpe},
                 {"wordpiece", Algorithm::kWordPiece},
                 {"unigram", Algorithm::kUnigram}},
                "bpe, wordpiece (BERT's: --unit char, --continuing-subword-prefix ##, "
                "--preset bert, BERT's special tokens at the start and --character-coverage 1 "
                "unless given), or unigram (SentencePiece's: --unit char, --preset metaspace, "
                "--normalize nfkc, <unk> at id 0, a checkpoint after every EM round unless given)");
  flags.AddSize("seed-size", &run.trainer.seed_size,
                "--algorithm unigram: the seed vocabulary's substrings (the most frequent by "
                "count x length, beside every character)");
  flags.AddSize("max-piece-length", &run.trainer.max_piece_length,
                "--algorithm unigram: the longest piece, in characters");
  flags.AddSize("sub-iterations", &run.trainer.sub_iterations,
                "--algorithm unigram: EM steps per round, before each pruning");
  flags.AddDouble("shrinking-factor", &run.trainer.shrinking_factor,
                  "--algorithm unigram: the share of pieces each pruning keeps, in (0, 1)");
  flags.AddBool("split-by-script", &run.trainer.split_by_script,
                "--algorithm unigram: a piece keeps to one Unicode script (SentencePiece's "
                "split_by_unicode_script; digits and punctuation are the Common script)");
  flags.AddEnum("wordpiece-score", &run.trainer.wordpiece_score,
                {{"likelihood", WordPieceScore::kLikelihood},
                 {"frequency", WordPieceScore::kFrequency}},
                "--algorithm wordpiece: merge the pair with the highest count(ab) / (count(a) "
                "count(b)) (likelihood: it favours rare pairs whose parts occur only together; "
                "a --min-frequency of 10-100 keeps common words whole), or the most frequent "
                "(frequency: Hugging Face's WordPieceTrainer; with --hf-compat its vocabulary)");
  flags.AddSize("max-input-chars-per-word", &run.trainer.max_input_chars_per_word,
                "--algorithm wordpiece: a longer word encodes as [UNK] (BERT's rule; recorded "
                "in the tokenizer)");
  flags.AddBool("bert-specials", &options->bert_specials,
                "--algorithm wordpiece without --special-token: add [PAD] [UNK] [CLS] [SEP] "
                "[MASK]; =false adds only the unknown token [UNK] (with --hf-compat not even "
                "that, as Hugging Face's default trainer)");
  flags.AddString("hf-symbol-order", &options->hf_symbol_order,
                  "with --hf-compat and --continuing-subword-prefix: give the prefixed symbols "
                  "the ids they have in this Hugging Face tokenizer.json (HF numbers them in "
                  "random order, so each HF run is one of many; this reproduces that one)");
  flags.AddSize("vocab-size", &run.trainer.vocab_size,
                "total vocabulary: 256 byte tokens (with --hf-compat: the bytes that occur) + "
                "merges + special tokens; --unit char: characters + 256 byte-fallback tokens "
                "(or <unk>) + merges + special tokens");
  flags.AddEnum("unit", &run.trainer.units, {{"byte", UnitKind::kByte}, {"char", UnitKind::kChar}},
                "what tokens are made of: bytes (GPT-2 style), or characters with byte fallback "
                "(SentencePiece/Llama style)");
  flags.AddDouble("character-coverage", &run.trainer.character_coverage,
                  "--unit char: the alphabet keeps the most frequent characters covering this "
                  "share of all character occurrences, in (0, 1] (SentencePiece's rule)");
  flags.AddSize("limit-alphabet", &run.trainer.limit_alphabet,
                "--unit char: at most this many characters in the alphabet (0: no limit)");
  flags.AddString("continuing-subword-prefix", &run.trainer.continuing_subword_prefix,
                  "--unit char: mark every symbol of a word but the first with this (e.g. ##), "
                  "as Hugging Face's BpeTrainer does; decoding drops it");
  flags.AddString("end-of-word-suffix", &run.trainer.end_of_word_suffix,
                  "--unit char: mark each word's last symbol with this (e.g. </w>, "
                  "subword-nmt's); decoding turns it into a space");
  flags.AddBool("byte-fallback", &run.trainer.byte_fallback,
                "--unit char: characters outside the alphabet become the 256 byte tokens "
                "<0x00>..<0xFF>; =false maps them to one <unk> token instead");
  flags.AddString("output", &run.output,
                  "where to write the tokenizer: tokenizer.json, or with --format tiktoken the "
                  ".tiktoken ranks (its JSON sidecar goes next to it) (required)");
  flags.AddEnum("format", &run.format,
                {{"hf", ModelFormat::kHfJson}, {"tiktoken", ModelFormat::kTiktoken},
                 {"vocab-txt", ModelFormat::kVocabTxt}},
                "output format: Hugging Face tokenizer.json, tiktoken's .tiktoken + sidecar, or "
                "(WordPiece) BERT's vocab.txt, the default for --algorithm wordpiece with --output "
                "*.txt");
  AddCorpusFlags(flags, &run.corpus);
  flags.AddEnum("special-tokens-at", &run.trainer.special_tokens_at,
                {{"start", SpecialTokensAt::kStart}, {"end", SpecialTokensAt::kEnd}},
                "ids of special tokens: before the byte tokens (Hugging Face) or after the "
                "merges (tiktoken); --hf-compat makes 'start' the default");
  flags.AddUint64("min-frequency", &run.trainer.min_frequency,
                  "stop when the most frequent pair occurs fewer times than this");
  flags.AddSize("max-token-length", &run.trainer.max_token_length,
                "never form tokens longer than this many bytes (--unit char: characters) "
                "(0: no limit)");
  flags.AddBool("hf-compat", &run.trainer.hf_compat,
                "Hugging Face's alphabet, ids and tie-break: the merges HF's BpeTrainer gives");
  flags.AddBool("hf-all-bytes", &run.trainer.hf_all_bytes,
                "with --hf-compat: all 256 bytes in the alphabet, seen or not (HF's "
                "initial_alphabet=ByteLevel.alphabet()), so every text can be encoded");
  flags.AddBool("verbose", &options->verbose, "log every --log-every-th merge on stderr");
  flags.AddUint64("log-every", &options->log_every, "with --verbose: log every this many merges");
  flags.AddBool("quiet", &options->quiet, "print nothing but errors");
  flags.AddString("checkpoint", &run.checkpoint,
                  "checkpoint file (\"none\": no checkpoints; default: OUTPUT.ckpt)");
  flags.AddUint64("checkpoint-every", &run.checkpoint_every,
                  "also write a checkpoint every N merges (Unigram: EM rounds; default 1 there) (0: only "
                  "after counting, at the end and on Ctrl-C)");
  flags.AddDouble("checkpoint-interval", &run.checkpoint_interval,
                  "also write a checkpoint when this many seconds passed since the last (0: off)");
  flags.AddString("resume", &options->resume,
                  "continue an interrupted run from this checkpoint (a larger --vocab-size extends a finished one)");
  flags.AddBool("ignore-corpus-change", &options->ignore_corpus_change,
                "resume even if the corpus files changed since the checkpoint");
}

// The one-character tokens with `prefix` of the tokenizer at `path`, in id order.
absl::StatusOr<std::vector<std::string>> MarkedSymbols(const std::string& path,
                                                       const std::string& prefix) {
  if (prefix.empty()) {
    return OptionError("--hf-symbol-order orders the prefixed symbols: it needs a "
                       "`continuing_subword_prefix`",
                       {"continuing_subword_prefix"});
  }
  TM_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, LoadModel(path));
  std::vector<std::string> symbols;
  for (const std::string& token : model->token_bytes()) {
    if (token.starts_with(prefix) &&
        model->units().Length(std::string_view(token).substr(prefix.size())) == 1) {
      symbols.push_back(token);
    }
  }
  return symbols;
}

// The options the flags set, as ApplyAlgorithmDefaults takes them.
GivenOptions GivenByFlags(const FlagSet& flags) {
  GivenOptions given;
  for (const std::string& flag : flags.SetFlags()) {
    for (std::string& option : OptionsOfFlag(flag)) given.insert(std::move(option));
    if (flag == "preset" || flag == "pattern" || flag == "normalize") given.insert(flag);
  }
  return given;
}

// The run the flags ask for: a new one, or the resumed one; an exit code when it cannot start.
absl::StatusOr<TrainingRun> StartRun(TrainCommandOptions& options, const FlagSet& flags) {
  TrainingRunOptions& run = options.run;
  if (!options.resume.empty()) {
    // Flags that only shape a new run's options: on resume they would be silently ignored.
    if (flags.WasSet("bert-specials")) {
      return OptionError("--bert-specials chooses a new run's special tokens; a resumed run keeps "
                         "its checkpoint's (leave it out)",
                         {});
    }
    if (flags.WasSet("hf-symbol-order")) {
      return OptionError("--hf-symbol-order shapes a new run's alphabet; a resumed run keeps its "
                         "checkpoint's (leave it out)",
                         {});
    }
    std::vector<std::string> set;
    for (const std::string& flag : flags.SetFlags()) {
      for (std::string& option : OptionsOfFlag(flag)) set.push_back(std::move(option));
    }
    if (!run.corpus.inputs.empty()) set.push_back("inputs");
    // A new --output names its format as a new run's does (.txt: vocab.txt, .json:
    // tokenizer.json), rather than take the checkpoint's.
    if (flags.WasSet("output") && !flags.WasSet("format")) {
      if (run.output.ends_with(".txt")) run.format = ModelFormat::kVocabTxt, set.push_back("format");
      if (run.output.ends_with(".json")) run.format = ModelFormat::kHfJson, set.push_back("format");
    }
    return TrainingRun::Resume(options.resume, run, set, options.ignore_corpus_change);
  }
  if (flags.WasSet("bert-specials") && run.trainer.algorithm != Algorithm::kWordPiece) {
    return OptionError("--bert-specials applies only to `algorithm` wordpiece", {"algorithm"});
  }
  TM_RETURN_IF_ERROR(ApplyAlgorithmDefaults(run, GivenByFlags(flags), options.bert_specials));
  if (!options.hf_symbol_order.empty()) {
    TM_ASSIGN_OR_RETURN(run.trainer.marked_symbol_order,
                        MarkedSymbols(options.hf_symbol_order, run.trainer.continuing_subword_prefix));
  }
  if (run.trainer.algorithm == Algorithm::kWordPiece && !flags.WasSet("format") &&
      run.output.ends_with(".txt")) {
    run.format = ModelFormat::kVocabTxt;
  }
  return TrainingRun::Start(run);
}

}  // namespace

int RunTrain(int argc, char** argv) {
  TrainCommandOptions options;
  FlagSet flags("train", kTrainUsage, kTrainDescription);
  RegisterTrainFlags(flags, &options);
  // From here on the first SIGINT/SIGTERM/SIGHUP asks for an orderly stop (interrupt.h).
  InterruptGuard interrupt_guard;
  absl::StatusOr<std::vector<std::string>> inputs = flags.Parse(argc, argv, 2);
  if (!inputs.ok()) {
    PrintError("train", inputs.status());
    return kExitUsage;
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (absl::Status s = FinishPreTokenizerFlags(flags, &options.run.corpus.pretokenizer); !s.ok()) {
    PrintError("train", s);
    return kExitUsage;
  }
  options.run.corpus.inputs = *inputs;
  const bool resuming = !options.resume.empty();
  if (!resuming) {
    if (options.run.output.empty()) {
      PrintError("train", kOutputRequired);
      return kExitUsage;
    }
    if (options.run.corpus.inputs.empty() && options.run.corpus.counts_files.empty()) {
      PrintError("train", "no input files given");
      return kExitUsage;
    }
  }
  if (options.verbose && options.log_every == 0) {
    PrintError("train", "--log-every must be at least 1 with --verbose");
    return kExitUsage;
  }
  absl::StatusOr<TrainingRun> run = StartRun(options, flags);
  if (!run.ok()) return ReportError("train", run.status());
  for (const std::string& warning : run->warnings()) {
    std::fprintf(stderr, "tokenmill train: warning: %s\n", ShowFlags(warning).c_str());
  }
  const TrainingRunOptions& run_options = run->options();
  if (run_options.output.empty()) {
    PrintError("train", kOutputRequired);
    return kExitUsage;
  }
  if (run->resumed() && !options.quiet) {
    std::string done = StrCat(run->resumed_merges(), " merges done");
    if (absl::StatusOr<UnigramStateSummary> state = SummarizeUnigramState(run->resumed_state());
        state.ok()) {
      done = StrCat(state->rounds, " EM rounds done (", state->pieces, " pieces)");
    }
    std::fprintf(stderr, "resuming from %s: %s, %zu unique words\n", options.resume.c_str(),
                 done.c_str(), run->resumed_words());
  }
  TrainProgress progress(options.quiet ? ProgressFormat::kNone : run_options.corpus.progress,
                         options.verbose ? options.log_every : 0, stderr);
  RunHooks hooks;
  hooks.stop_requested = [] { return InterruptGuard::signal_number() != 0; };
  hooks.on_step = [&](const TrainEvent& event) { progress.OnStep(event); };
  absl::StatusOr<RunOutcome> outcome = run->Run(hooks);
  progress.Finish();
  if (int sig = InterruptGuard::signal_number(); sig != 0 && !outcome.ok() &&
                                                 absl::IsCancelled(outcome.status())) {
    // Stopped while a read waited on stdin, before the words were counted: a count of stdin
    // cannot be taken up again, so there is no checkpoint to resume from.
    std::fprintf(stderr, "tokenmill train: interrupted (%s); nothing was saved\n",
                 std::string(outcome.status().message()).c_str());
    return 128 + sig;
  }
  // An option the trainer finds wrong only once it sees the words (a --vocab-size the alphabet
  // or the seed vocabulary cannot meet, a resume changing --vocab-size) is a usage error too.
  if (!outcome.ok()) return ReportError("train", outcome.status());
  if (int sig = InterruptGuard::signal_number(); sig != 0 && outcome->interrupted) {
    return ReportInterrupted(*outcome, sig);
  }
  if (!options.quiet) PrintSummary(*outcome, run_options);
  return kExitOk;
}

}  // namespace tokenmill::cli
