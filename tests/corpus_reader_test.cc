// The corpus reader's parts: invalid-UTF-8 and NUL statistics, cut rules, and the batch reader
// (every byte of every input in exactly one batch, whatever the shard and batch sizes).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <random>
#include <filesystem>
#include <future>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "corpus/batch_reader.h"
#include "corpus/byte_stream.h"
#include "corpus/cut_rule.h"
#include "corpus/input_files.h"
#include "corpus/text_stats.h"
#include "gtest/gtest.h"
#include "reference/cli_runner.h"
#include "reference/compress.h"
#include "zlib.h"

namespace tokenmill {
namespace {

using namespace std::string_view_literals;

TEST(TextStats, InvalidUtf8CountsMatchPythonsReplacementDecoder) {
  // Expected counts: bytes.decode('utf-8', 'replace').count('\ufffd') in Python 3.11, which
  // replaces maximal invalid subparts as Unicode recommends.
  const std::pair<std::string_view, uint64_t> cases[] = {
      {"\xbf\xa0\xe4\x41\x7f\x8f\x80\x9f\xf5\x41\xf4"sv, 8},
      {"\x41\x7f\xef\xef\x7f\xdf\x7f"sv, 3},
      {"\xef\x41\xf5\x80\xdf\xe4\xe4\xf5\x41\xf5\xf5\xa0\x41\xdf\x41\x8f\xbf\xa0"sv, 14},
      {"\xbf\x8f\x80\xf5\xa0\x8f\xb8\xc0\x80\xf5\xf5\xe4\xc2\x9f"sv, 12},
      {"\x8f\xad\x7f\xf5"sv, 3},
      {"\xff\xc2"sv, 2},
      {"\xb8\x8f\xef\xed\xf0\xf5\xf0\x9f\xa0\xdf\xc0\xad\xdf\x7f\xf5\xa0"sv, 13},
      {"\x90\xed\xf0\xa0\xff\x7f\x80\xf4\xef\xc0\xed\xbf\x90\xef\x41\xb8\x7f"sv, 13},
      {"\xf5\xed\xed\xad\x9f\xff\x90\xf5\xf0\x7f\x7f\xe0\x90\xad\xb8\x7f\x41\xad"sv, 14},
      {"\xe4\xf5\xb8\xf0\xa0\xad\xa0\xb8\x9f\x00"sv, 5},
      {"\x9f\xc0\xff\x80\x90\x41\xc2\xa0\xbf\xdf\xa0\xa0\x90\x7f\xc0"sv, 9},
      {"\xa0\x8f\xe0\xbf\xef\x8f\xe0\xad\xef\x9f\xb8\xa0\xdf\xbf\x7f"sv, 6},
      {"plain ascii and \xe4\xb8\xad\xe6\x96\x87 and \xf0\x9f\x98\x80"sv, 0},
  };
  for (const auto& [bytes, expected] : cases) EXPECT_EQ(CountInvalidUtf8(bytes), expected);
  EXPECT_EQ(CountNulBytes("a\0b\0\0"sv), 3u);
  EXPECT_EQ(CountNulBytes("none"sv), 0u);
}

TEST(CutRule, LinesAndWordBoundaries) {
  CutRule line(CutKind::kLine);
  EXPECT_EQ(line.FindCut("ab\ncd\n", 0), 3u);
  EXPECT_EQ(line.FindCut("ab\ncd\n", 4), 6u);
  EXPECT_EQ(line.FindCut("abcd", 0), CutRule::npos);
  EXPECT_EQ(line.LastCut("ab\ncd\nef"), 6u);
  CutRule words(CutKind::kBetweenWords);
  EXPECT_EQ(words.FindCut("x. a b", 0), 3u + 1);  // "a| b": the cut sits before the space
  EXPECT_EQ(words.FindCut("a  b c", 0), 4u);      // not inside a run of spaces
  EXPECT_EQ(words.FindCut("a b", 2), CutRule::npos);
  EXPECT_EQ(words.LastCut("a b c d"), 5u);
  EXPECT_EQ(words.FindCut("1 2 \xc3\xa9 \xc3\xa9", 0), CutRule::npos);  // ASCII letters only
  EXPECT_EQ(CutRule(CutKind::kNever).FindCut("a b\nc d\n", 0), CutRule::npos);
  // Line cuts: after a '\n' that no whitespace precedes, before an ASCII letter or a CJK
  // ideograph (U+4000..U+9FFF); both sides' characters whole in the data.
  CutRule lines(CutKind::kBetweenWordsAndLines);
  const std::string poem = "\xe5\xba\x8a\xe5\x89\x8d\xe3\x80\x82\n\xe6\x98\x8e\xe6\x9c\x88\n";  // 床前。\n明月\n
  EXPECT_EQ(lines.FindCut(poem, 0), 10u);
  EXPECT_EQ(lines.LastCut(poem), 10u);
  EXPECT_EQ(lines.FindCut(poem, 11), CutRule::npos);  // the final '\n' has nothing after it
  EXPECT_EQ(lines.FindCut("x. a b", 0), 4u);           // word cuts too
  EXPECT_EQ(lines.FindCut("ab\ncd", 0), 3u);
  EXPECT_EQ(lines.FindCut("a;\nbc", 0), 3u);
  EXPECT_EQ(lines.FindCut("ab \ncd", 0), CutRule::npos);    // a space before the '\n'
  EXPECT_EQ(lines.FindCut("ab\r\ncd", 0), CutRule::npos);  // "\r\n"
  EXPECT_EQ(lines.FindCut("ab\n\ncd", 0), CutRule::npos);  // a run of newlines
  EXPECT_EQ(lines.FindCut("ab\n/c", 0), CutRule::npos);     // o200k's [\r\n/]* would go on
  EXPECT_EQ(lines.FindCut("ab\n1c", 0), CutRule::npos);     // not a letter
  EXPECT_EQ(lines.FindCut("ab\n'sc", 0), CutRule::npos);
  EXPECT_EQ(lines.FindCut("\xe3\x80\x80\nab", 0), CutRule::npos);  // U+3000 is a space
  EXPECT_EQ(lines.FindCut("ab\n\xe3\x80\x82a", 0), CutRule::npos);  // 。 starts no word
  EXPECT_EQ(lines.FindCut("ab\n\xe6\x98", 0), CutRule::npos);  // a character cut short
  EXPECT_EQ(lines.FindCut("ab\n\xe6\x98\x8e", 0), 3u);
  EXPECT_EQ(lines.lookahead(), 3u);
  EXPECT_EQ(lines.lookbehind(), 4u);
}

// Reads every batch of `inputs` (one thread) and returns each input's bytes, reassembled in
// offset order; checks batches never overlap.
std::vector<std::string> Reassemble(const std::vector<InputFile>& inputs, CutKind kind,
                                    size_t shard, size_t batch_bytes) {
  std::vector<CutRule> rules(inputs.size(), CutRule(kind));
  BatchReader reader(inputs, rules, BatchReaderOptions{shard, batch_bytes, 64, 2});
  std::vector<std::map<uint64_t, std::string>> pieces(inputs.size());
  BatchReader::Ticket ticket;
  Batch batch;
  while (reader.NextTicket(&ticket)) {
    absl::Status status = reader.Fill(ticket, &batch);
    EXPECT_TRUE(status.ok()) << status;
    if (batch.text().empty()) continue;
    EXPECT_GE(batch.buffer.size(), batch.end + 64);  // JSON padding
    EXPECT_TRUE(pieces[batch.input].emplace(batch.offset, std::string(batch.text())).second);
  }
  std::vector<std::string> out;
  for (const auto& input : pieces) {
    std::string text;
    for (const auto& [offset, piece] : input) {
      EXPECT_EQ(offset, text.size());
      text += piece;
    }
    out.push_back(text);
  }
  return out;
}

TEST(BatchReader, EveryByteInExactlyOneBatch) {
  testing::TempDir dir;
  std::string text =
      "line one\n\nline  two is longer\nx\n a b c d e f\n\xe8\xaf\x97\xe6\xad\x8c\xe3\x80\x82\n"
      "\xe5\xb1\xb1\xe6\xb0\xb4\nno newline at end";
  const std::string zst = testing::ZstdCompress(text, 1);
  std::string plain = dir.Write("t.txt", text), compressed = dir.Write("t.txt.zst", zst);
  dir.Write("empty.txt", "");
  auto inputs = ResolveInputs({plain, compressed, dir.File("empty.txt")}, InputSelection{});
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  EXPECT_EQ((*inputs)[1].compression, Compression::kZstd);
  for (CutKind kind : {CutKind::kLine, CutKind::kBetweenWords, CutKind::kBetweenWordsAndLines,
                       CutKind::kNever}) {
    for (size_t shard : {1, 2, 3, 5, 8, 13, 1000}) {
      std::vector<std::string> got = Reassemble(*inputs, kind, shard, shard);
      ASSERT_EQ(got.size(), 3u);
      EXPECT_EQ(got[0], text) << "shard " << shard;
      EXPECT_EQ(got[1], text) << "shard " << shard;
      EXPECT_EQ(got[2], "");
    }
  }
}

// min_shards: a file smaller than min_shards * shard_bytes is cut into at least about
// min_shards shards (none under kMinShardBytes), still every byte in exactly one batch.
TEST(BatchReader, SmallFilesAreCutIntoMinShards) {
  testing::TempDir dir;
  std::string text;
  for (int i = 0; text.size() < 3 * kMinShardBytes; ++i) text += "line " + std::to_string(i) + " of text\n";
  text.resize(3 * kMinShardBytes - 1);  // exactly three kMinShardBytes
  text += '\n';
  auto inputs = ResolveInputs({dir.Write("t.txt", text)}, InputSelection{});
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  auto batches = [&](size_t shard_bytes, size_t min_shards) {
    BatchReaderOptions options;
    options.shard_bytes = shard_bytes;
    options.min_shards = min_shards;
    BatchReader reader(*inputs, {CutRule(CutKind::kLine)}, options);
    BatchReader::Ticket ticket;
    Batch batch;
    std::string joined;
    size_t count = 0;
    while (reader.NextTicket(&ticket)) {
      EXPECT_TRUE(reader.Fill(ticket, &batch).ok());
      if (batch.text().empty()) continue;
      EXPECT_EQ(batch.offset, joined.size());
      joined += batch.text();
      ++count;
    }
    EXPECT_EQ(joined, text);
    return count;
  };
  EXPECT_EQ(batches(size_t{4} << 20, 1), 1u);   // one 4 MB shard holds it all
  EXPECT_EQ(batches(size_t{4} << 20, 3), 3u);   // three of about a third each
  EXPECT_EQ(batches(size_t{4} << 20, 100), 3u);  // but none under kMinShardBytes
  EXPECT_EQ(batches(kMinShardBytes, 2), 3u);     // already finer than asked: kept
  EXPECT_EQ(batches(kMinShardBytes / 2, 2), 6u);
}

// The last shards shrink: a batch is at most 1/min_shards of the bytes from its start to the
// end of the last file (give or take the line it ends in), or at most kMinShardBytes; the
// earlier ones keep shard_bytes. Across two files, every byte still in exactly one batch.
TEST(BatchReader, TheLastShardsShrink) {
  testing::TempDir dir;
  std::string texts[2];
  for (int f = 0; f < 2; ++f) {
    for (int i = 0; texts[f].size() < (f == 0 ? 5 : 3) * (size_t{1} << 20); ++i) {
      texts[f] += "file " + std::to_string(f) + " line " + std::to_string(i) + " of some text\n";
    }
    texts[f].resize((f == 0 ? 5 : 3) * (size_t{1} << 20) - 1);  // 5 and 3 MiB exactly
    texts[f] += '\n';
  }
  const uint64_t total = texts[0].size() + texts[1].size();
  auto inputs = ResolveInputs({dir.Write("a.txt", texts[0]), dir.Write("b.txt", texts[1])},
                              InputSelection{});
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  constexpr size_t kShard = size_t{1} << 20, kLine = 40;
  for (size_t min_shards : {1, 4, 16}) {
    BatchReaderOptions options;
    options.shard_bytes = kShard;
    options.min_shards = min_shards;
    BatchReader reader(*inputs, {CutRule(CutKind::kLine), CutRule(CutKind::kLine)}, options);
    BatchReader::Ticket ticket;
    Batch batch;
    std::string joined[2];
    uint64_t before = 0;  // bytes of the batches before this one
    size_t count = 0, small = 0;
    while (reader.NextTicket(&ticket)) {
      ASSERT_TRUE(reader.Fill(ticket, &batch).ok());
      if (batch.text().empty()) continue;
      ASSERT_EQ(batch.offset, joined[batch.input].size());
      joined[batch.input] += batch.text();
      const uint64_t size = batch.text().size();
      const uint64_t left = total - before;  // from this batch's start on
      EXPECT_LE(size, std::max<uint64_t>(std::min<uint64_t>(kShard, left / min_shards), kMinShardBytes) + kLine)
          << "min_shards " << min_shards << ", batch " << count;
      if (left >= min_shards * kShard + kLine) {
        EXPECT_GE(size + kLine, kShard) << "batch " << count;
      }
      if (size < kShard / 2) ++small;
      before += size;
      ++count;
    }
    EXPECT_EQ(joined[0], texts[0]);
    EXPECT_EQ(joined[1], texts[1]);
    if (min_shards == 1) {
      EXPECT_EQ(small, 0u);  // 5 + 3 shards of 1 MiB
    } else {
      EXPECT_GE(small, 3u) << "min_shards " << min_shards;
    }
  }
}

// In input order (encoding's): while the current input is a stream with two tickets unfilled,
// the next tickets go ahead to later inputs (streams up to max_open_streams open, then a
// file's shards), marked `ahead`; a stream's tickets are filled in the order handed out
// whichever thread gets there first; every byte still lands in exactly one batch.
TEST(BatchReader, InInputOrderLaterInputsAreReadAheadAndEachStreamInTicketOrder) {
  testing::TempDir dir;
  std::vector<std::string> texts, paths;
  for (int f = 0; f < 4; ++f) {
    std::string text;
    for (int i = 0; text.size() < 50000; ++i) {
      text += "input " + std::to_string(f) + " line " + std::to_string(i) + "\n";
    }
    texts.push_back(text);
    if (f == 3) {
      paths.push_back(dir.Write("plain.txt", text));
      continue;
    }
    const std::string zst = testing::ZstdCompress(text, 1);
    paths.push_back(dir.Write("s" + std::to_string(f) + ".txt.zst", zst));
  }
  auto inputs = ResolveInputs(paths, InputSelection{});
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  BatchReaderOptions options;
  options.shard_bytes = 8192;
  options.batch_bytes = 4096;
  options.max_open_streams = 3;  // the current stream and two ahead
  options.in_input_order = true;
  BatchReader reader(*inputs, std::vector<CutRule>(4, CutRule(CutKind::kLine)), options);
  // Tickets, none filled: two for the current stream, two for each stream ahead (two open),
  // then every shard of the plain file, since no other stream may open; then the current again.
  const size_t plain_shards = (texts[3].size() + options.shard_bytes - 1) / options.shard_bytes;
  std::vector<std::tuple<size_t, bool, bool, uint64_t>> want = {
      {0, true, false, 0}, {0, true, false, 1}, {1, true, true, 0},
      {1, true, true, 1},  {2, true, true, 0},  {2, true, true, 1}};
  for (size_t i = 0; i < plain_shards; ++i) want.emplace_back(3, false, true, 0);
  want.emplace_back(0, true, false, 2);
  std::vector<BatchReader::Ticket> tickets(want.size());
  for (BatchReader::Ticket& t : tickets) ASSERT_TRUE(reader.NextTicket(&t));
  for (size_t i = 0; i < tickets.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(tickets[i].input, std::get<0>(want[i]));
    EXPECT_EQ(tickets[i].stream, std::get<1>(want[i]));
    EXPECT_EQ(tickets[i].ahead, std::get<2>(want[i]));
    if (tickets[i].stream) EXPECT_EQ(tickets[i].seq, std::get<3>(want[i]));
    if (i > 6 && !tickets[i].stream) EXPECT_EQ(tickets[i].start, tickets[i - 1].end);
  }
  // Filled by a thread each, started last ticket first: each stream's batches still follow
  // its tickets' order.
  std::vector<Batch> batches(tickets.size());
  std::vector<absl::Status> statuses(tickets.size());
  std::vector<std::thread> threads;
  for (size_t i = tickets.size(); i-- > 0;) {
    threads.emplace_back([&, i] { statuses[i] = reader.Fill(tickets[i], &batches[i]); });
  }
  for (std::thread& t : threads) t.join();
  std::vector<std::map<uint64_t, std::string>> pieces(4);
  std::vector<uint64_t> next_offset(4, 0);
  auto take = [&](const BatchReader::Ticket& t, const Batch& b) {
    if (b.text().empty()) return;
    if (t.stream) {
      EXPECT_EQ(b.offset, next_offset[t.input]) << "input " << t.input << " ticket " << t.seq;
      next_offset[t.input] = b.offset + b.text().size();
    }
    EXPECT_TRUE(pieces[t.input].emplace(b.offset, std::string(b.text())).second);
  };
  for (size_t i = 0; i < tickets.size(); ++i) {
    ASSERT_TRUE(statuses[i].ok()) << statuses[i];
    take(tickets[i], batches[i]);
  }
  // The rest, one at a time: every byte in exactly one batch.
  BatchReader::Ticket t;
  Batch b;
  while (reader.NextTicket(&t)) {
    absl::Status status = reader.Fill(t, &b);
    ASSERT_TRUE(status.ok()) << status;
    take(t, b);
  }
  for (size_t f = 0; f < 4; ++f) {
    std::string joined;
    for (const auto& [offset, piece] : pieces[f]) {
      EXPECT_EQ(offset, joined.size());
      joined += piece;
    }
    EXPECT_EQ(joined, texts[f]) << "input " << f;
  }
}

// Read ahead are only the next few files: never stdin, a pipe or a device (its writer may wait
// for the current input to be read; a read of it may wait forever), nor anything after one,
// and no more than 2 x max_open_streams inputs past the current one (each read ahead holds a
// scratch file open in encoding).
TEST(BatchReader, InInputOrderNeitherPipesNorFarAheadAreReadAhead) {
  testing::TempDir dir;
  std::string text;
  for (int i = 0; text.size() < 20000; ++i) text += "line " + std::to_string(i) + "\n";
  const std::string zst = testing::ZstdCompress(text, 1);
  const std::string compressed = dir.Write("s.txt.zst", zst);
  auto resolved = ResolveInputs({compressed}, InputSelection{});
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  const InputFile stream = resolved->front();
  InputFile pipe = stream;  // as a named pipe resolves (it is not opened here)
  pipe.path = dir.File("fifo");
  pipe.size = 0;
  pipe.compression = Compression::kDetectWhenRead;
  pipe.read_once = true;
  std::vector<InputFile> small;
  for (int f = 0; f < 12; ++f) {
    auto file = ResolveInputs({dir.Write("small" + std::to_string(f) + ".txt", "a small file\n")}, InputSelection{});
    ASSERT_TRUE(file.ok()) << file.status();
    small.push_back(file->front());
  }
  BatchReaderOptions options;
  options.batch_bytes = 4096;
  options.max_open_streams = 2;
  options.in_input_order = true;
  // The inputs of each case, and the inputs of its first eight tickets, none filled (+: ahead).
  auto tickets = [&](std::vector<InputFile> inputs) {
    BatchReader reader(inputs, std::vector<CutRule>(inputs.size(), CutRule(CutKind::kLine)), options);
    std::string got;
    BatchReader::Ticket t;
    for (int i = 0; i < 8 && reader.NextTicket(&t); ++i) got += std::to_string(t.input) + (t.ahead ? "+ " : " ");
    return got;
  };
  EXPECT_EQ(tickets({stream, stream, pipe, stream}), "0 0 1+ 1+ 0 0 0 0 ");
  EXPECT_EQ(tickets({stream, pipe, stream}), "0 0 0 0 0 0 0 0 ");
  EXPECT_EQ(tickets({pipe, stream, stream}), "0 0 1+ 1+ 0 0 0 0 ");  // after the current one: yes
  std::vector<InputFile> many = {stream};
  many.insert(many.end(), small.begin(), small.end());
  EXPECT_EQ(tickets(many), "0 0 1+ 2+ 3+ 4+ 0 0 ");  // 2 x max_open_streams files ahead
  options.read_ahead = false;
  EXPECT_EQ(tickets({stream, stream}), "0 0 0 0 0 0 0 0 ");
}

// A stream ticket given up (a stopped run) waits for the tickets before it, and ends the stream:
// later tickets are filled empty.
TEST(BatchReader, InInputOrderAbandonKeepsTheOrderAndEndsTheStream) {
  testing::TempDir dir;
  std::string text;
  for (int i = 0; text.size() < 40000; ++i) text += "line " + std::to_string(i) + "\n";
  const std::string zst = testing::ZstdCompress(text, 1);
  auto inputs = ResolveInputs({dir.Write("s.txt.zst", zst)}, InputSelection{});
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  BatchReaderOptions options;
  options.batch_bytes = 4096;
  options.max_open_streams = 2;
  options.in_input_order = true;
  BatchReader reader(*inputs, {CutRule(CutKind::kLine)}, options);
  BatchReader::Ticket first, second, third;
  ASSERT_TRUE(reader.NextTicket(&first));
  ASSERT_TRUE(reader.NextTicket(&second));
  ASSERT_TRUE(reader.NextTicket(&third));
  Batch b1, b3;
  absl::Status s1, s3;
  std::thread abandon([&] { reader.Abandon(second); });
  std::thread fill3([&] { s3 = reader.Fill(third, &b3); });
  s1 = reader.Fill(first, &b1);
  abandon.join();
  fill3.join();
  ASSERT_TRUE(s1.ok()) << s1;
  ASSERT_TRUE(s3.ok()) << s3;
  EXPECT_EQ(b1.offset, 0u);
  EXPECT_FALSE(b1.text().empty());
  EXPECT_TRUE(b3.text().empty());
  BatchReader::Ticket more;
  EXPECT_FALSE(reader.NextTicket(&more));
}

// A ticket waiting for an earlier one of its stream that will never be filled (a oneTBB
// pipeline cancelled by an exception drops the tickets it held) gives up once `cancelled`
// says so, instead of waiting forever; Abandon too.
TEST(BatchReader, InInputOrderAWaitForATurnEndsWhenCancelled) {
  testing::TempDir dir;
  std::string text;
  for (int i = 0; text.size() < 40000; ++i) text += "line " + std::to_string(i) + "\n";
  auto inputs = ResolveInputs({dir.Write("s.txt.zst", testing::ZstdCompress(text, 1))}, InputSelection{});
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  std::atomic<bool> cancel{false};
  BatchReaderOptions options;
  options.batch_bytes = 4096;
  options.in_input_order = true;
  options.cancelled = [&cancel] { return cancel.load(); };
  BatchReader reader(*inputs, {CutRule(CutKind::kLine)}, options);
  BatchReader::Ticket first, second, third;
  ASSERT_TRUE(reader.NextTicket(&first));
  ASSERT_TRUE(reader.NextTicket(&second));
  ASSERT_TRUE(reader.NextTicket(&third));
  ASSERT_TRUE(second.stream && third.stream && second.input == first.input);
  Batch batch;
  std::future<absl::Status> waiting =
      std::async(std::launch::async, [&] { return reader.Fill(second, &batch); });
  std::future<void> abandoning = std::async(std::launch::async, [&] { reader.Abandon(third); });
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  cancel = true;
  const bool ended = waiting.wait_for(std::chrono::seconds(20)) == std::future_status::ready &&
                     abandoning.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  EXPECT_TRUE(ended) << "still waiting for the first ticket, cancelled";
  if (!ended) {  // let them finish, to end the test
    Batch unblock;
    (void)reader.Fill(first, &unblock);
  }
  const absl::Status status = waiting.get();
  abandoning.get();
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
  EXPECT_TRUE(batch.text().empty());
}

TEST(InputFiles, FormatsFromMagicAndExtension) {
  testing::TempDir dir;
  dir.Write("a.jsonl", "{}\n");
  dir.Write("b.JSON", "{}\n");
  dir.Write("c.txt", "x\n");
  const std::string zst = testing::ZstdCompress("{}\n", 1);
  dir.Write("d.jsonl.zst", zst);
  dir.Write("e.bin", zst);  // compressed without the extension: the magic decides
  auto inputs = ResolveInputs({dir.path()}, InputSelection{});
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  ASSERT_EQ(inputs->size(), 5u);
  EXPECT_EQ((*inputs)[0].format, RecordFormat::kJsonLines);
  EXPECT_EQ((*inputs)[1].format, RecordFormat::kJsonLines);
  EXPECT_EQ((*inputs)[2].format, RecordFormat::kText);
  EXPECT_EQ((*inputs)[3].format, RecordFormat::kJsonLines);
  EXPECT_EQ((*inputs)[3].compression, Compression::kZstd);
  EXPECT_EQ((*inputs)[4].compression, Compression::kZstd);
  EXPECT_EQ((*inputs)[4].format, RecordFormat::kText);
  InputSelection as_json;
  as_json.format = "jsonl";
  EXPECT_EQ(ResolveInputs({dir.File("c.txt")}, as_json)->front().format, RecordFormat::kJsonLines);
}

// pzstd's files start with a zstd skippable frame (magic 0x184D2A50-5F), and any frame may be
// one: such a file is zstd, by its name or its first bytes (stdin), and reads as its frames'
// text. Before, a .zst name was refused ("does not start with the zstd magic bytes") and the
// same bytes on stdin were read as text.
TEST(InputFiles, ZstdStartingWithASkippableFrameIsZstd) {
  testing::TempDir dir;
  auto skippable = [](uint8_t low_nibble, const std::string& payload) {
    std::string frame = {static_cast<char>(0x50 | low_nibble), 0x2A, 0x4D, 0x18};
    for (int i = 0; i < 4; ++i) frame.push_back(static_cast<char>(payload.size() >> (8 * i)));
    return frame + payload;
  };
  const std::string first = "the first frame's lines\n", second = "and the second's\n";
  const std::string bytes = skippable(0, "1234") + testing::ZstdCompress(first) + skippable(0xF, "") + testing::ZstdCompress(second);
  for (const std::string name : {"s.zst", "s.bin"}) {
    SCOPED_TRACE(name);
    auto inputs = ResolveInputs({dir.Write(name, bytes)}, InputSelection{});
    ASSERT_TRUE(inputs.ok()) << inputs.status();
    EXPECT_EQ(inputs->front().compression, Compression::kZstd);
    // As stdin would be: the compression told by the first bytes as they are read.
    for (Compression compression : {inputs->front().compression, Compression::kDetectWhenRead}) {
      InputFile input = inputs->front();
      input.compression = compression;
      auto stream = ByteStream::Open(input);
      ASSERT_TRUE(stream.ok()) << stream.status();
      std::string text, buffer(4096, '\0');
      while (true) {
        auto got = (*stream)->Read(buffer.data(), buffer.size());
        ASSERT_TRUE(got.ok()) << got.status();
        if (*got == 0) break;
        text.append(buffer.data(), *got);
      }
      EXPECT_EQ(text, first + second);
    }
  }
}

// gzip members one after another, with zero padding between, read whole however the member
// boundary falls against the 1 MiB reads from disk: a trailer or a header split over two reads
// (the first member stored, its size chosen to put its end anywhere from 12 bytes before to
// 12 bytes after the first read's end). Bytes after a member that are no member's start are
// refused as a corrupt header, however few.
TEST(ByteStream, GzipMembersAreReadWholeWhereverTheyMeetAReadsEnd) {
  testing::TempDir dir;
  auto read_all = [&](const std::string& path, std::string* text) -> absl::Status {
    auto inputs = ResolveInputs({path}, InputSelection{});
    if (!inputs.ok()) return inputs.status();
    auto stream = ByteStream::Open(inputs->front());
    if (!stream.ok()) return stream.status();
    std::string buffer(size_t{3} << 20, '\0');
    while (true) {
      auto got = (*stream)->Read(buffer.data(), buffer.size());
      if (!got.ok()) return got.status();
      if (*got == 0) return absl::OkStatus();
      text->append(buffer.data(), *got);
    }
  };
  // A member with every optional header field (FEXTRA, FNAME, FCOMMENT, FHCRC: 35 header
  // bytes), as gzip -N, bgzip and other tools write some of them; zlib writes none.
  auto gzip_fields = [&](const std::string& text) {
    std::string member = testing::GzipCompress(text, 6);  // its deflate data and trailer, after a 10-byte header
    std::string header = std::string("\x1f\x8b\x08\x1e\0\0\0\0\0\x03", 10);
    header += std::string("\x06\0BC\x02\0xy", 8);  // XLEN 6: one subfield
    header += std::string("name.txt\0", 9) + std::string("a comment\0", 10);
    const uLong crc = crc32(0, reinterpret_cast<const Bytef*>(header.data()), static_cast<uInt>(header.size()));
    header.push_back(static_cast<char>(crc & 0xff));
    header.push_back(static_cast<char>((crc >> 8) & 0xff));
    return header + member.substr(10);
  };
  std::mt19937 random(5);
  std::string noise(size_t{1} << 20, '\0');
  for (char& c : noise) c = static_cast<char>(random());
  const std::string second = "the second member\n", third = "and a third after zeros\n";
  const std::string rest = gzip_fields(second) + std::string(5, '\0') + testing::GzipCompress(third, 9);
  constexpr size_t kRead = size_t{1} << 20;
  int placed = 0;
  for (int d = -40; d <= 12; ++d) {
    SCOPED_TRACE(d);
    // A stored member's size grows by one with its text, but for a block header at times.
    size_t length = kRead - 18 - 5 * 17 + static_cast<size_t>(d);
    std::string first;
    for (int tries = 0; tries < 8; ++tries) {
      first = testing::GzipCompress(noise.substr(0, length), 0);
      const long off = static_cast<long>(kRead) + d - static_cast<long>(first.size());
      if (off == 0) break;
      length = static_cast<size_t>(static_cast<long>(length) + off);
    }
    if (first.size() != kRead + d) continue;
    ++placed;
    std::string text;
    const std::string path = dir.Write("m.txt.gz", first + rest);
    absl::Status status = read_all(path, &text);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_TRUE(text == noise.substr(0, length) + second + third);
    // Garbage after the last member, from one byte to more than a header's ten.
    for (const std::string garbage : {"x", "garbage!", "more garbage than a header"}) {
      std::string partial;
      status = read_all(dir.Write("g.txt.gz", first + rest + garbage), &partial);
      ASSERT_FALSE(status.ok()) << garbage;
      EXPECT_NE(std::string(status.message()).find("incorrect header check"), std::string::npos) << status;
    }
  }
  EXPECT_GE(placed, 45);
  // Through a pipe, whose first read is the 4 bytes looked at for the magic: every header is
  // split there.
  const std::string fields = gzip_fields(second) + gzip_fields(third);
  testing::CliResult piped = testing::RunCli({"count", "--output", dir.File("piped.counts"), "--progress", "none", "-"}, fields);
  testing::CliResult plain = testing::RunCli({"count", "--output", dir.File("plain.counts"), "--progress", "none",
                            dir.Write("plain.txt", second + third)});
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(piped.err.substr(0, piped.err.find('(')), plain.err.substr(0, plain.err.find('(')));
}

// Data compressed in a way tokenmill does not read (xz, bzip2, lz4) is refused, naming the
// compression, rather than read as text (garbage ids, exit 0): by a file's first bytes, and by
// stdin's when read. stdin given twice is refused too (the second would be empty).
TEST(InputFiles, CompressionsNotReadAreRefusedNotReadAsText) {
  testing::TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"xz", std::string("\xFD" "7zXZ\0\0\x04", 8) + "rest"},
      {"bzip2", "BZh91AY&SYrest"},
      {"lz4", std::string("\x04\x22\x4D\x18\x64\x40\xA7", 7) + "rest"},
  };
  for (const auto& [format, bytes] : cases) {
    SCOPED_TRACE(format);
    const std::string path = dir.Write("data." + format, bytes);
    auto inputs = ResolveInputs({path}, InputSelection{});
    ASSERT_FALSE(inputs.ok());
    EXPECT_NE(std::string(inputs.status().message()).find("is " + format + "-compressed, which tokenmill does not read"),
              std::string::npos)
        << inputs.status();
    InputFile as_stdin;
    as_stdin.path = path;
    as_stdin.compression = Compression::kDetectWhenRead;
    auto stream = ByteStream::Open(as_stdin);
    ASSERT_FALSE(stream.ok());
    EXPECT_NE(std::string(stream.status().message()).find(format + "-compressed"), std::string::npos)
        << stream.status();
  }
  // Text that merely starts with "BZh" is text.
  EXPECT_TRUE(ResolveInputs({dir.Write("bzh.txt", "BZh is how it starts\n")}, InputSelection{}).ok());
  auto twice = ResolveInputs({"-", "-"}, InputSelection{});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(std::string(twice.status().message()).find("given twice"), std::string::npos);
}

