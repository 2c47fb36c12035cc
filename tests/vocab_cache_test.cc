// The cache of loaded vocabularies (model/vocab_cache.h): LoadEncoder of a large .tiktoken
// writes an entry, a later LoadEncoder reads it, and the encoder read from it is the one the
// files give (same model, same ids on text of every kind, every 3-byte character and every
// token included). An entry that fails its checks (its CRC, or, with the CRC made right, the
// tables' own), a cache turned off, relative or unwritable, a folder or entry others may write,
// a link or FIFO in an entry's place, a small vocabulary and a changed sidecar all still give
// the files' encoder; at most kMaxEntries entries are kept; stale temporary files go.
#include <gtest/gtest.h>
#include <isa-l/crc64.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model/bpe/bpe_model.h"
#include "model/encoder.h"
#include "model/model_file.h"
#include "model/tiktoken_file.h"
#include "model/vocab_cache.h"
#include "reference/cli_runner.h"
#include "reference/sidecar_pattern.h"

namespace tokenmill {
namespace {

using testing::TempDir;

// Sets an environment variable for the test's scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

// TOKENMILL_CACHE_DIR for the test's scope.
class CacheDir : public ScopedEnv {
 public:
  explicit CacheDir(const std::string& value) : ScopedEnv("TOKENMILL_CACHE_DIR", value) {}
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::vector<std::string> Entries(const std::string& folder) {
  std::vector<std::string> entries;
  if (!std::filesystem::exists(folder)) return entries;
  for (const auto& e : std::filesystem::directory_iterator(folder)) {
    if (e.path().extension() == ".tmvocab") entries.push_back(e.path().string());
  }
  return entries;
}

// Text of many kinds: English, code, numbers, Chinese and Japanese, emoji, special tokens,
// invalid UTF-8, and every 3-byte UTF-8 character (the character segments' whole table), in
// runs of 7 with a space between runs.
std::string Sample() {
  std::string text =
      "Hello world! The quick brown fox jumps over the lazy dog, 12345 times.\n"
      "int main(int argc, char** argv) { return argc > 1 ? 0 : -1; }  // done\n"
      "床前明月光，疑是地上霜。举头望明月，低头思故乡。日本語のテキストです。\n"
      "emoji 🎉🚀 and <|endoftext|> and <|fim_prefix|>x<|fim_suffix|> \xff\xfe bytes\n";
  for (uint32_t c = 0x800, run = 0; c <= 0xFFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    text += static_cast<char>(0xE0 | c >> 12);
    text += static_cast<char>(0x80 | (c >> 6 & 0x3F));
    text += static_cast<char>(0x80 | (c & 0x3F));
    if (++run % 7 == 0) text += run % 70 == 0 ? "\n" : " ";
  }
  return text;
}

std::unique_ptr<Encoder> Load(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = LoadEncoder(path);
  EXPECT_TRUE(encoder.ok()) << encoder.status();
  return encoder.ok() ? *std::move(encoder) : nullptr;
}

std::vector<TokenId> EncodeOrDie(const Encoder& encoder, const std::string& text) {
  absl::StatusOr<std::vector<TokenId>> ids = encoder.Encode(text, SpecialPolicy::kAllow);
  EXPECT_TRUE(ids.ok()) << ids.status();
  return ids.ok() ? *ids : std::vector<TokenId>{};
}

// A vocabulary's files copied into `dir` (the sidecar's pattern made absolute as the test
// vocabularies need).
std::string CopyVocab(const TempDir& dir, const std::string& name) {
  const std::string ranks = dir.Write(name + ".tiktoken", ReadAll(testing::TestVocabDir() + name + ".tiktoken"));
  dir.Write(name + ".json", ReadAll(testing::TestVocabDir() + name + ".json"));
  return ranks;
}

const BpeModel& Bpe(const Encoder& e) { return *AsBpe(e.model()); }

uint64_t Varint(const std::string& b, size_t& at) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const auto byte = static_cast<uint8_t>(b.at(at++));
    v |= uint64_t{byte & 0x7Fu} << shift;
    if ((byte & 0x80) == 0) return v;
  }
}

// Where an entry's payload starts: after its header (magic 8, format 4, key 32, size 8, the
// payload's CRC-64 8), its inputs (a count, then each one's length and bytes) and zero bytes
// to a multiple of 64.
size_t PayloadAt(const std::string& entry) {
  size_t at = 60;
  for (uint64_t inputs = Varint(entry, at); inputs > 0; --inputs) at += Varint(entry, at);
  return (at + 63) / 64 * 64;
}

// The count of an aligned array (binary_io.h's WriteAlignedArray) at `at`, moving `at` past
// the count and the zero bytes after it to the items.
uint64_t AlignedCount(const std::string& b, size_t& at) {
  const uint64_t count = Varint(b, at);
  at += 1 + static_cast<uint8_t>(b.at(at));
  return count;
}

// The payload's CRC-64 in an entry's header made right again after an edit of the payload.
void Reseal(std::string& entry) {
  constexpr size_t kCrcAt = 8 + 4 + 32 + 8;
  const size_t payload_at = PayloadAt(entry);
  const uint64_t crc = crc64_ecma_refl(0, reinterpret_cast<const unsigned char*>(entry.data()) + payload_at,
                                       entry.size() - payload_at);
  for (int i = 0; i < 8; ++i) entry[kCrcAt + i] = static_cast<char>(crc >> (8 * i) & 0xFF);
}

// Where the parts of an entry lie (vocab_cache.cc's header, then model_file.cc's payload: the
// tokens record, then BpeEncoder::AppendTables), for edits that its CRC is then made right for.
struct Layout {
  size_t tokens_at = 0;       // the tokens record: their count, a varint
  size_t mask_at = 0;         // TokenTable: its mask, a varint
  size_t slots_at = 0;        // its slots: {key 16 bytes, size 4, id 4}
  size_t slot_count = 0;
  size_t long_keys_at = 0;    // its long keys' bytes
  size_t long_keys_size = 0;
  size_t pairs_at = 0;        // RankBytePairs: 65,536 {priority 4, result 4}
  size_t chars_at = 0;        // CharSegments: 65,536 entries of 8 bytes
};

Layout LayoutOf(const std::string& entry) {
  Layout l;
  size_t at = PayloadAt(entry);
  l.tokens_at = at;
  const uint64_t tokens = Varint(entry, at);
  uint64_t blob;
  std::memcpy(&blob, entry.data() + at + 8 * (tokens - 1), 8);
  at += 8 * tokens + blob;
  at += 1 + static_cast<uint8_t>(entry.at(at));  // zero bytes to a multiple of 64
  EXPECT_EQ(at % 64, 0u);
  l.mask_at = at;
  for (int i = 0; i < 4; ++i) Varint(entry, at);  // mask, size, longest, distinct
  l.slot_count = AlignedCount(entry, at);
  l.slots_at = at;
  at += 24 * l.slot_count;
  const uint64_t filter_words = AlignedCount(entry, at);
  EXPECT_EQ(at % 8, 0u);
  at += 8 * filter_words;  // the filter
  l.long_keys_size = Varint(entry, at);
  l.long_keys_at = at;
  at += l.long_keys_size;
  EXPECT_EQ(Varint(entry, at), 1u);  // byte pairs
  EXPECT_EQ(AlignedCount(entry, at), 65536u);
  l.pairs_at = at;
  at += 8 * 65536;
  EXPECT_EQ(Varint(entry, at), 1u);  // segments
  EXPECT_EQ(Varint(entry, at), 1u);  // built
  for (const char* table : {"unsafe windows", "their summary"}) {
    const uint64_t words = AlignedCount(entry, at);
    EXPECT_EQ(at % 8, 0u) << table;
    at += 8 * words;
  }
  EXPECT_EQ(AlignedCount(entry, at), 65536u);
  l.chars_at = at;
  EXPECT_EQ(at + 8 * 65536, entry.size());
  // The tables at multiples of their alignment in the file, to be used where they lie.
  for (size_t table_at : {l.slots_at, l.pairs_at, l.chars_at}) EXPECT_EQ(table_at % 8, 0u);
  return l;
}

template <typename T>
T At(const std::string& b, size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof(T));
  return v;
}
template <typename T>
void Put(std::string& b, size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof(T));
}

