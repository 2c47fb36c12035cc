// CountCorpus: the parallel sharded reader gives exactly the counts of a plain serial count,
// whatever the thread count, shard size, batch size, compression or file split; JSON lines;
// file documents; bad inputs fail with messages that say what and where.
#include "count/count_corpus.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "corpus/byte_stream.h"
#include "corpus/input_files.h"
#include "count/count_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pretokenize/presets.h"
#include "pretokenize/pretokenizer.h"
#include "pretokenize/special_tokens.h"
#include "pretokenize/text_prep.h"
#include "reference/cli_runner.h"
#include "reference/compress.h"

namespace tokenmill {
namespace {

using testing::GzipCompress;
using testing::ZstdCompress;
using ::testing::HasSubstr;
using testing::TempDir;

// The serial reference: split `text` into documents (lines with their '\n', or the whole
// text) and count each with CountDocument.
WordCounts SerialCount(const std::string& text, const CountCorpusOptions& options,
                       bool whole = false) {
  auto pretokenizer = PreTokenizer::Create(options.pretokenizer).value();
  auto prep = TextPrep::Create(options.pretokenizer).value();  // the normalizer (bert's)
  std::unique_ptr<SpecialTokenMatcher> specials;
  if (!options.special_tokens.empty()) specials = SpecialTokenMatcher::Create(options.special_tokens).value();
  WordCounts counts;
  if (whole) {
    CountDocument(text, *pretokenizer, specials.get(), counts, prep.get());
    return counts;
  }
  for (size_t start = 0; start < text.size();) {
    size_t nl = text.find('\n', start);
    size_t end = nl == std::string::npos ? text.size() : nl + 1;
    CountDocument(std::string_view(text).substr(start, end - start), *pretokenizer, specials.get(),
                  counts, prep.get());
    start = end;
  }
  return counts;
}



// Mixed text: English-like words, code, CJK, runs of spaces and newlines, blank lines, a last
// line without '\n', invalid UTF-8 and NUL bytes.
std::string MixedText(size_t lines, uint32_t seed) {
  std::mt19937 rng(seed);
  const std::vector<std::string> pieces = {
      "the",  "cat",  " ",   "  ",    "\t",   "don't", "I'm",   "x=1;", "  return 0;",
      "诗歌", "山水", "123", "4567",  "...",  "!!",    "\r",    "é",    "\xff\xfe",
      "\x00", "a b",  "ab",  "Hello", "WORLD", "\xe4\xb8", "   ", "x"};
  std::string text;
  for (size_t i = 0; i < lines; ++i) {
    size_t n = rng() % 12;
    for (size_t j = 0; j < n; ++j) {
      const std::string& p = pieces[rng() % pieces.size()];
      if (p.empty()) text.push_back('\0');
      text += p;
      if (rng() % 3 == 0) text += ' ';
    }
    text += rng() % 7 == 0 ? "\n\n" : "\n";
  }
  text += "last line without newline";
  return text;
}

CorpusCounts CountOrDie(const CountCorpusOptions& options) {
  absl::StatusOr<CorpusCounts> counts = CountCorpus(options);
  EXPECT_TRUE(counts.ok()) << counts.status();
  return counts.ok() ? std::move(*counts) : CorpusCounts();
}

CountCorpusOptions Quiet(std::vector<std::string> inputs) {
  CountCorpusOptions options;
  options.inputs = std::move(inputs);
  options.progress = ProgressFormat::kNone;
  return options;
}

TEST(CountCorpus, SameCountsForAnyThreadCountShardAndBatchSize) {
  TempDir dir;
  std::string text = MixedText(400, 1);
  std::string path = dir.Write("mixed.txt", text);
  std::string zst = dir.Write("mixed.txt.zst", ZstdCompress(text));
  CountCorpusOptions base = Quiet({path});
  WordCounts expected = SerialCount(text, base);
  uint64_t lines = 0;
  for (char c : text) lines += c == '\n';
  for (int threads : {1, 2, 8}) {
    for (size_t shard : {size_t{1}, size_t{3}, size_t{7}, size_t{64}, size_t{4} << 20}) {
      for (const std::string& input : {path, zst}) {
        CountCorpusOptions options = base;
        options.inputs = {input};
        options.threads = threads;
        options.shard_bytes = shard;
        options.batch_bytes = shard;
        CorpusCounts counts = CountOrDie(options);
        SCOPED_TRACE(input + " threads " + std::to_string(threads) + " shard " + std::to_string(shard));
        EXPECT_TRUE(counts.words == expected);
        EXPECT_EQ(counts.documents, lines + 1);
        EXPECT_EQ(counts.bytes, text.size());
      }
    }
  }
}

TEST(CountCorpus, PlainZstdGzipSplitFolderAndGlobAgree) {
  TempDir dir;
  std::string text = MixedText(300, 2);
  std::string plain = dir.Write("all.txt", text);
  std::string zst = dir.Write("all.txt.zst", ZstdCompress(text));
  std::string gz = dir.Write("all.txt.gz", GzipCompress(text));
  // Concatenated gzip members and zstd frames are one stream each.
  std::string half1 = text.substr(0, text.size() / 2), half2 = text.substr(text.size() / 2);
  size_t cut = half1.rfind('\n') + 1;  // split files at a line boundary
  half2 = half1.substr(cut) + half2;
  half1 = half1.substr(0, cut);
  std::string gz2 = dir.Write("members.txt.gz", GzipCompress(half1) + GzipCompress(half2));
  // Zero bytes after a member are padding, passed over as Python's gzip module does.
  std::string gz_padded = dir.Write("padded.txt.gz", GzipCompress(half1) + std::string(700, '\0') + GzipCompress(half2) +
                                                         std::string(5000, '\0'));
  std::string zst2 = dir.Write("frames.txt.zst", ZstdCompress(half1) + ZstdCompress(half2));
  ASSERT_EQ(::mkdir(dir.File("split").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(dir.File("split/sub").c_str(), 0755), 0);
  dir.Write("split/a.txt", half1);
  dir.Write("split/sub/b.txt.zst", ZstdCompress(half2));
  dir.Write("split/ignored.md", "not counted\n");

  CorpusCounts reference = CountOrDie(Quiet({plain}));
  for (const std::vector<std::string>& inputs :
       std::vector<std::vector<std::string>>{{zst}, {gz}, {gz2}, {gz_padded}, {zst2}, {dir.File("split/a.txt"), dir.File("split/sub/b.txt.zst")},
                                             {dir.File("split")}, {dir.File("split/*.txt"), dir.File("split/sub/*.zst")}}) {
    CountCorpusOptions options = Quiet(inputs);
    options.exclude = {"*.md"};
    options.threads = 2;
    options.shard_bytes = 100;
    options.batch_bytes = 100;
    CorpusCounts counts = CountOrDie(options);
    SCOPED_TRACE(inputs[0]);
    EXPECT_TRUE(counts.words == reference.words);
    EXPECT_EQ(counts.bytes, reference.bytes);
    EXPECT_EQ(counts.invalid_utf8, reference.invalid_utf8);
    EXPECT_EQ(counts.nul_bytes, reference.nul_bytes);
  }
  CountCorpusOptions include = Quiet({dir.File("split")});
  include.include = {"*.md"};
  EXPECT_EQ(CountOrDie(include).documents, 1u);
}

// Lines of Chinese (no spaces between words, so only line cuts), among the characters that
// decide whether a '\n' may be cut after: spaces, "\r\n", U+3000 (a space), '/', quotes,
// digits, CJK punctuation, a hexagram (U+4DC0, a symbol among the ideographs' lead bytes), a
// truncated character, ASCII words.
std::string ChineseLines(size_t lines, uint32_t seed) {
  std::mt19937 rng(seed);
  const std::vector<std::string> pieces = {
      "\xe5\xba\x8a", "\xe5\x89\x8d", "\xe6\x98\x8e", "\xe6\x9c\x88", "\xe5\x85\x89",  // 床前明月光
      "\xe3\x80\x82", "\xef\xbc\x8c", "\xe3\x80\x80", "\xe4\xb7\x80", "\xe4\xb8",     // 。，U+3000 ䷀ cut
      "\xe3\x81\x82", " ", "/", "'s", "1", "ab", "Ab", ",", "\r", "\t", "\xc3\xa9"};     // あ é
  std::string text;
  for (size_t i = 0; i < lines; ++i) {
    for (size_t n = rng() % 10; n > 0; --n) text += pieces[rng() % pieces.size()];
    text += rng() % 9 == 0 ? "\n\n" : "\n";
  }
  return text;
}

TEST(CountCorpus, FileModeCutsOnlyWherePiecesEndForEveryPreset) {
  TempDir dir;
  for (const std::string& text : {MixedText(200, 3), ChineseLines(300, 4)}) {
    std::string path = dir.Write("doc.txt", text);
    std::string zst = dir.Write("doc.txt.zst", ZstdCompress(text));
    for (const char* preset : {"gpt2", "cl100k", "o200k", "qwen2", "whitespace", "bert"}) {
      CountCorpusOptions options = Quiet({path, zst});
      options.pretokenizer.preset = preset;
      ApplyPresetNormalizer(&options.pretokenizer);
      options.doc_mode = "file";
      WordCounts once = SerialCount(text, options, /*whole=*/true);
      WordCounts expected = once;
      expected.MergeFrom(once);
      for (size_t shard : {size_t{2}, size_t{5}, size_t{33}, size_t{1} << 20}) {
        options.shard_bytes = shard;
        options.batch_bytes = shard;
        options.threads = 2;
        CorpusCounts counts = CountOrDie(options);
        SCOPED_TRACE(std::string(preset) + " shard " + std::to_string(shard));
        EXPECT_TRUE(counts.words == expected);
        EXPECT_EQ(counts.documents, 2u);
      }
    }
  }
}

TEST(CountCorpus, SpecialTokensAreCutOut) {
  TempDir dir;
  std::string text = "a<|end|>b c<|end|>\n<|end|> d e<|x y|>f\n";
  CountCorpusOptions options = Quiet({dir.Write("s.txt", text)});
  options.special_tokens = {"<|end|>", "<|x y|>"};
  options.shard_bytes = 4;
  CorpusCounts counts = CountOrDie(options);
  EXPECT_TRUE(counts.words == SerialCount(text, options));
  EXPECT_EQ(counts.words.Get("<|end|>"), 0u);
  options.doc_mode = "file";  // a special with a space: the file is kept whole
  EXPECT_TRUE(CountOrDie(options).words == SerialCount(text, options, true));
}

TEST(CountCorpus, JsonLinesFieldExtraction) {
  TempDir dir;
  // Escapes, a surrogate pair (U+1F600), nested objects holding another "text", blank lines,
  // and a JSON pointer. The expected texts are the JSON strings decoded by hand (RFC 8259).
  std::string jsonl =
      R"({"id":1,"text":"tab\there \"quoted\" back\\slash\nnew line"})" "\n"
      R"({"meta":{"text":"nested, not counted","deep":{"a":[1,2,{"text":"no"}]}},"text":"caf\u00e9 \ud83d\ude00 end"})" "\n"
      "\n"
      R"(  {"text":"slash\/ unicode \u4e2d\u6587 nul\u0000byte"}  )" "\n";
  std::vector<std::string> expected_docs = {
      "tab\there \"quoted\" back\\slash\nnew line", "caf\xc3\xa9 \xf0\x9f\x98\x80 end",
      std::string("slash/ unicode \xe4\xb8\xad\xe6\x96\x87 nul") + '\0' + "byte"};
  // The last copy saved with a byte order mark first (RFC 8259 lets a parser pass over it).
  CountCorpusOptions options = Quiet({dir.Write("r.jsonl", jsonl), dir.Write("r.jsonl.zst", ZstdCompress(jsonl)),
                                      dir.Write("r.json.gz", GzipCompress(jsonl)), dir.Write("bom.jsonl", "\xEF\xBB\xBF" + jsonl)});
  options.shard_bytes = 5;
  options.batch_bytes = 5;
  options.threads = 2;
  CorpusCounts counts = CountOrDie(options);
  WordCounts expected;
  for (int copy = 0; copy < 4; ++copy) {
    for (const std::string& doc : expected_docs) expected.MergeFrom(SerialCount(doc, options, true));
  }
  EXPECT_TRUE(counts.words == expected);
  EXPECT_EQ(counts.documents, 12u);
  EXPECT_EQ(counts.nul_bytes, 4u);
  EXPECT_EQ(counts.words.Get("no"), 0u);