// A folder's hidden files and folders (.git, .DS_Store, an editor's swap file) are left out, as
// a glob's `*` leaves them out (a .git's packed objects were read as corpus); named, a hidden
// file is read. A folder holding only hidden entries is refused, saying so.
TEST(InputFiles, HiddenFilesAndFoldersInAFolderAreLeftOut) {
  testing::TempDir dir;
  const std::string folder = dir.path() + "/corpus";
  for (const char* sub : {"corpus/.git/objects", "corpus/docs", "corpus/only_hidden"}) {
    std::filesystem::create_directories(dir.path() + "/" + sub);
  }
  for (const char* name : {"corpus/a.txt", "corpus/.notes.txt", "corpus/.git/HEAD",
                           "corpus/.git/objects/pack", "corpus/docs/b.txt", "corpus/docs/.b.txt.swp",
                           "corpus/only_hidden/.DS_Store"}) {
    dir.Write(name, "text\n");
  }
  auto inputs = ResolveInputs({folder + "/a.txt", folder}, InputSelection{});
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  std::vector<std::string> paths;
  for (const InputFile& input : *inputs) paths.push_back(input.path);
  EXPECT_EQ(paths, (std::vector<std::string>{folder + "/a.txt", folder + "/a.txt", folder + "/docs/b.txt"}));
  auto named = ResolveInputs({folder + "/.notes.txt"}, InputSelection{});
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(named->size(), 1u);
  auto none = ResolveInputs({folder + "/only_hidden"}, InputSelection{});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(std::string(none.status().message()).find("holds no files (1 hidden file or folder left out: name one to read it)"),
            std::string::npos)
      << none.status();
  // An `include` glob starting with a '.' reaches hidden files (not into hidden folders).
  InputSelection dotted;
  dotted.include = {".*.txt", "*.txt"};
  auto included = ResolveInputs({folder}, dotted);
  ASSERT_TRUE(included.ok()) << included.status();
  paths.clear();
  for (const InputFile& input : *included) paths.push_back(input.path);
  EXPECT_EQ(paths, (std::vector<std::string>{folder + "/.notes.txt", folder + "/a.txt", folder + "/docs/b.txt"}));
  // A glob's `.*` also matches "." and "..", the folder and its parent: they are no inputs.
  auto globbed = ResolveInputs({folder + "/.*.txt", folder + "/docs/.*"}, InputSelection{});
  ASSERT_TRUE(globbed.ok()) << globbed.status();
  paths.clear();
  for (const InputFile& input : *globbed) paths.push_back(input.path);
  EXPECT_EQ(paths, (std::vector<std::string>{folder + "/.notes.txt", folder + "/docs/.b.txt.swp"}));
}

