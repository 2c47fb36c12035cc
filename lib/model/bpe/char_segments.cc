#include "model/bpe/char_segments.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace tokenmill {
namespace {

bool IsContinuation(unsigned b) { return (b & 0xC0) == 0x80; }

}  // namespace

void CharSegments::Mark(unsigned a1, unsigned a2, unsigned b0, unsigned b1,
                        std::vector<uint64_t>& unsafe, std::vector<uint64_t>& summary) {
  uint32_t key = WindowKey(a1, a2, b0, b1);
  unsafe[key >> 6] |= uint64_t{1} << (key & 63);
  uint32_t window = key & 0xFFFF;
  summary[window >> 6] |= uint64_t{1} << (window & 63);
}

void CharSegments::Build(const std::vector<std::string>& tokens, const PieceBpe& bpe) {
  MarkBoundaries(tokens);
  EncodeChars(bpe, tokens.size());
}

void CharSegments::MarkBoundaries(const std::vector<std::string>& tokens) {
  if (TooManyIds(tokens.size())) return;
  std::vector<uint64_t> unsafe((size_t{1} << 22) / 64, 0), summary((size_t{1} << 16) / 64, 0);
  // A token matching the text across a boundary a1 a2 | b0 b1 has a cut where b0 (e0..ef)
  // follows a2 (a continuation byte); the bytes it has beyond the cut must equal the text's,
  // and where it ends sooner the text's byte may be any continuation byte.
  for (const std::string& token : tokens) {
    const auto* t = reinterpret_cast<const unsigned char*>(token.data());
    const size_t n = token.size();
    for (size_t cut = 1; cut < n; ++cut) {
      if ((t[cut] & 0xF0) != 0xE0 || !IsContinuation(t[cut - 1])) continue;
      if (cut >= 2 && !IsContinuation(t[cut - 2])) continue;
      if (cut + 1 < n && !IsContinuation(t[cut + 1])) continue;
      unsigned a1_first = cut >= 2 ? t[cut - 2] : 0x80, a1_last = cut >= 2 ? t[cut - 2] : 0xBF;
      unsigned b1_first = cut + 1 < n ? t[cut + 1] : 0x80, b1_last = cut + 1 < n ? t[cut + 1] : 0xBF;
      for (unsigned a1 = a1_first; a1 <= a1_last; ++a1) {
        for (unsigned b1 = b1_first; b1 <= b1_last; ++b1) {
          Mark(a1, t[cut - 1], t[cut], b1, unsafe, summary);
        }
      }
    }
  }
  unsafe_ = SharedArray<uint64_t>(std::move(unsafe));
  unsafe_summary_ = SharedArray<uint64_t>(std::move(summary));
}

void CharSegments::EncodeChars(const PieceBpe& bpe, size_t vocab_size) {
  built_ = false;
  if (TooManyIds(vocab_size)) return;
  std::vector<uint64_t> chars(size_t{1} << 16, 0);
  // Each character's BPE on its own (65,536 of them), in parallel.
  tbb::parallel_for(tbb::blocked_range<uint32_t>(0, static_cast<uint32_t>(chars.size()), 4096),
                    [&](const tbb::blocked_range<uint32_t>& r) {
                      std::vector<TokenId> ids;
                      for (uint32_t index = r.begin(); index < r.end(); ++index) {
                        const char c[3] = {static_cast<char>(0xE0 | index >> 12),
                                           static_cast<char>(0x80 | (index >> 6 & 0x3F)),
                                           static_cast<char>(0x80 | (index & 0x3F))};
                        ids.clear();
                        bpe.Encode(std::string_view(c, 3), ids);
                        // 3 bytes: 1 to 3 tokens
                        uint64_t entry = uint64_t{ids.size()} << 3 * kIdBits;
                        for (size_t i = 0; i < ids.size(); ++i) {
                          entry |= uint64_t{ids[i]} << (kIdBits * i);
                        }
                        chars[index] = entry;
                      }
                    });
  chars_ = SharedArray<uint64_t>(std::move(chars));
  built_ = true;
}

void CharSegments::AppendTo(BinaryWriter& out) const {
  out.Varint(built_);
  if (!built_) return;
  WriteAlignedArray(out, unsafe_.span());
  WriteAlignedArray(out, unsafe_summary_.span());
  WriteAlignedArray(out, chars_.span());
}

bool CharSegments::ReadFrom(BinaryReader& in, size_t id_bound,
                            const std::shared_ptr<const void>& owner) {
  *this = CharSegments();
  uint64_t built;
  if (!in.Varint(&built) || built > 1) return false;
  if (built == 0) return true;
  SharedArray<uint64_t> unsafe, summary, chars;
  if (!ReadAlignedArray(in, (size_t{1} << 22) / 64, owner, &unsafe) ||
      !ReadAlignedArray(in, (size_t{1} << 16) / 64, owner, &summary) ||
      !ReadAlignedArray(in, size_t{1} << 16, owner, &chars)) {
    return false;
  }
  for (uint64_t entry : chars.span()) {  // 1 to 3 ids below id_bound
    const uint64_t count = entry >> 3 * kIdBits;
    if (count < 1 || count > 3) return false;
    for (uint64_t i = 0; i < count; ++i) {
      if ((entry >> (kIdBits * i) & kIdMask) >= id_bound) return false;
    }
  }
  unsafe_ = std::move(unsafe);
  unsafe_summary_ = std::move(summary);
  chars_ = std::move(chars);
  built_ = true;
  return true;
}

}  // namespace tokenmill
