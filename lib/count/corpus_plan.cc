// Counting's options (their fields, their checks) and the corpus plan: what CountCorpus reads
// (or CountDocuments adds to the documents handed over), checked and resolved before any reading.
#include <algorithm>

#include "absl/strings/str_join.h"
#include "common/option_error.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "common/version.h"
#include "count/count_corpus.h"
#include "pretokenize/pretokenizer.h"
#include "pretokenize/pretokenizer_config_codec.h"

namespace tokenmill {
namespace {

// The inputs split into corpus arguments and word-count files.
struct SortedInputs {
  std::vector<std::string> corpus;
  std::vector<std::string> counts_files;
};

SortedInputs SortInputs(const CountCorpusOptions& options) {
  SortedInputs sorted;
  sorted.counts_files = options.counts_files;
  for (const std::string& input : options.inputs) {
    (IsCountsFile(input) ? sorted.counts_files : sorted.corpus).push_back(input);
  }
  return sorted;
}

// Checks that a counts file can be summed into a run with `options`.
absl::Status CheckCompatible(const std::string& path, const CountsFileHeader& header,
                             const CountCorpusOptions& options) {
  std::string pattern = EffectivePattern(options.pretokenizer);
  if (header.pattern != pattern || header.pretokenizer.preset != options.pretokenizer.preset) {
    return MentioningOptions(
        absl::InvalidArgumentError(StrCat(
            "'", path, "' was counted with pre-tokenizer '", header.pretokenizer.preset,
            "' but this run uses '", options.pretokenizer.preset,
            "': word counts only add up under the same pre-tokenizer (pass ",
            header.pretokenizer.preset == "custom"
                ? StrCat("`pattern` '", header.pattern, "'")
                : StrCat("`pretokenizer` ", header.pretokenizer.preset),
            ")")),
        {"pretokenizer"});
  }
  const std::string their_settings = DescribeTextSettings(header.pretokenizer);
  const std::string our_settings = DescribeTextSettings(options.pretokenizer);
  if (their_settings != our_settings) {
    auto shown = [](const std::string& s) { return s.empty() ? std::string("none") : s; };
    return MentioningOptions(
        absl::InvalidArgumentError(StrCat(
            "'", path, "' was counted with text settings '", shown(their_settings),
            "' but this run uses '", shown(our_settings),
            "': word counts only add up when text is normalized and split the same way")),
        {"pretokenizer"});
  }
  std::vector<std::string> theirs = header.special_tokens, ours = options.special_tokens;
  std::sort(theirs.begin(), theirs.end());
  std::sort(ours.begin(), ours.end());
  if (theirs != ours) {
    return MentioningOptions(
        absl::InvalidArgumentError(StrCat(
            "'", path, "' was counted with special tokens [",
            absl::StrJoin(header.special_tokens, " "), "] but this run uses [",
            absl::StrJoin(options.special_tokens, " "), "]: pass the same `special_tokens`")),
        {"special_tokens"});
  }
  return absl::OkStatus();
}

// The plan of `options` (checked), whose inputs `sorted` holds.
absl::StatusOr<CorpusPlan> Plan(const CountCorpusOptions& options, SortedInputs sorted) {
  CorpusPlan plan;
  plan.options = options;
  InputSelection selection{options.include, options.exclude, options.input_format};
  TM_ASSIGN_OR_RETURN(plan.inputs, ResolveInputs(sorted.corpus, selection));
  for (const std::string& path : sorted.counts_files) {
    TM_ASSIGN_OR_RETURN(CountsFileHeader header, ReadCountsFileHeader(path));
    TM_RETURN_IF_ERROR(CheckCompatible(path, header, options));
  }
  plan.counts_files = std::move(sorted.counts_files);
  return plan;
}

}  // namespace

template <>
struct EnumNames<ProgressFormat> {
  static constexpr std::pair<std::string_view, ProgressFormat> kNames[] = {
      {"auto", ProgressFormat::kAuto}, {"none", ProgressFormat::kNone},
      {"bar", ProgressFormat::kBar}, {"json", ProgressFormat::kJson}};
};

std::span<const OptionField<CountCorpusOptions>> CountCorpusOptions::Fields() {
  using O = CountCorpusOptions;
  using E = OptionEffect;
  // Tags are stable: never renumber one, never reuse one of a removed field.
  static const OptionField<O> kFields[] = {
      Field<&O::inputs>(1, "inputs", E::kChangesResult),
      Field<&O::counts_files>(2, "counts_files", E::kChangesResult),
      Field<&O::pretokenizer>(3, "pretokenizer", E::kChangesResult),
      Field<&O::special_tokens>(4, "special_tokens", E::kChangesResult),
      Field<&O::threads>(5, "threads", E::kNone),
      Field<&O::doc_mode>(6, "doc_mode", E::kChangesResult),
      Field<&O::text_field>(7, "text_field", E::kChangesResult),
      Field<&O::input_format>(8, "input_format", E::kChangesResult),
      Field<&O::include>(9, "include", E::kChangesResult),
      Field<&O::exclude>(10, "exclude", E::kChangesResult),
      Field<&O::skip_bad_records>(11, "skip_bad_records", E::kChangesResult),
      Field<&O::progress>(12, "progress", E::kNone),
      Field<&O::shard_bytes>(13, "shard_bytes", E::kNone),
      Field<&O::batch_bytes>(14, "batch_bytes", E::kNone),
  };
  return kFields;
}
absl::Status ValidateCountCorpusFlags(const CountCorpusOptions& options) {
  if (options.doc_mode != "line" && options.doc_mode != "file") {
    return OptionError(StrCat("`doc_mode` must be line or file, not '", options.doc_mode, "'"),
                       {"doc_mode"});
  }
  if (options.text_field.empty()) return OptionError("`text_field` must not be empty", {"text_field"});
  if (options.threads < 0) return OptionError("`threads` must be 0 (all cores) or more", {"threads"});
  // A bad custom pattern or preset name is a usage error found before any input is opened.
  if (absl::StatusOr<std::unique_ptr<PreTokenizer>> p = PreTokenizer::Create(options.pretokenizer);
      !p.ok()) {
    const bool custom = options.pretokenizer.preset == "custom";
    return OptionError(StrCat(custom ? "`pattern`: " : "`pretokenizer`: ", Message(p.status())),
                       {"pretokenizer"});
  }
  return absl::OkStatus();
}

std::vector<std::string> CorpusPlan::Paths() const {
  std::vector<std::string> paths;
  for (const InputFile& f : inputs) paths.push_back(f.path);
  paths.insert(paths.end(), counts_files.begin(), counts_files.end());
  return paths;
}

absl::StatusOr<CorpusPlan> PlanCorpus(const CountCorpusOptions& options) {
  TM_RETURN_IF_ERROR(ValidateCountCorpusFlags(options));
  SortedInputs sorted = SortInputs(options);
  if (sorted.corpus.empty() && sorted.counts_files.empty()) {
    return OptionError("no inputs given (files, folders, globs, - or `counts_files`)",
                       {"counts_files"});
  }
  return Plan(options, std::move(sorted));
}

absl::StatusOr<CorpusPlan> PlanDocuments(const CountCorpusOptions& options) {
  TM_RETURN_IF_ERROR(ValidateCountCorpusFlags(options));
  if (!options.inputs.empty()) {
    return OptionError(StrCat("the documents are handed over: give no `inputs` (got '",
                              options.inputs[0], "'; word-count files go in `counts_files`)"),
                       {"inputs"});
  }
  return Plan(options, SortInputs(options));
}

CountsFileHeader MakeCountsFileHeader(const CountCorpusOptions& options, const CorpusCounts& counts) {
  CountsFileHeader header;
  header.tool = std::string(VersionedName());
  header.pretokenizer = options.pretokenizer;
  header.pattern = EffectivePattern(options.pretokenizer);
  header.special_tokens = options.special_tokens;
  header.doc_mode = options.doc_mode;
  header.text_field = options.text_field;
  header.totals = counts.Totals();
  return header;
}

}  // namespace tokenmill
