// The custom-pattern matcher: a parser for the supported PCRE subset into a small AST, compiled
// to a graph of nodes that a backtracking matcher walks. Quantifiers apply to single character
// sets (iterated in place, stepping back over UTF-8 when backtracking, so no stack or memory grows
// with the input) or, as `?`, to groups; recursion depth is bounded by the pattern's size.
#include "pretokenize/custom_pattern.h"

#include <bitset>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "pretokenize/custom_pattern_ast.h"
#include "pretokenize/unicode_classes.h"

namespace tokenmill {
namespace {

using custom_pattern::Ast;
using custom_pattern::CharSet;
using custom_pattern::Node;

class CustomPatternPreTokenizer final : public PreTokenizer {
 public:
  CustomPatternPreTokenizer(std::vector<CharSet> sets, const Ast& ast) : sets_(std::move(sets)) {
    end_ = New(Node::kEnd);
    root_ = Compile(ast, end_);
  }

  // Pieces: each match; text no match covers is cut into its maximal stretches of valid UTF-8
  // (one piece each) and its invalid bytes (one piece each).
  void Split(std::string_view text,
             absl::FunctionRef<void(std::string_view)> on_piece) const override {
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    size_t pos = 0, gap_start = 0;
    auto flush_gap = [&](size_t to) {
      if (gap_start < to) on_piece(text.substr(gap_start, to - gap_start));
    };
    while (pos < n) {
      size_t end = 0;
      if (Match(root_, s, n, pos, &end)) {
        flush_gap(pos);
        on_piece(text.substr(pos, end - pos));
        pos = gap_start = end;
        continue;
      }
      const DecodedChar c = DecodeAt(s, n, pos);
      if (c.cls & kClassInvalid) {
        flush_gap(pos);
        on_piece(text.substr(pos, 1));
        gap_start = pos + 1;
      }
      pos += c.len;
    }
    flush_gap(n);
  }

 private:
  Node* New(Node::Op op) {
    nodes_.emplace_back();
    nodes_.back().op = op;
    return &nodes_.back();
  }

  const Node* Compile(const Ast& a, const Node* next) {
    switch (a.kind) {
      case Ast::kSet: {
        Node* node = New(Node::kSet);
        node->set = a.set;
        node->next = next;
        return node;
      }
      case Ast::kSeq:
        for (auto it = a.kids.rbegin(); it != a.kids.rend(); ++it) next = Compile(*it, next);
        return next;
      case Ast::kAlt: {
        Node* node = New(Node::kAlt);
        for (const Ast& k : a.kids) node->branches.push_back(Compile(k, next));
        return node;
      }
      case Ast::kRepeat: {
        const Ast& kid = a.kids[0];
        if (kid.kind == Ast::kSet) {
          Node* node = New(Node::kRepeatSet);
          node->set = kid.set;
          node->min = a.min, node->max = a.max, node->greedy = a.greedy;
          node->next = next;
          return node;
        }
        Node* node = New(Node::kAlt);  // (group)? and (group)??
        const Node* body = Compile(kid, next);
        node->branches = a.greedy ? std::vector<const Node*>{body, next}
                                  : std::vector<const Node*>{next, body};
        return node;
      }
      case Ast::kLookahead: {
        Node* node = New(Node::kLookahead);
        node->negated = a.negated;
        node->body = Compile(a.kids[0], end_);
        node->next = next;
        return node;
      }
    }
    return next;
  }

  // The character at i if it is in set `set`: its length, else 0.
  size_t InSet(int set, const unsigned char* s, size_t n, size_t i) const {
    if (i >= n) return 0;
    const DecodedChar c = DecodeAt(s, n, i);
    if (c.cls & kClassInvalid) return 0;
    uint32_t cp = s[i];
    if (c.len == 2) cp = ((s[i] & 0x1F) << 6) | (s[i + 1] & 0x3F);
    if (c.len == 3) cp = ((s[i] & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
    if (c.len == 4) {
      cp = ((s[i] & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) |
           (s[i + 3] & 0x3F);
    }
    return sets_[set].Contains(cp, c.cls) ? c.len : 0;
  }

  bool Match(const Node* node, const unsigned char* s, size_t n, size_t pos, size_t* end) const {
    while (true) {
      switch (node->op) {
        case Node::kEnd:
          *end = pos;
          return true;
        case Node::kSet: {
          const size_t len = InSet(node->set, s, n, pos);
          if (len == 0) return false;
          pos += len;
          node = node->next;
          continue;
        }
        case Node::kAlt:
          for (const Node* branch : node->branches) {
            if (Match(branch, s, n, pos, end)) return true;
          }
          return false;
        case Node::kLookahead: {
          size_t ignored;
          if (Match(node->body, s, n, pos, &ignored) == node->negated) return false;
          node = node->next;
          continue;
        }
        case Node::kRepeatSet:
          return MatchRepeat(node, s, n, pos, end);
      }
    }
  }

  bool MatchRepeat(const Node* node, const unsigned char* s, size_t n, size_t pos,
                   size_t* end) const {
    const int64_t max = node->max < 0 ? INT64_MAX : node->max;
    int64_t count = 0;
    size_t i = pos;
    auto step = [&] {
      const size_t len = count < max ? InSet(node->set, s, n, i) : 0;
      if (len == 0) return false;
      i += len;
      ++count;
      return true;
    };
    while (count < node->min) {
      if (!step()) return false;
    }
    if (!node->greedy) {
      while (true) {
        if (Match(node->next, s, n, i, end)) return true;
        if (!step()) return false;
      }
    }
    while (step()) {
    }
    while (true) {  // back off one character at a time (all matched characters are valid UTF-8)
      if (Match(node->next, s, n, i, end)) return true;
      if (count == node->min) return false;
      do {
        --i;
      } while ((s[i] & 0xC0) == 0x80);
      --count;
    }
  }

  std::vector<CharSet> sets_;
  std::deque<Node> nodes_;
  const Node* end_ = nullptr;
  const Node* root_ = nullptr;
};

}  // namespace

absl::StatusOr<std::unique_ptr<PreTokenizer>> CompileCustomPattern(std::string_view pattern) {
  std::vector<CharSet> sets;
  absl::StatusOr<Ast> ast = custom_pattern::ParsePattern(pattern, &sets);
  if (!ast.ok()) return ast.status();
  if (custom_pattern::Nullable(*ast)) {
    return absl::InvalidArgumentError(
        "pattern offset 0: the pattern can match the empty string (every piece must be non-empty)");
  }
  return std::make_unique<CustomPatternPreTokenizer>(std::move(sets), *ast);
}

}  // namespace tokenmill