  std::string nested = R"({"meta":{"body":"deep text"},"text":"top"})" "\n";
  CountCorpusOptions pointer = Quiet({dir.Write("p.jsonl", nested)});
  pointer.text_field = "/meta/body";
  CorpusCounts deep = CountOrDie(pointer);
  EXPECT_EQ(deep.words.Get(" text"), 1u);
  EXPECT_EQ(deep.words.Get("top"), 0u);
}

TEST(CountCorpus, MalformedJsonNamesFileAndLineOrIsSkipped) {
  TempDir dir;
  std::string jsonl = "{\"text\":\"one\"}\n{\"text\":\"two\"}\n\n{\"text\":\"three\"} trailing\n"
                      "{\"other\":\"x\"}\n{\"text\":\"four\"}\n";
  std::string plain = dir.Write("bad.jsonl", jsonl);
  std::string zst = dir.Write("bad.jsonl.zst", ZstdCompress(jsonl));
  for (const std::string& path : {plain, zst}) {
    CountCorpusOptions options = Quiet({path});
    options.shard_bytes = 3;
    options.batch_bytes = 3;
    absl::StatusOr<CorpusCounts> counts = CountCorpus(options);
    ASSERT_FALSE(counts.ok());
    EXPECT_THAT(std::string(counts.status().message()), HasSubstr(path + ":4: malformed JSON"));
    EXPECT_THAT(std::string(counts.status().message()), HasSubstr("`skip_bad_records` skips such records"));

    options.skip_bad_records = true;
    counts = CountCorpus(options);
    ASSERT_TRUE(counts.ok()) << counts.status();
    EXPECT_EQ(counts->skipped_records, 2u);
    EXPECT_EQ(counts->documents, 3u);
    EXPECT_THAT(counts->first_skipped, HasSubstr(path + ":4:"));
  }
  CountCorpusOptions missing = Quiet({dir.Write("m.jsonl", "{\"text\":\"a\"}\n{\"body\":\"b\"}\n")});
  absl::StatusOr<CorpusCounts> counts = CountCorpus(missing);
  ASSERT_FALSE(counts.ok());
  EXPECT_THAT(std::string(counts.status().message()), HasSubstr("m.jsonl:2: the record has no field \"text\""));
  missing.text_field = "body";
  missing.skip_bad_records = true;
  counts = CountCorpus(missing);
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->skipped_records, 1u);
}

