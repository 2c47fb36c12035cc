// EncodeCorpus (the library under `tokenmill encode`) with several compressed inputs: threads
// that would wait for the current stream read later inputs ahead, whose ids are kept in scratch
// files and appended in their turn. The token file and the Megatron index equal those of one
// thread (which reads nothing ahead) and those made here document by document with
// Encoder::Encode; an input read ahead fails only when its turn comes (an earlier input's
// problem is the one reported); a stopped run leaves no file. These run under ThreadSanitizer.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "count/count_corpus.h"
#include "model/model_file.h"
#include "reference/checked.h"
#include "reference/cli_runner.h"
#include "reference/compress.h"
#include "reference/sidecar_pattern.h"
#include "tokens/encode_corpus.h"

namespace tokenmill {
namespace {

using testing::ZstdCompress;
using testing::TempDir;

// Lines that differ from file to file (so that a batch in the wrong place shows).
std::string Lines(int file, size_t bytes) {
  std::string text;
  for (int i = 0; text.size() < bytes; ++i) {
    text += "file " + std::to_string(file) + " says line " + std::to_string(i) +
            (i % 7 == 0 ? " with\ttabs and  spaces\n" : " \xe8\xaf\x97\xe6\xad\x8c.\n");
  }
  return text;
}

std::unique_ptr<Encoder> Gpt2() {
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = LoadEncoder(testing::TestVocabDir() + "gpt2.tiktoken");
  EXPECT_TRUE(encoder.ok()) << encoder.status();
  return encoder.ok() ? *std::move(encoder) : nullptr;
}

struct Corpus {
  std::vector<std::string> paths;
  std::vector<std::string> texts;
};

// Ten .zst files and two plain ones between them, a few hundred small batches in all.
Corpus MakeCorpus(const TempDir& dir) {
  Corpus c;
  for (int f = 0; f < 12; ++f) {
    const std::string text = Lines(f, 20000 + 3000 * static_cast<size_t>(f % 4));
    c.texts.push_back(text);
    const bool plain = f == 3 || f == 8;
    const std::string name = "in" + std::to_string(f) + (plain ? ".txt" : ".txt.zst");
    c.paths.push_back(dir.Write(name, plain ? text : ZstdCompress(text, 1)));
  }
  return c;
}

EncodeCorpusOptions Options(const Corpus& c, const std::string& output, int threads) {
  EncodeCorpusOptions o;
  o.reading.inputs = c.paths;
  o.reading.progress = ProgressFormat::kNone;
  o.reading.batch_bytes = 2048;  // several tickets per stream
  o.reading.shard_bytes = 4096;
  o.output = output;
  o.format = TokenFileFormat::kU32;
  o.threads = threads;
  return o;
}

// Counts the opens of one file (inotify), so that a test can wait until the code under test
// has opened it. Closes are watched too: two opens in a row with no event between them would be
// merged into one event by the kernel.
class OpenCounter {
 public:
  explicit OpenCounter(const std::string& path)
      : fd_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)),
        watch_(fd_ < 0 ? -1 : inotify_add_watch(fd_, path.c_str(), IN_OPEN | IN_CLOSE_NOWRITE)) {}
  ~OpenCounter() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return watch_ >= 0; }
  // The opens so far.
  int Count() {
    alignas(inotify_event) char events[4096];
    for (ssize_t n; (n = read(fd_, events, sizeof(events))) > 0;) {
      for (ssize_t at = 0; at < n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(events + at);
        opens_ += (e->mask & IN_OPEN) != 0;
        at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
      }
    }
    return opens_;
  }

 private:
  int fd_;
  int watch_;
  int opens_ = 0;
};

