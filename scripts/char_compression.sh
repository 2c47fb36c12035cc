#!/usr/bin/env bash
# Compression of character-level BPE (issue 20): bytes per token on a held-out slice, tokenmill
# `--unit char --preset metaspace --normalize nfkc` against SentencePiece BPE
# (`spm_train --model_type=bpe --character_coverage=0.9995 --byte_fallback=true`, its own
# normalization and dummy prefix), both trained on the same lines at the same vocab size.
#
#   scripts/char_compression.sh [--tokenmill BIN] [--vocab-size N] [--train-bytes B]
#                               [--heldout-bytes H] CORPUS...
#
# CORPUS: a shared corpus name (brown, poetry, ...: ../shared/corpora/NAME.txt.zst). The held-out
# slice is the last H bytes' whole lines (default 1 MB); training reads the first B bytes' whole
# lines of the rest (default: all of it; SentencePiece's BPE needs minutes per few MB of Chinese).
# Bytes per token = held-out bytes / tokens. tokenmill encodes each line with its newline;
# spm_encode reads lines without it (SentencePiece never sees newlines), so its count has no
# newline tokens: the comparison favours SentencePiece by those.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tokenmill="$root/build/tokenmill"
vocab=30000
train_bytes=0
heldout_bytes=1000000
corpora=()
while (($# > 0)); do
  case "$1" in
    --tokenmill) tokenmill=$2; shift 2 ;;
    --vocab-size) vocab=$2; shift 2 ;;
    --train-bytes) train_bytes=$2; shift 2 ;;
    --heldout-bytes) heldout_bytes=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "char_compression.sh: unknown flag $1" >&2; exit 2 ;;
    *) corpora+=("$1"); shift ;;
  esac
done
((${#corpora[@]} > 0)) || { echo "char_compression.sh: no corpus given" >&2; exit 2; }
command -v spm_train >/dev/null || { echo "char_compression.sh: needs Debian's sentencepiece" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| corpus | training lines (bytes) | held-out bytes | vocab | tokenmill char tokens | bytes/token | SentencePiece BPE tokens | bytes/token | tokenmill ÷ SentencePiece (bytes/token) |"
echo "|---|---|---|---|---|---|---|---|---|"
for corpus in "${corpora[@]}"; do
  zstd -dc "$root/../shared/corpora/$corpus.txt.zst" > "$work/all.txt"
  /usr/bin/python3 "$root/scripts/split_heldout.py" "$work/all.txt" "$work/train.txt" "$work/heldout.txt" "$train_bytes" "$heldout_bytes"
  "$tokenmill" train --unit char --preset metaspace --normalize nfkc --vocab-size "$vocab" --quiet \
    --checkpoint none --output "$work/tm.json" "$work/train.txt"
  spm_train --input="$work/train.txt" --model_prefix="$work/spm" --model_type=bpe \
    --vocab_size="$vocab" --character_coverage=0.9995 --byte_fallback=true --minloglevel=2 \
    --num_threads="$(nproc)" >/dev/null 2>&1
  tm_tokens=$("$tokenmill" encode --tokenizer "$work/tm.json" "$work/heldout.txt" | wc -w)
  spm_tokens=$(spm_encode --model="$work/spm.model" --output_format=id < "$work/heldout.txt" | wc -w)
  held=$(stat -c %s "$work/heldout.txt")
  trained=$(stat -c %s "$work/train.txt")
  lines=$(wc -l < "$work/train.txt")
  spm_vocab=$(wc -l < "$work/spm.vocab")
  python3 - "$corpus" "$lines" "$trained" "$held" "$vocab" "$tm_tokens" "$spm_tokens" "$spm_vocab" <<'PY'
import sys
corpus, lines, trained, held, vocab, tm, spm, spm_vocab = sys.argv[1], *map(int, sys.argv[2:])
note = "" if spm_vocab == vocab else f" (SentencePiece's vocab: {spm_vocab})"
print(f"| {corpus} | {lines} ({trained}) | {held} | {vocab}{note} | {tm} | {held / tm:.3f} | {spm} | {held / spm:.3f} | {spm / tm:.3f} |")
PY
done