TEST(CountCorpus, BinaryAndInvalidUtf8AreCountedLosslesslyAndReported) {
  TempDir dir;
  // Unicode 15 Table 3-11's example: 6 maximal invalid subparts (Python's
  // bytes.decode('utf-8', 'replace') also yields 6 U+FFFD for it).
  std::string invalid = "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64\n";
  std::string binary("\x00\x01\x02\x00 ab\x00\n", 9);
  CountCorpusOptions options = Quiet({dir.Write("inv.txt", invalid), dir.Write("bin.dat", binary)});
  CorpusCounts counts = CountOrDie(options);
  EXPECT_EQ(counts.invalid_utf8, 6u);
  EXPECT_EQ(counts.nul_bytes, 3u);
  EXPECT_EQ(counts.bytes, invalid.size() + binary.size());
  // Lossless: the words' bytes times their counts add up to every byte of the input.
  uint64_t bytes = 0;
  counts.words.ForEach([&](std::string_view word, uint64_t count) { bytes += word.size() * count; });
  EXPECT_EQ(bytes, invalid.size() + binary.size());
}

// Reads `path` through a ByteStream `capacity` bytes at a time, until the end or an error;
// returns the bytes and the error ("" at a clean end).
std::pair<std::string, std::string> ReadInSteps(const std::string& path, size_t capacity) {
  auto inputs = ResolveInputs({path}, InputSelection{});
  EXPECT_TRUE(inputs.ok()) << inputs.status();
  auto stream = ByteStream::Open(inputs->front());
  EXPECT_TRUE(stream.ok()) << stream.status();
  std::string bytes, chunk(capacity, '\0');
  while (true) {
    absl::StatusOr<size_t> got = (*stream)->Read(chunk.data(), capacity);
    if (!got.ok()) return {bytes, std::string(got.status().message())};
    if (*got == 0) return {bytes, ""};
    bytes.append(chunk, 0, *got);
  }
}