TEST(EncodeCorpus, InputsReadAheadAreWrittenInInputOrder) {
  std::unique_ptr<Encoder> encoder = Gpt2();
  ASSERT_NE(encoder, nullptr);
  const TokenId eot = 50256;  // <|endoftext|>
  ASSERT_EQ(encoder->model().token_bytes()[eot], "<|endoftext|>");
  TempDir dir;
  const Corpus corpus = MakeCorpus(dir);
  for (const std::string doc_mode : {"line", "file"}) {
    SCOPED_TRACE(doc_mode);
    // Document by document, with Encode.
    std::vector<TokenId> want;
    std::vector<uint64_t> want_sizes;
    for (const std::string& text : corpus.texts) {
      std::vector<std::string_view> docs;
      if (doc_mode == "file") {
        docs.push_back(text);
      } else {
        for (size_t start = 0; start < text.size();) {
          const size_t end = text.find('\n', start) + 1;
          docs.push_back(std::string_view(text).substr(start, end - start));
          start = end;
        }
      }
      for (std::string_view doc : docs) {
        absl::StatusOr<std::vector<TokenId>> ids = encoder->Encode(doc);
        ASSERT_TRUE(ids.ok()) << ids.status();
        want.insert(want.end(), ids->begin(), ids->end());
        want.push_back(eot);
        want_sizes.push_back(ids->size() + 1);
      }
    }
    std::string want_bytes(want.size() * 4, '\0');
    std::memcpy(want_bytes.data(), want.data(), want_bytes.size());
    std::string first_index;
    // With 8 threads, input 0 is a named pipe that gets its text only once input 1 has been
    // opened for reading (inotify), which nothing but reading it ahead does while input 0 is
    // unread: so every such run reads ahead. (With regular files, whether a thread finds the
    // current stream busy depends on timing: up to 40 runs were needed to see it once.)
    Corpus piped = corpus;
    piped.paths[0] = dir.File("in0-pipe.txt");
    if (!std::filesystem::exists(piped.paths[0])) {
      ASSERT_EQ(mkfifo(piped.paths[0].c_str(), 0600), 0);
    }
    signal(SIGPIPE, SIG_IGN);
    for (int threads : {1, 3, 8}) {
      SCOPED_TRACE(threads);
      EncodeCorpusOptions o = Options(threads == 8 ? piped : corpus, dir.File("out.u32"), threads);
      o.reading.doc_mode = doc_mode;
      o.eot = eot;
      o.index = dir.File("out.idx");
      std::thread feeder;
      std::atomic<bool> gave_up = false;
      if (threads == 8) {
        // The opens of input 1 that planning the corpus makes (it reads the file's first bytes).
        OpenCounter planning(corpus.paths[1]);
        ASSERT_TRUE(planning.ok());
        ASSERT_TRUE(PlanCorpus(o.reading).ok());
        const int planned = planning.Count();
        auto opens = std::make_shared<OpenCounter>(corpus.paths[1]);
        ASSERT_TRUE(opens->ok());
        feeder = testing::FeedPipe(piped.paths[0], corpus.texts[0],
                                   [opens, planned] { return opens->Count() > planned; }, &gave_up);
      }
      absl::StatusOr<EncodeCorpusResult> r = EncodeCorpus(*encoder, o);
      if (feeder.joinable()) feeder.join();
      EXPECT_FALSE(gave_up) << "input 1 was not read while input 0 waited for its text";
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_TRUE(testing::ReadFileOrFail(dir.File("out.u32")) == want_bytes);
      EXPECT_EQ(r->tokens, want.size());
      EXPECT_EQ(r->documents, want_sizes.size());
      const std::string index = testing::ReadFileOrFail(dir.File("out.idx"));
      if (threads == 1) {
        // One thread never waits for a stream: nothing is read ahead.
        EXPECT_EQ(r->spilled_bytes, 0u);
        first_index = index;
        absl::StatusOr<MegatronIndex> read = ReadMegatronIndex(dir.File("out.idx"));
        ASSERT_TRUE(read.ok()) << read.status();
        ASSERT_EQ(read->sizes.size(), want_sizes.size());
        for (size_t i = 0; i < want_sizes.size(); ++i) {
          ASSERT_EQ(static_cast<uint64_t>(read->sizes[i]), want_sizes[i]) << "document " << i;
        }
      } else {
        EXPECT_TRUE(index == first_index);
      }
      if (threads == 8) {
        EXPECT_GT(r->spilled_bytes, 0u);  // later inputs were read ahead
      }
    }
    // The scratch files have no name: only the outputs are in the folder.
    size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
      files += entry.path().filename().string().starts_with("out.");
    }
    EXPECT_EQ(files, 2u);
  }
}

TEST(EncodeCorpus, AnInputReadAheadFailsOnlyWhenItsTurnComes) {
  std::unique_ptr<Encoder> encoder = Gpt2();
  ASSERT_NE(encoder, nullptr);
  TempDir dir;
  Corpus corpus = MakeCorpus(dir);
  // A special token (refused) on the last line of input 0 (made longer: many batches) and on
  // the first line of input 1, the first read ahead.
  std::string late = Lines(0, 100000) + "the end <|endoftext|> of it\n";
  const uint64_t late_line = static_cast<uint64_t>(std::count(late.begin(), late.end(), '\n'));
  corpus.paths[0] = dir.Write("in0.txt.zst", ZstdCompress(late, 1));
  corpus.paths[1] = dir.Write("in1.txt.zst", ZstdCompress("<|endoftext|> first\n" + corpus.texts[1], 1));
  for (int threads : {1, 8}) {
    SCOPED_TRACE(threads);
    EncodeCorpusOptions o = Options(corpus, dir.File("bad.u32"), threads);
    o.specials = SpecialPolicy::kDisallow;
    absl::StatusOr<EncodeCorpusResult> r = EncodeCorpus(*encoder, o);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(absl::StrContains(r.status().message(), "in0.txt.zst:" + std::to_string(late_line) + ":"))
        << r.status();
    EXPECT_FALSE(std::filesystem::exists(dir.File("bad.u32")));
  }
  // Input 0 fixed: input 1's problem is reported.
  corpus.paths[0] = dir.Write("in0.txt.zst", ZstdCompress(corpus.texts[0], 1));
  EncodeCorpusOptions o = Options(corpus, dir.File("bad.u32"), 8);
  o.specials = SpecialPolicy::kDisallow;
  absl::StatusOr<EncodeCorpusResult> r = EncodeCorpus(*encoder, o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "in1.txt.zst:1:")) << r.status();
}

