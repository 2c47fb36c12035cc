#!/usr/bin/env bash
# jemalloc's huge pages on or off (bench/RESULTS.md "Allocator"): the same tokenmill binary run
# with MALLOC_CONF=thp:always and with MALLOC_CONF=thp:never (each overriding the compiled-in
# choice, trainer/jemalloc/malloc_conf.cc), alternating, PAUSE seconds of idle before each
# run (as a run meets the machine after other work: on the virtual machines we measure on,
# memory freed a while ago is slow to touch again), RUNS runs each; wall time and peak RSS from
# /usr/bin/time, medians.
#
#   scripts/allocator_bench.sh [--runs N] [--pause S] [--tokenmill BIN]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tm="$root/build/tokenmill"
runs=5
pause=3
while (($# > 0)); do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --pause) pause=$2; shift 2 ;;
    --tokenmill) tm=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "allocator_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
shared="$root/../shared"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for c in brown linux_docs linux_c_100m; do zstd -qdc "$shared/corpora/$c.txt.zst" > "$work/$c.txt"; done
: > "$work/empty.txt"
vocab="$shared/vocab"
jobs=(
  "start-up o200k_base|encode --tokenizer $vocab/o200k_base.tiktoken --output-format u32 --output $work/out.u32 --progress none $work/empty.txt"
  "encode linux_docs cl100k_base|encode --tokenizer $vocab/cl100k_base.tiktoken --output-format u32 --output $work/out.u32 --progress none $work/linux_docs.txt"
  "encode linux_c_100m o200k_base|encode --tokenizer $vocab/o200k_base.tiktoken --output-format u32 --output $work/out.u32 --progress none $work/linux_c_100m.txt"
  "unigram brown 8000|train --algorithm unigram --vocab-size 8000 --quiet --checkpoint none --output $work/u.json $work/brown.txt"
  "bpe linux_c_100m 30000|train --vocab-size 30000 --quiet --checkpoint none --output $work/b.json $work/linux_c_100m.txt"
)
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "tokenmill $(git -C "$root" rev-parse --short HEAD), $(nproc) cores, $runs runs each, ${pause} s idle before each, medians"
echo
echo "| run | MALLOC_CONF=thp:always | MALLOC_CONF=thp:never | never ÷ always (time) |"
echo "|---|---|---|---|"
for job in "${jobs[@]}"; do
  name=${job%%|*}
  args=${job#*|}
  for ((i = 0; i < runs; i++)); do
    for conf in always never; do
      sleep "$pause"
      # shellcheck disable=SC2086
      MALLOC_CONF=thp:$conf /usr/bin/time -f "%e %M" -o "$work/t" "$tm" $args >/dev/null 2>&1
      read -r secs kb < "$work/t"
      echo "$secs" >> "$work/$conf.s"
      echo "$kb" >> "$work/$conf.kb"
    done
  done
  a=$(median < "$work/always.s"); n=$(median < "$work/never.s")
  akb=$(median < "$work/always.kb"); nkb=$(median < "$work/never.kb")
  printf '| %s | %.2f s, %d MB | %.2f s, %d MB | %.2f |\n' "$name" "$a" $((akb / 1024)) "$n" $((nkb / 1024)) \
    "$(awk -v a="$a" -v n="$n" 'BEGIN {print n / a}')"
  rm -f "$work"/always.* "$work"/never.*
done