TEST(ByteStream, DamagedInputYieldsTheSameBytesAndErrorWhateverTheReadSize) {
  TempDir dir;
  std::string text = MixedText(40000, 9);  // several zstd blocks
  std::string zst = ZstdCompress(text), gz = GzipCompress(text);
  std::string corrupt = zst;
  corrupt[corrupt.size() * 3 / 4] ^= 0x55;
  std::string files[] = {dir.Write("cut.txt.zst", zst.substr(0, zst.size() / 2)),
                         dir.Write("cut.txt.gz", gz.substr(0, gz.size() / 2)),
                         dir.Write("bad.txt.zst", corrupt)};
  for (const std::string& path : files) {
    auto [bytes, error] = ReadInSteps(path, size_t{1} << 20);
    EXPECT_THAT(error, HasSubstr(path)) << path;
    EXPECT_GT(bytes.size(), 0u) << path;
    EXPECT_EQ(bytes, text.substr(0, bytes.size())) << path;  // a true prefix of the text
    for (size_t capacity : {1, 7, 4096, 65537}) {
      auto [small_bytes, small_error] = ReadInSteps(path, capacity);
      EXPECT_EQ(small_bytes.size(), bytes.size()) << path << " read " << capacity << " at a time";
      EXPECT_TRUE(small_bytes == bytes) << path << " read " << capacity << " at a time";
      EXPECT_EQ(small_error, error) << path << " read " << capacity << " at a time";
    }
  }
}

