#include "corpus_flags.h"

#include <cstdio>

#include "pretokenize/presets.h"

namespace tokenmill::cli {
namespace {

constexpr char kPresetHelp[] =
    "pre-tokenizer: how text is split into words before merging (metaspace: SentencePiece's; "
    "whitespace: Hugging Face's Whitespace, which drops spaces; bert: BERT's, which drops "
    "whitespace, puts each punctuation character alone and brings BERT's normalizer: control "
    "characters dropped, whitespace as spaces, CJK ideographs spaced; none: each line is one "
    "word)";

}  // namespace

void AddTextFlags(FlagSet& flags, PreTokenizerConfig* config) {
  flags.AddEnum("normalize", &config->normalizer.form,
                {{"none", NormalForm::kNone}, {"nfc", NormalForm::kNfc}, {"nfkc", NormalForm::kNfkc}},
                "Unicode normalization of the text before it is split (ICU; the tokenizer "
                "records it and encoding applies it)");
  flags.AddBool("strip-accents", &config->normalizer.strip_accents,
                "strip accents (after --normalize, before --lowercase): NFD, then every "
                "nonspacing mark (Mn) goes, as Hugging Face's BertNormalizer's strip_accents "
                "does; the text stays decomposed");
  flags.AddBool("lowercase", &config->normalizer.lowercase,
                "lowercase the text (after --normalize), as Hugging Face's Lowercase does");
  flags.AddBool("split-digits", &config->split_digits,
                "after the pre-tokenizer, every digit (\\p{N}) is a word of its own (Llama, Qwen)");
  flags.AddBool("metaspace-prefix", &config->metaspace_prefix,
                "--preset metaspace: put a \u2581 before each line that does not start with one "
                "(SentencePiece's dummy prefix); =false for none");
}

void AddReadingFlags(FlagSet& flags, CountCorpusOptions* options) {
  flags.AddChoice("doc-mode", &options->doc_mode, {"line", "file"},
                  "documents of text files: each line with its newline, or each file whole");
  flags.AddString("text-field", &options->text_field,
                  "JSON lines (.jsonl/.json, also .zst/.gz): the field holding the text, a "
                  "top-level key or a /JSON/pointer");
  flags.AddChoice("input-format", &options->input_format, {"auto", "text", "jsonl"},
                  "how to read inputs: by extension (auto), all as text, or all as JSON lines");
  flags.AddStrings("include", &options->include,
                   "read only files in input folders whose name (or path below the folder, if "
                   "the glob has a /) matches this glob, e.g. '*.txt' or 'docs/**/*.md' (** is "
                   "any number of folders)");
  flags.AddStrings("exclude", &options->exclude,
                   "skip files in input folders matching this glob (hidden files and folders, "
                   "such as .git, are skipped in folders unless named, or matched by an "
                   "--include glob that starts with a '.')");
  flags.AddBool("skip-bad-records", &options->skip_bad_records,
                "count and report malformed JSON records (or records without the text field) "
                "instead of stopping");
  flags.AddEnum("progress", &options->progress,
                {{"auto", ProgressFormat::kAuto}, {"bar", ProgressFormat::kBar},
                 {"json", ProgressFormat::kJson}, {"none", ProgressFormat::kNone}},
                "progress on stderr (auto: a bar on a terminal, else none)");
  flags.AddSize("shard-bytes", &options->shard_bytes,
                "uncompressed files are read in shards of about this many bytes");
  flags.AddSize("batch-bytes", &options->batch_bytes,
                "compressed inputs are handed to threads in batches of about this many bytes");
}

void AddCorpusFlags(FlagSet& flags, CountCorpusOptions* options) {
  flags.AddChoice("preset", &options->pretokenizer.preset, PresetNames(), kPresetHelp);
  AddTextFlags(flags, &options->pretokenizer);
  flags.AddString("pattern", &options->pretokenizer.pattern,
                  "a custom pre-tokenizer pattern instead of a preset: any PCRE2 regex (run by "
                  "PCRE2 with JIT; see 'tokenmill pretokenize --help')");
  flags.AddStrings("special-token", &options->special_tokens,
                   "a literal token that is never split or merged, e.g. <|endoftext|>");
  flags.AddInt("threads", &options->threads, "worker threads (0: all cores)");
  flags.AddStrings("counts", &options->counts_files,
                   "a word-count file from 'tokenmill count' to add to the corpus; word-count "
                   "files given as inputs are recognised too");
  AddReadingFlags(flags, options);
}

absl::Status FinishPreTokenizerFlags(const FlagSet& flags, PreTokenizerConfig* config) {
  if (flags.WasSet("pattern")) {
    if (flags.WasSet("preset")) {
      return absl::InvalidArgumentError("give --preset or --pattern, not both");
    }
    config->preset = "custom";
  }
  ApplyPresetNormalizer(config);
  return absl::OkStatus();
}

void PrintCorpusNotes(uint64_t invalid_utf8, uint64_t nul_bytes, uint64_t skipped_records,
                      const std::string& first_skipped) {
  if (invalid_utf8 > 0 || nul_bytes > 0) {
    std::fprintf(stderr,
                 "note: the text holds %llu invalid UTF-8 sequences and %llu NUL bytes; they are "
                 "counted as bytes like any other\n",
                 static_cast<unsigned long long>(invalid_utf8),
                 static_cast<unsigned long long>(nul_bytes));
  }
  if (skipped_records > 0) {
    std::fprintf(stderr, "skipped %llu bad records; the first: %s\n",
                 static_cast<unsigned long long>(skipped_records), first_skipped.c_str());
  }
}

}  // namespace tokenmill::cli