// cl100k_base's entry in `cache` (written by a load), with the token " hello" changed to
// " jello" and its CRC made right: a load that reads it shows " jello".
struct EditedEntry {
  std::string path;
  std::string bytes;
  TokenId id = 0;
};
EditedEntry JelloEntry(const std::string& cache, const std::string& ranks) {
  EditedEntry e;
  std::unique_ptr<Encoder> original = Load(ranks);
  EXPECT_NE(original, nullptr);
  if (original == nullptr || Entries(cache).size() != 1) return e;
  e.path = Entries(cache)[0];
  e.bytes = ReadAll(e.path);
  const std::vector<std::string>& tokens = Bpe(*original).tokens;
  while (e.id < tokens.size() && tokens[e.id] != " hello") ++e.id;
  EXPECT_LT(e.id, tokens.size());
  size_t before = 0;  // the token's bytes in the payload's blob: after the ends, in id order
  for (TokenId i = 0; i < e.id; ++i) before += tokens[i].size();
  std::string blob;
  for (const std::string& t : tokens) blob += t;
  const size_t at = e.bytes.find(blob);
  EXPECT_NE(at, std::string::npos);
  if (at == std::string::npos) return e;
  e.bytes[at + before + 1] = 'j';
  Reseal(e.bytes);
  return e;
}

