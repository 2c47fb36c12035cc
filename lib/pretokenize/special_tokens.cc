// SpecialTokenMatcher on Hyperscan: the tokens form one literal database (block mode, no
// start-of-match tracking: a literal's start is its end minus its length). Hyperscan reports
// every occurrence of every token; Split() keeps, left to right, the occurrence that starts
// first and among those the longest, and skips occurrences that overlap a kept one.
#include "pretokenize/special_tokens.h"

#include <hs/hs.h>
#include <tbb/enumerable_thread_specific.h>

#include <algorithm>
#include <mutex>
#include <new>
#include <climits>
#include <cstring>

#include "common/strings.h"

namespace tokenmill {
namespace {

struct Occurrence {
  size_t start;
  size_t length;
  int index;
};

class HyperscanSpecialTokenMatcher final : public SpecialTokenMatcher {
 public:
  HyperscanSpecialTokenMatcher(std::vector<std::string> tokens, hs_database_t* database,
                               hs_scratch_t* scratch)
      : SpecialTokenMatcher(std::move(tokens)), database_(database), prototype_(scratch) {
    for (const std::string& t : this->tokens()) {
      max_length_ = std::max(max_length_, t.size());
      const char first = t[0];
      if (std::find(first_bytes_.begin(), first_bytes_.end(), first) == first_bytes_.end()) {
        first_bytes_.push_back(first);
      }
    }
  }

  ~HyperscanSpecialTokenMatcher() override {
    for (hs_scratch_t* s : clones_) hs_free_scratch(s);
    hs_free_scratch(prototype_);
    hs_free_database(database_);
  }

  void Split(std::string_view text,
             absl::FunctionRef<void(std::string_view, int)> on_segment) const override {
    if (text.empty()) return;
    if (!MayHoldToken(text)) {
      on_segment(text, -1);
      return;
    }
    std::vector<Occurrence> found = FindAll(text);
    std::sort(found.begin(), found.end(), [](const Occurrence& a, const Occurrence& b) {
      return a.start != b.start ? a.start < b.start : a.length > b.length;
    });
    size_t plain_start = 0;
    for (const Occurrence& o : found) {
      if (o.start < plain_start) continue;  // overlaps the token kept before
      if (o.start > plain_start) on_segment(text.substr(plain_start, o.start - plain_start), -1);
      on_segment(text.substr(o.start, o.length), o.index);
      plain_start = o.start + o.length;
    }
    if (plain_start < text.size()) on_segment(text.substr(plain_start), -1);
  }

 private:
  // False when no token can occur in `text`: none of the bytes tokens start with is in it.
  // Texts are often lines, and most hold none of those bytes (OpenAI's specials all start with
  // '<'): a memchr per such byte (up to kMaxFirstBytes) costs less than a Hyperscan call per
  // line (5% of a linux_c_100m encode with cl100k_base, under perf).
  static constexpr size_t kMaxFirstBytes = 4;
  bool MayHoldToken(std::string_view text) const {
    if (first_bytes_.size() > kMaxFirstBytes) return true;
    for (char c : first_bytes_) {
      if (std::memchr(text.data(), c, text.size()) != nullptr) return true;
    }
    return false;
  }