TEST(CountCorpus, TheFirstProblemInInputOrderIsReportedWhateverTheBatchSizeOrThreads) {
  TempDir dir;
  auto error = [](CountCorpusOptions options, size_t batch, int threads) {
    options.shard_bytes = options.batch_bytes = batch;
    options.threads = threads;
    absl::StatusOr<CorpusCounts> counts = CountCorpus(options);
    return counts.ok() ? std::string("ok") : std::string(counts.status().message());
  };
  // A bad record before the point where a stream is cut short is the first problem, also
  // when the whole stream is one batch (the fuzz target found this).
  std::string records;
  for (int i = 0; i < 30000; ++i) records += "{\"text\":\"record " + std::to_string(i) + "\"}\n";
  std::string jsonl = records.substr(0, 1000) + "{oops}\n" + records;
  std::string zst = ZstdCompress(jsonl);
  std::string cut = dir.Write("cut.jsonl.zst", zst.substr(0, zst.size() * 2 / 3));
  std::string cut_clean = dir.Write("clean.jsonl.zst", ZstdCompress(records).substr(0, ZstdCompress(records).size() * 2 / 3));
  std::string first_error = error(Quiet({cut_clean}), size_t{1} << 20, 1);
  EXPECT_THAT(first_error, HasSubstr("'" + cut_clean + "' is truncated"));
  for (size_t batch : {size_t{3}, size_t{100}, size_t{1} << 20}) {
    for (int threads : {1, 2}) {
      EXPECT_THAT(error(Quiet({cut}), batch, threads), HasSubstr(cut + ":"))
          << "batch " << batch << ", " << threads << " threads";
      EXPECT_THAT(error(Quiet({cut}), batch, threads), HasSubstr(": malformed JSON"));
      CountCorpusOptions skip = Quiet({cut});
      skip.skip_bad_records = true;
      EXPECT_THAT(error(skip, batch, threads), HasSubstr("'" + cut + "' is truncated"));
      // The message, with the bytes decompressed before the cut, is the same for every size.
      EXPECT_EQ(error(Quiet({cut_clean}), batch, threads), first_error)
          << "batch " << batch << ", " << threads << " threads";
    }
  }
  // Across files: the bad record of the first file is reported, not the second file's, though
  // the second is a stream read first and fails at once.
  std::string first = dir.Write("a.jsonl", records + "{oops}\n");
  std::string second = dir.Write("b.jsonl.gz", GzipCompress("{bad}\n" + records));
  for (int round = 0; round < 5; ++round) {
    EXPECT_THAT(error(Quiet({first, second}), 64, 2), HasSubstr(first + ":30001: malformed JSON"));
  }
}

