#!/usr/bin/env bash
# `tokenmill add-special-tokens` against Hugging Face's add_special_tokens (npm
# tokenizers@0.23.2, scripts/hf_add_special_tokens.cjs), issue 23. For each tokenizer: byte-level
# BPE, character-level BPE (metaspace, byte fallback), WordPiece and Unigram, each trained by
# tokenmill on a slice of the corpus (vocab 8000), and OpenAI's cl100k_base converted to
# tokenizer.json (its ids have gaps), tokenmill adds new special tokens (one with a space, one
# not ASCII, one a prefix of another), one the tokenizer has already, and a repeat; HF loads the
# ORIGINAL tokenizer.json and calls addSpecialTokens with the same list. Checked: each token's id
# in HF equals its id in tokenmill's file; texts (the slice's first lines with the tokens put
# between and inside words, and a few lines of tokens alone, next to each other, or cut short)
# encode to the same ids and decode to the same text in HF with both; and `tokenmill encode`
# with its file gives those ids too.
#
#   scripts/hf_add_special_tokens.sh [--tokenmill BIN] [--vocab DIR] [--bytes N] [CORPUS]
#
# CORPUS: a shared corpus name (../shared/corpora/NAME.txt.zst) or a text file; default brown.
# --bytes: the slice (its first N bytes' whole lines; default 2000000). --vocab: where
# cl100k_base.tiktoken is (default: the build's test vocabularies; skipped when absent).
# Exit status 1 when anything differs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tm="$root/build/tokenmill"
vocab="$root/build/test_vocab/vocab"
bytes=2000000
corpus=brown
while (($# > 0)); do
  case "$1" in
    --tokenmill) tm=$2; shift 2 ;;
    --vocab) vocab=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    -*) echo "hf_add_special_tokens.sh: unknown flag $1" >&2; exit 2 ;;
    *) corpus=$1; shift ;;
  esac
done
hf="$root/scripts/hf_add_special_tokens.cjs"
command -v node >/dev/null || { echo "hf_add_special_tokens.sh: node is missing" >&2; exit 2; }
if [[ ! -d "$root/scripts/.peers/node_modules/tokenizers" ]] &&
   ! node -e 'require("tokenizers")' 2>/dev/null; then
  bash "$root/scripts/install_peers.sh" >&2
fi
[[ -x "$tm" ]] || { echo "hf_add_special_tokens.sh: no tokenmill at $tm (--tokenmill)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=$corpus
[[ -f $src ]] || src="$root/../shared/corpora/$corpus.txt.zst"
[[ -f $src ]] || { echo "hf_add_special_tokens.sh: no corpus $corpus" >&2; exit 2; }
if [[ $src == *.zst ]]; then
  { zstd -qdc "$src" 2>/dev/null || true; } | head -c "$bytes" | sed '$d' > "$work/slice.txt"
else
  head -c "$bytes" "$src" | sed '$d' > "$work/slice.txt"
fi
new=("<|im_start|>" "<|im_end|>" "<|im" "<tool call>" "<|日本|>")
# texts OLD: the slice's first 300 lines with the new tokens and OLD (a special the tokenizer
# has) put in at random places, and lines of tokens alone, next to each other, cut short.
texts() {
  /usr/bin/python3 - "$work/slice.txt" "$1" "${new[@]}" > "$work/texts.txt" <<'PY'
import random, sys
lines = open(sys.argv[1], encoding="utf-8", errors="replace").read().split("\n")[:300]
tokens = sys.argv[3:] + [sys.argv[2]]
rng = random.Random(23)
out = []
for line in lines:
    words = line.split(" ")
    for _ in range(rng.randrange(0, 4)):
        at = rng.randrange(0, len(words) + 1)
        token = rng.choice(tokens)
        kind = rng.randrange(3)
        if kind == 0 or not words:  # a word of its own
            words.insert(at, token)
        else:  # glued to a word, before or after
            w = rng.randrange(len(words))
            words[w] = token + words[w] if kind == 1 else words[w] + token
    out.append(" ".join(words))
out += ["".join(tokens), " ".join(tokens), tokens[0] + tokens[1] + tokens[0], "<|im_sta",
        "<|im_start", "<|im_start|", tokens[-1] + tokens[-1], "x" + tokens[0] + "y", ""]
sys.stdout.write("\n".join(out) + "\n")
PY
}
status=0
check() {  # check NAME TOKENIZER.json OLD
  local name=$1 in=$2 old=$3
  texts "$old"
  local args=()
  for t in "${new[@]}" "$old" "${new[0]}"; do args+=(--special-token "$t"); done
  echo "== $name ($(basename "$in"), already special: $old)"
  "$tm" add-special-tokens "$in" "${args[@]}" --output "$work/added.json" --force 2>&1 | sed 's/^/   tokenmill: /'
  local hf_ok=1 lines
  node "$hf" "$in" "$work/added.json" "$work/texts.txt" "${new[@]}" "$old" "${new[0]}" \
    > "$work/hf.ids" 2> "$work/hf.err" || hf_ok=0
  sed 's/^/   HF: /' "$work/hf.err"
  "$tm" encode --tokenizer "$work/added.json" "$work/texts.txt" > "$work/tm.ids"
  lines=$(wc -l < "$work/texts.txt")
  if ((hf_ok)) && cmp -s "$work/hf.ids" "$work/tm.ids"; then
    echo "ok   $name: the $((${#new[@]} + 2)) tokens' ids are HF's; $lines lines encode and decode alike in HF" \
         "with the original + addSpecialTokens and with tokenmill's file, and tokenmill encode gives HF's ids"
  else
    local hf_said="passed"
    ((hf_ok)) || hf_said="failed (above)"
    echo "FAIL $name: HF's check $hf_said; tokenmill encode" \
         "differs from HF on $(diff "$work/hf.ids" "$work/tm.ids" | grep -c '^<' || true) of $lines lines"
    status=1
  fi
}
train() {  # train OUT FLAGS...
  local out=$1
  shift
  "$tm" train --quiet --checkpoint=none --vocab-size 8000 --output "$out" "$@" "$work/slice.txt"
}
train "$work/bpe.json" --special-token "<|endoftext|>"
check "byte-level BPE" "$work/bpe.json" "<|endoftext|>"
train "$work/char.json" --unit char --preset metaspace --special-token "<s>"
check "char-level BPE" "$work/char.json" "<s>"
train "$work/wordpiece.json" --algorithm wordpiece
check "WordPiece" "$work/wordpiece.json" "[SEP]"
train "$work/unigram.json" --algorithm unigram
check "Unigram" "$work/unigram.json" "<unk>"
if [[ -f "$vocab/cl100k_base.tiktoken" ]]; then
  "$tm" convert "$vocab/cl100k_base.tiktoken" "$work/cl100k.json" 2>/dev/null
  check "cl100k_base" "$work/cl100k.json" "<|endofprompt|>"
else
  echo "skip cl100k_base: no $vocab/cl100k_base.tiktoken"
fi
if ((status == 0)); then echo "hf_add_special_tokens.sh: every check equals Hugging Face"; else echo "hf_add_special_tokens.sh: DIFFERENCES (above)"; fi
exit "$status"
