#!/usr/bin/env bash
# `tokenmill encode --output-format u32` of a corpus split into compressed shards, as training
# corpora come (many .jsonl.zst or .json.gz files), against the same text as one plain file,
# and against another build (--baseline BIN) in the same run.
#
# For each corpus, vocabulary and form (plain: the corpus as one file; zst, gz: SHARDS pieces
# cut at lines, each compressed at zstd -3 / gzip -6), alternating the builds and forms, medians
# of RUNS of the whole process (start to exit), with --threads 1 and 2. The outputs of every
# form and build must be byte-identical (checked once per corpus and vocabulary).
#
#   scripts/encode_shards_bench.sh [--runs N] [--shards N] [--baseline BIN] [CORPUS...]
#   (defaults: 9 runs, 8 shards, no baseline; corpus poetry)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tm="$root/build/tokenmill"
runs=9
shards=8
baseline=""
corpora=()
while (($# > 0)); do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --shards) shards=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "encode_shards_bench.sh: unknown flag $1" >&2; exit 2 ;;
    *) corpora+=("$1"); shift ;;
  esac
done
((${#corpora[@]} > 0)) || corpora=(poetry)
vocab="$root/build/test_vocab/vocab"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
builds=(new)
[[ -n $baseline ]] && builds=(base new)
bin() { [[ $1 == new ]] && echo "$tm" || echo "$baseline"; }
echo "tokenmill $(git -C "$root" rev-parse --short HEAD)${baseline:+ against $baseline}, $(nproc) cores, $runs runs, $shards shards, medians in ms"
echo
echo "| corpus | vocabulary | form | build | 1 thread | 2 threads | 1 ÷ 2 |"
echo "|---|---|---|---|---|---|---|"
for corpus in "${corpora[@]}"; do
  rm -f "$work"/s.*
  zstd -qdc "$root/../shared/corpora/$corpus.txt.zst" > "$work/all.txt"
  (cd "$work" && split -n "l/$shards" -d -a 3 all.txt s.)
  for f in "$work"/s.[0-9]*; do
    zstd -q -3 -k "$f"
    gzip -6 -k "$f"
  done
  sync
  for enc in cl100k_base o200k_base; do
    inputs() {
      case $1 in
        plain) echo "$work/all.txt" ;;
        zst) echo "$work"/s.[0-9][0-9][0-9].zst ;;
        gz) echo "$work"/s.[0-9][0-9][0-9].gz ;;
      esac
    }
    # The same ids whatever the form and build.
    for build in "${builds[@]}"; do
      for form in plain zst gz; do
        # shellcheck disable=SC2046
        "$(bin "$build")" encode --tokenizer "$vocab/$enc.tiktoken" --output-format u32 \
          --output "$work/check.$build.$form.u32" --progress none $(inputs "$form")
      done
    done
    for out in "$work"/check.*.u32; do
      cmp -s "$out" "$work/check.new.plain.u32" || { echo "$out differs from the plain file's output" >&2; exit 1; }
    done
    rm -f "$work"/check.* "$work"/t_*
    for ((i = 0; i < runs; i++)); do
      order=()
      for build in "${builds[@]}"; do for form in plain zst gz; do for t in 1 2; do order+=("$build:$form:$t"); done; done; done
      if ((i % 2 == 1)); then  # the other way round every other run
        for ((k = ${#order[@]} - 1, j = 0; k > j; k--, j++)); do tmp=${order[k]}; order[k]=${order[j]}; order[j]=$tmp; done
      fi
      for job in "${order[@]}"; do
        IFS=: read -r build form t <<<"$job"
        rm -f "$work/out.u32"
        sync  # the run before: its output's writeback is its own
        start=$(date +%s%N)
        # shellcheck disable=SC2046
        "$(bin "$build")" encode --tokenizer "$vocab/$enc.tiktoken" --output-format u32 \
          --output "$work/out.u32" --threads "$t" --progress none $(inputs "$form")
        echo $(( ($(date +%s%N) - start) / 1000000 )) >> "$work/t_${build}_${form}_$t"
      done
    done
    for form in plain zst gz; do
      for build in "${builds[@]}"; do
        a=$(median < "$work/t_${build}_${form}_1")
        b=$(median < "$work/t_${build}_${form}_2")
        echo "| $corpus | $enc | $form | $build | $a | $b | $(echo "scale=3; $a / $b" | bc) |"
      done
    done
  done
done
