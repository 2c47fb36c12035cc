#!/usr/bin/env bash
# A/B of two tokenmill binaries' start-up: `encode --output-format u32` of an empty file (load the
# vocabulary, make the encoder, write an empty output), whole process, the two runs alternating
# (old, new, old, new, ...), medians and every run in microseconds, for OpenAI's cl100k_base and
# o200k_base (the .tiktoken files of build/test_vocab). Both read a vocabulary cache of the run's
# (lib/model/vocab_cache.h), filled by an untimed run of each before any clock; OLD_CACHE=off or
# NEW_CACHE=off turns it off for that side (the same binary twice: the cache's own saving).
# VOCAB_FORMAT=tokenizer.json times the two vocabularies converted to tokenizer.json (by NEW's
# `convert`, before any clock) instead: what a tokenizer trained by tokenmill or taken from
# Hugging Face loads like (no cache applies to those).
# Usage: [OLD_CACHE=off] [NEW_CACHE=off] [VOCAB_FORMAT=tokenizer.json] \
#          scripts/startup_ab.sh OLD_BINARY NEW_BINARY [RUNS]   (default 15 runs each)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
old=$1 new=$2 runs=${3:-15}
vocab="$root/build/test_vocab/vocab"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: > "$work/empty.txt"
tokenizer_of() { echo "$vocab/$1.tiktoken"; }
if [[ ${VOCAB_FORMAT:-tiktoken} == tokenizer.json ]]; then
  for enc in cl100k_base o200k_base; do
    "$new" convert "$vocab/$enc.tiktoken" "$work/$enc.json" > /dev/null
  done
  tokenizer_of() { echo "$work/$1.json"; }
fi
cache_of() { local c=$([[ $1 == old ]] && echo "${OLD_CACHE:-}" || echo "${NEW_CACHE:-}"); echo "${c:-$work/cache}"; }
for enc in cl100k_base o200k_base; do
  for which in old new; do
    bin=$([[ $which == old ]] && echo "$old" || echo "$new")
    TOKENMILL_CACHE_DIR=$(cache_of $which) "$bin" encode --tokenizer "$(tokenizer_of $enc)" \
      --output-format u32 --output "$work/out.u32" --threads 2 --progress none "$work/empty.txt"
  done
done
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for enc in cl100k_base o200k_base; do
  for ((i = 0; i < runs; i++)); do
    for which in old new; do
      bin=$([[ $which == old ]] && echo "$old" || echo "$new")
      rm -f "$work/out.u32"
      cache=$(cache_of $which)
      start=${EPOCHREALTIME//[.,]/}  # microseconds, read by bash: no clock process timed with the run
      TOKENMILL_CACHE_DIR=$cache "$bin" encode --tokenizer "$(tokenizer_of $enc)" --output-format u32 --output "$work/out.u32" \
        --threads 2 --progress none "$work/empty.txt"
      end=${EPOCHREALTIME//[.,]/}
      echo $(( end - start )) >> "$work/$enc.$which"
    done
  done
  for which in old new; do
    echo "$enc $which$([[ $(cache_of $which) == off ]] && echo ', cache off'): median $(median < "$work/$enc.$which") us; all: $(sort -g "$work/$enc.$which" | tr '\n' ' ')"
  done
done