// A damaged compressed input still yields the documents read before the fault: a refusal among
// them comes first in the input and is the one reported, whatever the batch size or threads
// (as counting reports it: count_corpus_test.cc); with nothing refused before it, the fault.
TEST(EncodeCorpus, TheFirstProblemInInputOrderIsReportedBeforeADamagedStreamsFault) {
  std::unique_ptr<Encoder> encoder = Gpt2();
  ASSERT_NE(encoder, nullptr);
  TempDir dir;
  std::string records, lines;
  for (int i = 0; i < 30000; ++i) {
    records += "{\"text\":\"record " + std::to_string(i) + "\"}\n";
    lines += "line " + std::to_string(i) + " of text\n";
  }
  auto cut_short = [](const std::string& bytes) { return bytes.substr(0, bytes.size() * 2 / 3); };
  // A bad record (line 1001), and a refused special token (line 1001), well before the cut.
  const std::string bad_json = dir.Write(
      "bad.jsonl.zst", cut_short(ZstdCompress(records.substr(0, records.find("{\"text\":\"record 1000\"}")) +
                                           "{oops}\n" + records, 1)));
  const std::string refused = dir.Write(
      "refused.txt.zst", cut_short(ZstdCompress(lines.substr(0, lines.find("line 1000 ")) +
                                                    "a <|endoftext|> here\n" + lines, 1)));
  const std::string clean = dir.Write("clean.txt.zst", cut_short(ZstdCompress(lines, 1)));
  auto error = [&](const std::string& input, size_t batch, int threads, bool skip) {
    EncodeCorpusOptions o;
    o.reading.inputs = {input};
    o.reading.progress = ProgressFormat::kNone;
    o.reading.batch_bytes = o.reading.shard_bytes = batch;
    o.reading.skip_bad_records = skip;
    o.output = dir.File("out.u32");
    o.format = TokenFileFormat::kU32;
    o.threads = threads;
    o.specials = SpecialPolicy::kDisallow;
    absl::StatusOr<EncodeCorpusResult> r = EncodeCorpus(*encoder, o);
    EXPECT_FALSE(std::filesystem::exists(dir.File("out.u32")));
    return r.ok() ? std::string("ok") : std::string(r.status().message());
  };
  for (size_t batch : {size_t{3}, size_t{100}, size_t{1} << 20}) {
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(::testing::Message() << "batch " << batch << ", " << threads << " threads");
      const std::string json = error(bad_json, batch, threads, false);
      EXPECT_TRUE(absl::StrContains(json, bad_json + ":1001:")) << json;
      EXPECT_TRUE(absl::StrContains(json, "malformed JSON")) << json;
      const std::string skipped = error(bad_json, batch, threads, true);
      EXPECT_TRUE(absl::StrContains(skipped, "'" + bad_json + "' is truncated")) << skipped;
      const std::string special = error(refused, batch, threads, false);
      EXPECT_TRUE(absl::StrContains(special, refused + ":1001:")) << special;
      const std::string fault = error(clean, batch, threads, false);
      EXPECT_TRUE(absl::StrContains(fault, "'" + clean + "' is truncated")) << fault;
    }
  }
}

TEST(EncodeCorpus, AStopWhileInputsAreReadAheadLeavesNoFile) {
  std::unique_ptr<Encoder> encoder = Gpt2();
  ASSERT_NE(encoder, nullptr);
  TempDir dir;
  const Corpus corpus = MakeCorpus(dir);
  for (int polls : {1, 5, 30, 80}) {
    SCOPED_TRACE(polls);
    std::atomic<int> asked = 0;
    EncodeCorpusOptions o = Options(corpus, dir.File("stopped.u32"), 8);
    absl::StatusOr<EncodeCorpusResult> r = EncodeCorpus(*encoder, o, [&] { return ++asked > polls; });
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(absl::IsCancelled(r.status())) << r.status();
    size_t outputs = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
      outputs += entry.path().filename().string().starts_with("stopped");
    }
    EXPECT_EQ(outputs, 0u);
  }
}

}  // namespace
}  // namespace tokenmill