TEST(VocabCache, AnEncoderReadFromTheCacheIsTheFilesEncoder) {
  const std::string text = Sample();
  for (const std::string name : {"cl100k_base", "o200k_base"}) {
    SCOPED_TRACE(name);
    TempDir cache;
    const std::string ranks = testing::TestVocabDir() + name + ".tiktoken";
    std::unique_ptr<Encoder> files;
    {
      CacheDir off("off");
      files = Load(ranks);
    }
    ASSERT_NE(files, nullptr);
    absl::StatusOr<BpeModel> read = LoadTiktoken(ranks);
    ASSERT_TRUE(read.ok()) << read.status();
    ASSERT_TRUE(Bpe(*files) == *read);
    const std::vector<TokenId> expected = EncodeOrDie(*files, text);
    ASSERT_GT(expected.size(), 60000u);
    CacheDir on(cache.path());
    std::unique_ptr<Encoder> first = Load(ranks);  // writes the entry
    ASSERT_NE(first, nullptr);
    ASSERT_EQ(Entries(cache.path()).size(), 1u);
    const std::string entry = Entries(cache.path())[0];
    struct stat written;
    ASSERT_EQ(stat(entry.c_str(), &written), 0);
    std::unique_ptr<Encoder> cached = Load(ranks);  // reads it
    ASSERT_NE(cached, nullptr);
    struct stat after;
    ASSERT_EQ(stat(entry.c_str(), &after), 0);
    EXPECT_EQ(after.st_ino, written.st_ino);  // read, not written again (a new file is renamed in)
    EXPECT_TRUE(Bpe(*cached) == *read);
    EXPECT_EQ(EncodeOrDie(*first, text), expected);
    EXPECT_EQ(EncodeOrDie(*cached, text), expected);
    // Every token's bytes, one per line: every entry of the token table looked up (the
    // whole-piece rule), long keys included.
    std::string tokens;
    for (const std::string& token : read->tokens) tokens += token + "\n";
    EXPECT_EQ(EncodeOrDie(*cached, tokens), EncodeOrDie(*files, tokens));
    // Batches of lines go through other paths of the encoder (its hot cache of short pieces).
    std::vector<TokenId> lines_files, lines_cached;
    std::vector<size_t> ends_files, ends_cached;
    ASSERT_TRUE(files->EncodeLines(text, SpecialPolicy::kAllow, lines_files, ends_files).ok());
    ASSERT_TRUE(cached->EncodeLines(text, SpecialPolicy::kAllow, lines_cached, ends_cached).ok());
    EXPECT_EQ(lines_cached, lines_files);
    EXPECT_EQ(ends_cached, ends_files);
  }
}

