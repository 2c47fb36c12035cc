// EncodeCorpus (the library under `tokenmill encode`) with several compressed inputs: threads
// that would wait for the current stream read later inputs ahead, whose ids are kept in scratch
// files and appended in their turn. The token file and the Megatron index equal those of one
// thread (which reads nothing ahead) and those made here document by document with
// Encoder::Encode; an input read ahead fails only when its turn comes (an earlier input's
// problem is the one reported); a stopped run leaves no file. These run under ThreadSanitizer.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
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
    // Whether threads wait for a stream depends on timing: 8 threads read ahead in about 98% of
    // single runs on 2 idle cores, but none of five runs did once while a sanitizer build's
    // tests ran beside this one, so up to 40 runs are allowed.
    uint64_t spilled_by_8 = 0;
    std::vector<int> thread_counts = {1, 3};
    thread_counts.resize(2 + 40, 8);
    for (int threads : thread_counts) {
      if (threads == 8 && spilled_by_8 > 0) break;
      SCOPED_TRACE(threads);
      EncodeCorpusOptions o = Options(corpus, dir.File("out.u32"), threads);
      o.reading.doc_mode = doc_mode;
      o.eot = eot;
      o.index = dir.File("out.idx");
      absl::StatusOr<EncodeCorpusResult> r = EncodeCorpus(*encoder, o);
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
      if (threads == 8) spilled_by_8 += r->spilled_bytes;
    }
    EXPECT_GT(spilled_by_8, 0u);  // later inputs were read ahead
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