// A `**` component matches zero or more folders (bash's globstar, Python's glob with
// recursive=True), in input arguments and in `include`/`exclude` globs. In an argument, neither
// `**` nor `*` matches a hidden name, which a component starting with '.' matches; a folder it
// names is read whole.
TEST(InputFiles, DoubleStarMatchesAnyDepth) {
  testing::TempDir dir;
  const std::string folder = dir.path() + "/corpus";
  for (const char* sub : {"corpus/docs/deep", "corpus/.git", "other", "empty"}) {
    std::filesystem::create_directories(dir.path() + "/" + sub);
  }
  for (const char* name : {"corpus/a.txt", "corpus/x.md", "corpus/docs/b.txt", "corpus/docs/deep/c.txt",
                           "corpus/.git/d.txt", "corpus/docs/.e.txt", "other/f.txt", "other/-"}) {
    dir.Write(name, "text\n");
  }
  auto paths_of = [](const std::vector<std::string>& arguments, const InputSelection& selection) {
    auto inputs = ResolveInputs(arguments, selection);
    EXPECT_TRUE(inputs.ok()) << inputs.status();
    std::vector<std::string> paths;
    if (inputs.ok()) {
      for (const InputFile& input : *inputs) paths.push_back(input.path);
    }
    return paths;
  };
  using Paths = std::vector<std::string>;
  const std::string a = folder + "/a.txt", b = folder + "/docs/b.txt", c = folder + "/docs/deep/c.txt";
  const std::string x = folder + "/x.md";
  EXPECT_EQ(paths_of({folder + "/**/*.txt"}, {}), (Paths{a, b, c}));
  EXPECT_EQ(paths_of({folder + "/**"}, {}), (Paths{a, b, c, x}));
  EXPECT_EQ(paths_of({folder + "/**/"}, {}), (Paths{a, b, c, x}));
  EXPECT_EQ(paths_of({folder + "/docs/**/c.txt"}, {}), (Paths{c}));
  EXPECT_EQ(paths_of({folder + "/**/deep/*"}, {}), (Paths{c}));
  EXPECT_EQ(paths_of({folder + "/**/**/c.txt"}, {}), (Paths{c}));
  EXPECT_EQ(paths_of({folder + "/**//*.txt"}, {}), (Paths{a, b, c}));
  EXPECT_EQ(paths_of({folder + "/**/deep"}, {}), (Paths{c}));  // a folder named: read whole
  EXPECT_EQ(paths_of({folder + "/**/.*.txt"}, {}), (Paths{folder + "/docs/.e.txt"}));
  EXPECT_EQ(paths_of({folder + "/**/.git/*.txt"}, {}), (Paths{folder + "/.git/d.txt"}));
  // The part before `**` may be a glob; a folder it names where nothing matches is passed over.
  EXPECT_EQ(paths_of({dir.path() + "/*/**/*.txt"}, {}), (Paths{a, b, c, dir.path() + "/other/f.txt"}));
  // A file named "-" that a glob finds is that file, not stdin.
  EXPECT_EQ(paths_of({dir.path() + "/other/**/-"}, {}), (Paths{dir.path() + "/other/-"}));
  std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path() + "/other");
  EXPECT_EQ(paths_of({"*"}, {}), (Paths{"./-", "f.txt"}));
  // Relative to the working folder.
  std::filesystem::current_path(folder);
  EXPECT_EQ(paths_of({"**/*.txt"}, {}), (Paths{"./a.txt", "./docs/b.txt", "./docs/deep/c.txt"}));
  std::filesystem::current_path(cwd);
  // A glob ending in '/' or `**` names folders: a file named so is not read.
  dir.Write("other/y", "text\n");
  EXPECT_EQ(paths_of({dir.path() + "/other/**/y"}, {}), (Paths{dir.path() + "/other/y"}));
  EXPECT_FALSE(ResolveInputs({dir.path() + "/other/**/y/"}, InputSelection{}).ok());
  EXPECT_FALSE(ResolveInputs({dir.path() + "/other/**/y/**"}, InputSelection{}).ok());
  // An `include` glob starting with '.' reaches hidden files (not hidden folders), as in a folder.
  InputSelection dotted;
  dotted.include = {".*.txt", "*.txt"};
  EXPECT_EQ(paths_of({folder + "/**"}, dotted), (Paths{a, folder + "/docs/.e.txt", b, c}));
  EXPECT_EQ(paths_of({folder + "/**"}, dotted), paths_of({folder}, dotted));
  // `include` and `exclude` globs with `**`, on a folder's walk and on a `**` argument.
  InputSelection deep;
  deep.include = {"docs/**/*.txt"};
  EXPECT_EQ(paths_of({folder}, deep), (Paths{b, c}));
  InputSelection not_deep;
  not_deep.exclude = {"**/deep/**"};
  EXPECT_EQ(paths_of({folder + "/**/*.txt"}, not_deep), (Paths{a, b}));
  for (const std::string& glob : {folder + "/**/*.nothing", dir.path() + "/empty/**", dir.path() + "/none/**/*.txt",
                                  dir.path() + "/*/**/*.nothing"}) {
    auto none = ResolveInputs({glob}, InputSelection{});
    ASSERT_FALSE(none.ok()) << glob;
    EXPECT_TRUE(absl::IsNotFound(none.status())) << none.status();
    EXPECT_NE(std::string(none.status().message()).find("no files match '" + glob + "'"), std::string::npos)
        << none.status();
  }
}