// Whether this process has `path` mapped (a line of /proc/self/maps names it, "(deleted)" or not).
bool Mapped(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find(" " + path) != std::string::npos) return true;
  }
  return false;
}

TEST(VocabCache, AnEncoderReadFromAnEntryKeepsItMappedAndOutlivesItsRemovalAndReplacement) {
  // The tables are used where they lie in the mapped entry: the encoder keeps the mapping (and
  // only it: a load from the files maps nothing), and encodes as before once the entry is
  // removed, and once another entry is renamed in at its path.
  TempDir cache, vocab;
  CacheDir on(cache.path());
  const std::string ranks = CopyVocab(vocab, "cl100k_base");
  const std::string text = Sample();
  std::unique_ptr<Encoder> first = Load(ranks);  // writes the entry, from the files
  ASSERT_NE(first, nullptr);
  ASSERT_EQ(Entries(cache.path()).size(), 1u);
  const std::string entry = Entries(cache.path())[0];
  EXPECT_FALSE(Mapped(entry));
  const std::vector<TokenId> expected = EncodeOrDie(*first, text);
  first.reset();
  std::unique_ptr<Encoder> cached = Load(ranks);
  ASSERT_NE(cached, nullptr);
  EXPECT_TRUE(Mapped(entry));
  ASSERT_EQ(std::remove(entry.c_str()), 0);
  EXPECT_EQ(EncodeOrDie(*cached, text), expected);
  // A new entry renamed in at the same path (the next load finds none and writes one).
  std::unique_ptr<Encoder> again = Load(ranks);
  ASSERT_NE(again, nullptr);
  ASSERT_TRUE(std::filesystem::exists(entry));
  EXPECT_EQ(EncodeOrDie(*cached, text), expected);
  EXPECT_EQ(EncodeOrDie(*again, text), expected);
  cached.reset();
  again.reset();
  EXPECT_FALSE(Mapped(entry));
}

TEST(VocabCache, ALaterLoadReadsTheEntry) {
  // An entry whose token bytes were changed (and its CRC made right) shows in the model a
  // later load gives: it was read, not the files.
  TempDir cache;
  CacheDir on(cache.path());
  const std::string ranks = testing::TestVocabDir() + "cl100k_base.tiktoken";
  const EditedEntry edited = JelloEntry(cache.path(), ranks);
  ASSERT_FALSE(edited.path.empty());
  WriteAll(edited.path, edited.bytes);
  std::unique_ptr<Encoder> cached = Load(ranks);
  ASSERT_NE(cached, nullptr);
  EXPECT_EQ(Bpe(*cached).tokens[edited.id], " jello");
}

