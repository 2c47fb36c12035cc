// The fast encoder's parts agree with each other and with the plain definition of BPE:
// the heap algorithm (long pieces) equals the scan (short pieces) on any input, the piece
// cache and the whole-token shortcut change nothing, and batch encoding on any number of
// threads gives the sequential ids in input order.
#include <gtest/gtest.h>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <bit>
#include <fstream>
#include <map>
#include <random>

#include "common/file_util.h"
#include "count/count_text.h"
#include "model/bpe/bpe_encoder.h"
#include "model/bpe/char_segments.h"
#include "model/bpe/byte_hash.h"
#include "model/encoder.h"
#include "model/bpe/id_writer.h"
#include "model/bpe/lookup_tables.h"
#include "model/model_file.h"
#include "pretokenize/text_prep.h"
#include "model/bpe/piece_bpe.h"
#include "model/bpe/piece_cache.h"
#include "reference/trained_bpe.h"
#include "train/trainer.h"
#include "reference/checked.h"
#include "reference/sidecar_pattern.h"

namespace tokenmill {
namespace {

std::string SampleText(size_t bytes) {
  std::ifstream in(std::string(TOKENMILL_SOURCE_DIR) + "/tests/data/sample.txt", std::ios::binary);
  std::string text(bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

// A small model trained by tokenmill on the sample (merge-index priority, Hugging Face rule).
BpeModel TrainedModel() {
  std::string text = SampleText(60000);
  auto pretokenizer = PreTokenizer::Create({"gpt2", ""});
  WordCounts counts;
  CountDocument(text, **pretokenizer, nullptr, counts);
  TrainerOptions options;
  options.vocab_size = 700;
  options.special_tokens = {"<|endoftext|>"};
  auto result = Train(WordSource::Borrow(counts), options);
  EXPECT_TRUE(result.ok()) << result.status();
  return Bpe(*result);
}

// The textbook definition: recompute every pair each round, merge the leftmost lowest one.
std::vector<TokenId> NaiveBpe(const BpeModel& model, std::string_view piece) {
  StringMap<TokenId> index = model.TokenIndex();
  const std::vector<Merge> merges = MergeList(model);
  std::vector<TokenId> parts;
  for (char c : piece) parts.push_back(index.at(std::string(1, c)));
  while (parts.size() > 1) {
    uint32_t best = UINT32_MAX;
    size_t at = 0;
    TokenId result = 0;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      for (uint32_t rank = 0; rank < merges.size(); ++rank) {
        const Merge& m = merges[rank];
        if (m.left != parts[i] || m.right != parts[i + 1]) continue;
        uint32_t priority = model.priority == MergePriority::kTokenRank ? m.result : rank;
        if (priority < best) {
          best = priority;
          at = i;
          result = m.result;
        }
        break;
      }
    }
    if (best == UINT32_MAX) break;
    parts[at] = result;
    parts.erase(parts.begin() + static_cast<long>(at) + 1);
  }
  return parts;
}

std::vector<std::string> RandomPieces(const std::string& alphabet_text, int count, size_t max_len,
                                      uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> pieces;
  for (int i = 0; i < count; ++i) {
    size_t len = 1 + rng() % max_len;
    size_t start = rng() % (alphabet_text.size() - len);
    std::string piece = alphabet_text.substr(start, len);  // real text: many merges apply
    if (i % 4 == 0) {
      for (char& c : piece) c = alphabet_text[rng() % 64];  // shuffled: other merge orders
    }
    pieces.push_back(piece);
  }
  return pieces;
}

TEST(PieceBpe, ScanAndHeapEqualTheTextbookDefinition) {
  BpeModel model = TrainedModel();
  auto encoder = Encoder::Create(model);
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  std::string text = SampleText(60000);
  for (const std::string& piece : RandomPieces(text, 300, 40, 7)) {
    std::vector<TokenId> expected = NaiveBpe(model, piece);
    std::vector<TokenId> fast;
    (*encoder)->EncodePiece(piece, fast);
    EXPECT_EQ(fast, expected) << piece;
  }
}

// Builds PieceBpe over a model's merges the way the Encoder does for a merge list (the merges
// a .tiktoken file implies listed), with a given long-piece limit.
struct BpeFixture {
  explicit BpeFixture(const BpeModel& model) {
    const std::vector<Merge> merges = MergeList(model);
    for (uint32_t rank = 0; rank < merges.size(); ++rank) {
      const Merge& m = merges[rank];
      uint32_t priority = model.priority == MergePriority::kTokenRank ? m.result : rank;
      entries.push_back({MakePairKey(m.left, m.right), {priority, m.result}});
    }
    pairs.Build(entries);
    StringMap<TokenId> index = model.TokenIndex();
    for (int b = 0; b < 256; ++b) byte_token[b] = index.at(std::string(1, static_cast<char>(b)));
  }
  std::vector<std::pair<uint64_t, PairMerge>> entries;
  PairTable pairs;
  TokenId byte_token[256];
};

// BytePairMerges answers every pair of bytes as the PairTable does (the first entry of a
// repeated pair; nothing for a byte whose token no merge names), and a PieceBpe that uses it
// encodes and traces exactly as one that does not.
TEST(PieceBpe, BytePairMergesAnswerAsThePairTable) {
  for (const BpeModel& model : {TrainedModel(), testing::LoadBpeModelOrFail(testing::TestVocabDir() + "gpt2.tiktoken")}) {
    BpeFixture fixture(model);
    // A repeated pair (with another priority), which both must ignore.
    fixture.entries.push_back({fixture.entries.front().first, {1u << 30, 7}});
    fixture.pairs.Build(fixture.entries);
    // Bytes 250-255 outside the alphabet, as the trainer maps them: to an id no merge names.
    for (int b = 250; b < 256; ++b) fixture.byte_token[b] = PairTable::kNone - 1;
    const std::vector<PairMerge> byte_pairs = BytePairMerges(fixture.entries, fixture.byte_token);
    ASSERT_EQ(byte_pairs.size(), 65536u);
    size_t found = 0;
    for (int a = 0; a < 256; ++a) {
      for (int b = 0; b < 256; ++b) {
        const PairMerge want = fixture.pairs.Find(fixture.byte_token[a], fixture.byte_token[b]);
        const PairMerge got = byte_pairs[a << 8 | b];
        ASSERT_EQ(got.priority, want.priority) << a << " " << b;
        if (want.priority != PairTable::kNone) {
          ASSERT_EQ(got.result, want.result) << a << " " << b;
          ++found;
        }
      }
    }
    EXPECT_GT(found, 100u);
    PieceBpe plain(&fixture.pairs, fixture.byte_token);
    PieceBpe with_bytes(&fixture.pairs, fixture.byte_token, PieceBpe::kDefaultLongPiece,
                        byte_pairs.data());
    for (const std::string& piece : RandomPieces(SampleText(60000), 300, 40, 9)) {
      std::vector<TokenId> expected, got, traced_expected, traced;
      plain.EncodeByScan(piece, expected);
      with_bytes.EncodeByScan(piece, got);
      EXPECT_EQ(got, expected) << piece;
      std::vector<MergeStep> steps_expected = plain.Trace(piece, traced_expected);
      std::vector<MergeStep> steps = with_bytes.Trace(piece, traced);
      EXPECT_EQ(traced, traced_expected);
      EXPECT_EQ(steps.size(), steps_expected.size());
    }
  }
}

// A .tiktoken vocabulary's merges are implied by its ranks (rank_merges_implied): its PieceBpe
// finds pairs by their bytes (RankPairs) and must give what a PairTable of the derived merge
// list gives, in every form (scan, heap, trace, from parts), and its Encoder the ids of the
// same model with the list written out.
TEST(PieceBpe, PairsFoundByTheirBytesAnswerAsTheDerivedMergeList) {
  const std::string text = SampleText(200000);
  for (const char* name : {"gpt2", "cl100k_base", "o200k_base"}) {
    SCOPED_TRACE(name);
    const BpeModel implied = testing::LoadBpeModelOrFail(testing::TestVocabDir() + name + ".tiktoken");
    ASSERT_TRUE(implied.rank_merges_implied);
    BpeModel listed = implied;
    listed.merges = MergeList(implied);
    listed.rank_merges_implied = false;
    ASSERT_GT(listed.merges.size(), implied.tokens.size());
    ASSERT_TRUE(listed.Validate().ok());
    BpeFixture fixture(listed);
    TokenTable table;
    table.Build(implied.tokens, SpecialIds(implied));
    const RankPairs ranks(&table, &implied.tokens);
    // RankBytePairs answers every pair of bytes as RankPairs does.
    const std::vector<PairMerge> byte_pairs = RankBytePairs(implied.tokens, SpecialIds(implied));
    ASSERT_EQ(byte_pairs.size(), 65536u);
    size_t two_byte = 0;
    for (int a = 0; a < 256; ++a) {
      for (int b = 0; b < 256; ++b) {
        const char bytes[2] = {static_cast<char>(a), static_cast<char>(b)};
        const PairMerge want = ranks.Find(bytes, 2), got = byte_pairs[a << 8 | b];
        ASSERT_EQ(got.priority, want.priority) << a << " " << b;
        ASSERT_EQ(got.result, want.result) << a << " " << b;
        two_byte += want.priority != PairTable::kNone;
      }
    }
    EXPECT_GT(two_byte, 1000u);
    for (size_t long_piece : {size_t{8}, PieceBpe::kDefaultLongPiece}) {
      const PieceBpe by_ids(&fixture.pairs, fixture.byte_token, long_piece);
      const PieceBpe by_bytes(&ranks, fixture.byte_token, long_piece,
                              long_piece == 8 ? nullptr : byte_pairs.data());
      std::vector<std::string> pieces = RandomPieces(text, 400, 40, 13);
      std::mt19937 rng(17);
      for (int i = 0; i < 20; ++i) {
        const size_t len = 2 + rng() % 2000;
        std::string piece = text.substr(rng() % (text.size() - len), len);
        if (i % 2 == 0) piece = std::string(len, "a= "[i % 3]) + piece;  // long runs of one byte
        pieces.push_back(piece);
      }
      for (const char* special_bytes : {"<|endoftext|>", "<|endoftext|><|endoftext|>"}) {
        pieces.push_back(special_bytes);  // no merge may form a special token
      }
      for (const std::string& piece : pieces) {
        std::vector<TokenId> expected, got;
        by_ids.Encode(piece, expected);
        by_bytes.Encode(piece, got);
        ASSERT_EQ(got, expected) << piece;
        got.clear();
        by_bytes.EncodeByHeap(piece, got);
        ASSERT_EQ(got, expected) << piece;
        if (piece.size() > 300) continue;
        std::vector<TokenId> traced_expected, traced;
        const std::vector<MergeStep> steps_expected = by_ids.Trace(piece, traced_expected);
        const std::vector<MergeStep> steps = by_bytes.Trace(piece, traced);
        ASSERT_EQ(traced, expected);
        ASSERT_EQ(steps.size(), steps_expected.size());
        for (size_t k = 0; k < steps.size(); ++k) {
          EXPECT_EQ(steps[k].part, steps_expected[k].part);
          EXPECT_EQ(steps[k].left, steps_expected[k].left);
          EXPECT_EQ(steps[k].right, steps_expected[k].right);
          EXPECT_EQ(steps[k].result, steps_expected[k].result);
          EXPECT_EQ(steps[k].priority, steps_expected[k].priority);
        }
        // From parts: each byte's token, then the halves' own encodings.
        std::vector<TokenId> parts_a, parts_b;
        for (unsigned char c : piece) parts_a.push_back(fixture.byte_token[c]);
        parts_b = parts_a;
        parts_a.resize(by_ids.MergeIds(parts_a.data(), parts_a.size()));
        parts_b.resize(by_bytes.MergeIds(parts_b.data(), parts_b.size()));
        ASSERT_EQ(parts_b, expected) << piece;
        ASSERT_EQ(parts_a, expected) << piece;
        const size_t cut = piece.size() / 2;
        std::vector<TokenId> halves;
        by_ids.Encode(piece.substr(0, cut + 1), halves);
        if (cut + 1 < piece.size()) by_ids.Encode(piece.substr(cut + 1), halves);
        std::vector<TokenId> merged = halves, merged_b = halves, traced_parts, traced_parts_b;
        merged.resize(by_ids.MergeParts(merged.data(), merged.size()));
        merged_b.resize(by_bytes.MergeParts(merged_b.data(), merged_b.size()));
        ASSERT_EQ(merged_b, merged) << piece;
        const std::vector<MergeStep> parts_steps = by_ids.TraceParts(halves, traced_parts);
        const std::vector<MergeStep> parts_steps_b = by_bytes.TraceParts(halves, traced_parts_b);
        ASSERT_EQ(traced_parts, merged) << piece;
        ASSERT_EQ(traced_parts_b, merged) << piece;
        ASSERT_EQ(parts_steps_b.size(), parts_steps.size());
      }
    }
    // Whole encoders: pieces, cache, whole tokens and CharSegments over both.
    auto a = Encoder::Create(implied);
    auto b = Encoder::Create(listed);
    ASSERT_TRUE(a.ok() && b.ok());
    auto ids_a = (*a)->Encode(text);
    auto ids_b = (*b)->Encode(text);
    ASSERT_TRUE(ids_a.ok() && ids_b.ok());
    EXPECT_EQ(*ids_a, *ids_b);
  }
}

TEST(PieceBpe, HeapEqualsScanOnLongPieces) {
  for (const BpeModel& model : {TrainedModel(), testing::LoadBpeModelOrFail(testing::TestVocabDir() + "gpt2.tiktoken")}) {
    BpeFixture fixture(model);
    PieceBpe bpe(&fixture.pairs, fixture.byte_token);
    std::string text = SampleText(200000);
    std::mt19937 rng(11);
    for (int i = 0; i < 60; ++i) {
      size_t len = 2 + rng() % 3000;
      std::string piece = text.substr(rng() % (text.size() - len), len);
      if (i % 3 == 0) piece = std::string(len, "ab "[i % 3]) + piece;  // long runs of one byte
      std::vector<TokenId> scan, heap, traced;
      bpe.EncodeByScan(piece, scan);
      bpe.EncodeByHeap(piece, heap);
      std::vector<MergeStep> steps = bpe.Trace(piece, traced);
      ASSERT_EQ(heap, scan) << "piece of " << len << " bytes";
      ASSERT_EQ(traced, scan);
      EXPECT_EQ(steps.size(), piece.size() - scan.size());
    }
  }
}

// (tests/large/encode_long_piece_test.cc runs 1 MB and 16 MB pieces.)
TEST(PieceBpe, ALongPieceWithoutSpacesEncodesAndDecodes) {
  auto encoder = Encoder::Create(testing::LoadBpeModelOrFail(testing::TestVocabDir() + "cl100k_base.tiktoken"));
  ASSERT_TRUE(encoder.ok());
  std::string text;
  std::mt19937 rng(3);
  while (text.size() < (1 << 17)) text += static_cast<char>('a' + rng() % 26);
  auto ids = (*encoder)->Encode(text);  // one \p{L}+ piece of 128 KB: the heap path
  ASSERT_TRUE(ids.ok());
  EXPECT_GT(ids->size(), text.size() / 8);
  EXPECT_EQ(*(*encoder)->Decode(*ids), text);
}

// The writer appends after what the vector held, across many chunks and reallocations, and
// leaves exactly the ids written (none of its zero-filled slack) when it goes.
TEST(IdWriter, AppendsExactlyWhatWasWritten) {
  std::mt19937 rng(5);
  for (size_t bound : {size_t{0}, size_t{3}, size_t{100}, size_t{1} << 20}) {
    std::vector<TokenId> out = {7, 8, 9}, expected = out;
    {
      IdWriter writer(out, bound);
      for (int step = 0; step < 5000; ++step) {
        const TokenId id = static_cast<TokenId>(rng());
        switch (rng() % 3) {
          case 0:
            writer.Push(id);
            expected.push_back(id);
            break;
          case 1: {  // room for 4, keep 0 to 4 of them
            TokenId* room = writer.Room(4);
            const size_t keep = rng() % 5;
            for (size_t i = 0; i < 4; ++i) room[i] = id + static_cast<TokenId>(i);
            for (size_t i = 0; i < keep; ++i) expected.push_back(id + static_cast<TokenId>(i));
            writer.Advance(keep);
            break;
          }
          default: {
            std::vector<TokenId> ids(rng() % 40, id);
            writer.Append(ids.data(), ids.size());
            expected.insert(expected.end(), ids.begin(), ids.end());
          }
        }
        ASSERT_EQ(writer.size(), expected.size());
        ASSERT_EQ(writer.data()[writer.size() - 1], expected.back());
      }
    }
    EXPECT_EQ(out, expected) << "bound " << bound;
  }
}

TEST(Encoder, CacheAndShortcutsChangeNothing) {
  std::string text = SampleText(300000);
  for (const BpeModel& model : {TrainedModel(), testing::LoadBpeModelOrFail(testing::TestVocabDir() + "gpt2.tiktoken")}) {
    auto cached = Encoder::Create(model);
    EncoderOptions plain_options;
    plain_options.cache_entries = 0;
    plain_options.long_piece = 8;  // the heap for most pieces
    plain_options.split_pieces = false;
    auto plain = Encoder::Create(model, plain_options);
    EncoderOptions tiny_cache;
    tiny_cache.cache_entries = 5;  // emptied over and over
    auto churning = Encoder::Create(model, tiny_cache);
    ASSERT_TRUE(cached.ok() && plain.ok() && churning.ok());
    auto a = (*cached)->Encode(text);
    auto a_again = (*cached)->Encode(text);  // now served from the cache
    auto b = (*plain)->Encode(text);
    auto c = (*churning)->Encode(text);
    ASSERT_TRUE(a.ok() && a_again.ok() && b.ok() && c.ok());
    EXPECT_EQ(*a, *b);
    EXPECT_EQ(*a, *a_again);
    EXPECT_EQ(*a, *c);
  }
}

// The piece cache against a map of what was inserted since it was last emptied: pieces of every
// length class (inline keys, longer keys, 1-3 ids and more), enough of them that its table
// grows into huge-page memory (131 k slots and up) and is emptied there, twice.
TEST(PieceCache, AnswersWhatWasInsertedSinceItWasEmptied) {
  constexpr size_t kCapacity = 150000;
  PieceCache cache(kCapacity);
  std::map<std::string, std::vector<TokenId>> held;
  std::mt19937_64 rng(7);
  std::vector<std::string> inserted;
  for (size_t n = 0; n < 2 * kCapacity + 12345; ++n) {
    std::string piece = std::to_string(n) + std::string(rng() % 24, 'a' + static_cast<char>(rng() % 26));
    std::vector<TokenId> ids(1 + rng() % 6);
    for (TokenId& id : ids) id = static_cast<TokenId>(rng() % 200000);
    const uint64_t hash = HashPiece(piece);
    if (cache.size() == kCapacity) held.clear();  // this insert empties it first
    cache.Insert(piece, hash, ids.data(), ids.size());
    held[piece] = ids;
    inserted.push_back(piece);
    ASSERT_EQ(cache.size(), held.size()) << n;
  }
  size_t hits = 0;
  for (const std::string& piece : inserted) {
    const auto it = held.find(piece);
    std::vector<TokenId> out = {99};
    {
      IdWriter writer(out, 64);
      const bool found = cache.Lookup(piece, HashPiece(piece), writer);
      ASSERT_EQ(found, it != held.end()) << piece;
      hits += found;
    }
    std::vector<TokenId> expected = {99};
    if (it != held.end()) expected.insert(expected.end(), it->second.begin(), it->second.end());
    ASSERT_EQ(out, expected) << piece;
  }
  EXPECT_EQ(hits, 12345u);
}

// The lines of `text`, each with its '\n'.
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < text.size();) {
    size_t end = std::min(text.size(), text.find('\n', start) + 1);
    if (end == 0) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

// The lines of the sample that hold Chinese (or other 3-byte characters).
std::string ChineseLines() {
  std::string text = SampleText(2000000), chinese;
  for (std::string_view line : Lines(text)) {
    for (size_t i = 0; i + 2 < line.size(); ++i) {
      if ((static_cast<unsigned char>(line[i]) & 0xF0) == 0xE0) {
        chinese += line;
        break;
      }
    }
  }
  return chinese;
}

// Pieces cut from Chinese text at character boundaries, some with characters replaced by any
// 3-byte sequence (overlong forms and surrogates included), ASCII, 2- and 4-byte characters or
// stray bytes, so that boundaries of every kind, and tokens straddling them, occur.
std::vector<std::string> ChinesePieces(const std::string& chinese, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  auto is_lead = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; };
  std::vector<std::string> pieces;
  while (static_cast<int>(pieces.size()) < count) {
    size_t start = rng() % chinese.size();
    while (start > 0 && !is_lead(chinese[start])) --start;
    size_t end = std::min(chinese.size(), start + 6 + rng() % 60);
    while (end < chinese.size() && !is_lead(chinese[end])) ++end;
    std::string piece = chinese.substr(start, end - start);
    if (pieces.size() % 3 == 1) {
      std::string mutated;
      for (size_t i = 0; i < piece.size();) {
        size_t len = 1;
        while (i + len < piece.size() && !is_lead(piece[i + len])) ++len;
        switch (rng() % 12) {
          case 0:
            mutated += static_cast<char>(0xE0 | rng() % 16);
            mutated += static_cast<char>(0x80 | rng() % 64);
            mutated += static_cast<char>(0x80 | rng() % 64);
            break;
          case 1: mutated += "ab"; break;
          case 2: mutated += "\xC3\xA9"; break;
          case 3: mutated += "\xF0\x9F\x98\x80"; break;
          case 4: mutated += static_cast<char>(0x80 | rng() % 64); break;
          default: mutated += piece.substr(i, len);
        }
        i += len;
      }
      piece = mutated;
    }
    if (!piece.empty()) pieces.push_back(piece);
  }
  return pieces;
}

TEST(CharSegments, SplittingPiecesOfChineseChangesNoId) {
  std::string chinese = ChineseLines();
  ASSERT_GT(chinese.size(), 100000u);
  // A model trained on Chinese has many tokens spanning characters, whole and in fragments.
  auto pretokenizer = PreTokenizer::Create({"gpt2", ""});
  WordCounts counts;
  CountDocument(chinese, **pretokenizer, nullptr, counts);
  TrainerOptions train_options;
  train_options.vocab_size = 3000;
  auto trained = Train(WordSource::Borrow(counts), train_options);
  ASSERT_TRUE(trained.ok()) << trained.status();
  std::vector<BpeModel> models = {Bpe(*trained)};
  for (const char* name : {"gpt2", "cl100k_base", "o200k_base"}) {
    models.push_back(testing::LoadBpeModelOrFail(testing::TestVocabDir() + name + ".tiktoken"));
  }
  const std::vector<std::string> pieces = ChinesePieces(chinese, 20000, 11);
  for (size_t m = 0; m < models.size(); ++m) {
    auto split = Encoder::Create(models[m]);
    EncoderOptions plain_options;
    plain_options.split_pieces = false;
    plain_options.cache_entries = 0;
    auto plain = Encoder::Create(models[m], plain_options);
    ASSERT_TRUE(split.ok() && plain.ok());
    size_t differing = 0;
    for (size_t i = 0; i < pieces.size(); ++i) {
      std::vector<TokenId> a, b;
      (*split)->EncodePiece(pieces[i], a);
      (*plain)->EncodePiece(pieces[i], b);
      if (a != b && ++differing <= 3) {
        ADD_FAILURE() << "model " << m << ", piece " << i;
      }
      if (m == 0 && i % 20 == 0) {
        EXPECT_EQ(a, NaiveBpe(models[m], pieces[i])) << "piece " << i;
      }
    }
    EXPECT_EQ(differing, 0u) << "model " << m;
    // SplitChars, the one-pass form for pieces of 3-byte sequences only, cuts where Split does
    // and hands over the same characters.
    const CharSegments& segments =
        dynamic_cast<const BpeEncoder&>((*split)->piece_encoder()).char_segments();
    size_t pure = 0;
    for (const std::string& piece : pieces) {
      const auto* p = reinterpret_cast<const unsigned char*>(piece.data());
      bool all_three = piece.size() >= 6 && piece.size() % 3 == 0;
      for (size_t k = 0; all_three && k < piece.size(); k += 3) {
        all_three = CharSegments::IsThreeByte(p + k, p + piece.size());
      }
      if (!all_three) continue;
      ++pure;
      auto char_ids = [](const TokenId* ids, size_t n) {
        std::string s = "char";
        for (size_t i = 0; i < n; ++i) {
          s += ' ';
          s += std::to_string(ids[i]);
        }
        return s;
      };
      std::vector<std::string> by_split, by_chars;
      TokenId ids[3];
      bool split_cut = segments.Split(piece, [&](std::string_view segment) {
        by_split.push_back(segment.size() == 3
                               ? char_ids(ids, segments.WriteChar(
                                                   reinterpret_cast<const unsigned char*>(segment.data()), ids))
                               : std::string(segment));
      });
      bool chars_cut = segments.SplitChars(
          p, piece.size() / 3,
          [&](uint32_t index) { by_chars.push_back(char_ids(ids, segments.WriteCharAt(index, ids))); },
          [&](std::string_view segment) { by_chars.emplace_back(segment); });
      EXPECT_EQ(split_cut, chars_cut) << "model " << m;
      EXPECT_EQ(by_split, by_chars) << "model " << m;
    }
    EXPECT_GT(pure, pieces.size() / 10) << "model " << m;  // 4 k of the 20 k
    // The whole text, pre-tokenized, both ways.
    EXPECT_EQ(*(*split)->Encode(chinese), *(*plain)->Encode(chinese)) << "model " << m;
    // The test means something: most pieces of Chinese text do split.
    auto pretokenize = PreTokenizer::Create(models[m].pretokenizer);
    size_t chinese_pieces = 0, splitting = 0;
    (*pretokenize)->Split(chinese, [&](std::string_view piece) {
      if (piece.size() < 9 || (static_cast<unsigned char>(piece.back()) & 0xC0) != 0x80) return;
      ++chinese_pieces;
      splitting += segments.Split(piece, [](std::string_view) {});
    });
    EXPECT_GT(chinese_pieces, 1000u) << "model " << m;
    EXPECT_GT(splitting, chinese_pieces / 2) << "model " << m;
  }
}

// Whether some token matches text a1 a2 | b0 b1 (continuation bytes a1, a2, b1; lead byte b0 of
// e0..ef) across the boundary, as CharSegments defines it: its 2 bytes each side of a cut, as far
// as the token reaches. One window at a time, over every cut of every token.
std::vector<bool> StraddledWindowsByBruteForce(const std::vector<std::string>& tokens) {
  std::vector<bool> straddled(size_t{1} << 22, false);  // by (a1, a2, b0 & 15, b1) low 6 bits
  auto matches = [](const std::string& token, size_t at, unsigned byte) {
    return at >= token.size() || static_cast<unsigned char>(token[at]) == byte;
  };
  for (const std::string& token : tokens) {
    for (size_t cut = 1; cut < token.size(); ++cut) {
      const unsigned a2 = static_cast<unsigned char>(token[cut - 1]);
      const unsigned b0 = static_cast<unsigned char>(token[cut]);
      if (a2 < 0x80 || a2 >= 0xC0 || b0 < 0xE0 || b0 >= 0xF0) continue;
      for (unsigned a1 = 0x80; a1 < 0xC0; ++a1) {
        if (cut >= 2 && static_cast<unsigned char>(token[cut - 2]) != a1) continue;
        for (unsigned b1 = 0x80; b1 < 0xC0; ++b1) {
          if (!matches(token, cut + 1, b1)) continue;
          straddled[(a1 & 63) << 16 | (a2 & 63) << 10 | (b0 & 15) << 6 | (b1 & 63)] = true;
        }
      }
    }
  }
  return straddled;
}

TEST(CharSegments, SafeBoundariesAreThoseNoTokenStraddles) {
  std::vector<BpeModel> models;
  for (const char* name : {"cl100k_base", "o200k_base"}) {
    models.push_back(testing::LoadBpeModelOrFail(testing::TestVocabDir() + name + ".tiktoken"));
  }
  for (const BpeModel& model : models) {
    const std::vector<bool> straddled = StraddledWindowsByBruteForce(model.tokens);
    size_t marked = 0;
    for (bool s : straddled) marked += s;
    EXPECT_GT(marked, 1000u);  // the test means something: cl100k_base straddles 10.6 k windows
    CharSegments segments;
    segments.MarkBoundaries(model.tokens);
    size_t wrong = 0;
    unsigned char text[4];
    for (uint32_t key = 0; key < straddled.size(); ++key) {
      text[0] = 0x80 | (key >> 16 & 63);
      text[1] = 0x80 | (key >> 10 & 63);
      text[2] = 0xE0 | (key >> 6 & 15);
      text[3] = 0x80 | (key & 63);
      if (segments.SafeBoundary(text + 2) == straddled[key] && ++wrong <= 3) {
        ADD_FAILURE() << "window " << key << ": safe " << !straddled[key] << " expected";
      }
    }
    EXPECT_EQ(wrong, 0u);
  }
}

TEST(Encoder, BatchEqualsSequentialOnAnyThreadCount) {
  auto encoder = Encoder::Create(TrainedModel());
  ASSERT_TRUE(encoder.ok());
  std::string text = SampleText(400000);
  std::vector<std::string_view> docs = Lines(text);
  std::vector<std::vector<TokenId>> sequential;
  for (std::string_view doc : docs) sequential.push_back(*(*encoder)->Encode(doc));
  for (int threads : {1, 2, 4}) {
    tbb::task_arena arena(threads);
    arena.execute([&] {
      auto batch = (*encoder)->EncodeBatch(docs);
      ASSERT_TRUE(batch.ok());
      ASSERT_EQ(batch->size(), sequential.size());
      std::vector<std::vector<TokenId>> per_text;
      for (size_t i = 0; i < batch->size(); ++i) {
        per_text.emplace_back((*batch)[i].begin(), (*batch)[i].end());
      }
      EXPECT_EQ(per_text, sequential) << threads << " threads";
      auto empty = (*encoder)->EncodeBatch({});
      ASSERT_TRUE(empty.ok());
      EXPECT_EQ(empty->size(), 0u);
    });
  }
}

TEST(Encoder, BatchReportsTheFirstFailingText) {
  auto encoder = Encoder::Create(TrainedModel());
  ASSERT_TRUE(encoder.ok());
  std::vector<std::string_view> docs = {"fine", "has <|endoftext|> here", "fine", "<|endoftext|>"};
  auto batch = (*encoder)->EncodeBatch(docs, SpecialPolicy::kDisallow);
  ASSERT_FALSE(batch.ok());
  EXPECT_EQ(batch.status().message(),
            "text 1: the text contains the special token '<|endoftext|>' at byte 4, which `specials` "
            "refuses: allow special tokens or encode them as text");
}

// A model trained by tokenmill on the sample's first 60 KB, its lines counted as documents
// (prepared as `options.pretokenizer` says).
std::unique_ptr<Model> TrainedOnSample(const TrainerOptions& options) {
  const std::string text = SampleText(60000);
  std::unique_ptr<PreTokenizer> pretokenizer = PreTokenizer::Create(options.pretokenizer).value();
  std::unique_ptr<TextPrep> prep = TextPrep::Create(options.pretokenizer).value();
  WordCounts counts;
  for (std::string_view line : Lines(text)) {
    CountDocument(line, *pretokenizer, nullptr, counts, prep.get());
  }
  absl::StatusOr<TrainResult> result = Train(WordSource::Borrow(counts), options);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? std::move(result->model) : nullptr;
}

// Lines of sample text cut anywhere, with special tokens, "\r", empty lines, a control byte
// (no token of an --hf-compat vocabulary) and a special token holding a newline mixed in; the
// last line sometimes without its newline.
std::string RandomLines(uint32_t seed) {
  static const std::string sample = SampleText(20000);
  static const std::vector<std::string> extras = {"<|endoftext|>", "<|endoftext|>\n", "\r\n",
                                                  "\n", "\n\n", " \n", "<a>\n<b>", "\x01",
                                                  "  ", "<|endof"};
  std::mt19937 rng(seed);
  std::string text;
  const int parts = 1 + static_cast<int>(rng() % 60);
  for (int i = 0; i < parts; ++i) {
    if (rng() % 3 == 0) {
      text += extras[rng() % extras.size()];
    } else {
      text += sample.substr(rng() % sample.size(), rng() % 120);
    }
  }
  if (rng() % 2 == 0 && !text.empty() && text.back() != '\n') text += '\n';
  return text;
}

// ForEachLineOf (newlines found 16 bytes at a time) gives the lines a byte-by-byte split gives:
// texts of 0 to 99 bytes, newlines anywhere (several in a block, at the blocks' edges, first,
// last, in a row), with and without a last newline.
TEST(ForEachLineOf, GivesTheLinesOfAByteByByteSplit) {
  std::mt19937 rng(3);
  for (int round = 0; round < 4000; ++round) {
    std::string text(rng() % 100, 'x');
    const unsigned one_in = 1 + rng() % 8;
    for (char& c : text) {
      if (rng() % one_in == 0) c = '\n';
    }
    std::vector<std::pair<std::string, bool>> expected;
    std::string line;
    for (char c : text) {
      line.push_back(c);
      if (c == '\n') {
        expected.emplace_back(line, true);
        line.clear();
      }
    }
    if (!line.empty()) expected.emplace_back(line, false);
    std::vector<std::pair<std::string, bool>> lines;
    ForEachLineOf(text, [&](std::string_view l, bool ends_with_newline) {
      lines.emplace_back(std::string(l), ends_with_newline);
    });
    ASSERT_EQ(lines, expected) << text.size() << " bytes, round " << round;
  }
}

// EncodeLines (special tokens looked for once, one call of the piece encoder for many lines)
// gives what EncodeTo gives line by line: the ids, each line's end, and on a refusal the same
// error after the same lines. For BPE (which overrides PieceEncoder::EncodeLines) with special
// tokens, one holding a newline (looked for line by line), an --hf-compat vocabulary missing
// bytes, OpenAI's gpt2, and a Unigram model whose text is prepared (NFKC, metaspace).
TEST(Encoder, EncodeLinesEqualsEncodeToLineByLine) {
  std::vector<std::pair<std::string, std::unique_ptr<Model>>> models;
  TrainerOptions bpe;
  bpe.vocab_size = 600;
  bpe.special_tokens = {"<|endoftext|>"};
  models.emplace_back("bpe", TrainedOnSample(bpe));
  TrainerOptions newline_special = bpe;
  newline_special.special_tokens = {"<|endoftext|>", "<a>\n<b>"};
  models.emplace_back("special with a newline", TrainedOnSample(newline_special));
  TrainerOptions hf = bpe;
  hf.hf_compat = true;
  models.emplace_back("hf_compat", TrainedOnSample(hf));
  models.emplace_back("gpt2", std::make_unique<BpeModel>(testing::LoadBpeModelOrFail(
                                  testing::TestVocabDir() + "gpt2.tiktoken")));
  TrainerOptions unigram;
  unigram.algorithm = Algorithm::kUnigram;
  unigram.units = UnitKind::kChar;
  unigram.vocab_size = 2500;
  unigram.special_tokens = {"<unk>", "<|endoftext|>"};
  unigram.special_tokens_at = SpecialTokensAt::kStart;
  unigram.pretokenizer = PreTokenizerConfig("metaspace");
  unigram.pretokenizer.normalizer.form = NormalForm::kNfkc;
  models.emplace_back("unigram", TrainedOnSample(unigram));

  int refused = 0, specials_found = 0;
  for (auto& [name, model] : models) {
    ASSERT_NE(model, nullptr) << name;
    auto encoder = Encoder::Create(std::move(model));
    ASSERT_TRUE(encoder.ok()) << name << ": " << encoder.status();
    const bool missing_bytes = (*encoder)->unencodable_bytes().any();
    for (SpecialPolicy policy : {SpecialPolicy::kAllow, SpecialPolicy::kDisallow, SpecialPolicy::kAsText}) {
      for (uint32_t seed = 0; seed < 60; ++seed) {
        const std::string text = seed == 0 ? std::string() : RandomLines(seed);
        std::vector<TokenId> expected_ids = {7};  // appended to, as `out` is
        std::vector<size_t> expected_ends = {1};
        absl::Status expected;
        for (std::string_view line : Lines(text)) {
          expected = (*encoder)->EncodeTo(line, policy, expected_ids);
          if (!expected.ok()) break;
          expected_ends.push_back(expected_ids.size());
        }
        std::vector<TokenId> ids = {7};
        std::vector<size_t> ends = {1};
        const absl::Status status = (*encoder)->EncodeLines(text, policy, ids, ends);
        const std::string where = name + ", policy " + std::to_string(static_cast<int>(policy)) +
                                  ", seed " + std::to_string(seed);
        EXPECT_EQ(status, expected) << where;
        EXPECT_EQ(ends, expected_ends) << where;
        if (expected.ok()) {
          EXPECT_EQ(ids, expected_ids) << where;
          EXPECT_EQ(ends.size() - 1, Lines(text).size()) << where;
        } else {
          ++refused;
        }
        if (policy == SpecialPolicy::kAllow && text.find("<|endoftext|>") != std::string::npos &&
            !missing_bytes) {
          ++specials_found;
        }
      }
    }
  }
  EXPECT_GT(refused, 50);  // disallowed specials and missing bytes were met
  EXPECT_GT(specials_found, 50);
}

TEST(Encoder, ExplainAddsUpToEncode) {
  for (const BpeModel& model : {TrainedModel(), testing::LoadBpeModelOrFail(testing::TestVocabDir() + "gpt2.tiktoken")}) {
    auto encoder = Encoder::Create(model);
    ASSERT_TRUE(encoder.ok());
    std::string text = SampleText(3000) + "<|endoftext|> tail";
    auto pieces = (*encoder)->Explain(text);
    ASSERT_TRUE(pieces.ok());
    std::vector<TokenId> ids;
    std::string joined;
    for (const ExplainedPiece& p : *pieces) {
      ids.insert(ids.end(), p.ids.begin(), p.ids.end());
      joined += p.text;
      if (!p.whole_token && p.special_index < 0) {
        EXPECT_EQ(p.merges.size(), p.text.size() - p.ids.size());
      }
    }
    EXPECT_EQ(joined, text);
    EXPECT_EQ(ids, *(*encoder)->Encode(text));
  }
}

// PairTable::Build from merges answers as a plain map filled in merge order where the first
// merge of a pair wins, for both priorities, on a table large enough to be filled in parallel
// blocks and with repeated pairs; pairs no merge names are absent.
TEST(PairTable, BuildFromMergesKeepsTheFirstMergeOfEachPair) {
  std::mt19937 rng(11);
  std::vector<Merge> merges;
  for (uint32_t i = 0; i < 300000; ++i) {
    merges.push_back({static_cast<TokenId>(rng() % 2000), static_cast<TokenId>(rng() % 2000),
                      static_cast<TokenId>(rng() % 1000000)});
  }
  for (MergePriority priority : {MergePriority::kMergeIndex, MergePriority::kTokenRank}) {
    std::map<std::pair<TokenId, TokenId>, PairMerge> first;
    for (uint32_t rank = 0; rank < merges.size(); ++rank) {
      const Merge& m = merges[rank];
      const uint32_t p = priority == MergePriority::kTokenRank ? m.result : rank;
      first.emplace(std::make_pair(m.left, m.right), PairMerge{p, m.result});
    }
    ASSERT_LT(first.size(), merges.size());  // some pairs repeat
    for (int threads : {1, 2}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      PairTable table;
      table.Build(merges, priority);
      for (TokenId left = 0; left < 2010; left += 5) {
        for (TokenId right = 0; right < 2010; ++right) {
          auto it = first.find({left, right});
          PairMerge got = table.Find(left, right);
          if (it == first.end()) {
            ASSERT_EQ(got.priority, PairTable::kNone) << left << " " << right;
          } else {
            ASSERT_EQ(got.priority, it->second.priority) << left << " " << right;
            ASSERT_EQ(got.result, it->second.result) << left << " " << right;
          }
        }
      }
    }
  }
}

// TokenTable answers as a map from bytes to the lowest id holding them (specials and gaps left
// out), and distinct() tells whether a token repeats: with keys inline (up to 16 bytes) and
// stored apart, in a table about three quarters full (3000 tokens, 4096 slots), where equal
// and unequal keys share probe sequences.
TEST(TokenTable, FindsTheLowestIdOfEachTokenAndTellsWhetherOneRepeats) {
  std::mt19937 rng(5);
  for (size_t length : {1, 3, 16, 17, 40}) {
    std::vector<std::string> tokens;
    for (int i = 0; i < 3000; ++i) {
      std::string token;
      const size_t n = length == 40 ? 40 : 1 + rng() % length;  // 40: none repeats
      for (size_t k = 0; k < n; ++k) token.push_back(static_cast<char>('a' + rng() % 3));
      tokens.push_back(token);
    }
    tokens[7].clear();  // a gap
    std::vector<bool> skip(tokens.size(), false);
    skip[11] = true;
    std::map<std::string, TokenId> lowest;
    for (size_t id = 0; id < tokens.size(); ++id) {
      if (!skip[id] && !tokens[id].empty()) lowest.emplace(tokens[id], static_cast<TokenId>(id));
    }
    size_t regular = 0;
    for (size_t id = 0; id < tokens.size(); ++id) regular += !skip[id] && !tokens[id].empty();
    TokenTable table;
    // Memory Reserve()d for as many tokens (used), for a tenth and ten times as many (of other
    // sizes: not used), and none.
    for (size_t reserved : {regular, regular / 10, 10 * regular, size_t{0}}) {
      if (reserved > 0) table.Reserve(reserved);
      table.Build(tokens, skip);
      EXPECT_EQ(table.capacity(), std::bit_ceil(regular + regular / 4)) << reserved;
      EXPECT_EQ(table.distinct(), lowest.size() == regular) << length;
      EXPECT_EQ(length == 40, table.distinct()) << length;  // short random tokens repeat
      for (const auto& [bytes, id] : lowest) ASSERT_EQ(table.Find(bytes), id) << length;
      if (lowest.count(tokens[11]) == 0) {
        EXPECT_EQ(table.Find(tokens[11]), TokenTable::kMissing);
      }
      EXPECT_EQ(table.Find("d"), TokenTable::kMissing);
    }
    // Only the distinct ones: distinct() says so.
    std::vector<std::string> unique;
    for (const auto& [bytes, id] : lowest) unique.push_back(bytes);
    table.Build(unique, std::vector<bool>(unique.size(), false));
    EXPECT_TRUE(table.distinct()) << length;
    for (size_t id = 0; id < unique.size(); ++id) ASSERT_EQ(table.Find(unique[id]), id);
  }
}

// Build() fills the table's regions in parallel and leaves a probe that runs past its region's
// end (or the table's) to a serial pass: tokens crafted to start their probes in the last
// slots of a region and of the table, more than fit there, with repeats and long keys among
// them, are found as a map from bytes to the lowest id finds them, on one thread and on four.
TEST(TokenTable, ProbesRunningPastARegionOrTheTableEndAreFound) {
  std::mt19937 rng(11);
  auto random_token = [&](size_t n) {
    std::string token;
    for (size_t k = 0; k < n; ++k) token.push_back(static_cast<char>('a' + rng() % 26));
    return token;
  };
  std::vector<std::string> tokens;
  for (int i = 0; i < 40000; ++i) tokens.push_back(random_token(12));
  const std::vector<bool> skip(tokens.size(), false);
  TokenTable table;
  table.Build(tokens, skip);
  const size_t capacity = table.capacity();
  ASSERT_GE(capacity / TokenTable::kRegionSlots, 2u);  // at least two regions
  // 60 tokens each starting their probe in the last 3 slots of region 0, and of the table
  // (the last region's end, where a probe wraps to slot 0): most of them cannot stay there.
  auto crafted = [&](size_t end, size_t n) {
    std::vector<std::string> out;
    while (out.size() < n) {
      std::string token = random_token(out.size() % 3 == 0 ? 20 : 5);  // a third over 16 bytes
      const size_t home = HashPiece(token) & (capacity - 1);
      if (home + 3 >= end && home < end) out.push_back(token);
    }
    return out;
  };
  size_t id = tokens.size() - 1;
  for (size_t end : {TokenTable::kRegionSlots, capacity}) {
    std::vector<std::string> near_end = crafted(end, 60);
    for (const std::string& token : near_end) tokens[id--] = token;
    tokens[id--] = near_end[1];  // a repeat, at a lower id than its first copy
    tokens[id--] = near_end[3];
  }
  std::map<std::string, TokenId> lowest;
  for (size_t i = 0; i < tokens.size(); ++i) lowest.emplace(tokens[i], static_cast<TokenId>(i));
  ASSERT_LT(lowest.size(), tokens.size());
  for (int threads : {1, 4}) {
    tbb::task_arena arena(threads);
    table.Reserve(tokens.size());  // the memory FromTiktoken hands over
    arena.execute([&] { table.Build(tokens, skip); });
    EXPECT_EQ(table.capacity(), capacity);
    EXPECT_EQ(table.size(), tokens.size());
    EXPECT_FALSE(table.distinct());
    EXPECT_EQ(table.longest(), 20u);
    for (const auto& [bytes, lowest_id] : lowest) ASSERT_EQ(table.Find(bytes), lowest_id) << threads;
    EXPECT_EQ(table.Find(random_token(7)), TokenTable::kMissing);
  }
}

// Validate, whose checks run in parallel blocks, reports what a serial check would: a
// repeated token before any merge, then the merge of lowest rank that breaks the contract,
// whatever the thread count.
TEST(BpeModel, ValidateReportsTheFirstBrokenRule) {
  BpeModel model = ByteBaseModel();
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      const TokenId id = static_cast<TokenId>(model.tokens.size());
      model.tokens.push_back(std::string{static_cast<char>(a), static_cast<char>(b)});
      model.merges.push_back({static_cast<TokenId>(a), static_cast<TokenId>(b), id});
    }
  }
  ASSERT_TRUE(model.Validate().ok()) << model.Validate();
  model.merges[60000].left = 99999999;                      // not a token
  model.merges[40000].result = model.merges[40001].result;  // a wrong concatenation
  const TokenId right_50000 = model.merges[50000].right;
  model.merges[50000].right = model.merges[50000].left + 1;
  for (int threads : {1, 2}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    EXPECT_EQ(model.Validate().message(),
              "merge 40000: token 40257 is not the concatenation of tokens 156 and 64");
  }
  model.merges[40000].result = 256 + 40000;
  model.merges[50000].right = right_50000;
  for (int threads : {1, 2}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    EXPECT_EQ(model.Validate().message(), "merge 60000 refers to an id that is not a regular token");
  }
  model.tokens[256 + 70000 % 65536] = model.tokens[256 + 3];
  for (int threads : {1, 2}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    EXPECT_EQ(model.Validate().message(), "ids 259 and 4720 name the same bytes");
  }
  EXPECT_TRUE(model.ValidateTokens(/*check_duplicates=*/false).ok());
  EXPECT_EQ(model.ValidateTokens().message(), "ids 259 and 4720 name the same bytes");
}

}  // namespace
}  // namespace tokenmill
