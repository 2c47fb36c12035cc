#!/usr/bin/env bash
# A/B of two tokenmill binaries' start-up: `encode --output-format u32` of an empty file (load the
# vocabulary, make the encoder, write an empty output), whole process, the two runs alternating
# (old, new, old, new, ...), medians and every run in microseconds, for OpenAI's cl100k_base and
# o200k_base (the .tiktoken files of build/test_vocab).
# Usage: scripts/startup_ab.sh OLD_BINARY NEW_BINARY [RUNS]   (default 15 runs each)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
old=$1 new=$2 runs=${3:-15}
vocab="$root/build/test_vocab/vocab"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: > "$work/empty.txt"
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for enc in cl100k_base o200k_base; do
  for ((i = 0; i < runs; i++)); do
    for which in old new; do
      bin=$([[ $which == old ]] && echo "$old" || echo "$new")
      rm -f "$work/out.u32"
      start=$(date +%s%N)
      "$bin" encode --tokenizer "$vocab/$enc.tiktoken" --output-format u32 --output "$work/out.u32" \
        --threads 2 --progress none "$work/empty.txt"
      echo $(( ($(date +%s%N) - start) / 1000 )) >> "$work/$enc.$which"
    done
  done
  for which in old new; do
    echo "$enc $which: median $(median < "$work/$enc.$which") us; all: $(sort -g "$work/$enc.$which" | tr '\n' ' ')"
  done
done