  // Every occurrence of every token, in any order. Texts longer than hs_scan's unsigned length
  // are scanned in overlapping windows; each occurrence is kept once (by its end).
  std::vector<Occurrence> FindAll(std::string_view text) const {
    std::vector<Occurrence> found;
    if (database_ == nullptr || text.empty()) return found;
    hs_scratch_t* scratch = LocalScratch();
    struct Context {
      const HyperscanSpecialTokenMatcher* self;
      std::vector<Occurrence>* found;
      size_t base;
      size_t keep_after;  // only ends beyond this absolute offset are new
    };
    auto on_match = [](unsigned id, unsigned long long, unsigned long long to, unsigned,
                       void* ctx) -> int {
      auto* c = static_cast<Context*>(ctx);
      const size_t end = c->base + to;
      if (end <= c->keep_after) return 0;
      const size_t length = c->self->tokens()[id].size();
      c->found->push_back({end - length, length, static_cast<int>(id)});
      return 0;
    };
    constexpr size_t kWindow = size_t{1} << 30;
    size_t base = 0;
    size_t keep_after = 0;
    while (true) {
      const size_t length = std::min(text.size() - base, kWindow);
      Context context{this, &found, base, keep_after};
      hs_scan(database_, text.data() + base, static_cast<unsigned>(length), 0, scratch, on_match,
              &context);
      if (base + length == text.size()) break;
      keep_after = base + length;
      base = keep_after - std::min(keep_after, max_length_ - 1);
    }
    return found;
  }

  // This thread's clone of the prototype scratch, made on its first scan. Per thread, not a
  // pool under a lock: a scan per text (a line) made the lock the bottleneck. (An absl::Mutex
  // runs Debian's deadlock detection on every lock: 22% of a linux_docs count with special
  // tokens; a std::mutex made two threads wait on each other in futex calls: 20%.) The clones
  // are owned by `clones_`, an ordinary vector, so that LeakSanitizer sees them from a matcher
  // alive at exit (it does not scan the thread-local storage, which oneTBB allocates itself).
  hs_scratch_t* LocalScratch() const {
    hs_scratch_t*& local = scratch_.local();
    if (local == nullptr) {
      if (hs_clone_scratch(prototype_, &local) != HS_SUCCESS) throw std::bad_alloc();
      std::lock_guard<std::mutex> lock(clones_mutex_);
      clones_.push_back(local);
    }
    return local;
  }

  hs_database_t* database_;  // null when there are no tokens
  hs_scratch_t* prototype_;
  size_t max_length_ = 0;
  std::vector<char> first_bytes_;  // the distinct first bytes of the tokens
  mutable tbb::enumerable_thread_specific<hs_scratch_t*> scratch_{nullptr};
  mutable std::mutex clones_mutex_;  // taken once per thread, when it clones
  mutable std::vector<hs_scratch_t*> clones_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SpecialTokenMatcher>> SpecialTokenMatcher::Create(
    std::vector<std::string> tokens) {
  StringSet seen;
  for (const std::string& t : tokens) {
    if (t.empty()) return absl::InvalidArgumentError("a special token is empty");
    if (!seen.insert(t).second) {
      return absl::InvalidArgumentError(StrCat("special token '", t, "' is given twice"));
    }
  }
  hs_database_t* database = nullptr;
  hs_scratch_t* scratch = nullptr;
  if (!tokens.empty()) {
    std::vector<const char*> expressions;
    std::vector<size_t> lengths;
    std::vector<unsigned> ids, flags(tokens.size(), 0);
    for (size_t i = 0; i < tokens.size(); ++i) {
      expressions.push_back(tokens[i].data());
      lengths.push_back(tokens[i].size());
      ids.push_back(static_cast<unsigned>(i));
    }
    hs_compile_error_t* error = nullptr;
    if (hs_compile_lit_multi(expressions.data(), flags.data(), ids.data(), lengths.data(),
                             static_cast<unsigned>(tokens.size()), HS_MODE_BLOCK, nullptr,
                             &database, &error) != HS_SUCCESS) {
      std::string message = error != nullptr ? error->message : "unknown error";
      hs_free_compile_error(error);
      return absl::InternalError(StrCat("cannot compile the special tokens: ", message));
    }
    if (hs_alloc_scratch(database, &scratch) != HS_SUCCESS) {
      hs_free_database(database);
      return absl::ResourceExhaustedError("cannot allocate Hyperscan scratch space");
    }
  }
  return std::unique_ptr<SpecialTokenMatcher>(
      new HyperscanSpecialTokenMatcher(std::move(tokens), database, scratch));
}

}  // namespace tokenmill