// A subfolder that cannot be read fails the walk and is named; before, the walk ended there
// without a word and the files after it were left out (exit 0 with part of the corpus). Run
// in a child as `nobody` when this test runs as root (root reads any folder). An `exclude`
// matching the folder leaves it unwalked.
TEST(InputFiles, AnUnreadableSubfolderIsAnErrorNotTheEndOfTheFolder) {
  testing::TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
  const std::string folder = dir.path() + "/corpus";
  ASSERT_EQ(mkdir(folder.c_str(), 0755), 0);
  for (const char* name : {"a.txt", "b.txt", "c.txt", "d.txt"}) {
    const std::string path = folder + "/" + name;
    dir.Write(std::string("corpus/") + name, "text\n");
    ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  }
  const std::string locked = folder + "/b_locked";
  ASSERT_EQ(mkdir(locked.c_str(), 0), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(10);
    absl::StatusOr<std::vector<InputFile>> inputs = ResolveInputs({folder}, InputSelection{});
    if (inputs.ok()) _exit(static_cast<int>(20 + inputs->size()));  // 20 + the files found
    const std::string message(inputs.status().message());
    if (message.find("cannot read folder '" + locked + "'") == std::string::npos) _exit(3);
    // Excluded, the folder is not walked: the four files.
    InputSelection without;
    without.exclude = {"b_locked"};
    absl::StatusOr<std::vector<InputFile>> rest = ResolveInputs({folder}, without);
    _exit(rest.ok() && rest->size() == 4 ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  chmod(locked.c_str(), 0755);  // so that TempDir can remove it
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: could not become nobody; 3: another error; 2x: "
                                       "the walk succeeded with x files; 4: excluding the folder "
                                       "did not leave the other four";
}

}  // namespace
}  // namespace tokenmill
