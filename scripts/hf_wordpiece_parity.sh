#!/usr/bin/env bash
# WordPiece against Hugging Face (npm tokenizers@0.23.2, scripts/hf_wordpiece.cjs), issue 21:
#
#  1. Training (brown, linux_docs by default): HF's default WordPieceTrainer (BertNormalizer
#     with lowercase, BertPreTokenizer, vocab 30000, no special tokens) against `tokenmill train
#     --algorithm wordpiece --wordpiece-score frequency --hf-compat --bert-specials=false
#     --lowercase --strip-accents`. HF numbers the ## symbols in hash-map order, random per
#     process, and breaks count ties by id, so two HF runs differ; the check is exact with
#     --hf-symbol-order (the ## symbols given the ids this HF run gave them): the vocabularies,
#     ids included, must be equal. Also printed: how many tokens differ without it, and between
#     two HF runs.
#  2. Encoding (brown, linux_docs, poetry): tokenmill trains a likelihood-scored WordPiece
#     (its defaults: cased, bert preset, BERT's special tokens) and writes tokenizer.json and
#     vocab.txt; HF loads each (the vocab.txt through WordPiece.fromFile with BertNormalizer
#     without lowercase and BertPreTokenizer) and encodes every line of the corpus slice: the
#     ids must equal `tokenmill encode`'s with the same file. And an uncased one (--lowercase
#     --strip-accents) written as vocab.txt: HF reads it with bertNormalizer({lowercase}),
#     tokenmill after `convert --lowercase --strip-accents` to tokenizer.json.
#
#   scripts/hf_wordpiece_parity.sh [--tokenmill BIN] [--bytes N] [--train CORPORA] [--encode CORPORA]
# --bytes: the slice of each corpus (its first N bytes' whole lines; default 0: all of it).
# Exit status 1 when any check differs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tm="$root/build/tokenmill"
bytes=0
train_corpora="brown linux_docs"
encode_corpora="brown linux_docs poetry"
while (($# > 0)); do
  case "$1" in
    --tokenmill) tm=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    --train) train_corpora=$2; shift 2 ;;
    --encode) encode_corpora=$2; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "hf_wordpiece_parity.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
hf="$root/scripts/hf_wordpiece.cjs"
[[ -d "$root/scripts/.peers/node_modules/tokenizers" ]] || bash "$root/scripts/install_peers.sh" >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
slice() {  # slice CORPUS OUT: the corpus, or its first $bytes bytes' whole lines
  if ((bytes > 0)); then
    # zstd ends on SIGPIPE when head has its bytes.
    { zstd -qdc "$root/../shared/corpora/$1.txt.zst" 2>/dev/null || true; } | head -c "$bytes" |
      sed '$d' > "$2"
  else
    zstd -qdc "$root/../shared/corpora/$1.txt.zst" > "$2"
  fi
}
vocab_diff() {  # vocab_diff A.json B.json: tokens in one vocabulary and not the other, and ids that differ
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
a = json.load(open(sys.argv[1], encoding="utf-8"))["model"]["vocab"]
b = json.load(open(sys.argv[2], encoding="utf-8"))["model"]["vocab"]
print(len(set(a) ^ set(b)) // 2, sum(1 for t in set(a) & set(b) if a[t] != b[t]), len(a), len(b))
PY
}
for corpus in $train_corpora; do
  slice "$corpus" "$work/$corpus.txt"
  node "$hf" train "$work/$corpus.txt" "$work/hf1.json" >/dev/null 2>&1
  node "$hf" train "$work/$corpus.txt" "$work/hf2.json" >/dev/null 2>&1
  flags=(train --algorithm wordpiece --wordpiece-score frequency --hf-compat --bert-specials=false
         --lowercase --strip-accents --vocab-size 30000 --checkpoint=none --quiet)
  "$tm" "${flags[@]}" --hf-symbol-order "$work/hf1.json" --output "$work/tm_pinned.json" "$work/$corpus.txt"
  "$tm" "${flags[@]}" --output "$work/tm.json" "$work/$corpus.txt"
  read -r missing moved hf_size tm_size < <(vocab_diff "$work/hf1.json" "$work/tm_pinned.json")
  if [[ $missing == 0 && $moved == 0 && $hf_size == "$tm_size" ]]; then
    echo "ok   training $corpus: tokenmill --hf-symbol-order equals this HF run: $tm_size tokens, every id"
  else
    echo "FAIL training $corpus: $missing tokens differ, $moved ids differ ($hf_size vs $tm_size tokens)"
    status=1
  fi
  read -r hf_hf _ _ _ < <(vocab_diff "$work/hf1.json" "$work/hf2.json")
  read -r hf_tm _ _ _ < <(vocab_diff "$work/hf1.json" "$work/tm.json")
  echo "     (without it: $hf_tm tokens differ from that HF run; two HF runs differ in $hf_hf)"
done
same_ids() {  # same_ids LABEL EXPECTED ACTUAL
  if cmp -s "$2" "$3"; then
    echo "ok   $1: $(wc -l < "$3") lines, $(wc -w < "$3") ids equal"
  else
    echo "FAIL $1: $(diff "$2" "$3" | grep -c '^<' || true) lines differ"
    status=1
  fi
}
for corpus in $encode_corpora; do
  [[ -f "$work/$corpus.txt" ]] || slice "$corpus" "$work/$corpus.txt"
  "$tm" train --algorithm wordpiece --vocab-size 30000 --checkpoint=none --quiet \
    --output "$work/wp.json" "$work/$corpus.txt"
  "$tm" convert --force "$work/wp.json" "$work/wp_vocab.txt" 2>/dev/null
  "$tm" encode --tokenizer "$work/wp.json" "$work/$corpus.txt" > "$work/tm.ids"
  node "$hf" encode "$work/wp.json" "$work/$corpus.txt" > "$work/hf.ids"
  same_ids "HF encodes $corpus with tokenmill's likelihood tokenizer.json" "$work/hf.ids" "$work/tm.ids"
  "$tm" encode --tokenizer "$work/wp_vocab.txt" "$work/$corpus.txt" > "$work/tm_vocab.ids"
  node "$hf" encode "$work/wp_vocab.txt" "$work/$corpus.txt" > "$work/hf_vocab.ids"
  same_ids "HF encodes $corpus with tokenmill's vocab.txt" "$work/hf_vocab.ids" "$work/tm_vocab.ids"
  # Uncased: a vocab.txt read as uncased (convert --lowercase --strip-accents) encodes as HF's
  # WordPiece.fromFile with bertNormalizer({lowercase: true}) does.
  "$tm" train --algorithm wordpiece --lowercase --strip-accents --vocab-size 30000 \
    --checkpoint=none --quiet --output "$work/uncased.txt" "$work/$corpus.txt"
  "$tm" convert --force --lowercase --strip-accents "$work/uncased.txt" "$work/uncased.json" 2>/dev/null
  "$tm" encode --tokenizer "$work/uncased.json" "$work/$corpus.txt" > "$work/tm_uncased.ids"
  node "$hf" encode "$work/uncased.txt" "$work/$corpus.txt" --lowercase > "$work/hf_uncased.ids"
  same_ids "HF encodes $corpus with tokenmill's uncased vocab.txt" "$work/hf_uncased.ids" "$work/tm_uncased.ids"
done
if ((status == 0)); then echo "hf_wordpiece_parity.sh: every check equals Hugging Face"; else echo "hf_wordpiece_parity.sh: DIFFERENCES (above)"; fi
exit "$status"
