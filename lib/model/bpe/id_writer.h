// IdWriter: appends token ids to a std::vector<TokenId> through a raw cursor, for the encoder's
// hot loop.
//
// Why: most pieces add one to a few ids. push_back re-checks the capacity and stores the new
// end for every id, and insert() of a few ids is a call to memmove; on Chinese text (a few ids
// per piece, 48 M ids for poetry) those were about a tenth of the encode. The writer instead
// keeps the vector zero-filled a chunk ahead of the ids written so far (so every byte it hands
// out belongs to the vector's size), writes through a plain pointer, and trims the vector back
// to the ids written when it is destroyed. A writer is the only thing touching its vector while
// it lives. The chunk is capped by what the caller says it may still write (a text of n bytes
// encodes to at most n ids), so that encoding many short texts (batches of lines) does not
// zero-fill a chunk for each.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "model/bpe/bpe_model.h"

namespace tokenmill {

class IdWriter {
 public:
  // `at_most`: an upper bound on the ids this writer will write (a bound, not a reservation).
  IdWriter(std::vector<TokenId>& out, size_t at_most)
      : out_(out), cur_(out.data() + out.size()), limit_(cur_), end_bound_(out.size() + at_most) {}
  ~IdWriter() { out_.resize(size()); }
  IdWriter(const IdWriter&) = delete;
  IdWriter& operator=(const IdWriter&) = delete;

  // Room for at least n ids at the returned pointer; Advance() then keeps those written.
  TokenId* Room(size_t n) {
    if (static_cast<size_t>(limit_ - cur_) < n) Grow(n);
    return cur_;
  }
  void Advance(size_t n) { cur_ += n; }

  void Push(TokenId id) {
    *Room(1) = id;
    ++cur_;
  }
  void Append(const TokenId* ids, size_t n) {
    TokenId* dst = Room(n);
    if (n <= 8) {
      for (size_t i = 0; i < n; ++i) dst[i] = ids[i];  // inline: no call for a few ids
    } else {
      std::memcpy(dst, ids, n * sizeof(TokenId));
    }
    cur_ += n;
  }

  // Ids in the vector, those there before the writer included; data()[0, size()) are final.
  size_t size() const { return static_cast<size_t>(cur_ - out_.data()); }
  const TokenId* data() const { return out_.data(); }

  // A per-writer vector for code that appends to a std::vector (BPE runs); empty on return.
  std::vector<TokenId>& scratch() {
    scratch_.clear();
    return scratch_;
  }

 private:
  // Zero-fills at least n more ids (and up to a chunk, within the bound), keeping capacity
  // growth geometric.
  void Grow(size_t n) {
    constexpr size_t kChunk = 4096;  // 16 KB: written over while still in cache
    const size_t used = size();
    const size_t bounded = end_bound_ > used ? std::min(kChunk, end_bound_ - used) : 0;
    const size_t want = used + std::max(n, bounded);
    if (want > out_.capacity()) out_.reserve(std::max(want, 2 * out_.capacity()));
    out_.resize(want);
    cur_ = out_.data() + used;
    limit_ = out_.data() + want;
  }

  std::vector<TokenId>& out_;
  TokenId* cur_;
  TokenId* limit_;
  size_t end_bound_;  // the vector's size never needs to exceed this (but may: Room(n) wins)
  std::vector<TokenId> scratch_;
};

}  // namespace tokenmill