TEST(VocabCache, OnlyTheUsersOwnFolderAndRegularEntriesAreUsed) {
  const std::string ranks = testing::TestVocabDir() + "cl100k_base.tiktoken";
  TempDir dir;
  const std::string folder = dir.File("cache");
  CacheDir on(folder);
  const EditedEntry edited = JelloEntry(folder, ranks);
  ASSERT_FALSE(edited.path.empty());
  WriteAll(edited.path, edited.bytes);
  {
    // A folder others may write: nothing read from it, nothing written.
    ASSERT_EQ(chmod(folder.c_str(), 0770), 0);
    std::unique_ptr<Encoder> e = Load(ranks);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(Bpe(*e).tokens[edited.id], " hello");
    EXPECT_TRUE(ReadAll(edited.path) == edited.bytes);
    ASSERT_EQ(chmod(folder.c_str(), 0700), 0);
  }
  {
    // An entry others may write: not read (and replaced).
    ASSERT_EQ(chmod(edited.path.c_str(), 0666), 0);
    std::unique_ptr<Encoder> e = Load(ranks);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(Bpe(*e).tokens[edited.id], " hello");
    EXPECT_TRUE(ReadAll(edited.path) != edited.bytes);
  }
  {
    // Entries are written the user's alone (0600), whatever the umask lets a file have.
    std::remove(edited.path.c_str());
    ASSERT_NE(Load(ranks), nullptr);
    struct stat st;
    ASSERT_EQ(stat(edited.path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    WriteAll(edited.path, edited.bytes);  // keeps the mode
    std::unique_ptr<Encoder> e = Load(ranks);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(Bpe(*e).tokens[edited.id], " jello");
  }
  {
    // A link to an entry: not followed; a regular entry takes its place.
    const std::string elsewhere = dir.Write("elsewhere.tmvocab", edited.bytes);
    ASSERT_EQ(chmod(elsewhere.c_str(), 0600), 0);
    std::remove(edited.path.c_str());
    ASSERT_EQ(symlink(elsewhere.c_str(), edited.path.c_str()), 0);
    std::unique_ptr<Encoder> e = Load(ranks);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(Bpe(*e).tokens[edited.id], " hello");
    struct stat st;
    ASSERT_EQ(lstat(edited.path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_TRUE(ReadAll(elsewhere) == edited.bytes);
  }
  {
    // A FIFO at the entry's path: not waited on; a regular entry takes its place.
    std::remove(edited.path.c_str());
    ASSERT_EQ(mkfifo(edited.path.c_str(), 0600), 0);
    std::unique_ptr<Encoder> e = Load(ranks);
    ASSERT_NE(e, nullptr);
    struct stat st;
    ASSERT_EQ(lstat(edited.path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
  }
}

TEST(VocabCache, AnEntryFailingItsChecksIsReplaced) {
  const std::string text = Sample();
  TempDir cache;
  CacheDir on(cache.path());
  const std::string ranks = testing::TestVocabDir() + "o200k_base.tiktoken";
  std::unique_ptr<Encoder> first = Load(ranks);
  ASSERT_NE(first, nullptr);
  const std::vector<TokenId> expected = EncodeOrDie(*first, text);
  const std::string path = Entries(cache.path()).at(0);
  const std::string good = ReadAll(path);
  struct Damage {
    const char* what;
    std::string bytes;
  };
  std::vector<Damage> damages;
  {
    std::string flipped = good;
    flipped[good.size() / 2] ^= 0x10;
    damages.push_back({"a byte flipped", flipped});
  }
  damages.push_back({"truncated", good.substr(0, good.size() - 1000)});
  damages.push_back({"header only", good.substr(0, 60)});
  damages.push_back({"empty", ""});
  {
    std::string other_magic = good;
    other_magic[0] = 'X';
    damages.push_back({"another magic", other_magic});
  }
  // Bytes the CRC agrees with that are no entry: the payload's own checks refuse them.
  const Layout l = LayoutOf(good);
  auto resealed = [&](const char* what, auto edit) {
    std::string bytes = good;
    edit(bytes);
    Reseal(bytes);
    damages.push_back({what, bytes});
  };
  resealed("garbage tokens", [&](std::string& b) {
    for (size_t i = l.tokens_at; i < l.tokens_at + 4096; ++i) b[i] = static_cast<char>(0xFF);
  });
  resealed("a mask that is no power of two less one", [&](std::string& b) { --b[l.mask_at]; });
  // The first slot holding a token, and the first holding a long one (over 16 bytes).
  size_t full = l.slot_count, long_slot = l.slot_count;
  for (size_t i = 0; i < l.slot_count; ++i) {
    const uint32_t size = At<uint32_t>(good, l.slots_at + 24 * i + 16);
    if (size != 0 && full == l.slot_count) full = i;
    if (size > 16 && long_slot == l.slot_count) long_slot = i;
  }
  ASSERT_LT(full, l.slot_count);
  ASSERT_LT(long_slot, l.slot_count);
  resealed("a slot's id past the vocabulary",
           [&](std::string& b) { Put<uint32_t>(b, l.slots_at + 24 * full + 20, 0x7FFFFFFF); });
  resealed("a long key past the long keys", [&](std::string& b) {
    Put<uint64_t>(b, l.slots_at + 24 * long_slot, l.long_keys_size);
  });
  resealed("a character of no ids", [&](std::string& b) { Put<uint64_t>(b, l.chars_at + 8 * 0x4E00, 0); });
  resealed("a character's id past the vocabulary", [&](std::string& b) {
    Put<uint64_t>(b, l.chars_at + 8 * 0x4E00, uint64_t{1} << 60 | 0xFFFFF);
  });
  size_t pair = 0;
  while (At<uint32_t>(good, l.pairs_at + 8 * pair) == UINT32_MAX) ++pair;
  resealed("a byte pair whose result is not its rank", [&](std::string& b) {
    Put<uint32_t>(b, l.pairs_at + 8 * pair + 4, At<uint32_t>(good, l.pairs_at + 8 * pair) + 1);
  });
  resealed("a byte's token missing", [&](std::string& b) {
    // The key of a one-byte token's slot made one no bytes pack to: its byte is not found.
    for (size_t i = 0; i < l.slot_count; ++i) {
      if (At<uint32_t>(good, l.slots_at + 24 * i + 16) == 1) {
        Put<uint64_t>(b, l.slots_at + 24 * i, ~uint64_t{0});
        break;
      }
    }
  });
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.what);
    WriteAll(path, d.bytes);
    std::unique_ptr<Encoder> loaded = Load(ranks);
    ASSERT_NE(loaded, nullptr);
    EXPECT_EQ(EncodeOrDie(*loaded, text), expected);
    EXPECT_TRUE(ReadAll(path) == good);  // written again
  }
}

TEST(VocabCache, OffUnwritableOrSmallGivesTheFilesEncoderAndNoEntry) {
  const std::string text = Sample();
  const std::string ranks = testing::TestVocabDir() + "cl100k_base.tiktoken";
  std::vector<TokenId> expected;
  TempDir home;  // where the cache would go without TOKENMILL_CACHE_DIR: nothing may appear
  ScopedEnv home_env("HOME", home.path());
  ScopedEnv xdg_env("XDG_CACHE_HOME", home.File("xdg"));
  for (const std::string off : {"off", "", "OFF", "relative/folder"}) {
    CacheDir cache(off);
    std::unique_ptr<Encoder> e = Load(ranks);
    ASSERT_NE(e, nullptr);
    if (expected.empty()) expected = EncodeOrDie(*e, text);
    EXPECT_EQ(EncodeOrDie(*e, text), expected);
  }
  EXPECT_TRUE(std::filesystem::is_empty(home.path()));
  {
    // Unset, it would be $XDG_CACHE_HOME/tokenmill: the check above looks in the right place.
    unsetenv("TOKENMILL_CACHE_DIR");
    ASSERT_NE(Load(ranks), nullptr);
    EXPECT_EQ(Entries(home.File("xdg/tokenmill")).size(), 1u);
  }
  TempDir dir;
  {
    // A file where the folder would be.
    const std::string blocker = dir.Write("blocker", "x");
    CacheDir unwritable(blocker + "/cache");
    std::unique_ptr<Encoder> e = Load(ranks);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(EncodeOrDie(*e, text), expected);
  }
  {
    // gpt2's ranks are 816 KiB: cached; a vocabulary of a few hundred tokens is not.
    TempDir cache;
    CacheDir on(cache.path());
    TempDir vocab;
    const std::string gpt2 = CopyVocab(vocab, "gpt2");
    ASSERT_NE(Load(gpt2), nullptr);
    EXPECT_EQ(Entries(cache.path()).size(), 1u);
    std::string small_ranks = ReadAll(gpt2);
    small_ranks.resize(small_ranks.find("\n", 200000) + 1);  // about 20,000 ranks
    std::ofstream(vocab.File("small.tiktoken"), std::ios::binary) << small_ranks;
    std::string sidecar = ReadAll(testing::TestVocabDir() + "gpt2.json");
    // Its special token follows the ranks kept.
    const size_t ranks_kept = static_cast<size_t>(std::count(small_ranks.begin(), small_ranks.end(), '\n'));
    const size_t at = sidecar.find("50256");
    ASSERT_NE(at, std::string::npos);
    sidecar.replace(at, 5, std::to_string(ranks_kept));
    const size_t n_ranks = sidecar.find("\"n_ranks\"");
    if (n_ranks != std::string::npos) {
      const size_t value = sidecar.find_first_of("0123456789", n_ranks);
      const size_t end = sidecar.find_first_not_of("0123456789", value);
      sidecar.replace(value, end - value, std::to_string(ranks_kept));
    }
    vocab.Write("small.json", sidecar);
    ASSERT_LT(small_ranks.size(), size_t{256} << 10);
    ASSERT_NE(Load(vocab.File("small.tiktoken")), nullptr);
    EXPECT_EQ(Entries(cache.path()).size(), 1u);
  }
}

TEST(VocabCache, ARelativeFolderIsNoCache) {
  TempDir dir;
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  {
    CacheDir relative("cache");
    EXPECT_NE(Load(testing::TestVocabDir() + "cl100k_base.tiktoken"), nullptr);
  }
  std::filesystem::current_path(cwd);
  EXPECT_FALSE(std::filesystem::exists(dir.File("cache")));
}

TEST(VocabCache, StoringRemovesTemporaryEntriesLeftLongAgo) {
  TempDir folder;
  VocabCache cache(folder.path());
  const std::string_view inputs[] = {"x"};
  const std::string key = VocabCache::KeyOf(inputs);
  const std::string stale = folder.Write(key + ".tmvocab.tmp.AbC123", "left by a killed process");
  const std::string fresh = folder.Write(key + ".tmvocab.tmp.XyZ789", "being written now");
  const std::string other = folder.Write("notes.txt", "not the cache's");
  const timespec old_times[2] = {{0, UTIME_OMIT}, {time(nullptr) - 3600, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, stale.c_str(), old_times, 0), 0);
  ASSERT_EQ(utimensat(AT_FDCWD, other.c_str(), old_times, 0), 0);
  const std::string_view payload[] = {"p"};
  ASSERT_TRUE(cache.Store(inputs, payload).ok());
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(fresh));
  EXPECT_TRUE(std::filesystem::exists(other));
  EXPECT_TRUE(cache.Find(inputs).has_value());
}

TEST(VocabCache, AnEntryOfOtherInputsUnderTheSameNameIsNotUsed) {
  // Names are CRCs, which a file can be made to collide with: an entry holding other inputs
  // under this name (its header's name changed to this one, as a collision would give) is not
  // read.
  TempDir folder;
  VocabCache cache(folder.path());
  const std::string_view mine[] = {"tiktoken", "my ranks"};
  const std::string_view theirs[] = {"tiktoken", "a file made to collide"};
  const std::string_view payload[] = {"their tables"};
  ASSERT_TRUE(cache.Store(theirs, payload).ok());
  std::string entry = ReadAll(cache.PathOf(VocabCache::KeyOf(theirs)));
  const std::string name = VocabCache::KeyOf(mine);
  entry.replace(8 + 4, name.size(), name);
  const std::string path = cache.PathOf(name);
  WriteAll(path, entry);
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  EXPECT_FALSE(cache.Find(mine).has_value());
  ASSERT_TRUE(cache.Find(theirs).has_value());
  EXPECT_EQ(cache.Find(theirs)->view(), "their tables");
  // The same entry with its inputs made mine (the payload moved to the next multiple of 64
  // and the size made right; the CRC is the payload's) is read: only the inputs kept it out.
  const size_t at = entry.find("a file made to collide");
  ASSERT_NE(at, std::string::npos);
  std::string same = entry.substr(0, at - 1) + static_cast<char>(8) + "my ranks";
  same.append((64 - same.size() % 64) % 64, '\0');
  same += entry.substr(PayloadAt(entry));
  const uint64_t size = same.size() - 60;
  for (int i = 0; i < 8; ++i) same[8 + 4 + 32 + i] = static_cast<char>(size >> (8 * i) & 0xFF);
  WriteAll(path, same);
  ASSERT_TRUE(cache.Find(mine).has_value());
  EXPECT_EQ(cache.Find(mine)->view(), "their tables");
}

TEST(VocabCache, AnotherSidecarIsAnotherEntry) {
  // The same ranks with a special token moved: the entry of the first sidecar is not used.
  TempDir cache, vocab;
  CacheDir on(cache.path());
  const std::string ranks = CopyVocab(vocab, "cl100k_base");
  std::unique_ptr<Encoder> first = Load(ranks);
  ASSERT_NE(first, nullptr);
  std::string sidecar = ReadAll(vocab.File("cl100k_base.json"));
  const size_t at = sidecar.find("100257");  // <|endoftext|>
  ASSERT_NE(at, std::string::npos);
  sidecar.replace(at, 6, "100262");
  WriteAll(vocab.File("cl100k_base.json"), sidecar);
  std::unique_ptr<Encoder> second = Load(ranks);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(Entries(cache.path()).size(), 2u);
  EXPECT_EQ(EncodeOrDie(*first, "<|endoftext|>"), std::vector<TokenId>{100257});
  EXPECT_EQ(EncodeOrDie(*second, "<|endoftext|>"), std::vector<TokenId>{100262});
  std::unique_ptr<Encoder> again = Load(ranks);  // from the second entry
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(EncodeOrDie(*again, "<|endoftext|>"), std::vector<TokenId>{100262});
}

TEST(VocabCache, TheLeastRecentlyUsedEntriesPastTheLimitGo) {
  TempDir folder;
  VocabCache cache(folder.path() + "/deeper/cache");  // made as needed
  std::vector<std::string> keys;
  for (size_t i = 0; i < VocabCache::kMaxEntries + 4; ++i) {
    const std::string input = "input " + std::to_string(i);
    const std::string_view inputs[] = {input};
    keys.push_back(VocabCache::KeyOf(inputs));
    const std::string_view payload[] = {"payload ", input};
    ASSERT_TRUE(cache.Store(inputs, payload).ok());
    // Modification times a second apart, oldest first; entry 2 used last of all.
    const timespec times[2] = {{0, UTIME_OMIT}, {static_cast<time_t>(1000000 + i), 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, cache.PathOf(keys.back()).c_str(), times, 0), 0);
    if (i == VocabCache::kMaxEntries) {
      const std::string_view used[] = {"input 2"};
      ASSERT_TRUE(cache.Find(used).has_value());  // renews its time: now
    }
  }
  EXPECT_EQ(Entries(folder.path() + "/deeper/cache").size(), VocabCache::kMaxEntries);
  struct stat st;
  ASSERT_EQ(stat((folder.path() + "/deeper/cache").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string input = "input " + std::to_string(i);
    const std::string_view inputs[] = {input};
    const bool kept = cache.Find(inputs).has_value();
    // Stored i-th with time 1000000 + i, except entry 2 (used now): the 4 oldest others go.
    const bool expected = i == 2 || i >= 5;
    EXPECT_EQ(kept, expected) << i;
  }
  const std::string_view inputs[] = {"input 7"};
  std::optional<SharedBytes> payload = cache.Find(inputs);
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(payload->view(), "payload input 7");
}

TEST(VocabCache, KeysDependOnEveryInputAndWhereItsBytesEnd) {
  auto key = [](std::initializer_list<std::string_view> inputs) {
    return VocabCache::KeyOf(std::span<const std::string_view>(inputs.begin(), inputs.size()));
  };
  EXPECT_EQ(key({"a", "bc"}), key({"a", "bc"}));
  EXPECT_NE(key({"a", "bc"}), key({"ab", "c"}));
  EXPECT_NE(key({"a", "bc"}), key({"a", "bd"}));
  EXPECT_NE(key({"a", "bc"}), key({"a", "bc", ""}));
  EXPECT_EQ(key({"x"}).size(), 32u);
}

}  // namespace
}  // namespace tokenmill