TEST(CountCorpus, BadInputsFailNamingThem) {
  TempDir dir;
  std::string text = MixedText(200, 4);
  auto error = [](const CountCorpusOptions& options) {
    absl::StatusOr<CorpusCounts> counts = CountCorpus(options);
    return counts.ok() ? std::string("ok") : std::string(counts.status().message());
  };
  EXPECT_THAT(error(Quiet({dir.File("missing.txt")})), HasSubstr(dir.File("missing.txt")));
  EXPECT_THAT(error(Quiet({dir.File("none-*.txt")})), HasSubstr("no files match"));
  ASSERT_EQ(::mkdir(dir.File("empty").c_str(), 0755), 0);
  EXPECT_THAT(error(Quiet({dir.File("empty")})), HasSubstr("folder '" + dir.File("empty") + "' holds no files"));
  dir.Write("only.md", "x\n");
  CountCorpusOptions include = Quiet({dir.path()});
  include.include = {"*.txt"};
  EXPECT_THAT(error(include), HasSubstr("matching `include` *.txt"));

  std::string zst = ZstdCompress(text), gz = GzipCompress(text);
  std::string zst_path = dir.Write("cut.txt.zst", zst.substr(0, zst.size() / 2));
  std::string gz_path = dir.Write("cut.txt.gz", gz.substr(0, gz.size() / 2));
  EXPECT_THAT(error(Quiet({zst_path})),
              HasSubstr("'" + zst_path + "' is truncated: the zstd data ends at compressed byte " +
                        std::to_string(zst.size() / 2)));
  EXPECT_THAT(error(Quiet({gz_path})),
              HasSubstr("'" + gz_path + "' is truncated: the gzip data ends at compressed byte " +
                        std::to_string(gz.size() / 2)));
  std::string fake = dir.Write("fake.txt.gz", "plain text\n");
  EXPECT_THAT(error(Quiet({fake})), HasSubstr("does not start with the gzip magic"));

  EXPECT_THAT(error(Quiet({dir.Write("empty.txt", "")})), HasSubstr("the corpus is empty"));
  CountCorpusOptions only_specials = Quiet({dir.Write("sp.txt", "<s><s>")});
  only_specials.special_tokens = {"<s>"};
  EXPECT_THAT(error(only_specials), HasSubstr("the corpus is empty"));

  // Root reads any file, and CI runs the tests as root: there the CLI tests check it as
  // 'nobody' (CountCli.UnreadableFileIsNamed, BadInputCli.UnreadableFileIsNamed).
  if (::geteuid() != 0) {
    std::string locked = dir.Write("locked.txt", "secret\n");
    ASSERT_EQ(::chmod(locked.c_str(), 0), 0);
    EXPECT_THAT(error(Quiet({locked})), HasSubstr(locked));
  }
}

}  // namespace
}  // namespace tokenmill
